//! Soft real-time G-EDF: bounded tardiness.
//!
//! U. C. Devi, J. H. Anderson, "Tardiness bounds under global EDF scheduling on a
//! multiprocessor", RTSS 2005 (journal version Real-Time Systems 38(2), 2008), Theorem 2 and
//! Corollary: a sporadic implicit-deadline task set has bounded tardiness under G-EDF on `m`
//! processors iff `U <= m` and every `u_i <= 1`, and the tardiness of `τ_k` is at most
//! `x + C_k` with
//!
//! ```text
//!     x = (E_Λ - C_min) / (m - U_{Λ-1})
//!     Λ = U - 1 if U is an integer, floor(U) otherwise      (i.e. ceil(U) - 1)
//!     E_Λ     = sum of the Λ largest C_i
//!     U_{Λ-1} = sum of the Λ-1 largest u_i       (0 when Λ <= 1)
//!     C_min   = the smallest C_i
//! ```
//!
//! (`m - U_{Λ-1} > 0` because `Λ - 1 <= m - 2` tasks of utilization at most 1 are summed.)
//! Computed exactly in rationals; reported as `ceil(max(0, x + C_k))` ns.
//!
//! Assumptions: [`bounded_tardiness`] holds for any deadlines (tardiness relative to each
//! job's deadline stays bounded iff `U <= m` and `u_i <= 1`; Leontyev and Anderson, ECRTS
//! 2007, generalise Devi and Anderson to arbitrary deadlines); [`tardiness_bounds`] returns
//! the Devi-Anderson bound for implicit deadlines only and `None` if some `D != T`.

use rtsched_model::exact::{self, int, ratio, Rational};
use rtsched_model::TaskSet;

/// Whether tardiness under G-EDF on `m` processors is bounded: `U <= m` and every
/// `u_i <= 1` (exact). `m = 0` gives `false`; the empty set `true`.
pub fn bounded_tardiness(ts: &TaskSet, m: u32) -> bool {
    m >= 1 && ts.iter().all(|t| t.wcet <= t.period) && ts.utilization_at_most(m as u64)
}

/// Devi and Anderson's per-task tardiness bounds (ns, rounded up), in task order; `None`
/// when tardiness is not bounded or some task has `D != T`.
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
