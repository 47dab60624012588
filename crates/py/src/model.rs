//! The `Task` class and the duration functions (`TaskSet` and the JSON Lines reader are in
//! taskset.rs).

use crate::convert::{arg_str, arg_u64, time_arg};
use crate::err;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rtsched_model::time::format_duration as exact;
use rtsched_model::Task as RTask;

/// A sporadic task (C, D, T) in integer nanoseconds.
///
/// >>> Task(wcet="1ms", period="10ms")            # implicit deadline
/// >>> Task(wcet=500_000, period="2ms", deadline="1.5ms", name="ctl")
#[pyclass(module = "rtsched", name = "Task", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Task {
    pub(crate) inner: RTask,
}

#[pymethods]
impl Task {
    #[new]
    #[pyo3(signature = (wcet, period, deadline=None, name=None))]
    fn new(
        wcet: &Bound<'_, PyAny>,
        period: &Bound<'_, PyAny>,
        deadline: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let wcet = time_arg(wcet, "wcet")?;
        let period = time_arg(period, "period")?;
        let deadline = match deadline {
            Some(d) if !d.is_none() => time_arg(d, "deadline")?,
            _ => period,
        };
        let name = match name {
            Some(n) if !n.is_none() => Some(arg_str(n, "name")?),
            _ => None,
        };
        let inner = RTask { name, wcet, deadline, period };
        inner.validate().map_err(err)?;
        Ok(Task { inner })
    }
    /// Worst-case execution time C (ns).
    #[getter]
    fn wcet(&self) -> u64 {
        self.inner.wcet
    }
    /// Relative deadline D (ns).
    #[getter]
    fn deadline(&self) -> u64 {
        self.inner.deadline
    }
    /// Period or minimum inter-arrival time T (ns).
    #[getter]
    fn period(&self) -> u64 {
        self.inner.period
    }
    /// The task's label, or None.
    #[getter]
    fn name(&self) -> Option<String> {
        self.inner.name.clone()
    }
    /// C/T as a float (reports only; verdicts are exact).
    #[getter]
    fn utilization(&self) -> f64 {
        self.inner.utilization_f64()
    }
    /// C/min(D,T) as a float.
    #[getter]
    fn density(&self) -> f64 {
        self.inner.density_f64()
    }
    /// `Task(wcet='2ms', period='10ms')`: exact duration strings, so that `eval(repr(t)) == t`.
    fn __repr__(&self) -> String {
        repr_task(&self.inner)
    }
    /// Pickling (multiprocessing, joblib, Dask): rebuilt from its four fields.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let t = &slf.get().inner;
        let args = (t.wcet, t.period, t.deadline, t.name.clone()).into_pyobject(py)?;
        Ok((slf.get_type().into_any(), args))
    }
    fn __copy__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf // immutable: a copy is the object itself
    }
    fn __deepcopy__<'py>(slf: PyRef<'py, Self>, _memo: &Bound<'py, PyAny>) -> PyRef<'py, Self> {
        slf
    }
}

/// A task's Python repr (shared by `TaskSet`'s).
pub(crate) fn repr_task(t: &RTask) -> String {
    let deadline =
        if t.deadline == t.period { String::new() } else { format!(", deadline={}", py_str(&exact(t.deadline))) };
    let name = match &t.name {
        Some(n) => format!(", name={}", py_str(n)),
        None => String::new(),
    };
    format!("Task(wcet={}, period={}{deadline}{name})", py_str(&exact(t.wcet)), py_str(&exact(t.period)))
}

/// A Python string literal (single quotes, like Python's own repr for plain text).
fn py_str(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Parses a duration ("2ms", "250us", "1.5s"; "0" needs no unit, any other number does) exactly.
#[pyfunction]
fn parse_duration(text: &Bound<'_, PyAny>) -> PyResult<u64> {
    rtsched_model::io::parse_duration_text(&arg_str(text, "text")?).map_err(err)
}

/// Formats ns with the largest exact unit ("2ms").
#[pyfunction]
fn format_duration(ns: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(rtsched_model::time::format_duration(arg_u64(ns, "ns", 0, u64::MAX)?))
}

/// Formats ns for people: three significant digits in a unit suited to the magnitude
/// ("83.6 ms"); tables and axes use it, files keep integer ns.
#[pyfunction]
fn format_time(ns: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(rtsched_model::time::format_time(arg_u64(ns, "ns", 0, u64::MAX)?))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Task>()?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(format_duration, m)?)?;
    m.add_function(wrap_pyfunction!(format_time, m)?)?;
    Ok(())
}
