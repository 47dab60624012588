//! Oracles for QPS (Massa, Lima, Regnier, Levin & Brandt, "Quasi-partitioned scheduling:
//! optimality and adaptation in multiprocessor real-time systems", RTS 2016), as reconstructed
//! in `rtsched_policy::qps` (its module doc says what is confirmed and what is ours):
//!
//! * a hand-worked example (ours; the paper's own could not be read), record by record;
//! * optimality: no miss on random implicit-deadline periodic sets with `U ≤ m` (`U = m`
//!   exactly in a third of them) over the hyperperiod, m = 2..5, synchronous and with offsets,
//!   with WCET and shorter execution times, while the simulator checks QPS's own promises at
//!   every decision (every item gets its window budget, masters get exactly their time);
//! * migrations within the bound our argument gives (the paper's bound could not be read):
//!   only tasks of a major set's `P^b` subset ever migrate;
//! * on a set worst or first fit places, QPS is partitioned EDF on that placement, job for job and
//!   record for record;
//! * (the broken twin — a wrong mode switch, major sets never activating their servers — is
//!   caught in `rtsched_policy::qps`'s own tests, where it can be built);
//! * sporadic arrivals on a set worst or first fit places: partitioned EDF record for record,
//!   no miss;
//! * sporadic arrivals on sets with a major execution set (our rule for late tasks): no miss
//!   and the simulator's checks clean on 600 random sets with `U ∈ [0.8·m, m]`;
//! * the refusals: constrained deadlines, `U > m`, overheads.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::task::{Segments, SuspensionBound};
use rtsched_model::{Task, TaskSet, Time};
use rtsched_policy::qps::QuasiPartition;
use rtsched_sim::{simulate, Arrivals, ExecTimes, Overheads, Scheduler, SimConfig, SimResult};
use rtsched_trace::Event;

mod servers_common;
use servers_common::{j, random_set, records, trace_counts, traced_config};

/// Three tasks (C 2, D = T 3) on two CPUs, horizon 3 (U = 2). No fit can place them;
/// next fit with overflow makes set 0 = {τ0 | τ1} major (R = 4/3, x = 1/3) and set 1 = {the
/// slave of set 0, τ2} minor. Window [0, 3): set 0 in QPS mode, master time 1 ns, servers a
/// and b 1 ns each. CPU 1 runs EDF over τ2 and the slave job (1 ns, due 3; ties: tasks
/// first): τ2 in [0, 2), the slave in [2, 3). CPU 0: server a (τ0) in [0, 1), server b (τ1)
/// in [1, 2); in [2, 3) the master runs τ0 on CPU 0 and the slave τ1 on CPU 1 (τ1 migrates).
/// G-EDF misses one of these jobs.
#[test]
fn hand_worked_three_tasks_on_two_processors() {
    use Event::*;
    let ts = TaskSet::from_cdt(&[(2, 3, 3), (2, 3, 3), (2, 3, 3)]).unwrap();
    let mut cfg = SimConfig::new(2);
    cfg.horizon = Some(3);
    cfg.record_trace = true;
    cfg.check_invariants = true;
    let r = simulate(&ts, &Scheduler::Qps, &cfg).unwrap();
    let expect = vec![
        (0, Release { job: j(0, 0), deadline: 3 }),
        (0, Release { job: j(1, 0), deadline: 3 }),
        (0, Release { job: j(2, 0), deadline: 3 }),
        (0, Run { cpu: 0, job: j(0, 0) }),
        (0, Run { cpu: 1, job: j(2, 0) }),
        (1, Preempt { cpu: 0, job: j(0, 0) }),
        (1, Run { cpu: 0, job: j(1, 0) }),
        (2, Complete { cpu: 1, job: j(2, 0) }),
        (2, Preempt { cpu: 0, job: j(1, 0) }),
        (2, Run { cpu: 0, job: j(0, 0) }),
        (2, Migration { job: j(1, 0), from: 0, to: 1 }),
        (2, Run { cpu: 1, job: j(1, 0) }),
        (3, Complete { cpu: 0, job: j(0, 0) }),
        (3, Complete { cpu: 1, job: j(1, 0) }),
        (3, Idle { cpu: 0 }),
        (3, Idle { cpu: 1 }),
    ];
    assert_eq!(records(&r), expect);
    assert_eq!((r.jobs, r.completed, r.deadline_misses, r.preemptions, r.migrations), (3, 3, 0, 2, 1));
    assert_eq!(r.scheduler, "QPS");
    let g = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
    assert_eq!(g.deadline_misses, 1, "G-EDF misses one job");
}

