//! A JSON Lines file of task sets streamed in chunks: [`analyze_file`] (`rtsched analyze
//! FILE.jsonl`), and its line readers, one per kind of batch (sequential task sets, DAG sets).

use super::dag::{dag_names, dag_report_of};
use super::{limits, os_reason, Tests};
use crate::interrupt::{self, Outbox};
use crate::{err, RtschedError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use rtsched_analysis::global::fp::Assignment;
use rtsched_analysis::report::{self, Report};
use rtsched_analysis::sweep::dag::verdict_of;
use rtsched_analysis::{Limits, Stop, Verdict};
use rtsched_model::{check_m, dag, io, ModelError};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A chunk of a JSON Lines file, analysed.
struct Chunk {
    /// The JSON lines (with newlines), when output is wanted.
    text: String,
    /// Input lines consumed (finished), and bytes.
    lines: usize,
    bytes: u64,
    ok: usize,
    bad: usize,
    /// Per test of the selection: accepted, rejected, gave up.
    counts: Vec<[u64; 3]>,
    /// Reports (JSON) or errors of the first lines, for a per-set table.
    first: Vec<String>,
    /// The first few error messages, for stderr.
    errors: Vec<String>,
}

/// Numbered raw lines of a chunk.
type Lines = Vec<(usize, Vec<u8>)>;

/// Reads up to `max_lines` lines (or about `max_bytes`) as raw bytes, with their numbers.
fn read_chunk(
    r: &mut impl BufRead,
    next_line: &mut usize,
    max_lines: usize,
    max_bytes: usize,
) -> std::io::Result<(Lines, u64)> {
    let mut out = Vec::new();
    let (mut bytes, mut total) = (0usize, 0u64);
    while out.len() < max_lines && bytes < max_bytes {
        let mut line = Vec::new();
        let k = r.read_until(b'\n', &mut line)?;
        if k == 0 {
            break;
        }
        total += k as u64;
        bytes += k;
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        }
        *next_line += 1;
        out.push((*next_line, line));
    }
    Ok((out, total))
}

/// The first bytes of a file, checked for text: NUL bytes or invalid UTF-8 there make the
/// whole file an error (a binary file gives one line, not one error per line).
fn check_text(path: &str, head: &[u8]) -> PyResult<()> {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    if let Some(p) = head.iter().position(|&b| b == 0) {
        return Err(RtschedError::new_err(format!(
            "{path}: not a text file (a NUL byte at offset {p}); expected JSON Lines task sets"
        )));
    }
    if let Err(e) = std::str::from_utf8(head) {
        // An incomplete character cut at the end of the sample is fine.
        if e.error_len().is_some() {
            return Err(RtschedError::new_err(format!(
                "{path}: not UTF-8 text (invalid byte 0x{:02x} at offset {}); expected JSON Lines task sets",
                head[e.valid_up_to()],
                e.valid_up_to()
            )));
        }
    }
    Ok(())
}

/// The kind of task sets in a JSON Lines batch: that of its first set, the same on every line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sequential,
    Dag,
}

impl Kind {
    fn words(self) -> &'static str {
        match self {
            Kind::Sequential => "sequential",
            Kind::Dag => "DAG",
        }
    }
}

/// A line's text when it holds a set: `None` for a blank or comment line (or one that is not
/// UTF-8, which the reader then reports).
fn content(k: usize, raw: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(raw).ok()?;
    let text = if k == 1 { rtsched_model::json::strip_bom(text) } else { text }.trim();
    (!text.is_empty() && !text.starts_with('#')).then_some(text)
}

/// What a line holds, judged by the model's rule (docs/dag.md: a set whose tasks have
/// `"nodes"` is a DAG set); `None` when it is not JSON with a `tasks` list, which the reader of
/// the batch's kind then reports as that line's error.
fn line_kind(text: &str) -> Option<Kind> {
    let v: Value = serde_json::from_str(text).ok()?;
    let tasks = v.get("tasks")?.as_array()?;
    Some(if tasks.iter().any(|t| t.get("nodes").is_some()) { Kind::Dag } else { Kind::Sequential })
}

/// One line's analysis.
enum Line {
    Seq(Report),
    Dag(Value),
}

/// Why a line has no analysis: it is invalid (reported on its line), or of the other kind than
/// the batch (an error for the whole batch).
enum LineErr {
    Invalid(ModelError),
    Mixed(Kind),
}

/// How the lines of a batch are analysed.
enum Plan {
    Seq(Tests),
    Dag(Option<Vec<String>>),
}

