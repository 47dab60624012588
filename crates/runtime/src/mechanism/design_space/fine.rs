//! FEm, FE1 and HEm: event-driven G-EDF whose ready queue is used *without* the
//! processor-mapping lock — Hunt et al.'s fine-grained heap (R2) or the hierarchical queue of
//! queues (R3) — Brandenburg & Anderson, RTSS 2009, §3, "Synchronization".
//!
//! "Both the ready queue and processor mapping must be locked to check whether a preemption is
//! required. If a preemption is indeed required, then the processor mapping lock must be
//! dropped before dequeuing the preempting job under R2 and R3. [...] To avoid this, the
//! processor to be updated is temporarily removed from the processor mapping. Priorities are
//! checked again upon re-insertion, otherwise, preemptions could be missed." (ibid.)
//!
//! **The protocol** ([`Core::settle`], run by every handler that made a job ready or freed a
//! CPU). Each thread carries a *hand*: jobs it took out of the queue or off a CPU, invisible
//! to the others until it gives them to the policy or back to the queue.
//! 1. Under the mapping lock: un-reserve this thread's CPU (if it reserved one), give the
//!    policy (`rtsched_policy::Gedf`, whose own ready queue holds only the hand) the hand's
//!    live jobs and let it link them (`link_all`: the best ones onto the lowest-priority
//!    CPUs); what it did not link goes back to the shared queue.
//! 2. Still under the lock, peek the queue's top and ask the policy's preemption check
//!    (`Gedf::target`). If the top would be linked, *reserve* that CPU: a placeholder that
//!    outranks every job is linked to it (`mechanism::dispatch::placeholder`), which removes the
//!    CPU from the mapping — nobody else picks it — and moves its job into the hand.
//! 3. Enact the link changes (swaps, reschedule requests: `mechanism::dispatch`), drop the lock,
//!    pop the top into the hand if a CPU was reserved (or drop it if the check found it stale),
//!    *then* push the leftovers into the queue — in this order, so that the pop takes what the
//!    check peeked and not a leftover that outranks it.
//! 4. Repeat until an iteration finds nothing to do — no hand, no leftovers, no preemption: that
//!    last check, made under the lock *after* the thread's own insertions, is the re-check on
//!    re-insertion that keeps preemptions from being missed (the loom model below shows the
//!    missed preemption without it).
//!
//! **Completed while queued.** A preempted job that completes before its CPU noticed the
//! request may already sit in the queue, and neither R2 nor R3 removes an arbitrary element.
//! Completion bumps the task's `done` count; a queued job whose sequence number is below it is
//! *stale* and is dropped wherever it is found (popped, or in a hand; a stale top is popped by
//! step 3). A full queue (Hunt's heap has a fixed capacity, `2n + 2m + 16` here) makes room by
//! popping until it has dropped a stale entry and re-inserting the live jobs it popped
//! ([`Core::push`]).
//!
//! **Blocked while queued** (self-suspension, plugin contract rules 6–7). A job that blocks
//! while linked is unlinked under the mapping lock, as a completion. One that was unlinked
//! (preempted) before its worker noticed has exactly one copy in circulation — in the queue or
//! in some thread's hand — which neither queue can remove. That copy becomes a *ghost*: the
//! task's word counts ghosts beside its completed count, and a copy of the task's head found
//! while a ghost is left (popped, or in a hand under the lock) is dropped and consumes one,
//! by compare-and-swap. When the job wakes, a new copy goes in as at a release; if the ghost
//! was not found yet, two identical copies circulate with one ghost, and whichever is found
//! first is dropped — so exactly one live copy remains. A ghost is never linked: every copy
//! passes `drop_stale` under the mapping lock before the policy sees it. A completion resets
//! the word (every older copy is stale by its sequence number), in the same store, so a
//! ghost cannot be consumed by a later job's copy. At rest the ghosts are queued copies
//! (hands are empty): the rest check drops that many and finds the rest exact.
//!
//! **Termination** (serialized; the property tests check it on random interleavings, and test
//! builds panic after 10,000 rounds). A round that does not return reserved a CPU, purged a
//! stale top, or requeued leftovers. A reservation makes the next round link the popped job in
//! place of the lowest linked one, which it beats: the linked set strictly improves. A purge
//! removes a stale entry for good. Requeueing hands no live job back (a full queue drops a
//! stale entry instead), so the round after it starts with an empty hand and returns unless
//! its check reserves or purges. Each kind of progress is finite, so `settle` ends. An earlier
//! version pushed the leftovers *before* the pop and made room in a full queue by handing its
//! top to the policy; both could repeat one state forever (docs/mechanisms/rtss09.md, "FEm, FE1, HEm").
//!
//! Locks: the mapping lock (traced: `lock_wait`), the release lock (job book; traced), and the
//! queue's internal locks (untraced; their waits are inside Δrel and Δsch). No lock is held
//! while another is awaited except the queue's own nesting. The mapping lock is never held
//! during a queue insertion or deletion; the top is peeked under it (the check of step 2).

