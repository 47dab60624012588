//! RTWS on real threads: global EDF for jobs with priority-aware work stealing for the threads
//! of fork-join jobs (Real-Time Work-Stealing, the RTWS paper in `docs/papers.md`: §III task
//! model, §IV Definitions 1–2, §V rules A–F). Design note: `docs/mechanisms/rtws.md`.
//!
//! **Two designs, one parameter.** `deques=lockfree` (the default, this file) keeps the
//! paper's split: Rule A's global EDF queue under its own lock, and per CPU a priority queue of
//! deques ([`crate::queue::ws_deque`], lock-free Chase–Lev deques) whose owner pushes and pops
//! at the bottom while thieves take the top. `deques=locked` ([`locked`]) is the first design,
//! kept as the measurements' baseline: the policy's one state machine (global queue and every
//! deque) under one global lock.
//!
//! **What takes which lock (`deques=lockfree`).**
//! * Rule C on the fast path — a CPU's thread completed, readied no successor and was not the
//!   last of its job — is the owner's pop of its own queue and nothing else: no lock, no shared write but the
//!   deque's and this CPU's `running` record (a single-writer seqlock that the §V check reads).
//!   The term `pop` is that pop.
//! * Everything else runs under the *global queue's lock*: the job book and releases (Rule
//!   A), the completion of a job's last node, the push of the successors a completion readied
//!   (Rule B: the owner's pushes), Rule D, Rule E (the term `steal`), the §V preemption check and its requeueing
//!   (§V (i)–(iii), Rule F: a stolen thread goes to the global queue, a local one back to the
//!   bottom of its deque, pushed by its owner).
//!
//! **Which rule needs a consistent view of several deques, and how it gets one.** Rule E with
//! Definitions 1–2: the thief takes "the earliest deadline thread among the ones in the top of
//! the highest-priority non-empty deques", ties to the first processor — a minimum over every
//! CPU's queue at one instant. The thief reads each queue in turn (`Stealer::peek`), so the
//! view is consistent only if nothing is *added* while it reads. Here every push (a fork, a
//! requeue) and every steal happens under the global queue's lock, which the thief holds: the
//! only concurrent changes are owners' pops, which remove. A pop never changes a deque's top
//! item (it takes the bottom; taking the last item races the thief's compare-exchange, which
//! then fails and the thief looks again), and it can only make another CPU's best top worse.
//! So when the thief's compare-exchange succeeds, the item it takes is still the minimum of
//! Definition 2 over every CPU, ties included (`rule_e_takes_the_definition_2_minimum`
//! below). Retries are bounded: each is an item some owner popped, and nothing is added while
//! the thief holds the lock. Definition 1's "busy" is read from the `running` records.
//!
//! The §V preemption check also reads every CPU: what each runs. It runs under the global
//! lock, but a CPU's fast path changes its own record without that lock, so the check sees a
//! record per CPU as of some instant of its read — as a kernel's check reads remote run-queues
//! under its own lock only. The check is made (as in `deques=locked`) in the target's own
//! `schedule`, which re-reads every record under the lock; a fast path that ran meanwhile is a
//! scheduling event the check then sees. Work conservation needs no more: every push and every
//! decision to idle is taken under the global lock, so an idle CPU never misses work added
//! before it idled, and after every push idle CPUs are asked to reschedule.
//!
//! **Deferred preemption check, jobs and threads, steals**: as in `deques=locked` (a released
//! job is recorded as pending; the target `rtsched_policy::rtws::preemption_target` names is
//! asked to reschedule and the check runs in its `schedule`; slot `s` of job `j` is thread `s`
//! of job `j` of its fork-join task; steals are `Steal` trace records). The pure rules —
//! [`preemption_target`], [`choose_victim`], [`Origin::requeue`] — are the policy's.
//!
//! **Fast path and requests.** The fast path does not answer this CPU's reschedule requests
//! (it takes no lock under which they are sent): a request that arrived stays pending, and the
//! worker comes back to `schedule` at its next poll, where the slow path answers it.
//!
//! **DAG jobs.** The run's precedence structure ([`Shape`]) is a DAG per task: a fork-join
//! set runs as its DAG (a region's threads become ready together when the previous region's
//! last thread completes), and a DAG set as given. A job that starts pushes its sources; a
//! node that completes decrements its successors' counts of outstanding predecessors, and the
//! successors it leaves at zero are pushed to the bottom of the job's deque on *this* CPU —
//! the paper's Rule B for the threads a job generates where it runs, the local push that keeps
//! a DAG's successor with the CPU that computed its inputs. Pushes take the global lock (the
//! steal argument below needs every push under it), so the fast path is a completion that
//! readies no successor and does not complete the job.
//!
//! **Self-suspending jobs** (the plugin contract's block and wake, rules 6–7). The RTWS
//! paper's model (§III) has no self-suspension; the rule that fits its §V rules A–F, in both
//! designs:
//! * *block* (`schedule(Prev::Blocked(job))`) — the thread leaves its CPU as at a completion
//!   without a join (no precedence count changes), the job book marks the job suspended, and
//!   the CPU takes work by Rules C–E (its own deque, the global queue, a steal);
//! * *wake* ([`Plugin::wake`]) — the job re-enters Rule A's global EDF queue as a released job
//!   does, release and deadline unchanged, followed by the §V preemption check (deferred to
//!   the target's `schedule` as for a release). A woken job never goes to a deque (deques hold
//!   the threads a running job generated, Rule B), so Rule F's local/stolen distinction does
//!   not arise.
//!
//! Preconditions: only a sequential task's job blocks — its one node is the job itself
//! (`Origin::Job`), so nothing of it waits in any deque while it is suspended. Fork-join and
//! DAG nodes carry no segments (docs/formats.md), and a parallel user job's thread that
//! suspends ends the run with an error ([`Plugin::suspends_parallel`] is false): a woken
//! thread of a running parallel job has no place in rules A–F. On sequential sets RTWS is
//! global EDF, and with suspensions it stays G-EDF with suspended jobs not ready
//! (`tests::blocks_and_wakes_follow_the_policy_and_settle_to_gedf`; the simulator's RTWS
//! equals its G-EDF job for job, `crates/sim/tests/rtws_oracles.rs`).
//!
//! Assumptions: periodic releases (sporadic tasks at their densest), any deadlines, EDF with
//! ties by task index then job number (the one `Prio` order), jobs of a task in release order.

