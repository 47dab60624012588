//! Generation, analysis, placement and the experiment engine's batch calls.

use crate::taskset::TaskSet;
use crate::{err, guarded, RtschedError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use rtsched_analysis::partition::{partition as partition_tasks, Order, PartitionOutcome};
use rtsched_analysis::report;
use rtsched_analysis::{placing, semi, Limits, Verdict};
use rtsched_gen::{DeadlineGen, GenSpec, PeriodGen};
use rtsched_model::{ModelError, TaskSet as RTaskSet};
use serde_json::Value;

fn limits(max_steps: u64) -> Limits {
    Limits { max_steps, ..Limits::default() }
}

fn gen_spec(
    n: Option<usize>,
    util: f64,
    generator: &str,
    periods: &str,
    umax: f64,
    deadlines: &str,
) -> Result<GenSpec, ModelError> {
    let spec = GenSpec {
        util: rtsched_gen::util_gen_from_name(generator, n, util, umax)?,
        periods: PeriodGen::parse(periods)?,
        deadlines: DeadlineGen::parse(deadlines)?,
    };
    spec.validate()?;
    Ok(spec)
}

/// generate(n, util, generator, periods, umax, deadlines, seed, count, m) -> list[TaskSet]
#[pyfunction]
#[pyo3(signature = (n, util, generator, periods, umax, deadlines, seed, count, m=None))]
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
) -> PyResult<Vec<TaskSet>> {
    if let Some(m) = m {
        check_m(m).map_err(err)?;
    }
    let sets = guarded(py, || {
        let spec = gen_spec(n, util, generator, periods, umax, deadlines).map_err(err)?;
        rtsched_gen::generate_many(&spec, seed, count).map_err(err)
    })?;
    Ok(sets.into_iter().map(|s| TaskSet::wrap(s, m)).collect())
}

