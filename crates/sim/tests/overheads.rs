//! Oracles for overhead injection (docs/simulator.md, "Overhead injection"): zero overheads
//! change nothing, hand-computed schedules with overheads (one CPU; seed 001 Fig. 1 with
//! release overhead on P1, an IPI to P2 and Δsch + Δcxs there), the charged totals against the
//! trace, work conservation (each job gets exactly its execution time outside the overhead
//! pieces of its CPU), a tight set that misses only with overheads, and bad model files.

use proptest::prelude::*;
use rtsched_model::{TaskSet, Time};
use rtsched_sim::{
    simulate, Arrivals, ExecTimes, FpOrder, OverheadSpec, OverheadStat, Overheads, Scheduler, SimConfig, SimResult,
};
use rtsched_trace::{Event, JobId, OverheadKind, Record};
use std::collections::HashMap;

fn j(task: u32, job: u32) -> JobId {
    JobId { task, job }
}

fn records(r: &SimResult) -> Vec<(Time, Event)> {
    r.trace.as_ref().unwrap().records.iter().map(|r| (r.time, r.event)).collect()
}

fn ov(release: Time, schedule: Time, cxs: Time, ipi: Time) -> Overheads {
    Overheads { release_ns: release, schedule_ns: schedule, context_switch_ns: cxs, ipi_ns: ipi, ..Overheads::ZERO }
}

fn o(cpu: u32, kind: OverheadKind, duration: Time) -> Event {
    Event::Overhead { cpu, kind, duration }
}

#[test]
fn one_task_one_cpu_hand_computed() {
    // C = 2, T = D = 10. Release handler [0,1), Δsch [1,2), Δcxs [2,3), execution [3,5).
    let ts = TaskSet::from_ct(&[(2, 10)]).unwrap();
    let mut cfg = SimConfig::new(1);
    cfg.horizon = Some(20);
    cfg.record_trace = true;
    cfg.check_invariants = true;
    cfg.overheads = Some(ov(1, 1, 1, 0));
    for sched in
        [Scheduler::Gedf, Scheduler::Pedf(vec![vec![0]]), Scheduler::Pfp(vec![vec![0]], FpOrder::RateMonotonic)]
    {
        let r = simulate(&ts, &sched, &cfg).unwrap();
        let f: Vec<_> = r.per_job.iter().map(|j| (j.start, j.finish)).collect();
        assert_eq!(f, vec![(Some(1), Some(5)), (Some(11), Some(15))], "{}", sched.name());
        assert_eq!(r.max_response_time_ns, Some(5));
        let rep = r.overheads.as_ref().unwrap();
        assert_eq!(rep.cpu_time_ns, 6);
    }
    // Release latency Δev = 2 shifts everything by 2.
    cfg.overheads = Some(Overheads { release_event_ns: 2, ..ov(1, 1, 1, 0) });
    let r = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
    let f: Vec<_> = r.per_job.iter().map(|j| j.finish).collect();
    assert_eq!(f, vec![Some(7), Some(17)]);
}

