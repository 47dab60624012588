//! One typed run request and its outcome: every decision a front (the CLI, the Python API, a
//! Rust caller) used to make around [`crate::run`] — which CPUs, whether the workload fits them,
//! the dedicated CPU, the default placement, the placement warnings and whether the measured
//! timing can be trusted — made here once, so that every caller gets the same answers.
//!
//! [`RunRequest::prepare`] decides (no thread starts): a [`PreparedRun`] with its [`Decision`]
//! (the CPUs, the placement, the warnings to print before the run); [`PreparedRun::run`] runs
//! it and returns a [`RunOutcome`] (the run's result and summary, its exports, and the trust
//! verdict of [`assess_timing`]). [`run_request`] does both.
//!
//! What stays with the front: checking the types of what a user typed, reading files, the
//! host protocol around a run (preflight, `--isolate`, the SCHED_FIFO throttling warning:
//! `python/rtsched/protocol.py`, `rtlimits.py`) and printing.

use crate::backend::forkjoin::{
    dag_job_csv, dag_slot_task_set, dag_summary, forkjoin_job_csv, forkjoin_summary, run_dag, run_forkjoin,
    slot_task_set,
};
use crate::backend::result::{to_trace, RunResult};
use crate::config::{IdleMode, RunConfig};
use crate::mechanism::registry::{self, DedicatedCpu, Entry, PlacementKind};
use crate::mechanism::Mechanism;
use crate::platform::body::ExecTime;
use crate::RunError;
use rtsched_analysis::partition::{default_partition, Admission, NotPlaced};
use rtsched_analysis::uni::fp::Priority;
use rtsched_analysis::{semi, Limits};
use rtsched_model::time::format_time;
use rtsched_model::{ModelError, Placement, Stop, TaskSet, Workload};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

mod calibration;
mod cpus;
mod placement;
mod trust;

pub use calibration::*;
pub use cpus::*;
pub use placement::*;
pub use trust::*;

/// The placement a request gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GivenPlacement {
    /// Task indices per CPU, `partition[c]` for the `c`-th CPU of the run (a plain partition).
    Partition(Vec<Vec<usize>>),
    /// A placement (`rtsched partition --json`), read with the model's strict reader
    /// ([`Placement::from_json`]) against the request's task set.
    Placement(Placement),
}

/// The placement a run was given or decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecidedPlacement {
    /// A global mechanism: none.
    None,
    /// Task indices per CPU of the run (the summary's `partition`).
    Partition(Vec<Vec<usize>>),
    /// An SP-RES reservation placement (the summary's `placement`).
    Reservations(Placement),
}

/// What a run's trace is exported as ([`RunOutcome::exports`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// The converted trace as JSON Lines (docs/trace.md).
    Jsonl,
    /// Perfetto / Chrome trace-event JSON.
    Perfetto,
    /// One row per job (per fork-join job for a fork-join run).
    JobCsv,
    /// The Gantt chart of the whole run, SVG.
    GanttSvg,
    /// LITMUS^RT's binary `sched_trace` records.
    SchedTrace,
    /// Every overhead sample of the run in ns, per term, in trace order (JSON).
    OverheadSamples,
}

impl ExportKind {
    const ALL: [(&'static str, ExportKind); 6] = [
        ("jsonl", ExportKind::Jsonl),
        ("perfetto", ExportKind::Perfetto),
        ("job_csv", ExportKind::JobCsv),
        ("gantt_svg", ExportKind::GanttSvg),
        ("sched_trace", ExportKind::SchedTrace),
        ("overhead_samples", ExportKind::OverheadSamples),
    ];

    /// The export named `name`; an unknown name is an error naming it.
    pub fn parse(name: &str) -> Result<ExportKind, RunError> {
        Self::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, k)| *k)
            .ok_or_else(|| RunError::input(format!("unknown export {name:?}")))
    }

    /// Its name (the key of the bindings' result).
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, k)| *k == self).map(|(n, _)| *n).unwrap_or("?")
    }
}

/// One export of a run: text, or bytes for `sched_trace`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportData {
    Text(String),
    Bytes(Vec<u8>),
}

