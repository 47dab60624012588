//! The placement: reservations per processor, and its JSON form (docs/spres.md, "Format").

use super::engine::State;
use super::{SemiConfig, SliceOrder};
use rtsched_model::time::parse_duration;
use rtsched_model::{ModelError, TaskSet, Time};
use serde_json::{json, Map, Value};

/// One polling reservation on one processor: part `part` of `parts` of task `task`.
///
/// Per replenishment period of length `period` (`= floor(T/k)`, see [`TaskPlacement`]), the
/// reservation is activated `offset` ns after the period starts (for `k = 1`: after the job's
/// release) with `budget` ns and scheduling deadline `offset + deadline`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    pub task: usize,
    pub budget: Time,
    pub period: Time,
    pub deadline: Time,
    pub offset: Time,
    pub part: u32,
    pub parts: u32,
}

/// The reservations of one processor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuPlacement {
    pub cpu: u32,
    pub reservations: Vec<Reservation>,
}

/// Per task: its period ratio `k` and the number of parts it was split into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskPlacement {
    pub task: usize,
    pub period_ratio: u64,
    pub parts: u32,
}

/// The result of a placement heuristic (or of the cascade).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub m: u32,
    pub schedulable: bool,
    /// The heuristic that produced it (the cascade: the one that succeeded, or the last tried).
    pub heuristic: String,
    /// One entry per processor `0..m` when schedulable; empty otherwise.
    pub cpus: Vec<CpuPlacement>,
    /// One entry per task, by index, when schedulable; empty otherwise.
    pub tasks: Vec<TaskPlacement>,
    /// Why nothing was placed (only when not schedulable).
    pub reason: Option<String>,
}

impl Placement {
    pub(crate) fn failed(m: u32, heuristic: String, reason: String) -> Placement {
        Placement { m, schedulable: false, heuristic, cpus: Vec::new(), tasks: Vec::new(), reason: Some(reason) }
    }

