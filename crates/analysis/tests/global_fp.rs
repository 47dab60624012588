//! Oracle and property tests of the global fixed-priority response-time tests
//! (`rtsched_analysis::global::fp`): every accepted small integer set meets all deadlines in
//! an exact brute-force G-FP simulation (synchronous and sampled offset releases), and no
//! simulated response time exceeds the reported bound; the dominance the papers state; the
//! places where SchedCAT differs from the paper; bad input.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::global::fp::{self, Assignment, GfpResult, GfpTest};
use rtsched_analysis::report::{self, Extra, Selection, TestId};
use rtsched_analysis::uni::fp::Priority;
use rtsched_analysis::{Limits, Verdict};
use rtsched_model::TaskSet;

fn limits() -> Limits {
    Limits { max_steps: 100_000, max_interval: 1 << 40, ..Limits::default() }
}

fn run(t: GfpTest, ts: &TaskSet, m: u32, prio: &Assignment) -> GfpResult {
    fp::analyze(t, ts, m, prio, &limits()).unwrap()
}

/// Unit-time preemptive global fixed priority on `m` processors: task `i` releases a job at
/// `offset[i] + j T_i` (`j = 0, 1, ..`) while that is below `release_end`; at every unit the
/// (at most) `m` pending jobs of the highest priority (`rank[i]`, smaller = higher) run.
/// `D <= T` is assumed (a job still pending at its deadline is a miss, so each task has at
/// most one pending job). Returns the largest response time per task, or `None` at the first
/// deadline miss.
fn simulate_gfp(ts: &TaskSet, m: u32, rank: &[usize], offset: &[u64], release_end: u64) -> Option<Vec<u64>> {
    let n = ts.len();
    let tasks: Vec<(u64, u64, u64)> = ts.iter().map(|t| (t.wcet, t.deadline, t.period)).collect();
    let dmax = tasks.iter().map(|x| x.1).max().unwrap_or(0);
    let mut remaining = vec![0u64; n];
    let mut release = vec![0u64; n];
    let mut worst = vec![0u64; n];
    let mut by_rank: Vec<usize> = (0..n).collect();
    by_rank.sort_by_key(|&i| rank[i]);
    for now in 0..release_end + dmax {
        for i in 0..n {
            let (c, d, t) = tasks[i];
            if remaining[i] > 0 && release[i] + d <= now {
                return None;
            }
            if now >= offset[i] && (now - offset[i]).is_multiple_of(t) && now < release_end {
                remaining[i] = c; // the previous job is done: D <= T and no miss so far
                release[i] = now;
            }
        }
        let mut free = m;
        for &i in &by_rank {
            if free == 0 {
                break;
            }
            if remaining[i] > 0 {
                remaining[i] -= 1;
                free -= 1;
                if remaining[i] == 0 {
                    worst[i] = worst[i].max(now + 1 - release[i]);
                }
            }
        }
    }
    Some(worst)
}

/// The rank of each task under an assignment (0 = highest).
fn ranks(ts: &TaskSet, prio: &Assignment) -> Vec<usize> {
    let order = prio.order(ts).unwrap();
    let mut rank = vec![0; ts.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r;
    }
    rank
}

/// Synchronous release and `samples` random offset patterns, each over two hyperperiods past
/// the largest offset. `None` if any pattern misses; else the largest response time seen per
/// task.
fn simulate_patterns(
    ts: &TaskSet,
    m: u32,
    prio: &Assignment,
    rng: &mut ChaCha8Rng,
    samples: usize,
) -> Option<Vec<u64>> {
    let rank = ranks(ts, prio);
    let h = ts.hyperperiod(1 << 20).expect("small periods");
    let n = ts.len();
    let mut worst = simulate_gfp(ts, m, &rank, &vec![0; n], 2 * h)?;
    for _ in 0..samples {
        let offset: Vec<u64> = ts.iter().map(|t| rng.random_range(0..t.period)).collect();
        let omax = offset.iter().copied().max().unwrap_or(0);
        let w = simulate_gfp(ts, m, &rank, &offset, omax + 2 * h)?;
        for i in 0..n {
            worst[i] = worst[i].max(w[i]);
        }
    }
    Some(worst)
}

