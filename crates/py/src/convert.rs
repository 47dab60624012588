//! Python value → model conversions.

use crate::RtschedError;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString};
use rtsched_model::time::parse_duration;
use rtsched_model::Time;

/// A time given as an int (ns) or a duration string ("2ms").
pub(crate) fn time_arg(v: &Bound<'_, PyAny>, field: &str) -> PyResult<Time> {
    if let Ok(s) = v.downcast::<PyString>() {
        return parse_duration(s.to_str()?)
            .map_err(|e| RtschedError::new_err(format!("field '{field}': {}", e.reason)));
    }
    // Python ints, and integer types that declare themselves ints through `__index__`
    // (numpy's int64 and friends); floats have no `__index__` and are refused below.
    let int = if v.is_instance_of::<PyInt>() {
        Some(v.clone())
    } else if v.hasattr("__index__").unwrap_or(false) {
        v.call_method0("__index__").ok()
    } else {
        None
    };
    if let Some(i) = int {
        return i.extract::<u64>().map_err(|_| {
            RtschedError::new_err(format!("field '{field}': expected a non-negative integer number of ns, got {v}"))
        });
    }
    Err(RtschedError::new_err(format!(
        "field '{field}': expected integer ns or a duration string like \"2ms\", got {}",
        v.repr().map(|r| r.to_string()).unwrap_or_default()
    )))
}
