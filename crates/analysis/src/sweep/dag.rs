//! DAG task sets in sweeps and batches (docs/dag.md, "From the CLI and Python"; docs/experiments.md,
//! "DAG task sets"): the DAG generator's specification from its JSON object (the one reader of it,
//! used by sweep points and by `rtsched generate --dag`), the DAG tests by name, and the
//! evaluation of a sweep point whose sets are DAG sets.
//!
//! The DAG tests are those of `crate::dag::report` ([`DAG_TEST_NAMES`]), run through
//! [`dag_report::analyze`]: a test added there works here by name with no change.

use super::{PointRequest, PointResult, Row, SetRows};
use crate::dag::report::{self as dag_report, DAG_TEST_NAMES};
use crate::report::TEST_NAMES;
use crate::{methods, Limits, Verdict};
use rayon::prelude::*;
use rtsched_gen::dag::{generate_dag_set, DagDeadline, DagGenSpec, DagShape};
use rtsched_model::dag::DagSet;
use rtsched_model::ModelError;
use serde_json::{Map, Value};

/// The DAG shapes' names, as the specs and the CLI write them.
pub const DAG_SHAPES: [&str; 3] = ["nested-fork-join", "erdos-renyi", "layered"];

/// The keys every DAG generator object may have besides its shape's parameters.
const COMMON_KEYS: [&str; 7] = ["shape", "n", "total", "umax", "wcet", "beta", "max_tries"];

fn get<'a>(o: &'a Map<String, Value>, key: &str) -> Result<&'a Value, ModelError> {
    o.get(key).ok_or_else(|| ModelError::field(key, "missing"))
}

fn num(o: &Map<String, Value>, key: &str) -> Result<f64, ModelError> {
    get(o, key)?.as_f64().ok_or_else(|| ModelError::field(key, "expected a number"))
}

fn int(o: &Map<String, Value>, key: &str) -> Result<u64, ModelError> {
    get(o, key)?.as_u64().ok_or_else(|| ModelError::field(key, "expected a non-negative integer"))
}

fn u32_of(o: &Map<String, Value>, key: &str) -> Result<u32, ModelError> {
    u32::try_from(int(o, key)?).map_err(|_| ModelError::field(key, "too large"))
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
    let conv = |x: u64| usize::try_from(x).map_err(|_| ModelError::field(key, "too large"));
    Ok((conv(a)?, conv(b)?))
}

/// The DAG generator's specification from its JSON object: `shape` (one of [`DAG_SHAPES`]) and
/// its parameters (`max_depth`, `max_branches`, `p_par`, `p_add`; `nodes`, `p`; `layers`,
/// `width`, `p`), `n`, `total`, `umax`, `wcet` (`[min, max]` ns), `beta` (absent or null:
/// implicit deadlines) and `max_tries`. Every key but `beta` is required (the Python front
/// fills the defaults); a key the shape does not take is an error naming it. Validated.
pub fn spec_from_object(o: &Map<String, Value>) -> Result<DagGenSpec, ModelError> {
    let shape_name = get(o, "shape")?.as_str().ok_or_else(|| ModelError::field("shape", "expected a string"))?;
    let (shape, keys): (DagShape, &[&str]) = match shape_name {
        "nested-fork-join" => (
            DagShape::NestedForkJoin {
                max_depth: u32_of(o, "max_depth")?,
                max_branches: u32_of(o, "max_branches")?,
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
                format!("unknown DAG shape {other:?}; shapes: {}", DAG_SHAPES.join(", ")),
            ))
        }
    };
    for k in o.keys() {
        if !COMMON_KEYS.contains(&k.as_str()) && !keys.contains(&k.as_str()) {
            return Err(ModelError::field(k, format!("not a parameter of the {shape_name} shape")));
        }
    }
    let deadline = match o.get("beta") {
        None | Some(Value::Null) => DagDeadline::Implicit,
        Some(_) => DagDeadline::CriticalPathRatio(num(o, "beta")?),
    };
    let spec = DagGenSpec {
        n: usize::try_from(int(o, "n")?).map_err(|_| ModelError::field("n", "too large"))?,
        total: num(o, "total")?,
        umax: num(o, "umax")?,
        shape,
        wcet: pair(o, "wcet")?,
        deadline,
        max_tries: u32_of(o, "max_tries")?,
    };
    spec.validate()?;
    Ok(spec)
}

