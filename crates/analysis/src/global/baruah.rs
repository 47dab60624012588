//! BAR: Baruah's pseudo-polynomial test for global EDF.
//!
//! S. Baruah, "Techniques for multiprocessor global schedulability analysis", RTSS 2007,
//! Sections 3-4 (Theorem 1 and the bound on `A_k`). For a job of `τ_k` that misses its
//! deadline, consider the interval of length `t = A_k + D_k` ending at that deadline, whose
//! first `A_k` time units are fully busy. With
//!
//! ```text
//!     dbf_i(t)  = max(0, floor((t - D_i)/T_i) + 1) C_i           (no carry-in)
//!     dbf'_i(t) = floor(t/T_i) C_i + min(C_i, t mod T_i)          (with carry-in)
//!     I1_i = min(dbf_i(t), x + 1),  I2_i = min(dbf'_i(t), x + 1)             for i != k
//!     I1_k = min(dbf_k(t) - C_k, A_k),  I2_k = min(dbf'_k(t) - C_k, A_k)
//!     x = A_k + D_k - C_k
//! ```
//!
//! the set is schedulable if for every `τ_k` and every integer `A_k >= 0`
//!
//! ```text
//!     sum_i I1_i + (sum of the m-1 largest I2_i - I1_i)  <  m (x + 1).
//! ```
//!
//! Deviation from the paper (documented in docs/analysis-global.md): the paper's continuous-time
//! caps `x` are replaced by the discrete-time caps `x + 1` with a strict inequality, as
//! Bertogna et al. do for BCL; with integer releases a miss leaves at least `x + 1` time units
//! in which `τ_k` is blocked, so this form is sound, and it accepts every set the
//! continuous form accepts (at most `m - 1` terms reach a cap).
//!
//! Where the condition can fail: bounding `dbf_i(t) <= u_i (t + T_i - D_i)` and each carry-in
//! difference by `C_i`, a failure needs
//! `(m - U) t <= sum_i u_i (T_i - D_i) + C_Σ + (m - 1) C_k - m` (`C_Σ`: the `m - 1` largest
//! `C_i`), which bounds `t` when `U < m` (Baruah's bound, slightly sharpened for the
//! discrete caps). When `U = m` the bound is finite only if the right-hand side is negative;
//! otherwise the search runs to `Limits::max_interval` and answers `GaveUp` if no failure is
//! found. The left-hand side minus the right-hand side is piecewise linear in `t`, jumps only
//! upward, and is convex between consecutive breakpoints of its terms (steps of `dbf`, slope
//! changes of `dbf'`, and the points where a term meets its cap), so the condition is checked
//! exactly at those breakpoints in `[D_k, t_max]`. They are searched by interval bisection
//! (see `check`): an interval `[a, b]` with `LHS(b) < RHS(a)` passes whole, since the
//! left-hand side is non-decreasing and the right-hand side increasing in `t`.
//! `Limits::max_steps` bounds the number of evaluations per task set (`GaveUp` when the
//! budget ends before `t_max`).
//!
//! Integer time throughout except the bound `t_max`, which is computed with a rigorous float
//! enclosure (rounded up: overestimating it only adds points) and exact rationals near ties.
//! Assumptions: sporadic tasks, constrained deadlines; `D > T` is answered `NotSchedulable` by
//! the common admission.

use rtsched_model::exact::{self, int, ratio, Interval, Rational};

use super::{by_laxity, divmod, System};
use crate::{Limits, Verdict};

/// Per-set parts of the horizon: enclosures of `U` and `sum_i u_i (T_i - D_i)`.
struct HorizonData {
    u_iv: Interval,
    carry_iv: Interval,
}

impl HorizonData {
    fn new(sys: &System) -> HorizonData {
        let mut u_iv = Interval::point(0.0);
        let mut carry_iv = Interval::point(0.0);
        for i in 0..sys.n() {
            let ui = Interval::ratio(sys.c[i] as u128, sys.t[i] as u128);
            u_iv = u_iv.add(ui);
            if sys.t[i] != sys.d[i] {
                carry_iv = carry_iv.add(ui.mul(Interval::int((sys.t[i] - sys.d[i]) as u128)));
            }
        }
        HorizonData { u_iv, carry_iv }
    }
}