/// Everything a run is asked with (`rtsched run` and `rtsched.run`'s options, typed).
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// The tasks: sporadic, fork-join or DAG (the last two under a mechanism that executes
    /// parallel jobs: its registry entry's `parallel`).
    pub workload: Workload,
    /// The processor count the workload file says it is made for (`"m"`), if any.
    pub m: Option<u32>,
    /// The registered mechanism's name (`mechanism::registry`).
    pub mechanism: String,
    /// The mechanism's parameters as (name, text) pairs, in the order given.
    pub params: Vec<(String, String)>,
    /// The task CPUs; `None`: the first `m` of [`RunRequest::allowed`] (the dedicated CPU left out).
    pub cpus: Option<Vec<usize>>,
    /// The CPUs this process may use, ascending ([`crate::platform::allowed_cpus`] by default).
    pub allowed: Vec<usize>,
    pub duration_ns: u64,
    /// `None`: the default placement of mechanisms that need one.
    pub placement: Option<GivenPlacement>,
    pub dedicated_cpu: Option<usize>,
    pub rt_priority: Option<i32>,
    pub idle: IdleMode,
    /// Run a workload made for more CPUs than the run has (its `m` or its utilization), with a
    /// warning, instead of refusing it.
    pub force: bool,
    pub seed: u64,
    /// Each job runs a fraction uniform in `[f, 1]` of its WCET (`None`: its WCET).
    pub exec_min_fraction: Option<f64>,
    pub exports: Vec<ExportKind>,
    /// Set it to end the run early (see [`RunConfig::stop`]).
    pub stop: Option<Arc<AtomicBool>>,
    /// What the trust verdict is judged against: the machine's calibration and the
    /// mechanism's overhead model ([`assess_timing`]).
    pub trust: TrustInputs,
    /// Self-suspending jobs: per task its execution and suspension segments
    /// ([`crate::body::Suspensions`]; empty: the task set's own `segments`, each suspension at
    /// its upper bound). A mechanism registered without `suspends` refuses them at prepare time.
    pub suspensions: crate::body::Suspensions,
}

impl RunRequest {
    /// A request to run `workload` under `mechanism` for `duration_ns`, with every option at
    /// its default (the process's allowed CPUs, no placement, normal priority, sleeping idle
    /// workers, seed 0, no exports).
    pub fn new(workload: impl Into<Workload>, mechanism: &str, duration_ns: u64) -> RunRequest {
        RunRequest {
            workload: workload.into(),
            m: None,
            mechanism: mechanism.to_string(),
            params: Vec::new(),
            cpus: None,
            allowed: crate::platform::allowed_cpus(),
            duration_ns,
            placement: None,
            dedicated_cpu: None,
            rt_priority: None,
            idle: IdleMode::Sleep,
            force: false,
            seed: 0,
            exec_min_fraction: None,
            exports: Vec::new(),
            stop: None,
            trust: TrustInputs::default(),
            suspensions: Default::default(),
        }
    }

    /// Decides the run ([`RunRequest::prepare_with`] without a way to stop the placement search).
    pub fn prepare(self) -> Result<PreparedRun, RunError> {
        self.prepare_with(&Stop::never())
    }

