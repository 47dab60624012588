//! RUN on real threads: the reduction tree of Regnier, Lima, Massa, Levin & Brandt ("RUN:
//! Optimal Multiprocessor Real-Time Scheduling via Reduction to Uniprocessor", RTSS 2011),
//! driven under **one global lock**, as the implementation of Compagnin, Mezzetti & Vardanega
//! ("Putting RUN into practice: implementation and evaluation", ECRTS 2014) does — Brandenburg &
//! Gül (RTSS 2016, §VII-B) measured that implementation and say "the RUN implementation always
//! uses a single global lock".
//!
//! **The policy decides.** The lock holds `rtsched_policy::run::Run` — the online server
//! schedule over the offline reduction, the same state machine `rtsched simulate --scheduler
//! run` drives — and the job book of every task. RUN's decisions are a function of time alone:
//! a server's budget is replenished at its deadlines and consumed while it is selected, whether
//! or not its task has a pending job (RUN as published is not work-conserving). So every
//! callback first brings the tree to the callback's `now` ([`RunMech`]'s `sync`): each event the
//! tree had up to `now` — a leaf deadline (a release instant) or a selected server's budget
//! running out — is applied in order, at its exact instant, in ticks of `1/L` ns
//! ([`Reduction::scale`]). A callback that comes late applies the events it missed at their
//! own instants, so the tree's state never depends on when the mechanism got to it.
//!
//! * **releases**: one release domain, polled by every worker and claimed by compare-and-swap
//!   (`release_domain`, the global mechanisms' one); the handler releases the due jobs, brings
//!   the tree to now (the release instants are leaf deadlines: budgets replenished, servers
//!   selected again) and asks the CPUs whose task changed to reschedule;
//! * **the budget timer**: worker 0's plugin timer, armed at the tree's next event when that
//!   event comes before the next release (a server's budget running out between releases —
//!   the events only RUN has). Traced as `budget_timer` (handler entry to exit). Any thread
//!   that moves it earlier notifies worker 0 (plugin contract 3);
//! * **dispatch**: CPU `c` runs the pending job (released, predecessor complete) of the task
//!   RUN puts on `c`, or idles (RUN's idle leaves; a task whose job is done). A job RUN moves to
//!   `c` while the worker of its previous CPU `s` still runs it is taken by `c` only after `s`'s
//!   `schedule` let it go (plugin contract 2); `s`'s `schedule` then asks `c` to reschedule.
//!   RUN chooses the CPUs itself (a task keeps its CPU while it runs), so the link swaps of
//!   `mechanism::dispatch` (a G-EDF policy's links, interchangeable across CPUs) are not used:
//!   `c` idles for the hand-over, which the trace shows.
//!
//! Refused when built, with the policy's one line: deadlines other than periods, total
//! utilization above `m`, rates whose common denominator exceeds 2^64 (integral-millisecond
//! parameters, as Compagnin et al.'s setup has, never come near it).

use crate::mechanism::registry::{self, Backend, DedicatedCpu, Entry, InvariantKind, PlacementKind, Setup, TermSpec};
use crate::mechanism::release_domain::{one_release_domain, ReleaseDomain};
use crate::mechanism::servers::{budget_set, BudgetTimer, Handover, ServerParams};
use crate::mechanism::params::ParamSet;
use crate::mechanism::{Accounting, Ctx, Effects, Job, Plugin, Prev, TaskParams};
use crate::queue::release::TaskBook;
use crate::sync::SpinLock;
use crate::RunError;
use rtsched_model::TaskSet;
use rtsched_policy::run::{Reduction, Run};
use rtsched_policy::PriorityRule;

/// Term ids (indices into [`RUN`]`.terms`).
const BUDGET_TIMER: u32 = 0;
const TREE_EVENTS: u32 = 1;

/// The worker whose plugin timer is the budget timer.
const TIMER_CPU: usize = 0;

/// The most tree events one callback applies before it reports a fault (the tree advances by
/// at least one tick per event; a run of seconds has far fewer events than this per callback
/// unless the tree is broken).
const MAX_EVENTS_PER_CALL: u32 = 1 << 22;

