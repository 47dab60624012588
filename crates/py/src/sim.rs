//! `simulate`: the simulator (`rtsched-sim`) behind `rtsched simulate` and
//! `rtsched.simulate` (docs/simulator.md, "Command line").
//!
//! The scheduler name is resolved in one place, [`build_scheduler`]; P-EDF / P-FP without a
//! placement get the default partition of [`crate::partition`] (the one `rtsched run` uses too:
//! worst-fit decreasing utilization with exact admission, QPA for EDF, response-time analysis
//! for FP), SP-RES without a placement the cascade of
//! Brandenburg & Gül, RTSS 2016 (§IV-B). The simulation runs with the GIL released.

use crate::convert::time_arg;
use crate::partition::{default_partition, NotPlaced};
use crate::taskset::TaskSet;
use crate::{err, guarded, RtschedError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rtsched_analysis::semi;
use rtsched_model::{ModelError, TaskSet as RTaskSet, Time};
use rtsched_sim::{
    Arrivals, ExecTimes, FpOrder, OverheadSpec, OverheadStat, Overheads, Scheduler, SimConfig, SimResult, SpresConfig,
    SpresPlacement,
};
use serde_json::{json, Value};

/// Scheduler names `simulate` accepts.
pub const SCHEDULERS: [&str; 6] = ["gedf", "gedf-quantum", "pedf", "pfp", "spres", "rtws"];

/// Parameters of [`build_scheduler`] other than the name.
struct SchedArgs<'a> {
    ts: &'a RTaskSet,
    m: u32,
    placement: Option<&'a str>,
    quantum: Option<Time>,
    staggered: bool,
    /// SP-RES: CASH slack reclamation; soft unsplit reservations.
    cash: bool,
    soft: bool,
    /// SP-RES: background service of depleted soft reservations (`None`: not given, the
    /// default round-robin of 1 ms, as the runtime's).
    background: Option<rtsched_sim::Background>,
    /// Ctrl-C, for the default partition (thousands of tasks take seconds).
    stop: &'a rtsched_model::Stop,
}

enum BuildError {
    Input(ModelError),
    NotPlaced(NotPlaced),
}

impl From<ModelError> for BuildError {
    fn from(e: ModelError) -> Self {
        BuildError::Input(e)
    }
}

/// A plain partition from a placement JSON: every task must be one whole reservation. The
/// one placement parser of `simulate` and `run` (strict JSON, validated against `ts`);
/// `m_is` names where `m` came from in the error (`"--m is"`).
fn partition_from_placement(text: &str, ts: &RTaskSet, m: u32, m_is: &str) -> Result<Vec<Vec<usize>>, ModelError> {
    let p = SpresPlacement::from_json(text, ts)?;
    if p.m != m {
        return Err(ModelError::field("m", format!("the placement is for m = {} but {m_is} {m}", p.m)));
    }
    let mut cpus = vec![Vec::new(); m as usize];
    for (i, parts) in p.parts.iter().enumerate() {
        if parts.len() != 1 || parts[0].period != ts[i].period {
            return Err(ModelError::task_field(i, "placement", "is split or period-transformed; a plain partition (pedf, pfp) needs one whole reservation per task (use --scheduler spres)"));
        }
        cpus[parts[0].cpu as usize].push(i);
    }
    Ok(cpus)
}

