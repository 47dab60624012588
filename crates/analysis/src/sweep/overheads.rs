//! The overhead-aware sweep methods `TEST@MECHANISM` (docs/overheads.md) and the overhead
//! models of one sweep point (its `"overheads"` object, docs/experiments.md).

use crate::global::{self, srt, GlobalTest};
use crate::overheads::{self as oh, Mechanism, Params, ValueTable};
use crate::{Limits, Verdict};
use rtsched_model::overheads::{OverheadSpec, OverheadStat, Overheads};
use rtsched_model::{ModelError, TaskSet};
use serde_json::Value;
use std::collections::HashMap;

/// The hard real-time tests of a sweep method `TEST@MECHANISM`.
const HARD_TESTS: [(&str, &[GlobalTest]); 3] = [
    ("gedf", &GlobalTest::COMBINED_ORDER),
    // Brandenburg & Anderson, RTSS 2009, §4.2: any of five tests.
    ("seed001", &GlobalTest::SEED001),
    // The same without Baruah's test, which the paper disabled for the light uniform
    // distribution ("it failed to terminate in reasonable time").
    ("seed001_nobar", &[GlobalTest::Gfb, GlobalTest::Bak, GlobalTest::Bcl, GlobalTest::BclIterative]),
];
/// The soft real-time test of a sweep method.
const SOFT_TEST: &str = "gedf_srt";

/// A point's overhead models and settings (its `"overheads"` object).
#[derive(Debug, Clone)]
pub struct PointOverheads {
    /// Model (or constants) per mechanism name or *model* name (`Mechanism::model`); `"*"` =
    /// one model for every mechanism.
    pub models: HashMap<String, OverheadSpec>,
    /// The statistic charged (`None`: maxima for hard, averages for soft real-time).
    pub stat: Option<OverheadStat>,
    pub params: Params,
    /// Whether the models are extrapolated beyond their measured m and n.
    pub extrapolate: bool,
}

fn field(k: &str, why: impl Into<String>) -> ModelError {
    ModelError::field(format!("overheads.{k}"), why)
}

impl PointOverheads {
    /// Reads the point's `"overheads"` object (docs/experiments.md): `{"models": {NAME: model
    /// object}, "stat": null|"max"|"avg", "cpd": ns, "quantum": ns, "extrapolate": bool}`.
    pub fn from_value(v: &Value) -> Result<PointOverheads, ModelError> {
        let o = v.as_object().ok_or_else(|| field("", "must be an object"))?;
        for k in o.keys() {
            if !["models", "stat", "cpd", "quantum", "extrapolate"].contains(&k.as_str()) {
                return Err(field(k, "unknown key (expected models, stat, cpd, quantum, extrapolate)"));
            }
        }
        let mut models = HashMap::new();
        let mo =
            o.get("models").and_then(Value::as_object).ok_or_else(|| field("models", "missing or not an object"))?;
        for (name, model) in mo {
            let spec = OverheadSpec::from_json(&model.to_string())
                .map_err(|e| ModelError::new(format!("overhead model for {name:?}: {e}")))?;
            models.insert(name.clone(), spec);
        }
        let stat = match o.get("stat") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(OverheadStat::parse(s)?),
            Some(x) => return Err(field("stat", format!("must be \"max\", \"avg\" or null, got {x}"))),
        };
        let num = |k: &str, d: u64| -> Result<u64, ModelError> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(d),
                Some(x) => x.as_u64().ok_or_else(|| field(k, format!("must be a non-negative integer of ns, got {x}"))),
            }
        };
        let params = Params { cpd: num("cpd", 0)?, quantum: num("quantum", Params::default().quantum)? };
        params.validate()?;
        let extrapolate = o.get("extrapolate").and_then(Value::as_bool).unwrap_or(false);
        Ok(PointOverheads { models, stat, params, extrapolate })
    }

    /// The model of `mech`: one measured under its own name (e.g. `s-cqm`, staggered quanta),
    /// else the one of its model (`cqm`), else the single model given for every mechanism.
    fn spec_for(&self, mech: &Mechanism) -> Result<&OverheadSpec, ModelError> {
        let found = self.models.get(mech.name).or_else(|| self.models.get(mech.model)).or_else(|| self.models.get("*"));
        found.ok_or_else(|| {
            let mut have: Vec<&String> = self.models.keys().collect();
            have.sort();
            ModelError::field(
                "methods",
                format!("no overhead model for {} (it uses the model of {:?}; have: {have:?})", mech.name, mech.model),
            )
        })
    }
}

/// A point's overhead models with their values evaluated once for the point's sets.
pub(crate) struct OverheadCtx<'a> {
    ovh: &'a PointOverheads,
    /// The values per (mechanism, statistic) for the n of the point's sets, evaluated once
    /// ([`OverheadCtx::prepare`]).
    tables: HashMap<(&'static str, OverheadStat), ValueTable<'a>>,
}

