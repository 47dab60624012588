//! `simulate`: the simulator (`rtsched-sim`) behind `rtsched simulate` and
//! `rtsched.simulate` (docs/simulator.md, "Command line"), as a thin conversion: the Python
//! arguments become one [`SimRequest`], which makes every decision (the scheduler from the
//! registry `rtsched_sim::registry`, the default placement, the checks), and its outcome
//! becomes a dict. The simulation runs with the GIL released.

use crate::convert::time_arg;
use crate::taskset::TaskSet;
use crate::{err, guarded, RtschedError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyString};
use rtsched_model::{Placement, Time, Workload};
use rtsched_sim::registry;
use rtsched_sim::{Export, OverheadSpec, OverheadStat, ParamArg, SimOutcome, SimRequest};

/// A parameter value: `bool`, `str` or a non-negative `int`; the registry checks its kind.
fn param_arg(key: &str, v: &Bound<'_, PyAny>) -> PyResult<ParamArg> {
    if let Ok(b) = v.downcast::<PyBool>() {
        return Ok(ParamArg::Bool(b.is_true()));
    }
    if let Ok(s) = v.downcast::<PyString>() {
        return Ok(ParamArg::Text(s.to_str()?.to_string()));
    }
    let shown = || v.repr().map(|r| r.to_string()).unwrap_or_default();
    if v.is_instance_of::<PyInt>() || v.hasattr("__index__").unwrap_or(false) {
        return v.extract::<u64>().map(ParamArg::Int).map_err(|_| {
            RtschedError::new_err(format!("field '{key}': expected a non-negative integer below 2^64, got {}", shown()))
        });
    }
    Err(RtschedError::new_err(format!("field '{key}': expected an integer, a string or a bool, got {}", shown())))
}

