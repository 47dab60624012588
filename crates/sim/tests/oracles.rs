//! Oracles for the simulator: the paper's Fig. 1 schedules, hand-computed partitioned
//! schedules, the G-EDF invariant on random sets, accounting, the uniprocessor EDF
//! utilization condition, and trace/metric consistency.

use proptest::prelude::*;
use rtsched_model::{TaskSet, Time};
use rtsched_sim::{simulate, Arrivals, ExecTimes, FpOrder, Scheduler, SimConfig, SimResult};
use rtsched_trace::{Event, JobId, Record, Trace};

fn j(task: u32, job: u32) -> JobId {
    JobId { task, job }
}

/// Seed 001 (Brandenburg & Anderson, RTSS 2009) Fig. 1, times ×10: T1 = (2.5, 8) released at
/// 6.5, T2 = (6, 11) at 3.9, T3 = (6.5, 12) at 1.5, on two processors; tasks 0, 1, 2 = T1, T2, T3.
fn fig1(sched: Scheduler) -> SimResult {
    let ts = TaskSet::from_ct(&[(25, 80), (60, 110), (65, 120)]).unwrap();
    let mut cfg = SimConfig::new(2);
    cfg.arrivals = Arrivals::Periodic { offsets: vec![65, 39, 15] };
    cfg.horizon = Some(130); // one job of each task
    cfg.record_trace = true;
    cfg.check_invariants = true;
    simulate(&ts, &sched, &cfg).unwrap()
}

fn records(r: &SimResult) -> Vec<(Time, Event)> {
    r.trace.as_ref().unwrap().records.iter().map(|r| (r.time, r.event)).collect()
}

#[test]
fn fig1a_event_driven() {
    use Event::*;
    let r = fig1(Scheduler::Gedf);
    let expect = vec![
        (15, Release { job: j(2, 0), deadline: 135 }),
        (15, Run { cpu: 0, job: j(2, 0) }),
        (39, Release { job: j(1, 0), deadline: 149 }),
        (39, Run { cpu: 1, job: j(1, 0) }),
        (65, Release { job: j(0, 0), deadline: 145 }),
        // "T1 is released ... and immediately scheduled on P2"
        (65, Preempt { cpu: 1, job: j(1, 0) }),
        (65, Run { cpu: 1, job: j(0, 0) }),
        (80, Complete { cpu: 0, job: j(2, 0) }),
        (80, Migration { job: j(1, 0), from: 1, to: 0 }),
        (80, Run { cpu: 0, job: j(1, 0) }),
        (90, Complete { cpu: 1, job: j(0, 0) }),
        (90, Idle { cpu: 1 }),
        (114, Complete { cpu: 0, job: j(1, 0) }),
        (114, Idle { cpu: 0 }),
    ];
    assert_eq!(records(&r), expect);
    assert_eq!((r.jobs, r.completed, r.deadline_misses, r.preemptions, r.migrations), (3, 3, 0, 1, 1));
    assert_eq!(r.context_switches, 6); // 3 per CPU: idle→job→job→idle
    assert_eq!(r.max_response_time_ns, Some(114 - 39));
}

#[test]
fn fig1b_quantum_driven_aligned() {
    use Event::*;
    let r = fig1(Scheduler::GedfQuantum { quantum: 10, staggered: false });
    let expect = vec![
        (15, Release { job: j(2, 0), deadline: 135 }),
        (20, Run { cpu: 0, job: j(2, 0) }), // "not scheduled until time 2"
        (39, Release { job: j(1, 0), deadline: 149 }),
        (40, Run { cpu: 1, job: j(1, 0) }),
        (65, Release { job: j(0, 0), deadline: 145 }),
        (70, Preempt { cpu: 1, job: j(1, 0) }), // "does not take place until ... time 7"
        (70, Run { cpu: 1, job: j(0, 0) }),
        (85, Complete { cpu: 0, job: j(2, 0) }),
        (85, Idle { cpu: 0 }), // "P1 is partially idle ... in quantum [8,9)"
        (90, Migration { job: j(1, 0), from: 1, to: 0 }),
        (90, Run { cpu: 0, job: j(1, 0) }),
        (95, Complete { cpu: 1, job: j(0, 0) }),
        (95, Idle { cpu: 1 }),
        (120, Complete { cpu: 0, job: j(1, 0) }),
        (120, Idle { cpu: 0 }),
    ];
    assert_eq!(records(&r), expect);
    assert_eq!(r.events, 3 + 3 + 13); // releases, completions, ticks at 0..120
}

