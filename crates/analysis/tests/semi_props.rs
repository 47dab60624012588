//! Property tests: every placement any heuristic returns passes the independent checker and
//! survives a JSON round trip; arbitrary inputs never panic; the checker itself agrees with an
//! exhaustive demand check and rejects broken placements.

use proptest::prelude::*;
use rtsched_analysis::semi::{cascade, check, place, Heuristic, Placement, RpMode, SemiConfig, SliceOrder, Variant};
use rtsched_model::{Task, TaskSet};

const PERIODS: [u64; 8] = [4, 5, 8, 10, 12, 20, 25, 40];

/// Small harmonic-ish sets with utilizations near m (where splitting happens).
fn small_set() -> impl Strategy<Value = (TaskSet, u32)> {
    (1u32..4, 2usize..8)
        .prop_flat_map(|(m, n)| {
            let task =
                (0usize..PERIODS.len(), 1u64..=100, 0u64..=100, any::<bool>()).prop_map(|(pi, cu, du, implicit)| {
                    let t = PERIODS[pi];
                    let c = (t * cu).div_ceil(100).clamp(1, t);
                    let d = if implicit { t } else { c + (t - c) * du / 100 };
                    Task { name: None, wcet: c, deadline: d, period: t, segments: None }
                });
            (proptest::collection::vec(task, n), Just(m))
        })
        .prop_map(|(tasks, m)| (TaskSet::new(tasks).unwrap(), m))
}

/// The period rules of the RP modes on a placement: untransformed tasks keep their period; the
/// divisor RP's periods are candidates of at least the floor that divide T, with
/// `⌊T/k⌋ ≥ ⌈C/k⌉`; the halving RP's are `⌊T/k⌋` with budgets `≥ min(ε, C)`; only
/// implicit-deadline tasks are transformed.
fn rp_rules_hold(ts: &TaskSet, p: &Placement, cfg: &SemiConfig) -> Result<(), TestCaseError> {
    for t in &p.tasks {
        let task = &ts[t.task];
        let rs: Vec<_> = p.cpus.iter().flat_map(|c| &c.reservations).filter(|r| r.task == t.task).collect();
        let (k, delta) = (t.period_ratio, rs[0].period);
        if k == 1 {
            prop_assert_eq!(delta, task.period);
            continue;
        }
        prop_assert!(p.heuristic.starts_with("RP("), "{} transformed task {}", p.heuristic, t.task);
        prop_assert!(task.deadline >= task.period, "constrained task {} transformed", t.task);
        match cfg.rp {
            RpMode::Divisor => {
                prop_assert_eq!(delta * k, task.period);
                prop_assert!(cfg.rp_periods.contains(&delta) && delta >= cfg.rp_floor, "period {}", delta);
                prop_assert!(delta >= task.wcet.div_ceil(k));
            }
            RpMode::Halving => {
                prop_assert_eq!(delta, task.period / k);
                let budget = task.wcet.div_ceil(k);
                prop_assert!(budget >= cfg.epsilon.max(1).min(task.wcet));
            }
        }
    }
    Ok(())
}

