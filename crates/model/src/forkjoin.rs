//! Fork-join parallel tasks (design note: `docs/rtws.md`).
//!
//! The task model of *RTWS: Real-Time Work-Stealing* (seed 003, §III): a job is a sequence
//! of regions; each region is a list of threads of arbitrary, different execution
//! requirements that fork at the region's start and join at its end (the next region starts
//! only when every thread of the previous one has completed). A region of one thread is a
//! sequential region. The paper assumes implicit deadlines (`D = T`, periodic); here the
//! relative deadline may be given and may be implicit, constrained or arbitrary (it defaults
//! to the period). The task's WCET `C` is the sum of its threads' costs (§III: "the sum of
//! the execution requirements of all of its threads, if all threads are executed sequentially
//! in the same core").
//!
//! JSON: `{"tasks": [{"name": "a", "period": "10ms", "deadline": "8ms", "regions": [[3000],
//! [1000, "1ms"]]}]}`; `name` and `deadline` are optional, times are integer ns or duration
//! strings (as in the task-set format), unknown keys are errors. An optional `"m"` is
//! accepted as in the task-set format.

use crate::task::Task;
use crate::taskset::TaskSet;
use crate::time::{Time, MAX_TIME};
use crate::ModelError;
use serde_json::{Map, Value};

/// Most threads one task may have over all its regions (memory bound of the simulator).
pub const MAX_THREADS_PER_TASK: usize = 1 << 16;

/// A fork-join task: `regions[r][k]` is the cost (ns) of thread `k` of region `r`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ForkJoinTask {
    pub name: Option<String>,
    /// T (ns).
    pub period: Time,
    /// D, relative deadline (ns).
    pub deadline: Time,
    pub regions: Vec<Vec<Time>>,
}

impl ForkJoinTask {
    /// An implicit-deadline fork-join task, validated.
    pub fn implicit(period: Time, regions: Vec<Vec<Time>>) -> Result<ForkJoinTask, ModelError> {
        ForkJoinTask::new(period, period, regions)
    }

    /// A fork-join task, validated.
    pub fn new(period: Time, deadline: Time, regions: Vec<Vec<Time>>) -> Result<ForkJoinTask, ModelError> {
        let t = ForkJoinTask { name: None, period, deadline, regions };
        t.validate()?;
        Ok(t)
    }

    /// Same task with a name.
    pub fn named(mut self, name: impl Into<String>) -> ForkJoinTask {
        self.name = Some(name.into());
        self
    }

    fn err(&self, field: impl Into<String>, reason: impl Into<String>) -> ModelError {
        ModelError { task_name: self.name.clone(), ..ModelError::field(field, reason) }
    }

    /// Checks period, deadline, every region (non-empty) and every thread cost (`1..=MAX_TIME`),
    /// the total cost (`<= MAX_TIME`) and the thread count. Errors name the field as
    /// `regions[r][k]` (region `r`, thread `k`, both 0-based).
    pub fn validate(&self) -> Result<(), ModelError> {
        for (field, v) in [("period", self.period), ("deadline", self.deadline)] {
            if v == 0 {
                return Err(self.err(field, "must be at least 1 ns, got 0"));
            }
            if v > MAX_TIME {
                return Err(self.err(field, format!("must be at most {MAX_TIME} ns, got {v}")));
            }
        }
        if self.regions.is_empty() {
            return Err(self.err("regions", "a fork-join task needs at least one region"));
        }
        let mut total: u128 = 0;
        let mut threads = 0usize;
        for (r, region) in self.regions.iter().enumerate() {
            if region.is_empty() {
                return Err(self
                    .err(format!("regions[{r}]"), format!("region {r} has no thread (a region needs at least one)")));
            }
            for (k, &c) in region.iter().enumerate() {
                if c == 0 || c > MAX_TIME {
                    return Err(self.err(
                        format!("regions[{r}][{k}]"),
                        format!("region {r}, thread {k}: cost must be in 1..={MAX_TIME} ns, got {c}"),
                    ));
                }
                total += c as u128;
            }
            threads += region.len();
        }
        if total > MAX_TIME as u128 {
            return Err(self.err("regions", format!("the total cost {total} ns exceeds {MAX_TIME} ns")));
        }
        if threads > MAX_THREADS_PER_TASK {
            return Err(self.err("regions", format!("{threads} threads, above the limit of {MAX_THREADS_PER_TASK}")));
        }
        Ok(())
    }