use crate::mechanism::dispatch::{check_at_rest, heads, placeholder, Dispatch};
use crate::Inconsistency;
use crate::mechanism::registry::Setup;
use crate::mechanism::release_domain::{one_release_domain, ReleaseDomain};
use crate::mechanism::{Accounting, Ctx, Effects, Job, Plugin, Prev, TaskParams};
use crate::queue::binomial::BinomialHeap;
use crate::queue::hierarchical::Hierarchical;
use crate::queue::concurrent_heap::ConcurrentHeap;
use crate::queue::release::TaskBook;
use crate::sync::{Atom, Primitives, SpinLock, Std};
use crate::RunError;
use rtsched_policy::{Gedf, Policy, Prio, PriorityRule};
use std::sync::atomic::Ordering;

/// Rounds of [`Core::settle`] after which unit-test and debug builds panic (unit tests also under
/// `cargo test --release`, the README's test command), so that a livelock fails a test (and
/// proptest shrinks it) instead of hanging it. Release builds never stop early: a `settle` that
/// gave up would be a missed preemption (see the module docs, "Termination").
const SETTLE_BOUND: usize = if cfg!(test) { 10_000 } else { 1 << 22 };

/// A ready queue safe to use without the processor-mapping lock (R2, R3).
pub trait SharedQueue: Send + Sync {
    /// Inserts `job` from thread `cpu`; `Err(job)` when full.
    fn insert(&self, cpu: usize, job: Prio) -> Result<(), Prio>;
    fn peek(&self) -> Option<Prio>;
    fn pop(&self) -> Option<Prio>;
    /// The elements, read at quiescence, or why the structure is malformed.
    fn quiescent(&self) -> Result<Vec<Prio>, Inconsistency>;
}

impl<B: Primitives> SharedQueue for ConcurrentHeap<Prio, B> {
    #[inline]
    fn insert(&self, _cpu: usize, job: Prio) -> Result<(), Prio> {
        ConcurrentHeap::insert(self, job)
    }
    #[inline]
    fn peek(&self) -> Option<Prio> {
        ConcurrentHeap::peek(self)
    }
    #[inline]
    fn pop(&self) -> Option<Prio> {
        ConcurrentHeap::pop(self)
    }
    fn quiescent(&self) -> Result<Vec<Prio>, Inconsistency> {
        self.check_quiescent().map_err(|e| Inconsistency(e.to_string()))
    }
}

impl<B: Primitives> SharedQueue for Hierarchical<Prio, B> {
    /// Cache-local: into the local heap of the inserting thread's CPU.
    #[inline]
    fn insert(&self, cpu: usize, job: Prio) -> Result<(), Prio> {
        Hierarchical::insert(self, cpu, job);
        Ok(())
    }
    #[inline]
    fn peek(&self) -> Option<Prio> {
        Hierarchical::peek(self)
    }
    #[inline]
    fn pop(&self) -> Option<Prio> {
        Hierarchical::pop(self)
    }
    fn quiescent(&self) -> Result<Vec<Prio>, Inconsistency> {
        self.check_quiescent().map_err(|e| Inconsistency(e.to_string()))
    }
}

/// A short list of jobs, inline up to 32 (a release of more coinciding jobs spills).
#[derive(Debug, Default)]
pub struct Hand {
    n: usize,
    inline: [Option<Prio>; 32],
    spill: Vec<Prio>,
}

