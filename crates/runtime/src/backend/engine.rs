//! The plugin engine: builds a mechanism's plugin, starts one pinned worker per CPU (plus a
//! service thread on the dedicated CPU, if any, plus a watchdog), releases the task set
//! synchronously at a common time zero (seed 000 App. A), runs for the configured duration,
//! and turns the per-thread traces into a [`RunResult`]. The callbacks it makes and their
//! happens-before contract: `mechanism::plugin`.
//!
//! Worker loop (one per CPU; `ctx.cpu()` = index in the CPU list):
//! 1. the events due on this CPU, each traced: its release domain's next release (the
//!    "timer interrupt": Δrel, with Δev = handler start − due time), its quantum tick (Δtck;
//!    aligned or staggered, when the plugin asks for ticks), its plugin timer (`timer`), and a
//!    notification (`notified`);
//! 2. consume a reschedule request (traced as `IpiNoticed` with the sender's stamp: Δipi);
//! 3. call the plugin's `schedule` (Δsch, lock waits inside);
//! 4. dispatch (Δcxs: load the job's saved budget) and run its body, which polls the CPU's
//!    request word, the release timer, the tick, the plugin timer and the end of the run
//!    between chunks of work; events that do not reschedule let the body continue; a
//!    reschedule request stops it (its remaining budget is saved) and the loop goes back to 1.
//!    Idle workers sleep on their futex (with a timeout at the next due event or the end) or
//!    spin, as configured (`RunConfig::idle`, `--idle`). A spinning idle worker polls its
//!    request word, so a request (a link published by G-EDF-MP's scheduling processor, a
//!    remote preemption) is taken without a futex wake-up: the sender sees it awake and makes
//!    no wake-up call (`CpuSignal::send_deferred`). Its spin ends at the run's end, an early
//!    stop (the end moves) or the watchdog's abort, as the spinning service thread's does.
//!
//! Service thread (index `m`, on the dedicated CPU; never runs a job): the same events without
//! `schedule` — its release domain, its plugin timer and its notifications — then it sleeps
//! on its futex until the next due event, a notification or the end (or spins).
//!
//! At the end of the run every thread stops where it is; a job that is running or waiting is
//! *pending*, and `released = completed + pending` is checked per task against the
//! plugin's own accounting.
//!
//! Early stops, the effective end and the drain: `backend::lifecycle`.

use super::lifecycle::{missing_releases, Lifecycle, DRAIN_CPU};
use super::result::{RunInfo, RunResult};
use crate::body::{self, Stop};
use crate::clock::{self, ClockPair, TscCalibration};
use crate::config::{IdleMode, RunConfig};
use crate::interference::{self, RunQueueProbe};
use crate::mechanism::registry::{Builder, Setup};
use crate::mechanism::{Ctx, Job, Mechanism, Plugin, Prev, TaskParams};
use crate::platform;
use crate::sync::CpuSignal;
use crate::tracer::{RecKind, TraceBuffer};
use crate::user::Event;
use crate::RunError;
use rtsched_model::TaskSet;
use rtsched_trace::stats::INTERFERENCE_GAP_NS;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::Barrier;

/// Per-task execution state, written by the worker that runs the task's current job.
/// Ordering across CPUs comes from the plugin's synchronisation (the saved budget is
/// stored before the worker enters `schedule`, and read after another worker's `schedule`
/// returned the job); Release/Acquire make it explicit.
struct TaskExec {
    seq: AtomicU32,
    remaining: AtomicU64,
    /// The current job's cost (ns) and the suspensions it has taken (synthetic body).
    cost: AtomicU64,
    taken: AtomicU32,
    /// A user job's next step (its resume point).
    step: AtomicU64,
    wss: Vec<std::sync::atomic::AtomicU64>,
}

struct Shared<'a> {
    plugin: &'a dyn Plugin,
    /// The mechanism executes self-suspending jobs (its entry's `suspends`).
    suspends: bool,
    /// A parallel run whose plugin does not take suspending threads
    /// (`Plugin::suspends_parallel`): a suspension ends the run with an error.
    parallel_refuses: bool,
    /// The synthetic jobs' suspension segments (`RunConfig::suspensions`, else the task set's).
    susp: crate::body::Suspensions,
    name: &'static str,
    cfg: &'a RunConfig,
    /// Every thread's request word (shared with the user `Event`s its workers' suspended jobs
    /// wait on: a signal wakes the worker through it).
    signals: Arc<[CpuSignal]>,
    exec: Vec<TaskExec>,
    wcet: Vec<u64>,
    life: &'a Lifecycle,
    abort: AtomicBool,
    /// How late the threads were ready (ns past time zero; 0 = in time): see [`start_gate`].
    late_by: AtomicU64,
    tids: Vec<AtomicI32>,
    setup_error: std::sync::Mutex<Option<RunError>>,
}

