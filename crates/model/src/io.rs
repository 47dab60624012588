//! The task-set file formats (specified in `docs/formats.md`).
//!
//! * JSON: `{"m": 4, "tasks": [{"name": "a", "wcet": 1000000, "period": "10ms", "deadline": "8ms"}]}`;
//!   `m`, `name` and `deadline` (defaults to `period`) are optional; times are integer ns or
//!   duration strings. Unknown keys are errors (a misspelled `dedline` must not be ignored).
//! * JSON Lines: one such object per line; blank lines and lines starting with `#` are skipped
//!   (line numbers in errors still count them).
//! * CSV: `wcet,period,deadline` per row, optional header row, optional `deadline` column,
//!   optional trailing `name` column, `#` comments.

use crate::task::Task;
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

fn time_field(v: &Value, field: &str) -> Result<Time, ModelError> {
    match v {
        Value::Number(n) => n.as_u64().ok_or_else(|| {
            ModelError::field(
                field,
                format!("expected a non-negative integer number of ns or a duration string like \"2ms\", got {n}"),
            )
        }),
        Value::String(s) => parse_duration(s).map_err(|e| ModelError::field(field, e.reason)),
        other => {
            Err(ModelError::field(field, format!("expected integer ns or a duration string like \"2ms\", got {other}")))
        }
    }
}

fn parse_task(index: usize, v: &Value) -> Result<Task, ModelError> {
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
        if !matches!(key.as_str(), "name" | "wcet" | "period" | "deadline") {
            return Err(wrap(ModelError::field(key, "unknown key (a task has name, wcet, period, deadline)")));
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
    let task = Task { name: name.clone(), wcet, deadline, period };
    task.validate().map_err(wrap)?;
    Ok(task)
}

fn parse_m(v: &Value) -> Result<u32, ModelError> {
    let m = v.as_u64().ok_or_else(|| ModelError::field("m", format!("expected a positive integer, got {v}")))?;
    if m == 0 || m > u32::MAX as u64 {
        return Err(ModelError::field("m", format!("the number of processors must be in 1..=2^32-1, got {m}")));
    }
    Ok(m as u32)
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
    let tasks = tasks.iter().enumerate().map(|(i, t)| parse_task(i, t)).collect::<Result<Vec<_>, _>>()?;
    Ok(TaskSetFile { m, taskset: TaskSet::new(tasks)? })
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 60 {
        format!("{}...", &s[..s.char_indices().nth(57).map_or(s.len(), |(i, _)| i)])
    } else {
        s
    }
}

fn json_syntax(e: serde_json::Error) -> ModelError {
    ModelError::new(format!("invalid JSON at column {}: {e}", e.column())).at_line(e.line())
}

/// Reads a JSON task-set file.
pub fn read_json(text: &str) -> Result<TaskSetFile, ModelError> {
    let v: Value = serde_json::from_str(text).map_err(json_syntax)?;
    from_value(&v)
}

/// Reads a JSON Lines file: one result per non-blank, non-comment line, each error carrying
/// its 1-based line number. Yields lazily so that huge batches stream.
pub fn read_jsonl(text: &str) -> impl Iterator<Item = Result<TaskSetFile, ModelError>> + '_ {
    text.lines().enumerate().filter_map(|(i, line)| {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        let parsed = serde_json::from_str::<Value>(line)
            .map_err(|e| ModelError::new(format!("invalid JSON at column {}: {e}", e.column())))
            .and_then(|v| from_value(&v));
        Some(parsed.map_err(|e| e.at_line(i + 1)))
    })
}

