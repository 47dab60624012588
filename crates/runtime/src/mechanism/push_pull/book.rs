//! One release domain's job book for push/pull, over fork-join tasks (RTWS paper, §III): the
//! release queue and job counts of the domain's fork-join tasks ([`TaskBook`]), and per task the
//! region its head job executes and that region's threads still outstanding. A sequential task
//! is one region of one thread (thread slot = task), so the sequential case is the same code.
//!
//! The engine's jobs are *thread-slot* jobs: thread slot `s` of job `j` of its fork-join task is
//! the job `j` of the run's task `s` (`backend::slot_task_set`), with the job's release and
//! deadline.

use crate::mechanism::forkjoin::Shape;
use crate::mechanism::{Job, TaskParams};
use crate::queue::release::TaskBook;
use crate::RunError;
use rtsched_model::forkjoin::{Join, RegionProgress};
use rtsched_policy::PriorityRule;

/// A domain's fork-join job book (under the domain's leaf lock).
pub struct Book {
    tb: TaskBook,
    /// Per fork-join task (global index): the region its head job executes and that region's
    /// threads not yet complete (only this domain's tasks move).
    progress: RegionProgress,
    /// Per thread slot (global index): completed threads.
    slot_done: Vec<u32>,
}

impl Book {
    /// The book of the fork-join tasks `mine` (global indices) of `shape`, whose parameters are
    /// `params`, released from `t0` until `end`.
    pub fn new(shape: &Shape, params: &[TaskParams], mine: &[usize], t0: u64, end: u64) -> Result<Book, RunError> {
        // The book's own priorities are never used: slot jobs take theirs from the run's rule.
        let tb = TaskBook::new(params, mine, PriorityRule::Edf, t0, end);
        Ok(Book { tb, progress: shape.progress()?, slot_done: vec![0; shape.slots()] })
    }

    pub fn next_due(&self) -> u64 {
        self.tb.next_due()
    }

    /// Releases every fork-join job due by `now`: `f(job, ready)` for each in due order (`job`
    /// is the fork-join job; `ready`: its predecessor has completed, so its first region forks).
    pub fn release_due(&mut self, now: u64, f: impl FnMut(Job, bool)) {
        self.tb.release_due(now, f)
    }

    /// Thread slot `slot`'s thread of its task's head job completed. Returns the fork-join job
    /// and region whose threads become ready: the same job's next region when this was the
    /// last thread of its region, or the task's next (backlogged) job's first region when this
    /// completed the job; `None` while threads of the region are outstanding.
    pub fn thread_done(&mut self, shape: &Shape, slot: u32) -> Option<(Job, u32)> {
        let (task, _) = shape.of_slot(slot);
        let i = task as usize;
        self.slot_done[slot as usize] += 1;
        // None: no thread of the region was outstanding, which `check` reports (the slot's
        // completions no longer match its task's jobs).
        match self.progress.thread_done(task)? {
            Join::Pending => None,
            Join::Fork { region } => self.tb.head(i).map(|head| (head, region)),
            Join::JobDone => {
                let head = self.tb.head(i)?;
                self.tb.complete(&head).map(|next| (next, 0))
            }
        }
    }

    /// The sequential task `task`'s head job `job` self-suspends (a fork-join task's threads
    /// never do: the engine refuses suspensions with fork-join workloads).
    pub fn suspend(&mut self, job: &Job) {
        self.tb.suspend(job)
    }

    /// The sequential task's suspended head job `job` wakes: whether it was suspended.
    pub fn resume(&mut self, job: &Job) -> bool {
        self.tb.resume(job)
    }

    /// The fork-join task's head job, its current region and the threads of it not yet
    /// complete (the ready threads), if it has a pending job that is not self-suspended.
    pub fn ready_slots<'s>(&'s self, shape: &'s Shape, task: u32) -> Option<(Job, impl Iterator<Item = u32> + 's)> {
        let head = self.tb.ready_head(task as usize)?;
        let done = self.tb.completed()[task as usize];
        let slots = shape.region(task, self.progress.region(task)).filter(move |&s| self.slot_done[s as usize] == done);
        Some((head, slots))
    }

    /// Per thread slot of `task`: (jobs released, threads completed).
    pub fn slot_counts(&self, shape: &Shape, slot: u32) -> (u32, u32) {
        let (task, _) = shape.of_slot(slot);
        (self.tb.released()[task as usize], self.slot_done[slot as usize])
    }

    /// Exactly once and in order for `task`: each thread slot completed once per completed job
    /// of its task, plus once for the head job when its region is before the head's current
    /// one (or is it, partly), never for a later region.
    pub fn check(&self, shape: &Shape, task: u32) -> Result<(), RunError> {
        let i = task as usize;
        let done = self.tb.completed()[i];
        let head = self.tb.head(i).is_some();
        let cur = self.progress.region(task);
        let mut in_cur = 0;
        for s in shape.all_slots(task) {
            let (_, r) = shape.of_slot(s);
            let c = self.slot_done[s as usize];
            let ok = if !head || r > cur {
                c == done
            } else if r < cur {
                c == done + 1
            } else {
                in_cur += u32::from(c == done + 1);
                c == done || c == done + 1
            };
            if !ok {
                return Err(RunError::Internal(format!(
                    "thread slot {s} (task {task}, region {r}) completed {c} times with {done} jobs of its task completed"
                )));
            }
        }
        let width = shape.region(task, cur).len() as u32;
        let outstanding = self.progress.outstanding(task);
        if head && in_cur + outstanding != width {
            return Err(RunError::Internal(format!("task {task}: region {cur} has {in_cur} threads done and {outstanding} outstanding")));
        }
        Ok(())
    }
}
