//! The release queue and the per-task job book of one release domain (seed 001 §3 "release
//! queue"): a min-heap of due times, coinciding releases handled in one handler call (like
//! LITMUS^RT's shared release timers), and per task the counts of released and completed jobs.
//! Sequential: the caller's lock serialises it.

use std::cmp::Ordering;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A job: task index, 0-based sequence number, absolute due release time and deadline
/// (monotonic ns). Jobs are ordered by EDF priority: earlier deadline first, ties by lower
/// task index (then sequence number) — the tie-break LITMUS^RT uses (seed 001 §2 fn. 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Job {
    pub task: u32,
    pub seq: u32,
    pub release: u64,
    pub deadline: u64,
}

impl Job {
    /// Priority key; smaller = higher priority.
    #[inline]
    pub fn key(&self) -> (u64, u32, u32) {
        (self.deadline, self.task, self.seq)
    }
    /// True if `self` has strictly higher priority than `other`.
    #[inline]
    pub fn higher_than(&self, other: &Job) -> bool {
        self.key() < other.key()
    }
}

impl PartialOrd for Job {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Job {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

/// Static task parameters a plugin needs (ns).
#[derive(Debug, Clone, Copy)]
pub struct TaskParams {
    pub deadline: u64,
    pub period: u64,
}

/// Release and completion bookkeeping for a subset of tasks (one release domain): the
/// release queue (a min-heap of due times, seed 001 §3 "release queue"; coinciding releases
/// are handled in one handler call, like LITMUS^RT's shared timers) and, per task, the
/// counts of released and completed jobs. Jobs of a task run in order: a job released
/// while its predecessor is incomplete is *backlogged* (released, recorded, not ready) and
/// becomes ready when the predecessor completes — no job is ever dropped.
#[derive(Debug)]
pub struct TaskBook {
    params: Vec<TaskParams>,
    t0: u64,
    end: u64,
    released: Vec<u32>,
    completed: Vec<u32>,
    rq: BinaryHeap<Reverse<(u64, u32)>>,
}

impl TaskBook {
    /// Tasks `subset` (global indices) release their first job at `t0`; no job is released
    /// at or after `end`.
    pub fn new(params: &[TaskParams], subset: &[usize], t0: u64, end: u64) -> TaskBook {
        let mut rq = BinaryHeap::with_capacity(subset.len());
        for &i in subset {
            if t0 < end {
                rq.push(Reverse((t0, i as u32)));
            }
        }
        TaskBook {
            params: params.to_vec(),
            t0,
            end,
            released: vec![0; params.len()],
            completed: vec![0; params.len()],
            rq,
        }
    }

    pub fn next_due(&self) -> u64 {
        self.rq.peek().map_or(u64::MAX, |r| r.0 .0)
    }

    fn job(&self, task: u32, seq: u32) -> Job {
        let p = self.params[task as usize];
        let release = self.t0 + seq as u64 * p.period;
        Job { task, seq, release, deadline: release + p.deadline }
    }

    /// Releases every job due by `now`; calls `f(job, ready)` for each in due order, where
    /// `ready` is false for a backlogged job.
    pub fn release_due(&mut self, now: u64, mut f: impl FnMut(Job, bool)) {
        while let Some(&Reverse((due, task))) = self.rq.peek() {
            if due > now {
                break;
            }
            self.rq.pop();
            let t = task as usize;
            let seq = self.released[t];
            self.released[t] += 1;
            let next = due + self.params[t].period;
            if next < self.end {
                self.rq.push(Reverse((next, task)));
            }
            let ready = seq == self.completed[t];
            f(self.job(task, seq), ready);
        }
    }

    /// Marks `job` complete; returns its task's next job if it was backlogged (now ready).
    pub fn complete(&mut self, job: &Job) -> Option<Job> {
        let t = job.task as usize;
        debug_assert_eq!(job.seq, self.completed[t]);
        self.completed[t] += 1;
        if self.released[t] > self.completed[t] {
            Some(self.job(job.task, self.completed[t]))
        } else {
            None
        }
    }

    /// The task's oldest incomplete released job, if any.
    pub fn head(&self, task: usize) -> Option<Job> {
        (self.released[task] > self.completed[task]).then(|| self.job(task as u32, self.completed[task]))
    }

    /// Whether `job` is already complete (a stale ready-queue entry).
    pub fn is_done(&self, job: &Job) -> bool {
        job.seq < self.completed[job.task as usize]
    }

    pub fn released(&self) -> &[u32] {
        &self.released
    }
    pub fn completed(&self) -> &[u32] {
        &self.completed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backlogged_jobs_wait_for_their_predecessor() {
        let p = [TaskParams { deadline: 10, period: 10 }, TaskParams { deadline: 5, period: 20 }];
        let mut b = TaskBook::new(&p, &[0, 1], 100, 150);
        let mut got = vec![];
        b.release_due(125, |j, r| got.push((j.task, j.seq, j.release, j.deadline, r)));
        assert_eq!(
            got,
            vec![
                (0, 0, 100, 110, true),
                (1, 0, 100, 105, true),
                (0, 1, 110, 120, false),
                (0, 2, 120, 130, false),
                (1, 1, 120, 125, false)
            ]
        );
        assert_eq!(b.next_due(), 130);
        let j0 = Job { task: 0, seq: 0, release: 100, deadline: 110 };
        assert_eq!(b.complete(&j0).map(|j| j.seq), Some(1));
        assert_eq!(b.head(0).map(|j| j.seq), Some(1));
        assert!(b.is_done(&j0));
        // nothing at or after `end`
        b.release_due(10_000, |j, _| assert!(j.release < 150));
        assert_eq!(b.released(), &[5, 3]);
        assert_eq!(b.next_due(), u64::MAX);
    }
}
