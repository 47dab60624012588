//! The runtime's bindings: `run` (real threads, docs/runtime.md) with the converted trace's
//! exports (`pedf` / `pfp` without a placement get the default partition of
//! [`crate::partition`], through `_core.default_partition`, as in `rtsched simulate`).

use crate::taskset::TaskSet;
use crate::{run_err, RtschedError};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rtsched_runtime::{to_trace, ExecTime, IdleMode, Mechanism, RunConfig, RunError, RunResult};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// A run's text exports by name, and the binary sched_trace if asked for.
type Exports = (Vec<(String, String)>, Option<Vec<u8>>);
type Outputs = (String, Vec<(String, String)>, Option<Vec<u8>>);

/// Runs `work` on its own thread (the run) while this thread, which holds the GIL only in
/// between, checks Python's signal handlers every 50 ms: the GIL is released during the run,
/// so Python would otherwise not see Ctrl-C until the end. On KeyboardInterrupt it sets
/// `stop` and waits for the run to wind down (a few ms), then returns the partial result
/// (its summary says `"interrupted": true`); any other exception raised by a signal handler
/// is re-raised once the run has ended. Further Ctrl-Cs while it winds down are swallowed.
fn run_interruptibly(
    py: Python<'_>,
    stop: Arc<AtomicBool>,
    work: impl FnOnce() -> PyResult<Outputs> + Send + 'static,
) -> PyResult<Outputs> {
    let (tx, rx) = channel();
    let handle = std::thread::Builder::new()
        .name("rtsched-run".into())
        .spawn(move || {
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            let _ = tx.send(out);
        })
        .map_err(|e| RtschedError::new_err(format!("cannot start the run's thread: {e}")))?;
    let mut raised: Option<PyErr> = None;
    let mut rx = rx;
    let out = loop {
        // The receiver is moved through (it is Send, not Sync).
        let (got, back) = py.allow_threads(move || (rx.recv_timeout(Duration::from_millis(50)), rx));
        rx = back;
        match got {
            Ok(out) => break out,
            Err(RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    stop.store(true, Ordering::SeqCst);
                    raised.get_or_insert(e);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                break Err(Box::new("the run's thread ended without a result") as Box<dyn std::any::Any + Send>)
            }
        }
    };
    let _ = handle.join();
    if let Some(e) = raised {
        if !e.is_instance_of::<PyKeyboardInterrupt>(py) {
            return Err(e);
        }
    }
    out.unwrap_or_else(|p| Err(crate::internal_err(crate::panic_message(p.as_ref()))))
}

/// mechanisms() -> str: the mechanism registry as JSON, a list of entries (name, summary,
/// params [{name, kind, default, help, flag}], placement, dedicated_cpu, dedicated_role,
/// terms [{name, symbol, help, tracking}], invariant, user_jobs, backend) in registration
/// order — what the CLI, the Python API and the benchmarks list mechanisms from.
#[pyfunction]
fn mechanisms() -> String {
    let list: Vec<serde_json::Value> =
        rtsched_runtime::mechanism::registry::entries().iter().map(|e| e.to_json()).collect();
    serde_json::Value::Array(list).to_string()
}

