//! The JSON and JSON Lines task-set reader (`docs/formats.md`): the strict reference reader
//! ([`read_json_reference`]: a value first, then [`from_value`], every error worded), the
//! fast path in front of it (`io/fast.rs`, which defers to it on anything unusual), and
//! the rule for a duration written as a string ([`parse_duration_text`]).

use super::{fast, TaskSetFile};
use crate::task::{Segments, SuspensionBound, Task};
use crate::taskset::TaskSet;
use crate::time::{parse_duration, Time};
use crate::ModelError;
use serde_json::{Map, Value};

/// `text` quoted for a message, cut to 40 characters (a 300-digit number is not echoed whole).
fn shown(text: &str) -> String {
    if text.chars().count() <= 40 {
        format!("{text:?}")
    } else {
        format!("{:?}...", text.chars().take(37).collect::<String>())
    }
}

/// A duration written as a string in a file or given from Python: the command line's rule
/// (docs/formats.md): a string needs a unit (`"2ms"`, `"250us"`), so `"10"` is an error that
/// says to write the integer `10` for nanoseconds; `"0"` needs none. A negative one is called
/// negative, and a long text is shown cut. Integers stay nanoseconds; CSV cells, which have no
/// types, keep [`parse_duration`].
pub fn parse_duration_text(text: &str) -> Result<Time, ModelError> {
    let s = text.trim();
    if s.starts_with('-') {
        return Err(ModelError::new(format!("cannot read duration {}: a duration cannot be negative", shown(s))));
    }
    let bare = !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || c == '.');
    if bare && s.chars().any(|c| c.is_ascii_digit() && c != '0') {
        let hint = if s.len() <= 20 && s.chars().all(|c| c.is_ascii_digit()) {
            format!(
                ": write the integer {s} for nanoseconds, or add a unit (\"{s}ns\", \"{s}us\", \"{s}ms\", \"{s}s\")"
            )
        } else {
            ": add a unit (ns, us, ms, s), or write integer nanoseconds as a number".to_string()
        };
        return Err(ModelError::new(format!("duration {} has no unit{hint}", shown(s))));
    }
    parse_duration(text).map_err(|e| {
        if text.chars().count() > 40 {
            ModelError::new(e.reason.replace(&format!("{text:?}"), &shown(text)))
        } else {
            e
        }
    })
}

fn time_field(v: &Value, field: &str) -> Result<Time, ModelError> {
    match v {
        Value::Number(n) => n.as_u64().ok_or_else(|| {
            ModelError::field(
                field,
                format!("expected a non-negative integer number of ns or a duration string like \"2ms\", got {n}"),
            )
        }),
        Value::String(s) => parse_duration_text(s).map_err(|e| ModelError::field(field, e.reason)),
        other => {
            Err(ModelError::field(field, format!("expected integer ns or a duration string like \"2ms\", got {other}")))
        }
    }
}

/// One task and its `priority` field, if it has one.
fn parse_task(index: usize, v: &Value) -> Result<(Task, Option<u32>), ModelError> {
    let obj = v.as_object().ok_or_else(|| {
        ModelError::new(format!("expected a task object {{\"wcet\": .., \"period\": ..}}, got {v}"))
            .in_task(index, None)
    })?;
    let name = match obj.get("name") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => return Err(ModelError::task_field(index, "name", format!("expected a string, got {other}"))),
    };
    let wrap = |e: ModelError| e.in_task(index, name.as_deref());
    for key in obj.keys() {
        if !matches!(key.as_str(), "name" | "wcet" | "period" | "deadline" | "segments" | "priority") {
            return Err(wrap(ModelError::field(
                key,
                "unknown key (a task has name, wcet, period, deadline, segments, priority)",
            )));
        }
    }
    let need = |field: &str| -> Result<Time, ModelError> {
        let v = obj.get(field).ok_or_else(|| wrap(ModelError::field(field, "missing")))?;
        time_field(v, field).map_err(wrap)
    };
    let wcet = need("wcet")?;
    let period = need("period")?;
    let deadline = match obj.get("deadline") {
        None | Some(Value::Null) => period,
        Some(v) => time_field(v, "deadline").map_err(wrap)?,
    };
    let priority = match obj.get("priority") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_u64().and_then(|p| u32::try_from(p).ok()).ok_or_else(|| {
            wrap(ModelError::field(
                "priority",
                format!("expected an integer rank in 0..={} (smaller = higher priority), got {v}", u32::MAX),
            ))
        })?),
    };
    let task = Task { name: name.clone(), wcet, deadline, period, segments: None };
    task.validate().map_err(wrap)?;
    let task = match obj.get("segments") {
        None | Some(Value::Null) => task,
        Some(v) => task.with_segments(parse_segments(v).map_err(wrap)?).map_err(wrap)?,
    };
    Ok((task, priority))
}

