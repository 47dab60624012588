//! Unit tests of RUN: the reductions of hand-worked examples (Regnier et al.'s opening one and
//! our own), the context-switch bound, partitioned EDF as the level-0 case, refusals, and the
//! reduction's invariants and strict online schedules over random sets.

use super::*;
use crate::budget::testing::{random_set, set, Lcg};
use rtsched_model::exact::{int, one, ratio, zero, Rational};
use rtsched_model::{TaskSet, Time};

/// Steps `run` over `[0, until_ns]`, returning at each event `(tick, tasks per CPU)`.
fn trace(run: &mut Run, until_ns: Time) -> Vec<(u128, Vec<Option<u32>>)> {
    let m = run.reduction().m() as usize;
    let end = until_ns as u128 * run.reduction().scale();
    let mut out = vec![(0, (0..m).map(|c| run.task_on(c)).collect())];
    loop {
        let t = run.next_event();
        if t > end {
            break;
        }
        run.advance(t).unwrap_or_else(|v| panic!("{v}"));
        out.push((t, (0..m).map(|c| run.task_on(c)).collect()));
    }
    out
}

#[test]
fn three_tasks_of_rate_two_thirds_on_two_processors() {
    // Regnier et al.'s opening example (§I, Fig. 1): three tasks each needing 2 units every
    // 3 on two processors — no partition exists. Reduction, from the definitions: each
    // task alone in a server of rate 2/3 (two do not fit together), three duals of rate
    // 1/3, packed into one unit server: one reduction level.
    let red = Reduction::build(&set(&[(2, 3), (2, 3), (2, 3)]), 2).unwrap();
    assert_eq!(red.levels(), 1);
    assert_eq!(red.subsystems.len(), 1);
    assert_eq!(red.subsystems[0].cpus, vec![0, 1]);
    assert_eq!(red.level_totals, vec![(3, int(2)), (1, int(1))]);
    assert_eq!(red.scale(), 3); // rates 2/3 and 1/3: ticks of 1/3 ns
    let mut run = Run::new(red, &[], true).unwrap();
    let got = trace(&mut run, 6);
    // The root runs EDF over the duals (all deadline 3): dual 0 for its budget 1, so task 0
    // does not run in [0, 1); then dual 1, then dual 2. At 3 the dual that ran last keeps
    // the tie. Task 1 starts on CPU 0 at 0 and resumes at 2 on CPU 1 (CPU 0 is task 0's).
    let s = |a: Option<u32>, b: Option<u32>| vec![a, b];
    let want = vec![
        (0, s(Some(1), Some(2))),
        (3, s(Some(0), Some(2))),
        (6, s(Some(0), Some(1))),
        (9, s(Some(0), Some(1))),
        (12, s(Some(2), Some(1))),
        (15, s(Some(2), Some(0))),
        (18, s(Some(2), Some(0))),
    ];
    assert_eq!(got, want);
}

#[test]
fn five_tasks_of_rate_three_fifths_reduce_in_two_levels() {
    // Five servers of rate 3/5 on three processors (our example, not one quoted from the
    // paper), every number from the definitions: PACK leaves five servers of 3/5
    // (total 3); DUAL gives 2/5 each, packed 4/5, 4/5, 2/5 (total 2 = 5 − 3); DUAL gives
    // 1/5, 1/5, 3/5, which pack into one unit server (total 1 = 3 − 2).
    let ts = set(&[(3, 5), (6, 10), (9, 15), (6, 10), (3, 5)]);
    let red = Reduction::build(&ts, 3).unwrap();
    assert_eq!(red.levels(), 2);
    assert_eq!(red.level_totals, vec![(5, int(3)), (3, int(2)), (1, int(1))]);
    let mut level1: Vec<Rational> = red
        .nodes
        .iter()
        .filter(|n| n.level == 1 && matches!(n.kind, Kind::Packed { .. }))
        .map(|n| n.rate.clone())
        .collect();
    level1.sort();
    assert_eq!(level1, vec![ratio(2, 5), ratio(4, 5), ratio(4, 5)]);
    let root = &red.nodes[red.subsystems[0].root];
    assert_eq!((root.rate.clone(), root.level), (one(), 2));
    assert!(red.levels() <= red.level_bound());
    let mut run = Run::new(red, &[], true).unwrap();
    // Over the hyperperiod every server spends exactly its budget by each deadline
    // (checked at every release instant by `strict`).
    let tr = trace(&mut run, 30);
    assert!(tr.len() > 10);
}

