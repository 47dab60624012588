//! The runtime's error type.

use thiserror::Error;

/// Why a run could not be started or finished.
#[derive(Debug, Error)]
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
    Model(#[from] rtsched_model::ModelError),
}
