//! Oracles for the global fixed-priority (G-FP) and global fair-lateness (G-FL, Erickson &
//! Anderson, ECRTS 2012) schedulers of the simulator:
//!
//! * a hand-worked G-FP schedule (2 CPUs, 3 tasks), checked record by record;
//! * the invariant each promises, checked from the trace at every instant with this file's own
//!   priority keys (not the simulator's): the `min(m, r)` highest-priority of the `r` ready jobs
//!   run — G-FP by deadline- or rate-monotonic rank, G-FL by priority point
//!   `r + D_i − (m−1)/m·C_i`, both with ties by task index, then job;
//! * the analysis: every set the G-FP response-time test of Guan, Stigge, Yi & Yu (RTSS 2009)
//!   accepts under DM has no deadline miss in a synchronous periodic simulation under gfp (DM);
//! * G-FL on one CPU is EDF: the same trace as gedf, record for record.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::global::fp::{self as gfp, GfpTest};
use rtsched_analysis::uni::fp::Priority;
use rtsched_analysis::{Limits, Verdict};
use rtsched_model::{Stop, Task, TaskSet, Time, Workload};
use rtsched_sim::registry::build;
use rtsched_sim::{simulate, Arrivals, ExecTimes, ParamArg, Scheduler, SimConfig, SimResult};
use rtsched_trace::{Event, JobId};

fn j(task: u32, job: u32) -> JobId {
    JobId { task, job }
}

/// The scheduler the registry builds for `name` with `params` on `m` CPUs.
fn sched(name: &str, params: &[(&str, &str)], ts: &TaskSet, m: u32) -> Scheduler {
    let given: Vec<(&str, ParamArg)> = params.iter().map(|&(k, v)| (k, ParamArg::from(v))).collect();
    let w = Workload::Sporadic(ts.clone());
    build(name, given.iter().map(|(k, v)| (*k, v)), &w, m, None, &Stop::never()).unwrap().scheduler
}

fn traced(ts: &TaskSet, s: &Scheduler, m: u32, horizon: Time) -> SimResult {
    let mut cfg = SimConfig::new(m);
    cfg.horizon = Some(horizon);
    cfg.record_trace = true;
    cfg.check_invariants = true;
    simulate(ts, s, &cfg).unwrap()
}

fn records(r: &SimResult) -> Vec<(Time, Event)> {
    r.trace.as_ref().unwrap().records.iter().map(|r| (r.time, r.event)).collect()
}

