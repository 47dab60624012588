//! The term vocabulary (defined once, in `define_terms!`) and [`Overheads`], one value per term.

use crate::{ModelError, Time};
use serde::Serialize;
use serde_json::{Map, Value};

/// Largest accepted value of any term: 1 s. Keeps every sum of charges far from `u64` overflow.
pub const MAX_OVERHEAD: Time = 1_000_000_000;

/// Whether a term is processor time or a latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TermKind {
    /// Processor time spent by a handler or the scheduler on some CPU.
    CpuTime,
    /// A delay between two events that uses no processor time of the delayed job's CPU.
    Latency,
    /// A count per callback, not a time (its model columns hold counts under the `_ns` names);
    /// informational: no rule charges it.
    Count,
}

impl TermKind {
    pub fn name(self) -> &'static str {
        match self {
            TermKind::CpuTime => "cpu_time",
            TermKind::Latency => "latency",
            TermKind::Count => "count",
        }
    }
}

macro_rules! define_terms {
    ($( $variant:ident => $field:ident, $name:literal, $symbol:literal, $kind:ident, $doc:literal; )*) => {
        /// One overhead term (the vocabulary; module doc for the table).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum Term {
            $( #[doc = $doc] $variant, )*
        }

        impl Term {
            /// Every term, in vocabulary order.
            pub const ALL: &'static [Term] = &[ $( Term::$variant, )* ];

            /// The key in model files (`"release"`, `"release_event"`, ...).
            pub fn name(self) -> &'static str {
                match self { $( Term::$variant => $name, )* }
            }

            /// The symbol the papers use (`"Δrel"`), or the name where they use none.
            pub fn symbol(self) -> &'static str {
                match self { $( Term::$variant => $symbol, )* }
            }

            /// CPU time or latency.
            pub fn kind(self) -> TermKind {
                match self { $( Term::$variant => TermKind::$kind, )* }
            }

            /// One line saying what the term measures.
            pub fn description(self) -> &'static str {
                match self { $( Term::$variant => $doc, )* }
            }

            /// The key of the term in a constants object (`"release_ns"`).
            pub fn constant_key(self) -> &'static str {
                match self { $( Term::$variant => stringify!($field), )* }
            }
        }

        /// One value per term, integer ns (constant over an analysis or a simulation).
        /// Fields are named `<term>_ns`; [`Overheads::get`] reads one by [`Term`].
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
        pub struct Overheads {
            $( #[doc = $doc] pub $field: Time, )*
        }

        impl Overheads {
            /// All terms zero.
            pub const ZERO: Overheads = Overheads { $( $field: 0, )* };

            /// The value of `t`.
            pub fn get(&self, t: Term) -> Time {
                match t { $( Term::$variant => self.$field, )* }
            }

            /// Sets the value of `t`.
            pub fn set(&mut self, t: Term, v: Time) {
                match t { $( Term::$variant => self.$field = v, )* }
            }
        }
    };
}

