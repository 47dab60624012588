//! The inflation rule of the optimal server-based schedulers RUN and QPS (`run`, `qps-g`,
//! `qps-c`): every task's WCET is inflated by what one of its jobs can cost under the
//! mechanism, the reduction tree (RUN) or the quasi-partition (QPS) is built from the inflated
//! set, and the set is schedulable exactly when the inflated `U ≤ m` (both schedulers are optimal
//! for implicit-deadline periodic tasks: Regnier et al., RTSS 2011; Massa et al., Real-Time
//! Systems 52(5), 2016). The same inflated WCETs are the budgets `rtsched run --inflate` gives
//! the servers (docs/overheads.md, "RUN and QPS").
//!
//! Why the budgets must carry the overheads: a task leaf's (or a QPS item's) budget is consumed
//! in time while it is selected, whatever runs on its CPU — the release handler, the scheduler,
//! the context switch, the budget timer — and neither scheduler is work-conserving towards a
//! job that overran its budget (docs/mechanisms/run.md, "Deadline misses on threads").
//!
//! What a job pays (Brandenburg & Gül, RTSS 2016, §VI: "each task and subtask causes two
//! context switches per activation", and for RUN "a bound ... is provided by Regnier et al.";
//! §VII-B: the RUN and QPS implementations of Compagnin, Mezzetti & Vardanega, ECRTS 2014, whose
//! scheduler runs at job releases and at server budget exhaustions, the latter from a budget
//! timer): per activation a dispatch and a switch away (`2(Δsch + Δcxs)`), the reschedule
//! request that starts it (`Δipi`) and `Δcpd`; per preemption the budget timer that caused it
//! (`Δbt`, `budget_timer`); the release handlers of all tasks, which run on whichever worker
//! claims them, by interrupt accounting as in the global rule; and the release latency `Δev`,
//! which a server's budget pays too (its replenishment is at the exact release instant, the job
//! arrives `Δev` later — so the periods are not shrunk: the servers' deadlines are the release
//! instants). With `A_i = 1 + P_i` activations per job of task `i`:
//!
//! ```text
//! u_irq = Σ_j Δrel / T_j,   uscale = 1 − Δtck/Q − u_irq        (every release on every CPU)
//! C′_i = (C_i + A_i·(2(Δsch + Δcxs) + Δipi + Δcpd) + P_i·Δbt) / uscale + 2·Cpre + Δev
//! T′ = T,   D′ = D;   schedulable ⇔ every C′_i ≤ T_i and Σ C′_i / T_i ≤ m (exact)
//! ```
//!
//! Our bound on the preemptions `P_i` of one job:
//! * **RUN**: `⌈(3p + 1)/2⌉`, `p` the reduction's levels — Regnier et al.'s bound (RTSS 2011,
//!   Theorem on preemptions) on the *average* number of preemptions per job, the one Brandenburg
//!   & Gül use for Fig. 6 (and `rtsched_policy::run::Reduction::switch_rate_bound`). It is an
//!   average, not a per-job worst case: a job preempted more often than the average can still
//!   overrun its budget; no per-job bound is published.
//! * **QPS**: 0 for a task of a minor set (EDF on one CPU: its preemptions are charged to the
//!   preempting job, the preemption-centric accounting); for a task of a major set, two
//!   activations in every window its job overlaps (its server's segment and the master's or the
//!   slave's; §VI's two switches per activation), a window being delimited by its set's
//!   boundaries — the releases of its tasks and of the sets whose slave items it hosts,
//!   transitively — so `A_i = 2·(1 + Σ_{j ∈ sources} ⌈T_i / T_j⌉)` and `P_i = A_i − 1`. The
//!   quasi-partition is the whole set's (`qps-g`'s; `qps-c`'s clusters make the same sets or
//!   partition a cluster, which preempts less).
//!
//! The structure (levels, execution sets) depends on the rates, so the rule iterates as the
//! SP-RES rule does: charge the nominal set's structure, rebuild it from the inflated set, and
//! repeat with the larger charges until nothing grows (at most [`ROUNDS`]).

use super::accounting::{scaled, Interrupts};
use super::rules::build;
use super::{Inflated, Inflation, Mode, Params};
use rtsched_model::overheads::Overheads;
use rtsched_model::{Task, TaskSet};
use rtsched_policy::qps::{Item, QuasiPartition};
use rtsched_policy::run::Reduction;

/// Most rounds of the structure iteration.
pub(super) const ROUNDS: usize = 8;

/// Which scheduler's preemption bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Which {
    Run,
    Qps,
}

