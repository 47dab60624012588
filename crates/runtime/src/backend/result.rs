//! What a run produces, computed from its own trace by `rtsched_trace` — exactly as the
//! simulator's results are (the one metrics path): the run's records are converted into a
//! [`Trace`] (`backend::to_trace`), and the per-job table, the job accounting, the deadline
//! misses, tardiness and response times come from that trace's [`Metrics`], the overhead
//! statistics from its overhead samples ([`SampleStats`]), and the priority-inversion time from
//! the monitor over it ([`rtsched_trace::monitor`]) against the invariant the mechanism's
//! registry entry promises. So the summary, the per-job CSV, Perfetto and the Gantt chart of a
//! run always agree.
//!
//! Definitions (all ns, relative to the run's time zero; the trace crate's, `docs/trace.md`):
//! * release = the job's due release time; deadline = release + D;
//! * start = first run; finish = completion (by the horizon); response time = finish − release;
//! * a deadline miss: a job whose deadline is ≤ the horizon and that had not completed by it —
//!   a job still pending past its deadline at the end is a miss, as in the simulator;
//!   tardiness = max(0, finish − deadline), for a pending job past its deadline the lower bound
//!   horizon − deadline;
//! * release latency = start − release (timer due → job starts; it includes waiting for
//!   higher-priority jobs, so it is an overhead only when the job is among the m
//!   highest-priority pending jobs at its release — true in light loads);
//! * overhead terms (seed 000 §IV-A, and each mechanism's own, by its registry entry):
//!   `release` Δrel (handler start → end), `release_event` Δev (due → handler start),
//!   `schedule` Δsch (scheduler entry → exit, lock waits included), `lock_wait` (the waits
//!   alone), `context_switch` Δcxs (dispatch), `ipi` Δipi (send → noticed), `tick` Δtck and
//!   `timer` where a mechanism uses them.
//!
//! A run that dropped trace records (a full buffer) keeps only a prefix of each overflowing
//! buffer: its metrics are taken at the time of the first lost record (`metrics.horizon`), the
//! last instant up to which the trace is complete, and its trace cannot be exported.

use super::to_trace::{convert, Conversion};
use crate::clock::TscCalibration;
use crate::config::{IdleMode, RunConfig};
use crate::mechanism::registry::{Backend, InvariantKind, ENGINE_TERMS};
use crate::mechanism::{Accounting, Mechanism};
use crate::tracer::{RecKind, Record, TraceBuffer};
use crate::RunError;
use rtsched_model::{ModelError, TaskSet};
use rtsched_policy::Invariant;
use rtsched_trace::monitor::{priority_inversion_report, tracking_bound_ns, PiReport};
use rtsched_trace::stats::{INTERFERENCE_GAP_NS, INTERFERENCE_WAIT_NS};
use rtsched_trace::{Metrics, MetricsBuilder, OverheadStats, SampleStats, Trace, TraceMeta, INTERFERENCE_TERM};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// One job's outcome (from the run's metrics).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobRecord {
    pub task: u32,
    pub job: u32,
    pub release_ns: u64,
    pub deadline_ns: u64,
    pub start_ns: Option<u64>,
    /// Completion by the horizon.
    pub finish_ns: Option<u64>,
    /// OS CPU number of the completion (or of the last execution, if pending).
    pub cpu: Option<usize>,
    pub deadline_miss: bool,
    /// For a completed job max(0, finish − deadline); for a job pending past its deadline at
    /// the horizon, horizon − deadline (a lower bound); 0 otherwise.
    pub tardiness_ns: u64,
    pub response_time_ns: Option<u64>,
}

/// Summary statistics of a sample (nearest-rank percentiles): `rtsched_trace`'s.
pub type Stats = SampleStats;

