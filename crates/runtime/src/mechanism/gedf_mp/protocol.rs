//! G-EDF-MP's scheduling processor as a pure state machine (no threads, no clock): what the
//! DSP does with each of the six operations of Cerqueira, Vanga & Brandenburg, RTAS 2014,
//! §III-C. The plugin (`super::GedfMp`) runs it under the DSP's lock; the tests and the loom
//! model drive it directly. The clients' side of the protocol is the per-client pair
//! (`mechanism::dispatch::pairs`): operation (2) is `Pairs::pick`, (3) `Pairs::suspend`, (5)
//! `Pairs::pick` with the completed job, and the waker's half of (1) `Pairs::wake`.
//!
//! | op | who | here |
//! |----|-----|------|
//! | (1) release, or resumption by an external event or by a client's message | DSP | [`DspCore::release_due`], [`DspCore::handle`] (`OP_RESUME`), [`DspCore::resumed`] |
//! | (2) a client follows its link | client | `Pairs::pick` |
//! | (3) a job suspends: the client invalidates `linked`, idles, sends a message | client | `Pairs::suspend` + `OP_SUSPEND` |
//! | (4) the DSP discards the suspended job, refills the sender | DSP | [`DspCore::handle`] (`OP_SUSPEND`) |
//! | (5) a job completes: as (3) | client | `Pairs::pick` + `OP_COMPLETE` |
//! | (6) the DSP handles the completion: next job ready or timed, refill the sender | DSP | [`DspCore::handle`] (`OP_COMPLETE`) |
//!
//! Every change of the policy's links is published by [`DspCore::enact`] with the link swaps of
//! §III-C "Concurrency challenges" (`mechanism::dispatch::pairs::Publisher`).
//!
//! **The preemption/suspension race** (§III-C, operation (4): "a suspending task might already
//! be queued in the ready queue if a preemption IPI sent from the DSP to the client raced with
//! a suspension IPI sent from the client to the DSP"). Client `c` runs `J`; X arrives:
//!
//! ```text
//!   DSP                                         client c (runs J)
//!   X arrives; policy: X -> c, J -> ready queue
//!   lock(c); c.linked = X; IPI(c); unlock(c)
//!                                               J suspends: lock(c); c.linked is X, not J, so
//!                                               nothing to invalidate; scheduled = X; unlock(c)
//!                                               message {suspend, c, J}
//!   (may link J to another client d first: c no
//!    longer runs J, so no swap; d refuses J,
//!    whose task is asleep, and idles)
//!   handles {suspend, c, J}: J is not linked to c
//! ```
//!
//! The message names the job, and the DSP discards *that job wherever it is*: linked to the
//! sender (the ordinary case), queued (the race above), or linked to another client (the
//! race's continuation), which is then refilled. It never unlinks the sender's link on the
//! word of the message alone: in the race the sender's link is X, which runs there, and
//! discarding X would lose it (the broken twin of the loom model does exactly that and is
//! caught).
//!
//! **A resumption racing its own suspension.** The waker clears the job's `asleep` flag and
//! sends `{resume, J}` through *its* mailbox; the suspension went through the suspender's.
//! With several mailboxes (served round-robin) the DSP may handle the resumption first. So the
//! DSP counts, per task, the suspensions and resumptions it has handled of the task's current
//! (head) job: `J` is in the DSP's structures iff `suspends <= resumes`; a message that
//! crosses that line adds or discards `J`, any other only counts. An early resumption finds
//! `J` still held (perhaps linked to the client that invalidated its link when `J` suspended,
//! and that now idles): the DSP publishes `J` to that client again so it picks `J` up (the
//! flag is clear by then). Messages about a job that has completed (its task's counters are
//! reset on completion) are late echoes and ignored.

use crate::mechanism::dispatch::pairs::{Pairs, Publisher};
use crate::mechanism::dispatch::{check_at_rest, heads};
use crate::mechanism::{Job, TaskParams};
use crate::queue::binomial::BinomialHeap;
use crate::queue::mailbox::Msg;
use crate::queue::release::TaskBook;
use crate::sync::Primitives;
use rtsched_policy::{Gedf, Policy, Prio, PriorityRule};

