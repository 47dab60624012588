//! Oracles for uniprocessor EDF: QPA against brute force over every deadline up to the same
//! bound, against brute force up to an independent bound (hyperperiod + D_max), against
//! `U <= 1` for implicit deadlines, and known answers computed by hand.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::uni::edf::{self, busy_period, dbf_brute, qpa, utilization_test, BusyPeriodError, EdfBin};
use rtsched_analysis::{Limits, Verdict};
use rtsched_model::exact::{one, ratio, Rational};
use rtsched_model::{Task, TaskSet, MAX_TIME};

fn set(cdt: &[(u64, u64, u64)]) -> TaskSet {
    TaskSet::from_cdt(cdt).unwrap()
}

fn u_exact(ts: &TaskSet) -> Rational {
    ts.iter().fold(ratio(0, 1), |a, t| a + ratio(t.wcet as u128, t.period as u128))
}

/// Independent oracle: for `U <= 1`, a demand violation exists iff one exists at a deadline
/// `t <= H + D_max` (H = hyperperiod). Returns None when H is too large to enumerate.
fn hyperperiod_oracle(ts: &TaskSet) -> Option<bool> {
    if u_exact(ts) > one() {
        return Some(false);
    }
    let h = ts.hyperperiod(20_000).ok()?;
    let dmax = ts.iter().map(|t| t.deadline).max().unwrap();
    let l = h + dmax;
    for t in 1..=l {
        let demand: u128 = ts.iter().map(|x| x.dbf(t)).sum();
        if demand > t as u128 {
            return Some(false);
        }
    }
    Some(true)
}

/// A random small task set of one of several shapes (see the match arms).
fn random_set(rng: &mut ChaCha8Rng) -> TaskSet {
    let shape = rng.random_range(0..6u32);
    let n = rng.random_range(1..=6usize);
    let mut v = Vec::with_capacity(n);
    match shape {
        // Constrained deadlines, free utilization.
        0 => {
            for _ in 0..n {
                let t = rng.random_range(2..=30u64);
                let c = rng.random_range(1..=t / 2 + 1);
                let d = rng.random_range(c.max(1)..=t);
                v.push((c, d, t));
            }
        }
        // Arbitrary deadlines (D up to 3T), sometimes C > D.
        1 => {
            for _ in 0..n {
                let t = rng.random_range(1..=25u64);
                let c = rng.random_range(1..=t);
                let d = rng.random_range(1..=3 * t);
                v.push((c, d, t));
            }
        }
        // U = 1 exactly (or 1 +- 1/60): periods divide 60, the last task fills the gap.
        2 | 3 => {
            let divisors = [2u64, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60];
            let target: i64 = match rng.random_range(0..4u32) {
                0 => 59,
                1 => 61,
                _ => 60,
            };
            let mut used: i64 = 0; // in units of 1/60
            for _ in 0..n.saturating_sub(1) {
                let t = divisors[rng.random_range(0..divisors.len())];
                let c = rng.random_range(1..=t.div_ceil(3));
                let w = (c * (60 / t)) as i64;
                if used + w >= target {
                    break;
                }
                used += w;
                let d = if shape == 2 { rng.random_range(c..=t) } else { rng.random_range(c..=2 * t) };
                v.push((c, d, t));
            }
            let rest = (target - used) as u64; // C/60 with T = 60
            let d =
                if shape == 2 { rng.random_range(rest..=rest.max(60)) } else { rng.random_range(rest..=rest.max(90)) };
            v.push((rest, d, 60));
        }
        // Near-1 utilization with larger, coprime-ish periods.
        4 => {
            let mut u_left = 1.0f64;
            for k in 0..n {
                let t = rng.random_range(10..=97u64);
                let share = if k + 1 == n { u_left } else { u_left * rng.random_range(0.2..0.8) };
                let c = ((share * t as f64).round() as u64).max(1);
                u_left -= c as f64 / t as f64;
                let d = rng.random_range(c..=t + t / 2);
                v.push((c, d, t));
            }
        }
        // Implicit deadlines.
        _ => {
            for _ in 0..n {
                let t = rng.random_range(1..=40u64);
                let c = rng.random_range(1..=t);
                v.push((c, t, t));
            }
        }
    }
    set(&v)
}