/// The one place where a scheduler name becomes a [`Scheduler`]; returns notes for stderr.
fn build_scheduler(name: &str, a: &SchedArgs<'_>) -> Result<(Scheduler, Vec<String>), BuildError> {
    let mut notes = Vec::new();
    if a.quantum.is_some() && name != "gedf-quantum" {
        return Err(
            ModelError::field("quantum", format!("applies only to --scheduler gedf-quantum, not {name}")).into()
        );
    }
    if a.staggered && name != "gedf-quantum" {
        return Err(
            ModelError::field("staggered", format!("applies only to --scheduler gedf-quantum, not {name}")).into()
        );
    }
    for (on, field) in [(a.cash, "cash"), (a.soft, "soft"), (a.background.is_some(), "background")] {
        if on && name != "spres" {
            return Err(ModelError::field(field, format!("applies only to --scheduler spres, not {name}")).into());
        }
    }
    if a.placement.is_some() && !matches!(name, "pedf" | "pfp" | "spres") {
        return Err(ModelError::field("placement", format!("applies only to pedf, pfp and spres, not {name}")).into());
    }
    // pedf / pfp: the given placement, or the default partition (crate::partition, shared with
    // `rtsched run`).
    let plain = |notes: &mut Vec<String>| -> Result<Vec<Vec<usize>>, BuildError> {
        if let Some(text) = a.placement {
            return Ok(partition_from_placement(text, a.ts, a.m, "--m is")?);
        }
        let p = default_partition(a.ts, a.m, name, a.stop).map_err(BuildError::NotPlaced)?;
        notes.push(format!("no --placement given: {}", p.note));
        Ok(p.cpus)
    };
    let sched = match name {
        "gedf" => Scheduler::Gedf,
        "gedf-quantum" => Scheduler::GedfQuantum { quantum: a.quantum.unwrap_or(1_000_000), staggered: a.staggered },
        "pedf" => Scheduler::Pedf(plain(&mut notes)?),
        "pfp" => Scheduler::Pfp(plain(&mut notes)?, FpOrder::DeadlineMonotonic),
        "spres" => {
            let placement = match a.placement {
                Some(text) => SpresPlacement::from_json(text, a.ts)?,
                None => {
                    let p = semi::cascade(a.ts, a.m, &semi::SemiConfig::default());
                    if !p.schedulable {
                        return Err(BuildError::NotPlaced(NotPlaced(format!(
                            "the SP-RES cascade cannot place the task set on {} processors: {}",
                            a.m,
                            p.reason.as_deref().unwrap_or("no reason given")
                        ))));
                    }
                    notes.push(format!("no --placement given: placed by the SP-RES cascade ({})", p.heuristic));
                    SpresPlacement::from_json(&p.to_json().to_string(), a.ts)?
                }
            };
            if placement.m != a.m {
                return Err(ModelError::field(
                    "m",
                    format!("the placement is for m = {} but --m is {}", placement.m, a.m),
                )
                .into());
            }
            Scheduler::Spres(SpresConfig {
                placement,
                soft_unsplit: a.soft,
                cash: a.cash,
                background: a.background.unwrap_or(rtsched_sim::Background::DEFAULT),
            })
        }
        // A plain task set under RTWS: every job is one region of one thread (fork-join files
        // go through `simulate_forkjoin`).
        "rtws" => Scheduler::Rtws,
        other => {
            return Err(ModelError::field(
                "scheduler",
                format!("unknown scheduler {other:?}; use one of: {}", SCHEDULERS.join(", ")),
            )
            .into())
        }
    };
    Ok((sched, notes))
}

/// Where the injected overheads came from, for the summary's `overheads` object.
struct OverheadOrigin {
    source: &'static str,
    model_scheduler: Option<String>,
    stat: Option<OverheadStat>,
    n: usize,
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

/// Reads the overhead JSON (a measured model or constants) and evaluates it at the task
/// count; notes say when the model was measured on another processor count.
fn resolve_overheads(
    text: &str,
    stat: Option<&str>,
    n: usize,
    m: u32,
    notes: &mut Vec<String>,
) -> Result<(Overheads, OverheadOrigin), ModelError> {
    let spec = OverheadSpec::from_json(text)?;
    let stat_v = OverheadStat::parse(stat.unwrap_or("max"))?;
    let (model_scheduler, stat) = match &spec {
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
    let (v, dropped) = rtsched_sim::simulator_view(&spec.resolve(n, stat_v));
    if !dropped.is_empty() {
        let names: Vec<&str> = dropped.iter().map(|t| t.name()).collect();
        notes.push(format!("the simulator does not charge the overhead terms {} (left out)", names.join(", ")));
    }
    Ok((v, OverheadOrigin { source: spec.source(), model_scheduler, stat, n }))
}

/// The documented summary object (docs/simulator.md, "Command line").
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
        "steals": Value::Null,
        "horizon_ns": r.horizon,
        "horizon_capped": r.horizon_capped,
        "horizon_message": r.horizon_message,
        "overheads": origin.map_or(Value::Null, |o| overhead_summary(r, o)),
        "per_task": per_task,
    })
}

