//! BAK: Baker's test for global EDF.
//!
//! T. P. Baker, "Multiprocessor EDF and deadline monotonic schedulability analysis", RTSS 2003,
//! and the simplified form of his TR-051101 (Florida State University, 2005) as summarised by
//! Bertogna, Cirinei, Lipari (ECRTS 2005, Theorem 3) and used by SchedCAT and seed 001: the
//! set is schedulable if for every task `τ_k`, with `λ_k = C_k/D_k`,
//!
//! ```text
//!     sum_i min(1, β_k(i))  <=  m (1 - λ_k) + λ_k
//!     β_k(i) = u_i (1 + (T_i - D_i)/D_k)                       if u_i <= λ_k
//!              u_i (1 + (T_i - D_i)/D_k) + (C_i - λ_k T_i)/D_k  if u_i >  λ_k
//! ```
//!
//! (the sum runs over all tasks, `τ_k` included). Baker's 2003 paper allows any `λ >= λ_k`
//! from a candidate set; this module implements the `λ = λ_k` instance, which is what the
//! 2005 form, SchedCAT and seed 001 use.
//!
//! Assumptions: sporadic tasks, constrained deadlines; `D > T` is answered `NotSchedulable`
//! by the common admission. Exact: floats with a rigorous error bound decide; exact rationals
//! break near-ties.

use rtsched_model::exact::{int, one, ratio, zero, Rational};

use super::{decide_le, System, EPS};
use crate::{Limits, Verdict};

/// One step per task `τ_k` (each `O(n)`), bounded by `Limits::max_steps` (`GaveUp` past it).
pub(crate) fn check(sys: &System, limits: &Limits) -> Verdict {
    let n = sys.n();
    let m = sys.m as f64;
    let u: Vec<f64> = (0..n).map(|i| sys.c[i] as f64 / sys.t[i] as f64).collect();
    let slack: Vec<f64> = (0..n).map(|i| (sys.t[i] - sys.d[i]) as f64).collect();
    let cf: Vec<f64> = sys.c.iter().map(|&c| c as f64).collect();
    let tf: Vec<f64> = sys.t.iter().map(|&t| t as f64).collect();
    for k in 0..n {
        if limits.exhausted(k as u64 + 1) {
            return Verdict::GaveUp;
        }
        let inv_dk = 1.0 / sys.d[k] as f64;
        let lambda = sys.c[k] as f64 * inv_dk;
        let mut sum = 0.0;
        let mut mag = 0.0;
        for i in 0..n {
            let a = u[i] * (1.0 + slack[i] * inv_dk);
            let b = (cf[i] - lambda * tf[i]) * inv_dk;
            sum += (a + b.max(0.0)).min(1.0);
            mag += a + (cf[i] + lambda * tf[i]) * inv_dk;
        }
        let rhs = m - (m - 1.0) * lambda;
        // Per term: at most ~6 roundings on intermediates bounded by `mag_i`: <= 8 EPS mag_i.
        // Summation: <= (n+1) EPS sum. Right-hand side: <= 4 EPS (m + (m-1) λ).
        let err = 8.0 * EPS * mag + (n as f64 + 1.0) * EPS * sum + 4.0 * EPS * (m + (m - 1.0) * lambda);
        if !decide_le(sum, rhs, err, || exact_task(sys, k)) {
            return Verdict::NotSchedulable;
        }
    }
    Verdict::Schedulable
}

fn exact_task(sys: &System, k: usize) -> bool {
    let dk = sys.d[k] as u128;
    let lambda = ratio(sys.c[k] as u128, dk);
    let mut sum = zero();
    for i in 0..sys.n() {
        let ui = ratio(sys.c[i] as u128, sys.t[i] as u128);
        let mut beta: Rational = &ui * (one() + ratio((sys.t[i] - sys.d[i]) as u128, dk));
        if ui > lambda {
            beta += (int(sys.c[i] as i128) - &lambda * int(sys.t[i] as i128)) / int(dk as i128);
        }
        sum += beta.min(one());
    }
    let m = int(sys.m as i128);
    sum <= &m - (&m - one()) * lambda
}
