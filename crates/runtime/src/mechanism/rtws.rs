//! RTWS on real threads: global EDF for jobs with priority-aware work stealing for the threads
//! of fork-join jobs (Real-Time Work-Stealing, the RTWS paper in `docs/papers.md`: §III task
//! model, §IV Definitions 1–2, §V rules A–F). Design note: `docs/mechanisms/rtws.md`.
//!
//! **The policy decides, the mechanism communicates.** What each CPU runs is
//! `rtsched_policy::rtws::Rtws` — the same state machine the simulator drives (the global EDF
//! queue of Rule A, the per-CPU priority queues of deques of Rules B–C, the deterministic
//! victim of Rule E / Definitions 1–2, the requeueing of Rule F), here under one global spin
//! lock. This file adds what real threads need: the fork-join bookkeeping (which region each
//! job is in, how many of its threads are outstanding), the release queue, the reschedule
//! requests, and the *deferred preemption check*.
//!
//! **Deferred preemption check.** §V: "whenever a new job is released [...] and all the cores
//! are busy, the scheduler verifies if the core executing the lowest priority job/thread
//! [...] has a higher deadline than the newly arrived job. If this condition is true, the
//! job/thread is preempted." The policy moves the preempted entity (to the global queue, or
//! back to its deque) at once; on real threads that entity is still executing on its CPU
//! until that CPU notices the request, and another CPU must not pick it up meanwhile (the
//! plugin contract, rule 2). So an arrival is only *recorded* (`pending`), the target the pure
//! rule `rtsched_policy::rtws::preemption_target` names is asked to reschedule, and the policy's
//! `preempt_check` runs in the target's own `schedule`, when its thread has stopped — if the
//! rule still names that CPU then (otherwise the request moves to the CPU it names, or is
//! dropped when the job was taken by an idle CPU or no longer preempts anyone).
//!
//! **Jobs and threads.** The engine runs one sequential "task" per thread slot
//! (`backend::slot_task_set`: task `i`, region `r`, thread `k`); job `j` of slot `s` is thread
//! `s` of job `j` of its fork-join task. All slots of a task are recorded as released at the
//! job's release (with its deadline); a slot's thread becomes ready when its region forks
//! (Rule B: on the CPU where the job's previous region joined). Without a fork-join structure
//! (`Setup::forkjoin` = `None`) every task is one region of one thread: RTWS is then global
//! EDF, and promises its invariant.
//!
//! **Steals** (Rule E) are recorded as `Steal` trace records (the trace's steal count) and
//! every Rule E search — a CPU with an empty local queue and an empty global queue — is a
//! span of the term `steal` (attempts, successful or not, with their cost).
//!
//! Assumptions: periodic releases (sporadic tasks at their densest), any deadlines, EDF with
//! ties by task index then job number (the one `Prio` order), jobs of a task in release order.

use crate::mechanism::forkjoin::Shape;
use crate::mechanism::registry::{self, Backend, DedicatedCpu, Entry, InvariantKind, PlacementKind, Setup, TermSpec};
use crate::mechanism::release_domain::{one_release_domain, ReleaseDomain};
use crate::mechanism::{Accounting, Ctx, Effects, Job, Plugin, Prev, TaskParams};
use crate::queue::release::TaskBook;
use crate::sync::SpinLock;
use crate::tracer::RecKind;
use crate::RunError;
use rtsched_model::forkjoin::{Join, RegionProgress};
use rtsched_policy::rtws::{preemption_target, Arrival, Rtws as RtwsPolicy, Source, ThreadId, Work};
use rtsched_policy::{Prio, PriorityRule};
use std::collections::BTreeSet;

/// The term id of `steal` in [`RTWS`]'s `terms`.
const STEAL: u32 = 0;

pub static RTWS: Entry = Entry {
    name: "rtws",
    summary: "RTWS: global EDF for fork-join jobs with priority-aware work stealing, the policy's global queue and \
              per-CPU priority queues of deques under one global lock (RTWS paper, §V rules A-F)",
    params: &[],
    placement: PlacementKind::None,
    dedicated: DedicatedCpu::None,
    dedicated_role: "",
    terms: &[TermSpec {
        name: "steal",
        symbol: "",
        help: "Rule E search of the other CPUs' deques and the take (every attempt; successes are steal records)",
        tracking: true,
    }],
    invariant: InvariantKind::Global,
    priority: registry::edf,
    user_jobs: true,
    suspends: false,
    backend: Backend::Engine(build),
};

fn build(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    let (shape, params) = Shape::of_setup(s, s.name)?;
    Ok(Box::new(Rtws::new(shape, &params, s.m, s.t0, s.end)?))
}

/// Everything under the global lock.
struct State {
    shape: Shape,
    /// The release queue and job book over the fork-join tasks.
    book: TaskBook,
    policy: RtwsPolicy,
    /// Per task: the region its current (head) job executes, and its threads not yet complete.
    progress: RegionProgress,
    /// Arrived jobs whose §V preemption check has not been made yet.
    pending: BTreeSet<Prio>,
    completed_slot: Vec<u32>,
    scratch: Vec<Prio>,
    ids: Vec<ThreadId>,
}

/// The RTWS plugin.
pub struct Rtws {
    state: SpinLock<State>,
    /// The one release domain, polled by every worker.
    releases: ReleaseDomain,
}

