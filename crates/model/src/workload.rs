//! What an engine is given to schedule: one [`Workload`], whatever its kind.
//!
//! * [`Workload::Sporadic`]: sequential sporadic (or periodic) tasks `(C, D, T)`;
//! * [`Workload::ForkJoin`]: fork-join tasks, each job a sequence of regions of parallel
//!   threads (the model of Nogueira et al., EUC 2012, used by the RTWS paper, §III); a task of
//!   one region of one thread is a sporadic task.
//!
//! Every kind has a sequential view ([`Workload::sequential`]: per task `(C, D, T)` with `C`
//! the sum of its threads' costs), which is what hyperperiods, utilizations and the trace's
//! task table use. New kinds (DAG tasks, self-suspending tasks) are new variants here, so that
//! one file reader and one request per engine carry them.
//!
//! JSON: a file is a fork-join set when any of its tasks has `"regions"`
//! (`docs/formats.md`, `docs/rtws.md`); otherwise it is the task-set format.

use crate::forkjoin::{self, ForkJoinSet};
use crate::{io, ModelError, TaskSet};
use serde_json::Value;

/// The tasks an engine schedules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workload {
    Sporadic(TaskSet),
    ForkJoin(ForkJoinSet),
}

/// A workload as read from a file: the tasks and, if the file says it, `m`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadFile {
    pub m: Option<u32>,
    pub workload: Workload,
}

impl Workload {
    /// `"sporadic"` or `"fork-join"`, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Workload::Sporadic(_) => "sporadic",
            Workload::ForkJoin(_) => "fork-join",
        }
    }

    /// Number of tasks.
    pub fn len(&self) -> usize {
        match self {
            Workload::Sporadic(ts) => ts.len(),
            Workload::ForkJoin(set) => set.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The sequential view: per task `(C, D, T)`, `C` the sum of its threads' costs.
    pub fn sequential(&self) -> Result<TaskSet, ModelError> {
        match self {
            Workload::Sporadic(ts) => Ok(ts.clone()),
            Workload::ForkJoin(set) => set.sequential(),
        }
    }

    /// The sporadic task set, or an error for `what` (a command, test or scheduler) that
    /// takes only sequential tasks, naming the workload's kind.
    pub fn as_sporadic(&self, what: &str) -> Result<&TaskSet, ModelError> {
        match self {
            Workload::Sporadic(ts) => Ok(ts),
            other => {
                Err(ModelError::new(format!("{what} takes sequential tasks; this is a {} task set", other.kind())))
            }
        }
    }
}

impl From<TaskSet> for Workload {
    fn from(ts: TaskSet) -> Workload {
        Workload::Sporadic(ts)
    }
}

impl From<ForkJoinSet> for Workload {
    fn from(set: ForkJoinSet) -> Workload {
        Workload::ForkJoin(set)
    }
}

/// Whether a parsed JSON document is a fork-join set: some task has `"regions"`.
fn is_forkjoin(doc: &Value) -> bool {
    doc.get("tasks").and_then(Value::as_array).is_some_and(|tasks| tasks.iter().any(|t| t.get("regions").is_some()))
}

/// Reads a JSON workload file (a leading byte-order mark is skipped): a fork-join set when any
/// task has `"regions"`, else a task set. Errors are those of the kind's own reader.
pub fn read_json(text: &str) -> Result<WorkloadFile, ModelError> {
    let text = crate::json::strip_bom(text);
    // The sporadic reader's fast path first (most files); its failure may be a fork-join file.
    if let Ok(f) = io::read_json(text) {
        return Ok(WorkloadFile { m: f.m, workload: Workload::Sporadic(f.taskset) });
    }
    let doc = crate::json::parse(text)?;
    if is_forkjoin(&doc) {
        let f = forkjoin::from_value(&doc)?;
        Ok(WorkloadFile { m: f.m, workload: Workload::ForkJoin(f.set) })
    } else {
        let f = io::from_value(&doc)?;
        Ok(WorkloadFile { m: f.m, workload: Workload::Sporadic(f.taskset) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_either_kind_and_names_it() {
        let s = read_json(r#"{"m": 2, "tasks": [{"wcet": "1ms", "period": "4ms"}]}"#).unwrap();
        assert_eq!(s.m, Some(2));
        assert_eq!(s.workload.kind(), "sporadic");
        assert_eq!(s.workload.len(), 1);
        let f = read_json("\u{feff}{\"tasks\": [{\"period\": \"10ms\", \"regions\": [[1000], [500, 500]]}]}").unwrap();
        assert_eq!(f.workload.kind(), "fork-join");
        // The sequential view: C is the sum of the threads' costs.
        assert_eq!(f.workload.sequential().unwrap()[0].wcet, 2000);
        let e = f.workload.as_sporadic("analyze").unwrap_err().to_string();
        assert!(e.contains("analyze") && e.contains("fork-join"), "{e}");
    }

    #[test]
    fn errors_are_the_kinds_own() {
        // A fork-join file with a bad thread cost: the fork-join reader's message, naming
        // the task and field.
        let e = read_json(r#"{"tasks": [{"period": "10ms", "regions": [[0]]}]}"#).unwrap_err().to_string();
        assert!(e.contains("task 0"), "{e}");
        // A task-set file with a missing period: the task-set reader's message.
        let e = read_json(r#"{"tasks": [{"wcet": "1ms"}]}"#).unwrap_err().to_string();
        assert!(e.contains("period"), "{e}");
        assert!(read_json("not json").is_err());
    }
}
