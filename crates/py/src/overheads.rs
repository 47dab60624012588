//! Overhead-aware analysis for Python and the CLI (docs/overheads.md): `rtsched analyze
//! --overheads MODEL --mechanism NAME`, the mechanism table and the model reader. The sweep
//! methods `TEST@MECHANISM` are evaluated by `rtsched_analysis::sweep`.

use crate::taskset::TaskSet;
use crate::{err, RtschedError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use rtsched_analysis::global::GlobalTest;
use rtsched_analysis::overheads::{self as oh, Inflation, Mechanism, Mode, Params, MECHANISMS};
use rtsched_analysis::{Limits, Verdict};
use rtsched_model::overheads::{Extrapolation, OverheadModel, OverheadSpec, OverheadStat, Overheads, Term};
use rtsched_model::{ModelError, TaskSet as RTaskSet};
use serde_json::{json, Value};

fn inflated_u(ts: &RTaskSet, m: u32, mech: &Mechanism, v: &Overheads, p: &Params, mode: Mode) -> Value {
    match oh::inflate(ts, m, mech, v, p, mode) {
        Ok(Inflation::Done(i)) => json!(i.tasks.utilization_f64()),
        _ => Value::Null,
    }
}

/// The `overheads` object of one task set's `analyze` report (docs/cli.md).
#[allow(clippy::too_many_arguments)]
pub(crate) fn report(
    ts: &RTaskSet,
    m: u32,
    mech: &Mechanism,
    spec: &OverheadSpec,
    stat: Option<OverheadStat>,
    params: &Params,
    extrapolate: bool,
    lim: &Limits,
) -> Result<Value, ModelError> {
    mech.check_m(m)?;
    let (hs, ss) = oh::stats(stat);
    let hv = oh::values(spec, ts, m, mech, hs, extrapolate);
    let sv = oh::values(spec, ts, m, mech, ss, extrapolate);
    let hard = oh::hard(ts, m, mech, &hv, params, &GlobalTest::COMBINED_ORDER, lim)?;
    let soft = oh::soft(ts, m, mech, &sv, params, lim)?;
    let terms = mech.rule.terms();
    let how = |st: OverheadStat| match spec {
        OverheadSpec::Model(model) if extrapolate => {
            json!(model.extrapolation_report(ts.len(), st, &mech.extrapolation(m)))
        }
        _ => Value::Null,
    };
    let side = |j: &oh::Judged, st: OverheadStat, v: &Overheads, mode: Mode| {
        json!({
            "stat": st.name(),
            "schedulable": j.verdict.decided(),
            "gave_up": j.verdict == Verdict::GaveUp,
            "reason": j.reason,
            "values": v.to_json_terms(terms),
            "utilization": inflated_u(ts, m, mech, v, params, mode),
            "extrapolation": how(st),
        })
    };
    let mut notes = Vec::new();
    let (model_scheduler, model_m, machine) = match spec {
        OverheadSpec::Model(model) => (model.scheduler.clone(), model.m, model.machine.clone()),
        OverheadSpec::Constant(_) => (None, None, None),
    };
    if let Some(s) = model_scheduler.as_deref().filter(|&s| s != mech.model) {
        notes.push(format!(
            "the model was measured under {s}, analysed as {} (whose model is {})",
            mech.name, mech.model
        ));
    }
    let cap = mech.capacity(m);
    let contended = mech.contended.iter().map(|t| t.symbol()).collect::<Vec<_>>().join(", ");
    if let Some(mm) = model_m.filter(|&mm| mm != cap) {
        notes.push(if extrapolate && cap > mm && !mech.contended.is_empty() {
            format!(
                "the model was measured on {mm} scheduling processors, analysed on {cap}: an extrapolation, not a measurement; the maxima of the contended terms ({contended}) are scaled by {cap}/{mm}, {}",
                if mech.averages_contended {
                    "and so are their averages (one global lock: Cerqueira, Vanga & Brandenburg, RTAS 2014, §II-B); other averages are not scaled"
                } else {
                    "averages are not scaled (Cerqueira, Vanga & Brandenburg, RTAS 2014, §IV-B)"
                }
            )
        } else {
            format!("the model was measured on {mm} scheduling processors; analysed on {cap} with its values (not scaled)")
        });
    }
    if let OverheadSpec::Model(model) = spec {
        let max_n = model.max_n() as usize;
        if ts.len() > max_n {
            notes.push(if extrapolate {
                let trend = model
                    .extrapolation_report(ts.len(), OverheadStat::Max, &mech.extrapolation(m))
                    .into_iter()
                    .filter(|e| e.beyond == rtsched_model::overheads::BeyondRule::Trend && e.beyond_measured_n)
                    .map(|e| format!("{} +{:.0} ns/task", e.term.symbol(), e.slope_ns_per_task))
                    .collect::<Vec<_>>();
                format!(
                    "n = {} is beyond the measured n (up to {max_n}): averages and uncontended maxima are held at their last measured value{}",
                    ts.len(),
                    if trend.is_empty() {
                        String::new()
                    } else {
                        format!("; maxima of contended terms follow their least-squares trend over all measured points ({})", trend.join(", "))
                    }
                )
            } else {
                format!("n = {} is beyond the measured n (up to {max_n}): every term is held at its last measured value", ts.len())
            });
        }
    }
    notes.extend(rtsched_analysis::placing::charge_notes(spec, mech.rule, params));
    Ok(json!({
        "mechanism": mech.name,
        "label": mech.label,
        "rule": mech.rule.name(),
        "source": mech.source,
        "capacity": cap,
        "model": {"source": spec.source(), "scheduler": model_scheduler, "m": model_m, "machine": machine,
                  "extrapolated": extrapolate},
        "cpd_ns": params.cpd,
        "quantum_ns": params.quantum,
        "hard": side(&hard, hs, &hv, Mode::Hard),
        "soft": side(&soft, ss, &sv, Mode::Soft),
        "notes": notes,
    }))
}

/// The overhead part of an `analyze` request, read once: the mechanism's rule, the model, the
/// statistic and the rule's parameters (`rtsched analyze --overheads MODEL --mechanism NAME`).
pub(crate) struct OverheadRequest {
    mech: &'static Mechanism,
    spec: OverheadSpec,
    stat: Option<OverheadStat>,
    params: Params,
    extrapolate: bool,
}

/// `(model_text, mechanism, stat, cpd, quantum, extrapolate)`, as the bindings receive it.
pub(crate) type OverheadArgs = (String, String, Option<String>, u64, u64, bool);

impl OverheadRequest {
    pub(crate) fn new(a: &OverheadArgs) -> Result<OverheadRequest, ModelError> {
        let (model_text, mechanism, stat, cpd, quantum, extrapolate) = a;
        let mech = oh::mechanism(mechanism)?;
        let spec = OverheadSpec::from_json(model_text)?;
        let stat = stat.as_deref().map(OverheadStat::parse).transpose()?;
        let params = Params { cpd: *cpd, quantum: *quantum };
        params.validate()?;
        Ok(OverheadRequest { mech, spec, stat, params, extrapolate: *extrapolate })
    }

    /// The `overheads` object of one task set's report.
    pub(crate) fn report(&self, ts: &RTaskSet, m: u32, lim: &Limits) -> Result<Value, ModelError> {
        report(ts, m, self.mech, &self.spec, self.stat, &self.params, self.extrapolate, lim)
    }
}

/// analyze_overheads(sets, ms, model_text, mechanism, stat, cpd, quantum, extrapolate,
/// max_steps) -> list[str]: the `overheads` object of each set's report, as JSON.
#[pyfunction]
#[pyo3(signature = (sets, ms, model_text, mechanism, stat=None, cpd=0, quantum=1_000_000, extrapolate=false, max_steps=1_000_000))]
#[allow(clippy::too_many_arguments)]
fn analyze_overheads(
    py: Python<'_>,
    sets: Vec<TaskSet>,
    ms: Vec<u32>,
    model_text: &str,
    mechanism: &str,
    stat: Option<&str>,
    cpd: u64,
    quantum: u64,
    extrapolate: bool,
    max_steps: u64,
) -> PyResult<Vec<String>> {
    if sets.len() != ms.len() {
        return Err(RtschedError::new_err("analyze_overheads: one m per task set is required"));
    }
    // Ctrl-C stops the tests (they poll `lim.stop`) within a fraction of a second; a report
    // cut short is no report, so the interrupt is raised with nothing kept.
    let stop = rtsched_model::Stop::new();
    let (out, interrupted) = crate::interrupt::stoppable(py, &stop, || {
        let mech = oh::mechanism(mechanism).map_err(err)?;
        let spec = OverheadSpec::from_json(model_text).map_err(err)?;
        let stat = stat.map(OverheadStat::parse).transpose().map_err(err)?;
        let params = Params { cpd, quantum };
        params.validate().map_err(err)?;
        let lim = Limits { max_steps, stop: stop.clone(), ..Limits::default() };
        sets.par_iter()
            .zip(ms.par_iter())
            .map(|(ts, &m)| {
                if stop.requested() {
                    return Ok(String::new());
                }
                report(&ts.inner, m, mech, &spec, stat, &params, extrapolate, &lim).map(|v| v.to_string()).map_err(err)
            })
            .collect::<PyResult<Vec<String>>>()
    })?;
    if interrupted {
        return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err("overhead-aware analysis interrupted"));
    }
    Ok(out)
}

