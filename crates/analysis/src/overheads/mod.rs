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
mod partitioned;
mod rules;

use crate::global::{self, srt, GlobalTest};
use crate::partition::Admission;
use crate::semi::SemiConfig;
use crate::uni::fp::Priority;
use crate::{Limits, Verdict};
use rtsched_model::overheads::{Extrapolation, OverheadSpec, OverheadStat, Overheads, Term};
use rtsched_model::{ModelError, TaskSet, Time};

/// The inflation rule of a mechanism family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Event-driven G-EDF, interrupts on every processor ([`rules::event_global`]);
    /// `push_pull` adds the push/pull terms.
    EventGlobal { push_pull: bool },
    /// Event-driven G-EDF with a dedicated interrupt processor ([`rules::event_dedicated`]).
    EventDedicated,
    /// Quantum-driven G-EDF ([`rules::quantum`]).
    Quantum { staggered: bool, dedicated: bool },
    /// G-EDF-MP ([`rules::message_passing`]).
    MessagePassing,
    /// P-EDF or P-FP ([`partitioned::partitioned`]).
    Partitioned(Admission),
    /// SP-RES ([`partitioned::spres`]).
    SemiPartitioned,
}

impl Rule {
    /// Whether the rule reserves one processor (dedicated interrupts or scheduling).
    pub fn dedicated_cpu(self) -> bool {
        matches!(self, Rule::EventDedicated | Rule::MessagePassing | Rule::Quantum { dedicated: true, .. })
    }

    /// The rule's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Rule::EventGlobal { push_pull: false } => "event-driven, global interrupts",
            Rule::EventGlobal { push_pull: true } => "event-driven push/pull, global interrupts",
            Rule::EventDedicated => "event-driven, dedicated interrupt processor",
            Rule::Quantum { staggered: false, dedicated: false } => "quantum-driven, aligned quanta, global interrupts",
            Rule::Quantum { staggered: false, dedicated: true } => {
                "quantum-driven, aligned quanta, dedicated interrupt processor"
            }
            Rule::Quantum { staggered: true, dedicated: false } => {
                "quantum-driven, staggered quanta, global interrupts"
            }
            Rule::Quantum { staggered: true, dedicated: true } => {
                "quantum-driven, staggered quanta, dedicated interrupt processor"
            }
            Rule::MessagePassing => "G-EDF-MP (dedicated scheduling processor)",
            Rule::Partitioned(Admission::Edf) => "partitioned EDF",
            Rule::Partitioned(Admission::Fp(_)) => "partitioned fixed priority",
            Rule::SemiPartitioned => "semi-partitioned reservations",
        }
    }

    /// The overhead terms the rule charges.
    pub fn terms(self) -> &'static [Term] {
        use Term::*;
        match self {
            Rule::EventGlobal { push_pull: false } => &[Release, ReleaseEvent, Schedule, ContextSwitch, Ipi, Tick],
            Rule::EventGlobal { push_pull: true } => {
                &[Release, ReleaseEvent, Schedule, ContextSwitch, Ipi, Tick, Push, Pull]
            }
            Rule::EventDedicated => &[Release, ReleaseEvent, Schedule, ContextSwitch, Ipi, Tick],
            Rule::Quantum { .. } => &[Release, ReleaseEvent, Schedule, ContextSwitch, Tick],
            Rule::MessagePassing => &[Release, ReleaseEvent, Schedule, ContextSwitch, Ipi, Tick, Request, Dsp],
            Rule::Partitioned(_) => &[Release, ReleaseEvent, Schedule, ContextSwitch, Tick],
            Rule::SemiPartitioned => &[
                Release,
                ReleaseEvent,
                Schedule,
                ContextSwitch,
                Tick,
                MigrationTimer,
                SubtaskActivation,
                BudgetEnforcement,
            ],
        }
    }
}