/// Message operations, numbered as RTAS 2014, §III-C numbers them.
/// (1): a client resumed a suspended job (it woke it).
pub const OP_RESUME: u32 = 1;
/// (3): the sender's job suspended.
pub const OP_SUSPEND: u32 = 3;
/// (5): the sender's job completed.
pub const OP_COMPLETE: u32 = 5;

/// Per task: the suspensions and resumptions of its head job the DSP has handled.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Balance {
    suspends: u32,
    resumes: u32,
}

impl Balance {
    /// Whether the job is in the DSP's structures (linked or queued).
    fn held(&self) -> bool {
        self.suspends <= self.resumes
    }
}

/// The DSP's state (§III-B "DSP state"): the release queue and job book, the ready queue (a
/// binomial heap, §III-B footnote 3) inside the policy, whose links are the DSP's copy of the
/// clients' state, and the publication of links to the clients.
pub struct DspCore {
    pub(super) book: TaskBook,
    pub(super) policy: Gedf<BinomialHeap<Prio>>,
    pub(super) publisher: Publisher,
    balance: Vec<Balance>,
    /// Tasks whose head job came back by an early resumption: republished where linked.
    pokes: Vec<u32>,
    scratch: Vec<Job>,
    /// The broken twin of the loom model: a suspension unlinks the sender's link.
    #[cfg(test)]
    pub(crate) naive_suspend: bool,
}

impl DspCore {
    /// `m` clients; tasks `params` released from `t0` until `end` (EDF priorities).
    pub fn new(params: &[TaskParams], m: usize, t0: u64, end: u64) -> DspCore {
        let n = params.len();
        let all: Vec<usize> = (0..n).collect();
        DspCore {
            book: TaskBook::new(params, &all, PriorityRule::Edf, t0, end),
            policy: Gedf::with_queue(m, BinomialHeap::with_capacity(2 * n + 4)),
            publisher: Publisher::new(m, n),
            balance: vec![Balance::default(); n],
            pokes: Vec::with_capacity(n),
            scratch: Vec::with_capacity(n),
            #[cfg(test)]
            naive_suspend: false,
        }
    }

    /// The next due release (`u64::MAX`: none before the end).
    pub fn next_due(&self) -> u64 {
        self.book.next_due()
    }

    /// The job the policy links to client `c`.
    pub fn linked(&self, c: usize) -> Option<Prio> {
        self.policy.linked(c)
    }

    /// Whether `task`'s head job is suspended as far as the DSP knows.
    pub fn suspended(&self, task: usize) -> bool {
        !self.balance[task].held()
    }

    /// Job `seq` of `task`.
    pub fn job(&self, task: u32, seq: u32) -> Job {
        self.book.job(task, seq)
    }

    /// Operation (1), a release "interrupt": releases every job due by `now` (`record` sees
    /// each); the ready ones join the policy (linked to an idle client or preempting the
    /// lowest-priority one).
    pub fn release_due(&mut self, now: u64, mut record: impl FnMut(&Job)) {
        let mut scratch = std::mem::take(&mut self.scratch);
        self.book.release_due(now, |j, ready| {
            record(&j);
            if ready {
                scratch.push(j);
            }
        });
        for j in scratch.drain(..) {
            self.policy.job_ready(j.prio);
        }
        self.scratch = scratch;
    }

    /// Whether `(task, seq)` is the task's head job (released, not completed).
    fn is_head(&self, task: u32, seq: u32) -> bool {
        (task as usize) < self.balance.len() && self.book.head(task as usize).is_some_and(|h| h.seq() == seq)
    }

    /// Operation (1) on the DSP: job `seq` of `task` was resumed (by an external event, or
    /// by a client whose message this is). Precondition: the waker cleared the job's flag
    /// (`Pairs::wake`) before.
    pub fn resumed(&mut self, task: u32, seq: u32) {
        if !self.is_head(task, seq) {
            return;
        }
        let b = &mut self.balance[task as usize];
        let was = b.held();
        b.resumes += 1;
        if !was && b.held() {
            let p = self.book.job(task, seq).prio;
            self.policy.job_ready(p);
        } else if was {
            // Early: its suspension's message is still in flight and the job still held.
            self.pokes.push(task);
        }
    }

