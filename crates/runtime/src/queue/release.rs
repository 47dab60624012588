//! The release queue and the per-task job book of one release domain (seed 001 §3 "release
//! queue"): a min-heap of due times, coinciding releases handled in one handler call (like
//! LITMUS^RT's shared release timers), and per task the counts of released and completed jobs.
//! Sequential: the caller's lock serialises it.

use rtsched_policy::{Prio, PriorityRule};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A job: its priority ([`Prio`]: key, task index, sequence number — the one priority
/// order of the workspace, `rtsched_policy::prio`), and its absolute due release time and
/// deadline (monotonic ns). Jobs are compared by `prio` only where priority matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Job {
    pub prio: Prio,
    pub release: u64,
    pub deadline: u64,
}

impl Job {
    /// Task index.
    #[inline(always)]
    pub fn task(&self) -> u32 {
        self.prio.task
    }
    /// 0-based sequence number within the task.
    #[inline(always)]
    pub fn seq(&self) -> u32 {
        self.prio.job
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
#[derive(Debug, Clone)]
pub struct TaskBook {
    params: Vec<TaskParams>,
    rule: PriorityRule,
    t0: u64,
    end: u64,
    released: Vec<u32>,
    completed: Vec<u32>,
    /// Per task: its head job self-suspended ([`suspend`](Self::suspend)) and has not woken.
    suspended: Vec<bool>,
    rq: BinaryHeap<Reverse<(u64, u32)>>,
}

impl TaskBook {
    /// Tasks `subset` (global indices) release their first job at `t0`; no job is released
    /// at or after `end`; jobs' priorities follow `rule` (EDF: the absolute deadline).
    pub fn new(params: &[TaskParams], subset: &[usize], rule: PriorityRule, t0: u64, end: u64) -> TaskBook {
        let mut rq = BinaryHeap::with_capacity(subset.len());
        for &i in subset {
            if t0 < end {
                rq.push(Reverse((t0, i as u32)));
            }
        }
        TaskBook {
            params: params.to_vec(),
            rule,
            t0,
            end,
            released: vec![0; params.len()],
            completed: vec![0; params.len()],
            suspended: vec![false; params.len()],
            rq,
        }
    }

    pub fn next_due(&self) -> u64 {
        self.rq.peek().map_or(u64::MAX, |r| r.0 .0)
    }

    /// Job `seq` of `task`.
    #[inline]
    pub fn job(&self, task: u32, seq: u32) -> Job {
        let p = self.params[task as usize];
        let release = self.t0 + seq as u64 * p.period;
        let deadline = release + p.deadline;
        Job { prio: self.rule.prio(task, seq, deadline), release, deadline }
    }

    /// The job whose priority is `p`.
    #[inline]
    pub fn job_of(&self, p: Prio) -> Job {
        self.job(p.task, p.job)
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
        let t = job.task() as usize;
        debug_assert_eq!(job.seq(), self.completed[t]);
        debug_assert!(!self.suspended[t], "{job:?} completed while suspended");
        self.completed[t] += 1;
        if self.released[t] > self.completed[t] {
            Some(self.job(job.task(), self.completed[t]))
        } else {
            None
        }
    }

    /// The task's oldest incomplete released job, if any (ready, running or suspended).
    pub fn head(&self, task: usize) -> Option<Job> {
        (self.released[task] > self.completed[task]).then(|| self.job(task as u32, self.completed[task]))
    }

    /// The task's head job if it is pending — released, incomplete and not self-suspended:
    /// the jobs a mechanism must hold (ready, linked or scheduled) at rest.
    pub fn ready_head(&self, task: usize) -> Option<Job> {
        self.head(task).filter(|_| !self.suspended[task])
    }

    /// `job` (its task's head, which was running) self-suspends: it is no longer pending until
    /// [`resume`](Self::resume). Later jobs of its task stay backlogged behind it.
    pub fn suspend(&mut self, job: &Job) {
        let t = job.task() as usize;
        debug_assert_eq!(job.seq(), self.completed[t], "only a task's head job runs, so only it suspends");
        debug_assert!(!self.suspended[t], "{job:?} suspended twice");
        self.suspended[t] = true;
    }

    /// `job` wakes up: returns whether it was suspended (it is pending again), false for a job
    /// that is not its task's suspended head (a wake-up without a suspension is ignored).
    pub fn resume(&mut self, job: &Job) -> bool {
        let t = job.task() as usize;
        let was = self.suspended.get(t).copied().unwrap_or(false) && job.seq() == self.completed[t];
        if was {
            self.suspended[t] = false;
        }
        was
    }

    /// Whether the head job of `task` is self-suspended.
    pub fn is_suspended(&self, task: usize) -> bool {
        self.suspended[task]
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
        let mut b = TaskBook::new(&p, &[0, 1], PriorityRule::Edf, 100, 150);
        let mut got = vec![];
        b.release_due(125, |j, r| got.push((j.task(), j.seq(), j.release, j.deadline, r)));
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
        let j0 = b.job(0, 0);
        assert_eq!(j0, Job { prio: Prio { key: 110, task: 0, job: 0 }, release: 100, deadline: 110 });
        assert_eq!(b.complete(&j0).map(|j| j.seq()), Some(1));
        assert_eq!(b.head(0).map(|j| j.seq()), Some(1));
        // Fixed priorities: the key is the task's rank, the deadline stays the deadline.
        let fp = TaskBook::new(&p, &[0, 1], PriorityRule::Fixed(vec![1, 0]), 100, 150);
        assert_eq!(fp.job(0, 2).prio, Prio { key: 1, task: 0, job: 2 });
        assert_eq!(fp.job(0, 2).deadline, 130);
        assert_eq!(fp.job_of(fp.job(1, 1).prio), fp.job(1, 1));
        // nothing at or after `end`
        b.release_due(10_000, |j, _| assert!(j.release < 150));
        assert_eq!(b.released(), &[5, 3]);
        assert_eq!(b.next_due(), u64::MAX);
    }

    proptest::proptest! {
        /// Oracle: each task's release times computed from the formula `t0 + k·T` (< end), and
        /// per-task counts kept by hand, under random advances of time and completions.
        #[test]
        fn the_book_matches_the_release_formula(
            periods in proptest::collection::vec(1u64..20, 1..6),
            ops in proptest::collection::vec((proptest::bool::ANY, 0u64..15, 0usize..6), 1..80),
        ) {
            let (t0, end) = (100u64, 400u64);
            let p: Vec<TaskParams> = periods.iter().map(|&t| TaskParams { deadline: t, period: t }).collect();
            let all: Vec<usize> = (0..p.len()).collect();
            let mut b = TaskBook::new(&p, &all, PriorityRule::Edf, t0, end);
            let (mut released, mut completed) = (vec![0u32; p.len()], vec![0u32; p.len()]);
            let mut now = t0;
            for (advance, dt, t) in ops {
                if advance {
                    now += dt;
                    let mut got = Vec::new();
                    b.release_due(now, |j, ready| got.push((j.release, j.task(), j.seq(), ready)));
                    let mut want = Vec::new();
                    for (i, &per) in periods.iter().enumerate() {
                        let due = |k: u32| t0 + k as u64 * per;
                        while due(released[i]) <= now && due(released[i]) < end {
                            let k = released[i];
                            want.push((due(k), i as u32, k, k == completed[i]));
                            released[i] += 1;
                        }
                    }
                    got.sort_unstable();
                    want.sort_unstable();
                    proptest::prop_assert_eq!(got, want);
                } else if t < p.len() && released[t] > completed[t] {
                    let head = b.head(t).unwrap();
                    proptest::prop_assert_eq!(head.seq(), completed[t]);
                    let next = b.complete(&head);
                    completed[t] += 1;
                    proptest::prop_assert_eq!(next.map(|j| j.seq()), (released[t] > completed[t]).then_some(completed[t]));
                }
                proptest::prop_assert_eq!(b.released(), &released[..]);
                proptest::prop_assert_eq!(b.completed(), &completed[..]);
                let next_due = periods
                    .iter()
                    .zip(&released)
                    .map(|(&per, &k)| t0 + k as u64 * per)
                    .filter(|&d| d < end)
                    .min()
                    .unwrap_or(u64::MAX);
                proptest::prop_assert_eq!(b.next_due(), next_due);
            }
        }
    }
}