/// `"segments": [C_1, S_1, C_2, ..., C_k]`: execution times at even entries, suspensions at
/// odd ones, each a time (its upper bound; the lower bound is 0) or `{"max": t, "min": t}`.
/// Errors name the field `segments` and the entry.
fn parse_segments(v: &Value) -> Result<Segments, ModelError> {
    let bad = |reason: String| ModelError::field("segments", reason);
    let list = v.as_array().ok_or_else(|| {
        bad(format!("expected a list [execution, suspension, execution, ...] of times, got {}", short(v)))
    })?;
    if list.len() > 2 * crate::task::MAX_SEGMENTS - 1 {
        return Err(bad(format!(
            "{} entries exceed the bound of {} execution segments",
            list.len(),
            crate::task::MAX_SEGMENTS
        )));
    }
    let entry_time = |j: usize, v: &Value, what: &str| -> Result<Time, ModelError> {
        time_field(v, "segments").map_err(|e| bad(format!("entry {j} ({what}): {}", e.reason)))
    };
    let (mut exec, mut susp) = (Vec::new(), Vec::new());
    for (j, e) in list.iter().enumerate() {
        if j % 2 == 0 {
            exec.push(entry_time(j, e, "execution")?);
            continue;
        }
        let bound = match e {
            Value::Object(o) => {
                for key in o.keys() {
                    if !matches!(key.as_str(), "min" | "max") {
                        return Err(bad(format!(
                            "entry {j} (suspension): unknown key {key:?} (a suspension has min, max)"
                        )));
                    }
                }
                let max = o.get("max").ok_or_else(|| bad(format!("entry {j} (suspension): 'max' is missing")))?;
                let max = entry_time(j, max, "suspension max")?;
                let min = match o.get("min") {
                    None | Some(Value::Null) => 0,
                    Some(m) => entry_time(j, m, "suspension min")?,
                };
                SuspensionBound { min, max }
            }
            other => SuspensionBound { min: 0, max: entry_time(j, other, "suspension")? },
        };
        susp.push(bound);
    }
    Segments::new(exec, susp)
}

fn parse_m(v: &Value) -> Result<u32, ModelError> {
    let m = v.as_u64().ok_or_else(|| ModelError::field("m", format!("expected a positive integer, got {v}")))?;
    crate::taskset::check_m(m)
}

/// Reads one task-set object from a parsed JSON value.
pub fn from_value(v: &Value) -> Result<TaskSetFile, ModelError> {
    let obj: &Map<String, Value> = v.as_object().ok_or_else(|| {
        ModelError::new(format!("expected a task-set object {{\"m\": .., \"tasks\": [..]}}, got {}", short(v)))
    })?;
    for key in obj.keys() {
        if !matches!(key.as_str(), "m" | "tasks") {
            return Err(ModelError::field(key, "unknown key (a task set has m, tasks)"));
        }
    }
    let m = match obj.get("m") {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_m(v)?),
    };
    let tasks = obj
        .get("tasks")
        .ok_or_else(|| ModelError::field("tasks", "missing"))?
        .as_array()
        .ok_or_else(|| ModelError::field("tasks", "expected a list of task objects"))?;
    let parsed = tasks.iter().enumerate().map(|(i, t)| parse_task(i, t)).collect::<Result<Vec<_>, _>>()?;
    // Priorities: every task or none (a set half-ranked has no meaning to guess).
    let ranked = parsed.iter().position(|(_, p)| p.is_some());
    if let Some(first) = ranked {
        if let Some(i) = parsed.iter().position(|(_, p)| p.is_none()) {
            return Err(ModelError::field(
                "priority",
                format!("missing (task {first} has one: give every task a priority or none)"),
            )
            .in_task(i, parsed[i].0.name.as_deref()));
        }
    }
    let ranks: Option<Vec<u32>> = ranked.map(|_| parsed.iter().map(|(_, p)| p.unwrap_or(0)).collect());
    let taskset = TaskSet::new(parsed.into_iter().map(|(t, _)| t).collect())?;
    let taskset = match ranks {
        Some(r) => taskset.with_priorities(r)?,
        None => taskset,
    };
    Ok(TaskSetFile { m, taskset })
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 60 {
        format!("{}...", &s[..s.char_indices().nth(57).map_or(s.len(), |(i, _)| i)])
    } else {
        s
    }
}

