//! The DAG tests by name, as `rtsched analyze` runs them on a DAG set (docs/cli.md#analyze,
//! docs/dag.md): a name list of their own ([`DAG_TEST_NAMES`]), so that the sequential tests
//! (`crate::report::TEST_NAMES`) never run on a DAG set and these never on a sequential one; a
//! name of the other list is a one-line error naming the set's kind.

use super::federated::{federated, Federated, LowPlacement};
use super::{fonseca, fonseca_chain, gedf, graham, melani};
use crate::global::fp::{Assignment, GfpResult};
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

/// The JSON of a response-time analysis: the verdict, `"response_times_ns"` (per task, its bound
/// in ns or null where none was established) and, when the step bound was hit, `"reason"`.
fn rta_json(r: Result<GfpResult, ModelError>, limits: &Limits) -> Map<String, Value> {
    match r {
        Ok(r) => {
            let mut o = verdict_json(r.verdict);
            o.insert("response_times_ns".into(), json!(r.response_times));
            if r.verdict == Verdict::GaveUp {
                o.insert(
                    "reason".into(),
                    format!("gave up after {} fixed-point iterations (the step bound, --max-steps)", limits.max_steps)
                        .into(),
                );
            }
            o
        }
        Err(e) => {
            let mut o = verdict_json(Verdict::NotSchedulable);
            o.insert("reason".into(), e.to_string().into());
            o
        }
    }
}

/// The report of one DAG set on `m` cores: `{"kind": "DAG", "n", "m", "utilization" (a float,
/// for reading), "results": {name: {"schedulable", ...}}}`; `dag_federated`'s result carries the
/// plan (`"plan": {"high": [{"task", "cores": [first, end)}], "low": [[task, ...] per light
/// core]}`) or the reason it found none (`"reason"`); the response-time analyses carry
/// `"response_times_ns"`. G-FP tests use deadline-monotonic priorities ([`analyze_with`] takes
/// others).
pub fn analyze(set: &DagSet, m: u32, tests: &[&'static str], limits: &Limits) -> Value {
    analyze_with(set, m, tests, &Assignment::default(), limits)
}

/// [`analyze`] with the G-FP tests under `prio` (an explicit assignment of the wrong length is
/// reported as each G-FP test's `"reason"`).
pub fn analyze_with(set: &DagSet, m: u32, tests: &[&'static str], prio: &Assignment, limits: &Limits) -> Value {
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
            "dag_melani_gfp" => rta_json(melani::gfp(set, m, prio, limits), limits),
            "dag_melani_gedf" => rta_json(Ok(melani::gedf(set, m, limits)), limits),
            "dag_fonseca_gfp" => rta_json(fonseca::gfp(set, m, prio, limits), limits),
            "dag_fonseca_gfp_chain" => rta_json(fonseca_chain::gfp(set, m, prio, limits), limits),
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
    fn the_response_time_analyses_report_their_bounds() {
        // τ0: chain 2 → 2, T = D = 10; τ1: three independent nodes of 3, T = D = 12; m = 2.
        // Melani G-FP (DM): R0 = 4, R1 = 8 (worked out in dag::melani's tests).
        let s = set(r#"{"tasks": [{"period": 10, "nodes": [2, 2], "edges": [[0, 1]]},
                                  {"period": 12, "nodes": [3, 3, 3]}]}"#);
        let names = ["dag_melani_gfp", "dag_melani_gedf", "dag_fonseca_gfp", "dag_fonseca_gfp_chain"];
        let r = analyze(&s, 2, &names, &Limits::default());
        assert_eq!(r["results"]["dag_melani_gfp"], json!({"schedulable": true, "response_times_ns": [4, 8]}), "{r}");
        for name in names {
            assert_eq!(r["results"][name]["schedulable"], true, "{r}");
            assert_eq!(r["results"][name]["response_times_ns"].as_array().unwrap().len(), 2, "{r}");
        }
        let r = analyze(&s, 2, &names, &Limits::steps(1));
        for name in names {
            assert_eq!(r["results"][name]["gave_up"], true, "{r}");
            assert!(r["results"][name]["reason"].as_str().unwrap().contains("gave up after 1 "), "{r}");
        }
        let r = analyze_with(&s, 2, &names, &Assignment::Explicit(vec![2, 1]), &Limits::default());
        assert_eq!(r["results"]["dag_melani_gfp"]["response_times_ns"], json!([8, 6]), "{r}");
        let r = analyze_with(&s, 2, &names, &Assignment::Explicit(vec![1]), &Limits::default());
        assert!(
            r["results"]["dag_fonseca_gfp"]["reason"].as_str().unwrap().contains("1 priorities given for 2"),
            "{r}"
        );
        assert!(select(None, &s).unwrap().contains(&"dag_fonseca_gfp"));
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