/// Job accounting at the end of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobAccounting {
    /// Jobs released in `[0, horizon)` (every job due in `[0, duration)` is released).
    pub released: u64,
    /// Completed by the horizon.
    pub completed: u64,
    /// Released and not completed by the horizon.
    pub pending: u64,
    /// `None` if the trace's release and completion records agree with the mechanism's own
    /// counts and the mechanism lost no job; otherwise what failed.
    pub error: Option<String>,
}

/// The mechanism's promise the monitor checks a run against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Promise {
    /// The policy's invariant.
    Invariant(Invariant),
    /// None can be checked (why).
    Unobservable(String),
}

/// Why a run has no priority-inversion report (`Display`: the summary's
/// `priority_inversion_error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoPiReport {
    /// The mechanism's schedule cannot be checked: the reason its registry entry gives, or why
    /// its invariant could not be built.
    Unobservable(String),
    /// The trace lost `dropped` records, so the monitor cannot judge it.
    Incomplete { dropped: u64 },
    /// The monitor rejected the run's trace or the invariant does not fit it.
    Monitor(ModelError),
}

impl fmt::Display for NoPiReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoPiReport::Unobservable(why) => f.write_str(why),
            NoPiReport::Incomplete { dropped } => write!(f, "the trace is incomplete: {dropped} records dropped"),
            NoPiReport::Monitor(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for NoPiReport {}

/// Everything a run measured.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub scheduler: String,
    pub m: usize,
    pub cpus: Vec<usize>,
    pub dedicated_cpu: Option<usize>,
    /// The time actually run: the configured duration, or less if the run was stopped early.
    pub duration_ns: u64,
    /// The run was stopped early (`RunConfig::stop`); its results cover `duration_ns`.
    pub interrupted: bool,
    /// What the run's idle workers did (`RunConfig::idle`); `None` under kernel-sd, whose
    /// idle CPUs are the kernel's.
    pub idle: Option<IdleMode>,
    /// Per job, from the metrics.
    pub jobs: Vec<JobRecord>,
    /// Per-buffer trace records with `ts` converted to ns since time zero (saturating at 0).
    pub traces: Vec<Vec<Record>>,
    /// The run's trace in the `rtsched-trace` vocabulary (what every export writes).
    pub trace: Trace,
    /// The metrics of [`trace`](Self::trace), at its horizon.
    pub metrics: Metrics,
    /// Overhead samples (ns, or a term's unit) per term name, from the trace (all of them,
    /// disturbed ones included; the pseudo-term `host_interference` holds the interference).
    pub overheads: BTreeMap<String, Vec<u64>>,
    /// The terms the summary lists even without samples (the engine's and the mechanism's).
    pub terms: Vec<String>,
    /// Release latency samples (ns), one per started job.
    pub release_latency: Vec<u64>,
    pub dropped_records: u64,
    pub accounting: JobAccounting,
    /// Released / completed per task, from the mechanism.
    pub per_task: Accounting,
    /// Largest gap between two preemption polls of a job body (includes host preemptions).
    pub max_poll_gap_ns: u64,
    /// Trace counter rate (Hz) found by calibration.
    pub counter_hz: f64,
    /// What the monitor checked.
    pub promise: Promise,
    /// The priority-inversion report, or why there is none.
    pub priority_inversion: Result<PiReport, NoPiReport>,
    /// The mechanism's parameters (JSON object).
    pub params: Value,
}

/// What the backends hand to [`RunResult::build`] besides the records: what the mechanism's
/// registry entry says about the run.
pub(crate) struct RunInfo {
    pub scheduler: &'static str,
    /// The mechanism's own overhead terms by term id.
    pub own_terms: Vec<&'static str>,
    /// The terms the summary lists (the engine's, for a uniform schema, and the mechanism's).
    pub declared: Vec<String>,
    /// The declared terms on the path from an event to the dispatch that answers it.
    pub tracking: Vec<String>,
    pub promise: Promise,
    pub params: Value,
    /// Per-task lanes (kernel-sd).
    pub kernel: bool,
}

