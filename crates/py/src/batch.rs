//! The batch analysis paths: many task sets analysed in parallel in Rust, with the GIL
//! released, Ctrl-C acting within 50 ms (keeping what is done), progress forwarded, and the
//! output built without a per-set round trip through JSON or Python:
//!
//! * [`analyze_sets`]: `TaskSet` objects in, a list of report dicts out (`rtsched.analyze_many`);
//! * [`analyze_dag_sets`]: the same for DAG task sets, given as DAG JSON texts (docs/dag.md);
//! * [`analyze_file`]: a JSON Lines file streamed in chunks, parsed and analysed in parallel,
//!   its JSON lines handed to a writer one chunk at a time (`rtsched analyze FILE.jsonl`); a
//!   batch is all sequential task sets or all DAG sets, as its first set is (a line of the
//!   other kind is an error for the whole batch, naming the line);
//! * [`analyze_columns`]: task parameters as flat arrays in, a verdict table out
//!   (`rtsched.analyze_table`: numpy arrays or an Arrow table, no Python object per set).

use crate::convert::json_to_py;
use crate::interrupt::{self, Outbox};
use crate::overheads::{OverheadArgs, OverheadRequest};
use crate::taskset::TaskSet;
use crate::{err, RtschedError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use rayon::prelude::*;
use rtsched_analysis::dag::report::{self as dag_report, DAG_TEST_NAMES};
use rtsched_analysis::global::fp::Assignment;
use rtsched_analysis::report::{self, Extra, Report, Selection, TestId};
use rtsched_analysis::sweep::dag::{dag_test, verdict_of};
use rtsched_analysis::{Limits, Stop, Verdict};
use rtsched_model::{check_m, dag, io, ModelError, Task, TaskSet as RTaskSet};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Limits of one batch call: `max_steps` and the call's stop flag.
fn limits(max_steps: u64, stop: &Stop) -> PyResult<Limits> {
    if max_steps == 0 {
        return Err(RtschedError::new_err("argument 'max_steps': must be at least 1, got 0"));
    }
    Ok(Limits { max_steps, stop: stop.clone(), ..Limits::default() })
}

/// The tests per set for `m = 1` and `m > 1`, resolved once.
struct Tests {
    uni: Result<Vec<TestId>, ModelError>,
    multi: Result<Vec<TestId>, ModelError>,
}

impl Tests {
    fn new(tests: Option<&[String]>) -> PyResult<Tests> {
        let sel = Selection::new(tests).map_err(err)?;
        Ok(Tests {
            uni: sel.for_m(1),
            multi: sel.for_m(2).map_err(|mut e| {
                // The message names the real m per set (see `for_m`).
                e.reason = e.reason.replace("got m = 2", "got m > 1");
                e
            }),
        })
    }

    fn for_m(&self, m: u32) -> Result<&[TestId], ModelError> {
        let r = if m == 1 { &self.uni } else { &self.multi };
        match r {
            Ok(v) => Ok(v),
            Err(e) => {
                let mut e = e.clone();
                e.reason = e.reason.replace("got m > 1", &format!("got m = {m}"));
                Err(e)
            }
        }
    }
}

/// Python names used in every report dict, interned once per call.
struct Keys<'py> {
    m: Bound<'py, PyString>,
    n: Bound<'py, PyString>,
    utilization: Bound<'py, PyString>,
    utilization_exact: Bound<'py, PyString>,
    results: Bound<'py, PyString>,
    schedulable: Bound<'py, PyString>,
    gave_up: Bound<'py, PyString>,
    tardiness: Bound<'py, PyString>,
    response_times: Bound<'py, PyString>,
    tests: Vec<Bound<'py, PyString>>,
}

impl<'py> Keys<'py> {
    fn new(py: Python<'py>) -> Keys<'py> {
        Keys {
            m: intern!(py, "m").clone(),
            n: intern!(py, "n").clone(),
            utilization: intern!(py, "utilization").clone(),
            utilization_exact: intern!(py, "utilization_exact").clone(),
            results: intern!(py, "results").clone(),
            schedulable: intern!(py, "schedulable").clone(),
            gave_up: intern!(py, "gave_up").clone(),
            tardiness: intern!(py, "tardiness_ns").clone(),
            response_times: intern!(py, "response_times_ns").clone(),
            tests: report::TEST_NAMES.iter().map(|n| PyString::intern(py, n)).collect(),
        }
    }

    fn test(&self, t: TestId) -> &Bound<'py, PyString> {
        let i = report::TEST_NAMES.iter().position(|&n| n == t.name()).unwrap_or(0);
        &self.tests[i]
    }
}