impl Rtws {
    fn new(shape: Shape, params: &[TaskParams], m: usize, t0: u64, end: u64) -> Result<Rtws, RunError> {
        let n = params.len();
        let all: Vec<usize> = (0..n).collect();
        let book = TaskBook::new(params, &all, PriorityRule::Edf, t0, end);
        let releases = ReleaseDomain::new(false, m, book.next_due());
        let progress = shape.progress()?;
        let slots = shape.slots();
        Ok(Rtws {
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

    /// Job `p` forks its current region on `cpu` (Rule B).
    fn fork(&mut self, cpu: usize, p: Prio) {
        let r = self.progress.region(p.task);
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        ids.extend(self.shape.region(p.task, r));
        self.policy.fork(cpu, p, &ids);
        self.ids = ids;
    }

    /// An idle `cpu` selects (Rules C, D, E) until it runs a thread or finds nothing; a job
    /// picked from the global queue unstarted forks its first region here.
    fn fill(&mut self, ctx: &mut Ctx<'_>, cpu: usize) {
        loop {
            let attempt = self.policy.waiting_local(cpu) == 0 && self.policy.waiting_global() == 0;
            if attempt {
                ctx.term_start(STEAL);
            }
            let pick = self.policy.select(cpu);
            if attempt {
                ctx.term_end(STEAL);
            }
            let Some(pick) = pick else { return };
            match pick.work {
                Work::Start => {
                    self.pending.remove(&pick.prio);
                    self.fork(cpu, pick.prio);
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
                        self.fork(c, p);
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

    /// Thread `slot` completed on `cpu`: its region joins when it was the last, the job forks
    /// its next region here or completes, and its task's next job (if released) arrives.
    fn completed(&mut self, cpu: usize, slot: u32) {
        self.policy.stop(cpu);
        self.completed_slot[slot as usize] += 1;
        let (task, _) = self.shape.of_slot[slot as usize];
        let i = task as usize;
        // None (no thread of the region outstanding) shows in the accounting: the slot's
        // completions no longer match its task's jobs.
        let (Some(join), Some(head)) = (self.progress.thread_done(task), self.book.head(i)) else { return };
        match join {
            Join::Pending => {}
            Join::Fork { .. } => self.fork(cpu, head.prio),
            Join::JobDone => {
                if let Some(next) = self.book.complete(&head) {
                    self.policy.release(next.prio);
                    self.pending.insert(next.prio);
                }
            }
        }
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
            // Registered without `suspends`: the engine never blocks its jobs.
            Prev::Blocked(j) => unreachable!("rtws: {j:?} blocked, but rtws is registered without `suspends`"),
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

    fn forkjoin(&self) -> bool {
        true
    }

    fn accounting(&self) -> Accounting {
        let st = self.state.lock_untraced();
        let (rel, done) = (st.book.released(), st.book.completed());
        let mut consistent = Ok(());
        // Exactly once: a slot completed once per completed job of its task, plus once for the
        // head job if its region is already past the slot's (never for a later region).
        for (s, &(task, r)) in st.shape.of_slot.iter().enumerate() {
            let (i, c) = (task as usize, st.completed_slot[s]);
            let head = st.book.head(i).is_some();
            let cur = st.progress.region(task);
            let ok = if !head || r > cur {
                c == done[i]
            } else if r < cur {
                c == done[i] + 1
            } else {
                c == done[i] || c == done[i] + 1
            };
            if !ok {
                consistent = Err(format!(
                    "rtws: slot {s} (task {task}, region {r}) completed {c} times with {} jobs of its task completed",
                    done[i]
                ));
                break;
            }
        }
        let released = st.shape.of_slot.iter().map(|&(t, _)| rel[t as usize]).collect();
        Accounting { released, completed: st.completed_slot.clone(), consistent: consistent.map_err(crate::Inconsistency) }
    }
}

#[cfg(test)]
mod tests {
    //! The mechanism driven without threads: random interleavings of releases, CPUs noticing
    //! requests (or idling) and CPUs completing their thread, on m = 3 CPUs and random
    //! fork-join shapes. After every callback: what each CPU runs is what the policy has it
    //! run, and no thread runs on two CPUs (the plugin contract's rule 2, which the deferred
    //! preemption check exists for); every thread handed out belongs to its task's current job
    //! and current region and has not completed before (precedence and exactly once, against a
    //! job model kept here from the completions alone); the accounting is consistent. After the
    //! requests are drained: no CPU idles while work waits (work conservation, §V).
    use super::*;
    use crate::sync::CpuSignal;
    use crate::tracer::TraceBuffer;
    use crate::mechanism::forkjoin::test_model::Model;
    use proptest::prelude::*;
    use std::collections::HashSet;

    fn check(p: &Rtws, running: &[Option<Job>]) -> Result<(), String> {
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
        ) {
            let m = 3;
            let params: Vec<TaskParams> = shape.iter().map(|&(p, _)| TaskParams { deadline: p, period: p }).collect();
            let widths: Vec<Vec<usize>> = shape.iter().map(|(_, w)| w.clone()).collect();
            let plugin = Rtws::new(Shape::of(widths.clone()), &params, m, 0, 1_000_000).unwrap();
            let mut model = Model::new(
                widths.iter().map(|w| w.iter().map(|&k| k as u32).collect()).collect(),
                params.iter().map(|t| t.period).collect(),
            );
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