    /// Operation (4): the DSP learns that job `seq` of `task` suspended on `sender` (the module
    /// docs: discarded wherever it is, the sender refilled).
    pub fn suspended_on(&mut self, sender: usize, task: u32, seq: u32) {
        if !self.is_head(task, seq) {
            return;
        }
        let b = &mut self.balance[task as usize];
        let was = b.held();
        b.suspends += 1;
        if !was || b.held() {
            // Not the crossing: its resumption was handled first (or it was not held).
            return;
        }
        let p = self.book.job(task, seq).prio;
        #[cfg(test)]
        if self.naive_suspend {
            // The broken twin: "the sender became idle", so whatever it was linked to goes.
            self.policy.unlink(sender);
            self.policy.link_all();
            return;
        }
        if self.policy.linked(sender) == Some(p) {
            self.policy.unlink(sender);
        } else {
            // The race: preempted and queued (or already linked elsewhere) before the message.
            self.policy.job_done(p);
        }
        self.policy.link_all();
    }

    /// Operation (6): `job` completed on `sender`. If it is still linked to the sender it is
    /// unlinked, otherwise it is removed where it is (re-queued after a preemption the client
    /// had not noticed, or even linked elsewhere: the races of §III-C); the task's next job
    /// joins at once if already released (a tardy job), or waits for its release; then the
    /// highest-priority ready jobs are linked.
    pub fn completed(&mut self, sender: usize, job: Job) {
        if self.policy.linked(sender) == Some(job.prio) {
            self.policy.unlink(sender);
        } else {
            self.policy.job_done(job.prio);
        }
        self.balance[job.task() as usize] = Balance::default();
        if let Some(next) = self.book.complete(&job) {
            self.policy.enqueue(next.prio);
        }
        self.policy.link_all();
    }

    /// Handles one client message.
    pub fn handle(&mut self, msg: &Msg) {
        match msg.op {
            OP_COMPLETE => {
                let job = self.book.job(msg.task, msg.seq);
                self.completed(msg.sender as usize, job);
            }
            OP_SUSPEND => self.suspended_on(msg.sender as usize, msg.task, msg.seq),
            OP_RESUME => self.resumed(msg.task, msg.seq),
            _ => {}
        }
    }

    /// Publishes the policy's changed links to the clients (with link swaps); `signal(c)` asks
    /// client `c` to reschedule (called under `c`'s lock). Then the early resumptions: a job
    /// still linked to a client is published there again, so that a client that refused it
    /// while it slept takes it now.
    pub fn enact<B: Primitives>(&mut self, pairs: &Pairs<B>, mut signal: impl FnMut(usize)) {
        let DspCore { book, policy, publisher, pokes, .. } = self;
        publisher.enact(policy, pairs, |p| book.job_of(p), &mut signal);
        for t in pokes.drain(..) {
            let Some(h) = book.head(t as usize) else { continue };
            if let Some(c) = (0..policy.m()).find(|&c| policy.linked(c) == Some(h.prio)) {
                pairs.publish(c, Some(h), |needed| {
                    if needed {
                        signal(c)
                    }
                });
            }
        }
    }

    /// The consistency check at rest: every pending, non-suspended job linked or queued once,
    /// the G-EDF invariant, no job scheduled on two clients.
    pub fn check(&self, scheduled: impl IntoIterator<Item = Job>) -> Result<(), crate::error::Inconsistency> {
        let m = self.policy.m();
        let linked: Vec<Option<Prio>> = (0..m).map(|c| self.policy.linked(c)).collect();
        let pending: Vec<Prio> = heads(&self.book).into_iter().filter(|p| self.balance[p.task as usize].held()).collect();
        check_at_rest(&pending, &linked, self.policy.ready_queue().keys(), scheduled, true).map_err(Into::into)
    }
}

#[cfg(test)]
#[path = "protocol_tests.rs"]
mod tests;
