//! Worked examples of seed 004 (§III-D, Fig. 1) and hand-checked fixtures.

use rtsched_analysis::semi::{cascade, check, place, Basic, Heuristic, Placement, SemiConfig, Variant};
use rtsched_model::TaskSet;
use serde_json::json;

fn fig1() -> TaskSet {
    TaskSet::from_ct(&[(10, 15), (10, 15), (10, 15)]).unwrap()
}

#[test]
fn fig1_partitioning_fails_and_wfd_cd_splits_tau3_as_in_the_paper() {
    let ts = fig1();
    // The text's cascade runs WFD-C=D right after partitioning.
    let cfg = SemiConfig::for_variant(Variant::Text);
    assert!(!place(&ts, 2, &Heuristic::Basic(Basic::Wfd), &cfg).schedulable);
    assert!(!place(&ts, 2, &Heuristic::Basic(Basic::Ffd), &cfg).schedulable);
    let p = cascade(&ts, 2, &cfg);
    assert!(p.schedulable, "{:?}", p.reason);
    assert_eq!(p.heuristic, "WFD-C=D");
    check(&ts, &p).unwrap();
    // tau1 on P1, tau2 on P2, tau3' = (5, 5, 15) on P1 as the tail (offset 10),
    // tau3'' = (5, 10, 15) on P2 first (offset 0): the flipped C=D order of §IV-A.
    let want = json!({
        "m": 2, "schedulable": true, "heuristic": "WFD-C=D",
        "cpus": [
            {"cpu": 0, "reservations": [
                {"task": 0, "budget": 10, "period": 15, "deadline": 15, "offset": 0, "part": 1, "parts": 1},
                {"task": 2, "budget": 5, "period": 15, "deadline": 5, "offset": 10, "part": 2, "parts": 2}]},
            {"cpu": 1, "reservations": [
                {"task": 1, "budget": 10, "period": 15, "deadline": 15, "offset": 0, "part": 1, "parts": 1},
                {"task": 2, "budget": 5, "period": 15, "deadline": 10, "offset": 0, "part": 1, "parts": 2}]}],
        "tasks": [
            {"task": 0, "period_ratio": 1, "parts": 1},
            {"task": 1, "period_ratio": 1, "parts": 1},
            {"task": 2, "period_ratio": 1, "parts": 2}]
    });
    assert_eq!(p.to_json(), want);
    assert_eq!(Placement::from_value(&want, &ts).unwrap(), p);
    // Three per-core switch bounds: CPU 0 has two reservations of period 15 ns.
    assert_eq!(p.switch_rate_bound(), vec![4e9 / 15.0, 4e9 / 15.0]);
}

/// The artifact's cascade tries FFD-C=D first among the semi-partitioning heuristics; it fills
/// CPU 0 with τ1, splits τ2 there (chunk 5, the CPU is closed) and puts τ3 and τ2's remainder
/// (5, 10, 15) on CPU 1.
#[test]
fn fig1_artifact_cascade_uses_ffd_cd_core_by_core() {
    let ts = fig1();
    let p = cascade(&ts, 2, &SemiConfig::for_variant(Variant::Artifact));
    assert!(p.schedulable, "{:?}", p.reason);
    assert_eq!(p.heuristic, "FFD-C=D");
    check(&ts, &p).unwrap();
    let on = |c: usize| -> Vec<_> {
        p.cpus[c].reservations.iter().map(|r| (r.task, r.budget, r.deadline, r.offset, r.part)).collect()
    };
    assert_eq!(on(0), vec![(0, 10, 15, 0, 1), (1, 5, 5, 10, 2)]);
    assert_eq!(on(1), vec![(1, 5, 10, 0, 1), (2, 10, 15, 0, 1)]);
}

#[test]
fn fig1_ffd_cd_splits_the_second_task() {
    let ts = fig1();
    let p = place(&ts, 2, &Heuristic::Basic(Basic::FfdCd), &SemiConfig::default());
    assert!(p.schedulable);
    check(&ts, &p).unwrap();
    assert_eq!(p.tasks[1].parts, 2);
    let r: Vec<_> = p.cpus[0].reservations.iter().map(|r| (r.task, r.budget, r.deadline, r.offset)).collect();
    assert_eq!(r, vec![(0, 10, 15, 0), (1, 5, 5, 10)]);
}