/// Reads a JSON task-set file (one object; a leading byte-order mark is skipped).
pub fn read_json(text: &str) -> Result<TaskSetFile, ModelError> {
    let text = crate::json::strip_bom(text);
    match fast::read(text) {
        Some(f) => Ok(f),
        None => read_json_reference(text),
    }
}

/// The reference reader: strict JSON to a value, then [`from_value`]. [`read_json`] gives the
/// same answer faster; this one words every error.
pub fn read_json_reference(text: &str) -> Result<TaskSetFile, ModelError> {
    from_value(&crate::json::parse(text)?)
}

/// Reads one line of a JSON Lines file (`None` for a blank or `#` comment line); errors carry
/// the 1-based `line_no`. Line 1 may start with a byte-order mark.
pub fn read_jsonl_line(line: &str, line_no: usize) -> Option<Result<TaskSetFile, ModelError>> {
    let line = if line_no == 1 { crate::json::strip_bom(line) } else { line };
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let parsed = match fast::read(line) {
        Some(f) => Ok(f),
        None => read_json_reference(line).map_err(|mut e| {
            // One line holds one object: its column is the useful part.
            e.reason = e.reason.replace("at line 1, column", "at column");
            e
        }),
    };
    Some(parsed.map_err(|e| e.at_line(line_no)))
}

