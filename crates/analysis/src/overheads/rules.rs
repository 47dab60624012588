//! The inflation rules of the global mechanism families: event-driven with global or
//! dedicated interrupt handling, G-EDF-MP, and quantum-driven with aligned or staggered
//! quanta. Each turns a task set and overhead values into a task set that an overhead-free
//! G-EDF test judges on the rule's capacity (docs/overheads.md has the formulas side by side).
//!
//! Common conventions (all rules):
//! * Integer ns throughout; inflated costs are rounded **up**, shrunk periods and deadlines
//!   are exact integer subtractions (the interrupt utilizations are rounded up to 2^-40, see
//!   [`super::accounting`]).
//! * `Δcpd` (cache-related preemption/migration delay) is the caller's parameter
//!   ([`super::Params::cpd`], default 0): none of our runtimes measures it (Cerqueira et al.,
//!   RTAS 2014, §IV-A measure it separately, with Bastoni et al.'s method).
//! * A task whose inflated cost exceeds its shrunk deadline (hard) or period (soft), or whose
//!   period or deadline shrinks to nothing, makes the set infeasible under the rule; the reason
//!   names the task.
//! * Tasks are sporadic with arbitrary deadlines; the release-latency shrink applies to the
//!   period and the deadline alike (Brandenburg's accounting; RTAS 2014 App. B writes only
//!   `p′ = p − Δev` because its tasks have implicit deadlines).

use super::accounting::{scaled, Interrupts};
use super::{Inflated, Inflation, Mode, Params};
use rtsched_model::overheads::Overheads;
use rtsched_model::time::format_time;
use rtsched_model::{Task, TaskSet, Time, MAX_TIME};

/// A time in a reason, for people (`83.6 ms`); one past the largest time (an inflated cost can
/// be) stays in ns. The verdicts themselves are exact integer ns.
fn human(ns: u128) -> String {
    match Time::try_from(ns) {
        Ok(t) => format_time(t),
        Err(_) => format!("{ns} ns"),
    }
}

/// Two times of an "exceeds" reason, for people unless rounding would print them alike
/// (`10 ms exceeds 10 ms`): then both in exact ns.
fn human_pair(a: u128, b: u128) -> (String, String) {
    let (x, y) = (human(a), human(b));
    if x == y && a != b {
        (format!("{a} ns"), format!("{b} ns"))
    } else {
        (x, y)
    }
}

/// Builds the inflated set from per-task `(C', shrink)`: `T' = T − shrink`, `D' = D − shrink`.
/// `limit_by_deadline`: hard rules need `C' ≤ D'`, soft ones `C' ≤ T'`.
pub(super) fn build(
    ts: &TaskSet,
    capacity: u32,
    mode: Mode,
    mut cost_of: impl FnMut(usize, &Task) -> u128,
    shrink: u128,
) -> Inflation {
    let mut out = Vec::with_capacity(ts.len());
    for (i, t) in ts.iter().enumerate() {
        let (d, p) = (t.deadline as u128, t.period as u128);
        if shrink >= p || shrink >= d {
            return Inflation::Infeasible {
                task: Some(i),
                reason: format!(
                    "task {i}: the release delay of {} leaves nothing of its deadline {} / period {}",
                    human(shrink),
                    format_time(t.deadline),
                    format_time(t.period)
                ),
            };
        }
        let (d2, p2) = (d - shrink, p - shrink);
        let c2 = cost_of(i, t);
        let limit = match mode {
            Mode::Hard => d2,
            Mode::Soft => p2,
        };
        if c2 > limit || c2 > MAX_TIME as u128 {
            let what = match mode {
                Mode::Hard => "deadline",
                Mode::Soft => "period",
            };
            let (cost, lim) = human_pair(c2, limit);
            return Inflation::Infeasible {
                task: Some(i),
                reason: format!("task {i}: inflated cost {cost} exceeds its inflated {what} {lim}"),
            };
        }
        out.push(Task {
            name: t.name.clone(),
            wcet: c2.max(1) as Time,
            deadline: d2 as Time,
            period: p2 as Time,
            segments: None,
        });
    }
    match TaskSet::new(out) {
        Ok(tasks) => Inflation::Done(Inflated { tasks, capacity }),
        Err(e) => Inflation::Infeasible { task: e.task, reason: e.to_string() },
    }
}

fn overload(what: &str) -> Inflation {
    Inflation::Infeasible {
        task: None,
        reason: format!("interrupt overload: {what} alone use a whole processor (uscale ≤ 0)"),
    }
}

