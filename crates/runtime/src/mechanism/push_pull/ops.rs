//! The push/pull core: per-CPU run-queues under their own spin locks, their cached earliest
//! ranks, the overloaded mask and a find-CPU structure, with the operations of SCHED_DEADLINE
//! (Lelli et al., 2011, §4; Linux `kernel/sched/deadline.c`): `enqueue` / `dequeue` (which
//! keep the caches and the find-CPU structure current), `push_one` (`push_dl_task` with
//! `find_lock_later_rq` and its retry limit), `pull` (`pull_dl_task`), `pick`. Everything a
//! caller observes goes through the mechanisms' one effects interface ([`Effects`]) — lock
//! acquisition (traced or not), reschedule requests, the spans of the four operations (the
//! terms `T_PUSH` .. `T_DEQ`), push failures (`T_FAIL`) — so that the plugin (the engine's
//! `Ctx`, real threads, traced), the virtual-time runs (`vtime`) and the cost replay (`replay`,
//! single-threaded, timed per operation) run exactly this code.
//!
//! **Run-queue state** ([`Rq`], under its lock): `curr` — the job the CPU's worker runs (changed
//! only by that worker, in `schedule`: Linux's `rq->curr`) — and `queued`, the pushable set
//! (queued, not running, by rank). The run-queue's *earliest* rank is the best of both (Linux
//! keeps the running task in its tree: `earliest_dl.curr`), its *next* the second best
//! (`earliest_dl.next`); a run-queue is *overloaded* when it holds two jobs or more and at least
//! one is queued (`dl_nr_running > 1`). All three are published for lock-free readers:
//! `earliest[c]` (the linear scan, the pushers' targets), `next[c]` (the pullers' racy check)
//! and the overloaded mask (`dlo_mask`), and the earliest rank also goes to the find-CPU
//! structure whenever it changes — always under run-queue `c`'s lock (the precondition of
//! `FindCpu::set`).
//!
//! **Locks.** Run-queue locks are taken two at a time in CPU-id order ([`Core::double_lock`],
//! Linux's `double_lock_balance` in the form Cerqueira et al., RTAS 2014, §II-C describe):
//! a CPU holding its own lock that needs a lower-numbered one drops its own, takes the lower,
//! retakes its own, and re-validates what it decided before the drop. The find-CPU structures'
//! locks and the job books' locks are leaves.

use super::super::{Effects, Job};
use crate::queue::cpumask::CpuMask;
use crate::queue::find_cpu::{Earliest, FindCpu, FREE};
use crate::queue::runqueue::RunQueue;
use crate::sync::{Atom, Primitives, SpinGuard, SpinLock, Std};
use crate::RunError;
use crossbeam_utils::CachePadded;
use std::sync::atomic::Ordering;

/// One CPU's run-queue (under its lock).
#[derive(Debug, Clone)]
pub struct Rq {
    /// The job the CPU runs, with its rank.
    pub curr: Option<(u64, Job)>,
    /// The pushable set: queued jobs by rank.
    pub queued: RunQueue,
    overloaded: bool,
    /// The earliest rank last published (to notice changes).
    published: u64,
}

impl Rq {
    fn new(cap: usize) -> Rq {
        Rq { curr: None, queued: RunQueue::with_capacity(cap), overloaded: false, published: FREE }
    }

    /// The rank of the best job on the run-queue (running or queued); [`FREE`] if empty.
    #[inline]
    pub fn earliest(&self) -> u64 {
        let q = self.queued.first().map_or(FREE, |x| x.0);
        self.curr.map_or(q, |c| c.0.min(q))
    }

    /// The rank of the second best job on the run-queue; [`FREE`] if it holds fewer than two.
    #[inline]
    pub fn next(&self) -> u64 {
        let q1 = self.queued.first().map_or(FREE, |x| x.0);
        match self.curr {
            None => self.queued.second().map_or(FREE, |x| x.0),
            Some((c, _)) if q1 < c => c.min(self.queued.second().map_or(FREE, |x| x.0)),
            Some(_) => q1,
        }
    }

    /// Jobs on the run-queue (running and queued).
    #[inline]
    pub fn len(&self) -> usize {
        self.queued.len() + usize::from(self.curr.is_some())
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the CPU must reschedule: its best job is queued, not running.
    #[inline]
    pub fn needs_resched(&self) -> bool {
        match (self.curr, self.queued.first()) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some((c, _)), Some((q, _))) => q < c,
        }
    }
}

