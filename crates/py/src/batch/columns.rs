//! The array form: task parameters as flat arrays in, a verdict table out: [`analyze_columns`]
//! (`rtsched.analyze_table`: numpy arrays or an Arrow table, no Python object per set).

use super::{limits, tick, Tests};
use crate::interrupt::{self, Outbox};
use crate::{err, RtschedError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rayon::prelude::*;
use rtsched_analysis::report::{self, TestId};
use rtsched_analysis::{Stop, Verdict};
use rtsched_model::{check_m, Task, TaskSet as RTaskSet};
use std::sync::atomic::{AtomicUsize, Ordering};

/// One set's row of the verdict table: utilization and the verdicts (None: stopped first).
type Row = Option<(f64, Vec<Verdict>)>;

fn u64s(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            u64::from_ne_bytes(a)
        })
        .collect()
}

/// analyze_columns(wcet, period, deadline, starts, ms, tests, max_steps, progress) -> dict
///
/// The array form: task parameters as native-endian `uint64` buffers (one entry per task, the
/// tasks of set `s` at `starts[s] .. starts[s+1]`; `deadline` None for implicit deadlines),
/// `ms` the processor count per set (`uint64`). Returns a dict of buffers, one entry per set:
/// "utilization" (`float64`), and per test NAME "NAME" (`uint8`, 1 when proved schedulable)
/// and "NAME_gave_up" (`uint8`). The first invalid task is an error naming its row and set.
/// Ctrl-C raises `KeyboardInterrupt` (a verdict table has no partial form).
#[pyfunction]
#[pyo3(signature = (wcet, period, deadline, starts, ms, tests, max_steps, progress=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn analyze_columns<'py>(
    py: Python<'py>,
    wcet: &Bound<'py, PyBytes>,
    period: &Bound<'py, PyBytes>,
    deadline: Option<Bound<'py, PyBytes>>,
    starts: &Bound<'py, PyBytes>,
    ms: &Bound<'py, PyBytes>,
    tests: Option<Vec<String>>,
    max_steps: u64,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    let stop = Stop::new();
    let lim = limits(max_steps, &stop)?;
    let tests = Tests::new(tests.as_deref())?;
    let (c, t) = (u64s(wcet.as_bytes()), u64s(period.as_bytes()));
    let d = deadline.as_ref().map(|d| u64s(d.as_bytes()));
    let starts = u64s(starts.as_bytes());
    let ms = u64s(ms.as_bytes());
    let rows = c.len();
    if t.len() != rows || d.as_ref().is_some_and(|d| d.len() != rows) {
        return Err(RtschedError::new_err("the wcet, period and deadline columns differ in length"));
    }
    let sets = starts.len().saturating_sub(1);
    if ms.len() != sets || starts.first() != Some(&0) || starts.last() != Some(&(rows as u64)) {
        return Err(RtschedError::new_err("internal error: malformed set offsets"));
    }
    let mut selected: Vec<&[TestId]> = Vec::with_capacity(sets);
    let mut mv: Vec<u32> = Vec::with_capacity(sets);
    for (s, &m) in ms.iter().enumerate() {
        let m = check_m(m).map_err(|e| RtschedError::new_err(format!("set {s}: {e}")))?;
        selected.push(tests.for_m(m).map_err(|e| RtschedError::new_err(format!("set {s}: {e}")))?);
        mv.push(m);
    }
    let names: Vec<TestId> = match (&tests.multi, &tests.uni) {
        (Ok(v), _) | (Err(_), Ok(v)) => v.clone(),
        (Err(e), Err(_)) => return Err(err(e.clone())),
    };
    let done = AtomicUsize::new(0);
    let fin = interrupt::run(
        py,
        &stop,
        |_: &Outbox<'_, (), Result<Vec<Row>, String>>| {
            (0..sets)
                .into_par_iter()
                .map(|s| {
                    if stop.requested() {
                        return Ok(None);
                    }
                    let (a, b) = (starts[s] as usize, starts[s + 1] as usize);
                    if a > b {
                        return Err("internal error: malformed set offsets".to_string());
                    }
                    let tasks: Vec<Task> = (a..b)
                        .map(|r| {
                            let task = Task {
                                name: None,
                                wcet: c[r],
                                period: t[r],
                                deadline: d.as_ref().map_or(t[r], |d| d[r]),
                                segments: None,
                            };
                            task.validate()
                                .map(|()| task)
                                .map_err(|e| format!("row {r} (set {s}, task {}): {e}", r - a))
                        })
                        .collect::<Result<_, _>>()?;
                    let ts = RTaskSet::new(tasks).map_err(|e| format!("set {s}: {e}"))?;
                    let v: Vec<Verdict> =
                        selected[s].iter().map(|&x| report::verdict(x, &ts, mv[s], &lim, 0)).collect();
                    done.fetch_add(1, Ordering::Relaxed);
                    Ok(Some((ts.utilization_f64(), v)))
                })
                .collect()
        },
        |_, ()| Ok(()),
        |py| tick(py, progress.as_ref(), done.load(Ordering::Relaxed), Some(sets)),
    )?;
    if let Some(e) = fin.interrupt {
        return Err(e);
    }
    let rows_out = fin.result.map_err(RtschedError::new_err)?;
    let out = PyDict::new(py);
    let mut util = Vec::with_capacity(sets * 8);
    let mut cols: Vec<(Vec<u8>, Vec<u8>)> = vec![(Vec::with_capacity(sets), Vec::with_capacity(sets)); names.len()];
    for (s, r) in rows_out.iter().enumerate() {
        let Some((u, v)) = r else { return Err(RtschedError::new_err("internal error: a set was not analysed")) };
        util.extend_from_slice(&u.to_ne_bytes());
        for (j, name) in names.iter().enumerate() {
            let verdict = selected[s].iter().position(|x| x == name).map(|p| v[p]);
            cols[j].0.push(u8::from(verdict == Some(Verdict::Schedulable)));
            cols[j].1.push(u8::from(verdict == Some(Verdict::GaveUp)));
        }
    }
    out.set_item("utilization", PyBytes::new(py, &util))?;
    for (name, (sched, gave)) in names.iter().zip(cols) {
        out.set_item(name.name(), PyBytes::new(py, &sched))?;
        out.set_item(format!("{}_gave_up", name.name()), PyBytes::new(py, &gave))?;
    }
    tick(py, progress.as_ref(), sets, Some(sets))?;
    Ok(out)
}