pub mod locked;
mod percpu;

use crate::mechanism::forkjoin::{check_task, Shape};
use crate::mechanism::params::{ParamDecl, ParamKind, ParamSet};
use crate::mechanism::registry::{self, Backend, DedicatedCpu, Entry, InvariantKind, PlacementKind, Setup, TermSpec};
use crate::mechanism::release_domain::{one_release_domain, ReleaseDomain};
use crate::mechanism::{Accounting, Ctx, Effects, Job, Plugin, Prev, TaskParams};
use crate::queue::release::TaskBook;
use crate::queue::ws_deque::{self, Steal, Stealer, Worker};
use crate::sync::{SpinLock, Std};
use crate::tracer::RecKind;
use crate::RunError;
use percpu::{item, running_of, Owner, ReadyBuf, RunSlot};
use crossbeam_utils::CachePadded;
use rtsched_policy::rtws::{choose_victim, preemption_target, Origin, Requeue, Running, Work};
use rtsched_policy::{Prio, PriorityRule};
use std::cell::UnsafeCell;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};

/// The term id of `steal` in [`RTWS`]'s `terms`.
pub(crate) const STEAL: u32 = 0;
/// The term id of `pop`.
pub(crate) const POP: u32 = 1;

crate::mechanism_params! {
    /// RTWS's parameters (the registry's list is [`RTWS`]`.params`, derived from these).
    pub struct RtwsParams {
        deques: &'static str = ParamDecl {
            kind: ParamKind::Choice(&["lockfree", "locked"]),
            default: "lockfree",
            help: "the per-CPU deques: lock-free, owned by their CPU (the global queue under its own lock), \
                   or the first design's one global lock over the global queue and every deque (the baseline)",
        },
    }
}

