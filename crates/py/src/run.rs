//! The runtime's bindings, thin typed conversions of `rtsched_runtime::request`: a run request
//! (a dict, converted field by field) is decided by `prepare_run` into a `RunPlan` (its CPUs,
//! placement and warnings, which the front acts on before the run: preflight, `--isolate`, the
//! throttling warning), and `run(plan)` runs it on real threads (docs/runtime.md).

use crate::convert::json_to_py;
use crate::taskset::TaskSet;
use crate::{run_err, RtschedError};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rtsched_model::Workload;
use rtsched_runtime::{
    DecidedPlacement, ExportData, ExportKind, GivenPlacement, IdleMode, PreparedRun, RunError, RunOutcome, RunRequest,
    TimingFacts, TrustInputs, TrustMechanism,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// Runs `work` on its own thread (the run) while this thread, which holds the GIL only in
/// between, checks Python's signal handlers every 50 ms: the GIL is released during the run,
/// so Python would otherwise not see Ctrl-C until the end. On KeyboardInterrupt it sets
/// `stop` and waits for the run to wind down (a few ms), then returns the partial result
/// (its summary says `"interrupted": true`); any other exception raised by a signal handler
/// is re-raised once the run has ended. Further Ctrl-Cs while it winds down are swallowed.
fn run_interruptibly(
    py: Python<'_>,
    stop: Arc<AtomicBool>,
    work: impl FnOnce() -> PyResult<RunOutcome> + Send + 'static,
) -> PyResult<RunOutcome> {
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
/// terms [{name, symbol, help, tracking, count}], invariant, user_jobs, backend) in registration
/// order — what the CLI, the Python API and the benchmarks list mechanisms from.
#[pyfunction]
fn mechanisms() -> String {
    let list: Vec<serde_json::Value> =
        rtsched_runtime::mechanism::registry::entries().iter().map(|e| e.to_json()).collect();
    serde_json::Value::Array(list).to_string()
}

/// check_mechanism_params(scheduler, params) -> None: the (KEY, VALUE) text pairs of a run's
/// mechanism parameters read by the runtime's registry (`Entry::resolve`, the one reading of
/// every engine's parameters, `rtsched_model::params::resolve`), before anything runs: an
/// unknown, repeated or bad one raises the one line a run would.
#[pyfunction]
fn check_mechanism_params(scheduler: &str, params: Vec<(String, String)>) -> PyResult<()> {
    let entry = rtsched_runtime::mechanism::registry::find(scheduler).map_err(run_err)?;
    entry.resolve(params.iter().map(|(k, v)| (k.as_str(), v.as_str()))).map_err(run_err)?;
    Ok(())
}

/// The fields of a run request (`prepare_run`'s dict), each optional but `workload`,
/// `scheduler` and `duration_ns`.
const REQUEST_FIELDS: [&str; 16] = [
    "workload",
    "scheduler",
    "duration_ns",
    "cpus",
    "placement",
    "dedicated_cpu",
    "rt_priority",
    "idle",
    "force",
    "seed",
    "exports",
    "params",
    "exec_min_fraction",
    "calibration",
    "no_calibration",
    "reaction_model",
];

/// Field `key` of a request dict, converted; a wrong type is an error naming the field.
fn field<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
    match d.get_item(key)? {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => v
            .extract::<T>()
            .map(Some)
            .map_err(|e| RtschedError::new_err(format!("run request: field '{key}': {}", e.value(d.py())))),
    }
}

fn required<'py, T: FromPyObject<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<T> {
    field(d, key)?.ok_or_else(|| RtschedError::new_err(format!("run request: field '{key}' is required")))
}

