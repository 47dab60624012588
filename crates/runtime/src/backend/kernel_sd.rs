//! The kernel peer: the same synthetic workload as Linux `SCHED_DEADLINE` threads
//! (Lelli et al., seed 002; as compared in seed 000 §II-C and App. A).
//!
//! One thread per task, globally scheduled by the kernel over the whole root domain (its
//! affinity must be every CPU of it, so `cpus` must list every CPU this process may use).
//! Each thread calls `sched_setattr(SCHED_DEADLINE, runtime, deadline, period)` itself with
//! `runtime = min(D, WCET + max(WCET/20, 20 µs))` (≥ WCET: the slack covers the kernel's
//! own accounting of the wake-up path, so a job is not throttled before it finishes) — the
//! kernel requires runtime ≤ deadline ≤ period, so D > T is refused. Then, exactly like
//! seed 000 Fig. 9: a barrier, a common start time, and a loop of: sleep until the absolute
//! release time, burn the job's cost, `next_release += T`. A tardy job delays the next one,
//! which starts as soon as it completes (no job is lost). The sleep is a `FUTEX_WAIT_BITSET`
//! with the same absolute monotonic expiry as `clock_nanosleep(TIMER_ABSTIME)` and no timer
//! slack, so that an early stop (`RunConfig::stop`, polled by a watcher thread every 5 ms)
//! can wake it.
//!
//! Self-suspending jobs (segments: `RunConfig::suspensions`, else the task set's own): the
//! body burns each execution segment and then really sleeps for the suspension (the same
//! futex sleep as the release's, to an absolute time, so a stop still wakes it); the kernel
//! blocks the thread and, when the timer wakes it, applies SCHED_DEADLINE's wake-up rule to
//! its reservation (docs/mechanisms/kernel-sd.md, "Self-suspending jobs"). Traced as the
//! engine traces a block: `JobSuspend` when it goes to sleep, `JobWake` and `JobResume` when
//! the thread runs again (the kernel's own wake-up instant is not observable from user space:
//! the recorded resumption is when the thread ran after it).
//!
//! The body measures cost with `CLOCK_THREAD_CPUTIME_ID`: the kernel preempts the thread
//! invisibly, so wall time would count other threads' execution. What user space can
//! measure here is release latency (due → the thread runs: timer, wake-up, scheduling and
//! context switch together) and the schedule; Δsch and Δcxs inside the kernel need kernel
//! tracing and are not reported (their samples are empty).

use super::lifecycle::{missing_releases, Lifecycle, DRAIN_CPU};
use super::result::{RunInfo, RunResult};
use crate::body::CHUNK;
use crate::clock::{self, ClockPair, TscCalibration};
use crate::config::RunConfig;
use crate::mechanism::{Accounting, Mechanism};
use crate::tracer::{RecKind, TraceBuffer};
use crate::{platform, RunError};
use rtsched_model::TaskSet;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Barrier, Mutex};

const SCHED_DEADLINE: u32 = 6;

#[repr(C)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
}

/// The kernel's real-time bandwidth limit, read from /proc (runtime_us, period_us).
pub fn rt_bandwidth_limit() -> Option<(i64, i64)> {
    let rd = |p: &str| std::fs::read_to_string(p).ok()?.trim().parse::<i64>().ok();
    Some((rd("/proc/sys/kernel/sched_rt_runtime_us")?, rd("/proc/sys/kernel/sched_rt_period_us")?))
}

/// The reservation used for a task (ns): (runtime, deadline, period).
pub fn reservation(wcet: u64, deadline: u64, period: u64) -> (u64, u64, u64) {
    let runtime = (wcet + (wcet / 20).max(20_000)).min(deadline).max(1024);
    (runtime, deadline, period)
}

