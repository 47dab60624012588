//! The mechanism interface: a table of callbacks in the spirit of LITMUS^RT's
//! `struct sched_plugin` (Brandenburg, "Scheduling and Locking in Multiprocessor Real-Time
//! Operating Systems", PhD thesis, UNC 2011, ch. 3; seed 001 §2 "event handlers": release,
//! schedule, tick).
//!
//! The engine (`backend::engine`) owns the threads, the clocks, the job bodies and the
//! tracer; a [`Plugin`] owns the scheduling state and decides (by driving a policy of
//! `rtsched_policy`). The split follows seed 001 §3 "processor mapping": a plugin keeps
//! *linked* (which job each CPU should run — the decision, changeable by any thread under the
//! plugin's synchronisation) apart from *scheduled* (which job each CPU's worker actually runs
//! — changed only by that worker, inside [`Plugin::schedule`]).
//!
//! **Threads.** Workers `0..m`, one per scheduling CPU, run jobs; with a dedicated CPU
//! (`RunConfig::dedicated_cpu`) a *service thread* with index `m` runs there and never runs a
//! job: it serves releases, timers and notifications (GSN-EDF-DI's release CPU, a dedicated
//! scheduling processor). `ctx.cpu()` is the calling thread's index.
//!
//! **Callbacks** ([`release`](Plugin::release), [`schedule`](Plugin::schedule),
//! [`tick`](Plugin::tick), [`timer`](Plugin::timer), [`notified`](Plugin::notified),
//! [`accounting`](Plugin::accounting)): each runs on the thread named by `ctx.cpu()`, one
//! thread's callbacks never overlap, and each one's precondition is written on its method.
//!
//! **The happens-before contract.**
//! 1. Everything a thread wrote before [`Effects::preempt`] or [`Effects::notify`] of thread `t`
//!    happens-before `t`'s `schedule` answering that request (`ack_resched`) or its
//!    `notified` call: the request word is written with release and consumed with acquire.
//!    A plugin needs no other synchronisation to hand `t` data through memory it publishes
//!    before signalling, provided `t` reads it after taking the request.
//! 2. A job returned by `schedule` on worker `a` must not be returned on another worker `b`
//!    before `a`'s `schedule(Preempted(job) | Completed(job))`, and that call must
//!    happen-before `b`'s `schedule` returning the job (e.g. both under one lock, or a lock
//!    per CPU plus a handshake). The engine saves a preempted job's remaining budget before
//!    `a`'s call and reads it after `b`'s returns; the trace check verifies no job runs twice.
//! 3. `next_release`, `next_timer` and `ticks` are read without a lock, at every poll of a
//!    running job's body and before an idle thread sleeps. A value may be stale: a later due
//!    time only costs a spurious poll, but a thread that sleeps or runs a job re-reads them
//!    only at its polls, so a plugin that makes thread `t`'s next release or timer *earlier*
//!    from another thread must [`notify`](Effects::notify) `t` (or preempt it).
//! 4. [`Effects::preempt`] and [`Effects::notify`] only set request bits and defer the futex wake-up
//!    of a sleeping target until the plugin call returns (outside the plugin's lock and the
//!    traced section): a callback may signal while holding its locks.
//! 5. `accounting` happens after every thread has been joined.
//!
//! **Block / wake** (LITMUS^RT's `task_block` / `task_wake_up`, e.g. `gsnedf_task_block`,
//! which unlinks the job, and `gsnedf_task_wake_up`, which makes it arrive again as a ready
//! job, `gsnedf_job_arrival`). A running job that self-suspends (an execution segment ended
//! before a suspension; a user job waiting) is *blocked* by the worker that ran it: the engine
//! saves its remaining budget, records `JobSuspend`, and calls `schedule(Prev::Blocked(job))`
//! — the block is that call (one call, as LITMUS^RT's `schedule` sees `blocks` and unlinks),
//! and it returns the worker's next job. The job is then pending nowhere (the job book's
//! [`TaskBook::suspend`](crate::queue::release::TaskBook::suspend)) until [`Plugin::wake`]:
//! 6. `wake(job)` is called at most once per block, and only after the block's `schedule`
//!    returned, with that call happening-before it (the engine calls it on the thread where
//!    the wake-up happens — today the worker that blocked the job, when the suspension's timer
//!    or the awaited event is due; a plugin must accept it from any thread, workers, the
//!    service thread or the drain alike, and synchronise as for a release). It makes the job
//!    ready again as LITMUS^RT's wake-up does — the job keeps its release and deadline (no
//!    new job), it arrives, and preemptions follow as after a release. The engine reads the
//!    job's saved budget after a later `schedule` returns it (rule 2).
//! 7. Only a mechanism registered with `suspends` (`registry::Entry::suspends`) is given a
//!    workload whose jobs suspend; the others never see `Prev::Blocked` nor `wake`.
//!
//! How the next mechanisms fit: push/pull (seed 002) keeps one ready queue and lock per CPU
//! and pushes/pulls inside `release`/`schedule`, tracing push/pull counts as its own terms;
//! G-EDF-MP (seed 000 §III) runs its scheduling processor as the service thread (mailboxes
//! served in `notified`, releases as its release domain, `schedule` a per-client handshake);
//! the quantum-driven RTSS'09 plugins (seed 001 §3) link in `tick`; SP-RES arms budget and
//! migration timers.