/// τ0 = (C 2, D = T 5), τ1 = (6, 8), τ2 = (6, 20) on two CPUs, synchronous, horizon 15 ns.
/// Deadline-monotonic ranks: τ0 0, τ1 1, τ2 2 (RM gives the same).
///
/// * 0: all three released; τ0.0 and τ1.0 take the idle CPUs 0 and 1 (idle CPUs lowest index
///   first); τ2.0 waits.
/// * 2: τ0.0 completes on CPU 0; τ2.0 runs there (6 ns left).
/// * 5: τ0.1 released; both CPUs busy, the lower-priority one is CPU 0 (τ2.0, rank 2 < τ1.0's
///   rank 1): τ2.0 is preempted with 3 ns left, τ0.1 runs on CPU 0 until 7.
/// * 6: τ1.0 completes on CPU 1 (0 + 6); τ2.0 resumes there — a migration from CPU 0 — and
///   completes at 9.
/// * 7: τ0.1 completes; CPU 0 idles. 8: τ1.1 released, runs on CPU 0 until 14.
/// * 9: τ2.0 completes; CPU 1 idles. 10: τ0.2 released, runs on CPU 1 (idle) until 12.
/// * 12: τ0.2 completes, CPU 1 idles. 14: τ1.1 completes, CPU 0 idles. τ0.3 (at 15) is not
///   released before the horizon.
///
/// 6 jobs, no miss, 1 preemption, 1 migration, largest response time 9 (τ2.0).
#[test]
fn hand_worked_gfp_schedule() {
    use Event::*;
    let ts = TaskSet::from_cdt(&[(2, 5, 5), (6, 8, 8), (6, 20, 20)]).unwrap();
    let expect = vec![
        (0, Release { job: j(0, 0), deadline: 5 }),
        (0, Release { job: j(1, 0), deadline: 8 }),
        (0, Release { job: j(2, 0), deadline: 20 }),
        (0, Run { cpu: 0, job: j(0, 0) }),
        (0, Run { cpu: 1, job: j(1, 0) }),
        (2, Complete { cpu: 0, job: j(0, 0) }),
        (2, Run { cpu: 0, job: j(2, 0) }),
        (5, Release { job: j(0, 1), deadline: 10 }),
        (5, Preempt { cpu: 0, job: j(2, 0) }),
        (5, Run { cpu: 0, job: j(0, 1) }),
        (6, Complete { cpu: 1, job: j(1, 0) }),
        (6, Migration { job: j(2, 0), from: 0, to: 1 }),
        (6, Run { cpu: 1, job: j(2, 0) }),
        (7, Complete { cpu: 0, job: j(0, 1) }),
        (7, Idle { cpu: 0 }),
        (8, Release { job: j(1, 1), deadline: 16 }),
        (8, Run { cpu: 0, job: j(1, 1) }),
        (9, Complete { cpu: 1, job: j(2, 0) }),
        (9, Idle { cpu: 1 }),
        (10, Release { job: j(0, 2), deadline: 15 }),
        (10, Run { cpu: 1, job: j(0, 2) }),
        (12, Complete { cpu: 1, job: j(0, 2) }),
        (12, Idle { cpu: 1 }),
        (14, Complete { cpu: 0, job: j(1, 1) }),
        (14, Idle { cpu: 0 }),
    ];
    for p in ["dm", "rm"] {
        let s = sched("gfp", &[("priorities", p)], &ts, 2);
        let r = traced(&ts, &s, 2, 15);
        assert_eq!(records(&r), expect, "priorities={p}");
        assert_eq!((r.jobs, r.completed, r.deadline_misses, r.preemptions, r.migrations), (6, 6, 0, 1, 1));
        assert_eq!(r.max_response_time_ns, Some(9));
    }
    // Given ranks reversed (τ2 highest, τ0 lowest): at 0, τ2.0 and τ1.0 run for 6 ns each, so
    // τ0.0 cannot start before 6 and misses its deadline at 5.
    let s = sched("gfp", &[("priorities", "2,1,0")], &ts, 2);
    assert_eq!(s.name(), "G-FP (given priorities)");
    let r = traced(&ts, &s, 2, 15);
    let recs = records(&r);
    assert_eq!(&recs[3..5], &[(0, Run { cpu: 0, job: j(2, 0) }), (0, Run { cpu: 1, job: j(1, 0) })]);
    assert!(recs.contains(&(5, DeadlineMiss { job: j(0, 0) })), "{recs:?}");
}

/// A job's priority as this file computes it: smaller tuple = higher priority.
trait Key {
    fn key(&self, task: usize, release: Time) -> i128;
}

/// Fixed ranks by (D, index) or (T, index).
struct Ranks(Vec<i128>);

impl Ranks {
    fn new(ts: &TaskSet, by_period: bool) -> Ranks {
        let mut idx: Vec<usize> = (0..ts.len()).collect();
        idx.sort_by_key(|&i| (if by_period { ts[i].period } else { ts[i].deadline }, i));
        let mut r = vec![0; ts.len()];
        for (rank, &i) in idx.iter().enumerate() {
            r[i] = rank as i128;
        }
        Ranks(r)
    }
}

impl Key for Ranks {
    fn key(&self, task: usize, _: Time) -> i128 {
        self.0[task]
    }
}

/// G-FL: `m · (r + D_i − (m−1)/m·C_i)`, exact in i128 (Erickson & Anderson's `Y_i`).
struct Points<'a>(&'a TaskSet, i128);

