//! `cascade_of` over a sub-list succeeds exactly when one of the listed heuristics does, and
//! its placement passes the independent checker (the experiment engine's group cascades rely on
//! this).

use proptest::prelude::*;
use rtsched_analysis::semi::{cascade_of, check, place, Heuristic, SemiConfig, Variant};
use rtsched_model::TaskSet;

fn set() -> impl Strategy<Value = (TaskSet, u32)> {
    (2u32..4).prop_flat_map(|m| {
        (proptest::collection::vec((20u64..=95, 1u64..=8), (m as usize + 1)..(3 * m as usize + 2)), Just(m)).prop_map(
            |(raw, m)| {
                // Periods from a small harmonic-ish set keep the demand tests short.
                let ct: Vec<(u64, u64)> = raw
                    .iter()
                    .map(|&(c, p)| {
                        let t = [10, 20, 40, 50, 80, 100, 125, 200][(p - 1) as usize];
                        ((t * c / 100).max(1), t)
                    })
                    .collect();
                (TaskSet::from_ct(&ct).unwrap(), m)
            },
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn cascade_of_is_the_union_of_its_members((ts, m) in set(), text in any::<bool>()) {
        let variant = if text { Variant::Text } else { Variant::Artifact };
        let cfg = SemiConfig::for_variant(variant);
        let paf_order: Vec<Heuristic> =
            Heuristic::cascade_order(variant, true).into_iter().filter(|h| !matches!(h, Heuristic::Rp(_))).collect();
        for order in [Heuristic::cascade_order(variant, false), paf_order] {
            let p = cascade_of(&ts, m, &order, &cfg);
            let any = order.iter().any(|h| place(&ts, m, h, &cfg).schedulable);
            prop_assert_eq!(p.schedulable, any);
            if p.schedulable {
                prop_assert!(check(&ts, &p).is_ok(), "{:?}", check(&ts, &p));
                prop_assert!(order.iter().any(|h| h.name() == p.heuristic));
            }
        }
    }
}
