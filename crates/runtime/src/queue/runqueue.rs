//! The queued (not running) jobs of one push/pull run-queue, ordered by priority rank: the
//! *pushable set* of SCHED_DEADLINE (Lelli et al., 2011, §4, Fig. 2: `pushable_tasks_root`, "the
//! red-black tree of tasks that can be migrated, since they are queued but not running ...
//! ordered by increasing deadline"). Here a sorted array with the earliest job first: a
//! run-queue holds a handful of jobs (n/m on average), for which a binary search plus a short
//! `memmove` beats a tree's pointer chasing, and the two earliest — the `earliest_dl` cache of
//! the paper — are the first two slots. Preallocated for every task (a task has at most one
//! queued job), so it never allocates on the scheduling path.
//!
//! Sequential: the run-queue's lock serialises every operation (the caller holds it).

use super::release::Job;

/// Jobs ordered by rank (ascending = decreasing priority); ranks are distinct.
#[derive(Debug, Clone, Default)]
pub struct RunQueue {
    jobs: Vec<(u64, Job)>,
}

impl RunQueue {
    /// An empty queue with room for `cap` jobs.
    pub fn with_capacity(cap: usize) -> RunQueue {
        RunQueue { jobs: Vec::with_capacity(cap) }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Inserts `job` with rank `rank`. Precondition: no queued job has this rank.
    #[inline]
    pub fn insert(&mut self, rank: u64, job: Job) {
        let i = self.jobs.partition_point(|&(r, _)| r < rank);
        self.jobs.insert(i, (rank, job));
    }

    /// Removes and returns the job of rank `rank`, if queued.
    #[inline]
    pub fn remove(&mut self, rank: u64) -> Option<Job> {
        let i = self.jobs.partition_point(|&(r, _)| r < rank);
        (self.jobs.get(i).is_some_and(|&(r, _)| r == rank)).then(|| self.jobs.remove(i).1)
    }

    /// Whether a job of rank `rank` is queued.
    #[inline]
    pub fn contains(&self, rank: u64) -> bool {
        self.jobs.binary_search_by_key(&rank, |&(r, _)| r).is_ok()
    }

    /// The earliest (highest-priority) queued job.
    #[inline]
    pub fn first(&self) -> Option<(u64, Job)> {
        self.jobs.first().copied()
    }

    /// The second earliest queued job.
    #[inline]
    pub fn second(&self) -> Option<(u64, Job)> {
        self.jobs.get(1).copied()
    }

    /// Removes and returns the earliest queued job.
    #[inline]
    pub fn pop_first(&mut self) -> Option<(u64, Job)> {
        (!self.jobs.is_empty()).then(|| self.jobs.remove(0))
    }

    /// The queued jobs, earliest first.
    pub fn iter(&self) -> impl Iterator<Item = &(u64, Job)> {
        self.jobs.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rtsched_policy::Prio;
    use std::collections::BTreeMap;

    fn job(task: u32) -> Job {
        Job { prio: Prio { key: task as u64, task, job: 0 }, release: 0, deadline: 0 }
    }

    proptest! {
        /// Oracle: a `BTreeMap` from rank to job under random inserts, removals and pops.
        #[test]
        fn the_queue_equals_a_sorted_map(ops in proptest::collection::vec((0u8..3, 0u64..30), 0..200)) {
            let mut q = RunQueue::with_capacity(4);
            let mut want: BTreeMap<u64, Job> = BTreeMap::new();
            for (op, r) in ops {
                match op {
                    0 if !want.contains_key(&r) => {
                        q.insert(r, job(r as u32));
                        want.insert(r, job(r as u32));
                    }
                    1 => prop_assert_eq!(q.remove(r), want.remove(&r)),
                    _ => prop_assert_eq!(q.pop_first(), want.pop_first()),
                }
                let mut it = want.iter().map(|(&r, &j)| (r, j));
                prop_assert_eq!(q.first(), it.next());
                prop_assert_eq!(q.second(), it.next());
                prop_assert_eq!(q.len(), want.len());
                prop_assert_eq!(q.contains(r), want.contains_key(&r));
                prop_assert_eq!(q.iter().copied().collect::<Vec<_>>(), want.iter().map(|(&r, &j)| (r, j)).collect::<Vec<_>>());
            }
        }
    }
}
