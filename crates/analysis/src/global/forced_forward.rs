//! FF-DBF: the forced-forward demand bound function test for global EDF.
//!
//! S. Baruah, V. Bonifaci, A. Marchetti-Spaccamela, S. Stiller, "Improved multiprocessor
//! global schedulability analysis", Real-Time Systems 46(1), 2010 (ECRTS 2009/2010),
//! Section 4 (Theorem 4). With `q_i = floor(t/T_i)`, `r_i = t mod T_i` and a speed
//! `σ` with `λ_max <= σ <= 1` (`λ_max` the largest density),
//!
//! ```text
//!     ff-dbf(τ_i, t, σ) = q_i C_i + C_i                     if r_i >= D_i
//!                                 + C_i - (D_i - r_i) σ      if D_i - C_i/σ <= r_i < D_i
//!                                 + 0                        otherwise
//! ```
//!
//! the set is schedulable if for some such `σ`, for all `t >= 0`:
//! `sum_i ff-dbf(τ_i, t, σ) <= (m - (m-1) σ) t`.
//!
//! Implementation: `σ = p/Q` with `Q = 2^20` and `p` an integer, so that both sides
//! multiplied by `Q` are integers (exact). Candidates: `p = ceil(λ_max Q)` and a few evenly
//! spaced values up to `min(Q, Q (m-U)/(m-1))` (the range is the paper's; the grid is our
//! choice, as in the paper's experiments, which also search `σ` numerically). Each
//! `ff-dbf` is continuous and piecewise linear with slopes 0 and `σ`; the difference to the
//! right-hand side can only have local maxima where a ramp ends, at `t = j T_i + D_i`, and
//! `ff-dbf(t) <= u_i t + C_i` bounds the failing `t` below `sum C_i / (m - (m-1)σ - U)`
//! (which needs `σ < (m-U)/(m-1)`; on `m = 1` the right-hand side is `t`). Those points are
//! checked; `Limits::max_steps` bounds the points per task set and `max_interval` the
//! horizon (`GaveUp` when no candidate succeeded and one was cut short).
//!
//! Assumptions: sporadic tasks, constrained deadlines; `D > T` is answered `NotSchedulable` by
//! the common admission.

use rtsched_model::exact::Interval;

use super::{divmod, System};
use crate::{Limits, Verdict};

const Q: u64 = 1 << 20;
const CANDIDATES: u64 = 6;

pub(crate) fn check(sys: &System, limits: &Limits) -> Verdict {
    let n = sys.n();
    let m = sys.m;
    // λ_max exactly: p_lo = max_i ceil(C_i Q / D_i).
    let p_lo = (0..n).map(|i| (sys.c[i] as u128 * Q as u128).div_ceil(sys.d[i] as u128) as u64).max().unwrap_or(0);
    let u_iv = (0..n).fold(Interval::point(0.0), |a, i| a.add(Interval::ratio(sys.c[i] as u128, sys.t[i] as u128)));
    let p_hi = if m == 1 {
        Q
    } else {
        // (m - U)/(m - 1) * Q, rounded down (only a search range; validity is rechecked).
        let v = (m as f64 - u_iv.hi) / (m - 1) as f64 * Q as f64;
        (v.max(0.0) as u64).min(Q)
    };
    if p_lo > p_hi {
        return Verdict::NotSchedulable;
    }
    let inv: Vec<f64> = sys.t.iter().map(|&t| 1.0 / t as f64).collect();
    let csum: u128 = sys.c.iter().map(|&c| c as u128).sum();
    let mut budget = limits.max_steps;
    let mut gave_up = false;
    let mut tried = std::collections::BTreeSet::new();
    for j in 0..CANDIDATES {
        let p = p_lo + (p_hi - p_lo) * j / CANDIDATES.max(1);
        if !tried.insert(p) {
            continue;
        }
        // Slope of the right-hand side, times Q: S = Q m - (m-1) p.
        let s = Q as u128 * m as u128 - (m as u128 - 1) * p as u128;
        // Horizon: t < Q sum C / (S - Q U); needs S > Q U.
        let den = Interval::int(s).sub(Interval::int(Q as u128).mul(u_iv));
        if den.lo <= 0.0 {
            continue;
        }
        let tmax_f = (Interval::int(Q as u128 * csum).div(den).map(|x| x.hi).unwrap_or(f64::INFINITY)).next_up();
        let (tmax, truncated) = if tmax_f > limits.max_interval as f64 {
            (limits.max_interval, true)
        } else {
            (tmax_f.ceil() as u64, false)
        };
        match check_sigma(sys, p, s, tmax, &inv, &mut budget, &limits.stop) {
            Some(true) if !truncated => return Verdict::Schedulable,
            Some(true) | None => gave_up = true,
            Some(false) => {}
        }
    }
    if gave_up {
        Verdict::GaveUp
    } else {
        Verdict::NotSchedulable
    }
}

/// `Some(true)`: the condition holds at every ramp end `<= tmax`; `Some(false)`: it fails at
/// one; `None`: the point budget ran out.
#[allow(clippy::needless_range_loop)] // several parallel arrays indexed by task
fn check_sigma(
    sys: &System,
    p: u64,
    s: u128,
    tmax: u64,
    inv: &[f64],
    budget: &mut u64,
    stop: &crate::Stop,
) -> Option<bool> {
    let n = sys.n();
    for h in 0..n {
        let mut t = sys.d[h];
        while t <= tmax {
            if *budget == 0 || stop.requested() {
                return None;
            }
            *budget -= 1;
            let mut lhs: u128 = 0;
            for i in 0..n {
                let (ci, di) = (sys.c[i] as u128, sys.d[i]);
                let (q, r) = divmod(t, sys.t[i], inv[i]);
                lhs += q as u128 * ci * Q as u128;
                if r >= di {
                    lhs += ci * Q as u128;
                } else {
                    // C_i Q - (D_i - r) p, when positive (the ramp), else 0.
                    let dec = (di - r) as u128 * p as u128;
                    lhs += (ci * Q as u128).saturating_sub(dec);
                }
            }
            if lhs > s * t as u128 {
                return Some(false);
            }
            t += sys.t[h];
        }
    }
    Some(true)
}