/// Event-driven G-EDF with **global** interrupt handling: GSN-EDF = CEm, FEm, HEm
/// (Brandenburg & Anderson, RTSS 2009, Table 1), push/pull (Lelli et al., OSPERT 2011) and
/// Linux SCHED_DEADLINE. Capacity `m`.
///
/// Source: Brandenburg & Anderson, RTSS 2009, §2 ("each job causes scheduling and
/// context-switching overhead exactly twice ... preemption/migration overhead at most once
/// ... a job's completion time may be delayed by IPI latency"; release and tick interrupts by
/// interrupt accounting, their [8]); the preemption-centric accounting in [`super::accounting`]
/// with every task's release interrupt able to hit every processor:
///
/// ```text
/// u_irq = Σ_i Δrel / T_i,   B = n · Δrel,   uscale = 1 − Δtck/Q − u_irq
/// C′ = (C + 2(Δsch + Δcxs) + Δcpd) / uscale + 2 · Cpre + Δipi      (Δipi only if m > 1)
/// T′ = T − Δev,   D′ = D − Δev
/// ```
///
/// Push/pull (`push_pull`): a release may push (Δpush is added to Δrel) and a scheduling
/// decision may pull (Δpull is added to Δsch) — an assumption about where the coming push/pull
/// mechanism's `push` and `pull` samples fall; a model whose `release`/`schedule` samples
/// already contain them must leave `push`/`pull` out. Assumptions: independent sporadic tasks,
/// no self-suspension, the release-handler costs Δrel per release time.
pub(super) fn event_global(ts: &TaskSet, m: u32, v: &Overheads, p: &Params, mode: Mode, push_pull: bool) -> Inflation {
    let (rel, sch) =
        if push_pull { (v.release_ns + v.push_ns, v.schedule_ns + v.pull_ns) } else { (v.release_ns, v.schedule_ns) };
    let mut irq = Interrupts::tick(v.tick_ns, p.quantum, v.release_event_ns);
    for t in ts.iter() {
        irq.add(rel as u128, t.period);
    }
    let Some(scale) = irq.scale() else { return overload("the tick and the release interrupts") };
    let cpre = irq.cpre(scale);
    let per_job = 2 * (sch as u128 + v.context_switch_ns as u128) + p.cpd as u128;
    let ipi = if m > 1 { v.ipi_ns as u128 } else { 0 };
    build(ts, m, mode, |_, t| scaled(t.wcet as u128 + per_job, scale) + 2 * cpre + ipi, v.release_event_ns as u128)
}

/// Event-driven G-EDF with a **dedicated interrupt processor**: GSN-EDF-DI = CE1, FE1
/// (Brandenburg & Anderson, RTSS 2009, Table 1: capacity `m − 1`).
///
/// Source: as [`event_global`], with the release interrupts on the dedicated processor; the
/// jobs' processors see only the tick, and a job is delayed once by its own release handler
/// and the IPI that follows it (Cerqueira et al., RTAS 2014, App. B: "the accounting methods
/// for scheduling (Δsch, Δipi) and interrupt overheads (Δrel, Δev) do not differ" from
/// GSN-EDF-DI's):
///
/// ```text
/// uscale = 1 − Δtck/Q,   Cpre = (Δtck + Δev · Δtck/Q) / uscale
/// C′ = (C + 2(Δsch + Δcxs) + Δcpd) / uscale + 2 · Cpre + Δipi + Δrel
/// T′ = T − Δev,   D′ = D − Δev,   capacity m − 1
/// ```
///
/// Assumption: the dedicated processor handles one release time's handler before the next
/// (no queueing of handlers there), as in that accounting.
pub(super) fn event_dedicated(ts: &TaskSet, m: u32, v: &Overheads, p: &Params, mode: Mode) -> Inflation {
    let irq = Interrupts::tick(v.tick_ns, p.quantum, v.release_event_ns);
    let Some(scale) = irq.scale() else { return overload("the tick") };
    let cpre = irq.cpre(scale);
    let per_job = 2 * (v.schedule_ns as u128 + v.context_switch_ns as u128) + p.cpd as u128;
    let unscaled = 2 * cpre + v.ipi_ns as u128 + v.release_ns as u128;
    build(ts, m - 1, mode, |_, t| scaled(t.wcet as u128 + per_job, scale) + unscaled, v.release_event_ns as u128)
}