/// inflate_budgets(ts, m, mechanism, model_text, label=None, stat=None, cpd=0, quantum=1ms,
/// extrapolate=False) -> dict: RUN's or QPS's server budgets inflated by the model's overheads
/// (`rtsched_analysis::placing::budgets_with_overheads`; `rtsched run --inflate`).
#[pyfunction]
#[pyo3(signature = (ts, m, mechanism, model_text, label=None, stat=None, cpd=0, quantum=1_000_000, extrapolate=false))]
#[allow(clippy::too_many_arguments)]
fn inflate_budgets(
    py: Python<'_>,
    ts: &TaskSet,
    m: u32,
    mechanism: &str,
    model_text: &str,
    label: Option<&str>,
    stat: Option<&str>,
    cpd: u64,
    quantum: u64,
    extrapolate: bool,
) -> PyResult<PyObject> {
    let params = Params { cpd, quantum };
    let v = rtsched_analysis::placing::budgets_with_overheads(
        &ts.inner,
        m,
        mechanism,
        model_text,
        label,
        stat,
        &params,
        extrapolate,
    )
    .map_err(err)?;
    crate::convert::json_to_py(py, &v)
}

/// overhead_mechanisms() -> list[dict]: the mechanism table (name, label, rule, model,
/// in_runtime, dedicated_cpu, terms, contended, source).
#[pyfunction]
fn overhead_mechanisms(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    MECHANISMS
        .iter()
        .map(|m| {
            let d = PyDict::new(py);
            d.set_item("name", m.name)?;
            d.set_item("label", m.label)?;
            d.set_item("rule", m.rule.name())?;
            d.set_item("model", m.model)?;
            d.set_item("in_runtime", m.in_runtime)?;
            d.set_item("dedicated_cpu", m.rule.dedicated_cpu())?;
            d.set_item("terms", m.rule.terms().iter().map(|t| t.name()).collect::<Vec<_>>())?;
            d.set_item("contended", m.contended.iter().map(|t| t.name()).collect::<Vec<_>>())?;
            d.set_item("averages_contended", m.averages_contended)?;
            d.set_item("source", m.source)?;
            Ok(d)
        })
        .collect()
}