impl Shared<'_> {
    fn fail(&self, e: RunError) {
        self.abort.store(true, Ordering::SeqCst);
        let mut g = self.setup_error.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_none() {
            *g = Some(e);
        }
    }

    #[inline(always)]
    fn end(&self) -> u64 {
        self.life.end()
    }

    fn stopped(&self, now: u64) -> bool {
        now >= self.end() || self.abort.load(Ordering::Relaxed)
    }

    /// Runs the release handler of `domain` if it is due and this CPU wins it.
    fn maybe_release(&self, ctx: &mut Ctx<'_>, domain: usize, now: u64) {
        let due = self.plugin.next_release(domain);
        if due <= now && self.plugin.try_claim_release(domain, due) {
            ctx.trace().record(RecKind::ReleaseStart, domain as u32, 0, due);
            self.plugin.release(ctx, domain, now);
            ctx.trace().record(RecKind::ReleaseEnd, domain as u32, 0, 0);
            ctx.flush_wakes();
        }
    }

    /// Runs the plugin timer of thread `ctx.cpu()` if it is due.
    fn maybe_timer(&self, ctx: &mut Ctx<'_>, now: u64) {
        let due = self.plugin.next_timer(ctx.cpu());
        if due <= now {
            ctx.trace().record(RecKind::TimerStart, 0, 0, due);
            self.plugin.timer(ctx, now);
            ctx.trace().record(RecKind::TimerEnd, 0, 0, 0);
            ctx.flush_wakes();
        }
    }

    /// Runs the tick of worker `ctx.cpu()` if it is due and advances `next` to the first tick
    /// boundary after now (a tick handled late counts once).
    fn maybe_tick(&self, ctx: &mut Ctx<'_>, next: &mut u64, quantum: u64, now: u64) {
        if *next <= now {
            let due = *next;
            ctx.trace().record(RecKind::TickStart, 0, 0, due);
            self.plugin.tick(ctx, due, now);
            ctx.trace().record(RecKind::TickEnd, 0, 0, 0);
            ctx.flush_wakes();
            *next = due + quantum * ((now - due) / quantum + 1);
        }
    }

    /// Delivers a pending notification to thread `ctx.cpu()`.
    fn maybe_notified(&self, ctx: &mut Ctx<'_>, sig: &CpuSignal, now: u64) {
        if sig.take_notify() {
            self.plugin.notified(ctx, now);
            ctx.flush_wakes();
        }
    }

    /// The thread's events due by `now` (release, tick, timer, notification), in that order.
    #[inline]
    fn events(&self, ctx: &mut Ctx<'_>, ev: &mut Events, sig: &CpuSignal, now: u64) {
        if let Some(d) = ev.domain {
            self.maybe_release(ctx, d, now);
        }
        if let Some(q) = ev.quantum {
            self.maybe_tick(ctx, &mut ev.next_tick, q, now);
        }
        if ev.timers {
            self.maybe_timer(ctx, now);
        }
        self.maybe_notified(ctx, sig, now);
    }

    /// The earliest time thread `idx` has something due (release, tick, timer) or the end.
    fn next_due(&self, idx: usize, ev: &Events) -> u64 {
        let mut due = ev.domain.map_or(u64::MAX, |d| self.plugin.next_release(d)).min(ev.next_tick);
        if ev.timers {
            due = due.min(self.plugin.next_timer(idx));
        }
        due.min(self.end())
    }
}

/// A job this worker suspended, until its wake-up: a time (`until`) or an event.
struct Sleeper {
    job: Job,
    until: u64,
    event: Option<Event>,
}

/// The jobs a worker suspended: it is their wake-up "timer" (contract rule 6: the wake runs
/// on this thread, after the block's `schedule` returned here). Worker-local, no lock.
#[derive(Default)]
struct Sleepers {
    list: Vec<Sleeper>,
    /// The earliest timed wake-up (`u64::MAX`: none).
    next: u64,
    /// Some sleeper waits on an event.
    events: bool,
}

impl Sleepers {
    fn new() -> Sleepers {
        Sleepers { list: Vec::new(), next: u64::MAX, events: false }
    }

    fn push(&mut self, s: Sleeper) {
        self.next = self.next.min(s.until);
        self.events |= s.event.is_some();
        self.list.push(s);
    }

    /// Suspends `s` on worker `idx` of the run whose request words are `sigs`: an event it
    /// waits on is told to wake this worker when signalled.
    fn suspend(&mut self, s: Sleeper, sigs: &Arc<[CpuSignal]>, idx: usize) {
        if let Some(e) = &s.event {
            e.register(sigs, idx);
        }
        self.push(s);
    }

