//! The `TaskSet` class: an ordered, growable list of tasks with an optional processor count.
//!
//! Built whole (`TaskSet([t1, t2], m=4)`), incrementally (`append`, `extend`), from columns
//! (`from_lists`, which takes lists, tuples or numpy arrays) or from a pandas DataFrame; picklable
//! and copyable, so that joblib, multiprocessing and Dask can ship it to workers.

use crate::convert::{arg_str, time_arg};
use crate::model::{repr_task, Task};
use crate::{err, RtschedError};
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyDict, PyList, PySlice, PyTuple};
use rtsched_model::{io, ModelError, Task as RTask, TaskSet as RTaskSet};

/// Task sets with at most this many tasks print every task in their repr.
const REPR_TASKS: usize = 5;

/// An ordered set of tasks, optionally with the processor count `m` its file named.
///
/// >>> ts = TaskSet([Task(wcet="2ms", period="10ms")], m=2)
/// >>> ts.append(Task(wcet="1ms", period="5ms"))
/// >>> TaskSet.from_lists(wcet=[2_000_000, 1_000_000], period=["10ms", "5ms"], m=2) == ts
/// True
#[pyclass(module = "rtsched", name = "TaskSet")]
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

/// The processor count: None, or an integer in `1..=MAX_M` (a float or anything else is an
/// error naming the argument, never truncated; the bound is checked before anything is
/// allocated per processor).
fn m_arg(m: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u32>> {
    crate::convert::arg_m(m, "m").map_err(|_| {
        let got = m.and_then(|v| v.repr().ok()).map(|r| r.to_string()).unwrap_or_default();
        let got =
            if got.chars().count() > 40 { format!("{}...", got.chars().take(37).collect::<String>()) } else { got };
        RtschedError::new_err(format!(
            "field 'm': the number of processors must be an integer in 1..={}, got {got}",
            rtsched_model::MAX_M
        ))
    })
}

/// The items of any iterable (list, tuple, numpy array, pandas Series).
fn items<'py>(v: &Bound<'py, PyAny>, field: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
    // Text and mappings iterate too, but are never what was meant.
    if v.is_instance_of::<pyo3::types::PyString>()
        || v.is_instance_of::<pyo3::types::PyBytes>()
        || v.is_instance_of::<pyo3::types::PyDict>()
    {
        return Err(RtschedError::new_err(format!(
            "argument '{field}': expected a list, tuple or array, got {}",
            v.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        )));
    }
    let iter = v.try_iter().map_err(|_| {
        RtschedError::new_err(format!(
            "field '{field}': expected a list, tuple or array, got {}",
            v.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))
    })?;
    iter.collect()
}

/// None, or a float NaN (pandas' marker for a missing cell).
fn missing(v: &Bound<'_, PyAny>) -> bool {
    v.is_none() || v.extract::<f64>().is_ok_and(f64::is_nan) && !v.hasattr("__index__").unwrap_or(false)
}

fn in_task(i: usize, e: PyErr, py: Python<'_>) -> PyErr {
    RtschedError::new_err(format!("task {i}: {}", e.value(py)))
}