/// The largest `t` (interval length) at which the condition for task `k` can fail: `Ok(None)`
/// if it cannot fail at all, `Err(())` if unbounded (`U = m` and a non-negative numerator).
fn horizon(sys: &System, hd: &HorizonData, k: usize, csum: u64) -> Result<Option<u64>, ()> {
    let n = sys.n();
    let m = sys.m;
    // K = sum u_i (T_i - D_i) + C_Σ + (m-1) C_k - m,  bound: (m - U) t <= K.
    let fixed = (csum as i128 + (m as i128 - 1) * sys.c[k] as i128 - m as i128) as f64;
    // `fixed` is an integer below 2^62: its f64 rounding is within one ulp.
    let k_iv = hd.carry_iv.add(Interval { lo: fixed.next_down(), hi: fixed.next_up() });
    let slack_iv = Interval::int(m as u128).sub(hd.u_iv);
    if k_iv.hi < 0.0 {
        return Ok(None); // K < 0 <= (m - U) t: never fails
    }
    if slack_iv.lo > 0.0 {
        let q = k_iv.hi / slack_iv.lo;
        let q = q.next_up().next_up();
        if q < sys.d[k] as f64 {
            return Ok(None);
        }
        if q >= (1u64 << 62) as f64 {
            return Err(());
        }
        return Ok(Some(q.floor() as u64));
    }
    // Near U = m (or U = m): exact.
    let u: Rational = (0..n).map(|i| ratio(sys.c[i] as u128, sys.t[i] as u128)).sum();
    let mut kq: Rational = int(csum as i128 + (m as i128 - 1) * sys.c[k] as i128 - m as i128);
    for i in 0..n {
        kq += ratio(sys.c[i] as u128, sys.t[i] as u128) * int((sys.t[i] - sys.d[i]) as i128);
    }
    let s = int(m as i128) - u;
    if kq < exact::zero() {
        return Ok(None);
    }
    if s <= exact::zero() {
        return Err(()); // U = m (U > m was rejected at admission)
    }
    let q = exact::ceil_u128(&(kq / s));
    if q < sys.d[k] as u128 {
        return Ok(None);
    }
    Ok(Some(q.min(1u128 << 62) as u64))
}

/// What the search and its reference share: the point A_k = 0 checked for every task first
/// (most failures show there), then each task's range [D_k, horizon] (cut at `max_interval`,
/// then flagged truncated), tasks by increasing laxity. `Err` when that already decides.
struct Prelude {
    inv: Vec<f64>,
    inv_sum: f64,
    diffs: Vec<u64>,
    /// (task k, first A_k + D_k to check, last, truncated).
    ranges: Vec<(usize, u64, u64, bool)>,
}

fn prelude(sys: &System, limits: &Limits) -> Result<Prelude, Verdict> {
    let n = sys.n();
    let m = sys.m as usize;
    let inv: Vec<f64> = sys.t.iter().map(|&t| 1.0 / t as f64).collect();
    let inv_sum: f64 = inv.iter().sum();
    let mut diffs: Vec<u64> = Vec::with_capacity(n);
    let order = by_laxity(sys);
    // Most failures show at A_k = 0: check that point for every task first (it is one of
    // the points below as well, so this only reorders the work).
    for &k in &order {
        if limits.stop.requested() {
            return Err(Verdict::GaveUp);
        }
        let t = sys.d[k];
        if !lhs_below(sys, k, t, sys.m as u128 * (t - sys.c[k] + 1) as u128, &inv, &mut diffs) {
            return Err(Verdict::NotSchedulable);
        }
    }
    // Only sets that pass at A_k = 0 need the horizons: C_Σ (the m - 1 largest WCETs) and
    // the enclosures of U and sum u_i (T_i - D_i).
    let mut cs = sys.c.clone();
    cs.sort_unstable_by(|a, b| b.cmp(a));
    let csum: u64 = cs.iter().take(m.saturating_sub(1)).sum();
    let hd = HorizonData::new(sys);
    // Horizons, then two phases: a short first window for every task (failures mostly show
    // at small A_k), then the rest of each task's range in windows of about 4096 points
    // (bounded memory whatever the horizon).
    let mut ranges: Vec<(usize, u64, u64, bool)> = Vec::with_capacity(n); // (k, lo, tmax, truncated)
    for &k in &order {
        let dk = sys.d[k];
        let (mut tmax, mut truncated) = match horizon(sys, &hd, k, csum) {
            Ok(None) => continue,
            Ok(Some(t)) => (t, false),
            Err(()) => (u64::MAX, true),
        };
        let lim = dk.saturating_add(limits.max_interval);
        if tmax > lim {
            tmax = lim;
            truncated = true;
        }
        ranges.push((k, dk, tmax, truncated));
    }
    Ok(Prelude { inv, inv_sum, diffs, ranges })
}

