//! The runtime's bindings: `run` (real threads, docs/runtime.md) with the converted trace's
//! exports, and worst-fit-decreasing partitioning for `pedf` / `pfp` without a placement.

use crate::model::TaskSet;
use crate::{guarded, RtschedError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rtsched_analysis::partition::{partition, Admission, Fit, Order, PartitionOutcome};
use rtsched_analysis::Limits;
use rtsched_runtime::monitor::summary_with_monitors;
use rtsched_runtime::to_trace::to_trace;
use rtsched_runtime::{IdleMode, Mechanism, RunConfig};

/// wfd_partition(ts, m) -> list[list[int]] | None: worst-fit decreasing by utilization with
/// the exact EDF admission test (None when some task fits nowhere).
#[pyfunction]
fn wfd_partition(py: Python<'_>, ts: TaskSet, m: u32) -> PyResult<Option<Vec<Vec<usize>>>> {
    if m == 0 {
        return Err(RtschedError::new_err("the CPU list is empty"));
    }
    guarded(py, || {
        Ok(match partition(&ts.inner, m, Fit::Worst, Order::DecreasingUtilization, Admission::Edf, &Limits::default()) {
            PartitionOutcome::Placed(p) => Some(p.cpus),
            PartitionOutcome::Failed { .. } => None,
        })
    })
}

/// run(ts, scheduler, cpus, duration_ns, partition=None, dedicated_cpu=None, rt_priority=None,
///     idle="sleep", force=False, seed=0, exports=[]) -> dict
///
/// Returns {"summary": JSON text (with priority_inversion_ns)} plus one entry per requested
/// export of the converted trace: "jsonl", "perfetto", "job_csv", "gantt_svg" (text) and
/// "sched_trace" (bytes). Errors (bad CPUs, privileges, kernel admission) raise RtschedError.
#[pyfunction]
#[pyo3(signature = (ts, scheduler, cpus, duration_ns, partition=None, dedicated_cpu=None, rt_priority=None,
                    idle="sleep", force=false, seed=0, exports=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(py: Python<'py>, ts: TaskSet, scheduler: &str, cpus: Vec<usize>, duration_ns: u64,
            partition: Option<Vec<Vec<usize>>>, dedicated_cpu: Option<usize>, rt_priority: Option<i32>,
            idle: &str, force: bool, seed: u64, exports: Vec<String>) -> PyResult<Bound<'py, PyDict>> {
    let idle = match idle {
        "sleep" => IdleMode::Sleep,
        "spin" => IdleMode::Spin,
        _ => return Err(RtschedError::new_err(format!("idle must be sleep or spin, got {idle:?}"))),
    };
    for e in &exports {
        if !["jsonl", "perfetto", "job_csv", "gantt_svg", "sched_trace"].contains(&e.as_str()) {
            return Err(RtschedError::new_err(format!("unknown export {e:?}")));
        }
    }
    let mech = Mechanism::parse(scheduler, partition).map_err(|e| RtschedError::new_err(e.to_string()))?;
    let mut cfg = RunConfig::new(cpus, duration_ns);
    cfg.dedicated_cpu = dedicated_cpu;
    cfg.rt_priority = rt_priority;
    cfg.idle = idle;
    cfg.force = force;
    cfg.seed = seed;
    let ts_inner = ts.inner.clone();
    let (summary, texts, bytes) = guarded(py, move || {
        let r = rtsched_runtime::run(&ts_inner, &mech, &cfg).map_err(|e| RtschedError::new_err(e.to_string()))?;
        let summary = summary_with_monitors(&r, &ts_inner, &mech).to_string();
        let mut texts: Vec<(String, String)> = Vec::new();
        let mut bytes: Option<Vec<u8>> = None;
        if !exports.is_empty() {
            let tr = to_trace(&r, &ts_inner).map_err(RtschedError::new_err)?;
            for e in &exports {
                match e.as_str() {
                    "jsonl" => texts.push((e.clone(), tr.to_jsonl())),
                    "perfetto" => texts.push((e.clone(), tr.to_perfetto_json())),
                    "job_csv" => texts.push((e.clone(), tr.to_job_csv().map_err(crate::err)?)),
                    "gantt_svg" => texts.push((e.clone(), tr.to_gantt_svg(None))),
                    _ => bytes = Some(tr.to_sched_trace_bytes().map_err(crate::err)?),
                }
            }
        }
        Ok((summary, texts, bytes))
    })?;
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

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(wfd_partition, m)?)?;
    Ok(())
}