#[test]
fn fig1_with_epsilon() {
    let ts = fig1();
    // Chunks of 5 are allowed with eps = 5, not with eps = 6.
    let cfg = SemiConfig { epsilon: 5, ..SemiConfig::default() };
    assert!(cascade(&ts, 2, &SemiConfig { meta: false, ..cfg.clone() }).schedulable);
    let cfg = SemiConfig { epsilon: 6, meta: false, ..SemiConfig::default() };
    let p = cascade(&ts, 2, &cfg);
    assert!(!p.schedulable);
    assert!(p.reason.as_deref().unwrap().contains("task"), "{:?}", p.reason);
}

#[test]
fn trivial_and_invalid_inputs() {
    let cfg = SemiConfig::default();
    let empty = TaskSet::new(vec![]).unwrap();
    let p = cascade(&empty, 4, &cfg);
    assert!(p.schedulable);
    check(&empty, &p).unwrap();
    assert_eq!(p.cpus.len(), 4);
    let ts = TaskSet::from_ct(&[(1, 2)]).unwrap();
    let p = cascade(&ts, 0, &cfg);
    assert!(!p.schedulable && p.reason.unwrap().contains("'m'"));
    // C > D: valid task, never placeable.
    let ts = TaskSet::from_cdt(&[(5, 4, 10)]).unwrap();
    for h in Heuristic::all() {
        let p = place(&ts, 2, &h, &cfg);
        assert!(!p.schedulable);
        assert!(p.reason.as_deref().unwrap().contains("task 0"));
    }
    // U > m.
    let ts = TaskSet::from_ct(&[(3, 4), (3, 4), (3, 4)]).unwrap();
    let p = cascade(&ts, 2, &cfg);
    assert!(!p.schedulable && p.reason.unwrap().contains("utilization"));
    // Full utilization exactly m with one split: (2,3) x 3 on 2 CPUs.
    let ts = TaskSet::from_ct(&[(2, 3), (2, 3), (2, 3)]).unwrap();
    let p = cascade(&ts, 2, &cfg);
    assert!(p.schedulable, "{:?}", p.reason);
    check(&ts, &p).unwrap();
}

#[test]
fn arbitrary_deadline_is_truncated_and_constrained_is_split_correctly() {
    let cfg = SemiConfig::default();
    let ts = TaskSet::from_cdt(&[(6, 20, 10)]).unwrap();
    let p = cascade(&ts, 1, &cfg);
    assert!(p.schedulable);
    assert_eq!(p.cpus[0].reservations[0].deadline, 10);
    check(&ts, &p).unwrap();
    // Three constrained tasks that need a split.
    let ts = TaskSet::from_cdt(&[(6, 8, 10), (6, 8, 10), (6, 9, 10)]).unwrap();
    let p = cascade(&ts, 2, &cfg);
    if p.schedulable {
        check(&ts, &p).unwrap();
        let split = p.tasks.iter().find(|t| t.parts > 1);
        if let Some(t) = split {
            let last_end = p
                .cpus
                .iter()
                .flat_map(|c| &c.reservations)
                .filter(|r| r.task == t.task)
                .map(|r| r.offset + r.deadline)
                .max()
                .unwrap();
            assert!(last_end <= ts[t.task].deadline);
        }
    }
}

#[test]
fn rp_period_transformation_rounds_safely() {
    // Two tasks that only fit with short periods: a big-period task split by C=D badly.
    let ms = 1_000_000u64;
    let ts = TaskSet::from_ct(&[(7 * ms, 10 * ms), (690 * ms, 1000 * ms), (600 * ms, 1000 * ms)]).unwrap();
    let cfg = SemiConfig::default();
    for b in [Basic::TwoWfdCd, Basic::Fwfd, Basic::Wwfd] {
        let p = place(&ts, 2, &Heuristic::Rp(b), &cfg);
        if p.schedulable {
            check(&ts, &p).unwrap();
            for t in &p.tasks {
                let res: Vec<_> = p.cpus.iter().flat_map(|c| &c.reservations).filter(|r| r.task == t.task).collect();
                let k = t.period_ratio;
                assert!(k * res[0].period <= ts[t.task].period);
                assert!(k * res.iter().map(|r| r.budget).sum::<u64>() >= ts[t.task].wcet);
            }
        }
    }
    let p = cascade(&ts, 2, &cfg);
    assert!(p.schedulable, "{:?}", p.reason);
    eprintln!("solved by {}", p.heuristic);
    check(&ts, &p).unwrap();
}

