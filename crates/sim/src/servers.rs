//! The one virtual-time loop of the server-based optimal schedulers, RUN (`run.rs`) and QPS
//! (`qps.rs`): it releases the jobs, runs on each CPU the pending job of the task the policy
//! puts there (or idles), and records the schedule; the policy (behind [`ServerPolicy`]) owns
//! every decision.
//!
//! Time: the policies' budgets end at multiples of `1/L` ns (`L` the policy's
//! [`ServerPolicy::scale`]), so the loop counts exact ticks of `1/L` ns in 128-bit integers. A
//! record is written at the tick's ceiling in ns (the smallest integer ns not before it): the
//! order of records is kept, and since deadlines are integer ns a job completes by its
//! deadline exactly when its record says so. Execution times and response times in the
//! metrics are therefore those of the records (rounded up to the ns at each end); the verdicts
//! are exact.
//!
//! At each instant, in this order: [`ServerPolicy::before`] (budgets up to now), completions
//! (the policy hears of a task whose backlog emptied), deadlines passed without completion
//! (trace only), releases (integer instants before the horizon; the policy hears of each),
//! release instants at or after the horizon (the policy hears that nothing is released:
//! [`ServerPolicy::skip`]), [`ServerPolicy::decide`], dispatch, then the next instant (a policy
//! event, a completion, a release or a deadline to record).

use crate::config::SimConfig;
use crate::error::SimError;
use crate::recorder::{Recorder, NONE};
use crate::result::SimResult;
use crate::setup::{setup, Draw, EarlyEnd, Setup};
use rtsched_model::{ModelError, TaskSet, Time};
use rtsched_trace::{Event, JobId};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// What the loop asks of a server-based policy (in ticks of `1/scale` ns). A failed promise
/// comes back as its message (an internal error: the policy's own checks found it).
pub(crate) trait ServerPolicy {
    /// The name the records and errors carry ("RUN", "QPS").
    const NAME: &'static str;
    /// Ticks per ns.
    fn scale(&self) -> u128;
    /// First at each instant: the budgets consumed up to `now`.
    fn before(&mut self, _now: u128) -> Result<(), String> {
        Ok(())
    }
    /// Task `i` has no pending job any more.
    fn completed(&mut self, _i: u32) -> Result<(), String> {
        Ok(())
    }
    /// Task `i` released a job now.
    fn released(&mut self, _i: u32) -> Result<(), String> {
        Ok(())
    }
    /// Task `i`'s release instant `now` is at or after the horizon: nothing is released.
    fn skip(&mut self, _i: u32) -> Result<(), String> {
        Ok(())
    }
    /// The decision at `now`.
    fn decide(&mut self, now: u128) -> Result<(), String>;
    /// The task CPU `cpu` runs (`None`: idle).
    fn task_on(&self, cpu: usize) -> Option<u32>;
    /// The next instant after now at which the policy's decision may change.
    fn next_event(&self) -> u128;
    /// Work of the policy's own that grows with simulated time rather than with jobs (QPS's
    /// 1-ns windows), counted with the events toward `max_events`.
    fn extra_events(&self) -> u64 {
        0
    }
}

struct Pending {
    seq: u32,
    /// Remaining execution, in ticks.
    rem: u128,
}