/// A request dict as the runtime's [`RunRequest`], field by field.
fn request_of(d: &Bound<'_, PyDict>) -> PyResult<RunRequest> {
    for k in d.keys() {
        let k: String = k.extract()?;
        if !REQUEST_FIELDS.contains(&k.as_str()) {
            return Err(RtschedError::new_err(format!(
                "run request: unknown field '{k}' (fields: {})",
                REQUEST_FIELDS.join(", ")
            )));
        }
    }
    let scheduler: String = required(d, "scheduler")?;
    let duration_ns: u64 = required(d, "duration_ns")?;
    // A TaskSet, or the text of a fork-join or DAG task-set file (docs/rtws.md, docs/dag.md).
    let w =
        d.get_item("workload")?.ok_or_else(|| RtschedError::new_err("run request: field 'workload' is required"))?;
    let (workload, m): (Workload, Option<u32>) = if let Ok(ts) = w.extract::<PyRef<'_, TaskSet>>() {
        (Workload::Sporadic(ts.inner.clone()), ts.m)
    } else if let Ok(text) = w.extract::<String>() {
        match rtsched_model::workload::read_json(&text).map_err(crate::err)? {
            rtsched_model::WorkloadFile { workload: w @ (Workload::Dag(_) | Workload::ForkJoin(_)), m } => (w, m),
            // Sporadic tasks come as a TaskSet: the text is read as a fork-join file, whose
            // error names what is missing.
            rtsched_model::WorkloadFile { workload: Workload::Sporadic(_), .. } => {
                let file = rtsched_model::forkjoin::read_json(&text).map_err(crate::err)?;
                (Workload::ForkJoin(file.set), file.m)
            }
        }
    } else {
        return Err(RtschedError::new_err(
            "run request: field 'workload': expected a TaskSet or a fork-join or DAG file's JSON text",
        ));
    };
    let mut r = RunRequest::new(workload, &scheduler, duration_ns);
    r.m = m;
    r.cpus = field(d, "cpus")?;
    r.dedicated_cpu = field(d, "dedicated_cpu")?;
    r.rt_priority = field(d, "rt_priority")?;
    r.idle = match field::<String>(d, "idle")?.as_deref() {
        None | Some("sleep") => IdleMode::Sleep,
        Some("spin") => IdleMode::Spin,
        Some(other) => return Err(RtschedError::new_err(format!("idle must be sleep or spin, got {other:?}"))),
    };
    r.force = field(d, "force")?.unwrap_or(false);
    r.seed = field(d, "seed")?.unwrap_or(0);
    r.exec_min_fraction = field(d, "exec_min_fraction")?;
    r.params = field(d, "params")?.unwrap_or_default();
    r.exports = field::<Vec<String>>(d, "exports")?
        .unwrap_or_default()
        .iter()
        .map(|e| ExportKind::parse(e))
        .collect::<Result<_, _>>()
        .map_err(run_err)?;
    r.trust = trust_inputs(field(d, "calibration")?, field(d, "no_calibration")?, field(d, "reaction_model")?)?;
    r.placement = match d.get_item("placement")? {
        None => None,
        Some(p) if p.is_none() => None,
        Some(p) => Some(if let Ok(text) = p.extract::<String>() {
            placement_of(&text, &r)?
        } else {
            GivenPlacement::Partition(p.extract().map_err(|_| {
                RtschedError::new_err(
                    "run request: field 'placement': expected a placement's JSON text or task-index lists per CPU",
                )
            })?)
        }),
    };
    Ok(r)
}

/// What the trust verdict is judged against: a calibration's JSON text (`rtsched calibrate`),
/// why there is none, and an overhead model as (its name, its JSON text); each reader's error
/// names the field.
fn trust_inputs(
    calibration: Option<String>,
    no_calibration: Option<String>,
    model: Option<(String, String)>,
) -> PyResult<TrustInputs> {
    let calibration = match calibration {
        None => None,
        Some(text) => {
            let v: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| RtschedError::new_err(format!("field 'calibration': not JSON: {e}")))?;
            Some(rtsched_runtime::Calibration::from_json(&v).map_err(run_err)?)
        }
    };
    let model = match model {
        None => None,
        Some((name, text)) => Some((
            name.clone(),
            rtsched_model::overheads::OverheadModel::from_json(&text)
                .map_err(|e| RtschedError::new_err(format!("field 'reaction_model' ({name}): {e}")))?,
        )),
    };
    Ok(TrustInputs { calibration, no_calibration, model })
}

/// A placement's JSON text (`rtsched partition --json`) read with the model's strict reader
/// against the request's task set; its errors read as they always have for the mechanism's kind.
fn placement_of(text: &str, r: &RunRequest) -> PyResult<GivenPlacement> {
    let ts = match &r.workload {
        Workload::Sporadic(ts) => ts,
        Workload::ForkJoin(_) => return Err(RtschedError::new_err("a fork-join workload runs without a placement")),
        Workload::Dag(_) => return Err(RtschedError::new_err("a DAG workload runs without a placement")),
    };
    let reservations = rtsched_runtime::mechanism::registry::find(&r.mechanism)
        .is_ok_and(|e| e.placement == rtsched_runtime::mechanism::registry::PlacementKind::Reservations);
    match rtsched_model::Placement::from_json(text, ts) {
        Ok(p) => Ok(GivenPlacement::Placement(p)),
        Err(e) if reservations => Err(run_err(RunError::Config(format!("placement: {e}")))),
        Err(e) => Err(crate::err(e)),
    }
}

