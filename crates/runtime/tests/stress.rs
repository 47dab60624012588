//! Stress test: every mechanism with random task sets (light to overloaded), random short
//! durations (50–300 ms), random idle modes, execution-time models, CPU counts and — in
//! about a quarter of the cases — an early stop, at normal priority. Each run is checked for
//! job accounting and trace well-formedness by an oracle written here, independent of
//! `RunResult::check_trace` (which must agree).
//!
//! Reproducible: `RTSCHED_STRESS_SEED` (default below) and `RTSCHED_STRESS_CASES` (runs per
//! user-space mechanism; kernel-sd gets half) pick the cases; a failure names its seed and
//! case. About 10 s of wall time with the defaults (54 runs) on this 2-core machine, plus
//! about as much for the seven RTSS'09 plugins (6 runs each).

mod common;
use common::Rng;

use rtsched_model::TaskSet;
use rtsched_runtime::platform::allowed_cpus;
use rtsched_runtime::tracer::{RecKind, RELEASE_CPU};
use rtsched_runtime::{run, ExecTime, IdleMode, Mechanism, RunConfig, RunResult};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The registered mechanism `name`.
fn mech(name: &str) -> Mechanism {
    Mechanism::named(name).unwrap()
}
const MS: u64 = 1_000_000;
const DEFAULT_SEED: u64 = 0x5eed_2026;
const DEFAULT_CASES: usize = 12;

/// The two tests take turns (two runs pinned to one core would slow each other).
static RUNS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    RUNS.lock().unwrap_or_else(|p| p.into_inner())
}

/// `name` from the environment (decimal, or hex with `0x`), else `default`; a value that does
/// not parse fails the test rather than silently running the default cases.
fn env_or(name: &str, default: u64) -> u64 {
    let Ok(v) = std::env::var(name) else { return default };
    let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    };
    parsed.unwrap_or_else(|| panic!("{name}={v:?} is not a number (decimal or 0x-hex)"))
}

/// n tasks, periods 1–20 ms, total utilization `u` split at random; implicit deadlines, or
/// constrained ones (D in [C, T]) when `constrained`.
fn random_set(rng: &mut Rng, n: usize, u: f64, constrained: bool) -> TaskSet {
    let w: Vec<f64> = (0..n).map(|_| 0.1 + rng.unit()).collect();
    let sum: f64 = w.iter().sum();
    let params: Vec<(u64, u64, u64)> = w
        .iter()
        .map(|wi| {
            let t = rng.range(MS, 20 * MS);
            let c = (((u * wi / sum) * t as f64) as u64).clamp(20_000, t);
            let d = if constrained { rng.range(c, t) } else { t };
            (c, d, t)
        })
        .collect();
    TaskSet::from_cdt(&params).unwrap()
}

/// RUN's and QPS's sets (`run`, `qps-g`, `qps-c`): n tasks at most, implicit deadlines, total utilization at most
/// `frac` × m (exact), periods 2–20 ms and WCETs in multiples of 100 µs, so that the reduction's
/// exact budgets keep a small common denominator (a least common multiple of 20 ms).
fn run_set(rng: &mut Rng, n: usize, m: usize, frac: f64) -> TaskSet {
    const UNIT: u64 = 100_000; // 100 µs
    let periods = [20u64, 40, 50, 100, 200]; // in units
    let cap = ((m as f64 * frac * 200.0) as u64).max(1); // in 1/200ths
    let (mut used, mut tasks) = (0u64, Vec::new());
    for _ in 0..n {
        let t = periods[rng.below(periods.len() as u64) as usize];
        let c = rng.range(1, t);
        let u = c * (200 / t);
        if used + u > cap {
            break;
        }
        used += u;
        tasks.push((c * UNIT, t * UNIT));
    }
    if tasks.is_empty() {
        tasks.push((UNIT, 20 * UNIT));
    }
    TaskSet::from_ct(&tasks).unwrap()
}

