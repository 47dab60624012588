//! The independent checker of a [`Placement`]: a separate code path from the heuristics'
//! incremental tests (it shares no demand code with `demand.rs`; demand comes from the
//! model's `Task::dbf`, bounds from exact rationals, and points are enumerated by brute force).
//!
//! A placement is accepted iff
//! 1. it is marked schedulable and its structure is valid (`Placement::validate_windows`: every task once,
//!    parts `1..=p` each once on one common period `Δ`, windows back to back from offset 0);
//! 2. per task with period ratio `k` and parts `j = 1..p` (budget `b_j`, window `[o_j, o_j + d_j)`):
//!    `k Δ <= T`, `o_p + d_p <= Δ`, `(k - 1) Δ + o_p + d_p <= min(D, T)` and `k Σ b_j >= C`:
//!    the slices of a job are released `Δ` apart from the job's release, each delivers `Σ b_j`
//!    inside its windows, and the last one ends by the job's deadline;
//! 3. per processor, the reservations as sporadic tasks `(b, d, Δ)` pass the processor demand
//!    criterion exactly: `U <= 1` (rationals) and `Σ dbf(t) <= t` at every absolute deadline `t`
//!    up to `L = min(La, hyperperiod + d_max, synchronous busy period)` (whichever exist).
//!    When more than [`BRUTE_POINTS`] deadlines lie below `L`, the points are instead walked
//!    backwards QPA-style (Zhang & Burns 2009), written here independently.

use rtsched_model::exact::{self, Rational};
use rtsched_model::placement::{Placement, Reservation};
use rtsched_model::{ModelError, Task, TaskSet, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;

/// A time in a reason line, readable and exact ([`rtsched_model::time::format_time_exact`]).
fn fe(t: impl Into<u128>) -> String {
    let t: u128 = t.into();
    u64::try_from(t).map_or_else(|_| format!("{t} ns"), rtsched_model::time::format_time_exact)
}

/// Most deadlines enumerated one by one per processor before switching to the QPA walk.
pub const BRUTE_POINTS: u64 = 2_000_000;

/// Why a placement fails [`check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckError {
    /// The placement is marked not schedulable (its reason).
    NotSchedulable(String),
    /// Its structure is invalid (m = 0, tasks missing or repeated, windows not back to back).
    Structure(ModelError),
    /// Task `task`'s slices do not serve it (`reason` names the condition violated).
    Task { task: usize, reason: String },
    /// The reservations of CPU `cpu` fail the processor demand criterion.
    Cpu { cpu: u32, reason: String },
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::NotSchedulable(why) => write!(f, "the placement is marked not schedulable: {why}"),
            CheckError::Structure(e) => e.fmt(f),
            CheckError::Task { task, reason } => write!(f, "task {task}: {reason}"),
            CheckError::Cpu { cpu, reason } => write!(f, "CPU {cpu}: {reason}"),
        }
    }
}

impl std::error::Error for CheckError {}

/// Re-verifies `p` for `ts` from scratch; `Err` says what is wrong.
pub fn check(ts: &TaskSet, p: &Placement) -> Result<(), CheckError> {
    if !p.schedulable {
        return Err(CheckError::NotSchedulable(p.reason.as_deref().unwrap_or("no reason given").to_string()));
    }
    if p.m == 0 {
        return Err(CheckError::Structure(ModelError::new("m = 0")));
    }
    p.validate_windows(ts).map_err(CheckError::Structure)?;
    // Coverage per task.
    let n = ts.len();
    let mut parts: Vec<Vec<&Reservation>> = vec![Vec::new(); n];
    for c in &p.cpus {
        for r in &c.reservations {
            parts[r.task].push(r);
        }
    }
    for tp in &p.tasks {
        let task = &ts[tp.task];
        let rs = &parts[tp.task];
        let k = tp.period_ratio as u128;
        let delta = rs[0].period as u128;
        if delta == 0 {
            return Err(CheckError::Task { task: tp.task, reason: "reservation period 0".into() });
        }
        let end = rs.iter().map(|r| r.offset as u128 + r.deadline as u128).max().unwrap_or(0);
        let budget: u128 = rs.iter().map(|r| r.budget as u128).sum();
        let i = tp.task;
        let fail = |reason: String| Err(CheckError::Task { task: i, reason });
        if k * delta > task.period as u128 {
            return fail(format!(
                "period ratio {k} times reservation period {} exceeds T = {}",
                fe(delta),
                fe(task.period as u128)
            ));
        }
        if end > delta {
            return fail(format!("windows end at {}, after the reservation period {}", fe(end), fe(delta)));
        }
        let dmin = task.deadline.min(task.period) as u128;
        if (k - 1) * delta + end > dmin {
            return fail(format!(
                "the last slice ends at {} after the release, after min(D, T) = {}",
                fe((k - 1) * delta + end),
                fe(dmin)
            ));
        }
        if k * budget < task.wcet as u128 {
            return fail(format!("{k} slices of {} cover less than C = {}", fe(budget), fe(task.wcet as u128)));
        }
        for r in rs {
            if r.budget == 0 || r.budget > r.deadline || r.deadline > r.period {
                return fail(format!("part {}: needs 1 <= budget <= deadline <= period", r.part));
            }
        }
    }
    for c in &p.cpus {
        let tasks: Vec<Task> = c
            .reservations
            .iter()
            .map(|r| Task { name: None, wcet: r.budget, deadline: r.deadline, period: r.period, segments: None })
            .collect();
        cpu_demand_ok(&tasks).map_err(|reason| CheckError::Cpu { cpu: c.cpu, reason })?;
    }
    Ok(())
}