/// `n <= 4`, periods `<= 12`, constrained deadlines, `U <= m`.
fn random_set(rng: &mut ChaCha8Rng, m: u32) -> TaskSet {
    loop {
        let n = rng.random_range(m as usize + 1..=4.max(m as usize + 1));
        let v: Vec<(u64, u64, u64)> = (0..n)
            .map(|_| {
                let t = rng.random_range(1..=12u64);
                let c = rng.random_range(1..=t.div_ceil(2).max(1));
                let d = if rng.random_range(0..2) == 0 { t } else { rng.random_range(c..=t) };
                (c, d, t)
            })
            .collect();
        let ts = TaskSet::from_cdt(&v).unwrap();
        if ts.utilization_at_most(m as u64) {
            return ts;
        }
    }
}

fn assignments(ts: &TaskSet, rng: &mut ChaCha8Rng) -> Vec<Assignment> {
    vec![
        Assignment::Rule(Priority::DeadlineMonotonic),
        Assignment::Rule(Priority::RateMonotonic),
        Assignment::Explicit(ts.iter().map(|_| rng.random_range(0..4u64)).collect()),
    ]
}

#[test]
fn simulator_sanity() {
    // Three (2,3,3) on two processors miss; four (1,2,2) are met, the lower two after 2.
    let dm = Assignment::default();
    let miss = TaskSet::from_cdt(&[(2, 3, 3); 3]).unwrap();
    assert!(simulate_gfp(&miss, 2, &ranks(&miss, &dm), &[0, 0, 0], 6).is_none());
    let ok = TaskSet::from_cdt(&[(1, 2, 2); 4]).unwrap();
    assert_eq!(simulate_gfp(&ok, 2, &ranks(&ok, &dm), &[0; 4], 4), Some(vec![1, 1, 2, 2]));
    // Uniprocessor DM, (1,2) and (1,3): the second task's jobs wait at most one unit, for a
    // job of the first (synchronously at 0 and 6; with offset 1, at 4).
    let uni = TaskSet::from_ct(&[(1, 2), (1, 3)]).unwrap();
    assert_eq!(simulate_gfp(&uni, 1, &ranks(&uni, &dm), &[0, 0], 12), Some(vec![1, 2]));
    assert_eq!(simulate_gfp(&uni, 1, &ranks(&uni, &dm), &[0, 1], 13), Some(vec![1, 2]));
}

/// The oracle: on random small integer sets (m = 2, n <= 4, periods <= 12, constrained
/// deadlines, DM, RM and explicit priorities) every set a test accepts meets all deadlines
/// in the simulation of the synchronous release and of three offset patterns, and no
/// simulated response time exceeds the test's bound. Also m = 1 and m = 3 (fewer sets).
#[test]
fn accepted_sets_meet_every_deadline_in_exact_simulation() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x6f70_2007);
    let mut accepted = [0u32; 3];
    let mut rejected_but_met = 0u32;
    let mut sets = 0u32;
    while sets < 6_000 {
        let m = [1, 3, 2, 2, 2, 2][(sets % 6) as usize];
        let ts = random_set(&mut rng, m);
        sets += 1;
        for prio in assignments(&ts, &mut rng) {
            let results: Vec<GfpResult> = GfpTest::ALL.iter().map(|&t| run(t, &ts, m, &prio)).collect();
            if !results.iter().any(|r| r.verdict.is_schedulable()) {
                if sets.is_multiple_of(50) && simulate_patterns(&ts, m, &prio, &mut rng, 1).is_some() {
                    rejected_but_met += 1; // the tests are sufficient only
                }
                continue;
            }
            let sim = simulate_patterns(&ts, m, &prio, &mut rng, 3);
            for (j, r) in results.iter().enumerate() {
                if !r.verdict.is_schedulable() {
                    continue;
                }
                accepted[j] += 1;
                let name = GfpTest::ALL[j].name();
                let worst = sim
                    .as_ref()
                    .unwrap_or_else(|| panic!("{name} accepted a set that misses: m = {m}, {prio:?}, {ts:?}"));
                for (i, &w) in worst.iter().enumerate() {
                    let bound = r.response_times[i].expect("every bound of an accepted set");
                    assert!(w <= bound, "{name}: task {i} responded in {w} > bound {bound}: m = {m}, {prio:?}, {ts:?}");
                }
            }
        }
    }
    eprintln!("accepted {accepted:?} of {sets} sets x 3 assignments; rejected but met {rejected_but_met}");
    for (j, &a) in accepted.iter().enumerate() {
        assert!(a > 500, "{} accepted only {a} sets: oracle too weak", GfpTest::ALL[j].name());
    }
    assert!(rejected_but_met > 0, "the tests are only sufficient: some rejected set must be met");
}

