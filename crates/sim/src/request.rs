//! One typed simulate request and its outcome: what `rtsched simulate` and `rtsched.simulate`
//! ask, with every decision made here (docs/simulator.md, "Command line"), so that a Rust
//! caller gets the answer a Python one gets.
//!
//! [`simulate_request`] checks the request (processor count, execution fraction, overhead
//! statistic), turns the scheduler name and parameters into a [`Scheduler`](crate::Scheduler) through the
//! registry ([`crate::registry::build`]: the given placement, or the default partition of
//! P-EDF / P-FP, or the SP-RES cascade of Brandenburg & Gül, RTSS 2016), evaluates the
//! overhead model at the task count, simulates the workload ([`crate::simulate_workload`]:
//! sporadic or fork-join, one entry point) and returns the documented summary object with the
//! requested exports of the trace.

use crate::config::{Arrivals, ExecTimes, SimConfig};
use crate::error::SimError;
use crate::overheads::{simulator_view, OverheadSpec, OverheadStat, Overheads};
use crate::registry::{self, BuildError, ParamArg};
use crate::result::SimResult;
use crate::{simulate_workload, Simulated};
use rtsched_analysis::partition::NotPlaced;
use rtsched_model::{ModelError, Placement, Stop, Time, Workload};
use rtsched_trace::Trace;
use serde_json::{json, Value};

/// A file the simulation can export from its trace or its jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Export {
    /// The trace as JSON Lines (docs/trace.md).
    Jsonl,
    /// A Perfetto / Chrome trace.
    Perfetto,
    /// LITMUS^RT `sched_trace` records.
    SchedTrace,
    /// One CSV row per job.
    JobCsv,
    /// The SVG Gantt chart of the whole horizon.
    GanttSvg,
}

impl Export {
    pub const ALL: [Export; 5] =
        [Export::Jsonl, Export::Perfetto, Export::SchedTrace, Export::JobCsv, Export::GanttSvg];

    /// The name the bindings use (`"jsonl"`, `"perfetto"`, `"sched_trace"`, `"job_csv"`, `"gantt_svg"`).
    pub fn name(self) -> &'static str {
        match self {
            Export::Jsonl => "jsonl",
            Export::Perfetto => "perfetto",
            Export::SchedTrace => "sched_trace",
            Export::JobCsv => "job_csv",
            Export::GanttSvg => "gantt_svg",
        }
    }

    /// The export named `name`; an unknown name is an error of field `outputs`.
    pub fn parse(name: &str) -> Result<Export, ModelError> {
        Export::ALL
            .into_iter()
            .find(|e| e.name() == name)
            .ok_or_else(|| ModelError::field("outputs", format!("unknown output {name:?}")))
    }

    /// Whether the export is drawn from the trace (which must then be recorded).
    fn needs_trace(self) -> bool {
        !matches!(self, Export::JobCsv)
    }
}

/// What to simulate and how.
#[derive(Debug, Clone)]
pub struct SimRequest {
    pub workload: Workload,
    /// The processor count (the bindings fold in the file's `"m"`); `None` is an error.
    pub m: Option<u32>,
    /// A registered scheduler name ([`crate::registry`]; ASCII case ignored).
    pub scheduler: String,
    /// The scheduler's parameters (its registry entry declares them).
    pub params: Vec<(String, ParamArg)>,
    /// A partition (P-EDF, P-FP: every task one whole reservation) or reservations (SP-RES);
    /// `None`: the scheduler's default placement.
    pub placement: Option<Placement>,
    /// End of the simulation; `None`: one hyperperiod, capped (the summary says when).
    pub horizon: Option<Time>,
    /// Sporadic arrivals: each gap is the period plus a uniform delay in `[0, sporadic]`.
    pub sporadic: Option<Time>,
    /// Execution times uniform in `[f·C, C]`, `f` in `(0, 1]`.
    pub exec_fraction: Option<f64>,
    /// Self-suspending tasks: each suspension drawn uniformly between its bounds (seeded by
    /// `seed`) instead of lasting its upper bound.
    pub draw_suspensions: bool,
    /// Seeds the sporadic delays, the execution times and the drawn suspensions.
    pub seed: u64,
    /// Overheads to inject: a measured model or constants.
    pub overheads: Option<OverheadSpec>,
    /// Which statistic of a model (default maxima); only with `overheads`.
    pub overhead_stat: Option<OverheadStat>,
    pub exports: Vec<Export>,
    /// Ends the simulation (and a default partition) early when requested (Ctrl-C).
    pub stop: Stop,
}

