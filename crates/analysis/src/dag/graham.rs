//! Graham's bound for one DAG task alone on `m` identical cores.
//!
//! Graham, "Bounds on multiprocessing timing anomalies", SIAM J. Applied Mathematics 17(2),
//! 1969: any work-conserving (list) schedule of a precedence graph of volume `vol` and longest
//! path `len` on `m` processors finishes within `len + (vol − len)/m` — at every instant
//! either all `m` processors are busy or some node of a longest chain of still-incomplete work
//! runs. (Baruah et al., RTSS 2012 and Li et al., ECRTS 2014 use it for a DAG on
//! dedicated cores.) With a constrained deadline `D <= T` a job completes before the next
//! release, so each job is alone and the bound is its response time.

use crate::Verdict;
use rtsched_model::dag::DagTask;
use rtsched_model::exact::{ratio, Rational};

/// `len + (vol − len)/m`, exactly (`m >= 1`).
pub fn response_bound(t: &DagTask, m: u32) -> Rational {
    let (vol, len, m) = (t.volume() as u128, t.longest_path() as u128, m.max(1) as u128);
    ratio(m * len + vol - len, m)
}

/// Whether `len + (vol − len)/m <= D` (and `D <= T`, so that jobs do not overlap):
/// `m·len + vol − len <= m·D` in `u128`. `m = 0` is not schedulable.
pub fn single_task(t: &DagTask, m: u32) -> Verdict {
    if m == 0 || t.deadline() > t.period() {
        return Verdict::NotSchedulable;
    }
    Verdict::from_bool(fits(t.volume(), t.longest_path(), t.deadline(), m as u64))
}

/// `len + (vol − len)/m <= d` in integers (`len <= vol`, `m >= 1`).
pub(crate) fn fits(vol: u64, len: u64, d: u64, m: u64) -> bool {
    let (vol, len, d, m) = (vol as u128, len as u128, d as u128, m as u128);
    m * len + vol - len <= m * d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_and_verdict() {
        // Diamond: vol 19, len 16; on 2 cores 16 + 3/2 = 17.5.
        let t = DagTask::new(100, 18, vec![2, 10, 3, 4], vec![(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
        assert_eq!(response_bound(&t, 2), ratio(35, 2));
        assert_eq!(response_bound(&t, 1), ratio(19, 1));
        assert_eq!(single_task(&t, 2), Verdict::Schedulable);
        assert_eq!(single_task(&t, 1), Verdict::NotSchedulable);
        let tight = t.with_timing(100, 17).unwrap();
        assert_eq!(single_task(&tight, 2), Verdict::NotSchedulable, "17.5 > 17");
        assert_eq!(single_task(&tight, 3), Verdict::Schedulable, "16 + 1 = 17");
        assert_eq!(single_task(&t, 0), Verdict::NotSchedulable);
        assert_eq!(single_task(&t.with_timing(10, 18).unwrap(), 4), Verdict::NotSchedulable, "D > T");
    }
}