pub static RTWS: Entry = Entry {
    name: "rtws",
    summary: "RTWS: global EDF for fork-join and DAG jobs with priority-aware work stealing; the global queue under its \
              own lock, per-CPU priority queues of lock-free deques popped by their owner and stolen from the top \
              (RTWS paper, §IV-V rules A-F)",
    params: RtwsParams::SPECS,
    placement: PlacementKind::None,
    parallel: true,
    dedicated: DedicatedCpu::None,
    dedicated_role: "",
    terms: &[
        TermSpec {
            name: "steal",
            symbol: "",
            help: "Rule E search of the other CPUs' deques and the take (every attempt; successes are steal records)",
            tracking: true, count: false,
        },
        TermSpec {
            name: "pop",
            symbol: "",
            help: "Rule C: the owner's pop of its own highest-priority deque (deques=lockfree: without a lock, \
                   when a thread completes, readies no successor and its job goes on; deques=locked: under the global lock)",
            tracking: true, count: false,
        },
    ],
    invariant: InvariantKind::Global,
    priority: registry::edf,
    user_jobs: true,
    suspends: true,
    backend: Backend::Engine(build),
};

fn build(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    let p = RtwsParams::from_params(s.params)?;
    let (shape, params) = Shape::of_setup(s, s.name)?;
    if p.deques == "locked" {
        return Ok(Box::new(locked::Locked::new(shape, &params, s.m, s.t0, s.end)?));
    }
    Ok(Box::new(Rtws::new(shape, &params, s.m, s.t0, s.end)?))
}

/// Everything under the global queue's lock.
struct Global {
    /// The release queue and job book over the fork-join tasks.
    book: TaskBook,
    /// Rule A's queue: jobs not started and preempted jobs and stolen threads, EDF, ties FIFO.
    queue: BTreeSet<(Prio, u64, Work)>,
    fifo: u64,
    /// Arrived jobs whose §V preemption check has not been made yet.
    pending: BTreeSet<Prio>,
    scratch: Vec<Prio>,
    /// A refused push (a broken invariant), reported by the accounting.
    error: Option<String>,
}

/// The RTWS plugin with per-CPU lock-free deques (`deques=lockfree`).
pub struct Rtws {
    shape: Shape,
    global: SpinLock<Global>,
    owners: Box<[CachePadded<Owner>]>,
    stealers: Box<[Stealer]>,
    running: Box<[CachePadded<RunSlot>]>,
    /// Per task: nodes of its head job not yet complete (the last decrement completes the job).
    left: Box<[CachePadded<AtomicU32>]>,
    /// Per slot: predecessors in its task's head job not yet complete (the decrement to zero
    /// readies the node, on the CPU that made it).
    waiting: Box<[AtomicU32]>,
    /// Per CPU: the successors its last completion readied (scratch, opened by its owner).
    ready_bufs: Box<[CachePadded<ReadyBuf>]>,
    completed_slot: Box<[AtomicU32]>,
    /// A job book never released from: job `k` of a task's release and deadline (a function
    /// of the task's parameters), read without a lock.
    calendar: TaskBook,
    /// The one release domain, polled by every worker.
    releases: ReleaseDomain,
}

