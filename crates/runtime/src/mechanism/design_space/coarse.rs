//! CEm and CE1 — GSN-EDF and GSN-EDF-DI: global EDF with one global spin lock protecting the
//! ready queue (a binomial heap, R1) and the processor mapping, link-based, event-driven
//! (Brandenburg & Anderson, RTSS 2009, §3, Table 1; Cerqueira et al., RTAS 2014, §II-B; the
//! LITMUS^RT plugin `sched_gsn_edf.c`, Brandenburg 2007–). With a dedicated CPU (CE1,
//! GSN-EDF-DI) the service thread on the dedicated CPU handles every release and the `m`
//! workers only schedule. Registered as `cem` and `ce1` (`mechanism::design_space`) and under
//! LITMUS^RT's names `gsn-edf` and `gsn-edf-di` (`mechanism::gsn_edf`).
//!
//! **The policy decides, the mechanism communicates.** What should run where is
//! `rtsched_policy::Gedf` — its ready queue (here the runtime's binomial heap, a type
//! parameter so that other queues plug in), its processor mapping (the policy's CPU heap) and
//! its linking rule; this file adds what concurrency needs: the lock, `scheduled[c]` (what
//! CPU `c`'s worker runs — changed only by `c`, in `schedule`), the "IPIs", and link swaps.
//!
//! State under the lock: the policy (ready queue, processor mapping, `linked`), the job book,
//! `scheduled[]` and per task the CPU its current job is scheduled on. The invariant after
//! every callback: the linked jobs are the `min(m, r)` highest-priority ready jobs (the
//! policy's), and a job linked to `c` is scheduled nowhere but on `c`: when the policy links
//! a job to `c` while it still runs on `s` (it was preempted there but `s` has not noticed
//! yet), the mechanism swaps the links of `c` and `s` (LITMUS^RT's `link_task_to_cpu`). A job
//! that completes while queued (after being unlinked, before noticing the IPI) is removed
//! from the ready queue by the policy (`job_done`).
//! Assumptions: sporadic tasks, any deadlines, EDF with ties by task index, then job number.

use crate::mechanism::dispatch::{check_at_rest, heads, Dispatch};
use crate::mechanism::registry::Setup;
use crate::mechanism::release_domain::{one_release_domain, ReleaseDomain};
use crate::mechanism::{Accounting, Ctx, Effects, Job, Plugin, Prev, TaskParams};
use crate::queue::binomial::BinomialHeap;
use crate::queue::release::TaskBook;
use crate::sync::SpinLock;
use crate::RunError;
use rtsched_policy::{Gedf, Policy, Prio, PriorityRule};

/// Builds GSN-EDF (CEm) or, with a dedicated CPU, GSN-EDF-DI (CE1).
pub(crate) fn build(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    Ok(Box::new(GsnEdf::new(s.name, s.tasks, s.m, s.dedicated, s.t0, s.end)))
}

struct State {
    book: TaskBook,
    policy: Gedf<BinomialHeap<Prio>>,
    /// Linked versus scheduled: what each worker runs, and where each task's job runs.
    dispatch: Dispatch,
    scratch: Vec<Job>,
}

/// GSN-EDF (`dedicated = false`) or GSN-EDF-DI (`dedicated = true`).
pub struct GsnEdf {
    name: &'static str,
    m: usize,
    state: SpinLock<State>,
    releases: ReleaseDomain,
}

impl GsnEdf {
    /// The plugin registered as `name`: `m` CPUs (and with `dedicated` the service thread
    /// releasing), tasks `params` released from `t0` until `end`, over a binomial heap.
    pub fn new(name: &'static str, params: &[TaskParams], m: usize, dedicated: bool, t0: u64, end: u64) -> GsnEdf {
        let n = params.len();
        let all: Vec<usize> = (0..n).collect();
        let book = TaskBook::new(params, &all, PriorityRule::Edf, t0, end);
        let releases = ReleaseDomain::new(dedicated, m, book.next_due());
        GsnEdf {
            name,
            m,
            state: SpinLock::new(
                0,
                State {
                    book,
                    policy: Gedf::with_queue(m, BinomialHeap::with_capacity(2 * n + 4)),
                    dispatch: Dispatch::new(m, n),
                    scratch: Vec::with_capacity(n),
                },
            ),
            releases,
        }
    }