    /// The run ends: the events still awaited forget this worker.
    fn forget(&mut self, sigs: &Arc<[CpuSignal]>, idx: usize) {
        for s in self.list.drain(..) {
            if let Some(e) = &s.event {
                e.unregister(sigs, idx);
            }
        }
    }

    /// Whether a wake-up is due (lock-free; polled by running bodies and idle waits).
    #[inline]
    fn due(&self, now: u64) -> bool {
        now >= self.next || (self.events && self.list.iter().any(|s| s.event.as_ref().is_some_and(Event::is_set)))
    }

    /// Wakes every sleeper due at `now`: records `JobWake` and calls the plugin's `wake` on
    /// this thread.
    fn wake_due(&mut self, sh: &Shared<'_>, ctx: &mut Ctx<'_>, now: u64) {
        // An event's signal sets this bit after the event (`user::Event::signal`): consumed
        // before the events are read, so a signal that comes after is not lost.
        sh.signals[ctx.cpu()].take_event();
        if !self.due(now) {
            return;
        }
        let mut i = 0;
        while i < self.list.len() {
            let fire = match &self.list[i].event {
                Some(e) => e.take(),
                None => now >= self.list[i].until,
            };
            if !fire {
                i += 1;
                continue;
            }
            let s = self.list.swap_remove(i);
            if let Some(e) = &s.event {
                e.unregister(&sh.signals, ctx.cpu());
            }
            ctx.trace().record(RecKind::JobWake, s.job.task(), s.job.seq(), 0);
            sh.plugin.wake(ctx, s.job, now);
            ctx.flush_wakes();
        }
        self.next = self.list.iter().map(|s| s.until).min().unwrap_or(u64::MAX);
        self.events = self.list.iter().any(|s| s.event.is_some());
    }
}

/// How a job's body stopped.
enum Ran {
    Done,
    Stopped,
    /// It self-suspends for this long, or until the event.
    Suspend(u64, Option<Event>),
}

/// What one thread polls besides its request word.
struct Events {
    /// Its release domain.
    domain: Option<usize>,
    /// The quantum (workers of a plugin that ticks).
    quantum: Option<u64>,
    /// Its next tick (`u64::MAX`: none).
    next_tick: u64,
    /// The plugin arms timers.
    timers: bool,
}

impl Events {
    fn of(sh: &Shared<'_>, idx: usize, worker: bool) -> Events {
        let ticks = if worker { sh.plugin.ticks().filter(|t| t.quantum_ns > 0) } else { None };
        Events {
            domain: sh.plugin.release_domain(idx),
            quantum: ticks.map(|t| t.quantum_ns),
            next_tick: ticks.map_or(u64::MAX, |t| sh.life.t0 + t.offset(idx, sh.cfg.cpus.len())),
            timers: sh.plugin.uses_timers(),
        }
    }
}

fn setup_thread(sh: &Shared<'_>, idx: usize, cpu: usize, prio: Option<i32>) {
    if let Err(e) = platform::pin_to(cpu) {
        sh.fail(e);
        return;
    }
    sh.tids[idx].store(platform::gettid(), Ordering::SeqCst);
    if let Some(p) = prio {
        if let Err(e) = platform::set_fifo(0, p) {
            sh.fail(e);
        }
    }
}

/// Every thread passes here once set up (pinned, priority set); whether the run goes ahead.
/// The barrier's leader checks that time zero is still ahead: a host too busy to start the
/// threads within the start delay would otherwise start the run late — workers that begin
/// after their first releases or after the end, a run in which nothing executed. Such an
/// attempt is abandoned before any thread does anything (`late_by` says by how much) and
/// [`run`] retries it with a longer delay. The second wait publishes the leader's verdict.
fn start_gate(sh: &Shared<'_>, barrier: &Barrier) -> bool {
    if barrier.wait().is_leader() {
        let now = clock::monotonic_ns();
        if now >= sh.life.t0 {
            sh.late_by.store(now - sh.life.t0 + 1, Ordering::SeqCst);
            sh.abort.store(true, Ordering::SeqCst);
        }
    }
    barrier.wait();
    !sh.abort.load(Ordering::SeqCst)
}