impl RunInfo {
    /// From the mechanism's registry entry, for a run of `ts` on `m` CPUs.
    pub(crate) fn of(mech: &Mechanism, ts: &TaskSet, m: usize) -> RunInfo {
        let e = mech.entry();
        let mut declared: Vec<String> = ENGINE_TERMS.iter().map(|t| t.name.to_string()).collect();
        for t in e.terms {
            if !declared.iter().any(|d| d == t.name) {
                declared.push(t.name.to_string());
            }
        }
        let tracking = e.all_terms().iter().filter(|t| t.tracking).map(|t| t.name.to_string()).collect();
        let promise = match mech.invariant(ts, m) {
            Ok(Some(inv)) => Promise::Invariant(inv),
            Ok(None) => Promise::Unobservable(match e.invariant {
                InvariantKind::Unobservable(why) => why.to_string(),
                _ => format!("{}: no invariant", e.name),
            }),
            Err(err) => Promise::Unobservable(err.to_string()),
        };
        RunInfo {
            scheduler: e.name,
            own_terms: e.terms.iter().map(|t| t.name).collect(),
            declared,
            tracking,
            promise,
            params: mech.params().to_json(),
            kernel: matches!(e.backend, Backend::KernelSd),
        }
    }
}

impl RunResult {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build(
        ts: &TaskSet,
        info: RunInfo,
        cfg: &RunConfig,
        t0: u64,
        duration_ns: u64,
        interrupted: bool,
        cal: &TscCalibration,
        buffers: Vec<TraceBuffer>,
        acc: Accounting,
        max_poll_gap_ns: u64,
    ) -> RunResult {
        let dropped: u64 = buffers.iter().map(|b| b.dropped()).sum();
        let to_rel = |c: u64| cal.to_ns(c).saturating_sub(t0);
        let traces: Vec<Vec<Record>> =
            buffers.iter().map(|b| b.records().iter().map(|r| Record { ts: to_rel(r.ts), ..*r }).collect()).collect();
        // With lost records the trace is complete only up to the first one lost.
        let complete_until = buffers
            .iter()
            .zip(&traces)
            .filter(|(b, _)| b.dropped() > 0)
            .map(|(_, recs)| recs.last().map_or(0, |r| r.ts))
            .min()
            .unwrap_or(u64::MAX);
        let horizon = duration_ns.min(complete_until);
        let conv = Conversion { ts, kernel: info.kernel, m: cfg.cpus.len(), terms: &info.own_terms, horizon, t0, cal };
        let mut errors: Vec<String> = Vec::new();
        let trace = convert(&conv, &traces).unwrap_or_else(|e| {
            errors.push(format!("the run's records do not convert to a trace: {e}"));
            Trace { meta: TraceMeta::new(ts, cfg.cpus.len() as u32, horizon), records: Vec::new() }
        });
        let metrics = trace.metrics().unwrap_or_else(|e| {
            errors.push(format!("the run's trace is inconsistent: {e}"));
            MetricsBuilder::new(ts.len(), trace.meta.m, horizon).finish()
        });
        let overheads = trace.overhead_samples();
        let priority_inversion = match &info.promise {
            Promise::Unobservable(why) => Err(NoPiReport::Unobservable(why.clone())),
            _ if dropped > 0 => Err(NoPiReport::Incomplete { dropped }),
            Promise::Invariant(inv) => {
                let bound = tracking_bound_ns(&trace, &info.tracking);
                priority_inversion_report(&trace, inv, bound).map_err(NoPiReport::Monitor)
            }
        };
        let mut res = RunResult {
            scheduler: info.scheduler.into(),
            m: cfg.cpus.len(),
            cpus: cfg.cpus.clone(),
            dedicated_cpu: cfg.dedicated_cpu,
            duration_ns,
            interrupted,
            idle: (!info.kernel).then_some(cfg.idle),
            jobs: Vec::new(),
            traces,
            trace,
            metrics,
            overheads,
            terms: info.declared,
            release_latency: Vec::new(),
            dropped_records: dropped,
            accounting: JobAccounting { released: 0, completed: 0, pending: 0, error: None },
            per_task: acc,
            max_poll_gap_ns,
            counter_hz: cal.ticks_per_second(),
            promise: info.promise,
            priority_inversion,
            params: info.params,
        };
        res.build_jobs(errors);
        res
    }