#[test]
fn names_round_trip() {
    let all = Heuristic::all();
    assert_eq!(all.len(), 19);
    for h in &all {
        assert_eq!(Heuristic::from_name(&h.name()), Some(*h), "{}", h.name());
        assert_eq!(Heuristic::from_name(&h.name().to_lowercase()), Some(*h));
    }
    assert_eq!(Heuristic::from_name("paf-wwfd"), Some(Heuristic::Paf(Basic::Wwfd)));
    assert_eq!(Heuristic::from_name("BFD"), None);
    assert_eq!(Heuristic::from_name("PAF(XYZ)"), None);
}

/// A seed-004-style set (found by a seeded search, U ≈ 2.93 on 3 CPUs) that no basic
/// heuristic and no PAF instantiation places, but RP(2WFD-C=D) does by period-transforming.
#[test]
fn rp_is_needed_and_its_transformation_is_safe() {
    let ts =
        TaskSet::from_ct(&[(219492136, 250000000), (7288171, 10000000), (21352330, 25000000), (12323820, 25000000)])
            .unwrap();
    let cfg = SemiConfig::for_variant(Variant::Text);
    let nometa = cascade(&ts, 3, &SemiConfig { meta: false, ..cfg.clone() });
    assert!(!nometa.schedulable);
    for h1 in rtsched_analysis::semi::PAF_H1 {
        assert!(!place(&ts, 3, &Heuristic::Paf(h1), &cfg).schedulable);
    }
    let p = cascade(&ts, 3, &cfg);
    assert_eq!(p.heuristic, "RP(2WFD-C=D)");
    check(&ts, &p).unwrap();
    assert!(p.tasks.iter().any(|t| t.period_ratio > 1));
    for t in &p.tasks {
        let rs: Vec<_> = p.cpus.iter().flat_map(|c| &c.reservations).filter(|r| r.task == t.task).collect();
        let (k, task) = (t.period_ratio, &ts[t.task]);
        assert_eq!(rs[0].period, task.period / k, "period floor(T/k)");
        assert!(k * rs.iter().map(|r| r.budget).sum::<u64>() >= task.wcet);
        assert!(rs.iter().all(|r| r.period >= 2_000_000), "θ floor 4 ms: no period below θ/2");
    }
}

#[test]
fn place_many_agrees_with_place() {
    let sets = vec![
        fig1(),
        TaskSet::from_ct(&[(1, 2), (1, 2)]).unwrap(),
        TaskSet::from_ct(&[(3, 4), (3, 4), (3, 4)]).unwrap(),
    ];
    let hs = Heuristic::all();
    let cfg = SemiConfig::default();
    let got = rtsched_analysis::semi::place_many(&sets, 2, &hs, &cfg);
    for (s, row) in sets.iter().zip(&got) {
        let want: Vec<bool> = hs.iter().map(|h| place(s, 2, h, &cfg).schedulable).collect();
        assert_eq!(row, &want);
    }
    assert!(got[1].iter().all(|&b| b));
    assert!(got[2].iter().all(|&b| !b));
}

/// The same set under the artifact's reading: no basic heuristic and no PAF instantiation
/// places it either; the divisor RP does, with periods from the paper's set that divide T.
#[test]
fn rp_divisor_places_the_set_with_divisor_periods() {
    let ts =
        TaskSet::from_ct(&[(219492136, 250000000), (7288171, 10000000), (21352330, 25000000), (12323820, 25000000)])
            .unwrap();
    for floor_ms in [2, 4] {
        let cfg = SemiConfig { rp_floor: floor_ms * 1_000_000, ..SemiConfig::for_variant(Variant::Artifact) };
        assert!(!cascade(&ts, 3, &SemiConfig { meta: false, ..cfg.clone() }).schedulable);
        for h1 in rtsched_analysis::semi::PAF_H1 {
            assert!(!place(&ts, 3, &Heuristic::Paf(h1), &cfg).schedulable);
        }
        let p = cascade(&ts, 3, &cfg);
        assert!(p.schedulable, "{:?}", p.reason);
        assert!(p.heuristic.starts_with("RP("), "{}", p.heuristic);
        check(&ts, &p).unwrap();
        assert!(p.tasks.iter().any(|t| t.period_ratio > 1));
        for t in &p.tasks {
            let rs: Vec<_> = p.cpus.iter().flat_map(|c| &c.reservations).filter(|r| r.task == t.task).collect();
            let (k, task) = (t.period_ratio, &ts[t.task]);
            assert_eq!(rs[0].period * k, task.period, "a divisor period");
            assert!(rtsched_analysis::semi::PAPER_PERIODS_NS.contains(&rs[0].period));
            assert!(rs[0].period >= floor_ms * 1_000_000);
        }
    }
}