fn worker(sh: &Shared<'_>, idx: usize, mut trace: TraceBuffer, barrier: &Barrier) -> (TraceBuffer, u64) {
    setup_thread(sh, idx, sh.cfg.cpus[idx], sh.cfg.rt_priority);
    // Opened before time zero (the first check then covers the wait for it).
    let mut probe = RunQueueProbe::for_this_thread();
    let mut max_gap = 0u64;
    if !start_gate(sh, barrier) {
        return (trace, max_gap);
    }
    clock::sleep_until(sh.life.t0);
    let plugin = sh.plugin;
    let mut ev = Events::of(sh, idx, true);
    let dom = ev.domain;
    let timers = ev.timers;
    let sig = &sh.signals[idx];
    let mut ctx = Ctx::new(idx, &mut trace, &sh.signals);
    let mut prev = Prev::Idle;
    let mut sleepers = Sleepers::new();
    'outer: loop {
        let now = clock::monotonic_ns();
        if sh.stopped(now) {
            break;
        }
        sh.events(&mut ctx, &mut ev, sig, now);
        // Not before the block's `schedule` (contract rule 6): a job blocked just now (a
        // suspension of 0 ns is due at once) wakes at the next round.
        if !matches!(prev, Prev::Blocked(_)) {
            sleepers.wake_due(sh, &mut ctx, now);
        }
        if let Some(stamp) = sig.take() {
            if stamp != 0 {
                ctx.trace().record(RecKind::IpiNoticed, idx as u32, 0, stamp);
            }
        }
        // The scheduler's `now` (read before Δsch starts, so no plugin's Δsch includes it).
        let now = clock::monotonic_ns();
        ctx.trace().record(RecKind::SchedStart, 0, 0, 0);
        let next = plugin.schedule(&mut ctx, prev, now);
        ctx.trace().record(RecKind::SchedEnd, 0, 0, 0);
        ctx.flush_wakes();
        prev = Prev::Idle;
        let Some(job) = next else {
            probe.check(ctx.trace());
            idle(sh, idx, sig, &ev, &sleepers, ctx.trace());
            continue;
        };
        ctx.trace().record(RecKind::CxsStart, job.task(), job.seq(), 0);
        let ex = &sh.exec[job.task() as usize];
        let fresh = ex.seq.load(Ordering::Acquire) != job.seq();
        let mut remaining = if fresh {
            let c = sh.cfg.exec.cost(sh.cfg.seed, job.task(), job.seq(), sh.wcet[job.task() as usize]);
            ex.remaining.store(c, Ordering::Relaxed);
            ex.cost.store(c, Ordering::Relaxed);
            ex.taken.store(0, Ordering::Relaxed);
            ex.step.store(0, Ordering::Relaxed);
            ex.seq.store(job.seq(), Ordering::Release);
            c
        } else {
            ex.remaining.load(Ordering::Acquire)
        };
        ctx.trace().record(RecKind::CxsEnd, job.task(), job.seq(), 0);
        let kind = if fresh { RecKind::JobStart } else { RecKind::JobResume };
        ctx.trace().record(kind, job.task(), job.seq(), remaining);
        let user = sh.cfg.user_jobs.get(job.task() as usize);
        let mut step = ex.step.load(Ordering::Acquire);
        loop {
            let next_tick = ev.next_tick;
            let sl = &sleepers;
            let poll = |now: u64| {
                sig.is_set()
                    || now >= sh.end()
                    || now >= next_tick
                    || dom.is_some_and(|d| now >= plugin.next_release(d))
                    || (timers && now >= plugin.next_timer(idx))
                    || sl.due(now)
            };
            let ran = match user {
                None => {
                    // The next suspension of a self-suspending job: the execution done before
                    // it; the body runs up to it at most.
                    let cost = ex.cost.load(Ordering::Relaxed);
                    let susp = sh
                        .susp
                        .next(job.task() as usize, ex.taken.load(Ordering::Relaxed))
                        .filter(|&(before, _)| before < cost);
                    let budget =
                        susp.map_or(remaining, |(before, _)| before.saturating_sub(cost - remaining).min(remaining));
                    let tr = &mut *ctx.trace();
                    let (used, why, gap) = if budget == 0 {
                        (0, Stop::Done, 0)
                    } else {
                        body::spin(budget, &ex.wss, poll, |from| interference::record_gap(tr, from))
                    };
                    max_gap = max_gap.max(gap);
                    remaining = remaining.saturating_sub(used);
                    match susp {
                        _ if remaining == 0 => Ran::Done,
                        Some((before, d)) if cost - remaining >= before => {
                            ex.taken.fetch_add(1, Ordering::Relaxed);
                            Ran::Suspend(d, None)
                        }
                        _ if why == Stop::Done && susp.is_none() => Ran::Done,
                        _ => Ran::Stopped,
                    }
                }
                Some(b) => {
                    let r = crate::user::run_steps(b, job.task() as usize, job.seq(), idx, &mut step, &|| {
                        poll(clock::monotonic_ns())
                    });
                    ex.step.store(step, Ordering::Release);
                    match r {
                        crate::user::Ran::Done => Ran::Done,
                        crate::user::Ran::Stopped => Ran::Stopped,
                        crate::user::Ran::Suspend(d) => Ran::Suspend(d, None),
                        // A signal already pending: the wait is over at once, no suspension.
                        crate::user::Ran::Wait(e) if e.take() => Ran::Stopped,
                        crate::user::Ran::Wait(e) => Ran::Suspend(0, Some(e)),
                    }
                }
            };
            match ran {
                Ran::Done => {
                    ctx.trace().record(RecKind::JobComplete, job.task(), job.seq(), 0);
                    probe.check(ctx.trace());
                    ex.remaining.store(0, Ordering::Release);
                    prev = Prev::Completed(job);
                    break;
                }
                Ran::Suspend(d, event) => {
                    if !sh.suspends {
                        sh.fail(RunError::Config(format!(
                            "task {}'s job {} self-suspended, but {} does not execute self-suspending jobs ({})",
                            job.task(),
                            job.seq(),
                            sh.name,
                            suspending_mechanisms()
                        )));
                        break 'outer;
                    }
                    if sh.parallel_refuses {
                        sh.fail(RunError::Config(format!(
                            "task {}'s job {} self-suspended, but {} executes self-suspending jobs of sequential tasks \
                             only, not threads of fork-join or DAG jobs",
                            job.task(),
                            job.seq(),
                            sh.name
                        )));
                        break 'outer;
                    }
                    // The block (contract rule 6): the budget saved, the suspension traced, the
                    // wake-up armed here, then `schedule(Blocked)`.
                    ex.remaining.store(remaining, Ordering::Release);
                    let now = clock::monotonic_ns();
                    ctx.trace().record(RecKind::JobSuspend, job.task(), job.seq(), remaining);
                    let until = if event.is_some() { u64::MAX } else { now.saturating_add(d) };
                    sleepers.suspend(Sleeper { job, until, event }, &sh.signals, idx);
                    prev = Prev::Blocked(job);
                    break;
                }
                Ran::Stopped => {}
            }
            ex.remaining.store(remaining, Ordering::Release);
            let now = clock::monotonic_ns();
            if sh.stopped(now) {
                break 'outer;
            }
            sh.events(&mut ctx, &mut ev, sig, now);
            sleepers.wake_due(sh, &mut ctx, now);
            if sig.resched_pending() {
                ctx.trace().record(RecKind::JobPreempt, job.task(), job.seq(), remaining);
                prev = Prev::Preempted(job);
                break;
            }
        }
    }
    sleepers.forget(&sh.signals, idx);
    // A completion or a block must reach the plugin, or its accounting would miss it.
    if let Prev::Completed(_) | Prev::Blocked(_) = prev {
        let now = clock::monotonic_ns();
        ctx.trace().record(RecKind::SchedStart, 0, 0, 0);
        plugin.schedule(&mut ctx, prev, now);
        ctx.trace().record(RecKind::SchedEnd, 0, 0, 0);
        ctx.flush_wakes();
    }
    drop(ctx);
    (trace, max_gap)
}