impl SimRequest {
    /// `workload` under `scheduler` with its defaults: no `m` yet, periodic arrivals, WCET
    /// execution, one hyperperiod, no overheads, no exports.
    pub fn new(workload: impl Into<Workload>, scheduler: &str) -> SimRequest {
        SimRequest {
            workload: workload.into(),
            m: None,
            scheduler: scheduler.to_string(),
            params: Vec::new(),
            placement: None,
            horizon: None,
            sporadic: None,
            exec_fraction: None,
            draw_suspensions: false,
            seed: 0,
            overheads: None,
            overhead_stat: None,
            exports: Vec::new(),
            stop: Stop::never(),
        }
    }

    fn wants(&self, e: Export) -> bool {
        self.exports.contains(&e)
    }
}

/// The requested exports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exported {
    pub jsonl: Option<String>,
    pub perfetto: Option<String>,
    pub sched_trace: Option<Vec<u8>>,
    pub job_csv: Option<String>,
    pub gantt_svg: Option<String>,
}

/// A simulation's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct SimReport {
    /// The scheduler as the result names it (e.g. `P-FP (DM)`, `RTWS`).
    pub scheduler: String,
    /// For the user: the default placement used, model values not charged, the model's `m`.
    pub notes: Vec<String>,
    /// The documented summary object: for sporadic tasks docs/simulator.md's ("Command
    /// line"), for fork-join tasks the `ForkJoinResult` (docs/rtws.md).
    pub summary: Value,
    pub result: Simulated,
    pub exports: Exported,
}

/// What [`simulate_request`] produced.
#[derive(Debug, Clone, PartialEq)]
pub enum SimOutcome {
    Simulated(Box<SimReport>),
    /// A well-formed request whose task set the default placement cannot place (the CLI's
    /// exit status 1): the scheduler name as requested and the reason, naming the task.
    NotPlaced {
        scheduler: String,
        reason: String,
    },
}

/// Runs one request; see the module doc. Invalid input is [`SimError::Input`], naming the field.
pub fn simulate_request(req: &SimRequest) -> Result<SimOutcome, SimError> {
    if req.overhead_stat.is_some() && req.overheads.is_none() {
        return Err(ModelError::field("overhead_stat", "applies only with overheads (--overheads)").into());
    }
    // Fork-join and DAG sets: the loops keep their own job rows and take no overheads.
    let fork_join = matches!(req.workload, Workload::ForkJoin(_) | Workload::Dag(_));
    let m = req.m.ok_or_else(|| {
        ModelError::field(
            "m",
            if fork_join {
                "no processor count: pass --m or put \"m\" in the file"
            } else {
                "no processor count: pass m (--m) or put \"m\" in the task-set file"
            },
        )
    })?;
    rtsched_model::check_m(m as u64)?;
    if let Some(f) = req.exec_fraction {
        if !(0.0..=1.0).contains(&f) || f == 0.0 {
            return Err(ModelError::field("exec_fraction", format!("must be in (0, 1], got {f}")).into());
        }
    }
    let params = req.params.iter().map(|(k, v)| (k.as_str(), v));
    let built = match registry::build(&req.scheduler, params, &req.workload, m, req.placement.clone(), &req.stop) {
        Ok(b) => b,
        Err(BuildError::Input(e)) => return Err(e.into()),
        Err(BuildError::NotPlaced(NotPlaced(reason))) => {
            return Ok(SimOutcome::NotPlaced { scheduler: req.scheduler.to_ascii_lowercase(), reason })
        }
    };
    let mut notes = built.notes;
    let mut cfg = SimConfig::new(m);
    cfg.horizon = req.horizon;
    cfg.stop = req.stop.clone();
    if let Some(d) = req.sporadic {
        cfg.arrivals = Arrivals::Sporadic { max_extra_delay: d, seed: req.seed };
    }
    if let Some(lo) = req.exec_fraction {
        cfg.exec = ExecTimes::UniformFraction { lo, seed: req.seed ^ 0x9e37_79b9_7f4a_7c15 };
    }
    if req.draw_suspensions {
        cfg.suspensions = crate::config::SuspensionTimes::Uniform { seed: req.seed ^ 0x5851_f42d_4c95_7f2d };
    }
    let origin = match &req.overheads {
        Some(_) if fork_join => {
            return Err(ModelError::field(
                "overheads",
                format!(
                    "overhead injection is not supported for {} task sets (supported: gedf, gedf-quantum, gfp, \
                     gfl, pedf, pfp on sequential tasks)",
                    req.workload.kind()
                ),
            )
            .into())
        }
        Some(spec) => {
            let (v, origin) = resolve_overheads(spec, req.overhead_stat, req.workload.len(), m, &mut notes);
            cfg.overheads = Some(v);
            Some(origin)
        }
        None => None,
    };
    cfg.record_trace = req.exports.iter().any(|e| e.needs_trace());
    // Per-job rows only for the per-job CSV: without them memory does not grow with the jobs
    // (the fork-join loops keep their rows anyway: their job statistics are sums over threads).
    if !fork_join {
        cfg.keep_jobs = req.wants(Export::JobCsv);
    }
    let result = simulate_workload(&req.workload, &built.scheduler, &cfg)?;
    let (summary, scheduler, trace, job_csv) = match &result {
        Simulated::Jobs(r) => (
            summary(r, origin.as_ref()),
            r.scheduler.clone(),
            r.trace.as_ref(),
            req.wants(Export::JobCsv).then(|| r.to_job_csv()),
        ),
        Simulated::ForkJoin(r) => (
            serde_json::to_value(r).map_err(|e| SimError::internal(format!("the summary cannot be encoded: {e}")))?,
            built.scheduler.name(),
            r.trace.as_ref(),
            req.wants(Export::JobCsv).then(|| r.to_job_csv()),
        ),
        Simulated::Dag(r) => (
            serde_json::to_value(r).map_err(|e| SimError::internal(format!("the summary cannot be encoded: {e}")))?,
            r.scheduler.clone(),
            r.trace.as_ref(),
            req.wants(Export::JobCsv).then(|| r.to_job_csv()),
        ),
    };
    let exports = exports(req, trace, job_csv)?;
    Ok(SimOutcome::Simulated(Box::new(SimReport { scheduler, notes, summary, result, exports })))
}

