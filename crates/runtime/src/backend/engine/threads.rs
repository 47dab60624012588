//! The engine's threads (module docs of [`super`]): one worker's loop per CPU with the jobs it
//! suspended until their wake-ups, its idle wait, and the service thread on the dedicated CPU.

use super::{setup_thread, start_gate, suspending_mechanisms, Events, Shared};
use crate::body::{self, Stop};
use crate::clock;
use crate::config::IdleMode;
use crate::interference::{self, RunQueueProbe};
use crate::mechanism::{Ctx, Job, Prev};
use crate::sync::CpuSignal;
use crate::tracer::{RecKind, TraceBuffer};
use crate::user::Event;
use crate::RunError;
use rtsched_trace::stats::INTERFERENCE_GAP_NS;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Barrier;

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

/// Worker `idx`'s loop (module docs of [`super`], "Worker loop"), from its setup to the end
/// of the run: its trace, and the largest host-interference gap its job bodies saw.
pub(super) fn worker(sh: &Shared<'_>, idx: usize, mut trace: TraceBuffer, barrier: &Barrier) -> (TraceBuffer, u64) {
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
pub(super) fn service(
    sh: &Shared<'_>,
    idx: usize,
    cpu: usize,
    mut trace: TraceBuffer,
    barrier: &Barrier,
) -> TraceBuffer {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::lifecycle::Lifecycle;
    use crate::config::RunConfig;
    use crate::mechanism::gedf_mp::GedfMp;
    use crate::mechanism::TaskParams;
    use std::sync::atomic::{AtomicBool, AtomicU64};

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