    fn cpu_of_buffer(&self, b: u16) -> Option<usize> {
        self.cpus.get(b as usize).copied().or(self.dedicated_cpu)
    }

    /// The per-job table, release latencies and accounting from the metrics; the accounting
    /// check compares the raw records with the mechanism's own counts.
    fn build_jobs(&mut self, mut errors: Vec<String>) {
        let h = self.metrics.horizon;
        // The CPU of each job's last record (OS numbering): not a metric, read from the records.
        let mut cpu: HashMap<(u32, u32), usize> = HashMap::new();
        let (mut raw_released, mut raw_completed) = (0u64, 0u64);
        for r in self.traces.iter().flatten() {
            match r.kind {
                RecKind::JobRelease => raw_released += 1,
                RecKind::JobStart | RecKind::JobResume | RecKind::JobComplete => {
                    raw_completed += u64::from(r.kind == RecKind::JobComplete);
                    if let Some(c) = self.cpu_of_buffer(r.cpu) {
                        cpu.insert((r.task, r.job), c);
                    }
                }
                _ => {}
            }
        }
        self.jobs = self
            .metrics
            .per_job
            .iter()
            .map(|j| JobRecord {
                task: j.task,
                job: j.job,
                release_ns: j.release,
                deadline_ns: j.deadline,
                start_ns: j.start,
                finish_ns: j.finish,
                cpu: cpu.get(&(j.task, j.job)).copied(),
                deadline_miss: j.missed(h),
                tardiness_ns: j.tardiness(h).unwrap_or(0),
                response_time_ns: j.response_time(),
            })
            .collect();
        self.jobs.sort_by_key(|j| (j.task, j.job));
        self.release_latency =
            self.jobs.iter().filter_map(|j| j.start_ns.map(|s| s.saturating_sub(j.release_ns))).collect();
        let acc = &self.per_task;
        let (pr, pc): (u64, u64) =
            (acc.released.iter().map(|&x| x as u64).sum(), acc.completed.iter().map(|&x| x as u64).sum());
        if self.dropped_records == 0 && (pr != raw_released || pc != raw_completed) {
            errors.push(format!(
                "trace has {raw_released} releases / {raw_completed} completions, mechanism counts {pr} / {pc}"
            ));
        }
        for t in 0..acc.released.len() {
            if acc.completed[t] > acc.released[t] {
                errors.push(format!("task {t}: completed {} > released {}", acc.completed[t], acc.released[t]));
            }
        }
        if let Err(e) = &acc.consistent {
            errors.push(e.to_string());
        }
        let mt = &self.metrics;
        self.accounting =
            JobAccounting { released: mt.jobs, completed: mt.completed, pending: mt.pending, error: errors.pop() };
    }

