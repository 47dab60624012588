//! Inflation rules of the partitioned families: P-EDF / P-FP and SP-RES (semi-partitioned
//! reservations). Their interrupt load depends on the placement, so these rules place the
//! inflated set themselves and return a verdict (docs/overheads.md).

use super::accounting::{scaled, Interrupts};
use super::rules::build;
use super::{Inflated, Inflation, Judged, Mode, Params};
use crate::partition::{partition, Admission, Fit, Order, PartitionOutcome};
use crate::semi::{self, Placement, SemiConfig};
use crate::uni::{edf, fp};
use crate::{Limits, Verdict};
use rtsched_model::overheads::Overheads;
use rtsched_model::{Task, TaskSet};

/// Per-job cost of a partitioned job: dispatched twice (at its start and when it resumes after
/// a preemption), plus one cache-affinity loss.
fn per_job(v: &Overheads, p: &Params) -> u128 {
    2 * (v.schedule_ns as u128 + v.context_switch_ns as u128) + p.cpd as u128
}

/// P-EDF / P-FP inflation of the tasks `members` of one processor, whose release interrupts
/// are those of `sources` (the processor's own tasks, or every task for the
/// placement-independent bound).
///
/// Source: the preemption-centric accounting ([`super::accounting`]; Brandenburg, Leontyev &
/// Anderson, RTCSA 2009) with the release interrupts local to each processor, as our runtime's
/// pedf and the simulator handle them (Brandenburg & Gül, RTSS 2016, §VII-A: P-EDF and P-FP are
/// the conventional partitioned plugins SP-RES is compared with):
///
/// ```text
/// u_irq = Σ_{i on P} Δrel / T_i,   B = n_P · Δrel,   uscale = 1 − Δtck/Q − u_irq
/// C′ = (C + 2(Δsch + Δcxs) + Δcpd) / uscale + 2 · Cpre          (no IPI: local decisions)
/// T′ = T − Δev,   D′ = D − Δev
/// ```
fn inflate_members(ts: &TaskSet, sources: &[usize], v: &Overheads, p: &Params, mode: Mode) -> Inflation {
    let mut irq = Interrupts::tick(v.tick_ns, p.quantum, v.release_event_ns);
    for &i in sources {
        irq.add(v.release_ns as u128, ts[i].period);
    }
    let Some(scale) = irq.scale() else {
        return Inflation::Infeasible {
            task: None,
            reason: "interrupt overload: the tick and the release interrupts alone use a whole processor".into(),
        };
    };
    let cpre = irq.cpre(scale);
    let pj = per_job(v, p);
    build(ts, 1, mode, |_, t| scaled(t.wcet as u128 + pj, scale) + 2 * cpre, v.release_event_ns as u128)
}

/// The placement-independent P-EDF/P-FP inflation: every task's release interrupt counted on
/// every processor (sound for any placement, pessimistic by up to a factor m in the release
/// terms). Capacity `m` (judged by partitioning).
pub(super) fn partitioned_bound(ts: &TaskSet, m: u32, v: &Overheads, p: &Params, mode: Mode) -> Inflation {
    let all: Vec<usize> = (0..ts.len()).collect();
    match inflate_members(ts, &all, v, p, mode) {
        Inflation::Done(i) => Inflation::Done(Inflated { capacity: m, ..i }),
        other => other,
    }
}

fn subset(ts: &TaskSet, idx: &[usize]) -> TaskSet {
    // Indices come from a partition of `ts`: the tasks are already valid.
    TaskSet::new(idx.iter().map(|&i| ts[i].clone()).collect()).unwrap_or_default()
}

/// The partition admission for `mode`: hard = the exact uniprocessor test of the policy
/// (EDF by QPA, FP by response-time analysis); soft = utilization ≤ 1 (bounded tardiness on
/// one processor), expressed as EDF on the implicit-deadline version of the set.
fn judge_cpu(tasks: &TaskSet, admission: Admission, mode: Mode, limits: &Limits) -> Verdict {
    match (mode, admission) {
        (Mode::Soft, _) => Verdict::from_bool(tasks.utilization_at_most(1)),
        (Mode::Hard, Admission::Edf) => edf::qpa(tasks, limits),
        (Mode::Hard, Admission::Fp(prio)) => fp::rta(tasks, prio, limits).0,
    }
}

