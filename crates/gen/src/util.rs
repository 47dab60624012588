//! Utilization vectors with a fixed sum: RandFixedSum and UUniFast-Discard.
//!
//! * **RandFixedSum** — Emberson, Stafford, Davis, "Techniques for the synthesis of
//!   multiprocessor tasksets", WATERS 2010, §4 (the algorithm is Roger Stafford's
//!   `randfixedsum`, 2006). Draws `n` values in `[0, umax]` with sum exactly `U` (up to float
//!   rounding), *uniformly* distributed over that polytope (the simplex slice
//!   `{u : Σu = U, 0 <= u_i <= umax}`), in `O(n^2)` time and memory and without rejection.
//! * **UUniFast-Discard** — Davis & Burns, "Improved priority assignment for global fixed
//!   priority pre-emptive scheduling in multiprocessor real-time systems", Real-Time Systems
//!   47(1), 2011 (UUniFast itself: Bini & Buttazzo, "Measuring the performance of
//!   schedulability tests", Real-Time Systems 30, 2005). UUniFast draws uniformly on the
//!   simplex `{Σu = U, u >= 0}`; discarding vectors with some `u_i > umax` conditions that
//!   uniform law on the same polytope, so both generators have the same distribution. The
//!   discard rate explodes as `U` approaches `n * umax`, hence the bound on tries.
//!
//! Both return values in `(0, umax]`: values that float rounding leaves at or below zero
//! (an event of probability zero in exact arithmetic) are raised to the smallest positive
//! normal `f64`, and values above `umax` are lowered to `umax`.

use crate::rng::{open01, shuffle, unit};
use rand::RngCore;
use rtsched_model::ModelError;

/// The largest `n` RandFixedSum accepts: its volume table has about `n^2 / 2` entries
/// (64 MiB at n = 4096).
pub const RANDFIXEDSUM_MAX_N: usize = 4096;

/// The largest `n` UUniFast-Discard and the distribution generators accept.
pub const MAX_TASKS: usize = 1 << 20;

/// How many vectors UUniFast-Discard draws before giving up, by default.
pub const UUNIFAST_DEFAULT_MAX_TRIES: u64 = 100_000;

/// Checks `(n, total, umax)` of a fixed-sum generator; errors name the parameter.
pub(crate) fn check_fixed_sum(n: usize, total: f64, umax: f64, max_n: usize) -> Result<(), ModelError> {
    if n == 0 {
        return Err(ModelError::field("n", "the number of tasks must be at least 1, got 0"));
    }
    if n > max_n {
        return Err(ModelError::field("n", format!("at most {max_n} tasks are supported here, got {n}")));
    }
    check_umax(umax)?;
    if !total.is_finite() || total <= 0.0 {
        return Err(ModelError::field(
            "total",
            format!("the total utilization must be a finite number > 0, got {total}"),
        ));
    }
    if total > n as f64 * umax {
        return Err(ModelError::field(
            "total",
            format!("the total utilization {total} exceeds n * umax = {n} * {umax} = {}", n as f64 * umax),
        ));
    }
    Ok(())
}

pub(crate) fn check_umax(umax: f64) -> Result<(), ModelError> {
    if !(umax > 0.0 && umax <= 1.0) {
        return Err(ModelError::field("umax", format!("the largest task utilization must lie in (0, 1], got {umax}")));
    }
    Ok(())
}

/// Lifts float-rounding strays back into `(0, umax]`.
#[inline]
fn into_range(u: f64, umax: f64) -> f64 {
    if u > 0.0 {
        u.min(umax)
    } else {
        f64::MIN_POSITIVE
    }
}

/// RandFixedSum (Stafford; Emberson, Stafford & Davis, WATERS 2010): `n` utilizations in
/// `(0, umax]` summing to `total`, uniformly distributed over that polytope.
///
/// How it works: scale to `x = u / umax`, so `x` lies in the unit cube with `Σx = s = U/umax`.
/// The cube slice is cut into simplices, one per integer `k` with `k <= s <= k+1` at each
/// dimension; a forward recursion computes (scaled) volumes `w` of the pieces and from them
/// the probabilities `t` of stepping from one piece to the next; the backward pass then walks
/// the pieces (one uniform `rt` per step chooses the transition) while drawing a uniform point
/// of the current simplex with the `rs^(1/i)` recipe (one uniform `rs` per step). A final
/// random permutation makes the coordinates exchangeable.
///
/// Uses `2(n-1)` uniforms for the walk plus `n-1` for the permutation.
pub fn randfixedsum<R: RngCore + ?Sized>(n: usize, total: f64, umax: f64, rng: &mut R) -> Result<Vec<f64>, ModelError> {
    check_fixed_sum(n, total, umax, RANDFIXEDSUM_MAX_N)?;
    let mut scratch = RfsScratch::default();
    let mut out = Vec::with_capacity(n);
    randfixedsum_into(n, total, umax, rng, &mut scratch, &mut out);
    Ok(out)
}

