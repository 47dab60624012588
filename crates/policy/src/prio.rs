//! The priority order, defined once for every policy.
//!
//! A job's priority is the triple `(key, task index, job sequence number)` compared
//! lexicographically; *smaller is higher*. For EDF the key is the absolute deadline, so ties
//! are broken by task index and then by job sequence number (the rule of DESIGN.md). For
//! fixed priorities the key is the task's rank in rate- or deadline-monotonic order (Liu &
//! Layland 1973; Leung & Whitehead 1982), with ties in period/deadline broken by task index.

use rtsched_model::{TaskSet, Time};

/// A job's priority, which also identifies the job (task index, sequence number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Prio {
    /// EDF: absolute deadline (ns). FP: the task's rank (0 = highest).
    pub key: u64,
    pub task: u32,
    pub job: u32,
}

impl Prio {
    /// `true` iff `self` has strictly higher priority than `other`.
    #[inline]
    pub fn higher_than(&self, other: &Prio) -> bool {
        self < other
    }

    /// The order as one integer: `(key, task, job)` packed big-end first, so that
    /// `a < b` iff `a.packed() < b.packed()`.
    #[inline]
    pub fn packed(&self) -> u128 {
        (self.key as u128) << 64 | (self.task as u128) << 32 | self.job as u128
    }
}

/// Fixed-priority order of P-FP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FpOrder {
    /// Shorter period = higher priority.
    RateMonotonic,
    /// Shorter relative deadline = higher priority.
    DeadlineMonotonic,
}

/// How a job's priority key is derived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PriorityRule {
    /// Earliest absolute deadline first.
    Edf,
    /// Fixed task priorities: `ranks[task]` (0 = highest).
    Fixed(Vec<u32>),
}

impl PriorityRule {
    /// The fixed-priority rule of `order` over `ts` (ties by task index).
    pub fn fixed(ts: &TaskSet, order: FpOrder) -> PriorityRule {
        let mut idx: Vec<usize> = (0..ts.len()).collect();
        idx.sort_by_key(|&i| {
            let t = &ts[i];
            (if order == FpOrder::RateMonotonic { t.period } else { t.deadline }, i)
        });
        let mut ranks = vec![0u32; ts.len()];
        for (rank, &i) in idx.iter().enumerate() {
            ranks[i] = rank as u32;
        }
        PriorityRule::Fixed(ranks)
    }

    /// The priority of job `job` of `task` whose absolute deadline is `deadline`.
    #[inline]
    pub fn prio(&self, task: u32, job: u32, deadline: Time) -> Prio {
        let key = match self {
            PriorityRule::Edf => deadline,
            PriorityRule::Fixed(r) => r.get(task as usize).copied().unwrap_or(u32::MAX) as u64,
        };
        Prio { key, task, job }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_by_task_then_job() {
        let a = Prio { key: 10, task: 1, job: 5 };
        let b = Prio { key: 10, task: 2, job: 0 };
        let c = Prio { key: 10, task: 1, job: 6 };
        let d = Prio { key: 9, task: 9, job: 9 };
        assert!(a.higher_than(&b) && a.higher_than(&c) && d.higher_than(&a));
        assert!(!a.higher_than(&a));
        for (x, y) in [(a, b), (a, c), (d, a), (b, c)] {
            assert_eq!(x.cmp(&y), x.packed().cmp(&y.packed()));
        }
    }

    #[test]
    fn rate_and_deadline_monotonic_ranks() {
        let ts = TaskSet::from_cdt(&[(1, 9, 10), (1, 5, 20), (1, 9, 10), (1, 3, 5)]).unwrap();
        assert_eq!(PriorityRule::fixed(&ts, FpOrder::RateMonotonic), PriorityRule::Fixed(vec![1, 3, 2, 0]));
        assert_eq!(PriorityRule::fixed(&ts, FpOrder::DeadlineMonotonic), PriorityRule::Fixed(vec![2, 1, 3, 0]));
    }
}