/// What the simulation produced, still without the GIL.
struct Out {
    summary: String,
    scheduler: String,
    notes: Vec<String>,
    not_placed: Option<String>,
    jsonl: Option<String>,
    perfetto: Option<String>,
    sched_trace: Option<Vec<u8>>,
    job_csv: Option<String>,
    gantt_svg: Option<String>,
}

impl Out {
    /// A simulated result with the requested exports of its trace (`outputs` names them).
    fn with_exports(
        summary: String,
        scheduler: String,
        notes: Vec<String>,
        tr: Option<&rtsched_trace::Trace>,
        outputs: &[String],
        job_csv: impl FnOnce() -> String,
    ) -> PyResult<Out> {
        let want = |k: &str| outputs.iter().any(|o| o == k);
        let export = |k: &str, f: &dyn Fn(&rtsched_trace::Trace) -> String| {
            if want(k) {
                tr.map(f)
            } else {
                None
            }
        };
        Ok(Out {
            summary,
            scheduler,
            notes,
            not_placed: None,
            jsonl: export("jsonl", &|t| t.to_jsonl()),
            perfetto: export("perfetto", &|t| t.to_perfetto_json()),
            sched_trace: if want("sched_trace") {
                tr.map(|t| t.to_sched_trace_bytes()).transpose().map_err(err)?
            } else {
                None
            },
            job_csv: want("job_csv").then(job_csv),
            gantt_svg: export("gantt_svg", &|t| t.to_gantt_svg(None)),
        })
    }
}

