//! The suspension-oblivious rule (`rtsched_analysis::suspension`) reaches every registered
//! test: looped over `report::TEST_NAMES`, each test's verdict on a self-suspending set is its
//! verdict on the set with `C' = C + S`, and differs from the verdict that ignores suspension
//! where `C + S > D`. The report, `run_test`, plain partitioning and SP-RES placement say so.
//! The exceptions: `la` is suspension-aware (Liu & Anderson, ECRTS 2013) and `gedf` tries it
//! last; their verdicts are checked here against their definition, in simulation in
//! crates/sim/tests/suspension_aware.rs.

use rtsched_analysis::global::{la, GlobalTest};
use rtsched_analysis::report::{self, Selection, TestId, TEST_NAMES};
use rtsched_analysis::{partition, placing, semi, suspension, Limits, Verdict};
use rtsched_model::task::{Segments, SuspensionBound};
use rtsched_model::{Task, TaskSet, Time};

fn suspending(c: &[Time], s: &[Time], d: Time, t: Time) -> Task {
    let susp = s.iter().map(|&max| SuspensionBound { min: 0, max }).collect();
    Task::new(c.iter().sum(), d, t).unwrap().with_segments(Segments::new(c.to_vec(), susp).unwrap()).unwrap()
}

fn m_for(t: TestId) -> u32 {
    if matches!(t, TestId::EdfUni | TestId::FpDmUni) {
        1
    } else {
        2
    }
}

/// A light set whose third task suspends: without suspension U = 0.4; with it, C' = 11 > T = 10.
fn light_but_suspending() -> (TaskSet, TaskSet) {
    let s = suspending(&[1, 1], &[9], 10, 10);
    let with = TaskSet::new(vec![Task::implicit(1, 10).unwrap(), Task::implicit(1, 10).unwrap(), s]).unwrap();
    let without = TaskSet::new(with.iter().map(|t| Task { segments: None, ..t.clone() }).collect()).unwrap();
    (with, without)
}

#[test]
fn every_test_counts_suspension_as_execution() {
    let lim = Limits::default();
    let (with, without) = light_but_suspending();
    let oblivious = suspension::oblivious(&with).unwrap().into_owned();
    assert_eq!(oblivious[2].wcet, 11);
    for name in TEST_NAMES {
        let t = TestId::from_name(name).unwrap();
        let m = m_for(t);
        let plain = report::verdict(t, &without, m, &lim, 0);
        assert_eq!(plain, Verdict::Schedulable, "{name}: the light set without suspension");
        let v = report::verdict(t, &with, m, &lim, 0);
        assert_eq!(v, Verdict::NotSchedulable, "{name}: C + S = 11 > D = 10 must be rejected");
        assert_eq!(v, report::verdict(t, &oblivious, m, &lim, 0), "{name}");
        assert_eq!(report::run_test(name, &with, m, &lim, 0), v, "{name}: run_test");
        // The report marks every result.
        let r = report::report(&with, m, &[t], &lim, false);
        assert!(r.suspension_oblivious && r.results[0].verdict == v, "{name}");
        let mut json = String::new();
        r.write_json(&mut json);
        let mode = match name {
            "la" => "aware",
            "gedf" => "oblivious+aware",
            _ => "oblivious",
        };
        assert_eq!(t.suspension_mode(), mode, "{name}");
        assert!(json.contains(&format!(r#""suspension":"{mode}""#)), "{name}: {json}");
        assert_eq!(r.utilization, with.utilization_f64(), "{name}: the set's own utilization is reported");
    }
}

#[test]
fn verdicts_equal_the_oblivious_sets_on_random_suspending_sets() {
    // Small integer sets, some suspending: every test's verdict is its verdict on C' = C + S.
    let lim = Limits::default();
    let mut x: u64 = 12345;
    let mut next = |k: u64| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % k
    };
    let tests = Selection::new(None).unwrap().for_m(2).unwrap();
    for _ in 0..60 {
        let n = 2 + next(3) as usize;
        let mut tasks = Vec::new();
        for _ in 0..n {
            let t = 10 + next(30);
            let c1 = 1 + next(4);
            if next(2) == 0 {
                let (s, c2) = (1 + next(5), 1 + next(3));
                let d = (c1 + s + c2 + next(t)).min(t);
                tasks.push(suspending(&[c1, c2], &[s], d, t));
            } else {
                tasks.push(Task::new(c1, (c1 + next(t)).min(t), t).unwrap());
            }
        }
        let ts = TaskSet::new(tasks).unwrap();
        let ob = suspension::oblivious(&ts).unwrap().into_owned();
        for &t in &tests {
            let v = report::verdict(t, &ts, 2, &lim, 0);
            match t {
                TestId::Global(GlobalTest::La) => {
                    let s: Vec<Time> = ts.iter().map(|x| x.suspension()).collect();
                    assert_eq!(v, la::test_with_suspensions(&ts, 2, &s, &lim), "la is suspension-aware");
                }
                TestId::Gedf => {
                    let no_la = report::verdict(TestId::GedfNoLa, &ob, 2, &lim, 0).is_schedulable();
                    let la_aware = report::verdict(TestId::Global(GlobalTest::La), &ts, 2, &lim, 0).is_schedulable();
                    let la_ob = report::verdict(TestId::Global(GlobalTest::La), &ob, 2, &lim, 0).is_schedulable();
                    assert_eq!(v.is_schedulable(), no_la || la_ob || la_aware, "gedf = oblivious members or la aware");
                }
                _ => assert_eq!(v, report::verdict(t, &ob, 2, &lim, 0), "{}", t.name()),
            }
        }
    }
}

#[test]
fn placements_are_suspension_oblivious() {
    let lim = Limits::default();
    // Alone, each suspending task fits one CPU (C' = 6 <= 10) but no two share one (12 > 10);
    // without suspension all three fit one CPU.
    let s = || suspending(&[1, 1], &[4], 10, 10);
    let ts = TaskSet::new(vec![s(), s(), s()]).unwrap();
    for (m, ok) in [(2, false), (3, true)] {
        let p = partition::partition(
            &ts,
            m,
            partition::Fit::First,
            partition::Order::DecreasingUtilization,
            partition::Admission::Edf,
            &lim,
        );
        assert_eq!(matches!(p, partition::PartitionOutcome::Placed(_)), ok, "m = {m}");
        let placed = placing::place(&ts, m, "pedf_ffd", "edf", &semi::SemiConfig::default(), &lim).unwrap();
        assert_eq!(matches!(placed, placing::Placed::Done(_)), ok, "m = {m}");
    }
    let p = semi::cascade(&ts, 1, &semi::SemiConfig::default());
    assert!(!p.schedulable, "SP-RES sizes reservations by C + S");
    assert!(semi::cascade(&ts, 2, &semi::SemiConfig::default()).schedulable, "split across 2 CPUs: 18 <= 20");
}
