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
//! Computed exactly; reported as `ceil(max(0, x + C_k))` ns, which is `ceil(x) + C_k` since
//! `C_k` is an integer, so `x` is rounded once for the whole set.
//!
//! Cost: `O(n)` plus one exact sum. `ceil(U)` comes from a rigorous float enclosure of `U`
//! ([`rtsched_model::exact::Interval`]) unless `U` is within rounding of an integer, where the
//! exact sum decides; the `Λ` largest WCETs and the `Λ - 1` largest utilizations are found by
//! selection (`select_nth_unstable`), not by sorting; `U_{Λ-1}` and any exact fallback are
//! summed by [`rtsched_model::exact::sum_ratios`], which polls the caller's [`Stop`]. (The
//! first version summed all `n` utilizations as reduced big rationals, quadratic in `n`:
//! 141 s at n = 5,000; it is kept, in `srt_reference.rs`, as the tests' oracle and the
//! baseline of `benches/srt.rs`.)
//!
//! Assumptions: [`bounded_tardiness`] holds for any deadlines (tardiness relative to each
//! job's deadline stays bounded iff `U <= m` and `u_i <= 1`; Leontyev and Anderson, ECRTS
//! 2007, generalise Devi and Anderson to arbitrary deadlines); [`tardiness_bounds`] returns
//! the Devi-Anderson bound for implicit deadlines only and `None` if some `D != T`.

use crate::Verdict;
use num_bigint::BigInt;
use num_integer::Integer;
use rtsched_model::exact::{self, Interval};
use rtsched_model::{Stop, TaskSet};

/// Whether tardiness under G-EDF on `m` processors is bounded: `U <= m` and every
/// `u_i <= 1` (exact). `m = 0` gives `false`; the empty set `true`.
pub fn bounded_tardiness(ts: &TaskSet, m: u32) -> bool {
    m >= 1 && ts.iter().all(|t| t.wcet <= t.period) && ts.utilization_at_most(m as u64)
}

/// Devi and Anderson's per-task tardiness bounds (ns, rounded up), in task order; `None`
/// when tardiness is not bounded or some task has `D != T`.
pub fn tardiness_bounds(ts: &TaskSet, m: u32) -> Option<Vec<u64>> {
    test(ts, m, &Stop::never()).1
}

/// The soft real-time test and its bounds in one pass, stoppable: the verdict of
/// [`bounded_tardiness`] and the bounds of [`tardiness_bounds`], or ([`Verdict::GaveUp`],
/// `None`) when `stop` was requested before the answer was known.
pub fn test(ts: &TaskSet, m: u32, stop: &Stop) -> (Verdict, Option<Vec<u64>>) {
    if m == 0 || ts.iter().any(|t| t.wcet > t.period) {
        return (Verdict::NotSchedulable, None);
    }
    let u = ts.utilization_interval();
    let fits = match u.le(Interval::int(m as u128)) {
        Some(b) => b,
        None => match ts.utilization_sum(stop) {
            Some(s) => s <= exact::int(m as i128),
            None => return (Verdict::GaveUp, None),
        },
    };
    if !fits {
        return (Verdict::NotSchedulable, None);
    }
    if ts.iter().any(|t| t.deadline != t.period) {
        return (Verdict::Schedulable, None);
    }
    match bounds(ts, m, u, stop) {
        Some(b) => (Verdict::Schedulable, Some(b)),
        None => (Verdict::GaveUp, None),
    }
}

/// `ceil(U)`, from the enclosure `u` of `U` when it decides, else exactly.
pub(crate) fn ceil_utilization(ts: &TaskSet, u: Interval, stop: &Stop) -> Option<u128> {
    let k = u.hi.ceil();
    // ceil(U) = k iff k - 1 < U <= k; U <= u.hi <= k always holds.
    if u.lo > k - 1.0 && k >= 0.0 && k < (1u64 << 53) as f64 {
        return Some(k as u128);
    }
    ts.utilization_sum(stop).map(|s| exact::ceil_u128(&s))
}

