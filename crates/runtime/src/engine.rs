//! The engine: builds a mechanism, starts one pinned worker per CPU (plus the dedicated
//! release thread for GSN-EDF-DI, plus a watchdog), releases the task set synchronously at a
//! common time zero (seed 000 App. A), runs for the configured duration, and turns the
//! per-CPU traces into a [`RunResult`].
//!
//! Worker loop (one per CPU; `ctx.cpu` = index in the CPU list):
//! 1. if this CPU polls a release domain and its next release is due, run the release
//!    handler (the "timer interrupt"; traced as Δrel, with Δev = handler start − due time);
//! 2. consume a reschedule request (traced as `IpiNoticed` with the sender's stamp: Δipi);
//! 3. call the plugin's `schedule` (Δsch, lock waits inside);
//! 4. dispatch (Δcxs: load the job's saved budget) and run its body, which polls the CPU's
//!    flag, the release timer and the end of the run between chunks of work; a release that
//!    does not preempt lets the body continue; a preemption request stops it (its remaining
//!    budget is saved) and the loop goes back to 1.
//!    Idle workers sleep on their futex (with a timeout at the next due release or the end)
//!    or spin, as configured.
//!
//! At the end of the run every thread stops where it is; a job that is running or waiting is
//! *pending*, and `released = completed + pending` is checked per task against the
//! plugin's own accounting.
//!
//! **Stopping early** (`RunConfig::stop`, e.g. on Ctrl-C): the watchdog polls the flag every
//! 5 ms; when it is set it moves the end of the run to now and wakes every sleeping worker.
//! Every thread then stops as at a normal end. A release handler that raced with the stop may
//! have released a job due a little after the stop time, so the effective end is the later of
//! the stop time and just after the latest released due time; jobs due before it that no
//! handler reached are released by the final drain, and the result is marked `interrupted`
//! with `duration_ns` = the time actually run.

use crate::body::{self, ExecTime, Stop};
use crate::clock::{self, ClockPair, TscCalibration};
use crate::gsn::GsnEdf;
use crate::pedf::Pedf;
use crate::platform;
use crate::plugin::{Ctx, Plugin, Prev, TaskParams};
use crate::result::RunResult;
use crate::sync::CpuSignal;
use crate::tracer::{RecKind, TraceBuffer};
use crate::RunError;
use rtsched_model::TaskSet;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

/// The longest run accepted (one hour): a run is never unbounded.
pub const MAX_DURATION_NS: u64 = 3_600_000_000_000;

/// What an idle worker does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdleMode {
    /// Sleep on the CPU's futex until a request, the next due release or the end.
    Sleep,
    /// Busy-poll (lowest latency; burns the core).
    Spin,
}

/// The scheduler implementation to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mechanism {
    /// Partitioned EDF; `partition[c]` = task indices of the `c`-th CPU of the list.
    Pedf { partition: Vec<Vec<usize>> },
    /// Partitioned fixed priority; `ranks[i]` = task i's priority (smaller = higher), or
    /// `None` for deadline-monotonic (D, then task index).
    Pfp { partition: Vec<Vec<usize>>, ranks: Option<Vec<u64>> },
    /// Global EDF, one lock, releases handled by the workers (seed 001 CEm).
    GsnEdf,
    /// GSN-EDF with a dedicated release CPU (`RunConfig::dedicated_cpu`; seed 001 CE1).
    GsnEdfDi,
    /// The same workload as Linux SCHED_DEADLINE threads (see `kernel_sd`).
    KernelSd,
}

