//! SP-RES oracles: seed 004 (Brandenburg & Gül, RTSS 2016) Figs. 1 and 2, CASH on/off by
//! hand, equivalence with P-EDF for unsplit placements, and placement validation.

use proptest::prelude::*;
use rtsched_model::Placement;
use rtsched_model::{TaskSet, Time};
use rtsched_sim::{simulate, ExecTimes, Scheduler, SimConfig, SimResult, SpresConfig};
use rtsched_trace::{Event, JobId};
use serde_json::json;

fn j(task: u32, job: u32) -> JobId {
    JobId { task, job }
}

fn res(
    task: usize,
    budget: Time,
    period: Time,
    deadline: Time,
    offset: Time,
    part: u32,
    parts: u32,
) -> serde_json::Value {
    json!({"task": task, "budget": budget, "period": period, "deadline": deadline, "offset": offset, "part": part, "parts": parts})
}

fn placement(m: u32, cpus: Vec<Vec<serde_json::Value>>, tasks: Vec<(usize, u64, u32)>) -> String {
    json!({
        "m": m, "schedulable": true, "heuristic": "hand",
        "cpus": cpus.into_iter().enumerate().map(|(c, rs)| json!({"cpu": c, "reservations": rs})).collect::<Vec<_>>(),
        "tasks": tasks.into_iter().map(|(t, k, p)| json!({"task": t, "period_ratio": k, "parts": p})).collect::<Vec<_>>(),
    })
    .to_string()
}

fn run(ts: &TaskSet, pl: &str, exec: ExecTimes, horizon: Time, cash: bool) -> SimResult {
    let placement = Placement::from_json_runnable(pl, ts).unwrap();
    let mut cfg = SimConfig::new(placement.m);
    cfg.horizon = Some(horizon);
    cfg.exec = exec;
    cfg.record_trace = true;
    simulate(
        ts,
        &Scheduler::Spres(SpresConfig {
            placement,
            soft_unsplit: false,
            cash,
            background: rtsched_sim::Background::EarliestEnd,
            suspension: rtsched_sim::Suspension::Keep,
        }),
        &cfg,
    )
    .unwrap()
}

fn records(r: &SimResult) -> Vec<(Time, Event)> {
    r.trace.as_ref().unwrap().records.iter().map(|r| (r.time, r.event)).collect()
}

/// Three tasks (10, 15) on two CPUs; τ3 split C=D: τ3' = (5, 5, 15) on P1, τ3'' = (5, 10, 15)
/// on P2 (Fig. 1, original order).
#[test]
fn seed004_fig1_cd_split() {
    use Event::*;
    let ts = TaskSet::from_ct(&[(10, 15), (10, 15), (10, 15)]).unwrap();
    let pl = placement(
        2,
        vec![
            vec![res(0, 10, 15, 15, 0, 1, 1), res(2, 5, 15, 5, 0, 1, 2)],
            vec![res(1, 10, 15, 15, 0, 1, 1), res(2, 5, 15, 10, 5, 2, 2)],
        ],
        vec![(0, 1, 1), (1, 1, 1), (2, 1, 2)],
    );
    let r = run(&ts, &pl, ExecTimes::Wcet, 15, true);
    let expect = vec![
        (0, Release { job: j(0, 0), deadline: 15 }),
        (0, Release { job: j(1, 0), deadline: 15 }),
        (0, Release { job: j(2, 0), deadline: 15 }),
        (0, Run { cpu: 0, job: j(2, 0) }), // τ3' has the tight deadline
        (0, Run { cpu: 1, job: j(1, 0) }),
        (5, Preempt { cpu: 0, job: j(2, 0) }),
        (5, Run { cpu: 0, job: j(0, 0) }), // τ3'' (deadline 15) does not beat τ2 on P2
        (10, Complete { cpu: 1, job: j(1, 0) }),
        (10, Migration { job: j(2, 0), from: 0, to: 1 }),
        (10, Run { cpu: 1, job: j(2, 0) }),
        (15, Complete { cpu: 0, job: j(0, 0) }),
        (15, Complete { cpu: 1, job: j(2, 0) }),
        (15, Idle { cpu: 0 }),
        (15, Idle { cpu: 1 }),
    ];
    assert_eq!(records(&r), expect);
    assert_eq!((r.deadline_misses, r.migrations), (0, 1));
}