    /// `C`, the sum of all thread costs (valid tasks: `<= MAX_TIME`, saturating otherwise).
    pub fn wcet(&self) -> Time {
        self.regions.iter().flatten().fold(0u64, |a, &c| a.saturating_add(c))
    }

    /// Total number of threads over all regions.
    pub fn threads(&self) -> usize {
        self.regions.iter().map(Vec::len).sum()
    }

    /// The critical path: the sum over regions of the longest thread (the response time on
    /// infinitely many cores, `T_inf` of §IV).
    pub fn critical_path(&self) -> Time {
        self.regions.iter().map(|r| r.iter().copied().max().unwrap_or(0)).fold(0u64, |a, c| a.saturating_add(c))
    }

    /// The sequential task `(C, D, T)` with the same total cost.
    pub fn sequential(&self) -> Task {
        Task {
            name: self.name.clone(),
            wcet: self.wcet(),
            deadline: self.deadline,
            period: self.period,
            segments: None,
        }
    }
}

/// A validated list of fork-join tasks; the index of a task is its identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ForkJoinSet {
    tasks: Vec<ForkJoinTask>,
}

impl ForkJoinSet {
    /// Validates every task; errors carry the task index and name.
    pub fn new(tasks: Vec<ForkJoinTask>) -> Result<ForkJoinSet, ModelError> {
        for (i, t) in tasks.iter().enumerate() {
            t.validate().map_err(|e| e.in_task(i, t.name.as_deref()))?;
        }
        Ok(ForkJoinSet { tasks })
    }

    /// One single-thread region per task: `(C, T)` pairs, implicit deadlines.
    pub fn sequential_ct(params: &[(Time, Time)]) -> Result<ForkJoinSet, ModelError> {
        ForkJoinSet::new(
            params
                .iter()
                .map(|&(c, t)| ForkJoinTask { name: None, period: t, deadline: t, regions: vec![vec![c]] })
                .collect(),
        )
    }

    pub fn tasks(&self) -> &[ForkJoinTask] {
        &self.tasks
    }
    pub fn len(&self) -> usize {
        self.tasks.len()
    }
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }
    pub fn iter(&self) -> std::slice::Iter<'_, ForkJoinTask> {
        self.tasks.iter()
    }

    /// The sequential task set `(C_i, D_i, T_i)` (for hyperperiods, utilizations, the trace).
    pub fn sequential(&self) -> Result<TaskSet, ModelError> {
        TaskSet::new(self.tasks.iter().map(ForkJoinTask::sequential).collect())
    }
}

impl std::ops::Index<usize> for ForkJoinSet {
    type Output = ForkJoinTask;
    fn index(&self, i: usize) -> &ForkJoinTask {
        &self.tasks[i]
    }
}

/// What a thread's completion did to its job (RTWS paper, §III: region `r + 1` forks only when
/// every thread of region `r` has completed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Join {
    /// Other threads of the region are still outstanding.
    Pending,
    /// The region joined and the job's next region, `region`, forks now.
    Fork { region: u32 },
    /// The job's last region joined: the job is complete. The task's next job starts at
    /// region 0.
    JobDone,
}

/// The one bookkeeping of fork-join jobs that every engine shares: per task, the region its
/// current (head) job executes and how many of that region's threads are still outstanding.
/// A task's jobs execute in release order, so the head job is the only one with threads to
/// join; a sequential task is one region of one thread. Pure: no time, no queues, no CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionProgress {
    /// Per task, per region: the threads it forks (each at least 1).
    widths: Vec<Vec<u32>>,
    region: Vec<u32>,
    outstanding: Vec<u32>,
}

impl RegionProgress {
    /// Tasks whose regions fork the given numbers of threads. Errors on a task without
    /// regions or a region without threads (naming the task and region).
    pub fn new(widths: Vec<Vec<u32>>) -> Result<RegionProgress, ModelError> {
        for (i, w) in widths.iter().enumerate() {
            if w.is_empty() {
                return Err(ModelError::task_field(i, "regions", "a fork-join task needs at least one region"));
            }
            if let Some(r) = w.iter().position(|&k| k == 0) {
                return Err(ModelError::task_field(i, format!("regions[{r}]"), "a region needs at least one thread"));
            }
        }
        let outstanding = widths.iter().map(|w| w[0]).collect();
        Ok(RegionProgress { region: vec![0; widths.len()], outstanding, widths })
    }