/// RUN.
pub static RUN: Entry = Entry {
    name: "run",
    summary: "RUN: the reduction tree's server schedule (EDF servers, DUAL/PACK levels) under one global lock, \
              a budget timer for server exhaustion (Regnier et al., RTSS 2011; Compagnin et al., ECRTS 2014); \
              implicit deadlines, U ≤ m",
    params: ServerParams::SPECS,
    placement: PlacementKind::None,
    parallel: false,
    dedicated: DedicatedCpu::None,
    dedicated_role: "",
    terms: &[
        TermSpec {
            name: "budget_timer",
            symbol: "",
            help: "server budget timer: the tree brought to the exhaustion, servers selected again, reschedule requests",
            tracking: true, count: false,
        },
        TermSpec {
            name: "tree_events",
            symbol: "",
            help: "tree events (release instants, budget exhaustions) applied by one callback (a count, not a time)",
            tracking: false, count: true,
        },
    ],
    invariant: InvariantKind::Unobservable(
        "RUN serves servers by budget, not jobs by priority (checked against the policy's schedule: \
         tests/run_mechanism.rs)",
    ),
    priority: registry::edf,
    user_jobs: true,
    suspends: false,
    backend: Backend::Engine(build),
};

fn build(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    if s.dedicated {
        return Err(RunError::Config("run does not use a dedicated CPU".into()));
    }
    // The reduction is built from the servers' budgets (the WCETs unless `budgets` is given).
    let ts = budget_set(s.ts, s.params)?;
    Ok(Box::new(RunMech::new(&ts, s.tasks, s.m, s.rule.clone(), s.t0, s.end)?))
}

/// The reduction of `ts` on `m` CPUs, or the policy's refusal as one line.
pub fn reduction(ts: &TaskSet, m: usize) -> Result<Reduction, RunError> {
    let m32 = u32::try_from(m).map_err(|_| RunError::Config(format!("run: {m} CPUs")))?;
    Reduction::build(ts, m32).map_err(|e| RunError::Config(format!("run: {e}")))
}

struct State {
    book: TaskBook,
    run: Run,
    /// What each worker runs, and where each task's job runs.
    hand: Handover,
    /// The tree refused an advance (a bug): the first refusal, for the accounting.
    fault: Option<String>,
}

/// The RUN mechanism (module docs).
pub struct RunMech {
    state: SpinLock<State>,
    releases: ReleaseDomain,
    timer: BudgetTimer,
    t0: u64,
    /// Ticks per ns ([`Reduction::scale`]).
    scale: u128,
    n: usize,
}

impl RunMech {
    /// RUN of `ts` (deadlines and periods `params`) on `m` workers; time zero `t0`, no release
    /// at or after `end`. Refused with the reduction's one line.
    pub fn new(
        ts: &TaskSet,
        params: &[TaskParams],
        m: usize,
        rule: PriorityRule,
        t0: u64,
        end: u64,
    ) -> Result<RunMech, RunError> {
        let red = reduction(ts, m)?;
        let scale = red.scale();
        // Strict: the tree checks RUN's promises at every event (a violation is a fault in the
        // accounting, never a panic).
        let run = Run::new(red, &[], true).map_err(|e| RunError::Config(format!("run: {e}")))?;
        let all: Vec<usize> = (0..params.len()).collect();
        let book = TaskBook::new(params, &all, rule, t0, end);
        let releases = ReleaseDomain::new(false, m, book.next_due());
        let mech = RunMech {
            state: SpinLock::new(
                0,
                State { book, run, hand: Handover::new(m, params.len()), fault: None },
            ),
            releases,
            timer: BudgetTimer::new(TIMER_CPU, t0, end),
            t0,
            scale,
            n: params.len(),
        };
        {
            let st = mech.state.lock_untraced();
            mech.timer.arm(mech.timer_due(&st));
        }
        Ok(mech)
    }

    /// `now` (monotonic ns) in the tree's ticks since time zero.
    fn ticks(&self, now: u64) -> u128 {
        now.saturating_sub(self.t0) as u128 * self.scale
    }

    /// Brings the tree to `now`: every event up to it, in order, at its own instant. Returns
    /// how many were applied.
    fn sync(&self, st: &mut State, now: u64) -> u32 {
        let to = self.ticks(now);
        let mut k = 0;
        loop {
            let e = st.run.next_event();
            if e > to || st.fault.is_some() {
                break;
            }
            if k == MAX_EVENTS_PER_CALL {
                st.fault = Some(format!("run: more than {MAX_EVENTS_PER_CALL} tree events in one callback"));
                break;
            }
            if let Err(v) = st.run.advance(e) {
                st.fault = Some(v.to_string());
                break;
            }
            k += 1;
        }
        k
    }