#[test]
fn two_tasks_one_cpu_hand_computed() {
    // τ0 = (C 4, D = T = 20) at 0; τ1 = (C 2, D = T = 6) at 3, 9; Δrel = Δsch = Δcxs = 1 ns.
    let ts = TaskSet::from_ct(&[(4, 20), (2, 6)]).unwrap();
    let mut cfg = SimConfig::new(1);
    cfg.arrivals = Arrivals::Periodic { offsets: vec![0, 3] };
    cfg.horizon = Some(12);
    cfg.record_trace = true;
    cfg.check_invariants = true;
    cfg.overheads = Some(ov(1, 1, 1, 0));
    use Event::*;
    use OverheadKind as K;
    let expect = vec![
        (0, Release { job: j(0, 0), deadline: 20 }),
        (0, o(0, K::Release, 1)),
        (1, o(0, K::Schedule, 1)),
        (1, Run { cpu: 0, job: j(0, 0) }),
        (2, o(0, K::ContextSwitch, 1)),
        // τ0 would progress from 3, but τ1's release handler takes [3,4) first.
        (3, Release { job: j(1, 0), deadline: 9 }),
        (3, o(0, K::Release, 1)),
        (4, Preempt { cpu: 0, job: j(0, 0) }),
        (4, o(0, K::Schedule, 1)),
        (4, Run { cpu: 0, job: j(1, 0) }),
        (5, o(0, K::ContextSwitch, 1)),
        (8, Complete { cpu: 0, job: j(1, 0) }),
        (8, o(0, K::Schedule, 1)),
        (8, Run { cpu: 0, job: j(0, 0) }),
        // The release handler of 9 waits for the context switch in service [9,10).
        (9, Release { job: j(1, 1), deadline: 15 }),
        (9, o(0, K::ContextSwitch, 1)),
        (10, o(0, K::Release, 1)),
        (11, Preempt { cpu: 0, job: j(0, 0) }),
        (11, o(0, K::Schedule, 1)),
        (11, Run { cpu: 0, job: j(1, 1) }),
        (12, o(0, K::ContextSwitch, 1)),
    ];
    for sched in [Scheduler::Gedf, Scheduler::Pedf(vec![vec![0, 1]])] {
        let r = simulate(&ts, &sched, &cfg).unwrap();
        assert_eq!(records(&r), expect, "{}", sched.name());
        // τ0 has executed nothing yet: [1,4) and [8,11) were all overhead.
        assert_eq!(r.per_job[0].finish, None);
        assert_eq!(r.per_job[1].finish, Some(8));
        assert_eq!(r.preemptions, 1); // τ0's resumption at 8
    }
}

/// Seed 001 (RTSS 2009) Fig. 1, times ×10, with Δrel = 2, Δsch = Δcxs = 1, Δipi = 3: releases
/// are handled on P1 (CPU 0, the global release domain); at 6.5 "release overhead is incurred
/// on P1 ..., but scheduling and context-switching overhead are incurred on P2 where T1
/// preempts T2", T1 "incurs additional IPI latency", and T3 on P1 "is delayed by release
/// overhead at 6.5 due to T1's release even though T3 has higher priority" (§2, Fig. 1(c)).
#[test]
fn fig1c_global_edf_with_overheads() {
    let ts = TaskSet::from_ct(&[(25, 80), (60, 110), (65, 120)]).unwrap();
    let mut cfg = SimConfig::new(2);
    cfg.arrivals = Arrivals::Periodic { offsets: vec![65, 39, 15] };
    cfg.horizon = Some(130);
    cfg.record_trace = true;
    cfg.check_invariants = true;
    cfg.overheads = Some(ov(2, 1, 1, 3));
    let r = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
    use Event::*;
    use OverheadKind as K;
    let expect = vec![
        (15, Release { job: j(2, 0), deadline: 135 }),
        (15, o(0, K::Release, 2)),
        (17, o(0, K::Schedule, 1)), // local: CPU 0 handled the release
        (17, Run { cpu: 0, job: j(2, 0) }),
        (18, o(0, K::ContextSwitch, 1)),
        (39, Release { job: j(1, 0), deadline: 149 }),
        (39, o(0, K::Release, 2)), // T3 on CPU 0 is delayed: finish 84 → 86
        (41, o(1, K::Ipi, 3)),     // T2 linked to idle CPU 1
        (44, o(1, K::Schedule, 1)),
        (44, Run { cpu: 1, job: j(1, 0) }),
        (45, o(1, K::ContextSwitch, 1)),
        (65, Release { job: j(0, 0), deadline: 145 }),
        (65, o(0, K::Release, 2)), // T3 delayed again although it has the earliest deadline
        (67, o(1, K::Ipi, 3)),
        (70, Preempt { cpu: 1, job: j(1, 0) }), // T2 ran [46,70): 24 of 60
        (70, o(1, K::Schedule, 1)),
        (70, Run { cpu: 1, job: j(0, 0) }),
        (71, o(1, K::ContextSwitch, 1)),
        (88, Complete { cpu: 0, job: j(2, 0) }), // 19 + 65 + 2 + 2
        (88, o(0, K::Schedule, 1)),
        (88, Migration { job: j(1, 0), from: 1, to: 0 }),
        (88, Run { cpu: 0, job: j(1, 0) }),
        (89, o(0, K::ContextSwitch, 1)),
        (97, Complete { cpu: 1, job: j(0, 0) }), // 72 + 25
        (97, Idle { cpu: 1 }),
        (126, Complete { cpu: 0, job: j(1, 0) }), // 90 + 36
        (126, Idle { cpu: 0 }),
    ];
    assert_eq!(records(&r), expect);
    let resp: Vec<_> = r.per_task.iter().map(|t| t.max_response_time_ns).collect();
    assert_eq!(resp, vec![Some(32), Some(87), Some(73)]); // ideal: 25, 75, 65
    let rep = r.overheads.as_ref().unwrap();
    let get = |k: OverheadKind| rep.charged.iter().find(|s| s.kind == k).map(|s| (s.count, s.total_ns)).unwrap();
    assert_eq!(get(K::Release), (3, 6));
    assert_eq!(get(K::Schedule), (4, 4));
    assert_eq!(get(K::ContextSwitch), (4, 4));
    assert_eq!(get(K::Ipi), (2, 6));
    assert_eq!(get(K::Tick), (0, 0));
    assert_eq!(rep.cpu_time_ns, 14);
}