/// One mechanism: its runtime name, the paper's name, its rule and how its model extrapolates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mechanism {
    /// The runtime's name (`rtsched run --scheduler`, `measure-overheads` model files).
    pub name: &'static str,
    /// The name in the papers' figures.
    pub label: &'static str,
    /// Where the mechanism is described.
    pub source: &'static str,
    pub rule: Rule,
    /// The mechanism whose measured model it uses (`overheads-<model>.json`): its own name,
    /// except that staggered-quantum variants use the quantum plugin's model.
    pub model: &'static str,
    /// Whether the runtime has it today (the others are coming; their models do not exist).
    pub in_runtime: bool,
    /// Terms that grow with the processor count when a model is extrapolated in m (shared
    /// locks and queues: linear contention, see `rtsched_model::overheads::Extrapolation`).
    pub contended: &'static [Term],
}

const GLOBAL_LOCK: &[Term] = &[Term::Release, Term::Schedule, Term::LockWait];
const RTSS09: &str = "Brandenburg & Anderson, RTSS 2009, Table 1";
const RTAS14: &str = "Cerqueira, Vanga & Brandenburg, RTAS 2014";

/// Every mechanism the analysis knows, mapped to its rule: the one table.
pub const MECHANISMS: &[Mechanism] = &[
    Mechanism {
        name: "gsn-edf",
        label: "GSN-EDF",
        source: "LITMUS^RT GSN-EDF = CEm (Brandenburg & Anderson, RTSS 2009); Cerqueira et al., RTAS 2014",
        rule: Rule::EventGlobal { push_pull: false },
        model: "gsn-edf",
        in_runtime: true,
        contended: GLOBAL_LOCK,
    },
    Mechanism {
        name: "gsn-edf-di",
        label: "GSN-EDF-DI",
        source: "GSN-EDF with dedicated interrupt handling = CE1 (Brandenburg & Anderson, RTSS 2009); Cerqueira et al., RTAS 2014",
        rule: Rule::EventDedicated,
        model: "gsn-edf-di",
        in_runtime: true,
        contended: GLOBAL_LOCK,
    },
    Mechanism {
        name: "cqm",
        label: "CQm",
        source: RTSS09,
        rule: Rule::Quantum { staggered: false, dedicated: false },
        model: "cqm",
        in_runtime: false,
        contended: GLOBAL_LOCK,
    },
    Mechanism {
        name: "cem",
        label: "CEm",
        source: RTSS09,
        rule: Rule::EventGlobal { push_pull: false },
        model: "cem",
        in_runtime: false,
        contended: GLOBAL_LOCK,
    },
    Mechanism {
        name: "fem",
        label: "FEm",
        source: RTSS09,
        rule: Rule::EventGlobal { push_pull: false },
        model: "fem",
        in_runtime: false,
        contended: GLOBAL_LOCK,
    },
    Mechanism {
        name: "hem",
        label: "HEm",
        source: RTSS09,
        rule: Rule::EventGlobal { push_pull: false },
        model: "hem",
        in_runtime: false,
        contended: GLOBAL_LOCK,
    },
    Mechanism {
        name: "cq1",
        label: "CQ1",
        source: RTSS09,
        rule: Rule::Quantum { staggered: false, dedicated: true },
        model: "cq1",
        in_runtime: false,
        contended: GLOBAL_LOCK,
    },
    Mechanism {
        name: "ce1",
        label: "CE1",
        source: RTSS09,
        rule: Rule::EventDedicated,
        model: "ce1",
        in_runtime: false,
        contended: GLOBAL_LOCK,
    },
    Mechanism {
        name: "fe1",
        label: "FE1",
        source: RTSS09,
        rule: Rule::EventDedicated,
        model: "fe1",
        in_runtime: false,
        contended: GLOBAL_LOCK,
    },
    Mechanism {
        name: "s-cqm",
        label: "S-CQm",
        source: "CQm with staggered quanta (Brandenburg & Anderson, RTSS 2009, §4.2)",
        rule: Rule::Quantum { staggered: true, dedicated: false },
        model: "cqm",
        in_runtime: false,
        contended: GLOBAL_LOCK,
    },
    Mechanism {
        name: "s-cq1",
        label: "S-CQ1",
        source: "CQ1 with staggered quanta (Brandenburg & Anderson, RTSS 2009, §4.2)",
        rule: Rule::Quantum { staggered: true, dedicated: true },
        model: "cq1",
        in_runtime: false,
        contended: GLOBAL_LOCK,
    },
    Mechanism {
        name: "push-pull",
        label: "SD (push/pull)",
        source: "Lelli et al., OSPERT 2011; the SD of Cerqueira et al., RTAS 2014",
        rule: Rule::EventGlobal { push_pull: true },
        model: "push-pull",
        in_runtime: false,
        contended: &[Term::Release, Term::Schedule, Term::LockWait, Term::Push, Term::Pull],
    },
    Mechanism {
        name: "kernel-sd",
        label: "Linux SCHED_DEADLINE",
        source: "Linux SCHED_DEADLINE (global, push/pull); only release latency is observable from user space",
        rule: Rule::EventGlobal { push_pull: true },
        model: "kernel-sd",
        in_runtime: true,
        contended: &[Term::ReleaseEvent],
    },
    Mechanism {
        name: "gedf-mp",
        label: "G-EDF-MP",
        source: RTAS14,
        rule: Rule::MessagePassing,
        model: "gedf-mp",
        in_runtime: false,
        contended: &[Term::Release, Term::Request],
    },
    Mechanism {
        name: "pedf",
        label: "P-EDF",
        source: "partitioned EDF (Brandenburg & Gül, RTSS 2016, §VII-A)",
        rule: Rule::Partitioned(Admission::Edf),
        model: "pedf",
        in_runtime: true,
        contended: &[],
    },
    Mechanism {
        name: "pfp",
        label: "P-FP",
        source: "partitioned fixed priority, deadline monotonic (Brandenburg & Gül, RTSS 2016, §VII-A)",
        rule: Rule::Partitioned(Admission::Fp(Priority::DeadlineMonotonic)),
        model: "pfp",
        in_runtime: true,
        contended: &[],
    },
    Mechanism {
        name: "spres",
        label: "SP-RES",
        source: "Brandenburg & Gül, RTSS 2016, §IV, §VII-A",
        rule: Rule::SemiPartitioned,
        model: "spres",
        in_runtime: false,
        contended: &[],
    },
];