/// simulate(ts, m, scheduler, placement, quantum, staggered, horizon, sporadic, exec_fraction,
/// seed, outputs, overheads, overhead_stat) -> dict with "summary" (JSON text), "scheduler",
/// "notes", "not_placed" (reason or None) and one entry per requested output: "jsonl",
/// "perfetto", "sched_trace" (bytes), "job_csv", "gantt_svg". `overheads`: the JSON text of
/// an overhead model or of constants; `overhead_stat`: "max" (default) or "avg".
#[pyfunction]
#[pyo3(signature = (ts, m, scheduler, placement=None, quantum=None, staggered=false, horizon=None, sporadic=None,
                    exec_fraction=None, seed=0, outputs=Vec::new(), overheads=None, overhead_stat=None,
                    cash=false, soft=false, background=None, rr_quantum=None))]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    ts: TaskSet,
    m: Option<u32>,
    scheduler: &str,
    placement: Option<String>,
    quantum: Option<Bound<'py, PyAny>>,
    staggered: bool,
    horizon: Option<Bound<'py, PyAny>>,
    sporadic: Option<Bound<'py, PyAny>>,
    exec_fraction: Option<f64>,
    seed: u64,
    outputs: Vec<String>,
    overheads: Option<String>,
    overhead_stat: Option<String>,
    cash: bool,
    soft: bool,
    background: Option<String>,
    rr_quantum: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    if overhead_stat.is_some() && overheads.is_none() {
        return Err(RtschedError::new_err("field 'overhead_stat': applies only with overheads (--overheads)"));
    }
    let m = m.or(ts.m).ok_or_else(|| {
        RtschedError::new_err("field 'm': no processor count: pass m (--m) or put \"m\" in the task-set file")
    })?;
    rtsched_model::check_m(m as u64).map_err(err)?;
    let quantum = quantum.map(|q| time_arg(&q, "quantum")).transpose()?;
    let horizon = horizon.map(|h| time_arg(&h, "horizon")).transpose()?;
    let sporadic = sporadic.map(|s| time_arg(&s, "sporadic")).transpose()?;
    let rr_quantum = rr_quantum.map(|q| time_arg(&q, "rr_quantum")).transpose()?;
    let background = match (background.as_deref(), rr_quantum) {
        (None, None) => None,
        (b, q) => {
            Some(rtsched_sim::Background::parse(b.unwrap_or("round-robin"), q.unwrap_or(1_000_000)).map_err(err)?)
        }
    };
    if matches!(background, Some(rtsched_sim::Background::EarliestEnd)) && rr_quantum.is_some() {
        return Err(RtschedError::new_err("field 'rr_quantum': applies only with background round-robin"));
    }
    if let Some(f) = exec_fraction {
        if !(0.0..=1.0).contains(&f) || f == 0.0 {
            return Err(RtschedError::new_err(format!("field 'exec_fraction': must be in (0, 1], got {f}")));
        }
    }
    for o in &outputs {
        if !["jsonl", "perfetto", "sched_trace", "job_csv", "gantt_svg"].contains(&o.as_str()) {
            return Err(RtschedError::new_err(format!("field 'outputs': unknown output {o:?}")));
        }
    }
    let scheduler = scheduler.to_ascii_lowercase();
    let stop = rtsched_model::Stop::new();
    let (out, interrupted) = crate::interrupt::stoppable(py, &stop, || {
        let args = SchedArgs {
            ts: &ts.inner,
            m,
            placement: placement.as_deref(),
            quantum,
            staggered,
            cash,
            soft,
            background,
            stop: &stop,
        };
        let (sched, mut notes) = match build_scheduler(&scheduler, &args) {
            Ok(x) => x,
            Err(BuildError::Input(e)) => return Err(err(e)),
            Err(BuildError::NotPlaced(NotPlaced(reason))) => {
                return Ok(Out {
                    summary: String::new(),
                    scheduler: scheduler.clone(),
                    notes: vec![],
                    not_placed: Some(reason),
                    jsonl: None,
                    perfetto: None,
                    sched_trace: None,
                    job_csv: None,
                    gantt_svg: None,
                })
            }
        };
        let mut cfg = SimConfig::new(m);
        cfg.horizon = horizon;
        cfg.stop = stop.clone();
        if let Some(d) = sporadic {
            cfg.arrivals = Arrivals::Sporadic { max_extra_delay: d, seed };
        }
        if let Some(lo) = exec_fraction {
            cfg.exec = ExecTimes::UniformFraction { lo, seed: seed ^ 0x9e37_79b9_7f4a_7c15 };
        }
        let origin = match &overheads {
            Some(text) => {
                let (v, origin) =
                    resolve_overheads(text, overhead_stat.as_deref(), ts.inner.len(), m, &mut notes).map_err(err)?;
                cfg.overheads = Some(v);
                Some(origin)
            }
            None => None,
        };
        let want = |k: &str| outputs.iter().any(|o| o == k);
        cfg.record_trace = want("jsonl") || want("perfetto") || want("sched_trace") || want("gantt_svg");
        // Per-job rows only for the per-job CSV: without them memory does not grow with the jobs.
        cfg.keep_jobs = want("job_csv");
        let r = rtsched_sim::simulate(&ts.inner, &sched, &cfg).map_err(crate::sim_err)?;
        let tr = r.trace.as_ref();
        Out::with_exports(summary(&r, origin.as_ref()).to_string(), r.scheduler.clone(), notes, tr, &outputs, || {
            r.to_job_csv()
        })
    })?;
    let d = out_dict(py, out)?;
    d.set_item("interrupted", interrupted)?;
    Ok(d)
}

/// The result dict of `simulate` and `simulate_forkjoin`.
fn out_dict(py: Python<'_>, out: Out) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("summary", out.summary)?;
    d.set_item("scheduler", out.scheduler)?;
    d.set_item("notes", out.notes)?;
    d.set_item("not_placed", out.not_placed)?;
    if let Some(x) = out.jsonl {
        d.set_item("jsonl", x)?;
    }
    if let Some(x) = out.perfetto {
        d.set_item("perfetto", x)?;
    }
    if let Some(x) = out.sched_trace {
        d.set_item("sched_trace", PyBytes::new(py, &x))?;
    }
    if let Some(x) = out.job_csv {
        d.set_item("job_csv", x)?;
    }
    if let Some(x) = out.gantt_svg {
        d.set_item("gantt_svg", x)?;
    }
    Ok(d)
}

/// simulate_schedulers() -> list[str]
#[pyfunction]
fn simulate_schedulers() -> Vec<&'static str> {
    SCHEDULERS.to_vec()
}