    /// The progress of `set`'s tasks, every head job at region 0.
    pub fn of_set(set: &ForkJoinSet) -> RegionProgress {
        let widths = set.iter().map(|t| t.regions.iter().map(|r| r.len() as u32).collect()).collect();
        RegionProgress::new(widths).expect("a validated fork-join set has threads in every region")
    }

    /// Number of tasks.
    pub fn tasks(&self) -> usize {
        self.widths.len()
    }

    /// Number of regions of `task`.
    pub fn regions(&self, task: u32) -> u32 {
        self.widths[task as usize].len() as u32
    }

    /// Threads region `r` of `task` forks.
    pub fn width(&self, task: u32, r: u32) -> u32 {
        self.widths[task as usize][r as usize]
    }

    /// The region `task`'s head job executes (or forks next).
    pub fn region(&self, task: u32) -> u32 {
        self.region[task as usize]
    }

    /// Threads of that region not yet complete.
    pub fn outstanding(&self, task: u32) -> u32 {
        self.outstanding[task as usize]
    }

    /// A thread of `task`'s head job completed. `None` (an engine's bug, not bad input: the
    /// caller reports it as its internal error) when the region had no thread outstanding.
    pub fn thread_done(&mut self, task: u32) -> Option<Join> {
        let i = task as usize;
        let left = self.outstanding[i].checked_sub(1)?;
        self.outstanding[i] = left;
        if left > 0 {
            return Some(Join::Pending);
        }
        let next = self.region[i] + 1;
        if (next as usize) < self.widths[i].len() {
            self.region[i] = next;
            self.outstanding[i] = self.widths[i][next as usize];
            return Some(Join::Fork { region: next });
        }
        self.region[i] = 0;
        self.outstanding[i] = self.widths[i][0];
        Some(Join::JobDone)
    }
}

/// A fork-join set as read from a file: the tasks and, if the file says it, `m`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForkJoinFile {
    pub m: Option<u32>,
    pub set: ForkJoinSet,
}

pub(crate) fn time_value(v: &Value, field: &str) -> Result<Time, ModelError> {
    match v {
        Value::Number(n) => n.as_u64().ok_or_else(|| {
            ModelError::field(
                field,
                format!("expected a non-negative integer number of ns or a duration string like \"2ms\", got {n}"),
            )
        }),
        Value::String(s) => crate::io::parse_duration_text(s).map_err(|e| ModelError::field(field, e.reason)),
        other => {
            Err(ModelError::field(field, format!("expected integer ns or a duration string like \"2ms\", got {other}")))
        }
    }
}

fn parse_task(index: usize, v: &Value) -> Result<ForkJoinTask, ModelError> {
    let obj = v.as_object().ok_or_else(|| {
        ModelError::new(format!("expected a fork-join task object {{\"period\": .., \"regions\": [[..]]}}, got {v}"))
            .in_task(index, None)
    })?;
    let name = match obj.get("name") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => return Err(ModelError::task_field(index, "name", format!("expected a string, got {other}"))),
    };
    let wrap = |e: ModelError| e.in_task(index, name.as_deref());
    for key in obj.keys() {
        if !matches!(key.as_str(), "name" | "period" | "deadline" | "regions") {
            return Err(wrap(ModelError::field(
                key,
                "unknown key (a fork-join task has name, period, deadline, regions)",
            )));
        }
    }
    let period = time_value(obj.get("period").ok_or_else(|| wrap(ModelError::field("period", "missing")))?, "period")
        .map_err(wrap)?;
    let deadline = match obj.get("deadline") {
        None | Some(Value::Null) => period,
        Some(v) => time_value(v, "deadline").map_err(wrap)?,
    };
    let regions_v =
        obj.get("regions").ok_or_else(|| wrap(ModelError::field("regions", "missing")))?.as_array().ok_or_else(
            || wrap(ModelError::field("regions", "expected a list of regions, each a list of thread costs")),
        )?;
    let mut regions = Vec::with_capacity(regions_v.len());
    for (r, rv) in regions_v.iter().enumerate() {
        let threads = rv.as_array().ok_or_else(|| {
            wrap(ModelError::field(
                format!("regions[{r}]"),
                format!("region {r}: expected a list of thread costs, got {rv}"),
            ))
        })?;
        let mut costs = Vec::with_capacity(threads.len());
        for (k, c) in threads.iter().enumerate() {
            let f = format!("regions[{r}][{k}]");
            costs.push(
                time_value(c, &f)
                    .map_err(|e| wrap(ModelError { reason: format!("region {r}, thread {k}: {}", e.reason), ..e }))?,
            );
        }
        regions.push(costs);
    }
    let t = ForkJoinTask { name: name.clone(), period, deadline, regions };
    t.validate().map_err(wrap)?;
    Ok(t)
}