pub(crate) fn check(sys: &System, limits: &Limits) -> Verdict {
    let Prelude { inv, inv_sum, mut diffs, mut ranges } = match prelude(sys, limits) {
        Ok(p) => p,
        Err(v) => return v,
    };
    let mut budget = limits.max_steps;
    let mut gave_up = false;
    let mut points: Vec<u64> = Vec::new();
    // Each task's range is searched by interval bisection: the left-hand side is non-decreasing
    // in t and the right-hand side increasing, so LHS(b) < RHS(a) proves every t in [a, b]
    // at once (one evaluation, no breakpoint enumerated); an interval that cannot be proved so
    // is split, and only small intervals (about `SMALL` breakpoints) have their breakpoints
    // collected and checked one by one. Every breakpoint of the range lies in an interval
    // that is either proved whole or checked point by point (with its left end): exactly the
    // points the condition must hold at. A short first window for every task comes first
    // (failures mostly show at small A_k).
    const SMALL: f64 = 4.0;
    let small = ((SMALL / (5.0 * inv_sum)) as u64).max(1);
    let win_short = ((32.0 / (5.0 * inv_sum)) as u64).max(1);
    let mut stack: Vec<(u64, u64)> = Vec::new();
    for phase in 0..2 {
        for r in ranges.iter_mut() {
            let (k, ref mut lo, tmax, ref mut truncated) = *r;
            if *lo > tmax {
                continue;
            }
            let rhs = |t: u64| sys.m as u128 * (t - sys.c[k] + 1) as u128;
            let hi = if phase == 0 { lo.saturating_add(win_short - 1).min(tmax) } else { tmax };
            stack.clear();
            stack.push((*lo, hi));
            let mut exhausted = false;
            while let Some((a, b)) = stack.pop() {
                if budget == 0 || limits.stop.requested() {
                    exhausted = true;
                    break;
                }
                budget -= 1;
                if lhs_below(sys, k, b, rhs(a), &inv, &mut diffs) {
                    continue; // every t in [a, b] passes
                }
                if b - a > small {
                    let mid = a + (b - a) / 2;
                    stack.push((mid + 1, b));
                    stack.push((a, mid));
                    continue;
                }
                collect_points(sys, k, a, b, &mut points);
                if points.len() as u64 > budget {
                    points.truncate(budget as usize);
                    exhausted = true;
                }
                budget -= points.len() as u64;
                for &p in &points {
                    if !lhs_below(sys, k, p, rhs(p), &inv, &mut diffs) {
                        return Verdict::NotSchedulable;
                    }
                }
                if exhausted {
                    break;
                }
            }
            *lo = hi.saturating_add(1);
            if exhausted {
                *truncated = true;
            }
            if phase == 1 && *truncated {
                gave_up = true;
            }
        }
    }
    if gave_up {
        Verdict::GaveUp
    } else {
        Verdict::Schedulable
    }
}