/// The push/pull entries' own terms (indices into their `terms`): the spans of push and pull,
/// a push failure's attempts, and with `op_spans` the spans of enqueue and dequeue.
pub const T_PUSH: u32 = 0;
pub const T_PULL: u32 = 1;
pub const T_FAIL: u32 = 2;
pub const T_ENQ: u32 = 3;
pub const T_DEQ: u32 = 4;

/// The operations the core traces as spans (the four of Lelli et al., 2011, §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Push,
    Pull,
    Enqueue,
    Dequeue,
}

impl Op {
    pub const ALL: [Op; 4] = [Op::Push, Op::Pull, Op::Enqueue, Op::Dequeue];
    pub fn name(self) -> &'static str {
        match self {
            Op::Push => "push",
            Op::Pull => "pull",
            Op::Enqueue => "enqueue",
            Op::Dequeue => "dequeue",
        }
    }
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
    /// The operation's span term.
    #[inline]
    pub const fn term(self) -> u32 {
        match self {
            Op::Push => T_PUSH,
            Op::Pull => T_PULL,
            Op::Enqueue => T_ENQ,
            Op::Dequeue => T_DEQ,
        }
    }
    /// The operation whose span term is `term` (`None`: another term).
    #[inline]
    pub fn of_term(term: u32) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.term() == term)
    }
}

/// A run-queue guard.
pub type Guard<'a, B> = SpinGuard<'a, Rq, B>;

/// The run-queues, their published state and the find-CPU structure `F`.
pub struct Core<F, B: Primitives = Std> {
    rqs: Box<[CachePadded<SpinLock<Rq, B>>]>,
    earliest: Box<[CachePadded<B::U64>]>,
    next: Box<[CachePadded<B::U64>]>,
    overloaded: CpuMask<B>,
    find: F,
    retries: u32,
    /// Whether enqueue and dequeue are traced as spans (push and pull always are).
    op_spans: bool,
}

impl<F: FindCpu<B>, B: Primitives> Core<F, B> {
    /// `m` empty run-queues (room for `n` jobs each), `find` sized for `m`, at most `retries`
    /// (≥ 1) attempts per push.
    pub fn new(m: usize, n: usize, find: F, retries: u32) -> Core<F, B> {
        let pad = |v: u64| (0..m).map(|_| CachePadded::new(B::U64::new(v))).collect::<Box<[_]>>();
        Core {
            rqs: (0..m).map(|c| CachePadded::new(SpinLock::new(c as u32, Rq::new(n)))).collect(),
            earliest: pad(FREE),
            next: pad(FREE),
            overloaded: CpuMask::new(m),
            find,
            retries: retries.max(1),
            op_spans: true,
        }
    }

    /// Whether enqueue and dequeue are traced as spans (on unless set off: the `op_spans`
    /// parameter of the registered mechanisms, off by default there, since it costs two
    /// records per operation on the real path).
    pub fn set_op_spans(&mut self, on: bool) {
        self.op_spans = on;
    }

    #[inline]
    fn begin<E: Effects>(&self, env: &mut E, op: Op) {
        if self.op_spans || matches!(op, Op::Push | Op::Pull) {
            env.term_start(op.term());
        }
    }

    #[inline]
    fn end<E: Effects>(&self, env: &mut E, op: Op) {
        if self.op_spans || matches!(op, Op::Push | Op::Pull) {
            env.term_end(op.term());
        }
    }

    pub fn m(&self) -> usize {
        self.rqs.len()
    }

    /// Run-queue `cpu`'s lock.
    #[inline]
    pub fn rq(&self, cpu: usize) -> &SpinLock<Rq, B> {
        &self.rqs[cpu]
    }

    pub fn find(&self) -> &F {
        &self.find
    }

    /// The published earliest ranks (what `find` scans).
    pub fn earliest(&self) -> &Earliest<B> {
        &self.earliest
    }

    /// Publishes run-queue `cpu`'s earliest and next ranks and its overload bit after a
    /// change, and tells the find-CPU structure when the earliest changed.
    /// Precondition: `rq` is run-queue `cpu`, locked.
    #[inline]
    fn publish(&self, cpu: usize, rq: &mut Rq) {
        let e = rq.earliest();
        if e != rq.published {
            rq.published = e;
            self.earliest[cpu].store(e, Ordering::Release);
            self.find.set(cpu, e);
        }
        self.next[cpu].store(rq.next(), Ordering::Release);
        let ov = rq.len() >= 2 && !rq.queued.is_empty();
        if ov != rq.overloaded {
            rq.overloaded = ov;
            if ov {
                self.overloaded.set(cpu);
            } else {
                self.overloaded.clear(cpu);
            }
        }
    }