#[test]
fn fig1_staggered_quanta_hand_computed() {
    use Event::*;
    // CPU 0 ticks at 0, 10, 20, ...; CPU 1 at 5, 15, 25, ...
    let r = fig1(Scheduler::GedfQuantum { quantum: 10, staggered: true });
    let expect = vec![
        (15, Release { job: j(2, 0), deadline: 135 }),
        (15, Run { cpu: 1, job: j(2, 0) }),
        (39, Release { job: j(1, 0), deadline: 149 }),
        (40, Run { cpu: 0, job: j(1, 0) }),
        (65, Release { job: j(0, 0), deadline: 145 }), // CPU 1's tick at 65 keeps T3 (higher)
        (70, Preempt { cpu: 0, job: j(1, 0) }),
        (70, Run { cpu: 0, job: j(0, 0) }),
        (80, Complete { cpu: 1, job: j(2, 0) }),
        (80, Idle { cpu: 1 }),
        (85, Migration { job: j(1, 0), from: 0, to: 1 }),
        (85, Run { cpu: 1, job: j(1, 0) }),
        (95, Complete { cpu: 0, job: j(0, 0) }),
        (95, Idle { cpu: 0 }),
        (115, Complete { cpu: 1, job: j(1, 0) }),
        (115, Idle { cpu: 1 }),
    ];
    assert_eq!(records(&r), expect);
}

/// cpu 0: τ0 = (2, 5, 5), τ1 = (4, 10, 10); cpu 1: τ2 = (2, 3, 10), τ3 = (2, 5, 5).
fn partitioned(sched: Scheduler) -> SimResult {
    let ts = TaskSet::from_cdt(&[(2, 5, 5), (4, 10, 10), (2, 3, 10), (2, 5, 5)]).unwrap();
    let mut cfg = SimConfig::new(2);
    cfg.record_trace = true;
    cfg.check_invariants = true;
    simulate(&ts, &sched, &cfg).unwrap()
}

fn finishes(r: &SimResult) -> Vec<(u32, u32, Option<Time>)> {
    r.per_job.iter().map(|j| (j.task, j.job, j.finish)).collect()
}

#[test]
fn pedf_hand_computed() {
    let r = partitioned(Scheduler::Pedf(vec![vec![0, 1], vec![2, 3]]));
    assert_eq!(r.horizon, 10);
    // cpu 0: τ0 [0,2), τ1 [2,5), τ0.1 wins the deadline tie at 5 by task index [5,7), τ1 [7,8).
    // cpu 1: τ2 (d 3) [0,2), τ3 [2,4), τ3.1 [5,7).
    assert_eq!(
        finishes(&r),
        vec![(0, 0, Some(2)), (1, 0, Some(8)), (2, 0, Some(2)), (3, 0, Some(4)), (0, 1, Some(7)), (3, 1, Some(7))]
    );
    assert_eq!((r.deadline_misses, r.preemptions, r.migrations, r.context_switches), (0, 1, 0, 10));
    assert_eq!(r.per_task[1].preemptions, 1);
}

#[test]
fn pfp_rate_vs_deadline_monotonic_hand_computed() {
    let rm = partitioned(Scheduler::Pfp(vec![vec![0, 1], vec![2, 3]], FpOrder::RateMonotonic));
    // RM on cpu 1: τ3 (T 5) first [0,2), τ2 [2,4) finishes 1 after its deadline 3.
    assert_eq!(
        finishes(&rm),
        vec![(0, 0, Some(2)), (1, 0, Some(8)), (2, 0, Some(4)), (3, 0, Some(2)), (0, 1, Some(7)), (3, 1, Some(7))]
    );
    assert_eq!((rm.deadline_misses, rm.max_tardiness_ns), (1, 1));
    assert_eq!(rm.per_task[2].deadline_misses, 1);
    let dm = partitioned(Scheduler::Pfp(vec![vec![0, 1], vec![2, 3]], FpOrder::DeadlineMonotonic));
    assert_eq!(dm.deadline_misses, 0);
    assert_eq!(finishes(&dm), finishes(&partitioned(Scheduler::Pedf(vec![vec![0, 1], vec![2, 3]]))));
}