/// The documented report dict (the same keys and values as the JSON line).
fn report_dict<'py>(py: Python<'py>, r: &Report, k: &Keys<'py>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(&k.m, r.m)?;
    d.set_item(&k.n, r.n)?;
    d.set_item(&k.utilization, r.utilization)?;
    if let Some(e) = &r.utilization_exact {
        d.set_item(&k.utilization_exact, e)?;
    }
    let res = PyDict::new(py);
    for t in &r.results {
        let v = PyDict::new(py);
        v.set_item(&k.schedulable, t.verdict.decided())?;
        v.set_item(&k.gave_up, t.verdict == Verdict::GaveUp)?;
        if r.suspension_oblivious {
            v.set_item(intern!(py, "suspension"), t.test.suspension_mode())?;
        }
        if let Some(src) = r.priority_note(t.test) {
            v.set_item(intern!(py, "priorities"), src)?;
        }
        match &t.extra {
            Extra::None => {}
            Extra::Tardiness(b) => v.set_item(&k.tardiness, b)?,
            Extra::ResponseTimes(rts) => v.set_item(&k.response_times, rts)?,
        }
        res.set_item(k.test(t.test), v)?;
    }
    d.set_item(&k.results, res)?;
    Ok(d)
}

/// Calls `progress(done, total)` when a callback is given.
fn tick(py: Python<'_>, progress: Option<&PyObject>, done: usize, total: Option<usize>) -> PyResult<()> {
    if let Some(cb) = progress {
        cb.call1(py, (done, total))?;
    }
    Ok(())
}

