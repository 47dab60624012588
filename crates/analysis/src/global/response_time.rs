//! RTA: response-time analysis for global EDF.
//!
//! M. Bertogna, M. Cirinei, "Response-time analysis for globally scheduled symmetric
//! multiprocessor platforms", RTSS 2007, Section 4 (workload bound, Lemma/Eq. for `W_i`),
//! Section 5 (the EDF-specific bound) and the iterative procedure of Section 6.
//!
//! With response-time bounds `R_i` (initially `D_i`, i.e. slack `S_i = D_i - R_i = 0`):
//!
//! ```text
//!     W_i(L)  = N C_i + min(C_i, L + R_i - C_i - N T_i),   N = floor((L + R_i - C_i)/T_i)
//!     J_k(i)  = N' C_i + min(C_i, max(0, D_k - N' T_i - S_i)),   N' = floor((D_k - D_i)/T_i) + 1
//!     R_k    <- least fixed point  R = C_k + floor( (1/m) sum_{i != k} min(W_i(R), J_k(i), R - C_k + 1) )
//! ```
//!
//! iterated from `R = C_k` and abandoned once it exceeds `D_k`. Rounds update every task in
//! most-likely-to-fail-first order (in place; the order never changes the verdict); a task's bound is kept only when `R_k <= D_k`. The
//! set is schedulable as soon as one round finds every `R_k <= D_k` (equivalently, since
//! bounds only shrink, once every task has passed); the test fails when a round changes
//! nothing, or at once when a task's fixed point exceeds `D_k` even with the largest possible
//! slacks of the others (`R_i = C_i`). `Limits::max_steps` bounds the total number of fixed-point iterations
//! (`GaveUp` when reached).
//!
//! Speed without loss of precision: the fixed-point iteration on a monotone right-hand side
//! can crawl (1 ns per step when `m` terms grow at slope 1). Besides the usual step
//! `R <- f(R)`, each step also jumps to the least `R + δ` that a piecewise-linear lower bound
//! of `f` on `[R, ∞)` allows to be a fixed point; both are lower bounds of the least fixed
//! point, so the result is exactly the least fixed point the paper's iteration computes.
//!
//! Integer time throughout: exact. Assumptions: sporadic tasks, constrained deadlines; `D > T`
//! is answered `NotSchedulable` by the common admission.

use super::{by_laxity, divmod, PairTable, System};
use crate::{Limits, Verdict};