fn check_many(count: usize, seed: u64) {
    let limits = Limits { max_steps: 10_000_000, max_interval: 1 << 40, ..Limits::default() };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut sched, mut unsched, mut u_one, mut oracle_checked) = (0, 0, 0, 0);
    for k in 0..count {
        let ts = random_set(&mut rng);
        let q = qpa(&ts, &limits);
        let b = dbf_brute(&ts, &limits);
        assert_ne!(q, Verdict::GaveUp, "set {k}: {ts:?}");
        assert_eq!(q, b, "set {k}: QPA and brute force disagree on {ts:?}");
        if u_exact(&ts) == one() {
            u_one += 1;
        }
        if k % 10 == 0 {
            if let Some(o) = hyperperiod_oracle(&ts) {
                oracle_checked += 1;
                assert_eq!(q.is_schedulable(), o, "set {k}: bound oracle disagrees on {ts:?}");
            }
        }
        match q {
            Verdict::Schedulable => sched += 1,
            _ => unsched += 1,
        }
    }
    // The generator must exercise both answers, U = 1 exactly, and the independent oracle.
    assert!(sched > count / 10 && unsched > count / 10, "sched {sched}, unsched {unsched}");
    assert!(u_one > count / 20, "only {u_one} sets with U = 1");
    assert!(oracle_checked > count / 40, "only {oracle_checked} sets checked against the hyperperiod oracle");
}

#[test]
fn qpa_agrees_with_brute_force_100k() {
    check_many(100_000, 0x5EED_0001);
}

#[test]
fn qpa_implicit_is_utilization_bound() {
    let limits = Limits::default();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..20_000 {
        let n = rng.random_range(1..=8usize);
        let v: Vec<(u64, u64)> = (0..n)
            .map(|_| {
                let t = rng.random_range(1..=1_000_000u64);
                (rng.random_range(1..=(t / n as u64).max(1) * 2).min(t), t)
            })
            .collect();
        let ts = TaskSet::from_ct(&v).unwrap();
        let expect = Verdict::from_bool(u_exact(&ts) <= one());
        assert_eq!(qpa(&ts, &limits), expect, "{ts:?}");
        assert_eq!(utilization_test(&ts), expect, "{ts:?}");
    }
    // Exactly 1, which float sums get wrong: 1/3 + 1/3 + 1/3, and just above.
    let ts = TaskSet::from_ct(&[(1, 3), (1, 3), (1, 3)]).unwrap();
    assert_eq!(qpa(&ts, &limits), Verdict::Schedulable);
    let ts = TaskSet::from_ct(&[(1, 3), (1, 3), (333_333_334, 1_000_000_000)]).unwrap();
    assert_eq!(qpa(&ts, &limits), Verdict::NotSchedulable);
}

#[test]
fn known_answers() {
    let l = Limits::default();
    // U = 5/6 < 1 but h(3) = 2 + 2 = 4 > 3: unschedulable (constrained deadlines).
    let ts = set(&[(2, 2, 4), (2, 3, 6)]);
    assert_eq!(qpa(&ts, &l), Verdict::NotSchedulable);
    assert_eq!(dbf_brute(&ts, &l), Verdict::NotSchedulable);
    assert_eq!(utilization_test(&ts), Verdict::NotSchedulable); // density 1 + 2/3
                                                                // h(1)=1, h(3)=3, h(5)=4, h(7)=5, h(9)=7 ... <= t: schedulable though density 1 + 2/3 > 1.
    let ts = set(&[(1, 1, 4), (2, 3, 6)]);
    assert_eq!(qpa(&ts, &l), Verdict::Schedulable);
    assert_eq!(utilization_test(&ts), Verdict::NotSchedulable, "density test is only sufficient");
    // U = 1 with arbitrary deadlines: h(t) <= t for all t (all D >= T), schedulable.
    let ts = set(&[(2, 8, 4), (3, 6, 6)]);
    assert_eq!(qpa(&ts, &l), Verdict::Schedulable);
    assert_eq!(utilization_test(&ts), Verdict::Schedulable);
    // U = 1 with a constrained deadline: h(3) = 2 (task 0: D=3) ... h(4)=2+? ; brute decides.
    let ts = set(&[(2, 3, 4), (3, 6, 6)]);
    // deadlines: 3,7,11 (task 0) and 6,12 (task 1): h(3)=2, h(6)=5, h(7)=7, h(11)=9, h(12)=12.
    assert_eq!(qpa(&ts, &l), Verdict::Schedulable);
    let ts = set(&[(2, 2, 4), (3, 5, 6)]);
    // U = 1; h(2) = 2, h(5) = 5, h(6) = 4 + 3 = 7 > 6: unschedulable.
    assert_eq!(qpa(&ts, &l), dbf_brute(&ts, &l));
    assert_eq!(qpa(&ts, &l), Verdict::NotSchedulable);
    let ts = set(&[(3, 2, 4), (1, 5, 6)]);
    assert_eq!(qpa(&ts, &l), Verdict::NotSchedulable, "C > D");
    assert_eq!(qpa(&TaskSet::default(), &l), Verdict::Schedulable);
}

