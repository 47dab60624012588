//! One release domain's job book for push/pull, over parallel tasks (DAG tasks, Baruah et al.,
//! RTSS 2012; fork-join tasks as their DAGs, RTWS paper, §III): the release queue and job counts
//! of the domain's tasks ([`TaskBook`]), and the precedence counts of each task's head job
//! ([`Progress`]). A sequential task is one node (thread slot = task), so the sequential case
//! is the same code.
//!
//! The engine's jobs are *thread-slot* jobs: thread slot `s` of job `j` of its fork-join task is
//! the job `j` of the run's task `s` (`backend::slot_task_set`), with the job's release and
//! deadline.

use crate::mechanism::forkjoin::{check_task, Done, Progress, Shape};
use crate::mechanism::{Job, TaskParams};
use crate::queue::release::TaskBook;
use crate::RunError;
use rtsched_policy::PriorityRule;

/// A domain's fork-join job book (under the domain's leaf lock).
pub struct Book {
    tb: TaskBook,
    /// Per task (global index): the precedence counts of its head job (only this domain's
    /// tasks move).
    progress: Progress,
    /// An inconsistency seen on a completion (reported by `check`).
    error: Option<String>,
    /// The nodes the last completion made ready ([`Book::thread_done`]).
    ready: Vec<u32>,
    /// Per thread slot (global index): completed threads.
    slot_done: Vec<u32>,
}

impl Book {
    /// The book of the fork-join tasks `mine` (global indices) of `shape`, whose parameters are
    /// `params`, released from `t0` until `end`.
    pub fn new(shape: &Shape, params: &[TaskParams], mine: &[usize], t0: u64, end: u64) -> Result<Book, RunError> {
        // The book's own priorities are never used: slot jobs take theirs from the run's rule.
        let tb = TaskBook::new(params, mine, PriorityRule::Edf, t0, end);
        Ok(Book { tb, progress: Progress::new(shape), slot_done: vec![0; shape.slots()], error: None, ready: Vec::new() })
    }

    pub fn next_due(&self) -> u64 {
        self.tb.next_due()
    }

    /// Releases every fork-join job due by `now`: `f(job, ready)` for each in due order (`job`
    /// is the fork-join job; `ready`: its predecessor has completed, so its first region forks).
    pub fn release_due(&mut self, now: u64, f: impl FnMut(Job, bool)) {
        self.tb.release_due(now, f)
    }

    /// Node `slot` of its task's head job completed. Returns the job whose nodes become
    /// ready, [`Book::ready`] then listing them: the same job and the successors whose last
    /// predecessor this was, or — when this completed the job — the task's next (backlogged)
    /// job and its sources; `None` when nothing became ready.
    pub fn thread_done(&mut self, shape: &Shape, slot: u32) -> Option<Job> {
        let i = shape.task_of(slot) as usize;
        self.slot_done[slot as usize] += 1;
        let ready = &mut self.ready;
        ready.clear();
        let Some(done) = self.progress.node_done(shape, slot, ready) else {
            self.error.get_or_insert_with(|| format!("slot {slot} completed out of precedence"));
            return None;
        };
        let head = self.tb.head(i)?;
        match done {
            Done::Pending => (!ready.is_empty()).then_some(head),
            Done::JobDone => {
                let next = self.tb.complete(&head)?;
                self.ready.extend_from_slice(shape.sources(i as u32));
                Some(next)
            }
        }
    }

    /// The nodes the last [`Book::thread_done`] made ready.
    pub fn ready(&self) -> &[u32] {
        &self.ready
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

    /// The task's head job and its ready nodes (every predecessor complete, itself not), if
    /// it has a pending job that is not self-suspended.
    pub fn ready_slots<'s>(&'s self, shape: &'s Shape, task: u32) -> Option<(Job, impl Iterator<Item = u32> + 's)> {
        let head = self.tb.ready_head(task as usize)?;
        let done = self.tb.completed()[task as usize];
        let slots = shape
            .all_slots(task)
            .filter(move |&s| self.slot_done[s as usize] == done && self.progress.waiting(s) == 0);
        Some((head, slots))
    }

    /// Per thread slot of `task`: (jobs released, threads completed).
    pub fn slot_counts(&self, shape: &Shape, slot: u32) -> (u32, u32) {
        let task = shape.task_of(slot);
        (self.tb.released()[task as usize], self.slot_done[slot as usize])
    }

    /// Exactly once and in order for `task`: every node completed once per completed job of
    /// its task, and in the head job only after all its predecessors; the precedence counts
    /// match (`forkjoin::check_task`).
    pub fn check(&self, shape: &Shape, task: u32) -> Result<(), RunError> {
        if let Some(e) = &self.error {
            return Err(RunError::Internal(e.clone()));
        }
        let i = task as usize;
        check_task(
            shape,
            task,
            self.tb.completed()[i],
            self.tb.head(i).is_some(),
            |s| self.slot_done[s as usize],
            |s| self.progress.waiting(s),
            self.progress.left(task),
        )
        .map_err(RunError::Internal)
    }
}