use crate::config::IdleMode;
pub use crate::queue::release::{Job, TaskParams};
use crate::sync::{CpuSignal, Primitives, SpinGuard, SpinLock};
use crate::tracer::{RecKind, TraceBuffer};

/// What a worker stopped doing before calling [`Plugin::schedule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prev {
    /// It ran nothing.
    Idle,
    /// It stopped running this job before completion (preemption request noticed).
    Preempted(Job),
    /// This job completed.
    Completed(Job),
    /// This job self-suspended (the block of LITMUS^RT's `task_block`): it stopped running
    /// before completion and is not ready until [`Plugin::wake`] (module docs, rules 6–7). Its
    /// remaining budget is already saved. Only on mechanisms registered with `suspends`.
    Blocked(Job),
}

impl Prev {
    /// The job the worker stopped running, if any.
    #[inline]
    pub fn job(self) -> Option<Job> {
        match self {
            Prev::Idle => None,
            Prev::Preempted(j) | Prev::Completed(j) | Prev::Blocked(j) => Some(j),
        }
    }
}

/// Quantum ticks a plugin asks for (seed 001 §2: aligned or staggered quanta).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticks {
    /// The quantum `Q` (ns, > 0). Worker `c` ticks at `t0 + offset(c) + k·Q`.
    pub quantum_ns: u64,
    /// Staggered: `offset(c) = c·Q/m`; aligned: 0 on every worker.
    pub staggered: bool,
}

impl Ticks {
    /// The first tick of worker `c` of `m` (relative to time zero).
    pub fn offset(&self, c: usize, m: usize) -> u64 {
        if self.staggered && m > 0 {
            (self.quantum_ns as u128 * c as u128 / m as u128) as u64
        } else {
            0
        }
    }
}

/// Everything a mechanism does outside its own state, as one interface: take a lock (traced
/// or not), ask a worker to reschedule, notify a thread, answer this worker's requests, and
/// record (releases, its own overhead terms). The engine's [`Ctx`] implements it on real
/// threads; the virtual-time runs (`push_pull::vtime`, the cost replay `push_pull::replay`)
/// and the test doubles implement it without threads, so that a mechanism's core written
/// against it (`push_pull::ops::Core`, `design_space::fine::Core`) runs unchanged under each.
///
/// The recording methods default to nothing (a driver that does not trace ignores them);
/// locking and the requests, which change what happens next, have no default.
pub trait Effects {
    /// Takes `l`: traced on the calling thread's buffer (the engine), or plainly.
    fn lock<'l, T, B: Primitives>(&mut self, l: &'l SpinLock<T, B>) -> SpinGuard<'l, T, B>;
    /// Asks worker `target` to call `schedule` soon (rule 1 of the contract).
    fn preempt(&mut self, target: usize);
    /// Notifies thread `target`: it calls [`Plugin::notified`] at its next poll point.
    fn notify(&mut self, target: usize);
    /// Answers this worker's pending reschedule requests; called by `schedule` under the lock
    /// that serialises requests to this CPU.
    fn ack_resched(&mut self) {}
    /// Records a job's release.
    fn record_release(&mut self, _job: &Job) {}
    /// A stamp to send along for [`term_since`](Effects::term_since) (0 where nothing is
    /// traced).
    fn stamp(&self) -> u64 {
        0
    }
    /// Starts a span of the mechanism's own term `term` (its index in the entry's `terms`).
    fn term_start(&mut self, _term: u32) {}
    /// Ends the span of `term` started on this thread.
    fn term_end(&mut self, _term: u32) {}
    /// A sample of `term`: the time from `stamp` to now.
    fn term_since(&mut self, _term: u32, _stamp: u64) {}
    /// A sample of `term` with the value `value`.
    fn term_value(&mut self, _term: u32, _value: u64) {}
}

