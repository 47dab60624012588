//! Work and memory bounds of the global EDF tests on huge sets, and early stops.
//!
//! A 100,000-task set must not make RTA or BCL-iterative ask for an `n²` table (160 GB: the
//! allocation would abort this test), BCL and BAK must respect the step bound like the
//! iterative tests, and a requested stop must end every test with `GaveUp`.

use rtsched_analysis::global::{self, GlobalTest};
use rtsched_analysis::{Limits, Stop, Verdict};
use rtsched_model::TaskSet;

/// `n` implicit-deadline tasks with total utilization about `u`, periods spread over
/// [10, 100] ms.
fn big_set(n: usize, u: f64) -> TaskSet {
    let mut ct = Vec::with_capacity(n);
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let t = 10_000_000 + x % 90_000_001;
        let c = (t as f64 * u / n as f64) as u64;
        ct.push((c.max(1), t));
    }
    TaskSet::from_ct(&ct).unwrap()
}

#[test]
fn huge_sets_stay_within_memory_and_steps() {
    // U = 1 on 16 processors: every task passes BCL and BAK, so each needs n steps.
    let ts = big_set(100_000, 1.0);
    let lim = Limits::steps(3);
    for t in [GlobalTest::Rta, GlobalTest::BclIterative, GlobalTest::Bcl, GlobalTest::Bak] {
        // Three steps cannot decide 100,000 tasks (every task must pass): the bound is hit.
        assert_eq!(global::test(t, &ts, 16, &lim), Verdict::GaveUp, "{t:?}");
    }
}

#[test]
fn a_requested_stop_ends_every_test() {
    let ts = big_set(300, 4.0);
    let decided = Limits::default();
    let stop = Stop::new();
    stop.request();
    let stopped = Limits { stop, ..Limits::default() };
    for t in GlobalTest::ALL {
        let v = global::test(t, &ts, 8, &decided);
        assert_ne!(v, Verdict::GaveUp, "{t:?} decides this set without a stop");
        if t != GlobalTest::Gfb {
            // GFB is a single O(n) sum, with nothing to interrupt.
            assert_eq!(global::test(t, &ts, 8, &stopped), Verdict::GaveUp, "{t:?} must stop");
        }
    }
    // With a heavy task GFB rejects the set, so the combined test must go on to the others.
    let mut tasks = ts.into_tasks();
    tasks.push(rtsched_model::Task::implicit(9, 10).unwrap());
    let heavy = TaskSet::new(tasks).unwrap();
    assert_eq!(global::test(GlobalTest::Gfb, &heavy, 8, &decided), Verdict::NotSchedulable);
    assert_eq!(global::combined(&heavy, 8, &stopped), Verdict::GaveUp);
}
