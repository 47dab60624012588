//! Overhead-aware schedulability: task-parameter inflation for every mechanism family, and
//! the hard and soft real-time verdicts on the inflated sets (design note: docs/overheads.md).
//!
//! The idea (Cerqueira, Vanga & Brandenburg, RTAS 2014, Appendix B): "inflating task
//! parameters so that a positive overhead-free schedulability test of the transformed task set
//! implies the timeliness of the original task set in the presence of overheads". A *rule*
//! maps (task set, mechanism, overhead values, parameters) to an inflated task set and a
//! capacity (the processors that schedule jobs); an overhead-free test judges it:
//!
//! * **hard real-time** = the combined G-EDF test on the set inflated with *maximum*
//!   overheads (Brandenburg & Anderson, RTSS 2009, §4.2; their five tests are
//!   `GlobalTest::SEED001`);
//! * **soft real-time** = inflated `U ≤ capacity` (and every `u ≤ 1`) with *average*
//!   overheads: G-EDF's tardiness is bounded iff so (Devi & Anderson; ibid. §4.2);
//! * partitioned mechanisms place the inflated set instead (P-EDF/P-FP: first-fit decreasing
//!   with the exact uniprocessor test; SP-RES: the SP-RES cascade).
//!
//! [`MECHANISMS`] is the one table mapping each mechanism name (the runtime's names) to its
//! rule; each rule's function documents its source, formulas and assumptions
//! ([`rules`], [`partitioned`]). All arithmetic is integer ns; inflated costs are rounded up.

mod accounting;
mod mechanisms;
mod optimal;
mod partitioned;
mod rules;

pub use mechanisms::{mechanism, Mechanism, Rule, MECHANISMS};

use crate::global::{self, srt, GlobalTest};
use crate::semi::SemiConfig;
use crate::{Limits, Verdict};
use rtsched_model::overheads::{OverheadSpec, OverheadStat, Overheads};
use rtsched_model::{ModelError, TaskSet, Time};

/// Parameters of the rules that are not overhead measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Δcpd, the cache-related preemption/migration delay charged once per job (ns). Default 0:
    /// none of our runtimes measures it.
    pub cpd: Time,
    /// The quantum Q (ns): the tick period for the tick utilization `Δtck / Q` of every rule,
    /// and the scheduling quantum of the quantum-driven rules. Default 1 ms (the LITMUS^RT tick
    /// of Brandenburg & Anderson, RTSS 2009, §2, and the 1000 µs of RTAS 2014, App. B).
    pub quantum: Time,
}

impl Default for Params {
    fn default() -> Self {
        Params { cpd: 0, quantum: 1_000_000 }
    }
}

impl Params {
    pub fn validate(&self) -> Result<(), ModelError> {
        if self.quantum == 0 {
            return Err(ModelError::field("quantum", "must be at least 1 ns, got 0"));
        }
        if self.cpd > rtsched_model::overheads::MAX_OVERHEAD {
            return Err(ModelError::field("cpd", format!("must be at most 1 s, got {} ns", self.cpd)));
        }
        Ok(())
    }
}

/// Hard real-time (deadlines met) or soft real-time (bounded tardiness). Only the
/// quantum-driven rules and the final check (`C′ ≤ D′` or `C′ ≤ T′`) depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    Hard,
    Soft,
}

/// An inflated task set and the processors that schedule it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inflated {
    pub tasks: TaskSet,
    pub capacity: u32,
}

/// The outcome of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inflation {
    Done(Inflated),
    /// The overheads alone make the set unschedulable under the rule (e.g. an inflated cost
    /// beyond its deadline, interrupt overload); `task` when one task is the reason.
    Infeasible {
        task: Option<usize>,
        reason: String,
    },
}

/// A verdict with the reason when it is negative for an overhead reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    pub verdict: Verdict,
    pub reason: Option<String>,
}

/// Inflates `ts` for `mech` on `m` processors with the overhead values `v`.
///
/// For the partitioned families this is their placement-independent inflation (every task's
/// release interrupts counted on every processor); their verdicts ([`hard`], [`soft`]) place
/// the set and may use a sharper per-processor accounting.
pub fn inflate(
    ts: &TaskSet,
    m: u32,
    mech: &Mechanism,
    v: &Overheads,
    p: &Params,
    mode: Mode,
) -> Result<Inflation, ModelError> {
    // Self-suspending tasks: suspension-oblivious (crate::suspension).
    let ts = &*crate::suspension::oblivious(ts)?;
    mech.check_m(m)?;
    p.validate()?;
    v.validate()?;
    Ok(match mech.rule {
        Rule::EventGlobal { push_pull } => rules::event_global(ts, m, v, p, mode, push_pull),
        Rule::EventDedicated => rules::event_dedicated(ts, m, v, p, mode),
        Rule::MessagePassing => rules::message_passing(ts, m, v, p, mode),
        Rule::Quantum { staggered, dedicated } => rules::quantum(ts, m, v, p, mode, staggered, dedicated),
        Rule::Partitioned(_) => partitioned::partitioned_bound(ts, m, v, p, mode),
        Rule::SemiPartitioned => partitioned::spres_first_round(ts, m, v, p, mode),
        Rule::Run => optimal::optimal(ts, m, v, p, mode, optimal::Which::Run),
        Rule::Qps => optimal::optimal(ts, m, v, p, mode, optimal::Which::Qps),
    })
}

