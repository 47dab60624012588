//! Oracles for the `rtws` mechanism (RTWS on real threads, fork-join jobs; design note in
//! docs/mechanisms/rtws.md): every thread of every job executes exactly once, regions in order
//! (precedence, from the trace), jobs of a task in order, each steal is run by its thief;
//! deterministic stealing; a differential check against the simulator's RTWS
//! (`rtsched_sim::simulate_rtws`, the oracle) on the same sets; a fork-join stress test with
//! random sets, durations, idle modes, execution-time models and early stops (tests/stress.rs
//! takes only sequential task sets: it runs `rtws` on those, this file on fork-join ones).
//! No timing is asserted beyond "no miss with a large slack".

mod common;
use common::forkjoin::{cfg, check_fj, random_fj, run_fj_rt, MS};
use common::two_cpus;
use common::Rng;

use rtsched_model::forkjoin::{ForkJoinSet, ForkJoinTask};
use rtsched_runtime::platform::allowed_cpus;
use rtsched_runtime::{run_forkjoin, ExecTime, IdleMode, Mechanism, RunConfig, RunResult};
use rtsched_sim::{simulate_rtws, SimConfig};
use rtsched_trace::Event;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Runs one at a time (real threads on the same cores).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static L: std::sync::Mutex<()> = std::sync::Mutex::new(());
    L.lock().unwrap_or_else(|p| p.into_inner())
}

fn rtws() -> Mechanism {
    Mechanism::named("rtws").unwrap()
}

fn run_rt(set: &ForkJoinSet, c: RunConfig) -> RunResult {
    run_fj_rt(set, &rtws(), c)
}

/// One job forks two 20 ms threads on one CPU while the other is idle: the idle CPU must
/// steal (Rule E), so every job steals once and runs on both CPUs, and finishes well within
/// its deadline.
#[test]
fn an_idle_cpu_steals_from_a_forking_one() {
    let _s = serial();
    let Some(cpus) = two_cpus() else { return };
    let set = ForkJoinSet::new(vec![ForkJoinTask::implicit(100 * MS, vec![vec![MS], vec![20 * MS, 20 * MS]]).unwrap()])
        .unwrap();
    let r = run_rt(&set, cfg(cpus, 300));
    let jobs = check_fj(&set, &r).unwrap();
    assert_eq!(jobs.len(), 3);
    assert!(jobs.values().all(|j| j.finish.is_some()), "{jobs:?}");
    assert_eq!(r.metrics.steals, 3, "one steal per job");
    // Each job's two threads ran on different CPUs.
    let mut cpus_of: HashMap<(u32, u32), Vec<u32>> = HashMap::new();
    for x in &r.trace.records {
        if let Event::Run { cpu, job } = x.event {
            if job.task >= 1 {
                cpus_of.entry((job.job, job.task)).or_default().push(cpu);
            }
        }
    }
    for j in 0..3 {
        assert_ne!(cpus_of[&(j, 1)][0], cpus_of[&(j, 2)][0], "job {j}");
    }
    assert_eq!(r.deadline_misses(), 0);
    let s = r.summary_json();
    let st = &s["overheads"]["steal"];
    let taken = st["count"].as_u64().unwrap_or(0) + st["discarded"].as_u64().unwrap_or(0);
    assert!(taken >= 3, "{}", s["overheads"]);
}

/// The simulator's RTWS on the same set is the oracle: both release the same jobs and neither
/// misses; with `order`, every two jobs whose simulated completions are at least 1 ms apart
/// complete in the same order on threads (only where events coincide exactly in the
/// simulator: elsewhere the runtime's overheads of tens of microseconds reorder near-coincident
/// events, and a different steal cascades into completion times milliseconds apart). Prints the counts of both (steals, preemptions,
/// migrations, context switches) for docs/mechanisms/rtws.md.
fn differential(name: &str, set: &ForkJoinSet, horizon: u64, order: bool) {
    let Some(cpus) = two_cpus() else { return };
    let mut sc = SimConfig::new(2);
    sc.horizon = Some(horizon);
    let sim = simulate_rtws(set, &sc).unwrap();
    assert_eq!(sim.deadline_misses, 0, "{name}: the simulator misses");
    let mut c = cfg(cpus, horizon / MS);
    c.start_delay_ns = 100 * MS;
    let r = run_rt(set, c);
    let jobs = check_fj(set, &r).unwrap();
    let misses = jobs.values().filter(|j| j.deadline <= horizon && j.finish.is_none_or(|f| f > j.deadline)).count();
    let m = &r.metrics;
    eprintln!(
        "{name}: simulator {} jobs, {} steals, {} preemptions, {} migrations, {} context switches; \
         threads {} jobs, {} steals, {} preemptions, {} migrations, {} context switches, {misses} misses",
        sim.jobs,
        sim.steals,
        sim.preemptions,
        sim.migrations,
        sim.context_switches,
        jobs.len(),
        m.steals,
        m.preemptions,
        m.migrations,
        m.context_switches
    );
    assert_eq!(jobs.len() as u64, sim.jobs, "{name}");
    assert_eq!(misses, 0, "{name}: {jobs:?}");
    let sim_fin: Vec<((u32, u32), u64)> =
        sim.per_job.iter().filter_map(|j| j.finish.map(|f| ((j.task, j.job), f))).collect();
    if !order {
        return;
    }
    let mut compared = 0;
    for (a, fa) in &sim_fin {
        for (b, fb) in &sim_fin {
            if fa + MS <= *fb {
                let (ra, rb) = (jobs[a].finish.unwrap(), jobs[b].finish.unwrap());
                assert!(ra < rb, "{name}: job {a:?} completes before {b:?} in the simulator ({fa} < {fb}), not on threads ({ra}, {rb})");
                compared += 1;
            }
        }
    }
    assert!(compared > 100, "{name}: {compared}");
}