impl<'a> OverheadCtx<'a> {
    /// Evaluates the models once for every n of `sets` and every mechanism of `methods` on `m`
    /// processors (a point's sets share the model; evaluating it per set would cost as much as
    /// the inflation itself).
    pub(crate) fn prepare(ovh: &'a PointOverheads, methods: &[String], m: u32, sets: &[TaskSet]) -> OverheadCtx<'a> {
        let mut tables = HashMap::new();
        let (lo, hi) = sets.iter().fold((usize::MAX, 0), |(a, b), s| (a.min(s.len()), b.max(s.len())));
        if lo <= hi {
            for method in methods {
                let Some(Ok(parsed)) = parse_method(method) else { continue };
                let (mech, hard) = match parsed {
                    Method::Hard(_, Target::Mech(mech)) => (mech, true),
                    Method::Soft(Target::Mech(mech)) => (mech, false),
                    _ => continue,
                };
                let (hs, ss) = oh::stats(ovh.stat);
                let stat = if hard { hs } else { ss };
                let Ok(spec) = ovh.spec_for(mech) else { continue };
                tables.insert((mech.name, stat), ValueTable::new(spec, mech, m, stat, ovh.extrapolate, lo, hi));
            }
        }
        OverheadCtx { ovh, tables }
    }

    /// The values for `ts` (from the tables when prepared).
    fn values(&self, ts: &TaskSet, m: u32, mech: &Mechanism, stat: OverheadStat) -> Result<Overheads, ModelError> {
        if let Some(t) = self.tables.get(&(mech.name, stat)) {
            return Ok(t.get(ts.len()));
        }
        Ok(oh::values(self.ovh.spec_for(mech)?, ts, m, mech, stat, self.ovh.extrapolate))
    }
}

/// A parsed sweep method `TEST@MECHANISM`.
enum Method {
    Hard(&'static [GlobalTest], Target),
    Soft(Target),
}

enum Target {
    /// Overhead-free on `m` (`@ideal`) or `m − 1` (`@ideal-dedicated`) processors.
    Ideal {
        dedicated: bool,
    },
    Mech(&'static Mechanism),
}

/// Checks a method name `TEST@MECHANISM` (`None`: not of that form).
pub fn check_method(method: &str) -> Option<Result<(), ModelError>> {
    parse_method(method).map(|r| r.map(|_| ()))
}

fn parse_method(method: &str) -> Option<Result<Method, ModelError>> {
    let (test, target) = method.split_once('@')?;
    let target = match target {
        "ideal" => Target::Ideal { dedicated: false },
        "ideal-dedicated" => Target::Ideal { dedicated: true },
        name => match oh::mechanism(name) {
            Ok(m) => Target::Mech(m),
            Err(e) => {
                return Some(Err(ModelError::field(
                    "methods",
                    format!("{method:?}: {} (or ideal, ideal-dedicated)", e.reason),
                )))
            }
        },
    };
    if test == SOFT_TEST {
        return Some(Ok(Method::Soft(target)));
    }
    match HARD_TESTS.iter().find(|(n, _)| *n == test) {
        Some((_, tests)) => Some(Ok(Method::Hard(tests, target))),
        None => Some(Err(ModelError::field(
            "methods",
            format!(
                "{method:?}: unknown test {test:?} before '@' (use {}, {SOFT_TEST})",
                HARD_TESTS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            ),
        ))),
    }
}

/// Evaluates a sweep method of the form `TEST@MECHANISM` (`None` for any other method).
/// TEST is `gedf` (the combined test), `seed001`, `seed001_nobar` (hard, maximum overheads
/// unless the point's `stat` says otherwise) or `gedf_srt` (soft, average overheads);
/// MECHANISM a name of the mechanism table, `ideal` (no overheads, `m` processors) or
/// `ideal-dedicated` (no overheads, `m − 1`).
pub(crate) fn evaluate_method(
    method: &str,
    ts: &TaskSet,
    m: u32,
    lim: &Limits,
    ctx: Option<&OverheadCtx>,
) -> Option<Result<Verdict, ModelError>> {
    let parsed = match parse_method(method)? {
        Ok(p) => p,
        Err(e) => return Some(Err(e)),
    };
    let ideal_m = |dedicated: bool| if dedicated { m.saturating_sub(1) } else { m };
    let need = || {
        ctx.ok_or_else(|| {
            ModelError::field("methods", format!("{method:?} needs overhead models (the spec's `overheads` key)"))
        })
    };
    Some(match parsed {
        Method::Hard(tests, Target::Ideal { dedicated }) => Ok(global::combined_of(tests, ts, ideal_m(dedicated), lim)),
        Method::Soft(Target::Ideal { dedicated }) => {
            Ok(Verdict::from_bool(srt::bounded_tardiness(ts, ideal_m(dedicated))))
        }
        Method::Hard(tests, Target::Mech(mech)) => need().and_then(|ctx| {
            let v = ctx.values(ts, m, mech, oh::stats(ctx.ovh.stat).0)?;
            Ok(oh::hard(ts, m, mech, &v, &ctx.ovh.params, tests, lim)?.verdict)
        }),
        Method::Soft(Target::Mech(mech)) => need().and_then(|ctx| {
            let v = ctx.values(ts, m, mech, oh::stats(ctx.ovh.stat).1)?;
            Ok(oh::soft(ts, m, mech, &v, &ctx.ovh.params, lim)?.verdict)
        }),
    })
}