impl Rtws {
    fn new(shape: Shape, params: &[TaskParams], m: usize, t0: u64, end: u64) -> Result<Rtws, RunError> {
        let n = params.len();
        if shape.tasks() != n {
            return Err(RunError::Internal(format!("rtws: {} fork-join tasks, {n} parameters", shape.tasks())));
        }
        let all: Vec<usize> = (0..n).collect();
        let book = TaskBook::new(params, &all, PriorityRule::Edf, t0, end);
        let calendar = TaskBook::new(params, &all, PriorityRule::Edf, t0, end);
        let releases = ReleaseDomain::new(false, m, book.next_due());
        // One lane per task; a lane holds ready nodes of one job, at most `max_ready`.
        let cap = shape.max_ready();
        let (owners, stealers): (Vec<_>, Vec<_>) = (0..m)
            .map(|_| {
                let (w, s) = ws_deque::new::<Std>(n, cap);
                (CachePadded::new(Owner(UnsafeCell::new(w))), s)
            })
            .unzip();
        let left = (0..n as u32).map(|i| CachePadded::new(AtomicU32::new(shape.nodes(i)))).collect();
        let slots = shape.slots();
        let waiting = (0..slots as u32).map(|s| AtomicU32::new(shape.pred_count(s))).collect();
        let ready_bufs = (0..m).map(|_| CachePadded::new(ReadyBuf(UnsafeCell::new(Vec::new())))).collect();
        Ok(Rtws {
            global: SpinLock::new(
                0,
                Global {
                    book,
                    queue: BTreeSet::new(),
                    fifo: 0,
                    pending: BTreeSet::new(),
                    scratch: Vec::with_capacity(n),
                    error: None,
                },
            ),
            shape,
            owners: owners.into(),
            stealers: stealers.into(),
            running: (0..m).map(|_| CachePadded::new(RunSlot::new())).collect(),
            left,
            waiting,
            ready_bufs,
            completed_slot: (0..slots).map(|_| AtomicU32::new(0)).collect(),
            calendar,
            releases,
        })
    }

    fn m(&self) -> usize {
        self.running.len()
    }

    /// CPU `c`'s own queue. Precondition: the caller is `schedule` with `ctx.cpu() == c`, and
    /// the returned reference is dropped before it returns (see the `Sync` impl of `Owner`).
    #[allow(clippy::mut_from_ref)]
    fn owner(&self, c: usize) -> &mut Worker {
        // SAFETY: the precondition above: only CPU c's thread opens its cell, one call at a
        // time, and no two references to it are alive at once (each use is a statement).
        unsafe { &mut *self.owners[c].0.get() }
    }

    /// CPU `c`'s list of readied successors. Precondition: as for [`Rtws::owner`].
    #[allow(clippy::mut_from_ref)]
    fn ready_buf(&self, c: usize) -> &mut Vec<u32> {
        // SAFETY: as for `owner`: only CPU c's thread opens this cell, inside its `schedule`,
        // and the reference does not outlive the call that took it.
        unsafe { &mut *self.ready_bufs[c].0.get() }
    }

    fn run(&self, c: usize) -> Option<Running> {
        self.running[c].get()
    }

    /// The engine's job for a thread (from the calendar: no lock).
    fn slot_job(&self, r: Running) -> Job {
        let j = self.calendar.job_of(r.prio);
        Job { prio: Prio { key: r.prio.key, task: r.thread, job: r.prio.job }, release: j.release, deadline: j.deadline }
    }

    fn push_global(g: &mut Global, prio: Prio, work: Work) {
        g.queue.insert((prio, g.fifo, work));
        g.fifo += 1;
    }

    /// Rule B: job `p` makes the nodes `slots` ready on `cpu` (the caller is `cpu`'s
    /// `schedule`, under the global lock): they go to the bottom of the job's deque in order.
    /// One node is the job itself, several are threads it generated (`Origin::of_region`), as
    /// a fork-join job's sequential and parallel regions.
    fn fork(&self, g: &mut Global, cpu: usize, p: Prio, slots: &[u32]) {
        let origin = Origin::of_region(slots.len());
        let w = self.owner(cpu);
        for &s in slots {
            if let Err(e) = w.push(p.task, p.key, item(p.job, s, origin)) {
                g.error.get_or_insert_with(|| format!("rtws: cpu {cpu}: push of slot {s} refused: {e:?}"));
            }
        }
    }

