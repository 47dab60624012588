//! Bindings of generation, placement (`rtsched_analysis::placing`) and sweep points
//! (`rtsched_analysis::sweep`): conversions only.

use crate::taskset::TaskSet;
use crate::{err, guarded, RtschedError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use rtsched_analysis::{placing, report, semi, sweep, Limits, Verdict};
use rtsched_model::ModelError;

/// `suspension_ratio` / `suspension_segments` as a generator of self-suspension, or None.
fn suspension_gen(ratio: Option<&str>, segments: usize) -> Result<Option<rtsched_gen::SuspensionGen>, ModelError> {
    ratio.map(|r| rtsched_gen::SuspensionGen::parse(r, segments)).transpose()
}

/// Task set `i` of stream `seed`, with suspension added when `susp` is given
/// (`rtsched_gen::add_suspension`, the same stream and index).
fn generate_one(
    spec: &rtsched_gen::GenSpec,
    susp: Option<&rtsched_gen::SuspensionGen>,
    seed: u64,
    i: u64,
) -> Result<rtsched_model::TaskSet, ModelError> {
    let ts = rtsched_gen::generate(spec, seed, i)?;
    match susp {
        Some(g) => rtsched_gen::add_suspension(&ts, g, seed, i),
        None => Ok(ts),
    }
}

/// generate(n, util, generator, periods, umax, deadlines, seed, count, m, suspension_ratio,
/// suspension_segments) -> list[TaskSet]
#[pyfunction]
#[pyo3(signature = (n, util, generator, periods, umax, deadlines, seed, count, m=None, suspension_ratio=None, suspension_segments=2))]
#[allow(clippy::too_many_arguments)]
fn generate(
    py: Python<'_>,
    n: Option<usize>,
    util: f64,
    generator: &str,
    periods: &str,
    umax: f64,
    deadlines: &str,
    seed: u64,
    count: usize,
    m: Option<u32>,
    suspension_ratio: Option<&str>,
    suspension_segments: usize,
) -> PyResult<Vec<TaskSet>> {
    if let Some(m) = m {
        check_m(m).map_err(err)?;
    }
    let susp = suspension_gen(suspension_ratio, suspension_segments).map_err(err)?;
    let sets = guarded(py, || {
        let spec = sweep::gen_spec(n, util, generator, periods, umax, deadlines).map_err(err)?;
        let sets = rtsched_gen::generate_many(&spec, seed, count).map_err(err)?;
        match &susp {
            None => Ok(sets),
            Some(g) => sets
                .into_par_iter()
                .enumerate()
                .map(|(i, ts)| rtsched_gen::add_suspension(&ts, g, seed, i as u64))
                .collect::<Result<Vec<_>, _>>()
                .map_err(err),
        }
    })?;
    Ok(sets.into_iter().map(|s| TaskSet::wrap(s, m)).collect())
}

/// generate_stream(n, util, generator, periods, umax, deadlines, seed, count, m, write,
/// progress, suspension_ratio, suspension_segments) -> (int, bool)
///
/// `rtsched generate --count K`: task sets `0..count` of stream `seed`, generated in parallel
/// in chunks and handed to `write(text)` as JSON Lines one chunk at a time, so that memory
/// stays bounded whatever `count` is. Returns the number written and whether Ctrl-C stopped
/// it (what was written before stays written). `progress(done, total)` every 50 ms.
#[pyfunction]
#[pyo3(signature = (n, util, generator, periods, umax, deadlines, seed, count, m, write, progress=None, suspension_ratio=None, suspension_segments=2))]
#[allow(clippy::too_many_arguments)]
fn generate_stream(
    py: Python<'_>,
    n: Option<usize>,
    util: f64,
    generator: &str,
    periods: &str,
    umax: f64,
    deadlines: &str,
    seed: u64,
    count: u64,
    m: Option<u64>,
    write: PyObject,
    progress: Option<PyObject>,
    suspension_ratio: Option<&str>,
    suspension_segments: usize,
) -> PyResult<(u64, bool)> {
    let m = m.map(|m| rtsched_model::check_m(m).map_err(err)).transpose()?;
    let susp = suspension_gen(suspension_ratio, suspension_segments).map_err(err)?;
    let spec = sweep::gen_spec(n, util, generator, periods, umax, deadlines).map_err(err)?;
    let stop = rtsched_model::Stop::new();
    let done = std::sync::atomic::AtomicU64::new(0);
    let mut written = 0u64;
    let Some(mut sink) = crate::interrupt::Sink::new(Some(write), py)? else {
        return Err(RtschedError::new_err("argument 'write': required"));
    };
    let fin = crate::interrupt::run(
        py,
        &stop,
        |out: &crate::interrupt::Outbox<'_, (String, u64), Result<(), ModelError>>| {
            let mut start = 0u64;
            let mut chunk = 256u64;
            while start < count && !stop.requested() {
                let end = start.saturating_add(chunk).min(count);
                let sets: Vec<Option<Result<String, ModelError>>> = (start..end)
                    .into_par_iter()
                    .map(|i| {
                        if stop.requested() {
                            return None;
                        }
                        let r = generate_one(&spec, susp.as_ref(), seed, i).map(|ts| {
                            let mut s = String::with_capacity(64 * ts.len());
                            rtsched_model::io::write_json(&mut s, &ts, m);
                            s.push('\n');
                            s
                        });
                        done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        Some(r)
                    })
                    .collect();
                let mut text = String::new();
                let mut k = 0u64;
                for s in sets {
                    match s {
                        Some(Ok(line)) => {
                            text.push_str(&line);
                            k += 1;
                        }
                        Some(Err(e)) => return Err(e),
                        None => break,
                    }
                }
                if !out.send((text, k)) || k < end - start {
                    return Ok(());
                }
                start = end;
                chunk = (chunk * 2).min(16_384);
            }
            Ok(())
        },
        |py, (text, k): (String, u64)| {
            sink.write(py, text.as_bytes())?;
            written += k;
            Ok(())
        },
        |py| match &progress {
            Some(cb) => cb.call1(py, (done.load(std::sync::atomic::Ordering::Relaxed), count)).map(|_| ()),
            None => Ok(()),
        },
    )?;
    fin.result.map_err(err)?;
    Ok((written, fin.interrupt.is_some()))
}