    /// Builds the reservations from a successful heuristic state. With
    /// `cfg.merge_same_core`, the pieces of a task on one processor first become one piece
    /// (budgets and deadlines added). The windows are then laid out back to back from offset
    /// 0 in `cfg.slice_order`: the flipped C=D order of §IV-A (the piece placed whole, the one
    /// with laxity, first; then the zero-laxity chunks in reverse order of their creation), or
    /// by deadline, longest first (ties: processor index, then creation order).
    pub(crate) fn from_state(m: u32, heuristic: String, st: &State, cfg: &SemiConfig) -> Placement {
        let mut cpus: Vec<CpuPlacement> = (0..m).map(|cpu| CpuPlacement { cpu, reservations: Vec::new() }).collect();
        let mut tasks = Vec::with_capacity(st.pieces.len());
        for (task, pieces) in st.pieces.iter().enumerate() {
            let spec = st.specs[task];
            if let [p] = pieces.as_slice() {
                // One piece: nothing to merge or order.
                let r = Reservation { task, budget: p.c, period: spec.t, deadline: p.d, offset: 0, part: 1, parts: 1 };
                cpus[p.cpu].reservations.push(r);
                tasks.push(TaskPlacement { task, period_ratio: spec.k, parts: 1 });
                continue;
            }
            // (cpu, budget, deadline, creation index)
            let mut ps: Vec<(usize, Time, Time, usize)> =
                pieces.iter().enumerate().map(|(i, p)| (p.cpu, p.c, p.d, i)).collect();
            if cfg.merge_same_core && ps.len() > 1 {
                let mut merged: Vec<(usize, Time, Time, usize)> = Vec::with_capacity(ps.len());
                for p in ps {
                    match merged.iter_mut().find(|q| q.0 == p.0) {
                        Some(q) => {
                            q.1 += p.1;
                            q.2 += p.2;
                            q.3 = q.3.max(p.3);
                        }
                        None => merged.push(p),
                    }
                }
                ps = merged;
            }
            match cfg.slice_order {
                SliceOrder::Flipped => ps.sort_by_key(|p| std::cmp::Reverse(p.3)),
                SliceOrder::DeadlineDesc => ps.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)).then(a.3.cmp(&b.3))),
            }
            let parts = ps.len() as u32;
            let mut offset = 0;
            for (idx, &(cpu, budget, deadline, _)) in ps.iter().enumerate() {
                cpus[cpu].reservations.push(Reservation {
                    task,
                    budget,
                    period: spec.t,
                    deadline,
                    offset,
                    part: idx as u32 + 1,
                    parts,
                });
                offset += deadline;
            }
            tasks.push(TaskPlacement { task, period_ratio: spec.k, parts });
        }
        for c in &mut cpus {
            c.reservations.sort_by_key(|r| (r.task, r.part));
        }
        Placement { m, schedulable: true, heuristic, cpus, tasks, reason: None }
    }

    /// The JSON form documented in docs/spres.md.
    pub fn to_json(&self) -> Value {
        let cpus: Vec<Value> = self
            .cpus
            .iter()
            .map(|c| {
                let rs: Vec<Value> = c
                    .reservations
                    .iter()
                    .map(|r| {
                        json!({"task": r.task, "budget": r.budget, "period": r.period, "deadline": r.deadline,
                               "offset": r.offset, "part": r.part, "parts": r.parts})
                    })
                    .collect();
                json!({"cpu": c.cpu, "reservations": rs})
            })
            .collect();
        let tasks: Vec<Value> = self
            .tasks
            .iter()
            .map(|t| json!({"task": t.task, "period_ratio": t.period_ratio, "parts": t.parts}))
            .collect();
        let mut v = json!({"m": self.m, "schedulable": self.schedulable, "heuristic": self.heuristic,
                           "cpus": cpus, "tasks": tasks});
        if let Some(r) = &self.reason {
            v["reason"] = Value::String(r.clone());
        }
        v
    }

    /// Parses and validates a placement for `ts`. Times are integer ns or duration strings
    /// ("2ms"). Unknown keys, unknown tasks, budgets above deadlines, deadlines above periods,
    /// windows that leave the period, overlap or leave gaps, missing or duplicate parts, and
    /// tasks listed twice are errors naming the processor, task and field. It does *not* run
    /// the demand test: [`super::check`] does.
    pub fn from_json(v: &Value, ts: &TaskSet) -> Result<Placement, ModelError> {
        let top = obj(v, "placement", &["m", "schedulable", "heuristic", "cpus", "tasks", "reason"])?;
        let m = uint(get(top, "m", "placement")?, "m")?;
        if m == 0 || m > u32::MAX as u64 {
            return Err(ModelError::field("m", format!("must be between 1 and {}, got {m}", u32::MAX)));
        }
        let m = m as u32;
        let schedulable = get(top, "schedulable", "placement")?
            .as_bool()
            .ok_or_else(|| ModelError::field("schedulable", "must be true or false"))?;
        let heuristic = get(top, "heuristic", "placement")?
            .as_str()
            .ok_or_else(|| ModelError::field("heuristic", "must be a string"))?
            .to_owned();
        let reason = match top.get("reason") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(ModelError::field("reason", "must be a string")),
        };
        let arr = |key: &str| -> Result<&Vec<Value>, ModelError> {
            get(top, key, "placement")?.as_array().ok_or_else(|| ModelError::field(key, "must be an array"))
        };
        let n = ts.len();
        let mut cpus = Vec::new();
        let mut seen_cpu = vec![false; m as usize];
        for (ci, cv) in arr("cpus")?.iter().enumerate() {
            let what = format!("cpus[{ci}]");
            let co = obj(cv, &what, &["cpu", "reservations"])?;
            let cpu = uint(get(co, "cpu", &what)?, "cpu").map_err(|e| ctx(e, &what))?;
            if cpu >= m as u64 {
                return Err(ModelError::field("cpu", format!("{what}: CPU {cpu} does not exist on {m} processors")));
            }
            if std::mem::replace(&mut seen_cpu[cpu as usize], true) {
                return Err(ModelError::field("cpu", format!("{what}: CPU {cpu} is listed twice")));
            }
            let rsv = get(co, "reservations", &what)?
                .as_array()
                .ok_or_else(|| ModelError::field("reservations", format!("{what}: must be an array")))?;
            let mut reservations = Vec::new();
            for (ri, rv) in rsv.iter().enumerate() {
                let w = format!("CPU {cpu} reservation {ri}");
                let ro = obj(rv, &w, &["task", "budget", "period", "deadline", "offset", "part", "parts"])?;
                let task = uint(get(ro, "task", &w)?, "task").map_err(|e| ctx(e, &w))?;
                if task >= n as u64 {
                    return Err(ModelError::field(
                        "task",
                        format!("{w}: unknown task {task} (the task set has {n} tasks)"),
                    ));
                }
                let task = task as usize;
                let terr = |field: &str, msg: String| ModelError::task_field(task, field, format!("{w}: {msg}"));
                let time = |key: &str| -> Result<Time, ModelError> { dur(get(ro, key, &w)?).map_err(|e| terr(key, e)) };
                let (budget, period, deadline, offset) =
                    (time("budget")?, time("period")?, time("deadline")?, time("offset")?);
                let part = uint(get(ro, "part", &w)?, "part").map_err(|e| ctx(e, &w).in_task(task, None))?;
                let parts = uint(get(ro, "parts", &w)?, "parts").map_err(|e| ctx(e, &w).in_task(task, None))?;
                if budget == 0 || period == 0 || deadline == 0 {
                    return Err(terr("budget", "budget, period and deadline must be at least 1 ns".into()));
                }
                if budget > period {
                    return Err(terr("budget", format!("budget {budget} ns exceeds the period {period} ns")));
                }
                if budget > deadline {
                    return Err(terr("budget", format!("budget {budget} ns exceeds the deadline {deadline} ns")));
                }
                if deadline > period {
                    return Err(terr("deadline", format!("deadline {deadline} ns exceeds the period {period} ns")));
                }
                if offset.checked_add(deadline).is_none_or(|e| e > period) {
                    return Err(terr(
                        "offset",
                        format!("window [{offset}, {offset}+{deadline}) leaves the period {period} ns"),
                    ));
                }
                if parts == 0 || parts > u32::MAX as u64 || part == 0 || part > parts {
                    return Err(terr("part", format!("part {part} of {parts} is not in 1..=parts")));
                }
                reservations.push(Reservation {
                    task,
                    budget,
                    period,
                    deadline,
                    offset,
                    part: part as u32,
                    parts: parts as u32,
                });
            }
            cpus.push(CpuPlacement { cpu: cpu as u32, reservations });
        }
        cpus.sort_by_key(|c| c.cpu);
        let mut tasks = Vec::new();
        let mut seen_task: Vec<Option<(u64, u32)>> = vec![None; n];
        for (ti, tv) in arr("tasks")?.iter().enumerate() {
            let w = format!("tasks[{ti}]");
            let to = obj(tv, &w, &["task", "period_ratio", "parts"])?;
            let task = uint(get(to, "task", &w)?, "task").map_err(|e| ctx(e, &w))?;
            if task >= n as u64 {
                return Err(ModelError::field(
                    "task",
                    format!("{w}: unknown task {task} (the task set has {n} tasks)"),
                ));
            }
            let task = task as usize;
            let k = uint(get(to, "period_ratio", &w)?, "period_ratio").map_err(|e| ctx(e, &w).in_task(task, None))?;
            let parts = uint(get(to, "parts", &w)?, "parts").map_err(|e| ctx(e, &w).in_task(task, None))?;
            if k == 0 {
                return Err(ModelError::task_field(task, "period_ratio", "must be at least 1"));
            }
            if parts == 0 || parts > u32::MAX as u64 {
                return Err(ModelError::task_field(task, "parts", "must be at least 1"));
            }
            if seen_task[task].replace((k, parts as u32)).is_some() {
                return Err(ModelError::task_field(task, "task", format!("{w}: task listed twice")));
            }
            tasks.push(TaskPlacement { task, period_ratio: k, parts: parts as u32 });
        }
        tasks.sort_by_key(|t| t.task);
        let p = Placement { m, schedulable, heuristic, cpus, tasks, reason };
        if schedulable {
            validate_windows(ts, &p)?;
        }
        Ok(p)
    }

    /// Per processor `0..m`: an upper bound on context switches per second, two per activation
    /// of each (sub)reservation (seed 004 §VI): `sum 2 / period` with the period in seconds.
    pub fn switch_rate_bound(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.m as usize];
        for c in &self.cpus {
            if let Some(slot) = out.get_mut(c.cpu as usize) {
                *slot = c.reservations.iter().map(|r| 2e9 / r.period as f64).sum();
            }
        }
        out
    }
}

