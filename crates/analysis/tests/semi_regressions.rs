//! Regressions found by fuzzing the placement entry point (fuzz/fuzz_targets/placement.rs).

use rtsched_analysis::semi::{cascade, check, SemiConfig};
use rtsched_model::TaskSet;

/// The checker's hyperperiod bound multiplied a running LCM near 2^80 by a period near 2^52 and
/// overflowed `u128` (a panic in debug builds). It must now skip the hyperperiod bound instead.
#[test]
fn checker_survives_huge_coprime_periods() {
    let ts = TaskSet::from_cdt(&[
        (1, (1 << 40) - 100, (1 << 40) - 87),
        (1, (1 << 39) - 200, (1 << 39) - 111),
        (1, (1 << 52) - 1000, (1 << 52) - 1),
    ])
    .unwrap();
    let p = cascade(&ts, 1, &SemiConfig::default());
    assert!(p.schedulable, "{:?}", p.reason);
    assert_eq!(check(&ts, &p), Ok(()));
}