    /// `enqueue_task`: `job` (rank `rank`) joins run-queue `cpu`. Precondition: `rq` is
    /// run-queue `cpu`, locked; no job of that rank is on it.
    #[inline]
    pub fn enqueue<E: Effects>(&self, env: &mut E, cpu: usize, rq: &mut Rq, rank: u64, job: Job) {
        self.begin(env, Op::Enqueue);
        rq.queued.insert(rank, job);
        self.publish(cpu, rq);
        self.end(env, Op::Enqueue);
    }

    /// `dequeue_task` of a queued job. Precondition: `rq` is run-queue `cpu`, locked.
    #[inline]
    pub fn dequeue<E: Effects>(&self, env: &mut E, cpu: usize, rq: &mut Rq, rank: u64) -> Option<Job> {
        self.begin(env, Op::Dequeue);
        let j = rq.queued.remove(rank);
        self.publish(cpu, rq);
        self.end(env, Op::Dequeue);
        j
    }

    /// `dequeue_task` of the running job (it completed). Precondition as [`Core::dequeue`].
    #[inline]
    pub fn dequeue_curr<E: Effects>(&self, env: &mut E, cpu: usize, rq: &mut Rq) -> Option<Job> {
        self.begin(env, Op::Dequeue);
        let j = rq.curr.take().map(|x| x.1);
        self.publish(cpu, rq);
        self.end(env, Op::Dequeue);
        j
    }

    /// `put_prev_task`: the preempted running job becomes pushable again.
    #[inline]
    pub fn put_prev(&self, cpu: usize, rq: &mut Rq) {
        if let Some((r, j)) = rq.curr.take() {
            rq.queued.insert(r, j);
            self.publish(cpu, rq);
        }
    }

    /// `pick_next_task`: the best queued job becomes the running one (none: idle).
    /// Precondition: nothing runs (`put_prev` or `dequeue_curr` came first).
    #[inline]
    pub fn pick(&self, cpu: usize, rq: &mut Rq) -> Option<Job> {
        debug_assert!(rq.curr.is_none());
        rq.curr = rq.queued.pop_first();
        self.publish(cpu, rq);
        rq.curr.map(|x| x.1)
    }

