//! SP-RES's two budget rules for self-suspending jobs (`--param suspension=keep|donate`,
//! docs/spres.md, "Self-suspending jobs"): `keep` (default) — the reservation keeps its
//! budget, charged only while the job executes; `donate` — Brandenburg & Gül, RTSS 2016,
//! §VIII: the budget left is CASH slack while the job is suspended, and the job regains what is
//! left of it when it wakes.
//!
//! * by hand: a job whose budget is its WCET (a whole placement) suspends; under `donate` the
//!   other reservation uses its slack and the idle rule burns the rest, so it wakes with
//!   nothing and its hard reservation cuts it off (a miss) where `keep` finishes it; soft, it
//!   finishes in background instead;
//! * on sets without suspensions, SP-RES heuristic placements, any execution times: the two
//!   rules give the same schedule, record for record;
//! * the rule is refused without CASH, and by name, in one line.

use proptest::prelude::*;
use rtsched_analysis::semi;
use rtsched_model::task::{Segments, SuspensionBound};
use rtsched_model::{Placement, Task, TaskSet, Time};
use rtsched_sim::{simulate, Background, ExecTimes, Scheduler, SimConfig, SimResult, SpresConfig, Suspension};
use rtsched_trace::{Event, JobId};
use std::collections::HashMap;

fn spres(placement: Placement, soft: bool, cash: bool, background: Background, suspension: Suspension) -> Scheduler {
    Scheduler::Spres(SpresConfig { placement, soft_unsplit: soft, cash, background, suspension })
}

/// Execution intervals `(job, start, end)` from the trace, in start order.
fn intervals(r: &SimResult) -> Vec<(JobId, Time, Time)> {
    let mut open: HashMap<JobId, Time> = HashMap::new();
    let mut out = Vec::new();
    for rec in &r.trace.as_ref().unwrap().records {
        match rec.event {
            Event::Run { job, .. } => {
                open.insert(job, rec.time);
            }
            Event::Preempt { job, .. } | Event::Complete { job, .. } | Event::Suspend { job, .. } => {
                out.push((job, open.remove(&job).expect("ran"), rec.time));
            }
            _ => {}
        }
    }
    out.sort_by_key(|&(j, s, _)| (s, j.task, j.job));
    out
}

fn j(task: u32, job: u32) -> JobId {
    JobId { task, job }
}

/// τ0 = [2, suspend 3, 2] (C = 4, D = T = 20) and τ1 (C = 10, D = T = 20) in reservations of
/// budget C on one CPU, CASH on, horizon 20 (one job each).
///
/// * `keep`: τ0 0–2, suspends; τ1 2–5; τ0 wakes at 5 with the 2 its reservation kept and
///   preempts τ1 (equal deadlines, τ0 by index): 5–7, done; τ1 7–14. No miss.
/// * `donate`: τ0 runs 0–2 and suspends with 2 of its 4 left: slack (deadline 20, 2). τ1 is
///   served at 2 and consumes that slack first (CASH: deadline 20 ≤ its own 20), 2–4, then
///   its own budget. τ0 wakes at 5 with nothing left of its slack: depleted. Hard: cut off
///   until its next window at 20 — τ1 runs on 2–12 and τ0's job misses its deadline 20.
///   Soft: τ0 is served in background once τ1 completes: 12–14, no miss.
#[test]
fn hand_worked_donate_cuts_off_a_job_that_keep_finishes() {
    let susp = Segments::new(vec![2, 2], vec![SuspensionBound { min: 0, max: 3 }]).unwrap();
    let t0 = Task::new(4, 20, 20).unwrap().with_segments(susp).unwrap();
    let ts = TaskSet::new(vec![t0, Task::implicit(10, 20).unwrap()]).unwrap();
    let pl = Placement::whole(&ts, &[vec![0, 1]]).unwrap();
    let run = |soft: bool, rule: Suspension| {
        let mut cfg = SimConfig::new(1);
        cfg.horizon = Some(20);
        cfg.record_trace = true;
        simulate(&ts, &spres(pl.clone(), soft, true, Background::DEFAULT, rule), &cfg).unwrap()
    };
    for soft in [false, true] {
        let keep = run(soft, Suspension::Keep);
        assert_eq!(
            intervals(&keep),
            vec![(j(0, 0), 0, 2), (j(1, 0), 2, 5), (j(0, 0), 5, 7), (j(1, 0), 7, 14)],
            "keep, soft={soft}"
        );
        assert_eq!((keep.deadline_misses, keep.suspension_ns), (0, 3));
    }
    let hard = run(false, Suspension::Donate);
    assert_eq!(intervals(&hard), vec![(j(0, 0), 0, 2), (j(1, 0), 2, 12)], "donate, hard");
    assert_eq!((hard.deadline_misses, hard.completed, hard.suspension_ns), (1, 1, 3), "τ0's job misses at 20");
    let soft = run(true, Suspension::Donate);
    assert_eq!(intervals(&soft), vec![(j(0, 0), 0, 2), (j(1, 0), 2, 12), (j(0, 0), 12, 14)], "donate, soft");
    assert_eq!((soft.deadline_misses, soft.completed), (0, 2));
}