/// Builds tasks from columns; every error names the task index and the field.
fn from_columns(
    py: Python<'_>,
    wcet: &Bound<'_, PyAny>,
    period: &Bound<'_, PyAny>,
    deadline: Option<&Bound<'_, PyAny>>,
    name: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<RTask>> {
    let wcet = items(wcet, "wcet")?;
    let period = items(period, "period")?;
    let deadline = deadline.map(|d| items(d, "deadline")).transpose()?;
    let name = name.map(|n| items(n, "name")).transpose()?;
    let n = wcet.len();
    for (field, len) in [
        ("period", Some(period.len())),
        ("deadline", deadline.as_ref().map(Vec::len)),
        ("name", name.as_ref().map(Vec::len)),
    ] {
        if let Some(len) = len.filter(|&l| l != n) {
            return Err(RtschedError::new_err(format!(
                "field '{field}': {len} values for {n} tasks (every column needs one value per task)"
            )));
        }
    }
    let mut tasks = Vec::with_capacity(n);
    for i in 0..n {
        let name =
            match name.as_ref().map(|v| &v[i]) {
                None => None,
                Some(v) if missing(v) => None,
                Some(v) => Some(v.extract::<String>().map_err(|_| {
                    RtschedError::new_err(format!("task {i}: field 'name': expected a string, got {v}"))
                })?),
            };
        let wcet = time_arg(&wcet[i], "wcet").map_err(|e| in_task(i, e, py))?;
        let period = time_arg(&period[i], "period").map_err(|e| in_task(i, e, py))?;
        let deadline = match deadline.as_ref().map(|v| &v[i]) {
            Some(v) if !missing(v) => time_arg(v, "deadline").map_err(|e| in_task(i, e, py))?,
            _ => period,
        };
        let task = RTask { name, wcet, deadline, period, segments: None };
        task.validate().map_err(|e| err(e.in_task(i, task.name.as_deref())))?;
        tasks.push(task);
    }
    Ok(tasks)
}

/// `TaskSet(tasks)`'s first argument: omitted (the empty set) or given — never None, which
/// is far more often a failed load than a wish for an empty set.
enum TasksArg<'py> {
    Omitted,
    Given(Bound<'py, PyAny>),
}

impl<'py> FromPyObject<'py> for TasksArg<'py> {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        if ob.is_none() {
            return Err(RtschedError::new_err(
                "tasks: expected a list of Task objects, got None (TaskSet() is the empty task set)",
            ));
        }
        Ok(TasksArg::Given(ob.clone()))
    }
}

