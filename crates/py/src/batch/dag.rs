//! DAG task sets in, report dicts out: [`analyze_dag_sets`] (`rtsched.analyze_many` on DAG
//! sets), and the DAG test selection and report a JSON Lines batch of DAG sets shares
//! ([`super::file`]).

use super::{limits, tick};
use crate::convert::json_to_py;
use crate::interrupt::{self, Outbox};
use crate::{err, RtschedError};
use pyo3::prelude::*;
use pyo3::types::PyList;
use rayon::prelude::*;
use rtsched_analysis::dag::report::{self as dag_report, DAG_TEST_NAMES};
use rtsched_analysis::report;
use rtsched_analysis::sweep::dag::dag_test;
use rtsched_analysis::{Limits, Stop};
use rtsched_model::{check_m, dag, ModelError};
use serde_json::Value;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The DAG tests named in `tests` for a batch of DAG sets, resolved once (any spelling); `None`
/// (the default) runs, on each set, all that apply to it (`dag_report::select`). A sequential
/// test's name or an unknown one is an error.
pub(super) fn dag_names(tests: Option<&[String]>) -> Result<Vec<&'static str>, ModelError> {
    let Some(list) = tests else { return Ok(DAG_TEST_NAMES.to_vec()) };
    let mut out: Vec<&'static str> = Vec::new();
    for t in list {
        let name = dag_test(t).ok_or_else(|| {
            let why = if rtsched_analysis::methods::test(t, &report::TEST_NAMES).is_some() {
                format!("{t:?} takes sequential tasks; this is a batch of DAG task sets")
            } else {
                format!("unknown test {t:?}")
            };
            ModelError::field("test", format!("{why}; available for DAG task sets: {}", DAG_TEST_NAMES.join(", ")))
        })?;
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// One DAG set's report (`dag_report::analyze`, as `rtsched analyze` on a DAG file writes it).
pub(super) fn dag_report_of(
    set: &dag::DagSet,
    m: u32,
    tests: Option<&[String]>,
    lim: &Limits,
) -> Result<Value, ModelError> {
    let selected = dag_report::select(tests, set)?;
    Ok(dag_report::analyze(set, m, &selected, lim))
}

/// analyze_dag_sets(texts, m, tests, max_steps, progress) -> (list[dict], bool)
///
/// The DAG form of [`analyze_sets`] (`rtsched.analyze_many` on DAG sets): one report dict per
/// DAG set (each the JSON text of a DAG file, docs/dag.md), in order, as
/// `rtsched.analyze_dag` returns it; every set is read and checked before any is analysed (an
/// error names the set). `m` (an int or None) overrides each set's own. The bool says Ctrl-C
/// stopped the batch (the list then holds the leading sets' reports).
#[pyfunction]
#[pyo3(signature = (texts, m, tests, max_steps, progress=None))]
pub(crate) fn analyze_dag_sets<'py>(
    py: Python<'py>,
    texts: Vec<String>,
    m: Option<u64>,
    tests: Option<Vec<String>>,
    max_steps: u64,
    progress: Option<PyObject>,
) -> PyResult<(Bound<'py, PyList>, bool)> {
    let stop = Stop::new();
    let lim = limits(max_steps, &stop)?;
    let m = m.map(|m| check_m(m).map_err(err)).transpose()?;
    dag_names(tests.as_deref()).map_err(err)?;
    let files: Vec<(dag::DagSet, u32)> = py
        .allow_threads(|| {
            texts
                .par_iter()
                .enumerate()
                .map(|(i, text)| {
                    let f = dag::read_json(text).map_err(|e| format!("DAG set {i}: {e}"))?;
                    let mi = m.or(f.m).ok_or_else(|| {
                        format!("DAG set {i}: field 'm': no processor count: pass m (--m) or put \"m\" in the DAG set")
                    })?;
                    dag_report::select(tests.as_deref(), &f.set).map_err(|e| format!("DAG set {i}: {e}"))?;
                    Ok((f.set, mi))
                })
                .collect::<Result<Vec<_>, String>>()
        })
        .map_err(RtschedError::new_err)?;
    let total = files.len();
    let done = AtomicUsize::new(0);
    let fin = interrupt::run(
        py,
        &stop,
        |_: &Outbox<'_, (), Vec<Option<Value>>>| {
            files
                .par_iter()
                .map(|(set, mi)| {
                    if stop.requested() {
                        return None;
                    }
                    // Selected above: the same call cannot fail here.
                    let r = dag_report_of(set, *mi, tests.as_deref(), &lim).ok()?;
                    done.fetch_add(1, Ordering::Relaxed);
                    (!stop.requested()).then_some(r)
                })
                .collect()
        },
        |_, ()| Ok(()),
        |py| tick(py, progress.as_ref(), done.load(Ordering::Relaxed), Some(total)),
    )?;
    let out = PyList::empty(py);
    for r in fin.result.iter() {
        match r {
            Some(r) => out.append(json_to_py(py, r)?)?,
            None => break,
        }
    }
    tick(py, progress.as_ref(), out.len(), Some(total))?;
    Ok((out, fin.interrupt.is_some()))
}