/// The requested exports of `trace` (recorded when any was requested) and the job CSV.
fn exports(req: &SimRequest, trace: Option<&Trace>, job_csv: Option<String>) -> Result<Exported, SimError> {
    let from = |e: Export, f: &dyn Fn(&Trace) -> String| if req.wants(e) { trace.map(f) } else { None };
    Ok(Exported {
        jsonl: from(Export::Jsonl, &|t| t.to_jsonl()),
        perfetto: from(Export::Perfetto, &|t| t.to_perfetto_json()),
        sched_trace: if req.wants(Export::SchedTrace) {
            trace.map(|t| t.to_sched_trace_bytes()).transpose()?
        } else {
            None
        },
        job_csv,
        gantt_svg: from(Export::GanttSvg, &|t| t.to_gantt_svg(None)),
    })
}

/// Where the injected overheads came from, for the summary's `overheads` object.
struct OverheadOrigin {
    source: &'static str,
    model_scheduler: Option<String>,
    stat: Option<OverheadStat>,
    n: usize,
}

/// Evaluates the overhead spec at the task count `n`; notes say when the model was measured on
/// another processor count and which terms the simulator does not charge.
fn resolve_overheads(
    spec: &OverheadSpec,
    stat: Option<OverheadStat>,
    n: usize,
    m: u32,
    notes: &mut Vec<String>,
) -> (Overheads, OverheadOrigin) {
    let stat_v = stat.unwrap_or(OverheadStat::Max);
    let (model_scheduler, stat) = match spec {
        OverheadSpec::Model(model) => {
            if let Some(mm) = model.m.filter(|&mm| mm != m) {
                notes.push(format!(
                    "the overhead model was measured on m = {mm} processors; simulating m = {m} with its values"
                ));
            }
            (model.scheduler.clone(), Some(stat_v))
        }
        OverheadSpec::Constant(_) => (None, None),
    };
    let (v, dropped) = simulator_view(&spec.resolve(n, stat_v));
    if !dropped.is_empty() {
        let names: Vec<&str> = dropped.iter().map(|t| t.name()).collect();
        notes.push(format!("the simulator does not charge the overhead terms {} (left out)", names.join(", ")));
    }
    (v, OverheadOrigin { source: spec.source(), model_scheduler, stat, n })
}

