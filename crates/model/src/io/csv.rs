//! The CSV task-set format (docs/formats.md): one task per row, `wcet,period,deadline[,name]`,
//! an optional header row that names (and may reorder) the columns, `#` comment lines.
//!
//! Cells may be quoted as in RFC 4180: `"a, b"` holds a comma, `""` inside quotes is one
//! quote, and a quoted cell may span lines. Unquoted cells are trimmed; quoted cells are kept
//! exactly (an empty quoted name is the empty name, an empty unquoted one is no name). The
//! writer quotes every name that needs it, so that reading what it wrote gives the same task
//! set back (a property test in `io::tests`).

use crate::task::Task;
use crate::taskset::TaskSet;
use crate::time::parse_duration;
use crate::ModelError;

/// One cell of a record.
struct Cell {
    text: String,
    quoted: bool,
}

/// Splits `text` into records, each with its 1-based starting line; blank lines and lines
/// whose first non-blank character is `#` are skipped.
fn records(text: &str) -> Result<Vec<(usize, Vec<Cell>)>, ModelError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line) = (0usize, 1usize);
    while i < b.len() {
        // Skip a blank or comment line.
        let mut j = i;
        while j < b.len() && matches!(b[j], b' ' | b'\t' | b'\r') {
            j += 1;
        }
        if j == b.len() {
            break;
        }
        if b[j] == b'\n' || b[j] == b'#' {
            while j < b.len() && b[j] != b'\n' {
                j += 1;
            }
            i = j + 1;
            line += 1;
            continue;
        }
        let start_line = line;
        let mut cells = Vec::new();
        loop {
            while i < b.len() && matches!(b[i], b' ' | b'\t') {
                i += 1;
            }
            if i < b.len() && b[i] == b'"' {
                let open_line = line;
                let mut s = String::new();
                let mut k = i + 1;
                loop {
                    let Some(rel) = b[k..].iter().position(|&c| c == b'"') else {
                        return Err(ModelError::new(format!(
                            "a quoted cell opened on line {open_line} is never closed"
                        ))
                        .at_line(open_line));
                    };
                    let chunk = &text[k..k + rel];
                    line += chunk.bytes().filter(|&c| c == b'\n').count();
                    s.push_str(chunk);
                    k += rel + 1;
                    if k < b.len() && b[k] == b'"' {
                        s.push('"');
                        k += 1;
                    } else {
                        break;
                    }
                }
                i = k;
                while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r') {
                    i += 1;
                }
                if i < b.len() && !matches!(b[i], b',' | b'\n') {
                    return Err(ModelError::new(
                        "unexpected text after a closing quote (a quote inside a quoted cell is written \"\")",
                    )
                    .at_line(line));
                }
                cells.push(Cell { text: s, quoted: true });
            } else {
                let end = b[i..].iter().position(|&c| c == b',' || c == b'\n').map_or(b.len(), |p| i + p);
                let cell = text[i..end].trim();
                if cell.contains('"') {
                    return Err(ModelError::new(format!(
                        "a quote inside an unquoted cell ({cell:?}); quote the whole cell and double the quote"
                    ))
                    .at_line(line));
                }
                cells.push(Cell { text: cell.to_string(), quoted: false });
                i = end;
            }
            if i < b.len() && b[i] == b',' {
                i += 1;
                continue;
            }
            if i < b.len() {
                i += 1; // the newline
                line += 1;
            }
            break;
        }
        out.push((start_line, cells));
    }
    Ok(out)
}