#[test]
fn refusals_name_the_field() {
    let mut cfg = SimConfig::new(2);
    let constrained = TaskSet::from_cdt(&[(1, 4, 4), (1, 3, 5)]).unwrap();
    let e = simulate(&constrained, &Scheduler::Qps, &cfg).unwrap_err().to_string();
    assert!(e.contains("task 1") && e.contains("deadline") && e.contains("implicit-deadline"), "{e}");
    let over = TaskSet::from_cdt(&[(2, 3, 3), (2, 3, 3), (3, 4, 4)]).unwrap();
    let e = simulate(&over, &Scheduler::Qps, &cfg).unwrap_err().to_string();
    assert!(e.contains("field 'm'") && e.contains("exceeds m = 2"), "{e}");
    let ok = TaskSet::from_cdt(&[(2, 3, 3), (2, 3, 3), (2, 3, 3)]).unwrap();
    // Sporadic arrivals on a set with a major execution set are taken (no longer refused).
    cfg.arrivals = Arrivals::Sporadic { max_extra_delay: 2, seed: 1 };
    cfg.check_invariants = true;
    cfg.horizon = Some(60);
    let r = simulate(&ok, &Scheduler::Qps, &cfg).unwrap();
    assert!(r.deadline_misses == 0 && r.jobs < 60, "{r:?}");
    cfg.horizon = None;
    cfg.arrivals = Arrivals::Periodic { offsets: vec![] };
    cfg.overheads = Some(Overheads { schedule_ns: 1, ..Overheads::ZERO });
    let e = simulate(&ok, &Scheduler::Qps, &cfg).unwrap_err().to_string();
    assert!(e.contains("not supported for qps"), "{e}");
    // Self-suspending tasks: refused naming the task's segments (RUN alike).
    cfg.overheads = None;
    let susp = Task::new(2, 6, 6)
        .unwrap()
        .with_segments(Segments::new(vec![1, 1], vec![SuspensionBound { min: 1, max: 2 }]).unwrap())
        .unwrap();
    let ts = TaskSet::new(vec![Task::new(1, 3, 3).unwrap(), susp]).unwrap();
    for sched in [Scheduler::Qps, Scheduler::Run] {
        let e = simulate(&ts, &sched, &cfg).unwrap_err().to_string();
        assert!(e.contains("task 1") && e.contains("segments") && e.contains("self-suspending"), "{e}");
    }
}

