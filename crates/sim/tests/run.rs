//! Oracles for RUN (Regnier, Lima, Massa, Levin & Brandt, "RUN: Optimal Multiprocessor
//! Real-Time Scheduling via Reduction to Uniprocessor", RTSS 2011):
//!
//! * the paper's opening example (§I, Fig. 1: three tasks needing 2 units every 3 on two
//!   processors), which G-EDF misses, worked by hand and checked record by record;
//! * optimality: no miss on random implicit-deadline periodic sets with `U ≤ m` (`U = m`
//!   exactly in a third of them) over the hyperperiod, m = 2..4, synchronous and with offsets,
//!   with WCET and with shorter execution times, while the simulator checks RUN's own promises
//!   at every event (every server spends its budget exactly by each deadline and never runs
//!   without budget);
//! * preemptions: the average per job within ⌈(3p + 1)/2⌉ for a reduction of p levels
//!   (Regnier et al.'s bound on RUN's average preemptions per job), checked per set, from the
//!   metrics and from the trace's records alone (which agree with the per-job metrics);
//! * the refusals: constrained deadlines, `U > m`, sporadic arrivals, overheads.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::TaskSet;
use rtsched_policy::run::Reduction;
use rtsched_sim::{simulate, Arrivals, ExecTimes, Overheads, Scheduler, SimConfig};
use rtsched_trace::Event;

mod servers_common;
use servers_common::{j, random_set, records, trace_counts, traced_config};

/// Three tasks (C 2, D = T 3) on two CPUs, horizon 3 (U = 2). The reduction: each task alone
/// in a server of rate 2/3, three duals of rate 1/3 in one unit server (one level). The unit
/// server runs EDF over the duals, all with deadline 3 and budget 1: dual 0 in [0, 1) (so task
/// 0 does not run; tasks 1 and 2 do, on CPUs 0 and 1), dual 1 in [1, 2) (task 1 is preempted,
/// task 0 takes CPU 0), dual 2 in [2, 3) (task 2 completes at 2 on CPU 1; task 1 resumes there,
/// a migration, since CPU 0 is task 0's). All meet 3; G-EDF misses.
#[test]
fn hand_worked_three_tasks_on_two_processors() {
    use Event::*;
    let ts = TaskSet::from_cdt(&[(2, 3, 3), (2, 3, 3), (2, 3, 3)]).unwrap();
    let mut cfg = SimConfig::new(2);
    cfg.horizon = Some(3);
    cfg.record_trace = true;
    cfg.check_invariants = true;
    let r = simulate(&ts, &Scheduler::Run, &cfg).unwrap();
    let expect = vec![
        (0, Release { job: j(0, 0), deadline: 3 }),
        (0, Release { job: j(1, 0), deadline: 3 }),
        (0, Release { job: j(2, 0), deadline: 3 }),
        (0, Run { cpu: 0, job: j(1, 0) }),
        (0, Run { cpu: 1, job: j(2, 0) }),
        (1, Preempt { cpu: 0, job: j(1, 0) }),
        (1, Run { cpu: 0, job: j(0, 0) }),
        (2, Complete { cpu: 1, job: j(2, 0) }),
        (2, Migration { job: j(1, 0), from: 0, to: 1 }),
        (2, Run { cpu: 1, job: j(1, 0) }),
        (3, Complete { cpu: 0, job: j(0, 0) }),
        (3, Complete { cpu: 1, job: j(1, 0) }),
        (3, Idle { cpu: 0 }),
        (3, Idle { cpu: 1 }),
    ];
    assert_eq!(records(&r), expect);
    assert_eq!((r.jobs, r.completed, r.deadline_misses, r.preemptions, r.migrations), (3, 3, 0, 1, 1));
    assert_eq!(r.scheduler, "RUN");
    let g = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
    assert_eq!(g.deadline_misses, 1, "G-EDF misses one job");
}

/// Budgets ending between integer ns: rates 2/3, 3/5 and 4/7 (U = 193/105) on two processors
/// need one reduction level, and their duals' budgets end at multiples of 1/105 ns; records
/// are at the ceiling, in order, and no job misses over the hyperperiod (105 ns).
#[test]
fn fractional_instants_are_exact_and_recorded_at_their_ceiling() {
    let ts = TaskSet::from_cdt(&[(2, 3, 3), (3, 5, 5), (4, 7, 7)]).unwrap();
    let red = Reduction::build(&ts, 2).unwrap();
    assert_eq!((red.levels(), red.scale()), (1, 105));
    let mut cfg = SimConfig::new(2);
    cfg.record_trace = true;
    cfg.check_invariants = true;
    let r = simulate(&ts, &Scheduler::Run, &cfg).unwrap();
    assert_eq!(r.deadline_misses, 0);
    assert_eq!(r.completed, r.jobs);
    let recs = records(&r);
    assert!(recs.windows(2).all(|w| w[0].0 <= w[1].0));
}