/// The registered mechanisms that execute self-suspending jobs, for messages.
pub(crate) fn suspending_mechanisms() -> String {
    let names: Vec<&str> =
        crate::mechanism::registry::entries().iter().filter(|e| e.suspends).map(|e| e.name).collect();
    format!("mechanisms that do: {}", names.join(", "))
}

/// Waits (sleeps on the futex or spins, as configured) until thread `idx` has a request, an
/// event due (a suspended job's wake-up included), or the run ends. A spinning wait records its clock jumps as host interference.
fn idle(sh: &Shared<'_>, idx: usize, sig: &CpuSignal, ev: &Events, sleepers: &Sleepers, trace: &mut TraceBuffer) {
    let mut last = clock::monotonic_ns();
    loop {
        let now = clock::monotonic_ns();
        if now - last > INTERFERENCE_GAP_NS && sh.cfg.idle == IdleMode::Spin {
            interference::record_gap(trace, last);
        }
        last = now;
        if sh.stopped(now) || sig.is_set() || sleepers.due(now) {
            return;
        }
        let due = sh.next_due(idx, ev).min(sleepers.next);
        if due <= now {
            return;
        }
        match sh.cfg.idle {
            IdleMode::Spin => std::hint::spin_loop(),
            IdleMode::Sleep => sig.sleep((due - now).min(1_000_000)),
        }
    }
}