impl Hand {
    pub fn new() -> Hand {
        Hand::default()
    }
    pub fn push(&mut self, p: Prio) {
        if self.n < 32 {
            self.inline[self.n] = Some(p);
        } else {
            self.spill.push(p);
        }
        self.n += 1;
    }
    pub fn pop(&mut self) -> Option<Prio> {
        if self.n == 0 {
            return None;
        }
        self.n -= 1;
        if self.n >= 32 {
            self.spill.pop()
        } else {
            self.inline[self.n].take()
        }
    }
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}

/// What the processor-mapping lock protects.
pub struct Map {
    /// The decision over the jobs in the lock holder's hand (its ready queue is the hand).
    pub policy: Gedf<BinomialHeap<Prio>>,
    /// Linked versus scheduled: what each worker runs, and where each task's job runs.
    pub(crate) dispatch: Dispatch,
    /// A copy of the job book for job lookups (`job_of` reads only task parameters).
    pub jobs: TaskBook,
}

/// The protocol's shared state: the mapping, the queue, and per task the completed count.
/// `RECHECK = false` is the broken twin of the loom model (no re-check after the last
/// insertion); production code uses the default.
pub struct Core<Q, B: Primitives = Std, const RECHECK: bool = true> {
    pub map: SpinLock<Map, B>,
    pub queue: Q,
    /// Per task, one word: the completed count `done` (high 32 bits) and the *ghosts* (low 32
    /// bits): tombstoned copies of the task's head job `done` in circulation (module docs,
    /// "Blocked while queued"). One word, so that a ghost is never taken for a later job's.
    state: Box<[B::U64]>,
}

impl<Q: SharedQueue, B: Primitives, const RECHECK: bool> Core<Q, B, RECHECK> {
    /// `m` idle CPUs, `jobs` the book (for lookups), an empty `queue`.
    pub fn new(m: usize, jobs: TaskBook, n: usize, queue: Q) -> Self {
        Core {
            map: SpinLock::new(
                0,
                Map {
                    policy: Gedf::with_queue(m, BinomialHeap::with_capacity(m + 8)),
                    dispatch: Dispatch::new(m, n),
                    jobs,
                },
            ),
            queue,
            state: (0..n).map(|_| B::U64::new(0)).collect(),
        }
    }

    /// Whether `p` completed already, or is the head job of its task with ghosts left (a stale
    /// queue entry); does not consume a ghost (the check of a peeked top, the rest check).
    #[inline]
    pub fn is_stale(&self, p: &Prio) -> bool {
        self.state.get(p.task as usize).is_some_and(|w| {
            let w = w.load(Ordering::Acquire);
            let done = (w >> 32) as u32;
            p.job < done || (p.job == done && w as u32 > 0)
        })
    }

    /// Whether the copy `p`, found (popped, or in a hand), is to be dropped: it completed
    /// already, or it is its task's head and a ghost is left — then one ghost is consumed by
    /// this copy (a compare-and-swap of the task's word: two finders never consume one ghost,
    /// and a ghost never outlives its job's completion, which resets the count).
    #[inline]
    fn drop_stale(&self, p: &Prio) -> bool {
        let Some(word) = self.state.get(p.task as usize) else { return false };
        loop {
            let w = word.load(Ordering::Acquire);
            let done = (w >> 32) as u32;
            if p.job < done {
                return true;
            }
            if p.job != done || w as u32 == 0 {
                return false;
            }
            if word.compare_exchange(w, w - 1, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                return true;
            }
        }
    }

    /// Records the completion of job `seq` of `task` (under the mapping lock): every copy of
    /// it is stale, and its ghosts with them.
    #[inline]
    fn mark_done(&self, task: u32, seq: u32) {
        if let Some(d) = self.state.get(task as usize) {
            d.store(((seq + 1) as u64) << 32, Ordering::Release);
        }
    }

    /// The head job of `task` blocked while unlinked (under the mapping lock): its one copy in
    /// circulation (the queue, or a thread's hand) becomes a ghost.
    #[inline]
    fn add_ghost(&self, task: u32) {
        if let Some(d) = self.state.get(task as usize) {
            crate::sync::AtomAdd::fetch_add(d, 1, Ordering::AcqRel);
        }
    }

