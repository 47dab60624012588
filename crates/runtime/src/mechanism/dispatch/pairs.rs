//! The per-client *linked*/*scheduled* pairs of a dedicated-scheduling-processor design and
//! the scheduling processor's publication of the policy's links to them — G-EDF-MP (Cerqueira,
//! Vanga & Brandenburg, RTAS 2014, §III-B "Per-client state", §III-C operation (2) and
//! "Concurrency challenges").
//!
//! Each client `c` has a pair under its own spin lock, shared only by `c` and the scheduling
//! processor (never nested: no thread ever holds two pair locks):
//! * `linked` — what `c` should run: written by the scheduling processor ([`Pairs::publish`]),
//!   and invalidated by the client when the linked job completes ([`Pairs::pick`]);
//! * `scheduled` — what `c` runs: written only by the client, in [`Pairs::pick`], which checks
//!   `linked` and updates `scheduled` atomically (one critical section).
//!
//! State diagram of one client's pair (L = linked, S = scheduled):
//! ```text
//!   (L=∅,S=∅) --publish J--> (L=J,S=∅) --pick--> (L=J,S=J) --complete J--> (L=∅,S=∅)
//!                                                 |   ^
//!                                      publish K  |   | pick (switch to K)
//!                                                 v   |
//!                                            (L=K,S=J) --keep J (link swap)--> (L=J,S=J)
//! ```
//!
//! **Publication with link swaps** ([`Publisher::enact`]): the algorithm of
//! [`mechanism::dispatch`](super) over the pairs. The scheduling processor's own policy
//! (`rtsched_policy::Gedf`, its copy of every client's state) decides; a job `J` about to be
//! published to `c` may still be scheduled on the client `s` it was last published to. Then,
//! in one critical section of `s`, if `s.scheduled == J` the link is *kept* on `s` (`s.linked
//! = J`) and the policy's links of `c` and `s` are swapped. Otherwise `s` has left `J` for good
//! (a client only switches to what is published to it), and `J` is published to `c`. No client
//! waits for another (the deadlock of §III-C cannot arise).
//!
//! **A completed job published again**: a client that completes `J` leaves it (`S = ∅`)
//! and tells the scheduling processor by message; until the message is handled, the policy
//! may still link `J` somewhere (e.g. it had been preempted and re-queued). A client never
//! picks a job its task's completion counter says is done: it stays idle, and the completion
//! message, already in flight, makes the scheduling processor relink it. A *suspended* job
//! is refused the same way (its task's `asleep` flag, set by the suspending client in its
//! critical section and cleared by the waker): G-EDF-MP's operations (3) and (1), whose races
//! `mechanism::gedf_mp::protocol` works through.
//!
//! Generic over the platform [`Primitives`]; the loom models below check the handshake
//! including a swap (no deadlock, no job scheduled on two clients, no completed job run).

use super::{Dispatcher, Enactor};
use crate::mechanism::{Ctx, Effects};
use crate::queue::release::Job;
use crate::sync::{Atom, Primitives, SpinLock, Std};
use crossbeam_utils::CachePadded;
use rtsched_policy::{Policy, Prio};
use std::sync::atomic::Ordering;

/// One client's pair.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pair {
    pub linked: Option<Job>,
    pub scheduled: Option<Job>,
}

/// Every client's pair and every task's completion counter and suspension flag.
pub struct Pairs<B: Primitives = Std> {
    pairs: Box<[CachePadded<SpinLock<Pair, B>>]>,
    /// Per task: the number of its completed jobs (written by the completing client before it
    /// leaves its pair's critical section).
    done: Box<[B::U32]>,
    /// Per task: 1 while its current job is suspended (set by the suspending client inside its
    /// pair's critical section, cleared by the waker before it tells the scheduling processor).
    asleep: Box<[B::U32]>,
}

/// What a client leaves when it enters its scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leave {
    Nothing,
    Completed(Job),
    Suspended(Job),
}

impl<B: Primitives> Pairs<B> {
    /// `m` clients, `n` tasks.
    pub fn new(m: usize, n: usize) -> Pairs<B> {
        Pairs {
            pairs: (0..m).map(|c| CachePadded::new(SpinLock::new(c as u32, Pair::default()))).collect(),
            done: (0..n).map(|_| B::U32::new(0)).collect(),
            asleep: (0..n).map(|_| B::U32::new(0)).collect(),
        }
    }

    /// Whether `j`'s task has a suspended job (per the clients' flag).
    #[inline]
    pub fn is_asleep(&self, j: &Job) -> bool {
        self.asleep[j.task() as usize].load(Ordering::Acquire) != 0
    }