/// Simulates `policy` (built over `ts` at time 0 with the release offsets [`setup`] gives,
/// which `build` receives). Same configuration, records and metrics as [`crate::simulate`].
#[allow(clippy::needless_range_loop)] // per-task and per-CPU state arrays
pub(crate) fn simulate_servers<P: ServerPolicy>(
    ts: &TaskSet,
    sched: &crate::config::Scheduler,
    cfg: &SimConfig,
    build: impl FnOnce(&[Time]) -> Result<P, SimError>,
) -> Result<SimResult, SimError> {
    let Setup { offsets, horizon, capped, expected } = setup(ts, cfg)?;
    let mut pol = build(&offsets)?;
    let l = pol.scale();
    let internal = SimError::internal;
    let (m, n) = (cfg.m as usize, ts.len());
    let ns = |t: u128| t.div_ceil(l) as Time;
    let mut h: u128 = horizon as u128 * l;
    let mut early = EarlyEnd::new();
    let mut draw = Draw::new(cfg);
    let mut rec =
        Recorder::new(n, cfg.m, horizon, cfg.record_trace, expected as usize, P::NAME).keep_jobs(cfg.keep_jobs);
    let mut backlog: Vec<VecDeque<Pending>> = (0..n).map(|_| VecDeque::new()).collect();
    let mut completed = vec![0u32; n];
    let mut last_cpu = vec![NONE; n];
    let mut next_rel: Vec<Time> = offsets.clone();
    let mut next_seq = vec![0u32; n];
    let mut scheduled: Vec<Option<JobId>> = vec![None; m];
    let mut deadlines: BinaryHeap<Reverse<(Time, u32, u32)>> = BinaryHeap::new();
    let mut events = 0u64;
    let mut now: u128 = 0;
    loop {
        let tn = ns(now);
        // 0. The policy's budgets up to this instant.
        pol.before(now).map_err(internal)?;
        // 1. Completions (the policy hears of a task whose backlog emptied).
        for c in 0..m {
            let Some(j) = scheduled[c] else { continue };
            let i = j.task as usize;
            if backlog[i].front().is_some_and(|f| f.rem == 0) {
                backlog[i].pop_front();
                events += 1;
                rec.emit(tn, Event::Complete { cpu: c as u32, job: j })?;
                scheduled[c] = None;
                last_cpu[i] = NONE;
                completed[i] += 1;
                if backlog[i].is_empty() {
                    pol.completed(i as u32).map_err(internal)?;
                }
            }
        }
        // 2. Deadlines passed without completion (trace only).
        while let Some(&Reverse((d, i, seq))) = deadlines.peek() {
            if d as u128 * l > now {
                break;
            }
            deadlines.pop();
            if seq >= completed[i as usize] {
                rec.emit(tn, Event::DeadlineMiss { job: JobId { task: i, job: seq } })?;
            }
        }
        // 3. Releases (integer instants before the horizon).
        if now.is_multiple_of(l) && now < h {
            for i in 0..n {
                if next_rel[i] as u128 * l != now {
                    continue;
                }
                events += 1;
                let t = &ts[i];
                let seq = next_seq[i];
                next_seq[i] = seq
                    .checked_add(1)
                    .ok_or_else(|| ModelError::task_field(i, "period", "more than 2^32 jobs of one task"))?;
                let deadline = tn + t.deadline;
                backlog[i].push_back(Pending { seq, rem: draw.exec(&cfg.exec, i, t.wcet) as u128 * l });
                next_rel[i] = tn + draw.gap(&cfg.arrivals, t.period);
                rec.emit(tn, Event::Release { job: JobId { task: i as u32, job: seq }, deadline })?;
                pol.released(i as u32).map_err(internal)?;
                if rec.tracing() && deadline <= horizon {
                    deadlines.push(Reverse((deadline, i as u32, seq)));
                }
            }
        }
        // Release instants at or after the horizon release nothing (a policy that plans at
        // them hears of it).
        if now.is_multiple_of(l) && now >= h {
            for i in 0..n {
                if next_rel[i] as u128 * l == now {
                    pol.skip(i as u32).map_err(internal)?;
                    next_rel[i] = next_rel[i].saturating_add(ts[i].period);
                }
            }
        }
        // 4. The policy's decision at this instant.
        pol.decide(now).map_err(internal)?;
        // 5. Dispatch: the pending job of the task on each CPU; preemptions first.
        let want: Vec<Option<JobId>> = (0..m)
            .map(|c| {
                pol.task_on(c).and_then(|i| {
                    backlog[i as usize].front().filter(|f| f.rem > 0).map(|f| JobId { task: i, job: f.seq })
                })
            })
            .collect();
        for c in 0..m {
            if let Some(j) = scheduled[c] {
                if want[c] != Some(j) {
                    rec.preempt(tn, c as u32, j)?;
                    scheduled[c] = None;
                }
            }
        }
        for c in 0..m {
            if scheduled[c].is_some() {
                continue;
            }
            match want[c] {
                Some(j) => {
                    rec.run(tn, c as u32, j, last_cpu[j.task as usize])?;
                    last_cpu[j.task as usize] = c as u32;
                    scheduled[c] = Some(j);
                }
                None => rec.idle(tn, c as u32)?,
            }
        }
        // 6. Next instant: a policy event, a completion, a release, a deadline to record.
        let mut t = pol.next_event();
        for c in 0..m {
            if let Some(j) = scheduled[c] {
                if let Some(f) = backlog[j.task as usize].front() {
                    t = t.min(now + f.rem);
                }
            }
        }
        for i in 0..n {
            if next_rel[i] < horizon {
                t = t.min(next_rel[i] as u128 * l);
            }
        }
        if let Some(&Reverse((d, _, _))) = deadlines.peek() {
            t = t.min(d as u128 * l);
        }
        if t > h {
            break;
        }
        if t <= now {
            return Err(SimError::internal(format!("{} made no progress at tick {now} (1/{l} ns)", P::NAME)));
        }
        if early.check(cfg, ns(t), horizon, events + pol.extra_events(), &mut rec)? {
            h = t; // end at t (Ctrl-C or a work bound)
        }
        let dt = t - now;
        for c in 0..m {
            if let Some(j) = scheduled[c] {
                if let Some(f) = backlog[j.task as usize].front_mut() {
                    f.rem -= dt;
                }
            }
        }
        now = t;
    }
    let end = ns(h);
    let pending: u64 = backlog.iter().map(|b| b.len() as u64).sum();
    let (metrics, trace) = rec.finish(ts, cfg.m, end);
    if metrics.pending != pending {
        return Err(SimError::internal(format!(
            "{} accounting mismatch: pending {pending}, metrics {}",
            P::NAME,
            metrics.pending
        )));
    }
    Ok(SimResult::from_metrics(sched, metrics, early.message(capped), events, trace))
}