    /// Inserts `p` from thread `cpu`. A full queue makes room by dropping a *stale* entry: it
    /// pops elements until it has dropped one and re-inserts the live ones it popped (with
    /// `p`). With a capacity of at least n such an entry exists — at most one job per task is
    /// pending and `p`, one of them, is outside the queue — so no live job leaves the queue
    /// for good. (Handing the popped top to the policy instead livelocks `settle`: the policy
    /// links neither of two live jobs above the stale entries, and each re-insertion evicts the
    /// other; `fine/tests.rs`, `a_full_queue_makes_room_by_dropping_a_stale_entry`.) Should the
    /// queue run empty first (a capacity below n, or concurrent insertions refilled it), the
    /// jobs still out go into `hand`.
    pub fn push(&self, cpu: usize, p: Prio, hand: &mut Hand) {
        let mut out = Hand::new();
        out.push(p);
        while let Some(p) = out.pop() {
            let Err(p) = self.queue.insert(cpu, p) else { continue };
            out.push(p);
            loop {
                match self.queue.pop() {
                    Some(y) if self.drop_stale(&y) => break,
                    Some(y) => out.push(y),
                    None => {
                        while let Some(y) = out.pop() {
                            hand.push(y);
                        }
                        return;
                    }
                }
            }
        }
    }

    /// The protocol of the module docs for thread `me` with the jobs in `hand`:
    /// `first` runs under the mapping lock at the first acquisition (a completion's unlink),
    /// `last` under it at the end, when nothing is outstanding (a worker's pick).
    pub fn settle<S: Effects, R>(
        &self,
        sink: &mut S,
        me: usize,
        hand: &mut Hand,
        first: impl FnOnce(&mut Map, &mut S),
        last: impl FnOnce(&mut Map, &mut S) -> R,
    ) -> R {
        let mine = placeholder(me);
        let mut first = Some(first);
        let mut reserved = false;
        let mut back = Hand::new();
        let mut rounds = 0usize;
        loop {
            rounds += 1;
            if cfg!(any(test, debug_assertions)) && rounds > SETTLE_BOUND {
                panic!("settle did not converge in {SETTLE_BOUND} rounds");
            }
            let mut g = sink.lock(&self.map);
            let map = &mut *g;
            if let Some(f) = first.take() {
                f(map, sink);
            }
            if reserved {
                // Re-insert the reserved CPU (it may have moved by a link swap).
                let m = map.policy.m();
                if let Some(c) = (0..m).find(|&c| map.policy.linked(c) == Some(mine)) {
                    map.policy.unlink(c);
                }
                reserved = false;
            }
            while let Some(p) = hand.pop() {
                if !self.drop_stale(&p) {
                    map.policy.enqueue(p);
                }
            }
            map.policy.link_all();
            while let Some(p) = map.policy.take_ready() {
                back.push(p);
            }
            // The check, with both the queue and the mapping locked.
            let top = self.queue.peek();
            let (reserve, purge) = match top {
                Some(t) if self.is_stale(&t) => (false, true),
                Some(t) => (map.policy.target(&t).is_some(), false),
                None => (false, false),
            };
            if reserve {
                // Remove the CPU from the mapping: the placeholder takes the lowest CPU and
                // its job joins the hand.
                map.policy.job_ready(mine);
                while let Some(p) = map.policy.take_ready() {
                    hand.push(p);
                }
                reserved = true;
            }
            map.dispatch.enact(&mut map.policy, |c| sink.preempt(c));
            let quiet = !reserve && !purge && back.is_empty() && hand.is_empty();
            if quiet {
                return last(map, sink);
            }
            drop(g);
            // Dequeue what the check peeked *before* requeueing the leftovers: a leftover that
            // outranks a stale top would otherwise be popped back instead of it, and the next
            // round would find the same state (the livelock this order fixes; see
            // `fine/tests.rs`, `settle_purges_the_stale_top_it_peeked_*`).
            if reserve || purge {
                match self.queue.pop() {
                    Some(j) if self.drop_stale(&j) => {}
                    Some(j) => hand.push(j),
                    None => {}
                }
            }
            let pushed = !back.is_empty();
            while let Some(p) = back.pop() {
                self.push(me, p, hand);
            }
            if !RECHECK && pushed && !reserve && !purge && hand.is_empty() {
                // The broken twin: no re-check after the last insertion.
                let mut g = sink.lock(&self.map);
                return last(&mut g, sink);
            }
        }
    }