/// RUN's preemptions charged per job: `⌈(3p + 1)/2⌉` for `p` levels.
pub(super) fn run_preemptions(levels: u32) -> u64 {
    (3 * levels as u64 + 1).div_ceil(2)
}

/// Per task: the preemptions of one job charged under `which` for the structure of `ts` on `m`
/// (the policy's refusal as the error: U > m, a constrained deadline).
fn preemptions(ts: &TaskSet, m: u32, which: Which) -> Result<Vec<u64>, String> {
    match which {
        Which::Run => {
            let red = Reduction::structure(ts, m).map_err(|e| e.to_string())?;
            Ok(vec![run_preemptions(red.levels()); ts.len()])
        }
        Which::Qps => {
            let qp = QuasiPartition::structure(ts, m).map_err(|e| e.to_string())?;
            // Per set: the periods of its boundary sources (its tasks', and transitively those
            // of the sets whose slave items it hosts; a slave item lives in a later set).
            let mut sources: Vec<Vec<u64>> = Vec::with_capacity(qp.sets.len());
            for s in &qp.sets {
                let mut p = Vec::new();
                for it in &s.items {
                    match *it {
                        Item::Task(i) => p.push(ts[i as usize].period),
                        Item::Slave(q) => p.extend(sources.get(q).into_iter().flatten().copied()),
                    }
                }
                sources.push(p);
            }
            Ok((0..ts.len())
                .map(|i| {
                    let (k, _) = qp.set_of(i as u32);
                    if qp.sets[k].major.is_none() {
                        return 0;
                    }
                    let t = ts[i].period;
                    let windows: u64 = 1 + sources[k].iter().map(|&tj| t.div_ceil(tj)).sum::<u64>();
                    2 * windows - 1
                })
                .collect())
        }
    }
}

/// The inflated set for the preemptions `pre` per job (module docs' formula).
fn inflate_with(ts: &TaskSet, m: u32, pre: &[u64], v: &Overheads, p: &Params, mode: Mode) -> Inflation {
    let mut irq = Interrupts::tick(v.tick_ns, p.quantum, v.release_event_ns);
    for t in ts.iter() {
        irq.add(v.release_ns as u128, t.period);
    }
    let Some(scale) = irq.scale() else {
        return Inflation::Infeasible {
            task: None,
            reason: "interrupt overload: the tick and the release interrupts alone use a whole processor (uscale ≤ 0)"
                .into(),
        };
    };
    let cpre = irq.cpre(scale);
    let per_act = 2 * (v.schedule_ns as u128 + v.context_switch_ns as u128) + v.ipi_ns as u128 + p.cpd as u128;
    let cost = |i: usize, t: &Task| {
        let (acts, pr) = (1 + pre[i] as u128, pre[i] as u128);
        scaled(t.wcet as u128 + acts * per_act + pr * v.budget_timer_ns as u128, scale)
            + 2 * cpre
            + v.release_event_ns as u128
    };
    // No shrink: the servers' deadlines are the release instants (Δev is in the cost).
    build(ts, m, mode, cost, 0)
}

/// RUN or QPS with overheads: the inflated set (capacity `m`) after the structure iteration, or
/// why it is infeasible — including, in one line, an inflated `U > m`.
pub(super) fn optimal(ts: &TaskSet, m: u32, v: &Overheads, p: &Params, mode: Mode, which: Which) -> Inflation {
    let no = |reason: String| Inflation::Infeasible { task: None, reason };
    let mut pre = match preemptions(ts, m, which) {
        Ok(x) => x,
        Err(e) => return no(e),
    };
    for _ in 0..ROUNDS {
        let infl = match inflate_with(ts, m, &pre, v, p, mode) {
            Inflation::Done(i) => i,
            other => return other,
        };
        if !infl.tasks.utilization_at_most(m as u64) {
            return no(format!(
                "the inflated utilization {:.4} exceeds m = {m} (nominal {:.4})",
                infl.tasks.utilization_f64(),
                ts.utilization_f64()
            ));
        }
        let next = match preemptions(&infl.tasks, m, which) {
            Ok(x) => x,
            Err(e) => return no(format!("the inflated set: {e}")),
        };
        let mut grew = false;
        for (a, b) in pre.iter_mut().zip(next) {
            if b > *a {
                *a = b;
                grew = true;
            }
        }
        if !grew {
            return Inflation::Done(Inflated { tasks: infl.tasks, capacity: m });
        }
    }
    no(format!("the preemption charges did not settle within {ROUNDS} rounds"))
}