/// Dominance (Bertogna & Cirinei, RTSS 2007: the slack only lowers the workload; Guan et al.,
/// RTSS 2009: their bound dominates Bertogna & Cirinei's): bc => bc_slack => guan, and every
/// bound is at most the weaker test's; each improvement is strict on some sets.
#[test]
fn slack_and_limited_carry_in_dominate() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xd0_0111);
    let mut strict = [0u32; 2];
    let mut bound_lower = [0u32; 2];
    for s in 0..20_000u32 {
        let m = rng.random_range(1..=4u32);
        let n = rng.random_range(1..=9usize);
        let scale = [1u64, 10, 1000][(s % 3) as usize];
        let v: Vec<(u64, u64, u64)> = (0..n)
            .map(|_| {
                let t = rng.random_range(2..=40u64);
                let c = rng.random_range(1..=t / 2);
                let d = rng.random_range(c..=t);
                (c * scale, d * scale, t * scale)
            })
            .collect();
        let ts = TaskSet::from_cdt(&v).unwrap();
        for prio in assignments(&ts, &mut rng) {
            let [bc, slack, guan] = GfpTest::ALL.map(|t| run(t, &ts, m, &prio));
            for (pair, (weak, strong)) in [(&bc, &slack), (&slack, &guan)].into_iter().enumerate() {
                assert_ne!(weak.verdict, Verdict::GaveUp);
                if weak.verdict.is_schedulable() {
                    assert!(strong.verdict.is_schedulable(), "pair {pair}: m = {m} {prio:?} {v:?}");
                } else if strong.verdict.is_schedulable() {
                    strict[pair] += 1;
                }
                for i in 0..n {
                    if let (Some(a), Some(b)) = (weak.response_times[i], strong.response_times[i]) {
                        assert!(b <= a, "pair {pair}, task {i}: {b} > {a}: m = {m} {prio:?} {v:?}");
                        bound_lower[pair] += (b < a) as u32;
                    }
                }
            }
        }
    }
    eprintln!("strictly more accepted {strict:?}, strictly lower bounds {bound_lower:?}");
    assert!(strict.iter().all(|&x| x > 10), "{strict:?}");
    assert!(bound_lower.iter().all(|&x| x > 10), "{bound_lower:?}");
}

