//! `rtws` with `deques=locked`: the first design, kept as the baseline of the deques'
//! measurements (`docs/mechanisms/rtws.md`). The global EDF queue *and* every per-CPU
//! priority queue of deques are the policy's one state machine under one global spin lock.
//!
//! **The policy decides, the mechanism communicates.** What each CPU runs is
//! `rtsched_policy::rtws::Rtws` — the same state machine the simulator drives (the global EDF
//! queue of Rule A, the per-CPU priority queues of deques of Rules B–C, the deterministic
//! victim of Rule E / Definitions 1–2, the requeueing of Rule F), here under one global spin
//! lock. This file adds what real threads need: the fork-join bookkeeping, the release queue,
//! the reschedule requests and the deferred preemption check (described in the parent module).
//!
//! **Steals** (Rule E) are `Steal` trace records and spans of the term `steal`; a Rule C pick
//! from the CPU's own deques is a span of the term `pop` (here taken under the global lock).

use crate::mechanism::forkjoin::{check_task, Done, Progress, Shape};
use crate::mechanism::release_domain::{one_release_domain, ReleaseDomain};
use crate::mechanism::{Accounting, Ctx, Effects, Job, Plugin, Prev, TaskParams};
use crate::queue::release::TaskBook;
use crate::sync::SpinLock;
use crate::tracer::RecKind;
use crate::RunError;
use rtsched_policy::rtws::{preemption_target, Arrival, Rtws as RtwsPolicy, Source, ThreadId, Work};
use rtsched_policy::{Prio, PriorityRule};
use std::collections::BTreeSet;

use super::{POP, STEAL};

/// Everything under the global lock.
struct State {
    shape: Shape,
    /// The release queue and job book over the fork-join tasks.
    book: TaskBook,
    policy: RtwsPolicy,
    /// Per task: the precedence counts of its head job.
    progress: Progress,
    /// Arrived jobs whose §V preemption check has not been made yet.
    pending: BTreeSet<Prio>,
    completed_slot: Vec<u32>,
    scratch: Vec<Prio>,
    ids: Vec<ThreadId>,
    /// An inconsistency seen on a completion (reported by the accounting).
    error: Option<String>,
}

/// RTWS under one global lock.
pub struct Locked {
    state: SpinLock<State>,
    /// The one release domain, polled by every worker.
    releases: ReleaseDomain,
}

impl Locked {
    pub(super) fn new(shape: Shape, params: &[TaskParams], m: usize, t0: u64, end: u64) -> Result<Locked, RunError> {
        let n = params.len();
        let all: Vec<usize> = (0..n).collect();
        let book = TaskBook::new(params, &all, PriorityRule::Edf, t0, end);
        let releases = ReleaseDomain::new(false, m, book.next_due());
        let progress = Progress::new(&shape);
        let slots = shape.slots();
        Ok(Locked {
            state: SpinLock::new(
                0,
                State {
                    shape,
                    book,
                    policy: RtwsPolicy::new(m),
                    progress,
                    pending: BTreeSet::new(),
                    completed_slot: vec![0; slots],
                    scratch: Vec::with_capacity(n),
                    ids: Vec::new(),
                    error: None,
                },
            ),
            releases,
        })
    }
}

impl State {
    /// The engine's job for thread `slot` of the fork-join job `p`.
    fn slot_job(&self, slot: u32, p: Prio) -> Job {
        let j = self.book.job_of(p);
        Job { prio: Prio { key: p.key, task: slot, job: p.job }, release: j.release, deadline: j.deadline }
    }

    /// Job `p` starts on `cpu`: its sources are ready there (Rule B).
    fn start(&mut self, cpu: usize, p: Prio) {
        self.policy.fork(cpu, p, self.shape.sources(p.task));
    }