    /// An idle `cpu` selects (Rules C, D, E) until it runs a thread or finds nothing; a job
    /// picked from the global queue unstarted forks its first region here.
    fn fill(&self, ctx: &mut Ctx<'_>, g: &mut Global, cpu: usize) {
        loop {
            // Rule C: the bottom of its own highest-priority non-empty deque.
            ctx.term_start(POP);
            let t = self.owner(cpu).pop();
            ctx.term_end(POP);
            if let Some(t) = t {
                self.running[cpu].set(Some(running_of(t, false)));
                return;
            }
            // Rule D: the global EDF queue.
            if let Some((prio, _, work)) = g.queue.pop_first() {
                match work {
                    Work::Start => {
                        g.pending.remove(&prio);
                        self.fork(g, cpu, prio, self.shape.sources(prio.task));
                        continue;
                    }
                    Work::Thread(thread, origin) => {
                        self.running[cpu].set(Some(Running { prio, thread, origin }));
                        return;
                    }
                }
            }
            // Rule E (see the module docs for why this view is Definition 2's).
            ctx.term_start(STEAL);
            let got = self.steal(cpu);
            ctx.term_end(STEAL);
            let Some((victim, r)) = got else { return };
            self.running[cpu].set(Some(r));
            let j = self.slot_job(r);
            ctx.trace().record(RecKind::Steal, j.task(), j.seq(), victim as u64);
            return;
        }
    }

    /// Rule E, Definitions 1–2. Precondition: the global lock is held (no push can happen).
    fn steal(&self, thief: usize) -> Option<(usize, Running)> {
        loop {
            let views = (0..self.m()).map(|q| {
                let top = if q == thief { None } else { self.stealers[q].peek() };
                (q, self.run(q).is_some(), top.map(|(key, lane)| Prio { key, task: lane, job: 0 }))
            });
            let (q, p) = choose_victim(thief, views)?;
            match self.stealers[q].steal_lane(p.task) {
                Steal::Taken(t) => return Some((q, running_of(t, true))),
                // Its owner took the last item meanwhile: look again.
                Steal::Empty | Steal::Retry => continue,
            }
        }
    }

    /// Items waiting anywhere (the global queue and every deque).
    fn waiting_total(&self, g: &Global) -> usize {
        g.queue.len() + self.stealers.iter().map(Stealer::len).sum::<usize>()
    }

    /// The §V check for the arrived jobs, highest priority first, made on `cpu` (whose thread,
    /// if any, has stopped): while every CPU is busy, a job the rule sends to `cpu` preempts it
    /// now; a job it sends elsewhere is requested there (and waits, as do the lower ones); a job
    /// the rule sends nowhere stays queued (Rule D will give it a CPU).
    fn checks(&self, ctx: &mut Ctx<'_>, g: &mut Global, cpu: Option<usize>) {
        while let Some(&p) = g.pending.first() {
            let running: Vec<Option<Prio>> = (0..self.m()).map(|c| self.run(c).map(|r| r.prio)).collect();
            if running.iter().any(Option::is_none) {
                // Idle CPUs (asked to reschedule) take queued work first (Rule D).
                return;
            }
            match preemption_target(p, running) {
                None => {
                    g.pending.remove(&p);
                }
                Some(c) if Some(c) == cpu => {
                    g.pending.remove(&p);
                    self.preempt_for(ctx, g, c, p);
                }
                Some(c) => {
                    ctx.preempt(c);
                    return;
                }
            }
        }
    }

    /// §V on `cpu` (the caller): if job `p` still waits unstarted, the thread `cpu` runs is
    /// requeued by its origin ((i)–(iii), Rule F) and `p` forks here.
    fn preempt_for(&self, ctx: &mut Ctx<'_>, g: &mut Global, cpu: usize, p: Prio) {
        let entry = g.queue.range((p, 0, Work::Start)..).next().copied();
        let Some(e @ (q, _, Work::Start)) = entry else { return };
        if q != p {
            return;
        }
        let Some(r) = self.run(cpu) else { return };
        g.queue.remove(&e);
        match r.origin.requeue() {
            Requeue::Global => Self::push_global(g, r.prio, Work::Thread(r.thread, r.origin)),
            Requeue::LocalBottom => {
                if let Err(e) = self.owner(cpu).push(r.prio.task, r.prio.key, item(r.prio.job, r.thread, Origin::Local))
                {
                    g.error.get_or_insert_with(|| format!("rtws: cpu {cpu}: requeue of slot {} refused: {e:?}", r.thread));
                }
            }
        }
        self.running[cpu].set(None);
        self.fork(g, cpu, p, self.shape.sources(p.task));
        self.fill(ctx, g, cpu);
    }

