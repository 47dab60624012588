//! BCL-iterative: the slack-based iterative test for global EDF.
//!
//! M. Bertogna, M. Cirinei, G. Lipari, "Schedulability analysis of global scheduling
//! algorithms on multiprocessor platforms", IEEE TPDS 20(4), 2009, Section 5 (EDF) and the
//! iterative procedure of Section 6. Every task starts with slack `S_i = 0`. In rounds, each
//! task's slack is recomputed (in place, most-likely-to-fail first; the order never changes the verdict) as
//!
//! ```text
//!     J_k(i) = N_i C_i + min(C_i, max(0, D_k - N_i T_i - S_i)),   N_i = floor((D_k - D_i)/T_i) + 1
//!     S_k    = D_k - C_k - floor( (1/m) sum_{i != k} min(J_k(i), D_k - C_k + 1) )
//! ```
//!
//! and kept only when it is non-negative (a negative value leaves the previous one). The set
//! is schedulable as soon as one round finds every `S_k >= 0` (equivalently, since a task that
//! passes keeps passing, once every task has passed); the test fails when a round changes no
//! slack, or at once when a task fails even against the largest possible slacks
//! `S_i = D_i - C_i` of the others (it would fail in every round). Slacks only grow (the bounds `J` shrink as slacks grow), so the
//! procedure terminates; `Limits::max_steps` bounds the number of task evaluations (those of
//! the rounds and of the downward rounds against the largest slacks) and the test answers
//! `GaveUp` when it is reached.
//!
//! Integer time throughout (the `+ 1` and the floor are the paper's discrete-time form): exact.
//! Assumptions: sporadic tasks, constrained deadlines; `D > T` is answered `NotSchedulable` by
//! the common admission.
//!
//! Dominance relied on in tests: in its first round (all slacks 0) `J_k(i)` equals BCL 2005's
//! `W_i`, and `sum min(W_i, X) < m X` (or `= m X` with a witness) implies
//! `sum min(W_i, X + 1) < m (X + 1)` (at most `m - 1` terms reach `X`), so this test accepts
//! every set that [`super::interference`] accepts.

use super::{by_laxity, PairTable, System};
use crate::{Limits, Verdict};

/// `Some(slack)` if task `k` passes with the others' slacks `slack`, else `None`.
#[inline]
fn update(sys: &System, table: &PairTable, row: usize, k: usize, slack: &[u64]) -> Option<u64> {
    let n = sys.n();
    let x1 = sys.d[k] - sys.c[k] + 1;
    let (base, resid) = (&table.base[row..row + n], &table.resid[row..row + n]);
    let (c, slack) = (&sys.c[..n], &slack[..n]);
    // Every term including i = k (subtracted after): a branch-free loop over equal-length
    // slices. Each term is at most x1 <= 2^53, so a u64 sum is exact for n <= 2^11.
    let term = |b: u64, r: i64, ci: u64, si: u64| -> u64 {
        let carry = (r - si as i64).max(0).min(ci as i64) as u64;
        (b + carry).min(x1)
    };
    let sum: u128 = if n <= 2048 {
        let mut s: u64 = 0;
        for (((&b, &r), &ci), &si) in base.iter().zip(resid).zip(c).zip(slack) {
            s += term(b, r, ci, si);
        }
        (s - term(base[k], resid[k], c[k], slack[k])) as u128
    } else {
        (0..n).filter(|&i| i != k).map(|i| term(base[i], resid[i], c[i], slack[i]) as u128).sum()
    };
    let q = match u64::try_from(sum) {
        Ok(s) => (s / sys.m) as u128,
        Err(_) => sum / sys.m as u128,
    };
    (q < x1 as u128).then(|| (x1 - 1) - q as u64)
}

/// The evaluation as it was before the branch-free loop (reference for the tests).
#[cfg(test)]
#[allow(clippy::needless_range_loop)] // several parallel arrays indexed by task
fn update_reference(sys: &System, table: &PairTable, row: usize, k: usize, slack: &[u64]) -> Option<u64> {
    let x1 = sys.d[k] - sys.c[k] + 1;
    let mut sum: u128 = 0;
    for i in 0..sys.n() {
        if i != k {
            sum += table.workload(row + i, sys.c[i], slack[i]).min(x1) as u128;
        }
    }
    let q = match u64::try_from(sum) {
        Ok(s) => (s / sys.m) as u128,
        Err(_) => sum / sys.m as u128,
    };
    (q < x1 as u128).then(|| (x1 - 1) - q as u64)
}

