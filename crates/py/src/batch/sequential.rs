//! Sequential task sets in, report dicts out: [`analyze_sets`] (`rtsched.analyze_many`).

use super::{limits, tick, Tests};
use crate::convert::json_to_py;
use crate::interrupt::{self, Outbox};
use crate::overheads::{OverheadArgs, OverheadRequest};
use crate::taskset::TaskSet;
use crate::{err, RtschedError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use rayon::prelude::*;
use rtsched_analysis::global::fp::Assignment;
use rtsched_analysis::report::{self, Extra, Report, TestId};
use rtsched_analysis::{Stop, Verdict};
use rtsched_model::{check_m, TaskSet as RTaskSet};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Python names used in every report dict, interned once per call.
struct Keys<'py> {
    m: Bound<'py, PyString>,
    n: Bound<'py, PyString>,
    utilization: Bound<'py, PyString>,
    utilization_exact: Bound<'py, PyString>,
    results: Bound<'py, PyString>,
    schedulable: Bound<'py, PyString>,
    gave_up: Bound<'py, PyString>,
    tardiness: Bound<'py, PyString>,
    response_times: Bound<'py, PyString>,
    tests: Vec<Bound<'py, PyString>>,
}

impl<'py> Keys<'py> {
    fn new(py: Python<'py>) -> Keys<'py> {
        Keys {
            m: intern!(py, "m").clone(),
            n: intern!(py, "n").clone(),
            utilization: intern!(py, "utilization").clone(),
            utilization_exact: intern!(py, "utilization_exact").clone(),
            results: intern!(py, "results").clone(),
            schedulable: intern!(py, "schedulable").clone(),
            gave_up: intern!(py, "gave_up").clone(),
            tardiness: intern!(py, "tardiness_ns").clone(),
            response_times: intern!(py, "response_times_ns").clone(),
            tests: report::TEST_NAMES.iter().map(|n| PyString::intern(py, n)).collect(),
        }
    }

    fn test(&self, t: TestId) -> &Bound<'py, PyString> {
        let i = report::TEST_NAMES.iter().position(|&n| n == t.name()).unwrap_or(0);
        &self.tests[i]
    }
}

/// The documented report dict (the same keys and values as the JSON line).
fn report_dict<'py>(py: Python<'py>, r: &Report, k: &Keys<'py>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(&k.m, r.m)?;
    d.set_item(&k.n, r.n)?;
    d.set_item(&k.utilization, r.utilization)?;
    if let Some(e) = &r.utilization_exact {
        d.set_item(&k.utilization_exact, e)?;
    }
    let res = PyDict::new(py);
    for t in &r.results {
        let v = PyDict::new(py);
        v.set_item(&k.schedulable, t.verdict.decided())?;
        v.set_item(&k.gave_up, t.verdict == Verdict::GaveUp)?;
        if r.suspension_oblivious {
            v.set_item(intern!(py, "suspension"), t.test.suspension_mode())?;
        }
        if let Some(src) = r.priority_note(t.test) {
            v.set_item(intern!(py, "priorities"), src)?;
        }
        match &t.extra {
            Extra::None => {}
            Extra::Tardiness(b) => v.set_item(&k.tardiness, b)?,
            Extra::ResponseTimes(rts) => v.set_item(&k.response_times, rts)?,
        }
        res.set_item(k.test(t.test), v)?;
    }
    d.set_item(&k.results, res)?;
    Ok(d)
}

/// One set's report and, when asked, its overhead-aware object (or the error it gave).
type AnalyzedSet = (Report, Option<Result<serde_json::Value, String>>);

