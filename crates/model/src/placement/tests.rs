//! Unit tests of placements: Brandenburg & Gül's Fig. 1/2 example, serde round trips, a
//! partition as a placement of whole reservations, field-by-field validation messages, and the
//! periods of placements with overheads.

use super::*;
use serde_json::json;

/// Brandenburg & Gül, RTSS 2016, Fig. 1/2: three (10, 15) tasks on two CPUs, τ₃ split into
/// (5, 10, 15) on CPU 1 at offset 0 and (5, 5, 15) on CPU 0 at offset 10.
const FIG2: &str = r#"{"m":2,"schedulable":true,"heuristic":"WFD-C=D","cpus":[{"cpu":0,"reservations":[{"task":0,"budget":10,"period":15,"deadline":15,"offset":0,"part":1,"parts":1},{"task":2,"budget":5,"period":15,"deadline":5,"offset":10,"part":2,"parts":2}]},{"cpu":1,"reservations":[{"task":1,"budget":10,"period":15,"deadline":15,"offset":0,"part":1,"parts":1},{"task":2,"budget":5,"period":15,"deadline":10,"offset":0,"part":1,"parts":2}]}],"tasks":[{"task":0,"period_ratio":1,"parts":1},{"task":1,"period_ratio":1,"parts":1},{"task":2,"period_ratio":1,"parts":2}]}"#;

fn ts() -> TaskSet {
    TaskSet::from_ct(&[(10, 15), (10, 15), (10, 15)]).unwrap()
}

fn fig2() -> Value {
    serde_json::from_str(FIG2).unwrap()
}

/// The error of reading `v` as a placement for `ts`, runnable.
fn err(v: &Value, ts: &TaskSet) -> ModelError {
    Placement::from_json_runnable(&v.to_string(), ts).unwrap_err()
}

