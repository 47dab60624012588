//! Federated scheduling of DAG tasks.
//!
//! Li, Chen, Agrawal, Lu & Gill, "Analysis of Federated and Global Scheduling for Parallel
//! Real-Time Tasks", ECRTS 2014 (federated scheduling, stated there for implicit deadlines;
//! section and equation numbers not checked, see the caveat in `super::gedf`): a
//! *high-utilization* task (`C_i > D_i`, i.e. one core is not enough) gets
//!
//! ```text
//!     n_i = ⌈(C_i − L_i) / (D_i − L_i)⌉
//! ```
//!
//! dedicated cores, on which any greedy (work-conserving) schedule of its DAG finishes within
//! `L_i + (C_i − L_i)/n_i <= D_i` (Graham's bound, [`super::graham`]); the *low-utilization*
//! tasks (`C_i <= D_i`) are executed as sequential tasks `(C_i, D_i, T_i)` (each job's nodes
//! one after the other in topological order) on the remaining `m − Σ n_i` cores by a
//! multiprocessor scheduler for sequential tasks. The paper analyses a partitioned one; here the
//! low tasks are placed by [`crate::partition::partition`] with an exact uniprocessor admission
//! test, by default first-fit decreasing density with EDF admission by the processor demand
//! criterion (QPA), so each light core runs preemptive EDF ([`LowPlacement::default`]).
//!
//! Constrained deadlines (`D_i <= T_i`): the classification and `n_i` use `D_i`, as in the
//! constrained-deadline federated scheduling of Baruah, DATE 2015; with `D_i = T_i` this is
//! the paper's rule. A job finishes within `D_i <= T_i`, so jobs of a task never overlap on its
//! cores. A high task with `L_i = D_i` cannot be helped by any number of cores.

use crate::partition::{partition, Admission, Fit, Order, PartitionOutcome};
use crate::{Limits, Verdict};
use rtsched_model::dag::DagSet;
use rtsched_model::{Task, TaskSet};

/// How the low-utilization tasks are partitioned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LowPlacement {
    pub fit: Fit,
    pub order: Order,
    pub admission: Admission,
}

impl Default for LowPlacement {
    /// First fit, decreasing density, EDF admission by QPA (exact).
    fn default() -> Self {
        LowPlacement { fit: Fit::First, order: Order::DecreasingDensity, admission: Admission::Edf }
    }
}

/// Where each task runs under federated scheduling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FederatedPlan {
    /// Per high-utilization task (by index, in index order): its dedicated cores, consecutive
    /// from core 0.
    pub high: Vec<(usize, std::ops::Range<u32>)>,
    /// The light cores, from core `Σ n_i` on: the (DAG-set) indices of the low tasks on each.
    pub low: Vec<Vec<usize>>,
}

/// The answer of [`federated`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Federated {
    Schedulable(FederatedPlan),
    /// Why not, in one line naming the task.
    NotSchedulable(String),
}

impl Federated {
    pub fn verdict(&self) -> Verdict {
        match self {
            Federated::Schedulable(_) => Verdict::Schedulable,
            Federated::NotSchedulable(_) => Verdict::NotSchedulable,
        }
    }
}

/// `⌈(C − L)/(D − L)⌉` for `C > D >= L`; `None` when `L = D`.
pub fn cores_needed(vol: u64, len: u64, d: u64) -> Option<u64> {
    (d > len).then(|| (vol - len).div_ceil(d - len))
}