    /// Work conservation: every idle CPU is asked to reschedule while work waits (it then
    /// takes it by Rules C, D or E); then the pending preemption checks.
    fn after(&self, ctx: &mut Ctx<'_>, g: &mut Global, cpu: Option<usize>) {
        if self.waiting_total(g) > 0 {
            for c in 0..self.m() {
                if Some(c) != cpu && self.run(c).is_none() {
                    ctx.preempt(c);
                }
            }
        }
        self.checks(ctx, g, cpu);
    }

    /// The block of `j` (its thread already left its CPU): the job book marks it suspended,
    /// so it is held nowhere until [`Plugin::wake`]. Only a sequential task's job blocks (its
    /// one node is the job itself, `Origin::Job`: nothing of it waits in a deque); the engine
    /// refuses a suspending thread of a parallel job (`Plugin::suspends_parallel`).
    fn block(&self, g: &mut Global, j: Job) {
        let bj = self.book_job(j);
        if self.shape.nodes(bj.task()) != 1 {
            g.error.get_or_insert_with(|| format!("rtws: a thread of the parallel job {bj:?} blocked"));
            return;
        }
        g.book.suspend(&bj);
    }

    /// A node of `task`'s head job completed on `cpu`, readying the nodes in `cpu`'s ready
    /// list (pushed here), or completing the job (`last`): the counts are reset for the next
    /// job — no node of this one is left to touch them — and the task's next job (if
    /// released) arrives.
    fn join(&self, g: &mut Global, cpu: usize, task: u32, last: bool) {
        let Some(head) = g.book.head(task as usize) else {
            g.error.get_or_insert_with(|| format!("rtws: task {task} completed a node without a job"));
            return;
        };
        if !last {
            let ready = std::mem::take(self.ready_buf(cpu));
            self.fork(g, cpu, head.prio, &ready);
            *self.ready_buf(cpu) = ready;
            return;
        }
        for s in self.shape.all_slots(task) {
            self.waiting[s as usize].store(self.shape.pred_count(s), Ordering::Relaxed);
        }
        self.left[task as usize].store(self.shape.nodes(task), Ordering::Relaxed);
        if let Some(next) = g.book.complete(&head) {
            Self::push_global(g, next.prio, Work::Start);
            g.pending.insert(next.prio);
        }
    }

    /// The book's job (its fork-join task's, not the slot's) for the engine's job `j`.
    fn book_job(&self, j: Job) -> Job {
        Job { prio: Prio { key: j.prio.key, task: self.shape.task_of(j.task()), job: j.seq() }, ..j }
    }

    /// Everything but the fast path, under the global queue's lock: a join (`joined`), or a
    /// block (`blocked`: the job's thread left `cpu`, whose record is already cleared).
    fn slow(&self, ctx: &mut Ctx<'_>, cpu: usize, joined: Option<(u32, bool)>, blocked: Option<Job>) -> Option<Job> {
        let mut guard = self.global.lock(ctx.trace());
        let g = &mut *guard;
        if let Some((task, last)) = joined {
            self.join(g, cpu, task, last);
        }
        if let Some(j) = blocked {
            self.block(g, j);
        }
        // A preemption requested of this CPU (its thread has stopped).
        self.checks(ctx, g, Some(cpu));
        if self.run(cpu).is_none() {
            self.fill(ctx, g, cpu);
        }
        self.after(ctx, g, Some(cpu));
        let next = self.run(cpu).map(|r| self.slot_job(r));
        ctx.ack_resched();
        next
    }
}