impl Key for Points<'_> {
    fn key(&self, task: usize, release: Time) -> i128 {
        let (m, t) = (self.1, &self.0[task]);
        m * (release as i128 + t.deadline as i128) - (m - 1) * t.wcet as i128
    }
}

/// Replays the trace and checks, after every instant, that the running jobs are exactly the
/// `min(m, r)` highest-priority ready jobs by `key` (ties: task index, then job). Returns the
/// number of instants checked.
fn check_top_m(ts: &TaskSet, m: usize, key: &dyn Key, r: &SimResult) -> usize {
    let recs = &r.trace.as_ref().expect("a trace").records;
    let n = ts.len();
    let mut releases: Vec<Vec<Time>> = vec![Vec::new(); n];
    let mut done = vec![0usize; n];
    let mut running: Vec<Option<JobId>> = vec![None; m];
    let mut checked = 0;
    let mut i = 0;
    while i < recs.len() {
        let t = recs[i].time;
        while i < recs.len() && recs[i].time == t {
            match recs[i].event {
                Event::Release { job, .. } => {
                    assert_eq!(releases[job.task as usize].len(), job.job as usize, "release order");
                    releases[job.task as usize].push(t);
                }
                Event::Run { cpu, job } => running[cpu as usize] = Some(job),
                Event::Preempt { cpu, .. } | Event::Idle { cpu } => running[cpu as usize] = None,
                Event::Complete { cpu, job } => {
                    assert_eq!(running[cpu as usize], Some(job), "at {t}: completes where it does not run");
                    running[cpu as usize] = None;
                    assert_eq!(done[job.task as usize], job.job as usize, "completion order");
                    done[job.task as usize] += 1;
                }
                _ => {}
            }
            i += 1;
        }
        // Ready: each task's oldest unfinished released job.
        let mut ready: Vec<(i128, usize, usize)> = (0..n)
            .filter(|&k| releases[k].len() > done[k])
            .map(|k| (key.key(k, releases[k][done[k]]), k, done[k]))
            .collect();
        ready.sort_unstable();
        let mut want: Vec<(usize, usize)> = ready.iter().take(m).map(|&(_, k, q)| (k, q)).collect();
        let mut got: Vec<(usize, usize)> =
            running.iter().flatten().map(|x| (x.task as usize, x.job as usize)).collect();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want, "at {t} ns the running jobs are not the top {m} of {ready:?}\n{ts:?}");
        checked += 1;
    }
    checked
}

/// Every LCM of a subset divides 120 (short hyperperiods).
const PERIODS: [Time; 15] = [2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 24, 30, 40, 60, 120];

/// `n` tasks of total utilization about `u` (UUniFast), integer WCETs in `1..=T`, deadlines
/// implicit or (probability 0.6) uniform in `[C, T]`.
fn gen(rng: &mut ChaCha8Rng, n: usize, u: f64) -> TaskSet {
    let mut sum = u;
    let mut us = Vec::with_capacity(n);
    for i in 1..n {
        let next = sum * rng.random::<f64>().powf(1.0 / (n - i) as f64);
        us.push(sum - next);
        sum = next;
    }
    us.push(sum);
    let tasks = us
        .iter()
        .map(|&ui| {
            let t = PERIODS[rng.random_range(0..PERIODS.len())];
            let c = ((ui * t as f64).round() as Time).clamp(1, t);
            let d = if rng.random_bool(0.6) { rng.random_range(c..=t) } else { t };
            Task::new(c, d, t).unwrap()
        })
        .collect();
    TaskSet::new(tasks).unwrap()
}

fn horizon(ts: &TaskSet) -> Time {
    ts.hyperperiod(1 << 20).unwrap() + ts.iter().map(|t| t.deadline).max().unwrap_or(0)
}

