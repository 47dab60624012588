//! What every run is configured with, whatever its mechanism: [`RunConfig`]. At the bottom of
//! the crate: it depends only on the platform's job-body types.

use crate::body::ExecTime;
use crate::RunError;
use rtsched_model::TaskSet;
use serde::{Deserialize, Serialize};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The longest run accepted (one hour): a run is never unbounded.
pub const MAX_DURATION_NS: u64 = 3_600_000_000_000;

/// The fewest trace records a job that runs writes (its release, start and completion): a run
/// whose jobs need more than its trace buffers hold is refused ([`RunConfig::validate_common`]).
pub const MIN_RECORDS_PER_JOB: u64 = 3;

/// What an idle worker does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdleMode {
    /// Sleep on the CPU's futex until a request, the next due release or the end.
    Sleep,
    /// Busy-poll (lowest latency; burns the core).
    Spin,
}

/// Run parameters.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Scheduling CPUs (OS CPU numbers); worker `i` is pinned to `cpus[i]`.
    pub cpus: Vec<usize>,
    /// Jobs are released in `[0, duration)`; every thread stops at `duration`.
    pub duration_ns: u64,
    /// `Some(p)`: run every thread at SCHED_FIFO priority `p` (1..=98; the watchdog one
    /// higher); `None`: normal priority.
    pub rt_priority: Option<i32>,
    pub idle: IdleMode,
    /// The dedicated CPU of a mechanism that has one (its service thread runs there).
    pub dedicated_cpu: Option<usize>,
    /// Accept more threads than cores (timings would be meaningless).
    pub force: bool,
    pub exec: ExecTime,
    /// Bytes of working set each task dirties while it runs (0 = none).
    pub wss_bytes: usize,
    /// Seed of the execution-time draws.
    pub seed: u64,
    /// Trace records per CPU buffer.
    pub trace_capacity: usize,
    /// Delay from the call to time zero (threads start, pin and wait in it).
    pub start_delay_ns: u64,
    /// Real code per task instead of the synthetic body (see [`crate::user`]).
    pub user_jobs: crate::user::UserJobs,
    /// Set it (from any thread) to end the run early: it is polled every 5 ms, every thread
    /// then stops within milliseconds (sleepers are woken), and the run returns what it
    /// measured, marked `interrupted`, with `duration_ns` = the time actually run.
    pub stop: Option<Arc<AtomicBool>>,
    /// The fork-join structure of the workload (RTWS paper, §III), set by
    /// [`crate::run_forkjoin`]: the run's task set then has one task per thread *slot* (task
    /// `i`, region `r`, thread `k`, in that order), and only a mechanism whose plugin executes
    /// fork-join jobs ([`crate::mechanism::Plugin::forkjoin`]) accepts it.
    pub forkjoin: Option<Arc<rtsched_model::forkjoin::ForkJoinSet>>,
    /// The DAG structure of the workload (Baruah et al., RTSS 2012), set by
    /// [`crate::run_dag`]: the run's task set then has one task per node (task `i`, node `k`,
    /// in that order), and only a mechanism whose plugin executes parallel jobs
    /// ([`crate::mechanism::Plugin::forkjoin`]) accepts it. At most one of `forkjoin` and
    /// `dag` is set.
    pub dag: Option<Arc<rtsched_model::dag::DagSet>>,
    /// Self-suspending synthetic jobs: per task its execution and suspension segments
    /// ([`crate::body::Suspensions`]; empty: none). Only a mechanism registered with
    /// `suspends` runs them.
    pub suspensions: crate::body::Suspensions,
}

impl RunConfig {
    /// Whether the run executes parallel jobs (a fork-join or a DAG workload).
    pub fn parallel(&self) -> bool {
        self.forkjoin.is_some() || self.dag.is_some()
    }

    pub fn new(cpus: Vec<usize>, duration_ns: u64) -> RunConfig {
        RunConfig {
            cpus,
            duration_ns,
            rt_priority: None,
            idle: IdleMode::Sleep,
            dedicated_cpu: None,
            force: false,
            exec: ExecTime::Wcet,
            wss_bytes: 0,
            seed: 0,
            trace_capacity: 1 << 18,
            start_delay_ns: 100_000_000,
            user_jobs: Default::default(),
            stop: None,
            forkjoin: None,
            dag: None,
            suspensions: Default::default(),
        }
    }

    /// The checks that do not depend on the mechanism: duration, task set, execution-time
    /// model, user jobs, priority.
    pub(crate) fn validate_common(&self, ts: &TaskSet) -> Result<(), RunError> {
        if self.duration_ns == 0 || self.duration_ns > MAX_DURATION_NS {
            return Err(RunError::Config(format!("duration must be in 1 ns ..= 1 h, got {} ns", self.duration_ns)));
        }
        if ts.is_empty() {
            return Err(RunError::Config("the task set is empty".into()));
        }
        self.exec.validate()?;
        self.user_jobs.validate(ts.len())?;
        self.suspensions.validate(ts)?;
        self.check_trace_room(ts)?;
        if let Some(p) = self.rt_priority {
            if !(1..=98).contains(&p) {
                return Err(RunError::Priority(format!(
                    "rt_priority must be in 1..=98 (the watchdog runs one above), got {p}"
                )));
            }
        }
        Ok(())
    }

    /// The run's size bound: the jobs released in `[0, duration)` (`Σ ceil(duration / T_i)`,
    /// every task released at 0) times [`MIN_RECORDS_PER_JOB`] must fit the trace buffers
    /// (`trace_capacity` records per scheduling CPU). Past it the buffers would fill early and
    /// the run's results would cover only a prefix of it (100,000 tasks for 1 s on 2 CPUs
    /// dropped 1.9 M records and summed up to "jobs 0"). A run below the bound may still drop
    /// records (mechanisms record more per job); its summary then says so.
    fn check_trace_room(&self, ts: &TaskSet) -> Result<(), RunError> {
        let jobs: u128 = ts.iter().map(|t| self.duration_ns.div_ceil(t.period.max(1)) as u128).sum();
        let m = self.cpus.len().max(1) as u128;
        let room = self.trace_capacity as u128 * m / MIN_RECORDS_PER_JOB as u128;
        if jobs > room {
            return Err(RunError::Config(format!(
                "{} tasks would release {jobs} jobs in {}, more than the run's trace can hold: about {room} jobs \
                 ({} records per CPU on {m} CPU{}, at least {MIN_RECORDS_PER_JOB} per job); the rest of the run would \
                 not be recorded. Run fewer tasks, longer periods or a shorter duration",
                ts.len(),
                rtsched_model::time::format_time(self.duration_ns),
                self.trace_capacity,
                if m == 1 { "" } else { "s" },
            )));
        }
        Ok(())
    }
}