    /// The jobs linked to each CPU now (for tests against the policy).
    #[cfg(test)]
    fn linked(&self) -> Vec<Option<Job>> {
        let st = self.state.lock_untraced();
        (0..self.m).map(|c| st.policy.linked(c).map(|p| st.book.job_of(p))).collect()
    }
}

impl State {
    /// Acts on the policy's link changes (swaps, reschedule requests): `mechanism::dispatch`.
    fn enact(&mut self, ctx: &mut Ctx<'_>) {
        self.dispatch.enact(&mut self.policy, |c| ctx.preempt(c));
    }
}

impl Plugin for GsnEdf {
    fn name(&self) -> &'static str {
        self.name
    }
    one_release_domain!(releases);

    fn release(&self, ctx: &mut Ctx<'_>, _domain: usize, now: u64) {
        let mut g = self.state.lock(ctx.trace());
        let st = &mut *g;
        let mut scratch = std::mem::take(&mut st.scratch);
        st.book.release_due(now, |j, ready| {
            ctx.record_release(&j);
            if ready {
                scratch.push(j);
            }
        });
        for j in scratch.drain(..) {
            st.policy.job_ready(j.prio);
        }
        st.scratch = scratch;
        st.enact(ctx);
        self.releases.set(st.book.next_due());
    }

    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev, _now: u64) -> Option<Job> {
        let cpu = ctx.cpu();
        let mut g = self.state.lock(ctx.trace());
        let st = &mut *g;
        // A preempted job still linked here simply continues below; otherwise the policy
        // requeued it when it was unlinked, and it may be linked elsewhere by now.
        st.dispatch.leave(cpu, prev);
        if let Prev::Blocked(j) = prev {
            // LITMUS^RT's gsnedf_task_block: the job leaves the policy — unlinked here (and the
            // CPU refilled), or removed from the queue if it was unlinked before it noticed —
            // and is held nowhere until `wake`.
            st.policy.job_done(j.prio);
            st.book.suspend(&j);
        }
        if let Prev::Completed(j) = prev {
            // Linked here: unlinked; if it completed after being unlinked: removed from the
            // queue. Its successor (if released) joins the queue, and then the policy links the
            // best ready jobs — one pass, as LITMUS^RT's job_completion followed by
            // check_for_preemptions.
            if st.policy.linked(cpu) == Some(j.prio) {
                st.policy.unlink(cpu);
            } else {
                st.policy.job_done(j.prio);
            }
            if let Some(next) = st.book.complete(&j) {
                st.policy.enqueue(next.prio);
            }
            st.policy.link_all();
        }
        st.enact(ctx);
        let next = st.dispatch.take(cpu, st.policy.linked(cpu), |p| st.book.job_of(p));
        // Last, still under the lock: the requests so far (including one this very call may
        // have made to itself while linking) are answered by `next`.
        ctx.ack_resched();
        next
    }

    /// LITMUS^RT's gsnedf_task_wake_up → gsnedf_job_arrival: the job (same release and
    /// deadline) becomes ready, the policy links it if it beats the lowest CPU, and the link
    /// changes are enacted (reschedule requests), all under the one lock.
    fn wake(&self, ctx: &mut Ctx<'_>, job: Job, _now: u64) {
        let mut g = self.state.lock(ctx.trace());
        let st = &mut *g;
        if st.book.resume(&job) {
            st.policy.job_ready(job.prio);
            st.enact(ctx);
        }
    }

    fn accounting(&self) -> Accounting {
        let st = self.state.lock_untraced();
        let linked: Vec<Option<Prio>> = (0..self.m).map(|c| st.policy.linked(c)).collect();
        // Every pending job (a task's head) is linked or queued, once; nothing else is queued;
        // the linked jobs are the top-m pending jobs (the policy's invariant).
        let queued = st.policy.ready_queue().keys();
        let scheduled = st.dispatch.scheduled().iter().flatten().copied();
        let consistent = check_at_rest(&heads(&st.book), &linked, queued, scheduled, true)
            .map_err(|e| format!("{}: {e}", self.name()));
        Accounting { released: st.book.released().to_vec(), completed: st.book.completed().to_vec(), consistent: consistent.map_err(crate::Inconsistency) }
    }
}

