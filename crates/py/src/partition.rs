//! The default partition of the partitioned schedulers, decided in one place for both
//! `rtsched simulate` and `rtsched run`: without a placement, `pedf` and `pfp` are partitioned
//! by worst-fit decreasing utilization with the scheduler's own exact admission test — the
//! processor demand criterion via QPA for P-EDF, deadline-monotonic response-time analysis for
//! P-FP (whose priorities are deadline monotonic in both engines).

use crate::taskset::TaskSet;
use crate::{err, RtschedError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rtsched_analysis::partition::Admission;
pub(crate) use rtsched_analysis::partition::{DefaultPartition, NotPlaced};
use rtsched_analysis::uni::fp::Priority;
use rtsched_analysis::Limits;
use rtsched_model::{Stop, TaskSet as RTaskSet};

/// The partitioned schedulers that have a default partition.
pub(crate) const PARTITIONED: [&str; 2] = ["pedf", "pfp"];

/// The admission test of a partitioned scheduler.
fn admission(scheduler: &str) -> Option<Admission> {
    match scheduler {
        "pedf" => Some(Admission::Edf),
        "pfp" => Some(Admission::Fp(Priority::DeadlineMonotonic)),
        _ => None,
    }
}

/// The default partition of `pedf` / `pfp` ([`rtsched_analysis::partition::default_partition`]
/// with the scheduler's admission; callers check the name). A requested `stop` (Ctrl-C) ends it
/// early; the caller, which requested it, discards the answer.
pub(crate) fn default_partition(
    ts: &RTaskSet,
    m: u32,
    scheduler: &str,
    stop: &Stop,
) -> Result<DefaultPartition, NotPlaced> {
    let adm = admission(scheduler).unwrap_or(Admission::Edf);
    let lim = Limits { stop: stop.clone(), ..Limits::default() };
    rtsched_analysis::partition::default_partition(ts, m, adm, &lim)
}

/// default_partition(ts, scheduler, m) -> {"partition": list[list[int]] | None, "note": str,
/// "reason": str | None}: the partition `pedf` / `pfp` use without a placement (the same in
/// `rtsched run` and `rtsched simulate`); `partition` is None, with the reason, when some task
/// fits nowhere.
#[pyfunction]
#[pyo3(name = "default_partition")]
fn py_default_partition<'py>(py: Python<'py>, ts: TaskSet, scheduler: &str, m: u32) -> PyResult<Bound<'py, PyDict>> {
    rtsched_model::check_m(m as u64).map_err(err)?;
    if admission(scheduler).is_none() {
        return Err(RtschedError::new_err(format!(
            "field 'scheduler': {scheduler:?} has no default partition (partitioned schedulers: {})",
            PARTITIONED.join(", ")
        )));
    }
    let name = scheduler.to_string();
    let stop = Stop::new();
    let (out, interrupted) =
        crate::interrupt::stoppable(py, &stop, || Ok(default_partition(&ts.inner, m, &name, &stop)))?;
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
