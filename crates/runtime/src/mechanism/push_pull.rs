//! Push/pull global scheduling as in Linux SCHED_DEADLINE (`push-pull`, global EDF) and
//! SCHED_FIFO (`push-pull-fp`, global rate-monotonic): distributed per-CPU run-queues under
//! their own spin locks, kept close to the global invariant by *pushing* and *pulling* jobs
//! (Lelli, Lipari, Faggioli & Cucinotta, "An efficient and scalable implementation of global
//! EDF in Linux", 2011, §3–§5; Cerqueira, Vanga & Brandenburg, RTAS 2014, §II-C, §II-D).
//!
//! * **Release**: each CPU is the release "timer" of the tasks `i ≡ cpu (mod m)` (its release
//!   domain); released jobs are enqueued on the releasing CPU's run-queue, which reschedules if
//!   its best job changed, and then pushes.
//! * **Push** (`ops::Core::push_one`), whenever a run-queue's best job may have changed (after
//!   a release, after every scheduling decision — Linux's `task_woken` and `post_schedule`):
//!   its earliest pushable job goes to the CPU the find-CPU structure names (an idle CPU, else
//!   the one whose earliest job is latest, if later than the job's), locked in CPU-id order and
//!   re-checked; a target that changed meanwhile is retried up to `retries` times (3, as in the
//!   SD V8 patch), then the push *fails*: counted, traced as `push_failure`, and the job stays.
//! * **Pull** (`ops::Core::pull`), when a CPU's running job completes (Linux's
//!   `pre_schedule`/`balance`) and when an idle CPU reschedules: take the earliest pushable
//!   job of every overloaded run-queue whose second-best job (read without its lock) beats
//!   this CPU's best. (Linux pulls only after a deadline task ran; pulling on idle too closes
//!   a gap: a pull may take the job an idle CPU was woken to run, and that CPU must then look
//!   for the next one itself.)
//! * **Schedule**: completion (dequeue, the task's next job if backlogged, pull), then pick the
//!   run-queue's best job, answer the reschedule requests, push.
//!
//! The find-CPU structure is a parameter (`--find-cpu linear|fmask|cpudl`, `queue::find_*`);
//! `push-pull-fp` uses `cpupri` over rate-monotonic ranks (`--priorities`). **What the policy
//! promises and what this mechanism keeps**: G-EDF (or global FP) — the `m` best ready jobs
//! run — but only *eventually*: between a release or completion and the pushes, pulls and
//! reschedules that answer it (the tracking delay), and without bound after a push failure,
//! until a later push or pull repairs it. The registry entry promises the global invariant, so
//! the priority-inversion monitor measures exactly that gap. Ties: jobs are compared by a rank
//! order-isomorphic to `rtsched_policy::Prio` (deadline, then task index), so that the
//! run-queues break ties as the policy does.
//!
//! **Fork-join jobs** (`Setup::forkjoin`; RTWS paper, §III; design note in docs/mechanisms/push-pull.md,
//! "push-pull", *Fork-join jobs*): the engine's tasks are thread slots (`backend::slot_task_set`)
//! and the job books (`book::Book`) are per fork-join task. A release records every thread of
//! the job as released but enqueues only its first region's; when the last thread of region `r`
//! completes on CPU `c`, region `r + 1`'s threads join `c`'s run-queue (Linux wakes forked
//! threads on the forking core) and the push after the decision spreads them — global EDF over
//! the ready threads with their job's deadline, the simulator's fork-join G-EDF. A sequential
//! task is one region of one thread: the same code.
//!
//! Assumptions: sporadic tasks released periodically, one job per task ready at a time (a
//! backlogged job waits for its predecessor), no self-suspension, no affinities (global).

pub mod book;
pub mod ops;
pub mod recording;
pub mod replay;
pub mod vtime;