    /// Decides the run without starting it, in the order a user's mistakes are reported: the
    /// mechanism, the dedicated CPU it requires, the CPUs (and whether the workload fits
    /// them), the placement (given, or the default: `default_partition` for a partitioned
    /// mechanism, the SP-RES cascade for `spres`), the mechanism's parameters. `stop` ends a
    /// long placement search (its answer is then an error the caller discards).
    pub fn prepare_with(self, stop: &Stop) -> Result<PreparedRun, RunError> {
        let entry = registry::find(&self.mechanism)?;
        if !matches!(self.workload, Workload::Sporadic(_)) && !entry.parallel {
            return Err(registry::sequential_only(entry.name, self.workload.kind()));
        }
        let ts = match &self.workload {
            Workload::Sporadic(ts) => Some(ts),
            Workload::ForkJoin(_) | Workload::Dag(_) => None,
        };
        let suspending = match ts {
            Some(ts) => !crate::body::Suspensions::effective(&self.suspensions, ts).is_empty(),
            None => !self.suspensions.is_empty(),
        };
        if suspending {
            let Some(ts) = ts else {
                return Err(RunError::Config(
                    "self-suspension segments apply to sporadic tasks, not to fork-join or DAG jobs".into(),
                ));
            };
            self.suspensions.validate(ts)?;
            if !entry.suspends {
                return Err(RunError::Config(format!(
                    "{} does not execute self-suspending jobs, and the task set's jobs suspend ({})",
                    entry.name,
                    crate::backend::engine::suspending_mechanisms()
                )));
            }
        }
        if entry.dedicated == DedicatedCpu::Required && self.dedicated_cpu.is_none() && ts.is_some() {
            let m = self.m.map(u64::from);
            let advice =
                dedicated_advice(entry.name, entry.dedicated_role, m, None, &self.allowed, self.cpus.as_deref());
            return Err(RunError::Placement(advice));
        }
        let (cpus, warnings) = match ts {
            Some(ts) => decide_cpus(ts, self.m, self.cpus.as_deref(), &self.allowed, self.dedicated_cpu, self.force)?,
            None => (decide_forkjoin_cpus(self.m, self.cpus.as_deref(), &self.allowed, self.force)?, Vec::new()),
        };
        let mut placement_warnings = Vec::new();
        let mut notes = Vec::new();
        let placement = match ts {
            Some(ts) => {
                let m = cpus.len();
                decide_placement(entry, ts, m, &self.params, self.placement.as_ref(), stop)?
                    .inspect_warning(&mut placement_warnings)
                    .inspect_note(&self.mechanism, &mut notes)
                    .placement
            }
            None if self.placement.is_some() => {
                return Err(RunError::Placement(format!(
                    "{} runs a {} workload without a placement (its mechanisms are global)",
                    self.mechanism,
                    self.workload.kind()
                )))
            }
            None => DecidedPlacement::None,
        };
        let mut mech = Mechanism::named(entry.name)?;
        match &placement {
            DecidedPlacement::Partition(p) => mech = mech.with_partition(p.clone()),
            DecidedPlacement::Reservations(p) => mech = mech.with_reservations(p.clone()),
            DecidedPlacement::None if entry.placement == PlacementKind::Partition => {
                return Err(RunError::Config(format!("{} needs a partition (task indices per CPU)", entry.name)))
            }
            DecidedPlacement::None => {}
        }
        let mech = mech.with_params(self.params.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
        let decision = Decision { cpus, placement, warnings, placement_warnings, notes };
        Ok(PreparedRun { request: self, entry, mechanism: mech, decision })
    }
}

/// What [`RunRequest::prepare`] decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The task CPUs, worker `i` on `cpus[i]`.
    pub cpus: Vec<usize>,
    pub placement: DecidedPlacement,
    /// Warnings about the run's size (a workload made for more CPUs, run with `force`): said
    /// before the run and listed in the summary's `warnings`.
    pub warnings: Vec<String>,
    /// Warnings about the placement (hard reservations made without overheads): said before
    /// the run, not listed in the summary's `warnings`.
    pub placement_warnings: Vec<String>,
    /// What was decided for the user (the default placement, and how it was made).
    pub notes: Vec<String>,
}

/// A decided run, ready to start.
#[derive(Debug, Clone)]
pub struct PreparedRun {
    pub request: RunRequest,
    entry: &'static Entry,
    mechanism: Mechanism,
    pub decision: Decision,
}

/// A run's result with the judgement of its timing.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub result: RunResult,
    /// The run's summary ([`RunResult::summary_json`]; a fork-join run's adds `"forkjoin"`,
    /// its job-level results).
    pub summary: Value,
    /// Whether the measured timing can be trusted ([`assess_timing`]), and why.
    pub trustworthy: bool,
    pub trustworthy_reason: String,
    /// The checks the verdict could not make for this mechanism ([`TrustVerdict::unchecked`]).
    pub trust_unchecked: Vec<String>,
    /// The requested exports, in the order asked.
    pub exports: Vec<(ExportKind, ExportData)>,
}

