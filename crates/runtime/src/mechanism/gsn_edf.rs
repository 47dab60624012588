//! GSN-EDF: global EDF with one global spin lock protecting a binomial-heap ready queue and
//! the processor mapping, link-based (seed 000 §II-B; seed 001 §3, plugin CEm; the
//! LITMUS^RT plugin `sched_gsn_edf.c`, Brandenburg 2007–). With `dedicated = true` it is
//! GSN-EDF-DI (seed 000 §II-B, seed 001 plugin CE1): a dedicated CPU handles every release
//! and the `m` workers only schedule.
//!
//! State under the lock: `linked[c]` (the job CPU `c` should run — the G-EDF decision),
//! `scheduled[c]` (the job CPU `c` runs — changed only by `c` in `schedule`), the ready
//! queue of pending jobs that are neither linked nor scheduled-and-linked, and a min-heap
//! of CPUs keyed by the priority of their linked job (idle first). The invariant after every
//! callback: the linked jobs are the min(m, pending) highest-priority pending jobs, and a
//! job linked to `c` is scheduled nowhere but on `c` (a job still running on CPU `s` that
//! gets linked elsewhere is linked to `s` instead, swapping with `s`'s linked job — LITMUS^RT's
//! `link_task_to_cpu`). Completed jobs left in the ready queue (a job that completes after
//! being unlinked but before noticing the IPI) are removed lazily when they reach the top.
//! Assumptions: sporadic tasks, any deadlines, EDF with ties by task index.

use crate::mechanism::{Accounting, Ctx, Job, Plugin, Prev, TaskBook, TaskParams};
use crate::queue::binomial::BinomialHeap;
use crate::queue::cpu_heap::CpuHeap;
use crate::sync::SpinLock;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

type Key = (u64, u32, u32);

struct State {
    book: TaskBook,
    ready: BinomialHeap<Job>,
    cpus: CpuHeap<Key>,
    linked: Vec<Option<Job>>,
    scheduled: Vec<Option<Job>>,
    /// Per task: the CPU its current job is linked to / scheduled on.
    linked_on: Vec<Option<usize>>,
    sched_on: Vec<Option<usize>>,
    scratch: Vec<Job>,
}

pub struct GsnEdf {
    dedicated: bool,
    state: SpinLock<State>,
    next_rel: CachePadded<AtomicU64>,
}

impl GsnEdf {
    pub fn new(params: &[TaskParams], m: usize, dedicated: bool, t0: u64, end: u64) -> GsnEdf {
        let n = params.len();
        let all: Vec<usize> = (0..n).collect();
        let book = TaskBook::new(params, &all, t0, end);
        let next = book.next_due();
        GsnEdf {
            dedicated,
            state: SpinLock::new(
                0,
                State {
                    book,
                    ready: BinomialHeap::with_capacity(2 * n + 4),
                    cpus: CpuHeap::new(m),
                    linked: vec![None; m],
                    scheduled: vec![None; m],
                    linked_on: vec![None; n],
                    sched_on: vec![None; n],
                    scratch: Vec::with_capacity(n),
                },
            ),
            next_rel: CachePadded::new(AtomicU64::new(next)),
        }
    }
}

impl State {
    /// LITMUS^RT `link_task_to_cpu`. Precondition: `job` is in no queue and linked nowhere;
    /// `linked[cpu]`'s previous job has been requeued or is being dropped by the caller.
    fn link(&mut self, job: Option<Job>, cpu: usize) {
        if let Some(old) = self.linked[cpu] {
            if self.linked_on[old.task as usize] == Some(cpu) {
                self.linked_on[old.task as usize] = None;
            }
        }
        let mut job = job;
        if let Some(j) = job {
            if let Some(on) = self.sched_on[j.task as usize] {
                if on != cpu && self.scheduled[on] == Some(j) {
                    // j still runs on `on`: link it there, and give `on`'s linked job to `cpu`.
                    let tmp = self.linked[on];
                    self.linked[on] = Some(j);
                    self.linked_on[j.task as usize] = Some(on);
                    self.cpus.update(on, Some(j.key()));
                    job = tmp;
                }
            }
            if let Some(j2) = job {
                self.linked_on[j2.task as usize] = Some(cpu);
            }
        }
        self.linked[cpu] = job;
        self.cpus.update(cpu, job.map(|j| j.key()));
    }