    /// A release of the jobs `ready` by thread `me`: into the queue, then the protocol.
    pub fn release<S: Effects>(&self, sink: &mut S, me: usize, ready: &mut Hand) {
        let mut hand = Hand::new();
        while let Some(p) = ready.pop() {
            self.push(me, p, &mut hand);
        }
        self.settle(sink, me, &mut hand, |_, _| {}, |_, _| ());
    }

    /// Worker `cpu` stopped doing `prev`; `successor` is the completed job's backlogged
    /// successor, now ready. Returns the job the worker runs next.
    pub fn schedule<S: Effects>(&self, sink: &mut S, cpu: usize, prev: Prev, successor: Option<Prio>) -> Option<Job> {
        let mut hand = Hand::new();
        if let Some(p) = successor {
            hand.push(p);
        }
        let first = |map: &mut Map, _: &mut S| {
            map.dispatch.leave(cpu, prev);
            if let Prev::Completed(j) = prev {
                self.mark_done(j.task(), j.seq());
                let m = map.policy.m();
                if let Some(c) = (0..m).find(|&c| map.policy.linked(c) == Some(j.prio)) {
                    map.policy.unlink(c);
                }
            }
            if let Prev::Blocked(j) = prev {
                // LITMUS^RT's task_block: unlinked (the CPU is refilled by this settle), or, if
                // it was unlinked before its worker noticed, its queued copy becomes a ghost.
                let m = map.policy.m();
                match (0..m).find(|&c| map.policy.linked(c) == Some(j.prio)) {
                    Some(c) => {
                        map.policy.unlink(c);
                    }
                    None => self.add_ghost(j.task()),
                }
            }
        };
        let last = |map: &mut Map, sink: &mut S| {
            let next = map.dispatch.take(cpu, map.policy.linked(cpu), |p| map.jobs.job_of(p));
            // Last, under the mapping lock: the requests so far are answered by `next`.
            sink.ack_resched();
            next
        };
        self.settle(sink, cpu, &mut hand, first, last)
    }

    /// At rest (no handler running): no reservation is left, every pending job (`pending`,
    /// priority order) is linked or queued exactly once (stale entries aside), and the linked
    /// jobs are the `min(m, r)` highest-priority pending jobs.
    pub fn check_at_rest(&self, pending: &[Prio]) -> Result<(), Inconsistency> {
        let map = self.map.lock_untraced();
        let linked: Vec<Option<Prio>> = (0..map.policy.m()).map(|c| map.policy.linked(c)).collect();
        // At rest every ghost is a queued copy of its task's head: drop that many of them.
        let mut ghosts: Vec<u32> = self.state.iter().map(|w| w.load(Ordering::Acquire) as u32).collect();
        let queued: Vec<Prio> = self
            .queue
            .quiescent()?
            .into_iter()
            .filter(|p| {
                let done = (self.state[p.task as usize].load(Ordering::Acquire) >> 32) as u32;
                if p.job < done {
                    return false;
                }
                let g = &mut ghosts[p.task as usize];
                if p.job == done && *g > 0 {
                    *g -= 1;
                    return false;
                }
                true
            })
            .collect();
        if let Some(t) = ghosts.iter().position(|&g| g > 0) {
            return Err(Inconsistency(format!("task {t}: {} ghost(s) at rest without a queued copy", ghosts[t])));
        }
        let queued = queued.into_iter();
        check_at_rest(pending, &linked, queued, map.dispatch.scheduled().iter().flatten().copied(), true).map_err(Inconsistency)
    }
}

/// The plugin: the interrupt part, the release lock over the job book, and the core.
pub struct Fine<Q> {
    name: &'static str,
    releases: ReleaseDomain,
    rel: SpinLock<TaskBook>,
    core: Core<Q>,
}

