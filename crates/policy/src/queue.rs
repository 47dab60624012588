//! The ready queue a policy keeps its ready, unlinked jobs in, as a type parameter: the
//! policy decides *which* job is linked, the queue only orders them by [`Prio`]. The default is
//! std's binary heap; a mechanism plugs in its own structure (the runtime's binomial heap,
//! seed 001's R1, and later the fine-grained and hierarchical queues R2 and R3) without
//! restating the policy.

use crate::Prio;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A priority queue of jobs, highest priority (smallest [`Prio`]) first. A job is in it at
/// most once (the policies never push a job twice).
pub trait ReadyQueue {
    fn push(&mut self, job: Prio);
    /// The highest-priority job.
    fn peek(&self) -> Option<Prio>;
    fn pop(&mut self) -> Option<Prio>;
    /// Removes `job` if it is queued; returns whether it was. Only the rare paths use it (a
    /// job that completes while queued, [`crate::Policy::job_done`]); O(r) is acceptable.
    fn remove(&mut self, job: Prio) -> bool;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The default ready queue.
pub type BinaryReady = BinaryHeap<Reverse<Prio>>;

impl ReadyQueue for BinaryHeap<Reverse<Prio>> {
    #[inline]
    fn push(&mut self, job: Prio) {
        BinaryHeap::push(self, Reverse(job));
    }
    #[inline]
    fn peek(&self) -> Option<Prio> {
        BinaryHeap::peek(self).map(|r| r.0)
    }
    #[inline]
    fn pop(&mut self) -> Option<Prio> {
        BinaryHeap::pop(self).map(|r| r.0)
    }
    fn remove(&mut self, job: Prio) -> bool {
        let before = BinaryHeap::len(self);
        self.retain(|&Reverse(j)| j != job);
        BinaryHeap::len(self) != before
    }
    #[inline]
    fn len(&self) -> usize {
        BinaryHeap::len(self)
    }
}