/// analyze_sets(sets, m, tests, max_steps, exact_utilization, progress, overheads, priorities) -> (list[dict], bool)
///
/// `priorities` (`dm`, `rm` or one rank per task, comma-separated) replaces deadline-monotonic
/// priorities in `gfp_bc`, `gfp_bc_slack` and `gfp_guan` (`report::report_with_priorities`).
/// One report dict per task set, in order; `m` (an int or None) overrides each set's own. With
/// `overheads` = `(model_text, mechanism, stat, cpd, quantum, extrapolate)` each report also has
/// its `"overheads"` object (docs/overheads.md), computed in the same parallel pass. The
/// bool says Ctrl-C stopped the batch: the list then holds the reports of the leading sets that
/// were finished, and the caller raises `KeyboardInterrupt`. `progress(done, total)` is called
/// every 50 ms when given.
#[pyfunction]
#[pyo3(signature = (sets, m, tests, max_steps, exact_utilization=false, progress=None, overheads=None, priorities=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn analyze_sets<'py>(
    py: Python<'py>,
    sets: &Bound<'py, PyAny>,
    m: Option<u64>,
    tests: Option<Vec<String>>,
    max_steps: u64,
    exact_utilization: bool,
    progress: Option<PyObject>,
    overheads: Option<OverheadArgs>,
    priorities: Option<String>,
) -> PyResult<(Bound<'py, PyList>, bool)> {
    let stop = Stop::new();
    let lim = limits(max_steps, &stop)?;
    let overheads = overheads.as_ref().map(OverheadRequest::new).transpose().map_err(err)?;
    let m = m.map(|m| check_m(m).map_err(err)).transpose()?;
    let tests = Tests::new(tests.as_deref())?;
    // Borrow every set's tasks (frozen objects: no copy), keeping the objects alive.
    let objs: Vec<Bound<'py, TaskSet>> = sets
        .try_iter()
        .map_err(|_| RtschedError::new_err("argument 'sets': expected an iterable of TaskSet"))?
        .enumerate()
        .map(|(i, o)| {
            let o = o?;
            o.downcast_into::<TaskSet>().map_err(|e| {
                let got = e.into_inner().get_type().name().map(|n| n.to_string()).unwrap_or_default();
                RtschedError::new_err(format!("argument 'sets': item {i} is a {got}, not a TaskSet"))
            })
        })
        .collect::<PyResult<_>>()?;
    // TaskSets are mutable (append, m setter): hold a shared borrow of each for the whole
    // call, so that no other thread can change one while the analysis reads it.
    let refs: Vec<PyRef<'py, TaskSet>> = objs
        .iter()
        .enumerate()
        .map(|(i, o)| {
            o.try_borrow().map_err(|_| {
                RtschedError::new_err(format!("argument 'sets': item {i} is being modified by another thread"))
            })
        })
        .collect::<PyResult<_>>()?;
    let mut work: Vec<(&RTaskSet, u32, &[TestId], Option<Assignment>)> = Vec::with_capacity(objs.len());
    for (i, ts) in refs.iter().enumerate() {
        let mi = m.or(ts.m).ok_or_else(|| {
            RtschedError::new_err(format!(
                "task set {i}: field 'm': no processor count: pass m (--m) or put \"m\" in the task-set file"
            ))
        })?;
        let t = tests.for_m(mi).map_err(|e| RtschedError::new_err(format!("task set {i}: {e}")))?;
        let p = priorities
            .as_deref()
            .map(|text| Assignment::from_text(&ts.inner, text))
            .transpose()
            .map_err(|e| RtschedError::new_err(format!("task set {i}: {e}")))?;
        work.push((&ts.inner, mi, t, p));
    }
    let total = work.len();
    let done = AtomicUsize::new(0);
    let fin = interrupt::run(
        py,
        &stop,
        |_: &Outbox<'_, (), Vec<Option<AnalyzedSet>>>| {
            work.par_iter()
                .map(|(ts, mi, t, p)| {
                    let (ts, mi, t) = (*ts, *mi, *t);
                    if stop.requested() {
                        return None;
                    }
                    let r = report::report_with_priorities(ts, mi, t, &lim, exact_utilization, p.as_ref());
                    let o = overheads.as_ref().map(|o| o.report(ts, mi, &lim).map_err(|e| e.to_string()));
                    done.fetch_add(1, Ordering::Relaxed);
                    (!stop.requested()).then_some((r, o))
                })
                .collect()
        },
        |_, ()| Ok(()),
        |py| tick(py, progress.as_ref(), done.load(Ordering::Relaxed), Some(total)),
    )?;
    let keys = Keys::new(py);
    let out = PyList::empty(py);
    for r in fin.result.iter() {
        match r {
            Some((r, o)) => {
                let d = report_dict(py, r, &keys)?;
                if let Some(o) = o {
                    let v = o.as_ref().map_err(|e| RtschedError::new_err(e.clone()))?;
                    d.set_item("overheads", json_to_py(py, v)?)?;
                }
                out.append(d)?
            }
            None => break,
        }
    }
    tick(py, progress.as_ref(), out.len(), Some(total))?;
    Ok((out, fin.interrupt.is_some()))
}