pub(crate) fn check(sys: &System, limits: &Limits) -> Verdict {
    let n = sys.n();
    let mut table = PairTable::new(sys);
    let order = by_laxity(sys);
    let inv: Vec<f64> = sys.t.iter().map(|&t| 1.0 / t as f64).collect();
    let mut slack = vec![0u64; n];
    // The largest slack any task can have (response time C_i): the best case for the others.
    let best: Vec<u64> = (0..n).map(|i| sys.d[i] - sys.c[i]).collect();
    // A lower bound on each task's least fixed point (C_k, or its best-case fixed point once
    // computed): the iteration may start there, as the right-hand side only shrinks when
    // slacks grow.
    let mut start: Vec<u64> = sys.c.clone();
    // Upper bounds on the slacks this procedure can ever reach, iterated down from the
    // largest possible ones (the right-hand side is monotone, so by induction every slack
    // the procedure computes stays below them): a task whose fixed point exceeds D_k even
    // against them fails in every round, and the set is rejected at once.
    let mut upper = best.clone();
    let mut upper_stable = false;
    let mut steps: u64 = 0;
    let mut gaps: Vec<u64> = Vec::with_capacity(n);
    let mut active: Vec<usize> = Vec::with_capacity(n);
    // Bounds only shrink as slacks grow, so a task that passed once passes in every later
    // round: the paper's "every task passes in one round" is reached exactly when every
    // task has passed once. A task whose inputs (the other slacks) have not changed since
    // its last evaluation would get the same answer and is skipped.
    let mut passed = vec![false; n];
    let mut n_passed = 0usize;
    let mut version: u64 = 0; // number of slack changes so far
    let mut seen: Vec<Option<u64>> = vec![None; n]; // version at each task's last evaluation
    let mut own: Vec<u64> = vec![0; n]; // changes made by the task itself since then
                                        // Most random sets that fail, fail against the largest slacks already: start with the
                                        // first downward round, most-likely-to-fail task first.
    let mut failed = true;
    loop {
        if failed && !upper_stable {
            // One round of the downward iteration. Its fixed points only grow, so each
            // starts from the previous one (a lower bound for every later evaluation).
            upper_stable = true;
            for &k in &order {
                let row = table.row(sys, k);
                match fixed_point(
                    sys,
                    &table,
                    row,
                    &inv,
                    &upper,
                    k,
                    start[k],
                    &mut steps,
                    limits,
                    &mut gaps,
                    &mut active,
                ) {
                    Err(()) => return Verdict::GaveUp,
                    Ok(None) => return Verdict::NotSchedulable,
                    Ok(Some(r)) => {
                        start[k] = r;
                        if upper[k] != sys.d[k] - r {
                            upper[k] = sys.d[k] - r;
                            upper_stable = false;
                        }
                    }
                }
            }
        }
        let mut changed = false;
        failed = false;
        for &k in &order {
            if seen[k].is_some_and(|v| v + own[k] == version) {
                continue;
            }
            seen[k] = Some(version);
            own[k] = 0;
            let row = table.row(sys, k);
            match fixed_point(sys, &table, row, &inv, &slack, k, start[k], &mut steps, limits, &mut gaps, &mut active) {
                Err(()) => return Verdict::GaveUp,
                Ok(Some(r)) => {
                    let s = sys.d[k] - r;
                    if s != slack[k] {
                        slack[k] = s;
                        changed = true;
                        version += 1;
                        own[k] += 1;
                    }
                    if !passed[k] {
                        passed[k] = true;
                        n_passed += 1;
                        if n_passed == n {
                            return Verdict::Schedulable;
                        }
                    }
                }
                Ok(None) => failed = true,
            }
        }
        if !changed {
            return Verdict::NotSchedulable;
        }
    }
}

/// The least fixed point for task `k` (`Some(R)` with `R <= D_k`), `None` if it exceeds
/// `D_k`, `Err` when the step budget runs out.
///
/// A term `min(W_i(r), J_k(i), r - C_k + 1)` whose `W_i(r)` and cap have both reached
/// `J_k(i)` equals `J_k(i)` at every later `r` (`W_i` and the cap are non-decreasing and `r`
/// only grows), so it is added as a constant and no longer evaluated: the iteration (every
/// `r`, every step count) is exactly the one without this shortcut.
#[allow(clippy::too_many_arguments)]
fn fixed_point(
    sys: &System,
    table: &PairTable,
    row: usize,
    inv: &[f64],
    slack: &[u64],
    k: usize,
    start: u64,
    steps: &mut u64,
    limits: &Limits,
    gaps: &mut Vec<u64>,
    active: &mut Vec<usize>,
) -> Result<Option<u64>, ()> {
    let n = sys.n();
    let m = sys.m as u128;
    let ck = sys.c[k];
    let dk = sys.d[k];
    let mut r = start.max(ck);
    let fail_at = m * (dk - ck + 1) as u128;
    active.clear();
    active.extend((0..n).filter(|&i| i != k));
    let mut saturated: u128 = 0; // sum of the terms fixed at J_k(i)
    loop {
        *steps += 1;
        if limits.exhausted(*steps) {
            return Err(());
        }
        let cap = r - ck + 1;
        let mut s0: u128 = saturated;
        if s0 >= fail_at {
            return Ok(None);
        }
        gaps.clear();
        let mut kept = 0;
        for a in 0..active.len() {
            let i = active[a];
            let ci = sys.c[i];
            // W_i(r) with R_i = D_i - S_i.
            let span = r + sys.d[i] - slack[i] - ci;
            let (q, rem) = divmod(span, sys.t[i], inv[i]);
            let (w, ramp) = if rem < ci { (q * ci + rem, ci - rem) } else { (q * ci + ci, 0) };
            let j = table.workload(row + i, ci, slack[i]);
            if w.min(cap) >= j {
                saturated += j as u128;
                s0 += j as u128;
            } else {
                active[kept] = i;
                kept += 1;
                let term = w.min(cap); // < j
                s0 += term as u128;
                // Lower bound of this term at r + δ: min(term + δ, min(w + ramp, j)).
                let v = (w + ramp).min(j);
                if v > term {
                    gaps.push(v - term);
                }
            }
            if s0 >= fail_at {
                return Ok(None); // f(r) > D_k already, and f(r) <= the least fixed point
            }
        }
        active.truncate(kept);
        let next = ck as u128 + s0 / m;
        if next <= r as u128 {
            return Ok(Some(r)); // f(r) <= r: r is the least fixed point
        }
        // The plain step suffices when it covers a good part of the remaining way to D_k;
        // otherwise jump to the least δ the lower bound allows (see the module doc).
        let nr = if (next - r as u128) * 8 >= (dk as u128).saturating_sub(r as u128) {
            next
        } else {
            next.max(r as u128 + least_delta(s0 - m * cap as u128, m, gaps))
        };
        if nr > dk as u128 {
            return Ok(None);
        }
        r = nr as u64;
    }
}