    /// The job CPU `c` should run, with its task: the pending job of the task RUN puts on `c`.
    fn wanted(st: &State, c: usize) -> Option<(Job, usize)> {
        st.run.task_on(c).and_then(|i| st.book.ready_head(i as usize)).map(|j| (j, j.task() as usize))
    }

    /// What CPU `c` may take now: its wanted job unless another worker still runs it.
    fn available(st: &State, c: usize) -> Option<Job> {
        st.hand.available(c, Self::wanted(st, c))
    }

    /// The budget timer's due time: the tree's next event, when it comes before the next
    /// release (the release handler brings the tree to release instants itself) and before
    /// the end of the run; else none.
    fn timer_due(&self, st: &State) -> u64 {
        self.timer.due_for(st.run.next_event(), self.scale, st.book.next_due())
    }

    /// After the tree or the book changed: asks every worker whose scheduled job is not what
    /// it may take to reschedule, and re-arms the budget timer (notifying its worker when it
    /// moved earlier and the caller is another thread).
    fn refresh(&self, ctx: &mut Ctx<'_>, st: &State) {
        st.hand.preempt_stale(ctx, |c| Self::available(st, c), |c| c);
        self.timer.rearm(ctx, self.timer_due(st));
    }

    /// The task RUN puts on each CPU now (for tests).
    #[cfg(test)]
    fn tasks_on(&self) -> Vec<Option<u32>> {
        let st = self.state.lock_untraced();
        (0..st.hand.scheduled.len()).map(|c| st.run.task_on(c)).collect()
    }
}