fn implicit(ts: &TaskSet) -> TaskSet {
    let tasks = ts.iter().map(|t| Task { deadline: t.period, ..t.clone() }).collect();
    TaskSet::new(tasks).unwrap_or_default()
}

/// P-EDF (`Admission::Edf`) or P-FP (`Admission::Fp`) with overheads: first-fit decreasing
/// utilization, as the overhead-free `pedf_ffd` / `pfp_ffd`. Two sound attempts:
/// 1. place the set inflated without release interrupts, then inflate each processor with
///    exactly its own tasks' interrupts and re-test it from scratch;
/// 2. if that fails, place the placement-independent inflation ([`partitioned_bound`]).
///
/// With zero overheads both equal the overhead-free verdict.
pub(super) fn partitioned(
    ts: &TaskSet,
    m: u32,
    v: &Overheads,
    p: &Params,
    mode: Mode,
    admission: Admission,
    limits: &Limits,
) -> (Judged, Option<Vec<Vec<usize>>>) {
    let place = |set: &TaskSet| match mode {
        Mode::Soft => partition(&implicit(set), m, Fit::First, Order::DecreasingUtilization, Admission::Edf, limits),
        Mode::Hard => partition(set, m, Fit::First, Order::DecreasingUtilization, admission, limits),
    };
    // Attempt 1.
    if let Inflation::Done(base) = inflate_members(ts, &[], v, p, mode) {
        if let PartitionOutcome::Placed(part) = place(&base.tasks) {
            let ok = part.cpus.iter().all(|cpu| match inflate_members(&subset(ts, cpu), &all_of(cpu), v, p, mode) {
                Inflation::Done(i) => judge_cpu(&i.tasks, admission, mode, limits).is_schedulable(),
                Inflation::Infeasible { .. } => false,
            });
            if ok {
                return (Judged { verdict: Verdict::Schedulable, reason: None }, Some(part.cpus));
            }
        }
    }
    // Attempt 2.
    match partitioned_bound(ts, m, v, p, mode) {
        Inflation::Infeasible { reason, .. } => {
            (Judged { verdict: Verdict::NotSchedulable, reason: Some(reason) }, None)
        }
        Inflation::Done(i) => match place(&i.tasks) {
            PartitionOutcome::Placed(part) => (Judged { verdict: Verdict::Schedulable, reason: None }, Some(part.cpus)),
            PartitionOutcome::Failed { task, .. } => (
                Judged {
                    verdict: Verdict::NotSchedulable,
                    reason: Some(format!("task {task} fits on no processor after inflation")),
                },
                None,
            ),
        },
    }
}

/// `0..cpu.len()`: inside [`subset`]'s task set, every member is a source.
fn all_of(cpu: &[usize]) -> Vec<usize> {
    (0..cpu.len()).collect()
}

/// Per task: (period ratio k, parts P) assumed by the SP-RES inflation.
type Shape = Vec<(u64, u32)>;

