//! Global EDF tests on small task sets built from the fuzz bytes: every test must return a
//! verdict without panicking, overflowing (overflow checks are on) or hanging; the combined
//! test must agree with "any of them"; every test must reject U > m, u_i > 1 and C > D; the
//! soft real-time bounds must exist exactly when tardiness is bounded (implicit deadlines).
#![no_main]
use libfuzzer_sys::fuzz_target;
#[path = "common.rs"]
mod common;
use rtsched_analysis::global::{self, srt, GlobalTest};
use rtsched_analysis::{Limits, Verdict};

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.iter().copied();
    let head = bytes.next().unwrap_or(0);
    let n = (head % 8) as usize + 1;
    let m = (head / 8 % 4) as u32 + 1;
    let ts = common::task_set(n, &mut bytes);
    let limits = Limits { max_steps: 20_000, max_interval: 1 << 40, ..Limits::default() };
    let infeasible = !ts.utilization_at_most(m as u64) || ts.iter().any(|t| t.wcet > t.period || t.wcet > t.deadline);
    let mut any = false;
    let mut gave_up = false;
    for t in GlobalTest::ALL {
        let v = global::test(t, &ts, m, &limits);
        if infeasible {
            assert_ne!(v, Verdict::Schedulable, "{} accepted an infeasible set {ts:?} on m = {m}", t.name());
        }
        any |= v == Verdict::Schedulable;
        gave_up |= v == Verdict::GaveUp;
    }
    let c = global::combined(&ts, m, &limits);
    assert_eq!(c == Verdict::Schedulable, any, "combined {c:?} vs any-of on {ts:?}");
    if !any && !gave_up {
        assert_eq!(c, Verdict::NotSchedulable);
    }
    let bounded = srt::bounded_tardiness(&ts, m);
    let implicit = ts.iter().all(|t| t.deadline == t.period);
    assert_eq!(srt::tardiness_bounds(&ts, m).is_some(), bounded && implicit);
});
