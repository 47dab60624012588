//! The experiment engine's evaluator: one sweep point (docs/experiments.md) — generate its task
//! sets, run each method on each set, and report one row per (set, method).
//!
//! A point arrives as JSON from the Python experiments (`rtsched sweep`); [`PointRequest`] is
//! its typed form and [`PointRequest::from_json`] the reader (errors name the field, as
//! `evaluate_point: field 'n': ...`). [`evaluate_point`] evaluates it; the method names are
//! those of [`crate::methods`] in any spelling, plus the overhead-aware `TEST@MECHANISM`
//! (docs/overheads.md). [`acceptance`] is the quick acceptance-ratio loop of `rtsched
//! quickstart`.

pub mod dag;
mod dispatch;
mod overheads;

pub use dispatch::{RateOpts, Row};
pub use overheads::{check_method, PointOverheads};

use crate::report::{self, TEST_NAMES};
use crate::semi::SemiConfig;
use crate::{methods, placing, Limits, Verdict};
use dispatch::{evaluate_method, unknown_method, EvalCtx, SetMemo};
use overheads::OverheadCtx;
use rayon::prelude::*;
use rtsched_gen::dag::DagGenSpec;
use rtsched_gen::{DeadlineGen, GenSpec, PeriodGen};
use rtsched_model::{check_m, ModelError, Time};
use serde_json::Value;

/// Bounds of one sweep point (docs/experiments.md): its sets are held in memory together.
pub const MAX_POINT_N: u64 = 1_000_000;
pub const MAX_POINT_SETS: u64 = 1_000_000;
pub const MAX_POINT_TASKS: u64 = 50_000_000;

/// One sweep point: what to generate and which methods to run (docs/experiments.md, the
/// point's keys).
#[derive(Debug, Clone)]
pub struct PointRequest {
    /// Processors.
    pub m: u32,
    /// Tasks per set; `None` (`"n": null`): the Baker distributions add tasks until `util` is
    /// exceeded and drop the last (Brandenburg & Anderson, RTSS 2009, §4.2).
    pub n: Option<usize>,
    /// Total utilization of each set.
    pub util: f64,
    /// The utilization generator (`randfixedsum`, `uunifast-discard`, a distribution, ...).
    pub generator: String,
    /// The period generator (`seed004`, `loguniform:1ms-100ms`, ...).
    pub periods: String,
    /// Largest utilization of one task.
    pub umax: f64,
    /// The deadline generator (`implicit`, `constrained:LO-HI`, ...).
    pub deadlines: String,
    /// Task sets (`count`) of the point's stream `seed`.
    pub count: usize,
    pub seed: u64,
    /// SP-RES's minimum slice ε (ns), also passed to the tests that take one.
    pub epsilon: Time,
    /// Each test's work bound ([`PointRequest::limits`]).
    pub max_steps: u64,
    /// The method names, as the spec writes them (the result rows keep these spellings).
    pub methods: Vec<String>,
    /// SP-RES's reading, RP mode and floor (point keys `variant`, `rp`, `rp_floor`).
    pub semi: SemiConfig,
    /// How the `switch_rate` column is computed.
    pub rate: RateOpts,
    /// The overhead models of the `TEST@MECHANISM` methods (the point's `overheads`).
    pub overheads: Option<PointOverheads>,
    /// A point of DAG task sets (the point's `dag` object, [`dag::point_spec`]): their
    /// generator, with `n`, `util` and `umax` from the point; `generator`, `periods` and
    /// `deadlines` are then unused, and the methods are DAG tests.
    pub dag: Option<DagGenSpec>,
}

/// One method's row on one task set, with the set's utilization.
#[derive(Debug, Clone, PartialEq)]
pub struct SetRows {
    /// The set's total utilization.
    pub utilization: f64,
    /// One row per method of the request, in its order.
    pub rows: Vec<Row>,
}

/// The rows of a point: per task set, in stream order.
#[derive(Debug, Clone, PartialEq)]
pub struct PointResult {
    pub sets: Vec<SetRows>,
}

/// A point reader's error: `evaluate_point: ` before the message.
fn read_err(e: ModelError) -> ModelError {
    ModelError::new(format!("evaluate_point: {e}"))
}

fn bad(field: &str, why: impl Into<String>) -> ModelError {
    read_err(ModelError::field(field, why))
}

fn check_n(n: u64) -> Result<(), ModelError> {
    if n == 0 || n > MAX_POINT_N {
        return Err(ModelError::field("n", format!("must be in 1..={MAX_POINT_N}, got {n}")));
    }
    Ok(())
}

fn check_count(count: u64, n: Option<u64>) -> Result<(), ModelError> {
    if count == 0 || count > MAX_POINT_SETS || count.saturating_mul(n.unwrap_or(1)) > MAX_POINT_TASKS {
        return Err(ModelError::field(
            "count",
            format!(
                "{count} sets of {} tasks exceed the bound of a point ({MAX_POINT_SETS} sets, {MAX_POINT_TASKS} tasks in all)",
                n.map_or("auto".to_string(), |n| n.to_string())
            ),
        ));
    }
    Ok(())
}

