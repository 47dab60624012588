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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// More steps follow (a preemption point).
    Continue,
    /// The job is complete.
    Done,
    /// The job self-suspends for this many ns (`suspend_for(d)`), then resumes at its next
    /// step: its CPU is free meanwhile, and a timer of the worker that ran it wakes it. Only
    /// under a mechanism registered with `suspends`; elsewhere the run fails naming the task.
    Suspend(u64),
    /// The job self-suspends until `event` is signalled (by any thread, before or after this
    /// step), then resumes at its next step. As [`Step::Suspend`], only where `suspends`.
    Wait(Event),
}

/// An event a user job can wait on ([`Step::Wait`]) and any thread can [`signal`](Event::signal):
/// a binary semaphore — a signal made before the wait is kept (several count once), and a
/// wait consumes it. The worker that suspended the waiting job registers itself on the event
/// while the job waits; a signal sets the event, then wakes that worker through its request
/// word (`CpuSignal::event`, the futex the engine's idle wait sleeps on), so an idle worker
/// wakes the job at once and a running one at its body's next poll point.
#[derive(Clone, Default)]
pub struct Event(Arc<EventInner>);

#[derive(Default)]
struct EventInner {
    set: std::sync::atomic::AtomicBool,
    /// The workers whose suspended jobs wait on this event: the run's request words and the
    /// worker's index in them.
    waiters: std::sync::Mutex<Vec<(Arc<[crate::sync::CpuSignal]>, usize)>>,
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event").field("set", &self.is_set()).finish()
    }
}

impl Event {
    pub fn new() -> Event {
        Event::default()
    }

    /// Signals the event (from any thread): what this thread wrote before happens-before the
    /// waiting job's next step. The waiting job's worker, if one is registered, is woken.
    pub fn signal(&self) {
        self.0.set.store(true, std::sync::atomic::Ordering::Release);
        // A worker that registers after this lock sees the signal (the lock orders the store
        // before its check); one registered before is woken here.
        for (sigs, i) in self.waiters().iter() {
            sigs[*i].event();
        }
    }

    fn waiters(&self) -> std::sync::MutexGuard<'_, Vec<(Arc<[crate::sync::CpuSignal]>, usize)>> {
        self.0.waiters.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Worker `idx` of the run whose request words are `sigs` suspended a job waiting on this
    /// event: a signal wakes it ([`crate::sync::CpuSignal::event`]).
    pub(crate) fn register(&self, sigs: &Arc<[crate::sync::CpuSignal]>, idx: usize) {
        self.waiters().push((sigs.clone(), idx));
    }

    /// Undoes one [`register`](Self::register) of worker `idx` of `sigs` (its job woke, or the
    /// run ended).
    pub(crate) fn unregister(&self, sigs: &Arc<[crate::sync::CpuSignal]>, idx: usize) {
        let mut w = self.waiters();
        if let Some(k) = w.iter().position(|(s, i)| Arc::ptr_eq(s, sigs) && *i == idx) {
            w.swap_remove(k);
        }
    }

    /// Whether a signal is pending (not consumed).
    pub(crate) fn is_set(&self) -> bool {
        self.0.set.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Consumes a pending signal: whether there was one.
    pub(crate) fn take(&self) -> bool {
        self.0.set.load(std::sync::atomic::Ordering::Relaxed)
            && self.0.set.swap(false, std::sync::atomic::Ordering::AcqRel)
    }
}

impl PartialEq for Event {
    fn eq(&self, other: &Event) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for Event {}

/// How [`run_steps`] stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ran {
    /// The job completed.
    Done,
    /// The poll asked to stop between two steps.
    Stopped,
    /// The job self-suspends for this many ns.
    Suspend(u64),
    /// The job waits on the event.
    Wait(Event),
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

/// Runs steps of `body` from `*step` until the job is done, suspends, or `poll` asks to stop
/// between two steps; `*step` is left at the next step to run.
pub(crate) fn run_steps(
    body: &UserJob,
    task: usize,
    job: u32,
    cpu: usize,
    step: &mut u64,
    poll: &dyn Fn() -> bool,
) -> Ran {
    loop {
        let ctx = JobCtx { task, job, step: *step, cpu, poll };
        let r = body(&ctx);
        *step += 1;
        match r {
            Step::Done => return Ran::Done,
            Step::Suspend(d) => return Ran::Suspend(d),
            Step::Wait(e) => return Ran::Wait(e),
            Step::Continue => {}
        }
        if poll() {
            return Ran::Stopped;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::CpuSignal;

    /// A signal reaches the registered worker's request word (the futex its idle wait sleeps
    /// on), once per signal, and only while it is registered; the signal itself is kept for
    /// the wait whether or not a worker is registered.
    #[test]
    fn a_signal_wakes_the_registered_worker_through_its_request_word() {
        let sigs: Arc<[CpuSignal]> = (0..2).map(|_| CpuSignal::new()).collect::<Vec<_>>().into();
        let e = Event::new();
        e.signal();
        assert!(!sigs[0].is_set() && !sigs[1].is_set(), "nobody registered: no request");
        assert!(e.take() && !e.take(), "the signal is kept once");
        e.register(&sigs, 1);
        e.signal();
        assert!(!sigs[0].is_set(), "only the waiting worker");
        assert!(sigs[1].take_event() && !sigs[1].take_event(), "one event bit per signal");
        assert!(!sigs[1].resched_pending() && !sigs[1].take_notify(), "neither a reschedule nor a notification");
        assert!(e.take());
        e.unregister(&sigs, 1);
        e.signal();
        assert!(!sigs[1].is_set(), "unregistered: no request");
        // A worker asleep on its request word is woken by the signal (the sleep's timeout is
        // far beyond the test's: a lost wake-up would hang it).
        e.take();
        e.register(&sigs, 0);
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                while !e.is_set() {
                    sigs[0].sleep(3_600_000_000_000);
                }
            });
            e.signal();
            h.join().unwrap();
        });
        assert!(sigs[0].take_event());
    }
}