    /// Checks the trace's well-formedness: per-buffer timestamps in order; every start or
    /// resume preceded by its job's release; at most one completion per job and jobs of a
    /// task completing in order; on each CPU, run intervals alternate (start/resume, then
    /// preempt/complete of the same job); no job runs on two CPUs at once. Fails on an
    /// incomplete (dropped) trace ([`RunError::Trace`]); a trace that is not well formed is a
    /// bug ([`RunError::Internal`]).
    pub fn check_trace(&self) -> Result<(), RunError> {
        if self.dropped_records > 0 {
            return Err(RunError::Trace(format!("the trace is incomplete: {} records dropped", self.dropped_records)));
        }
        let mut released: HashMap<(u32, u32), u64> = HashMap::new();
        for r in self.traces.iter().flatten() {
            if r.kind == RecKind::JobRelease && released.insert((r.task, r.job), r.ts).is_some() {
                return Err(RunError::Internal(format!("job {}:{} released twice", r.task, r.job)));
            }
        }
        let mut intervals: HashMap<(u32, u32), Vec<(u64, u64)>> = HashMap::new();
        let mut completions: HashMap<(u32, u32), u64> = HashMap::new();
        for (b, recs) in self.traces.iter().enumerate() {
            if let Some(w) = recs.windows(2).find(|w| w[1].ts < w[0].ts) {
                return Err(RunError::Internal(format!(
                    "buffer {b}: {} at {} after {} at {}",
                    w[1].kind.name(),
                    w[1].ts,
                    w[0].kind.name(),
                    w[0].ts
                )));
            }
            let mut running: Option<(u32, u32, u64)> = None;
            for r in recs {
                let key = (r.task, r.job);
                match r.kind {
                    RecKind::JobStart | RecKind::JobResume => {
                        if let Some((t, j, _)) = running {
                            return Err(RunError::Internal(format!(
                                "buffer {b}: {}:{} starts while {t}:{j} runs",
                                r.task, r.job
                            )));
                        }
                        match released.get(&key) {
                            Some(&rt) if rt <= r.ts => {}
                            _ => {
                                return Err(RunError::Internal(format!(
                                    "job {}:{} starts at {} before its release",
                                    r.task, r.job, r.ts
                                )))
                            }
                        }
                        running = Some((r.task, r.job, r.ts));
                    }
                    RecKind::JobPreempt | RecKind::JobComplete | RecKind::JobSuspend => {
                        match running {
                            Some((t, j, s)) if (t, j) == key => intervals.entry(key).or_default().push((s, r.ts)),
                            _ => {
                                return Err(RunError::Internal(format!(
                                    "buffer {b}: {} of {}:{} that is not running",
                                    r.kind.name(),
                                    r.task,
                                    r.job
                                )))
                            }
                        }
                        running = None;
                        if r.kind == RecKind::JobComplete && completions.insert(key, r.ts).is_some() {
                            return Err(RunError::Internal(format!("job {}:{} completes twice", r.task, r.job)));
                        }
                    }
                    _ => {}
                }
            }
            if let Some((t, j, s)) = running {
                intervals.entry((t, j)).or_default().push((s, u64::MAX));
            }
        }
        for (k, iv) in intervals.iter_mut() {
            iv.sort_unstable();
            if let Some(w) = iv.windows(2).find(|w| w[1].0 < w[0].1) {
                return Err(RunError::Internal(format!(
                    "job {}:{} runs on two CPUs at once ({:?} and {:?})",
                    k.0, k.1, w[0], w[1]
                )));
            }
        }
        let mut by_task: BTreeMap<u32, Vec<(u64, u32)>> = BTreeMap::new();
        for (&(t, j), &f) in &completions {
            by_task.entry(t).or_default().push((f, j));
        }
        for (t, mut v) in by_task {
            v.sort_unstable();
            for (i, &(_, j)) in v.iter().enumerate() {
                if j != i as u32 {
                    return Err(RunError::Internal(format!(
                        "task {t}: completion #{i} is job {j} (out of order or missing)"
                    )));
                }
            }
        }
        Ok(())
    }

    pub fn deadline_misses(&self) -> usize {
        self.metrics.deadline_misses as usize
    }