define_terms! {
    Release => release_ns, "release", "Δrel", CpuTime,
        "Δrel: CPU time of one release-handler invocation (all releases of one domain due at the same instant).";
    ReleaseEvent => release_event_ns, "release_event", "Δev", Latency,
        "Δev: release latency, from a release's due time to the start of its handler.";
    Schedule => schedule_ns, "schedule", "Δsch", CpuTime,
        "Δsch: CPU time of one scheduler invocation before a dispatch (lock waits included).";
    ContextSwitch => context_switch_ns, "context_switch", "Δcxs", CpuTime,
        "Δcxs: CPU time of switching to the dispatched job.";
    Ipi => ipi_ns, "ipi", "Δipi", Latency,
        "Δipi: latency of a reschedule request (IPI) from its sending to its delivery.";
    Tick => tick_ns, "tick", "Δtck", CpuTime,
        "Δtck: CPU time of one periodic timer tick on one CPU (the quantum boundary of quantum-driven plugins).";
    LockWait => lock_wait_ns, "lock_wait", "lock_wait", CpuTime,
        "lock_wait: time spent waiting for a scheduler lock; already contained in Δsch or Δrel.";
    Request => request_ns, "request", "Δreq", Latency,
        "Δreq: client request latency of G-EDF-MP, from sending a message until the DSP dequeues it.";
    Dsp => dsp_ns, "dsp", "Δdsp", CpuTime,
        "Δdsp: DSP handler overhead of G-EDF-MP, the DSP's processing of one message.";
    MigrationTimer => migration_timer_ns, "migration_timer", "migration_timer", CpuTime,
        "migration_timer: SP-RES, servicing the timer that initiates a subtask migration on the source CPU.";
    SubtaskActivation => subtask_activation_ns, "subtask_activation", "subtask_activation", CpuTime,
        "subtask_activation: SP-RES, the IPI handler that activates the next subtask on the target CPU.";
    BudgetEnforcement => budget_enforcement_ns, "budget_enforcement", "budget_enforcement", CpuTime,
        "budget_enforcement: servicing the timer that enforces a reservation's budget exhaustion.";
    Push => push_ns, "push", "push", CpuTime,
        "push: push/pull global EDF, pushing a job to another CPU's run queue (at a release or a preemption).";
    Pull => pull_ns, "pull", "pull", CpuTime,
        "pull: push/pull global EDF, pulling a job from another CPU's run queue (when a CPU lowers its priority).";
    Steal => steal_ns, "steal", "steal", CpuTime,
        "steal: RTWS, stealing a thread from another core's deque.";
    BudgetTimer => budget_timer_ns, "budget_timer", "Δbt", CpuTime,
        "Δbt: RUN and QPS, the server-budget timer's handler (the servers brought to a budget exhaustion or window boundary, the new selection, reschedule requests).";
    TreeEvents => tree_events_ns, "tree_events", "tree_events", Count,
        "tree_events: RUN, the number of reduction-tree events (release instants, budget exhaustions) one callback applied; a count, inside the budget_timer, schedule and release samples.";
}

/// The terms the simulator charges (docs/simulator.md, "Overhead injection"); it ignores the
/// others.
pub const SIMULATOR_TERMS: [Term; 6] =
    [Term::Release, Term::ReleaseEvent, Term::Schedule, Term::ContextSwitch, Term::Ipi, Term::Tick];

impl Term {
    /// The term named `s`; the error lists the vocabulary.
    pub fn from_name(s: &str) -> Result<Term, ModelError> {
        Term::ALL.iter().copied().find(|t| t.name() == s).ok_or_else(|| {
            ModelError::field("term", format!("unknown overhead term {s:?}; known terms: {}", vocabulary()))
        })
    }
}

/// The term names, comma-separated (for messages and help).
pub fn vocabulary() -> String {
    Term::ALL.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
}

impl Overheads {
    /// True when every term is zero.
    pub fn is_zero(&self) -> bool {
        Term::ALL.iter().all(|&t| self.get(t) == 0)
    }

    /// The terms with a non-zero value.
    pub fn nonzero_terms(&self) -> Vec<Term> {
        Term::ALL.iter().copied().filter(|&t| self.get(t) > 0).collect()
    }

    /// Checks every value against [`MAX_OVERHEAD`]; the error names the key.
    pub fn validate(&self) -> Result<(), ModelError> {
        for &t in Term::ALL {
            let v = self.get(t);
            if v > MAX_OVERHEAD {
                return Err(ModelError::field(
                    format!("overheads.{}", t.constant_key()),
                    format!("must be at most {MAX_OVERHEAD} ns (1 s), got {v}"),
                ));
            }
        }
        Ok(())
    }

    /// A JSON object `{"<term>_ns": value}` of the given terms.
    pub fn to_json_terms(&self, terms: &[Term]) -> Value {
        let mut o = Map::new();
        for &t in terms {
            o.insert(t.constant_key().to_string(), Value::from(self.get(t)));
        }
        Value::Object(o)
    }
}
