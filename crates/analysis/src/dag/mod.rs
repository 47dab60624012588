//! Schedulability of sporadic DAG tasks (`rtsched_model::dag`; design note: `docs/dag.md`).
//!
//! * [`graham`]: Graham's list-scheduling bound for one DAG alone on `m` cores (Graham, SIAM
//!   J. Applied Mathematics 1969), `R <= len + (vol − len)/m`.
//! * [`federated`]: federated scheduling (Li, Chen, Agrawal, Lu & Gill, ECRTS 2014): dedicated
//!   cores per high-density task, the others partitioned as sequential tasks with exact
//!   admission.
//! * [`gedf`]: global EDF: the capacity-augmentation tests of Li, Agrawal, Lu & Gill, ECRTS
//!   2013 (`b = 4 − 2/m`) and of Li, Chen, Agrawal, Lu & Gill, ECRTS 2014 (`b = (3 + √5)/2`),
//!   and the polynomial-time test of Bonifaci, Marchetti-Spaccamela, Stiller & Wiese, ECRTS
//!   2013.
//!
//! Every verdict is exact: integer ns compared by cross-multiplication in `u128`, sums of
//! fractions as exact rationals (`rtsched_model::exact`), the irrational `√5` by squaring.
//! Scope, as in the papers: constrained deadlines (`D <= T`); a set with some `D > T` is
//! answered [`Verdict::NotSchedulable`] (the test cannot prove it), as the sequential G-EDF
//! tests do. `m = 0` is not schedulable, the empty set is.
//!
//! [`report`] runs them by name for `rtsched analyze` (their own name list, apart from the
//! sequential tests of `crate::report`).

pub mod federated;
pub mod fonseca;
pub mod fonseca_chain;
pub mod gedf;
pub mod graham;
pub mod melani;
pub mod report;
#[cfg(test)]
mod test_rng;

use crate::Verdict;
use rtsched_model::dag::DagSet;

/// The common preconditions: `Some(verdict)` when they decide (`m = 0`, an empty set, a
/// deadline above its period), `None` when the test must run.
pub(crate) fn precheck(set: &DagSet, m: u32) -> Option<Verdict> {
    if m == 0 {
        return Some(Verdict::NotSchedulable);
    }
    if set.is_empty() {
        return Some(Verdict::Schedulable);
    }
    if set.iter().any(|t| t.deadline() > t.period()) {
        return Some(Verdict::NotSchedulable);
    }
    None
}
