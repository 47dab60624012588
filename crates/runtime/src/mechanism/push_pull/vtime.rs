//! Push/pull in *virtual time*, single-threaded: the mechanism runs a task set on `m` CPUs
//! driven by the events of the schedule — releases at `k·T`, completions when a running job's
//! work (its WCET, as the synthetic tasks of Lelli et al., OSPERT 2011, §6.2 execute) is done,
//! reschedules when requested — with no overheads and no concurrency.
//!
//! Two uses:
//! * [`record`] (strict): the sequence of plugin calls is the *recording* that
//!   `replay` times per find-CPU variant. Single-threaded a push never fails, so push/pull is
//!   exactly G-EDF (or global FP) here: at every instant, once the reschedule requests have
//!   settled, the running jobs must be the `min(m, r)` best ready ones
//!   (`rtsched_policy::invariant::check_global`) — a violation is an error (a bug), and the
//!   tests check the completion times against the simulator's G-EDF.
//! * [`run`] with `strict = false` over any find-CPU structure, e.g. one that gives stale
//!   answers: push failures (Cerqueira et al., RTAS 2014, §II-D) are counted instead, the
//!   time during which the global invariant is violated is summed at every settled instant,
//!   and the schedule is written as an `rtsched_trace::Trace` — so that the tests can check
//!   the priority-inversion monitor (`rtsched_trace::monitor`) against that sum: the monitor
//!   measures exactly the deviation the push failures cause.

use super::ops::T_FAIL;
use super::recording::{mechanism, Call, PrevKind, Recording};
use crate::mechanism::{Effects, Job, Plugin, Prev, TaskParams};
use crate::queue::find_cpu::FindCpu;
use crate::queue::find_linear::Linear;
use crate::sync::{Primitives, SpinGuard, SpinLock};
use crate::RunError;
use rtsched_model::TaskSet;
use rtsched_policy::{invariant, FpOrder, Prio, PriorityRule};
use rtsched_trace::{Event, JobId, Record, Trace, TraceMeta};

/// The virtual-time effects: untraced locks, requests (and notifications, which push/pull does
/// not send) as flags, push failures counted, releases collected for the trace.
struct VEnv {
    resched: Vec<bool>,
    failed: u64,
    released: Vec<Job>,
}

impl Effects for VEnv {
    fn lock<'a, T, B: Primitives>(&mut self, l: &'a SpinLock<T, B>) -> SpinGuard<'a, T, B> {
        l.lock_untraced()
    }
    fn preempt(&mut self, cpu: usize) {
        self.resched[cpu] = true;
    }
    fn notify(&mut self, cpu: usize) {
        self.resched[cpu] = true;
    }
    fn term_value(&mut self, term: u32, _tries: u64) {
        if term == T_FAIL {
            self.failed += 1;
        }
    }
    fn record_release(&mut self, job: &Job) {
        self.released.push(*job);
    }
}

/// A virtual-time run: the recording, the schedule as a trace, the push failures and the time
/// the global invariant was violated (summed over settled instants).
#[derive(Debug, Clone)]
pub struct VirtualRun {
    pub recording: Recording,
    pub trace: Trace,
    pub push_failures: u64,
    pub violated_ns: u64,
}

/// Records `ts` (implicit or constrained deadlines; every job runs for its WCET) on `m` CPUs
/// for `horizon` ns of virtual time under push/pull global EDF (`fixed_priority`: global
/// rate-monotonic) over the linear scan, strictly (see the module docs). Errors: bad input
/// (m = 0, an empty set, a zero horizon) and more than `max_calls` calls (a bound on the work)
/// are input errors; a push failure or a violated invariant is an internal error (a bug: the
/// message names the instant).
pub fn record(ts: &TaskSet, m: usize, fixed_priority: bool, horizon: u64, max_calls: usize) -> Result<Recording, RunError> {
    if m == 0 {
        return Err(RunError::input(format!("record: need m ≥ 1 (m = {m})")));
    }
    run(ts, m, fixed_priority, horizon, max_calls, Linear::new(m), true).map(|r| r.recording)
}