/// The mechanism named `name`; the error lists the known names.
pub fn mechanism(name: &str) -> Result<&'static Mechanism, ModelError> {
    MECHANISMS.iter().find(|m| m.name == name).ok_or_else(|| {
        ModelError::field(
            "mechanism",
            format!(
                "unknown mechanism {name:?}; known: {}",
                MECHANISMS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
            ),
        )
    })
}

impl Mechanism {
    /// Processors that schedule jobs on a platform of `m`: `m − 1` with a dedicated processor.
    pub fn capacity(&self, m: u32) -> u32 {
        if self.rule.dedicated_cpu() {
            m.saturating_sub(1)
        } else {
            m
        }
    }

    /// Checks that the mechanism can run on `m` processors.
    pub fn check_m(&self, m: u32) -> Result<(), ModelError> {
        let need = if self.rule.dedicated_cpu() { 2 } else { 1 };
        if m < need {
            return Err(ModelError::field(
                "m",
                format!(
                    "{} needs at least {need} processors (one is dedicated to {}), got {m}",
                    self.name,
                    if self.rule == Rule::MessagePassing { "scheduling" } else { "interrupts" }
                ),
            ));
        }
        Ok(())
    }

    /// How to extrapolate its model to `m` processors (beyond the measured n, and scaling its
    /// contended terms from the model's processor count to the capacity on `m`).
    pub fn extrapolation(&self, m: u32) -> Extrapolation {
        Extrapolation { beyond_n: true, m: Some(self.capacity(m)), scaled_terms: self.contended.to_vec() }
    }
}

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
    mech.check_m(m)?;
    p.validate()?;
    v.validate()?;
    Ok(match mech.rule {
        Rule::Partitioned(adm) => partitioned::partitioned(ts, m, v, p, mode, adm, limits).0,
        Rule::SemiPartitioned => partitioned::spres(ts, m, v, p, Mode::Hard, &SemiConfig::default()).0,
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
    p.validate()?;
    v.validate()?;
    Ok(partitioned::spres(ts, m, v, p, Mode::Hard, cfg))
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
