//! QPS (Massa, Lima, Regnier, Levin & Brandt, RTS 2016) in virtual time: the quasi-partition,
//! the modes and the budgets are `rtsched_policy::qps`'s; this loop releases the jobs, tells
//! QPS about releases and completions, runs on each CPU the pending job of the task QPS puts
//! there, and records the schedule.
//!
//! Time: QPS's budgets end at multiples of `1/L` ns (`L` the least common multiple of the task
//! rates' denominators, [`rtsched_policy::qps::QuasiPartition::scale`]), so the loop counts exact
//! ticks of `1/L` ns in 128-bit integers and writes each record at the tick's ceiling in ns, as
//! the RUN loop does (`run.rs`): the order of records is kept and the verdicts are exact.
//!
//! Refused with one line: constrained or arbitrary deadlines and `U > m` (the quasi-partition's
//! refusals), sporadic arrivals (this QPS plans its windows at every task's future release
//! instants, which sporadic arrivals do not give; the paper's QPS handles sporadic tasks, ours
//! does not), overhead injection.

use crate::config::{Arrivals, Scheduler, SimConfig};
use crate::error::SimError;
use crate::recorder::{Recorder, NONE};
use crate::result::SimResult;
use crate::setup::{setup, Draw, EarlyEnd, Setup};
use rtsched_model::{ModelError, TaskSet, Time};
use rtsched_policy::qps::{Qps, QuasiPartition};
use rtsched_trace::{Event, JobId};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

struct Pending {
    seq: u32,
    /// Remaining execution, in ticks.
    rem: u128,
}

/// Simulates QPS. Same configuration, records and metrics as [`crate::simulate`].
#[allow(clippy::needless_range_loop)] // per-task and per-CPU state arrays
pub(crate) fn simulate_qps(ts: &TaskSet, sched: &Scheduler, cfg: &SimConfig) -> Result<SimResult, SimError> {
    if let Arrivals::Sporadic { .. } = cfg.arrivals {
        return Err(ModelError::field(
            "arrivals",
            "QPS here needs periodic releases: its windows end at each task's future release instants, which sporadic arrivals do not give (the paper's QPS schedules sporadic tasks; this reconstruction does not)",
        )
        .into());
    }
    let Setup { offsets, horizon, capped, expected } = setup(ts, cfg)?;
    let qp = QuasiPartition::build(ts, cfg.m)?;
    let l = qp.scale();
    let mut qps = Qps::new(qp, &offsets, cfg.check_invariants)?;
    let internal = |v: rtsched_policy::qps::QpsViolation| SimError::internal(v.to_string());
    let (m, n) = (cfg.m as usize, ts.len());
    let ns = |t: u128| t.div_ceil(l) as Time;
    let mut h: u128 = horizon as u128 * l;
    let mut early = EarlyEnd::new();
    let mut draw = Draw::new(cfg);
    let mut rec = Recorder::new(n, cfg.m, horizon, cfg.record_trace, expected as usize, "QPS").keep_jobs(cfg.keep_jobs);
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
        // 0. QPS's budgets up to this instant.
        qps.advance(now).map_err(internal)?;
        // 1. Completions (QPS hears of a task whose backlog emptied).
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
                    qps.complete(i as u32).map_err(internal)?;
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
                qps.release(i as u32).map_err(internal)?;
                if rec.tracing() && deadline <= horizon {
                    deadlines.push(Reverse((deadline, i as u32, seq)));
                }
            }
        }
        // QPS plans at every release instant: those at or after the horizon release nothing.
        if now.is_multiple_of(l) && now >= h {
            for i in 0..n {
                if next_rel[i] as u128 * l == now {
                    qps.skip_release(i as u32).map_err(internal)?;
                    next_rel[i] = next_rel[i].saturating_add(ts[i].period);
                }
            }
        }
        // 4. QPS's decision at this instant (boundaries, mode switches, selection).
        qps.schedule().map_err(internal)?;
        // 5. Dispatch: the pending job of the task on each CPU; preemptions first.
        let want: Vec<Option<JobId>> = (0..m)
            .map(|c| {
                qps.task_on(c).and_then(|i| {
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
        // 6. Next instant: a QPS event, a completion, a release, a deadline to record.
        let mut t = qps.next_event();
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
            return Err(SimError::internal(format!("QPS made no progress at tick {now} (1/{l} ns)")));
        }
        if early.check(cfg, ns(t), horizon, events, &mut rec)? {
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
            "QPS accounting mismatch: pending {pending}, metrics {}",
            metrics.pending
        )));
    }
    Ok(SimResult::from_metrics(sched, metrics, early.message(capped), events, trace))
}