/// Reusable buffers for [`randfixedsum`]'s `O(n^2)` transition table.
#[derive(Default)]
pub(crate) struct RfsScratch {
    s1: Vec<f64>,
    s2: Vec<f64>,
    /// Rows 1..n-1 of Stafford's `w`, as a triangle: row r holds columns 0..=r.
    w: Vec<f64>,
}

/// Offset of row `r >= 1` of the `w` triangle (rows of `r + 1` entries).
#[inline]
fn w_row(r: usize) -> usize {
    (r - 1) * (r + 2) / 2
}

const TINY: f64 = f64::from_bits(1); // 2^-1074, avoids 0/0

/// Stafford's transition probability `t(i-1, c)` (dimension `i`, 0-based column `c < i`),
/// from row `i-1` of `w` (`wp`, columns `0..i`; column `i` is 0).
#[inline]
fn transition(wp: &[f64], a: f64, b: f64, c: usize, inv_i: f64) -> f64 {
    let w_c1 = wp.get(c + 1).copied().unwrap_or(0.0);
    let tmp1 = w_c1 * a * inv_i;
    let tmp2 = wp[c] * b * inv_i;
    let tmp3 = (tmp1 + tmp2) + TINY;
    if b > a {
        tmp2 / tmp3
    } else {
        1.0 - tmp1 / tmp3
    }
}

/// The algorithm proper; parameters already checked.
pub(crate) fn randfixedsum_into<R: RngCore + ?Sized>(
    n: usize,
    total: f64,
    umax: f64,
    rng: &mut R,
    sc: &mut RfsScratch,
    out: &mut Vec<f64>,
) {
    out.clear();
    let nf = n as f64;
    // Scaled sum s in [0, n]; k = the integer part, kept in [0, n-1].
    let s0 = (total / umax).clamp(0.0, nf);
    let k = (s0.floor() as usize).min(n - 1);
    let kf = k as f64;
    let s = s0.clamp(kf, kf + 1.0);

    // s1[i] = s - (k - i),  s2[i] = (k + n - i) - s   (i = 0..n)
    sc.s1.clear();
    sc.s2.clear();
    for i in 0..n {
        let fi = i as f64;
        sc.s1.push(s - (kf - fi));
        sc.s2.push((kf + nf - fi) - s);
    }
    // Forward recursion over the (scaled) volumes w; w[1][1] = f64::MAX delays underflow
    // (Stafford uses realmax). Only the rows are stored; the transition probabilities t are
    // derived from them on the walk's path (n - 1 divisions instead of n^2 / 2).
    sc.w.clear();
    sc.w.reserve(w_row(n.max(2)));
    sc.w.extend_from_slice(&[0.0, f64::MAX]); // row 1
    for i in 2..n {
        // Row i from row i-1: w[i][c+1] = (w[i-1][c+1] s1[c] + w[i-1][c] s2[n-i+c]) / i.
        let inv_i = 1.0 / i as f64;
        let start = sc.w.len();
        sc.w.resize(start + i + 1, 0.0);
        let (prev, cur) = sc.w.split_at_mut(start);
        let wp = &prev[w_row(i - 1)..]; // i entries
        let (s1, s2) = (&sc.s1[..i], &sc.s2[n - i..]);
        for c in 0..i - 1 {
            cur[c + 1] = wp[c + 1] * s1[c] * inv_i + wp[c] * s2[c] * inv_i;
        }
        // Last column: w[i-1][i] is 0 (outside row i-1).
        cur[i] = 0.0 * s1[i - 1] * inv_i + wp[i - 1] * s2[i - 1] * inv_i;
    }

    // Backward walk.
    let mut s = s;
    let mut j = k; // 0-based column
    let mut sm = 0.0f64;
    let mut pr = 1.0f64;
    for i in (1..n).rev() {
        let rt = unit(rng);
        let rs = unit(rng);
        // t(i, j): dimension i+1, which has i+1 columns; Stafford's table holds 0 beyond them.
        let d = i + 1;
        let tv = if j < d {
            let wp = &sc.w[w_row(i)..w_row(i) + i + 1];
            transition(wp, sc.s1[j], sc.s2[n - d + j], j, 1.0 / d as f64)
        } else {
            0.0
        };
        let step = rt <= tv;
        let e = if step { 1.0 } else { 0.0 };
        let sx = if i == 1 { rs } else { rs.powf(1.0 / i as f64) };
        sm += (1.0 - sx) * pr * s / (i + 1) as f64;
        pr *= sx;
        out.push(sm + pr * e);
        s -= e;
        if step {
            j = j.saturating_sub(1);
        }
    }
    out.push(sm + pr * s);
    shuffle(rng, out);
    for x in out.iter_mut() {
        *x = into_range(*x * umax, umax);
    }
}