/// Reads a fork-join set from a parsed JSON value (format: the module doc).
pub fn from_value(v: &Value) -> Result<ForkJoinFile, ModelError> {
    let (m, tasks) = crate::json::set_object(v, "fork-join")?;
    let tasks = tasks.iter().enumerate().map(|(i, t)| parse_task(i, t)).collect::<Result<Vec<_>, _>>()?;
    Ok(ForkJoinFile { m, set: ForkJoinSet::new(tasks)? })
}

/// Reads a JSON fork-join file.
pub fn read_json(text: &str) -> Result<ForkJoinFile, ModelError> {
    from_value(&crate::json::parse(text)?)
}

/// Writes the JSON format (integer ns; `deadline` always written).
pub fn to_json(set: &ForkJoinSet, m: Option<u32>) -> String {
    let tasks: Vec<Value> = set
        .iter()
        .map(|t| {
            let mut o = Map::new();
            if let Some(n) = &t.name {
                o.insert("name".into(), Value::String(n.clone()));
            }
            o.insert("period".into(), t.period.into());
            o.insert("deadline".into(), t.deadline.into());
            o.insert(
                "regions".into(),
                Value::Array(t.regions.iter().map(|r| Value::Array(r.iter().map(|&c| c.into()).collect())).collect()),
            );
            Value::Object(o)
        })
        .collect();
    let mut top = Map::new();
    if let Some(m) = m {
        top.insert("m".into(), m.into());
    }
    top.insert("tasks".into(), Value::Array(tasks));
    Value::Object(top).to_string()
}

#[cfg(test)]
mod tests {
    use super::{Join, RegionProgress};

    #[test]
    fn region_progress_joins_forks_and_restarts() {
        // Task 0: regions of 2, 1 and 3 threads; task 1 sequential.
        let mut p = RegionProgress::new(vec![vec![2, 1, 3], vec![1]]).unwrap();
        assert_eq!((p.region(0), p.outstanding(0)), (0, 2));
        assert_eq!(p.thread_done(0), Some(Join::Pending));
        assert_eq!(p.thread_done(0), Some(Join::Fork { region: 1 }));
        assert_eq!(p.thread_done(0), Some(Join::Fork { region: 2 }));
        assert_eq!((p.region(0), p.outstanding(0)), (2, 3));
        assert_eq!(p.thread_done(1), Some(Join::JobDone));
        assert_eq!(p.thread_done(0), Some(Join::Pending));
        assert_eq!(p.thread_done(0), Some(Join::Pending));
        assert_eq!(p.thread_done(0), Some(Join::JobDone));
        // The next job starts at region 0 with its first region's threads outstanding.
        assert_eq!((p.region(0), p.outstanding(0)), (0, 2));
    }

    #[test]
    fn region_progress_counts_every_thread_exactly_once() {
        // Oracle: over k jobs of a task, the completions that end a job are exactly every
        // (threads per job)-th one, and the forks are the region boundaries.
        let widths = vec![3u32, 1, 4, 2];
        let mut p = RegionProgress::new(vec![widths.clone()]).unwrap();
        let per_job: u32 = widths.iter().sum();
        let bounds: Vec<u32> = widths
            .iter()
            .scan(0, |acc, w| {
                *acc += w;
                Some(*acc)
            })
            .collect();
        for n in 1..=(3 * per_job) {
            let k = (n - 1) % per_job + 1;
            let expect = if k == per_job {
                Join::JobDone
            } else if let Some(r) = bounds.iter().position(|&b| b == k) {
                Join::Fork { region: r as u32 + 1 }
            } else {
                Join::Pending
            };
            assert_eq!(p.thread_done(0), Some(expect), "completion {n}");
        }
    }

