//! SP-RES: semi-partitioned reservations (Brandenburg & Gül, "Global Scheduling Not
//! Required", RTSS 2016, §III-A and §IV-A), executing a given placement.
//!
//! Each CPU runs EDF over *polling reservations* (budget Q, replenishment period Δ, scheduling
//! deadline). A reservation of part `p` of task i is active, per replenishment period
//! `[a, a + Δ)` of the task's current job (`a` = the job's activation + k·Δ), during its
//! window `[a + offset, a + offset + deadline)`, with budget Q refilled at the window start
//! and scheduling deadline at the window end. Parts of a split task have back-to-back windows
//! on different CPUs, so the job migrates at window boundaries; the placement's order is the
//! flipped C=D order (§IV-A: the part with laxity first, the zero-laxity chunks last).
//!
//! Selection per CPU: the active, non-depleted reservation with the earliest scheduling
//! deadline (ties: task index, then part); otherwise, background service for *soft*
//! reservations whose job is on this CPU (depleted, or after their window), earliest window end
//! first. Split-task reservations are always soft (§IV-A); unsplit ones are hard unless
//! `soft_unsplit`. CASH slack reclamation (Caccamo, Buttazzo & Sha, RTSS 2000): when a job
//! completes, its reservation's remaining budget becomes slack with the window's deadline;
//! whichever reservation a CPU serves consumes the earliest-deadline unexpired slack whose
//! deadline is no later than its own scheduling deadline before its own budget; an idle CPU
//! consumes its earliest-deadline slack (CASH's idle rule); slack expires at its deadline.
//!
//! Deviations (stated in docs/simulator.md): background service is EDF by window end rather
//! than round-robin (no quantum exists in an exact simulation); a job released while its
//! predecessor is unfinished is activated (its windows anchored) when the predecessor
//! completes.
//!
//! The placement it executes (and its JSON) is [`crate::placement`].

use crate::config::{Scheduler, SimConfig};
use crate::error::SimError;
use crate::placement::{Reservation, SpresConfig};
use crate::recorder::Recorder;
use crate::result::SimResult;
use crate::setup::{setup, Draw, Setup, NONE};
use rtsched_model::{ModelError, TaskSet, Time};
use rtsched_trace::{Event, JobId};
use std::collections::VecDeque;

struct Pending {
    seq: u32,
    release: Time,
    rem: Time,
}

struct TaskState {
    backlog: VecDeque<Pending>,
    /// Window anchor of the front job (its activation).
    base: Time,
    last_cpu: u32,
    /// Per part: start of the window whose budget `left` holds.
    win: Vec<Time>,
    left: Vec<Time>,
}

/// Where a task's front job is at time `t`: (part index, window start, window end, in window).
fn locate(parts: &[Reservation], base: Time, t: Time) -> (usize, Time, Time, bool) {
    let delta = parts[0].period;
    let k = (t - base) / delta;
    let a = base + k * delta;
    let u = t - a;
    for (j, r) in parts.iter().enumerate() {
        if u >= r.offset && u < r.offset + r.deadline {
            return (j, a + r.offset, a + r.offset + r.deadline, true);
        }
    }
    // After the last window of this period (or before the first, impossible: offset 0).
    let j = parts.len() - 1;
    let r = &parts[j];
    (j, a + r.offset, a + r.offset + r.deadline, false)
}

/// Next window boundary strictly after `t`.
fn next_boundary(parts: &[Reservation], base: Time, t: Time) -> Time {
    let delta = parts[0].period;
    let k = (t - base) / delta;
    let a = base + k * delta;
    let u = t - a;
    let mut best = a + delta;
    for r in parts {
        for b in [r.offset, r.offset + r.deadline] {
            if b > u {
                best = best.min(a + b);
            }
        }
    }
    best
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Budget,
    Background,
}