/// [`spec_from_object`] of a JSON text.
pub fn spec_from_json(text: &str) -> Result<DagGenSpec, ModelError> {
    let v = rtsched_model::json::parse(text)?;
    let o = v.as_object().ok_or_else(|| ModelError::new("DAG generator spec: expected a JSON object"))?;
    spec_from_object(o)
}

/// A sweep point's DAG generator: its `dag` object (the shape and its parameters, `wcet`,
/// `beta`, `max_tries`) with `n`, `total` and `umax` taken from the point.
pub(super) fn point_spec(dag: &Value, n: usize, util: f64, umax: f64) -> Result<DagGenSpec, ModelError> {
    let o = dag.as_object().ok_or_else(|| ModelError::field("dag", "expected an object"))?;
    for k in ["n", "total", "umax"] {
        if o.contains_key(k) {
            return Err(ModelError::field(
                format!("dag.{k}"),
                "comes from the point (n, util, umax), not from its DAG generator",
            ));
        }
    }
    let mut o = o.clone();
    o.insert("n".into(), n.into());
    o.insert("total".into(), util.into());
    o.insert("umax".into(), umax.into());
    spec_from_object(&o).map_err(|mut e| {
        if let Some(f) = e.field.take() {
            e.field = Some(if ["n", "total", "umax"].contains(&f.as_str()) { f } else { format!("dag.{f}") });
        }
        e
    })
}

/// The DAG test a method name means (any spelling, `crate::methods`), or None.
pub fn dag_test(name: &str) -> Option<&'static str> {
    methods::test(name, &DAG_TEST_NAMES)
}

/// The error for a method that is not a DAG test, on a point of DAG sets.
pub(super) fn not_a_dag_test(name: &str) -> ModelError {
    let why = if methods::resolve(name, &TEST_NAMES).is_some() {
        format!("{name:?} takes sequential tasks; this point generates DAG task sets")
    } else {
        format!("unknown method {name:?}")
    };
    ModelError::field("methods", format!("{why} (DAG tests: {})", DAG_TEST_NAMES.join(", ")))
}

/// The verdict of the DAG test `name` (of [`DAG_TEST_NAMES`]) on `set` on `m` cores, as
/// `rtsched analyze` reports it ([`dag_report::analyze`]); a test that does not apply to the set
/// (`dag_graham` on more than one task) is an error.
pub fn dag_verdict(name: &str, set: &DagSet, m: u32, limits: &Limits) -> Result<Verdict, ModelError> {
    let selected = dag_report::select(Some(&[name.to_string()]), set)?;
    let report = dag_report::analyze(set, m, &selected, limits);
    let r = &report["results"][selected[0]];
    Ok(verdict_of(r))
}

/// A DAG report's result object (`{"schedulable": true|false|null, "gave_up"?: true}`) as a
/// verdict.
pub fn verdict_of(r: &Value) -> Verdict {
    match r.get("schedulable").and_then(Value::as_bool) {
        Some(b) => Verdict::from_bool(b),
        None => Verdict::GaveUp,
    }
}

/// The total utilization `Σ vol_i/T_i` of a DAG set, as a float (for reports).
pub fn utilization(set: &DagSet) -> f64 {
    set.iter().map(|t| t.volume() as f64 / t.period() as f64).sum()
}

/// Evaluates a point whose sets are DAG sets (`req.dag`): sets `0..count` of stream `seed`
/// ([`generate_dag_set`]), every method (a DAG test) on each, in parallel over the sets. An
/// unknown method, a sequential one, or one that does not apply is an error before the parallel
/// part, as is a set the generator cannot draw.
pub(super) fn evaluate_dag_point(
    req: &PointRequest,
    spec: &DagGenSpec,
    limits: &Limits,
) -> Result<PointResult, ModelError> {
    let names: Vec<&'static str> =
        req.methods.iter().map(|m| dag_test(m).ok_or_else(|| not_a_dag_test(m))).collect::<Result<_, _>>()?;
    let sets: Vec<DagSet> =
        (0..req.count as u64).into_par_iter().map(|i| generate_dag_set(spec, req.seed, i)).collect::<Result<_, _>>()?;
    if let Some(first) = sets.first() {
        for name in &names {
            dag_verdict(name, first, req.m, limits)?;
        }
    }
    let sets = sets
        .par_iter()
        .map(|set| {
            let rows = names
                .iter()
                .map(|name| Row {
                    verdict: dag_verdict(name, set, req.m, limits).unwrap_or(Verdict::GaveUp),
                    switch_rate: None,
                })
                .collect();
            SetRows { utilization: utilization(set), rows }
        })
        .collect();
    Ok(PointResult { sets })
}