impl Mechanism {
    /// The scheduler names the CLI accepts.
    pub const NAMES: [&'static str; 5] = ["pedf", "pfp", "gsn-edf", "gsn-edf-di", "kernel-sd"];

    /// Builds a mechanism from its CLI name; `pedf` and `pfp` need a partition (P-FP then
    /// uses deadline-monotonic priorities), the others refuse one.
    pub fn parse(name: &str, partition: Option<Vec<Vec<usize>>>) -> Result<Mechanism, RunError> {
        let m = match (name, partition) {
            ("pedf", Some(p)) => Mechanism::Pedf { partition: p },
            ("pfp", Some(p)) => Mechanism::Pfp { partition: p, ranks: None },
            ("pedf" | "pfp", None) => {
                return Err(RunError::Config(format!("{name} needs a partition (task indices per CPU)")))
            }
            ("gsn-edf", None) => Mechanism::GsnEdf,
            ("gsn-edf-di", None) => Mechanism::GsnEdfDi,
            ("kernel-sd", None) => Mechanism::KernelSd,
            ("gsn-edf" | "gsn-edf-di" | "kernel-sd", Some(_)) => {
                return Err(RunError::Config(format!("{name} is global and takes no partition")))
            }
            _ => {
                return Err(RunError::Config(format!(
                    "unknown scheduler {name:?}; known: {}",
                    Mechanism::NAMES.join(", ")
                )))
            }
        };
        Ok(m)
    }

    pub fn name(&self) -> &'static str {
        match self {
            Mechanism::Pedf { .. } => "pedf",
            Mechanism::Pfp { .. } => "pfp",
            Mechanism::GsnEdf => "gsn-edf",
            Mechanism::GsnEdfDi => "gsn-edf-di",
            Mechanism::KernelSd => "kernel-sd",
        }
    }
}

/// Run parameters.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Scheduling CPUs (OS CPU numbers); worker `i` is pinned to `cpus[i]`.
    pub cpus: Vec<usize>,
    /// Jobs are released in `[0, duration)`; every thread stops at `duration`.
    pub duration_ns: u64,
    /// `Some(p)`: run every thread at SCHED_FIFO priority `p` (1..=99; the watchdog one
    /// higher); `None`: normal priority.
    pub rt_priority: Option<i32>,
    pub idle: IdleMode,
    /// The release CPU of GSN-EDF-DI.
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
}

impl RunConfig {
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
        }
    }

    fn validate(&self, ts: &TaskSet, mech: &Mechanism) -> Result<(), RunError> {
        if self.duration_ns == 0 || self.duration_ns > MAX_DURATION_NS {
            return Err(RunError::Config(format!("duration must be in 1 ns ..= 1 h, got {} ns", self.duration_ns)));
        }
        if ts.is_empty() {
            return Err(RunError::Config("the task set is empty".into()));
        }
        self.exec.validate().map_err(RunError::Config)?;
        self.user_jobs.validate(ts.len()).map_err(RunError::Config)?;
        if matches!(mech, Mechanism::KernelSd) && !self.user_jobs.is_empty() {
            return Err(RunError::Config(
                "kernel-sd runs the synthetic body only; user jobs need one of our mechanisms".into(),
            ));
        }
        if let Some(p) = self.rt_priority {
            if !(1..=98).contains(&p) {
                return Err(RunError::Priority(format!(
                    "rt_priority must be in 1..=98 (the watchdog runs one above), got {p}"
                )));
            }
        }
        match mech {
            Mechanism::GsnEdfDi if self.dedicated_cpu.is_none() => {
                return Err(RunError::Config("gsn-edf-di needs a dedicated_cpu for release handling".into()))
            }
            Mechanism::GsnEdfDi | Mechanism::KernelSd => {}
            _ if self.dedicated_cpu.is_some() => {
                return Err(RunError::Config(format!(
                    "{} does not use a dedicated CPU (only gsn-edf-di does)",
                    mech.name()
                )))
            }
            _ => {}
        }
        if let Mechanism::KernelSd = mech {
            if self.dedicated_cpu.is_some() {
                return Err(RunError::Config("kernel-sd does not use a dedicated CPU".into()));
            }
        }
        if let Mechanism::Pedf { partition } = mech {
            validate_partition(partition, ts.len(), self.cpus.len())?;
        }
        if let Mechanism::Pfp { partition, ranks } = mech {
            validate_partition(partition, ts.len(), self.cpus.len())?;
            if let Some(r) = ranks {
                if r.len() != ts.len() {
                    return Err(RunError::Config(format!("pfp has {} priorities for {} tasks", r.len(), ts.len())));
                }
            }
        }
        platform::validate_cpus(&self.cpus, self.dedicated_cpu, self.force)
    }
}