    /// An idle `cpu` selects (Rules C, D, E) until it runs a thread or finds nothing; a job
    /// picked from the global queue unstarted forks its first region here.
    fn fill(&mut self, ctx: &mut Ctx<'_>, cpu: usize) {
        loop {
            let local = self.policy.waiting_local(cpu) > 0;
            let attempt = !local && self.policy.waiting_global() == 0;
            let term = if local { Some(POP) } else if attempt { Some(STEAL) } else { None };
            if let Some(t) = term {
                ctx.term_start(t);
            }
            let pick = self.policy.select(cpu);
            if let Some(t) = term {
                ctx.term_end(t);
            }
            let Some(pick) = pick else { return };
            match pick.work {
                Work::Start => {
                    self.pending.remove(&pick.prio);
                    self.start(cpu, pick.prio);
                }
                Work::Thread(t, _) => {
                    if let Source::Steal { victim } = pick.source {
                        let j = self.slot_job(t, pick.prio);
                        ctx.trace().record(RecKind::Steal, j.task(), j.seq(), victim as u64);
                    }
                    return;
                }
            }
        }
    }

    fn any_idle(&self) -> bool {
        (0..self.policy.m()).any(|c| self.policy.running(c).is_none())
    }

    /// The §V check for the arrived jobs, highest priority first, made on `cpu` (whose thread,
    /// if any, has stopped): while every CPU is busy, a job the rule sends to `cpu` preempts it
    /// now; a job it sends elsewhere is requested there (and waits, as do the lower ones); a job
    /// the rule sends nowhere stays queued (Rule D will give it a CPU).
    fn checks(&mut self, ctx: &mut Ctx<'_>, cpu: Option<usize>) {
        while let Some(&p) = self.pending.first() {
            if self.any_idle() {
                // Idle CPUs (asked to reschedule) take queued work first (Rule D).
                return;
            }
            let running = (0..self.policy.m()).map(|c| self.policy.running(c).map(|r| r.prio));
            match preemption_target(p, running) {
                None => {
                    self.pending.remove(&p);
                }
                Some(c) if Some(c) == cpu => {
                    self.pending.remove(&p);
                    if let Arrival::Run { cpu: c2, .. } = self.policy.preempt_check(p) {
                        debug_assert_eq!(c2 as usize, c);
                        self.start(c, p);
                        self.fill(ctx, c);
                    }
                }
                Some(c) => {
                    ctx.preempt(c);
                    return;
                }
            }
        }
    }

    /// Work conservation: every idle CPU is asked to reschedule while work waits (it then
    /// takes it by Rules C, D or E); then the pending preemption checks.
    fn after(&mut self, ctx: &mut Ctx<'_>, cpu: Option<usize>) {
        if self.policy.waiting_total() > 0 {
            for c in 0..self.policy.m() {
                if Some(c) != cpu && self.policy.running(c).is_none() {
                    ctx.preempt(c);
                }
            }
        }
        self.checks(ctx, cpu);
    }

    /// The book's job (its fork-join task's, not the slot's) for the engine's job `j`.
    fn book_job(&self, j: Job) -> Job {
        Job { prio: Prio { key: j.prio.key, task: self.shape.task_of(j.task()), job: j.seq() }, ..j }
    }

    /// `j`, running on `cpu`, self-suspends: the policy stops it there (nothing of it waits
    /// in a deque: only a sequential task's job, whose one node is the job itself, blocks) and
    /// the job book holds it suspended until [`Plugin::wake`].
    fn blocked(&mut self, cpu: usize, j: Job) {
        self.policy.stop(cpu);
        let bj = self.book_job(j);
        if self.shape.nodes(bj.task()) != 1 {
            self.error.get_or_insert_with(|| format!("rtws: a thread of the parallel job {bj:?} blocked"));
            return;
        }
        self.book.suspend(&bj);
    }

    /// Node `slot` completed on `cpu`: the successors whose last predecessor it was become
    /// ready here (Rule B: the local push), or the job completes and its task's next job (if
    /// released) arrives.
    fn completed(&mut self, cpu: usize, slot: u32) {
        self.policy.stop(cpu);
        self.completed_slot[slot as usize] += 1;
        let i = self.shape.task_of(slot) as usize;
        let mut ready = std::mem::take(&mut self.ids);
        ready.clear();
        let done = self.progress.node_done(&self.shape, slot, &mut ready);
        let (Some(done), Some(head)) = (done, self.book.head(i)) else {
            self.error.get_or_insert_with(|| format!("rtws: slot {slot} completed out of precedence"));
            self.ids = ready;
            return;
        };
        self.policy.fork(cpu, head.prio, &ready);
        self.ids = ready;
        match done {
            Done::Pending => {}
            Done::JobDone => {
                if let Some(next) = self.book.complete(&head) {
                    self.policy.release(next.prio);
                    self.pending.insert(next.prio);
                }
            }
        }
    }
}

