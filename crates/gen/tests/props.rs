//! Property tests over extreme parameters: every generated task is valid with
//! `1 <= C <= D <= T`, periods stay in their range, counts are right, nothing panics.

use proptest::prelude::*;
use rtsched_gen::*;
use rtsched_model::{Time, MAX_TIME};

fn period_gen() -> impl Strategy<Value = PeriodGen> {
    let range = (1u64..=MAX_TIME, 1u64..=MAX_TIME).prop_map(|(a, b)| (a.min(b), a.max(b)));
    let small = (1u64..=20, 0u64..=20).prop_map(|(a, w)| (a, a + w));
    prop_oneof![
        range.clone().prop_map(|(min, max)| PeriodGen::Uniform { min, max }),
        small.clone().prop_map(|(min, max)| PeriodGen::Uniform { min, max }),
        range.clone().prop_map(|(min, max)| PeriodGen::LogUniform { min, max }),
        small.prop_map(|(min, max)| PeriodGen::LogUniform { min, max }),
        (range, 1u64..=1_000_000).prop_map(|((min, max), g)| {
            // Make sure a multiple exists: widen max to the next multiple of g if needed.
            let max = if min.div_ceil(g) * g > max { (min.div_ceil(g) * g).min(MAX_TIME) } else { max };
            PeriodGen::Integral { min, max, granularity: g }
        }),
        prop::collection::vec(prop_oneof![1u64..=10, 1u64..=MAX_TIME], 1..6).prop_map(PeriodGen::Set),
    ]
}

fn deadline_gen() -> impl Strategy<Value = DeadlineGen> {
    let pair = (0.0f64..=1.0, 0.0f64..=1.0).prop_map(|(a, b)| (a.min(b), a.max(b)));
    prop_oneof![
        Just(DeadlineGen::Implicit),
        pair.clone().prop_map(|(lo, hi)| DeadlineGen::Constrained { lo, hi }),
        pair.prop_map(|(lo, hi)| DeadlineGen::PeriodFraction { lo: lo.max(1e-9), hi: hi.max(1e-9) }),
    ]
}

fn util_gen() -> impl Strategy<Value = UtilGen> {
    let umax = prop_oneof![Just(1.0f64), 1e-12f64..=1.0, Just(f64::MIN_POSITIVE)];
    prop_oneof![
        (1usize..=60, umax.clone(), 1e-9f64..=1.0).prop_map(|(n, umax, f)| UtilGen::RandFixedSum {
            n,
            total: (n as f64 * umax * f).max(f64::MIN_POSITIVE),
            umax
        }),
        (1usize..=60, 1e-6f64..=0.25).prop_map(|(n, f)| UtilGen::UUniFastDiscard { n, total: n as f64 * f, umax: 1.0 }),
        (0usize..9, 1usize..=100).prop_map(|(d, n)| UtilGen::Dist { dist: Dist::ALL[d], count: Count::Fixed(n) }),
        (0usize..9, prop_oneof![1e-9f64..=2.0, 1.0f64..=40.0])
            .prop_map(|(d, cap)| UtilGen::Dist { dist: Dist::ALL[d], count: Count::Cap(cap) }),
    ]
}

fn in_range(p: &PeriodGen, t: Time) -> bool {
    match p {
        PeriodGen::Uniform { min, max } | PeriodGen::LogUniform { min, max } => (*min..=*max).contains(&t),
        PeriodGen::Integral { min, max, granularity } => (*min..=*max).contains(&t) && t.is_multiple_of(*granularity),
        PeriodGen::Set(v) => v.contains(&t),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn generated_tasks_are_always_valid(util in util_gen(), periods in period_gen(), deadlines in deadline_gen(), seed: u64, index: u64) {
        let spec = GenSpec { util, periods, deadlines };
        prop_assume!(spec.validate().is_ok());
        match generate(&spec, seed, index) {
            Ok(ts) => {
                match &spec.util {
                    UtilGen::RandFixedSum { n, .. } | UtilGen::UUniFastDiscard { n, .. } | UtilGen::Dist { count: Count::Fixed(n), .. } => prop_assert_eq!(ts.len(), *n),
                    UtilGen::Dist { count: Count::Cap(cap), .. } => prop_assert!(ts.utilization() <= rtsched_model::exact::Rational::from_float(*cap).unwrap()),
                }
                for t in ts.iter() {
                    prop_assert!(t.wcet >= 1, "WCET 0: {:?}", t);
                    prop_assert!(t.wcet <= t.deadline && t.deadline <= t.period, "{:?}", t);
                    prop_assert!(in_range(&spec.periods, t.period), "{:?} {:?}", t, spec.periods);
                    if spec.deadlines == DeadlineGen::Implicit {
                        prop_assert_eq!(t.deadline, t.period);
                    }
                }
            }
            // The only admissible failure: UUniFast-Discard giving up (named field umax).
            Err(e) => prop_assert!(matches!(spec.util, UtilGen::UUniFastDiscard { .. }) && e.field.as_deref() == Some("umax"), "{}", e),
        }
    }

    #[test]
    fn randfixedsum_sums_and_bounds(n in 1usize..=200, umax in 1e-6f64..=1.0, f in 1e-6f64..=1.0, seed: u64) {
        use rand::SeedableRng;
        let total = n as f64 * umax * f;
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let u = randfixedsum(n, total, umax, &mut r).unwrap();
        let sum: f64 = u.iter().sum();
        prop_assert!((sum - total).abs() <= 4.0 * f64::EPSILON * n as f64 * total.max(umax), "sum {} vs {}", sum, total);
        prop_assert!(u.iter().all(|&x| x > 0.0 && x <= umax));
    }

    #[test]
    fn parsers_never_panic(s in ".{0,40}") {
        let _ = PeriodGen::parse(&s);
        let _ = DeadlineGen::parse(&s);
        let _ = Dist::from_name(&s);
        let _ = util_gen_from_name(&s, None, 1.0, 1.0);
    }
}
