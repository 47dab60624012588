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
//! Placement JSON (written by `rtsched-analysis`' placement heuristics):
//! `{"m", "schedulable", "heuristic", "cpus": [{"cpu", "reservations": [{"task", "budget",
//! "period", "deadline", "offset", "part", "parts"}]}], "tasks": [{"task", "period_ratio",
//! "parts"}], "reason"?}` — `part` is 1-based, `period = ⌊T / period_ratio⌋`.

use crate::engine::{setup, Draw, Setup, SimConfig, SimResult, NONE};
use crate::Scheduler;
use rtsched_model::{ModelError, TaskSet, Time};
use rtsched_trace::{Event, JobId, MetricsBuilder, Record, Trace, TraceMeta};
use serde_json::{Map, Value};
use std::collections::VecDeque;

/// One reservation of the placement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    pub cpu: u32,
    pub task: usize,
    pub budget: Time,
    pub period: Time,
    pub deadline: Time,
    pub offset: Time,
    /// 1-based.
    pub part: u32,
    pub parts: u32,
}

/// A validated placement: per task, its parts in window order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpresPlacement {
    pub m: u32,
    pub heuristic: String,
    /// `parts[task]` = the task's reservations ordered by part.
    pub parts: Vec<Vec<Reservation>>,
}

/// SP-RES parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpresConfig {
    pub placement: SpresPlacement,
    /// Unsplit tasks get soft reservations too (split tasks always do).
    pub soft_unsplit: bool,
    /// CASH slack reclamation on.
    pub cash: bool,
}

fn obj<'a>(v: &'a Value, what: &str, keys: &[&str]) -> Result<&'a Map<String, Value>, ModelError> {
    let o = v.as_object().ok_or_else(|| ModelError::field(what, "must be a JSON object"))?;
    for k in o.keys() {
        if !keys.contains(&k.as_str()) {
            return Err(ModelError::field(k.as_str(), format!("unknown key in {what}")));
        }
    }
    Ok(o)
}

fn uint(o: &Map<String, Value>, key: &str, what: &str) -> Result<u64, ModelError> {
    match o.get(key) {
        Some(Value::Number(n)) => {
            n.as_u64().ok_or_else(|| ModelError::field(key, format!("in {what}: must be a non-negative integer")))
        }
        Some(Value::String(s)) => rtsched_model::time::parse_duration(s)
            .map_err(|e| ModelError::field(key, format!("in {what}: {}", e.reason))),
        Some(_) => Err(ModelError::field(key, format!("in {what}: must be a non-negative integer"))),
        None => Err(ModelError::field(key, format!("missing in {what}"))),
    }
}