/// The breakpoints in `[lo, tmax]` (`lo >= D_k`) and `lo` itself, sorted, deduplicated.
fn collect_points(sys: &System, k: usize, lo: u64, tmax: u64, out: &mut Vec<u64>) {
    out.clear();
    let dk = sys.d[k];
    let ck = sys.c[k];
    out.push(lo);
    let mut push = |p: u64| {
        if p >= lo && p <= tmax {
            out.push(p)
        }
    };
    for i in 0..sys.n() {
        let (ci, di, ti) = (sys.c[i], sys.d[i], sys.t[i]);
        // Crossing of a constant level `v` with its cap.
        let cross = |v: u64| -> Option<u64> {
            if i == k {
                // v - C_k = t - D_k
                (v + dk).checked_sub(ck)
            } else {
                // v = t - C_k + 1
                (v + ck).checked_sub(1)
            }
        };
        // dbf pieces [D_i + j T_i, D_i + (j+1) T_i) with value (j+1) C_i.
        let mut j = if lo > di { (lo - di) / ti } else { 0 };
        loop {
            let start = di + j * ti;
            if start > tmax {
                break;
            }
            push(start);
            if let Some(tc) = cross((j + 1) * ci) {
                if tc >= start && tc < start + ti {
                    push(tc);
                }
            }
            j += 1;
        }
        // dbf' pieces: ramp [q T_i, q T_i + C_i), flat [q T_i + C_i, (q+1) T_i) at (q+1) C_i.
        let mut q = lo / ti;
        loop {
            let start = q * ti;
            if start > tmax {
                break;
            }
            push(start);
            let flat = start + ci;
            if ci < ti {
                push(flat);
                if let Some(tc) = cross((q + 1) * ci) {
                    if tc >= flat && tc < start + ti {
                        push(tc);
                    }
                }
            }
            q += 1;
        }
    }
    out.sort_unstable();
    out.dedup();
}

/// Whether the left-hand side of Baruah's condition for task `k` at interval length
/// `t >= D_k` is below `rhs` (with `rhs = m (t - C_k + 1)`: whether the condition holds at `t`).
#[inline]
fn lhs_below(sys: &System, k: usize, t: u64, rhs: u128, inv: &[f64], diffs: &mut Vec<u64>) -> bool {
    let n = sys.n();
    let m = sys.m;
    let ck = sys.c[k];
    let cap = t - ck + 1; // x + 1
    let a = t - sys.d[k]; // A_k
    let mut sum1: u128 = 0;
    let mut sumd: u128 = 0;
    diffs.clear();
    diffs.resize(n, 0);
    let params = sys.c[..n].iter().zip(&sys.d[..n]).zip(&sys.t[..n]).zip(&inv[..n]);
    for (i, ((((&ci, &di), &ti), &inv_i), slot)) in params.zip(diffs.iter_mut()).enumerate() {
        let (q, r) = divmod(t, ti, inv_i);
        let dbf2 = q * ci + r.min(ci);
        // dbf(t): floor((t - D_i)/T_i) + 1 jobs; with t = q T_i + r that is q + 1 if r >= D_i
        // (D_i <= T_i), else q (the job released at q T_i - ... has its deadline past t).
        let dbf = if r >= di { (q + 1) * ci } else { q * ci };
        let (i1, i2) = if i == k { ((dbf - ck).min(a), (dbf2 - ck).min(a)) } else { (dbf.min(cap), dbf2.min(cap)) };
        sum1 += i1 as u128;
        sumd += (i2 - i1) as u128;
        *slot = i2 - i1;
    }
    if sum1 + sumd < rhs {
        return true;
    }
    if sum1 >= rhs {
        return false;
    }
    let top = (m as usize).saturating_sub(1);
    if top == 0 {
        return sum1 < rhs;
    }
    if top < n {
        if top <= 16 {
            // Keep the `top` largest in a small descending array.
            let mut best = [0u64; 16];
            for &d in diffs.iter() {
                if d > best[top - 1] {
                    let mut j = top - 1;
                    while j > 0 && best[j - 1] < d {
                        best[j] = best[j - 1];
                        j -= 1;
                    }
                    best[j] = d;
                }
            }
            return sum1 + best[..top].iter().map(|&x| x as u128).sum::<u128>() < rhs;
        }
        diffs.select_nth_unstable_by(top - 1, |x, y| y.cmp(x));
        diffs.truncate(top);
    }
    sum1 + diffs.iter().map(|&x| x as u128).sum::<u128>() < rhs
}

#[cfg(test)]
mod tests {
    use super::super::{Admission, System};
    use super::*;
    use rtsched_model::TaskSet;