/// overhead_terms() -> list[dict]: the term vocabulary (name, symbol, kind, description).
#[pyfunction]
fn overhead_terms(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    Term::ALL
        .iter()
        .map(|t| {
            let d = PyDict::new(py);
            d.set_item("name", t.name())?;
            d.set_item("symbol", t.symbol())?;
            d.set_item("kind", t.kind().name())?;
            d.set_item("description", t.description())?;
            Ok(d)
        })
        .collect()
}

/// read_overhead_model(text) -> dict: validates a measured model (one-line errors naming the
/// field) and returns its scheduler, m, machine, interrupted flag and measured terms.
#[pyfunction]
fn read_overhead_model<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    let model = OverheadModel::from_json(text).map_err(err)?;
    let d = PyDict::new(py);
    d.set_item("scheduler", model.scheduler.clone())?;
    d.set_item("m", model.m)?;
    d.set_item("machine", model.machine.clone())?;
    d.set_item("interrupted", model.interrupted)?;
    d.set_item("terms", model.measured_terms().iter().map(|t| t.name()).collect::<Vec<_>>())?;
    d.set_item("max_n", model.max_n())?;
    // Models built from published numbers name their source (docs/overheads.md).
    let source = model.provenance.as_ref().and_then(|p| p.get("source")).and_then(Value::as_str).map(str::to_owned);
    d.set_item("published", source)?;
    Ok(d)
}