/// The generator specification of `n` tasks of total utilization `util` from its names
/// (utilization generator, periods, largest task utilization, deadlines), validated.
pub fn gen_spec(
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

impl PointRequest {
    /// Reads a point's JSON (strict: duplicate keys are errors) and checks it: processors,
    /// the bounds of a point, the SP-RES options, the method list's shape, the generator names
    /// and the overhead models. Unknown method names are found by [`evaluate_point`] (or, for a
    /// whole spec, [`check_names`]).
    pub fn from_json(text: &str) -> Result<PointRequest, ModelError> {
        let p: Value = rtsched_model::json::parse(text).map_err(read_err)?;
        let get = |k: &str| p.get(k).ok_or_else(|| bad(k, "missing"));
        let as_u64 = |k: &str| get(k)?.as_u64().ok_or_else(|| bad(k, "expected a non-negative integer"));
        let as_str = |k: &str, d: &str| p.get(k).and_then(Value::as_str).unwrap_or(d).to_owned();
        let m = check_m(as_u64("m")?)?;
        // Bounds before anything is allocated: a point holds count sets of n tasks in memory.
        let n = match p.get("n") {
            Some(Value::Null) => None,
            _ => {
                let n = as_u64("n")?;
                check_n(n).map_err(read_err)?;
                Some(n)
            }
        };
        let util = get("util")?.as_f64().ok_or_else(|| bad("util", "expected a number"))?;
        let umax = p.get("umax").and_then(Value::as_f64).unwrap_or(1.0);
        let count = as_u64("count")?;
        check_count(count, n).map_err(read_err)?;
        let seed = as_u64("seed")?;
        let epsilon = p.get("epsilon").and_then(Value::as_u64).unwrap_or(0);
        // SP-RES options (docs/experiments.md): the reading, the RP mode and floor.
        let opt_str = |k: &str| -> Result<Option<&str>, ModelError> {
            match p.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.as_str())),
                Some(_) => Err(bad(k, "expected a string")),
            }
        };
        let rp_floor = match p.get("rp_floor") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| bad("rp_floor", "expected a non-negative integer (ns)"))?),
        };
        let semi =
            placing::semi_config(epsilon, true, opt_str("variant")?.unwrap_or("artifact"), opt_str("rp")?, rp_floor)
                .map_err(read_err)?;
        let rate = RateOpts {
            mean_core: match opt_str("switch_rate")? {
                None | Some("max-core") => false,
                Some("mean-core") => true,
                Some(o) => return Err(bad("switch_rate", format!("{o:?} is neither \"max-core\" nor \"mean-core\""))),
            },
            min_over_members: match opt_str("cascade_rate")? {
                None | Some("first") => false,
                Some("min") => true,
                Some(o) => return Err(bad("cascade_rate", format!("{o:?} is neither \"first\" nor \"min\""))),
            },
        };
        let max_steps = p.get("max_steps").and_then(Value::as_u64).unwrap_or(1_000_000);
        let methods: Vec<String> = get("methods")?
            .as_array()
            .ok_or_else(|| bad("methods", "expected a list"))?
            .iter()
            .map(|x| x.as_str().map(str::to_owned).ok_or_else(|| bad("methods", "expected strings")))
            .collect::<Result<_, _>>()?;
        let req = PointRequest {
            m,
            n: n.map(|n| n as usize),
            util,
            generator: as_str("generator", "randfixedsum"),
            periods: as_str("periods", "seed004"),
            umax,
            deadlines: as_str("deadlines", "implicit"),
            count: count as usize,
            seed,
            epsilon,
            max_steps,
            methods,
            semi,
            rate,
            overheads: None,
            dag: None,
        };
        if let Some(d) = p.get("dag").filter(|v| !v.is_null()) {
            let n = req.n.ok_or_else(|| bad("n", "a point of DAG task sets needs a fixed n"))?;
            if p.get("overheads").is_some_and(|v| !v.is_null()) {
                return Err(bad("overheads", "overhead-aware methods take sequential tasks; this point has DAG sets"));
            }
            let spec = dag::point_spec(d, n, util, umax).map_err(read_err)?;
            return Ok(PointRequest { dag: Some(spec), ..req });
        }
        req.gen_spec()?;
        let overheads = match p.get("overheads").filter(|v| !v.is_null()) {
            Some(v) => Some(PointOverheads::from_value(v).map_err(read_err)?),
            None => None,
        };
        Ok(PointRequest { overheads, ..req })
    }

    /// The point's generator specification.
    pub fn gen_spec(&self) -> Result<GenSpec, ModelError> {
        gen_spec(self.n, self.util, &self.generator, &self.periods, self.umax, &self.deadlines)
    }

    /// The work bound of every test of the point (`max_steps`).
    pub fn limits(&self) -> Limits {
        Limits::steps(self.max_steps)
    }
}

