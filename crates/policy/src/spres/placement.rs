//! The placement SP-RES executes (Brandenburg & Gül, "Global Scheduling Not Required", RTSS
//! 2016, §III-A and §IV-A) — in the simulator and on real threads alike: its reservations per
//! task in window order, parsed from and validated against the placement JSON that
//! `rtsched-analysis`' placement heuristics write (`rtsched partition --json`).
//!
//! Placement JSON: `{"m", "schedulable", "heuristic", "cpus": [{"cpu", "reservations":
//! [{"task", "budget", "period", "deadline", "offset", "part", "parts"}]}], "tasks": [{"task",
//! "period_ratio", "parts"}], "reason"?, "overheads"?}` — `part` is 1-based, `period =
//! ⌊T / period_ratio⌋`; a placement made with overheads (`rtsched partition --overheads`) says
//! so in `"overheads"` (`{"model", "mechanism", "stat", ...}`) and its periods may be shorter
//! (`⌊T′ / period_ratio⌋` for the inflated period `T′ ≤ T`).

use rtsched_model::{ModelError, TaskSet, Time};
use serde_json::{Map, Value};

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
    /// The overhead model the budgets were inflated with (the placement JSON's `"overheads"`
    /// object's `"model"`), or `None` for a placement made without overheads.
    pub overheads: Option<String>,
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
    /// A plain partition as a placement: task `t` of `partition[c]` is one whole reservation
    /// on CPU `c` (budget C, replenishment period T, deadline D, offset 0). `None` if the
    /// partition does not place every task of `ts` exactly once.
    pub fn whole(ts: &TaskSet, partition: &[Vec<usize>]) -> Option<SpresPlacement> {
        let mut parts: Vec<Vec<Reservation>> = vec![Vec::new(); ts.len()];
        for (c, tasks) in partition.iter().enumerate() {
            for &t in tasks {
                let task = ts.tasks().get(t)?;
                if !parts[t].is_empty() {
                    return None;
                }
                parts[t].push(Reservation {
                    cpu: c as u32,
                    task: t,
                    budget: task.wcet,
                    period: task.period,
                    deadline: task.deadline.min(task.period),
                    offset: 0,
                    part: 1,
                    parts: 1,
                });
            }
        }
        if parts.iter().any(Vec::is_empty) {
            return None;
        }
        Some(SpresPlacement { m: partition.len() as u32, heuristic: "partition".into(), parts, overheads: None })
    }

    /// Parses and validates a placement for `ts`: known CPUs and tasks, `1 ≤ budget ≤
    /// deadline`, `offset + deadline ≤ period ≤ T`, `period = ⌊T / period_ratio⌋`, every part
    /// present once, windows back to back from offset 0, every task placed, and the parts of a
    /// split or period-transformed task summing to at least its WCET (`⌈C / period_ratio⌉` per
    /// reservation period).
    /// Duplicate keys are errors (the strict reader, `rtsched_model::json`), and `m` is bounded
    /// (`MAX_M`) before anything is allocated per CPU.
    pub fn from_json(text: &str, ts: &TaskSet) -> Result<SpresPlacement, ModelError> {
        let v: Value = rtsched_model::json::parse(text).map_err(|mut e| {
            e.reason = format!("placement: {}", e.reason);
            e
        })?;
        let top = obj(&v, "placement", &["m", "schedulable", "heuristic", "cpus", "tasks", "reason", "overheads"])?;
        let overheads = match top.get("overheads") {
            None | Some(Value::Null) => None,
            Some(o) => {
                let o = o.as_object().ok_or_else(|| ModelError::field("overheads", "must be a JSON object"))?;
                let model = o.get("model").and_then(Value::as_str).ok_or_else(|| {
                    ModelError::field("overheads", "the \"model\" the budgets were inflated with is missing")
                })?;
                Some(model.to_owned())
            }
        };
        let m = rtsched_model::check_m(uint(top, "m", "placement")?)? as u64;
        let heuristic = top.get("heuristic").and_then(Value::as_str).unwrap_or("").to_owned();
        if top.get("schedulable").and_then(Value::as_bool) != Some(true) {
            let why = top.get("reason").and_then(Value::as_str).unwrap_or("no reason given");
            return Err(ModelError::field(
                "schedulable",
                format!("the placement is not schedulable ({why}); nothing to run"),
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
            // Inflated with overheads: the period of the inflated task (T − Δev), never longer.
            let bad_period = if overheads.is_some() { period > ts[i].period / k } else { period != ts[i].period / k };
            if bad_period {
                return Err(ModelError::task_field(
                    i,
                    "period",
                    format!(
                        "reservation period {period} is not {}⌊T / period_ratio⌋ = {}",
                        if overheads.is_some() { "at most " } else { "" },
                        ts[i].period / k
                    ),
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
            // A split (or period-transformed) task's parts deliver at least its WCET: ⌈C / k⌉
            // per reservation period, k periods per job. (More is allowed: a placement made for
            // padded WCETs, as the runtime's tests use. An unsplit reservation may have any
            // budget: budget enforcement is what some experiments study.)
            let sum: u128 = ps.iter().map(|r| r.budget as u128).sum();
            let need = (ts[i].wcet as u128).div_ceil(k as u128);
            if (ps.len() > 1 || k > 1) && sum < need {
                return Err(ModelError::task_field(
                    i,
                    "budget",
                    format!(
                        "the budgets of its {} part(s) sum to {sum} ns, but the task needs at least {need} ns per reservation period (C = {} ns, period_ratio {k})",
                        ps.len(),
                        ts[i].wcet
                    ),
                ));
            }
        }
        Ok(SpresPlacement { m: m as u32, heuristic, parts, overheads })
    }
}