#[test]
fn gfp_and_gfl_run_the_top_m_jobs_at_every_instant() {
    let mut rng = ChaCha8Rng::seed_from_u64(26);
    let (mut instants, mut differ_dm_rm, mut differ_gfl_gedf) = (0, 0, 0);
    for k in 0..300 {
        let m = rng.random_range(2..=4u32);
        let n = rng.random_range(m as usize + 1..=7);
        let u = rng.random_range(0.5..m as f64 * 1.1);
        let ts = gen(&mut rng, n, u);
        let mut cfg = SimConfig::new(m);
        cfg.horizon = Some(2 * horizon(&ts));
        cfg.record_trace = true;
        cfg.check_invariants = true;
        if k % 2 == 1 {
            // Sporadic arrivals and execution below the WCET: jobs become ready late and backlogs form.
            cfg.arrivals = Arrivals::Sporadic { max_extra_delay: 4, seed: k };
            cfg.exec = ExecTimes::UniformFraction { lo: 0.3, seed: k + 1 };
        }
        let run = |s: &Scheduler| simulate(&ts, s, &cfg).unwrap_or_else(|e| panic!("{e}\n{ts:?}"));
        let (dm, rm) = (run(&sched("gfp", &[], &ts, m)), run(&sched("gfp", &[("priorities", "rm")], &ts, m)));
        instants += check_top_m(&ts, m as usize, &Ranks::new(&ts, false), &dm);
        instants += check_top_m(&ts, m as usize, &Ranks::new(&ts, true), &rm);
        let gfl = run(&Scheduler::Gfl);
        instants += check_top_m(&ts, m as usize, &Points(&ts, m as i128), &gfl);
        differ_dm_rm += usize::from(records(&dm) != records(&rm));
        differ_gfl_gedf += usize::from(records(&gfl) != records(&run(&Scheduler::Gedf)));
    }
    println!("{instants} instants checked; DM ≠ RM on {differ_dm_rm} sets, G-FL ≠ G-EDF on {differ_gfl_gedf}");
    // Not vacuous: the keys matter on these sets.
    assert!(instants > 10_000 && differ_dm_rm > 20 && differ_gfl_gedf > 20);
}

/// The checker itself fails on a schedule that is not the one its keys define.
#[test]
fn the_top_m_checker_rejects_another_schedule() {
    // DM ranks τ0 (D 3) first, RM ranks τ1 (T 8) first: on one CPU at 0 they run different
    // jobs, so the DM schedule fails the check by RM ranks.
    let ts = TaskSet::from_cdt(&[(2, 3, 10), (2, 8, 8)]).unwrap();
    let r = traced(&ts, &sched("gfp", &[], &ts, 1), 1, 20);
    let wrong = std::panic::catch_unwind(|| check_top_m(&ts, 1, &Ranks::new(&ts, true), &r));
    assert!(wrong.is_err());
    assert!(check_top_m(&ts, 1, &Ranks::new(&ts, false), &r) > 0);
}

#[test]
fn gfp_guan_accepted_sets_never_miss_under_gfp_dm() {
    let mut rng = ChaCha8Rng::seed_from_u64(2009);
    let limits = Limits::default();
    let (mut accepted, mut missed_rejected) = (0, 0);
    for _ in 0..2_500 {
        let m = rng.random_range(2..=4u32);
        let n = rng.random_range(m as usize + 1..=8);
        let u = rng.random_range(0.3..m as f64 * 0.9);
        let ts = gen(&mut rng, n, u);
        let mut cfg = SimConfig::new(m);
        cfg.horizon = Some(horizon(&ts));
        let misses = simulate(&ts, &sched("gfp", &[("priorities", "dm")], &ts, m), &cfg).unwrap().deadline_misses;
        if gfp::test(GfpTest::Guan, &ts, m, Priority::DeadlineMonotonic, &limits) == Verdict::Schedulable {
            accepted += 1;
            assert_eq!(misses, 0, "gfp_guan accepts but gfp (DM) misses on m = {m}: {ts:?}");
        } else if misses > 0 {
            missed_rejected += 1;
        }
    }
    println!("gfp_guan accepted {accepted} of 2500; {missed_rejected} rejected sets miss in simulation");
    // Not vacuous: many accepted sets, and the simulator does find misses where sets miss.
    assert!(accepted >= 500 && missed_rejected >= 50, "{accepted} accepted, {missed_rejected} missed");
}