/// SP-RES inflation of every task, given each task's assumed shape `(k, P)` (period ratio and
/// number of parts), before placement.
///
/// Source: Brandenburg & Gül, RTSS 2016: per-CPU EDF over polling reservations (§III-A), each
/// task and subtask "causes two context switches per activation" (§VI), migrations cost a
/// *migration timer* on the source processor and a *subtask activation* IPI on the target
/// (§VII-A, Fig. 8), and budgets are enforced by timers; combined with the preemption-centric
/// accounting of [`super::accounting`]. Per job of task i with shape `(k, P)` there are `k·P`
/// reservation activations and `k·(P − 1)` migrations:
///
/// ```text
/// sources (counted on every processor, placement-independent):
///   per job: Δrel + k·P·Δbe + k·(P − 1)·(Δmt + Δsa),  burst: Δrel + P·Δbe + (P − 1)·(Δmt + Δsa)
/// uscale = 1 − Δtck/Q − Σ_i (per job)_i / T_i
/// C′ = (C + k·P · (2(Δsch + Δcxs) + Δcpd)) / uscale + k·P · 2 · Cpre
/// T′ = T − Δev,   D′ = D − Δev
/// ```
///
/// Assumptions (stated, not proven here): the placement splits the inflated cost `C′` into
/// budgets, and each part's share covers the overheads that occur in its window (every part
/// is charged a full `2 · Cpre` burst through the `k·P` factor); Δbe = `budget_enforcement`,
/// Δmt = `migration_timer`, Δsa = `subtask_activation`.
fn spres_inflate(ts: &TaskSet, m: u32, shape: &Shape, v: &Overheads, p: &Params, mode: Mode) -> Inflation {
    let mut irq = Interrupts::tick(v.tick_ns, p.quantum, v.release_event_ns);
    let (be, mig) = (v.budget_enforcement_ns as u128, v.migration_timer_ns as u128 + v.subtask_activation_ns as u128);
    for (t, &(k, parts)) in ts.iter().zip(shape) {
        let (k, parts) = (k as u128, parts as u128);
        let per_job = v.release_ns as u128 + k * parts * be + k * (parts - 1) * mig;
        let burst = v.release_ns as u128 + parts * be + (parts - 1) * mig;
        irq.add_source(per_job, t.period, burst);
    }
    let Some(scale) = irq.scale() else {
        return Inflation::Infeasible {
            task: None,
            reason: "interrupt overload: the timer and release interrupts alone use a whole processor".into(),
        };
    };
    let cpre = irq.cpre(scale);
    let pj = per_job(v, p);
    build(
        ts,
        m,
        mode,
        |i, t| {
            let acts = shape[i].0 as u128 * shape[i].1 as u128;
            scaled(t.wcet as u128 + acts * pj, scale) + acts * 2 * cpre
        },
        v.release_event_ns as u128,
    )
}

/// Most rounds of the SP-RES shape iteration.
const SPRES_ROUNDS: usize = 8;

/// SP-RES with overheads: inflate assuming every task unsplit and untransformed, place the
/// inflated set with the SP-RES cascade (`cfg`), read each task's actual shape from the
/// placement, and repeat with the larger shapes until the placement needs no more than was
/// charged (at most [`SPRES_ROUNDS`] rounds). Hard and soft use the same placement test
/// (SP-RES is a hard real-time scheme); only the statistic of the values differs.
pub(super) fn spres(
    ts: &TaskSet,
    m: u32,
    v: &Overheads,
    p: &Params,
    mode: Mode,
    cfg: &SemiConfig,
) -> (Judged, Option<(TaskSet, Placement)>) {
    let no = |reason: Option<String>| (Judged { verdict: Verdict::NotSchedulable, reason }, None);
    let mut shape: Shape = vec![(1, 1); ts.len()];
    let costs_per_part = v.schedule_ns
        + v.context_switch_ns
        + v.budget_enforcement_ns
        + v.migration_timer_ns
        + v.subtask_activation_ns
        + v.tick_ns
        + v.release_ns
        + p.cpd;
    for _ in 0..SPRES_ROUNDS {
        let infl = match spres_inflate(ts, m, &shape, v, p, mode) {
            Inflation::Done(i) => i,
            Inflation::Infeasible { reason, .. } => return no(Some(reason)),
        };
        let placement = semi::cascade(&infl.tasks, m, cfg);
        if !placement.schedulable {
            return no(placement.reason);
        }
        let mut grew = false;
        if costs_per_part > 0 {
            for tp in &placement.tasks {
                let s = &mut shape[tp.task];
                if tp.period_ratio > s.0 || tp.parts > s.1 {
                    *s = (s.0.max(tp.period_ratio), s.1.max(tp.parts));
                    grew = true;
                }
            }
        }
        // Without per-part costs the shape cannot matter.
        if !grew {
            return (Judged { verdict: Verdict::Schedulable, reason: None }, Some((infl.tasks, placement)));
        }
    }
    no(Some(format!("the split shapes did not settle within {SPRES_ROUNDS} rounds")))
}

/// The SP-RES inflation with every task assumed unsplit (the first round of [`spres`]).
pub(super) fn spres_first_round(ts: &TaskSet, m: u32, v: &Overheads, p: &Params, mode: Mode) -> Inflation {
    spres_inflate(ts, m, &vec![(1, 1); ts.len()], v, p, mode)
}