#[test]
fn serde_round_trips_byte_for_byte() {
    let ts = ts();
    let p = Placement::from_json(FIG2, &ts).unwrap();
    // What we write is the text we read (key order and all), through to_json and serde.
    assert_eq!(p.to_json().to_string(), FIG2);
    assert_eq!(serde_json::to_string(&p).unwrap(), FIG2);
    let back: Placement = serde_json::from_str(FIG2).unwrap();
    assert_eq!(back, p);
    // Reservations know their CPU; the per-task view is in part order.
    let parts = p.parts_by_task(3);
    assert_eq!(parts[2].iter().map(|r| (r.cpu, r.part)).collect::<Vec<_>>(), [(1, 1), (0, 2)]);
    assert_eq!(p.check_runnable(&ts), Ok(()));
    // The optional keys: a failed placement's reason, an overheads object (kept whole).
    let failed = Placement::failed(2, "cascade".into(), "too much".into());
    let text = serde_json::to_string(&failed).unwrap();
    assert_eq!(text, r#"{"m":2,"schedulable":false,"heuristic":"cascade","cpus":[],"tasks":[],"reason":"too much"}"#);
    assert_eq!(Placement::from_json(&text, &ts).unwrap(), failed);
    let mut v = fig2();
    v["overheads"] = json!({"model": "m.json", "stat": "max", "values": {"release": 3}});
    let p = Placement::from_json(&v.to_string(), &ts).unwrap();
    assert_eq!(p.overheads_model(), Some("m.json"));
    assert_eq!(p.to_json().to_string(), v.to_string());
    // Duration strings are read as ns.
    let mut v = fig2();
    v["cpus"][0]["reservations"][0]["budget"] = json!("10ns");
    assert_eq!(Placement::from_json(&v.to_string(), &ts).unwrap(), Placement::from_json(FIG2, &ts).unwrap());
}

#[test]
fn a_partition_is_a_placement_of_whole_reservations() {
    let ts = TaskSet::from_ct(&[(1, 4), (2, 5), (1, 3)]).unwrap();
    let p = Placement::whole(&ts, &[vec![2, 0], vec![1]]).unwrap();
    assert_eq!(p.check_runnable(&ts), Ok(()));
    assert_eq!(p.as_partition(&ts), Ok(vec![vec![0, 2], vec![1]]));
    let back = Placement::from_json_runnable(&p.to_json().to_string(), &ts).unwrap();
    assert_eq!(back, p);
    assert_eq!(Placement::whole(&ts, &[vec![0, 0], vec![1, 2]]), None, "task 0 twice");
    assert_eq!(Placement::whole(&ts, &[vec![0], vec![1]]), None, "task 2 missing");
    assert_eq!(Placement::whole(&ts, &[vec![0, 1, 2, 3]]), None, "no task 3");
    // A split task is not a partition.
    assert_eq!(Placement::from_json(FIG2, &self::ts()).unwrap().as_partition(&self::ts()), Err(2));
}

#[test]
#[allow(clippy::type_complexity)] // a table of (mutation, field, task, words)
fn each_field_is_validated_with_a_message_that_names_it() {
    let ts = ts();
    let cases: Vec<(Box<dyn Fn(&mut Value)>, &str, Option<usize>, &str)> = vec![
        (Box::new(|v| v["m"] = json!(0)), "m", None, "number of processors"),
        (Box::new(|v| v["m"] = json!(1u64 << 40)), "m", None, "number of processors"),
        (Box::new(|v| v["schedulable"] = json!(false)), "schedulable", None, "nothing to run"),
        (Box::new(|v| v["schedulable"] = json!("yes")), "schedulable", None, "true or false"),
        (Box::new(|v| v["heuristic"] = json!(3)), "heuristic", None, "must be a string"),
        (Box::new(|v| v["reason"] = json!(3)), "reason", None, "must be a string"),
        (Box::new(|v| v["overheads"] = json!({"stat": "max"})), "overheads", None, "\"model\""),
        (Box::new(|v| v["cpus"] = json!({})), "cpus", None, "must be an array"),
        (Box::new(|v| v["cpus"][1]["cpu"] = json!(2)), "cpu", None, "CPU 2 does not exist on 2"),
        (Box::new(|v| v["cpus"][1]["cpu"] = json!(0)), "cpu", None, "CPU 0 is listed twice"),
        (Box::new(|v| v["cpus"][1]["reservations"] = json!(1)), "reservations", None, "must be an array"),
        (Box::new(|v| v["cpus"][0]["reservations"][0]["task"] = json!(7)), "task", None, "unknown task 7"),
        (Box::new(|v| v["cpus"][0]["reservations"][0]["budget"] = json!(0)), "budget", Some(0), "at least 1 ns"),
        (Box::new(|v| v["cpus"][0]["reservations"][0]["budget"] = json!(16)), "budget", Some(0), "exceeds the period"),
        (
            Box::new(|v| v["cpus"][0]["reservations"][1]["budget"] = json!(6)),
            "budget",
            Some(2),
            "exceeds the deadline 5",
        ),
        (
            Box::new(|v| v["cpus"][0]["reservations"][0]["deadline"] = json!(16)),
            "deadline",
            Some(0),
            "exceeds the period",
        ),
        (Box::new(|v| v["cpus"][0]["reservations"][1]["offset"] = json!(11)), "offset", Some(2), "leaves the period"),
        (Box::new(|v| v["cpus"][0]["reservations"][1]["offset"] = json!(9)), "offset", Some(2), "overlaps"),
        (Box::new(|v| v["cpus"][0]["reservations"][1]["part"] = json!(3)), "part", Some(2), "part 3 of 2"),
        (Box::new(|v| v["cpus"][0]["reservations"][1]["parts"] = json!(3)), "part", Some(2), "expected parts 1..=2"),
        (
            Box::new(|v| v["cpus"][1]["reservations"][1]["period"] = json!(14)),
            "period",
            Some(2),
            "but part 1 has 14 ns",
        ),
        (Box::new(|v| v["cpus"][0]["reservations"][1]["period"] = json!(-1)), "period", Some(2), "non-negative"),
        (Box::new(|v| v["cpus"][0]["reservations"][0]["budgte"] = json!(1)), "budgte", None, "unknown key"),
        (Box::new(|v| v["tasks"][0]["period_ratio"] = json!(0)), "period_ratio", Some(0), "at least 1"),
        (Box::new(|v| v["tasks"][2]["parts"] = json!(3)), "parts", Some(2), "says 3 parts but 2"),
        (Box::new(|v| v["tasks"][1]["task"] = json!(0)), "task", Some(0), "listed twice"),
        (Box::new(|v| v["tasks"][0]["task"] = json!(9)), "task", None, "unknown task 9"),
        (
            Box::new(|v| {
                v["tasks"].as_array_mut().unwrap().remove(0);
            }),
            "task",
            Some(0),
            "missing from 'tasks'",
        ),
        // What an engine needs beyond the structure (check_runnable).
        (
            Box::new(|v| {
                v["cpus"][0]["reservations"][0]["period"] = json!(14);
                v["cpus"][0]["reservations"][0]["deadline"] = json!(14);
            }),
            "period",
            Some(0),
            "is not ⌊T / period_ratio⌋ = 15",
        ),
        (Box::new(|v| v["cpus"][1]["reservations"][1]["budget"] = json!(4)), "budget", Some(2), "sum to 9 ns"),
    ];
    for (mutate, field, task, words) in cases {
        let mut v = fig2();
        mutate(&mut v);
        let e = err(&v, &ts);
        let line = e.to_string();
        assert_eq!((e.field.as_deref(), e.task), (Some(field), task), "{line}");
        assert!(line.contains(words) && !line.contains('\n'), "{field}: {line}");
    }
    // The text itself: duplicate keys, bad JSON, not an object.
    let e = Placement::from_json(&format!("{{\"m\": 2, {}", &FIG2[1..]), &ts).unwrap_err().to_string();
    assert!(e.starts_with("field 'm': placement: duplicate key"), "{e}");
    let e = Placement::from_json("{\"m\": ", &ts).unwrap_err().to_string();
    assert!(e.starts_with("placement: invalid JSON"), "{e}");
    let e = Placement::from_json("[1]", &ts).unwrap_err().to_string();
    assert_eq!(e, "placement: expected a JSON object");
    // A task set of another size.
    let two = TaskSet::from_ct(&[(10, 15), (10, 15)]).unwrap();
    assert!(Placement::from_json(FIG2, &two).unwrap_err().to_string().contains("unknown task 2"));
    // serde's reader checks the document, not the task set: errors come back as text.
    let mut v = fig2();
    v["cpus"][0]["reservations"][0]["budgte"] = json!(1);
    let e = serde_json::from_value::<Placement>(v).unwrap_err().to_string();
    assert!(e.contains("budgte") && e.contains("unknown key"), "{e}");
}

#[test]
fn placements_with_overheads_may_have_shorter_periods_never_longer() {
    let ts = ts();
    let mut v = fig2();
    for c in [0, 1] {
        for r in v["cpus"][c]["reservations"].as_array_mut().unwrap() {
            if r["task"] == 0 {
                r["period"] = json!(14);
                r["deadline"] = json!(14);
            }
        }
    }
    assert_eq!(err(&v, &ts).field.as_deref(), Some("period"));
    v["overheads"] = json!({"model": "constants"});
    assert!(Placement::from_json_runnable(&v.to_string(), &ts).is_ok());
    v["cpus"][0]["reservations"][0]["period"] = json!(16);
    v["cpus"][0]["reservations"][0]["deadline"] = json!(16);
    let e = err(&v, &ts);
    assert!(e.to_string().contains("exceeds the task's period 15"), "{e}");
}
