//! The placement: which CPU serves which task, as per-CPU reservations — defined once here and
//! consumed by every engine: the placement heuristics of `rtsched-analysis` write it, the
//! SP-RES rules of `rtsched-policy` execute it in the simulator and on real threads, and a plain
//! partition (P-EDF, P-FP) is the placement whose every task is one whole reservation.
//!
//! A reservation is a polling reservation in the sense of Brandenburg & Gül, "Global Scheduling
//! Not Required", RTSS 2016 (§III-A, §IV-A): per replenishment period `Δ = ⌊T / k⌋` of its task
//! (`k` the task's period ratio) it is active in the window `[offset, offset + deadline)` with
//! `budget` ns. A task split into `p` parts has `p` reservations whose windows lie back to back
//! from offset 0, possibly on different CPUs; part 1 is the first window.
//!
//! The JSON form is specified in docs/spres.md ("Format"): [`Placement::to_json`] writes it
//! (serde `Serialize` gives the same text), [`Placement::from_json`] is the strict reader
//! (duplicate keys, unknown keys, bad values are errors naming the processor, task and field;
//! times may be duration strings such as `"2ms"`). [`Placement::validate`] checks a placement
//! against a task set; [`Placement::check_runnable`] adds what an engine needs to execute it.

use crate::{check_m, ModelError, TaskSet, Time};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One polling reservation on one processor: part `part` of `parts` of task `task`.
///
/// Per replenishment period of length `period` (`= ⌊T / k⌋`, see [`TaskPlacement`]), the
/// reservation is activated `offset` ns after the period starts (for `k = 1`: after the job's
/// release) with `budget` ns and scheduling deadline `offset + deadline`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reservation {
    /// The processor that serves it (in the JSON: the enclosing `cpus[]` entry's `cpu`).
    #[serde(skip)]
    pub cpu: u32,
    pub task: usize,
    pub budget: Time,
    pub period: Time,
    pub deadline: Time,
    pub offset: Time,
    /// 1-based position of this piece among the task's pieces, in window order.
    pub part: u32,
    pub parts: u32,
}

/// The reservations of one processor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CpuPlacement {
    pub cpu: u32,
    pub reservations: Vec<Reservation>,
}

/// Per task: its period ratio `k` and the number of parts it was split into.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskPlacement {
    pub task: usize,
    pub period_ratio: u64,
    pub parts: u32,
}

/// A placement of a task set on `m` processors (docs/spres.md, "Format").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Placement {
    pub m: u32,
    /// Whether a placement was found (`cpus` and `tasks` are empty when not).
    pub schedulable: bool,
    /// The heuristic that produced it (the cascade: the one that succeeded, or the last tried).
    pub heuristic: String,
    /// Per processor, in processor order when read or made by a heuristic (every processor
    /// `0..m` is listed by the heuristics, possibly with no reservation).
    pub cpus: Vec<CpuPlacement>,
    /// One entry per task, by index, when schedulable.
    pub tasks: Vec<TaskPlacement>,
    /// Why nothing was placed (only when not schedulable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The overheads the budgets were inflated with (`rtsched partition --overheads`): an object
    /// with at least `"model"` (docs/spres.md, "Placements with overheads"). Its periods may
    /// then be shorter than `⌊T / k⌋`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overheads: Option<Map<String, Value>>,
}

const TOP_KEYS: [&str; 7] = ["m", "schedulable", "heuristic", "cpus", "tasks", "reason", "overheads"];
const CPU_KEYS: [&str; 2] = ["cpu", "reservations"];
const RES_KEYS: [&str; 7] = ["task", "budget", "period", "deadline", "offset", "part", "parts"];
const TASK_KEYS: [&str; 3] = ["task", "period_ratio", "parts"];

impl Placement {
    /// A placement that found nothing: `reason` says why.
    pub fn failed(m: u32, heuristic: String, reason: String) -> Placement {
        Placement {
            m,
            schedulable: false,
            heuristic,
            cpus: Vec::new(),
            tasks: Vec::new(),
            reason: Some(reason),
            overheads: None,
        }
    }