impl Plugin for Locked {
    fn name(&self) -> &'static str {
        super::RTWS.name
    }
    one_release_domain!(releases);

    /// Rule A: released jobs enter the global EDF queue; idle CPUs are asked to take them and
    /// the §V preemption check is requested.
    fn release(&self, ctx: &mut Ctx<'_>, _domain: usize, now: u64) {
        let mut g = self.state.lock(ctx.trace());
        let st = &mut *g;
        let mut scratch = std::mem::take(&mut st.scratch);
        let shape = &st.shape;
        st.book.release_due(now, |j, ready| {
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
            st.policy.release(p);
            st.pending.insert(p);
        }
        st.scratch = scratch;
        st.after(ctx, None);
        self.releases.set(st.book.next_due());
    }

    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev, _now: u64) -> Option<Job> {
        let cpu = ctx.cpu();
        let mut g = self.state.lock(ctx.trace());
        let st = &mut *g;
        match prev {
            Prev::Idle => {}
            // The policy still has it running here: it resumes unless a check preempts it.
            Prev::Preempted(_) => {}
            Prev::Completed(j) => st.completed(cpu, j.task()),
            // The block (parent module, "Self-suspending jobs"): the thread leaves the CPU as
            // at a completion without a join; the CPU takes work by Rules C–E below.
            Prev::Blocked(j) => st.blocked(cpu, j),
        }
        // A preemption requested of this CPU (its thread has stopped).
        st.checks(ctx, Some(cpu));
        if st.policy.running(cpu).is_none() {
            st.fill(ctx, cpu);
        }
        st.after(ctx, Some(cpu));
        let next = st.policy.running(cpu).map(|r| st.slot_job(r.thread, r.prio));
        ctx.ack_resched();
        next
    }

    /// The wake-up (parent module): the job arrives in the global EDF queue unstarted, as a
    /// released job (Rule A, release and deadline unchanged), and its §V check is pending. A
    /// wake-up without a block is ignored.
    fn wake(&self, ctx: &mut Ctx<'_>, job: Job, _now: u64) {
        let mut g = self.state.lock(ctx.trace());
        let st = &mut *g;
        let bj = st.book_job(job);
        if !st.book.resume(&bj) {
            return;
        }
        st.policy.release(bj.prio);
        st.pending.insert(bj.prio);
        st.after(ctx, None);
    }

    fn suspends_parallel(&self) -> bool {
        false
    }

    fn accounting(&self) -> Accounting {
        let st = self.state.lock_untraced();
        let (rel, done) = (st.book.released(), st.book.completed());
        let mut consistent = match &st.error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        };
        // Exactly once and in order: every node once per completed job, and in the head job
        // only after all its predecessors; the precedence counts match.
        for task in 0..st.shape.tasks() as u32 {
            if consistent.is_err() {
                break;
            }
            let i = task as usize;
            consistent = check_task(
                &st.shape,
                task,
                done[i],
                st.book.head(i).is_some(),
                |s| st.completed_slot[s as usize],
                |s| st.progress.waiting(s),
                st.progress.left(task),
            )
            .map_err(|e| format!("rtws: {e}"));
        }
        let released = (0..st.shape.slots() as u32).map(|s| rel[st.shape.task_of(s) as usize]).collect();
        Accounting { released, completed: st.completed_slot.clone(), consistent: consistent.map_err(crate::Inconsistency) }
    }
}

#[cfg(test)]
mod tests {
    //! The mechanism driven without threads: random interleavings of releases, CPUs noticing
    //! requests (or idling) and CPUs completing their thread, on m = 3 CPUs and random
    //! fork-join shapes or random DAGs. After every callback: what each CPU runs is what the policy has it
    //! run, and no thread runs on two CPUs (the plugin contract's rule 2, which the deferred
    //! preemption check exists for); every thread handed out belongs to its task's current job,
    //! follows every predecessor of its job and has not completed before (precedence and
    //! exactly once, against a job model kept from the completions alone); the accounting is consistent. After the
    //! requests are drained: no CPU idles while work waits (work conservation, §V).
    use super::*;
    use crate::sync::CpuSignal;
    use crate::tracer::TraceBuffer;
    use crate::mechanism::forkjoin::test_model::{graphs, Model};
    use proptest::prelude::*;
    use std::collections::HashSet;