#[test]
fn quantum_ticks_are_charged_on_every_cpu() {
    // Aligned quanta Q = 10 on 2 CPUs, tick 2: one job C = 5 released at 0 runs on CPU 0
    // after the tick piece [0,2) and Δsch [2,3): [3,8).
    let ts = TaskSet::from_ct(&[(5, 40)]).unwrap();
    let mut cfg = SimConfig::new(2);
    cfg.horizon = Some(40);
    cfg.record_trace = true;
    cfg.check_invariants = true;
    cfg.overheads = Some(Overheads { tick_ns: 2, schedule_ns: 1, ..Overheads::ZERO });
    let r = simulate(&ts, &Scheduler::GedfQuantum { quantum: 10, staggered: false }, &cfg).unwrap();
    assert_eq!(r.per_job[0].finish, Some(8));
    let rep = r.overheads.as_ref().unwrap();
    let tick = rep.charged.iter().find(|s| s.kind == OverheadKind::Tick).unwrap();
    assert_eq!((tick.count, tick.total_ns), (8, 16)); // ticks at 0, 10, 20, 30 on 2 CPUs
                                                      // Staggered: CPU 1 ticks at 5, 15, ...; the job is released at 0 and linked at CPU 0's tick.
    let r = simulate(&ts, &Scheduler::GedfQuantum { quantum: 10, staggered: true }, &cfg).unwrap();
    assert_eq!(r.per_job[0].finish, Some(8));
    // A tick as long as the quantum, and a tick under an event-driven scheduler, are refused.
    cfg.overheads = Some(Overheads { tick_ns: 10, ..Overheads::ZERO });
    let e = simulate(&ts, &Scheduler::GedfQuantum { quantum: 10, staggered: false }, &cfg).unwrap_err().to_string();
    assert!(e.contains("tick_ns") && e.contains("below the quantum"), "{e}");
    cfg.overheads = Some(Overheads { tick_ns: 1, ..Overheads::ZERO });
    let e = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap_err().to_string();
    assert!(e.contains("tick_ns") && e.contains("gedf-quantum"), "{e}");
}

#[test]
fn unsupported_schedulers_are_refused() {
    let ts = TaskSet::from_ct(&[(1, 4)]).unwrap();
    let mut cfg = SimConfig::new(1);
    cfg.overheads = Some(Overheads::ZERO);
    let e = simulate(&ts, &Scheduler::Rtws, &cfg).unwrap_err().to_string();
    assert!(e.contains("field 'overheads'") && e.contains("not supported for rtws"), "{e}");
    cfg.overheads = Some(Overheads { ipi_ns: 2_000_000_000, ..Overheads::ZERO });
    let e = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap_err().to_string();
    assert!(e.contains("overheads.ipi_ns"), "{e}");
}

