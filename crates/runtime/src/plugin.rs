//! The mechanism interface: a table of callbacks in the spirit of LITMUS^RT's
//! `struct sched_plugin` (Brandenburg, "Scheduling and Locking in Multiprocessor Real-Time
//! Operating Systems", PhD thesis, UNC 2011, ch. 3; seed 001 §2 "event handlers").
//!
//! The engine (`engine`) owns the threads, the clocks, the job bodies and the tracer; a
//! [`Plugin`] owns the scheduling state and decides. The split follows seed 001 §3
//! "processor mapping": a plugin keeps *linked* (which job each CPU should run — the
//! decision, changeable by any CPU under the plugin's synchronisation) apart from
//! *scheduled* (which job each CPU's worker actually runs — changed only by that worker,
//! inside [`Plugin::schedule`]). A change of `linked[c]` by another CPU is communicated with
//! [`Ctx::preempt`] (flag + wake-up, the "IPI"); the worker on `c` notices it at its next
//! poll and calls `schedule`.
//!
//! Callbacks and their preconditions (each is called on the CPU named by `ctx.cpu`):
//! * [`Plugin::release`] — the release "timer interrupt" of one release domain. Called when
//!   `now >= next_release(domain)`, by the worker that polls that domain
//!   ([`Plugin::release_domain`]) or by the dedicated release thread. Must release every job
//!   due by `now`, record `JobRelease` for each, and request preemptions as needed.
//! * [`Plugin::schedule`] — the scheduler of `ctx.cpu`. `prev` says what the worker just
//!   stopped: nothing, a job it was preempted from (its remaining budget already saved by
//!   the engine), or a job that completed (job completion is handled here, under the
//!   plugin's lock, as LITMUS^RT's `schedule` calls `job_completion`). Returns the job the
//!   worker must run next (it becomes `scheduled`). A returned job must not be scheduled on
//!   any other CPU at the same time; the engine's trace check verifies this. It calls
//!   [`Ctx::ack_resched`] last, still under the lock that serialises preemption requests
//!   to this CPU.
//! * `tick` — a periodic tick, for quantum-driven plugins; the event-driven ones
//!   here do not use it and the engine does not call it (no tick overhead exists here).
//! * Block / wake: the synthetic jobs never self-suspend, so no such callbacks exist yet;
//!   a suspension-based workload (locks, RTWS joins) adds `task_block(job)` /
//!   `task_wake(job)` with the same preconditions as LITMUS^RT's.
//!
//! Writing other mechanisms against it: push/pull (seed 002) keeps one ready queue and lock
//! per CPU and pushes/pulls inside `release`/`schedule`; G-EDF-MP (seed 000 §III) makes the
//! dedicated thread the scheduling processor and `schedule` a mailbox exchange; the RTSS'09
//! plugins differ only in the ready-queue type and the release domain (CE1/FE1 = dedicated).

use crate::sync::CpuSignal;
use crate::tracer::{RecKind, TraceBuffer};
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

/// What a worker stopped doing before calling [`Plugin::schedule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prev {
    /// It ran nothing.
    Idle,
    /// It stopped running this job before completion (preemption request noticed).
    Preempted(Job),
    /// This job completed.
    Completed(Job),
}

/// Per-call context: which CPU (index into the run's CPU list; the dedicated release thread
/// has index `m`), its trace buffer, and every CPU's reschedule signal.
pub struct Ctx<'a> {
    pub cpu: usize,
    pub trace: &'a mut TraceBuffer,
    pub signals: &'a [CpuSignal],
    /// Sleeping CPUs sent a request by this call and not yet woken (bit = CPU index).
    wakes: u128,
}

impl Drop for Ctx<'_> {
    fn drop(&mut self) {
        self.flush_wakes();
    }
}

impl<'a> Ctx<'a> {
    pub fn new(cpu: usize, trace: &'a mut TraceBuffer, signals: &'a [CpuSignal]) -> Ctx<'a> {
        Ctx { cpu, trace, signals, wakes: 0 }
    }

    /// Wakes the sleeping targets of the requests sent so far. The engine calls it after the
    /// plugin call returns, i.e. outside the plugin's lock and outside the traced Δsch / Δrel
    /// section: waking a sleeping worker is a futex system call, the user-space price of an
    /// IPI, and it belongs to Δipi (send → noticed), not to the lock hold time.
    pub fn flush_wakes(&mut self) {
        while self.wakes != 0 {
            let t = self.wakes.trailing_zeros() as usize;
            self.wakes &= self.wakes - 1;
            self.signals[t].kick();
        }
    }

    /// Asks CPU `target` to call `schedule` soon: locally a flag, remotely a traced "IPI".
    pub fn preempt(&mut self, target: usize) {
        if target == self.cpu {
            self.signals[target].set_local();
        } else {
            let stamp = crate::clock::counter();
            self.trace.record_at(stamp, RecKind::IpiSent, target as u32, 0, 0);
            if self.signals[target].send_deferred(stamp) {
                if target < 128 {
                    self.wakes |= 1 << target;
                } else {
                    self.signals[target].kick();
                }
            }
        }
    }

    /// Clears this CPU's pending reschedule request (recording `IpiNoticed` for a remote
    /// one). `schedule` calls it while holding the lock under which requests to this CPU are
    /// sent: every request made before is answered by the decision being taken, so the
    /// worker is not sent back to reschedule for a decision it already follows.
    pub fn ack_resched(&mut self) {
        if let Some(stamp) = self.signals[self.cpu].take() {
            if stamp != 0 {
                self.trace.record(RecKind::IpiNoticed, self.cpu as u32, 0, stamp);
            }
        }
    }

    /// Records a job's release (`arg` = its due time).
    pub fn record_release(&mut self, j: &Job) {
        self.trace.record(RecKind::JobRelease, j.task, j.seq, j.release);
    }
}

/// End-of-run accounting from the plugin's own state (the trace is checked against it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accounting {
    /// Jobs released per task.
    pub released: Vec<u32>,
    /// Jobs completed per task.
    pub completed: Vec<u32>,
    /// Result of the plugin's consistency check: every released, incomplete job's head job
    /// (the task's oldest) is findable in the plugin's structures (ready, linked or scheduled).
    pub consistent: Result<(), String>,
}

/// A scheduler mechanism (see the module docs for each callback's precondition).
pub trait Plugin: Send + Sync {
    fn name(&self) -> &'static str;
    /// Number of release domains (release queues with their own "timer").
    fn release_domains(&self) -> usize;
    /// The release domain whose timer the worker of CPU `cpu` polls, if any.
    fn release_domain(&self, cpu: usize) -> Option<usize>;
    /// Earliest due release of `domain` (`u64::MAX` if none before the end); lock-free.
    fn next_release(&self, domain: usize) -> u64;
    /// Called before `release` by a poller that saw `next_release(domain) == due`; returns
    /// false if another CPU already took this release (the default suits a single poller).
    fn try_claim_release(&self, _domain: usize, _due: u64) -> bool {
        true
    }
    fn release(&self, ctx: &mut Ctx<'_>, domain: usize, now: u64);
    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev) -> Option<Job>;
    /// Called after every thread has stopped.
    fn accounting(&self) -> Accounting;
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