/// Hand-worked: m = 2, DM, tasks (C, D, T) = (2,2,2), (1,3,3), (2,3,3); U = 2.
/// * τ0 (2,2,2) and τ1 (1,3,3): fewer than m higher-priority tasks, R = C: 2 and 1.
/// * τ2 (2,3,3), slack-aware (R0 = 2, R1 = 1), cap x - C + 1:
///   x = 2: W0 = floor(2/2) 2 + min(2, 0) = 2 -> min(2, 1) = 1; W1 = 0 + min(1, 2) = 1 -> 1;
///   2 + floor(2/2) = 3. x = 3: W0 = 2 + min(2, 1) = 3 -> min(3, 2) = 2;
///   W1 = floor(3/3) 1 + 0 = 1 -> 1; 2 + floor(3/2) = 3 = x: R2 = 3 <= 3, accepted.
/// * Without the slack (`gfp_bc`, R1 = D1 = 3): at x = 3, W1 = floor(5/3) 1 + min(1, 2) = 2,
///   the sum is 4 and 2 + 2 = 4 > 3: rejected.
/// * SchedCAT's `bertogna.py` sums W_i without the cap: at x = 2 the sum is 3, x = 2 + 1 = 3;
///   at x = 3 it is 3 + 1 = 4, x = 2 + 2 = 4 > 3: rejected. The paper's capped sum (which we
///   follow) accepts, and the set is schedulable (τ0 keeps one processor, the other two share
///   the second at utilization 1 under uniprocessor RM/DM).
#[test]
fn hand_worked_set_and_where_schedcat_differs() {
    let ts = TaskSet::from_cdt(&[(2, 2, 2), (1, 3, 3), (2, 3, 3)]).unwrap();
    let dm = Assignment::default();
    let slack = run(GfpTest::BcSlack, &ts, 2, &dm);
    assert_eq!(slack.verdict, Verdict::Schedulable);
    assert_eq!(slack.response_times, vec![Some(2), Some(1), Some(3)]);
    let bc = run(GfpTest::Bc, &ts, 2, &dm);
    assert_eq!(bc.verdict, Verdict::NotSchedulable);
    assert_eq!(bc.response_times, vec![Some(2), Some(1), None]);
    assert_eq!(run(GfpTest::Guan, &ts, 2, &dm).verdict, Verdict::Schedulable);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    assert!(simulate_patterns(&ts, 2, &dm, &mut rng, 5).is_some());
    // SchedCAT's uncapped sum, written out: rejects.
    let uncapped = |x: u64, r: &[u64]| -> u64 {
        let hp = [(2u64, 2u64), (1, 3)];
        hp.iter()
            .zip(r)
            .map(|(&(c, t), &ri)| {
                let y = x + ri - c;
                (y / t) * c + c.min(y % t)
            })
            .sum()
    };
    let (mut x, mut missed) = (2u64, false);
    loop {
        let nx = 2 + uncapped(x, &[2, 1]) / 2;
        if nx == x {
            break;
        }
        if nx > 3 {
            missed = true;
            break;
        }
        x = nx;
    }
    assert!(missed, "the uncapped sum (SchedCAT) rejects this set");
}

/// Guan et al. by hand: m = 2, DM, (1,2,2), (1,2,2), (2,4,4).
/// τ0, τ1: R = 1. τ2: x = 2, cap 1: W_NC = floor(2/2) 1 + min(0, 1) = 1 -> 1 for both,
/// W_CI = floor(1/2) 1 + 1 + [1 - (2 - 1)]_0^0 = 1 -> 1; Ω = 2, 2 + 1 = 3.
/// x = 3, cap 2: W_NC = 1 + min(1, 1) = 2 -> 2 each, W_CI = floor(2/2) + 1 + [0 - 1]_0 = 2;
/// Ω = 4, 2 + 2 = 4. x = 4, cap 3: W_NC = 2 -> 2 each, W_CI = floor(3/2) + 1 + [1 - 1]_0^0 = 2;
/// Ω = 4, 2 + 2 = 4 = x: R2 = 4 <= 4, accepted (exactly: the two light tasks fill both
/// processors half of the time, and τ2 finishes at 4 in the synchronous release).
#[test]
fn guan_hand_worked() {
    let ts = TaskSet::from_cdt(&[(1, 2, 2), (1, 2, 2), (2, 4, 4)]).unwrap();
    let r = run(GfpTest::Guan, &ts, 2, &Assignment::default());
    assert_eq!(r.verdict, Verdict::Schedulable);
    assert_eq!(r.response_times, vec![Some(1), Some(1), Some(4)]);
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    assert_eq!(simulate_patterns(&ts, 2, &Assignment::default(), &mut rng, 0), Some(vec![1, 1, 4]));
    // One more unit of work for τ2 misses in the simulation, and every test rejects it.
    let over = TaskSet::from_cdt(&[(1, 2, 2), (1, 2, 2), (3, 4, 4)]).unwrap();
    assert!(simulate_patterns(&over, 2, &Assignment::default(), &mut rng, 0).is_none());
    for t in GfpTest::ALL {
        assert_eq!(run(t, &over, 2, &Assignment::default()).verdict, Verdict::NotSchedulable, "{t:?}");
    }
}