/// G-EDF-MP, a dedicated scheduling processor fed by message passing (Cerqueira, Vanga &
/// Brandenburg, RTAS 2014), exactly as its Appendix B writes it:
///
/// ```text
/// p′ = p − Δev
/// e′ = (e + 3 · (Δsch + Δcxs) + Δcpd) / (1 − U_tck) + 2 · Cpre + Δreq + Δdsp + 2 · Δipi + Δrel
/// Cpre = (Δtck + Δev · U_tck) / (1 − U_tck),   U_tck = Δtck / 1000 µs
/// ```
///
/// (the denominator printed "1 − U tck0" in our text copy is read as `1 − U_tck`; `1000 µs`
/// is [`super::Params::quantum`], default 1 ms). The third `Δsch + Δcxs`, `Δreq`, `Δdsp` and
/// the second `Δipi` are the round trip a preempted job waits for before it resumes. We also
/// shrink the deadline by `Δev` (the paper's tasks have `d = p`). Capacity `m − 1` (the DSP
/// schedules no job). Assumptions: those of the GSN-EDF-DI accounting it extends.
pub(super) fn message_passing(ts: &TaskSet, m: u32, v: &Overheads, p: &Params, mode: Mode) -> Inflation {
    let irq = Interrupts::tick(v.tick_ns, p.quantum, v.release_event_ns);
    let Some(scale) = irq.scale() else { return overload("the tick") };
    let cpre = irq.cpre(scale);
    let per_job = 3 * (v.schedule_ns as u128 + v.context_switch_ns as u128) + p.cpd as u128;
    let unscaled = 2 * cpre + v.request_ns as u128 + v.dsp_ns as u128 + 2 * v.ipi_ns as u128 + v.release_ns as u128;
    build(ts, m - 1, mode, |_, t| scaled(t.wcet as u128 + per_job, scale) + unscaled, v.release_event_ns as u128)
}

/// Quantum-driven G-EDF: CQm, CQ1 (Brandenburg & Anderson, RTSS 2009, Table 1) and, with
/// staggered quanta, S-CQm and S-CQ1 (ibid. §4.2). Capacity `m` (CQm) or `m − 1` (CQ1).
///
/// Source: ibid. §2: "Analysis assuming ideal, event-driven G-EDF scheduling can be applied to
/// ideal, quantum-driven scheduling by shortening periods by one quantum (to account for delays
/// upon release) and by rounding execution times up to a quantum multiple (to account for
/// partially-idle quanta)"; staggered quanta delay job completions "by up to Q(m − 1)/m time
/// units. This can be accounted for by shortening periods"; and §4.2: "periods are not modified
/// in the SRT case under quantum-driven scheduling as quantum-based delays cause only constant
/// tardiness". With overheads (our combination, stated as assumptions):
///
/// ```text
/// Q_eff = Q − Δtck − Δsch − Δcxs          useful time of a quantum in which a job is dispatched
/// e_job = (C + Δcpd) / uscale + 2 · Cpre   release interrupts as in event_global (CQm only;
///                                          CQ1: uscale = 1, Cpre = 0)
/// C′ = ⌈e_job / Q_eff⌉ · Q
/// hard: T′ = T − (Q + Δev + R + S),  D′ = D − (Q + Δev + R + S)
///       R = Δrel (CQ1) or Δtck + Δsch + Δcxs + n · Δrel (CQm: the release handler may wait
///       behind one quantum boundary's work and every other release on its processor)
///       S = ⌈Q (m_s − 1) / m_s⌉ for staggered quanta (m_s = capacity), else 0
/// soft: T′ = T − Δev,  D′ = D − Δev
/// ```
///
/// No Δipi: quantum-driven plugins reschedule only at their own ticks. Assumption (CQm): the
/// release interrupts that hit a job's quanta are covered by the preemption-centric scaling of
/// its execution, as for event-driven scheduling.
pub(super) fn quantum(
    ts: &TaskSet,
    m: u32,
    v: &Overheads,
    p: &Params,
    mode: Mode,
    staggered: bool,
    dedicated: bool,
) -> Inflation {
    let q = p.quantum as u128;
    let per_quantum = v.tick_ns as u128 + v.schedule_ns as u128 + v.context_switch_ns as u128;
    if per_quantum >= q {
        return Inflation::Infeasible {
            task: None,
            reason: format!(
                "the per-quantum overheads Δtck + Δsch + Δcxs = {} leave nothing of the quantum {}",
                human(per_quantum),
                human(q)
            ),
        };
    }
    let q_eff = q - per_quantum;
    let capacity = if dedicated { m - 1 } else { m };
    let mut irq = Interrupts::tick(0, p.quantum, v.release_event_ns);
    if !dedicated {
        for t in ts.iter() {
            irq.add(v.release_ns as u128, t.period);
        }
    }
    let Some(scale) = irq.scale() else { return overload("the release interrupts") };
    let cpre = irq.cpre(scale);
    let shrink = match mode {
        Mode::Soft => v.release_event_ns as u128,
        Mode::Hard => {
            let r =
                if dedicated { v.release_ns as u128 } else { per_quantum + ts.len() as u128 * v.release_ns as u128 };
            let s = if staggered && capacity > 1 { (q * (capacity as u128 - 1)).div_ceil(capacity as u128) } else { 0 };
            q + v.release_event_ns as u128 + r + s
        }
    };
    build(
        ts,
        capacity,
        mode,
        |_, t| {
            let e_job = scaled(t.wcet as u128 + p.cpd as u128, scale) + 2 * cpre;
            e_job.div_ceil(q_eff) * q
        },
        shrink,
    )
}