impl SpresPlacement {
    /// Parses and validates a placement for `ts`: known CPUs and tasks, `1 ≤ budget ≤
    /// deadline`, `offset + deadline ≤ period ≤ T`, `period = ⌊T / period_ratio⌋`, every part
    /// present once, windows back to back from offset 0, every task placed.
    pub fn from_json(text: &str, ts: &TaskSet) -> Result<SpresPlacement, ModelError> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| ModelError::new(format!("placement: invalid JSON: {e}")))?;
        let top = obj(&v, "placement", &["m", "schedulable", "heuristic", "cpus", "tasks", "reason"])?;
        let m = uint(top, "m", "placement")?;
        if m == 0 || m > u32::MAX as u64 {
            return Err(ModelError::field("m", "must be at least 1"));
        }
        let heuristic = top.get("heuristic").and_then(Value::as_str).unwrap_or("").to_owned();
        if top.get("schedulable").and_then(Value::as_bool) != Some(true) {
            let why = top.get("reason").and_then(Value::as_str).unwrap_or("no reason given");
            return Err(ModelError::field(
                "schedulable",
                format!("the placement is not schedulable ({why}); nothing to simulate"),
            ));
        }
        let n = ts.len();
        let mut parts: Vec<Vec<Reservation>> = vec![Vec::new(); n];
        let cpus = top
            .get("cpus")
            .and_then(Value::as_array)
            .ok_or_else(|| ModelError::field("cpus", "missing or not an array"))?;
        let mut seen = vec![false; m as usize];
        for cv in cpus {
            let c = obj(cv, "cpu entry", &["cpu", "reservations"])?;
            let cpu = uint(c, "cpu", "cpu entry")?;
            if cpu >= m || std::mem::replace(&mut seen[cpu as usize], true) {
                return Err(ModelError::field("cpu", format!("cpu {cpu} is out of range (m = {m}) or listed twice")));
            }
            let rs = c
                .get("reservations")
                .and_then(Value::as_array)
                .ok_or_else(|| ModelError::field("reservations", format!("cpu {cpu}: missing or not an array")))?;
            for rv in rs {
                let what = format!("a reservation of cpu {cpu}");
                let r = obj(rv, &what, &["task", "budget", "period", "deadline", "offset", "part", "parts"])?;
                let task = uint(r, "task", &what)? as usize;
                if task >= n {
                    return Err(ModelError::field(
                        "task",
                        format!("{what} names task {task}, but there are {n} tasks"),
                    ));
                }
                let res = Reservation {
                    cpu: cpu as u32,
                    task,
                    budget: uint(r, "budget", &what)?,
                    period: uint(r, "period", &what)?,
                    deadline: uint(r, "deadline", &what)?,
                    offset: uint(r, "offset", &what)?,
                    part: u32::try_from(uint(r, "part", &what)?).unwrap_or(0),
                    parts: u32::try_from(uint(r, "parts", &what)?).unwrap_or(0),
                };
                let bad = |field: &str, why: String| {
                    Err(ModelError::task_field(task, field, format!("cpu {cpu}, part {}: {why}", res.part)))
                };
                if res.budget == 0 || res.budget > res.deadline {
                    return bad("budget", format!("must be in 1..=deadline ({}), got {}", res.deadline, res.budget));
                }
                if res.budget > res.period {
                    return bad("budget", format!("exceeds the period {}", res.period));
                }
                if res.offset.checked_add(res.deadline).is_none_or(|e| e > res.period) {
                    return bad(
                        "deadline",
                        format!(
                            "window [offset {}, + deadline {}) leaves the period {}",
                            res.offset, res.deadline, res.period
                        ),
                    );
                }
                if res.period > ts[task].period {
                    return bad("period", format!("exceeds the task's period {}", ts[task].period));
                }
                if res.parts == 0 || res.part == 0 || res.part > res.parts {
                    return bad("part", format!("part {} of {} is not valid (parts are 1-based)", res.part, res.parts));
                }
                parts[task].push(res);
            }
        }
        let tasks = top
            .get("tasks")
            .and_then(Value::as_array)
            .ok_or_else(|| ModelError::field("tasks", "missing or not an array"))?;
        let mut ratio = vec![0u64; n];
        for tv in tasks {
            let t = obj(tv, "task entry", &["task", "period_ratio", "parts"])?;
            let task = uint(t, "task", "task entry")? as usize;
            if task >= n || ratio[task] != 0 {
                return Err(ModelError::field("task", format!("task entry {task} is unknown or listed twice")));
            }
            let k = uint(t, "period_ratio", "task entry")?;
            if k == 0 {
                return Err(ModelError::task_field(task, "period_ratio", "must be at least 1"));
            }
            ratio[task] = k;
            let p = uint(t, "parts", "task entry")?;
            if p != parts[task].len() as u64 {
                return Err(ModelError::task_field(
                    task,
                    "parts",
                    format!("says {p} parts but {} reservations are placed", parts[task].len()),
                ));
            }
        }
        for (i, ps) in parts.iter_mut().enumerate() {
            if ps.is_empty() {
                return Err(ModelError::task_field(i, "placement", "task has no reservation"));
            }
            ps.sort_by_key(|r| r.part);
            let period = ps[0].period;
            let k = if ratio[i] == 0 { 1 } else { ratio[i] };
            if period != ts[i].period / k {
                return Err(ModelError::task_field(
                    i,
                    "period",
                    format!("reservation period {period} is not ⌊T / period_ratio⌋ = {}", ts[i].period / k),
                ));
            }
            let mut expect_offset = 0;
            for (j, r) in ps.iter().enumerate() {
                if r.part != j as u32 + 1 || r.parts != ps.len() as u32 || r.period != period {
                    return Err(ModelError::task_field(
                        i,
                        "part",
                        format!(
                            "parts must be 1..={} exactly once with one period, found part {} of {}",
                            ps.len(),
                            r.part,
                            r.parts
                        ),
                    ));
                }
                if r.offset != expect_offset {
                    return Err(ModelError::task_field(i, "offset", format!("part {} starts at {} but the previous window ends at {expect_offset} (windows are back to back)", r.part, r.offset)));
                }
                expect_offset += r.deadline;
            }
        }
        Ok(SpresPlacement { m: m as u32, heuristic, parts })
    }
}

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
pub(crate) fn simulate_spres(
    ts: &TaskSet,
    sched: &Scheduler,
    sc: &SpresConfig,
    cfg: &SimConfig,
) -> Result<SimResult, ModelError> {
    let Setup { offsets, horizon: h, capped, expected } = setup(ts, cfg)?;
    let pl = &sc.placement;
    if pl.m != cfg.m {
        return Err(ModelError::field(
            "m",
            format!("the placement is for m = {} but the simulation has m = {}", pl.m, cfg.m),
        ));
    }
    if pl.parts.len() != ts.len() {
        return Err(ModelError::field(
            "placement",
            format!("the placement has {} tasks, the task set {}", pl.parts.len(), ts.len()),
        ));
    }
    let (m, n) = (cfg.m as usize, ts.len());
    let mut draw = Draw::new(cfg);
    let mut b = MetricsBuilder::new(n, cfg.m, h);
    b.reserve_jobs(expected as usize);
    let mut records: Option<Vec<Record>> = cfg.record_trace.then(Vec::new);
    let mut emit = |b: &mut MetricsBuilder, time: Time, event: Event| -> Result<(), ModelError> {
        let r = Record { time, event };
        b.push(&r).map_err(|e| {
            ModelError::new(format!("internal error: SP-RES emitted an inconsistent record at {time} ns: {e}"))
        })?;
        if let Some(v) = &mut records {
            v.push(r);
        }
        Ok(())
    };
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
    let mut idle_announced = vec![true; m];
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
                    emit(&mut b, now, Event::Complete { cpu: c as u32, job: JobId { task: i as u32, job: f.seq } })?;
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
                    emit(
                        &mut b,
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
                    emit(&mut b, now, Event::Preempt { cpu: c as u32, job: h_job })?;
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
                    let last = tasks[w.task as usize].last_cpu;
                    if last != NONE && last != c as u32 {
                        emit(&mut b, now, Event::Migration { job: w, from: last, to: c as u32 })?;
                    }
                    emit(&mut b, now, Event::Run { cpu: c as u32, job: w })?;
                    tasks[w.task as usize].last_cpu = c as u32;
                    scheduled[c] = Some(w);
                    idle_announced[c] = false;
                }
                None if !idle_announced[c] => {
                    emit(&mut b, now, Event::Idle { cpu: c as u32 })?;
                    idle_announced[c] = true;
                }
                None => {}
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
    let metrics = b.finish();
    if metrics.pending != backlog {
        return Err(ModelError::new(format!(
            "internal error: SP-RES accounting mismatch: pending {backlog}, metrics {}",
            metrics.pending
        )));
    }
    let trace = records.map(|records| Trace { meta: TraceMeta::new(ts, cfg.m, h), records });
    Ok(SimResult::from_metrics(sched, metrics, capped, events, trace))
}