#[test]
fn refusals_name_the_field() {
    let mut cfg = SimConfig::new(2);
    let constrained = TaskSet::from_cdt(&[(1, 4, 4), (1, 3, 5)]).unwrap();
    let e = simulate(&constrained, &Scheduler::Run, &cfg).unwrap_err().to_string();
    assert!(e.contains("task 1") && e.contains("deadline") && e.contains("implicit-deadline"), "{e}");
    let over = TaskSet::from_cdt(&[(2, 3, 3), (2, 3, 3), (3, 4, 4)]).unwrap();
    let e = simulate(&over, &Scheduler::Run, &cfg).unwrap_err().to_string();
    assert!(e.contains("field 'm'") && e.contains("exceeds m = 2"), "{e}");
    let ok = TaskSet::from_cdt(&[(2, 3, 3), (2, 3, 3), (2, 3, 3)]).unwrap();
    cfg.arrivals = Arrivals::Sporadic { max_extra_delay: 2, seed: 1 };
    let e = simulate(&ok, &Scheduler::Run, &cfg).unwrap_err().to_string();
    assert!(e.contains("field 'arrivals'") && e.contains("periodic"), "{e}");
    cfg.arrivals = Arrivals::Periodic { offsets: vec![] };
    cfg.overheads = Some(Overheads { schedule_ns: 1, ..Overheads::ZERO });
    let e = simulate(&ok, &Scheduler::Run, &cfg).unwrap_err().to_string();
    assert!(e.contains("not supported for run"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// RUN's optimality and its preemption bound on one random set.
    #[test]
    fn no_miss_and_preemptions_within_the_bound(seed in any::<u64>(), m in 2u32..=4, offsets in any::<bool>(), short in any::<bool>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ts = random_set(&mut rng, m, seed % 3 == 0);
        let mut cfg = SimConfig::new(m);
        cfg.check_invariants = true;
        if offsets {
            cfg.arrivals = Arrivals::Periodic { offsets: ts.iter().map(|t| rng.random_range(0..t.period)).collect() };
        }
        if short {
            cfg.exec = ExecTimes::UniformFraction { lo: 0.3, seed };
        }
        let r = simulate(&ts, &Scheduler::Run, &cfg).unwrap();
        prop_assert_eq!(r.deadline_misses, 0, "{:?}", ts);
        // Independently of the miss count: every job due by the horizon finished by its deadline.
        let due: Vec<_> = r.per_job.iter().filter(|js| js.deadline <= r.horizon).collect();
        prop_assert!(!due.is_empty());
        for js in due {
            prop_assert!(js.finish.is_some_and(|f| f <= js.deadline), "job {}.{} {:?}: {:?}", js.task, js.job, js.finish, ts);
        }
        // Average preemptions per job within ⌈(3p + 1)/2⌉ for p reduction levels.
        let p = Reduction::build(&ts, m).unwrap().levels() as u64;
        let bound = (3 * p + 1).div_ceil(2);
        prop_assert!(r.preemptions <= bound * r.jobs, "{} preemptions for {} jobs, p = {p}: {:?}", r.preemptions, r.jobs, ts);
    }

    /// Regnier et al.'s bound (RTSS 2011: at most ⌈(3p + 1)/2⌉ preemptions per job on average
    /// for a reduction of p levels), with the preemptions counted from the trace's records
    /// alone, which must also agree with the per-job metrics.
    #[test]
    fn preemptions_counted_from_the_trace_within_the_bound(seed in any::<u64>(), m in 2u32..=4, short in any::<bool>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ts = random_set(&mut rng, m, seed % 3 == 0);
        let cfg = traced_config(m, short, seed);
        let r = simulate(&ts, &Scheduler::Run, &cfg).unwrap();
        let counts = trace_counts(&r);
        let preemptions: u64 = counts.values().map(|c| c.0).sum();
        let p = Reduction::build(&ts, m).unwrap().levels() as u64;
        let bound = (3 * p + 1).div_ceil(2);
        prop_assert!(r.jobs > 0);
        prop_assert!(preemptions <= bound * r.jobs, "{preemptions} preemptions for {} jobs, p = {p}: {:?}", r.jobs, ts);
        for js in &r.per_job {
            let c = counts.get(&j(js.task, js.job)).copied().unwrap_or((0, 0));
            prop_assert_eq!((c.0, c.1), (js.preemptions as u64, js.migrations as u64), "job {}.{}", js.task, js.job);
        }
    }
}
