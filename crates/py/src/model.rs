//! `Task` and `TaskSet` classes and the file-format functions.

use crate::convert::{arg_m, arg_str, arg_u64, time_arg};
use crate::{err, RtschedError};
use pyo3::prelude::*;
use rtsched_model::{io, Task as RTask, TaskSet as RTaskSet};

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
    fn __repr__(&self) -> String {
        let t = &self.inner;
        let name = t.name.as_ref().map(|n| format!(", name={n:?}")).unwrap_or_default();
        format!("Task(wcet={}, period={}, deadline={}{name})", t.wcet, t.period, t.deadline)
    }
}

/// An ordered set of tasks, optionally with the processor count `m` its file named.
#[pyclass(module = "rtsched", name = "TaskSet", frozen)]
#[derive(Clone)]
pub struct TaskSet {
    pub(crate) inner: RTaskSet,
    pub(crate) m: Option<u32>,
}

impl TaskSet {
    pub(crate) fn wrap(inner: RTaskSet, m: Option<u32>) -> TaskSet {
        TaskSet { inner, m }
    }
}

#[pymethods]
impl TaskSet {
    #[new]
    #[pyo3(signature = (tasks, m=None))]
    fn new(tasks: &Bound<'_, PyAny>, m: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let m = arg_m(m, "m")?;
        let bad = || RtschedError::new_err("argument 'tasks': expected a list of Task objects");
        if tasks.is_instance_of::<pyo3::types::PyString>()
            || tasks.is_instance_of::<pyo3::types::PyDict>()
            || tasks.is_instance_of::<pyo3::types::PyBytes>()
            || tasks.is_none()
        {
            return Err(bad());
        }
        let mut out = Vec::new();
        for (i, t) in tasks.try_iter().map_err(|_| bad())?.enumerate() {
            let t = t?;
            let t = t
                .downcast::<Task>()
                .map_err(|_| RtschedError::new_err(format!("argument 'tasks': item {i} is not a Task")))?;
            out.push(t.get().inner.clone());
        }
        Ok(TaskSet { inner: RTaskSet::new(out).map_err(err)?, m })
    }
    /// Processor count stored with the task set (from its file), or None.
    #[getter]
    fn m(&self) -> Option<u32> {
        self.m
    }
    #[getter]
    fn tasks(&self) -> Vec<Task> {
        self.inner.iter().map(|t| Task { inner: t.clone() }).collect()
    }
    /// Total utilization as a float (reports only).
    #[getter]
    fn utilization(&self) -> f64 {
        self.inner.utilization_f64()
    }
    /// Exact total utilization as a (numerator, denominator) pair of ints.
    fn utilization_exact(&self) -> (String, String) {
        let u = self.inner.utilization();
        (u.numer().to_string(), u.denom().to_string())
    }
    /// Least common multiple of the periods; raises if it exceeds `bound` ns.
    #[pyo3(signature = (bound=None))]
    fn hyperperiod(&self, bound: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
        let bound = match bound {
            Some(b) if !b.is_none() => arg_u64(b, "bound", 1, u64::MAX)?,
            _ => 1u64 << 53,
        };
        self.inner.hyperperiod(bound).map_err(err)
    }
    fn __len__(&self) -> usize {
        self.inner.len()
    }
    fn __getitem__(&self, i: isize) -> PyResult<Task> {
        let n = self.inner.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(pyo3::exceptions::PyIndexError::new_err("task index out of range"));
        }
        Ok(Task { inner: self.inner[j as usize].clone() })
    }
    fn __eq__(&self, other: &TaskSet) -> bool {
        self.inner == other.inner && self.m == other.m
    }
    fn __repr__(&self) -> String {
        format!("TaskSet(n={}, m={:?}, utilization={:.4})", self.inner.len(), self.m, self.inner.utilization_f64())
    }
    /// The task set as JSON (docs/formats.md), one line.
    fn to_json(&self) -> String {
        io::to_json(&self.inner, self.m)
    }
    /// The task set as CSV (`wcet,period,deadline[,name]`).
    fn to_csv(&self) -> String {
        io::to_csv(&self.inner)
    }
    /// Parses a JSON task-set object.
    #[staticmethod]
    fn from_json(text: &Bound<'_, PyAny>) -> PyResult<TaskSet> {
        let f = io::read_json(&arg_str(text, "text")?).map_err(err)?;
        Ok(TaskSet { inner: f.taskset, m: f.m })
    }
    /// Parses a CSV task set.
    #[staticmethod]
    fn from_csv(text: &Bound<'_, PyAny>) -> PyResult<TaskSet> {
        Ok(TaskSet { inner: io::read_csv(&arg_str(text, "text")?).map_err(err)?, m: None })
    }
}

/// Parses JSON Lines text into a list of task sets (errors carry the line number).
#[pyfunction]
fn parse_jsonl(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Vec<TaskSet>> {
    let text = arg_str(text, "text")?;
    crate::guarded(py, || {
        io::read_jsonl(&text).map(|r| r.map(|f| TaskSet::wrap(f.taskset, f.m)).map_err(err)).collect()
    })
}

/// Parses a duration ("2ms", "250us", "1.5s", or an integer of ns) exactly.
#[pyfunction]
fn parse_duration(text: &Bound<'_, PyAny>) -> PyResult<u64> {
    rtsched_model::time::parse_duration(&arg_str(text, "text")?).map_err(err)
}

/// Formats ns with the largest exact unit ("2ms").
#[pyfunction]
fn format_duration(ns: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(rtsched_model::time::format_duration(arg_u64(ns, "ns", 0, u64::MAX)?))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Task>()?;
    m.add_class::<TaskSet>()?;
    m.add_function(wrap_pyfunction!(parse_jsonl, m)?)?;
    m.add_function(wrap_pyfunction!(parse_duration, m)?)?;
    m.add_function(wrap_pyfunction!(format_duration, m)?)?;
    Ok(())
}