/// A decided run (`prepare_run`), ready for `run`: what it will use, said before it starts.
#[pyclass(frozen, module = "rtsched._core")]
pub(crate) struct RunPlan {
    prepared: PreparedRun,
}

#[pymethods]
impl RunPlan {
    /// The task CPUs, worker i on cpus[i].
    #[getter]
    fn cpus(&self) -> Vec<usize> {
        self.prepared.decision.cpus.clone()
    }
    /// Task indices per CPU of the run (pedf, pfp, or spres given task lists), else None.
    #[getter]
    fn partition(&self) -> Option<Vec<Vec<usize>>> {
        match &self.prepared.decision.placement {
            DecidedPlacement::Partition(p) => Some(p.clone()),
            _ => None,
        }
    }
    /// The reservation placement (spres) as its JSON object, else None.
    #[getter]
    fn placement(&self, py: Python<'_>) -> PyResult<PyObject> {
        match &self.prepared.decision.placement {
            DecidedPlacement::Reservations(p) => json_to_py(py, &p.to_json()),
            _ => Ok(py.None()),
        }
    }
    /// Warnings about the run's size (listed in the summary's warnings).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.prepared.decision.warnings.clone()
    }
    /// Warnings about the placement (said, not listed in the summary's warnings).
    #[getter]
    fn placement_warnings(&self) -> Vec<String> {
        self.prepared.decision.placement_warnings.clone()
    }
    /// What was decided for the user (the default placement).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.prepared.decision.notes.clone()
    }
}

/// prepare_run(request: dict) -> RunPlan
///
/// Decides a run without starting it (`rtsched_runtime::RunRequest::prepare`): its CPUs, its
/// placement (the default one of pedf / pfp / spres when none is given) and the warnings to
/// say before it. `request` has the fields `workload` (a TaskSet, or a fork-join file's JSON
/// text, docs/rtws.md), `scheduler`, `duration_ns` (required), `cpus` (None: the first m this
/// process may use), `placement` (a placement's JSON text or task-index lists per CPU),
/// `dedicated_cpu`, `rt_priority`, `idle` ("sleep" / "spin"), `force`, `seed`, `exports`
/// ("jsonl", "perfetto", "job_csv", "gantt_svg", "sched_trace", "overhead_samples"), `params`
/// (the mechanism's (name, text) pairs), `exec_min_fraction`, and what the trust verdict is
/// judged against: `calibration` (a calibration's JSON text, `rtsched calibrate`),
/// `no_calibration` (why there is none) and `reaction_model` ((name, an overhead model's JSON
/// text)). A wrong type names the field;
/// a refusal (too few CPUs, no placement fits, bad parameters) raises RtschedError. Ctrl-C
/// stops a long placement search (KeyboardInterrupt).
#[pyfunction]
fn prepare_run(py: Python<'_>, request: &Bound<'_, PyDict>) -> PyResult<RunPlan> {
    let req = request_of(request)?;
    let stop = rtsched_model::Stop::new();
    let (out, interrupted) = crate::interrupt::stoppable(py, &stop, || Ok(req.prepare_with(&stop)))?;
    if interrupted {
        return Err(PyKeyboardInterrupt::new_err("placing the run's tasks interrupted"));
    }
    Ok(RunPlan { prepared: out.map_err(run_err)? })
}