/// The service thread on the dedicated CPU (index `m`; GSN-EDF-DI's release thread, a
/// dedicated scheduling processor): serves its release domain, its timer and its
/// notifications, and never runs a job.
fn service(sh: &Shared<'_>, idx: usize, cpu: usize, mut trace: TraceBuffer, barrier: &Barrier) -> TraceBuffer {
    setup_thread(sh, idx, cpu, sh.cfg.rt_priority);
    let mut probe = RunQueueProbe::for_this_thread();
    if !start_gate(sh, barrier) {
        return trace;
    }
    clock::sleep_until(sh.life.t0);
    let mut ev = Events::of(sh, idx, false);
    let sig = &sh.signals[idx];
    let mode = sh.plugin.service_idle().unwrap_or(sh.cfg.idle);
    let window = sh.plugin.service_spin_window_ns();
    let mut ctx = Ctx::new(idx, &mut trace, &sh.signals);
    loop {
        let now = clock::monotonic_ns();
        if sh.stopped(now) {
            break;
        }
        sh.events(&mut ctx, &mut ev, sig, now);
        // A reschedule request means nothing here (no job runs); consume it.
        let _ = sig.take();
        if sig.is_set() {
            continue;
        }
        let wake = sh.next_due(idx, &ev);
        probe.check(ctx.trace());
        match mode {
            IdleMode::Spin => {
                let until = wake.min(sh.end());
                let now = clock::monotonic_ns();
                if until > now.saturating_add(window) {
                    // Far from the next event: sleep until the spin window opens.
                    sig.sleep((until - window - now).min(10_000_000));
                    continue;
                }
                let mut last = clock::monotonic_ns();
                while last < until && !sig.is_set() && !sh.abort.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                    let now = clock::monotonic_ns();
                    if now - last > INTERFERENCE_GAP_NS {
                        interference::record_gap(ctx.trace(), last);
                    }
                    last = now;
                }
            }
            // Slices of at most 10 ms (an early stop also wakes it).
            IdleMode::Sleep => {
                let now = clock::monotonic_ns();
                if wake > now {
                    sig.sleep((wake - now).min(10_000_000));
                }
            }
        }
    }
    drop(ctx);
    trace
}

/// Runs `ts` under `mech` on real cores (see the module docs); the configuration has been
/// validated by the caller.
pub(crate) fn run(ts: &TaskSet, mech: &Mechanism, build: Builder, cfg: &RunConfig) -> Result<RunResult, RunError> {
    let mut delay = cfg.start_delay_ns;
    let mut late = 0;
    for _ in 0..START_ATTEMPTS {
        match run_once(ts, mech, build, cfg, delay)? {
            Attempt::Ran(r) => return Ok(*r),
            Attempt::Late(by) => {
                late = by;
                delay = delay.saturating_mul(4).max(by.saturating_mul(4)).clamp(MIN_RETRY_DELAY_NS, MAX_START_DELAY_NS);
            }
        }
    }
    Err(RunError::Failed(format!(
        "the host did not start the run's threads before time zero in {START_ATTEMPTS} attempts (the last \
         with a start delay of {} ms, {:.1} ms late): it is too busy; retry when it is quieter or with \
         --rt-priority",
        delay / 1_000_000,
        late as f64 / 1e6
    )))
}

/// Attempts of [`run`] whose threads were not ready by time zero, before it gives up.
const START_ATTEMPTS: u32 = 4;
/// The shortest start delay a retry of [`run`] waits.
const MIN_RETRY_DELAY_NS: u64 = 20_000_000;
/// The longest start delay a retry of [`run`] waits.
const MAX_START_DELAY_NS: u64 = 5_000_000_000;

/// One attempt of [`run`]: the run, or how late its threads were ready ([`start_gate`]).
enum Attempt {
    Ran(Box<RunResult>),
    Late(u64),
}