/// A random set worst or first fit places on `m` CPUs (light tasks, U well below m).
/// Sporadic arrivals on sets with a major execution set (our rule, `rtsched_policy::qps`'s
/// module notes): 600 random implicit-deadline sets, m = 2..4, periods dividing 24, rates
/// mostly above 2/5 and `U ∈ [0.8·m, m]`, inter-arrival times the period plus a uniform delay
/// up to 0, T/2, 2T or 4T (T the largest period; zero and long gaps), WCET or shorter on half
/// of them, with the simulator's checks on over 96 ns: no miss, every due job completed by its
/// deadline.
#[test]
fn sporadic_sets_with_a_major_set_miss_nothing() {
    let mut rng = ChaCha8Rng::seed_from_u64(25);
    let periods = [2u64, 3, 4, 6, 8, 12, 24];
    let (mut sets, mut with_major, mut late) = (0, 0, 0u64);
    while sets < 600 {
        let m = rng.random_range(2u32..=4);
        let (cap, mut u24) = (24 * m as u64, 0u64);
        let mut tasks = Vec::new();
        loop {
            let t = periods[rng.random_range(0..periods.len())];
            let c = (t * rng.random_range(40..96) / 100).clamp(1, t).min((cap - u24) / (24 / t));
            if c == 0 || (u24 * 10 >= cap * 8 && rng.random_range(0..3) == 0) {
                break;
            }
            tasks.push((c, t, t));
            u24 += c * (24 / t);
        }
        if u24 * 10 < cap * 8 {
            continue;
        }
        sets += 1;
        let ts = TaskSet::from_cdt(&tasks).unwrap();
        with_major += (QuasiPartition::build(&ts, m).unwrap().majors() > 0) as u32;
        let tmax = tasks.iter().map(|t| t.1).max().unwrap();
        let mut cfg = SimConfig::new(m);
        cfg.check_invariants = true;
        cfg.keep_jobs = true;
        cfg.horizon = Some(96);
        let seed = rng.random();
        cfg.arrivals = Arrivals::Sporadic { max_extra_delay: [0, tmax / 2, 2 * tmax, 4 * tmax][sets % 4], seed };
        if sets % 2 == 0 {
            cfg.exec = ExecTimes::UniformFraction { lo: 0.3, seed };
        }
        let r = simulate(&ts, &Scheduler::Qps, &cfg).unwrap_or_else(|e| panic!("{e}: {tasks:?} m = {m}"));
        assert_eq!(r.deadline_misses, 0, "{tasks:?} m = {m}");
        for js in r.per_job.iter().filter(|js| js.deadline <= r.horizon) {
            assert!(js.finish.is_some_and(|f| f <= js.deadline), "job {}.{}: {tasks:?} m = {m}", js.task, js.job);
        }
        let mut jobs: Vec<(u32, Time)> = r.per_job.iter().map(|js| (js.task, js.release)).collect();
        jobs.sort_unstable();
        late +=
            jobs.windows(2).filter(|w| w[0].0 == w[1].0 && w[1].1 > w[0].1 + tasks[w[0].0 as usize].1).count() as u64;
    }
    println!("{sets} sets, {with_major} with a major execution set, {late} late jobs");
    assert!(with_major > 200 && late > 5000, "{with_major} {late}");
}

/// A late task of a major set with a heavy load has a window every ns (our rule): those
/// windows count toward `max_events` (work that grows with simulated time, not with jobs). The
/// 3 × (2000, 3000) set on two CPUs with extra delays up to 3000 ns: the run with the bound at
/// twice its releases and completions stops early, saying so.
#[test]
fn one_ns_windows_count_toward_the_event_bound() {
    let ts = TaskSet::from_cdt(&[(2000, 3000, 3000), (2000, 3000, 3000), (2000, 3000, 3000)]).unwrap();
    let mut cfg = SimConfig::new(2);
    cfg.check_invariants = true;
    cfg.horizon = Some(60_000);
    cfg.arrivals = Arrivals::Sporadic { max_extra_delay: 3000, seed: 5 };
    let full = simulate(&ts, &Scheduler::Qps, &cfg).unwrap();
    assert!(full.deadline_misses == 0 && !full.horizon_capped, "{full:?}");
    cfg.max_events = 2 * full.events;
    let early = simulate(&ts, &Scheduler::Qps, &cfg).unwrap();
    let msg = early.horizon_message.clone().unwrap_or_default();
    assert!(early.horizon_capped && early.horizon < 60_000 && msg.contains("max_events"), "{msg}");
}