    #[test]
    fn region_progress_rejects_empty_regions() {
        let e = RegionProgress::new(vec![vec![1], vec![2, 0]]).unwrap_err().to_string();
        assert!(e.contains("task 1") && e.contains("regions[1]"), "{e}");
        assert!(RegionProgress::new(vec![vec![]]).unwrap_err().to_string().contains("at least one region"));
    }

    use super::*;

    #[test]
    fn parse_units_defaults_and_roundtrip() {
        let f = read_json(r#"{"m": 2, "tasks": [{"name": "a", "period": "10ms", "regions": [["3ms"], [1000000, "1ms"]]}, {"period": 20, "deadline": 15, "regions": [[2], [1, 3, 1, 3]]}]}"#).unwrap();
        assert_eq!(f.m, Some(2));
        let a = &f.set[0];
        assert_eq!(
            (a.period, a.deadline, a.wcet(), a.threads(), a.critical_path()),
            (10_000_000, 10_000_000, 5_000_000, 3, 4_000_000)
        );
        let b = &f.set[1];
        assert_eq!((b.deadline, b.wcet(), b.critical_path()), (15, 10, 5));
        let back = read_json(&to_json(&f.set, f.m)).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn errors_name_task_region_thread_field() {
        for (text, task, field) in [
            (r#"{"tasks": [{"period": 10, "regions": [[1], [2, 0]]}]}"#, Some(0), "regions[1][1]"),
            (
                r#"{"tasks": [{"period": 10, "regions": [[1]]}, {"name": "x", "period": 10, "regions": [[1], []]}]}"#,
                Some(1),
                "regions[1]",
            ),
            (r#"{"tasks": [{"period": 10, "regions": []}]}"#, Some(0), "regions"),
            (r#"{"tasks": [{"period": 10}]}"#, Some(0), "regions"),
            (r#"{"tasks": [{"regions": [[1]]}]}"#, Some(0), "period"),
            (r#"{"tasks": [{"period": 0, "regions": [[1]]}]}"#, Some(0), "period"),
            (r#"{"tasks": [{"period": 5, "deadline": 0, "regions": [[1]]}]}"#, Some(0), "deadline"),
            (r#"{"tasks": [{"period": 5, "regions": [[1, "2 parsecs"]]}]}"#, Some(0), "regions[0][1]"),
            (r#"{"tasks": [{"period": 5, "regions": [[1, -3]]}]}"#, Some(0), "regions[0][1]"),
            (r#"{"tasks": [{"period": 5, "regions": [7]}]}"#, Some(0), "regions[0]"),
            (r#"{"tasks": [{"period": 5, "regions": [[1]], "wcet": 3}]}"#, Some(0), "wcet"),
            (r#"{"tasks": [{"period": 5, "regions": [[9007199254740992, 1]]}]}"#, Some(0), "regions"),
            (r#"{"tasks": 3}"#, None, "tasks"),
            (r#"{"m": 0, "tasks": []}"#, None, "m"),
        ] {
            let e = read_json(text).unwrap_err();
            assert_eq!(e.task, task, "{text}: {e}");
            assert_eq!(e.field.as_deref(), Some(field), "{text}: {e}");
        }
        let e = read_json(r#"{"tasks": [{"name": "cam", "period": 10, "regions": [[1], [2, 0]]}]}"#).unwrap_err();
        let s = e.to_string();
        assert!(s.contains("task 0") && s.contains("cam") && s.contains("region 1") && s.contains("thread 1"), "{s}");
        assert!(read_json("{").is_err());
    }

    #[test]
    fn sequential_equivalent() {
        let s = ForkJoinSet::new(vec![ForkJoinTask::implicit(10, vec![vec![3], vec![1, 1]]).unwrap()]).unwrap();
        let ts = s.sequential().unwrap();
        assert_eq!((ts[0].wcet, ts[0].deadline, ts[0].period), (5, 10, 10));
        assert!(ForkJoinTask::implicit(10, vec![vec![11]]).is_ok(), "C > T is a valid (unschedulable) task");
    }
}