/// run(ts, scheduler, cpus, duration_ns, partition=None, dedicated_cpu=None, rt_priority=None,
///     idle="sleep", force=False, seed=0, exports=[], params={}, reservations=None,
///     exec_min_fraction=None) -> dict
///
/// `reservations`: a reservation placement's JSON text (`rtsched partition --json`, read here
/// with the model's strict reader, `rtsched_model::Placement::from_json`), for
/// mechanisms whose registry entry says `"placement": "reservations"` (spres).
///
/// `exec_min_fraction`: each job runs a fraction uniform in `[f, 1]` of its WCET, drawn from
/// `seed` per (task, job) (`ExecTime::Uniform`; None: every job runs its WCET).
///
/// `params`: the mechanism's parameters as text (`{"priorities": "rm"}`), checked against its
/// registry entry (unknown names and bad values raise RtschedError).
/// Returns {"summary": JSON text (computed from the run's own trace, with the
/// priority-inversion monitor's result)} plus one entry per requested
/// export of the converted trace: "jsonl", "perfetto", "job_csv", "gantt_svg" (text) and
/// "sched_trace" (bytes), and "overhead_samples" (JSON text: every overhead sample of the run in
/// ns, per term, in trace order — what the summary's statistics are computed from). Errors (bad CPUs, privileges, kernel admission) raise RtschedError.
/// Ctrl-C (in the main thread) stops the run early and returns what it measured, with
/// `"interrupted": true` and the actual `duration_ns` in the summary.
#[pyfunction]
#[pyo3(signature = (ts, scheduler, cpus, duration_ns, partition=None, dedicated_cpu=None, rt_priority=None,
                    idle="sleep", force=false, seed=0, exports=Vec::new(), params=Vec::new(), reservations=None,
                    exec_min_fraction=None))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    ts: TaskSet,
    scheduler: &str,
    cpus: Vec<usize>,
    duration_ns: u64,
    partition: Option<Vec<Vec<usize>>>,
    dedicated_cpu: Option<usize>,
    rt_priority: Option<i32>,
    idle: &str,
    force: bool,
    seed: u64,
    exports: Vec<String>,
    params: Vec<(String, String)>,
    reservations: Option<String>,
    exec_min_fraction: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let idle = check_run_args(idle, &exports)?;
    // The reservation placement's JSON text becomes the model's Placement here, once.
    let reservations = reservations
        .map(|text| {
            rtsched_model::Placement::from_json(&text, &ts.inner)
                .map_err(|e| RtschedError::new_err(RunError::Config(format!("placement: {e}")).to_string()))
        })
        .transpose()?;
    let mech = Mechanism::parse(scheduler, partition)
        .and_then(|m| m.with_params(params.iter().map(|(k, v)| (k.as_str(), v.as_str()))))
        .map(|m| match reservations {
            Some(p) => m.with_reservations(p),
            None => m,
        })
        .map_err(run_err)?;
    let mut cfg = RunConfig::new(cpus, duration_ns);
    cfg.dedicated_cpu = dedicated_cpu;
    cfg.rt_priority = rt_priority;
    cfg.idle = idle;
    cfg.force = force;
    cfg.seed = seed;
    if let Some(f) = exec_min_fraction {
        cfg.exec = ExecTime::Uniform { min_fraction: f };
    }
    let stop = Arc::new(AtomicBool::new(false));
    cfg.stop = Some(stop.clone());
    let ts_inner = ts.inner.clone();
    let (summary, texts, bytes) = run_interruptibly(py, stop, move || {
        let r = rtsched_runtime::run(&ts_inner, &mech, &cfg).map_err(run_err)?;
        let summary = r.summary_json().to_string();
        let (exports, samples) = take_samples(&r, exports);
        let (mut texts, bytes) = if exports.is_empty() {
            (Vec::new(), None)
        } else {
            let tr = to_trace(&r, &ts_inner).map_err(run_err)?;
            export_trace(&tr, &exports, || tr.to_job_csv().map_err(crate::err))?
        };
        texts.extend(samples);
        Ok((summary, texts, bytes))
    })?;
    outputs_dict(py, summary, texts, bytes)
}

/// run_forkjoin(text, scheduler, cpus, duration_ns, rt_priority=None, idle="sleep", force=False,
///              seed=0, exports=[], params=[]) -> dict
///
/// Runs the fork-join task-set file `text` (JSON, docs/rtws.md) on real cores under a mechanism
/// that executes fork-join jobs (`rtws`, `push-pull`; docs/mechanisms/rtws.md). As `run`, with the summary's
/// `forkjoin` object (job-level: jobs, completed, pending, deadline_misses,
/// max_response_time_ns, threads, steals); the trace exports are per thread (task `NAME/rR.K` =
/// region R, thread K of task NAME), the job CSV one row per fork-join job.
#[pyfunction]
#[pyo3(signature = (text, scheduler, cpus, duration_ns, rt_priority=None, idle="sleep", force=false, seed=0,
                    exports=Vec::new(), params=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn run_forkjoin<'py>(
    py: Python<'py>,
    text: &str,
    scheduler: &str,
    cpus: Vec<usize>,
    duration_ns: u64,
    rt_priority: Option<i32>,
    idle: &str,
    force: bool,
    seed: u64,
    exports: Vec<String>,
    params: Vec<(String, String)>,
) -> PyResult<Bound<'py, PyDict>> {
    let idle = check_run_args(idle, &exports)?;
    let set = rtsched_model::forkjoin::read_json(text).map_err(crate::err)?.set;
    let mech = Mechanism::parse(scheduler, None)
        .and_then(|m| m.with_params(params.iter().map(|(k, v)| (k.as_str(), v.as_str()))))
        .map_err(run_err)?;
    let mut cfg = RunConfig::new(cpus, duration_ns);
    cfg.rt_priority = rt_priority;
    cfg.idle = idle;
    cfg.force = force;
    cfg.seed = seed;
    let stop = Arc::new(AtomicBool::new(false));
    cfg.stop = Some(stop.clone());
    let (summary, texts, bytes) = run_interruptibly(py, stop, move || {
        let r = rtsched_runtime::run_forkjoin(&set, &mech, &cfg).map_err(run_err)?;
        let mut summary = r.summary_json();
        summary["forkjoin"] = rtsched_runtime::forkjoin_summary(&set, &r);
        let (exports, samples) = take_samples(&r, exports);
        let (mut texts, bytes) = if exports.is_empty() {
            (Vec::new(), None)
        } else {
            let ts = rtsched_runtime::slot_task_set(&set).map_err(run_err)?;
            let tr = to_trace(&r, &ts).map_err(run_err)?;
            export_trace(&tr, &exports, || Ok(rtsched_runtime::forkjoin_job_csv(&set, &r)))?
        };
        texts.extend(samples);
        Ok((summary.to_string(), texts, bytes))
    })?;
    outputs_dict(py, summary, texts, bytes)
}