    /// Locks run-queue `other` while holding `this`'s guard `g`, in CPU-id order: directly if
    /// `other > this`, else by dropping `this`, taking `other`, retaking `this`. Returns both
    /// guards and whether `this` was dropped (then everything read under it is stale).
    #[inline]
    pub fn double_lock<'a, E: Effects>(
        &'a self,
        env: &mut E,
        this: usize,
        g: Guard<'a, B>,
        other: usize,
    ) -> (Guard<'a, B>, Guard<'a, B>, bool) {
        if other > this {
            let o = env.lock(&self.rqs[other]);
            (g, o, false)
        } else {
            drop(g);
            let o = env.lock(&self.rqs[other]);
            let t = env.lock(&self.rqs[this]);
            (t, o, true)
        }
    }

    /// `push_dl_task`: tries to move run-queue `cpu`'s earliest pushable job to a CPU where it
    /// would run at once (the find-CPU structure's choice), locking the target in CPU-id order
    /// and re-checking it there; up to `retries` targets that turn out to have changed. Returns
    /// whether a job moved. Precondition: `g` is run-queue `cpu`'s guard.
    ///
    /// Not pushed: nothing pushable; the job beats the local running job (or the CPU is idle):
    /// the CPU reschedules instead; no CPU would run it now. *Push failure* (reported to the
    /// env): every one of the `retries` attempts found its target changed — the job stays,
    /// possibly violating the global invariant (Cerqueira et al., RTAS 2014, §II-D), until a
    /// later push or a pull moves it. As in Linux, when the lock was dropped and the job left
    /// (pulled, or started running), the new earliest pushable job is tried instead.
    pub fn push_one<'a, E: Effects>(&'a self, env: &mut E, cpu: usize, mut g: Guard<'a, B>) -> (Guard<'a, B>, bool) {
        if !g.overloaded {
            return (g, false);
        }
        let Some((mut rank, _)) = g.queued.first() else { return (g, false) };
        self.begin(env, Op::Push);
        let pushed = loop {
            if g.curr.is_none_or(|c| rank < c.0) {
                env.preempt(cpu);
                break false;
            }
            // find_lock_later_rq
            let mut target = None;
            let (mut tries, mut left) = (0u32, false);
            while tries < self.retries {
                let Some(c) = self.find.find(rank, &self.earliest) else { break };
                if c == cpu || c >= self.rqs.len() {
                    break;
                }
                tries += 1;
                let (t, o, dropped) = self.double_lock(env, cpu, g, c);
                g = t;
                if dropped && !g.queued.contains(rank) {
                    left = true;
                    break;
                }
                if rank < o.earliest() {
                    target = Some((c, o));
                    break;
                }
            }
            if let Some((c, mut o)) = target {
                if let Some(j) = self.dequeue(env, cpu, &mut g, rank) {
                    self.enqueue(env, c, &mut o, rank, j);
                    env.preempt(c);
                }
                break true;
            }
            if tries >= self.retries && !left {
                env.term_value(T_FAIL, tries as u64);
            }
            // The lock may have been dropped: try the new earliest pushable job, if it changed.
            match g.queued.first() {
                Some((r, _)) if r != rank && g.overloaded => rank = r,
                _ => break false,
            }
        };
        self.end(env, Op::Push);
        (g, pushed)
    }

    /// `push_dl_tasks`: pushes while jobs move.
    pub fn push_all<'a, E: Effects>(&'a self, env: &mut E, cpu: usize, mut g: Guard<'a, B>) -> Guard<'a, B> {
        loop {
            let (g2, moved) = self.push_one(env, cpu, g);
            g = g2;
            if !moved {
                return g;
            }
        }
    }

    /// `pull_dl_task`: for each other overloaded run-queue whose second-best job (read without
    /// its lock) beats this run-queue's best, lock both (in CPU-id order) and take its best
    /// queued job if that beats this run-queue's best and the job pulled so far, unless it is
    /// about to preempt the job running there. Precondition: `g` is run-queue `cpu`'s guard.
    pub fn pull<'a, E: Effects>(&'a self, env: &mut E, cpu: usize, mut g: Guard<'a, B>) -> Guard<'a, B> {
        if self.overloaded.next(0).is_none_or(|c| c == cpu && self.overloaded.next(c + 1).is_none()) {
            return g;
        }
        self.begin(env, Op::Pull);
        let mut dmin = FREE;
        let mut from = 0;
        while let Some(src) = self.overloaded.next(from) {
            from = src + 1;
            if src == cpu || src >= self.rqs.len() {
                continue;
            }
            if !g.is_empty() && g.earliest() < self.next[src].load(Ordering::Acquire) {
                continue;
            }
            let (t, mut s, _) = self.double_lock(env, cpu, g, src);
            g = t;
            if s.len() > 1 {
                if let Some((r, _)) = s.queued.first() {
                    let wanted = r < dmin && (g.is_empty() || r < g.earliest());
                    let runs_there = s.curr.is_some_and(|c| r < c.0);
                    if wanted && !runs_there {
                        if let Some(j) = self.dequeue(env, src, &mut s, r) {
                            self.enqueue(env, cpu, &mut g, r, j);
                            dmin = r;
                        }
                    }
                }
            }
        }
        self.end(env, Op::Pull);
        g
    }

    /// Checks the published state against the run-queues at rest (no concurrent update): the
    /// caches, the overloaded mask and the find-CPU structure (`FindCpu::check`).
    pub fn check(&self) -> Result<(), RunError> {
        let mut ranks = Vec::with_capacity(self.rqs.len());
        for (c, l) in self.rqs.iter().enumerate() {
            let rq = l.lock_untraced();
            let (e, n) = (rq.earliest(), rq.next());
            if self.earliest[c].load(Ordering::Acquire) != e || self.next[c].load(Ordering::Acquire) != n {
                return Err(RunError::Internal(format!("run-queue {c}: published earliest/next differ from its jobs")));
            }
            let ov = rq.len() >= 2 && !rq.queued.is_empty();
            if self.overloaded.test(c) != ov {
                return Err(RunError::Internal(format!("run-queue {c}: overload bit {} but {} jobs", !ov, rq.len())));
            }
            ranks.push(e);
        }
        self.find.check(&ranks)
    }
}