/// Exact EDF feasibility of constrained-deadline sporadic tasks on one processor.
pub(crate) fn cpu_demand_ok(tasks: &[Task]) -> Result<(), String> {
    if tasks.is_empty() {
        return Ok(());
    }
    let u: Rational = tasks.iter().fold(exact::zero(), |a, t| a + t.utilization());
    if u > exact::one() {
        return Err(format!("utilization {u} exceeds 1"));
    }
    if tasks.iter().all(|t| t.deadline == t.period) {
        return Ok(());
    }
    let dmax = tasks.iter().map(|t| t.deadline).max().unwrap_or(0) as u128;
    let mut bounds: Vec<u128> = Vec::new();
    if u < exact::one() {
        let num =
            tasks.iter().fold(exact::zero(), |a, t| a + exact::int((t.period - t.deadline) as i128) * t.utilization());
        let la = exact::ceil_u128(&(num / (exact::one() - u.clone())));
        bounds.push(la.max(dmax));
    }
    let mut h: u128 = 1;
    for t in tasks {
        // lcm without overflow: h <= 2^80 and periods <= 2^53 can exceed u128 when multiplied.
        let p = t.period as u128;
        match (h / num_integer::gcd(h, p)).checked_mul(p) {
            Some(x) if x <= 1u128 << 80 => h = x,
            _ => {
                h = u128::MAX;
                break;
            }
        }
    }
    if h <= 1u128 << 80 {
        bounds.push(h + dmax);
    }
    let mut w: u128 = tasks.iter().map(|t| t.wcet as u128).sum();
    for _ in 0..100_000 {
        let next: u128 = tasks.iter().map(|t| w.div_ceil(t.period as u128) * t.wcet as u128).sum();
        if next == w {
            bounds.push(w.max(1));
            break;
        }
        w = next;
    }
    let Some(&l) = bounds.iter().min() else {
        return Err("could not bound the analysis interval".into());
    };
    if l > Time::MAX as u128 {
        return Err(format!("analysis interval {} too long to verify", fe(l)));
    }
    let l = l as Time;
    let points: u128 =
        tasks.iter().map(|t| if t.deadline <= l { ((l - t.deadline) / t.period) as u128 + 1 } else { 0 }).sum();
    if points <= BRUTE_POINTS as u128 {
        brute(tasks, l)
    } else {
        walk(tasks, l)
    }
}

fn brute(tasks: &[Task], l: Time) -> Result<(), String> {
    // Min-heap of (next absolute deadline, task); cumulative demand as deadlines pass.
    let mut heap: BinaryHeap<Reverse<(Time, usize)>> =
        tasks.iter().enumerate().filter(|(_, t)| t.deadline <= l).map(|(i, t)| Reverse((t.deadline, i))).collect();
    let mut demand: u128 = 0;
    while let Some(Reverse((at, i))) = heap.pop() {
        demand += tasks[i].wcet as u128;
        if let Some(next) = at.checked_add(tasks[i].period) {
            if next <= l {
                heap.push(Reverse((next, i)));
            }
        }
        if heap.peek().is_some_and(|Reverse((nx, _))| *nx == at) {
            continue; // more deadlines at the same instant
        }
        if demand > at as u128 {
            return Err(format!("demand {} exceeds the interval length at t = {}", fe(demand), fe(at)));
        }
    }
    Ok(())
}

fn walk(tasks: &[Task], l: Time) -> Result<(), String> {
    let demand = |at: Time| -> u128 { tasks.iter().map(|t| t.dbf(at)).sum() };
    let prev_deadline = |before: Time| -> Option<Time> {
        let mut best: Option<Time> = None;
        for t in tasks {
            if t.deadline < before {
                let d = t.deadline + (before - 1 - t.deadline) / t.period * t.period;
                best = Some(best.map_or(d, |b: Time| b.max(d)));
            }
        }
        best
    };
    let first = tasks.iter().map(|t| t.deadline).min().unwrap_or(0) as u128;
    let mut at = match prev_deadline(l.saturating_add(1)) {
        Some(x) => x,
        None => return Ok(()),
    };
    for _ in 0..50_000_000u64 {
        let h = demand(at);
        if h > at as u128 {
            return Err(format!("demand {} exceeds the interval length at t = {}", fe(h), fe(at)));
        }
        if h <= first {
            return Ok(());
        }
        at = if h < at as u128 {
            h as Time
        } else {
            match prev_deadline(at) {
                Some(x) => x,
                None => return Ok(()),
            }
        };
    }
    Err("demand walk did not finish".into())
}