/// Hard real-time verdict: the G-EDF `tests` (any of them; `GlobalTest::COMBINED_ORDER` for
/// the combined test) on the inflated set and capacity; partitioned families place it.
pub fn hard(
    ts: &TaskSet,
    m: u32,
    mech: &Mechanism,
    v: &Overheads,
    p: &Params,
    tests: &[GlobalTest],
    limits: &Limits,
) -> Result<Judged, ModelError> {
    judge(ts, m, mech, v, p, Mode::Hard, tests, limits)
}

/// Soft real-time verdict: inflated `U ≤ capacity` and every `u ≤ 1` (bounded tardiness under
/// G-EDF); P-EDF/P-FP: a first-fit placement with `U ≤ 1` per processor; SP-RES: its (hard)
/// placement test with the given values.
pub fn soft(
    ts: &TaskSet,
    m: u32,
    mech: &Mechanism,
    v: &Overheads,
    p: &Params,
    limits: &Limits,
) -> Result<Judged, ModelError> {
    judge(ts, m, mech, v, p, Mode::Soft, &[], limits)
}

#[allow(clippy::too_many_arguments)]
fn judge(
    ts: &TaskSet,
    m: u32,
    mech: &Mechanism,
    v: &Overheads,
    p: &Params,
    mode: Mode,
    tests: &[GlobalTest],
    limits: &Limits,
) -> Result<Judged, ModelError> {
    // Self-suspending tasks: suspension-oblivious (crate::suspension).
    let ts = &*crate::suspension::oblivious(ts)?;
    mech.check_m(m)?;
    p.validate()?;
    v.validate()?;
    Ok(match mech.rule {
        Rule::Partitioned(adm) => partitioned::partitioned(ts, m, v, p, mode, adm, limits).0,
        Rule::SemiPartitioned => partitioned::spres(ts, m, v, p, Mode::Hard, &SemiConfig::default()).0,
        // Optimal for implicit deadlines: the rule's own `U ≤ m` is the verdict.
        Rule::Run | Rule::Qps => match inflate(ts, m, mech, v, p, mode)? {
            Inflation::Infeasible { reason, .. } => Judged { verdict: Verdict::NotSchedulable, reason: Some(reason) },
            Inflation::Done(_) => Judged { verdict: Verdict::Schedulable, reason: None },
        },
        _ => match inflate(ts, m, mech, v, p, mode)? {
            Inflation::Infeasible { reason, .. } => Judged { verdict: Verdict::NotSchedulable, reason: Some(reason) },
            Inflation::Done(i) => {
                let verdict = match mode {
                    Mode::Hard => global::combined_of(tests, &i.tasks, i.capacity, limits),
                    Mode::Soft => Verdict::from_bool(srt::bounded_tardiness(&i.tasks, i.capacity)),
                };
                Judged { verdict, reason: None }
            }
        },
    })
}

/// Task indices per processor.
pub type Partition = Vec<Vec<usize>>;

/// P-EDF / P-FP with overheads ([`Rule::Partitioned`]): the verdict and, when schedulable, the
/// partition (task indices per processor) that the verdict is about.
pub fn place_partitioned(
    ts: &TaskSet,
    m: u32,
    mech: &Mechanism,
    v: &Overheads,
    p: &Params,
    mode: Mode,
    limits: &Limits,
) -> Result<(Judged, Option<Partition>), ModelError> {
    // Self-suspending tasks: suspension-oblivious (crate::suspension).
    let ts = &*crate::suspension::oblivious(ts)?;
    mech.check_m(m)?;
    p.validate()?;
    v.validate()?;
    match mech.rule {
        Rule::Partitioned(adm) => Ok(partitioned::partitioned(ts, m, v, p, mode, adm, limits)),
        _ => Err(ModelError::field("mechanism", format!("{} is not a partitioned mechanism", mech.name))),
    }
}