/// The kernel release as (major, minor), from /proc/sys/kernel/osrelease.
fn kernel_version() -> Option<(u32, u32)> {
    let r = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    let mut it = r.trim().split(|c: char| !c.is_ascii_digit());
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// Bandwidth per CPU that Linux ≥ 6.12 reserves for the fair server (`dl_server`: 50 ms every
/// 1 s by default, tunable in /sys/kernel/debug/sched/fair_server/cpuN/), which is charged
/// against the same deadline admission limit as user tasks. `None` before 6.12.
pub fn fair_server_bandwidth_per_cpu() -> Option<f64> {
    kernel_version().filter(|&v| v >= (6, 12)).map(|_| 0.05)
}

fn admission_message(task: usize, err: std::io::Error, ts: &TaskSet, m: usize) -> RunError {
    let total: f64 = ts
        .iter()
        .map(|t| {
            let (q, _, p) = reservation(t.wcet, t.deadline, t.period);
            q as f64 / p as f64
        })
        .sum();
    let util: f64 = ts.iter().map(|t| t.wcet as f64 / t.period as f64).sum();
    match err.raw_os_error() {
        Some(libc::EBUSY) => {
            let limit = match rt_bandwidth_limit() {
                Some((r, p)) if r < 0 => {
                    format!("sched_rt_runtime_us = -1 disables the limit, so the root domain refused it: {r}/{p}")
                }
                Some((r, p)) => {
                    let cap = m as f64 * r as f64 / p as f64;
                    let fair = match fair_server_bandwidth_per_cpu() {
                        Some(f) => format!(
                            ", minus what is already reserved: on Linux ≥ 6.12 each CPU's fair-server \
                             (dl_server) reservation, 50 ms every 1 s = {f:.3} per CPU by default, \
                             {:.3} here, leaving {:.3} for deadline tasks, and any other deadline \
                             tasks on this machine",
                            f * m as f64,
                            cap - f * m as f64
                        ),
                        None => ", minus the bandwidth of any other deadline tasks on this machine".into(),
                    };
                    format!(
                        "the kernel limit is m × sched_rt_runtime_us / sched_rt_period_us = \
                         {m} × {r} / {p} = {cap:.3}{fair}"
                    )
                }
                None => "the limit in /proc/sys/kernel/sched_rt_runtime_us could not be read".into(),
            };
            RunError::Admission(format!(
                "SCHED_DEADLINE admission failed (EBUSY) at task {task}: the reservations' total \
                 bandwidth {total:.3} (task utilization {util:.3}; each runtime is the WCET plus \
                 max(5 %, 20 µs)) exceeds what the kernel admits; {limit}. Lower the utilization, \
                 or raise kernel.sched_rt_runtime_us (-1 turns deadline admission control off)"
            ))
        }
        Some(libc::EPERM) => RunError::Admission("SCHED_DEADLINE needs root or CAP_SYS_NICE".into()),
        Some(libc::EINVAL) => {
            let (q, d, p) = ts.tasks().get(task).map_or((0, 0, 0), |t| reservation(t.wcet, t.deadline, t.period));
            let rd = |f: &str| {
                std::fs::read_to_string(format!("/proc/sys/kernel/{f}")).ok().and_then(|x| x.trim().parse::<u64>().ok())
            };
            let bounds = match (rd("sched_deadline_period_min_us"), rd("sched_deadline_period_max_us")) {
                (Some(lo), Some(hi)) => {
                    format!("{lo} µs ≤ period ≤ {hi} µs (sched_deadline_period_min_us / _max_us)")
                }
                _ => "the period within the kernel's sched_deadline_period_min_us / _max_us".into(),
            };
            RunError::Admission(format!(
                "SCHED_DEADLINE refused task {task} (EINVAL): its reservation runtime {q} ns, deadline {d} ns, \
                 period {p} ns must satisfy 1024 ns ≤ runtime ≤ deadline ≤ period and {bounds}"
            ))
        }
        _ => RunError::Admission(format!("sched_setattr(SCHED_DEADLINE) failed for task {task}: {err}")),
    }
}

fn set_deadline(runtime: u64, deadline: u64, period: u64) -> Result<(), std::io::Error> {
    let attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_policy: SCHED_DEADLINE,
        sched_flags: 0,
        sched_nice: 0,
        sched_priority: 0,
        sched_runtime: runtime,
        sched_deadline: deadline,
        sched_period: period,
    };
    // SAFETY: `attr` is a valid sched_attr (size set) for the duration of the call.
    let r = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0u32) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Runs `ts` under SCHED_DEADLINE (called by `backend::run` after validation).
