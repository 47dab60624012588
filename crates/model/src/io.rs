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

mod csv;
mod fast;

pub use csv::{read_csv, to_csv};

use crate::task::{Segments, SuspensionBound, Task};
use crate::taskset::TaskSet;
use crate::time::{parse_duration, Time};
use crate::ModelError;
use serde_json::{Map, Value};

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

/// The JSON value of a task's segments list (a suspension with lower bound 0 as its upper
/// bound alone, otherwise `{"min": .., "max": ..}`).
fn segments_value(s: &Segments) -> Value {
    let mut out = Vec::with_capacity(2 * s.exec.len());
    for (j, &c) in s.exec.iter().enumerate() {
        if j > 0 {
            let b = s.susp[j - 1];
            if b.min == 0 {
                out.push(b.max.into());
            } else {
                let mut o = Map::new();
                o.insert("min".into(), b.min.into());
                o.insert("max".into(), b.max.into());
                out.push(Value::Object(o));
            }
        }
        out.push(c.into());
    }
    Value::Array(out)
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

/// The JSON value of a task set (times as integer ns).
pub fn to_value(ts: &TaskSet, m: Option<u32>) -> Value {
    let tasks: Vec<Value> = ts
        .iter()
        .map(|t| {
            let mut o = Map::new();
            if let Some(n) = &t.name {
                o.insert("name".into(), Value::String(n.clone()));
            }
            o.insert("wcet".into(), t.wcet.into());
            o.insert("period".into(), t.period.into());
            o.insert("deadline".into(), t.deadline.into());
            if let Some(seg) = &t.segments {
                o.insert("segments".into(), segments_value(seg));
            }
            Value::Object(o)
        })
        .collect();
    let mut tasks = tasks;
    if let Some(p) = ts.priorities() {
        for (o, &rank) in tasks.iter_mut().zip(p) {
            if let Value::Object(o) = o {
                o.insert("priority".into(), rank.into());
            }
        }
    }
    let mut o = Map::new();
    if let Some(m) = m {
        o.insert("m".into(), m.into());
    }
    o.insert("tasks".into(), Value::Array(tasks));
    Value::Object(o)
}

/// One-line JSON of a task set (a JSON Lines record).
pub fn to_json(ts: &TaskSet, m: Option<u32>) -> String {
    let mut s = String::with_capacity(16 + 56 * ts.len());
    write_json(&mut s, ts, m);
    s
}

/// Appends the one-line JSON of a task set, as [`to_value`] would print it, without building
/// the value (the streaming writers of `rtsched generate --count` write millions).
pub fn write_json(out: &mut String, ts: &TaskSet, m: Option<u32>) {
    use std::fmt::Write as _;
    out.push('{');
    if let Some(m) = m {
        let _ = write!(out, "\"m\":{m},");
    }
    out.push_str("\"tasks\":[");
    for (i, t) in ts.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        if let Some(n) = &t.name {
            out.push_str("\"name\":");
            out.push_str(&Value::String(n.clone()).to_string());
            out.push(',');
        }
        let _ = write!(out, "\"wcet\":{},\"period\":{},\"deadline\":{}", t.wcet, t.period, t.deadline);
        if let Some(seg) = &t.segments {
            out.push_str(",\"segments\":");
            out.push_str(&segments_value(seg).to_string());
        }
        if let Some(p) = ts.priorities() {
            let _ = write!(out, ",\"priority\":{}", p[i]);
        }
        out.push('}');
    }
    out.push_str("]}");
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

    #[test]
    fn the_writer_prints_what_serde_prints() {
        let ts =
            TaskSet::new(vec![Task::new(1, 2, 3).unwrap().named("a \"b\"\n\u{1}é"), Task::implicit(4, 5).unwrap()])
                .unwrap();
        for m in [None, Some(7)] {
            assert_eq!(to_json(&ts, m), to_value(&ts, m).to_string());
        }
        assert_eq!(to_json(&TaskSet::default(), None), r#"{"tasks":[]}"#);
    }

    #[test]
    fn json_round_trip() {
        let ts = TaskSet::from_cdt(&[(1, 2, 3), (4, 5, 6)]).unwrap();
        let f = read_json(&to_json(&ts, Some(3))).unwrap();
        assert_eq!(f.taskset, ts);
        assert_eq!(f.m, Some(3));
    }
}