#[test]
fn busy_periods() {
    let l = Limits::default();
    assert_eq!(busy_period(&TaskSet::from_ct(&[(1, 4), (2, 6)]).unwrap(), &l), Ok(3));
    // U = 1: 5 -> 7 -> 10 -> 12 -> 12.
    assert_eq!(busy_period(&TaskSet::from_ct(&[(2, 4), (3, 6)]).unwrap(), &l), Ok(12));
    assert_eq!(busy_period(&TaskSet::from_ct(&[(3, 4), (3, 6)]).unwrap(), &l), Err(BusyPeriodError::Overloaded));
    let tight = Limits { max_steps: 2, ..l };
    assert_eq!(busy_period(&TaskSet::from_ct(&[(2, 4), (3, 6)]).unwrap(), &tight), Err(BusyPeriodError::LimitReached));
}

#[test]
fn limits_give_up_or_still_find_misses() {
    // Near U = 1: one busy-period iteration, then the one-step budget is spent.
    let ts = set(&[(499_990, 900_000, 1_000_003), (499_990, 999_983, 999_983)]);
    let u = u_exact(&ts);
    assert!(u < one());
    let tiny = Limits { max_steps: 1, max_interval: 1 << 53, ..Limits::default() };
    assert_eq!(qpa(&ts, &Limits::default()), Verdict::Schedulable);
    assert_eq!(qpa(&ts, &tiny), Verdict::GaveUp);
    assert_eq!(dbf_brute(&ts, &tiny), Verdict::GaveUp);
    // A violation early (h(2) = 3 > 2) is still found when the bound is cut short.
    let ts = set(&[(1, 2, 1_000_000), (2, 2, 1_000_001), (1, 1_000_000, 1_000_000)]);
    let short = Limits { max_steps: 1_000_000, max_interval: 100, ..Limits::default() };
    assert_eq!(qpa(&ts, &short), Verdict::NotSchedulable);
    assert_eq!(dbf_brute(&ts, &short), Verdict::NotSchedulable);
    // ... and a schedulable set whose bound exceeds max_interval gives up.
    // (busy period 120 > 100, no violation)
    let ts = set(&[(60, 200, 1000), (60, 300, 1000)]);
    assert_eq!(qpa(&ts, &short), Verdict::GaveUp);
    assert_eq!(dbf_brute(&ts, &short), Verdict::GaveUp);
    assert_eq!(qpa(&ts, &Limits::default()), Verdict::Schedulable);
    // L_a = 300 exceeds max_interval = 130 but the busy period (120) does not: decided.
    let mid = Limits { max_steps: 1_000_000, max_interval: 130, ..Limits::default() };
    assert_eq!(qpa(&ts, &mid), Verdict::Schedulable);
    assert_eq!(dbf_brute(&ts, &mid), Verdict::Schedulable);
}

#[test]
fn huge_parameters_do_not_overflow() {
    let l = Limits::default();
    let big = MAX_TIME;
    let cases = [
        vec![(big, big, big)],
        vec![(big / 2, big / 3, big), (1, big, 1), (big - 1, big, big)],
        vec![(1, 1, big), (big / 4, big / 2, big - 7), (3, big, 5)],
        vec![(big / 3, big / 2, big), (big / 3 - 5, big / 2 + 1, big - 3)],
    ];
    for c in cases {
        let ts = set(&c);
        let q = qpa(&ts, &l);
        let b = dbf_brute(&ts, &l);
        if let (Some(x), Some(y)) = (q.decided(), b.decided()) {
            assert_eq!(x, y, "{ts:?}");
        }
        let _ = utilization_test(&ts);
        let _ = busy_period(&ts, &l);
    }
}

#[test]
fn edf_bin_agrees_with_qpa() {
    let limits = Limits::default();
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    for _ in 0..5_000 {
        let ts = random_set(&mut rng);
        let mut bin = EdfBin::new();
        let mut placed: Vec<Task> = Vec::new();
        for t in ts.iter() {
            let mut with = placed.clone();
            with.push(t.clone());
            let expect = qpa(&TaskSet::new(with).unwrap(), &limits);
            let v = bin.try_add(t, &limits).unwrap();
            assert_eq!(v, expect, "{placed:?} + {t:?}");
            if v == Verdict::Schedulable {
                placed.push(t.clone());
            }
        }
        assert_eq!(bin.len(), placed.len());
        assert_eq!(bin.utilization(), u_exact(&TaskSet::new(placed).unwrap()));
    }
    let bad = Task { name: None, wcet: 0, deadline: 1, period: 1, segments: None };
    assert!(EdfBin::new().fits(&bad, &limits).is_err());
}

#[test]
fn batch_entry_points_match() {
    let limits = Limits::default();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let sets: Vec<TaskSet> = (0..500).map(|_| random_set(&mut rng)).collect();
    let q = edf::qpa_many(&sets, &limits);
    let b = edf::dbf_brute_many(&sets, &limits);
    let u = edf::utilization_test_many(&sets);
    for (i, ts) in sets.iter().enumerate() {
        assert_eq!(q[i], qpa(ts, &limits));
        assert_eq!(b[i], q[i]);
        assert_eq!(u[i], utilization_test(ts));
    }
}