/// Deadline-monotonic ranks: position of each task when sorted by (D, index).
pub fn deadline_monotonic_ranks(ts: &TaskSet) -> Vec<u64> {
    let mut order: Vec<usize> = (0..ts.len()).collect();
    order.sort_by_key(|&i| (ts.tasks()[i].deadline, i));
    let mut ranks = vec![0; ts.len()];
    for (r, &i) in order.iter().enumerate() {
        ranks[i] = r as u64;
    }
    ranks
}

/// Each task on exactly one of `m` CPUs.
pub fn validate_partition(partition: &[Vec<usize>], n: usize, m: usize) -> Result<(), RunError> {
    if partition.len() != m {
        return Err(RunError::Config(format!("the partition has {} CPUs but the CPU list has {m}", partition.len())));
    }
    let mut seen = vec![None; n];
    for (c, tasks) in partition.iter().enumerate() {
        for &t in tasks {
            if t >= n {
                return Err(RunError::Config(format!("partition CPU {c} names task {t}, but there are {n} tasks")));
            }
            if let Some(c0) = seen[t] {
                return Err(RunError::Config(format!("task {t} is assigned to CPUs {c0} and {c}")));
            }
            seen[t] = Some(c);
        }
    }
    if let Some(t) = seen.iter().position(|s| s.is_none()) {
        return Err(RunError::Config(format!("task {t} is assigned to no CPU")));
    }
    Ok(())
}

/// Per-task execution state, written by the worker that runs the task's current job.
/// Ordering across CPUs comes from the plugin's synchronisation (the saved budget is
/// stored before the worker enters `schedule`, and read after another worker's `schedule`
/// returned the job); Release/Acquire make it explicit.
struct TaskExec {
    seq: AtomicU32,
    remaining: AtomicU64,
    /// A user job's next step (its resume point).
    step: AtomicU64,
    wss: Vec<std::sync::atomic::AtomicU64>,
}