#[test]
fn tardy_jobs_run_in_order() {
    // C > T: every job waits for its predecessor; the trace shows jobs in sequence.
    let ts = TaskSet::from_cdt(&[(3, 2, 2)]).unwrap();
    let mut cfg = SimConfig::new(1);
    cfg.horizon = Some(10);
    cfg.record_trace = true;
    cfg.check_invariants = true;
    let r = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
    assert_eq!(r.jobs, 5);
    assert_eq!(finishes(&r), vec![(0, 0, Some(3)), (0, 1, Some(6)), (0, 2, Some(9)), (0, 3, None), (0, 4, None)]);
    // Misses: deadlines 2, 4, 6, 8, 10 all ≤ 10 and all late or unfinished.
    assert_eq!(r.deadline_misses, 5);
    assert_eq!(r.max_tardiness_ns, 3); // job 2: 9 - 6; job 3: at least 10 - 8 = 2
    assert_eq!(r.pending, 2);
}

#[test]
fn rejects_bad_input() {
    let ts = TaskSet::from_ct(&[(1, 4), (1, 6)]).unwrap();
    let ok = SimConfig::new(2);
    let mut bad = ok.clone();
    bad.m = 0;
    assert!(simulate(&ts, &Scheduler::Gedf, &bad).is_err());
    for p in [vec![vec![0]], vec![vec![0], vec![0, 1]], vec![vec![0], vec![5]], vec![vec![0, 1]]] {
        let e = simulate(&ts, &Scheduler::Pedf(p.clone()), &ok);
        assert!(e.is_err(), "{p:?}");
    }
    assert!(simulate(&ts, &Scheduler::GedfQuantum { quantum: 0, staggered: false }, &ok).is_err());
    let mut bad = ok.clone();
    bad.arrivals = Arrivals::Periodic { offsets: vec![1] };
    assert!(simulate(&ts, &Scheduler::Gedf, &bad).is_err());
    let mut bad = ok.clone();
    bad.exec = ExecTimes::UniformFraction { lo: f64::NAN, seed: 1 };
    assert!(simulate(&ts, &Scheduler::Gedf, &bad).is_err());
    bad.exec = ExecTimes::UniformFraction { lo: 1.5, seed: 1 };
    assert!(simulate(&ts, &Scheduler::Gedf, &bad).is_err());
    let mut bad = ok.clone();
    bad.horizon = Some(0);
    assert!(simulate(&ts, &Scheduler::Gedf, &bad).is_err());
    let mut bad = ok.clone();
    bad.max_jobs = 3;
    let e = simulate(&ts, &Scheduler::Gedf, &bad).unwrap_err().to_string();
    assert!(e.contains("max_jobs"), "{e}");
}

#[test]
fn horizon_is_capped_with_a_message() {
    let ts = TaskSet::from_ct(&[(1, 1_000_003), (1, 1_000_033)]).unwrap();
    let mut cfg = SimConfig::new(1);
    cfg.horizon_cap = 5_000_000;
    let r = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
    assert!(r.horizon_capped);
    assert_eq!(r.horizon, 5_000_000);
    assert!(r.horizon_message.as_deref().unwrap().contains("hyperperiod"));
    let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(v["horizon_capped"], true);
}

// ---------- random oracles ----------

fn arb_taskset(max_n: usize, arbitrary_deadlines: bool) -> impl Strategy<Value = TaskSet> {
    prop::collection::vec((1u64..=30, 1u64..=30, 1u64..=60), 1..=max_n).prop_map(move |v| {
        let params: Vec<(Time, Time, Time)> = v
            .into_iter()
            .map(|(p, c, d)| {
                let period = p;
                let wcet = 1 + (c - 1) % period.max(1); // C ≤ T
                let deadline = if arbitrary_deadlines { d } else { period };
                (wcet, deadline, period)
            })
            .collect();
        TaskSet::from_cdt(&params).unwrap()
    })
}

/// Implicit-deadline sets whose periods divide 720, so that the hyperperiod stays short.
fn arb_divisor_taskset(max_n: usize) -> impl Strategy<Value = TaskSet> {
    const DIVS: [u64; 18] = [2, 3, 4, 5, 6, 8, 9, 10, 12, 15, 16, 18, 20, 24, 30, 36, 45, 48];
    prop::collection::vec((0usize..DIVS.len(), 1u64..=48), 1..=max_n).prop_map(|v| {
        let params: Vec<(Time, Time)> = v.into_iter().map(|(k, c)| (1 + (c - 1) % DIVS[k], DIVS[k])).collect();
        TaskSet::from_ct(&params).unwrap()
    })
}