impl PreparedRun {
    /// The mechanism's registry entry.
    pub fn entry(&self) -> &'static Entry {
        self.entry
    }

    /// The mechanism with its placement and parameters.
    pub fn mechanism(&self) -> &Mechanism {
        &self.mechanism
    }

    /// The run's configuration (CPUs, duration, priority, ...).
    pub fn config(&self) -> RunConfig {
        let r = &self.request;
        let mut cfg = RunConfig::new(self.decision.cpus.clone(), r.duration_ns);
        cfg.dedicated_cpu = r.dedicated_cpu;
        cfg.rt_priority = r.rt_priority;
        cfg.idle = r.idle;
        cfg.force = r.force;
        cfg.seed = r.seed;
        if let Some(f) = r.exec_min_fraction {
            cfg.exec = ExecTime::Uniform { min_fraction: f };
        }
        cfg.stop = r.stop.clone();
        cfg.suspensions = r.suspensions.clone();
        cfg
    }

    /// Runs it: the result, the summary, the trust verdict and the exports.
    pub fn run(&self) -> Result<RunOutcome, RunError> {
        let cfg = self.config();
        let (result, summary, exports) = match &self.request.workload {
            Workload::Sporadic(ts) => {
                let r = crate::run(ts, &self.mechanism, &cfg)?;
                let summary = r.summary_json();
                let exports = exports(&r, &self.request.exports, || Ok(ts.clone()), |tr| Ok(tr.to_job_csv()?))?;
                (r, summary, exports)
            }
            Workload::Dag(set) => {
                let r = run_dag(set, &self.mechanism, &cfg)?;
                let mut summary = r.summary_json();
                summary["dag"] = dag_summary(set, &r);
                let exports =
                    exports(&r, &self.request.exports, || dag_slot_task_set(set), |_| Ok(dag_job_csv(set, &r)))?;
                (r, summary, exports)
            }
            Workload::ForkJoin(set) => {
                let r = run_forkjoin(set, &self.mechanism, &cfg)?;
                let mut summary = r.summary_json();
                summary["forkjoin"] = forkjoin_summary(set, &r);
                let exports =
                    exports(&r, &self.request.exports, || slot_task_set(set), |_| Ok(forkjoin_job_csv(set, &r)))?;
                (r, summary, exports)
            }
        };
        let mut summary = summary;
        summary["trust_facts"] = trust_facts_json(result.trace.meta.tasks.len(), &misses_in_interference(&result));
        let terms = entry_terms(self.entry);
        let mech = TrustMechanism::of(self.entry, &terms);
        let v =
            assess_timing(&TimingFacts::from_summary(&summary), &mech, self.request.rt_priority, &self.request.trust);
        summary["trust_reference"] = v.reference.to_json();
        Ok(RunOutcome {
            result,
            summary,
            trustworthy: v.trustworthy,
            trustworthy_reason: v.reason,
            trust_unchecked: v.unchecked,
            exports,
        })
    }
}

/// Decides and runs `request` ([`RunRequest::prepare`], then [`PreparedRun::run`]).
pub fn run_request(request: RunRequest) -> Result<RunOutcome, RunError> {
    request.prepare()?.run()
}

/// The requested exports of a run, in the order asked; the trace is converted once, for the
/// task set `ts` (per thread slot for a fork-join run), and the job CSV is `job_csv`'s.
fn exports(
    r: &RunResult,
    asked: &[ExportKind],
    ts: impl FnOnce() -> Result<TaskSet, RunError>,
    job_csv: impl Fn(&rtsched_trace::Trace) -> Result<String, RunError>,
) -> Result<Vec<(ExportKind, ExportData)>, RunError> {
    let mut out = Vec::new();
    let mut trace = None;
    let mut ts = Some(ts);
    for &k in asked {
        if k == ExportKind::OverheadSamples {
            out.push((k, ExportData::Text(serde_json::json!(r.overheads).to_string())));
            continue;
        }
        if trace.is_none() {
            let ts = ts.take().map(|f| f()).transpose()?.unwrap_or_default();
            trace = Some(to_trace(r, &ts)?);
        }
        let Some(tr) = trace.as_ref() else { continue };
        let data = match k {
            ExportKind::Jsonl => ExportData::Text(tr.to_jsonl()),
            ExportKind::Perfetto => ExportData::Text(tr.to_perfetto_json()),
            ExportKind::JobCsv => ExportData::Text(job_csv(tr)?),
            ExportKind::GanttSvg => ExportData::Text(tr.to_gantt_svg(None)),
            ExportKind::SchedTrace => ExportData::Bytes(tr.to_sched_trace_bytes()?),
            ExportKind::OverheadSamples => continue,
        };
        out.push((k, data));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
