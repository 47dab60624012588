//! The backends that execute a mechanism, and the run lifecycle they share:
//!
//! * [`forkjoin`]: fork-join workloads (thread slots, job-level results);
//! * [`engine`]: the plugin engine — pinned workers (and a service thread on a dedicated CPU)
//!   that drive a [`crate::mechanism::Plugin`];
//! * [`kernel_sd`]: the peer — the same workload as Linux `SCHED_DEADLINE` threads;
//! * [`lifecycle`]: time zero, the end, early stops, the effective end and the drain;
//! * [`result`]: what a run measured ([`RunResult`]), computed from its own trace;
//! * [`to_trace`]: the conversion of a run's records to the `rtsched-trace` vocabulary.

pub mod engine;
pub mod forkjoin;
pub mod kernel_sd;
pub mod lifecycle;
pub mod result;
pub mod to_trace;

use crate::config::RunConfig;
use crate::mechanism::registry::Backend;
use crate::mechanism::Mechanism;
use crate::RunError;
use result::RunResult;
use rtsched_model::TaskSet;

/// Runs `ts` under `mech` on real cores with `cfg` (see the crate docs).
pub fn run(ts: &TaskSet, mech: &Mechanism, cfg: &RunConfig) -> Result<RunResult, RunError> {
    mech.validate(ts, cfg)?;
    if !crate::body::Suspensions::effective(&cfg.suspensions, ts).is_empty() && !mech.entry().suspends {
        return Err(RunError::Config(format!(
            "{} does not execute self-suspending jobs, and the task set's jobs suspend ({})",
            mech.name(),
            engine::suspending_mechanisms()
        )));
    }
    match mech.entry().backend {
        Backend::KernelSd if cfg.parallel() => Err(crate::mechanism::registry::sequential_only(
            mech.name(),
            if cfg.dag.is_some() { "DAG" } else { "fork-join" },
        )),
        Backend::KernelSd => kernel_sd::run(ts, mech, cfg),
        Backend::Engine(build) => engine::run(ts, mech, build, cfg),
    }
}