/// Budgets sized suspension-obliviously (Q = C + S = 7 for τ0 above): under `donate` the slack
/// burnt while τ0 is suspended (3 ns, at rate 1) is exactly what the S in its budget pays
/// for, so a wake-up at the bound still finds its remaining 2 ns: τ0 runs 0–2 and 5–7 under
/// both rules. The difference moves to τ1, which ran 2–5 on τ0's slack under `donate` and
/// still has 3 ns of its own budget when it completes (it finishes at 14 either way).
#[test]
fn with_budgets_of_c_plus_s_a_wake_up_at_the_bound_is_served_under_both_rules() {
    let susp = Segments::new(vec![2, 2], vec![SuspensionBound { min: 0, max: 3 }]).unwrap();
    let t0 = Task::new(4, 20, 20).unwrap().with_segments(susp).unwrap();
    let ts = TaskSet::new(vec![t0, Task::implicit(10, 20).unwrap()]).unwrap();
    let mut pl = Placement::whole(&ts, &[vec![0, 1]]).unwrap();
    for r in &mut pl.cpus[0].reservations {
        if r.task == 0 {
            r.budget = 7;
        }
    }
    pl.check_runnable(&ts).unwrap();
    let want = vec![(j(0, 0), 0, 2), (j(1, 0), 2, 5), (j(0, 0), 5, 7), (j(1, 0), 7, 14)];
    for rule in [Suspension::Keep, Suspension::Donate] {
        let mut cfg = SimConfig::new(1);
        cfg.horizon = Some(20);
        cfg.record_trace = true;
        let r = simulate(&ts, &spres(pl.clone(), false, true, Background::DEFAULT, rule), &cfg).unwrap();
        assert_eq!(intervals(&r), want, "{rule:?}");
        assert_eq!(r.deadline_misses, 0);
    }
}

#[test]
fn donate_without_cash_is_refused_in_one_line() {
    let ts = TaskSet::from_ct(&[(1, 10)]).unwrap();
    let pl = Placement::whole(&ts, &[vec![0]]).unwrap();
    let e = simulate(&ts, &spres(pl, false, false, Background::DEFAULT, Suspension::Donate), &SimConfig::new(1))
        .unwrap_err()
        .to_string();
    assert_eq!(e, "field 'suspension': donate makes a suspending job's budget CASH slack and needs cash=true");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    /// Without self-suspensions the rule never acts: on random sets placed by the SP-RES
    /// heuristics (split and period-transformed tasks included), hard or soft, either
    /// background rule, execution times drawn below the WCET (so CASH slack exists), `keep`
    /// and `donate` produce the same trace, record for record.
    #[test]
    fn without_suspensions_keep_and_donate_give_the_same_schedule(
        v in prop::collection::vec((1u64..=30, 0usize..6), 2..9),
        m in 1u32..=3,
        h in 0usize..64,
        soft in any::<bool>(),
        rr in any::<bool>(),
        lo in 0.0f64..=1.0,
        seed in any::<u64>(),
    ) {
        const PERIODS: [u64; 6] = [20, 25, 40, 50, 60, 100];
        let ct: Vec<(u64, u64)> = v.iter().map(|&(c, p)| {
            let t = PERIODS[p];
            ((t * c / 100).max(1), t)
        }).collect();
        let ts = TaskSet::from_ct(&ct).unwrap();
        let hs = semi::Heuristic::all();
        let p = semi::place(&ts, m, &hs[h % hs.len()], &semi::SemiConfig { rp_floor: 5, ..Default::default() });
        prop_assume!(p.schedulable);
        let pl = Placement::from_json_runnable(&p.to_json().to_string(), &ts).unwrap();
        let bg = if rr { Background::RoundRobin { quantum: 3 } } else { Background::EarliestEnd };
        let mut cfg = SimConfig::new(m);
        cfg.horizon = Some(600);
        cfg.exec = ExecTimes::UniformFraction { lo, seed };
        cfg.record_trace = true;
        let keep = simulate(&ts, &spres(pl.clone(), soft, true, bg, Suspension::Keep), &cfg).unwrap();
        let donate = simulate(&ts, &spres(pl, soft, true, bg, Suspension::Donate), &cfg).unwrap();
        prop_assert_eq!(&keep.trace.as_ref().unwrap().records, &donate.trace.as_ref().unwrap().records);
        prop_assert_eq!(&keep.per_job, &donate.per_job);
        prop_assert_eq!(keep.suspensions, 0);
    }
}