/// UUniFast-Discard with the default bound of [`UUNIFAST_DEFAULT_MAX_TRIES`] tries.
pub fn uunifast_discard<R: RngCore + ?Sized>(
    n: usize,
    total: f64,
    umax: f64,
    rng: &mut R,
) -> Result<Vec<f64>, ModelError> {
    uunifast_discard_with_limit(n, total, umax, UUNIFAST_DEFAULT_MAX_TRIES, rng)
}

/// UUniFast-Discard (Davis & Burns 2011): draw with UUniFast (Bini & Buttazzo 2005) until no
/// `u_i` exceeds `umax`, at most `max_tries` times; then a clear error (suggesting
/// RandFixedSum, which never discards).
pub fn uunifast_discard_with_limit<R: RngCore + ?Sized>(
    n: usize,
    total: f64,
    umax: f64,
    max_tries: u64,
    rng: &mut R,
) -> Result<Vec<f64>, ModelError> {
    check_fixed_sum(n, total, umax, MAX_TASKS)?;
    if max_tries == 0 {
        return Err(ModelError::field("max_tries", "must be at least 1"));
    }
    let mut u = Vec::with_capacity(n);
    for _ in 0..max_tries {
        u.clear();
        let mut sum = total;
        let mut ok = true;
        for i in 1..n {
            // sum * r^(1/(n-i)) with r uniform on (0,1): the largest of n-i uniforms.
            let r = open01(rng);
            let next = sum * r.powf(1.0 / (n - i) as f64);
            let ui = sum - next;
            ok &= ui > 0.0 && ui <= umax;
            u.push(ui);
            sum = next;
        }
        ok &= sum > 0.0 && sum <= umax;
        u.push(sum);
        if ok {
            return Ok(u);
        }
    }
    Err(ModelError::field(
        "umax",
        format!(
            "UUniFast-Discard drew {max_tries} vectors for n = {n}, total = {total}, umax = {umax} and every one \
             had a utilization above umax; the acceptance rate is too low here (use randfixedsum, which never discards)"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Purpose};

    #[test]
    fn rejects_bad_parameters() {
        let mut r = stream(0, 0, Purpose::Utilization);
        let cases: [(usize, f64, f64, &str); 8] = [
            (0, 1.0, 1.0, "n"),
            (3, 3.5, 1.0, "total"),
            (3, 0.0, 1.0, "total"),
            (3, -1.0, 1.0, "total"),
            (3, f64::NAN, 1.0, "total"),
            (3, 1.0, 0.0, "umax"),
            (3, 1.0, 1.5, "umax"),
            (3, 1.0, f64::NAN, "umax"),
        ];
        for (n, total, umax, field) in cases {
            for e in [
                randfixedsum(n, total, umax, &mut r).unwrap_err(),
                uunifast_discard(n, total, umax, &mut r).unwrap_err(),
            ] {
                assert_eq!(e.field.as_deref(), Some(field), "({n}, {total}, {umax}): {e}");
            }
        }
        let e = randfixedsum(RANDFIXEDSUM_MAX_N + 1, 1.0, 1.0, &mut r).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("n"));
    }

    #[test]
    fn sums_and_ranges() {
        let mut r = stream(3, 0, Purpose::Utilization);
        for &(n, total, umax) in &[
            (1, 0.5, 1.0),
            (1, 1.0, 1.0),
            (2, 1.0, 0.5),
            (5, 2.5, 0.6),
            (10, 9.99, 1.0),
            (10, 10.0, 1.0),
            (40, 0.01, 1.0),
            (40, 20.0, 0.5),
            (80, 79.0, 1.0),
            (200, 3.0, 0.05),
            (1000, 500.0, 0.9),
            (3000, 100.0, 1.0),
        ] {
            for _ in 0..20 {
                let u = randfixedsum(n, total, umax, &mut r).unwrap();
                assert_eq!(u.len(), n);
                let sum: f64 = u.iter().sum();
                assert!((sum - total).abs() <= 1e-12 * n as f64 * total.max(1.0), "rfs n={n} U={total}: sum {sum}");
                assert!(u.iter().all(|&x| x > 0.0 && x <= umax), "rfs n={n} U={total}: {u:?}");
            }
        }
    }

    #[test]
    fn uunifast_gives_up_clearly() {
        let mut r = stream(3, 0, Purpose::Utilization);
        // n * umax == U: acceptance probability zero.
        let e = uunifast_discard_with_limit(4, 2.0, 0.5, 50, &mut r).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("umax"));
        assert!(e.to_string().contains("randfixedsum"), "{e}");
        // RandFixedSum handles the corner: every u_i = umax.
        let u = randfixedsum(4, 2.0, 0.5, &mut r).unwrap();
        assert!(u.iter().all(|&x| (x - 0.5).abs() < 1e-12), "{u:?}");
    }
}