/// simulate_forkjoin(text, m, horizon, sporadic, seed, outputs) -> dict: RTWS on a
/// fork-join task-set file (docs/rtws.md). The dict has "summary" (the JSON text of
/// `ForkJoinResult`) and one entry per requested output, as `simulate`: "jsonl", "perfetto",
/// "sched_trace" (bytes) and "gantt_svg" of the thread-level trace, "job_csv" of the job-level
/// statistics.
#[pyfunction]
#[pyo3(signature = (text, m, horizon=None, sporadic=None, seed=0, outputs=Vec::new()))]
fn simulate_forkjoin<'py>(
    py: Python<'py>,
    text: &str,
    m: Option<u32>,
    horizon: Option<u64>,
    sporadic: Option<u64>,
    seed: u64,
    outputs: Vec<String>,
) -> PyResult<Bound<'py, PyDict>> {
    for o in &outputs {
        if !["jsonl", "perfetto", "sched_trace", "job_csv", "gantt_svg"].contains(&o.as_str()) {
            return Err(RtschedError::new_err(format!("field 'outputs': unknown output {o:?}")));
        }
    }
    let stop = rtsched_model::Stop::new();
    let (out, interrupted) = crate::interrupt::stoppable(py, &stop, || {
        let file = rtsched_model::forkjoin::read_json(text).map_err(crate::err)?;
        let m = m.or(file.m).ok_or_else(|| {
            crate::err(ModelError::field("m", "no processor count: pass --m or put \"m\" in the file"))
        })?;
        rtsched_model::check_m(m as u64).map_err(crate::err)?;
        let mut cfg = rtsched_sim::SimConfig::new(m);
        cfg.horizon = horizon;
        cfg.stop = stop.clone();
        if let Some(d) = sporadic {
            cfg.arrivals = rtsched_sim::Arrivals::Sporadic { max_extra_delay: d, seed };
        }
        let want = |k: &str| outputs.iter().any(|o| o == k);
        cfg.record_trace = want("jsonl") || want("perfetto") || want("sched_trace") || want("gantt_svg");
        let r = rtsched_sim::simulate_rtws(&file.set, &cfg).map_err(crate::sim_err)?;
        let summary = serde_json::to_string(&r).map_err(crate::internal_err)?;
        let tr = r.trace.as_ref();
        Out::with_exports(summary, "RTWS".into(), vec![], tr, &outputs, || r.to_job_csv())
    })?;
    let d = out_dict(py, out)?;
    d.set_item("interrupted", interrupted)?;
    Ok(d)
}

/// placement_partition(ts, text, m) -> list of task-index lists, one per CPU
///
/// The placement parser of `simulate` for `rtsched run --placement`: strict JSON (duplicate
/// keys are errors), validated against `ts`, `m` equal to the run's CPU count, every task one
/// whole reservation (runtime mechanisms run plain partitions).
#[pyfunction]
fn placement_partition(ts: &TaskSet, text: &str, m: u32) -> PyResult<Vec<Vec<usize>>> {
    partition_from_placement(text, &ts.inner, m, "the number of CPUs of the run (--cpus) is").map_err(err)
}

/// trace_gantt_svg(jsonl, start=None, end=None) -> str: the SVG Gantt chart of a JSON Lines
/// trace (docs/trace.md), of `[start, end)` (default: the whole horizon). `rtsched simulate` and
/// `rtsched run` draw `--gantt X.svg --window START:END` with it.
#[pyfunction]
#[pyo3(signature = (jsonl, start=None, end=None))]
fn trace_gantt_svg(py: Python<'_>, jsonl: &str, start: Option<Time>, end: Option<Time>) -> PyResult<String> {
    guarded(py, || {
        let tr = rtsched_trace::Trace::from_jsonl(jsonl).map_err(err)?;
        let (from, to) = (start.unwrap_or(0), end.unwrap_or(tr.meta.horizon.max(1)));
        if to <= from {
            return Err(RtschedError::new_err(format!(
                "field 'window': the end ({to} ns) must be after the start ({from} ns)"
            )));
        }
        Ok(tr.to_gantt_svg(Some((from, to))))
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(placement_partition, m)?)?;
    m.add_function(wrap_pyfunction!(trace_gantt_svg, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_forkjoin, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_schedulers, m)?)?;
    Ok(())
}
