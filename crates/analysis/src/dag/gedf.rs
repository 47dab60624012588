//! Global EDF for DAG tasks: capacity-augmentation and density tests.
//!
//! A scheduler has *capacity augmentation bound* `b` when every task set with total
//! utilization `U <= m/b` and every longest path `L_i <= D_i/b` is schedulable on `m` unit-speed
//! cores (the definition of Li, Agrawal, Lu & Gill, ECRTS 2013); a proven bound is thus a
//! sufficient test. Those papers state their results for implicit deadlines. For a
//! constrained deadline `D_i < T_i` the tests here are applied to the task
//! `(vol_i, L_i, D_i, T'_i = D_i)`: every job sequence of the original (releases at least
//! `T_i >= D_i` apart, same deadlines) is one of the modified task, so a proof for the modified
//! set covers the original; its utilization is the density `vol_i/D_i`.
//!
//! * [`li2013`]: `b = 4 − 2/m` (Li, Agrawal, Lu & Gill, "Analysis of Global EDF for Parallel
//!   Tasks", ECRTS 2013, the capacity augmentation bound of G-EDF, its Corollary 6 in the
//!   numbering cited by the DAG-scheduling tool of Verucchi et al.):
//!   `Σ vol_i/D_i <= m / (4 − 2/m)` and `L_i <= D_i / (4 − 2/m)`, i.e. in integers
//!   `(4m − 2) Σ vol_i/D_i <= m²` and `(4m − 2) L_i <= m D_i`.
//! * [`li2014`]: `b = (3 + √5)/2 ≈ 2.618` (Li, Chen, Agrawal, Lu & Gill, "Analysis of Federated
//!   and Global Scheduling for Parallel Real-Time Tasks", ECRTS 2014, the capacity augmentation
//!   bound of G-EDF): `(3 + √5) U <= 2m` and `(3 + √5) L_i <= 2 D_i`, decided exactly as
//!   `2m − 3U >= 0 and 5U² <= (2m − 3U)²` (likewise for `L_i`, `D_i`).
//! * [`bonifaci2013`]: the polynomial-time G-EDF test of Bonifaci, Marchetti-Spaccamela,
//!   Stiller & Wiese, "Feasibility Analysis in the Sporadic DAG Task Model", ECRTS 2013 (Theorem
//!   21 in the numbering of the long version, as cited by the DAG-scheduling tool), for
//!   constrained deadlines: `L_i <= D_i/3` for every task and `Σ vol_i/D_i < (m + 1/2)/3`,
//!   i.e. `3 L_i <= D_i` and `6 Σ vol_i/D_i < 2m + 1`.
//!
//! The papers were not at hand when this was written (they are not among the seeds); the
//! statements above are from the papers' abstracts and from the open implementation named,
//! and `tests/dag_oracle.rs` checks them against an exact node-level G-EDF simulation.

use super::precheck;
use crate::Verdict;
use rtsched_model::dag::DagSet;
use rtsched_model::exact::{int, sum_ratios, Rational};
use rtsched_model::Stop;

/// `Σ vol_i / D_i`, exactly.
fn density_sum(set: &DagSet) -> Rational {
    sum_ratios(set.iter().map(|t| (t.volume() as u128, t.deadline() as u128)), &Stop::never()).expect("never stopped")
}

/// Li, Agrawal, Lu & Gill, ECRTS 2013: capacity augmentation bound `4 − 2/m`.
pub fn li2013(set: &DagSet, m: u32) -> Verdict {
    if let Some(v) = precheck(set, m) {
        return v;
    }
    let m = m as u128;
    let b_num = 4 * m - 2; // b = (4m − 2)/m
    if set.iter().any(|t| b_num * t.longest_path() as u128 > m * t.deadline() as u128) {
        return Verdict::NotSchedulable;
    }
    Verdict::from_bool(density_sum(set) * int(b_num as i128) <= int((m * m) as i128))
}

/// `(3 + √5) x <= 2 y` for `x, y >= 0`, exactly: `2y − 3x >= 0` and `5x² <= (2y − 3x)²`.
fn golden_le(x: &Rational, y: &Rational) -> bool {
    let r = int(2) * y - int(3) * x;
    r >= int(0) && int(5) * x * x <= &r * &r
}