use self::book::Book;
use self::ops::{Core, Guard};
use crate::mechanism::forkjoin::Shape;
use crate::mechanism::registry::{
    self, Backend, DedicatedCpu, Entry, InvariantKind, ParamDecl, ParamKind, ParamSet, PlacementKind, Setup, TermSpec,
};
use crate::mechanism::{Accounting, Ctx, Effects, Job, Plugin, Prev, TaskParams};
use crate::queue::cpudl::Cpudl;
use crate::queue::cpupri::Cpupri;
use crate::queue::find_cpu::FindCpu;
use crate::queue::find_linear::Linear;
use crate::queue::fmask::Fmask;
use crate::sync::SpinLock;
use crate::RunError;
use crossbeam_utils::CachePadded;
use rtsched_policy::PriorityRule;
use std::sync::atomic::{AtomicU64, Ordering};

/// The mechanism's own terms (ids = indices).
const TERMS: &[TermSpec] = &[
    TermSpec {
        name: "push",
        symbol: "push",
        help: "one push attempt: find a CPU, lock it in CPU-id order, move the job (inside Δrel or Δsch)",
        tracking: false, count: false,
    },
    TermSpec {
        name: "pull",
        symbol: "pull",
        help: "one pull scan over the overloaded run-queues after a completion (inside Δsch)",
        tracking: false, count: false,
    },
    TermSpec {
        name: "push_failure",
        symbol: "",
        help: "a push abandoned after the retry limit (value: attempts made); a count, not a time",
        tracking: false, count: true,
    },
    TermSpec {
        name: "enqueue",
        symbol: "",
        help: "a job joins a run-queue (with op_spans only; inside Δrel, Δsch, push or pull)",
        tracking: false, count: false,
    },
    TermSpec {
        name: "dequeue",
        symbol: "",
        help: "a job leaves a run-queue (with op_spans only; inside Δsch, push or pull)",
        tracking: false, count: false,
    },
];

const OP_SPANS: ParamDecl = ParamDecl {
    kind: ParamKind::Bool,
    default: "false",
    help: "also trace every enqueue and dequeue as a span (terms enqueue, dequeue; costs two records each)",
};

const RETRIES: ParamDecl = ParamDecl {
    kind: ParamKind::Int { min: 1, max: 1000 },
    default: "3",
    help: "push attempts whose target changed before the push is abandoned (SD V8: 3)",
};

/// The find-CPU variants of `push-pull`.
pub const FIND_CPU: &[&str] = &["linear", "fmask", "cpudl"];

crate::mechanism_params! {
    /// `push-pull`'s parameters ([`PUSH_PULL`]`.params` is derived from these).
    pub struct PushPullParams {
        find_cpu: &'static str = ParamDecl {
            kind: ParamKind::Choice(FIND_CPU),
            default: "cpudl",
            help: "where a push looks for a CPU: linear (scan, original SCHED_DEADLINE), fmask (free-CPU mask, \
                   then scan), cpudl (max-heap of CPU deadlines + free mask, mainline Linux)",
        },
        retries: u32 = RETRIES,
        op_spans: bool = OP_SPANS,
    }
}

crate::mechanism_params! {
    /// `push-pull-fp`'s parameters ([`PUSH_PULL_FP`]`.params`); `priorities` is read by
    /// [`registry::fixed_priorities`].
    pub struct PushPullFpParams {
        priorities: String = ParamDecl {
            kind: ParamKind::Priorities,
            default: "rm",
            help: "rm (rate-monotonic), dm (deadline-monotonic), or one rank per task, comma-separated (0 = highest)",
        },
        retries: u32 = RETRIES,
        op_spans: bool = OP_SPANS,
    }
}

/// Push/pull global EDF (SCHED_DEADLINE). Parallel: fork-join jobs (RTWS paper, §III) have a
/// region's threads released with their job, joining a run-queue when the region forks.
pub static PUSH_PULL: Entry = Entry {
    name: "push-pull",
    summary: "push/pull global EDF as in Linux SCHED_DEADLINE: per-CPU run-queues and locks, push on release \
              and preemption, pull on completion and idle, find-CPU linear / fmask / cpudl (Lelli et al., OSPERT 2011)",
    params: PushPullParams::SPECS,
    placement: PlacementKind::None,
    parallel: true,
    dedicated: DedicatedCpu::None,
    dedicated_role: "",
    terms: TERMS,
    invariant: InvariantKind::Global,
    priority: registry::edf,
    user_jobs: true,
    suspends: true,
    backend: Backend::Engine(build),
};