/// Runs `ts` in virtual time over the find-CPU structure `find` (sized for `m`). `strict`:
/// a push failure or a violated invariant is an error; otherwise both are counted.
pub fn run<F: FindCpu>(
    ts: &TaskSet,
    m: usize,
    fixed_priority: bool,
    horizon: u64,
    max_calls: usize,
    find: F,
    strict: bool,
) -> Result<VirtualRun, RunError> {
    if m == 0 || ts.is_empty() || horizon == 0 {
        return Err(RunError::input(format!(
            "record: need m ≥ 1, a task and a positive horizon (m = {m}, n = {}, horizon = {horizon})",
            ts.len()
        )));
    }
    let tasks: Vec<TaskParams> = ts.iter().map(|t| TaskParams { deadline: t.deadline, period: t.period }).collect();
    let wcet: Vec<u64> = ts.iter().map(|t| t.wcet.max(1)).collect();
    let rule = if fixed_priority { PriorityRule::fixed(ts, FpOrder::RateMonotonic) } else { PriorityRule::Edf };
    let pp = mechanism(&tasks, m, &rule, horizon, find)?;
    let mut env = VEnv { resched: vec![false; m], failed: 0, released: Vec::new() };
    let mut calls = Vec::new();
    let mut completed = Vec::new();
    let mut running: Vec<Option<Job>> = vec![None; m];
    // What the trace shows running on each CPU.
    let mut shown: Vec<Option<Job>> = vec![None; m];
    let mut recs: Vec<Record> = Vec::new();
    let n = tasks.len();
    // Remaining work of each task's current job (the one whose sequence number is `seq`).
    let mut remaining = vec![0u64; n];
    let mut seq = vec![u32::MAX; n];
    let (mut now, mut checks, mut violated) = (0u64, 0u64, 0u64);
    let too_many = |calls: &Vec<Call>| calls.len() > max_calls;
    let jid = |j: &Job| JobId { task: j.task(), job: j.seq() };
    // A job gets its WCET of work when it first runs (its sequence number is new).
    let dispatch = |c: usize, j: Option<Job>, running: &mut [Option<Job>], seq: &mut [u32], remaining: &mut [u64]| {
        if let Some(j) = j {
            let t = j.task() as usize;
            if seq[t] != j.seq() {
                seq[t] = j.seq();
                remaining[t] = wcet[t];
            }
        }
        running[c] = j;
    };
    loop {
        // Settle: every CPU asked to reschedule does, until none is.
        while let Some(c) = env.resched.iter().position(|&x| x) {
            env.resched[c] = false;
            let (prev, kind) = match running[c] {
                Some(j) => (Prev::Preempted(j), PrevKind::Preempted),
                None => (Prev::Idle, PrevKind::Idle),
            };
            let got = pp.schedule_with(&mut env, c, prev);
            calls.push(Call::Schedule { cpu: c as u32, prev: kind, got: got.map(|j| (j.task(), j.seq())) });
            dispatch(c, got, &mut running, &mut seq, &mut remaining);
            if too_many(&calls) {
                return Err(RunError::input(format!("record: more than {max_calls} calls (raise the bound or shorten the horizon)")));
            }
        }
        if strict && env.failed > 0 {
            return Err(RunError::Internal(format!("record: a push failed single-threaded at {now} ns (a bug)")));
        }
        // The trace at this instant: releases, then what each CPU now runs.
        for j in env.released.drain(..) {
            recs.push(Record::new(now, Event::Release { job: jid(&j), deadline: j.deadline }));
        }
        for c in 0..m {
            if shown[c] != running[c] {
                if let Some(old) = shown[c] {
                    recs.push(Record::new(now, Event::Preempt { cpu: c as u32, job: jid(&old) }));
                }
                if let Some(new) = running[c] {
                    recs.push(Record::new(now, Event::Run { cpu: c as u32, job: jid(&new) }));
                }
                shown[c] = running[c];
            }
        }
        // The policy's invariant at this settled instant.
        let mut ready: Vec<Prio> = pp.heads().iter().map(|j| j.prio).collect();
        ready.sort_unstable();
        let run: Vec<Option<Prio>> = running.iter().map(|r| r.map(|j| j.prio)).collect();
        let ok = invariant::check_global(m, &ready, &run);
        if strict {
            ok.clone().map_err(|e| RunError::Internal(format!("record: at {now} ns: {e}")))?;
        }
        checks += 1;
        // The next instant: a completion or a release.
        let next_done = running.iter().flatten().map(|j| now + remaining[j.task() as usize]).min().unwrap_or(u64::MAX);
        let next_rel = (0..m).map(|d| pp.next_release(d)).min().unwrap_or(u64::MAX);
        let t = next_done.min(next_rel);
        if ok.is_err() {
            violated += t.min(horizon) - now;
        }
        if t >= horizon {
            break;
        }
        for j in running.iter().flatten() {
            remaining[j.task() as usize] -= t - now;
        }
        now = t;
        for c in 0..m {
            if let Some(j) = running[c] {
                if remaining[j.task() as usize] == 0 {
                    completed.push((j.task(), j.seq(), now));
                    recs.push(Record::new(now, Event::Complete { cpu: c as u32, job: jid(&j) }));
                    shown[c] = None;
                    let got = pp.schedule_with(&mut env, c, Prev::Completed(j));
                    calls.push(Call::Schedule {
                        cpu: c as u32,
                        prev: PrevKind::Completed,
                        got: got.map(|j| (j.task(), j.seq())),
                    });
                    dispatch(c, got, &mut running, &mut seq, &mut remaining);
                    // That call answered this CPU's requests.
                    env.resched[c] = false;
                }
            }
        }
        for d in 0..m {
            if pp.next_release(d) <= now {
                pp.release_with(&mut env, d, now);
                calls.push(Call::Release { cpu: d as u32, now });
            }
        }
        if too_many(&calls) {
            return Err(RunError::input(format!("record: more than {max_calls} calls (raise the bound or shorten the horizon)")));
        }
    }
    let jobs = pp.accounting().released.iter().map(|&r| r as u64).sum();
    let recording = Recording { m, tasks, rule, horizon, calls, jobs, checks, completed };
    let trace = Trace { meta: TraceMeta::new(ts, m as u32, horizon), records: recs };
    Ok(VirtualRun { recording, trace, push_failures: env.failed, violated_ns: violated })
}