fn run_once(
    ts: &TaskSet,
    mech: &Mechanism,
    build: Builder,
    cfg: &RunConfig,
    start_delay_ns: u64,
) -> Result<Attempt, RunError> {
    let m = cfg.cpus.len();
    let params: Vec<TaskParams> = ts.iter().map(|t| TaskParams { deadline: t.deadline, period: t.period }).collect();
    // The trace buffers are allocated (and written through, so paged in) before time zero is
    // fixed: large ones take long enough to eat the start delay.
    let mut bufs: Vec<TraceBuffer> = (0..m).map(|i| TraceBuffer::new(i as u16, cfg.trace_capacity)).collect();
    let mut rel_buf = cfg.dedicated_cpu.map(|_| TraceBuffer::new(crate::tracer::RELEASE_CPU, cfg.trace_capacity));
    let cal_a = ClockPair::now();
    let life = Lifecycle::new(start_delay_ns, cfg.duration_ns);
    let (t0, end) = (life.t0, life.planned_end);
    let plugin: Box<dyn Plugin> = build(&Setup {
        name: mech.name(),
        ts,
        tasks: &params,
        m,
        cpus: &cfg.cpus,
        dedicated: cfg.dedicated_cpu.is_some(),
        partition: mech.partition(),
        reservations: mech.reservations(),
        rule: mech.rule(ts)?,
        params: mech.params(),
        t0,
        end,
        forkjoin: cfg.forkjoin.as_deref(),
        dag: cfg.dag.as_deref(),
    })?;
    if !crate::body::Suspensions::effective(&cfg.suspensions, ts).is_empty() && cfg.parallel() {
        return Err(RunError::Config(
            "self-suspension segments apply to sporadic tasks, not to fork-join or DAG jobs".into(),
        ));
    }
    if cfg.parallel() && !mech.entry().parallel {
        let kind = if cfg.dag.is_some() { "DAG" } else { "fork-join" };
        return Err(crate::mechanism::registry::sequential_only(mech.name(), kind));
    }
    let threads = m + usize::from(cfg.dedicated_cpu.is_some());
    let sh = Shared {
        plugin: plugin.as_ref(),
        suspends: mech.entry().suspends,
        parallel_refuses: cfg.parallel() && !plugin.suspends_parallel(),
        susp: crate::body::Suspensions::effective(&cfg.suspensions, ts),
        name: mech.name(),
        cfg,
        signals: (0..threads).map(|_| CpuSignal::new()).collect::<Vec<_>>().into(),
        exec: ts
            .iter()
            .map(|_| TaskExec {
                seq: AtomicU32::new(u32::MAX),
                remaining: AtomicU64::new(0),
                cost: AtomicU64::new(0),
                taken: AtomicU32::new(0),
                step: AtomicU64::new(0),
                wss: body::working_set(cfg.wss_bytes),
            })
            .collect(),
        wcet: ts.iter().map(|t| t.wcet).collect(),
        life: &life,
        abort: AtomicBool::new(false),
        late_by: AtomicU64::new(0),
        tids: (0..threads).map(|_| AtomicI32::new(0)).collect(),
        setup_error: std::sync::Mutex::new(None),
    };
    let barrier = Barrier::new(threads);
    let done = AtomicBool::new(false);
    let mut watchdog_fired = false;
    let (traces, max_gap) = std::thread::scope(|s| {
        let wd = s.spawn(|| watchdog(&sh, &done));
        let hs: Vec<_> = bufs
            .drain(..)
            .enumerate()
            .map(|(i, tb)| {
                let (shr, b) = (&sh, &barrier);
                s.spawn(move || worker(shr, i, tb, b))
            })
            .collect();
        let rel = cfg.dedicated_cpu.zip(rel_buf.take()).map(|(c, tb)| {
            let (shr, b) = (&sh, &barrier);
            s.spawn(move || service(shr, m, c, tb, b))
        });
        let mut traces = Vec::new();
        let mut max_gap = 0;
        let mut panicked = false;
        for h in hs {
            match h.join() {
                Ok((t, g)) => {
                    traces.push(t);
                    max_gap = max_gap.max(g);
                }
                Err(_) => panicked = true,
            }
        }
        if let Some(h) = rel {
            match h.join() {
                Ok(t) => traces.push(t),
                Err(_) => panicked = true,
            }
        }
        done.store(true, Ordering::SeqCst);
        watchdog_fired = wd.join().unwrap_or(true);
        if panicked {
            sh.fail(RunError::Failed("a worker thread panicked".into()));
        }
        (traces, max_gap)
    });
    if let Some(e) = sh.setup_error.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(e);
    }
    let late_by = sh.late_by.load(Ordering::SeqCst);
    if late_by > 0 {
        return Ok(Attempt::Late(late_by));
    }
    if watchdog_fired {
        return Err(RunError::Failed(
            "the watchdog ended the run: a thread did not stop within 1 s after the end".into(),
        ));
    }
    let mut traces = traces;
    let last_due =
        traces.iter().flat_map(|b| b.records()).filter(|r| r.kind == RecKind::JobRelease).map(|r| r.arg).max();
    let end = life.effective_end(last_due);
    // Jobs due before the end whose release handler had not run when the threads stopped
    // (a worker descheduled by the host near the end) are released now, as pending jobs:
    // every job due in [0, duration) is released, however late its handler ran.
    let missing = missing_releases(ts, t0, end, &plugin.accounting().released);
    // Room for everything a release handler records per job, not only the releases: its lock
    // waits, enqueue spans, reschedule requests and pushes (push/pull records a span per push
    // attempt, up to one per CPU); a buffer sized for the releases alone dropped records.
    let per_job = 32 + 8 * m;
    let mut drain = TraceBuffer::new(DRAIN_CPU, (missing as usize + plugin.release_domains()) * per_job + 1024);
    {
        let mut ctx = Ctx::new(m, &mut drain, &sh.signals);
        for d in 0..plugin.release_domains() {
            if plugin.next_release(d) < end {
                ctx.trace().record(RecKind::ReleaseStart, d as u32, 0, plugin.next_release(d));
                plugin.release(&mut ctx, d, end - 1);
                ctx.trace().record(RecKind::ReleaseEnd, d as u32, 0, 0);
                ctx.flush_wakes();
            }
        }
    }
    if !drain.records().is_empty() {
        traces.push(drain);
    }
    let cal = TscCalibration::from_pairs(cal_a, ClockPair::now());
    let acc = plugin.accounting();
    let mut info = RunInfo::of(mech, ts, m);
    if cfg.forkjoin.as_ref().is_some_and(|fj| fj.iter().any(|t| t.threads() > 1)) {
        // Threads of later regions are recorded as released with their job but wait for
        // their region's fork: the per-task invariant of the monitor does not apply.
        info.promise = super::result::Promise::Unobservable(
            "fork-join jobs: a thread is ready only once its region forks (RTWS paper, §III)".into(),
        );
    }
    if cfg.dag.as_ref().is_some_and(|d| d.iter().any(|t| t.nodes() > 1)) {
        // Nodes are recorded as released with their job but wait for their predecessors.
        info.promise = super::result::Promise::Unobservable(
            "DAG jobs: a node is ready only once its predecessors completed (Baruah et al., RTSS 2012)".into(),
        );
    }
    Ok(Attempt::Ran(Box::new(RunResult::build(
        ts,
        info,
        cfg,
        t0,
        end - t0,
        life.interrupted(),
        &cal,
        traces,
        acc,
        max_gap,
    ))))
}