pub(crate) fn build_hunt(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    let cap = 2 * s.tasks.len() + 2 * s.m + 16;
    Ok(Box::new(Fine::new(s.name, s.tasks, s.m, s.dedicated, s.t0, s.end, ConcurrentHeap::<Prio>::with_capacity(cap))))
}

pub(crate) fn build_hierarchical(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    let q = Hierarchical::<Prio>::new(s.m, s.tasks.len() + 4);
    Ok(Box::new(Fine::new(s.name, s.tasks, s.m, s.dedicated, s.t0, s.end, q)))
}

impl<Q: SharedQueue> Fine<Q> {
    /// The plugin registered as `name`: `m` workers (and with `dedicated` the service thread
    /// releasing), tasks `params` released from `t0` until `end`, over the empty `queue`.
    pub fn new(name: &'static str, params: &[TaskParams], m: usize, dedicated: bool, t0: u64, end: u64, queue: Q) -> Fine<Q> {
        let n = params.len();
        let all: Vec<usize> = (0..n).collect();
        let book = TaskBook::new(params, &all, PriorityRule::Edf, t0, end);
        Fine {
            name,
            releases: ReleaseDomain::new(dedicated, m, book.next_due()),
            core: Core::new(m, book.clone(), n, queue),
            rel: SpinLock::new(1, book),
        }
    }

    /// The jobs linked to each CPU now (for tests against the policy).
    #[cfg(test)]
    pub(crate) fn linked(&self) -> Vec<Option<Prio>> {
        let map = self.core.map.lock_untraced();
        (0..map.policy.m()).map(|c| map.policy.linked(c)).collect()
    }

    /// What each worker runs, in the mechanism's books (for tests).
    #[cfg(test)]
    pub(crate) fn scheduled(&self) -> Vec<Option<Job>> {
        self.core.map.lock_untraced().dispatch.scheduled().to_vec()
    }
}

impl<Q: SharedQueue> Plugin for Fine<Q> {
    fn name(&self) -> &'static str {
        self.name
    }
    one_release_domain!(releases);

    fn release(&self, ctx: &mut Ctx<'_>, _domain: usize, now: u64) {
        let mut ready = Hand::new();
        {
            let mut book = self.rel.lock(ctx.trace());
            book.release_due(now, |j, r| {
                ctx.record_release(&j);
                if r {
                    ready.push(j.prio);
                }
            });
            self.releases.set(book.next_due());
        }
        let me = ctx.cpu();
        self.core.release(ctx, me, &mut ready);
    }

    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev, _now: u64) -> Option<Job> {
        let successor = match prev {
            Prev::Completed(j) => self.rel.lock(ctx.trace()).complete(&j).map(|n| n.prio),
            Prev::Blocked(j) => {
                self.rel.lock(ctx.trace()).suspend(&j);
                None
            }
            _ => None,
        };
        let cpu = ctx.cpu();
        self.core.schedule(ctx, cpu, prev, successor)
    }

    /// The job arrives again as a release does (LITMUS^RT's `gsnedf_task_wake_up` →
    /// `job_arrival`): into the shared queue, then the protocol, from any thread. A ghost of it
    /// may still be queued (it blocked while queued): the copies are identical, and whichever
    /// is found first while a ghost is left is dropped, so exactly one stays live.
    fn wake(&self, ctx: &mut Ctx<'_>, job: Job, _now: u64) {
        let mut ready = Hand::new();
        if self.rel.lock(ctx.trace()).resume(&job) {
            ready.push(job.prio);
        }
        let me = ctx.cpu();
        self.core.release(ctx, me, &mut ready);
    }

    fn accounting(&self) -> Accounting {
        let book = self.rel.lock_untraced();
        let consistent = self.core.check_at_rest(&heads(&book)).map_err(|e| format!("{}: {e}", self.name()));
        Accounting { released: book.released().to_vec(), completed: book.completed().to_vec(), consistent: consistent.map_err(crate::Inconsistency) }
    }
}

#[cfg(test)]
mod loom_model;
#[cfg(test)]
mod tests;
