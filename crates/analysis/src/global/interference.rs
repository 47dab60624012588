//! BCL: the interference-bound test for global EDF.
//!
//! M. Bertogna, M. Cirinei, G. Lipari, "Improved schedulability analysis of EDF on
//! multiprocessor platforms", ECRTS 2005, Theorem 7. With
//! `N_i = floor((D_k - D_i)/T_i) + 1` and
//! `β_k(i) = (N_i C_i + min(C_i, max(0, D_k - N_i T_i))) / D_k`, the set is schedulable if
//! for every `τ_k`, with `λ_k = C_k/D_k`, either
//!
//! ```text
//!     sum_{i != k} min(β_k(i), 1 - λ_k)  <  m (1 - λ_k)
//! or  sum_{i != k} min(β_k(i), 1 - λ_k)  =  m (1 - λ_k)  and  ∃ i != k: 0 < β_k(i) <= 1 - λ_k.
//! ```
//!
//! Implemented in the integer time domain: multiplying through by `D_k` gives
//! `W_i = N_i C_i + min(C_i, max(0, D_k - N_i T_i))` and `X = D_k - C_k`, and the condition
//! `sum min(W_i, X) < m X` (or `= m X` and some `0 < W_i <= X`), all in integers: exact.
//!
//! Assumptions: sporadic tasks, constrained deadlines (`D_i <= T_i` makes `N_i >= 0`); `D > T`
//! is answered `NotSchedulable` by the common admission.
//!
//! Work: one step per task `τ_k` checked (each `O(n)`); `Limits::max_steps` bounds them
//! (`GaveUp` past it), like the iterative tests, so that a huge set cannot run unbounded.

use super::{divmod, LaxityOrder, System};
use crate::{Limits, Verdict};

#[allow(clippy::needless_range_loop)] // several parallel arrays indexed by task
pub(crate) fn check(sys: &System, limits: &Limits) -> Verdict {
    let n = sys.n();
    let mut steps: u64 = 0;
    let inv: Vec<f64> = sys.t.iter().map(|&t| 1.0 / t as f64).collect();
    // Most-likely-to-fail first: the test stops at the first failing task.
    for k in LaxityOrder::new(sys) {
        steps += 1;
        if limits.exhausted(steps) {
            return Verdict::GaveUp;
        }
        let dk = sys.d[k];
        let x = dk - sys.c[k];
        let cap = sys.m as u128 * x as u128;
        let mut sum: u128 = 0;
        let mut witness = false;
        for i in 0..n {
            if i == k {
                continue;
            }
            let (ci, di, ti) = (sys.c[i], sys.d[i], sys.t[i]);
            let w = if dk >= di {
                let (q, rem) = divmod(dk - di, ti, inv[i]);
                // N = q + 1 jobs; the carry-in deadline lies D_k - N T_i = rem + D_i - T_i in.
                (q + 1) * ci + (rem as i64 + di as i64 - ti as i64).clamp(0, ci as i64) as u64
            } else {
                ci.min(dk)
            };
            sum += w.min(x) as u128;
            witness |= w > 0 && w <= x;
            if sum > cap {
                return Verdict::NotSchedulable; // the sum only grows
            }
        }
        if !(sum < cap || (sum == cap && witness)) {
            return Verdict::NotSchedulable;
        }
    }
    Verdict::Schedulable
}
