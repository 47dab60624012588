//! What a node-level DAG simulation reports ([`DagResult`], per task [`DagTaskStats`]), the
//! numbering of nodes as trace tasks ([`NodeNumbering`]) and the trace's task table
//! ([`node_task_set`]).

use rtsched_model::dag::DagSet;
use rtsched_model::{ModelError, Task, TaskSet, Time};
use rtsched_trace::{JobStats, Metrics, Trace};
use serde::Serialize;

/// Per DAG task, what a simulation measured (DAG-job level).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DagTaskStats {
    pub task: u32,
    pub name: Option<String>,
    pub nodes: u32,
    /// Jobs released before the horizon, completed by it, and missed (`JobStats::missed`).
    pub jobs: u64,
    pub completed: u64,
    pub deadline_misses: u64,
    pub max_response_time_ns: Option<Time>,
    /// Mean over completed jobs (a float for the report; the per-job CSV has the exact values).
    pub mean_response_time_ns: Option<f64>,
}

/// What a node-level simulation of a DAG set measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DagResult {
    /// `G-EDF`, `G-FP (DM)`, ..., `federated`.
    pub scheduler: String,
    pub m: u32,
    pub horizon: Time,
    pub horizon_capped: bool,
    pub horizon_message: Option<String>,
    /// DAG jobs released in `[0, horizon)`, completed by the horizon, still pending.
    pub jobs: u64,
    pub completed: u64,
    pub pending: u64,
    pub deadline_misses: u64,
    pub max_tardiness_ns: Time,
    pub max_response_time_ns: Option<Time>,
    pub mean_response_time_ns: Option<f64>,
    /// Node instances released in `[0, horizon)` and completed by it.
    pub nodes: u64,
    pub nodes_completed: u64,
    /// Node-level events processed: one per node instance released and one per node completion.
    pub node_events: u64,
    /// Node-level, from `rtsched_trace::Metrics`.
    pub preemptions: u64,
    pub migrations: u64,
    pub context_switches: u64,
    /// Releases and node completions processed (the `max_events` work bound counts these).
    pub events: u64,
    pub per_task: Vec<DagTaskStats>,
    /// Under federated scheduling: `{"high": [{"task", "cpus": [first, end)}], "light": [[task, ...]
    /// per light core], "light_first_cpu"}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub federated: Option<serde_json::Value>,
    /// DAG-job rows: `start` = first node run, `finish` = last node completion, `executed`,
    /// `preemptions`, `migrations` summed over its nodes, `first_cpu` where its first node
    /// started, `last_cpu` where its last node completed.
    #[serde(skip)]
    pub per_job: Vec<JobStats>,
    /// Node-level metrics (trace task `base_i + k` = node `k` of task `i`).
    #[serde(skip)]
    pub node_metrics: Metrics,
    #[serde(skip)]
    pub trace: Option<Trace>,
}

impl DagResult {
    /// Per-job CSV (the columns of `Trace::to_job_csv`), one row per DAG job.
    pub fn to_job_csv(&self) -> String {
        rtsched_trace::export::job_rows_csv(&self.per_job, self.horizon)
    }
}

/// The trace task of node `k` of DAG task `i`, and back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeNumbering {
    /// `base[i]`: the trace task of node 0 of task `i`; `base[n]` the total.
    pub base: Vec<u32>,
}

impl NodeNumbering {
    pub fn of(set: &DagSet) -> NodeNumbering {
        let mut base = Vec::with_capacity(set.len() + 1);
        let mut acc = 0u32;
        base.push(0);
        for t in set.iter() {
            acc = acc.saturating_add(t.nodes() as u32);
            base.push(acc);
        }
        NodeNumbering { base }
    }
    /// The trace task of node `k` of task `i`.
    pub fn trace_task(&self, i: usize, k: u32) -> u32 {
        self.base[i] + k
    }
    /// `(task, node)` of trace task `x`.
    pub fn node_of(&self, x: u32) -> Option<(usize, u32)> {
        let i = self.base.partition_point(|&b| b <= x).checked_sub(1)?;
        (i + 1 < self.base.len()).then(|| (i, x - self.base[i]))
    }
}

/// The trace's task table: one task per node, `NAME[k]` (`T{i}[k]`), with the node's WCET and
/// its DAG task's deadline and period.
pub fn node_task_set(set: &DagSet) -> Result<TaskSet, ModelError> {
    let mut tasks = Vec::new();
    for (i, t) in set.iter().enumerate() {
        let label = t.name().map_or_else(|| format!("T{i}"), str::to_string);
        for (k, &c) in t.wcets().iter().enumerate() {
            tasks.push(Task {
                name: Some(format!("{label}[{k}]")),
                wcet: c,
                deadline: t.deadline(),
                period: t.period(),
                segments: None,
            });
        }
    }
    TaskSet::new(tasks)
}
