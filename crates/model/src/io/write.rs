//! The JSON task-set writer (`docs/formats.md`): [`to_value`] builds the value, [`write_json`]
//! prints the same one-line JSON without building it (the streaming writers of `rtsched
//! generate --count` write millions), and they agree (tested).

use crate::task::Segments;
use crate::taskset::TaskSet;
use serde_json::{Map, Value};

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
    use crate::Task;

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
}