/// Structure shared by `from_json` and the checker: every task listed in `tasks` once; its
/// reservations are exactly parts `1..=parts`, share one period, and their windows are back to
/// back from offset 0 (`offset_1 = 0`, `offset_{j+1} = offset_j + deadline_j`).
pub(crate) fn validate_windows(ts: &TaskSet, p: &Placement) -> Result<(), ModelError> {
    let n = ts.len();
    let mut info: Vec<Option<&TaskPlacement>> = vec![None; n];
    for t in &p.tasks {
        if t.task >= n {
            return Err(ModelError::field("task", format!("unknown task {}", t.task)));
        }
        if info[t.task].replace(t).is_some() {
            return Err(ModelError::task_field(t.task, "task", "listed twice in 'tasks'"));
        }
    }
    let mut by_task: Vec<Vec<(u32, &Reservation)>> = vec![Vec::new(); n];
    for c in &p.cpus {
        if c.cpu >= p.m {
            return Err(ModelError::field("cpu", format!("CPU {} does not exist on {} processors", c.cpu, p.m)));
        }
        for r in &c.reservations {
            if r.task >= n {
                return Err(ModelError::field("task", format!("CPU {}: unknown task {}", c.cpu, r.task)));
            }
            by_task[r.task].push((c.cpu, r));
        }
    }
    for (task, rs) in by_task.iter_mut().enumerate() {
        let Some(ti) = info[task] else {
            return Err(ModelError::task_field(task, "task", "missing from 'tasks'"));
        };
        if ti.parts == 0 || ti.period_ratio == 0 {
            return Err(ModelError::task_field(task, "parts", "parts and period_ratio must be at least 1"));
        }
        if rs.len() != ti.parts as usize {
            return Err(ModelError::task_field(
                task,
                "parts",
                format!("'tasks' says {} parts but {} reservations serve it", ti.parts, rs.len()),
            ));
        }
        rs.sort_by_key(|(_, r)| r.part);
        let mut end: Time = 0;
        for (j, (cpu, r)) in rs.iter().enumerate() {
            if r.part as usize != j + 1 || r.parts != ti.parts {
                return Err(ModelError::task_field(
                    task,
                    "part",
                    format!("CPU {cpu}: part {} of {} (expected parts 1..={} once each)", r.part, r.parts, ti.parts),
                ));
            }
            if r.period != rs[0].1.period {
                return Err(ModelError::task_field(
                    task,
                    "period",
                    format!(
                        "CPU {cpu}: part {} has period {} ns but part 1 has {} ns",
                        r.part, r.period, rs[0].1.period
                    ),
                ));
            }
            if r.offset < end {
                return Err(ModelError::task_field(task, "offset", format!("CPU {cpu}: the window of part {} starts at {} ns and overlaps the previous part's window ending at {end} ns", r.part, r.offset)));
            }
            if r.offset > end {
                return Err(ModelError::task_field(
                    task,
                    "offset",
                    format!(
                        "CPU {cpu}: gap before part {}: it starts at {} ns, the previous window ends at {end} ns",
                        r.part, r.offset
                    ),
                ));
            }
            end = r.offset.saturating_add(r.deadline);
        }
    }
    Ok(())
}

