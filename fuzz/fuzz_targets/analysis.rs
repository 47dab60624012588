//! Uniprocessor analyses and partitioning on small task sets built from the fuzz bytes:
//! every call must return a verdict (or typed error) without panicking, overflowing (the
//! fuzz build has overflow checks on) or hanging, and QPA must agree with the brute-force
//! demand check whenever both decide.
#![no_main]
use libfuzzer_sys::fuzz_target;
#[path = "common.rs"]
mod common;
use rtsched_analysis::partition::{
    partition, verify, verify_partial, Admission, Fit, Order, PartitionError, PartitionOutcome,
};
use rtsched_analysis::uni::edf::{self, EdfBin};
use rtsched_analysis::uni::fp::{self, Priority};
use rtsched_analysis::{Limits, Verdict};

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.iter().copied();
    let head = bytes.next().unwrap_or(0);
    let n = (head % 6) as usize + 1;
    let m = (head / 6 % 4) as u32 + 1;
    let ts = common::task_set(n, &mut bytes);
    let limits = Limits { max_steps: 20_000, max_interval: 1 << 40, ..Limits::default() };

    let q = edf::qpa(&ts, &limits);
    let b = edf::dbf_brute(&ts, &limits);
    if let (Some(x), Some(y)) = (q.decided(), b.decided()) {
        assert_eq!(x, y, "QPA {q:?} vs brute force {b:?} on {ts:?}");
    }
    let _ = edf::utilization_test(&ts);
    let _ = edf::busy_period(&ts, &limits);
    for prio in [Priority::RateMonotonic, Priority::DeadlineMonotonic] {
        let (v, r) = fp::rta(&ts, prio, &limits);
        assert_eq!(r.len(), n);
        if v.is_schedulable() {
            assert!(r.iter().zip(ts.iter()).all(|(r, t)| r.is_some_and(|r| r >= t.wcet && r <= t.deadline)));
        }
    }
    let mut bin = EdfBin::new();
    for t in ts.iter() {
        let _ = bin.try_add(t, &limits).expect("valid task");
    }
    let sel = data.last().copied().unwrap_or(0);
    let fit = [Fit::First, Fit::Worst, Fit::Best, Fit::Next][(sel % 4) as usize];
    let order = [Order::DecreasingUtilization, Order::DecreasingDensity][(sel / 4 % 2) as usize];
    let adm = [Admission::Edf, Admission::Fp(Priority::RateMonotonic), Admission::Fp(Priority::DeadlineMonotonic)]
        [(sel / 8 % 3) as usize];
    // Re-verification may need more steps than one admission (FP analyses a whole CPU).
    let vlimits = Limits { max_steps: 1_000_000, ..limits.clone() };
    let ok = |r: Result<(), PartitionError>| {
        let gave_up = matches!(r, Err(PartitionError::FailsTest { verdict: Verdict::GaveUp, .. }));
        assert!(r.is_ok() || gave_up, "{r:?} on {ts:?}")
    };
    match partition(&ts, m, fit, order, adm, &limits) {
        PartitionOutcome::Placed(p) => ok(verify(&ts, &p, adm, &vlimits)),
        PartitionOutcome::Failed { partial, .. } => ok(verify_partial(&ts, &partial, adm, &vlimits)),
    }
});