    /// The highest-priority ready job, dropping completed (stale) entries.
    fn peek_ready(&mut self) -> Option<Job> {
        while let Some(&top) = self.ready.peek() {
            if self.book.is_done(&top) {
                self.ready.pop();
            } else {
                return Some(top);
            }
        }
        None
    }

    /// LITMUS^RT `check_for_preemptions`: while the best ready job beats the lowest-priority
    /// CPU's linked job, link it there and ask that CPU to reschedule.
    fn check_for_preemptions(&mut self, ctx: &mut Ctx<'_>) {
        while let Some(top) = self.peek_ready() {
            let c = self.cpus.lowest();
            if let Some(l) = self.linked[c] {
                if !top.higher_than(&l) {
                    break;
                }
            }
            self.ready.pop();
            if let Some(l) = self.linked[c] {
                self.linked_on[l.task as usize] = None;
                self.ready.push(l);
            }
            self.link(Some(top), c);
            if self.scheduled[c] != self.linked[c] {
                ctx.preempt(c);
            }
        }
    }
}

impl Plugin for GsnEdf {
    fn name(&self) -> &'static str {
        if self.dedicated {
            "gsn-edf-di"
        } else {
            "gsn-edf"
        }
    }
    fn release_domains(&self) -> usize {
        1
    }
    fn release_domain(&self, _cpu: usize) -> Option<usize> {
        if self.dedicated {
            None
        } else {
            Some(0)
        }
    }
    fn next_release(&self, _domain: usize) -> u64 {
        self.next_rel.load(Ordering::Acquire)
    }
    fn try_claim_release(&self, _domain: usize, due: u64) -> bool {
        self.next_rel.compare_exchange(due, u64::MAX, Ordering::AcqRel, Ordering::Relaxed).is_ok()
    }

    fn release(&self, ctx: &mut Ctx<'_>, _domain: usize, now: u64) {
        let mut g = self.state.lock(ctx.trace);
        let st = &mut *g;
        let mut scratch = std::mem::take(&mut st.scratch);
        st.book.release_due(now, |j, ready| {
            ctx.record_release(&j);
            if ready {
                scratch.push(j);
            }
        });
        for j in scratch.drain(..) {
            st.ready.push(j);
        }
        st.scratch = scratch;
        st.check_for_preemptions(ctx);
        self.next_rel.store(st.book.next_due(), Ordering::Release);
    }

    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev) -> Option<Job> {
        let cpu = ctx.cpu;
        let mut g = self.state.lock(ctx.trace);
        let st = &mut *g;
        match prev {
            Prev::Idle => {}
            Prev::Preempted(j) => {
                // If still linked here it simply continues below; otherwise it was requeued
                // when it was unlinked and may now be linked elsewhere.
                st.scheduled[cpu] = None;
                st.sched_on[j.task as usize] = None;
            }
            Prev::Completed(j) => {
                st.scheduled[cpu] = None;
                st.sched_on[j.task as usize] = None;
                if st.linked[cpu] == Some(j) {
                    st.link(None, cpu);
                }
                if let Some(next) = st.book.complete(&j) {
                    st.ready.push(next);
                }
            }
        }
        st.check_for_preemptions(ctx);
        let next = st.linked[cpu];
        st.scheduled[cpu] = next;
        if let Some(n) = next {
            st.sched_on[n.task as usize] = Some(cpu);
        }
        // Last, still under the lock: the requests so far (including one this very call may
        // have made to itself while linking) are answered by `next`.
        ctx.ack_resched();
        next
    }

    fn accounting(&self) -> Accounting {
        let st = self.state.lock_untraced();
        let n = st.linked_on.len();
        let keys = st.ready.keys();
        let mut consistent = Ok(());
        for t in 0..n {
            if let Some(h) = st.book.head(t) {
                let found = keys.contains(&h) || st.linked.contains(&Some(h)) || st.scheduled.contains(&Some(h));
                if !found && consistent.is_ok() {
                    consistent = Err(format!("{}: job {}:{} is lost", self.name(), h.task, h.seq));
                }
            }
        }
        // The G-EDF invariant at rest: no ready job beats a linked job or an idle CPU.
        if consistent.is_ok() {
            let best_ready = keys.iter().filter(|j| !st.book.is_done(j)).min().copied();
            if let Some(b) = best_ready {
                let worst = st.linked.iter().map(|l| l.map(|j| j.key())).min_by(|a, b| match (a, b) {
                    (None, _) => std::cmp::Ordering::Less,
                    (_, None) => std::cmp::Ordering::Greater,
                    (Some(x), Some(y)) => y.cmp(x),
                });
                if let Some(w) = worst {
                    if !matches!(w, Some(w) if b.key() >= w) {
                        consistent = Err(format!(
                            "{}: ready job {}:{} outranks a linked job or an idle CPU",
                            self.name(),
                            b.task,
                            b.seq
                        ));
                    }
                }
            }
        }
        Accounting { released: st.book.released().to_vec(), completed: st.book.completed().to_vec(), consistent }
    }
}

