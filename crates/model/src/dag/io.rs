//! The DAG set's files: the strict JSON reader and writer (format: `docs/formats.md`) and
//! the DOT export for drawing.

use super::*;

/// A DAG set as read from a file: the tasks and, if the file says it, `m`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DagFile {
    pub m: Option<u32>,
    pub set: DagSet,
}

fn index_value(v: &Value, field: &str) -> Result<u32, ModelError> {
    v.as_u64()
        .filter(|&x| x <= u32::MAX as u64)
        .map(|x| x as u32)
        .ok_or_else(|| ModelError::field(field, format!("expected a node index (a non-negative integer), got {v}")))
}

fn parse_task(index: usize, v: &Value) -> Result<DagTask, ModelError> {
    let obj = v.as_object().ok_or_else(|| {
        ModelError::new(format!(
            "expected a DAG task object {{\"period\": .., \"nodes\": [..], \"edges\": [[..]]}}, got {v}"
        ))
        .in_task(index, None)
    })?;
    let name = match obj.get("name") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => return Err(ModelError::task_field(index, "name", format!("expected a string, got {other}"))),
    };
    let wrap = |e: ModelError| e.in_task(index, name.as_deref());
    for key in obj.keys() {
        if !matches!(key.as_str(), "name" | "period" | "deadline" | "nodes" | "edges") {
            return Err(wrap(ModelError::field(
                key,
                "unknown key (a DAG task has name, period, deadline, nodes, edges)",
            )));
        }
    }
    let period = time_value(obj.get("period").ok_or_else(|| wrap(ModelError::field("period", "missing")))?, "period")
        .map_err(wrap)?;
    let deadline = match obj.get("deadline") {
        None | Some(Value::Null) => period,
        Some(v) => time_value(v, "deadline").map_err(wrap)?,
    };
    let nodes_v = obj
        .get("nodes")
        .ok_or_else(|| wrap(ModelError::field("nodes", "missing")))?
        .as_array()
        .ok_or_else(|| wrap(ModelError::field("nodes", "expected a list of node WCETs")))?;
    let edges_v = match obj.get("edges") {
        None | Some(Value::Null) => &Vec::new(),
        Some(v) => {
            v.as_array().ok_or_else(|| wrap(ModelError::field("edges", "expected a list of [from, to] pairs")))?
        }
    };
    check_counts(&name, nodes_v.len(), edges_v.len()).map_err(wrap)?;
    let mut wcets = Vec::with_capacity(nodes_v.len());
    for (k, c) in nodes_v.iter().enumerate() {
        let f = format!("nodes[{k}]");
        wcets.push(time_value(c, &f).map_err(|e| wrap(ModelError { reason: format!("node {k}: {}", e.reason), ..e }))?);
    }
    let mut edges = Vec::with_capacity(edges_v.len());
    for (e, ev) in edges_v.iter().enumerate() {
        let f = format!("edges[{e}]");
        let pair = ev.as_array().filter(|a| a.len() == 2).ok_or_else(|| {
            wrap(ModelError::field(&f, format!("edge {e}: expected a pair [from, to] of node indices, got {ev}")))
        })?;
        let u = index_value(&pair[0], &f).map_err(wrap)?;
        let w = index_value(&pair[1], &f).map_err(wrap)?;
        edges.push((u, w));
    }
    DagTask::build(name.clone(), period, deadline, wcets, edges).map_err(wrap)
}

/// Reads a DAG set from a parsed JSON value (format: the module doc, `docs/formats.md`).
pub fn from_value(v: &Value) -> Result<DagFile, ModelError> {
    let (m, tasks) = crate::json::set_object(v, "DAG")?;
    let tasks = tasks.iter().enumerate().map(|(i, t)| parse_task(i, t)).collect::<Result<Vec<_>, _>>()?;
    Ok(DagFile { m, set: DagSet::new(tasks) })
}

/// Reads a JSON DAG file (strict: duplicate keys are errors; a byte-order mark is skipped).
pub fn read_json(text: &str) -> Result<DagFile, ModelError> {
    from_value(&crate::json::parse(text)?)
}

/// Writes the JSON format (integer ns; `deadline` and `edges` always written). Reading it back
/// gives the same set.
pub fn to_json(set: &DagSet, m: Option<u32>) -> String {
    let tasks: Vec<Value> = set
        .iter()
        .map(|t| {
            let mut o = Map::new();
            if let Some(n) = &t.name {
                o.insert("name".into(), Value::String(n.clone()));
            }
            o.insert("period".into(), t.period.into());
            o.insert("deadline".into(), t.deadline.into());
            o.insert("nodes".into(), Value::Array(t.wcets.iter().map(|&c| c.into()).collect()));
            o.insert(
                "edges".into(),
                Value::Array(t.edges.iter().map(|&(u, v)| Value::Array(vec![u.into(), v.into()])).collect()),
            );
            Value::Object(o)
        })
        .collect();
    let mut top = Map::new();
    if let Some(m) = m {
        top.insert("m".into(), m.into());
    }
    top.insert("tasks".into(), Value::Array(tasks));
    Value::Object(top).to_string()
}

/// `s` as a Graphviz double-quoted string (backslashes and quotes escaped, line breaks as `\n`).
fn dot_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The task as a Graphviz DOT digraph (`dot -Tsvg`): one box per node labelled with its index
/// and WCET, one arrow per edge, the critical path drawn bold, and the task's `T`, `D`, volume
/// and longest path in the graph label.
pub fn to_dot(t: &DagTask) -> String {
    use std::fmt::Write;
    let title = t.name.clone().unwrap_or_else(|| "dag".to_string());
    let mut on_path = vec![false; t.nodes()];
    for &k in &t.critical {
        on_path[k as usize] = true;
    }
    let mut crit_edge = std::collections::HashSet::new();
    for w in t.critical.windows(2) {
        crit_edge.insert((w[0], w[1]));
    }
    let mut s = String::new();
    let label = format!(
        "{title}: T = {}, D = {}, volume = {}, longest path = {}",
        format_time_exact(t.period),
        format_time_exact(t.deadline),
        format_time_exact(t.volume),
        format_time_exact(t.longest)
    );
    let _ = writeln!(s, "digraph {} {{", dot_quote(&title));
    let _ = writeln!(s, "  label={};", dot_quote(&label));
    let _ = writeln!(s, "  node [shape=box];");
    for (k, &c) in t.wcets.iter().enumerate() {
        let style = if on_path[k] { ", penwidth=2" } else { "" };
        let _ = writeln!(s, "  n{k} [label={}{style}];", dot_quote(&format!("{k}\n{}", format_time_exact(c))));
    }
    for &(u, v) in &t.edges {
        let style = if crit_edge.contains(&(u, v)) { " [penwidth=2]" } else { "" };
        let _ = writeln!(s, "  n{u} -> n{v}{style};");
    }
    s.push_str("}\n");
    s
}