/// forkjoin_slot_set(text) -> TaskSet: the sequential task set a fork-join file runs as on the
/// runtime (`rtsched_runtime::slot_task_set`: one task per thread slot, named `NAME/rR.K`, the
/// thread's cost as WCET, the fork-join task's deadline and period; `m` = the file's). Without
/// the fork-join structure its jobs are independent threads: what a mechanism that runs
/// sequential tasks only (e.g. `gsn-edf`) can run of a fork-join set.
#[pyfunction]
fn forkjoin_slot_set(text: &str) -> PyResult<TaskSet> {
    let file = rtsched_model::forkjoin::read_json(text).map_err(crate::err)?;
    let ts = rtsched_runtime::slot_task_set(&file.set).map_err(run_err)?;
    Ok(TaskSet::wrap(ts, file.m))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_forkjoin, m)?)?;
    m.add_function(wrap_pyfunction!(forkjoin_slot_set, m)?)?;
    m.add_function(wrap_pyfunction!(mechanisms, m)?)?;
    Ok(())
}

/// The idle mode of a run, after checking that every requested export is known.
fn check_run_args(idle: &str, exports: &[String]) -> PyResult<IdleMode> {
    for e in exports {
        if !["jsonl", "perfetto", "job_csv", "gantt_svg", "sched_trace", "overhead_samples"].contains(&e.as_str()) {
            return Err(RtschedError::new_err(format!("unknown export {e:?}")));
        }
    }
    match idle {
        "sleep" => Ok(IdleMode::Sleep),
        "spin" => Ok(IdleMode::Spin),
        _ => Err(RtschedError::new_err(format!("idle must be sleep or spin, got {idle:?}"))),
    }
}

/// The "overhead_samples" export (the run's samples per term, JSON text) if requested, and the
/// other exports, which come from the converted trace.
fn take_samples(r: &RunResult, exports: Vec<String>) -> (Vec<String>, Option<(String, String)>) {
    let (samples, rest): (Vec<String>, Vec<String>) = exports.into_iter().partition(|e| e == "overhead_samples");
    let text =
        (!samples.is_empty()).then(|| ("overhead_samples".to_string(), serde_json::json!(r.overheads).to_string()));
    (rest, text)
}

/// The requested exports of a run's trace: texts by name, and the binary sched_trace. The job
/// CSV is the caller's (per task, or per fork-join job).
fn export_trace(
    tr: &rtsched_trace::Trace,
    exports: &[String],
    job_csv: impl Fn() -> PyResult<String>,
) -> PyResult<Exports> {
    let mut texts = Vec::new();
    let mut bytes = None;
    for e in exports {
        match e.as_str() {
            "jsonl" => texts.push((e.clone(), tr.to_jsonl())),
            "perfetto" => texts.push((e.clone(), tr.to_perfetto_json())),
            "job_csv" => texts.push((e.clone(), job_csv()?)),
            "gantt_svg" => texts.push((e.clone(), tr.to_gantt_svg(None))),
            _ => bytes = Some(tr.to_sched_trace_bytes().map_err(crate::err)?),
        }
    }
    Ok((texts, bytes))
}

/// The dict `_core.run` and `_core.run_forkjoin` return: the summary JSON, each text export by
/// name, and `sched_trace` as bytes.
fn outputs_dict(
    py: Python<'_>,
    summary: String,
    texts: Vec<(String, String)>,
    bytes: Option<Vec<u8>>,
) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("summary", summary)?;
    for (k, v) in texts {
        d.set_item(k, v)?;
    }
    if let Some(b) = bytes {
        d.set_item("sched_trace", pyo3::types::PyBytes::new(py, &b))?;
    }
    Ok(d)
}