/// Push/pull global fixed priority (SCHED_FIFO with cpupri), rate-monotonic by default.
pub static PUSH_PULL_FP: Entry = Entry {
    name: "push-pull-fp",
    summary: "push/pull global fixed priority as in Linux SCHED_FIFO: cpupri's per-priority CPU masks, \
              rate-monotonic by default (the baseline of Lelli et al., OSPERT 2011)",
    params: PushPullFpParams::SPECS,
    priority: registry::fixed_priorities,
    backend: Backend::Engine(build_fp),
    ..PUSH_PULL
};

fn build(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    let p = PushPullParams::from_params(s.params)?;
    let (retries, op_spans) = (p.retries, p.op_spans);
    match p.find_cpu {
        "linear" => make(s, "push-pull", Linear::new(s.m), retries, op_spans),
        "fmask" => make(s, "push-pull", Fmask::new(s.m), retries, op_spans),
        "cpudl" => make(s, "push-pull", Cpudl::new(s.m), retries, op_spans),
        other => Err(RunError::Config(format!(
            "push-pull: parameter find_cpu: expected one of {}, got {other:?}",
            FIND_CPU.join(", ")
        ))),
    }
}

fn build_fp(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    let p = PushPullFpParams::from_params(s.params)?;
    make(s, "push-pull-fp", Cpupri::new(s.m, s.tasks.len()), p.retries, p.op_spans)
}

fn make<F: FindCpu + 'static>(
    s: &Setup<'_>,
    name: &'static str,
    find: F,
    retries: u32,
    op_spans: bool,
) -> Result<Box<dyn Plugin>, RunError> {
    let (shape, params) = Shape::of_setup(s, name)?;
    let mut pp = PushPull::with_shape(name, shape, &params, s.m, &s.rule, s.t0, s.end, find, retries)?;
    pp.core.set_op_spans(op_spans);
    Ok(Box::new(pp))
}

/// Rank bits: EDF ranks are `(deadline − t0) << TASK_BITS | task`.
const TASK_BITS: u32 = 20;

/// How a job's rank (the `u64` the run-queues and find-CPU structures order by) is made from
/// the job: order-isomorphic to `rtsched_policy::Prio` among jobs of distinct tasks (one job
/// per task is ready at a time), so that ties break as the policy breaks them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RankRule {
    /// `(deadline − t0) · 2^20 + task`: deadline, then task index.
    Edf { t0: u64 },
    /// The task's position in the fixed-priority order (rank, then task index): `0..n`.
    Fixed(Vec<u64>),
}

impl RankRule {
    /// The rule for `n` tasks whose jobs' priorities follow `rule`; EDF ranks need every
    /// deadline − `t0` below 2^44 ns (≈ 4.9 h) and fewer than 2^20 tasks.
    pub fn new(rule: &PriorityRule, tasks: &[TaskParams], t0: u64, end: u64) -> Result<RankRule, RunError> {
        let n = tasks.len();
        if n >= 1 << TASK_BITS {
            return Err(RunError::Config(format!("push/pull supports fewer than {} tasks, got {n}", 1u64 << TASK_BITS)));
        }
        match rule {
            PriorityRule::Edf => {
                let dmax = tasks.iter().map(|t| t.deadline).max().unwrap_or(0);
                let span = (end.saturating_sub(t0)).saturating_add(dmax);
                if span >= 1 << (64 - TASK_BITS) {
                    return Err(RunError::Config(format!(
                        "push-pull orders jobs by deadline − start in 44 bits: the run plus the largest deadline \
                         ({span} ns) must stay below {} ns",
                        1u64 << (64 - TASK_BITS)
                    )));
                }
                Ok(RankRule::Edf { t0 })
            }
            PriorityRule::Fixed(ranks) => {
                let mut order: Vec<usize> = (0..n).collect();
                order.sort_by_key(|&t| (ranks.get(t).copied().unwrap_or(u32::MAX), t));
                let mut pos = vec![0u64; n];
                for (p, &t) in order.iter().enumerate() {
                    pos[t] = p as u64;
                }
                Ok(RankRule::Fixed(pos))
            }
        }
    }