/// Reads a CSV task set (see the module doc).
pub fn read_csv(text: &str) -> Result<TaskSet, ModelError> {
    let mut columns: Vec<String> = vec!["wcet".into(), "period".into(), "deadline".into(), "name".into()];
    let mut tasks = Vec::new();
    let mut seen_row = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if !seen_row && cells.first().is_some_and(|c| c.chars().next().is_some_and(|ch| ch.is_ascii_alphabetic())) {
            // A header row: it may reorder the columns.
            columns = cells.iter().map(|c| c.to_ascii_lowercase()).collect();
            for c in &columns {
                if !matches!(c.as_str(), "wcet" | "period" | "deadline" | "name") {
                    return Err(ModelError::field(c.clone(), "unknown CSV column (use wcet, period, deadline, name)")
                        .at_line(i + 1));
                }
            }
            for need in ["wcet", "period"] {
                if !columns.iter().any(|c| c == need) {
                    return Err(ModelError::field(need, "the CSV header lacks this column").at_line(i + 1));
                }
            }
            seen_row = true;
            continue;
        }
        seen_row = true;
        let index = tasks.len();
        if cells.len() > columns.len() || cells.len() < 2 {
            return Err(ModelError::new(format!(
                "expected {} comma-separated values ({}), got {}",
                columns.len(),
                columns.join(","),
                cells.len()
            ))
            .in_task(index, None)
            .at_line(i + 1));
        }
        let mut task = Task { name: None, wcet: 0, deadline: 0, period: 0 };
        let mut deadline = None;
        for (col, cell) in columns.iter().zip(&cells) {
            let err = |e: ModelError| ModelError::field(col.clone(), e.reason).in_task(index, None).at_line(i + 1);
            match col.as_str() {
                "name" => task.name = (!cell.is_empty()).then(|| cell.to_string()),
                "deadline" if cell.is_empty() => {}
                field => {
                    let v = parse_duration(cell).map_err(err)?;
                    match field {
                        "wcet" => task.wcet = v,
                        "period" => task.period = v,
                        _ => deadline = Some(v),
                    }
                }
            }
        }
        task.deadline = deadline.unwrap_or(task.period);
        task.validate().map_err(|e| e.in_task(index, task.name.as_deref()).at_line(i + 1))?;
        tasks.push(task);
    }
    TaskSet::new(tasks)
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
            Value::Object(o)
        })
        .collect();
    let mut o = Map::new();
    if let Some(m) = m {
        o.insert("m".into(), m.into());
    }
    o.insert("tasks".into(), Value::Array(tasks));
    Value::Object(o)
}

/// One-line JSON of a task set (a JSON Lines record).
pub fn to_json(ts: &TaskSet, m: Option<u32>) -> String {
    to_value(ts, m).to_string()
}

/// CSV with a `wcet,period,deadline[,name]` header.
pub fn to_csv(ts: &TaskSet) -> String {
    let named = ts.iter().any(|t| t.name.is_some());
    let mut s = String::from(if named { "wcet,period,deadline,name\n" } else { "wcet,period,deadline\n" });
    for t in ts {
        s.push_str(&format!("{},{},{}", t.wcet, t.period, t.deadline));
        if named {
            s.push(',');
            s.push_str(t.name.as_deref().unwrap_or(""));
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(e.to_string(), "task 0: field 'dedline': unknown key (a task has name, wcet, period, deadline)");
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
        assert_eq!(read_csv(&to_csv(&ts)).unwrap(), ts);
        let ts2 = read_csv("1,2\n3,4,4\n").unwrap();
        assert_eq!(ts2[1].wcet, 3);
        let e = read_csv("1,2\n3,x\n").unwrap_err();
        assert!(e.to_string().starts_with("line 2: task 1: field 'period'"), "{e}");
        assert!(read_csv("wcet,perod\n1,2\n").is_err());
        let named = TaskSet::new(vec![Task::implicit(1, 2).unwrap().named("a")]).unwrap();
        assert_eq!(read_csv(&to_csv(&named)).unwrap(), named);
    }

    #[test]
    fn json_round_trip() {
        let ts = TaskSet::from_cdt(&[(1, 2, 3), (4, 5, 6)]).unwrap();
        let f = read_json(&to_json(&ts, Some(3))).unwrap();
        assert_eq!(f.taskset, ts);
        assert_eq!(f.m, Some(3));
    }
}