/// simulate(workload, m, scheduler, params=None, placement=None, horizon=None, sporadic=None,
/// exec_fraction=None, seed=0, outputs=[], overheads=None, overhead_stat=None,
/// draw_suspensions=False) -> dict with
/// "summary" (JSON text), "scheduler", "notes", "not_placed" (reason or None), "interrupted"
/// and one entry per requested output: "jsonl", "perfetto", "sched_trace" (bytes), "job_csv",
/// "gantt_svg". `workload`: a TaskSet, or the JSON text of a workload file (fork-join tasks
/// when a task has "regions", docs/rtws.md; DAG tasks when a task has "nodes", docs/dag.md,
/// simulated at node level under gedf, gfp or federated); `m` defaults to the file's. `params`: the
/// scheduler's parameters by name (the registry's, `simulate_scheduler_entries`);
/// `placement`: placement JSON text; `overheads`: the JSON text of an overhead model or of
/// constants; `overhead_stat`: "max" (default) or "avg"; `draw_suspensions`: self-suspending
/// jobs suspend for a time drawn uniformly between each suspension's bounds (seeded by `seed`)
/// instead of its upper bound.
#[pyfunction]
#[pyo3(signature = (workload, m, scheduler, params=None, placement=None, horizon=None, sporadic=None,
                    exec_fraction=None, seed=0, outputs=Vec::new(), overheads=None, overhead_stat=None,
                    draw_suspensions=false))]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    workload: Bound<'py, PyAny>,
    m: Option<u32>,
    scheduler: &str,
    params: Option<Bound<'py, PyDict>>,
    placement: Option<String>,
    horizon: Option<Bound<'py, PyAny>>,
    sporadic: Option<Bound<'py, PyAny>>,
    exec_fraction: Option<f64>,
    seed: u64,
    outputs: Vec<String>,
    overheads: Option<String>,
    overhead_stat: Option<String>,
    draw_suspensions: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let exports = outputs.iter().map(|o| Export::parse(o)).collect::<Result<Vec<_>, _>>().map_err(err)?;
    let (workload, file_m) = if let Ok(ts) = workload.extract::<TaskSet>() {
        (Workload::Sporadic(ts.inner), ts.m)
    } else if let Ok(text) = workload.downcast::<PyString>() {
        let f = rtsched_model::workload::read_json(text.to_str()?).map_err(err)?;
        (f.workload, f.m)
    } else {
        return Err(RtschedError::new_err(
            "argument 'workload': expected a TaskSet or the JSON text of a workload file",
        ));
    };
    let mut req = SimRequest::new(workload, scheduler);
    req.m = m.or(file_m);
    if let Some(d) = params {
        for (k, v) in d.iter() {
            let key: String =
                k.extract().map_err(|_| RtschedError::new_err("argument 'params': keys must be strings"))?;
            let arg = param_arg(&key, &v)?;
            req.params.push((key, arg));
        }
    }
    req.horizon = horizon.map(|h| time_arg(&h, "horizon")).transpose()?;
    req.sporadic = sporadic.map(|s| time_arg(&s, "sporadic")).transpose()?;
    req.exec_fraction = exec_fraction;
    req.draw_suspensions = draw_suspensions;
    req.seed = seed;
    req.exports = exports;
    req.overhead_stat = overhead_stat.as_deref().map(OverheadStat::parse).transpose().map_err(err)?;
    req.overheads = overheads.as_deref().map(OverheadSpec::from_json).transpose().map_err(err)?;
    if let Some(text) = placement {
        // The scheduler's name and whether it takes a placement come before the file's own errors.
        let entry = rtsched_sim::registry::find(scheduler).map_err(err)?;
        entry.resolve(req.params.iter().map(|(k, v)| (k.as_str(), v))).map_err(err)?;
        entry.takes_placement().map_err(err)?;
        let ts = req.workload.sequential().map_err(err)?;
        req.placement = Some(Placement::from_json(&text, &ts).map_err(err)?);
    }
    req.stop = rtsched_model::Stop::new();
    let stop = req.stop.clone();
    let (outcome, interrupted) =
        crate::interrupt::stoppable(py, &stop, || rtsched_sim::simulate_request(&req).map_err(crate::sim_err))?;
    let d = PyDict::new(py);
    match outcome {
        SimOutcome::NotPlaced { scheduler, reason } => {
            d.set_item("summary", "")?;
            d.set_item("scheduler", scheduler)?;
            d.set_item("notes", Vec::<String>::new())?;
            d.set_item("not_placed", reason)?;
        }
        SimOutcome::Simulated(rep) => {
            d.set_item("summary", rep.summary.to_string())?;
            d.set_item("scheduler", rep.scheduler)?;
            d.set_item("notes", rep.notes)?;
            d.set_item("not_placed", py.None())?;
            let x = rep.exports;
            if let Some(v) = x.jsonl {
                d.set_item("jsonl", v)?;
            }
            if let Some(v) = x.perfetto {
                d.set_item("perfetto", v)?;
            }
            if let Some(v) = x.sched_trace {
                d.set_item("sched_trace", PyBytes::new(py, &v))?;
            }
            if let Some(v) = x.job_csv {
                d.set_item("job_csv", v)?;
            }
            if let Some(v) = x.gantt_svg {
                d.set_item("gantt_svg", v)?;
            }
        }
    }
    d.set_item("interrupted", interrupted)?;
    Ok(d)
}

/// simulate_schedulers() -> list[str]: the registered simulator schedulers, in registry order.
#[pyfunction]
fn simulate_schedulers() -> Vec<&'static str> {
    registry::names()
}

/// simulate_scheduler_entries() -> str: the registry as a JSON list (name, summary, line,
/// params with kind/default/help, placement, workloads).
#[pyfunction]
fn simulate_scheduler_entries() -> String {
    serde_json::Value::Array(registry::entries().iter().map(|e| e.to_json()).collect()).to_string()
}

/// placement_partition(ts, text, m) -> list of task-index lists, one per CPU
///
/// The placement parser of `simulate` for `rtsched run --placement`: strict JSON (duplicate
/// keys are errors), validated against `ts`, `m` equal to the run's CPU count, every task one
/// whole reservation (runtime mechanisms run plain partitions).
#[pyfunction]
fn placement_partition(ts: &TaskSet, text: &str, m: u32) -> PyResult<Vec<Vec<usize>>> {
    let p = Placement::from_json_runnable(text, &ts.inner).map_err(err)?;
    registry::plain_partition(&p, &ts.inner, m, "the number of CPUs of the run (--cpus) is").map_err(err)
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
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_scheduler_entries, m)?)?;
    Ok(())
}