/// Per-call context: which thread (index into the run's CPU list; the service thread on the
/// dedicated CPU has index `m`), its trace buffer, and every thread's request word — the
/// effects a plugin has, each through a method, so that every request is sent, traced and
/// acknowledged the one way.
pub struct Ctx<'a> {
    cpu: usize,
    trace: &'a mut TraceBuffer,
    signals: &'a [CpuSignal],
    /// Sleeping threads sent a request by this call and not yet woken (bit = thread index).
    wakes: u128,
}

impl Drop for Ctx<'_> {
    fn drop(&mut self) {
        self.flush_wakes();
    }
}

impl<'a> Ctx<'a> {
    pub fn new(cpu: usize, trace: &'a mut TraceBuffer, signals: &'a [CpuSignal]) -> Ctx<'a> {
        Ctx { cpu, trace, signals, wakes: 0 }
    }

    /// The calling thread's index (workers `0..m`, the service thread `m`).
    #[inline(always)]
    pub fn cpu(&self) -> usize {
        self.cpu
    }

    /// The calling thread's trace buffer (for the traced locks and the mechanism's own records).
    #[inline(always)]
    pub fn trace(&mut self) -> &mut TraceBuffer {
        self.trace
    }

    /// Wakes the sleeping targets of the requests sent so far. The engine calls it after the
    /// plugin call returns, i.e. outside the plugin's lock and outside the traced Δsch / Δrel
    /// section: waking a sleeping worker is a futex system call, the user-space price of an
    /// IPI, and it belongs to Δipi (send → noticed), not to the lock hold time.
    pub fn flush_wakes(&mut self) {
        while self.wakes != 0 {
            let t = self.wakes.trailing_zeros() as usize;
            self.wakes &= self.wakes - 1;
            self.signals[t].kick();
        }
    }

    fn wake_later(&mut self, target: usize) {
        if target < 128 {
            self.wakes |= 1 << target;
        } else {
            self.signals[target].kick();
        }
    }
}

/// The engine's effects: requests through the threads' request words (a remote preemption is
/// a traced "IPI"), traced locks, and records on the calling thread's trace buffer.
impl Effects for Ctx<'_> {
    #[inline(always)]
    fn lock<'l, T, B: Primitives>(&mut self, l: &'l SpinLock<T, B>) -> SpinGuard<'l, T, B> {
        l.lock(self.trace)
    }

    /// Asks worker `target` to call `schedule` soon: locally a flag, remotely a traced "IPI".
    fn preempt(&mut self, target: usize) {
        if target == self.cpu {
            self.signals[target].set_local();
        } else {
            let stamp = crate::clock::counter();
            self.trace.record_at(stamp, RecKind::IpiSent, target as u32, 0, 0);
            if self.signals[target].send_deferred(stamp) {
                self.wake_later(target);
            }
        }
    }

    /// Notifies thread `target` (any worker or the service thread): it calls
    /// [`Plugin::notified`] at its next poll point, after what this thread wrote before.
    fn notify(&mut self, target: usize) {
        if self.signals[target].notify_deferred() && target != self.cpu {
            self.wake_later(target);
        }
    }

    /// Clears this CPU's pending reschedule request (recording `IpiNoticed` for a remote
    /// one). `schedule` calls it while holding the lock under which requests to this CPU are
    /// sent: every request made before is answered by the decision being taken, so the
    /// worker is not sent back to reschedule for a decision it already follows.
    fn ack_resched(&mut self) {
        if let Some(stamp) = self.signals[self.cpu].take() {
            if stamp != 0 {
                self.trace.record(RecKind::IpiNoticed, self.cpu as u32, 0, stamp);
            }
        }
    }

    /// Records a job's release (`arg` = its due time).
    fn record_release(&mut self, j: &Job) {
        self.trace.record(RecKind::JobRelease, j.task(), j.seq(), j.release);
    }

    /// The trace counter now: a stamp to send along (e.g. in a message) for
    /// [`term_since`](Self::term_since).
    #[inline(always)]
    fn stamp(&self) -> u64 {
        crate::clock::counter()
    }

    /// Starts a span of the mechanism's own overhead term `term` (its index in the registry
    /// entry's `terms`).
    #[inline(always)]
    fn term_start(&mut self, term: u32) {
        self.trace.record(RecKind::TermStart, term, 0, 0);
    }

    /// Ends the span of `term` started on this thread.
    #[inline(always)]
    fn term_end(&mut self, term: u32) {
        self.trace.record(RecKind::TermEnd, term, 0, 0);
    }

    /// A sample of `term`: the time from `stamp` ([`stamp`](Self::stamp), taken on any
    /// thread) to now — e.g. a request's latency from its sender to its handling here.
    #[inline(always)]
    fn term_since(&mut self, term: u32, stamp: u64) {
        self.trace.record(RecKind::TermSince, term, 0, stamp);
    }

    /// A sample of `term` with the value `value` (e.g. a count of pushed jobs).
    #[inline(always)]
    fn term_value(&mut self, term: u32, value: u64) {
        self.trace.record(RecKind::TermValue, term, 0, value);
    }
}