#[test]
fn switch_rate_bound_from_the_preemption_bound() {
    // One level (p = 1): ⌈(3·1 + 1)/2⌉ = 2 preemptions per job on average, so 2 · (1 + 2)
    // switches per job; three tasks of period 3 ns: 6 · 3 · 10^9/3 per second, half per CPU.
    let ts = set(&[(2, 3), (2, 3), (2, 3)]);
    let b = Reduction::structure(&ts, 2).unwrap().switch_rate_bound();
    assert_eq!(b, vec![3e9, 3e9]);
    assert!(Run::new(Reduction::structure(&ts, 2).unwrap(), &[], true).is_err());
}

#[test]
fn a_set_first_fit_places_is_partitioned_edf() {
    // U = 1.5 on 2 processors, first fit places {0.5, 0.5} and {0.5}: the idle fill makes
    // both unit servers, so RUN is partitioned EDF (level 0, no migrations possible).
    let red = Reduction::build(&set(&[(1, 2), (2, 4), (3, 6)]), 2).unwrap();
    assert_eq!(red.levels(), 0);
    assert_eq!(red.subsystems.len(), 2);
    let mut run = Run::new(red, &[], true).unwrap();
    for (_, cpus) in trace(&mut run, 12) {
        assert!(cpus[1].is_none_or(|t| t == 2), "{cpus:?}");
        assert!(cpus[0].is_none_or(|t| t < 2), "{cpus:?}");
    }
}

#[test]
fn refusals_name_the_task_and_field() {
    let ts = TaskSet::from_cdt(&[(1, 4, 4), (1, 3, 5)]).unwrap();
    let e = Reduction::build(&ts, 2).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("deadline"));
    assert!(e.to_string().contains("task 1") && e.to_string().contains("implicit-deadline"), "{e}");
    let e = Reduction::build(&set(&[(2, 3), (2, 3), (3, 4)]), 2).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("m"));
    assert!(e.to_string().contains("exceeds m = 2"), "{e}");
    assert!(Reduction::build(&set(&[(1, 2)]), 0).is_err());
    // U = m exactly is accepted.
    assert!(Reduction::build(&set(&[(2, 3), (2, 3), (2, 3)]), 2).is_ok());
}

#[test]
fn reduction_invariants_and_strict_schedules_on_random_sets() {
    let mut g = Lcg(7);
    for case in 0..300 {
        let m = 2 + g.below(7) as u32;
        let tasks = random_set(&mut g, m, case % 3 == 0);
        let ts = set(&tasks);
        let red = Reduction::build(&ts, m).unwrap();
        // Every packed server's rate is at most 1; each level's total is an integer and the
        // next level's total is its non-unit servers' count minus their total.
        for n in &red.nodes {
            assert!(n.rate <= one() && n.rate >= zero());
        }
        assert_eq!(red.level_totals[0].1, int(m as i128), "{tasks:?}");
        for w in red.level_totals.windows(2) {
            assert!(w[0].1.is_integer() && w[1].1.is_integer());
        }
        // Non-unit servers at least halve per level; the levels stay within the bound,
        // which is at most ⌈log₂(2m)⌉.
        let mut k_prev: Option<usize> = None;
        for lv in 0..=red.levels() {
            let k = red
                .nodes
                .iter()
                .filter(|n| n.level == lv && matches!(n.kind, Kind::Packed { .. }) && n.rate != one())
                .count();
            if let Some(kp) = k_prev {
                assert!(k <= kp.div_ceil(2), "level {lv}: {k} non-unit servers after {kp}: {tasks:?}");
            }
            k_prev = Some(k);
        }
        assert!(red.levels() <= red.level_bound(), "{tasks:?}");
        assert!(red.level_bound() <= 64 - (2 * m as u64 - 1).leading_zeros());
        // The subsystems own every processor once.
        let mut cpus: Vec<u32> = red.subsystems.iter().flat_map(|s| s.cpus.clone()).collect();
        cpus.sort_unstable();
        assert_eq!(cpus, (0..m).collect::<Vec<_>>());
        // Online, over the hyperperiod: every server spends its budget exactly by each
        // deadline and never runs without budget (strict), and no task is on two CPUs.
        let h = ts.hyperperiod(1 << 40).unwrap();
        let mut run = Run::new(red, &[], true).unwrap();
        for (_, on) in trace(&mut run, h) {
            let mut seen: Vec<u32> = on.iter().flatten().copied().collect();
            let k = seen.len();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), k, "{on:?}");
        }
    }
}
