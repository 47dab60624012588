//! The task-set file formats (specified in `docs/formats.md`).
//!
//! * JSON: `{"m": 4, "tasks": [{"name": "a", "wcet": 1000000, "period": "10ms", "deadline": "8ms"}]}`;
//!   `m`, `name`, `deadline` (defaults to `period`) and `segments` (self-suspension, the
//!   segmented model: `[C_1, S_1, C_2, ..]`) and `priority` (a fixed-priority rank, an integer
//!   in `0..=2^32-1`, smaller = higher, equal ranks tie by task index; every task or none) are
//!   optional; times are integer ns or duration strings. Unknown and repeated keys are errors (a misspelled `dedline` must not be
//!   ignored, nor the first of two `wcet`s). A leading byte-order mark is skipped.
//! * JSON Lines: one such object per line; blank lines and lines starting with `#` are skipped
//!   (line numbers in errors still count them).
//! * CSV ([`csv`]): `wcet,period,deadline` per row, optional header row, optional `deadline`
//!   column, optional trailing `name` column (quoted when it holds commas, quotes or line
//!   breaks), `#` comments. A CSV without task rows is an error.
//!
//! The JSON reader (`io/read.rs`: the strict reference reader, the fast path of `io/fast.rs`
//! and the rule for duration strings) and the JSON writer (`io/write.rs`) are one file each;
//! this module holds the types they share and the round-trip tests that need both.

mod csv;
mod fast;
mod read;
mod write;

pub use csv::{read_csv, to_csv};
pub use read::{from_value, parse_duration_text, read_json, read_json_reference, read_jsonl, read_jsonl_line};
pub use write::{to_json, to_value, write_json};

use crate::taskset::TaskSet;
use crate::ModelError;

/// A task set as read from a file: the tasks and, if the file says it, the processor count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSetFile {
    pub m: Option<u32>,
    pub taskset: TaskSet,
}

/// Which format a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    JsonLines,
    Csv,
}