fn partitionable_set(rng: &mut ChaCha8Rng, m: u32) -> TaskSet {
    loop {
        let n = rng.random_range(m as usize..=3 * m as usize);
        let tasks: Vec<(Time, Time, Time)> = (0..n)
            .map(|_| {
                let t = [4u64, 5, 6, 8, 10, 12, 15, 20][rng.random_range(0..8)];
                (rng.random_range(1..=t.div_ceil(2)), t, t)
            })
            .collect();
        let ts = TaskSet::from_cdt(&tasks).unwrap();
        if QuasiPartition::build(&ts, m).is_ok_and(|q| q.partitioned) {
            return ts;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// QPS's optimality and its migrations within our bound on one random set.
    #[test]
    fn no_miss_and_only_pb_tasks_migrate(seed in any::<u64>(), m in 2u32..=5, offsets in any::<bool>(), short in any::<bool>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ts = random_set(&mut rng, m, seed % 3 == 0);
        let mut cfg = SimConfig::new(m);
        cfg.check_invariants = true;
        cfg.keep_jobs = true;
        if offsets {
            cfg.arrivals = Arrivals::Periodic { offsets: ts.iter().map(|t| rng.random_range(0..t.period)).collect() };
        }
        if short {
            cfg.exec = ExecTimes::UniformFraction { lo: 0.3, seed };
        }
        let r = simulate(&ts, &Scheduler::Qps, &cfg).unwrap();
        prop_assert_eq!(r.deadline_misses, 0, "{:?}", ts);
        // Independently of the miss count: every job due by the horizon finished by its deadline.
        let due: Vec<_> = r.per_job.iter().filter(|js| js.deadline <= r.horizon).collect();
        prop_assert!(!due.is_empty());
        for js in due {
            prop_assert!(js.finish.is_some_and(|f| f <= js.deadline), "job {}.{} {:?}: {:?}", js.task, js.job, js.finish, ts);
        }
        // Only P^b tasks migrate (our argument's bound; module doc of rtsched_policy::qps).
        let qp = QuasiPartition::build(&ts, m).unwrap();
        for js in &r.per_job {
            if !qp.set_of(js.task).1 {
                prop_assert_eq!(js.migrations, 0, "task {} of set {} migrated: {:?}", js.task, qp.set_of(js.task).0, ts);
            }
        }
    }

    /// On a set worst or first fit places, QPS is partitioned EDF on that placement: the same per-job
    /// statistics and the same records (in any order within one instant).
    #[test]
    fn partitionable_sets_are_partitioned_edf_job_for_job(seed in any::<u64>(), m in 1u32..=4, offsets in any::<bool>(), short in any::<bool>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ts = partitionable_set(&mut rng, m);
        let qp = QuasiPartition::build(&ts, m).unwrap();
        prop_assert!(qp.partitioned && qp.majors() == 0);
        let part: Vec<Vec<usize>> = qp.partition().into_iter().map(|c| c.into_iter().map(|i| i as usize).collect()).collect();
        let mut cfg = SimConfig::new(m);
        cfg.check_invariants = true;
        cfg.record_trace = true;
        cfg.keep_jobs = true;
        if offsets {
            cfg.arrivals = Arrivals::Periodic { offsets: ts.iter().map(|t| rng.random_range(0..t.period)).collect() };
        }
        if short {
            cfg.exec = ExecTimes::UniformFraction { lo: 0.3, seed };
        }
        let q = simulate(&ts, &Scheduler::Qps, &cfg).unwrap();
        let p = simulate(&ts, &Scheduler::Pedf(part), &cfg).unwrap();
        prop_assert_eq!(q.deadline_misses, 0);
        prop_assert_eq!(&q.per_job, &p.per_job);
        // The same records; at one instant the engines may write them in another order.
        let sorted = |r: &SimResult| {
            let mut v: Vec<(Time, String)> = records(r).into_iter().map(|(t, e)| (t, format!("{e:?}"))).collect();
            v.sort();
            v
        };
        prop_assert_eq!(sorted(&q), sorted(&p));
        prop_assert_eq!(
            (q.jobs, q.completed, q.preemptions, q.migrations, q.context_switches),
            (p.jobs, p.completed, p.preemptions, p.migrations, p.context_switches)
        );
    }

    /// Sporadic arrivals on a set worst or first fit places: QPS is partitioned EDF on that
    /// placement, job for job and record for record, and misses nothing (each CPU's EDF meets
    /// every deadline of sporadic jobs of rates summing to at most 1).
    #[test]
    fn sporadic_partitionable_sets_are_partitioned_edf_and_miss_nothing(seed in any::<u64>(), m in 1u32..=4, delay in 1u64..=20, short in any::<bool>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ts = partitionable_set(&mut rng, m);
        let qp = QuasiPartition::build(&ts, m).unwrap();
        let part: Vec<Vec<usize>> = qp.partition().into_iter().map(|c| c.into_iter().map(|i| i as usize).collect()).collect();
        let mut cfg = SimConfig::new(m);
        cfg.check_invariants = true;
        cfg.record_trace = true;
        cfg.keep_jobs = true;
        cfg.horizon = Some(240);
        cfg.arrivals = Arrivals::Sporadic { max_extra_delay: delay, seed };
        if short {
            cfg.exec = ExecTimes::UniformFraction { lo: 0.3, seed };
        }
        let q = simulate(&ts, &Scheduler::Qps, &cfg).unwrap();
        let p = simulate(&ts, &Scheduler::Pedf(part), &cfg).unwrap();
        prop_assert_eq!(q.deadline_misses, 0, "{:?}", ts);
        let due: Vec<_> = q.per_job.iter().filter(|js| js.deadline <= q.horizon).collect();
        prop_assert!(!due.is_empty());
        for js in due {
            prop_assert!(js.finish.is_some_and(|f| f <= js.deadline), "job {}.{}: {:?}", js.task, js.job, ts);
        }
        // Some job came late (the arrivals are sporadic indeed).
        let mut jobs: Vec<(u32, u32, Time)> = q.per_job.iter().map(|js| (js.task, js.job, js.release)).collect();
        jobs.sort_unstable();
        let late = jobs.windows(2).any(|w| w[0].0 == w[1].0 && w[1].2 > w[0].2 + ts[w[0].0 as usize].period);
        prop_assert!(late, "no late job: {:?}", ts);
        prop_assert_eq!(&q.per_job, &p.per_job);
        let sorted = |r: &SimResult| {
            let mut v: Vec<(Time, String)> = records(r).into_iter().map(|(t, e)| (t, format!("{e:?}"))).collect();
            v.sort();
            v
        };
        prop_assert_eq!(sorted(&q), sorted(&p));
    }

    /// Migrations counted from the trace's records alone: only `P^b` tasks migrate (no bound
    /// of Massa et al. could be read; this is our argument's), and the counts agree with the
    /// per-job metrics.
    #[test]
    fn migrations_counted_from_the_trace_only_in_pb(seed in any::<u64>(), m in 2u32..=5, short in any::<bool>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ts = random_set(&mut rng, m, seed % 3 == 0);
        let cfg = traced_config(m, short, seed);
        let r = simulate(&ts, &Scheduler::Qps, &cfg).unwrap();
        let qp = QuasiPartition::build(&ts, m).unwrap();
        let counts = trace_counts(&r);
        for (job, &(_, migrations)) in &counts {
            prop_assert!(migrations == 0 || qp.set_of(job.task).1, "job {}.{} migrated {migrations} times: {:?}", job.task, job.job, ts);
        }
        for js in &r.per_job {
            let c = counts.get(&j(js.task, js.job)).copied().unwrap_or((0, 0));
            prop_assert_eq!((c.0, c.1), (js.preemptions as u64, js.migrations as u64), "job {}.{}", js.task, js.job);
        }
    }
}
