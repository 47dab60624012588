//! The batch analysis paths: many task sets analysed in parallel in Rust, with the GIL
//! released, Ctrl-C acting within 50 ms (keeping what is done), progress forwarded, and the
//! output built without a per-set round trip through JSON or Python:
//!
//! * [`sequential::analyze_sets`]: `TaskSet` objects in, a list of report dicts out (`rtsched.analyze_many`);
//! * [`dag::analyze_dag_sets`]: the same for DAG task sets, given as DAG JSON texts (docs/dag.md);
//! * [`file::analyze_file`]: a JSON Lines file streamed in chunks, parsed and analysed in parallel,
//!   its JSON lines handed to a writer one chunk at a time (`rtsched analyze FILE.jsonl`); a
//!   batch is all sequential task sets or all DAG sets, as its first set is (a line of the
//!   other kind is an error for the whole batch, naming the line);
//! * [`columns::analyze_columns`]: task parameters as flat arrays in, a verdict table out
//!   (`rtsched.analyze_table`: numpy arrays or an Arrow table, no Python object per set).
//!
//! One file per path: [`sequential`] (task sets in, report dicts out), [`dag`] (DAG sets in),
//! [`file`] (the JSON Lines stream, either kind, and its line readers), [`columns`] (the array
//! form); this module holds what they share (the limits, the test selection per `m`, progress).

mod columns;
mod dag;
mod file;
mod sequential;

use crate::{err, RtschedError};
use pyo3::prelude::*;
use rtsched_analysis::report::{Selection, TestId};
use rtsched_analysis::{Limits, Stop};
use rtsched_model::ModelError;

/// Limits of one batch call: `max_steps` and the call's stop flag.
fn limits(max_steps: u64, stop: &Stop) -> PyResult<Limits> {
    if max_steps == 0 {
        return Err(RtschedError::new_err("argument 'max_steps': must be at least 1, got 0"));
    }
    Ok(Limits { max_steps, stop: stop.clone(), ..Limits::default() })
}

/// The tests per set for `m = 1` and `m > 1`, resolved once.
struct Tests {
    uni: Result<Vec<TestId>, ModelError>,
    multi: Result<Vec<TestId>, ModelError>,
}

impl Tests {
    fn new(tests: Option<&[String]>) -> PyResult<Tests> {
        let sel = Selection::new(tests).map_err(err)?;
        Ok(Tests {
            uni: sel.for_m(1),
            multi: sel.for_m(2).map_err(|mut e| {
                // The message names the real m per set (see `for_m`).
                e.reason = e.reason.replace("got m = 2", "got m > 1");
                e
            }),
        })
    }

    fn for_m(&self, m: u32) -> Result<&[TestId], ModelError> {
        let r = if m == 1 { &self.uni } else { &self.multi };
        match r {
            Ok(v) => Ok(v),
            Err(e) => {
                let mut e = e.clone();
                e.reason = e.reason.replace("got m > 1", &format!("got m = {m}"));
                Err(e)
            }
        }
    }
}

/// Calls `progress(done, total)` when a callback is given.
fn tick(py: Python<'_>, progress: Option<&PyObject>, done: usize, total: Option<usize>) -> PyResult<()> {
    if let Some(cb) = progress {
        cb.call1(py, (done, total))?;
    }
    Ok(())
}

/// An OS error's reason without Rust's "(os error N)" suffix.
pub(crate) fn os_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sequential::analyze_sets, m)?)?;
    m.add_function(wrap_pyfunction!(dag::analyze_dag_sets, m)?)?;
    m.add_function(wrap_pyfunction!(file::analyze_file, m)?)?;
    m.add_function(wrap_pyfunction!(columns::analyze_columns, m)?)?;
    Ok(())
}
