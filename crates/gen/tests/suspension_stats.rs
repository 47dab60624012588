//! The self-suspension generator (`rtsched_gen::suspension`) against its definition
//! (docs/generators.md, "Self-suspension"): exact totals per task, the ratio's and the split's
//! means over many tasks, determinism, and the base set left as it was.

use rtsched_gen::*;
use rtsched_model::Time;

const MS: Time = 1_000_000;

fn spec() -> GenSpec {
    GenSpec {
        util: UtilGen::RandFixedSum { n: 10, total: 3.0, umax: 0.9 },
        periods: PeriodGen::LogUniform { min: 10 * MS, max: 100 * MS },
        deadlines: DeadlineGen::Implicit,
    }
}

/// `round(r x)` to the nearest integer, ties away from zero (the module's rule).
fn round_mul(r: f64, x: Time) -> Time {
    (r * x as f64).round() as Time
}

#[test]
fn fixed_ratio_gives_exact_totals_and_keeps_the_base_set() {
    let g = SuspensionGen::parse("0.25", 3).unwrap();
    let mut suspending = 0;
    for i in 0..200 {
        let base = generate(&spec(), 9, i).unwrap();
        let ts = add_suspension(&base, &g, 9, i).unwrap();
        assert_eq!(ts.len(), base.len());
        for (t, b) in ts.iter().zip(base.iter()) {
            assert_eq!((t.wcet, t.deadline, t.period), (b.wcet, b.deadline, b.period));
            let s = round_mul(0.25, b.period - b.wcet);
            if t.is_self_suspending() {
                suspending += 1;
                let seg = t.segments.as_ref().unwrap();
                assert_eq!(t.suspension(), s, "S = round(R (T - C))");
                assert_eq!(seg.total_exec(), t.wcet as u128);
                assert_eq!(seg.exec.len(), 3.min(t.wcet as usize).min(s as usize + 1));
                assert!(seg.exec.iter().all(|&c| c >= 1) && seg.susp.iter().all(|b| b.max >= 1 && b.min == 0));
            } else {
                assert!(s == 0 || t.wcet < 2, "only a task without slack or of 1 ns stays plain");
            }
        }
    }
    assert!(suspending > 1900, "{suspending}");
}

#[test]
fn ratio_range_and_split_follow_their_laws() {
    // R uniform on [0.1, 0.3]: mean 0.2, sd 0.2/sqrt(12) per task.
    let g = SuspensionGen::parse("0.1-0.3", 3).unwrap();
    let (mut sum_r, mut sum_first, mut sum_susp_first, mut n) = (0.0, 0.0, 0.0, 0usize);
    let (mut lo_seen, mut hi_seen) = (1.0f64, 0.0f64);
    for i in 0..2_000 {
        let ts = add_suspension(&generate(&spec(), 4, i).unwrap(), &g, 4, i).unwrap();
        for t in &ts {
            let slack = t.period - t.wcet;
            if slack < 1_000_000 || t.wcet < 1_000 {
                continue; // rounding would blur the ratio
            }
            let r = t.suspension() as f64 / slack as f64;
            lo_seen = lo_seen.min(r);
            hi_seen = hi_seen.max(r);
            sum_r += r;
            let seg = t.segments.as_ref().unwrap();
            assert_eq!(seg.exec.len(), 3);
            sum_first += seg.exec[0] as f64 / t.wcet as f64;
            sum_susp_first += seg.susp[0].max as f64 / t.suspension() as f64;
            n += 1;
        }
    }
    assert!(n > 15_000, "{n}");
    let nf = n as f64;
    let mean_r = sum_r / nf;
    // 5 standard errors: 5 * 0.0577 / sqrt(n).
    assert!((mean_r - 0.2).abs() < 5.0 * 0.0578 / nf.sqrt(), "mean ratio {mean_r}");
    assert!(lo_seen >= 0.1 - 1e-6 && hi_seen <= 0.3 + 1e-6 && lo_seen < 0.11 && hi_seen > 0.29, "{lo_seen} {hi_seen}");
    // Uniform compositions: the first of 3 execution parts has mean C/3 (sd of the fraction
    // sqrt(2/36)); the first of 2 suspension parts has mean S/2 (sd sqrt(1/12)).
    let first = sum_first / nf;
    assert!((first - 1.0 / 3.0).abs() < 5.0 * (2.0f64 / 36.0).sqrt() / nf.sqrt(), "first execution part {first}");
    let sfirst = sum_susp_first / nf;
    assert!((sfirst - 0.5).abs() < 5.0 * (1.0f64 / 12.0).sqrt() / nf.sqrt(), "first suspension part {sfirst}");
}

#[test]
fn deterministic_per_seed_and_index() {
    let g = SuspensionGen::parse("0.05-0.6", 4).unwrap();
    let base = generate(&spec(), 3, 17).unwrap();
    let a = add_suspension(&base, &g, 3, 17).unwrap();
    assert_eq!(a, add_suspension(&base, &g, 3, 17).unwrap());
    assert_ne!(a, add_suspension(&base, &g, 3, 18).unwrap());
    assert_ne!(a, add_suspension(&base, &g, 4, 17).unwrap());
    // Ratio 0 adds nothing.
    let none = add_suspension(&base, &SuspensionGen::parse("0", 2).unwrap(), 3, 17).unwrap();
    assert_eq!(none, base);
}