/// On one processor every bound is at least the exact uniprocessor response time.
#[test]
fn uniprocessor_bounds_are_at_least_exact_response_times() {
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let mut compared = 0;
    for _ in 0..5_000 {
        let ts = random_set(&mut rng, 1);
        let (_, exact) = rtsched_analysis::uni::fp::rta(&ts, Priority::DeadlineMonotonic, &limits());
        for t in GfpTest::ALL {
            let r = run(t, &ts, 1, &Assignment::default());
            for (i, e) in exact.iter().enumerate() {
                if let Some(b) = r.response_times[i] {
                    let e = e.expect("a proved bound implies the exact analysis meets the deadline");
                    assert!(b >= e, "{t:?} task {i}: bound {b} < exact {e}: {ts:?}");
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 1_000);
}

#[test]
fn preconditions_limits_and_bad_input() {
    let dm = Assignment::default();
    // D > T, U > m, m = 0: not schedulable, no bounds; the empty set: schedulable.
    for (ts, m) in [
        (TaskSet::from_cdt(&[(1, 5, 4)]).unwrap(), 2),
        (TaskSet::from_ct(&[(3, 4), (3, 4), (3, 4)]).unwrap(), 2),
        (TaskSet::from_ct(&[(1, 4)]).unwrap(), 0),
    ] {
        for t in GfpTest::ALL {
            let r = run(t, &ts, m, &dm);
            assert_eq!(r.verdict, Verdict::NotSchedulable, "{t:?} {ts:?}");
            assert!(r.response_times.iter().all(|x| x.is_none()));
        }
    }
    for t in GfpTest::ALL {
        assert_eq!(run(t, &TaskSet::new(vec![]).unwrap(), 2, &dm).verdict, Verdict::Schedulable);
    }
    // An explicit assignment of the wrong length is an error naming the field.
    let ts = TaskSet::from_ct(&[(1, 4), (1, 5)]).unwrap();
    let e = fp::analyze(GfpTest::Guan, &ts, 2, &Assignment::Explicit(vec![1]), &limits()).unwrap_err();
    assert!(e.to_string().contains("priorities"), "{e}");
    // A crawl in ns: the step budget is respected (GaveUp with one step), and the default
    // budget decides thanks to the jump (the plain iteration would take about a million steps).
    let big = TaskSet::from_cdt(&[(5_000_000, 10_000_000, 10_000_000); 5]).unwrap();
    for t in GfpTest::ALL {
        assert_eq!(fp::analyze(t, &big, 4, &dm, &Limits::steps(1)).unwrap().verdict, Verdict::GaveUp);
        assert_ne!(fp::analyze(t, &big, 4, &dm, &Limits::steps(1_000)).unwrap().verdict, Verdict::GaveUp, "{t:?}");
    }
    // Priorities by rule: RM and DM differ here, and the names say which.
    assert_eq!(fp::GfpTest::from_name("gfp_rm_guan"), Some((GfpTest::Guan, Priority::RateMonotonic)));
    assert_eq!(fp::GfpTest::from_name("gfp_bc_slack"), Some((GfpTest::BcSlack, Priority::DeadlineMonotonic)));
    assert_eq!(fp::GfpTest::from_name("gfp"), None);
}

/// The names are registered: `analyze --test`, the report (with response-time bounds) and
/// any spelling resolve to the same test.
#[test]
fn registered_in_the_report_and_method_table() {
    let ts = TaskSet::from_cdt(&[(2, 2, 2), (1, 3, 3), (2, 3, 3)]).unwrap();
    let names: Vec<String> = ["GFP-BC", "gfp_bc_slack", "gfp-guan", "gfp_rm_bc", "GFP_RM_BC_SLACK", "gfp-rm-guan"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let tests = Selection::new(Some(&names)).unwrap().for_m(2).unwrap();
    assert_eq!(tests.len(), 6);
    let rep = report::report(&ts, 2, &tests, &limits(), false);
    let mut json = String::new();
    rep.write_json(&mut json);
    assert!(
        json.contains("\"gfp_bc_slack\":{\"schedulable\":true,\"gave_up\":false,\"response_times_ns\":[2,1,3]}"),
        "{json}"
    );
    assert!(
        json.contains("\"gfp_bc\":{\"schedulable\":false,\"gave_up\":false,\"response_times_ns\":[2,1,null]}"),
        "{json}"
    );
    for r in &rep.results {
        assert!(matches!(r.extra, Extra::ResponseTimes(_)));
        assert!(matches!(r.test, TestId::Gfp(..)));
        assert_eq!(report::verdict(r.test, &ts, 2, &limits(), 0), r.verdict);
    }
    for n in ["gfp_bc", "gfp_bc_slack", "gfp_guan", "gfp_rm_bc", "gfp_rm_bc_slack", "gfp_rm_guan"] {
        assert!(report::TEST_NAMES.contains(&n), "{n}");
        assert_eq!(rtsched_analysis::methods::test(&n.replace('_', "-").to_uppercase(), &report::TEST_NAMES), Some(n));
    }
}

/// Explicit priorities from text (`rtsched analyze --priorities`, `priorities=` in Python):
/// `dm`/`rm` are the rules, a rank list is an explicit assignment parsed by the simulator's
/// parser (`PriorityRule::fixed_from_text`), and the report runs the DM-named tests under it.
/// On the hand-worked set, putting the tight task `(2, 2, 2)` last makes it miss (both
/// processors are busy at 0 with the other two): every test rejects, the simulation misses.
#[test]
fn priorities_from_text_drive_the_dm_named_tests() {
    let ts = TaskSet::from_cdt(&[(2, 2, 2), (1, 3, 3), (2, 3, 3)]).unwrap();
    assert_eq!(Assignment::from_text(&ts, " DM ").unwrap(), Assignment::Rule(Priority::DeadlineMonotonic));
    assert_eq!(Assignment::from_text(&ts, "rm").unwrap(), Assignment::Rule(Priority::RateMonotonic));
    let last = Assignment::from_text(&ts, "2, 0, 1").unwrap();
    assert_eq!(last, Assignment::Explicit(vec![2, 0, 1]));
    let mut rng = ChaCha8Rng::seed_from_u64(26);
    assert!(simulate_patterns(&ts, 2, &last, &mut rng, 0).is_none(), "task 0 last misses");
    let names: Vec<String> = ["gfp_bc_slack", "gfp_guan", "gfp_rm_bc_slack"].iter().map(|s| s.to_string()).collect();
    let tests = Selection::new(Some(&names)).unwrap().for_m(2).unwrap();
    let with = report::report_with_priorities(&ts, 2, &tests, &limits(), false, Some(&last));
    let without = report::report(&ts, 2, &tests, &limits(), false);
    for (a, b) in with.results.iter().zip(&without.results) {
        let TestId::Gfp(g, p) = a.test else { panic!() };
        if p == Priority::DeadlineMonotonic {
            let want = run(g, &ts, 2, &last);
            assert_eq!(a.verdict, want.verdict);
            assert_eq!(a.extra, Extra::ResponseTimes(want.response_times));
            assert_eq!(a.verdict, Verdict::NotSchedulable, "{}", g.name());
            assert_eq!(b.verdict, Verdict::Schedulable, "{} under DM", g.name());
        } else {
            assert_eq!(a, b, "the rm-named test keeps rate-monotonic priorities");
        }
    }
    // Explicit "dm" equals the default.
    let dm = Assignment::from_text(&ts, "dm").unwrap();
    assert_eq!(report::report_with_priorities(&ts, 2, &tests, &limits(), false, Some(&dm)), without);
}

/// Bad priorities name the field, and the task where one entry is at fault.
#[test]
fn bad_priorities_name_the_task_and_field() {
    let ts = TaskSet::from_cdt(&[(1, 4, 4), (1, 5, 5), (1, 6, 6)]).unwrap();
    let e = Assignment::from_text(&ts, "0,x,2").unwrap_err().to_string();
    assert!(e.contains("task 1") && e.contains("priorities") && e.contains("\"x\""), "{e}");
    let e = Assignment::from_text(&ts, "0,1,-2").unwrap_err().to_string();
    assert!(e.contains("task 2") && e.contains("\"-2\""), "{e}");
    let e = Assignment::from_text(&ts, "0,1").unwrap_err().to_string();
    assert!(e.contains("priorities") && e.contains("2 priorities for 3 tasks"), "{e}");
    let e = Assignment::from_text(&ts, "edf").unwrap_err().to_string();
    assert!(e.contains("priorities") && e.contains("dm, rm"), "{e}");
    let e = Assignment::from_text(&ts, "").unwrap_err().to_string();
    assert!(e.contains("priorities"), "{e}");
}