impl Plugin for RunMech {
    fn name(&self) -> &'static str {
        RUN.name
    }

    one_release_domain!(releases);

    fn release(&self, ctx: &mut Ctx<'_>, _domain: usize, now: u64) {
        let mut g = ctx.lock(&self.state);
        let st = &mut *g;
        st.book.release_due(now, |j, _| ctx.record_release(&j));
        self.releases.set(st.book.next_due());
        let k = self.sync(st, now);
        ctx.term_value(TREE_EVENTS, k as u64);
        self.refresh(ctx, st);
    }

    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev, now: u64) -> Option<Job> {
        let c = ctx.cpu();
        let mut g = ctx.lock(&self.state);
        let st = &mut *g;
        if let Some(j) = prev.job() {
            st.hand.let_go(c, j.task() as usize);
            if let Prev::Completed(j) = prev {
                // Its task's backlogged job, if any, becomes the head (ready).
                st.book.complete(&j);
            }
        }
        let k = self.sync(st, now);
        if k > 0 {
            ctx.term_value(TREE_EVENTS, k as u64);
        }
        let next = Self::available(st, c);
        st.hand.take(c, next.map(|j| (j, j.task() as usize)));
        // Others may now take the job this worker let go, or follow the tree's new state.
        ctx.ack_resched();
        self.refresh(ctx, st);
        next
    }

    fn uses_timers(&self) -> bool {
        true
    }

    fn next_timer(&self, thread: usize) -> u64 {
        if thread == self.timer.cpu() {
            self.timer.load()
        } else {
            u64::MAX
        }
    }

    fn timer(&self, ctx: &mut Ctx<'_>, now: u64) {
        let stamp = ctx.stamp();
        {
            let mut g = ctx.lock(&self.state);
            let st = &mut *g;
            let k = self.sync(st, now);
            ctx.term_value(TREE_EVENTS, k as u64);
            self.refresh(ctx, st);
        }
        ctx.term_since(BUDGET_TIMER, stamp);
    }

    fn accounting(&self) -> Accounting {
        let st = self.state.lock_untraced();
        let mut consistent = match &st.fault {
            Some(f) => Err(format!("run: {f}")),
            None => Ok(()),
        };
        // No job scheduled twice; every scheduled job is its task's head.
        let mut seen = vec![false; self.n];
        for (c, j) in st.hand.scheduled.iter().enumerate() {
            let Some(j) = j else { continue };
            let t = j.task() as usize;
            if consistent.is_ok() && std::mem::replace(&mut seen[t], true) {
                consistent = Err(format!("run: task {t} scheduled on two CPUs"));
            }
            if consistent.is_ok() && st.book.head(t) != Some(*j) {
                consistent = Err(format!("run: CPU {c} runs job {} of task {t}, not its head", j.seq()));
            }
        }
        Accounting {
            released: st.book.released().to_vec(),
            completed: st.book.completed().to_vec(),
            consistent: consistent.map_err(crate::Inconsistency),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The mechanism driven without threads, in virtual time, on random implicit-deadline sets
    //! with U ≤ m (U = m in a third of the cases): releases, the budget timer, preemption
    //! notices and random completions, with callbacks on time or late (time jumps over several
    //! tree events, which the mechanism must apply at their own instants). After every instant
    //! has settled, each CPU runs the pending job of the task that the policy — a separate
    //! `rtsched_policy::run::Run` over the same reduction, stepped event by event, the
    //! simulator's driver — puts there, and the mechanism's tree places the same tasks.
    use super::*;
    use crate::mechanism::servers::testing::settle;
    use crate::sync::CpuSignal;
    use crate::tracer::TraceBuffer;
    use proptest::prelude::*;

    const PERIODS: [u64; 6] = [20, 30, 40, 50, 60, 120];

    /// Tasks `(c, t)` drawn from `raw` while the total utilization stays ≤ m (exact); with
    /// `fill` the last one is cut to make U = m when one task can.
    fn draw(m: u32, raw: &[(usize, u64)], fill: bool) -> Vec<(u64, u64)> {
        let l: u128 = 600; // the least common multiple of the periods
        let (mut num, cap) = (0u128, m as u128 * l);
        let mut out = Vec::new();
        for &(p, f) in raw {
            let t = PERIODS[p % PERIODS.len()];
            let c = (t * f / 100).clamp(1, t);
            let add = c as u128 * (l / t as u128);
            if num + add > cap {
                let gap = cap - num;
                if fill && gap > 0 && (gap * t as u128).is_multiple_of(l) && gap * (t as u128) / l <= t as u128 {
                    out.push(((gap * t as u128 / l) as u64, t));
                }
                break;
            }
            num += add;
            out.push((c, t));
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn dispatch_follows_the_policy(
            m in 1u32..=4,
            raw in proptest::collection::vec((0usize..6, 5u64..100), 1..12),
            fill in any::<bool>(),
            ops in proptest::collection::vec((0u8..3, 0usize..4, 1u64..40), 1..200),
        ) {
            follows(m, &raw, fill, ops)?;
        }
    }

    #[allow(clippy::needless_range_loop)] // per-CPU and per-task arrays
    fn follows(m: u32, raw: &[(usize, u64)], fill: bool, ops: Vec<(u8, usize, u64)>) -> Result<(), TestCaseError> {
        let ct = draw(m, raw, fill);
        if ct.is_empty() {
            return Err(TestCaseError::reject("no task"));
        }
        let ts = TaskSet::from_ct(&ct).unwrap();
        let params: Vec<TaskParams> = ct.iter().map(|&(_, t)| TaskParams { deadline: t, period: t }).collect();
        let (t0, end) = (0u64, 2_000u64);
        let g = RunMech::new(&ts, &params, m as usize, PriorityRule::Edf, t0, end).unwrap();
        let red = reduction(&ts, m as usize).unwrap();
        let l = red.scale();
        let mut policy = Run::new(red, &[], true).unwrap();
        let (m, n) = (m as usize, ct.len());
        let signals: Vec<CpuSignal> = (0..m).map(|_| CpuSignal::new()).collect();
        let mut tb = TraceBuffer::new(0, 1 << 20);
        let mut running: Vec<Option<Job>> = vec![None; m];
        let mut completed = vec![0u32; n];
        let mut now = 0u64;
        let mut ops = ops.into_iter();
        // Until the end of the run (after it the mechanism arms no timer: nothing runs then).
        while now < end {
            settle(&g, m, now, &mut running, &mut tb, &signals);
            // The policy, event by event, to now.
            while policy.next_event() <= now as u128 * l {
                let e = policy.next_event();
                policy.advance(e).map_err(|v| TestCaseError::fail(v.to_string()))?;
            }
            let tasks: Vec<Option<u32>> = (0..m).map(|c| policy.task_on(c)).collect();
            prop_assert_eq!(&g.tasks_on(), &tasks, "tree at {}", now);
            for c in 0..m {
                // The pending job of the policy's task: released by now, predecessor complete.
                let want = tasks[c].and_then(|i| {
                    let t = params[i as usize].period;
                    let released = (now / t + 1).min(end.div_ceil(t)) as u32;
                    (completed[i as usize] < released).then_some((i, completed[i as usize]))
                });
                prop_assert_eq!(running[c].map(|j| (j.task(), j.seq())), want, "CPU {} at {}", c, now);
            }
            prop_assert_eq!(g.accounting().consistent, Ok(()));
            let Some((op, c, dt)) = ops.next() else { break };
            let c = c % m;
            match op {
                // The job on CPU c completes now.
                0 if running[c].is_some() => {
                    let j = running[c].unwrap();
                    let mut ctx = Ctx::new(c, &mut tb, &signals);
                    running[c] = g.schedule(&mut ctx, Prev::Completed(j), now);
                    completed[j.task() as usize] += 1;
                }
                // Time passes to the next callback due, or by dt, whichever is first.
                1 => {
                    let next = g.next_release(0).min(g.next_timer(TIMER_CPU)).min(now + dt);
                    prop_assert!(next > now, "an event at {} was not handled", next);
                    now = next;
                }
                // Late callbacks: time jumps by dt past whatever was due.
                _ => now += dt,
            }
        }
        Ok(())
    }

    #[test]
    fn refusals_are_the_policys_one_line() {
        let params = |ts: &TaskSet| ts.iter().map(|t| TaskParams { deadline: t.deadline, period: t.period }).collect::<Vec<_>>();
        let ts = TaskSet::from_cdt(&[(1, 4, 4), (1, 3, 5)]).unwrap();
        let e = RunMech::new(&ts, &params(&ts), 2, PriorityRule::Edf, 0, 100).err().unwrap().to_string();
        assert!(e.contains("run:") && e.contains("task 1") && e.contains("implicit-deadline"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let ts = TaskSet::from_ct(&[(2, 3), (2, 3), (3, 4)]).unwrap();
        let e = RunMech::new(&ts, &params(&ts), 2, PriorityRule::Edf, 0, 100).err().unwrap().to_string();
        assert!(e.contains("exceeds m = 2"), "{e}");
    }

    /// Three tasks of rate 2/3 on two CPUs (Regnier et al., §I): the hand-over of a job RUN
    /// moves to another CPU waits for the worker that runs it, then that CPU is asked to take it.
    #[test]
    fn a_moved_job_is_taken_only_after_its_worker_let_it_go() {
        let ts = TaskSet::from_ct(&[(2, 3), (2, 3), (2, 3)]).unwrap();
        let params: Vec<TaskParams> = ts.iter().map(|t| TaskParams { deadline: t.period, period: t.period }).collect();
        let g = RunMech::new(&ts, &params, 2, PriorityRule::Edf, 0, 12).unwrap();
        let signals: Vec<CpuSignal> = (0..2).map(|_| CpuSignal::new()).collect();
        let mut tb = TraceBuffer::new(0, 1 << 16);
        let mut running = vec![None; 2];
        settle(&g, 2, 0, &mut running, &mut tb, &signals);
        // The policy's opening: tasks 1 and 2 on CPUs 0 and 1 (the policy's own test).
        assert_eq!(running.iter().map(|j: &Option<Job>| j.map(|j| j.task())).collect::<Vec<_>>(), [Some(1), Some(2)]);
        // The budget timer due at 1 ns is handled late, at 2 ns (tick 6): the tree applies
        // both events — at 1 ns task 0 replaces task 1 on CPU 0, at 2 ns task 1 resumes on
        // CPU 1 — so task 1 moves from CPU 0 to CPU 1 while CPU 0's worker still runs it.
        assert_eq!(g.next_timer(TIMER_CPU), 1);
        g.timer(&mut Ctx::new(0, &mut tb, &signals), 2);
        // CPU 1 reschedules first: it may not take task 1's job while CPU 0 still runs it.
        let mut ctx = Ctx::new(1, &mut tb, &signals);
        let got = g.schedule(&mut ctx, Prev::Preempted(running[1].unwrap()), 2);
        drop(ctx);
        assert_eq!(g.tasks_on(), [Some(0), Some(1)]);
        assert_eq!(got, None, "task 1's job is still on CPU 0");
        running[1] = got;
        // CPU 0 lets it go and takes task 0; CPU 1 is asked to reschedule and takes task 1.
        let mut ctx = Ctx::new(0, &mut tb, &signals);
        running[0] = g.schedule(&mut ctx, Prev::Preempted(running[0].unwrap()), 2);
        drop(ctx);
        assert!(signals[1].resched_pending());
        settle(&g, 2, 2, &mut running, &mut tb, &signals);
        assert_eq!(running.iter().map(|j| j.map(|j| j.task())).collect::<Vec<_>>(), [Some(0), Some(1)]);
    }
}