/// generate_stream(n, util, generator, periods, umax, deadlines, seed, count, m, write,
/// progress) -> (int, bool)
///
/// `rtsched generate --count K`: task sets `0..count` of stream `seed`, generated in parallel
/// in chunks and handed to `write(text)` as JSON Lines one chunk at a time, so that memory
/// stays bounded whatever `count` is. Returns the number written and whether Ctrl-C stopped
/// it (what was written before stays written). `progress(done, total)` every 50 ms.
#[pyfunction]
#[pyo3(signature = (n, util, generator, periods, umax, deadlines, seed, count, m, write, progress=None))]
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
) -> PyResult<(u64, bool)> {
    let m = m.map(|m| rtsched_model::check_m(m).map_err(err)).transpose()?;
    let spec = gen_spec(n, util, generator, periods, umax, deadlines).map_err(err)?;
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
                        let r = rtsched_gen::generate(&spec, seed, i).map(|ts| {
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
/// SP-RES cascade on the set inflated by the model (`crate::overheads::spres_placement`).
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
                crate::overheads::spres_placement(
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
                .map(|v| v.to_string())
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
    let (acc, gave) = guarded(py, || {
        check_m(m).map_err(err)?;
        let tests = report::resolve_tests(Some(&tests), m).map_err(err)?;
        let lim = limits(max_steps);
        let mut acc = vec![vec![0usize; utils.len()]; tests.len()];
        let mut gave = acc.clone();
        for (ui, &u) in utils.iter().enumerate() {
            let spec = gen_spec(Some(n), u, generator, periods, 1.0, "implicit").map_err(err)?;
            let sets = rtsched_gen::generate_many(&spec, seed, count).map_err(err)?;
            let verdicts: Vec<Vec<Verdict>> =
                sets.par_iter().map(|ts| tests.iter().map(|t| report::run_test(t, ts, m, &lim, 0)).collect()).collect();
            for v in &verdicts {
                for (ti, &verdict) in v.iter().enumerate() {
                    acc[ti][ui] += verdict.is_schedulable() as usize;
                    gave[ti][ui] += (verdict == Verdict::GaveUp) as usize;
                }
            }
        }
        Ok((tests.into_iter().zip(acc).collect::<Vec<_>>(), gave))
    })?;
    let d = PyDict::new(py);
    let a = PyDict::new(py);
    let g = PyDict::new(py);
    for ((name, counts), gv) in acc.into_iter().zip(gave) {
        a.set_item(&name, counts)?;
        g.set_item(&name, gv)?;
    }
    d.set_item("accepted", a)?;
    d.set_item("gave_up", g)?;
    Ok(d)
}

/// One method's outcome on one task set, for the experiment engine.
struct Row {
    verdict: Verdict,
    switch_rate: Option<f64>,
}

/// How the `switch_rate` column is computed (point keys `switch_rate` and `cascade_rate`,
/// docs/experiments.md).
#[derive(Clone, Copy, PartialEq, Eq)]
struct RateOpts {
    /// Per core: the largest core's bound (`"max-core"`, default) or the sum over the cores
    /// divided by m (`"mean-core"`, what the published scripts of Brandenburg & Gül, RTSS
    /// 2016, plot in Fig. 6).
    mean_core: bool,
    /// For the cascades (`spres-partition`, `spres-nometa`, `spres-paf`, `spres`): the rate of
    /// the first heuristic that places the set (`"first"`, default) or the smallest rate over
    /// every member that does (`"min"`, the published scripts' group aggregation).
    min_over_members: bool,
}

/// What the methods of one task set share: the whole cascade's placement (the cumulative
/// cascades read their answer off it) and, for `cascade_rate = "min"`, each heuristic's rate
/// (`None`: it does not place the set).
#[derive(Default)]
struct SetMemo {
    cascade: Option<semi::Placement>,
    rates: std::collections::HashMap<semi::Heuristic, Option<f64>>,
}

/// What every method of a point shares.
struct EvalCtx<'a> {
    m: u32,
    lim: Limits,
    epsilon: u64,
    semi_base: semi::SemiConfig,
    rate: RateOpts,
    ovh: Option<&'a crate::overheads::OverheadCtx>,
}

fn evaluate_method(method: &str, ts: &RTaskSet, ctx: &EvalCtx, memo: &mut SetMemo) -> Result<Row, ModelError> {
    let EvalCtx { m, ref lim, epsilon, ref semi_base, rate, ovh } = *ctx;
    // Overhead-aware methods `TEST@MECHANISM` (docs/overheads.md).
    if let Some(v) = crate::overheads::evaluate_method(method, ts, m, lim, ovh) {
        return v.map(|verdict| Row { verdict, switch_rate: None });
    }
    // One name per method in every spelling (rtsched_analysis::methods); the result rows keep the spec's.
    let canonical = rtsched_analysis::methods::resolve(method, &report::TEST_NAMES);
    if let Some((rtsched_analysis::methods::Method::Plain { fit, admission }, _)) = &canonical {
        let placed = partition_tasks(ts, m, *fit, Order::DecreasingUtilization, *admission, lim);
        return Ok(Row {
            verdict: Verdict::from_bool(matches!(placed, PartitionOutcome::Placed(_))),
            switch_rate: None,
        });
    }
    let method = canonical.as_ref().map_or(method, |(_, c)| c.as_str());
    let semi_cfg = |meta: bool| semi::SemiConfig { epsilon, meta, ..semi_base.clone() };
    let bound = |p: &semi::Placement| -> f64 {
        let per_cpu = p.switch_rate_bound();
        if rate.mean_core {
            per_cpu.iter().sum::<f64>() / per_cpu.len().max(1) as f64
        } else {
            per_cpu.into_iter().fold(0.0, f64::max)
        }
    };
    let placed = |p: semi::Placement| Row {
        verdict: Verdict::from_bool(p.schedulable),
        switch_rate: p.schedulable.then(|| bound(&p)),
    };
    if let Some(h) = semi::Heuristic::from_name(method) {
        return Ok(placed(semi::place(ts, m, &h, &semi_cfg(true))));
    }
    let upto = |last: semi::Group| rtsched_analysis::placing::cascade_upto(semi_base.variant, last);
    let mut group = |last: semi::Group, meta: bool| -> Row {
        let order = upto(last);
        let cfg = semi_cfg(meta);
        if !rate.min_over_members {
            // The groups are cumulative: the whole cascade, run once per set, says for every
            // group whether it places the set (its first success lies in that group or an
            // earlier one) and with which placement (that same first success).
            let full = memo.cascade.get_or_insert_with(|| semi::cascade_of(ts, m, &upto(semi::Group::Rp), &cfg));
            if full.schedulable && order.iter().any(|h| h.name() == full.heuristic) {
                return placed(full.clone());
            }
            return Row { verdict: Verdict::from_bool(false), switch_rate: None };
        }
        let rates: Vec<f64> = order
            .iter()
            .filter_map(|h| {
                *memo.rates.entry(*h).or_insert_with(|| {
                    let p = semi::place(ts, m, h, &cfg);
                    p.schedulable.then(|| bound(&p))
                })
            })
            .collect();
        Row { verdict: Verdict::from_bool(!rates.is_empty()), switch_rate: rates.into_iter().reduce(f64::min) }
    };
    match method {
        "spres" => Ok(group(semi::Group::Rp, true)),
        "spres-nometa" => Ok(group(semi::Group::Semi, false)),
        "spres-partition" => Ok(group(semi::Group::Partitioning, false)),
        "spres-paf" => Ok(group(semi::Group::Paf, true)),
        t if report::TEST_NAMES.contains(&t) => {
            Ok(Row { verdict: report::run_test(t, ts, m, lim, epsilon), switch_rate: None })
        }
        other => Err(unknown_method(other)),
    }
}

fn unknown_method(name: &str) -> ModelError {
    ModelError::field(
        "methods",
        format!("unknown method {name:?}: use one of the {}", rtsched_analysis::methods::help(&report::TEST_NAMES)),
    )
}

/// check_point_names(generator, periods, deadlines, umax, methods) -> None
///
/// Checks the names a sweep spec gives before any point runs (the experiment engine calls it
/// when the evaluator is the core's): the generator, period and deadline specifications, and
/// every method. The error names the first unknown one.
#[pyfunction]
fn check_point_names(generator: &str, periods: &str, deadlines: &str, umax: f64, methods: Vec<String>) -> PyResult<()> {
    rtsched_gen::util_gen_from_name(generator, Some(1), umax.min(1.0) / 2.0, umax).map_err(err)?;
    PeriodGen::parse(periods).map_err(err)?;
    DeadlineGen::parse(deadlines).map_err(err)?;
    for m in &methods {
        if let Some(r) = crate::overheads::check_method(m) {
            r.map_err(err)?;
            continue;
        }
        // The names evaluate_method resolves (rtsched_analysis::methods: any spelling).
        if rtsched_analysis::methods::resolve(m, &report::TEST_NAMES).is_none() {
            return Err(err(unknown_method(m)));
        }
    }
    Ok(())
}

/// Bounds of one sweep point (docs/experiments.md): its sets are held in memory together.
const MAX_POINT_N: u64 = 1_000_000;
const MAX_POINT_SETS: u64 = 1_000_000;
const MAX_POINT_TASKS: u64 = 50_000_000;

/// evaluate_point(point_json) -> dict of columns (docs/experiments.md): one row per
/// (task set, method).
#[pyfunction]
fn evaluate_point<'py>(py: Python<'py>, point_json: &str) -> PyResult<Bound<'py, PyDict>> {
    let rows = guarded(py, || {
        let p: Value = rtsched_model::json::parse(point_json)
            .map_err(|e| RtschedError::new_err(format!("evaluate_point: {e}")))?;
        let get =
            |k: &str| p.get(k).ok_or_else(|| RtschedError::new_err(format!("evaluate_point: field '{k}': missing")));
        let as_u64 = |k: &str| -> PyResult<u64> {
            get(k)?.as_u64().ok_or_else(|| {
                RtschedError::new_err(format!("evaluate_point: field '{k}': expected a non-negative integer"))
            })
        };
        let as_str =
            |k: &str, d: &str| -> PyResult<String> { Ok(p.get(k).and_then(Value::as_str).unwrap_or(d).to_owned()) };
        let m = rtsched_model::check_m(as_u64("m")?).map_err(err)?;
        // `"n": null`: the Baker distributions add tasks until `util` is exceeded and drop the
        // last (Brandenburg & Anderson, RTSS 2009, §4.2); the other generators need n. Bounds
        // before anything is allocated: a point holds count sets of n tasks in memory.
        let n = match p.get("n") {
            Some(Value::Null) => None,
            _ => {
                let n = as_u64("n")?;
                if n == 0 || n > MAX_POINT_N {
                    return Err(RtschedError::new_err(format!(
                        "evaluate_point: field 'n': must be in 1..={MAX_POINT_N}, got {n}"
                    )));
                }
                Some(n as usize)
            }
        };
        let util = get("util")?
            .as_f64()
            .ok_or_else(|| RtschedError::new_err("evaluate_point: field 'util': expected a number"))?;
        let umax = p.get("umax").and_then(Value::as_f64).unwrap_or(1.0);
        let count = as_u64("count")?;
        if count == 0 || count > MAX_POINT_SETS || count.saturating_mul(n.map_or(1, |n| n as u64)) > MAX_POINT_TASKS {
            return Err(RtschedError::new_err(format!(
                "evaluate_point: field 'count': {count} sets of {} tasks exceed the bound of a point ({MAX_POINT_SETS} sets, {MAX_POINT_TASKS} tasks in all)",
                n.map_or("auto".to_string(), |n| n.to_string())
            )));
        }
        let count = count as usize;
        let seed = as_u64("seed")?;
        let epsilon = p.get("epsilon").and_then(Value::as_u64).unwrap_or(0);
        // SP-RES options (docs/experiments.md): the reading, the RP mode and floor.
        let opt_str = |k: &str| -> PyResult<Option<&str>> {
            match p.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.as_str())),
                Some(_) => Err(RtschedError::new_err(format!("evaluate_point: field '{k}': expected a string"))),
            }
        };
        let rp_floor = match p.get("rp_floor") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| {
                RtschedError::new_err("evaluate_point: field 'rp_floor': expected a non-negative integer (ns)")
            })?),
        };
        let semi_base =
            placing::semi_config(epsilon, true, opt_str("variant")?.unwrap_or("artifact"), opt_str("rp")?, rp_floor)
                .map_err(|e| RtschedError::new_err(format!("evaluate_point: {e}")))?;
        let rate = RateOpts {
            mean_core: match opt_str("switch_rate")? {
                None | Some("max-core") => false,
                Some("mean-core") => true,
                Some(o) => {
                    return Err(RtschedError::new_err(format!(
                        "evaluate_point: field 'switch_rate': {o:?} is neither \"max-core\" nor \"mean-core\""
                    )))
                }
            },
            min_over_members: match opt_str("cascade_rate")? {
                None | Some("first") => false,
                Some("min") => true,
                Some(o) => {
                    return Err(RtschedError::new_err(format!(
                        "evaluate_point: field 'cascade_rate': {o:?} is neither \"first\" nor \"min\""
                    )))
                }
            },
        };
        let max_steps = p.get("max_steps").and_then(Value::as_u64).unwrap_or(1_000_000);
        let methods: Vec<String> = get("methods")?
            .as_array()
            .ok_or_else(|| RtschedError::new_err("evaluate_point: field 'methods': expected a list"))?
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| RtschedError::new_err("evaluate_point: field 'methods': expected strings"))
            })
            .collect::<PyResult<_>>()?;
        let spec = gen_spec(
            n,
            util,
            &as_str("generator", "randfixedsum")?,
            &as_str("periods", "seed004")?,
            umax,
            &as_str("deadlines", "implicit")?,
        )
        .map_err(err)?;
        let sets = rtsched_gen::generate_many(&spec, seed, count).map_err(err)?;
        let ovh = crate::overheads::ctx_of_point(&p, m, &sets)?;
        let ctx = EvalCtx { m, lim: limits(max_steps), epsilon, semi_base, rate, ovh: ovh.as_ref() };
        // Fail fast on an unknown method, before the parallel part.
        if let Some(ts) = sets.first() {
            for meth in &methods {
                evaluate_method(meth, ts, &ctx, &mut SetMemo::default()).map_err(err)?;
            }
        }
        let rows: Vec<Vec<Row>> = sets
            .par_iter()
            .map(|ts| {
                let mut memo = SetMemo::default();
                methods
                    .iter()
                    .map(|meth| {
                        evaluate_method(meth, ts, &ctx, &mut memo)
                            .unwrap_or(Row { verdict: Verdict::GaveUp, switch_rate: None })
                    })
                    .collect()
            })
            .collect();
        let utils: Vec<f64> = sets.iter().map(RTaskSet::utilization_f64).collect();
        Ok((rows, utils, methods))
    })?;
    let (rows, utils, methods) = rows;
    let (mut set, mut method, mut sched, mut gave, mut rate, mut util) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for (i, r) in rows.iter().enumerate() {
        for (j, row) in r.iter().enumerate() {
            set.push(i);
            method.push(methods[j].clone());
            sched.push(row.verdict.decided());
            gave.push(row.verdict == Verdict::GaveUp);
            rate.push(row.switch_rate);
            util.push(utils[i]);
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