    /// Whether a client must not pick `j` even if it is linked to it: `j` completed or is
    /// suspended, and the scheduling processor has not yet handled the message that says so.
    #[inline]
    pub fn is_stale(&self, j: &Job) -> bool {
        self.is_done(j) || self.is_asleep(j)
    }

    /// Whether `j` has completed (per its task's counter).
    #[inline]
    pub fn is_done(&self, j: &Job) -> bool {
        self.done[j.task() as usize].load(Ordering::Acquire) > j.seq()
    }

    /// Client `c`'s scheduler (operation (2), and (5) for a completion): under its lock,
    /// leaves `completed` (invalidating `linked` if it is still that job), then takes `linked`
    /// — unless that job is already done — as `scheduled` and returns what to run. With `ctx`
    /// (client `c`'s), the wait for the lock is traced (inside Δsch) and the client's
    /// reschedule requests are acknowledged last, under the lock under which the scheduling
    /// processor sends them ([`Ctx::ack_resched`]).
    pub fn pick(&self, c: usize, completed: Option<Job>, ctx: Option<&mut Ctx<'_>>) -> Option<Job> {
        self.pick_leaving(c, completed.map_or(Leave::Nothing, Leave::Completed), ctx)
    }

    /// Client `c`'s side of a suspension (operation (3) of RTAS 2014, §III-C): under its lock,
    /// marks `job`'s task asleep and leaves `job` (invalidating `linked` if it is still that
    /// job: the client is idle as far as it knows), then takes `linked` as [`pick`](Self::pick)
    /// does — which is another job if the scheduling processor's preemption of `job` was
    /// already published here (the race of operation (4)).
    pub fn suspend(&self, c: usize, job: Job, ctx: Option<&mut Ctx<'_>>) -> Option<Job> {
        self.pick_leaving(c, Leave::Suspended(job), ctx)
    }

    /// The waker's side of a resumption (operation (1)): `job` may run again. Called before
    /// the scheduling processor is told (by message, or as its own external event), so that
    /// a client it then links `job` to does not refuse it.
    pub fn wake(&self, job: &Job) {
        self.asleep[job.task() as usize].store(0, Ordering::Release);
    }

    fn pick_leaving(&self, c: usize, leave: Leave, ctx: Option<&mut Ctx<'_>>) -> Option<Job> {
        let mut ctx = ctx;
        let mut p = match ctx.as_deref_mut() {
            Some(x) => self.pairs[c].lock(x.trace()),
            None => self.pairs[c].lock_untraced(),
        };
        let left = match leave {
            Leave::Nothing => None,
            Leave::Completed(j) => {
                self.done[j.task() as usize].store(j.seq() + 1, Ordering::Release);
                Some(j)
            }
            Leave::Suspended(j) => {
                self.asleep[j.task() as usize].store(1, Ordering::Release);
                Some(j)
            }
        };
        if left.is_some() && p.linked == left {
            p.linked = None;
        }
        let next = p.linked.filter(|j| !self.is_stale(j));
        p.scheduled = next;
        if let Some(x) = ctx {
            x.ack_resched();
        }
        next
    }

    /// The scheduling processor publishes `job` to client `c`; `signal(needed)` is called
    /// under the lock with whether `c` must reschedule (`scheduled != linked`).
    pub fn publish(&self, c: usize, job: Option<Job>, signal: impl FnOnce(bool)) {
        let mut p = self.pairs[c].lock_untraced();
        p.linked = job;
        signal(p.scheduled != job);
    }

    /// The swap check: if client `s` still runs `j`, `j` stays linked there (returns true).
    pub fn keep_if_scheduled(&self, s: usize, j: Job) -> bool {
        let mut p = self.pairs[s].lock_untraced();
        if p.scheduled == Some(j) {
            p.linked = Some(j);
            true
        } else {
            false
        }
    }

    /// A snapshot of client `c`'s pair.
    pub fn pair(&self, c: usize) -> Pair {
        *self.pairs[c].lock_untraced()
    }
}

const NONE: u32 = u32::MAX;

/// The scheduling processor's side: what it published to each client and, per task, the
/// client its current job was last published to (the only place it can be scheduled).
#[derive(Debug, Clone)]
pub struct Publisher {
    enactor: Enactor,
    last: Vec<u32>,
}

impl Publisher {
    pub fn new(m: usize, n: usize) -> Publisher {
        Publisher { enactor: Enactor::new(m), last: vec![NONE; n] }
    }

    /// What was last published to client `c`.
    #[cfg(test)]
    pub fn published(&self, c: usize) -> Option<Prio> {
        self.enactor.published(c)
    }