/// The independent oracle. `m` = scheduling CPUs; `per_cpu_buffers` = buffer b is CPU b
/// (false under kernel-sd, whose buffers follow tasks and whose dispatching is invisible).
fn check(ts: &TaskSet, r: &RunResult, m: usize, per_cpu_buffers: bool) -> Result<(), String> {
    if r.dropped_records != 0 {
        // Name what filled the fullest buffer: a mechanism that records in a loop shows here.
        let (b, full) = r.traces.iter().enumerate().max_by_key(|(_, t)| t.len()).expect("a run has buffers");
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        for x in full {
            *kinds.entry(format!("{:?}/{}", x.kind, x.task)).or_default() += 1;
        }
        let mut top: Vec<_> = kinds.into_iter().collect();
        top.sort_by_key(|k| std::cmp::Reverse(k.1));
        top.truncate(6);
        return Err(format!(
            "{} records dropped; buffer {b} holds {} records, most of them {top:?}",
            r.dropped_records,
            full.len()
        ));
    }
    if let Some(e) = &r.accounting.error {
        return Err(format!("accounting: {e}"));
    }
    let a = &r.accounting;
    if a.released != a.completed + a.pending {
        return Err(format!("released {} != completed {} + pending {}", a.released, a.completed, a.pending));
    }
    // Nothing lost: every job due in [0, duration) is released, and no other.
    for (i, t) in ts.iter().enumerate() {
        let expect = r.duration_ns.div_ceil(t.period) as u32;
        if r.per_task.released[i] != expect {
            return Err(format!(
                "task {i}: released {} jobs, {expect} were due in [0, {})",
                r.per_task.released[i], r.duration_ns
            ));
        }
    }
    r.check_trace().map_err(|e| format!("check_trace: {e}"))?;

    // Per job: its records in a valid order (release; start; (preempt, resume)*; complete?),
    // start at or after the due release time, execution only on a scheduling CPU.
    #[derive(Default)]
    struct J {
        due: Option<u64>,
        release_ts: Option<u64>,
        events: Vec<(u64, RecKind, u16)>,
    }
    let mut jobs: BTreeMap<(u32, u32), J> = BTreeMap::new();
    let mut runs_on_cpu: BTreeMap<u16, Vec<(u64, u64, u32, u32)>> = BTreeMap::new();
    for (b, recs) in r.traces.iter().enumerate() {
        for x in recs {
            // Worker CPUs 0..m, the dedicated release thread, the end-of-run release drain.
            let valid_cpu = (x.cpu as usize) < m || x.cpu == RELEASE_CPU || x.cpu == RELEASE_CPU - 1;
            if !valid_cpu {
                return Err(format!("buffer {b}: record on CPU index {} (m = {m})", x.cpu));
            }
            let key = (x.task, x.job);
            match x.kind {
                RecKind::JobRelease => {
                    let j = jobs.entry(key).or_default();
                    if j.due.is_some() {
                        return Err(format!("job {key:?} released twice"));
                    }
                    j.due = Some(x.arg);
                    j.release_ts = Some(x.ts);
                }
                RecKind::JobStart | RecKind::JobResume | RecKind::JobPreempt | RecKind::JobComplete => {
                    if x.cpu as usize >= m {
                        return Err(format!("job {key:?} executes off the scheduling CPUs ({})", x.cpu));
                    }
                    jobs.entry(key).or_default().events.push((x.ts, x.kind, x.cpu));
                }
                _ => {}
            }
        }
    }
    let t0_of = |due_abs: u64, j: &(u32, u32)| -> u64 {
        // Due times are absolute; the job's release relative to time zero is job × T.
        due_abs - j.1 as u64 * ts.tasks()[j.0 as usize].period
    };
    let mut t0: Option<u64> = None;
    for (key, j) in &jobs {
        let Some(due) = j.due else {
            return Err(format!("job {key:?} runs but was never released"));
        };
        let z = t0_of(due, key);
        if *t0.get_or_insert(z) != z {
            return Err(format!("job {key:?}: due time {due} is not on its task's grid"));
        }
        let rel = key.1 as u64 * ts.tasks()[key.0 as usize].period;
        let mut ev = j.events.clone();
        ev.sort_by_key(|e| e.0);
        let mut running: Option<(u64, u16)> = None;
        let mut started = false;
        let mut done = false;
        for &(t, k, cpu) in &ev {
            if done {
                return Err(format!("job {key:?}: {} after its completion", k.name()));
            }
            match k {
                RecKind::JobStart | RecKind::JobResume => {
                    if (k == RecKind::JobStart) == started || running.is_some() {
                        return Err(format!("job {key:?}: {} out of order", k.name()));
                    }
                    if t < rel {
                        return Err(format!("job {key:?} starts at {t} before its release {rel}"));
                    }
                    if per_cpu_buffers && t < j.release_ts.unwrap() {
                        return Err(format!("job {key:?} starts before its release handler ran"));
                    }
                    started = true;
                    running = Some((t, cpu));
                }
                _ => {
                    let Some((s, c)) = running.take() else {
                        return Err(format!("job {key:?}: {} while not running", k.name()));
                    };
                    if per_cpu_buffers {
                        if c != cpu {
                            return Err(format!("job {key:?} stops on CPU {cpu}, ran on {c}"));
                        }
                        runs_on_cpu.entry(c).or_default().push((s, t, key.0, key.1));
                    }
                    done = k == RecKind::JobComplete;
                }
            }
        }
        if let (Some((s, c)), true) = (running, per_cpu_buffers) {
            runs_on_cpu.entry(c).or_default().push((s, u64::MAX, key.0, key.1));
        }
    }
    // No overlapping execution on one CPU.
    for (c, iv) in &mut runs_on_cpu {
        iv.sort_unstable();
        if let Some(w) = iv.windows(2).find(|w| w[1].0 < w[0].1) {
            return Err(format!("CPU {c}: {:?} and {:?} overlap", w[0], w[1]));
        }
    }
    // Jobs of a task in order: a job starts only after its predecessor completed, and the
    // completed jobs of a task are a prefix of its released jobs.
    for (i, _) in ts.iter().enumerate() {
        let recs: Vec<_> = r.jobs.iter().filter(|j| j.task == i as u32).collect();
        for (k, j) in recs.iter().enumerate() {
            if j.job != k as u32 {
                return Err(format!("task {i}: job #{k} is numbered {}", j.job));
            }
        }
        for w in recs.windows(2) {
            if w[1].finish_ns.is_some() && w[0].finish_ns.is_none() {
                return Err(format!("task {i}: job {} completed before job {}", w[1].job, w[0].job));
            }
            if let (Some(f), Some(s)) = (w[0].finish_ns, w[1].start_ns) {
                if s < f {
                    return Err(format!("task {i}: job {} starts before job {} completes", w[1].job, w[0].job));
                }
            }
            if w[0].finish_ns.is_none() && w[1].start_ns.is_some() {
                return Err(format!("task {i}: job {} starts while job {} is pending", w[1].job, w[0].job));
            }
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Pedf,
    Pfp,
    Gsn,
    GsnDi,
    GedfMp,
    /// G-EDF-MP with nothing that sleeps: `dsp=spin` and spinning clients (`IdleMode::Spin`),
    /// mailboxes of 2–4 slots (a client with a full mailbox waits for the DSP).
    GedfMpSpin,
    KernelSd,
    Spres,
    /// RTWS on sequential tasks (one region of one thread each); fork-join sets: tests/rtws.rs.
    Rtws,
    /// push-pull with the find-CPU variant `FIND_CPU[i]`, or push-pull-fp (cpupri).
    PushPull(usize),
    PushPullFp,
    /// A plugin of Brandenburg & Anderson, RTSS 2009, Table 1 (by its registry name).
    Rtss09(&'static str),
    /// RUN (Regnier et al., RTSS 2011) on its own sets (`run_set`).
    Run,
    /// QPS under one global lock or per-cluster locks (`qps-g`, `qps-c`), on RUN's sets.
    Qps(&'static str),
}

/// The RTSS'09 plugins the stress test runs (cem and ce1 are gsn-edf and gsn-edf-di).
const RTSS09: [&str; 7] = ["cqm", "fem", "hem", "cq1", "fe1", "s-cqm", "s-cq1"];

fn dedicated(kind: Kind) -> bool {
    match kind {
        Kind::GsnDi | Kind::GedfMp | Kind::GedfMpSpin => true,
        Kind::Rtss09(name) => name.ends_with('1'),
        _ => false,
    }
}

fn one_case(rng: &mut Rng, kind: Kind, cpus: &[usize]) -> Result<Option<String>, String> {
    let two = cpus.len() >= 2;
    let (m, worker_cpus, dedicated) = match kind {
        _ if dedicated(kind) && two => (1, vec![cpus[0]], Some(cpus[1])),
        _ if dedicated(kind) => return Ok(None),
        Kind::KernelSd => (cpus.len(), cpus.to_vec(), None),
        _ if two && rng.below(2) == 0 => (2, cpus[..2].to_vec(), None),
        _ => (1, vec![cpus[0]], None),
    };
    let n = rng.range(1, 8) as usize;
    // Light to overloaded; kernel-sd stays under the admission limit (m × 0.95 with the
    // reservation slack) but may hold a task whose C is close to D.
    let u = match kind {
        Kind::KernelSd => m as f64 * (0.1 + 0.4 * rng.unit()),
        _ => m as f64 * (0.2 + 1.3 * rng.unit()),
    };
    let constrained = rng.below(3) == 0;
    let ts = match kind {
        Kind::Run | Kind::Qps(_) => {
            let frac = 0.2 + 0.8 * rng.unit();
            run_set(rng, n, m, frac)
        }
        _ => random_set(rng, n, u, constrained),
    };
    let duration = rng.range(50, 300) * MS;
    let mut cfg = RunConfig::new(worker_cpus, duration);
    cfg.dedicated_cpu = dedicated;
    cfg.start_delay_ns = 30 * MS;
    cfg.seed = rng.next();
    let spin = rng.below(3) == 0 || matches!(kind, Kind::GedfMpSpin);
    cfg.idle = if spin { IdleMode::Spin } else { IdleMode::Sleep };
    if rng.below(2) == 0 {
        cfg.exec = ExecTime::Uniform { min_fraction: rng.unit() };
    }
    let stop_after = (rng.below(4) == 0).then(|| rng.range(0, 30 + duration / MS) * MS);
    let flag = Arc::new(AtomicBool::new(false));
    if stop_after.is_some() {
        cfg.stop = Some(flag.clone());
    }
    let mech = match kind {
        Kind::Pedf | Kind::Pfp => {
            let mut part = vec![Vec::new(); m];
            for t in 0..n {
                part[rng.below(m as u64) as usize].push(t);
            }
            if let Kind::Pedf = kind {
                mech("pedf").with_partition(part)
            } else {
                let ranks = (rng.below(2) == 0).then(|| {
                    let mut r: Vec<u64> = (0..n as u64).collect();
                    for i in (1..n).rev() {
                        r.swap(i, rng.below(i as u64 + 1) as usize);
                    }
                    r
                });
                let m = mech("pfp").with_partition(part);
                match ranks {
                    Some(r) => {
                        let list: Vec<String> = r.iter().map(|x| x.to_string()).collect();
                        m.with_param("priorities", &list.join(",")).unwrap()
                    }
                    None => m,
                }
            }
        }
        Kind::Gsn => mech("gsn-edf"),
        Kind::GsnDi => mech("gsn-edf-di"),
        // The scheduling processor spins always, in a window before releases, or sleeps;
        // mailboxes of a few slots.
        Kind::GedfMp => mech("gedf-mp")
            .with_param("dsp", ["spin", "window", "sleep"][rng.below(3) as usize])
            .and_then(|m| m.with_param("mailbox_size", &rng.range(4, 16).to_string()))
            .map_err(|e| e.to_string())?,
        Kind::GedfMpSpin => mech("gedf-mp")
            .with_param("dsp", "spin")
            .and_then(|m| m.with_param("mailbox_size", &rng.range(2, 4).to_string()))
            .map_err(|e| e.to_string())?,
        Kind::KernelSd => mech("kernel-sd"),
        Kind::Spres => {
            // The SP-RES cascade's placement (split tasks where it must), or, when it cannot
            // place the set (overload), a random partition as whole reservations.
            let p = rtsched_analysis::semi::cascade(&ts, m as u32, &rtsched_analysis::semi::SemiConfig::default());
            let base = if p.schedulable {
                mech("spres").with_reservations(p)
            } else {
                let mut part = vec![Vec::new(); m];
                for t in 0..n {
                    part[rng.below(m as u64) as usize].push(t);
                }
                mech("spres").with_partition(part)
            };
            let cash = if rng.below(2) == 0 { "true" } else { "false" };
            let soft = if rng.below(2) == 0 { "true" } else { "false" };
            base.with_params([("cash", cash), ("soft", soft), ("rr_quantum", "500us")]).unwrap()
        }
        Kind::Rtws => mech("rtws"),
        Kind::Run => mech("run"),
        Kind::Qps(name) => mech(name),
        Kind::PushPull(i) => {
            let v = rtsched_runtime::mechanism::push_pull::FIND_CPU[i];
            let retries = rng.range(1, 3).to_string();
            mech("push-pull").with_params([("find_cpu", v), ("retries", retries.as_str())]).unwrap()
        }
        Kind::PushPullFp => {
            let m = mech("push-pull-fp").with_param("op_spans", if rng.below(2) == 0 { "true" } else { "false" });
            m.unwrap()
        }
        Kind::Rtss09(name) => {
            let m = mech(name);
            if m.entry().param("quantum").is_some() {
                // Random quanta (0.5–2 ms), aligned or staggered.
                let q = format!("{}us", rng.range(500, 2000));
                let staggered = if rng.below(2) == 0 { "true" } else { "false" };
                m.with_param("quantum", &q).unwrap().with_param("staggered", staggered).unwrap()
            } else {
                m
            }
        }
    };
    let desc = format!(
        "{kind:?} m={m} n={n} U={u:.2} dur={}ms idle={:?} exec={:?} stop={stop_after:?} set={:?}",
        duration / MS,
        cfg.idle,
        cfg.exec,
        ts.iter().map(|t| (t.wcet, t.deadline, t.period)).collect::<Vec<_>>()
    );
    let stopper = stop_after.map(|after| {
        let f = flag.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_nanos(after));
            f.store(true, Ordering::SeqCst);
        })
    });
    let res = run(&ts, &mech, &cfg);
    if let Some(h) = stopper {
        h.join().unwrap();
    }
    let r = match res {
        Ok(r) => r,
        // kernel-sd only: this machine may refuse SCHED_DEADLINE, or other processes' deadline
        // tasks may hold the bandwidth (admission is machine-wide).
        Err(e)
            if matches!(kind, Kind::KernelSd)
                && (e.to_string().contains("CAP_SYS_NICE") || e.to_string().contains("EBUSY")) =>
        {
            return Ok(Some(format!("skipped: {e}")))
        }
        Err(e) => return Err(format!("{desc}: run failed: {e}")),
    };
    if stop_after.is_some() && r.interrupted != (r.duration_ns < duration) {
        return Err(format!("{desc}: interrupted = {} with duration {} of {duration}", r.interrupted, r.duration_ns));
    }
    if stop_after.is_none() && (r.interrupted || r.duration_ns != duration) {
        return Err(format!("{desc}: not stopped, but interrupted = {} duration {}", r.interrupted, r.duration_ns));
    }
    check(&ts, &r, m, !matches!(kind, Kind::KernelSd)).map_err(|e| format!("{desc}: {e}"))?;
    Ok(Some(format!(
        "{kind:?} m={m} n={n} U={u:.2} {} ms{}: {} jobs, {} misses",
        r.duration_ns / MS,
        if r.interrupted { " (stopped)" } else { "" },
        r.jobs.len(),
        r.deadline_misses()
    )))
}

#[test]
fn every_mechanism_survives_random_runs() {
    let _serial = serial();
    let seed = env_or("RTSCHED_STRESS_SEED", DEFAULT_SEED);
    let cases = env_or("RTSCHED_STRESS_CASES", DEFAULT_CASES as u64) as usize;
    let cpus = allowed_cpus();
    let t = std::time::Instant::now();
    let mut ran = 0;
    let kinds = [
        Kind::Pedf,
        Kind::Pfp,
        Kind::Gsn,
        Kind::GsnDi,
        Kind::KernelSd,
        Kind::Rtws,
        Kind::PushPull(0),
        Kind::PushPull(1),
        Kind::PushPull(2),
        Kind::PushPullFp,
        Kind::Spres,
        Kind::GedfMp,
        Kind::GedfMpSpin,
        Kind::Run,
        Kind::Qps("qps-g"),
        Kind::Qps("qps-c"),
    ];
    for (k, kind) in kinds.into_iter().chain(RTSS09.map(Kind::Rtss09)).enumerate() {
        // kernel-sd, each find-CPU variant of push-pull (three of one mechanism) and each RTSS'09
        // plugin get half.
        let half =
            matches!(kind, Kind::KernelSd | Kind::GedfMpSpin | Kind::PushPull(_) | Kind::Rtss09(_) | Kind::Qps(_));
        let count = if half { cases.div_ceil(2) } else { cases };
        for c in 0..count {
            // One generator per case, so a case reproduces alone.
            let mut rng = Rng(seed ^ ((k as u64) << 32 | c as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
            match one_case(&mut rng, kind, &cpus) {
                Ok(Some(line)) => {
                    ran += 1;
                    eprintln!("stress seed={seed:#x} {kind:?} case {c}: {line}");
                }
                Ok(None) => {}
                Err(e) => panic!("stress seed={seed:#x} {kind:?} case {c}: {e}"),
            }
        }
    }
    eprintln!("stress: {ran} runs in {:.1} s", t.elapsed().as_secs_f64());
    assert!(ran >= 4 * cases.min(1), "too few runs");
}

/// The oracle itself must be able to fail: corrupt a good run's trace in each way it checks.
#[test]
fn the_oracle_catches_corrupted_traces() {
    let _serial = serial();
    let cpus = allowed_cpus();
    let ts = TaskSet::from_ct(&[(MS, 4 * MS), (2 * MS, 6 * MS)]).unwrap();
    let mut cfg = RunConfig::new(vec![cpus[0]], 60 * MS);
    cfg.start_delay_ns = 30 * MS;
    let good = common::run_rt_if_permitted(&ts, &mech("gsn-edf"), &mut cfg);
    check(&ts, &good, 1, true).unwrap();
    let corrupt = |f: &dyn Fn(&mut RunResult)| {
        let mut r = good.clone();
        f(&mut r);
        check(&ts, &r, 1, true).is_err()
    };
    let first = |r: &RunResult, k: RecKind| r.traces[0].iter().position(|x| x.kind == k).unwrap();
    // A lost release.
    assert!(corrupt(&|r| {
        let i = first(r, RecKind::JobRelease);
        r.traces[0].remove(i);
    }));
    // A start before the due time.
    assert!(corrupt(&|r| {
        let i = first(r, RecKind::JobStart);
        r.traces[0][i].job += 5;
    }));
    // Execution recorded on a CPU outside the set.
    assert!(corrupt(&|r| {
        let i = first(r, RecKind::JobStart);
        r.traces[0][i].cpu = 7;
    }));
    // A completion dropped: accounting no longer adds up.
    assert!(corrupt(&|r| r.accounting.pending += 1));
    // Two jobs overlapping on the CPU: move a start before the previous completion.
    assert!(corrupt(&|r| {
        let c = first(r, RecKind::JobComplete);
        let s = r.traces[0][c..].iter().position(|x| x.kind == RecKind::JobStart).unwrap() + c;
        let t = r.traces[0][c].ts;
        r.traces[0][s].ts = t.saturating_sub(1);
        let rec = r.traces[0].remove(s);
        r.traces[0].insert(c, rec);
    }));
}