/// Reads a CSV task set (see the module doc). An input without task rows is an error.
pub fn read_csv(text: &str) -> Result<TaskSet, ModelError> {
    let text = crate::json::strip_bom(text);
    let mut columns: Vec<String> = vec!["wcet".into(), "period".into(), "deadline".into(), "name".into()];
    let mut tasks = Vec::new();
    let mut seen_row = false;
    for (line, cells) in records(text)? {
        if !seen_row && cells.first().is_some_and(|c| c.text.chars().next().is_some_and(|ch| ch.is_ascii_alphabetic()))
        {
            // A header row: it may reorder the columns.
            columns = cells.iter().map(|c| c.text.to_ascii_lowercase()).collect();
            for (k, c) in columns.iter().enumerate() {
                if !matches!(c.as_str(), "wcet" | "period" | "deadline" | "name") {
                    return Err(ModelError::field(c.clone(), "unknown CSV column (use wcet, period, deadline, name)")
                        .at_line(line));
                }
                if columns[..k].contains(c) {
                    return Err(ModelError::field(c.clone(), "this CSV column is named twice").at_line(line));
                }
            }
            for need in ["wcet", "period"] {
                if !columns.iter().any(|c| c == need) {
                    return Err(ModelError::field(need, "the CSV header lacks this column").at_line(line));
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
            .at_line(line));
        }
        let mut task = Task { name: None, wcet: 0, deadline: 0, period: 0, segments: None };
        let (mut wcet, mut period, mut deadline) = (None, None, None);
        for (col, cell) in columns.iter().zip(&cells) {
            let err = |e: ModelError| ModelError::field(col.clone(), e.reason).in_task(index, None).at_line(line);
            match col.as_str() {
                "name" => task.name = (cell.quoted || !cell.text.is_empty()).then(|| cell.text.clone()),
                "deadline" if cell.text.is_empty() && !cell.quoted => {}
                field => {
                    let v = parse_duration(&cell.text).map_err(err)?;
                    match field {
                        "wcet" => wcet = Some(v),
                        "period" => period = Some(v),
                        _ => deadline = Some(v),
                    }
                }
            }
        }
        let missing =
            |f: &str| ModelError::field(f, "missing (the row has too few values)").in_task(index, None).at_line(line);
        task.wcet = wcet.ok_or_else(|| missing("wcet"))?;
        task.period = period.ok_or_else(|| missing("period"))?;
        task.deadline = deadline.unwrap_or(task.period);
        task.validate().map_err(|e| e.in_task(index, task.name.as_deref()).at_line(line))?;
        tasks.push(task);
    }
    if tasks.is_empty() {
        return Err(ModelError::new("the CSV file holds no task rows (one task per row: wcet,period,deadline)"));
    }
    TaskSet::new(tasks)
}

/// Whether a name must be quoted to read back unchanged.
fn needs_quotes(name: &str) -> bool {
    name.is_empty()
        || name.contains([',', '"', '\n', '\r'])
        || name.starts_with(char::is_whitespace)
        || name.ends_with(char::is_whitespace)
        || name.trim().is_empty()
}

/// CSV with a `wcet,period,deadline[,name]` header; names are quoted when they need it.
pub fn to_csv(ts: &TaskSet) -> Result<String, ModelError> {
    if let Some(i) = ts.iter().position(Task::is_self_suspending) {
        return Err(ModelError::task_field(
            i,
            "segments",
            "CSV has no column for self-suspension segments: write the task set as JSON (.json/.jsonl)",
        )
        .in_task(i, ts[i].name.as_deref()));
    }
    if ts.priorities().is_some() {
        return Err(ModelError::task_field(
            0,
            "priority",
            "CSV has no priority column: write the task set as JSON (.json/.jsonl)",
        )
        .in_task(0, ts[0].name.as_deref()));
    }
    let named = ts.iter().any(|t| t.name.is_some());
    let mut s = String::from(if named { "wcet,period,deadline,name\n" } else { "wcet,period,deadline\n" });
    for t in ts {
        s.push_str(&format!("{},{},{}", t.wcet, t.period, t.deadline));
        if named {
            s.push(',');
            match t.name.as_deref() {
                None => {}
                Some(n) if needs_quotes(n) => {
                    s.push('"');
                    s.push_str(&n.replace('"', "\"\""));
                    s.push('"');
                }
                Some(n) => s.push_str(n),
            }
        }
        s.push('\n');
    }
    Ok(s)
}