/// Federated scheduling of `set` on `m` cores (see the module doc). A partition that gives up
/// (its [`Limits`]) counts as not placed.
pub fn federated(set: &DagSet, m: u32, low: LowPlacement, limits: &Limits) -> Federated {
    if m == 0 {
        return Federated::NotSchedulable("no cores (m = 0)".into());
    }
    if let Some(i) = set.iter().position(|t| t.deadline() > t.period()) {
        return Federated::NotSchedulable(format!(
            "task {i} has a deadline above its period; federated scheduling needs D <= T"
        ));
    }
    let mut high = Vec::new();
    let mut next: u64 = 0;
    let mut lows: Vec<usize> = Vec::new();
    for (i, t) in set.iter().enumerate() {
        let (vol, len, d) = (t.volume(), t.longest_path(), t.deadline());
        if vol <= d {
            lows.push(i);
            continue;
        }
        let Some(n) = cores_needed(vol, len, d) else {
            return Federated::NotSchedulable(format!(
                "task {i}: its longest path equals its deadline ({d} ns) and its volume ({vol} ns) exceeds it: no number of cores suffices"
            ));
        };
        if next + n > m as u64 {
            return Federated::NotSchedulable(format!(
                "task {i} needs {n} dedicated cores, and only {} of the {m} are left",
                m as u64 - next.min(m as u64)
            ));
        }
        high.push((i, next as u32..(next + n) as u32));
        next += n;
    }
    let m_low = m - next as u32;
    if lows.is_empty() {
        return Federated::Schedulable(FederatedPlan { high, low: vec![Vec::new(); m_low as usize] });
    }
    let seq: Vec<Task> = lows.iter().map(|&i| set[i].sequential()).collect();
    let ts = match TaskSet::new(seq) {
        Ok(ts) => ts,
        Err(e) => return Federated::NotSchedulable(format!("the low tasks do not form a task set: {e}")),
    };
    match partition(&ts, m_low, low.fit, low.order, low.admission, limits) {
        PartitionOutcome::Placed(p) => Federated::Schedulable(FederatedPlan {
            high,
            low: p.cpus.into_iter().map(|cpu| cpu.into_iter().map(|k| lows[k]).collect()).collect(),
        }),
        PartitionOutcome::Failed { task, .. } => Federated::NotSchedulable(format!(
            "low-utilization task {} fits on none of the {m_low} cores left after the high-utilization tasks ({})",
            lows[task],
            low.admission.label()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::dag::DagTask;

    #[test]
    fn cores_of_high_tasks_and_partition_of_low_ones() {
        // Task 0: 1 source, 6 parallel nodes of 4, 1 sink: vol 26, len 6, D 10 → ⌈20/4⌉ = 5 cores.
        let mut edges = Vec::new();
        for k in 1..=6 {
            edges.push((0, k));
            edges.push((k, 7));
        }
        let mut w = vec![1u64];
        w.extend([4; 6]);
        w.push(1);
        let heavy = DagTask::new(10, 10, w, edges).unwrap();
        assert_eq!(cores_needed(26, 6, 10), Some(5));
        let light = DagTask::new(10, 10, vec![3, 2], vec![(0, 1)]).unwrap();
        let set = DagSet::new(vec![light.clone(), heavy.clone(), light.clone(), light]);
        let lim = Limits::default();
        match federated(&set, 7, LowPlacement::default(), &lim) {
            Federated::Schedulable(p) => {
                assert_eq!(p.high, vec![(1, 0..5)]);
                // Three lights of density 1/2 on two cores: first fit puts two on the first.
                assert_eq!(p.low, vec![vec![0, 2], vec![3]]);
            }
            other => panic!("{other:?}"),
        }
        let e = federated(&set, 6, LowPlacement::default(), &lim);
        assert!(matches!(&e, Federated::NotSchedulable(r) if r.contains("low-utilization task 3")), "{e:?}");
        let e = federated(&set, 4, LowPlacement::default(), &lim);
        assert!(matches!(&e, Federated::NotSchedulable(r) if r.contains("task 1 needs 5")), "{e:?}");
        // L = D with C > D: impossible.
        let stuck = DagTask::new(10, 6, vec![1, 4, 4, 1], vec![(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
        assert_eq!(cores_needed(10, 6, 6), None);
        assert_eq!(
            federated(&DagSet::new(vec![stuck]), 16, LowPlacement::default(), &lim).verdict(),
            Verdict::NotSchedulable
        );
        assert_eq!(federated(&DagSet::default(), 1, LowPlacement::default(), &lim).verdict(), Verdict::Schedulable);
    }
}
