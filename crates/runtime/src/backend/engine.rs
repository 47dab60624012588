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
//!
//! Here: the run's setup (the shared state, the threads' start, the retries of a late start,
//! the watchdog); the threads' loops are in `threads`, the run's summary in `summary`.

use super::lifecycle::Lifecycle;
use super::result::RunResult;
use crate::body;
use crate::clock::{self, ClockPair};
use crate::config::RunConfig;
use crate::mechanism::registry::{Builder, Setup};
use crate::mechanism::{Ctx, Mechanism, Plugin, TaskParams};
use crate::platform;
use crate::sync::CpuSignal;
use crate::tracer::{RecKind, TraceBuffer};
use crate::RunError;
use rtsched_model::TaskSet;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::sync::Barrier;

mod summary;
mod threads;

use threads::{service, worker};

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

/// The registered mechanisms that execute self-suspending jobs, for messages.
pub(crate) fn suspending_mechanisms() -> String {
    let names: Vec<&str> =
        crate::mechanism::registry::entries().iter().filter(|e| e.suspends).map(|e| e.name).collect();
    format!("mechanisms that do: {}", names.join(", "))
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
    Ok(Attempt::Ran(Box::new(summary::summarize(&sh, ts, mech, cal_a, traces, max_gap))))
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