pub(crate) fn run(ts: &TaskSet, mech: &Mechanism, cfg: &RunConfig) -> Result<RunResult, RunError> {
    let allowed = platform::allowed_cpus();
    let mut cpus = cfg.cpus.clone();
    cpus.sort_unstable();
    if cpus != allowed {
        return Err(RunError::Cpus(format!(
            "kernel-sd schedules globally over the root domain: the CPU list must be every CPU this \
             process may use, {allowed:?} (got {:?})",
            cfg.cpus
        )));
    }
    for (i, t) in ts.iter().enumerate() {
        if t.deadline > t.period {
            return Err(RunError::Admission(format!(
                "SCHED_DEADLINE needs deadline ≤ period, task {i} has D = {} > T = {}",
                t.deadline, t.period
            )));
        }
    }
    let n = ts.len();
    let susp = crate::body::Suspensions::effective(&cfg.suspensions, ts);
    let cal_a = ClockPair::now();
    // The end of the run is lowered to the stop time by an early stop (`cfg.stop`); a thread
    // sleeping towards its next release is woken through `stop_word`.
    let life = Lifecycle::new(cfg.start_delay_ns, cfg.duration_ns);
    let t0 = life.t0;
    let stop_word = AtomicU32::new(0);
    let done = AtomicBool::new(false);
    let abort = AtomicBool::new(false);
    let err: Mutex<Option<RunError>> = Mutex::new(None);
    let barrier = Barrier::new(n);
    let idx_of = |c: u32| cfg.cpus.iter().position(|&x| x == c as usize).unwrap_or(0) as u16;
    let per_thread = (cfg.trace_capacity / n.max(1)).max(1024);
    let results: Vec<(TraceBuffer, u32, u32)> = std::thread::scope(|s| {
        let watcher = cfg.stop.as_deref().map(|flag| {
            let (life, stop_word, done) = (&life, &stop_word, &done);
            s.spawn(move || life.watch(Some(flag), done, || clock::wake_sleepers(stop_word), |_| false))
        });
        let hs: Vec<_> = ts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let (abort, err, barrier, idx_of, susp) = (&abort, &err, &barrier, &idx_of, &susp);
                let (life, stop_word) = (&life, &stop_word);
                s.spawn(move || {
                    let mut tb = TraceBuffer::new(i as u16, per_thread);
                    // The release sleep is a futex wait (so a stop can interrupt it); with
                    // no timer slack its expiry is as precise as clock_nanosleep's is for a
                    // deadline task. SAFETY: prctl with integer arguments only.
                    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
                    let (q, d, p) = reservation(t.wcet, t.deadline, t.period);
                    if let Err(e) = set_deadline(q, d, p) {
                        let mut g = err.lock().unwrap_or_else(|x| x.into_inner());
                        if g.is_none() {
                            *g = Some(admission_message(i, e, ts, cfg.cpus.len()));
                        }
                        abort.store(true, Ordering::SeqCst);
                    }
                    barrier.wait();
                    let (mut released, mut completed) = (0u32, 0u32);
                    if abort.load(Ordering::SeqCst) {
                        return (tb, released, completed);
                    }
                    let end_now = || life.end();
                    let mut k = 0u32;
                    let mut x = 1.000_000_1f64;
                    loop {
                        let due = t0 + k as u64 * t.period;
                        while clock::monotonic_ns() < due && due < end_now() {
                            clock::sleep_until_or(due, stop_word);
                        }
                        if due >= end_now() {
                            break;
                        }
                        let cpu = idx_of(platform::current_cpu());
                        tb.record_on(cpu, RecKind::JobRelease, i as u32, k, due);
                        released += 1;
                        if clock::monotonic_ns() >= end_now() {
                            break;
                        }
                        tb.record_on(cpu, RecKind::JobStart, i as u32, k, 0);
                        let cost = cfg.exec.cost(cfg.seed, i as u32, k, t.wcet);
                        let c0 = clock::thread_cpu_ns();
                        let mut finished = false;
                        let mut taken = 0u32;
                        'job: loop {
                            // The execution due before the next suspension (a job drawn shorter
                            // than its WCET skips the suspensions after its work, as the engine's body).
                            let next = susp.next(i, taken).filter(|&(before, _)| before < cost);
                            let until = next.map_or(cost, |(before, _)| before);
                            loop {
                                for _ in 0..CHUNK {
                                    x = x * 1.000_000_01 + 1e-12;
                                }
                                if clock::thread_cpu_ns() - c0 >= until {
                                    break;
                                }
                                if clock::monotonic_ns() >= end_now() {
                                    break 'job;
                                }
                            }
                            let Some((_, d)) = next else {
                                finished = true;
                                break;
                            };
                            // Self-suspension: a real sleep; the kernel blocks the thread and
                            // applies its wake-up rule when it wakes.
                            taken += 1;
                            let left = cost.saturating_sub(clock::thread_cpu_ns() - c0);
                            tb.record_on(idx_of(platform::current_cpu()), RecKind::JobSuspend, i as u32, k, left);
                            let wake = clock::monotonic_ns().saturating_add(d);
                            while clock::monotonic_ns() < wake.min(end_now()) {
                                clock::sleep_until_or(wake.min(end_now()), stop_word);
                            }
                            if clock::monotonic_ns() >= end_now() {
                                break;
                            }
                            let cpu = idx_of(platform::current_cpu());
                            tb.record_on(cpu, RecKind::JobWake, i as u32, k, 0);
                            tb.record_on(cpu, RecKind::JobResume, i as u32, k, left);
                        }
                        if !finished {
                            break;
                        }
                        tb.record_on(idx_of(platform::current_cpu()), RecKind::JobComplete, i as u32, k, 0);
                        completed += 1;
                        k += 1;
                    }
                    std::hint::black_box(x);
                    (tb, released, completed)
                })
            })
            .collect();
        let out = hs.into_iter().filter_map(|h| h.join().ok()).collect();
        done.store(true, Ordering::SeqCst);
        if let Some(w) = watcher {
            let _ = w.join();
        }
        out
    });
    if let Some(e) = err.lock().unwrap_or_else(|x| x.into_inner()).take() {
        return Err(e);
    }
    if results.len() != n {
        return Err(RunError::Failed("a SCHED_DEADLINE thread panicked".into()));
    }
    let mut acc = Accounting { released: vec![0; n], completed: vec![0; n], consistent: Ok(()) };
    // A thread that raced with the stop may have released a job due after the stop time.
    let last_due = results
        .iter()
        .enumerate()
        .filter(|(_, (_, r, _))| *r > 0)
        .map(|(i, (_, r, _))| t0 + (*r as u64 - 1) * ts.tasks()[i].period)
        .max();
    let end = life.effective_end(last_due);
    // Jobs due before the end that a thread never reached (it was still busy with a tardy
    // job, or stopped) are released now, and stay pending; their records go to a drain
    // buffer sized for exactly them.
    let released: Vec<u32> = results.iter().map(|(_, r, _)| *r).collect();
    let missing = missing_releases(ts, t0, end, &released);
    let mut drain = TraceBuffer::new(DRAIN_CPU, missing as usize);
    let mut traces = Vec::with_capacity(n + 1);
    for (i, (tb, mut r, c)) in results.into_iter().enumerate() {
        let period = ts.tasks()[i].period;
        while t0 + r as u64 * period < end {
            let due = t0 + r as u64 * period;
            drain.record_on(DRAIN_CPU, RecKind::JobRelease, i as u32, r, due);
            r += 1;
        }
        acc.released[i] = r;
        acc.completed[i] = c;
        traces.push(tb);
    }
    if !drain.records().is_empty() {
        traces.push(drain);
    }
    let cal = TscCalibration::from_pairs(cal_a, ClockPair::now());
    let info = RunInfo::of(mech, ts, cfg.cpus.len());
    Ok(RunResult::build(ts, info, cfg, t0, end - t0, life.interrupted(), &cal, traces, acc, 0))
}