fn arb_cfg(m: u32) -> impl Strategy<Value = SimConfig> {
    (any::<bool>(), 0u64..10, any::<u64>(), prop::option::of(0.0f64..=1.0), any::<bool>()).prop_map(
        move |(sporadic, extra, seed, lo, rec)| {
            let mut cfg = SimConfig::new(m);
            cfg.horizon = Some(400);
            if sporadic {
                cfg.arrivals = Arrivals::Sporadic { max_extra_delay: extra, seed };
            }
            if let Some(lo) = lo {
                cfg.exec = ExecTimes::UniformFraction { lo, seed: seed ^ 7 };
            }
            cfg.record_trace = rec;
            cfg.check_invariants = true;
            cfg
        },
    )
}

/// Trace-metric consistency: metrics recomputed from the exported JSON Lines equal the
/// in-memory ones; plus model facts visible only in the trace.
fn check_trace(ts: &TaskSet, r: &SimResult, cfg: &SimConfig) {
    let Some(trace) = &r.trace else { return };
    let back = Trace::from_jsonl(&trace.to_jsonl()).unwrap();
    let m = back.metrics().unwrap();
    assert_eq!(
        (
            m.jobs,
            m.completed,
            m.pending,
            m.deadline_misses,
            m.max_tardiness_ns,
            m.max_response_time_ns,
            m.preemptions,
            m.migrations,
            m.context_switches
        ),
        (
            r.jobs,
            r.completed,
            r.pending,
            r.deadline_misses,
            r.max_tardiness_ns,
            r.max_response_time_ns,
            r.preemptions,
            r.migrations,
            r.context_switches
        )
    );
    assert_eq!(m.per_task, r.per_task);
    assert_eq!(m.per_job, r.per_job);
    assert_eq!(m.deadline_miss_records, r.deadline_misses);
    for js in &r.per_job {
        let t = &ts[js.task as usize];
        assert!(js.executed <= t.wcet);
        if js.finish.is_some() && matches!(cfg.exec, ExecTimes::Wcet) {
            assert_eq!(js.executed, t.wcet);
        }
    }
    // Releases of a task are at least a period apart; exactly for periodic arrivals.
    let mut last: Vec<Option<Time>> = vec![None; ts.len()];
    for Record { time, event } in &trace.records {
        if let Event::Release { job, .. } = event {
            if let Some(l) = last[job.task as usize] {
                let gap = time - l;
                let p = ts[job.task as usize].period;
                assert!(gap >= p);
                if matches!(cfg.arrivals, Arrivals::Periodic { .. }) {
                    assert_eq!(gap, p);
                }
            }
            last[job.task as usize] = Some(*time);
        }
    }
    // The other exports accept every simulated trace.
    assert!(trace.to_job_csv().unwrap().lines().count() as u64 == r.jobs + 1);
    assert_eq!(trace.to_job_csv().unwrap(), r.to_job_csv());
    assert!(trace.to_sched_trace_bytes().unwrap().len() % 24 == 0);
    serde_json::from_str::<serde_json::Value>(&trace.to_perfetto_json()).unwrap();
    assert!(trace.to_gantt_svg(None).ends_with("</svg>\n"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// The G-EDF invariant (the min(m, r) highest-priority ready jobs run) is checked inside
    /// the simulator at every instant (check_invariants), and accounting at the horizon.
    #[test]
    fn gedf_invariant_random(ts in arb_taskset(10, true), m in 1u32..=4, cfg in (1u32..=4).prop_flat_map(arb_cfg)) {
        let mut cfg = cfg;
        cfg.m = m;
        let r = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
        prop_assert_eq!(r.jobs, r.completed + r.pending);
        prop_assert!(r.migrations <= r.preemptions);
        check_trace(&ts, &r, &cfg);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn quantum_and_partitioned_random(ts in arb_taskset(8, true), m in 1u32..=3, q in 1u64..=7, staggered in any::<bool>(), cfg in arb_cfg(1), seed in any::<u64>()) {
        let mut cfg = cfg;
        cfg.m = m;
        let r = simulate(&ts, &Scheduler::GedfQuantum { quantum: q, staggered }, &cfg).unwrap();
        prop_assert_eq!(r.jobs, r.completed + r.pending);
        check_trace(&ts, &r, &cfg);
        // Quantum-driven runs only start jobs at ticks.
        if let Some(tr) = &r.trace {
            for rec in &tr.records {
                if let Event::Run { cpu, .. } = rec.event {
                    let off = if staggered { q * cpu as u64 / m as u64 } else { 0 };
                    prop_assert_eq!((rec.time + q - off % q) % q, 0);
                }
            }
        }
        let part: Vec<Vec<usize>> = (0..m as usize).map(|c| (0..ts.len()).filter(|i| (*i as u64 ^ seed) % m as u64 == c as u64).collect()).collect();
        for s in [Scheduler::Pedf(part.clone()), Scheduler::Pfp(part.clone(), FpOrder::RateMonotonic), Scheduler::Pfp(part, FpOrder::DeadlineMonotonic)] {
            let r = simulate(&ts, &s, &cfg).unwrap();
            prop_assert_eq!(r.migrations, 0);
            check_trace(&ts, &r, &cfg);
        }
    }

    /// Uniprocessor EDF, implicit deadlines, synchronous periodic release, WCET execution,
    /// one hyperperiod: a deadline is missed iff U > 1 (Liu & Layland 1973).
    #[test]
    fn uniprocessor_edf_misses_iff_overloaded(ts in arb_divisor_taskset(6)) {
        let cfg = SimConfig::new(1);
        let r = simulate(&ts, &Scheduler::Gedf, &{ let mut c = cfg.clone(); c.check_invariants = true; c }).unwrap();
        prop_assert!(!r.horizon_capped);
        prop_assert_eq!(r.deadline_misses > 0, !ts.utilization_at_most(1));
        // P-EDF on one CPU is the same schedule.
        let p = simulate(&ts, &Scheduler::Pedf(vec![(0..ts.len()).collect()]), &cfg).unwrap();
        prop_assert_eq!(p.per_job, r.per_job);
    }
}

#[test]
fn edge_cases_do_not_panic() {
    let empty = TaskSet::new(vec![]).unwrap();
    let r = simulate(&empty, &Scheduler::Gedf, &SimConfig::new(3)).unwrap();
    assert_eq!((r.jobs, r.context_switches), (0, 0));
    // Many CPUs, few tasks; an overloaded task with sporadic arrivals; a huge period.
    let ts = TaskSet::from_cdt(&[(7, 3, 5), (1, 1, 1 << 53)]).unwrap();
    let mut cfg = SimConfig::new(rtsched_model::MAX_M);
    cfg.horizon = Some(1000);
    cfg.arrivals = Arrivals::Sporadic { max_extra_delay: 1 << 53, seed: 3 };
    cfg.check_invariants = true;
    let r = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
    assert_eq!(r.jobs, r.completed + r.pending);
    let mut cfg = SimConfig::new(2);
    cfg.horizon = Some(u64::MAX);
    cfg.max_jobs = 10;
    assert!(simulate(&ts, &Scheduler::Gedf, &cfg).is_err()); // capped at 1000 s: too many jobs
    cfg.m = rtsched_model::MAX_M + 1;
    assert!(simulate(&ts, &Scheduler::Gedf, &cfg).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// `keep_jobs = false` (a job's statistics folded into the totals when it completes, then
    /// dropped) changes nothing but the per-job rows, under every job-level loop, with and
    /// without a trace, early deadlines, sporadic arrivals and short execution included.
    #[test]
    fn dropping_job_rows_changes_no_metric(ts in arb_taskset(8, true), m in 1u32..=3, q in 1u64..=5, cfg in arb_cfg(1), seed in any::<u64>()) {
        let mut cfg = cfg;
        cfg.m = m;
        let part: Vec<Vec<usize>> = (0..m as usize).map(|c| (0..ts.len()).filter(|i| (*i as u64 ^ seed) % m as u64 == c as u64).collect()).collect();
        for s in [Scheduler::Gedf, Scheduler::GedfQuantum { quantum: q, staggered: false }, Scheduler::Pedf(part.clone()), Scheduler::Pfp(part.clone(), FpOrder::DeadlineMonotonic)] {
            let kept = simulate(&ts, &s, &cfg).unwrap();
            let lean = simulate(&ts, &s, &SimConfig { keep_jobs: false, ..cfg.clone() }).unwrap();
            prop_assert!(lean.per_job.is_empty());
            prop_assert_eq!(&SimResult { per_job: Vec::new(), ..kept.clone() }, &lean, "{:?}", s);
            prop_assert_eq!(kept.per_job.len() as u64, kept.jobs);
        }
    }
}
