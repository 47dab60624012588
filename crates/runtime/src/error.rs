//! The runtime's error type, and the parameter error of the mechanism registry.
//!
//! Every fallible public function of the runtime returns [`RunError`], or, where only one kind
//! of failure is possible, that kind's own type ([`ParamError`] for a mechanism parameter,
//! `rtsched_model::ModelError` for invalid input), which converts into it. `Display` is the one
//! line users see; [`RunError::kind`] says which of the four kinds an error is.

use rtsched_model::ModelError;
use thiserror::Error;

/// Why a run could not be started or finished, or why a run's result or one of the runtime's
/// structures failed a check.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RunError {
    /// A bad CPU list or dedicated CPU.
    #[error("bad CPU configuration: {0}")]
    Cpus(String),
    /// Real-time priority could not be set.
    #[error("{0}")]
    Priority(String),
    /// A bad run parameter (duration, partition, ...).
    #[error("bad run configuration: {0}")]
    Config(String),
    /// The kernel refused a `SCHED_DEADLINE` task.
    #[error("{0}")]
    Admission(String),
    /// A worker thread failed (panicked) or the watchdog ended the run.
    #[error("run failed: {0}")]
    Failed(String),
    /// The task set is invalid.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A mechanism parameter has a bad value; the error names the parameter.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// The mechanism's placement (partition) is missing or does not fit.
    #[error("{0}")]
    Placement(String),
    /// A run's trace lost records (a full trace buffer), so it cannot serve as asked.
    #[error("{0}")]
    Trace(String),
    /// A check of the runtime's own structures or bookkeeping failed (a queue that is not well
    /// formed, a mechanism's books that disagree, a virtual-time run that breaks the policy's
    /// invariant): a bug in rtsched, not in the input.
    #[error("{0}")]
    Internal(String),
}

/// The four kinds of [`RunError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Invalid input: the task set or another value handed in.
    Input,
    /// A bad parameter: of the run, of the mechanism, or its placement.
    Parameter,
    /// The machine refused or failed: CPUs, real-time priorities, `SCHED_DEADLINE` admission,
    /// a worker thread that failed, a trace that lost records.
    Platform,
    /// A failed check of the runtime itself (a bug).
    Internal,
}

impl RunError {
    /// Which kind of error this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            RunError::Model(_) => ErrorKind::Input,
            RunError::Config(_) | RunError::Param(_) | RunError::Placement(_) => ErrorKind::Parameter,
            RunError::Cpus(_)
            | RunError::Priority(_)
            | RunError::Admission(_)
            | RunError::Failed(_)
            | RunError::Trace(_) => ErrorKind::Platform,
            RunError::Internal(_) => ErrorKind::Internal,
        }
    }

    /// An input error with the message `reason` (a `ModelError` naming no task or field).
    pub fn input(reason: impl Into<String>) -> RunError {
        RunError::Model(ModelError::new(reason))
    }
}

/// A bad value of a mechanism's parameter: the model's one parameter error
/// ([`rtsched_model::params::ParamError`]), e.g. `gedf-mp: parameter mailbox_size: expected an
/// integer in 2..=65536, got "1"`.
pub use rtsched_model::params::ParamError;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_reads_as_its_message() {
        let p = RunError::from(ParamError::new("priorities", "3 priorities for 2 tasks"));
        assert_eq!(p.to_string(), "parameter priorities: 3 priorities for 2 tasks");
        assert_eq!(p.kind(), ErrorKind::Parameter);
        let i = RunError::input("the run had 2 tasks but the task set has 3");
        assert_eq!(i.to_string(), "the run had 2 tasks but the task set has 3");
        assert_eq!(i.kind(), ErrorKind::Input);
        assert_eq!(RunError::Internal("node 3 of 2 is Busy".into()).kind(), ErrorKind::Internal);
        assert_eq!(RunError::Trace("the trace is incomplete: 4 records dropped".into()).kind(), ErrorKind::Platform);
        assert_eq!(RunError::Placement("pedf needs a partition".into()).to_string(), "pedf needs a partition");
        assert_eq!(RunError::Config("x".into()).to_string(), "bad run configuration: x");
        // A failed check of the runtime's own books is an internal error with the same words.
        let e = RunError::from(Inconsistency::from("spres: task 2 held twice"));
        assert_eq!((e.kind(), e.to_string()), (ErrorKind::Internal, "spres: task 2 held twice".to_string()));
    }
}

/// A failed check of the runtime's own books or structures (a mechanism's accounting, a shared
/// queue read at rest, an at-rest invariant): a bug in rtsched, not in the input. `Display` is
/// the message; it becomes [`RunError::Internal`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct Inconsistency(pub String);

impl From<String> for Inconsistency {
    fn from(s: String) -> Inconsistency {
        Inconsistency(s)
    }
}

impl From<&str> for Inconsistency {
    fn from(s: &str) -> Inconsistency {
        Inconsistency(s.to_string())
    }
}

impl From<Inconsistency> for RunError {
    fn from(e: Inconsistency) -> RunError {
        RunError::Internal(e.0)
    }
}
