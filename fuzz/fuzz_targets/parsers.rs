//! The task-set readers on arbitrary text: a task set or a ModelError, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use rtsched_model::io;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(f) = io::read_json(text) {
        // What was read must round-trip through the writer.
        let again = io::read_json(&io::to_json(&f.taskset, f.m)).expect("written JSON reads back");
        assert_eq!(again.taskset, f.taskset);
    }
    for r in io::read_jsonl(text).take(1000) {
        let _ = r.map_err(|e| e.to_string());
    }
    if let Ok(ts) = io::read_csv(text) {
        let again = io::read_csv(&io::to_csv(&ts)).expect("written CSV reads back");
        assert_eq!(again.len(), ts.len());
    }
});
