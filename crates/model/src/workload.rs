//! What an engine is given to schedule: one [`Workload`], whatever its kind.
//!
//! * [`Workload::Sporadic`]: sequential sporadic (or periodic) tasks `(C, D, T)`;
//! * [`Workload::ForkJoin`]: fork-join tasks, each job a sequence of regions of parallel
//!   threads (the model of Nogueira et al., EUC 2012, used by the RTWS paper, §III); a task of
//!   one region of one thread is a sporadic task;
//! * [`Workload::Dag`]: sporadic DAG tasks (`crate::dag`; Baruah et al., RTSS 2012), analysed by
//!   `rtsched analyze`, simulated at node level by `rtsched simulate`, not yet run
//!   (`docs/dag.md`).
//!
//! Every kind has a sequential view ([`Workload::sequential`]: per task `(C, D, T)` with `C`
//! the sum of its threads' (or nodes') costs), which is what hyperperiods, utilizations and the
//! trace's task table use. New kinds are new variants here, so that one file reader and one
//! request per engine carry them. Self-suspending tasks are not a kind of their own: a sporadic
//! task may carry suspension segments ([`crate::task::Segments`], the segmented model).
//!
//! JSON: a file is a fork-join set when any of its tasks has `"regions"`
//! (`docs/formats.md`, `docs/rtws.md`), a DAG set when any has `"nodes"` (`docs/dag.md`);
//! otherwise it is the task-set format.

use crate::dag::{self, DagSet};
use crate::forkjoin::{self, ForkJoinSet};
use crate::{io, ModelError, TaskSet};
use serde_json::Value;

/// The tasks an engine schedules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workload {
    Sporadic(TaskSet),
    ForkJoin(ForkJoinSet),
    Dag(DagSet),
}

/// A workload as read from a file: the tasks and, if the file says it, `m`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadFile {
    pub m: Option<u32>,
    pub workload: Workload,
}

impl Workload {
    /// `"sporadic"`, `"fork-join"` or `"DAG"`, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Workload::Sporadic(_) => "sporadic",
            Workload::ForkJoin(_) => "fork-join",
            Workload::Dag(_) => "DAG",
        }
    }

    /// Number of tasks.
    pub fn len(&self) -> usize {
        match self {
            Workload::Sporadic(ts) => ts.len(),
            Workload::ForkJoin(set) => set.len(),
            Workload::Dag(set) => set.len(),
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
            Workload::Dag(set) => set.sequential(),
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

impl From<DagSet> for Workload {
    fn from(set: DagSet) -> Workload {
        Workload::Dag(set)
    }
}

/// Whether some task of a parsed JSON document has the key `key`.
fn some_task_has(doc: &Value, key: &str) -> bool {
    doc.get("tasks").and_then(Value::as_array).is_some_and(|tasks| tasks.iter().any(|t| t.get(key).is_some()))
}

/// Reads a JSON workload file (a leading byte-order mark is skipped): a fork-join set when any
/// task has `"regions"`, a DAG set when any has `"nodes"`, else a task set. Errors are those of
/// the kind's own reader.
pub fn read_json(text: &str) -> Result<WorkloadFile, ModelError> {
    let text = crate::json::strip_bom(text);
    // The sporadic reader's fast path first (most files); its failure may be a fork-join file.
    if let Ok(f) = io::read_json(text) {
        return Ok(WorkloadFile { m: f.m, workload: Workload::Sporadic(f.taskset) });
    }
    let doc = crate::json::parse(text)?;
    if some_task_has(&doc, "regions") {
        let f = forkjoin::from_value(&doc)?;
        Ok(WorkloadFile { m: f.m, workload: Workload::ForkJoin(f.set) })
    } else if some_task_has(&doc, "nodes") {
        let f = dag::from_value(&doc)?;
        Ok(WorkloadFile { m: f.m, workload: Workload::Dag(f.set) })
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
        // A DAG file with an edge to a node it does not have: the DAG reader's message.
        let e = read_json(r#"{"tasks": [{"name": "a", "period": 10, "nodes": [1, 2], "edges": [[0, 5]]}]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("task 0") && e.contains('5'), "{e}");
    }

    #[test]
    fn reads_a_dag_set() {
        let f = read_json(r#"{"m": 3, "tasks": [{"period": 100, "nodes": [10, 20, 30], "edges": [[0, 1], [0, 2]]}]}"#)
            .unwrap();
        assert_eq!(f.m, Some(3));
        assert_eq!(f.workload.kind(), "DAG");
        let Workload::Dag(set) = &f.workload else { panic!("not a DAG set") };
        assert_eq!(set[0].nodes(), 3);
        assert_eq!(f.workload.sequential().unwrap()[0].wcet, 60);
        let e = f.workload.as_sporadic("analyze").unwrap_err().to_string();
        assert!(e.contains("DAG"), "{e}");
    }
}