#[cfg(test)]
mod tests {
    //! The link-based logic driven without threads: random interleavings of releases,
    //! preemption notices and completions on m = 3 CPUs, with the G-EDF invariant checked
    //! against a brute-force oracle after every callback.
    use super::*;
    use crate::sync::CpuSignal;
    use crate::tracer::TraceBuffer;
    use proptest::prelude::*;

    fn check_invariants(g: &GsnEdf, running: &[Option<Job>]) -> Result<(), String> {
        let st = g.state.lock_untraced();
        let m = st.linked.len();
        // Oracle: the pending jobs are the heads of tasks with released > completed.
        let mut pending: Vec<Job> = (0..st.linked_on.len()).filter_map(|t| st.book.head(t)).collect();
        pending.sort();
        let want: Vec<Job> = pending.iter().take(m).copied().collect();
        let mut got: Vec<Job> = st.linked.iter().flatten().copied().collect();
        got.sort();
        if got != want {
            return Err(format!("linked {got:?} but the top-{m} pending jobs are {want:?}"));
        }
        for (c, run) in running.iter().enumerate().take(m) {
            if st.scheduled[c] != *run {
                return Err(format!("cpu {c}: scheduled {:?} but runs {run:?}", st.scheduled[c]));
            }
            if let Some(l) = st.linked[c] {
                if let Some(s) = st.sched_on[l.task as usize] {
                    if s != c && st.scheduled[s] == Some(l) {
                        return Err(format!("job {l:?} linked to {c} but still scheduled on {s}"));
                    }
                }
            }
        }
        let mut runs: Vec<Job> = running.iter().flatten().copied().collect();
        runs.sort();
        if runs.windows(2).any(|w| w[0] == w[1]) {
            return Err(format!("a job runs twice: {runs:?}"));
        }
        drop(st);
        g.accounting().consistent
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn linking_keeps_the_gedf_invariant(
            periods in proptest::collection::vec(5u64..40, 2..7),
            ops in proptest::collection::vec((0u8..3, 0usize..3, 1u64..15), 1..200),
        ) {
            let m = 3;
            let params: Vec<TaskParams> = periods.iter().map(|&p| TaskParams { deadline: p, period: p }).collect();
            let g = GsnEdf::new(&params, m, false, 0, 1_000_000);
            let signals: Vec<CpuSignal> = (0..m).map(|_| CpuSignal::new()).collect();
            let mut tb = TraceBuffer::new(0, 0);
            let mut running: Vec<Option<Job>> = vec![None; m];
            let mut now = 0u64;
            for (op, c, dt) in ops {
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
                            running[c] = g.schedule(&mut ctx, prev);
                        }
                    }
                    _ => {
                        if let Some(j) = running[c] {
                            running[c] = g.schedule(&mut ctx, Prev::Completed(j));
                        }
                    }
                }
                prop_assert_eq!(check_invariants(&g, &running), Ok(()));
            }
        }
    }
}
