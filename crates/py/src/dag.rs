//! DAG task sets from Python (docs/dag.md): the DAG tests by name on a DAG file's text, the
//! seeded generators, and the DOT drawing. The text is read by the model's one DAG reader
//! (`rtsched_model::dag::read_json`), whose errors name the task and node.

use crate::err;
use pyo3::prelude::*;
use rtsched_analysis::dag::report as dag_report;
use rtsched_analysis::global::fp::Assignment;
use rtsched_analysis::Limits;
use rtsched_gen::dag::{generate_dag_set, DagDeadline, DagGenSpec, DagShape};
use rtsched_model::dag::{self, DagFile};
use rtsched_model::ModelError;
use serde_json::{Map, Value};

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

fn get<'a>(o: &'a Map<String, Value>, key: &str) -> Result<&'a Value, ModelError> {
    o.get(key).ok_or_else(|| ModelError::field(key, "missing"))
}

fn num(o: &Map<String, Value>, key: &str) -> Result<f64, ModelError> {
    get(o, key)?.as_f64().ok_or_else(|| ModelError::field(key, "expected a number"))
}

fn int(o: &Map<String, Value>, key: &str) -> Result<u64, ModelError> {
    get(o, key)?.as_u64().ok_or_else(|| ModelError::field(key, "expected a non-negative integer"))
}

fn pair(o: &Map<String, Value>, key: &str) -> Result<(u64, u64), ModelError> {
    let v = get(o, key)?;
    match v.as_array().map(|a| a.as_slice()) {
        Some([a, b]) => match (a.as_u64(), b.as_u64()) {
            (Some(a), Some(b)) => Ok((a, b)),
            _ => Err(ModelError::field(key, format!("expected [min, max] non-negative integers, got {v}"))),
        },
        _ => Err(ModelError::field(key, format!("expected [min, max], got {v}"))),
    }
}

fn usize_pair(o: &Map<String, Value>, key: &str) -> Result<(usize, usize), ModelError> {
    let (a, b) = pair(o, key)?;
    Ok((a as usize, b as usize))
}

/// The generator spec from its JSON object (keys as `DagGenSpec`'s fields plus `shape` and the
/// shape's parameters; every key is required, the Python API fills the defaults).
fn spec_of(text: &str) -> Result<DagGenSpec, ModelError> {
    let v = rtsched_model::json::parse(text)?;
    let o = v.as_object().ok_or_else(|| ModelError::new("DAG generator spec: expected a JSON object"))?;
    let shape_name = get(o, "shape")?.as_str().unwrap_or("");
    let (shape, keys): (DagShape, &[&str]) = match shape_name {
        "nested-fork-join" => (
            DagShape::NestedForkJoin {
                max_depth: u32::try_from(int(o, "max_depth")?)
                    .map_err(|_| ModelError::field("max_depth", "too large"))?,
                max_branches: u32::try_from(int(o, "max_branches")?)
                    .map_err(|_| ModelError::field("max_branches", "too large"))?,
                p_par: num(o, "p_par")?,
                p_add: num(o, "p_add")?,
            },
            &["max_depth", "max_branches", "p_par", "p_add"],
        ),
        "erdos-renyi" => (DagShape::ErdosRenyi { nodes: usize_pair(o, "nodes")?, p: num(o, "p")? }, &["nodes", "p"]),
        "layered" => (
            DagShape::Layered { layers: usize_pair(o, "layers")?, width: usize_pair(o, "width")?, p: num(o, "p")? },
            &["layers", "width", "p"],
        ),
        other => {
            return Err(ModelError::field(
                "shape",
                format!("unknown DAG shape {other:?}; shapes: nested-fork-join, erdos-renyi, layered"),
            ))
        }
    };
    for k in o.keys() {
        if !matches!(k.as_str(), "shape" | "n" | "total" | "umax" | "wcet" | "beta" | "max_tries")
            && !keys.contains(&k.as_str())
        {
            return Err(ModelError::field(k, format!("not a parameter of the {shape_name} shape")));
        }
    }
    let deadline = match o.get("beta") {
        None | Some(Value::Null) => DagDeadline::Implicit,
        Some(_) => DagDeadline::CriticalPathRatio(num(o, "beta")?),
    };
    let spec = DagGenSpec {
        n: int(o, "n")? as usize,
        total: num(o, "total")?,
        umax: num(o, "umax")?,
        shape,
        wcet: pair(o, "wcet")?,
        deadline,
        max_tries: u32::try_from(int(o, "max_tries")?).map_err(|_| ModelError::field("max_tries", "too large"))?,
    };
    spec.validate()?;
    Ok(spec)
}

/// dag_generate(spec_json, seed, count, m=None) -> list[str]: `count` DAG sets (sets `0..count`
/// of stream `seed`), each as the DAG file's JSON text (with `"m"` when given).
#[pyfunction]
#[pyo3(signature = (spec_json, seed, count, m=None))]
fn dag_generate(py: Python<'_>, spec_json: &str, seed: u64, count: u64, m: Option<u32>) -> PyResult<Vec<String>> {
    let spec = spec_of(spec_json).map_err(err)?;
    if let Some(m) = m {
        rtsched_model::check_m(m as u64).map_err(err)?;
    }
    py.allow_threads(|| {
        (0..count).map(|i| generate_dag_set(&spec, seed, i).map(|s| dag::to_json(&s, m))).collect::<Result<Vec<_>, _>>()
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dag_read, m)?)?;
    m.add_function(wrap_pyfunction!(dag_analyze, m)?)?;
    m.add_function(wrap_pyfunction!(dag_generate, m)?)?;
    m.add_function(wrap_pyfunction!(dag_dot, m)?)?;
    Ok(())
}
