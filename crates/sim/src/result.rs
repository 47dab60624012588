//! What a simulation measured: [`SimResult`] (every number from `rtsched_trace::Metrics`) and
//! the [`OverheadReport`] of an overhead-aware run.

use crate::config::Scheduler;
use crate::overheads::Overheads;
use rtsched_model::Time;
use rtsched_trace::metrics::OverheadStats;
use rtsched_trace::{JobStats, Metrics, OverheadKind, TaskStats, Trace};
use serde::Serialize;

/// What a simulation measured (every number from `rtsched_trace::Metrics`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimResult {
    pub scheduler: String,
    pub m: u32,
    pub horizon: Time,
    pub horizon_capped: bool,
    /// Why the horizon was capped, when it was.
    pub horizon_message: Option<String>,
    /// Jobs released in `[0, horizon)`.
    pub jobs: u64,
    pub completed: u64,
    pub pending: u64,
    pub deadline_misses: u64,
    pub max_tardiness_ns: Time,
    pub max_response_time_ns: Option<Time>,
    pub preemptions: u64,
    pub migrations: u64,
    pub context_switches: u64,
    /// Self-suspensions up to the horizon (`Suspend` records), and the total time jobs spent
    /// suspended up to it, ns (docs/simulator.md, "Self-suspension").
    pub suspensions: u64,
    pub suspension_ns: Time,
    /// Scheduling events processed: releases, completions, quantum ticks (per CPU tick for
    /// staggered quanta, one per boundary for aligned).
    pub events: u64,
    pub per_task: Vec<TaskStats>,
    /// The overheads injected and what they cost, when `SimConfig::overheads` was set.
    pub overheads: Option<OverheadReport>,
    #[serde(skip)]
    pub per_job: Vec<JobStats>,
    #[serde(skip)]
    pub trace: Option<Trace>,
}

/// The values a simulation charged and the totals of the `Overhead` records it emitted up to
/// the horizon (counted by `MetricsBuilder`, like every metric).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverheadReport {
    pub values: Overheads,
    /// Per kind: release, schedule, context_switch, tick (CPU time) and ipi (latency).
    pub charged: Vec<OverheadStats>,
    /// CPU time charged: release + schedule + context_switch + tick.
    pub cpu_time_ns: u128,
}

impl OverheadReport {
    fn new(values: Overheads, all: &[OverheadStats]) -> OverheadReport {
        use OverheadKind::*;
        let charged: Vec<OverheadStats> = [Release, Schedule, ContextSwitch, Tick, Ipi]
            .iter()
            .filter_map(|k| all.iter().find(|s| s.kind == *k).copied())
            .collect();
        let cpu_time_ns = charged.iter().filter(|s| s.kind != Ipi).map(|s| s.total_ns).sum();
        OverheadReport { values, charged, cpu_time_ns }
    }
}

impl SimResult {
    pub(crate) fn from_metrics(
        sched: &Scheduler,
        m: Metrics,
        capped: Option<String>,
        events: u64,
        trace: Option<Trace>,
    ) -> SimResult {
        SimResult::from_metrics_ovh(sched, m, capped, events, trace, None)
    }

    pub(crate) fn from_metrics_ovh(
        sched: &Scheduler,
        m: Metrics,
        capped: Option<String>,
        events: u64,
        trace: Option<Trace>,
        ovh: Option<Overheads>,
    ) -> SimResult {
        SimResult {
            overheads: ovh.map(|v| OverheadReport::new(v, &m.overheads)),
            scheduler: sched.name(),
            m: m.m,
            horizon: m.horizon,
            horizon_capped: capped.is_some(),
            horizon_message: capped,
            jobs: m.jobs,
            completed: m.completed,
            pending: m.pending,
            deadline_misses: m.deadline_misses,
            max_tardiness_ns: m.max_tardiness_ns,
            max_response_time_ns: m.max_response_time_ns,
            preemptions: m.preemptions,
            migrations: m.migrations,
            context_switches: m.context_switches,
            suspensions: m.suspensions,
            suspension_ns: m.suspension_ns,
            events,
            per_task: m.per_task,
            per_job: m.per_job,
            trace,
        }
    }

    /// Per-job CSV (the columns of `Trace::to_job_csv`), available without keeping the trace.
    pub fn to_job_csv(&self) -> String {
        rtsched_trace::export::job_rows_csv(&self.per_job, self.horizon)
    }

    /// The summary (everything but per-job rows and the trace) as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("SimResult serialises")
    }
}