/// Li, Chen, Agrawal, Lu & Gill, ECRTS 2014: capacity augmentation bound `(3 + √5)/2`.
pub fn li2014(set: &DagSet, m: u32) -> Verdict {
    if let Some(v) = precheck(set, m) {
        return v;
    }
    // L_i (3 + √5) <= 2 D_i in integers: 2D − 3L >= 0 and 5L² <= (2D − 3L)².
    let path_ok = set.iter().all(|t| {
        let (l, d) = (t.longest_path() as i128, t.deadline() as i128);
        let r = 2 * d - 3 * l;
        r >= 0 && 5 * l * l <= r * r
    });
    if !path_ok {
        return Verdict::NotSchedulable;
    }
    Verdict::from_bool(golden_le(&density_sum(set), &int(m as i128)))
}

/// Bonifaci, Marchetti-Spaccamela, Stiller & Wiese, ECRTS 2013: `L_i <= D_i/3` and
/// `Σ vol_i/D_i < (m + 1/2)/3`.
pub fn bonifaci2013(set: &DagSet, m: u32) -> Verdict {
    if let Some(v) = precheck(set, m) {
        return v;
    }
    if set.iter().any(|t| 3 * t.longest_path() as u128 > t.deadline() as u128) {
        return Verdict::NotSchedulable;
    }
    Verdict::from_bool(density_sum(set) * int(6) < int(2 * m as i128 + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::dag::DagTask;

    fn fork(width: usize, c: u64, d: u64) -> DagTask {
        // width parallel nodes of cost c between a source and a sink of cost 1.
        let mut edges = Vec::new();
        for k in 1..=width as u32 {
            edges.push((0, k));
            edges.push((k, width as u32 + 1));
        }
        let mut w = vec![1];
        w.extend(std::iter::repeat_n(c, width));
        w.push(1);
        DagTask::new(d, d, w, edges).unwrap()
    }

    #[test]
    fn boundaries_are_exact() {
        // m = 2: b = 3 for Li 2013. One task, len 3·1 + ... : fork(2, 1, D): vol 4, len 3.
        // L <= D/3 needs D >= 9; U = 4/D <= 2/3 needs D >= 6.
        let at = |d| DagSet::new(vec![fork(2, 1, d)]);
        assert_eq!(li2013(&at(9), 2), Verdict::Schedulable);
        assert_eq!(li2013(&at(8), 2), Verdict::NotSchedulable);
        // Li 2014, b = 2.618...: L = 3 needs D >= 7.854 → 8; U = 4/8 <= 2/2.618 = 0.764.
        assert_eq!(li2014(&at(8), 2), Verdict::Schedulable);
        assert_eq!(li2014(&at(7), 2), Verdict::NotSchedulable);
        // Utilization side of Li 2014 at m = 1: U <= 1/2.618 = 0.38197; L small.
        let wide = |d| DagSet::new(vec![fork(20, 1, d)]); // vol 22, len 3
        assert_eq!(li2014(&wide(58), 1), Verdict::Schedulable, "22/58 = 0.3793");
        assert_eq!(li2014(&wide(57), 1), Verdict::NotSchedulable, "22/57 = 0.3860");
        // Bonifaci: 3L <= D and 6U < 2m + 1 (strict).
        assert_eq!(bonifaci2013(&at(9), 1), Verdict::Schedulable, "3L = 9 <= 9, 6·4/9 = 2.67 < 3");
        assert_eq!(bonifaci2013(&at(8), 4), Verdict::NotSchedulable, "3L = 9 > 8");
        let eq = DagSet::new(vec![fork(2, 1, 16), fork(2, 1, 16)]); // 6 · 8/16 = 3, not < 3
        assert_eq!(bonifaci2013(&eq, 1), Verdict::NotSchedulable);
        for f in [li2013, li2014, bonifaci2013] {
            assert_eq!(f(&DagSet::default(), 1), Verdict::Schedulable);
            assert_eq!(f(&at(50), 0), Verdict::NotSchedulable);
            let arb = DagSet::new(vec![fork(2, 1, 50).with_timing(40, 50).unwrap()]);
            assert_eq!(f(&arb, 4), Verdict::NotSchedulable, "D > T is outside the model");
        }
    }
}
