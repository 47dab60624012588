//! `Placement::from_value` (the model's strict placement reader) rejects malformed placements with errors that name the problem.

use rtsched_analysis::semi::{cascade, Placement, SemiConfig, Variant};
use rtsched_model::TaskSet;
use serde_json::{json, Value};

fn base() -> (TaskSet, Value) {
    let ts = TaskSet::from_ct(&[(10, 15), (10, 15), (10, 15)]).unwrap();
    // The text's cascade: WFD-C=D splits τ3 (the mutations below index its reservations).
    let v = cascade(&ts, 2, &SemiConfig::for_variant(Variant::Text)).to_json();
    (ts, v)
}

fn err(ts: &TaskSet, v: &Value) -> String {
    Placement::from_value(v, ts).unwrap_err().to_string()
}

#[test]
fn round_trip_and_duration_strings() {
    let (ts, mut v) = base();
    let p = Placement::from_value(&v, &ts).unwrap();
    assert_eq!(p.to_json(), v);
    v["cpus"][0]["reservations"][0]["budget"] = json!("10ns");
    assert_eq!(Placement::from_value(&v, &ts).unwrap(), p);
}

#[test]
#[allow(clippy::type_complexity)] // a table of (name, mutation, expected message)
fn errors_name_the_fault() {
    let (ts, v) = base();
    let cases: Vec<(&str, Box<dyn Fn(&mut Value)>, &str)> = vec![
        ("budget > period", Box::new(|v| v["cpus"][0]["reservations"][0]["budget"] = json!(16)), "exceeds the period"),
        (
            "budget > deadline",
            Box::new(|v| v["cpus"][0]["reservations"][1]["budget"] = json!(6)),
            "exceeds the deadline",
        ),
        (
            "deadline > period",
            Box::new(|v| v["cpus"][0]["reservations"][0]["deadline"] = json!(16)),
            "exceeds the period",
        ),
        ("unknown task", Box::new(|v| v["cpus"][0]["reservations"][0]["task"] = json!(7)), "unknown task 7"),
        ("unknown key", Box::new(|v| v["cpus"][0]["reservations"][0]["budgte"] = json!(1)), "unknown key"),
        ("overlap", Box::new(|v| v["cpus"][0]["reservations"][1]["offset"] = json!(9)), "overlaps"),
        (
            "gap",
            Box::new(|v| {
                v["cpus"][0]["reservations"][1]["offset"] = json!(10);
                v["cpus"][1]["reservations"][1]["deadline"] = json!(9)
            }),
            "gap",
        ),
        (
            "window leaves period",
            Box::new(|v| v["cpus"][0]["reservations"][1]["offset"] = json!(11)),
            "leaves the period",
        ),
        ("cpu out of range", Box::new(|v| v["cpus"][1]["cpu"] = json!(2)), "does not exist"),
        ("cpu twice", Box::new(|v| v["cpus"][1]["cpu"] = json!(0)), "listed twice"),
        (
            "missing part",
            Box::new(|v| {
                v["cpus"][1]["reservations"].as_array_mut().unwrap().pop();
            }),
            "parts",
        ),
        (
            "task twice",
            Box::new(|v| {
                let t = v["tasks"][0].clone();
                v["tasks"].as_array_mut().unwrap().push(t);
            }),
            "listed twice",
        ),
        (
            "missing task",
            Box::new(|v| {
                v["tasks"].as_array_mut().unwrap().remove(0);
            }),
            "missing from 'tasks'",
        ),
        ("m = 0", Box::new(|v| v["m"] = json!(0)), "'m'"),
        ("negative", Box::new(|v| v["cpus"][0]["reservations"][0]["period"] = json!(-1)), "non-negative"),
        ("not an object", Box::new(|v| *v = json!([1, 2])), "expected a JSON object"),
        ("period ratio 0", Box::new(|v| v["tasks"][0]["period_ratio"] = json!(0)), "period_ratio"),
    ];
    for (what, mutate, needle) in cases {
        let mut w = v.clone();
        mutate(&mut w);
        let e = err(&ts, &w);
        assert!(e.contains(needle), "{what}: {e}");
    }
}

#[test]
fn failed_placement_round_trips() {
    let ts = TaskSet::from_ct(&[(10, 15), (10, 15), (10, 15)]).unwrap();
    let p = cascade(&ts, 1, &SemiConfig::default());
    assert!(!p.schedulable);
    let v = p.to_json();
    assert!(v["reason"].as_str().unwrap().contains("utilization"));
    assert_eq!(Placement::from_value(&v, &ts).unwrap(), p);
}