/// describe_overhead_model(text, mechanism=None, m=None, n=None) -> dict: what `rtsched
/// overheads show` prints and draws (docs/overheads.md, "Within and beyond the measured range"):
/// the model's metadata, `protocol` and `provenance`; per measured term its points with every
/// column the file has, the fitted least-squares slope of each statistic, and the rule used beyond
/// the measured n (for `mechanism`, default the model's own `scheduler`); and `curve`: both
/// statistics evaluated on a grid up to `n` (default twice the largest measured n), extrapolated
/// for the mechanism on `m` processors (default the model's: nothing scaled). Without a known
/// mechanism nothing is contended and every term is held beyond its last point.
#[pyfunction]
#[pyo3(signature = (text, mechanism=None, m=None, n=None))]
fn describe_overhead_model(
    py: Python<'_>,
    text: &str,
    mechanism: Option<&str>,
    m: Option<u32>,
    n: Option<usize>,
) -> PyResult<PyObject> {
    let model = OverheadModel::from_json(text).map_err(err)?;
    let mech = match mechanism {
        Some(name) => Some(oh::mechanism(name).map_err(err)?),
        None => model.scheduler.as_deref().and_then(|s| MECHANISMS.iter().find(|x| x.name == s || x.model == s)),
    };
    if let (Some(mech), Some(m)) = (mech, m) {
        mech.check_m(m).map_err(err)?;
    }
    let ext = match (mech, m) {
        (Some(mech), Some(m)) => mech.extrapolation(m),
        (Some(mech), None) => Extrapolation { m: None, ..mech.extrapolation(1) },
        (None, _) => Extrapolation { beyond_n: true, ..Extrapolation::default() },
    };
    let max_n = model.max_n() as usize;
    let upto = n.unwrap_or(2 * max_n).clamp(1, 1_000_000);
    let grid: Vec<usize> = {
        let steps = 64usize;
        let mut g: Vec<usize> = (0..=steps).map(|i| 1 + (upto - 1) * i / steps).collect();
        g.extend(model.terms.iter().flatten().flat_map(|t| t.n.iter().map(|&x| x as usize)).filter(|&x| x <= upto));
        g.sort_unstable();
        g.dedup();
        g
    };
    let report = |st: OverheadStat| model.extrapolation_report(upto, st, &ext);
    let (rep_avg, rep_max) = (report(OverheadStat::Avg), report(OverheadStat::Max));
    let mut terms = Vec::new();
    for t in model.measured_terms() {
        let table = model.term(t).expect("measured");
        let slope = |st: OverheadStat| {
            let (num, den) = table.trend_slope(st);
            num as f64 / den as f64
        };
        let rule = |r: &[rtsched_model::overheads::TermExtrapolation]| {
            r.iter().find(|e| e.term == t).map(|e| json!({"beyond": e.beyond.name(), "m_scale": e.m_scale}))
        };
        let st = &table.stats;
        let curve = |stat: OverheadStat| {
            grid.iter().map(|&k| model.resolve_extrapolated(k, stat, &ext).get(t)).collect::<Vec<_>>()
        };
        terms.push(json!({
            "term": t.name(),
            "symbol": t.symbol(),
            "kind": t.kind().name(),
            "contended": ext.scaled_terms.contains(&t),
            "n": table.n, "avg_ns": table.avg_ns, "max_ns": table.max_ns,
            "count": st.count, "p50_ns": st.p50_ns, "p99_ns": st.p99_ns, "max_raw_ns": st.max_raw_ns,
            "discarded": st.discarded, "outliers": st.outliers,
            "slope_ns_per_task": {"avg": slope(OverheadStat::Avg), "max": slope(OverheadStat::Max)},
            "rule": {"avg": rule(&rep_avg), "max": rule(&rep_max)},
            "curve": {"avg_ns": curve(OverheadStat::Avg), "max_ns": curve(OverheadStat::Max)},
        }));
    }
    let out = json!({
        "scheduler": model.scheduler,
        "m": model.m,
        "machine": model.machine,
        "interrupted": model.interrupted,
        "protocol": model.protocol,
        "provenance": model.provenance,
        "mechanism": mech.map(|x| x.name),
        "analysed_m": m,
        "max_n": max_n,
        "grid_n": grid,
        "terms": terms,
    });
    crate::convert::json_to_py(py, &out)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(analyze_overheads, m)?)?;
    m.add_function(wrap_pyfunction!(overhead_mechanisms, m)?)?;
    m.add_function(wrap_pyfunction!(inflate_budgets, m)?)?;
    m.add_function(wrap_pyfunction!(overhead_terms, m)?)?;
    m.add_function(wrap_pyfunction!(read_overhead_model, m)?)?;
    m.add_function(wrap_pyfunction!(describe_overhead_model, m)?)?;
    Ok(())
}