impl Plugin for Rtws {
    fn name(&self) -> &'static str {
        RTWS.name
    }
    one_release_domain!(releases);

    /// Rule A: released jobs enter the global EDF queue; idle CPUs are asked to take them and
    /// the §V preemption check is requested.
    fn release(&self, ctx: &mut Ctx<'_>, _domain: usize, now: u64) {
        let mut guard = self.global.lock(ctx.trace());
        let g = &mut *guard;
        let mut scratch = std::mem::take(&mut g.scratch);
        let shape = &self.shape;
        g.book.release_due(now, |j, ready| {
            for s in shape.all_slots(j.task()) {
                let sj = Job { prio: Prio { key: j.prio.key, task: s, job: j.seq() }, ..j };
                ctx.record_release(&sj);
            }
            if ready {
                scratch.push(j.prio);
            }
        });
        scratch.sort_unstable();
        for p in scratch.drain(..) {
            Self::push_global(g, p, Work::Start);
            g.pending.insert(p);
        }
        g.scratch = scratch;
        self.after(ctx, g, None);
        self.releases.set(g.book.next_due());
    }

    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev, _now: u64) -> Option<Job> {
        let cpu = ctx.cpu();
        if let Prev::Blocked(j) = prev {
            // The block: the thread leaves its CPU as at a completion without a join, and the
            // CPU takes work by Rules C–E (the slow path, for the job book's lock).
            self.running[cpu].set(None);
            return self.slow(ctx, cpu, None, Some(j));
        }
        let Prev::Completed(j) = prev else {
            // Idle, or preempted (it resumes unless a check preempts it): the slow path.
            return self.slow(ctx, cpu, None, None);
        };
        let slot = j.task();
        self.completed_slot[slot as usize].fetch_add(1, Ordering::Relaxed);
        let task = self.shape.task_of(slot);
        let ready = self.ready_buf(cpu);
        ready.clear();
        for &v in self.shape.successors(slot) {
            if self.waiting[v as usize].fetch_sub(1, Ordering::AcqRel) == 1 {
                ready.push(v);
            }
        }
        let readied = !ready.is_empty();
        let last = self.left[task as usize].fetch_sub(1, Ordering::AcqRel) == 1;
        if !last && !readied {
            // The fast path: Rule C, the owner's pop, no lock.
            ctx.term_start(POP);
            let t = self.owner(cpu).pop();
            ctx.term_end(POP);
            if let Some(t) = t {
                let r = running_of(t, false);
                self.running[cpu].set(Some(r));
                return Some(self.slot_job(r));
            }
        }
        self.running[cpu].set(None);
        self.slow(ctx, cpu, (last || readied).then_some((task, last)), None)
    }

    /// The wake-up (module docs, "Self-suspending jobs"): the job re-enters Rule A's global
    /// EDF queue as a released job does — unstarted (`Work::Start`: the CPU that takes it
    /// pushes its one node to its deque and pops it, Rule B–C, so it never waits in a deque),
    /// with its release and deadline unchanged — and its §V preemption check is pending;
    /// idle CPUs are asked to take it. A wake-up without a block is ignored (the job book says
    /// whether the job was suspended). Any thread may call it: everything is under the global
    /// queue's lock.
    fn wake(&self, ctx: &mut Ctx<'_>, job: Job, _now: u64) {
        let bj = self.book_job(job);
        let mut guard = self.global.lock(ctx.trace());
        let g = &mut *guard;
        if !g.book.resume(&bj) {
            return;
        }
        Self::push_global(g, bj.prio, Work::Start);
        g.pending.insert(bj.prio);
        self.after(ctx, g, None);
    }

    fn suspends_parallel(&self) -> bool {
        false
    }

    fn accounting(&self) -> Accounting {
        let g = self.global.lock_untraced();
        let (rel, done) = (g.book.released(), g.book.completed());
        let mut consistent = match &g.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        };
        let completed: Vec<u32> = self.completed_slot.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        // Exactly once and in order: every node once per completed job, and in the head job
        // only after all its predecessors; the precedence counts match.
        for task in 0..self.shape.tasks() as u32 {
            if consistent.is_err() {
                break;
            }
            let i = task as usize;
            consistent = check_task(
                &self.shape,
                task,
                done[i],
                g.book.head(i).is_some(),
                |s| completed[s as usize],
                |s| self.waiting[s as usize].load(Ordering::Relaxed),
                self.left[i].load(Ordering::Relaxed),
            )
            .map_err(|e| format!("rtws: {e}"));
        }
        let released = (0..self.shape.slots() as u32).map(|s| rel[self.shape.task_of(s) as usize]).collect();
        Accounting { released, completed, consistent: consistent.map_err(crate::Inconsistency) }
    }
}

#[cfg(test)]
mod tests;