    /// A plain partition as a placement: task `t` of `partition[c]` is one whole reservation on
    /// CPU `c` (budget C, replenishment period T, deadline min(D, T), offset 0); heuristic
    /// `"partition"`. `None` if the partition does not place every task of `ts` exactly once.
    pub fn whole(ts: &TaskSet, partition: &[Vec<usize>]) -> Option<Placement> {
        let mut placed = vec![false; ts.len()];
        let mut cpus = Vec::with_capacity(partition.len());
        for (c, tasks) in partition.iter().enumerate() {
            let cpu = u32::try_from(c).ok()?;
            let mut reservations = Vec::with_capacity(tasks.len());
            for &t in tasks {
                let task = ts.tasks().get(t)?;
                if std::mem::replace(&mut placed[t], true) {
                    return None;
                }
                reservations.push(Reservation {
                    cpu,
                    task: t,
                    budget: task.wcet,
                    period: task.period,
                    deadline: task.deadline.min(task.period),
                    offset: 0,
                    part: 1,
                    parts: 1,
                });
            }
            reservations.sort_by_key(|r| r.task);
            cpus.push(CpuPlacement { cpu, reservations });
        }
        if placed.contains(&false) {
            return None;
        }
        let tasks = (0..ts.len()).map(|task| TaskPlacement { task, period_ratio: 1, parts: 1 }).collect();
        Some(Placement {
            m: u32::try_from(partition.len()).ok()?,
            schedulable: true,
            heuristic: "partition".into(),
            cpus,
            tasks,
            reason: None,
            overheads: None,
        })
    }

    /// That the placement is for a run on `m` processors (`m_is` says where `m` comes from in
    /// the error, e.g. `"--m is"`).
    pub fn check_for_m(&self, m: u32, m_is: &str) -> Result<(), ModelError> {
        if self.m != m {
            return Err(ModelError::field("m", format!("the placement is for m = {} but {m_is} {m}", self.m)));
        }
        Ok(())
    }

    /// The plain partition this placement is for a run on `m` processors, with the errors a
    /// user reads: a placement for another `m` (`m_is` says where `m` comes from, e.g. `"--m
    /// is"`), or a task that is split or period-transformed (a plain partition, as P-EDF and
    /// P-FP take, needs one whole reservation per task). For a placement that passed
    /// [`Placement::validate`]; the one rule of the simulator and the runtime.
    pub fn plain_partition(&self, ts: &TaskSet, m: u32, m_is: &str) -> Result<Vec<Vec<usize>>, ModelError> {
        self.check_for_m(m, m_is)?;
        self.as_partition(ts).map_err(|i| {
            ModelError::task_field(
                i,
                "placement",
                "is split or period-transformed; a plain partition (pedf, pfp) needs one whole reservation per task \
                 (use --scheduler spres)",
            )
        })
    }

    /// The plain partition this placement is, `partition[c]` = the tasks of CPU `c`; or
    /// `Err(task)` naming the first task that is split or period-transformed (more than one
    /// reservation, or a reservation period other than its period). For a placement that
    /// passed [`Placement::validate`].
    pub fn as_partition(&self, ts: &TaskSet) -> Result<Vec<Vec<usize>>, usize> {
        let mut cpus = vec![Vec::new(); self.m as usize];
        for (i, parts) in self.parts_by_task(ts.len()).iter().enumerate() {
            if parts.len() != 1 || parts[0].period != ts[i].period {
                return Err(i);
            }
            cpus[parts[0].cpu as usize].push(i);
        }
        Ok(cpus)
    }

    /// Per task `0..n`, its reservations in part order (each with its CPU): what the SP-RES
    /// rules execute.
    pub fn parts_by_task(&self, n: usize) -> Vec<Vec<Reservation>> {
        let mut parts: Vec<Vec<Reservation>> = vec![Vec::new(); n];
        for r in self.cpus.iter().flat_map(|c| &c.reservations) {
            if let Some(ps) = parts.get_mut(r.task) {
                ps.push(r.clone());
            }
        }
        for ps in &mut parts {
            ps.sort_by_key(|r| r.part);
        }
        parts
    }

    /// The `"model"` of the `"overheads"` object: the overhead model the budgets were inflated
    /// with, or `None` for a placement made without overheads.
    pub fn overheads_model(&self) -> Option<&str> {
        self.overheads.as_ref().and_then(|o| o.get("model")).and_then(Value::as_str)
    }