pub(crate) fn check(sys: &System, limits: &Limits) -> Verdict {
    let n = sys.n();
    let mut table = PairTable::new(sys);
    let order = by_laxity(sys);
    let mut slack = vec![0u64; n];
    // The largest slack any task can have: the best case for the others.
    let best: Vec<u64> = (0..n).map(|i| sys.d[i] - sys.c[i]).collect();
    // Upper bounds on the slacks the procedure can reach, iterated down from the largest
    // possible ones (see `response_time`): a task failing against them fails forever.
    let mut upper = best.clone();
    let mut upper_stable = false;
    let mut steps: u64 = 0;
    // As in `response_time`: a task that passed once passes in every later round (bounds
    // only shrink), so the paper's "all pass in one round" is reached when every task has
    // passed once; a task whose inputs have not changed since its last evaluation is skipped.
    let mut passed = vec![false; n];
    let mut n_passed = 0usize;
    let mut version: u64 = 0;
    let mut seen: Vec<Option<u64>> = vec![None; n];
    let mut own: Vec<u64> = vec![0; n];
    // Most random sets that fail, fail against the largest slacks already: start with the
    // first downward round, most-likely-to-fail task first.
    let mut failed = true;
    loop {
        if failed && !upper_stable {
            upper_stable = true;
            for &k in &order {
                // Bounded like every evaluation (as in `response_time`): a downward round
                // over a huge set is n evaluations of O(n) each.
                steps += 1;
                if limits.exhausted(steps) {
                    return Verdict::GaveUp;
                }
                let row = table.row(sys, k);
                match update(sys, &table, row, k, &upper) {
                    None => return Verdict::NotSchedulable,
                    Some(s) => {
                        if s != upper[k] {
                            upper[k] = s;
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
            steps += 1;
            if limits.exhausted(steps) {
                return Verdict::GaveUp;
            }
            let row = table.row(sys, k);
            match update(sys, &table, row, k, &slack) {
                Some(s) => {
                    if s != slack[k] {
                        debug_assert!(s > slack[k], "slacks only grow");
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
                None => failed = true,
            }
        }
        if !changed {
            return Verdict::NotSchedulable;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Admission, System};
    use super::*;
    use rtsched_model::TaskSet;

    /// The procedure with the evaluation as it was before the branch-free loop.
    fn check_reference(sys: &System, limits: &Limits) -> Verdict {
        let n = sys.n();
        let mut table = PairTable::new(sys);
        let order = by_laxity(sys);
        let mut slack = vec![0u64; n];
        // The largest slack any task can have: the best case for the others.
        let best: Vec<u64> = (0..n).map(|i| sys.d[i] - sys.c[i]).collect();
        // Upper bounds on the slacks the procedure can reach, iterated down from the largest
        // possible ones (see `response_time`): a task failing against them fails forever.
        let mut upper = best.clone();
        let mut upper_stable = false;
        let mut steps: u64 = 0;
        // As in `response_time`: a task that passed once passes in every later round (bounds
        // only shrink), so the paper's "all pass in one round" is reached when every task has
        // passed once; a task whose inputs have not changed since its last evaluation is skipped.
        let mut passed = vec![false; n];
        let mut n_passed = 0usize;
        let mut version: u64 = 0;
        let mut seen: Vec<Option<u64>> = vec![None; n];
        let mut own: Vec<u64> = vec![0; n];
        // Most random sets that fail, fail against the largest slacks already: start with the
        // first downward round, most-likely-to-fail task first.
        let mut failed = true;
        loop {
            if failed && !upper_stable {
                upper_stable = true;
                for &k in &order {
                    steps += 1;
                    if steps > limits.max_steps {
                        return Verdict::GaveUp;
                    }
                    let row = table.row(sys, k);
                    match update_reference(sys, &table, row, k, &upper) {
                        None => return Verdict::NotSchedulable,
                        Some(s) => {
                            if s != upper[k] {
                                upper[k] = s;
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
                steps += 1;
                if steps > limits.max_steps {
                    return Verdict::GaveUp;
                }
                let row = table.row(sys, k);
                match update_reference(sys, &table, row, k, &slack) {
                    Some(s) => {
                        if s != slack[k] {
                            debug_assert!(s > slack[k], "slacks only grow");
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
                    None => failed = true,
                }
            }
            if !changed {
                return Verdict::NotSchedulable;
            }
        }
    }

    /// The branch-free evaluation gives the same verdict as the reference on random sets, with
    /// generous and with tight step budgets (so that `GaveUp` is compared too).
    #[test]
    fn evaluation_matches_reference() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut compared = 0;
        let mut sched = 0;
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
            let limits = if next() % 4 == 0 {
                Limits { max_steps: next() % 40 + 1, max_interval: 1 << 40, ..Limits::default() }
            } else {
                Limits::default()
            };
            let a = check(&sys, &limits);
            let b = check_reference(&sys, &limits);
            assert_eq!(a, b, "m {m} {params:?} {limits:?}");
            sched += (a == Verdict::Schedulable) as u32;
            compared += 1;
        }
        assert!(sched > 1000, "too few schedulable sets to compare: {sched}");
    }
}