/// Simulates SP-RES. Same configuration, records and metrics as [`crate::simulate`].
#[allow(clippy::needless_range_loop, clippy::type_complexity)] // per-task state arrays; one local choice tuple
pub fn simulate_spres_old(
    ts: &TaskSet,
    sched: &Scheduler,
    sc: &SpresConfig,
    cfg: &SimConfig,
) -> Result<SimResult, SimError> {
    let Setup { offsets, horizon: h, capped, expected } = setup(ts, cfg)?;
    let pl = &sc.placement;
    if pl.m != cfg.m {
        return Err(ModelError::field(
            "m",
            format!("the placement is for m = {} but the simulation has m = {}", pl.m, cfg.m),
        )
        .into());
    }
    if pl.parts.len() != ts.len() {
        return Err(ModelError::field(
            "placement",
            format!("the placement has {} tasks, the task set {}", pl.parts.len(), ts.len()),
        )
        .into());
    }
    let (m, n) = (cfg.m as usize, ts.len());
    let mut draw = Draw::new(cfg);
    let mut rec = Recorder::new(n, cfg.m, h, cfg.record_trace, expected as usize, "SP-RES");
    let mut tasks: Vec<TaskState> = pl
        .parts
        .iter()
        .map(|ps| TaskState {
            backlog: VecDeque::new(),
            base: 0,
            last_cpu: NONE,
            win: vec![Time::MAX; ps.len()],
            left: vec![0; ps.len()],
        })
        .collect();
    let mut next_rel: Vec<Time> = offsets.clone();
    let mut next_seq = vec![0u32; n];
    // Per CPU: served (task, part, mode) and the job scheduled (for dispatch records).
    let mut served: Vec<Option<(usize, usize, Mode)>> = vec![None; m];
    let mut scheduled: Vec<Option<JobId>> = vec![None; m];
    // CASH slack per CPU: (deadline, amount).
    let mut slack: Vec<Vec<(Time, Time)>> = vec![Vec::new(); m];
    let mut events = 0u64;
    let mut now: Time = 0;
    loop {
        // 1. Completions at `now`.
        for c in 0..m {
            if let Some((i, j, _)) = served[c] {
                if tasks[i].backlog.front().is_some_and(|f| f.rem == 0) {
                    let f = tasks[i].backlog.pop_front().expect("front exists");
                    events += 1;
                    rec.emit(now, Event::Complete { cpu: c as u32, job: JobId { task: i as u32, job: f.seq } })?;
                    scheduled[c] = None;
                    served[c] = None;
                    let ts_i = &mut tasks[i];
                    ts_i.last_cpu = NONE;
                    // Polling: the reservation turns inactive; unused budget becomes slack.
                    let (jj, _ws, we, inwin) = locate(&pl.parts[i], ts_i.base, now);
                    if sc.cash && inwin && jj == j && ts_i.win[j] != Time::MAX && ts_i.left[j] > 0 && we > now {
                        slack[c].push((we, ts_i.left[j]));
                    }
                    for w in ts_i.win.iter_mut() {
                        *w = Time::MAX;
                    }
                    if let Some(nx) = ts_i.backlog.front() {
                        ts_i.base = nx.release.max(now);
                    }
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
                    let rem = draw.exec(&cfg.exec, i, t.wcet);
                    next_rel[i] = now + draw.gap(&cfg.arrivals, t.period);
                    rec.emit(
                        now,
                        Event::Release { job: JobId { task: i as u32, job: seq }, deadline: now + t.deadline },
                    )?;
                    let st = &mut tasks[i];
                    if st.backlog.is_empty() {
                        st.base = now;
                    }
                    st.backlog.push_back(Pending { seq, release: now, rem });
                }
            }
        }
        // Expired slack.
        for s in slack.iter_mut() {
            s.retain(|&(d, a)| d > now && a > 0);
        }
        // 3. Decide what each CPU serves.
        let mut best: Vec<Option<((Time, usize, usize), Mode)>> = vec![None; m];
        for i in 0..n {
            let st = &mut tasks[i];
            if st.backlog.is_empty() {
                continue;
            }
            let ps = &pl.parts[i];
            let (j, ws, we, inwin) = locate(ps, st.base, now);
            if inwin && st.win[j] != ws {
                st.win[j] = ws;
                st.left[j] = ps[j].budget;
            }
            let c = ps[j].cpu as usize;
            let soft = ps.len() > 1 || sc.soft_unsplit;
            let cand = if inwin && st.left[j] > 0 {
                Some(((we, i, j), Mode::Budget))
            } else if soft {
                Some(((we, i, j), Mode::Background))
            } else {
                None
            };
            if let Some((key, mode)) = cand {
                let better = match best[c] {
                    None => true,
                    Some((k2, m2)) => (mode == Mode::Budget && m2 == Mode::Background) || (mode == m2 && key < k2),
                };
                if better {
                    best[c] = Some((key, mode));
                }
            }
        }
        // 4. Dispatch: preemptions first, then starts and idleness.
        let want: Vec<Option<JobId>> = (0..m)
            .map(|c| {
                best[c]
                    .map(|((_, i, _), _)| JobId { task: i as u32, job: tasks[i].backlog.front().expect("ready").seq })
            })
            .collect();
        for c in 0..m {
            if let Some(h_job) = scheduled[c] {
                if want[c] != Some(h_job) {
                    rec.preempt(now, c as u32, h_job)?;
                    tasks[h_job.task as usize].last_cpu = c as u32;
                    scheduled[c] = None;
                }
            }
        }
        for c in 0..m {
            served[c] = best[c].map(|((_, i, j), mode)| (i, j, mode));
            if scheduled[c].is_some() {
                continue;
            }
            match want[c] {
                Some(w) => {
                    rec.run(now, c as u32, w, tasks[w.task as usize].last_cpu)?;
                    tasks[w.task as usize].last_cpu = c as u32;
                    scheduled[c] = Some(w);
                }
                None => rec.idle(now, c as u32)?,
            }
        }
        // 5. Next instant.
        let mut t = Time::MAX;
        for i in 0..n {
            if next_rel[i] < h {
                t = t.min(next_rel[i]);
            }
            if !tasks[i].backlog.is_empty() {
                t = t.min(next_boundary(&pl.parts[i], tasks[i].base, now));
            }
        }
        // What each served CPU consumes, and until when.
        let mut source: Vec<Option<usize>> = vec![None; m]; // index into slack[c], or budget
        for c in 0..m {
            if let Some((i, j, mode)) = served[c] {
                t = t.min(now + tasks[i].backlog.front().expect("ready").rem);
                // CASH: only residual capacity with a deadline no later than the served
                // reservation's scheduling deadline may be used (Caccamo et al., RTSS 2000).
                // Background service happens only when no reservation has budget, which is
                // idle time to CASH: it burns the earliest residual capacity whatever its
                // deadline (else slack outlives it and later lets a reservation save its own
                // budget past the slack's deadline, starving a shorter window; found by the
                // spres-table1 reproduction, crates/sim/tests/spres_cash_background.rs).
                let own = best[c].map_or(0, |((we, _, _), _)| we);
                let s = slack[c]
                    .iter()
                    .enumerate()
                    .filter(|(_, &(d, _))| mode == Mode::Background || d <= own)
                    .min_by_key(|(_, &(d, _))| d)
                    .map(|(k, _)| k);
                match s {
                    Some(k) => {
                        let (d, a) = slack[c][k];
                        t = t.min(d).min(now + a);
                        source[c] = Some(k);
                    }
                    None if mode == Mode::Budget => t = t.min(now + tasks[i].left[j]),
                    None => {}
                }
            } else if sc.cash {
                // CASH: idle time consumes the earliest-deadline residual capacity (otherwise
                // slack would outlive an idle instant and overload the next busy period).
                if let Some(k) = slack[c].iter().enumerate().min_by_key(|(_, &(d, _))| d).map(|(k, _)| k) {
                    let (d, a) = slack[c][k];
                    t = t.min(d).min(now + a);
                    source[c] = Some(k);
                }
            }
        }
        if t > h {
            break;
        }
        // Advance to t.
        let dt = t - now;
        for c in 0..m {
            if let Some((i, j, mode)) = served[c] {
                tasks[i].backlog.front_mut().expect("ready").rem -= dt;
                match source[c] {
                    Some(k) => slack[c][k].1 -= dt,
                    None if mode == Mode::Budget => tasks[i].left[j] -= dt,
                    None => {}
                }
            } else if let Some(k) = source[c] {
                slack[c][k].1 -= dt;
            }
        }
        now = t;
    }
    let backlog: u64 = tasks.iter().map(|t| t.backlog.len() as u64).sum();
    let (metrics, trace) = rec.finish(ts, cfg.m, h);
    if metrics.pending != backlog {
        return Err(SimError::internal(format!(
            "SP-RES accounting mismatch: pending {backlog}, metrics {}",
            metrics.pending
        )));
    }
    Ok(SimResult::from_metrics(sched, metrics, capped, events, trace))
}