struct Shared<'a> {
    plugin: &'a dyn Plugin,
    cfg: &'a RunConfig,
    signals: Vec<CpuSignal>,
    exec: Vec<TaskExec>,
    wcet: Vec<u64>,
    t0: u64,
    /// The end of the run (monotonic ns); lowered to the stop time by an early stop.
    end: AtomicU64,
    /// The stop time, if the run was stopped early.
    stopped_at: AtomicU64,
    abort: AtomicBool,
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
        self.end.load(Ordering::Relaxed)
    }

    fn stopped(&self, now: u64) -> bool {
        now >= self.end() || self.abort.load(Ordering::Relaxed)
    }

    /// Runs the release handler of `domain` if it is due and this CPU wins it.
    fn maybe_release(&self, ctx: &mut Ctx<'_>, domain: usize, now: u64) {
        let due = self.plugin.next_release(domain);
        if due <= now && self.plugin.try_claim_release(domain, due) {
            ctx.trace.record(RecKind::ReleaseStart, domain as u32, 0, due);
            self.plugin.release(ctx, domain, now);
            ctx.trace.record(RecKind::ReleaseEnd, domain as u32, 0, 0);
            ctx.flush_wakes();
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

fn worker(sh: &Shared<'_>, idx: usize, mut trace: TraceBuffer, barrier: &Barrier) -> (TraceBuffer, u64) {
    setup_thread(sh, idx, sh.cfg.cpus[idx], sh.cfg.rt_priority);
    barrier.wait();
    let mut max_gap = 0u64;
    if sh.abort.load(Ordering::SeqCst) {
        return (trace, max_gap);
    }
    clock::sleep_until(sh.t0);
    let plugin = sh.plugin;
    let dom = plugin.release_domain(idx);
    let sig = &sh.signals[idx];
    let mut ctx = Ctx::new(idx, &mut trace, &sh.signals);
    let mut prev = Prev::Idle;
    'outer: loop {
        let now = clock::monotonic_ns();
        if sh.stopped(now) {
            break;
        }
        if let Some(d) = dom {
            sh.maybe_release(&mut ctx, d, now);
        }
        if let Some(stamp) = sig.take() {
            if stamp != 0 {
                ctx.trace.record(RecKind::IpiNoticed, idx as u32, 0, stamp);
            }
        }
        ctx.trace.record(RecKind::SchedStart, 0, 0, 0);
        let next = plugin.schedule(&mut ctx, prev);
        ctx.trace.record(RecKind::SchedEnd, 0, 0, 0);
        ctx.flush_wakes();
        prev = Prev::Idle;
        let Some(job) = next else {
            idle(sh, sig, dom);
            continue;
        };
        ctx.trace.record(RecKind::CxsStart, job.task, job.seq, 0);
        let ex = &sh.exec[job.task as usize];
        let fresh = ex.seq.load(Ordering::Acquire) != job.seq;
        let mut remaining = if fresh {
            let c = sh.cfg.exec.cost(sh.cfg.seed, job.task, job.seq, sh.wcet[job.task as usize]);
            ex.remaining.store(c, Ordering::Relaxed);
            ex.step.store(0, Ordering::Relaxed);
            ex.seq.store(job.seq, Ordering::Release);
            c
        } else {
            ex.remaining.load(Ordering::Acquire)
        };
        ctx.trace.record(RecKind::CxsEnd, job.task, job.seq, 0);
        let kind = if fresh { RecKind::JobStart } else { RecKind::JobResume };
        ctx.trace.record(kind, job.task, job.seq, remaining);
        let user = sh.cfg.user_jobs.get(job.task as usize);
        let mut step = ex.step.load(Ordering::Acquire);
        loop {
            let poll = |now: u64| sig.is_set() || now >= sh.end() || dom.is_some_and(|d| now >= plugin.next_release(d));
            let done = match user {
                None => {
                    let (used, why, gap) = body::spin(remaining, &ex.wss, poll);
                    max_gap = max_gap.max(gap);
                    remaining = remaining.saturating_sub(used);
                    why == Stop::Done || remaining == 0
                }
                Some(b) => {
                    let done = crate::user::run_steps(b, job.task as usize, job.seq, idx, &mut step, &|| {
                        poll(clock::monotonic_ns())
                    });
                    ex.step.store(step, Ordering::Release);
                    done
                }
            };
            if done {
                ctx.trace.record(RecKind::JobComplete, job.task, job.seq, 0);
                ex.remaining.store(0, Ordering::Release);
                prev = Prev::Completed(job);
                break;
            }
            ex.remaining.store(remaining, Ordering::Release);
            let now = clock::monotonic_ns();
            if sh.stopped(now) {
                break 'outer;
            }
            if let Some(d) = dom {
                sh.maybe_release(&mut ctx, d, now);
            }
            if sig.is_set() {
                ctx.trace.record(RecKind::JobPreempt, job.task, job.seq, remaining);
                prev = Prev::Preempted(job);
                break;
            }
        }
    }
    // A completion must reach the plugin, or its accounting would miss it.
    if let Prev::Completed(_) = prev {
        ctx.trace.record(RecKind::SchedStart, 0, 0, 0);
        plugin.schedule(&mut ctx, prev);
        ctx.trace.record(RecKind::SchedEnd, 0, 0, 0);
        ctx.flush_wakes();
    }
    drop(ctx);
    (trace, max_gap)
}

fn idle(sh: &Shared<'_>, sig: &CpuSignal, dom: Option<usize>) {
    loop {
        let now = clock::monotonic_ns();
        if sh.stopped(now) || sig.is_set() {
            return;
        }
        let due = dom.map_or(u64::MAX, |d| sh.plugin.next_release(d));
        if due <= now {
            return;
        }
        match sh.cfg.idle {
            IdleMode::Spin => std::hint::spin_loop(),
            IdleMode::Sleep => {
                let wake = due.min(sh.end());
                sig.sleep(wake.saturating_sub(now).min(1_000_000));
            }
        }
    }
}

/// The dedicated release thread (GSN-EDF-DI): sleeps (or spins) until the next due release
/// and runs the handlers; index `m` in traces.
fn releaser(sh: &Shared<'_>, idx: usize, cpu: usize, mut trace: TraceBuffer, barrier: &Barrier) -> TraceBuffer {
    setup_thread(sh, idx, cpu, sh.cfg.rt_priority);
    barrier.wait();
    if sh.abort.load(Ordering::SeqCst) {
        return trace;
    }
    clock::sleep_until(sh.t0);
    let plugin = sh.plugin;
    let mut ctx = Ctx::new(idx, &mut trace, &sh.signals);
    loop {
        let now = clock::monotonic_ns();
        if sh.stopped(now) {
            break;
        }
        let mut next = u64::MAX;
        for d in 0..plugin.release_domains() {
            sh.maybe_release(&mut ctx, d, now);
            next = next.min(plugin.next_release(d));
        }
        let wake = next.min(sh.end());
        match sh.cfg.idle {
            IdleMode::Spin => {
                while clock::monotonic_ns() < wake.min(sh.end()) && !sh.abort.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            }
            // Slices of at most 10 ms, so an early stop is noticed.
            IdleMode::Sleep => clock::sleep_until(wake.min(clock::monotonic_ns() + 10_000_000)),
        }
    }
    drop(ctx);
    trace
}

/// Runs `ts` under `mech` on real cores (see the module docs).
pub fn run(ts: &TaskSet, mech: &Mechanism, cfg: &RunConfig) -> Result<RunResult, RunError> {
    cfg.validate(ts, mech)?;
    if let Mechanism::KernelSd = mech {
        return crate::kernel_sd::run(ts, cfg);
    }
    let m = cfg.cpus.len();
    let params: Vec<TaskParams> = ts.iter().map(|t| TaskParams { deadline: t.deadline, period: t.period }).collect();
    let cal_a = ClockPair::now();
    let t0 = clock::monotonic_ns() + cfg.start_delay_ns;
    let end = t0 + cfg.duration_ns;
    let plugin: Box<dyn Plugin> = match mech {
        Mechanism::Pedf { partition } => Box::new(Pedf::new(&params, partition, t0, end)),
        Mechanism::Pfp { partition, ranks } => {
            let ranks = ranks.clone().unwrap_or_else(|| deadline_monotonic_ranks(ts));
            Box::new(Pedf::with_ranks(&params, partition, Some(ranks), t0, end))
        }
        Mechanism::GsnEdf => Box::new(GsnEdf::new(&params, m, false, t0, end)),
        Mechanism::GsnEdfDi => Box::new(GsnEdf::new(&params, m, true, t0, end)),
        Mechanism::KernelSd => unreachable!("handled above"),
    };
    let threads = m + usize::from(cfg.dedicated_cpu.is_some());
    let sh = Shared {
        plugin: plugin.as_ref(),
        cfg,
        signals: (0..m).map(|_| CpuSignal::new()).collect(),
        exec: ts
            .iter()
            .map(|_| TaskExec {
                seq: AtomicU32::new(u32::MAX),
                remaining: AtomicU64::new(0),
                step: AtomicU64::new(0),
                wss: body::working_set(cfg.wss_bytes),
            })
            .collect(),
        wcet: ts.iter().map(|t| t.wcet).collect(),
        t0,
        end: AtomicU64::new(end),
        stopped_at: AtomicU64::new(u64::MAX),
        abort: AtomicBool::new(false),
        tids: (0..threads).map(|_| AtomicI32::new(0)).collect(),
        setup_error: std::sync::Mutex::new(None),
    };
    let barrier = Barrier::new(threads);
    let done = AtomicBool::new(false);
    let mut watchdog_fired = false;
    let (traces, max_gap) = std::thread::scope(|s| {
        let wd = s.spawn(|| watchdog(&sh, &done));
        let hs: Vec<_> = (0..m)
            .map(|i| {
                let tb = TraceBuffer::new(i as u16, cfg.trace_capacity);
                let (shr, b) = (&sh, &barrier);
                s.spawn(move || worker(shr, i, tb, b))
            })
            .collect();
        let rel = cfg.dedicated_cpu.map(|c| {
            let tb = TraceBuffer::new(crate::tracer::RELEASE_CPU, cfg.trace_capacity);
            let (shr, b) = (&sh, &barrier);
            s.spawn(move || releaser(shr, m, c, tb, b))
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
    if watchdog_fired {
        return Err(RunError::Failed(
            "the watchdog ended the run: a thread did not stop within 1 s after the end".into(),
        ));
    }
    // Jobs due before the end whose release handler had not run when the threads stopped
    // (a worker descheduled by the host near the end) are released now, as pending jobs:
    // every job due in [0, duration) is released, however late its handler ran.
    let mut traces = traces;
    let stopped_at = sh.stopped_at.load(Ordering::SeqCst);
    let interrupted = stopped_at != u64::MAX;
    let end = if interrupted {
        // A handler that raced with the stop may have released jobs due after the stop time.
        let last_due = traces
            .iter()
            .flat_map(|b| b.records())
            .filter(|r| r.kind == RecKind::JobRelease)
            .map(|r| r.arg)
            .max()
            .unwrap_or(t0);
        stopped_at.max(last_due + 1).clamp(t0 + 1, end)
    } else {
        end
    };
    // Sized for exactly the releases still missing (a worker descheduled by the host for
    // many periods leaves many), so the drain itself never drops a record.
    let before = plugin.accounting().released;
    let missing: u64 =
        ts.iter().zip(&before).map(|(t, &r)| (end - t0).div_ceil(t.period).saturating_sub(r as u64)).sum();
    let mut drain =
        TraceBuffer::new(crate::tracer::RELEASE_CPU - 1, missing as usize + 2 * plugin.release_domains() + 16);
    {
        let mut ctx = Ctx::new(m, &mut drain, &sh.signals);
        for d in 0..plugin.release_domains() {
            if plugin.next_release(d) < end {
                ctx.trace.record(RecKind::ReleaseStart, d as u32, 0, plugin.next_release(d));
                plugin.release(&mut ctx, d, end - 1);
                ctx.trace.record(RecKind::ReleaseEnd, d as u32, 0, 0);
                ctx.flush_wakes();
            }
        }
    }
    if !drain.records().is_empty() {
        traces.push(drain);
    }
    let cal = TscCalibration::from_pairs(cal_a, ClockPair::now());
    let acc = plugin.accounting();
    Ok(RunResult::build(ts, mech.name(), cfg, t0, end - t0, interrupted, &cal, traces, acc, max_gap))
}

/// Ends a run early when `cfg.stop` is set (moves the end to now and wakes the sleepers),
/// and ends a run that overstays: one second after the end it sets the abort flag and demotes
/// every thread to SCHED_OTHER; returns whether it had to.
fn watchdog(sh: &Shared<'_>, done: &AtomicBool) -> bool {
    if let Some(p) = sh.cfg.rt_priority {
        let _ = platform::set_fifo(0, p + 1);
    }
    loop {
        if done.load(Ordering::SeqCst) {
            return false;
        }
        let now = clock::monotonic_ns();
        if sh.stopped_at.load(Ordering::Relaxed) == u64::MAX
            && sh.cfg.stop.as_ref().is_some_and(|f| f.load(Ordering::SeqCst))
        {
            let at = now.max(sh.t0);
            if at < sh.end() {
                sh.stopped_at.store(at, Ordering::SeqCst);
                sh.end.store(at, Ordering::SeqCst);
                for s in &sh.signals {
                    s.kick();
                }
            }
        }
        let limit = sh.end() + 1_000_000_000;
        if now >= limit {
            sh.abort.store(true, Ordering::SeqCst);
            for t in &sh.tids {
                let tid = t.load(Ordering::SeqCst);
                if tid != 0 {
                    platform::set_normal(tid);
                }
            }
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