    /// The rank of `job`.
    #[inline]
    pub fn rank(&self, job: &Job) -> u64 {
        match self {
            RankRule::Edf { t0 } => (job.deadline - t0) << TASK_BITS | job.task() as u64,
            RankRule::Fixed(pos) => pos[job.task() as usize],
        }
    }
}

/// The push/pull mechanism over the find-CPU structure `F`.
pub struct PushPull<F: FindCpu> {
    name: &'static str,
    core: Core<F>,
    /// Per release domain (CPU): the job book of its fork-join tasks (a leaf lock).
    books: Box<[CachePadded<SpinLock<Book>>]>,
    next_rel: Box<[CachePadded<AtomicU64>]>,
    rank: RankRule,
    /// The run's priority rule over thread slots (the run's tasks).
    rule: PriorityRule,
    /// Thread slots and regions (one region of one thread per task when sequential).
    shape: Shape,
}

impl<F: FindCpu> PushPull<F> {
    /// `m` CPUs, tasks `params` (task `i` released by CPU `i mod m`) from `t0` until `end`, job
    /// priorities by `rule`, find-CPU structure `find` (sized for `m`), `retries` per push.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: &'static str,
        params: &[TaskParams],
        m: usize,
        rule: &PriorityRule,
        t0: u64,
        end: u64,
        find: F,
        retries: u32,
    ) -> Result<PushPull<F>, RunError> {
        let shape = Shape::of(vec![vec![1]; params.len()]);
        PushPull::with_shape(name, shape, params, m, rule, t0, end, find, retries)
    }

    /// As [`PushPull::new`] for the fork-join tasks `params` of structure `shape` (RTWS paper,
    /// §III); `rule` orders the thread slots (the run's tasks). Fork-join task `i` is released
    /// by CPU `i mod m`.
    #[allow(clippy::too_many_arguments)]
    pub fn with_shape(
        name: &'static str,
        shape: Shape,
        params: &[TaskParams],
        m: usize,
        rule: &PriorityRule,
        t0: u64,
        end: u64,
        find: F,
        retries: u32,
    ) -> Result<PushPull<F>, RunError> {
        if m == 0 {
            return Err(RunError::Config(format!("{name} needs at least one CPU")));
        }
        if shape.tasks() != params.len() {
            return Err(RunError::Config(format!(
                "{name}: {} fork-join tasks but {} task parameters",
                shape.tasks(),
                params.len()
            )));
        }
        let n = params.len();
        let slot_params: Vec<TaskParams> = (0..shape.slots() as u32).map(|s| params[shape.task_of(s) as usize]).collect();
        let rank = RankRule::new(rule, &slot_params, t0, end)?;
        let books: Box<[_]> = (0..m)
            .map(|d| {
                let mine: Vec<usize> = (d..n).step_by(m).collect();
                Ok(CachePadded::new(SpinLock::new(1000 + d as u32, Book::new(&shape, params, &mine, t0, end)?)))
            })
            .collect::<Result<_, RunError>>()?;
        let next_rel = books.iter().map(|b| CachePadded::new(AtomicU64::new(b.lock_untraced().next_due()))).collect();
        let core = Core::new(m, shape.slots(), find, retries);
        Ok(PushPull { name, core, books, next_rel, rank, rule: rule.clone(), shape })
    }

    /// Thread `slot`'s job of the fork-join job `j` (the run's job `j.seq()` of task `slot`).
    #[inline]
    fn slot_job(&self, slot: u32, j: &Job) -> Job {
        Job { prio: self.rule.prio(slot, j.seq(), j.deadline), release: j.release, deadline: j.deadline }
    }

    /// The nodes `slots` of the job `j` join run-queue `cpu` (they became ready there).
    fn fork<E: Effects>(&self, env: &mut E, cpu: usize, g: &mut Guard<'_, crate::sync::Std>, j: &Job, slots: &[u32]) {
        for &s in slots {
            let sj = self.slot_job(s, j);
            self.core.enqueue(env, cpu, g, self.rank.rank(&sj), sj);
        }
    }

    /// The core (run-queues and find-CPU structure).
    pub fn core(&self) -> &Core<F> {
        &self.core
    }

    pub fn rank_rule(&self) -> &RankRule {
        &self.rank
    }

    /// Release domain `d`'s handler at `now`: every job due by then is recorded as released
    /// (`env.record_release` sees each of its threads, backlogged jobs' and later regions' too), and
    /// the first region's threads of each ready one join run-queue `d`; `d` reschedules if its
    /// best job changed, then pushes.
    pub fn release_with<E: Effects>(&self, env: &mut E, d: usize, now: u64) {
        let mut g = env.lock(self.core.rq(d));
        {
            let mut b = env.lock(&self.books[d]);
            b.release_due(now, |j, ready| {
                for s in self.shape.all_slots(j.task()) {
                    env.record_release(&self.slot_job(s, &j));
                }
                if ready {
                    self.fork(env, d, &mut g, &j, self.shape.sources(j.task()));
                }
            });
            self.next_rel[d].store(b.next_due(), Ordering::Release);
        }
        if g.needs_resched() {
            env.preempt(d);
        }
        let g = self.core.push_all(env, d, g);
        drop(g);
    }

    /// CPU `cpu`'s scheduler after `prev`: completion (dequeue; when this was the last thread
    /// of its region, the next region's threads — or, when it completed its job, the first
    /// region's threads of its task's next job if that was backlogged — join this run-queue, as
    /// Linux wakes forked threads on the forking CPU; pull) or idle (pull), pick the best job,
    /// answer the requests so far, push. Returns the job to run.
    pub fn schedule_with<E: Effects>(&self, env: &mut E, cpu: usize, prev: Prev) -> Option<Job> {
        let mut g: Guard<'_, crate::sync::Std> = env.lock(self.core.rq(cpu));
        match prev {
            // An idle CPU pulls too: another CPU's pull may have taken the job this one was
            // woken to run, leaving a later job here while an earlier one waits elsewhere
            // (Linux pulls only after a deadline task; the property test found the gap).
            Prev::Idle => {
                // Nothing runs here (a no-op unless the engine and the run-queue disagree).
                self.core.put_prev(cpu, &mut g);
                g = self.core.pull(env, cpu, g);
            }
            Prev::Preempted(_) => self.core.put_prev(cpu, &mut g),
            // Self-suspension: the running job leaves the run-queue (Linux's
            // `dequeue_task_dl` on a block), and the CPU pulls, as after a completion (Linux
            // pulls when a deadline task leaves the CPU, `balance_dl`).
            Prev::Blocked(j) => {
                self.core.dequeue_curr(env, cpu, &mut g);
                env.lock(&self.books[j.task() as usize % self.books.len()]).suspend(&j);
                g = self.core.pull(env, cpu, g);
            }
            Prev::Completed(j) => {
                self.core.dequeue_curr(env, cpu, &mut g);
                let task = self.shape.task_of(j.task());
                {
                    // The book's lock is taken inside the run-queue's, as on a release.
                    let mut b = env.lock(&self.books[task as usize % self.books.len()]);
                    if let Some(fj) = b.thread_done(&self.shape, j.task()) {
                        self.fork(env, cpu, &mut g, &fj, b.ready());
                    }
                }
                g = self.core.pull(env, cpu, g);
            }
        }
        let next = self.core.pick(cpu, &mut g);
        env.ack_resched();
        let g = self.core.push_all(env, cpu, g);
        drop(g);
        next
    }

    /// The blocked job `job` wakes on thread `thread` (a worker, or the service thread or
    /// drain: then CPU `thread % m`): it joins that CPU's run-queue — Linux enqueues a woken
    /// deadline task on its run-queue (`enqueue_task_dl`), asks for a reschedule when it beats
    /// the running one, and pushes (`task_woken_dl` → `push_dl_tasks`): push on wake.
    pub fn wake_with<E: Effects>(&self, env: &mut E, thread: usize, job: Job) {
        let cpu = thread % self.core.m();
        let mut g: Guard<'_, crate::sync::Std> = env.lock(self.core.rq(cpu));
        let woke = env.lock(&self.books[job.task() as usize % self.books.len()]).resume(&job);
        if !woke {
            return;
        }
        self.core.enqueue(env, cpu, &mut g, self.rank.rank(&job), job);
        if g.needs_resched() {
            env.preempt(cpu);
        }
        let g = self.core.push_all(env, cpu, g);
        drop(g);
    }

    /// The jobs on each run-queue: (running, queued), for tests.
    pub fn queues(&self) -> Vec<(Option<Job>, Vec<Job>)> {
        (0..self.core.m())
            .map(|c| {
                let rq = self.core.rq(c).lock_untraced();
                (rq.curr.map(|x| x.1), rq.queued.iter().map(|x| x.1).collect())
            })
            .collect()
    }

    /// The ready thread jobs: per fork-join task, the threads of its oldest pending job's
    /// current region that have not completed (for a sequential task: its oldest pending job),
    /// for tests and accounting. Threads of later regions are pending but not ready.
    pub fn heads(&self) -> Vec<Job> {
        let mut out = Vec::new();
        for t in 0..self.shape.tasks() as u32 {
            let b = self.books[t as usize % self.books.len()].lock_untraced();
            if let Some((j, slots)) = b.ready_slots(&self.shape, t) {
                out.extend(slots.map(|s| self.slot_job(s, &j)));
            };
        }
        out
    }
}