#[cfg(test)]
mod tests {
    //! The mechanism driven without threads: random interleavings of releases, preemption
    //! notices and completions on m = 3 CPUs. After every callback its links are checked
    //! against `rtsched_policy::Gedf` driven by the same events (a reference instance fed from
    //! an independent job model), against the G-EDF invariant, and against the mechanism's own
    //! rule that a linked job runs nowhere else.
    use super::*;
    use crate::sync::CpuSignal;
    use crate::tracer::{RecKind, TraceBuffer};
    use proptest::prelude::*;

    /// The reference: the policy fed job readiness from released/completed counts.
    struct Reference {
        policy: Gedf,
        released: Vec<u32>,
        completed: Vec<u32>,
        deadline: Vec<u64>,
        period: Vec<u64>,
    }

    impl Reference {
        fn prio(&self, task: usize, seq: u32) -> Prio {
            let d = seq as u64 * self.period[task] + self.deadline[task];
            Prio { key: d, task: task as u32, job: seq }
        }
        fn release(&mut self, task: usize) {
            self.released[task] += 1;
            if self.released[task] == self.completed[task] + 1 {
                let p = self.prio(task, self.completed[task]);
                self.policy.job_ready(p);
            }
        }
        fn complete(&mut self, j: Job) {
            let t = j.task() as usize;
            assert!(self.policy.job_done(self.prio(t, j.seq())), "the reference did not know {j:?}");
            self.completed[t] += 1;
            if self.released[t] > self.completed[t] {
                let p = self.prio(t, self.completed[t]);
                self.policy.job_ready(p);
            }
        }
        fn linked_set(&self) -> Vec<Prio> {
            let mut v: Vec<Prio> = (0..self.policy.m()).filter_map(|c| self.policy.linked(c)).collect();
            v.sort();
            v
        }
    }

    fn check(g: &GsnEdf, r: &Reference, running: &[Option<Job>]) -> Result<(), String> {
        let linked = g.linked();
        let mut set: Vec<Prio> = linked.iter().flatten().map(|j| j.prio).collect();
        set.sort();
        if set != r.linked_set() {
            return Err(format!("links {set:?}, the policy's {:?}", r.linked_set()));
        }
        let st = g.state.lock_untraced();
        for (c, run) in running.iter().enumerate() {
            if st.dispatch.scheduled()[c] != *run {
                return Err(format!("cpu {c}: scheduled {:?} but runs {run:?}", st.dispatch.scheduled()[c]));
            }
            if let Some(l) = linked[c] {
                if let Some(s) = running.iter().position(|x| *x == Some(l)) {
                    if s != c {
                        return Err(format!("job {l:?} linked to {c} but still running on {s}"));
                    }
                }
            }
        }
        let mut runs: Vec<Prio> = running.iter().flatten().map(|j| j.prio).collect();
        runs.sort();
        if runs.windows(2).any(|w| w[0] == w[1]) {
            return Err(format!("a job runs twice: {runs:?}"));
        }
        drop(st);
        g.accounting().consistent.map_err(|e| e.0)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn links_equal_the_policys(
            periods in proptest::collection::vec(5u64..40, 2..7),
            ops in proptest::collection::vec((0u8..5, 0usize..3, 1u64..15), 1..200),
        ) {
            let m = 3;
            let params: Vec<TaskParams> = periods.iter().map(|&p| TaskParams { deadline: p, period: p }).collect();
            let g = GsnEdf::new("cem", &params, m, false, 0, 1_000_000);
            // Self-suspended jobs, in suspension order (op 3 blocks, op 4 wakes one).
            let mut suspended: Vec<Job> = Vec::new();
            let n = params.len();
            let mut r = Reference {
                policy: Gedf::new(m),
                released: vec![0; n],
                completed: vec![0; n],
                deadline: periods.clone(),
                period: periods.clone(),
            };
            let signals: Vec<CpuSignal> = (0..m).map(|_| CpuSignal::new()).collect();
            let mut tb = TraceBuffer::new(0, 100_000);
            let mut running: Vec<Option<Job>> = vec![None; m];
            let mut now = 0u64;
            for (op, c, dt) in ops {
                let seen = tb.records().len();
                let mut ctx = Ctx::new(c, &mut tb, &signals);
                match op {
                    0 => {
                        now += dt;
                        if g.next_release(0) <= now && g.try_claim_release(0, g.next_release(0)) {
                            g.release(&mut ctx, 0, now);
                        }
                    }
                    1 => {
                        // CPU c notices a request (or is idle) and reschedules.
                        if signals[c].take().is_some() || running[c].is_none() {
                            let prev = running[c].map_or(Prev::Idle, Prev::Preempted);
                            running[c] = g.schedule(&mut ctx, prev, now);
                        }
                    }
                    2 => {
                        if let Some(j) = running[c] {
                            r.complete(j);
                            running[c] = g.schedule(&mut ctx, Prev::Completed(j), now);
                        }
                    }
                    3 => {
                        // The job running on c self-suspends (block): it leaves the policy.
                        if let Some(j) = running[c] {
                            prop_assert!(r.policy.job_done(j.prio), "the reference did not know {:?}", j);
                            suspended.push(j);
                            running[c] = g.schedule(&mut ctx, Prev::Blocked(j), now);
                        }
                    }
                    _ => {
                        // A suspended job wakes, on thread c (any thread may wake it).
                        if !suspended.is_empty() {
                            let j = suspended.remove(dt as usize % suspended.len());
                            r.policy.job_ready(j.prio);
                            g.wake(&mut ctx, j, now);
                        }
                    }
                }
                drop(ctx);
                for x in &tb.records()[seen..] {
                    if x.kind == RecKind::JobRelease {
                        r.release(x.task as usize);
                    }
                }
                prop_assert_eq!(check(&g, &r, &running), Ok(()));
            }
        }
    }