/// analyze_file(path, m, tests, max_steps, exact_utilization, write, progress, keep_first,
/// priorities) -> dict
///
/// Streams a JSON Lines file of task sets (docs/formats.md) in chunks: each chunk is parsed
/// and analysed in parallel and, when `write` is given, its JSON lines (one per input line, in
/// order; an invalid line gives `{"error": ..., "line": k}`) are passed to `write(text)` as
/// one string. The file's first set says whether it is a batch of sequential task sets or of
/// DAG sets (docs/dag.md; their reports as `rtsched analyze` writes them); a line of the other
/// kind is an error for the whole batch, naming that line (the lines before it are written).
/// Returns {"kind": "sequential" or "DAG", "sets", "invalid", "interrupted", "counts": {test:
/// [accepted, rejected, gave_up]} (in a DAG batch without `tests`, the tests that ran on some
/// set), "first": [the first `keep_first` lines' JSON], "errors": [the
/// first error messages], "bytes": file size}. Ctrl-C stops at once: what was written stays,
/// and "interrupted" is true. `progress(done_bytes, total_bytes, sets)` every 50 ms.
#[pyfunction]
#[pyo3(signature = (path, m, tests, max_steps, exact_utilization=false, write=None, progress=None, keep_first=0, priorities=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn analyze_file<'py>(
    py: Python<'py>,
    path: &str,
    m: Option<u64>,
    tests: Option<Vec<String>>,
    max_steps: u64,
    exact_utilization: bool,
    write: Option<PyObject>,
    progress: Option<PyObject>,
    keep_first: usize,
    priorities: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let stop = Stop::new();
    let lim = limits(max_steps, &stop)?;
    let m = m.map(|m| check_m(m).map_err(err)).transpose()?;
    let file = std::fs::File::open(path)
        .map_err(|e| RtschedError::new_err(format!("cannot read {path:?}: {}", os_reason(&e))))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(RtschedError::new_err(format!("cannot read {path:?}: it is a directory")));
    }
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let head =
        reader.fill_buf().map_err(|e| RtschedError::new_err(format!("cannot read {path:?}: {}", os_reason(&e))))?;
    check_text(path, &head[..head.len().min(64 * 1024)])?;
    // The batch's kind: read up to its first set (the lines read go to the first chunk).
    let mut next_line = 0usize;
    let mut first: (Lines, u64) = (Vec::new(), 0);
    let mut kind: Option<(Kind, usize)> = None;
    while kind.is_none() {
        let (lines, bytes) = read_chunk(&mut reader, &mut next_line, 256, 8 << 20)
            .map_err(|e| RtschedError::new_err(format!("cannot read {path:?}: {}", os_reason(&e))))?;
        if lines.is_empty() {
            break;
        }
        kind =
            lines.iter().find_map(|(k, raw)| content(*k, raw).map(|t| (line_kind(t).unwrap_or(Kind::Sequential), *k)));
        first.0.extend(lines);
        first.1 += bytes;
    }
    let (kind, first_set_line) = kind.unwrap_or((Kind::Sequential, 0));
    let (plan, names): (Plan, Vec<&'static str>) = match kind {
        Kind::Sequential => {
            let tests = Tests::new(tests.as_deref())?;
            let names: Vec<&'static str> = match (&tests.multi, &tests.uni) {
                (Ok(v), _) | (Err(_), Ok(v)) => v.iter().map(|t| t.name()).collect(),
                (Err(e), Err(_)) => return Err(err(e.clone())),
            };
            (Plan::Seq(tests), names)
        }
        Kind::Dag => {
            let what = |opt: &str| {
                RtschedError::new_err(format!(
                    "{path}: {opt} applies to sequential task sets; this is a batch of DAG task sets"
                ))
            };
            if priorities.is_some() {
                return Err(what("--priorities"));
            }
            if exact_utilization {
                return Err(what("--exact-utilization"));
            }
            let names = dag_names(tests.as_deref()).map_err(|e| RtschedError::new_err(format!("{path}: {e}")))?;
            (Plan::Dag(tests.clone()), names)
        }
    };
    let mut sink = crate::interrupt::Sink::new(write, py)?;
    let want_text = sink.is_some();
    let mut acc = Acc { counts: vec![[0; 3]; names.len()], ..Acc::default() };
    let done_bytes = AtomicUsize::new(0);
    let done_sets = AtomicUsize::new(0);
    let count = |counts: &mut [[u64; 3]], name: &str, v: Verdict| {
        if let Some(j) = names.iter().position(|&x| x == name) {
            counts[j][match v {
                Verdict::Schedulable => 0,
                Verdict::NotSchedulable => 1,
                Verdict::GaveUp => 2,
            }] += 1;
        }
    };
    let fin = interrupt::run(
        py,
        &stop,
        |out: &Outbox<'_, Chunk, Result<(), String>>| {
            let mut pending = Some(first);
            let mut first_left = keep_first;
            let mut errors_left = 10usize;
            // Small first chunks, so that a short file's answer and an early error come at once.
            let mut max_lines = 256;
            loop {
                if stop.requested() {
                    return Ok(());
                }
                let (lines, bytes) = match pending.take() {
                    Some(p) => p,
                    None => read_chunk(&mut reader, &mut next_line, max_lines, 8 << 20)
                        .map_err(|e| format!("cannot read {path:?}: {}", os_reason(&e)))?,
                };
                if lines.is_empty() {
                    return Ok(());
                }
                max_lines = (max_lines * 2).min(8192);
                let results: Vec<Option<Result<Option<Line>, LineErr>>> = lines
                    .par_iter()
                    .map(|(k, raw)| {
                        if stop.requested() {
                            return None;
                        }
                        let r = match &plan {
                            Plan::Seq(tests) => {
                                analyze_line(*k, raw, m, tests, &lim, exact_utilization, priorities.as_deref())
                                    .map(|r| r.map(Line::Seq))
                                    .map_err(|e| match content(*k, raw).and_then(line_kind) {
                                        Some(Kind::Dag) => LineErr::Mixed(Kind::Dag),
                                        _ => LineErr::Invalid(e),
                                    })
                            }
                            Plan::Dag(tests) => analyze_dag_line(*k, raw, m, tests.as_deref(), &lim),
                        };
                        done_sets.fetch_add(1, Ordering::Relaxed);
                        (!stop.requested()).then_some(r)
                    })
                    .collect();
                let mut c = Chunk {
                    text: String::new(),
                    lines: 0,
                    bytes: 0,
                    ok: 0,
                    bad: 0,
                    counts: vec![[0; 3]; names.len()],
                    first: Vec::new(),
                    errors: Vec::new(),
                };
                let complete = results.iter().all(Option::is_some);
                for ((k, raw), r) in lines.iter().zip(&results) {
                    let Some(r) = r else { break };
                    let mut line = String::new();
                    match r {
                        Ok(None) => {
                            // blank or comment
                            c.lines += 1;
                            c.bytes += raw.len() as u64 + 1;
                            continue;
                        }
                        Ok(Some(rep)) => {
                            c.ok += 1;
                            match rep {
                                Line::Seq(rep) => {
                                    for t in &rep.results {
                                        count(&mut c.counts, t.test.name(), t.verdict);
                                    }
                                    if want_text || first_left > 0 {
                                        rep.write_json(&mut line);
                                    }
                                }
                                Line::Dag(v) => {
                                    if let Some(res) = v.get("results").and_then(Value::as_object) {
                                        for (name, r) in res {
                                            count(&mut c.counts, name, verdict_of(r));
                                        }
                                    }
                                    if want_text || first_left > 0 {
                                        line = v.to_string();
                                    }
                                }
                            }
                        }
                        Err(LineErr::Invalid(e)) => {
                            c.bad += 1;
                            if errors_left > 0 {
                                errors_left -= 1;
                                c.errors.push(e.to_string());
                            }
                            if want_text || first_left > 0 {
                                report::write_error_json(&mut line, &e.to_string(), *k);
                            }
                        }
                        Err(LineErr::Mixed(this)) => {
                            let msg = format!(
                                "{path}: line {k}: a {} task set in a batch of {} task sets (line {first_set_line} is \
                                 one); a batch is all DAG sets or all sequential task sets",
                                this.words(),
                                kind.words()
                            );
                            out.send(c);
                            return Err(msg);
                        }
                    }
                    c.lines += 1;
                    c.bytes += raw.len() as u64 + 1;
                    if first_left > 0 {
                        first_left -= 1;
                        c.first.push(line.clone());
                    }
                    if want_text {
                        c.text.push_str(&line);
                        c.text.push('\n');
                    }
                }
                done_bytes.fetch_add(if complete { bytes as usize } else { c.bytes as usize }, Ordering::Relaxed);
                if !out.send(c) || !complete {
                    return Ok(());
                }
            }
        },
        |py, c: Chunk| {
            let text = c.text.clone();
            acc.add(c);
            if let Some(w) = &mut sink {
                if !text.is_empty() {
                    w.write(py, text.as_bytes())?;
                }
            }
            Ok(())
        },
        |py| {
            if let Some(cb) = &progress {
                cb.call1(py, (done_bytes.load(Ordering::Relaxed), size, done_sets.load(Ordering::Relaxed)))?;
            }
            Ok(())
        },
    )?;
    fin.result.map_err(RtschedError::new_err)?;
    if let Some(cb) = &progress {
        cb.call1(py, (done_bytes.load(Ordering::Relaxed), size, done_sets.load(Ordering::Relaxed)))?;
    }
    let d = PyDict::new(py);
    d.set_item("kind", kind.words())?;
    d.set_item("sets", acc.ok)?;
    d.set_item("invalid", acc.bad)?;
    d.set_item("lines", acc.lines)?;
    d.set_item("interrupted", fin.interrupt.is_some())?;
    let counts = PyDict::new(py);
    // By default a DAG batch runs on each set the tests that apply to it (dag_graham only on
    // sets of one task): a test that applied to none is left out.
    let default_dag = kind == Kind::Dag && tests.is_none();
    for (t, c) in names.iter().zip(&acc.counts) {
        if !(default_dag && c.iter().all(|&x| x == 0)) {
            counts.set_item(t, c.to_vec())?;
        }
    }
    d.set_item("counts", counts)?;
    d.set_item("first", acc.first)?;
    d.set_item("errors", acc.errors)?;
    d.set_item("bytes", size)?;
    Ok(d)
}

