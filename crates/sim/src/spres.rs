//! SP-RES: semi-partitioned reservations (Brandenburg & Gül, "Global Scheduling Not
//! Required", RTSS 2016, §III-A and §IV-A), executing a given placement in virtual time.
//!
//! The rules — per-CPU EDF over polling reservations, hard and soft reservations, CASH slack
//! reclamation, windows of split and period-transformed tasks, migrations at window
//! boundaries — are `rtsched_policy::spres`'s (defined once, shared with the runtime's `spres`
//! mechanism); this loop drives its synchronous driver ([`Spres`]) at every event instant and
//! records the schedule. Background service of depleted soft reservations follows
//! [`SpresConfig::background`]: the paper's round-robin with a quantum (§III-A; the front
//! ends' default, as the runtime's) or earliest window end first; a job released while its predecessor is unfinished is
//! activated (its windows anchored) when the predecessor completes (docs/simulator.md). A
//! self-suspending job (`segments`) leaves its reservation while suspended; by
//! [`SpresConfig::suspension`] the reservation keeps its budget, charged only while the job
//! executes (`keep`, the default), or lends it as CASH slack and the job regains what is left
//! when it wakes (`donate`, Brandenburg & Gül, RTSS 2016, §VIII) ([`Spres::suspend`],
//! [`Spres::wake`]).
//!
//! The placement it executes is the model's [`rtsched_model::Placement`] (its JSON in
//! docs/spres.md), checked here with [`rtsched_model::Placement::check_runnable`].

use crate::config::{Scheduler, SimConfig};
use crate::error::SimError;
use crate::placement::SpresConfig;
use crate::recorder::{Recorder, NONE};
use crate::result::SimResult;
use crate::setup::{setup, Draw, EarlyEnd, Setup};
use rtsched_model::{ModelError, TaskSet, Time};
use rtsched_policy::spres::{Rules, Spres};
use rtsched_trace::{Event, JobId};
use std::collections::VecDeque;

struct Pending {
    seq: u32,
    release: Time,
    /// Execution left in the current execution segment.
    rem: Time,
    /// Self-suspension: the current execution segment's index, and the execution left in the
    /// segments after it (0 for a task without segments).
    seg: u32,
    rest: Time,
}