    /// The search as it was before interval bisection: every breakpoint collected, blocks
    /// bisected (the reference for the test below).
    fn check_reference(sys: &System, limits: &Limits) -> Verdict {
        let Prelude { inv, inv_sum, mut diffs, mut ranges } = match prelude(sys, limits) {
            Ok(p) => p,
            Err(v) => return v,
        };
        let mut budget = limits.max_steps;
        let mut gave_up = false;
        let mut points: Vec<u64> = Vec::new();
        let win_long = ((4096.0 / (5.0 * inv_sum)) as u64).max(1);
        let win_short = ((32.0 / (5.0 * inv_sum)) as u64).max(1);
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for (phase, win) in [(0, win_short), (1, win_long)] {
            for r in ranges.iter_mut() {
                let (k, ref mut lo, tmax, ref mut truncated) = *r;
                let rhs = |t: u64| sys.m as u128 * (t - sys.c[k] + 1) as u128;
                while *lo <= tmax {
                    if budget == 0 || limits.stop.requested() {
                        *truncated = true;
                        break;
                    }
                    let hi = lo.saturating_add(win - 1).min(tmax);
                    collect_points(sys, k, *lo, hi, &mut points);
                    if points.len() as u64 > budget {
                        points.truncate(budget as usize);
                        *truncated = true;
                    }
                    budget -= points.len() as u64;
                    // Every term I1, I2 is non-decreasing in t, so the left-hand side at the last
                    // point of a block bounds it on the whole block, and the right-hand side is
                    // smallest at the first: if LHS(last) < RHS(first), every point of the block
                    // passes. Otherwise split (left half first); a single point is checked exactly.
                    stack.clear();
                    if !points.is_empty() {
                        stack.push((0, points.len() - 1));
                    }
                    while let Some((a, b)) = stack.pop() {
                        if lhs_below(sys, k, points[b], rhs(points[a]), &inv, &mut diffs) {
                            continue;
                        }
                        if a == b {
                            return Verdict::NotSchedulable;
                        }
                        let mid = (a + b) / 2;
                        stack.push((mid + 1, b));
                        stack.push((a, mid));
                    }
                    if hi == u64::MAX {
                        *lo = hi; // unreachable in practice: tmax < 2^63
                        *truncated = true;
                        break;
                    }
                    *lo = hi + 1;
                    if phase == 0 {
                        break;
                    }
                }
                if phase == 1 && *truncated {
                    gave_up = true;
                }
            }
        }
        if gave_up {
            Verdict::GaveUp
        } else {
            Verdict::Schedulable
        }
    }

    /// Interval bisection gives the verdicts of the point-by-point search on random sets,
    /// with implicit, constrained and harmonic periods (schedulable and not).
    #[test]
    fn interval_bisection_matches_reference() {
        let mut x: u64 = 0x853C_49E6_748F_EA9B;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut compared, mut sched, mut not) = (0, 0, 0);
        while compared < 20_000 {
            let m = (next() % 4 + 2) as u32;
            let n = (next() % 10 + 2) as usize;
            let scale = [1u64, 7, 1000][(next() % 3) as usize];
            let params: Vec<(u64, u64, u64)> = (0..n)
                .map(|_| {
                    let t = [next() % 40 + 2, 10 << (next() % 4)][(next() % 2) as usize];
                    let d = if next() % 2 == 0 { t } else { next() % t + 1 };
                    let c = next() % d.min(t / 2 + 2).max(1) + 1;
                    (c.min(d) * scale, d * scale, t * scale)
                })
                .collect();
            let ts = TaskSet::from_cdt(&params).unwrap();
            let Admission::Run(sys) = System::admit(&ts, m) else { continue };
            let lim = Limits::default();
            let (a, b) = (check(&sys, &lim), check_reference(&sys, &lim));
            if b == Verdict::GaveUp {
                continue; // U = m: the budgets count differently
            }
            assert_eq!(a, b, "m {m} {params:?}");
            sched += (a == Verdict::Schedulable) as u32;
            not += (a == Verdict::NotSchedulable) as u32;
            compared += 1;
        }
        assert!(sched > 2000 && not > 2000, "{sched} schedulable, {not} not");
    }
}