/// Reads and analyses one line of a batch of DAG sets: `Ok(None)` for a blank or comment line;
/// a sequential task set is [`LineErr::Mixed`].
fn analyze_dag_line(
    k: usize,
    raw: &[u8],
    m: Option<u32>,
    tests: Option<&[String]>,
    lim: &Limits,
) -> Result<Option<Line>, LineErr> {
    let text = std::str::from_utf8(raw).map_err(|e| {
        LineErr::Invalid(
            ModelError::new(format!(
                "not UTF-8 text (invalid byte 0x{:02x} at column {})",
                raw[e.valid_up_to()],
                e.valid_up_to() + 1
            ))
            .at_line(k),
        )
    })?;
    let Some(text) = content(k, raw).map(|_| text) else { return Ok(None) };
    let text = if k == 1 { rtsched_model::json::strip_bom(text) } else { text }.trim();
    let f = match dag::read_json(text) {
        Ok(f) => f,
        Err(e) => {
            return Err(match line_kind(text) {
                Some(Kind::Sequential) => LineErr::Mixed(Kind::Sequential),
                _ => LineErr::Invalid(e.at_line(k)),
            })
        }
    };
    let inv = |e: ModelError| LineErr::Invalid(e.at_line(k));
    let m = m
        .or(f.m)
        .ok_or_else(|| ModelError::field("m", "no processor count: pass --m or put \"m\" in the DAG set"))
        .map_err(inv)?;
    Ok(Some(Line::Dag(dag_report_of(&f.set, m, tests, lim).map_err(inv)?)))
}

