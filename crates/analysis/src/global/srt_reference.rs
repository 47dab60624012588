//! The first implementation of Devi and Anderson's tardiness bounds (`srt.rs`), kept verbatim
//! as the oracle of `srt.rs`'s tests and the baseline of `benches/srt.rs`; not part of the
//! library. Plainly the formula, and slow: it sums all `n` utilizations as big rationals
//! reduced after every addition (quadratic in `n`: 141 s at n = 5,000), sorts twice and adds
//! `x` to every `C_k` as a rational.

use rtsched_model::exact::{self, int, ratio, Interval, Rational};
use rtsched_model::TaskSet;

/// The first `bounded_tardiness`: `U <= m` (float filter, reduced rational fold on ties) and
/// every `u_i <= 1`.
pub fn bounded_tardiness(ts: &TaskSet, m: u32) -> bool {
    m >= 1
        && ts.iter().all(|t| t.wcet <= t.period)
        && exact::decide(
            || ts.utilization_interval().le(Interval::int(m as u128)),
            || ts.iter().fold(exact::zero(), |acc, t| acc + t.utilization()) <= int(m as i128),
        )
}

/// The first `tardiness_bounds`.
pub fn tardiness_bounds(ts: &TaskSet, m: u32) -> Option<Vec<u64>> {
    if !bounded_tardiness(ts, m) || ts.iter().any(|t| t.deadline != t.period) {
        return None;
    }
    if ts.is_empty() {
        return Some(Vec::new());
    }
    let u: Rational = ts.iter().map(|t| ratio(t.wcet as u128, t.period as u128)).sum();
    // Λ = ceil(U) - 1 (U >= 0).
    let lambda = exact::ceil_u128(&u).saturating_sub(1) as usize;
    let mut costs: Vec<u64> = ts.iter().map(|t| t.wcet).collect();
    costs.sort_unstable_by(|a, b| b.cmp(a));
    let e_l: u128 = costs.iter().take(lambda).map(|&c| c as u128).sum();
    let c_min = *costs.last().expect("non-empty") as u128;
    let mut utils: Vec<&rtsched_model::Task> = ts.iter().collect();
    utils.sort_by(|a, b| b.cmp_utilization(a));
    let u_l: Rational =
        utils.iter().take(lambda.saturating_sub(1)).map(|t| ratio(t.wcet as u128, t.period as u128)).sum();
    let x = (int(e_l as i128) - int(c_min as i128)) / (int(m as i128) - u_l);
    Some(
        ts.iter()
            .map(|t| {
                let b = &x + int(t.wcet as i128);
                exact::ceil_u128(&b).min(u64::MAX as u128) as u64
            })
            .collect(),
    )
}
