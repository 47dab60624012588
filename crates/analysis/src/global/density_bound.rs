//! GFB: the density bound for global EDF.
//!
//! Goossens, Funk, Baruah, "Priority-driven scheduling of periodic task systems on
//! multiprocessors", Real-Time Systems 25(2-3), 2003, Theorem 5 (implicit deadlines:
//! `U <= m - (m-1) u_max`), in its density form for constrained deadlines as stated by
//! Bertogna, Cirinei, Lipari (ECRTS 2005, Theorem 2) and Baker's 2005 survey:
//!
//! ```text
//!     sum_i C_i/D_i  <=  m - (m-1) * max_i C_i/D_i
//! ```
//!
//! Assumptions: sporadic tasks, constrained deadlines (`D <= T`); task sets with `D > T` are
//! answered `NotSchedulable` by the common admission in [`super`]. Exact: a float evaluation
//! with a rigorous rounding-error bound decides, exact rationals break near-ties.

use rtsched_model::exact::{int, ratio, Rational};

use super::{decide_le, System, EPS};

pub(crate) fn check(sys: &System) -> bool {
    let n = sys.n();
    // Largest density, exactly (cross-multiplication).
    let mut kmax = 0;
    for i in 1..n {
        if (sys.c[i] as u128 * sys.d[kmax] as u128) > (sys.c[kmax] as u128 * sys.d[i] as u128) {
            kmax = i;
        }
    }
    let m = sys.m as f64;
    let mut sum = 0.0;
    for i in 0..n {
        sum += sys.c[i] as f64 / sys.d[i] as f64;
    }
    let lmax = sys.c[kmax] as f64 / sys.d[kmax] as f64;
    let rhs = m - (m - 1.0) * lmax;
    // Each quotient has relative error <= EPS; recursive summation adds <= (n-1) EPS * sum;
    // rhs: lmax (EPS), product (EPS), subtraction (EPS) on magnitudes <= m + (m-1) lmax.
    let err = (n as f64 + 2.0) * EPS * sum + 4.0 * EPS * (m + (m - 1.0) * lmax);
    decide_le(sum, rhs, err, || {
        let lhs: Rational = (0..n).map(|i| ratio(sys.c[i] as u128, sys.d[i] as u128)).sum();
        let l = ratio(sys.c[kmax] as u128, sys.d[kmax] as u128);
        lhs <= int(sys.m as i128) - int(sys.m as i128 - 1) * l
    })
}