/// Least `δ >= 1` with `m δ - sum_i min(δ, g_i) > base` (see the module doc).
pub(crate) fn least_delta(base: u128, m: u128, gaps: &mut [u64]) -> u128 {
    gaps.sort_unstable();
    let mut passed: u128 = 0; // sum of gaps already below δ
    let mut active = gaps.len() as u128; // gaps above δ
    let mut prev: u128 = 0;
    let mut idx = 0;
    loop {
        let end = if idx < gaps.len() { Some(gaps[idx] as u128) } else { None };
        if m > active {
            // On [prev, end]: ψ(δ) = (m - active) δ - passed, increasing.
            let d = (base + passed) / (m - active) + 1;
            let d = d.max(prev).max(1);
            match end {
                None => return d,
                Some(e) if d <= e => return d,
                _ => {}
            }
        }
        let e = end.expect("with no gaps left, m > active = 0 returns above");
        passed += e;
        active -= 1;
        prev = e;
        idx += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Admission, System};
    use super::*;
    use rtsched_model::TaskSet;

    /// The fixed-point iteration as it was before saturated terms were set aside.
    /// The least fixed point for task `k` (`Some(R)` with `R <= D_k`), `None` if it exceeds
    /// `D_k`, `Err` when the step budget runs out.
    #[allow(clippy::too_many_arguments)]
    fn fixed_point_reference(
        sys: &System,
        table: &PairTable,
        row: usize,
        inv: &[f64],
        slack: &[u64],
        k: usize,
        start: u64,
        steps: &mut u64,
        limits: &Limits,
        gaps: &mut Vec<u64>,
    ) -> Result<Option<u64>, ()> {
        let n = sys.n();
        let m = sys.m as u128;
        let ck = sys.c[k];
        let dk = sys.d[k];
        let mut r = start.max(ck);
        let fail_at = m * (dk - ck + 1) as u128;
        loop {
            *steps += 1;
            if *steps > limits.max_steps {
                return Err(());
            }
            let cap = r - ck + 1;
            let mut s0: u128 = 0;
            gaps.clear();
            for i in 0..n {
                if i == k {
                    continue;
                }
                let ci = sys.c[i];
                // W_i(r) with R_i = D_i - S_i.
                let span = r + sys.d[i] - slack[i] - ci;
                let (q, rem) = divmod(span, sys.t[i], inv[i]);
                let (w, ramp) = if rem < ci { (q * ci + rem, ci - rem) } else { (q * ci + ci, 0) };
                let j = table.workload(row + i, ci, slack[i]);
                let term = w.min(j).min(cap);
                s0 += term as u128;
                if s0 >= fail_at {
                    return Ok(None); // f(r) > D_k already, and f(r) <= the least fixed point
                }
                // Lower bound of this term at r + δ: min(term + δ, min(w + ramp, j)).
                let v = (w + ramp).min(j);
                if v > term {
                    gaps.push(v - term);
                }
            }
            let next = ck as u128 + s0 / m;
            if next <= r as u128 {
                return Ok(Some(r)); // f(r) <= r: r is the least fixed point
            }
            // The plain step suffices when it covers a good part of the remaining way to D_k;
            // otherwise jump to the least δ the lower bound allows (see the module doc).
            let nr = if (next - r as u128) * 8 >= (dk as u128).saturating_sub(r as u128) {
                next
            } else {
                next.max(r as u128 + least_delta(s0 - m * cap as u128, m, gaps))
            };
            if nr > dk as u128 {
                return Ok(None);
            }
            r = nr as u64;
        }
    }

    /// Same fixed point, same step count, on random sets, slacks and starting points.
    #[test]
    fn fixed_point_matches_reference() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut compared = 0;
        let mut found = 0;
        let (mut gaps, mut gaps2, mut active) = (Vec::new(), Vec::new(), Vec::new());
        while compared < 20_000 {
            let m = (next() % 4 + 1) as u32;
            let n = (next() % 12 + 1) as usize;
            let scale = [1u64, 7, 1000][(next() % 3) as usize];
            let params: Vec<(u64, u64, u64)> = (0..n)
                .map(|_| {
                    let t = next() % 30 + 2;
                    let d = if next() % 2 == 0 { t } else { next() % t + 1 };
                    let c = next() % d.min(t / 2 + 2).max(1) + 1;
                    (c.min(d) * scale, d * scale, t * scale)
                })
                .collect();
            let ts = TaskSet::from_cdt(&params).unwrap();
            let sys = match System::admit(&ts, m) {
                Admission::Decided(_) => continue,
                Admission::Run(s) => s,
            };
            let mut table = PairTable::new(&sys);
            let inv: Vec<f64> = sys.t.iter().map(|&t| 1.0 / t as f64).collect();
            let slack: Vec<u64> =
                (0..n).map(|i| if next() % 2 == 0 { 0 } else { next() % (sys.d[i] - sys.c[i] + 1) }).collect();
            let limits = if next() % 4 == 0 {
                Limits { max_steps: next() % 6 + 1, max_interval: 1 << 40, ..Limits::default() }
            } else {
                Limits::default()
            };
            for k in 0..n {
                let row = table.row(&sys, k);
                let start = sys.c[k] + next() % (sys.d[k] - sys.c[k] + 1) * (next() % 2);
                let (mut s1, mut s2) = (0u64, 0u64);
                let a =
                    fixed_point(&sys, &table, row, &inv, &slack, k, start, &mut s1, &limits, &mut gaps, &mut active);
                let b = fixed_point_reference(&sys, &table, row, &inv, &slack, k, start, &mut s2, &limits, &mut gaps2);
                assert_eq!((a, s1), (b, s2), "m {m} {params:?} slack {slack:?} k {k} start {start}");
                found += matches!(a, Ok(Some(_))) as u32;
                compared += 1;
            }
        }
        assert!(found > 2000, "too few fixed points found: {found}");
    }

    fn brute(base: u128, m: u128, gaps: &[u64]) -> u128 {
        (1..).find(|&d: &u128| m * d > base + gaps.iter().map(|&g| d.min(g as u128)).sum::<u128>()).unwrap()
    }

    #[test]
    fn least_delta_matches_brute_force() {
        let mut x: u64 = 12345;
        for _ in 0..5000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let m = (x >> 60) as u128 % 4 + 1;
            let len = (x >> 50) as usize % 9;
            let mut gaps: Vec<u64> = (0..len).map(|j| ((x >> (j * 5)) % 40) + 1).collect();
            let base = (x >> 20) as u128 % 100;
            let want = brute(base, m, &gaps);
            assert_eq!(least_delta(base, m, &mut gaps), want, "base {base} m {m} gaps {gaps:?}");
        }
    }
}