#[test]
fn gfl_on_one_cpu_is_edf() {
    let mut rng = ChaCha8Rng::seed_from_u64(2012);
    for k in 0..300u64 {
        let n = rng.random_range(1..=6);
        let u = rng.random_range(0.3..1.3);
        let ts = gen(&mut rng, n, u);
        let mut cfg = SimConfig::new(1);
        cfg.horizon = Some(2 * horizon(&ts));
        cfg.record_trace = true;
        cfg.check_invariants = true;
        if k % 2 == 1 {
            cfg.arrivals = Arrivals::Sporadic { max_extra_delay: 3, seed: k };
            cfg.exec = ExecTimes::UniformFraction { lo: 0.4, seed: k + 7 };
        }
        let gfl = simulate(&ts, &Scheduler::Gfl, &cfg).unwrap();
        let gedf = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
        assert_eq!(records(&gfl), records(&gedf), "{ts:?}");
        assert_eq!(
            (gfl.jobs, gfl.deadline_misses, gfl.preemptions, gfl.max_response_time_ns),
            (gedf.jobs, gedf.deadline_misses, gedf.preemptions, gedf.max_response_time_ns)
        );
    }
}

#[test]
fn gfl_refuses_a_horizon_whose_keys_would_not_be_exact() {
    // m · D alone is 2^14 · 2^53 > 2^64.
    let big = rtsched_model::MAX_TIME;
    let ts = TaskSet::from_cdt(&[(1, big, big), (1, big, big)]).unwrap();
    let mut cfg = SimConfig::new(rtsched_model::MAX_M);
    cfg.horizon = Some(10);
    let e = simulate(&ts, &Scheduler::Gfl, &cfg).unwrap_err().to_string();
    assert!(e.contains("G-FL compares") && e.contains("horizon"), "{e}");
    // A wrong number of given ranks is refused in the registry's words (`--param priorities`).
    let e = simulate(&ts, &Scheduler::Gfp { ranks: vec![0], order: None }, &SimConfig::new(2)).unwrap_err();
    assert_eq!(e.to_string(), "gfp: parameter priorities: 1 priorities for 2 tasks");
}

/// gfp and gfl run in the engine's overhead loop too: with zero overheads it gives the ideal
/// loop's jobs, misses, preemptions, migrations and response times, and with real ones it runs
/// with its structural checks on.
#[test]
fn gfp_and_gfl_under_the_overhead_loop() {
    use rtsched_sim::Overheads;
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    for _ in 0..60 {
        let m = rng.random_range(2..=3u32);
        let n = rng.random_range(m as usize + 1..=6);
        let u = rng.random_range(0.5..m as f64);
        let ts = gen(&mut rng, n, u);
        let scheds = [sched("gfp", &[("priorities", "rm")], &ts, m), Scheduler::Gfl];
        for s in &scheds {
            let mut cfg = SimConfig::new(m);
            cfg.horizon = Some(horizon(&ts));
            cfg.record_trace = true;
            cfg.check_invariants = true;
            let ideal = simulate(&ts, s, &cfg).unwrap();
            cfg.overheads = Some(Overheads::ZERO);
            let zero = simulate(&ts, s, &cfg).unwrap();
            let key = |r: &SimResult| {
                (r.jobs, r.completed, r.deadline_misses, r.preemptions, r.migrations, r.max_response_time_ns)
            };
            assert!(key(&zero) == key(&ideal), "{}: {:?} vs {:?} on {ts:?}", s.name(), key(&zero), key(&ideal));
            cfg.overheads = Some(Overheads { release_ns: 1, schedule_ns: 1, context_switch_ns: 1, ..Overheads::ZERO });
            let r = simulate(&ts, s, &cfg).unwrap_or_else(|e| panic!("{}: {e}\n{ts:?}", s.name()));
            assert!(r.overheads.is_some() && r.jobs == ideal.jobs, "{}", s.name());
        }
    }
}