    /// The run summary as JSON (field list in docs/runtime.md): every schedule figure from the
    /// run's own trace ([`metrics`](Self::metrics)), every overhead statistic from its samples,
    /// the priority inversion from the monitor over it.
    pub fn summary_json(&self) -> Value {
        let mt = &self.metrics;
        let rt: Vec<u64> = self.jobs.iter().filter_map(|j| j.response_time_ns).collect();
        let rts = Stats::of(&rt);
        let rl = Stats::of(&self.release_latency);
        // Every term's statistics under the measurement protocol: samples disturbed by host
        // interference discarded, the outlier rule on the maximum (rtsched_trace::OverheadStats).
        let stats = self.trace.overhead_stats();
        let empty = OverheadStats::of(&[], &Default::default());
        let mut ov = serde_json::Map::new();
        for k in self.terms.iter().chain(self.overheads.keys()) {
            if !ov.contains_key(k) && k != INTERFERENCE_TERM {
                let v = stats.get(k).unwrap_or(&empty);
                ov.insert(k.clone(), serde_json::to_value(v).unwrap_or(Value::Null));
            }
        }
        let (intervals, total) = self.trace.interference().totals();
        let longest = stats.get(INTERFERENCE_TERM).map_or(0, |s| s.max_raw_ns);
        let (pi, pi_detail, pi_error) = match &self.priority_inversion {
            Ok(r) => (json!(r.total_ns), json!(r), Value::Null),
            Err(e) => (Value::Null, Value::Null, json!(e.to_string())),
        };
        json!({
            "scheduler": self.scheduler,
            "params": self.params,
            "m": self.m,
            "cpus": self.cpus,
            "dedicated_cpu": self.dedicated_cpu,
            "duration_ns": self.duration_ns,
            "interrupted": self.interrupted,
            "idle": self.idle,
            "jobs": mt.jobs,
            "released": self.accounting.released,
            "completed": self.accounting.completed,
            "pending": self.accounting.pending,
            "accounting_error": self.accounting.error,
            "deadline_misses": mt.deadline_misses,
            "max_tardiness_ns": mt.max_tardiness_ns,
            "response_time_ns": {"avg": rts.avg_ns, "p99": rts.p99_ns, "max": rts.max_ns},
            "release_latency_ns": {"avg": rl.avg_ns, "p50": rl.p50_ns, "p99": rl.p99_ns, "max": rl.max_ns},
            "preemptions": mt.preemptions,
            "migrations": mt.migrations,
            "context_switches": mt.context_switches,
            "steals": mt.steals,
            "suspensions": mt.suspensions,
            "suspension_ns": mt.suspension_ns,
            "metrics_horizon_ns": mt.horizon,
            "dropped_records": self.dropped_records,
            "overheads": ov,
            "interference": {
                "intervals": intervals,
                "total_ns": total,
                "max_ns": longest,
                "gap_threshold_ns": INTERFERENCE_GAP_NS,
                "wait_threshold_ns": INTERFERENCE_WAIT_NS,
            },
            "max_poll_gap_ns": self.max_poll_gap_ns,
            "counter_hz": self.counter_hz,
            "priority_inversion_ns": pi,
            "priority_inversion": pi_detail,
            "priority_inversion_error": pi_error,
        })
    }
}

/// The trace of a run (a copy of [`RunResult::trace`]) for
/// export. Errors when `ts` is not the run's task set (an input error) or the run dropped records
/// ([`RunError::Trace`]) (an
/// incomplete trace cannot be exported faithfully; the summary then covers only the time up to
/// the first lost record, see `RunResult`).
pub fn to_trace(r: &RunResult, ts: &TaskSet) -> Result<Trace, RunError> {
    if r.dropped_records > 0 {
        return Err(RunError::Trace(format!(
            "the run dropped {} trace records; raise the trace capacity to convert it",
            r.dropped_records
        )));
    }
    if ts.len() != r.trace.meta.tasks.len() {
        return Err(RunError::input(format!(
            "the run had {} tasks but the task set has {}",
            r.trace.meta.tasks.len(),
            ts.len()
        )));
    }
    Ok(r.trace.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_use_nearest_rank() {
        let s = Stats::of(&(1..=100).collect::<Vec<u64>>());
        assert_eq!((s.count, s.p50_ns, s.p99_ns, s.max_ns), (100, 50, 99, 100));
        assert_eq!(s.avg_ns, 50.5);
        assert_eq!(Stats::of(&[]).count, 0);
    }
}
