//! DAG task sets from Python (docs/dag.md): the DAG tests by name on a DAG file's text, the
//! seeded generators, and the DOT drawing. The text is read by the model's one DAG reader
//! (`rtsched_model::dag::read_json`), whose errors name the task and node.

use crate::err;
use pyo3::prelude::*;
use rayon::prelude::*;
use rtsched_analysis::dag::report as dag_report;
use rtsched_analysis::global::fp::Assignment;
use rtsched_analysis::sweep::dag::spec_from_json;
use rtsched_analysis::Limits;
use rtsched_gen::dag::generate_dag_set;
use rtsched_model::dag::{self, DagFile};
use rtsched_model::ModelError;

fn read(text: &str) -> PyResult<DagFile> {
    dag::read_json(text).map_err(err)
}

/// dag_read(text) -> str: the DAG file's set checked by the model's reader and written back in
/// its canonical JSON (integer ns; `m` kept when the file has it).
#[pyfunction]
fn dag_read(text: &str) -> PyResult<String> {
    let f = read(text)?;
    Ok(dag::to_json(&f.set, f.m))
}

/// dag_analyze(text, m=None, tests=None, max_steps=1000000, priorities=None) -> str: the JSON
/// report of the DAG tests (`rtsched analyze` on a DAG file; docs/cli.md#analyze). `m`
/// overrides the file's; a sequential test named here, or a DAG test that does not apply, is
/// an error. `priorities` (`dm`, `rm` or one rank per task, comma-separated; the sequential
/// G-FP tests' parser) replaces deadline-monotonic priorities in the DAG G-FP tests.
#[pyfunction]
#[pyo3(signature = (text, m=None, tests=None, max_steps=1_000_000, priorities=None))]
fn dag_analyze(
    text: &str,
    m: Option<u32>,
    tests: Option<Vec<String>>,
    max_steps: u64,
    priorities: Option<String>,
) -> PyResult<String> {
    let f = read(text)?;
    let m = m
        .or(f.m)
        .ok_or_else(|| err(ModelError::field("m", "no processor count: pass --m or put \"m\" in the DAG file")))?;
    rtsched_model::check_m(m as u64).map_err(err)?;
    let selected = dag_report::select(tests.as_deref(), &f.set).map_err(err)?;
    let prio = match priorities {
        None => Assignment::default(),
        Some(text) => Assignment::from_text(&f.set.sequential().map_err(err)?, &text).map_err(err)?,
    };
    Ok(dag_report::analyze_with(&f.set, m, &selected, &prio, &Limits::steps(max_steps)).to_string())
}

/// dag_generate(spec_json, seed, count, m=None, start=0) -> list[str]: `count` DAG sets (sets
/// `start..start + count` of stream `seed`, in parallel), each as the DAG file's JSON text, one
/// line (with `"m"` when given). The spec is the JSON object that
/// `rtsched_analysis::sweep::dag::spec_from_json` reads.
#[pyfunction]
#[pyo3(signature = (spec_json, seed, count, m=None, start=0))]
fn dag_generate(
    py: Python<'_>,
    spec_json: &str,
    seed: u64,
    count: u64,
    m: Option<u32>,
    start: u64,
) -> PyResult<Vec<String>> {
    let spec = spec_from_json(spec_json).map_err(err)?;
    let end = start
        .checked_add(count)
        .ok_or_else(|| err(ModelError::field("start", format!("start + count overflows: {start} + {count}"))))?;
    if let Some(m) = m {
        rtsched_model::check_m(m as u64).map_err(err)?;
    }
    py.allow_threads(|| {
        (start..end)
            .into_par_iter()
            .map(|i| generate_dag_set(&spec, seed, i).map(|s| dag::to_json(&s, m)))
            .collect::<Result<Vec<_>, _>>()
    })
    .map_err(err)
}

/// dag_dot(text, task=None) -> str: the DAG file's tasks as Graphviz DOT digraphs (one per task,
/// in order), or only task `task`.
#[pyfunction]
#[pyo3(signature = (text, task=None))]
fn dag_dot(text: &str, task: Option<usize>) -> PyResult<String> {
    let f = read(text)?;
    match task {
        Some(i) if i >= f.set.len() => {
            Err(err(ModelError::field("task", format!("no task {i}: the file has {} DAG tasks", f.set.len()))))
        }
        Some(i) => Ok(dag::to_dot(&f.set[i])),
        None => Ok(f.set.iter().map(dag::to_dot).collect()),
    }
}

/// dag_test_names(several=False) -> list[str]: the DAG tests by name
/// (`rtsched_analysis::dag::report`, in its order); with `several`, only those that apply to a
/// set of several tasks (what `rtsched analyze` runs by default on one).
#[pyfunction]
#[pyo3(signature = (several=false))]
fn dag_test_names(several: bool) -> PyResult<Vec<&'static str>> {
    if !several {
        return Ok(dag_report::DAG_TEST_NAMES.to_vec());
    }
    let two = read(r#"{"tasks": [{"period": 10, "nodes": [1]}, {"period": 10, "nodes": [1]}]}"#)?;
    dag_report::select(None, &two.set).map_err(err)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dag_test_names, m)?)?;
    m.add_function(wrap_pyfunction!(dag_read, m)?)?;
    m.add_function(wrap_pyfunction!(dag_analyze, m)?)?;
    m.add_function(wrap_pyfunction!(dag_generate, m)?)?;
    m.add_function(wrap_pyfunction!(dag_dot, m)?)?;
    Ok(())
}