/// RTWS paper §V-A (Fig. 2), one unit = 3 ms, over one hyperperiod (380 units).
#[test]
fn the_paper_example_against_the_simulator() {
    let _s = serial();
    let u = 3 * MS;
    let set = ForkJoinSet::new(vec![
        ForkJoinTask::implicit(10 * u, vec![vec![3 * u], vec![u, u]]).unwrap(),
        ForkJoinTask::implicit(20 * u, vec![vec![2 * u], vec![u, 3 * u, u, 3 * u]]).unwrap(),
        ForkJoinTask::implicit(19 * u, vec![vec![4 * u]]).unwrap(),
    ])
    .unwrap();
    differential("paper example", &set, 380 * u, true);
}

/// A set without the example's coinciding events (thread costs not multiples of one unit): the
/// steal count on threads is then close to the simulator's (printed; docs/mechanisms/rtws.md).
#[test]
fn a_tie_free_set_against_the_simulator() {
    let _s = serial();
    let set = ForkJoinSet::new(vec![
        ForkJoinTask::implicit(25 * MS, vec![vec![1_722_936, 1_731_556, 1_899_444]]).unwrap(),
        ForkJoinTask::implicit(
            20 * MS,
            vec![
                vec![1_243_117, 1_312_884, 1_210_323, 1_226_114],
                vec![1_336_161, 1_213_694, 1_250_202, 1_311_366],
                vec![1_219_440, 1_206_080],
            ],
        )
        .unwrap(),
        ForkJoinTask::implicit(13 * MS, vec![vec![1_278_002, 1_294_697], vec![1_469_885], vec![1_264_225, 1_266_777]])
            .unwrap(),
    ])
    .unwrap();
    differential("tie-free set", &set, 650 * MS, false);
}

/// Random fork-join runs (the fork-join counterpart of tests/stress.rs): 1 or 2 CPUs, light
/// to overloaded, 50–200 ms, idle sleep or spin, WCET or uniform execution times, an early
/// stop in a quarter of the cases, at normal priority. Each run passes `check_fj` (exactly
/// once, precedence, job order, steals, accounting, `check_trace`) and releases every job due.
/// `RTSCHED_STRESS_SEED` / `RTSCHED_STRESS_CASES` as in tests/stress.rs.
#[test]
fn random_fork_join_runs_keep_every_oracle() {
    let _s = serial();
    let seed = std::env::var("RTSCHED_STRESS_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_2026u64);
    let cases = std::env::var("RTSCHED_STRESS_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12usize);
    let all = allowed_cpus();
    let mut steals = 0;
    for case in 0..cases {
        let mut rng = Rng(seed ^ (case as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D));
        let m = if all.len() >= 2 && rng.below(3) > 0 { 2 } else { 1 };
        let (set, u_pct) = random_fj(&mut rng, m as u64);
        let duration = rng.range(50, 200) * MS;
        let mut c = cfg(all[..m].to_vec(), duration / MS);
        c.seed = rng.next();
        c.idle = if rng.below(3) == 0 { IdleMode::Spin } else { IdleMode::Sleep };
        if rng.below(2) == 0 {
            c.exec = ExecTime::Uniform { min_fraction: 0.3 };
        }
        let stop_after = (rng.below(4) == 0).then(|| rng.range(0, 30 + duration / MS) * MS);
        let flag = Arc::new(AtomicBool::new(false));
        if stop_after.is_some() {
            c.stop = Some(flag.clone());
        }
        let desc = format!(
            "seed={seed:#x} case {case}: m={m} U={u_pct}% dur={}ms idle={:?} exec={:?} stop={stop_after:?} set={:?}",
            duration / MS,
            c.idle,
            c.exec,
            set.iter().map(|t| (t.period, t.deadline, t.regions.clone())).collect::<Vec<_>>()
        );
        let stopper = stop_after.map(|after| {
            let f = flag.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_nanos(after));
                f.store(true, Ordering::SeqCst);
            })
        });
        let r = run_forkjoin(&set, &rtws(), &c);
        if let Some(h) = stopper {
            h.join().unwrap();
        }
        let r = r.unwrap_or_else(|e| panic!("{desc}: {e}"));
        let jobs = check_fj(&set, &r).unwrap_or_else(|e| panic!("{desc}: {e}"));
        for (i, t) in set.iter().enumerate() {
            let due = r.duration_ns.div_ceil(t.period) as usize;
            let got = jobs.keys().filter(|k| k.0 == i as u32).count();
            assert_eq!(got, due, "{desc}: task {i}: {got} jobs released, {due} due");
        }
        steals += r.metrics.steals;
        eprintln!(
            "{desc}: {} jobs, {} complete, {} steals, {} misses",
            jobs.len(),
            jobs.values().filter(|j| j.finish.is_some()).count(),
            r.metrics.steals,
            r.deadline_misses()
        );
    }
    assert!(steals > 0, "no run stole anything");
}