fn brute_edf(tasks: &[(u64, u64, u64)]) -> bool {
    let h = tasks.iter().fold(1u64, |h, t| num_integer::lcm(h, t.2));
    let dmax = tasks.iter().map(|t| t.1).max().unwrap_or(0);
    let u_ok = tasks.iter().map(|t| (t.0 * (h / t.2)) as u128).sum::<u128>() <= h as u128;
    u_ok && (1..=h + dmax).all(|at| {
        tasks.iter().map(|&(c, d, t)| if at < d { 0 } else { ((at - d) / t + 1) as u128 * c as u128 }).sum::<u128>()
            <= at as u128
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn every_heuristic_is_checker_approved(
        (ts, m) in small_set(), eps in prop_oneof![Just(0u64), 1u64..4], opts in any::<(bool, bool, bool, bool)>(),
        floor in 1u64..=8,
    ) {
        let (text, halving, desc, merge) = opts;
        let cfg = SemiConfig {
            epsilon: eps,
            rp_floor: floor,
            // The divisor RP's candidates: this file's period set, so that it transforms here.
            rp_periods: vec![1, 2, 4, 5, 8, 10, 12, 20, 25, 40],
            variant: if text { Variant::Text } else { Variant::Artifact },
            rp: if halving { RpMode::Halving } else { RpMode::Divisor },
            slice_order: if desc { SliceOrder::DeadlineDesc } else { SliceOrder::Flipped },
            merge_same_core: merge,
            ..SemiConfig::default()
        };
        for h in Heuristic::all() {
            let p = place(&ts, m, &h, &cfg);
            if p.schedulable {
                prop_assert!(check(&ts, &p).is_ok(), "{}: {:?}\n{}", h.name(), check(&ts, &p), p.to_json());
                // No split piece below eps.
                for c in &p.cpus {
                    for r in &c.reservations {
                        if r.parts > 1 { prop_assert!(r.budget >= eps.max(1)); }
                    }
                }
                let back = Placement::from_value(&p.to_json(), &ts).unwrap();
                prop_assert_eq!(&back, &p);
                rp_rules_hold(&ts, &p, &cfg)?;
                if merge {
                    // At most one piece of a task per processor.
                    for c in &p.cpus {
                        let mut tasks: Vec<usize> = c.reservations.iter().map(|r| r.task).collect();
                        tasks.sort_unstable();
                        let n = tasks.len();
                        tasks.dedup();
                        prop_assert_eq!(tasks.len(), n);
                    }
                }
                if desc {
                    for t in p.tasks.iter().filter(|t| t.parts > 1) {
                        let mut rs: Vec<_> = p.cpus.iter().flat_map(|c| &c.reservations).filter(|r| r.task == t.task).collect();
                        rs.sort_by_key(|r| r.part);
                        prop_assert!(rs.windows(2).all(|w| w[0].deadline >= w[1].deadline));
                    }
                }
            } else {
                prop_assert!(p.reason.as_deref().is_some_and(|r| !r.is_empty()));
                prop_assert!(check(&ts, &p).is_err());
            }
        }
        let c = cascade(&ts, m, &cfg);
        if c.schedulable { prop_assert!(check(&ts, &c).is_ok()); }
        // The cascade succeeds iff one of its heuristics does.
        let any = Heuristic::cascade_order(cfg.variant, true).iter().any(|h| place(&ts, m, h, &cfg).schedulable);
        prop_assert_eq!(c.schedulable, any);
    }

    /// The checker's demand test against an exhaustive check at every integer instant.
    #[test]
    fn checker_demand_is_exact(raw in proptest::collection::vec((1u64..=12, 1u64..=100, 1u64..=100), 1..5)) {
        let tasks: Vec<(u64, u64, u64)> = raw.iter().map(|&(t, cu, du)| {
            let c = (t * cu).div_ceil(100).clamp(1, t);
            let d = c + (t - c) * du / 100;
            (c, d, t)
        }).collect();
        let ts = TaskSet::from_cdt(&tasks).unwrap();
        let json = serde_json::json!({
            "m": 1, "schedulable": true, "heuristic": "hand",
            "cpus": [{"cpu": 0, "reservations": tasks.iter().enumerate().map(|(i, &(c, d, t))| serde_json::json!(
                {"task": i, "budget": c, "period": t, "deadline": d, "offset": 0, "part": 1, "parts": 1})).collect::<Vec<_>>()}],
            "tasks": (0..tasks.len()).map(|i| serde_json::json!({"task": i, "period_ratio": 1, "parts": 1})).collect::<Vec<_>>()
        });
        let p = Placement::from_value(&json, &ts).unwrap();
        prop_assert_eq!(check(&ts, &p).is_ok(), brute_edf(&tasks), "{:?}", tasks);
        // And a single-CPU placement by any heuristic is accepted iff exhaustive says so.
        let fits = place(&ts, 1, &Heuristic::Basic(rtsched_analysis::semi::Basic::Ffd), &SemiConfig::default()).schedulable;
        prop_assert_eq!(fits, brute_edf(&tasks));
    }

    /// Mutations of a valid placement: the checker must reject each.
    #[test]
    fn checker_rejects_broken_placements((ts, m) in small_set()) {
        let p = cascade(&ts, m, &SemiConfig { meta: false, ..SemiConfig::default() });
        prop_assume!(p.schedulable);
        prop_assert!(check(&ts, &p).is_ok());
        // Any budget lowered by one: k = 1 here, so the parts no longer cover C.
        for ci in 0..p.cpus.len() {
            for ri in 0..p.cpus[ci].reservations.len() {
                let mut q = p.clone();
                q.cpus[ci].reservations[ri].budget -= 1;
                if q.cpus[ci].reservations[ri].budget > 0 {
                    prop_assert!(check(&ts, &q).is_err());
                }
                // A window moved by one: overlap or gap.
                let mut q = p.clone();
                if q.cpus[ci].reservations[ri].parts > 1 {
                    q.cpus[ci].reservations[ri].offset += 1;
                    prop_assert!(check(&ts, &q).is_err());
                }
            }
        }
        // A task dropped.
        if let Some(ci) = p.cpus.iter().position(|c| !c.reservations.is_empty()) {
            let mut q = p.clone();
            q.cpus[ci].reservations.pop();
            prop_assert!(check(&ts, &q).is_err());
        }
        // All reservations piled onto CPU 0: must fail whenever total demand exceeds one CPU.
        let mut q = p.clone();
        let all: Vec<_> = q.cpus.iter_mut().flat_map(|c| c.reservations.drain(..)).collect();
        let u1: f64 = all.iter().map(|r| r.budget as f64 / r.period as f64).sum();
        q.cpus[0].reservations = all;
        if u1 > 1.0 + 1e-9 { prop_assert!(check(&ts, &q).is_err()); }
    }

    /// Arbitrary (huge, tiny, infeasible) inputs: a checker-approved placement or a reason; no panic.
    #[test]
    fn fuzz_never_panics(
        raw in proptest::collection::vec((1u64..=(1u64 << 53), 1u64..=(1u64 << 53), 1u64..=(1u64 << 53)), 0..7),
        m in 0u32..4, eps in prop_oneof![Just(0u64), 1u64..=(1u64 << 53)], meta in any::<bool>()
    ) {
        let ts = TaskSet::from_cdt(&raw).unwrap();
        let cfg = SemiConfig { epsilon: eps, meta, ..SemiConfig::default() };
        let p = cascade(&ts, m, &cfg);
        if p.schedulable { prop_assert!(check(&ts, &p).is_ok(), "{:?}", check(&ts, &p)); }
        else { prop_assert!(p.reason.is_some()); }
    }

}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Scaled-down seed-004 style sets (periods 1..1000 "ms" in µs units): a large split range.
    #[test]
    fn seed_style_sets_checked(seed in any::<u64>(), extra in 1usize..9, m in 2u32..5, frac in 0.85f64..1.0) {
        // n in [m + 1, m + 8] as in §V (n > m, so that U <= n always holds).
        let n = m as usize + extra;
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let ps = [1u64, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500, 1000];
        let total = frac * m as f64;
        // UUniFast with discard of u > 1.
        let us = loop {
            let mut sum = total; let mut v = Vec::new();
            for i in 1..n { let next = sum * rng.random::<f64>().powf(1.0 / (n - i) as f64); v.push(sum - next); sum = next; }
            v.push(sum);
            if v.iter().all(|&u| u <= 1.0) { break v; }
        };
        let tasks: Vec<(u64, u64)> = us.iter().map(|&u| {
            let t = ps[rng.random_range(0..ps.len())] * 1000;
            (((u * t as f64) as u64).clamp(1, t), t)
        }).collect();
        let ts = TaskSet::from_ct(&tasks).unwrap();
        for variant in [Variant::Text, Variant::Artifact] {
            // Periods here are in µs: the divisor RP's candidates too.
            let cfg = SemiConfig {
                rp_floor: if seed % 2 == 0 { 4000 } else { 2000 },
                rp_periods: ps.iter().map(|p| p * 1000).collect(),
                ..SemiConfig::for_variant(variant)
            };
            for h in Heuristic::all() {
                let p = place(&ts, m, &h, &cfg);
                if p.schedulable {
                    prop_assert!(check(&ts, &p).is_ok(), "{}: {:?}", h.name(), check(&ts, &p));
                    rp_rules_hold(&ts, &p, &cfg)?;
                }
            }
        }
    }
}

#[test]
fn epsilon_larger_than_every_wcet_means_no_split() {
    let ts = TaskSet::from_ct(&[(10, 15), (10, 15), (10, 15), (2, 15)]).unwrap();
    let cfg = SemiConfig { epsilon: 1000, ..SemiConfig::default() };
    for h in Heuristic::all() {
        let p = place(&ts, 3, &h, &cfg);
        if p.schedulable {
            check(&ts, &p).unwrap();
            assert!(p.tasks.iter().all(|t| t.parts == 1 && t.period_ratio == 1), "{}", h.name());
        }
    }
    let p = cascade(&TaskSet::from_ct(&[(10, 15), (10, 15), (10, 15)]).unwrap(), 2, &cfg);
    assert!(!p.schedulable, "needs a split, which eps forbids");
}