/// The bounds of a non-empty-or-empty implicit-deadline set whose tardiness is bounded on `m`
/// processors; `None` when stopped. `u` encloses `U`.
fn bounds(ts: &TaskSet, m: u32, u: Interval, stop: &Stop) -> Option<Vec<u64>> {
    let tasks = ts.tasks();
    let Some(c_min) = tasks.iter().map(|t| t.wcet).min() else {
        return Some(Vec::new());
    };
    // Λ = ceil(U) - 1 (U >= 0), at most m - 1 and at most n - 1 (every u_i <= 1).
    let lambda = ceil_utilization(ts, u, stop)?.saturating_sub(1) as usize;
    // E_Λ: the Λ largest WCETs, by selection.
    let e_l: u128 = if lambda == 0 {
        0
    } else {
        let mut costs: Vec<u64> = tasks.iter().map(|t| t.wcet).collect();
        costs.select_nth_unstable_by(lambda - 1, |a, b| b.cmp(a));
        costs[..lambda].iter().map(|&c| c as u128).sum()
    };
    // U_{Λ-1} = num/den: the Λ - 1 largest utilizations, by selection, summed exactly.
    let (num, den) = if lambda <= 1 {
        (BigInt::from(0), BigInt::from(1))
    } else {
        let mut idx: Vec<usize> = (0..tasks.len()).collect();
        idx.select_nth_unstable_by(lambda - 2, |&a, &b| tasks[b].cmp_utilization(&tasks[a]));
        let s = exact::sum_ratios(
            idx[..lambda - 1].iter().map(|&i| (tasks[i].wcet as u128, tasks[i].period as u128)),
            stop,
        )?;
        (s.numer().clone(), s.denom().clone())
    };
    // x = (E_Λ - C_min) / (m - num/den) = (E_Λ - C_min)·den / (m·den - num), den > 0 and the
    // divisor > 0 (module doc). |x| <= max(E_Λ, C_min) < 2^127, so ceil(x) fits in i128.
    let top = (BigInt::from(e_l) - BigInt::from(c_min)) * &den;
    let bottom = BigInt::from(m) * den - num;
    debug_assert!(bottom > BigInt::from(0));
    let cx = i128::try_from(top.div_ceil(&bottom)).expect("|x| < 2^127 (see the comment above)");
    Some(tasks.iter().map(|t| (cx + t.wcet as i128).clamp(0, u64::MAX as i128) as u64).collect())
}

/// The first implementation: the oracle of the tests below (and the baseline of benches/srt.rs).
#[cfg(test)]
#[path = "srt_reference.rs"]
mod reference;

#[cfg(test)]
mod tests {
    use super::reference::{self, tardiness_bounds as old_bounds};
    use super::*;
    use proptest::prelude::*;

    fn check(ts: &TaskSet, m: u32) -> Result<(), TestCaseError> {
        let want = old_bounds(ts, m);
        let (v, got) = test(ts, m, &Stop::never());
        prop_assert_eq!(&got, &want, "bounds, m = {}", m);
        prop_assert_eq!(tardiness_bounds(ts, m), want);
        prop_assert_eq!(v, Verdict::from_bool(reference::bounded_tardiness(ts, m)));
        prop_assert_eq!(bounded_tardiness(ts, m), reference::bounded_tardiness(ts, m));
        Ok(())
    }

    proptest! {
        /// Small values: integral U (the exact ceil fallback), ties among WCETs and
        /// utilizations, u_i = 1, constrained deadlines.
        #[test]
        fn same_bounds_as_the_reference_small(
            v in prop::collection::vec((1u64..=12, 1u64..=12, any::<bool>()), 0..=12), m in 0u32..=6,
        ) {
            let tasks: Vec<_> = v.iter().map(|&(a, b, constrained)| {
                let (c, t) = (a.min(b), a.max(b));
                (c, if constrained { c.max(t - 1).max(1) } else { t }, t)
            }).collect();
            check(&TaskSet::from_cdt(&tasks).unwrap(), m)?;
        }

        /// Medium sets of ns-scale co-prime periods near full load: the big-number paths.
        #[test]
        fn same_bounds_as_the_reference_medium(
            v in prop::collection::vec((1u64..=1000, 1_000_000u64..=100_000_000), 1..=150), m in 1u32..=16,
            load in 500u64..=1_050,
        ) {
            // Scale the shares so that U is about load/1000 · m.
            let total: u64 = v.iter().map(|&(w, _)| w).sum();
            let tasks: Vec<_> = v.iter().map(|&(w, t)| {
                let c = ((t as u128 * w as u128 * m as u128 * load as u128) / (total as u128 * 1000)).clamp(1, t as u128);
                (c as u64, t)
            }).collect();
            check(&TaskSet::from_ct(&tasks).unwrap(), m)?;
        }
    }

    #[test]
    fn exact_ties_decide_exactly() {
        // U = 1/3 + 1/3 + 1/3 + 1 = 2 exactly (floats cannot tell): Λ = 1, x = (3 - 1)/2 = 1.
        let ts = TaskSet::from_ct(&[(1, 3), (1, 3), (1, 3), (3, 3)]).unwrap();
        assert_eq!(test(&ts, 2, &Stop::never()), (Verdict::Schedulable, Some(vec![2, 2, 2, 4])));
        assert_eq!(old_bounds(&ts, 2), Some(vec![2, 2, 2, 4]));
        // A requested stop answers GaveUp where a big-number sum is needed: U_{Λ-1} of three
        // utilizations (T - 1)/T with pairwise co-prime T near 2^50 (U ≈ 5, Λ = 4).
        let p = (1u64 << 50) + 1;
        let ts = TaskSet::from_ct(&(0..5).map(|i| (p + 2 * i - 1, p + 2 * i)).collect::<Vec<_>>()).unwrap();
        let stop = Stop::new();
        stop.request();
        assert_eq!(test(&ts, 6, &stop), (Verdict::GaveUp, None));
        let (v, b) = test(&ts, 6, &Stop::never());
        assert_eq!(v, Verdict::Schedulable);
        assert_eq!(b, old_bounds(&ts, 6));
    }
}