/// End-of-run accounting from the plugin's own state (the trace is checked against it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accounting {
    /// Jobs released per task.
    pub released: Vec<u32>,
    /// Jobs completed per task.
    pub completed: Vec<u32>,
    /// Result of the plugin's consistency check: every released, incomplete job's head job
    /// (the task's oldest) is findable in the plugin's structures (ready, linked or scheduled),
    /// and the policy's invariant holds at rest.
    pub consistent: Result<(), crate::error::Inconsistency>,
}

/// A scheduler mechanism (see the module docs for each callback's precondition and the
/// happens-before contract).
pub trait Plugin: Send + Sync {
    /// The mechanism's registered name (`Setup::name`, the registry's: one source).
    fn name(&self) -> &'static str;
    /// Number of release domains (release queues with their own "timer").
    fn release_domains(&self) -> usize;
    /// The release domain thread `thread` polls, if any (workers `0..m`, the service thread
    /// `m`). Each domain must be polled by some thread, or its jobs are released only by the
    /// end-of-run drain.
    fn release_domain(&self, thread: usize) -> Option<usize>;
    /// Earliest due release of `domain` (`u64::MAX` if none before the end); lock-free.
    fn next_release(&self, domain: usize) -> u64;
    /// Called before `release` by a poller that saw `next_release(domain) == due`; returns
    /// false if another thread already took this release (the default suits a single poller).
    fn try_claim_release(&self, _domain: usize, _due: u64) -> bool {
        true
    }
    /// The release "timer interrupt" of `domain`. Precondition: `now >= next_release(domain)`,
    /// and the calling thread polls `domain` ([`release_domain`](Plugin::release_domain)) and
    /// won [`try_claim_release`](Plugin::try_claim_release) for this due time (the end-of-run
    /// drain calls it after every thread stopped). Releases every job due by `now`, records
    /// `JobRelease` for each ([`Effects::record_release`]), requests preemptions. Traced by the
    /// engine as Δrel (and Δev from the due time).
    fn release(&self, ctx: &mut Ctx<'_>, domain: usize, now: u64);
    /// The scheduler of worker `ctx.cpu()`. Precondition: the calling thread is a worker
    /// (`< m`), it has stopped what `prev` names — nothing, a job it was preempted from (its
    /// remaining budget already saved by the engine), a job that completed (completion is
    /// handled here, as LITMUS^RT's `schedule` calls `job_completion`), or a job that
    /// self-suspended (`Blocked`: the plugin unlinks it and holds it nowhere until
    /// [`wake`](Plugin::wake); its budget is saved) — and it runs nothing until this returns. Returns the job to run next (it becomes `scheduled`; rule 2 of the
    /// module docs' contract). Calls [`Effects::ack_resched`] last, under the lock that serialises
    /// reschedule requests to this CPU. `now` is the monotonic time (ns) at which the worker
    /// entered the scheduler, read by the engine just before the call (a virtual-time driver
    /// passes its own clock), as `release`, `tick`, `timer` and `notified` get theirs: a plugin
    /// that charges budgets or arms timers charges up to this instant (SP-RES). Traced as Δsch.
    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev, now: u64) -> Option<Job>;
    /// The quantum ticks this plugin wants on its workers (`None`: event-driven, no tick).
    /// Read once at the start of the run.
    fn ticks(&self) -> Option<Ticks> {
        None
    }
    /// A quantum boundary on worker `ctx.cpu()`, due at `due` (monotonic ns). Precondition:
    /// [`ticks`](Plugin::ticks) asked for ticks, `now >= due`, and `due` is this worker's next
    /// tick: every `Q`, aligned on all workers or staggered by `c·Q/m` on worker `c` (seed 001
    /// §2, S2). The running job (if any) keeps running unless the plugin preempts it. Traced as
    /// Δtck.
    fn tick(&self, _ctx: &mut Ctx<'_>, _due: u64, _now: u64) {}
    /// Whether this plugin arms timers ([`next_timer`](Plugin::next_timer)); read once at the
    /// start of the run, so that plugins without timers cost the poll loop nothing.
    fn uses_timers(&self) -> bool {
        false
    }
    /// The earliest armed timer of thread `thread` (`u64::MAX`: none); lock-free.
    fn next_timer(&self, _thread: usize) -> u64 {
        u64::MAX
    }
    /// Thread `ctx.cpu()`'s timer fired (budget enforcement, migration timers, ...).
    /// Precondition: [`uses_timers`](Plugin::uses_timers) is true and `now >=
    /// next_timer(ctx.cpu())`; the plugin disarms or re-arms it. Traced as `timer`.
    fn timer(&self, _ctx: &mut Ctx<'_>, _now: u64) {}
    /// Thread `ctx.cpu()` took a notification sent with [`Effects::notify`] (a client wrote a
    /// mailbox; a timer moved). Precondition: a notification of this thread was pending and is
    /// now consumed (everything its sender wrote before is visible: contract rule 1). On a
    /// worker it does not deschedule the running job.
    fn notified(&self, _ctx: &mut Ctx<'_>, _now: u64) {}
    /// How the service thread waits for its next event: `None` (the default) as the run's
    /// idle mode (`RunConfig::idle`), `Some(mode)` the plugin's own choice — a dedicated
    /// scheduling processor that runs no real-time job may spin on the clock instead of
    /// sleeping on a timer (G-EDF-MP's `dsp` parameter). Read once at the start of the run.
    fn service_idle(&self) -> Option<IdleMode> {
        None
    }
    /// With a spinning service thread: how long before its next due event it starts to spin
    /// (ns); until then it sleeps on its request word (notifications wake it). `u64::MAX` (the
    /// default) spins all the time. A SCHED_FIFO thread that never sleeps is throttled by
    /// Linux (RT tasks get `sched_rt_runtime_us` = 95% of each second, or the fair server's
    /// share on Linux ≥ 6.12), losing up to 50 ms at a time. Read once at the start of the run.
    fn service_spin_window_ns(&self) -> u64 {
        u64::MAX
    }
    /// The plugin's books at the end. Precondition: every thread has been joined (contract
    /// rule 5); the engine calls it before and after the end-of-run drain's releases.
    fn accounting(&self) -> Accounting;
    /// Job `job`, blocked by an earlier `schedule(Prev::Blocked(job))`, wakes up on thread
    /// `ctx.cpu()` (module docs, rules 6–7): the plugin makes it ready again — it keeps its
    /// release and deadline — and requests the preemptions that follow, as `release` does for
    /// a new job. Precondition: the plugin's registry entry has `suspends`; the block's
    /// `schedule` returned and happens-before this call; the job has not been woken since
    /// (one wake per block); any thread may call it. Traced by the engine as the `resume`
    /// record before the call. The default refuses: a mechanism without `suspends` is never
    /// given a suspending workload (the request is refused at prepare time), so it is never
    /// called.
    fn wake(&self, _ctx: &mut Ctx<'_>, job: Job, _now: u64) {
        panic!("{}: wake({job:?}) on a mechanism registered without `suspends`", self.name());
    }
    /// Whether a thread of a parallel (fork-join or DAG) job may self-suspend under this
    /// plugin (a parallel user job's step that suspends). Read once at the start of a parallel
    /// run; where false, such a suspension ends the run with an error naming the task, and the
    /// plugin never sees a parallel thread blocked. Sequential jobs suspend on every plugin
    /// registered with `suspends`.
    fn suspends_parallel(&self) -> bool {
        true
    }
}