/// Reads a JSON Lines file: one result per non-blank, non-comment line, each error carrying
/// its 1-based line number. Yields lazily so that huge batches stream.
pub fn read_jsonl(text: &str) -> impl Iterator<Item = Result<TaskSetFile, ModelError>> + '_ {
    text.lines().enumerate().filter_map(|(i, line)| read_jsonl_line(line, i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn duration_strings_need_a_unit_as_on_the_command_line() {
        assert_eq!(parse_duration_text("2ms").unwrap(), 2_000_000);
        assert_eq!(parse_duration_text("0").unwrap(), 0);
        assert_eq!(parse_duration_text(" 250 us ").unwrap(), 250_000);
        let e = parse_duration_text("10").unwrap_err().reason;
        assert!(e.contains("has no unit") && e.contains("integer 10 for nanoseconds"), "{e}");
        let e = parse_duration_text("-1ms").unwrap_err().reason;
        assert!(e.contains("cannot be negative") && !e.contains("unknown unit"), "{e}");
        let long = format!("{}ms", "9".repeat(300));
        let e = parse_duration_text(&long).unwrap_err().reason;
        assert!(e.len() < 200 && e.contains("64-bit"), "{e}");
        let e = read_json(r#"{"tasks": [{"wcet": "10", "period": "1ms"}]}"#).unwrap_err().to_string();
        assert!(e.contains("wcet") && e.contains("has no unit"), "{e}");
        assert_eq!(read_json(r#"{"tasks": [{"wcet": 10, "period": "1ms"}]}"#).unwrap().taskset.len(), 1);
    }

    #[test]
    fn reads_json_with_units_and_defaults() {
        let f = read_json(
            r#"{"m": 2, "tasks": [{"name": "a", "wcet": "1ms", "period": "10ms"},
                                                {"wcet": 500, "period": 2000, "deadline": "1.5us"}]}"#,
        )
        .unwrap();
        assert_eq!(f.m, Some(2));
        assert_eq!(f.taskset[0].deadline, 10_000_000);
        assert_eq!(f.taskset[0].name.as_deref(), Some("a"));
        assert_eq!(f.taskset[1].deadline, 1500);
    }

    #[test]
    fn rejects_unknown_keys_and_bad_fields() {
        let e = read_json(r#"{"tasks": [{"wcet": 1, "period": 2, "dedline": 2}]}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "task 0: field 'dedline': unknown key (a task has name, wcet, period, deadline, segments, priority)"
        );
        let e =
            read_json(r#"{"tasks": [{"wcet": 1, "period": 2}, {"name": "x", "wcet": -1, "period": 2}]}"#).unwrap_err();
        assert!(e.to_string().starts_with("task 1 (\"x\"): field 'wcet'"), "{e}");
        let e = read_json(r#"{"tasks": [{"wcet": 1.5, "period": 2}]}"#).unwrap_err();
        assert!(e.to_string().contains("'wcet'"), "{e}");
        let e = read_json(r#"{"m": 0, "tasks": []}"#).unwrap_err();
        assert!(e.to_string().contains("'m'"), "{e}");
        let e = read_json(r#"{"tasks": [{"period": 2}]}"#).unwrap_err();
        assert_eq!(e.to_string(), "task 0: field 'wcet': missing");
        let e = read_json(r#"{"m": 2, "task": []}"#).unwrap_err();
        assert!(e.to_string().contains("'task'"), "{e}");
        let e = read_json("{\"tasks\": [").unwrap_err();
        assert!(e.to_string().contains("invalid JSON"), "{e}");
    }

    #[test]
    fn jsonl_reports_lines() {
        let text =
            "{\"tasks\": [{\"wcet\": 1, \"period\": 2}]}\n\n# comment\n{\"tasks\": [{\"wcet\": 0, \"period\": 2}]}\n";
        let r: Vec<_> = read_jsonl(text).collect();
        assert_eq!(r.len(), 2);
        assert!(r[0].is_ok());
        let e = r[1].as_ref().unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(e.to_string().starts_with("line 4: task 0: field 'wcet'"), "{e}");
    }

    #[test]
    fn fast_reader_takes_the_common_documents() {
        for doc in [
            r#"{"m": 4, "tasks": [{"name": "a \"q\"", "wcet": "2ms", "period": 10000000, "deadline": null}]}"#,
            r#"{"tasks": [{"wcet": 1, "period": 2, "deadline": "1ns"}], "m": null}"#,
            r#"{"tasks": []}"#,
        ] {
            let f = fast::read(doc).expect("the fast path reads it");
            assert_eq!(Ok(f), read_json_reference(doc));
        }
        for doc in [r#"{"tasks": [{"wcet": 1, "period": 2, "wcet": 1}]}"#, r#"{"tasks": [], "x": 1}"#, "[]"] {
            assert!(fast::read(doc).is_none(), "{doc}");
        }
    }

    proptest! {
        /// The fast reader and the reference reader agree on every input: the same task set,
        /// or the fast reader defers and the reference reader decides.
        #[test]
        fn fast_reader_agrees_with_reference(doc in json_doc()) {
            let reference = read_json_reference(&doc);
            if let Some(f) = fast::read(&doc) {
                prop_assert_eq!(Ok(f), reference, "{}", doc);
            }
        }
    }

    /// Task-set-like JSON documents with mistakes mixed in (wrong types, unknown and repeated
    /// keys, bad times, big numbers).
    fn json_doc() -> impl Strategy<Value = String> {
        let time = prop_oneof![
            (0u64..20).prop_map(|v| v.to_string()),
            Just("9007199254740993".to_string()),
            Just("18446744073709551616".to_string()),
            Just("-1".to_string()),
            Just("1.5".to_string()),
            Just("\"2ms\"".to_string()),
            Just("\"0.5ns\"".to_string()),
            Just("\"10\"".to_string()),
            Just("\"0\"".to_string()),
            Just("\"-1ms\"".to_string()),
            Just("null".to_string()),
            Just("true".to_string()),
            Just("[1]".to_string()),
        ];
        let key = prop_oneof![Just("wcet"), Just("period"), Just("deadline"), Just("name"), Just("dedline")];
        let field = (key, time, "[a-z]{0,3}").prop_map(|(k, v, n)| {
            if k == "name" {
                format!("\"name\": \"{n}\"")
            } else {
                format!("\"{k}\": {v}")
            }
        });
        let task = proptest::collection::vec(field, 0..5).prop_map(|f| format!("{{{}}}", f.join(", ")));
        let tasks = proptest::collection::vec(task, 0..4).prop_map(|t| format!("[{}]", t.join(", ")));
        let m = prop_oneof![
            Just(String::new()),
            (0u64..5).prop_map(|m| format!("\"m\": {m}, ")),
            Just("\"m\": 99999, ".to_string()),
            Just("\"m\": null, ".to_string())
        ];
        (m, tasks, 0u8..4).prop_map(|(m, t, extra)| match extra {
            0 => format!("{{{m}\"tasks\": {t}, \"tasks\": []}}"),
            1 => format!("{{{m}\"tasks\": {t}}} x"),
            _ => format!("{{{m}\"tasks\": {t}}}"),
        })
    }
}