/// test_names() -> list[str]
#[pyfunction]
fn test_names() -> Vec<&'static str> {
    report::TEST_NAMES.to_vec()
}

fn check_m(m: u32) -> Result<u32, ModelError> {
    rtsched_model::check_m(m as u64)
}

/// partition(ts, m, heuristic, admission, epsilon, meta, variant="artifact", rp=None,
/// rp_floor=None, slice_order="flipped", merge_same_core=False, overheads=None,
/// mechanism=None, overheads_label=None, stat=None, cpd=0, quantum=1ms, extrapolate=False)
/// -> str (placement JSON). With `overheads` (model text) and `mechanism` (spres): the
/// SP-RES cascade on the set inflated by the model (`placing::place_with_overheads`).
#[pyfunction]
#[pyo3(signature = (ts, m, heuristic, admission, epsilon, meta, variant="artifact", rp=None, rp_floor=None,
                    slice_order="flipped", merge_same_core=false, overheads=None, mechanism=None,
                    overheads_label=None, stat=None, cpd=0, quantum=1_000_000, extrapolate=false))]
#[allow(clippy::too_many_arguments)]
fn partition(
    py: Python<'_>,
    ts: TaskSet,
    m: u32,
    heuristic: &str,
    admission: &str,
    epsilon: u64,
    meta: bool,
    variant: &str,
    rp: Option<&str>,
    rp_floor: Option<u64>,
    slice_order: &str,
    merge_same_core: bool,
    overheads: Option<&str>,
    mechanism: Option<&str>,
    overheads_label: Option<&str>,
    stat: Option<&str>,
    cpd: u64,
    quantum: u64,
    extrapolate: bool,
) -> PyResult<String> {
    let stop = rtsched_model::Stop::new();
    let lim = Limits { stop: stop.clone(), ..Limits::default() };
    let (out, interrupted) = crate::interrupt::stoppable(py, &stop, || {
        let mut cfg = placing::semi_config(epsilon, meta, variant, rp, rp_floor).map_err(err)?;
        cfg.slice_order = semi::SliceOrder::parse(slice_order).map_err(err)?;
        cfg.merge_same_core = merge_same_core;
        cfg.limits.stop = stop.clone(); // SP-RES polls its own limits
        match (overheads, mechanism) {
            (None, None) => placing::place(&ts.inner, m, heuristic, admission, &cfg, &lim)
                .map(|p| p.to_json().to_string())
                .map_err(err),
            (Some(text), Some(mech)) => {
                check_m(m).map_err(err)?;
                let cfg = placing::overhead_cascade(heuristic, &cfg).map_err(err)?;
                let params = rtsched_analysis::overheads::Params { cpd, quantum };
                placing::place_with_overheads(
                    &ts.inner,
                    m,
                    mech,
                    text,
                    overheads_label,
                    stat,
                    &params,
                    extrapolate,
                    &cfg,
                )
                .map(|p| p.to_json().to_string())
                .map_err(err)
            }
            (Some(_), None) => Err(err(ModelError::field("mechanism", "required with overheads (spres)"))),
            (None, Some(_)) => {
                Err(err(ModelError::field("overheads", "a mechanism was named but no overhead model given")))
            }
        }
    })?;
    if interrupted {
        // A placement cut short is no placement: nothing to keep.
        return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err("partitioning interrupted"));
    }
    Ok(out)
}