/// The summary's `overheads` object (docs/simulator.md, "Overhead injection").
fn overhead_summary(r: &SimResult, origin: &OverheadOrigin) -> Value {
    let Some(rep) = &r.overheads else {
        return Value::Null;
    };
    let mut charged = serde_json::Map::new();
    for s in &rep.charged {
        charged.insert(
            s.kind.name().to_string(),
            json!({"count": s.count, "total_ns": u64::try_from(s.total_ns).unwrap_or(u64::MAX)}),
        );
    }
    json!({
        "source": origin.source,
        "model_scheduler": origin.model_scheduler,
        "stat": origin.stat.map(OverheadStat::name),
        "n": origin.n,
        "values": rep.values.to_json_terms(&rtsched_model::overheads::SIMULATOR_TERMS),
        "charged": charged,
        "cpu_time_ns": u64::try_from(rep.cpu_time_ns).unwrap_or(u64::MAX),
    })
}

/// The documented summary object of sporadic tasks (docs/simulator.md, "Command line").
fn summary(r: &SimResult, origin: Option<&OverheadOrigin>) -> Value {
    let per_task: Vec<Value> = r
        .per_task
        .iter()
        .map(|t| {
            json!({"task": t.task, "jobs": t.jobs, "deadline_misses": t.deadline_misses,
                   "max_response_time_ns": t.max_response_time_ns, "preemptions": t.preemptions,
                   "migrations": t.migrations})
        })
        .collect();
    json!({
        "jobs": r.jobs,
        "deadline_misses": r.deadline_misses,
        "max_tardiness_ns": r.max_tardiness_ns,
        "max_response_time_ns": r.max_response_time_ns,
        "preemptions": r.preemptions,
        "migrations": r.migrations,
        "context_switches": r.context_switches,
        "suspensions": r.suspensions,
        "suspension_ns": r.suspension_ns,
        "steals": Value::Null,
        "horizon_ns": r.horizon,
        "horizon_capped": r.horizon_capped,
        "horizon_message": r.horizon_message,
        "overheads": origin.map_or(Value::Null, |o| overhead_summary(r, o)),
        "per_task": per_task,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{simulate, simulate_rtws, Scheduler};
    use rtsched_model::TaskSet;

    fn ts() -> TaskSet {
        TaskSet::from_cdt(&[(2_000, 5_000, 5_000), (3_000, 7_000, 7_000), (4_000, 9_000, 10_000)]).unwrap()
    }

    const FJ: &str = r#"{"tasks": [{"period": 10000, "regions": [[2000], [1000, 1000, 1000]]},
                                  {"period": 20000, "deadline": 15000, "regions": [[4000], [3000, 3000]]}]}"#;

    fn report(o: SimOutcome) -> SimReport {
        match o {
            SimOutcome::Simulated(r) => *r,
            other => panic!("not simulated: {other:?}"),
        }
    }

    #[test]
    fn a_sporadic_request_is_the_engines_simulation_with_its_summary() {
        let mut req = SimRequest::new(ts(), "gedf-quantum");
        req.m = Some(2);
        req.params = vec![("quantum".into(), ParamArg::from("500us")), ("staggered".into(), ParamArg::Bool(true))];
        req.exports = vec![Export::Jsonl, Export::JobCsv];
        let rep = report(simulate_request(&req).unwrap());
        let sched = Scheduler::GedfQuantum { quantum: 500_000, staggered: true };
        let mut cfg = SimConfig::new(2);
        cfg.record_trace = true;
        let direct = simulate(&ts(), &sched, &cfg).unwrap();
        assert_eq!(rep.scheduler, direct.scheduler);
        assert_eq!(rep.summary["jobs"], direct.jobs);
        assert_eq!(rep.summary["preemptions"], direct.preemptions);
        assert_eq!(rep.summary["horizon_ns"], direct.horizon);
        assert_eq!(rep.summary["steals"], Value::Null);
        assert_eq!(rep.summary["per_task"].as_array().map(Vec::len), Some(3));
        assert_eq!(rep.exports.jsonl.as_deref(), direct.trace.as_ref().map(|t| t.to_jsonl()).as_deref());
        assert_eq!(rep.exports.job_csv, Some(direct.to_job_csv()));
        assert!(rep.exports.perfetto.is_none() && rep.exports.gantt_svg.is_none());
        assert!(rep.notes.is_empty());
    }

    #[test]
    fn the_request_decides_the_default_placement_and_says_so() {
        let mut req = SimRequest::new(ts(), "pedf");
        req.m = Some(2);
        let rep = report(simulate_request(&req).unwrap());
        assert_eq!(rep.scheduler, "P-EDF");
        assert_eq!(
            rep.notes,
            vec![
                "no --placement given: partitioned by worst-fit decreasing utilization with exact EDF (QPA) admission"
            ]
        );
        // On one processor the set does not fit: an outcome, not an error.
        req.m = Some(1);
        let out = simulate_request(&req).unwrap();
        let SimOutcome::NotPlaced { scheduler, reason } = out else { panic!("{out:?}") };
        assert_eq!(scheduler, "pedf");
        assert!(
            reason.starts_with("worst-fit decreasing with exact EDF (QPA) admission cannot place task"),
            "{reason}"
        );
        req.scheduler = "SPRES".into();
        let SimOutcome::NotPlaced { scheduler, reason } = simulate_request(&req).unwrap() else { panic!() };
        assert_eq!(scheduler, "spres");
        assert!(reason.starts_with("the SP-RES cascade cannot place the task set on 1 processors"), "{reason}");
    }

    #[test]
    fn bad_requests_are_refused_naming_the_field() {
        let msg = |req: &SimRequest| simulate_request(req).unwrap_err().to_string();
        let mut req = SimRequest::new(ts(), "gedf");
        assert_eq!(msg(&req), "field 'm': no processor count: pass m (--m) or put \"m\" in the task-set file");
        req.m = Some(0);
        assert!(msg(&req).starts_with("field 'm': the number of processors must be in 1..="), "{}", msg(&req));
        req.m = Some(2);
        req.exec_fraction = Some(0.0);
        assert_eq!(msg(&req), "field 'exec_fraction': must be in (0, 1], got 0");
        req.exec_fraction = Some(f64::NAN);
        assert_eq!(msg(&req), "field 'exec_fraction': must be in (0, 1], got NaN");
        req.exec_fraction = None;
        req.overhead_stat = Some(OverheadStat::Avg);
        assert_eq!(msg(&req), "field 'overhead_stat': applies only with overheads (--overheads)");
        req.overheads = Some(OverheadSpec::Constant(Overheads { tick_ns: 5, ..Overheads::ZERO }));
        assert_eq!(
            msg(&req),
            "field 'overheads.tick_ns': applies only to gedf-quantum (the event-driven G-EDF has no periodic tick), got 5 ns"
        );
        req.scheduler = "rtws".into();
        assert_eq!(
            msg(&req),
            "field 'overheads': overhead injection is not supported for rtws (supported: gedf, gedf-quantum, gfp, gfl, pedf, pfp)"
        );
        assert_eq!(Export::parse("svg").unwrap_err().to_string(), "field 'outputs': unknown output \"svg\"");
        assert!(Export::ALL.iter().all(|e| Export::parse(e.name()) == Ok(*e)));
    }

    #[test]
    fn constant_overheads_are_charged_and_reported() {
        let mut req = SimRequest::new(ts(), "gedf");
        req.m = Some(2);
        req.overheads = Some(OverheadSpec::Constant(Overheads { release_ns: 10, request_ns: 7, ..Overheads::ZERO }));
        let rep = report(simulate_request(&req).unwrap());
        let o = &rep.summary["overheads"];
        assert_eq!((o["source"].as_str(), o["n"].as_u64(), &o["stat"]), (Some("constant"), Some(3), &Value::Null));
        assert_eq!(o["values"]["release_ns"], 10);
        assert!(o["cpu_time_ns"].as_u64().unwrap() > 0);
        assert_eq!(rep.notes.len(), 1, "{:?}", rep.notes);
        assert!(rep.notes[0].starts_with("the simulator does not charge the overhead terms"), "{:?}", rep.notes);
    }

    #[test]
    fn a_fork_join_request_goes_through_the_same_call() {
        let file = rtsched_model::workload::read_json(FJ).unwrap();
        let mut req = SimRequest::new(file.workload.clone(), "rtws");
        req.m = Some(2);
        req.exports = vec![Export::Jsonl, Export::JobCsv, Export::SchedTrace];
        let rep = report(simulate_request(&req).unwrap());
        let Workload::ForkJoin(set) = &file.workload else { panic!("not fork-join") };
        let mut cfg = SimConfig::new(2);
        cfg.record_trace = true;
        let direct = simulate_rtws(set, &cfg).unwrap();
        assert_eq!(rep.scheduler, "RTWS");
        assert_eq!(rep.summary, serde_json::to_value(&direct).unwrap());
        assert_eq!(rep.exports.job_csv, Some(direct.to_job_csv()));
        assert_eq!(rep.exports.jsonl, direct.trace.as_ref().map(|t| t.to_jsonl()));
        assert!(rep.exports.sched_trace.is_some_and(|b| !b.is_empty()));
        // G-EDF over the threads reports its remote starts; other schedulers are refused.
        req.scheduler = "gedf".into();
        let rep = report(simulate_request(&req).unwrap());
        assert!(rep.summary["remote_starts"].is_u64(), "{}", rep.summary);
        req.scheduler = "pfp".into();
        let e = simulate_request(&req).unwrap_err().to_string();
        assert_eq!(
            e,
            "field 'scheduler': pfp schedules sequential tasks; a fork-join task set runs under gedf or rtws"
        );
        req.scheduler = "rtws".into();
        req.m = None;
        let e = simulate_request(&req).unwrap_err().to_string();
        assert_eq!(e, "field 'm': no processor count: pass --m or put \"m\" in the file");
        req.m = Some(2);
        req.overheads = Some(OverheadSpec::Constant(Overheads::ZERO));
        let e = simulate_request(&req).unwrap_err().to_string();
        assert!(e.starts_with("field 'overheads': overhead injection is not supported for fork-join"), "{e}");
    }

    #[test]
    fn a_dag_request_goes_through_the_same_call() {
        let file = rtsched_model::workload::read_json(
            r#"{"m": 2, "tasks": [{"period": 100, "nodes": [10, 20, 30], "edges": [[0, 1], [0, 2]]}]}"#,
        )
        .unwrap();
        let Workload::Dag(set) = &file.workload else { panic!("not a DAG set") };
        let mut req = SimRequest::new(file.workload.clone(), "gedf");
        req.m = Some(2);
        req.exports = vec![Export::Jsonl, Export::JobCsv, Export::GanttSvg];
        let rep = report(simulate_request(&req).unwrap());
        let mut cfg = SimConfig::new(2);
        cfg.record_trace = true;
        let direct = crate::simulate_dag(set, &crate::Scheduler::Gedf, &cfg).unwrap();
        assert_eq!(rep.scheduler, "G-EDF");
        assert_eq!(rep.summary, serde_json::to_value(&direct).unwrap());
        assert_eq!(rep.summary["max_response_time_ns"], 40);
        assert_eq!(rep.exports.job_csv, Some(direct.to_job_csv()));
        assert!(rep.exports.gantt_svg.is_some_and(|s| s.contains("T0[2].0")));
        // gfp and federated too; federated says its plan.
        req.scheduler = "gfp".into();
        assert_eq!(report(simulate_request(&req).unwrap()).scheduler, "G-FP (DM)");
        req.scheduler = "federated".into();
        let rep = report(simulate_request(&req).unwrap());
        assert_eq!(rep.notes, vec!["federated plan: light tasks CPU 0: [0], CPU 1: []"]);
        assert_eq!(rep.summary["max_response_time_ns"], 60, "a light task runs sequentially");
        // Sequential-only schedulers are one line naming the scheduler and the ones that run it.
        req.scheduler = "pedf".into();
        let e = simulate_request(&req).unwrap_err().to_string();
        assert_eq!(
            e,
            "field 'scheduler': pedf schedules sequential tasks; a DAG task set runs under gedf, gfp or federated"
        );
        // Federated on a sequential set, and a plan that does not place: an outcome.
        let mut seq = SimRequest::new(ts(), "federated");
        seq.m = Some(2);
        let e = simulate_request(&seq).unwrap_err().to_string();
        assert_eq!(e, "field 'scheduler': federated schedules DAG task sets; a sporadic task set runs under gedf, gedf-quantum, gfp, gfl, edzl, llf, pd2, pedf, pfp, spres, rtws, run or qps");
        let heavy = rtsched_model::workload::read_json(r#"{"tasks": [{"period": 10, "nodes": [5, 5, 5]}]}"#).unwrap();
        let mut req = SimRequest::new(heavy.workload, "federated");
        req.m = Some(1);
        let SimOutcome::NotPlaced { scheduler, reason } = simulate_request(&req).unwrap() else { panic!() };
        assert_eq!(scheduler, "federated");
        assert!(reason.contains("task 0 needs 2 dedicated cores"), "{reason}");
        req.m = Some(2);
        req.overheads = Some(OverheadSpec::Constant(Overheads::ZERO));
        let e = simulate_request(&req).unwrap_err().to_string();
        assert!(e.starts_with("field 'overheads': overhead injection is not supported for DAG task sets"), "{e}");
    }
}
