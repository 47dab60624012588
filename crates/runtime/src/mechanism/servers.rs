//! What the server-based mechanisms RUN (`run.rs`) and QPS (`qps.rs`, one per cluster) share:
//! the **server-budget timer** — armed at the policy's next event (a budget running out, a
//! window boundary) when that comes before the next release and the end of the run, re-armed
//! after every change, its worker notified when another thread moves it earlier (plugin
//! contract 3) — and the **hand-over** of a job the policy moves between CPUs: a CPU takes the
//! job its policy puts there only once no other worker runs it (plugin contract 2), and every
//! CPU whose job is not what it may take is asked to reschedule. And their one parameter,
//! `budgets`: the servers' budgets when they are not the WCETs ([`budget_set`]).

use crate::mechanism::params::{ParamDecl, ParamKind, ParamSet, Params};
use crate::mechanism::{Ctx, Effects, Job};
use crate::ParamError;
use crossbeam_utils::CachePadded;
use rtsched_model::time::format_time_exact;
use rtsched_model::{Task, TaskSet, Time};
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};

crate::mechanism_params! {
    /// The parameter of RUN and QPS (`run`, `qps-g`, `qps-c`).
    pub struct ServerParams {
        budgets: String = ParamDecl {
            kind: ParamKind::Text,
            default: "",
            help: "the servers' budget per task per period, comma-separated ns (default: the WCETs); rtsched run \
                   --inflate MODEL sets them to the WCETs inflated by the model's overheads (docs/overheads.md); \
                   the job bodies still run their WCETs",
        },
    }
}

/// The task set whose WCETs are the servers' budgets — the set the reduction (RUN) or the
/// quasi-partition (QPS) is built from: `ts` itself, or `ts` with the `budgets` parameter's
/// values. Refused in one line naming the task: not one budget per task, a budget below the
/// task's WCET (the job would overrun it by design) or above its period.
pub(crate) fn budget_set<'a>(ts: &'a TaskSet, p: &Params) -> Result<Cow<'a, TaskSet>, ParamError> {
    let text = ServerParams::from_params(p)?.budgets;
    if text.trim().is_empty() {
        return Ok(Cow::Borrowed(ts));
    }
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() != ts.len() {
        return Err(ParamError::new("budgets", format!("{} budgets for {} tasks", parts.len(), ts.len())));
    }
    let mut tasks = Vec::with_capacity(ts.len());
    for (i, (x, t)) in parts.iter().zip(ts.iter()).enumerate() {
        let b: Time = x
            .parse()
            .map_err(|_| ParamError::new("budgets", format!("task {i}: {x:?} is not a whole number of ns")))?;
        if b < t.wcet || b > t.period {
            return Err(ParamError::new(
                "budgets",
                format!(
                    "task {i}: budget {} is {} its {} {}",
                    format_time_exact(b),
                    if b < t.wcet { "below" } else { "above" },
                    if b < t.wcet { "WCET" } else { "period" },
                    format_time_exact(if b < t.wcet { t.wcet } else { t.period })
                ),
            ));
        }
        tasks.push(Task { wcet: b, ..t.clone() });
    }
    TaskSet::new(tasks).map(Cow::Owned).map_err(|e| ParamError::new("budgets", e.to_string()))
}

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
mod tests {
    use super::*;

    fn params(budgets: &str) -> Params {
        Params::resolve("run", ServerParams::SPECS, [("budgets", budgets)], |_| Vec::new()).map_err(|_| "bad").unwrap()
    }

    #[test]
    fn budgets_replace_the_wcets_and_are_checked() {
        let ts = TaskSet::from_ct(&[(2, 10), (3, 20)]).unwrap();
        assert_eq!(*budget_set(&ts, &params("")).unwrap(), ts);
        let b = budget_set(&ts, &params("4, 3")).unwrap();
        assert_eq!(b.iter().map(|t| (t.wcet, t.period)).collect::<Vec<_>>(), [(4, 10), (3, 20)]);
        for (bad, want) in [
            ("4", "1 budgets for 2 tasks"),
            ("4,x", "task 1: \"x\" is not a whole number"),
            ("1,3", "task 0: budget 1 ns is below its WCET 2 ns"),
            ("4,21", "task 1: budget 21 ns is above its period 20 ns"),
        ] {
            let e = budget_set(&ts, &params(bad)).unwrap_err().to_string();
            assert!(e.contains("parameter budgets") && e.contains(want) && !e.contains('\n'), "{bad}: {e}");
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