fn ctx(e: ModelError, what: &str) -> ModelError {
    ModelError { reason: format!("{what}: {}", e.reason), ..e }
}

fn obj<'a>(v: &'a Value, what: &str, keys: &[&str]) -> Result<&'a Map<String, Value>, ModelError> {
    let o = v.as_object().ok_or_else(|| ModelError::new(format!("{what}: expected a JSON object")))?;
    if let Some(k) = o.keys().find(|k| !keys.contains(&k.as_str())) {
        return Err(ModelError::field(k.clone(), format!("{what}: unknown key (known: {})", keys.join(", "))));
    }
    Ok(o)
}

fn get<'a>(o: &'a Map<String, Value>, key: &str, what: &str) -> Result<&'a Value, ModelError> {
    o.get(key).ok_or_else(|| ModelError::field(key, format!("{what}: missing")))
}

fn uint(v: &Value, field: &str) -> Result<u64, ModelError> {
    v.as_u64().ok_or_else(|| ModelError::field(field, format!("must be a non-negative integer, got {v}")))
}

fn dur(v: &Value) -> Result<Time, String> {
    match v {
        Value::Number(x) => x.as_u64().ok_or_else(|| format!("must be a non-negative integer number of ns, got {x}")),
        Value::String(s) => parse_duration(s).map_err(|e| e.reason),
        other => Err(format!("must be integer ns or a duration string, got {other}")),
    }
}
