//! User jobs: real code instead of the synthetic `rtspin` body, with cooperative preemption.
//!
//! A worker runs job bodies on its own thread (no thread per task), so a preempted job must be
//! able to stop and resume later on any CPU. A user job is therefore written as a sequence of
//! *steps*: the worker calls the task's closure with step 0, 1, 2, ... until it returns
//! [`Step::Done`]; between two steps it polls its CPU's reschedule flag, the release timer and
//! the end of the run — the preemption points. A preempted job resumes at its next step, on
//! whichever CPU the mechanism picks. A long step can end early at its own preemption points
//! by checking [`JobCtx::preemption_requested`] and returning [`Step::Continue`].
//!
//! There is no budget enforcement (like LITMUS^RT without budget tracking): a job runs until
//! its closure says it is done, however long that takes; the task's WCET is only the
//! analysis's figure and the nominal cost in the trace. Per-job state belongs to the closure
//! (e.g. behind a lock, keyed by `(task, job)`); the step number is the resume point.
//!
//! ```no_run
//! use rtsched_model::TaskSet;
//! use rtsched_runtime::user::{Step, UserJobs};
//! use rtsched_runtime::{run, Mechanism, RunConfig};
//! use std::sync::Arc;
//! let ts = TaskSet::from_ct(&[(1_000_000, 10_000_000)]).unwrap();
//! let mut cfg = RunConfig::new(vec![0], 200_000_000);
//! // Ten steps of real work per job.
//! cfg.user_jobs = UserJobs::new(vec![Some(Arc::new(|ctx: &rtsched_runtime::user::JobCtx<'_>| {
//!     std::hint::black_box((0..10_000u64).sum::<u64>());
//!     if ctx.step + 1 == 10 { Step::Done } else { Step::Continue }
//! }))]);
//! let r = run(&ts, &Mechanism::named("gsn-edf").unwrap(), &cfg).unwrap();
//! assert_eq!(r.accounting.error, None);
//! ```

use crate::RunError;
use std::fmt;
use std::sync::Arc;

/// What a step tells the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// More steps follow (a preemption point).
    Continue,
    /// The job is complete.
    Done,
}

/// What a step knows about its job.
pub struct JobCtx<'a> {
    /// Task index in the task set.
    pub task: usize,
    /// Job number of the task (0, 1, ...).
    pub job: u32,
    /// This step's number within the job (0 for the first call of a job).
    pub step: u64,
    /// Index of the CPU (in the run's CPU list) executing this step.
    pub cpu: usize,
    poll: &'a dyn Fn() -> bool,
}

impl JobCtx<'_> {
    /// Whether the worker would stop the job at this point (a reschedule request, a due
    /// release this CPU handles, or the end of the run). Returning [`Step::Continue`] now
    /// lets the mechanism act; the job resumes at its next step.
    pub fn preemption_requested(&self) -> bool {
        (self.poll)()
    }
}

/// The body of one task's jobs: called once per step.
pub type UserJob = Arc<dyn Fn(&JobCtx<'_>) -> Step + Send + Sync>;

/// Per task, a user body or `None` for the synthetic body. Empty = all synthetic.
#[derive(Clone, Default)]
pub struct UserJobs(Vec<Option<UserJob>>);

impl UserJobs {
    pub fn new(per_task: Vec<Option<UserJob>>) -> UserJobs {
        UserJobs(per_task)
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(Option::is_none)
    }

    pub(crate) fn validate(&self, n: usize) -> Result<(), RunError> {
        if !self.0.is_empty() && self.0.len() != n {
            return Err(RunError::Config(format!(
                "user_jobs has {} entries for {n} tasks (one per task, None = synthetic body)",
                self.0.len()
            )));
        }
        Ok(())
    }

    pub(crate) fn get(&self, task: usize) -> Option<&UserJob> {
        self.0.get(task).and_then(Option::as_ref)
    }
}

impl fmt::Debug for UserJobs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let user: Vec<usize> = (0..self.0.len()).filter(|&i| self.0[i].is_some()).collect();
        write!(f, "UserJobs(tasks with user bodies: {user:?})")
    }
}

/// Runs steps of `body` from `*step` until the job is done (`true`) or `poll` asks to stop
/// between two steps (`false`); `*step` is left at the next step to run.
pub(crate) fn run_steps(
    body: &UserJob,
    task: usize,
    job: u32,
    cpu: usize,
    step: &mut u64,
    poll: &dyn Fn() -> bool,
) -> bool {
    loop {
        let ctx = JobCtx { task, job, step: *step, cpu, poll };
        let r = body(&ctx);
        *step += 1;
        if r == Step::Done {
            return true;
        }
        if poll() {
            return false;
        }
    }
}