/// Evaluates a point: its `count` task sets of stream `seed`, every method on each (rayon over
/// the sets), with the tests bounded by `limits`. An unknown method, or a method that cannot
/// run (an overhead-aware one without models), is an error before any set is evaluated; a
/// method that fails on a later set counts as gave-up there.
pub fn evaluate_point(req: &PointRequest, limits: &Limits) -> Result<PointResult, ModelError> {
    let m = check_m(req.m as u64)?;
    if let Some(n) = req.n {
        check_n(n as u64)?;
    }
    check_count(req.count as u64, req.n.map(|n| n as u64))?;
    if let Some(spec) = &req.dag {
        return dag::evaluate_dag_point(req, spec, limits);
    }
    let spec = req.gen_spec()?;
    let sets = rtsched_gen::generate_many(&spec, req.seed, req.count)?;
    let ovh = req.overheads.as_ref().map(|o| OverheadCtx::prepare(o, &req.methods, m, &sets));
    let ctx = EvalCtx {
        m,
        lim: limits.clone(),
        epsilon: req.epsilon,
        semi_base: req.semi.clone(),
        rate: req.rate,
        ovh: ovh.as_ref(),
    };
    // Fail fast on an unknown method, before the parallel part.
    if let Some(ts) = sets.first() {
        for meth in &req.methods {
            evaluate_method(meth, ts, &ctx, &mut SetMemo::default())?;
        }
    }
    let sets = sets
        .par_iter()
        .map(|ts| {
            let mut memo = SetMemo::default();
            let rows = req
                .methods
                .iter()
                .map(|meth| {
                    evaluate_method(meth, ts, &ctx, &mut memo)
                        .unwrap_or(Row { verdict: Verdict::GaveUp, switch_rate: None })
                })
                .collect();
            SetRows { utilization: ts.utilization_f64(), rows }
        })
        .collect();
    Ok(PointResult { sets })
}

/// Checks the names a sweep spec gives before any point runs: the generator, period and
/// deadline specifications, and every method (any spelling of [`crate::methods`], or
/// `TEST@MECHANISM`). The error names the first unknown one.
pub fn check_names(
    generator: &str,
    periods: &str,
    deadlines: &str,
    umax: f64,
    methods: &[String],
) -> Result<(), ModelError> {
    rtsched_gen::util_gen_from_name(generator, Some(1), umax.min(1.0) / 2.0, umax)?;
    PeriodGen::parse(periods)?;
    DeadlineGen::parse(deadlines)?;
    for m in methods {
        if let Some(r) = check_method(m) {
            r?;
            continue;
        }
        if methods::resolve(m, &TEST_NAMES).is_none() && !dispatch::OPTIMAL.contains(&methods::key_of(m).as_str()) {
            return Err(unknown_method(m));
        }
    }
    Ok(())
}

/// [`check_names`] for a sweep of DAG task sets: the DAG generator object (`dag`, without `n`,
/// `total` and `umax`, [`dag::point_spec`]) with `umax`, and every method, which must be a DAG
/// test of `crate::dag::report` (any spelling). The error names the first bad one.
pub fn check_dag_names(dag: &Value, umax: f64, methods: &[String]) -> Result<(), ModelError> {
    dag::point_spec(dag, 1, umax.min(1.0) / 2.0, umax)?;
    for m in methods {
        if dag::dag_test(m).is_none() {
            return Err(dag::not_a_dag_test(m));
        }
    }
    Ok(())
}

/// Acceptance counts of [`acceptance`]: per test (in the order of `tests`), per utilization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acceptance {
    pub tests: Vec<String>,
    /// Sets each test proved schedulable.
    pub accepted: Vec<Vec<usize>>,
    /// Sets on which each test gave up.
    pub gave_up: Vec<Vec<usize>>,
}

/// For each utilization of `utils`: `count` implicit-deadline sets of `n` tasks (stream `seed`,
/// task utilization at most 1) and how many each test of `tests` (`report` names, checked for
/// `m`) accepts (`rtsched quickstart`).
#[allow(clippy::too_many_arguments)]
pub fn acceptance(
    generator: &str,
    periods: &str,
    n: usize,
    utils: &[f64],
    m: u32,
    count: usize,
    seed: u64,
    tests: &[String],
    limits: &Limits,
) -> Result<Acceptance, ModelError> {
    check_m(m as u64)?;
    let tests = report::resolve_tests(Some(tests), m)?;
    let mut accepted = vec![vec![0usize; utils.len()]; tests.len()];
    let mut gave_up = accepted.clone();
    for (ui, &u) in utils.iter().enumerate() {
        let spec = gen_spec(Some(n), u, generator, periods, 1.0, "implicit")?;
        let sets = rtsched_gen::generate_many(&spec, seed, count)?;
        let verdicts: Vec<Vec<Verdict>> =
            sets.par_iter().map(|ts| tests.iter().map(|t| report::run_test(t, ts, m, limits, 0)).collect()).collect();
        for v in &verdicts {
            for (ti, &verdict) in v.iter().enumerate() {
                accepted[ti][ui] += verdict.is_schedulable() as usize;
                gave_up[ti][ui] += (verdict == Verdict::GaveUp) as usize;
            }
        }
    }
    Ok(Acceptance { tests, accepted, gave_up })
}

#[cfg(test)]
mod tests;