/// What the chunks of [`analyze_file`] add up to.
#[derive(Default)]
struct Acc {
    ok: usize,
    bad: usize,
    lines: usize,
    counts: Vec<[u64; 3]>,
    first: Vec<String>,
    errors: Vec<String>,
}

impl Acc {
    fn add(&mut self, c: Chunk) {
        self.ok += c.ok;
        self.bad += c.bad;
        self.lines += c.lines;
        for (a, b) in self.counts.iter_mut().zip(&c.counts) {
            for j in 0..3 {
                a[j] += b[j];
            }
        }
        self.first.extend(c.first);
        self.errors.extend(c.errors);
    }
}

/// Parses and analyses one line: `Ok(None)` for a blank or comment line.
fn analyze_line(
    k: usize,
    raw: &[u8],
    m: Option<u32>,
    tests: &Tests,
    lim: &Limits,
    exact_utilization: bool,
    priorities: Option<&str>,
) -> Result<Option<Report>, ModelError> {
    let text = std::str::from_utf8(raw).map_err(|e| {
        ModelError::new(format!(
            "not UTF-8 text (invalid byte 0x{:02x} at column {})",
            raw[e.valid_up_to()],
            e.valid_up_to() + 1
        ))
        .at_line(k)
    })?;
    let Some(f) = io::read_jsonl_line(text, k) else { return Ok(None) };
    let f = f?;
    let m = m.or(f.m).ok_or_else(|| {
        ModelError::field("m", "no processor count: pass --m or put \"m\" in the task set").at_line(k)
    })?;
    let t = tests.for_m(m).map_err(|e| e.at_line(k))?;
    let p = priorities.map(|text| Assignment::from_text(&f.taskset, text)).transpose().map_err(|e| e.at_line(k))?;
    Ok(Some(report::report_with_priorities(&f.taskset, m, t, lim, exact_utilization, p.as_ref())))
}