/// The DAG tests named in `tests` for a batch of DAG sets, resolved once (any spelling); `None`
/// (the default) runs, on each set, all that apply to it (`dag_report::select`). A sequential
/// test's name or an unknown one is an error.
fn dag_names(tests: Option<&[String]>) -> Result<Vec<&'static str>, ModelError> {
    let Some(list) = tests else { return Ok(DAG_TEST_NAMES.to_vec()) };
    let mut out: Vec<&'static str> = Vec::new();
    for t in list {
        let name = dag_test(t).ok_or_else(|| {
            let why = if rtsched_analysis::methods::test(t, &report::TEST_NAMES).is_some() {
                format!("{t:?} takes sequential tasks; this is a batch of DAG task sets")
            } else {
                format!("unknown test {t:?}")
            };
            ModelError::field("test", format!("{why}; available for DAG task sets: {}", DAG_TEST_NAMES.join(", ")))
        })?;
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// One DAG set's report (`dag_report::analyze`, as `rtsched analyze` on a DAG file writes it).
fn dag_report_of(set: &dag::DagSet, m: u32, tests: Option<&[String]>, lim: &Limits) -> Result<Value, ModelError> {
    let selected = dag_report::select(tests, set)?;
    Ok(dag_report::analyze(set, m, &selected, lim))
}

/// analyze_dag_sets(texts, m, tests, max_steps, progress) -> (list[dict], bool)
///
/// The DAG form of [`analyze_sets`] (`rtsched.analyze_many` on DAG sets): one report dict per
/// DAG set (each the JSON text of a DAG file, docs/dag.md), in order, as
/// `rtsched.analyze_dag` returns it; every set is read and checked before any is analysed (an
/// error names the set). `m` (an int or None) overrides each set's own. The bool says Ctrl-C
/// stopped the batch (the list then holds the leading sets' reports).
#[pyfunction]
#[pyo3(signature = (texts, m, tests, max_steps, progress=None))]
pub(crate) fn analyze_dag_sets<'py>(
    py: Python<'py>,
    texts: Vec<String>,
    m: Option<u64>,
    tests: Option<Vec<String>>,
    max_steps: u64,
    progress: Option<PyObject>,
) -> PyResult<(Bound<'py, PyList>, bool)> {
    let stop = Stop::new();
    let lim = limits(max_steps, &stop)?;
    let m = m.map(|m| check_m(m).map_err(err)).transpose()?;
    dag_names(tests.as_deref()).map_err(err)?;
    let files: Vec<(dag::DagSet, u32)> = py
        .allow_threads(|| {
            texts
                .par_iter()
                .enumerate()
                .map(|(i, text)| {
                    let f = dag::read_json(text).map_err(|e| format!("DAG set {i}: {e}"))?;
                    let mi = m.or(f.m).ok_or_else(|| {
                        format!("DAG set {i}: field 'm': no processor count: pass m (--m) or put \"m\" in the DAG set")
                    })?;
                    dag_report::select(tests.as_deref(), &f.set).map_err(|e| format!("DAG set {i}: {e}"))?;
                    Ok((f.set, mi))
                })
                .collect::<Result<Vec<_>, String>>()
        })
        .map_err(RtschedError::new_err)?;
    let total = files.len();
    let done = AtomicUsize::new(0);
    let fin = interrupt::run(
        py,
        &stop,
        |_: &Outbox<'_, (), Vec<Option<Value>>>| {
            files
                .par_iter()
                .map(|(set, mi)| {
                    if stop.requested() {
                        return None;
                    }
                    // Selected above: the same call cannot fail here.
                    let r = dag_report_of(set, *mi, tests.as_deref(), &lim).ok()?;
                    done.fetch_add(1, Ordering::Relaxed);
                    (!stop.requested()).then_some(r)
                })
                .collect()
        },
        |_, ()| Ok(()),
        |py| tick(py, progress.as_ref(), done.load(Ordering::Relaxed), Some(total)),
    )?;
    let out = PyList::empty(py);
    for r in fin.result.iter() {
        match r {
            Some(r) => out.append(json_to_py(py, r)?)?,
            None => break,
        }
    }
    tick(py, progress.as_ref(), out.len(), Some(total))?;
    Ok((out, fin.interrupt.is_some()))
}

/// One set's report and, when asked, its overhead-aware object (or the error it gave).
type AnalyzedSet = (Report, Option<Result<serde_json::Value, String>>);

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

/// One set's row of the verdict table: utilization and the verdicts (None: stopped first).
type Row = Option<(f64, Vec<Verdict>)>;

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

/// An OS error's reason without Rust's "(os error N)" suffix.
pub(crate) fn os_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn u64s(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            u64::from_ne_bytes(a)
        })
        .collect()
}