/// Simulates SP-RES. Same configuration, records and metrics as [`crate::simulate`].
#[allow(clippy::needless_range_loop)] // per-task and per-CPU state arrays
pub(crate) fn simulate_spres(
    ts: &TaskSet,
    sched: &Scheduler,
    sc: &SpresConfig,
    cfg: &SimConfig,
) -> Result<SimResult, SimError> {
    let Setup { offsets, horizon: mut h, capped, expected } = setup(ts, cfg)?;
    let mut early = EarlyEnd::new();
    let pl = &sc.placement;
    if pl.m != cfg.m {
        return Err(ModelError::field(
            "m",
            format!("the placement is for m = {} but the simulation has m = {}", pl.m, cfg.m),
        )
        .into());
    }
    if pl.tasks.len() != ts.len() {
        return Err(ModelError::field(
            "placement",
            format!("the placement has {} tasks, the task set {}", pl.tasks.len(), ts.len()),
        )
        .into());
    }
    pl.check_runnable(ts)?;
    let (m, n) = (cfg.m as usize, ts.len());
    let mut draw = Draw::new(cfg);
    let mut rec = Recorder::new(n, cfg.m, h, cfg.record_trace, expected as usize, "SP-RES").keep_jobs(cfg.keep_jobs);
    let rules = Rules { background: sc.background, suspension: sc.suspension, ..Rules::new(sc.soft_unsplit, sc.cash) };
    rules.suspension.check(rules.cash)?;
    let mut rules = Spres::new(pl, rules);
    let mut backlog: Vec<VecDeque<Pending>> = (0..n).map(|_| VecDeque::new()).collect();
    let mut last_cpu = vec![NONE; n];
    let mut next_rel: Vec<Time> = offsets.clone();
    let mut next_seq = vec![0u32; n];
    let mut scheduled: Vec<Option<JobId>> = vec![None; m];
    let mut events = 0u64;
    // Self-suspension: when the suspended head job of each task resumes (`Time::MAX`: none).
    let mut resume_at = vec![Time::MAX; n];
    let mut now: Time = 0;
    loop {
        // 1. Completions at `now`: the reservation turns inactive (CASH: its unused budget
        //    becomes slack); the task's next backlogged job is activated. A job whose execution
        //    segment ends with execution left in later segments self-suspends instead: it
        //    leaves its reservation until the suspension's end; the reservation keeps its
        //    budget or lends it as slack, by `sc.suspension` (`SpresCpu::suspend`).
        for c in 0..m {
            let Some((i, _, _)) = rules.served(c) else { continue };
            let i = i as usize;
            if backlog[i].front().is_some_and(|f| f.rem == 0 && f.rest > 0) {
                let segs = ts[i].segments.as_ref().ok_or_else(|| {
                    SimError::internal(format!("SP-RES: task {i} has execution left but no segments"))
                })?;
                let f = backlog[i].front_mut().ok_or_else(|| SimError::internal("SP-RES: served job vanished"))?;
                let k = f.seg as usize;
                let d = draw.suspension(cfg.suspensions, segs.susp[k]);
                f.seg += 1;
                f.rem = segs.exec[k + 1].min(f.rest);
                f.rest -= f.rem;
                events += 1;
                rec.emit(now, Event::Suspend { cpu: c as u32, job: JobId { task: i as u32, job: f.seq } })?;
                scheduled[c] = None;
                last_cpu[i] = c as u32;
                if !rules.suspend(i as u32, now) {
                    return Err(SimError::internal(format!("SP-RES: task {i}'s job is not held to suspend")));
                }
                resume_at[i] = now + d;
                continue;
            }
            if backlog[i].front().is_some_and(|f| f.rem == 0) {
                let f = backlog[i].pop_front().ok_or_else(|| SimError::internal("SP-RES: served job vanished"))?;
                events += 1;
                rec.emit(now, Event::Complete { cpu: c as u32, job: JobId { task: i as u32, job: f.seq } })?;
                scheduled[c] = None;
                last_cpu[i] = NONE;
                rules.complete(i as u32, now);
                if let Some(nx) = backlog[i].front() {
                    rules.activate(i as u32, nx.seq, nx.release.max(now));
                }
            }
        }
        // 1b. Suspensions that end now (at the horizon too): the job is served again.
        for i in 0..n {
            if resume_at[i] <= now {
                resume_at[i] = Time::MAX;
                events += 1;
                let seq = backlog[i].front().map(|f| f.seq).ok_or_else(|| {
                    SimError::internal(format!("SP-RES: task {i} resumes at {now} ns without a pending job"))
                })?;
                rec.emit(now, Event::Resume { job: JobId { task: i as u32, job: seq } })?;
                if !rules.wake(i as u32, now) {
                    return Err(SimError::internal(format!("SP-RES: task {i}'s job is not suspended to wake")));
                }
            }
        }
        // 2. Releases at `now` (before the horizon).
        if now < h {
            for i in 0..n {
                if next_rel[i] == now {
                    events += 1;
                    let t = &ts[i];
                    let seq = next_seq[i];
                    next_seq[i] += 1;
                    let exec = draw.exec(&cfg.exec, i, t.wcet);
                    // A self-suspending job runs its first execution segment first; one drawn
                    // shorter than the WCET uses its execution up segment by segment.
                    let rem = t.segments.as_ref().map_or(exec, |s| s.exec[0].min(exec));
                    next_rel[i] = now + draw.gap(&cfg.arrivals, t.period);
                    rec.emit(
                        now,
                        Event::Release { job: JobId { task: i as u32, job: seq }, deadline: now + t.deadline },
                    )?;
                    if backlog[i].is_empty() {
                        rules.activate(i as u32, seq, now);
                    }
                    backlog[i].push_back(Pending { seq, release: now, rem, seg: 0, rest: exec - rem });
                }
            }
        }
        // 3. Slack expiry, migrations at window boundaries, and each CPU's choice.
        rules.step(now);
        // 4. Dispatch: preemptions first, then starts and idleness.
        let want: Vec<Option<JobId>> =
            (0..m).map(|c| rules.served(c).map(|(task, job, _)| JobId { task, job })).collect();
        for c in 0..m {
            if let Some(h_job) = scheduled[c] {
                if want[c] != Some(h_job) {
                    rec.preempt(now, c as u32, h_job)?;
                    last_cpu[h_job.task as usize] = c as u32;
                    scheduled[c] = None;
                }
            }
        }
        for c in 0..m {
            if scheduled[c].is_some() {
                continue;
            }
            match want[c] {
                Some(w) => {
                    rec.run(now, c as u32, w, last_cpu[w.task as usize])?;
                    last_cpu[w.task as usize] = c as u32;
                    scheduled[c] = Some(w);
                }
                None => rec.idle(now, c as u32)?,
            }
        }
        // 5. Next instant: a release, a completion, or an instant the rules name.
        let mut t = rules.next_event(now);
        for i in 0..n {
            if next_rel[i] < h {
                t = t.min(next_rel[i]);
            }
            t = t.min(resume_at[i]);
        }
        for c in 0..m {
            if let Some((i, _, _)) = rules.served(c) {
                let f = backlog[i as usize].front().ok_or_else(|| SimError::internal("SP-RES: served job vanished"))?;
                t = t.min(now + f.rem);
            }
        }
        if t > h {
            break;
        }
        if early.check(cfg, t, h, events, &mut rec)? {
            h = t; // end at t (Ctrl-C or a work bound): only completions are processed there
        }
        // Advance to t: the served jobs progress, the rules charge budgets and slack.
        let dt = t - now;
        for c in 0..m {
            if let Some((i, _, _)) = rules.served(c) {
                if let Some(f) = backlog[i as usize].front_mut() {
                    f.rem -= dt;
                }
            }
        }
        rules.advance(t);
        now = t;
    }
    let pending: u64 = backlog.iter().map(|b| b.len() as u64).sum();
    let (metrics, trace) = rec.finish(ts, cfg.m, h);
    if metrics.pending != pending {
        return Err(SimError::internal(format!(
            "SP-RES accounting mismatch: pending {pending}, metrics {}",
            metrics.pending
        )));
    }
    Ok(SimResult::from_metrics(sched, metrics, early.message(capped), events, trace))
}
