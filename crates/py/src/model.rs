//! The `Task` class and the duration functions (`TaskSet` and the JSON Lines reader are in
//! taskset.rs).

use crate::convert::{arg_str, arg_u64, time_arg};
use crate::err;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use rtsched_model::task::{Segments, SuspensionBound};
use rtsched_model::time::format_duration as exact;
use rtsched_model::Task as RTask;
use rtsched_model::Time;

/// A sporadic task (C, D, T) in integer nanoseconds.
///
/// >>> Task(wcet="1ms", period="10ms")            # implicit deadline
/// >>> Task(wcet=500_000, period="2ms", deadline="1.5ms", name="ctl")
/// >>> Task(wcet="3ms", period="20ms", segments=["1ms", "2ms", "2ms"])   # self-suspending
///
/// `segments` is the segmented self-suspension model (docs/formats.md): execution and
/// suspension alternating, `[C_1, S_1, C_2, ..., C_k]`, the execution segments summing to
/// `wcet`; a suspension is its upper bound or a `(min, max)` pair.
#[pyclass(module = "rtsched", name = "Task", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Task {
    pub(crate) inner: RTask,
}

#[pymethods]
impl Task {
    #[new]
    #[pyo3(signature = (wcet, period, deadline=None, name=None, segments=None))]
    fn new(
        wcet: &Bound<'_, PyAny>,
        period: &Bound<'_, PyAny>,
        deadline: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
        segments: Option<&Bound<'_, PyAny>>,
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
        let mut inner = RTask { name, wcet, deadline, period, segments: None };
        inner.validate().map_err(err)?;
        if let Some(seg) = segments.filter(|s| !s.is_none()) {
            inner = inner.with_segments(segments_arg(seg).map_err(err)?).map_err(err)?;
        }
        Ok(Task { inner })
    }
    /// The self-suspension segments `[C_1, S_1, ..., C_k]` (ns; a suspension with a lower
    /// bound is a `(min, max)` pair), or None for a task that does not suspend.
    #[getter]
    fn segments<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(s) = &self.inner.segments else { return Ok(None) };
        let list = PyList::empty(py);
        for (j, &c) in s.exec.iter().enumerate() {
            if j > 0 {
                let b = s.susp[j - 1];
                if b.min == 0 {
                    list.append(b.max)?;
                } else {
                    list.append((b.min, b.max))?;
                }
            }
            list.append(c)?;
        }
        Ok(Some(list))
    }
    /// S, the total suspension upper bound of a job (ns; 0 for a task that does not suspend).
    #[getter]
    fn suspension(&self) -> u64 {
        self.inner.suspension()
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
        let segments = slf.get().segments(py)?;
        let args = (t.wcet, t.period, t.deadline, t.name.clone(), segments).into_pyobject(py)?;
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
    let segments = match &t.segments {
        None => String::new(),
        Some(s) => {
            let mut parts = Vec::new();
            for (j, &c) in s.exec.iter().enumerate() {
                if j > 0 {
                    let b = s.susp[j - 1];
                    parts.push(if b.min == 0 {
                        py_str(&exact(b.max))
                    } else {
                        format!("({}, {})", py_str(&exact(b.min)), py_str(&exact(b.max)))
                    });
                }
                parts.push(py_str(&exact(c)));
            }
            format!(", segments=[{}]", parts.join(", "))
        }
    };
    format!("Task(wcet={}, period={}{deadline}{name}{segments})", py_str(&exact(t.wcet)), py_str(&exact(t.period)))
}

/// `segments=[C_1, S_1, ..., C_k]` from Python: times (ints or duration strings); a suspension
/// may be a `(min, max)` pair or a `{"min": .., "max": ..}` dict. Errors name the entry.
fn segments_arg(v: &Bound<'_, PyAny>) -> Result<Segments, rtsched_model::ModelError> {
    use rtsched_model::ModelError;
    let bad = |reason: String| ModelError::field("segments", reason);
    if v.is_instance_of::<pyo3::types::PyString>() || v.is_instance_of::<PyDict>() {
        return Err(bad("expected a list [execution, suspension, execution, ...] of times".into()));
    }
    let items: Vec<Bound<'_, PyAny>> = v
        .try_iter()
        .and_then(|it| it.collect::<PyResult<Vec<_>>>())
        .map_err(|_| bad("expected a list [execution, suspension, execution, ...] of times".into()))?;
    if items.len() > 2 * rtsched_model::task::MAX_SEGMENTS - 1 {
        return Err(bad(format!(
            "{} entries exceed the bound of {} execution segments",
            items.len(),
            rtsched_model::task::MAX_SEGMENTS
        )));
    }
    let time = |j: usize, what: &str, x: &Bound<'_, PyAny>| -> Result<Time, ModelError> {
        time_arg(x, "segments").map_err(|e| {
            let msg = e.to_string();
            let reason = msg.split_once("field 'segments': ").map_or(msg.as_str(), |(_, r)| r).to_string();
            bad(format!("entry {j} ({what}): {reason}"))
        })
    };
    let (mut exec, mut susp) = (Vec::new(), Vec::new());
    for (j, x) in items.iter().enumerate() {
        if j % 2 == 0 {
            exec.push(time(j, "execution", x)?);
        } else if let Ok(d) = x.downcast::<PyDict>() {
            for k in d.keys() {
                let k = k.extract::<String>().unwrap_or_default();
                if !matches!(k.as_str(), "min" | "max") {
                    return Err(bad(format!("entry {j} (suspension): unknown key {k:?} (a suspension has min, max)")));
                }
            }
            let max = d
                .get_item("max")
                .ok()
                .flatten()
                .ok_or_else(|| bad(format!("entry {j} (suspension): 'max' is missing")))?;
            let min = match d.get_item("min").ok().flatten() {
                Some(m) if !m.is_none() => time(j, "suspension min", &m)?,
                _ => 0,
            };
            susp.push(SuspensionBound { min, max: time(j, "suspension max", &max)? });
        } else if let Ok(t) = x.downcast::<PyTuple>() {
            if t.len() != 2 {
                return Err(bad(format!("entry {j} (suspension): a pair (min, max) has 2 items, got {}", t.len())));
            }
            let min = time(j, "suspension min", &t.get_item(0).map_err(|e| bad(e.to_string()))?)?;
            let max = time(j, "suspension max", &t.get_item(1).map_err(|e| bad(e.to_string()))?)?;
            susp.push(SuspensionBound { min, max });
        } else {
            susp.push(SuspensionBound { min: 0, max: time(j, "suspension", x)? });
        }
    }
    Segments::new(exec, susp)
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