/// Fig. 2: flipped order (τ3'' with laxity first on P2, τ3' at [10, 15) on P1); τ2 and τ3 need
/// only 1 and 6; the slack of τ2 lets τ3 finish at 7 on P2, avoiding the migration.
#[test]
fn seed004_fig2_flipped_order_avoids_migration() {
    use Event::*;
    let ts = TaskSet::from_ct(&[(10, 15), (10, 15), (10, 15)]).unwrap();
    let pl = placement(
        2,
        vec![
            vec![res(0, 10, 15, 15, 0, 1, 1), res(2, 5, 15, 5, 10, 2, 2)],
            vec![res(1, 10, 15, 15, 0, 1, 1), res(2, 5, 15, 10, 0, 1, 2)],
        ],
        vec![(0, 1, 1), (1, 1, 1), (2, 1, 2)],
    );
    let r = run(&ts, &pl, ExecTimes::Fixed(vec![10, 1, 6]), 15, true);
    let expect = vec![
        (0, Release { job: j(0, 0), deadline: 15 }),
        (0, Release { job: j(1, 0), deadline: 15 }),
        (0, Release { job: j(2, 0), deadline: 15 }),
        (0, Run { cpu: 0, job: j(0, 0) }),
        (0, Run { cpu: 1, job: j(2, 0) }),
        (5, Preempt { cpu: 1, job: j(2, 0) }), // τ3'' depleted
        (5, Run { cpu: 1, job: j(1, 0) }),
        (6, Complete { cpu: 1, job: j(1, 0) }), // 9 units of slack
        (6, Run { cpu: 1, job: j(2, 0) }),
        (7, Complete { cpu: 1, job: j(2, 0) }),
        (7, Idle { cpu: 1 }),
        (10, Complete { cpu: 0, job: j(0, 0) }),
        (10, Idle { cpu: 0 }),
    ];
    assert_eq!(records(&r), expect);
    assert_eq!(r.migrations, 0);
}

/// CASH with period transformation, hand-computed: τa = (2, 5) runs 1 per job in a hard
/// reservation; τb = (4, 10) with period ratio 2 (budget 2 per 5). With CASH τb uses τa's
/// leftover budget at once and finishes at 7; without, it waits for its replenishment: 8.
#[test]
fn cash_slack_reclamation_hand_computed() {
    let ts = TaskSet::from_ct(&[(2, 5), (4, 10)]).unwrap();
    let pl = placement(1, vec![vec![res(0, 2, 5, 5, 0, 1, 1), res(1, 2, 5, 5, 0, 1, 1)]], vec![(0, 1, 1), (1, 2, 1)]);
    let fin = |r: &SimResult| r.per_job.iter().find(|x| x.task == 1).unwrap().finish;
    let with = run(&ts, &pl, ExecTimes::Fixed(vec![1, 4]), 10, true);
    let without = run(&ts, &pl, ExecTimes::Fixed(vec![1, 4]), 10, false);
    assert_eq!(fin(&with), Some(7));
    assert_eq!(fin(&without), Some(8));
    assert_eq!(with.deadline_misses + without.deadline_misses, 0);
}

