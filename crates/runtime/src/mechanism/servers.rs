//! What the server-based mechanisms RUN (`run.rs`) and QPS (`qps.rs`, one per cluster) share:
//! the **server-budget timer** — armed at the policy's next event (a budget running out, a
//! window boundary) when that comes before the next release and the end of the run, re-armed
//! after every change, its worker notified when another thread moves it earlier (plugin
//! contract 3) — and the **hand-over** of a job the policy moves between CPUs: a CPU takes the
//! job its policy puts there only once no other worker runs it (plugin contract 2), and every
//! CPU whose job is not what it may take is asked to reschedule.

use crate::mechanism::{Ctx, Effects, Job};
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

/// One server-budget timer, on the worker `cpu`.
pub(crate) struct BudgetTimer {
    due: CachePadded<AtomicU64>,
    cpu: usize,
    t0: u64,
    end: u64,
}

impl BudgetTimer {
    /// Unarmed; time zero `t0`, nothing at or after `end`.
    pub(crate) fn new(cpu: usize, t0: u64, end: u64) -> BudgetTimer {
        BudgetTimer { due: CachePadded::new(AtomicU64::new(u64::MAX)), cpu, t0, end }
    }

    /// The worker whose plugin timer this is.
    pub(crate) fn cpu(&self) -> usize {
        self.cpu
    }

    /// The due time (monotonic ns) for a policy whose next event is at `event` ticks of
    /// `1/scale` ns since time zero (`u128::MAX`: none), given the next release: none
    /// (`u64::MAX`) when the event comes at or after the next release (the release handler
    /// brings the policy there itself) or the end of the run.
    pub(crate) fn due_for(&self, event: u128, scale: u128, next_release: u64) -> u64 {
        if event == u128::MAX {
            return u64::MAX;
        }
        let at = u64::try_from(self.t0 as u128 + event.div_ceil(scale)).unwrap_or(u64::MAX);
        if at >= next_release || at >= self.end {
            u64::MAX
        } else {
            at
        }
    }

    /// The armed due time (`u64::MAX`: none).
    pub(crate) fn load(&self) -> u64 {
        self.due.load(Ordering::Acquire)
    }

    /// Arms it at `due` before any thread runs.
    pub(crate) fn arm(&self, due: u64) {
        self.due.store(due, Ordering::Release);
    }

    /// Re-arms it at `due`; notifies its worker when it moved earlier and the caller is
    /// another thread.
    pub(crate) fn rearm(&self, ctx: &mut Ctx<'_>, due: u64) {
        let before = self.due.swap(due, Ordering::AcqRel);
        if due < before && ctx.cpu() != self.cpu {
            ctx.notify(self.cpu);
        }
    }
}

/// Which job each CPU of a mechanism (or cluster) runs, and on which CPU each task's job runs:
/// indices local to the mechanism or cluster.
pub(crate) struct Handover {
    /// Per CPU: the job its worker runs (set by its `schedule`).
    pub(crate) scheduled: Vec<Option<Job>>,
    /// Per task: the CPU its job is scheduled on.
    sched_on: Vec<Option<usize>>,
}

impl Handover {
    pub(crate) fn new(cpus: usize, tasks: usize) -> Handover {
        Handover { scheduled: vec![None; cpus], sched_on: vec![None; tasks] }
    }

    /// CPU `c`'s worker let its job (of task `task`) go.
    pub(crate) fn let_go(&mut self, c: usize, task: usize) {
        self.scheduled[c] = None;
        self.sched_on[task] = None;
    }

    /// What CPU `c` may take: `wanted` (of task `task`) unless another worker still runs it.
    pub(crate) fn available(&self, c: usize, wanted: Option<(Job, usize)>) -> Option<Job> {
        wanted.filter(|&(_, t)| self.sched_on[t].is_none_or(|s| s == c)).map(|(j, _)| j)
    }

    /// CPU `c` runs `next` (of task `task`).
    pub(crate) fn take(&mut self, c: usize, next: Option<(Job, usize)>) {
        self.scheduled[c] = next.map(|(j, _)| j);
        if let Some((_, t)) = next {
            self.sched_on[t] = Some(c);
        }
    }

    /// Asks every CPU whose job is not what it may take (`available(c)`) to reschedule;
    /// `cpu(c)` is the worker of local CPU `c`.
    pub(crate) fn preempt_stale(
        &self,
        ctx: &mut Ctx<'_>,
        available: impl Fn(usize) -> Option<Job>,
        cpu: impl Fn(usize) -> usize,
    ) {
        for c in 0..self.scheduled.len() {
            if available(c) != self.scheduled[c] {
                ctx.preempt(cpu(c));
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Driving a server-based mechanism without threads, in virtual time.
    use crate::mechanism::{Ctx, Job, Plugin, Prev};
    use crate::sync::CpuSignal;
    use crate::tracer::TraceBuffer;

    /// Runs every callback due at `now` — releases (claimed as the workers claim them), timers,
    /// notifications, reschedules — until none is left; checks plugin contract 2 (a job runs on
    /// one worker at a time) after every `schedule`.
    pub(crate) fn settle(
        g: &dyn Plugin,
        m: usize,
        now: u64,
        running: &mut [Option<Job>],
        tb: &mut TraceBuffer,
        signals: &[CpuSignal],
    ) {
        for _ in 0..64 {
            let mut busy = false;
            for c in 0..m {
                let mut ctx = Ctx::new(c, tb, signals);
                if let Some(d) = g.release_domain(c) {
                    let due = g.next_release(d);
                    if due <= now && g.try_claim_release(d, due) {
                        g.release(&mut ctx, d, now);
                        busy = true;
                    }
                }
                if g.next_timer(c) <= now {
                    g.timer(&mut ctx, now);
                    busy = true;
                }
                if signals[c].take_notify() {
                    busy = true;
                }
                if signals[c].resched_pending() {
                    let prev = running[c].map_or(Prev::Idle, Prev::Preempted);
                    running[c] = g.schedule(&mut ctx, prev, now);
                    if let Some(j) = running[c] {
                        let twice = (0..m).any(|d| d != c && running[d] == Some(j));
                        assert!(!twice, "job {j:?} taken by CPU {c} while another worker runs it");
                    }
                    busy = true;
                }
            }
            if !busy {
                return;
            }
        }
        panic!("callbacks did not settle at {now}");
    }
}