    /// Link swaps made so far. (for tests: each swap pins one CPU).
    #[cfg(test)]
    pub fn swaps(&self) -> u64 {
        self.enactor.swaps()
    }

    /// Publishes the policy's changed links (its dirty CPUs) to the clients, with link swaps
    /// (module docs); `job_of` turns a priority into the job, `signal(c)` asks client `c` to
    /// reschedule (called under `c`'s lock).
    pub fn enact<P: Policy, B: Primitives>(
        &mut self,
        policy: &mut P,
        pairs: &Pairs<B>,
        job_of: impl Fn(Prio) -> Job,
        signal: impl FnMut(usize),
    ) {
        let Publisher { enactor, last } = self;
        enactor.enact(policy, &mut ToClients { pairs, last, job_of, signal });
    }
}

/// [`Dispatcher`] over the pairs: a job may still be scheduled only on the client it was last
/// published to.
struct ToClients<'a, B: Primitives, J, S> {
    pairs: &'a Pairs<B>,
    last: &'a mut [u32],
    job_of: J,
    signal: S,
}

impl<B: Primitives, J: Fn(Prio) -> Job, S: FnMut(usize)> Dispatcher for ToClients<'_, B, J, S> {
    fn keep_where_scheduled(&mut self, j: Prio, c: usize) -> Option<usize> {
        let s = self.last[j.task as usize];
        (s != NONE && s as usize != c && self.pairs.keep_if_scheduled(s as usize, (self.job_of)(j)))
            .then_some(s as usize)
    }
    fn publish(&mut self, c: usize, link: Option<Prio>) {
        if let Some(j) = link {
            self.last[j.task as usize] = c as u32;
        }
        let signal = &mut self.signal;
        self.pairs.publish(c, link.map(&self.job_of), |needed| {
            if needed {
                signal(c)
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_policy::Gedf;

    fn job(task: u32, key: u64) -> Job {
        Job { prio: Prio { key, task, job: 0 }, release: 0, deadline: key }
    }

    /// The scenario of §III-C: B is preempted on client 1 by X but still runs there when the
    /// policy links it to client 0 (A completed there): the link is kept on 1, X goes to 0.
    #[test]
    fn a_still_scheduled_job_keeps_its_client() {
        let (a, b, x) = (job(0, 30), job(1, 40), job(2, 1));
        let links: Pairs = Pairs::new(2, 3);
        let mut pubr = Publisher::new(2, 3);
        let mut policy = Gedf::new(2);
        let of = |p: Prio| [a, b, x][p.task as usize];
        let mut sig = Vec::new();
        policy.job_ready(a.prio);
        policy.job_ready(b.prio);
        pubr.enact(&mut policy, &links, of, |c| sig.push(c));
        let on = |t: u32| (0..2).find(|&c| links.pair(c).linked.is_some_and(|j| j.task() == t)).unwrap();
        let (ca, cb) = (on(0), on(1));
        assert_eq!(links.pick(ca, None, None), Some(a));
        assert_eq!(links.pick(cb, None, None), Some(b));
        // X preempts B on cb (published, cb has not noticed).
        policy.job_ready(x.prio);
        pubr.enact(&mut policy, &links, of, |c| sig.push(c));
        assert_eq!(links.pair(cb), Pair { linked: Some(x), scheduled: Some(b) });
        // A completes on ca; the scheduling processor handles it: the policy links B to ca.
        assert_eq!(links.pick(ca, Some(a), None), None);
        assert!(links.is_done(&a));
        policy.job_done(a.prio);
        pubr.enact(&mut policy, &links, of, |c| sig.push(c));
        assert_eq!(pubr.swaps(), 1);
        assert_eq!(links.pair(cb), Pair { linked: Some(b), scheduled: Some(b) }, "B stays where it runs");
        assert_eq!(links.pair(ca).linked, Some(x), "X goes to the freed client");
        assert_eq!(policy.linked(ca), Some(x.prio));
        assert_eq!(links.pick(ca, None, None), Some(x));
    }

    /// A job that completed is never picked again, even if published before the
    /// scheduling processor learned of its completion.
    #[test]
    fn a_completed_job_is_not_picked() {
        let a = job(0, 5);
        let links: Pairs = Pairs::new(2, 1);
        links.publish(0, Some(a), |_| ());
        assert_eq!(links.pick(0, None, None), Some(a));
        assert_eq!(links.pick(0, Some(a), None), None);
        links.publish(1, Some(a), |_| ());
        assert_eq!(links.pick(1, None, None), None);
        assert_eq!(links.pair(1), Pair { linked: Some(a), scheduled: None });
    }

    mod loom_models {
        //! Client 0 runs A, client 1 runs B; concurrently X (highest priority) is released
        //! and A completes, so the scheduling processor may link B to client 0 while client 1
        //! still runs it (the swap). Every client thread claims an owner word per job when it
        //! picks the job and frees it when it leaves: a job scheduled on two clients makes a
        //! claim fail; a completed job picked again fails the assertion; a wait on another
        //! client's lock inside a lock would be a loom deadlock.
        use super::super::*;
        use crate::sync::loom_model::Loom;
        use loom::sync::atomic::AtomicU32;
        use loom::thread;
        use rtsched_policy::Gedf;
        use rtsched_policy::Policy;

        fn leak<T>(t: T) -> &'static T {
            Box::leak(Box::new(t))
        }

        fn job(task: u32, key: u64) -> Job {
            Job { prio: Prio { key, task, job: 0 }, release: 0, deadline: key }
        }

        struct Owners([AtomicU32; 3]);

        impl Owners {
            /// Client `c` stops running `old` (before its scheduler runs, as a worker saves a
            /// preempted job's state before it calls `schedule`).
            fn leave(&self, c: u32, old: Option<Job>) {
                if let Some(o) = old {
                    assert_eq!(self.0[o.task() as usize].swap(u32::MAX, Ordering::AcqRel), c);
                }
            }
            /// Client `c` starts running what its scheduler returned.
            fn claim(&self, c: u32, new: Option<Job>) {
                if let Some(n) = new {
                    let prev = self.0[n.task() as usize].swap(c, Ordering::AcqRel);
                    assert_eq!(prev, u32::MAX, "job {n:?} picked by {c} while scheduled on {prev}");
                }
            }
        }

        /// `swap = false` is the broken twin: it publishes without the swap check.
        fn model(swap: bool) {
            let mut b = loom::model::Builder::new();
            b.preemption_bound = Some(3);
            b.check(move || {
                let (a, bj, x) = (job(0, 30), job(1, 40), job(2, 1));
                let of = move |p: Prio| [a, bj, x][p.task as usize];
                let links: &Pairs<Loom> = leak(Pairs::new(2, 3));
                let owners =
                    leak(Owners([AtomicU32::new(u32::MAX), AtomicU32::new(u32::MAX), AtomicU32::new(u32::MAX)]));
                let mut policy = Gedf::new(2);
                let mut pubr = Publisher::new(2, 3);
                policy.job_ready(a.prio);
                policy.job_ready(bj.prio);
                pubr.enact(&mut policy, links, of, |_| ());
                // Which client got which job is the CPU heap's choice: read it back.
                let c_of = |t: u32| (0..2).find(|&c| links.pair(c).linked.is_some_and(|j| j.task() == t)).unwrap();
                let (ca, cb) = (c_of(0), c_of(1));
                for (c, j) in [(ca, a), (cb, bj)] {
                    assert_eq!(links.pick(c, None, None), Some(j));
                    owners.claim(c as u32, Some(j));
                }
                // Client ca: A completes, then it picks what is published (twice).
                let t0 = thread::spawn(move || {
                    owners.leave(ca as u32, Some(a));
                    let n = links.pick(ca, Some(a), None);
                    owners.claim(ca as u32, n);
                    thread::yield_now();
                    owners.leave(ca as u32, n);
                    let n = links.pick(ca, None, None);
                    assert!(n.is_none_or(|j| j != a), "a completed job was picked");
                    owners.claim(ca as u32, n);
                });
                // Client cb notices its reschedule request at some point.
                let t1 = thread::spawn(move || {
                    owners.leave(cb as u32, Some(bj));
                    let n = links.pick(cb, None, None);
                    owners.claim(cb as u32, n);
                });
                // The scheduling processor: X released (preempts B on cb), then A's completion
                // (its message) is handled — the policy refills ca with B.
                policy.job_ready(x.prio);
                pubr.enact(&mut policy, links, of, |_| ());
                policy.job_done(a.prio);
                if swap {
                    pubr.enact(&mut policy, links, of, |_| ());
                } else {
                    policy.drain_dirty_with(|_| ());
                    for c in 0..2 {
                        links.publish(c, policy.linked(c).map(of), |_| ());
                    }
                }
                t0.join().unwrap();
                t1.join().unwrap();
            });
        }

        #[test]
        fn loom_link_swap_keeps_each_job_on_one_client() {
            model(true);
        }

        /// The broken twin: publishing the policy's links without the swap check lets a
        /// client pick a job that another still runs.
        #[test]
        #[should_panic]
        fn loom_catches_publication_without_the_swap() {
            model(false);
        }
    }
}