/// acceptance(generator, periods, n, utils, m, count, seed, tests, max_steps) -> dict with
/// "accepted" and "gave_up": test -> list of counts, one per utilization.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn acceptance<'py>(
    py: Python<'py>,
    generator: &str,
    periods: &str,
    n: usize,
    utils: Vec<f64>,
    m: u32,
    count: usize,
    seed: u64,
    tests: Vec<String>,
    max_steps: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let res = guarded(py, || {
        sweep::acceptance(generator, periods, n, &utils, m, count, seed, &tests, &Limits::steps(max_steps)).map_err(err)
    })?;
    let d = PyDict::new(py);
    let a = PyDict::new(py);
    let g = PyDict::new(py);
    for ((name, counts), gv) in res.tests.iter().zip(res.accepted).zip(res.gave_up) {
        a.set_item(name, counts)?;
        g.set_item(name, gv)?;
    }
    d.set_item("accepted", a)?;
    d.set_item("gave_up", g)?;
    Ok(d)
}

/// check_point_names(generator, periods, deadlines, umax, methods, dag=None) -> None
///
/// Checks the names a sweep spec gives before any point runs (the experiment engine calls it
/// when the evaluator is the core's): the generator, period and deadline specifications, and
/// every method. With `dag` (the JSON text of the points' DAG generator object, docs/dag.md),
/// the DAG generator instead, and every method must be a DAG test. The error names the first
/// unknown one.
#[pyfunction]
#[pyo3(signature = (generator, periods, deadlines, umax, methods, dag=None))]
fn check_point_names(
    generator: &str,
    periods: &str,
    deadlines: &str,
    umax: f64,
    methods: Vec<String>,
    dag: Option<&str>,
) -> PyResult<()> {
    match dag {
        Some(text) => {
            let v = rtsched_model::json::parse(text).map_err(err)?;
            sweep::check_dag_names(&v, umax, &methods).map_err(err)
        }
        None => sweep::check_names(generator, periods, deadlines, umax, &methods).map_err(err),
    }
}

/// evaluate_point(point_json) -> dict of columns (docs/experiments.md): one row per
/// (task set, method): `set`, `method`, `schedulable`, `gave_up`, `switch_rate`,
/// `utilization` (`rtsched_analysis::sweep`).
#[pyfunction]
fn evaluate_point<'py>(py: Python<'py>, point_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let (req, res) = guarded(py, || {
        let req = sweep::PointRequest::from_json(point_json).map_err(err)?;
        let res = sweep::evaluate_point(&req, &req.limits()).map_err(err)?;
        Ok((req, res))
    })?;
    let (mut set, mut method, mut sched, mut gave, mut rate, mut util) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for (i, s) in res.sets.iter().enumerate() {
        for (name, row) in req.methods.iter().zip(&s.rows) {
            set.push(i);
            method.push(name.as_str());
            sched.push(row.verdict.decided());
            gave.push(row.verdict == Verdict::GaveUp);
            rate.push(row.switch_rate);
            util.push(s.utilization);
        }
    }
    let d = PyDict::new(py);
    d.set_item("set", set)?;
    d.set_item("method", method)?;
    d.set_item("schedulable", sched)?;
    d.set_item("gave_up", gave)?;
    d.set_item("switch_rate", rate)?;
    d.set_item("utilization", util)?;
    Ok(d)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(generate_stream, m)?)?;
    m.add_function(wrap_pyfunction!(test_names, m)?)?;
    m.add_function(wrap_pyfunction!(partition, m)?)?;
    m.add_function(wrap_pyfunction!(acceptance, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_point, m)?)?;
    m.add_function(wrap_pyfunction!(check_point_names, m)?)?;
    Ok(())
}