/// SP-RES with overheads ([`Rule::SemiPartitioned`]): the verdict and, when schedulable, the
/// inflated task set and its placement.
pub fn place_spres(
    ts: &TaskSet,
    m: u32,
    v: &Overheads,
    p: &Params,
    cfg: &SemiConfig,
) -> Result<(Judged, Option<(TaskSet, crate::semi::Placement)>), ModelError> {
    // Self-suspending tasks: suspension-oblivious (crate::suspension).
    let ts = &*crate::suspension::oblivious(ts)?;
    p.validate()?;
    v.validate()?;
    Ok(partitioned::spres(ts, m, v, p, Mode::Hard, cfg))
}

/// RUN or QPS with overheads ([`Rule::Run`], [`Rule::Qps`]): the verdict and, when schedulable,
/// the inflated task set whose WCETs are the servers' budgets (`rtsched run --inflate`). The
/// one rule `analyze --overheads --mechanism run|qps-g|qps-c` judges with.
pub fn inflate_optimal(
    ts: &TaskSet,
    m: u32,
    mech: &Mechanism,
    v: &Overheads,
    p: &Params,
) -> Result<(Judged, Option<TaskSet>), ModelError> {
    if !matches!(mech.rule, Rule::Run | Rule::Qps) {
        return Err(ModelError::field(
            "mechanism",
            format!("inflated server budgets are made for run, qps-g and qps-c, not {}", mech.name),
        ));
    }
    Ok(match inflate(ts, m, mech, v, p, Mode::Hard)? {
        Inflation::Infeasible { reason, .. } => {
            (Judged { verdict: Verdict::NotSchedulable, reason: Some(reason) }, None)
        }
        Inflation::Done(i) => (Judged { verdict: Verdict::Schedulable, reason: None }, Some(i.tasks)),
    })
}

/// Which statistic each verdict uses: `None` = the papers' choice (hard: maximum, soft:
/// average; Brandenburg & Anderson, RTSS 2009, §4.2); `Some(s)` = `s` for both.
pub fn stats(stat: Option<OverheadStat>) -> (OverheadStat, OverheadStat) {
    match stat {
        None => (OverheadStat::Max, OverheadStat::Avg),
        Some(s) => (s, s),
    }
}

/// The values of `spec` for `ts` under `mech` on `m` processors: evaluated at `n = |ts|`,
/// clamped, or — with `extrapolate` — extrapolated beyond the measured n and to the
/// mechanism's capacity on `m` ([`Mechanism::extrapolation`]).
pub fn values(
    spec: &OverheadSpec,
    ts: &TaskSet,
    m: u32,
    mech: &Mechanism,
    stat: OverheadStat,
    extrapolate: bool,
) -> Overheads {
    values_at(spec, ts.len(), m, mech, stat, extrapolate)
}

/// [`values`] at `n` tasks.
pub fn values_at(
    spec: &OverheadSpec,
    n: usize,
    m: u32,
    mech: &Mechanism,
    stat: OverheadStat,
    extrapolate: bool,
) -> Overheads {
    if extrapolate {
        spec.resolve_extrapolated(n, stat, &mech.extrapolation(m))
    } else {
        spec.resolve(n, stat)
    }
}

/// The values of one model for a mechanism and statistic at every n of a range, evaluated once:
/// a sweep point judges many task sets of similar sizes with the same model, and evaluating a
/// model (a search per term) costs as much as inflating a small set. Out-of-range n are
/// evaluated on demand. Immutable, so it is shared by the threads of a batch.
#[derive(Debug, Clone)]
pub struct ValueTable<'a> {
    spec: &'a OverheadSpec,
    mech: &'a Mechanism,
    m: u32,
    stat: OverheadStat,
    extrapolate: bool,
    lo: usize,
    vals: Vec<Overheads>,
}

impl<'a> ValueTable<'a> {
    /// Evaluates `spec` for `n` in `lo..=hi` (see [`values`]).
    pub fn new(
        spec: &'a OverheadSpec,
        mech: &'a Mechanism,
        m: u32,
        stat: OverheadStat,
        extrapolate: bool,
        lo: usize,
        hi: usize,
    ) -> ValueTable<'a> {
        let mut t = ValueTable { spec, mech, m, stat, extrapolate, lo, vals: Vec::new() };
        t.vals = (lo..=hi.max(lo)).map(|n| t.eval(n)).collect();
        t
    }

    fn eval(&self, n: usize) -> Overheads {
        values_at(self.spec, n, self.m, self.mech, self.stat, self.extrapolate)
    }

    /// The values at `n` tasks.
    pub fn get(&self, n: usize) -> Overheads {
        match n.checked_sub(self.lo).and_then(|i| self.vals.get(i)) {
            Some(v) => *v,
            None => self.eval(n),
        }
    }
}

#[cfg(test)]
mod tests;