/// run(plan: RunPlan) -> dict
///
/// Runs a prepared run on real threads. Returns {"summary": JSON text (computed from the
/// run's own trace, with the priority-inversion monitor's result; a fork-join run's adds its
/// job-level "forkjoin" object), "trustworthy": bool, "trustworthy_reason": str (the Rust
/// verdict, `rtsched_runtime::request::assess_timing`)} plus one entry per requested export:
/// "jsonl", "perfetto", "job_csv", "gantt_svg", "overhead_samples" (text; the samples JSON
/// per term in ns) and "sched_trace" (bytes). Errors (privileges, kernel admission, a run too
/// big for its trace) raise RtschedError. Ctrl-C (in the main thread) stops the run early and
/// returns what it measured, with `"interrupted": true` and the actual `duration_ns` in the
/// summary.
#[pyfunction]
fn run<'py>(py: Python<'py>, plan: PyRef<'py, RunPlan>) -> PyResult<Bound<'py, PyDict>> {
    let mut prepared = plan.prepared.clone();
    drop(plan);
    let stop = Arc::new(AtomicBool::new(false));
    prepared.request.stop = Some(stop.clone());
    let out = run_interruptibly(py, stop, move || prepared.run().map_err(run_err))?;
    let d = PyDict::new(py);
    d.set_item("summary", out.summary.to_string())?;
    d.set_item("trustworthy", out.trustworthy)?;
    d.set_item("trustworthy_reason", out.trustworthy_reason)?;
    d.set_item("trust_unchecked", out.trust_unchecked)?;
    for (kind, data) in out.exports {
        match data {
            ExportData::Text(t) => d.set_item(kind.name(), t)?,
            ExportData::Bytes(b) => d.set_item(kind.name(), pyo3::types::PyBytes::new(py, &b))?,
        }
    }
    Ok(d)
}

/// assess_timing(summary: str, scheduler: str, rt_priority=None, calibration=None,
/// no_calibration=None, reaction_model=None) -> (bool, str, list[str]): whether a run summary's
/// (JSON text) measured timing is trustworthy under `scheduler`, why, and the checks it cannot
/// make (`rtsched_runtime::request::assess_timing`, docs/runtime.md "Trustworthy timing"),
/// against a calibration's JSON text and a model (name, JSON text) as a run request takes them.
#[pyfunction]
#[pyo3(signature = (summary, scheduler, rt_priority=None, calibration=None, no_calibration=None, reaction_model=None))]
fn assess_timing(
    summary: &str,
    scheduler: &str,
    rt_priority: Option<i32>,
    calibration: Option<String>,
    no_calibration: Option<String>,
    reaction_model: Option<(String, String)>,
) -> PyResult<(bool, String, Vec<String>)> {
    let s: serde_json::Value = serde_json::from_str(summary)
        .map_err(|e| RtschedError::new_err(format!("argument 'summary': not JSON: {e}")))?;
    let entry = rtsched_runtime::mechanism::registry::find(scheduler).map_err(run_err)?;
    let terms = rtsched_runtime::entry_terms(entry);
    let inputs = trust_inputs(calibration, no_calibration, reaction_model)?;
    let v = rtsched_runtime::assess_timing(
        &TimingFacts::from_summary(&s),
        &TrustMechanism::of(entry, &terms),
        rt_priority,
        &inputs,
    );
    Ok((v.trustworthy, v.reason, v.unchecked))
}

/// calibrate(budget_ns: int, rt_priority=None) -> str: this machine's calibration as JSON text
/// (`rtsched_runtime::measure_calibration`: timer floor and scheduling noise, medians of the
/// windows' maxima, measured within `budget_ns` on a thread of its own, at SCHED_FIFO
/// `rt_priority` where allowed). Ctrl-C is not awaited: the budget is at most 60 s.
#[pyfunction]
#[pyo3(signature = (budget_ns, rt_priority=None))]
fn calibrate(py: Python<'_>, budget_ns: u64, rt_priority: Option<i32>) -> PyResult<String> {
    let c = py.allow_threads(|| rtsched_runtime::measure_calibration(budget_ns, rt_priority)).map_err(run_err)?;
    Ok(c.to_json().to_string())
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
    m.add_class::<RunPlan>()?;
    m.add_function(wrap_pyfunction!(prepare_run, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(assess_timing, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate, m)?)?;
    m.add("CALIBRATION_CAP_NS", rtsched_runtime::request::CALIBRATION_CAP_NS)?;
    m.add("TRUST_FACTOR", rtsched_runtime::request::TRUST_FACTOR)?;
    m.add("TRUST_FLOOR_NS", rtsched_runtime::request::TRUST_FLOOR_NS)?;
    m.add_function(wrap_pyfunction!(forkjoin_slot_set, m)?)?;
    m.add_function(wrap_pyfunction!(mechanisms, m)?)?;
    m.add_function(wrap_pyfunction!(check_mechanism_params, m)?)?;
    Ok(())
}
