//! The one table mapping each mechanism name (the runtime's names) to its inflation rule
//! ([`MECHANISMS`]), with what each rule charges and how each mechanism's model extrapolates.

use crate::partition::Admission;
use crate::uni::fp::Priority;
use rtsched_model::overheads::{Extrapolation, Term};
use rtsched_model::ModelError;

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
    /// RUN: the optimal rule with Regnier et al.'s preemption bound ([`optimal::optimal`]).
    Run,
    /// QPS (QPS-G and QPS-C): the optimal rule with the per-window activations
    /// ([`optimal::optimal`]).
    Qps,
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
            Rule::Run => "RUN: server budgets inflated, U ≤ m",
            Rule::Qps => "QPS: server budgets inflated, U ≤ m",
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
            Rule::Run | Rule::Qps => &[Release, ReleaseEvent, Schedule, ContextSwitch, Ipi, Tick, BudgetTimer],
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
    /// locks and queues: linear contention, see `rtsched_model::overheads::Extrapolation`):
    /// their maxima always, their averages only with `averages_contended`.
    pub contended: &'static [Term],
    /// Whether the *averages* of the contended terms grow with m too. Cerqueira, Vanga &
    /// Brandenburg, RTAS 2014: GSN-EDF's one global lock makes its average scheduling and
    /// release overheads grow with m ("this trend also manifests in the average-case overheads,
    /// which both reach about 500µs at m = 64", §II-B, Fig. 1; "GSN-EDF does not scale well in
    /// the average case, which also extends to GSN-EDF-DI", §IV-B) — true for the global-lock
    /// mechanisms; while SD's averages "remain low throughout the tested range" and G-EDF-MP's
    /// average request latency "is not strongly affected" by m — false for the others.
    pub averages_contended: bool,
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
        averages_contended: true,
    },
    Mechanism {
        name: "gsn-edf-di",
        label: "GSN-EDF-DI",
        source: "GSN-EDF with dedicated interrupt handling = CE1 (Brandenburg & Anderson, RTSS 2009); Cerqueira et al., RTAS 2014",
        rule: Rule::EventDedicated,
        model: "gsn-edf-di",
        in_runtime: true,
        contended: GLOBAL_LOCK,
        averages_contended: true,
    },
    Mechanism {
        name: "cqm",
        label: "CQm",
        source: RTSS09,
        rule: Rule::Quantum { staggered: false, dedicated: false },
        model: "cqm",
        in_runtime: true,
        contended: GLOBAL_LOCK,
        averages_contended: true,
    },
    Mechanism {
        name: "cem",
        label: "CEm",
        source: RTSS09,
        rule: Rule::EventGlobal { push_pull: false },
        model: "cem",
        in_runtime: true,
        contended: GLOBAL_LOCK,
        averages_contended: true,
    },
    Mechanism {
        name: "fem",
        label: "FEm",
        source: RTSS09,
        rule: Rule::EventGlobal { push_pull: false },
        model: "fem",
        in_runtime: true,
        contended: GLOBAL_LOCK,
        averages_contended: true,
    },
    Mechanism {
        name: "hem",
        label: "HEm",
        source: RTSS09,
        rule: Rule::EventGlobal { push_pull: false },
        model: "hem",
        in_runtime: true,
        contended: GLOBAL_LOCK,
        averages_contended: true,
    },
    Mechanism {
        name: "cq1",
        label: "CQ1",
        source: RTSS09,
        rule: Rule::Quantum { staggered: false, dedicated: true },
        model: "cq1",
        in_runtime: true,
        contended: GLOBAL_LOCK,
        averages_contended: true,
    },
    Mechanism {
        name: "ce1",
        label: "CE1",
        source: RTSS09,
        rule: Rule::EventDedicated,
        model: "ce1",
        in_runtime: true,
        contended: GLOBAL_LOCK,
        averages_contended: true,
    },
    Mechanism {
        name: "fe1",
        label: "FE1",
        source: RTSS09,
        rule: Rule::EventDedicated,
        model: "fe1",
        in_runtime: true,
        contended: GLOBAL_LOCK,
        averages_contended: true,
    },
    Mechanism {
        name: "s-cqm",
        label: "S-CQm",
        source: "CQm with staggered quanta (Brandenburg & Anderson, RTSS 2009, §4.2)",
        rule: Rule::Quantum { staggered: true, dedicated: false },
        model: "cqm",
        in_runtime: true,
        contended: GLOBAL_LOCK,
        averages_contended: true,
    },
    Mechanism {
        name: "s-cq1",
        label: "S-CQ1",
        source: "CQ1 with staggered quanta (Brandenburg & Anderson, RTSS 2009, §4.2)",
        rule: Rule::Quantum { staggered: true, dedicated: true },
        model: "cq1",
        in_runtime: true,
        contended: GLOBAL_LOCK,
        averages_contended: true,
    },
    Mechanism {
        name: "push-pull",
        label: "SD (push/pull)",
        source: "Lelli et al., OSPERT 2011; the SD of Cerqueira et al., RTAS 2014",
        // The runtime's push-pull traces every push and pull *inside* the release handler
        // (Δrel) and the scheduler (Δsch) that make them: its release/schedule samples already
        // contain them, so its rule does not add Δpush / Δpull again (they stay in the model
        // as information). kernel-sd keeps the additive rule.
        rule: Rule::EventGlobal { push_pull: false },
        model: "push-pull",
        in_runtime: true,
        contended: &[Term::Release, Term::Schedule, Term::LockWait, Term::Push, Term::Pull],
        averages_contended: false,
    },
    Mechanism {
        name: "kernel-sd",
        label: "Linux SCHED_DEADLINE",
        source: "Linux SCHED_DEADLINE (global, push/pull); only release latency is observable from user space",
        rule: Rule::EventGlobal { push_pull: true },
        model: "kernel-sd",
        in_runtime: true,
        contended: &[Term::ReleaseEvent],
        averages_contended: false,
    },
    Mechanism {
        name: "gedf-mp",
        label: "G-EDF-MP",
        source: RTAS14,
        rule: Rule::MessagePassing,
        model: "gedf-mp",
        in_runtime: true,
        contended: &[Term::Release, Term::Request],
        averages_contended: false,
    },
    Mechanism {
        name: "pedf",
        label: "P-EDF",
        source: "partitioned EDF (Brandenburg & Gül, RTSS 2016, §VII-A)",
        rule: Rule::Partitioned(Admission::Edf),
        model: "pedf",
        in_runtime: true,
        contended: &[],
        averages_contended: false,
    },
    Mechanism {
        name: "pfp",
        label: "P-FP",
        source: "partitioned fixed priority, deadline monotonic (Brandenburg & Gül, RTSS 2016, §VII-A)",
        rule: Rule::Partitioned(Admission::Fp(Priority::DeadlineMonotonic)),
        model: "pfp",
        in_runtime: true,
        contended: &[],
        averages_contended: false,
    },
    Mechanism {
        name: "spres",
        label: "SP-RES",
        source: "Brandenburg & Gül, RTSS 2016, §IV, §VII-A",
        rule: Rule::SemiPartitioned,
        model: "spres",
        in_runtime: true,
        contended: &[],
        averages_contended: false,
    },
    Mechanism {
        name: "run",
        label: "RUN",
        source: "Regnier et al., RTSS 2011; Compagnin, Mezzetti & Vardanega, ECRTS 2014 (one global lock, Brandenburg & Gül, RTSS 2016, §VII-B)",
        rule: Rule::Run,
        model: "run",
        in_runtime: true,
        contended: &[Term::Release, Term::Schedule, Term::LockWait, Term::BudgetTimer],
        averages_contended: true,
    },
    Mechanism {
        name: "qps-g",
        label: "QPS-G",
        source: "Massa et al., Real-Time Systems 52(5), 2016; QPS-G of Compagnin et al. (one global lock, Brandenburg & Gül, RTSS 2016, §VII-B)",
        rule: Rule::Qps,
        model: "qps-g",
        in_runtime: true,
        contended: &[Term::Release, Term::Schedule, Term::LockWait, Term::BudgetTimer],
        averages_contended: true,
    },
    Mechanism {
        name: "qps-c",
        label: "QPS-C",
        source: "Massa et al., Real-Time Systems 52(5), 2016; QPS-C of Compagnin et al. (per-cluster locks, Brandenburg & Gül, RTSS 2016, §VII-B)",
        rule: Rule::Qps,
        model: "qps-c",
        in_runtime: true,
        contended: &[],
        averages_contended: false,
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
        Extrapolation {
            beyond_n: true,
            m: Some(self.capacity(m)),
            scaled_terms: self.contended.to_vec(),
            scale_averages: self.averages_contended,
        }
    }
}