impl<F: FindCpu> Plugin for PushPull<F> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn release_domains(&self) -> usize {
        self.books.len()
    }
    fn release_domain(&self, thread: usize) -> Option<usize> {
        (thread < self.books.len()).then_some(thread)
    }
    fn next_release(&self, domain: usize) -> u64 {
        self.next_rel[domain].load(Ordering::Acquire)
    }
    fn release(&self, ctx: &mut Ctx<'_>, domain: usize, now: u64) {
        self.release_with(ctx, domain, now);
    }
    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev, _now: u64) -> Option<Job> {
        let cpu = ctx.cpu();
        self.schedule_with(ctx, cpu, prev)
    }
    fn wake(&self, ctx: &mut Ctx<'_>, job: Job, _now: u64) {
        let thread = ctx.cpu();
        self.wake_with(ctx, thread, job);
    }

    fn accounting(&self) -> Accounting {
        let d = self.books.len();
        let (released, completed) = (0..self.shape.slots() as u32)
            .map(|s| {
                let task = self.shape.task_of(s);
                self.books[task as usize % d].lock_untraced().slot_counts(&self.shape, s)
            })
            .unzip();
        Accounting { released, completed, consistent: self.consistent().map_err(|e| crate::Inconsistency(e.to_string())) }
    }
}