/// analyze_sets(sets, m, tests, max_steps, exact_utilization, progress, overheads, priorities) -> (list[dict], bool)
///
/// `priorities` (`dm`, `rm` or one rank per task, comma-separated) replaces deadline-monotonic
/// priorities in `gfp_bc`, `gfp_bc_slack` and `gfp_guan` (`report::report_with_priorities`).
/// One report dict per task set, in order; `m` (an int or None) overrides each set's own. With
/// `overheads` = `(model_text, mechanism, stat, cpd, quantum, extrapolate)` each report also has
/// its `"overheads"` object (docs/overheads.md), computed in the same parallel pass. The
/// bool says Ctrl-C stopped the batch: the list then holds the reports of the leading sets that
/// were finished, and the caller raises `KeyboardInterrupt`. `progress(done, total)` is called
/// every 50 ms when given.
#[pyfunction]
#[pyo3(signature = (sets, m, tests, max_steps, exact_utilization=false, progress=None, overheads=None, priorities=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn analyze_sets<'py>(
    py: Python<'py>,
    sets: &Bound<'py, PyAny>,
    m: Option<u64>,
    tests: Option<Vec<String>>,
    max_steps: u64,
    exact_utilization: bool,
    progress: Option<PyObject>,
    overheads: Option<OverheadArgs>,
    priorities: Option<String>,
) -> PyResult<(Bound<'py, PyList>, bool)> {
    let stop = Stop::new();
    let lim = limits(max_steps, &stop)?;
    let overheads = overheads.as_ref().map(OverheadRequest::new).transpose().map_err(err)?;
    let m = m.map(|m| check_m(m).map_err(err)).transpose()?;
    let tests = Tests::new(tests.as_deref())?;
    // Borrow every set's tasks (frozen objects: no copy), keeping the objects alive.
    let objs: Vec<Bound<'py, TaskSet>> = sets
        .try_iter()
        .map_err(|_| RtschedError::new_err("argument 'sets': expected an iterable of TaskSet"))?
        .enumerate()
        .map(|(i, o)| {
            let o = o?;
            o.downcast_into::<TaskSet>().map_err(|e| {
                let got = e.into_inner().get_type().name().map(|n| n.to_string()).unwrap_or_default();
                RtschedError::new_err(format!("argument 'sets': item {i} is a {got}, not a TaskSet"))
            })
        })
        .collect::<PyResult<_>>()?;
    // TaskSets are mutable (append, m setter): hold a shared borrow of each for the whole
    // call, so that no other thread can change one while the analysis reads it.
    let refs: Vec<PyRef<'py, TaskSet>> = objs
        .iter()
        .enumerate()
        .map(|(i, o)| {
            o.try_borrow().map_err(|_| {
                RtschedError::new_err(format!("argument 'sets': item {i} is being modified by another thread"))
            })
        })
        .collect::<PyResult<_>>()?;
    let mut work: Vec<(&RTaskSet, u32, &[TestId], Option<Assignment>)> = Vec::with_capacity(objs.len());
    for (i, ts) in refs.iter().enumerate() {
        let mi = m.or(ts.m).ok_or_else(|| {
            RtschedError::new_err(format!(
                "task set {i}: field 'm': no processor count: pass m (--m) or put \"m\" in the task-set file"
            ))
        })?;
        let t = tests.for_m(mi).map_err(|e| RtschedError::new_err(format!("task set {i}: {e}")))?;
        let p = priorities
            .as_deref()
            .map(|text| Assignment::from_text(&ts.inner, text))
            .transpose()
            .map_err(|e| RtschedError::new_err(format!("task set {i}: {e}")))?;
        work.push((&ts.inner, mi, t, p));
    }
    let total = work.len();
    let done = AtomicUsize::new(0);
    let fin = interrupt::run(
        py,
        &stop,
        |_: &Outbox<'_, (), Vec<Option<AnalyzedSet>>>| {
            work.par_iter()
                .map(|(ts, mi, t, p)| {
                    let (ts, mi, t) = (*ts, *mi, *t);
                    if stop.requested() {
                        return None;
                    }
                    let r = report::report_with_priorities(ts, mi, t, &lim, exact_utilization, p.as_ref());
                    let o = overheads.as_ref().map(|o| o.report(ts, mi, &lim).map_err(|e| e.to_string()));
                    done.fetch_add(1, Ordering::Relaxed);
                    (!stop.requested()).then_some((r, o))
                })
                .collect()
        },
        |_, ()| Ok(()),
        |py| tick(py, progress.as_ref(), done.load(Ordering::Relaxed), Some(total)),
    )?;
    let keys = Keys::new(py);
    let out = PyList::empty(py);
    for r in fin.result.iter() {
        match r {
            Some((r, o)) => {
                let d = report_dict(py, r, &keys)?;
                if let Some(o) = o {
                    let v = o.as_ref().map_err(|e| RtschedError::new_err(e.clone()))?;
                    d.set_item("overheads", json_to_py(py, v)?)?;
                }
                out.append(d)?
            }
            None => break,
        }
    }
    tick(py, progress.as_ref(), out.len(), Some(total))?;
    Ok((out, fin.interrupt.is_some()))
}
