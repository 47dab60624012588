//! `push_pull_costs`: the cost of push/pull's operations per find-CPU variant with the
//! structures alone (Lelli et al., 2011, §6; `rtsched_runtime::mechanism::push_pull::replay`),
//! behind `rtsched reproduce sd-push-cost` (docs/reproductions.md).

use crate::taskset::TaskSet;
use crate::{err, guarded, run_err, RtschedError};
use pyo3::prelude::*;
use rtsched_model::ModelError;
use rtsched_runtime::mechanism::push_pull::replay::{measure, Variant};
use serde_json::json;

/// push_pull_costs(sets, m, horizon, variants=("linear", "fmask", "cpudl", "cpupri"),
/// max_calls=50_000_000) -> str: every set recorded in virtual time for `horizon` ns on `m` CPUs
/// (push/pull G-EDF; rate-monotonic for cpupri), then replayed once per variant with each
/// push, pull, enqueue and dequeue timed by the TSC. Returns a JSON list, one object per
/// (variant, operation): variant, operation, count, outliers, avg_cycles (the mean of the
/// samples the outlier rule keeps), avg_raw_cycles, p50_cycles, p99_cycles, max_cycles (the
/// largest kept), avg_ns, p50_ns, p99_ns (docs/overheads.md, "Measurement protocol").
/// Single-threaded; the GIL is released.
#[pyfunction]
#[pyo3(signature = (sets, m, horizon, variants=vec!["linear".to_string(), "fmask".to_string(), "cpudl".to_string(), "cpupri".to_string()], max_calls=50_000_000))]
fn push_pull_costs(
    py: Python<'_>,
    sets: Vec<TaskSet>,
    m: usize,
    horizon: u64,
    variants: Vec<String>,
    max_calls: usize,
) -> PyResult<String> {
    if m == 0 || m > 4096 {
        return Err(RtschedError::new_err(format!("field 'm': the number of processors must be in 1..=4096, got {m}")));
    }
    if horizon == 0 {
        return Err(RtschedError::new_err("field 'horizon': must be at least 1 ns"));
    }
    if sets.is_empty() {
        return Err(RtschedError::new_err("field 'sets': no task set given"));
    }
    let vs: Vec<Variant> = variants
        .iter()
        .map(|v| Variant::parse(v).map_err(|e| err(ModelError { field: Some("variants".into()), ..e })))
        .collect::<PyResult<_>>()?;
    let sets: Vec<_> = sets.into_iter().map(|s| s.inner).collect();
    guarded(py, || {
        let out = measure(&sets, m, horizon, &vs, max_calls).map_err(run_err)?;
        let rows: Vec<_> = out
            .iter()
            .flat_map(|(v, ops)| {
                ops.iter().map(move |o| {
                    json!({"variant": v.name(), "operation": o.op, "count": o.count,
                           "outliers": o.outliers, "avg_cycles": o.avg_cycles,
                           "avg_raw_cycles": o.avg_raw_cycles, "p50_cycles": o.p50_cycles,
                           "p99_cycles": o.p99_cycles, "max_cycles": o.max_cycles,
                           "avg_ns": o.avg_ns, "p50_ns": o.p50_ns, "p99_ns": o.p99_ns})
                })
            })
            .collect();
        Ok(serde_json::Value::Array(rows).to_string())
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(push_pull_costs, m)?)?;
    Ok(())
}