/// Ends a run early when `cfg.stop` is set (moves the end to now and wakes the sleepers),
/// and ends a run that overstays: one second after the end it sets the abort flag and demotes
/// every thread to SCHED_OTHER; returns whether it had to.
fn watchdog(sh: &Shared<'_>, done: &AtomicBool) -> bool {
    if let Some(p) = sh.cfg.rt_priority {
        let _ = platform::set_fifo(0, p + 1);
    }
    let wake = || {
        for s in sh.signals.iter() {
            s.kick();
        }
    };
    sh.life.watch(sh.cfg.stop.as_deref(), done, wake, |now| {
        if now < sh.end() + 1_000_000_000 {
            return false;
        }
        sh.abort.store(true, Ordering::SeqCst);
        for t in &sh.tids {
            let tid = t.load(Ordering::SeqCst);
            if tid != 0 {
                platform::set_normal(tid);
            }
        }
        true
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::gedf_mp::GedfMp;

    /// A spinning idle worker (`IdleMode::Spin`: G-EDF-MP's spinning clients) waiting for a
    /// request that never comes stops when the watchdog aborts the run or an early stop moves
    /// the end, long before the planned end (a broken wait would spin until then and fail the
    /// check after it; no timing is asserted).
    #[test]
    fn a_spinning_idle_worker_stops_at_the_watchdog_and_at_an_early_stop() {
        const MINUTE: u64 = 60_000_000_000;
        let mut cfg = RunConfig::new(vec![0], MINUTE);
        cfg.idle = IdleMode::Spin;
        let params = [TaskParams { deadline: MINUTE, period: MINUTE }];
        // A client of G-EDF-MP: its releases are the scheduling processor's, so nothing is due
        // on it before the end.
        let g = GedfMp::even(&params, 1, 0, MINUTE, IdleMode::Spin, 1, 8);
        for watchdog in [true, false] {
            let life = Lifecycle::new(0, MINUTE);
            let sh = Shared {
                plugin: &g,
                suspends: false,
                parallel_refuses: false,
                susp: crate::body::Suspensions::default(),
                name: "gedf-mp",
                cfg: &cfg,
                signals: (0..2).map(|_| CpuSignal::new()).collect::<Vec<_>>().into(),
                exec: Vec::new(),
                wcet: vec![1],
                life: &life,
                abort: AtomicBool::new(false),
                late_by: AtomicU64::new(0),
                tids: Vec::new(),
                setup_error: std::sync::Mutex::new(None),
            };
            let ev = Events::of(&sh, 0, true);
            assert_eq!(ev.domain, None, "the client polls no release domain");
            let spinning = AtomicBool::new(false);
            std::thread::scope(|s| {
                let waiter = s.spawn(|| {
                    let mut tb = TraceBuffer::new(0, 1024);
                    spinning.store(true, Ordering::SeqCst);
                    idle(&sh, 0, &sh.signals[0], &ev, &Sleepers::new(), &mut tb);
                });
                while !spinning.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
                if watchdog {
                    // What the watchdog does one second after the end (`watchdog`).
                    sh.abort.store(true, Ordering::SeqCst);
                } else {
                    assert!(life.stop_at(clock::monotonic_ns()));
                }
                waiter.join().unwrap();
            });
            assert!(
                clock::monotonic_ns() < life.planned_end,
                "watchdog {watchdog}: the spinning wait ran to the planned end"
            );
        }
    }
}