    /// Per processor `0..m`: an upper bound on context switches per second, two per activation
    /// of each (sub)reservation (Brandenburg & Gül, RTSS 2016 §VI): `Σ 2 / period` with the
    /// period in seconds.
    pub fn switch_rate_bound(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.m as usize];
        for c in &self.cpus {
            if let Some(slot) = out.get_mut(c.cpu as usize) {
                *slot = c.reservations.iter().map(|r| 2e9 / r.period as f64).sum();
            }
        }
        out
    }

    /// The JSON form documented in docs/spres.md (the same as serde's).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Parses placement JSON text with the strict reader (`crate::json`: duplicate keys are
    /// errors) and validates it for `ts` ([`Placement::from_value`]).
    pub fn from_json(text: &str, ts: &TaskSet) -> Result<Placement, ModelError> {
        let v = crate::json::parse(text).map_err(|mut e| {
            e.reason = format!("placement: {}", e.reason);
            e
        })?;
        Placement::from_value(&v, ts)
    }

    /// [`Placement::from_json`] and then [`Placement::check_runnable`]: the placement file an
    /// engine is given (`simulate --placement`, `run --placement`).
    pub fn from_json_runnable(text: &str, ts: &TaskSet) -> Result<Placement, ModelError> {
        let p = Placement::from_json(text, ts)?;
        p.check_runnable(ts)?;
        Ok(p)
    }

    /// Reads a placement from JSON and validates it for `ts` ([`Placement::validate`]); the
    /// processors and tasks come back in index order. Times are integer ns or duration strings
    /// ("2ms"). It does *not* run a demand test (`rtsched_analysis::semi::check` does), nor the
    /// checks an engine needs to execute it ([`Placement::check_runnable`]).
    pub fn from_value(v: &Value, ts: &TaskSet) -> Result<Placement, ModelError> {
        let mut p = Placement::parse(v)?;
        p.validate(ts)?;
        p.cpus.sort_by_key(|c| c.cpu);
        p.tasks.sort_by_key(|t| t.task);
        Ok(p)
    }

    /// The document alone: keys, types and `m` (bounded by [`crate::MAX_M`]); nothing about a
    /// task set. What serde's `Deserialize` runs.
    fn parse(v: &Value) -> Result<Placement, ModelError> {
        let top = obj(v, "placement", &TOP_KEYS)?;
        let m = check_m(uint(get(top, "m", "placement")?, "m")?)?;
        let schedulable = match top.get("schedulable") {
            // An old hand-written file without the key: not runnable (check_runnable says why).
            None | Some(Value::Null) => false,
            Some(s) => s.as_bool().ok_or_else(|| ModelError::field("schedulable", "must be true or false"))?,
        };
        let heuristic = match top.get("heuristic") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(ModelError::field("heuristic", "must be a string")),
        };
        let reason = match top.get("reason") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(ModelError::field("reason", "must be a string")),
        };
        let overheads = match top.get("overheads") {
            None | Some(Value::Null) => None,
            Some(o) => {
                let o = o.as_object().ok_or_else(|| ModelError::field("overheads", "must be a JSON object"))?;
                if !o.get("model").is_some_and(Value::is_string) {
                    return Err(ModelError::field(
                        "overheads",
                        "the \"model\" the budgets were inflated with is missing",
                    ));
                }
                Some(o.clone())
            }
        };
        let arr = |key: &str| -> Result<&Vec<Value>, ModelError> {
            get(top, key, "placement")?.as_array().ok_or_else(|| ModelError::field(key, "must be an array"))
        };
        let mut cpus = Vec::new();
        for (ci, cv) in arr("cpus")?.iter().enumerate() {
            let what = format!("cpus[{ci}]");
            let co = obj(cv, &what, &CPU_KEYS)?;
            let cpu = uint(get(co, "cpu", &what)?, "cpu").map_err(|e| ctx(e, &what))?;
            let cpu = u32::try_from(cpu)
                .map_err(|_| ModelError::field("cpu", format!("{what}: CPU {cpu} does not exist on {m} processors")))?;
            let rsv = get(co, "reservations", &what)?
                .as_array()
                .ok_or_else(|| ModelError::field("reservations", format!("{what}: must be an array")))?;
            let mut reservations = Vec::with_capacity(rsv.len());
            for (ri, rv) in rsv.iter().enumerate() {
                let w = format!("CPU {cpu} reservation {ri}");
                let ro = obj(rv, &w, &RES_KEYS)?;
                let task = uint(get(ro, "task", &w)?, "task").map_err(|e| ctx(e, &w))?;
                let task = usize::try_from(task).unwrap_or(usize::MAX);
                let terr = |field: &str, msg: String| ModelError::task_field(task, field, format!("{w}: {msg}"));
                let time = |key: &str| -> Result<Time, ModelError> { dur(get(ro, key, &w)?).map_err(|e| terr(key, e)) };
                let (budget, period, deadline, offset) =
                    (time("budget")?, time("period")?, time("deadline")?, time("offset")?);
                let part = uint(get(ro, "part", &w)?, "part").map_err(|e| ctx(e, &w).in_task(task, None))?;
                let parts = uint(get(ro, "parts", &w)?, "parts").map_err(|e| ctx(e, &w).in_task(task, None))?;
                let (Ok(part32), Ok(parts32)) = (u32::try_from(part), u32::try_from(parts)) else {
                    return Err(terr("part", format!("part {part} of {parts} is not in 1..=parts")));
                };
                reservations.push(Reservation {
                    cpu,
                    task,
                    budget,
                    period,
                    deadline,
                    offset,
                    part: part32,
                    parts: parts32,
                });
            }
            cpus.push(CpuPlacement { cpu, reservations });
        }
        let mut tasks = Vec::new();
        for (ti, tv) in arr("tasks")?.iter().enumerate() {
            let w = format!("tasks[{ti}]");
            let to = obj(tv, &w, &TASK_KEYS)?;
            let task = uint(get(to, "task", &w)?, "task").map_err(|e| ctx(e, &w))?;
            let task = usize::try_from(task).unwrap_or(usize::MAX);
            let k = uint(get(to, "period_ratio", &w)?, "period_ratio").map_err(|e| ctx(e, &w).in_task(task, None))?;
            let parts = uint(get(to, "parts", &w)?, "parts").map_err(|e| ctx(e, &w).in_task(task, None))?;
            let parts =
                u32::try_from(parts).map_err(|_| ModelError::task_field(task, "parts", "must be at least 1"))?;
            tasks.push(TaskPlacement { task, period_ratio: k, parts });
        }
        Ok(Placement { m, schedulable, heuristic, cpus, tasks, reason, overheads })
    }

    /// Checks the placement against `ts`: `m` in range; every CPU `< m` and listed once; every
    /// reservation of a known task with `1 ≤ budget ≤ deadline ≤ period`, its window inside the
    /// period and `1 ≤ part ≤ parts`; every `tasks` entry of a known task, listed once, with
    /// `period_ratio ≥ 1` and `parts ≥ 1`; and, when schedulable, the structure of every task
    /// (listed in `tasks`, exactly parts `1..=parts` on one period, windows back to back from
    /// offset 0). Errors name the processor, task and field.
    pub fn validate(&self, ts: &TaskSet) -> Result<(), ModelError> {
        let m = check_m(self.m as u64)?;
        let n = ts.len();
        let mut seen_cpu = vec![false; m as usize];
        for (ci, c) in self.cpus.iter().enumerate() {
            let what = format!("cpus[{ci}]");
            let cpu = c.cpu;
            if cpu >= m {
                return Err(ModelError::field("cpu", format!("{what}: CPU {cpu} does not exist on {m} processors")));
            }
            if std::mem::replace(&mut seen_cpu[cpu as usize], true) {
                return Err(ModelError::field("cpu", format!("{what}: CPU {cpu} is listed twice")));
            }
            for (ri, r) in c.reservations.iter().enumerate() {
                let w = format!("CPU {cpu} reservation {ri}");
                let task = r.task;
                if task >= n {
                    return Err(ModelError::field(
                        "task",
                        format!("{w}: unknown task {task} (the task set has {n} tasks)"),
                    ));
                }
                let terr = |field: &str, msg: String| Err(ModelError::task_field(task, field, format!("{w}: {msg}")));
                let Reservation { budget, period, deadline, offset, part, parts, .. } = *r;
                if r.cpu != cpu {
                    return terr("cpu", format!("the reservation says CPU {} but is listed under CPU {cpu}", r.cpu));
                }
                if budget == 0 || period == 0 || deadline == 0 {
                    return terr("budget", "budget, period and deadline must be at least 1 ns".into());
                }
                if budget > period {
                    return terr("budget", format!("budget {budget} ns exceeds the period {period} ns"));
                }
                if budget > deadline {
                    return terr("budget", format!("budget {budget} ns exceeds the deadline {deadline} ns"));
                }
                if deadline > period {
                    return terr("deadline", format!("deadline {deadline} ns exceeds the period {period} ns"));
                }
                if offset.checked_add(deadline).is_none_or(|e| e > period) {
                    return terr(
                        "offset",
                        format!("window [{offset}, {offset}+{deadline}) leaves the period {period} ns"),
                    );
                }
                if parts == 0 || part == 0 || part > parts {
                    return terr("part", format!("part {part} of {parts} is not in 1..=parts"));
                }
            }
        }
        let mut seen_task = vec![false; n];
        for (ti, t) in self.tasks.iter().enumerate() {
            let w = format!("tasks[{ti}]");
            let task = t.task;
            if task >= n {
                return Err(ModelError::field(
                    "task",
                    format!("{w}: unknown task {task} (the task set has {n} tasks)"),
                ));
            }
            if t.period_ratio == 0 {
                return Err(ModelError::task_field(task, "period_ratio", "must be at least 1"));
            }
            if t.parts == 0 {
                return Err(ModelError::task_field(task, "parts", "must be at least 1"));
            }
            if std::mem::replace(&mut seen_task[task], true) {
                return Err(ModelError::task_field(task, "task", format!("{w}: task listed twice")));
            }
        }
        if self.schedulable {
            self.validate_windows(ts)?;
        }
        Ok(())
    }

    /// The structure of every task (for a schedulable placement whose CPUs and tasks are in
    /// range): listed in `tasks` once; its reservations are exactly parts `1..=parts`, share
    /// one period, and their windows are back to back from offset 0 (`offset₁ = 0`,
    /// `offset_{j+1} = offset_j + deadline_j`).
    pub fn validate_windows(&self, ts: &TaskSet) -> Result<(), ModelError> {
        let n = ts.len();
        let mut info: Vec<Option<&TaskPlacement>> = vec![None; n];
        for t in &self.tasks {
            if t.task >= n {
                return Err(ModelError::field("task", format!("unknown task {}", t.task)));
            }
            if info[t.task].replace(t).is_some() {
                return Err(ModelError::task_field(t.task, "task", "listed twice in 'tasks'"));
            }
        }
        let mut by_task: Vec<Vec<(u32, &Reservation)>> = vec![Vec::new(); n];
        for c in &self.cpus {
            if c.cpu >= self.m {
                return Err(ModelError::field("cpu", format!("CPU {} does not exist on {} processors", c.cpu, self.m)));
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
                        format!(
                            "CPU {cpu}: part {} of {} (expected parts 1..={} once each)",
                            r.part, r.parts, ti.parts
                        ),
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

    /// What an engine (the simulator, the runtime) needs beyond [`Placement::validate`] to
    /// execute the placement for `ts`: it is schedulable; no reservation period exceeds its
    /// task's period; each task's period is `⌊T / period_ratio⌋` (at most that for a placement
    /// made with overheads, whose inflated periods `T′ = T − Δev` are shorter); and the parts
    /// of a split or period-transformed task deliver at least its WCET (`⌈C / period_ratio⌉`
    /// per reservation period; more is accepted: a placement made for padded WCETs).
    pub fn check_runnable(&self, ts: &TaskSet) -> Result<(), ModelError> {
        if !self.schedulable {
            let why = self.reason.as_deref().unwrap_or("no reason given");
            return Err(ModelError::field(
                "schedulable",
                format!("the placement is not schedulable ({why}); nothing to run"),
            ));
        }
        self.validate(ts)?;
        for r in self.cpus.iter().flat_map(|c| &c.reservations) {
            if r.period > ts[r.task].period {
                return Err(ModelError::task_field(
                    r.task,
                    "period",
                    format!("cpu {}, part {}: exceeds the task's period {}", r.cpu, r.part, ts[r.task].period),
                ));
            }
        }
        let inflated = self.overheads.is_some();
        let mut ratio = vec![1u64; ts.len()];
        for t in &self.tasks {
            ratio[t.task] = t.period_ratio;
        }
        for (i, ps) in self.parts_by_task(ts.len()).iter().enumerate() {
            let k = ratio[i];
            let period = ps[0].period;
            let bad_period = if inflated { period > ts[i].period / k } else { period != ts[i].period / k };
            if bad_period {
                return Err(ModelError::task_field(
                    i,
                    "period",
                    format!(
                        "reservation period {period} is not {}⌊T / period_ratio⌋ = {}",
                        if inflated { "at most " } else { "" },
                        ts[i].period / k
                    ),
                ));
            }
            // An unsplit reservation may have any budget: budget enforcement is what some
            // experiments study.
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
        Ok(())
    }
}

/// The document (keys, types, `m`) without a task set: validate with [`Placement::validate`].
/// Duplicate keys cannot be seen through serde; [`Placement::from_json`] rejects them.
impl<'de> Deserialize<'de> for Placement {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Placement, D::Error> {
        let v = Value::deserialize(d)?;
        Placement::parse(&v).map_err(serde::de::Error::custom)
    }
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
        Value::String(s) => crate::time::parse_duration(s).map_err(|e| e.reason),
        other => Err(format!("must be integer ns or a duration string, got {other}")),
    }
}

#[cfg(test)]
mod tests;