/// A tight set: meets every deadline without overheads, misses with the model's maxima, and
/// the model is evaluated at n by interpolation.
#[test]
fn tight_set_misses_only_with_overheads() {
    // Two CPUs, U = 1.9: τ0 = τ1 = (19, 20), τ2 = (2, 10)... keep each CPU almost full.
    let ts = TaskSet::from_ct(&[(19, 20), (9, 10), (1, 20)]).unwrap();
    let mut cfg = SimConfig::new(2);
    cfg.check_invariants = true;
    let part = vec![vec![0], vec![1, 2]];
    for sched in [Scheduler::Gedf, Scheduler::Pedf(part.clone()), Scheduler::Pfp(part.clone(), FpOrder::RateMonotonic)]
    {
        cfg.overheads = None;
        let r = simulate(&ts, &sched, &cfg).unwrap();
        assert_eq!(r.deadline_misses, 0, "{}", sched.name());
        // The model at n = 3: between n = 2 and n = 4, maxima made monotone.
        let model = r#"{"format": "rtsched-overhead-model", "version": 1, "scheduler": "gsn-edf", "m": 2,
            "terms": {"release": {"n": [2, 4], "avg_ns": [0.2, 0.4], "max_ns": [1, 1], "count": [5, 5]},
                      "schedule": {"n": [2, 4], "avg_ns": [0.1, 0.1], "max_ns": [1, 3]},
                      "lock_wait": {"n": [2], "avg_ns": [1], "max_ns": [1]}}}"#;
        let spec = OverheadSpec::from_json(model).unwrap();
        let v = spec.resolve(ts.len(), OverheadStat::Max);
        // lock_wait is resolved too (the simulator ignores it: docs/simulator.md).
        assert_eq!(v, Overheads { release_ns: 1, schedule_ns: 2, lock_wait_ns: 1, ..Overheads::ZERO });
        cfg.overheads = Some(v);
        let r = simulate(&ts, &sched, &cfg).unwrap();
        assert!(r.deadline_misses > 0, "{}", sched.name());
        // The averages round up to 1 ns each and still break it.
        let a = spec.resolve(ts.len(), OverheadStat::Avg);
        assert_eq!(a, Overheads { release_ns: 1, schedule_ns: 1, lock_wait_ns: 1, ..Overheads::ZERO });
    }
}

