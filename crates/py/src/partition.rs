//! `_core.default_partition`: the default partition of the partitioned schedulers, decided in
//! one place for both `rtsched simulate` and `rtsched run`. Which schedulers are partitioned,
//! and with which exact admission test (the processor demand criterion via QPA for P-EDF,
//! deadline-monotonic response-time analysis for P-FP, whose priorities are deadline monotonic
//! in both engines), is the simulator registry's (`rtsched_sim::registry`, `PlacementKind::
//! Partition`); the partition itself is `rtsched_analysis::partition::default_partition`.

use crate::taskset::TaskSet;
use crate::{err, RtschedError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rtsched_analysis::partition::NotPlaced;
use rtsched_model::Stop;
use rtsched_sim::registry::{self, PlacementKind};

/// default_partition(ts, scheduler, m) -> {"partition": list[list[int]] | None, "note": str,
/// "reason": str | None}: the partition `pedf` / `pfp` use without a placement (the same in
/// `rtsched run` and `rtsched simulate`); `partition` is None, with the reason, when some task
/// fits nowhere.
#[pyfunction]
#[pyo3(name = "default_partition")]
fn py_default_partition<'py>(py: Python<'py>, ts: TaskSet, scheduler: &str, m: u32) -> PyResult<Bound<'py, PyDict>> {
    rtsched_model::check_m(m as u64).map_err(err)?;
    let entry =
        registry::entries().iter().find(|e| e.name == scheduler && matches!(e.placement, PlacementKind::Partition(_)));
    let Some(entry) = entry else {
        let partitioned: Vec<&str> = registry::entries()
            .iter()
            .filter(|e| matches!(e.placement, PlacementKind::Partition(_)))
            .map(|e| e.name)
            .collect();
        return Err(RtschedError::new_err(format!(
            "field 'scheduler': {scheduler:?} has no default partition (partitioned schedulers: {})",
            partitioned.join(", ")
        )));
    };
    let stop = Stop::new();
    let (out, interrupted) = crate::interrupt::stoppable(py, &stop, || {
        entry
            .default_partition(&ts.inner, m, &stop)
            .ok_or_else(|| crate::internal_err(format!("{} has no default partition", entry.name)))
    })?;
    if interrupted {
        return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err("partitioning interrupted"));
    }
    let d = PyDict::new(py);
    match out {
        Ok(p) => {
            d.set_item("partition", p.cpus)?;
            d.set_item("note", p.note)?;
            d.set_item("reason", py.None())?;
        }
        Err(NotPlaced(why)) => {
            d.set_item("partition", py.None())?;
            d.set_item("note", "")?;
            d.set_item("reason", why)?;
        }
    }
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(py_default_partition, m)?)?;
    Ok(())
}
