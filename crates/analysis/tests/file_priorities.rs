//! Per-task priorities from the task-set file (docs/formats.md, `priority`) reach the global
//! fixed-priority tests named for deadline-monotonic priorities (`gfp_bc`, `gfp_bc_slack`,
//! `gfp_guan`) when no priorities are given; given priorities override them and the report
//! says so; `gfp_rm_*` keep rate-monotonic priorities; a suspending set keeps its priorities
//! through the suspension-oblivious view.

use rtsched_analysis::global::fp::{self as gfp, Assignment, GfpTest};
use rtsched_analysis::report::{self, PrioritySource, TestId};
use rtsched_analysis::uni::fp::Priority;
use rtsched_analysis::{suspension, Limits};
use rtsched_model::io::read_json;
use rtsched_model::task::{Segments, SuspensionBound};
use rtsched_model::{Task, TaskSet};

fn json(r: &report::Report) -> String {
    let mut s = String::new();
    r.write_json(&mut s);
    s
}

#[test]
fn file_priorities_replace_deadline_monotonic_and_given_ones_override_them() {
    let lim = Limits::default();
    let tests: Vec<TestId> =
        ["gfp_bc", "gfp_bc_slack", "gfp_guan", "gfp_rm_bc"].iter().map(|n| TestId::from_name(n).unwrap()).collect();
    // Random small sets with reversed-DM ranks in the file: where those ranks decide another
    // verdict than DM, the report must follow the file (the test can fail).
    let mut x: u64 = 0x5eed;
    let mut next = |k: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % k
    };
    let mut differing = 0;
    for _ in 0..3_000 {
        let n = 2 + next(3) as usize;
        let v: Vec<(u64, u64, u64)> = (0..n)
            .map(|_| {
                let t = 4 + next(20);
                let c = 1 + next(t / 2);
                (c, c + next(t - c + 1), t)
            })
            .collect();
        let plain = TaskSet::from_cdt(&v).unwrap();
        let dm = Assignment::Rule(Priority::DeadlineMonotonic).order(&plain).unwrap();
        // Rank = reverse of the DM position: the lowest DM priority becomes the highest.
        let mut ranks = vec![0u32; n];
        for (pos, &task) in dm.iter().enumerate() {
            ranks[task] = (n - 1 - pos) as u32;
        }
        let ranked = plain.clone().with_priorities(ranks.clone()).unwrap();
        let explicit = Assignment::Explicit(ranks.iter().map(|&r| r as u64).collect());
        let r = report::report(&ranked, 2, &tests, &lim, false);
        assert_eq!(r.priorities, PrioritySource::File);
        for (k, t) in tests.iter().enumerate() {
            let TestId::Gfp(g, p) = *t else { unreachable!() };
            let want = match p {
                Priority::DeadlineMonotonic => gfp::analyze(g, &plain, 2, &explicit, &lim).unwrap().verdict,
                Priority::RateMonotonic => gfp::test(g, &plain, 2, p, &lim),
            };
            assert_eq!(r.results[k].verdict, want, "{}: {v:?} ranks {ranks:?}", t.name());
            // The one-test path (sweeps) agrees.
            assert_eq!(report::verdict(*t, &ranked, 2, &lim, 0), want, "{}", t.name());
            if p == Priority::DeadlineMonotonic && want != gfp::test(g, &plain, 2, p, &lim) {
                differing += 1;
            }
        }
        let j = json(&r);
        assert!(j.contains(r#""gfp_bc":{"schedulable""#) && j.contains(r#""priorities":"file""#), "{j}");
        assert!(!j.contains(r#""gfp_rm_bc":{"schedulable":true,"gave_up":false,"priorities""#), "{j}");
        // Given priorities (here DM) override the file's, and the report says so.
        let dm_rule = Assignment::Rule(Priority::DeadlineMonotonic);
        let over = report::report_with_priorities(&ranked, 2, &tests, &lim, false, Some(&dm_rule));
        assert_eq!(over.priorities, PrioritySource::GivenOverFile);
        assert!(json(&over).contains(r#""priorities":"given-over-file""#));
        let on_plain = report::report(&plain, 2, &tests, &lim, false);
        assert_eq!(on_plain.priorities, PrioritySource::Default);
        assert!(!json(&on_plain).contains("priorities"));
        for k in 0..tests.len() {
            assert_eq!(over.results[k].verdict, on_plain.results[k].verdict);
        }
    }
    assert!(differing > 20, "only {differing} verdicts differed between DM and the file's ranks");
}

#[test]
fn priorities_survive_the_suspension_oblivious_view_and_the_file() {
    let seg = Segments::new(vec![1, 1], vec![SuspensionBound { min: 0, max: 2 }]).unwrap();
    let s = Task::new(2, 9, 10).unwrap().with_segments(seg).unwrap();
    let ts = TaskSet::new(vec![Task::implicit(1, 4).unwrap(), s]).unwrap().with_priorities(vec![1, 0]).unwrap();
    let view = suspension::oblivious(&ts).unwrap();
    assert_eq!(view.priorities(), Some(&[1, 0][..]));
    assert_eq!(view[1].wcet, 4);
    let f = read_json(
        r#"{"m": 2, "tasks": [{"wcet": 1, "period": 4, "priority": 1}, {"wcet": 2, "period": 5, "priority": 0}]}"#,
    )
    .unwrap();
    let r = report::report(
        &f.taskset,
        2,
        &[TestId::Gfp(GfpTest::Bc, Priority::DeadlineMonotonic)],
        &Limits::default(),
        false,
    );
    assert_eq!(r.priorities, PrioritySource::File);
}