/// analyze_columns(wcet, period, deadline, starts, ms, tests, max_steps, progress) -> dict
///
/// The array form: task parameters as native-endian `uint64` buffers (one entry per task, the
/// tasks of set `s` at `starts[s] .. starts[s+1]`; `deadline` None for implicit deadlines),
/// `ms` the processor count per set (`uint64`). Returns a dict of buffers, one entry per set:
/// "utilization" (`float64`), and per test NAME "NAME" (`uint8`, 1 when proved schedulable)
/// and "NAME_gave_up" (`uint8`). The first invalid task is an error naming its row and set.
/// Ctrl-C raises `KeyboardInterrupt` (a verdict table has no partial form).
#[pyfunction]
#[pyo3(signature = (wcet, period, deadline, starts, ms, tests, max_steps, progress=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn analyze_columns<'py>(
    py: Python<'py>,
    wcet: &Bound<'py, PyBytes>,
    period: &Bound<'py, PyBytes>,
    deadline: Option<Bound<'py, PyBytes>>,
    starts: &Bound<'py, PyBytes>,
    ms: &Bound<'py, PyBytes>,
    tests: Option<Vec<String>>,
    max_steps: u64,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    let stop = Stop::new();
    let lim = limits(max_steps, &stop)?;
    let tests = Tests::new(tests.as_deref())?;
    let (c, t) = (u64s(wcet.as_bytes()), u64s(period.as_bytes()));
    let d = deadline.as_ref().map(|d| u64s(d.as_bytes()));
    let starts = u64s(starts.as_bytes());
    let ms = u64s(ms.as_bytes());
    let rows = c.len();
    if t.len() != rows || d.as_ref().is_some_and(|d| d.len() != rows) {
        return Err(RtschedError::new_err("the wcet, period and deadline columns differ in length"));
    }
    let sets = starts.len().saturating_sub(1);
    if ms.len() != sets || starts.first() != Some(&0) || starts.last() != Some(&(rows as u64)) {
        return Err(RtschedError::new_err("internal error: malformed set offsets"));
    }
    let mut selected: Vec<&[TestId]> = Vec::with_capacity(sets);
    let mut mv: Vec<u32> = Vec::with_capacity(sets);
    for (s, &m) in ms.iter().enumerate() {
        let m = check_m(m).map_err(|e| RtschedError::new_err(format!("set {s}: {e}")))?;
        selected.push(tests.for_m(m).map_err(|e| RtschedError::new_err(format!("set {s}: {e}")))?);
        mv.push(m);
    }
    let names: Vec<TestId> = match (&tests.multi, &tests.uni) {
        (Ok(v), _) | (Err(_), Ok(v)) => v.clone(),
        (Err(e), Err(_)) => return Err(err(e.clone())),
    };
    let done = AtomicUsize::new(0);
    let fin = interrupt::run(
        py,
        &stop,
        |_: &Outbox<'_, (), Result<Vec<Row>, String>>| {
            (0..sets)
                .into_par_iter()
                .map(|s| {
                    if stop.requested() {
                        return Ok(None);
                    }
                    let (a, b) = (starts[s] as usize, starts[s + 1] as usize);
                    if a > b {
                        return Err("internal error: malformed set offsets".to_string());
                    }
                    let tasks: Vec<Task> = (a..b)
                        .map(|r| {
                            let task = Task {
                                name: None,
                                wcet: c[r],
                                period: t[r],
                                deadline: d.as_ref().map_or(t[r], |d| d[r]),
                                segments: None,
                            };
                            task.validate()
                                .map(|()| task)
                                .map_err(|e| format!("row {r} (set {s}, task {}): {e}", r - a))
                        })
                        .collect::<Result<_, _>>()?;
                    let ts = RTaskSet::new(tasks).map_err(|e| format!("set {s}: {e}"))?;
                    let v: Vec<Verdict> =
                        selected[s].iter().map(|&x| report::verdict(x, &ts, mv[s], &lim, 0)).collect();
                    done.fetch_add(1, Ordering::Relaxed);
                    Ok(Some((ts.utilization_f64(), v)))
                })
                .collect()
        },
        |_, ()| Ok(()),
        |py| tick(py, progress.as_ref(), done.load(Ordering::Relaxed), Some(sets)),
    )?;
    if let Some(e) = fin.interrupt {
        return Err(e);
    }
    let rows_out = fin.result.map_err(RtschedError::new_err)?;
    let out = PyDict::new(py);
    let mut util = Vec::with_capacity(sets * 8);
    let mut cols: Vec<(Vec<u8>, Vec<u8>)> = vec![(Vec::with_capacity(sets), Vec::with_capacity(sets)); names.len()];
    for (s, r) in rows_out.iter().enumerate() {
        let Some((u, v)) = r else { return Err(RtschedError::new_err("internal error: a set was not analysed")) };
        util.extend_from_slice(&u.to_ne_bytes());
        for (j, name) in names.iter().enumerate() {
            let verdict = selected[s].iter().position(|x| x == name).map(|p| v[p]);
            cols[j].0.push(u8::from(verdict == Some(Verdict::Schedulable)));
            cols[j].1.push(u8::from(verdict == Some(Verdict::GaveUp)));
        }
    }
    out.set_item("utilization", PyBytes::new(py, &util))?;
    for (name, (sched, gave)) in names.iter().zip(cols) {
        out.set_item(name.name(), PyBytes::new(py, &sched))?;
        out.set_item(format!("{}_gave_up", name.name()), PyBytes::new(py, &gave))?;
    }
    tick(py, progress.as_ref(), sets, Some(sets))?;
    Ok(out)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(analyze_sets, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_dag_sets, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_file, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_columns, m)?)?;
    Ok(())
}
