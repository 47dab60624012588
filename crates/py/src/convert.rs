//! Python value → model conversions.

use crate::RtschedError;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString};
use rtsched_model::io::parse_duration_text;
use rtsched_model::Time;

/// A time given as an int (ns) or a duration string ("2ms").
pub(crate) fn time_arg(v: &Bound<'_, PyAny>, field: &str) -> PyResult<Time> {
    if let Ok(s) = v.downcast::<PyString>() {
        let text = s
            .to_str()
            .map_err(|_| RtschedError::new_err(format!("field '{field}': the string is not valid Unicode")))?;
        return parse_duration_text(text).map_err(|e| RtschedError::new_err(format!("field '{field}': {}", e.reason)));
    }
    // Python ints, and integer types that declare themselves ints through `__index__`
    // (numpy's int64 and friends); floats have no `__index__` and are refused below.
    let int = if v.is_instance_of::<pyo3::types::PyBool>() {
        None
    } else if v.is_instance_of::<PyInt>() {
        Some(v.clone())
    } else if v.hasattr("__index__").unwrap_or(false) {
        v.call_method0("__index__").ok()
    } else {
        None
    };
    if let Some(i) = int {
        return i.extract::<u64>().map_err(|_| {
            RtschedError::new_err(format!(
                "field '{field}': expected a non-negative integer number of ns below 2^64, got {}",
                short_repr(v)
            ))
        });
    }
    Err(RtschedError::new_err(format!(
        "field '{field}': expected integer ns or a duration string like \"2ms\", got {}",
        short_repr(v)
    )))
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into())
}

fn short_repr(v: &Bound<'_, PyAny>) -> String {
    let r = v.repr().map(|r| r.to_string()).unwrap_or_default();
    if r.chars().count() > 40 {
        format!("{}...", r.chars().take(37).collect::<String>())
    } else {
        r
    }
}

/// A Python `str` argument (errors name it; lone surrogates are refused).
pub(crate) fn arg_str(v: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    let s = v.downcast::<PyString>().map_err(|_| {
        RtschedError::new_err(format!("argument '{name}': expected a string, got {} ({})", short_repr(v), type_name(v)))
    })?;
    s.to_str()
        .map(str::to_owned)
        .map_err(|_| RtschedError::new_err(format!("argument '{name}': the string is not valid Unicode")))
}

/// An integer argument in `lo..=hi` (bools and floats are refused, never truncated).
pub(crate) fn arg_u64(v: &Bound<'_, PyAny>, name: &str, lo: u64, hi: u64) -> PyResult<u64> {
    let bad = || {
        RtschedError::new_err(format!(
            "argument '{name}': expected an integer, got {} ({})",
            short_repr(v),
            type_name(v)
        ))
    };
    if v.is_instance_of::<pyo3::types::PyBool>() || !v.is_instance_of::<PyInt>() {
        return Err(bad());
    }
    let out_of_range =
        || RtschedError::new_err(format!("argument '{name}': must be in {lo}..={hi}, got {}", short_repr(v)));
    let x: u64 = v.extract().map_err(|_| out_of_range())?;
    if x < lo || x > hi {
        return Err(out_of_range());
    }
    Ok(x)
}

/// An optional processor count `m` (None, or an integer in `1..=MAX_M`).
pub(crate) fn arg_m(v: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<u32>> {
    match v {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => Ok(Some(arg_u64(v, name, 1, rtsched_model::MAX_M as u64)? as u32)),
    }
}

/// A JSON value as the equivalent Python object (dicts, lists, str, int, float, bool, None), so
/// that results built as `serde_json::Value` cross the boundary as Python objects, not text.
pub(crate) fn json_to_py(py: Python<'_>, v: &serde_json::Value) -> PyResult<PyObject> {
    use pyo3::types::{PyDict, PyList};
    use pyo3::IntoPyObjectExt;
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None(),
        Value::Bool(b) => b.into_py_any(py)?,
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_py_any(py)?,
            (None, Some(i)) => i.into_py_any(py)?,
            _ => n.as_f64().unwrap_or(f64::NAN).into_py_any(py)?,
        },
        Value::String(s) => s.into_py_any(py)?,
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(json_to_py(py, x)?)?;
            }
            l.into_any().unbind()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any().unbind()
        }
    })
}