#[test]
fn rejects_bad_placements() {
    let ts = TaskSet::from_ct(&[(10, 15), (10, 15)]).unwrap();
    let good =
        placement(1, vec![vec![res(0, 10, 15, 15, 0, 1, 1), res(1, 10, 15, 15, 0, 1, 1)]], vec![(0, 1, 1), (1, 1, 1)]);
    assert!(Placement::from_json_runnable(&good, &ts).is_ok());
    let bads = [
        placement(1, vec![vec![res(0, 16, 15, 15, 0, 1, 1), res(1, 10, 15, 15, 0, 1, 1)]], vec![(0, 1, 1), (1, 1, 1)]), // budget > period
        placement(1, vec![vec![res(0, 10, 15, 15, 0, 1, 1), res(7, 10, 15, 15, 0, 1, 1)]], vec![(0, 1, 1), (1, 1, 1)]), // unknown task
        placement(1, vec![vec![res(0, 10, 15, 15, 0, 1, 1)]], vec![(0, 1, 1), (1, 1, 1)]), // task 1 unplaced
        placement(1, vec![vec![res(0, 10, 15, 15, 1, 1, 1), res(1, 10, 15, 15, 0, 1, 1)]], vec![(0, 1, 1), (1, 1, 1)]), // window leaves period
        placement(
            1,
            vec![vec![res(0, 5, 15, 5, 0, 1, 2), res(0, 5, 15, 5, 6, 2, 2), res(1, 10, 15, 15, 0, 1, 1)]],
            vec![(0, 1, 2), (1, 1, 1)],
        ), // gap
        placement(1, vec![vec![res(0, 10, 15, 15, 0, 2, 1), res(1, 10, 15, 15, 0, 1, 1)]], vec![(0, 1, 1), (1, 1, 1)]), // part > parts
        placement(1, vec![vec![res(0, 10, 15, 15, 0, 1, 1), res(1, 5, 7, 7, 0, 1, 1)]], vec![(0, 1, 1), (1, 1, 1)]), // period ≠ T/k
        r#"{"m":1,"schedulable":true,"heuristic":"x","cpus":[],"tasks":[],"extra":1}"#.to_string(),
        r#"{"m":1,"schedulable":false,"heuristic":"x","cpus":[],"tasks":[],"reason":"too heavy"}"#.to_string(),
        "not json".to_string(),
    ];
    for b in bads {
        assert!(Placement::from_json_runnable(&b, &ts).is_err(), "{b}");
    }
    // m mismatch with the simulation.
    let p = Placement::from_json_runnable(&good, &ts).unwrap();
    let cfg = SimConfig::new(2);
    assert!(simulate(
        &ts,
        &Scheduler::Spres(SpresConfig {
            placement: p,
            soft_unsplit: false,
            cash: true,
            background: rtsched_sim::Background::EarliestEnd,
            suspension: rtsched_sim::Suspension::Keep,
        }),
        &cfg
    )
    .is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Unsplit placements with budget = C, period = deadline = T and per-CPU U ≤ 1 behave
    /// exactly like P-EDF (the reservation deadline is the job deadline and budgets never run
    /// out), whatever the execution times or arrivals.
    #[test]
    fn unsplit_spres_equals_pedf(v in prop::collection::vec((1u64..=12, 1u64..=40), 1..8), m in 1u32..=3, lo in 0.0f64..=1.0, seed in any::<u64>()) {
        let ts = TaskSet::from_ct(&v.iter().map(|&(c, t)| (1 + (c - 1) % t, t)).collect::<Vec<_>>()).unwrap();
        let part: Vec<Vec<usize>> = (0..m as usize).map(|c| (0..ts.len()).filter(|i| i % m as usize == c).collect()).collect();
        for p in &part {
            let sub = TaskSet::new(p.iter().map(|&i| ts[i].clone()).collect()).unwrap();
            prop_assume!(sub.utilization_at_most(1));
        }
        let pl = placement(m, part.iter().map(|p| p.iter().map(|&i| res(i, ts[i].wcet, ts[i].period, ts[i].period, 0, 1, 1)).collect()).collect(), (0..ts.len()).map(|i| (i, 1, 1)).collect());
        let placement = Placement::from_json_runnable(&pl, &ts).unwrap();
        let mut cfg = SimConfig::new(m);
        cfg.horizon = Some(300);
        cfg.exec = ExecTimes::UniformFraction { lo, seed };
        let a = simulate(&ts, &Scheduler::Spres(SpresConfig { placement, soft_unsplit: false, cash: true, background: rtsched_sim::Background::EarliestEnd, suspension: rtsched_sim::Suspension::Keep }), &cfg).unwrap();
        let b = simulate(&ts, &Scheduler::Pedf(part), &cfg).unwrap();
        prop_assert_eq!(a.per_job, b.per_job);
        prop_assert_eq!((a.deadline_misses, a.preemptions, a.context_switches), (0, b.preemptions, b.context_switches));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Random placements with one task split across the two CPUs (flipped C=D order), any
    /// execution times, hard or soft unsplit reservations, CASH on or off: accounting holds,
    /// metrics survive a JSON Lines round trip, no job runs longer than its WCET, and a job
    /// runs only on a CPU that holds one of its reservations.
    #[test]
    fn split_placements_are_consistent(v in prop::collection::vec((1u64..=12, 2u64..=30), 2..6), x in 1u64..=12, lo in 0.0f64..=1.0, seed in any::<u64>(), soft in any::<bool>(), cash in any::<bool>()) {
        let ts = TaskSet::from_ct(&v.iter().map(|&(c, t)| (1 + (c - 1) % t, t)).collect::<Vec<_>>()).unwrap();
        let (c0, t0) = (ts[0].wcet, ts[0].period);
        prop_assume!(c0 >= 2);
        let x = 1 + (x - 1) % (c0 - 1); // the zero-laxity tail chunk, 1 ≤ x < C
        let mut cpus = vec![vec![res(0, c0 - x, t0, t0 - x, 0, 1, 2)], vec![res(0, x, t0, x, t0 - x, 2, 2)]];
        for i in 1..ts.len() {
            cpus[i % 2].push(res(i, ts[i].wcet, ts[i].period, ts[i].period, 0, 1, 1));
        }
        let mut tasks = vec![(0, 1, 2)];
        tasks.extend((1..ts.len()).map(|i| (i, 1, 1)));
        let placement = Placement::from_json_runnable(&placement(2, cpus, tasks), &ts).unwrap();
        let mut cfg = SimConfig::new(2);
        cfg.horizon = Some(200);
        cfg.exec = ExecTimes::UniformFraction { lo, seed };
        cfg.record_trace = true;
        let r = simulate(&ts, &Scheduler::Spres(SpresConfig { placement, soft_unsplit: soft, cash, background: rtsched_sim::Background::EarliestEnd, suspension: rtsched_sim::Suspension::Keep }), &cfg).unwrap();
        prop_assert_eq!(r.jobs, r.completed + r.pending);
        let tr = r.trace.as_ref().unwrap();
        let m = rtsched_trace::Trace::from_jsonl(&tr.to_jsonl()).unwrap().metrics().unwrap();
        prop_assert_eq!(&m.per_job, &r.per_job);
        prop_assert_eq!((m.preemptions, m.migrations, m.context_switches, m.deadline_misses), (r.preemptions, r.migrations, r.context_switches, r.deadline_misses));
        for js in &r.per_job {
            prop_assert!(js.executed <= ts[js.task as usize].wcet);
        }
        for rec in &tr.records {
            if let Event::Run { cpu, job } = rec.event {
                prop_assert!(job.task == 0 || cpu == job.task % 2, "task {} ran on cpu {}", job.task, cpu);
            }
        }
    }
}

/// Depleted soft reservations in background (Brandenburg & Gül, RTSS 2016, §III-A: "in a
/// round-robin fashion"): two soft reservations of budget 2 for jobs of 6 on one CPU. After
/// both budgets are spent (at 4), earliest-end serves task 0 to its end (8), then task 1 (12);
/// round-robin with quantum 1 alternates them, so task 0 finishes at 11 and task 1 at 12 —
/// the runtime's `background` parameter names the same two rules.
#[test]
fn background_round_robin_alternates_where_earliest_end_does_not() {
    let ts = TaskSet::from_ct(&[(6, 20), (6, 20)]).unwrap();
    let pl =
        placement(1, vec![vec![res(0, 2, 20, 20, 0, 1, 1), res(1, 2, 20, 20, 0, 1, 1)]], vec![(0, 1, 1), (1, 1, 1)]);
    let completions = |background| {
        let placement = Placement::from_json_runnable(&pl, &ts).unwrap();
        let mut cfg = SimConfig::new(1);
        cfg.horizon = Some(20);
        cfg.record_trace = true;
        let sc = SpresConfig {
            placement,
            soft_unsplit: true,
            cash: false,
            background,
            suspension: rtsched_sim::Suspension::Keep,
        };
        let r = simulate(&ts, &Scheduler::Spres(sc), &cfg).unwrap();
        let done: Vec<(Time, u32)> = records(&r)
            .into_iter()
            .filter_map(|(t, e)| match e {
                Event::Complete { job, .. } => Some((t, job.task)),
                _ => None,
            })
            .collect();
        let preempts = records(&r).iter().filter(|(_, e)| matches!(e, Event::Preempt { .. })).count();
        (done, preempts)
    };
    let (ee, ee_pre) = completions(rtsched_sim::Background::EarliestEnd);
    assert_eq!(ee, vec![(8, 0), (12, 1)]);
    let (rr, rr_pre) = completions(rtsched_sim::Background::parse("round-robin", 1).unwrap());
    assert_eq!(rr, vec![(11, 0), (12, 1)]);
    assert!(rr_pre > ee_pre, "round-robin preempts at every quantum ({rr_pre} vs {ee_pre})");
    assert!(rtsched_sim::Background::parse("fifo", 1).is_err());
    assert!(rtsched_sim::Background::parse("round-robin", 0).is_err());
}
