//! The DAG tests by name, as `rtsched analyze` runs them on a DAG set (docs/cli.md#analyze,
//! docs/dag.md): a name list of their own ([`DAG_TEST_NAMES`]), so that the sequential tests
//! (`crate::report::TEST_NAMES`) never run on a DAG set and these never on a sequential one; a
//! name of the other list is a one-line error naming the set's kind.

use super::federated::{federated, Federated, LowPlacement};
use super::{gedf, graham};
use crate::report::TEST_NAMES;
use crate::{Limits, Verdict};
use rtsched_model::dag::DagSet;
use rtsched_model::ModelError;
use serde_json::{json, Map, Value};

pub use crate::report::DAG_TEST_NAMES;

/// The DAG tests to run on `set`: the requested ones (any spelling, `crate::methods::test`),
/// or by default all that apply. A sequential test's name, an unknown name, or `dag_graham` on
/// a set of more than one task is an error.
pub fn select(requested: Option<&[String]>, set: &DagSet) -> Result<Vec<&'static str>, ModelError> {
    let single = set.len() == 1;
    let Some(list) = requested else {
        return Ok(DAG_TEST_NAMES.iter().copied().filter(|&t| t != "dag_graham" || single).collect());
    };
    let mut out: Vec<&'static str> = Vec::new();
    for t in list {
        let name = match crate::methods::test(t, &DAG_TEST_NAMES) {
            Some(name) => name,
            None if crate::methods::test(t, &TEST_NAMES).is_some() => {
                return Err(ModelError::field(
                    "test",
                    format!(
                        "{t:?} takes sequential tasks; this is a DAG task set (DAG tests: {})",
                        DAG_TEST_NAMES.join(", ")
                    ),
                ))
            }
            None => {
                return Err(ModelError::field(
                    "test",
                    format!("unknown test {t:?}; available for DAG task sets: {}", DAG_TEST_NAMES.join(", ")),
                ))
            }
        };
        if name == "dag_graham" && !single {
            return Err(ModelError::field(
                "test",
                format!("dag_graham bounds one DAG task alone on the m cores; this set has {} tasks", set.len()),
            ));
        }
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

fn verdict_json(v: Verdict) -> Map<String, Value> {
    let mut o = Map::new();
    match v {
        Verdict::Schedulable => o.insert("schedulable".into(), true.into()),
        Verdict::NotSchedulable => o.insert("schedulable".into(), false.into()),
        Verdict::GaveUp => {
            o.insert("gave_up".into(), true.into());
            o.insert("schedulable".into(), Value::Null)
        }
    };
    o
}

/// The report of one DAG set on `m` cores: `{"kind": "DAG", "n", "m", "utilization" (a float,
/// for reading), "results": {name: {"schedulable", ...}}}`; `dag_federated`'s result carries the
/// plan (`"plan": {"high": [{"task", "cores": [first, end)}], "low": [[task, ...] per light
/// core]}`) or the reason it found none (`"reason"`).
pub fn analyze(set: &DagSet, m: u32, tests: &[&'static str], limits: &Limits) -> Value {
    let mut results = Map::new();
    for &name in tests {
        let r = match name {
            "dag_federated" => match federated(set, m, LowPlacement::default(), limits) {
                Federated::Schedulable(plan) => {
                    let mut o = verdict_json(Verdict::Schedulable);
                    let high: Vec<Value> =
                        plan.high.iter().map(|(i, r)| json!({"task": i, "cores": [r.start, r.end]})).collect();
                    o.insert("plan".into(), json!({"high": high, "low": plan.low}));
                    o
                }
                Federated::NotSchedulable(why) => {
                    let mut o = verdict_json(Verdict::NotSchedulable);
                    o.insert("reason".into(), why.into());
                    o
                }
            },
            "dag_gedf_li2013" => verdict_json(gedf::li2013(set, m)),
            "dag_gedf_li2014" => verdict_json(gedf::li2014(set, m)),
            "dag_gedf_bonifaci2013" => verdict_json(gedf::bonifaci2013(set, m)),
            "dag_graham" => verdict_json(graham::single_task(&set[0], m)),
            other => unreachable!("not a DAG test name: {other}"),
        };
        results.insert(name.into(), Value::Object(r));
    }
    let utilization: f64 = set.iter().map(|t| t.volume() as f64 / t.period() as f64).sum();
    json!({"kind": "DAG", "n": set.len(), "m": m, "utilization": utilization, "results": results})
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::dag::read_json;

    fn set(text: &str) -> DagSet {
        read_json(text).unwrap().set
    }

    #[test]
    fn default_selection_has_graham_only_for_one_task() {
        let one = set(r#"{"tasks": [{"period": 100, "nodes": [10, 20]}]}"#);
        let two = set(r#"{"tasks": [{"period": 100, "nodes": [10]}, {"period": 50, "nodes": [5]}]}"#);
        assert!(select(None, &one).unwrap().contains(&"dag_graham"));
        assert!(!select(None, &two).unwrap().contains(&"dag_graham"));
        let e = select(Some(&["dag-graham".into()]), &two).unwrap_err().to_string();
        assert!(e.contains("dag_graham") && e.contains("2 tasks"), "{e}");
        let e = select(Some(&["gfb".into()]), &one).unwrap_err().to_string();
        assert!(e.contains("\"gfb\" takes sequential tasks"), "{e}");
        let e = select(Some(&["nope".into()]), &one).unwrap_err().to_string();
        assert!(e.contains("unknown test"), "{e}");
        assert_eq!(select(Some(&["DAG-Federated".into(), "dag_federated".into()]), &one).unwrap(), ["dag_federated"]);
    }

    #[test]
    fn a_dag_test_named_on_a_sequential_set_is_an_error() {
        let e = crate::report::Selection::new(Some(&["DAG-federated".into()])).unwrap_err().to_string();
        assert!(e.contains("takes DAG tasks; this is a sequential task set"), "{e}");
        let e = crate::report::Selection::new(Some(&["nope".into()])).unwrap_err().to_string();
        assert!(e.contains("unknown test"), "{e}");
    }

    #[test]
    fn the_federated_plan_is_reported() {
        // Task 0: vol 30, len 10, D 20 > 10: high, n = ⌈20/10⌉ = 2 cores. Task 1: light.
        let s = set(r#"{"tasks": [{"period": 20, "nodes": [10, 10, 10]}, {"period": 100, "nodes": [50]}]}"#);
        let r = analyze(&s, 3, &["dag_federated"], &Limits::default());
        let f = &r["results"]["dag_federated"];
        assert_eq!(f["schedulable"], true, "{r}");
        assert_eq!(f["plan"]["high"], json!([{"task": 0, "cores": [0, 2]}]));
        assert_eq!(f["plan"]["low"], json!([[1]]));
        let r = analyze(&s, 2, &["dag_federated"], &Limits::default());
        assert_eq!(r["results"]["dag_federated"]["schedulable"], false);
        assert!(r["results"]["dag_federated"]["reason"].as_str().unwrap().contains("task 1"), "{r}");
    }
}