    /// The swap: a job preempted on one CPU (which has not noticed yet) and then linked by
    /// the policy to another CPU is linked back to the CPU where it still runs.
    #[test]
    fn a_still_running_job_is_relinked_where_it_runs() {
        // A (D 30) and B (D 40) run on the two CPUs.
        let p = |d| TaskParams { deadline: d, period: 1000 };
        let g = GsnEdf::new("cem", &[p(30), p(40)], 2, false, 0, 1_000_000);
        let sig: Vec<CpuSignal> = (0..2).map(|_| CpuSignal::new()).collect();
        let mut tb = TraceBuffer::new(0, 1000);
        g.release(&mut Ctx::new(0, &mut tb, &sig), 0, 0);
        let at = |t: u32| g.linked().iter().position(|x| x.is_some_and(|j| j.task() == t)).unwrap();
        let (ca, cb) = (at(0), at(1));
        let a = g.schedule(&mut Ctx::new(ca, &mut tb, &sig), Prev::Idle, 0).unwrap();
        let b = g.schedule(&mut Ctx::new(cb, &mut tb, &sig), Prev::Idle, 0).unwrap();
        // A job X of priority 1 becomes ready: the policy links it to the lowest CPU, cb,
        // and queues B, which still runs on cb until cb notices.
        let x = Prio { key: 1, task: 0, job: 7 };
        let mut ctx = Ctx::new(ca, &mut tb, &sig);
        let mut st = g.state.lock_untraced();
        st.policy.job_ready(x);
        st.enact(&mut ctx);
        assert_eq!(st.policy.linked(cb), Some(x));
        assert!(sig[cb].is_set(), "cb must be told");
        // A completes on ca before cb noticed: the policy refills ca with B (the top queued
        // job), but B still runs on cb, so the mechanism swaps the links of ca and cb.
        st.dispatch.leave(ca, Prev::Completed(a));
        st.policy.job_done(a.prio);
        st.enact(&mut ctx);
        assert_eq!(st.policy.linked(cb), Some(b.prio), "B stays linked where it runs");
        assert_eq!(st.policy.linked(ca), Some(x), "X goes to the freed CPU");
        assert!(sig[ca].is_set(), "the freed CPU is told to pick X up");
    }
}
