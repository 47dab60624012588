//! Fork-join jobs under `push-pull` on real threads (RTWS paper, §III; design note in
//! docs/mechanisms/push-pull.md, "Fork-join jobs"): with the shared fork-join oracle (tests/common/forkjoin.rs)
//! every thread of every job executes exactly once, no thread of region r + 1 runs before the
//! last thread of region r completed, jobs of a task run in order, and the engine's accounting
//! and `check_trace` hold; a forked region's threads are spread by the push; the simulator's
//! fork-join G-EDF (`rtsched_sim::simulate_forkjoin_gedf`, the policy's oracle) releases the
//! same jobs and, like the run, misses none; a one-thread-per-job set runs as the sequential
//! set does; random fork-join sets keep every oracle. No timing is asserted beyond "no miss
//! with a large slack".

mod common;
use common::forkjoin::{cfg, check_fj, random_fj, run_fj_rt, MS};
use common::two_cpus;
use common::Rng;

use rtsched_model::forkjoin::{ForkJoinSet, ForkJoinTask};
use rtsched_model::TaskSet;
use rtsched_runtime::platform::allowed_cpus;
use rtsched_runtime::{run_forkjoin, ExecTime, IdleMode, Mechanism, RunConfig, RunResult};
use rtsched_sim::{simulate_forkjoin_gedf, SimConfig};
use rtsched_trace::Event;
use std::collections::HashMap;

/// Runs one at a time (real threads on the same cores).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static L: std::sync::Mutex<()> = std::sync::Mutex::new(());
    L.lock().unwrap_or_else(|p| p.into_inner())
}

fn push_pull() -> Mechanism {
    Mechanism::named("push-pull").unwrap()
}

fn run_rt(set: &ForkJoinSet, c: RunConfig) -> RunResult {
    run_fj_rt(set, &push_pull(), c)
}

/// One job forks two 20 ms threads on the CPU where its 1 ms first region completed: the push
/// sends one of them to the idle CPU, so each job's two threads start on different CPUs, and
/// every thread ran and completed exactly once per job.
#[test]
fn a_forked_region_is_spread_by_the_push() {
    let _s = serial();
    let Some(cpus) = two_cpus() else { return };
    let set = ForkJoinSet::new(vec![ForkJoinTask::implicit(100 * MS, vec![vec![MS], vec![20 * MS, 20 * MS]]).unwrap()])
        .unwrap();
    let r = run_rt(&set, cfg(cpus, 300));
    let jobs = check_fj(&set, &r).unwrap();
    assert_eq!(jobs.len(), 3);
    assert!(jobs.values().all(|j| j.finish.is_some()), "{jobs:?}");
    assert_eq!(r.per_task.released, vec![3, 3, 3]);
    assert_eq!(r.per_task.completed, vec![3, 3, 3]);
    let mut first_cpu: HashMap<(u32, u32), u32> = HashMap::new();
    for x in &r.trace.records {
        if let Event::Run { cpu, job } = x.event {
            first_cpu.entry((job.task, job.job)).or_insert(cpu);
        }
    }
    for j in 0..3 {
        assert_ne!(first_cpu[&(1, j)], first_cpu[&(2, j)], "job {j}: both threads of region 1 started on one CPU");
    }
    assert_eq!(r.deadline_misses(), 0);
    assert_eq!(r.metrics.steals, 0, "push/pull does not steal");
}

/// The simulator's fork-join G-EDF on the same set is the oracle of the policy: both release
/// the same jobs and neither misses (large slack).
#[test]
fn a_fork_join_set_against_the_simulators_gedf() {
    let _s = serial();
    let Some(cpus) = two_cpus() else { return };
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
    let horizon = 400 * MS;
    let mut sc = SimConfig::new(2);
    sc.horizon = Some(horizon);
    let sim = simulate_forkjoin_gedf(&set, &sc).unwrap();
    assert_eq!(sim.deadline_misses, 0, "the simulator misses");
    let mut c = cfg(cpus, horizon / MS);
    c.start_delay_ns = 100 * MS;
    let r = run_rt(&set, c);
    let jobs = check_fj(&set, &r).unwrap();
    let misses = jobs.values().filter(|j| j.deadline <= horizon && j.finish.is_none_or(|f| f > j.deadline)).count();
    eprintln!(
        "simulator: {} jobs, {} preemptions, {} migrations; threads: {} jobs, {} preemptions, {} migrations, \
         {misses} misses",
        sim.jobs,
        sim.preemptions,
        sim.migrations,
        jobs.len(),
        r.metrics.preemptions,
        r.metrics.migrations
    );
    assert_eq!(jobs.len() as u64, sim.jobs);
    assert_eq!(misses, 0, "{jobs:?}");
}

/// A fork-join set of one thread per job is the sequential set: the same jobs released and
/// completed per task as a run of the plain task set, no misses, a clean fork-join oracle.
#[test]
fn one_thread_per_job_runs_as_the_sequential_set() {
    let _s = serial();
    let Some(cpus) = two_cpus() else { return };
    let ct = [(MS, 10 * MS), (2 * MS, 15 * MS), (3 * MS, 20 * MS)];
    let set = ForkJoinSet::sequential_ct(&ct).unwrap();
    let ts = TaskSet::from_ct(&ct).unwrap();
    let fj = run_rt(&set, cfg(cpus.clone(), 100));
    check_fj(&set, &fj).unwrap();
    let mut c = cfg(cpus, 100);
    let seq = common::run_rt_if_permitted(&ts, &push_pull(), &mut c);
    assert_eq!(seq.accounting.error, None);
    assert_eq!(fj.per_task.released, seq.per_task.released);
    assert_eq!(fj.per_task.released, vec![10, 7, 5]);
    assert_eq!(fj.per_task.completed, seq.per_task.completed);
    assert_eq!((fj.deadline_misses(), seq.deadline_misses()), (0, 0));
}

/// Random fork-join runs under push-pull (as tests/rtws.rs does for `rtws`): 1 or 2 CPUs,
/// light to overloaded, 50–200 ms, idle sleep or spin, WCET or uniform execution times, at
/// normal priority. Each run passes `check_fj` and releases every job due.
/// `RTSCHED_STRESS_SEED` / `RTSCHED_STRESS_CASES` as in tests/stress.rs.
#[test]
fn random_fork_join_runs_keep_every_oracle() {
    let _s = serial();
    let seed = std::env::var("RTSCHED_STRESS_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_2027u64);
    let cases = std::env::var("RTSCHED_STRESS_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(8usize);
    let all = allowed_cpus();
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
        let desc = format!(
            "seed={seed:#x} case {case}: m={m} U={u_pct}% dur={}ms idle={:?} exec={:?} set={:?}",
            duration / MS,
            c.idle,
            c.exec,
            set.iter().map(|t| (t.period, t.deadline, t.regions.clone())).collect::<Vec<_>>()
        );
        let r = run_forkjoin(&set, &push_pull(), &c).unwrap_or_else(|e| panic!("{desc}: {e}"));
        let jobs = check_fj(&set, &r).unwrap_or_else(|e| panic!("{desc}: {e}"));
        for (i, t) in set.iter().enumerate() {
            let due = r.duration_ns.div_ceil(t.period) as usize;
            let got = jobs.keys().filter(|k| k.0 == i as u32).count();
            assert_eq!(got, due, "{desc}: task {i}: {got} jobs released, {due} due");
        }
        eprintln!(
            "{desc}: {} jobs, {} complete, {} misses",
            jobs.len(),
            jobs.values().filter(|j| j.finish.is_some()).count(),
            r.deadline_misses()
        );
    }
}