    fn check(p: &Locked, running: &[Option<Job>]) -> Result<(), String> {
        let st = p.state.lock_untraced();
        for (c, run) in running.iter().enumerate() {
            let pol = st.policy.running(c).map(|r| st.slot_job(r.thread, r.prio));
            if pol != *run {
                return Err(format!("cpu {c} runs {run:?}, the policy has it run {pol:?}"));
            }
        }
        let mut seen = HashSet::new();
        for j in running.iter().flatten() {
            if !seen.insert((j.task(), j.seq())) {
                return Err(format!("{j:?} runs on two CPUs"));
            }
        }
        drop(st);
        p.accounting().consistent.map_err(|e| e.0)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn threads_follow_the_policy_once_and_in_order(
            shape in proptest::collection::vec(
                (5u64..40, proptest::collection::vec(1usize..4, 1..4)), 1..4),
            ops in proptest::collection::vec((0u8..3, 0usize..3, 1u64..15), 1..250),
            dag in any::<bool>(),
            bits in proptest::collection::vec(any::<u64>(), 1..4),
        ) {
            let m = 3;
            let params: Vec<TaskParams> = shape.iter().map(|&(p, _)| TaskParams { deadline: p, period: p }).collect();
            let widths: Vec<Vec<usize>> = shape.iter().map(|(_, w)| w.clone()).collect();
            let g = graphs(&widths, dag, &bits);
            let sh = Shape::of_graphs(g.iter().map(|(n, e)| (*n, &e[..])));
            let plugin = Locked::new(sh, &params, m, 0, 1_000_000).unwrap();
            let mut model = Model::of_graphs(&g, params.iter().map(|t| t.period).collect());
            let signals: Vec<CpuSignal> = (0..m).map(|_| CpuSignal::new()).collect();
            let mut tb = TraceBuffer::new(0, 200_000);
            let mut running: Vec<Option<Job>> = vec![None; m];
            let mut now = 0u64;
            let schedule = |c: usize, prev: Prev, now: u64, tb: &mut TraceBuffer, running: &mut Vec<Option<Job>>, model: &Model| {
                let mut ctx = Ctx::new(c, tb, &signals);
                let next = plugin.schedule(&mut ctx, prev, now);
                drop(ctx);
                if let Some(j) = next {
                    if running[c] != Some(j) {
                        model.handed(&j)?;
                    }
                }
                running[c] = next;
                Ok::<(), String>(())
            };
            for (op, c, dt) in ops {
                match op {
                    0 => {
                        now += dt;
                        if plugin.next_release(0) <= now && plugin.try_claim_release(0, plugin.next_release(0)) {
                            plugin.release(&mut Ctx::new(c, &mut tb, &signals), 0, now);
                        }
                    }
                    1 => {
                        // CPU c notices a request (or idles) and reschedules.
                        if signals[c].take().is_some() || running[c].is_none() {
                            let prev = running[c].map_or(Prev::Idle, Prev::Preempted);
                            schedule(c, prev, now, &mut tb, &mut running, &model).map_err(TestCaseError::fail)?;
                        }
                    }
                    _ => {
                        if let Some(j) = running[c] {
                            model.complete(&j);
                            schedule(c, Prev::Completed(j), now, &mut tb, &mut running, &model).map_err(TestCaseError::fail)?;
                        }
                    }
                }
                prop_assert_eq!(check(&plugin, &running), Ok(()));
            }
            // Drain the requests: every CPU with one reschedules until none is left.
            for _ in 0..100 {
                let Some(c) = (0..m).find(|&c| signals[c].is_set()) else { break };
                signals[c].take();
                let prev = running[c].map_or(Prev::Idle, Prev::Preempted);
                schedule(c, prev, now, &mut tb, &mut running, &model).map_err(TestCaseError::fail)?;
                prop_assert_eq!(check(&plugin, &running), Ok(()));
            }
            prop_assert!((0..m).all(|c| !signals[c].is_set()), "requests do not settle");
            let st = plugin.state.lock_untraced();
            let idle = running.iter().filter(|r| r.is_none()).count();
            prop_assert!(idle == 0 || st.policy.waiting_total() == 0,
                "{idle} CPUs idle while {} work items wait", st.policy.waiting_total());
        }
    }
}
