//! BCL-iterative: the slack-based iterative test for global EDF.
//!
//! M. Bertogna, M. Cirinei, G. Lipari, "Schedulability analysis of global scheduling
//! algorithms on multiprocessor platforms", IEEE TPDS 20(4), 2009, Section 5 (EDF) and the
//! iterative procedure of Section 6. Every task starts with slack `S_i = 0`. In rounds, each
//! task's slack is recomputed (in place, in order of increasing laxity) as
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
//! procedure terminates; `Limits::max_steps` bounds the number of task updates
//! (`rounds * n`) and the test answers `GaveUp` when it is reached.
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
                steps += 1;
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
            if steps > limits.max_steps {
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