#[pymethods]
impl TaskSet {
    #[new]
    #[pyo3(signature = (tasks=TasksArg::Omitted, m=None), text_signature = "(tasks=(), m=None)")]
    fn new(tasks: TasksArg<'_>, m: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let mut inner = RTaskSet::default();
        if let TasksArg::Given(tasks) = tasks {
            for (i, t) in items(&tasks, "tasks")?.iter().enumerate() {
                let t = t.downcast::<Task>().map_err(|_| {
                    RtschedError::new_err(format!(
                        "task {i}: expected a Task, got {}",
                        t.repr().map(|r| r.to_string()).unwrap_or_default()
                    ))
                })?;
                inner.push(t.get().inner.clone()).map_err(err)?;
            }
        }
        Ok(TaskSet { inner, m: m_arg(m)? })
    }
    /// Processor count stored with the task set (from its file), or None. Settable.
    #[getter]
    fn m(&self) -> Option<u32> {
        self.m
    }
    #[setter]
    fn set_m(&mut self, m: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.m = m_arg(m)?;
        Ok(())
    }
    /// The tasks, as a new list.
    #[getter]
    fn tasks(&self) -> Vec<Task> {
        self.inner.iter().map(|t| Task { inner: t.clone() }).collect()
    }
    /// Appends one task.
    fn append(&mut self, task: Task) -> PyResult<()> {
        self.inner.push(task.inner).map_err(err)
    }
    /// Appends every task of an iterable (a list, another TaskSet, ...).
    fn extend(&mut self, tasks: &Bound<'_, PyAny>) -> PyResult<()> {
        let start = self.inner.len();
        let mut grown = self.inner.clone();
        for (i, t) in items(tasks, "tasks")?.iter().enumerate() {
            let t = t.downcast::<Task>().map_err(|_| {
                RtschedError::new_err(format!(
                    "task {}: expected a Task, got {}",
                    start + i,
                    t.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })?;
            grown.push(t.get().inner.clone()).map_err(err)?;
        }
        self.inner = grown;
        Ok(())
    }
    /// Total utilization as a float (reports only).
    #[getter]
    fn utilization(&self) -> f64 {
        self.inner.utilization_f64()
    }
    /// Exact total utilization as a (numerator, denominator) pair of decimal strings.
    fn utilization_exact(&self) -> (String, String) {
        let u = self.inner.utilization();
        (u.numer().to_string(), u.denom().to_string())
    }
    /// Exactly whether the total utilization is at most `m` (integer cross-multiplication and
    /// exact sums: never a float rounding either way).
    fn utilization_at_most(&self, m: &Bound<'_, PyAny>) -> PyResult<bool> {
        let m = crate::convert::arg_u64(m, "m", 0, u64::MAX)?;
        Ok(self.inner.utilization_at_most(m))
    }
    /// Least common multiple of the periods; raises if it exceeds `bound` ns.
    #[pyo3(signature = (bound=None))]
    fn hyperperiod(&self, bound: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
        let bound = match bound {
            Some(b) if !b.is_none() => crate::convert::arg_u64(b, "bound", 1, u64::MAX)?,
            _ => 1u64 << 53,
        };
        self.inner.hyperperiod(bound).map_err(err)
    }
    fn __len__(&self) -> usize {
        self.inner.len()
    }
    /// The per-task fixed-priority ranks of the task-set file (`priority`, smaller = higher,
    /// ties by index; docs/formats.md), or None.
    #[getter]
    fn priorities(&self) -> Option<Vec<u32>> {
        self.inner.priorities().map(<[u32]>::to_vec)
    }
    /// `ts[i]` is a Task; `ts[a:b]` a new TaskSet (same m).
    fn __getitem__(&self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        if let Ok(slice) = index.downcast::<PySlice>() {
            let ix = slice.indices(self.inner.len() as isize)?;
            let mut out = RTaskSet::default();
            let mut ranks = Vec::new();
            let mut i = ix.start;
            for _ in 0..ix.slicelength {
                out.push(self.inner[i as usize].clone()).map_err(err)?;
                if let Some(p) = self.inner.priorities() {
                    ranks.push(p[i as usize]);
                }
                i += ix.step;
            }
            // The file's per-task priorities go with their tasks.
            if self.inner.priorities().is_some() {
                out = out.with_priorities(ranks).map_err(err)?;
            }
            return Ok(TaskSet { inner: out, m: self.m }.into_pyobject(py)?.into_any().unbind());
        }
        let i: isize = index.extract()?;
        let n = self.inner.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(PyIndexError::new_err(format!("task index {i} out of range for {n} tasks")));
        }
        Ok(Task { inner: self.inner[j as usize].clone() }.into_pyobject(py)?.into_any().unbind())
    }
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyList::new(py, self.tasks())?.try_iter()?.into_any())
    }
    fn __eq__(&self, other: &TaskSet) -> bool {
        self.inner == other.inner && self.m == other.m
    }
    /// `TaskSet([Task(wcet='2ms', period='10ms')], m=2)` for small sets (eval gives it back);
    /// `TaskSet(n=40, m=8, utilization=5.6)` beyond five tasks.
    fn __repr__(&self) -> String {
        let m = self.m.map_or("None".to_string(), |m| m.to_string());
        if self.inner.len() <= REPR_TASKS {
            let tasks: Vec<String> = self.inner.iter().map(repr_task).collect();
            let m = self.m.map(|m| format!(", m={m}")).unwrap_or_default();
            return format!("TaskSet([{}]{m})", tasks.join(", "));
        }
        let u = format!("{:.4}", self.inner.utilization_f64());
        let u = u.trim_end_matches('0').trim_end_matches('.');
        format!("TaskSet(n={}, m={m}, utilization={u})", self.inner.len())
    }
    /// Pickling (multiprocessing, joblib, Dask): rebuilt from its tasks and m.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let me = slf.borrow();
        let args = (me.tasks(), me.m).into_pyobject(py)?;
        Ok((slf.get_type().into_any(), args))
    }
    /// A new TaskSet with the same tasks (tasks are immutable, so this is also a deep copy).
    fn __copy__(&self) -> TaskSet {
        self.clone()
    }
    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> TaskSet {
        self.clone()
    }
    /// A new TaskSet with the same tasks and m.
    fn copy(&self) -> TaskSet {
        self.clone()
    }
    /// The task set as JSON (docs/formats.md), one line.
    fn to_json(&self) -> String {
        io::to_json(&self.inner, self.m)
    }
    /// The task set as CSV (`wcet,period,deadline[,name]`); a self-suspending task is an
    /// error (CSV has no column for its segments: write JSON).
    fn to_csv(&self) -> PyResult<String> {
        io::to_csv(&self.inner).map_err(err)
    }
    /// Parses a JSON task-set object.
    #[staticmethod]
    fn from_json(text: &Bound<'_, PyAny>) -> PyResult<TaskSet> {
        let f = io::read_json(&crate::convert::arg_str(text, "text")?).map_err(err)?;
        Ok(TaskSet { inner: f.taskset, m: f.m })
    }
    /// Parses a CSV task set.
    #[staticmethod]
    fn from_csv(text: &Bound<'_, PyAny>) -> PyResult<TaskSet> {
        Ok(TaskSet { inner: io::read_csv(&crate::convert::arg_str(text, "text")?).map_err(err)?, m: None })
    }
    /// Builds a task set from columns: `wcet` and `period` (and optionally `deadline`, default
    /// the period, and `name`) are equal-length lists, tuples or numpy arrays of integer ns or
    /// duration strings; a None (or NaN) deadline or name means "not given".
    #[staticmethod]
    #[pyo3(signature = (wcet, period, deadline=None, name=None, m=None))]
    fn from_lists(
        py: Python<'_>,
        wcet: &Bound<'_, PyAny>,
        period: &Bound<'_, PyAny>,
        deadline: Option<&Bound<'_, PyAny>>,
        name: Option<&Bound<'_, PyAny>>,
        m: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TaskSet> {
        let tasks = from_columns(py, wcet, period, deadline, name)?;
        Ok(TaskSet { inner: RTaskSet::new(tasks).map_err(err)?, m: m_arg(m)? })
    }
    /// A pandas DataFrame with columns `name`, `wcet`, `period`, `deadline` (integer ns), one
    /// row per task in order. Needs pandas.
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pd = py
            .import("pandas")
            .map_err(|_| RtschedError::new_err("TaskSet.to_pandas needs pandas (pip install pandas)"))?;
        let d = PyDict::new(py);
        d.set_item("name", self.inner.iter().map(|t| t.name.clone()).collect::<Vec<_>>())?;
        d.set_item("wcet", self.inner.iter().map(|t| t.wcet).collect::<Vec<_>>())?;
        d.set_item("period", self.inner.iter().map(|t| t.period).collect::<Vec<_>>())?;
        d.set_item("deadline", self.inner.iter().map(|t| t.deadline).collect::<Vec<_>>())?;
        let df = pd.call_method1("DataFrame", (d,))?;
        df.setattr("attrs", [("m", self.m)].into_py_dict(py)?)?;
        Ok(df)
    }
    /// Builds a task set from a DataFrame with columns `wcet`, `period` and optionally
    /// `deadline` and `name` (any other column is an error, as in files). `m` defaults to the
    /// frame's `attrs["m"]` (set by `to_pandas`).
    #[staticmethod]
    #[pyo3(signature = (df, m=None))]
    fn from_pandas(py: Python<'_>, df: &Bound<'_, PyAny>, m: Option<&Bound<'_, PyAny>>) -> PyResult<TaskSet> {
        let columns: Vec<String> =
            df.getattr("columns").and_then(|c| c.call_method0("tolist")).and_then(|c| c.extract()).map_err(|_| {
                RtschedError::new_err("TaskSet.from_pandas: expected a pandas DataFrame with string column names")
            })?;
        for c in &columns {
            if !matches!(c.as_str(), "name" | "wcet" | "period" | "deadline") {
                return Err(err(ModelError::field(
                    c.clone(),
                    "unknown column (a task has name, wcet, period, deadline)",
                )));
            }
        }
        let col = |name: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
            if columns.iter().any(|c| c == name) {
                Ok(Some(df.get_item(name)?.call_method0("tolist")?))
            } else {
                Ok(None)
            }
        };
        let need = |name: &str| -> PyResult<Bound<'_, PyAny>> {
            col(name)?.ok_or_else(|| err(ModelError::field(name, "missing column")))
        };
        let attrs_m = df.getattr("attrs").ok().and_then(|a| a.get_item("m").ok());
        let m = match m_arg(m)? {
            Some(m) => Some(m),
            None => m_arg(attrs_m.as_ref())?,
        };
        let (wcet, period) = (need("wcet")?, need("period")?);
        let (deadline, name) = (col("deadline")?, col("name")?);
        let tasks = from_columns(py, &wcet, &period, deadline.as_ref(), name.as_ref())?;
        Ok(TaskSet { inner: RTaskSet::new(tasks).map_err(err)?, m })
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

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_jsonl, m)?)?;
    m.add_class::<TaskSet>()?;
    Ok(())
}