impl Format {
    /// Guesses the format from a file name's extension (`.json`, `.jsonl`/`.ndjson`, `.csv`).
    pub fn from_path(path: &str) -> Result<Format, ModelError> {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".jsonl") || lower.ends_with(".ndjson") {
            Ok(Format::JsonLines)
        } else if lower.ends_with(".json") {
            Ok(Format::Json)
        } else if lower.ends_with(".csv") {
            Ok(Format::Csv)
        } else {
            Err(ModelError::new(format!("cannot tell the format of {path:?}: use a .json, .jsonl or .csv extension")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{Segments, SuspensionBound, Task};
    use proptest::prelude::*;

    #[test]
    fn priorities_round_trip_and_errors() {
        let text = r#"{"m": 2, "tasks": [{"wcet": 1, "period": 4, "priority": 1},
                                          {"name": "b", "wcet": 2, "period": 8, "priority": 0},
                                          {"wcet": 2, "period": 8, "segments": [1, 3, 1], "priority": 1}]}"#;
        let f = read_json(text).unwrap();
        assert_eq!(f.taskset.priorities(), Some(&[1, 0, 1][..]), "duplicates allowed");
        // JSON and JSON Lines round trip, the value form too.
        let line = to_json(&f.taskset, f.m);
        assert!(line.contains(r#""priority":0"#), "{line}");
        assert_eq!(read_json(&line).unwrap(), f);
        assert_eq!(from_value(&to_value(&f.taskset, f.m)).unwrap(), f);
        assert_eq!(
            read_jsonl(&format!("{line}\n{line}\n")).map(|r| r.unwrap()).collect::<Vec<_>>(),
            vec![f.clone(); 2]
        );
        // A set without priorities writes none.
        assert!(!to_json(&f.taskset.clone().without_priorities(), None).contains("priority"));
        // CSV has no column for them: refused in one line.
        let e =
            to_csv(&TaskSet::from_ct(&[(1, 4)]).unwrap().with_priorities(vec![0]).unwrap()).unwrap_err().to_string();
        assert!(e.contains("field 'priority'") && e.contains("CSV has no priority column") && !e.contains('\n'), "{e}");
        // Errors name the task and the field.
        for (body, want) in [
            (r#"{"wcet": 1, "period": 4, "priority": -1}"#, "task 0: field 'priority': expected an integer rank"),
            (r#"{"wcet": 1, "period": 4, "priority": 1.5}"#, "task 0: field 'priority': expected an integer rank"),
            (r#"{"wcet": 1, "period": 4, "priority": "high"}"#, "task 0: field 'priority': expected an integer rank"),
            (
                r#"{"wcet": 1, "period": 4, "priority": 4294967296}"#,
                "task 0: field 'priority': expected an integer rank",
            ),
        ] {
            let e = read_json(&format!(r#"{{"tasks": [{body}]}}"#)).unwrap_err().to_string();
            assert!(e.starts_with(want) && !e.contains('\n'), "{e}");
        }
        let e =
            read_json(r#"{"tasks": [{"wcet": 1, "period": 4, "priority": 3}, {"name": "x", "wcet": 1, "period": 4}]}"#)
                .unwrap_err()
                .to_string();
        assert!(e.starts_with("task 1 (\"x\"): field 'priority': missing (task 0 has one") && !e.contains('\n'), "{e}");
        assert_eq!(
            read_json(r#"{"tasks": [{"wcet": 1, "period": 4, "priority": null}]}"#).unwrap().taskset.priorities(),
            None
        );
        // The set's own rules.
        let ts = TaskSet::from_ct(&[(1, 4), (1, 5)]).unwrap();
        assert!(ts.clone().with_priorities(vec![0]).unwrap_err().to_string().contains("1 priorities for 2 tasks"));
        let mut ranked = ts.with_priorities(vec![4, 2]).unwrap();
        let e = ranked.push(Task::implicit(1, 9).unwrap()).unwrap_err().to_string();
        assert!(e.starts_with("task 2: field 'priority'"), "{e}");
    }

    #[test]
    fn csv_round_trip_and_errors() {
        let ts = read_csv("wcet,period,deadline\n1ms,10ms,\n2,5,4\n").unwrap();
        assert_eq!(ts.len(), 2);
        assert_eq!(ts[0].deadline, 10_000_000);
        assert_eq!(read_csv(&to_csv(&ts).unwrap()).unwrap(), ts);
        let ts2 = read_csv("1,2\n3,4,4\n").unwrap();
        assert_eq!(ts2[1].wcet, 3);
        let e = read_csv("1,2\n3,x\n").unwrap_err();
        assert!(e.to_string().starts_with("line 2: task 1: field 'period'"), "{e}");
        assert!(read_csv("wcet,perod\n1,2\n").is_err());
        let named = TaskSet::new(vec![Task::implicit(1, 2).unwrap().named("a")]).unwrap();
        assert_eq!(read_csv(&to_csv(&named).unwrap()).unwrap(), named);
    }

    #[test]
    fn duplicate_keys_bom_and_m_bound() {
        let e = read_json(r#"{"tasks": [{"wcet": 1, "period": 2, "wcet": 3}]}"#).unwrap_err();
        assert!(e.to_string().starts_with("field 'wcet': duplicate key (in tasks[0]"), "{e}");
        let e = read_json(r#"{"m": 2, "tasks": [], "m": 2}"#).unwrap_err();
        assert!(e.to_string().starts_with("field 'm': duplicate key"), "{e}");
        let f = read_json("\u{feff}{\"tasks\": [{\"wcet\": 1, \"period\": 2}]}").unwrap();
        assert_eq!(f.taskset.len(), 1);
        let r: Vec<_> = read_jsonl("\u{feff}{\"tasks\": []}\n{\"m\": 1000000000, \"tasks\": []}\n").collect();
        assert!(r[0].is_ok());
        let e = r[1].as_ref().unwrap_err();
        assert!(e.to_string().starts_with("line 2: field 'm': the number of processors must be in 1..=16384"), "{e}");
        assert!(read_csv("\u{feff}wcet,period\n1,2\n").is_ok());
    }

    #[test]
    fn csv_quoting_and_empty_files() {
        let ts = read_csv("wcet,period,deadline,name\n1,2,2,\"a, \"\"b\"\"\nc\"\n3,4,,\"\"\n5,6,6,\n").unwrap();
        assert_eq!(ts[0].name.as_deref(), Some("a, \"b\"\nc"));
        assert_eq!(ts[1].name.as_deref(), Some(""));
        assert_eq!(ts[2].name, None);
        assert_eq!(read_csv(&to_csv(&ts).unwrap()).unwrap(), ts);
        for empty in ["", "\n\n", "# only a comment\n", "wcet,period,deadline\n"] {
            let e = read_csv(empty).unwrap_err();
            assert!(e.to_string().contains("no task rows"), "{empty:?}: {e}");
        }
        let e = read_csv("wcet,period,name\n1,2,\"open\n").unwrap_err();
        assert!(e.to_string().contains("never closed"), "{e}");
        let e = read_csv("wcet,period,name\n1,2,\"a\"b\n").unwrap_err();
        assert!(e.to_string().starts_with("line 2: unexpected text after a closing quote"), "{e}");
        let e = read_csv("wcet,period,period\n1,2,3\n").unwrap_err();
        assert!(e.to_string().contains("named twice"), "{e}");
    }

    fn name_strategy() -> impl Strategy<Value = Option<String>> {
        prop_oneof![
            Just(None),
            "[ -~]{0,6}".prop_map(Some),
            proptest::collection::vec(
                prop_oneof![
                    Just(','),
                    Just('"'),
                    Just('\n'),
                    Just('\r'),
                    Just(' '),
                    Just('#'),
                    Just('é'),
                    Just('\u{feff}'),
                    Just('a')
                ],
                0..6
            )
            .prop_map(|v| Some(v.into_iter().collect())),
        ]
    }

    fn taskset_strategy() -> impl Strategy<Value = TaskSet> {
        proptest::collection::vec(
            (1u64..=crate::MAX_TIME, 1u64..=crate::MAX_TIME, 1u64..=crate::MAX_TIME, name_strategy()),
            1..6,
        )
        .prop_map(|v| {
            TaskSet::new(
                v.into_iter()
                    .map(|(c, d, t, name)| Task { name, wcet: c, deadline: d, period: t, segments: None })
                    .collect(),
            )
            .unwrap()
        })
    }

    /// Task sets whose tasks have 1..4 execution segments, with and without lower bounds.
    fn suspending_strategy() -> impl Strategy<Value = TaskSet> {
        let seg = (1u64..1_000_000, 1u64..1_000_000, 0u64..3);
        let task = (proptest::collection::vec(seg, 0..4), 1u64..1_000_000, 1u64..10_000_000, name_strategy());
        proptest::collection::vec(task, 1..5).prop_map(|v| {
            let tasks = v
                .into_iter()
                .map(|(segs, c0, t, name)| {
                    let mut exec = vec![c0];
                    let mut susp = Vec::new();
                    for (c, s, lo) in segs {
                        susp.push(SuspensionBound { min: s * lo / 3, max: s });
                        exec.push(c);
                    }
                    let wcet = exec.iter().sum();
                    let task = Task { name, wcet, deadline: t, period: t, segments: None };
                    task.with_segments(Segments::new(exec, susp).unwrap()).unwrap()
                })
                .collect();
            TaskSet::new(tasks).unwrap()
        })
    }

    #[test]
    fn reads_segments_and_names_bad_ones() {
        let f = read_json(
            r#"{"tasks": [{"name": "s", "wcet": "3ms", "period": "20ms",
                           "segments": ["1ms", "2ms", "1.5ms", {"min": "1ms", "max": 4000000}, 500000]},
                          {"wcet": 2, "period": 9, "segments": [2]},
                          {"wcet": 2, "period": 9, "segments": null}]}"#,
        )
        .unwrap();
        let t = &f.taskset[0];
        let s = t.segments.as_ref().unwrap();
        assert_eq!(s.exec, vec![1_000_000, 1_500_000, 500_000]);
        assert_eq!(
            s.susp,
            vec![SuspensionBound { min: 0, max: 2_000_000 }, SuspensionBound { min: 1_000_000, max: 4_000_000 }]
        );
        assert_eq!(t.suspension(), 6_000_000);
        assert!(!f.taskset[1].is_self_suspending() && f.taskset[1].segments.is_none());
        assert!(f.taskset[2].segments.is_none());
        let text = to_json(&f.taskset, None);
        assert!(
            text.contains(r#""segments":[1000000,2000000,1500000,{"min":1000000,"max":4000000},500000]"#),
            "{text}"
        );
        assert_eq!(read_json(&text).unwrap().taskset, f.taskset);
        let cases = [
            (r#"[1, 2]"#, "odd length"),
            (r#"[1, 2, 2]"#, "sum to 3 ns, but wcet is 2 ns"),
            (r#"[1, 0, 1]"#, "entry 1 (suspension): the upper bound must be at least 1 ns"),
            (r#"[0, 1, 2]"#, "entry 0 (execution): must be at least 1 ns"),
            (r#"[1, {"max": 2, "min": 3}, 1]"#, "lower bound 3 ns exceeds the upper bound 2 ns"),
            (r#"[1, {"min": 1}, 1]"#, "entry 1 (suspension): 'max' is missing"),
            (r#"[1, {"max": 2, "mn": 1}, 1]"#, "unknown key \"mn\""),
            (r#"[1, "x", 1]"#, "entry 1 (suspension): "),
            (r#"[1, -2, 1]"#, "entry 1 (suspension): expected a non-negative integer"),
            (r#""1ms""#, "expected a list"),
            (r#"[]"#, "at least one execution segment"),
        ];
        for (seg, want) in cases {
            let doc = format!(
                r#"{{"tasks": [{{"wcet": 1, "period": 9}}, {{"name": "b", "wcet": 2, "period": 9, "segments": {seg}}}]}}"#
            );
            let e = read_json(&doc).unwrap_err().to_string();
            assert!(e.starts_with("task 1 (\"b\"): field 'segments': ") && e.contains(want), "{seg}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = read_jsonl("{\"tasks\": [{\"wcet\": 1, \"period\": 9, \"segments\": [1, 1]}]}\n")
            .next()
            .unwrap()
            .unwrap_err();
        assert!(e.to_string().starts_with("line 1: task 0: field 'segments': "), "{e}");
        let e = to_csv(&f.taskset).unwrap_err().to_string();
        assert!(e.starts_with("task 0 (\"s\"): field 'segments': CSV has no column"), "{e}");
    }

    proptest! {
        /// load(save(x)) == x for every task set, in both formats.
        #[test]
        fn csv_and_json_round_trip(ts in taskset_strategy(), m in proptest::option::of(1u32..=crate::MAX_M)) {
            prop_assert_eq!(read_csv(&to_csv(&ts).unwrap()).unwrap(), ts.clone());
            let f = read_json(&to_json(&ts, m)).unwrap();
            prop_assert_eq!(f, TaskSetFile { m, taskset: ts });
        }

        /// load(save(x)) == x for self-suspending task sets (JSON; the value writer and the
        /// streaming writer agree), and CSV refuses them naming the task and the field.
        #[test]
        fn segments_round_trip(ts in suspending_strategy(), m in proptest::option::of(1u32..=8)) {
            let text = to_json(&ts, m);
            prop_assert_eq!(&text, &to_value(&ts, m).to_string());
            let f = read_json(&text).unwrap();
            prop_assert_eq!(f, TaskSetFile { m, taskset: ts.clone() });
            if let Some(i) = ts.iter().position(Task::is_self_suspending) {
                let e = to_csv(&ts).unwrap_err();
                prop_assert_eq!(e.task, Some(i));
                prop_assert_eq!(e.field.as_deref(), Some("segments"));
            }
        }
    }

    #[test]
    fn json_round_trip() {
        let ts = TaskSet::from_cdt(&[(1, 2, 3), (4, 5, 6)]).unwrap();
        let f = read_json(&to_json(&ts, Some(3))).unwrap();
        assert_eq!(f.taskset, ts);
        assert_eq!(f.m, Some(3));
    }
}