#[test]
fn bad_model_files_name_the_field() {
    let cases: [(&str, &str); 10] = [
        (r#"{"format": "other"}"#, "overheads.format"),
        (r#"{"format": "rtsched-overhead-model", "version": 2, "terms": {}}"#, "overheads.version"),
        (r#"{"format": "rtsched-overhead-model", "version": 1}"#, "overheads.terms"),
        (
            r#"{"format": "rtsched-overhead-model", "version": 1, "terms": {"relase": {"n": [1], "avg_ns": [1], "max_ns": [1]}}}"#,
            "overheads.terms.relase",
        ),
        (
            r#"{"format": "rtsched-overhead-model", "version": 1, "terms": {"ipi": {"n": [2, 2], "avg_ns": [1, 1], "max_ns": [1, 1]}}}"#,
            "overheads.terms.ipi.n[1]",
        ),
        (
            r#"{"format": "rtsched-overhead-model", "version": 1, "terms": {"ipi": {"n": [2, 4], "avg_ns": [1], "max_ns": [1, 1]}}}"#,
            "overheads.terms.ipi.avg_ns",
        ),
        (
            r#"{"format": "rtsched-overhead-model", "version": 1, "terms": {"ipi": {"n": [2], "avg_ns": [1], "max_ns": [-3]}}}"#,
            "overheads.terms.ipi.max_ns[0]",
        ),
        (
            r#"{"format": "rtsched-overhead-model", "version": 1, "terms": {"schedule": {"n": [2], "avg_ns": [5], "max_ns": [3]}}}"#,
            "overheads.terms.schedule.avg_ns[0]",
        ),
        (
            r#"{"format": "rtsched-overhead-model", "version": 1, "terms": {"schedule": {"n": [], "avg_ns": [], "max_ns": []}}}"#,
            "overheads.terms.schedule.n",
        ),
        (r#"[1, 2]"#, "overheads"),
    ];
    for (text, field) in cases {
        let e = OverheadSpec::from_json(text).unwrap_err().to_string();
        assert!(e.contains(&format!("field '{field}'")), "{text}: {e}");
    }
}

// ---------- random oracles ----------

fn arb_taskset(max_n: usize) -> impl Strategy<Value = TaskSet> {
    prop::collection::vec((1u64..=30, 1u64..=30, 1u64..=60), 1..=max_n).prop_map(|v| {
        let params: Vec<(Time, Time, Time)> = v.into_iter().map(|(p, c, d)| (1 + (c - 1) % p, d, p)).collect();
        TaskSet::from_cdt(&params).unwrap()
    })
}

fn arb_sched(n: usize, m: u32) -> impl Strategy<Value = Scheduler> {
    (0u8..5, prop::collection::vec(0u32..m, n), 1u64..8).prop_map(move |(k, cpus, q)| {
        let mut part = vec![Vec::new(); m as usize];
        for (i, c) in cpus.into_iter().enumerate() {
            part[c as usize].push(i);
        }
        match k {
            0 => Scheduler::Gedf,
            1 => Scheduler::GedfQuantum { quantum: q, staggered: false },
            2 => Scheduler::GedfQuantum { quantum: q, staggered: true },
            3 => Scheduler::Pedf(part),
            _ => Scheduler::Pfp(part, FpOrder::DeadlineMonotonic),
        }
    })
}

fn arb_case() -> impl Strategy<Value = (TaskSet, Scheduler, SimConfig)> {
    (arb_taskset(8), 1u32..=4).prop_flat_map(|(ts, m)| {
        let n = ts.len();
        (Just(ts), arb_sched(n, m), any::<bool>(), 0u64..6, any::<u64>(), prop::option::of(0.0f64..=1.0)).prop_map(
            move |(ts, sched, sporadic, extra, seed, lo)| {
                let mut cfg = SimConfig::new(m);
                cfg.horizon = Some(300);
                if sporadic {
                    cfg.arrivals = Arrivals::Sporadic { max_extra_delay: extra, seed };
                }
                if let Some(lo) = lo {
                    cfg.exec = ExecTimes::UniformFraction { lo, seed: seed ^ 3 };
                }
                cfg.record_trace = true;
                cfg.check_invariants = true;
                (ts, sched, cfg)
            },
        )
    })
}

fn arb_overheads() -> impl Strategy<Value = Overheads> {
    (0u64..4, 0u64..4, 0u64..3, 0u64..3, 0u64..5, 0u64..2).prop_map(|(r, e, s, c, i, t)| Overheads {
        release_ns: r,
        release_event_ns: e,
        schedule_ns: s,
        context_switch_ns: c,
        ipi_ns: i,
        tick_ns: t,
        ..Overheads::ZERO
    })
}

/// Everything but the overhead report, and the records in a canonical order per instant
/// (the overhead engine may dispatch CPUs of one instant in another order).
fn canonical(r: &SimResult) -> (String, Vec<(Time, String)>) {
    let mut c = r.clone();
    c.overheads = None;
    c.trace = None;
    let mut recs: Vec<(Time, String)> =
        r.trace.as_ref().unwrap().records.iter().map(|x| (x.time, format!("{:?}", x.event))).collect();
    recs.sort();
    (format!("{c:?}"), recs)
}

/// Checks the charged totals against the trace, that the CPU-time pieces of a CPU never
/// overlap, and work conservation: every completed job received exactly its execution time
/// outside the pieces of its CPUs (every pending one at most that). Returns the executions.
fn check_charges(ts: &TaskSet, r: &SimResult, v: &Overheads, exec: &ExecTimes) {
    let trace = r.trace.as_ref().unwrap();
    let h = r.horizon;
    let value = |k: OverheadKind| match k {
        OverheadKind::Release => v.release_ns,
        OverheadKind::Schedule => v.schedule_ns,
        OverheadKind::ContextSwitch => v.context_switch_ns,
        OverheadKind::Tick => v.tick_ns,
        OverheadKind::Ipi => v.ipi_ns,
        _ => panic!("unexpected kind {k:?}"),
    };
    let mut count: HashMap<OverheadKind, u64> = HashMap::new();
    let mut pieces: Vec<Vec<(Time, Time)>> = vec![Vec::new(); r.m as usize];
    let mut runs: HashMap<JobId, Vec<(u32, Time, Time)>> = HashMap::new();
    let mut open: HashMap<u32, (JobId, Time)> = HashMap::new();
    let (mut runs_n, mut releases_n) = (0u64, 0u64);
    for Record { time, event } in &trace.records {
        match *event {
            Event::Overhead { cpu, kind, duration } => {
                assert_eq!(duration, value(kind), "{kind:?}");
                assert!(duration > 0, "zero-length overhead record");
                if *time <= h {
                    *count.entry(kind).or_default() += 1;
                }
                if kind != OverheadKind::Ipi {
                    pieces[cpu as usize].push((*time, *time + duration));
                }
            }
            Event::Run { cpu, job } => {
                open.insert(cpu, (job, *time));
                runs_n += 1;
            }
            Event::Preempt { cpu, job } | Event::Complete { cpu, job } => {
                let (o, s) = open.remove(&cpu).unwrap();
                assert_eq!(o, job);
                runs.entry(job).or_default().push((cpu, s, *time));
            }
            Event::Release { .. } => releases_n += 1,
            _ => {}
        }
    }
    for (cpu, (job, s)) in open {
        runs.entry(job).or_default().push((cpu, s, h.max(s)));
    }
    let rep = r.overheads.as_ref().unwrap();
    for s in &rep.charged {
        let c = count.get(&s.kind).copied().unwrap_or(0);
        assert_eq!(s.count, c, "{:?}", s.kind);
        assert_eq!(s.total_ns, c as u128 * value(s.kind) as u128, "{:?}", s.kind);
    }
    // One handler per release domain and due time at most; a Δsch piece per dispatch at most.
    assert!(count.get(&OverheadKind::Release).copied().unwrap_or(0) <= releases_n);
    assert!(count.get(&OverheadKind::Schedule).copied().unwrap_or(0) <= runs_n);
    for p in &mut pieces {
        p.sort();
        for w in p.windows(2) {
            assert!(w[0].1 <= w[1].0, "overlapping overhead pieces {w:?}");
        }
    }
    let overlap = |cpu: u32, s: Time, e: Time| -> Time {
        pieces[cpu as usize].iter().map(|&(a, b)| b.min(e).saturating_sub(a.max(s))).sum()
    };
    for js in &r.per_job {
        let id = j(js.task, js.job);
        let got: Time = runs.get(&id).map_or(0, |v| v.iter().map(|&(c, s, e)| (e - s) - overlap(c, s, e)).sum());
        let wcet = ts[js.task as usize].wcet;
        assert!(got <= wcet, "job {id:?} progressed {got} > WCET {wcet}");
        if js.finish.is_some() && matches!(exec, ExecTimes::Wcet) {
            assert_eq!(got, wcet, "job {id:?} completed after {got} ns of execution, WCET {wcet}");
        }
        if js.finish.is_some() {
            assert!(got >= 1);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    /// All-zero overheads run the overhead engine and give the identical result (metrics,
    /// per-job rows and records up to their order within an instant).
    #[test]
    fn zero_overheads_change_nothing((ts, sched, cfg) in arb_case()) {
        let base = simulate(&ts, &sched, &cfg).unwrap();
        let mut c0 = cfg.clone();
        c0.overheads = Some(Overheads::ZERO);
        let zero = simulate(&ts, &sched, &c0).unwrap();
        prop_assert!(zero.overheads.is_some());
        prop_assert_eq!(zero.overheads.as_ref().unwrap().cpu_time_ns, 0);
        prop_assert_eq!(canonical(&base), canonical(&zero));
    }

    /// Random overheads: the simulator's structural checks and accounting hold (checked inside
    /// `simulate`), and the trace agrees with the charges and with work conservation.
    #[test]
    fn charges_agree_with_the_trace((ts, sched, cfg) in arb_case(), v in arb_overheads()) {
        let mut cfg = cfg;
        let mut v = v;
        if !matches!(sched, Scheduler::GedfQuantum { quantum, .. } if v.tick_ns < quantum) {
            v.tick_ns = 0;
        }
        cfg.overheads = Some(v);
        let r = simulate(&ts, &sched, &cfg).unwrap();
        prop_assert_eq!(r.jobs, r.completed + r.pending);
        check_charges(&ts, &r, &v, &cfg.exec);
        // Metrics recomputed from the exported trace agree.
        let back = rtsched_trace::Trace::from_jsonl(&r.trace.as_ref().unwrap().to_jsonl()).unwrap();
        let m = back.metrics().unwrap();
        prop_assert_eq!(&m.per_job, &r.per_job);
        prop_assert_eq!(m.deadline_miss_records, r.deadline_misses);
    }
}