impl<F: FindCpu> PushPull<F> {
    /// At rest: every thread completed at most once per job and only in its job's past or
    /// current region; every ready thread (of a task's oldest job's current region, not yet
    /// complete) is on exactly one run-queue with its rank and nothing else is — threads of
    /// later regions are pending but on no run-queue; the published state and the find-CPU structure agree with the
    /// run-queues (`Core::check`). (The global invariant itself is the monitor's to measure:
    /// push/pull keeps it only eventually.)
    fn consistent(&self) -> Result<(), RunError> {
        for t in 0..self.shape.tasks() as u32 {
            self.books[t as usize % self.books.len()]
                .lock_untraced()
                .check(&self.shape, t)
                .map_err(|e| RunError::Internal(format!("{}: {e}", self.name)))?;
        }
        let mut on_rq: Vec<(u64, Job)> = Vec::new();
        for c in 0..self.core.m() {
            let rq = self.core.rq(c).lock_untraced();
            on_rq.extend(rq.curr);
            on_rq.extend(rq.queued.iter().copied());
        }
        let mut heads: Vec<(u64, Job)> = self.heads().into_iter().map(|j| (self.rank.rank(&j), j)).collect();
        on_rq.sort_by_key(|x| x.0);
        heads.sort_by_key(|x| x.0);
        if on_rq != heads {
            return Err(RunError::Internal(format!(
                "{}: the run-queues hold {} jobs, {} are pending (or their ranks differ)",
                self.name,
                on_rq.len(),
                heads.len()
            )));
        }
        self.core.check().map_err(|e| RunError::Internal(format!("{}: {e}", self.name)))
    }
}

#[cfg(test)]
mod tests;
