//! The readers on arbitrary text: a value or a ModelError, never a panic. Covers the strict
//! JSON reader (duplicate keys, byte-order mark), the fast task-set reader against the
//! reference reader, JSON Lines, quoted CSV (load(save(x)) == x, names included) and the
//! placement reader of `simulate` and `run`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rtsched_model::Placement;
use rtsched_model::{io, json, Task, TaskSet};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = json::parse(text).map_err(|e| e.to_string());
    // The fast reader must agree with the reference reader: same task set, or both refuse.
    let fast = io::read_json(text);
    let reference = io::read_json_reference(json::strip_bom(text));
    match (&fast, &reference) {
        (Ok(a), Ok(b)) => assert_eq!((&a.taskset, a.m), (&b.taskset, b.m), "fast and reference readers differ"),
        (Err(_), Err(_)) => {}
        _ => panic!("fast {:?} vs reference {:?} on {text:?}", fast.is_ok(), reference.is_ok()),
    }
    if let Ok(f) = fast {
        // What was read must round-trip through the writer.
        let again = io::read_json(&io::to_json(&f.taskset, f.m)).expect("written JSON reads back");
        assert_eq!(again.taskset, f.taskset);
    }
    for r in io::read_jsonl(text).take(1000) {
        let _ = r.map_err(|e| e.to_string());
    }
    if let Ok(ts) = io::read_csv(text) {
        let again = io::read_csv(&io::to_csv(&ts).expect("a set without suspensions writes as CSV"))
            .expect("written CSV reads back");
        assert_eq!(again, ts, "CSV round trip changed the task set");
    }
    // Names: any text (the writer quotes commas, quotes and newlines).
    let task = Task { name: Some(text.to_owned()), wcet: 1, deadline: 2, period: 2, segments: None };
    if task.validate().is_ok() {
        let named = TaskSet::new(vec![task]).expect("a valid task makes a task set");
        assert_eq!(
            io::read_csv(&io::to_csv(&named).expect("a set without suspensions writes as CSV"))
                .expect("named CSV reads back"),
            named
        );
    }
    // The placement reader, against a small fixed task set.
    let ts = TaskSet::new(vec![
        Task { name: None, wcet: 2, deadline: 10, period: 10, segments: None },
        Task { name: None, wcet: 3, deadline: 20, period: 20, segments: None },
    ])
    .expect("a valid task set");
    let _ = Placement::from_json_runnable(text, &ts).map_err(|e| e.to_string());
});
