//! One method on one task set: the dispatch from a sweep method name (any spelling of
//! [`crate::methods`], or `TEST@MECHANISM`) to the test or placement that answers it.

use super::overheads::{self, OverheadCtx};
use crate::methods::{self, Method};
use crate::partition::{partition, Order, PartitionOutcome};
use crate::placing::cascade_upto;
use crate::report::{self, TEST_NAMES};
use crate::semi::{self, Placement, SemiConfig};
use crate::{Limits, Verdict};
use rtsched_model::{ModelError, TaskSet};
use rtsched_policy::qps::QuasiPartition;
use rtsched_policy::run::Reduction;

/// One method's outcome on one task set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    pub verdict: Verdict,
    /// The context-switch-rate bound (per second) of the placement an SP-RES method made
    /// (`None` for other methods, and when it placed nothing).
    pub switch_rate: Option<f64>,
}

/// How the `switch_rate` column is computed (point keys `switch_rate` and `cascade_rate`,
/// docs/experiments.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RateOpts {
    /// Per core: the largest core's bound (`"max-core"`, default) or the sum over the cores
    /// divided by m (`"mean-core"`, what the published scripts of Brandenburg & Gül, RTSS
    /// 2016, plot in Fig. 6).
    pub mean_core: bool,
    /// For the cascades (`spres-partition`, `spres-nometa`, `spres-paf`, `spres`): the rate of
    /// the first heuristic that places the set (`"first"`, default) or the smallest rate over
    /// every member that does (`"min"`, the published scripts' group aggregation).
    pub min_over_members: bool,
}

/// What the methods of one task set share: the whole cascade's placement (the cumulative
/// cascades read their answer off it) and, for `cascade_rate = "min"`, each heuristic's rate
/// (`None`: it does not place the set).
#[derive(Default)]
pub(crate) struct SetMemo {
    cascade: Option<Placement>,
    rates: std::collections::HashMap<semi::Heuristic, Option<f64>>,
}

/// What every method of a point shares.
pub(crate) struct EvalCtx<'a> {
    pub m: u32,
    pub lim: Limits,
    pub epsilon: u64,
    pub semi_base: SemiConfig,
    pub rate: RateOpts,
    pub ovh: Option<&'a OverheadCtx<'a>>,
}

/// The optimal schedulers a sweep can ask for: every implicit-deadline set with `U ≤ m` is
/// schedulable, and the `switch_rate` column is each one's context-switch bound (Brandenburg
/// & Gül, RTSS 2016, §VI, Fig. 6): RUN (Regnier et al., RTSS 2011) and QPS (Massa et al., RTS
/// 2016), as `rtsched_policy` builds them.
pub(crate) const OPTIMAL: [&str; 2] = ["run", "qps"];

pub(crate) fn unknown_method(name: &str) -> ModelError {
    if let Some(t) = super::dag::dag_test(name) {
        return ModelError::field(
            "methods",
            format!("{t} takes DAG tasks; this point generates sequential task sets (give the sweep a DAG generator, docs/experiments.md)"),
        );
    }
    ModelError::field(
        "methods",
        format!(
            "unknown method {name:?}: use one of the {}; optimal schedulers (their context-switch bounds): {}",
            methods::help(&TEST_NAMES),
            OPTIMAL.join(", ")
        ),
    )
}

pub(crate) fn evaluate_method(
    method: &str,
    ts: &TaskSet,
    ctx: &EvalCtx,
    memo: &mut SetMemo,
) -> Result<Row, ModelError> {
    let EvalCtx { m, ref lim, epsilon, ref semi_base, rate, ovh } = *ctx;
    // Overhead-aware methods `TEST@MECHANISM` (docs/overheads.md).
    if let Some(v) = overheads::evaluate_method(method, ts, m, lim, ovh) {
        return v.map(|verdict| Row { verdict, switch_rate: None });
    }
    // One name per method in every spelling (crate::methods); the result rows keep the spec's.
    let canonical = methods::resolve(method, &TEST_NAMES);
    if let Some((Method::Plain { fit, admission }, _)) = &canonical {
        let placed = partition(ts, m, *fit, Order::DecreasingUtilization, *admission, lim);
        return Ok(Row {
            verdict: Verdict::from_bool(matches!(placed, PartitionOutcome::Placed(_))),
            switch_rate: None,
        });
    }
    let method = canonical.as_ref().map_or(method, |(_, c)| c.as_str());
    let semi_cfg = |meta: bool| SemiConfig { epsilon, meta, ..semi_base.clone() };
    let per_core = |per_cpu: Vec<f64>| -> f64 {
        if rate.mean_core {
            per_cpu.iter().sum::<f64>() / per_cpu.len().max(1) as f64
        } else {
            per_cpu.into_iter().fold(0.0, f64::max)
        }
    };
    let bound = |p: &Placement| -> f64 { per_core(p.switch_rate_bound()) };
    // The optimal schedulers of Brandenburg & Gül's Fig. 6 (§VI): every implicit-deadline set
    // with U ≤ m is schedulable; the rate is each one's own bound (their policies' notes).
    let optimal = |per_cpu: Result<Vec<f64>, ModelError>| match per_cpu {
        Ok(v) => Row { verdict: Verdict::from_bool(true), switch_rate: Some(per_core(v)) },
        Err(_) => Row { verdict: Verdict::from_bool(false), switch_rate: None },
    };
    match methods::key_of(method).as_str() {
        "run" => return Ok(optimal(Reduction::structure(ts, m).map(|r| r.switch_rate_bound()))),
        "qps" => return Ok(optimal(QuasiPartition::structure(ts, m).map(|q| q.switch_rate_bound()))),
        _ => {}
    }
    let placed = |p: Placement| Row {
        verdict: Verdict::from_bool(p.schedulable),
        switch_rate: p.schedulable.then(|| bound(&p)),
    };
    if let Some(h) = semi::Heuristic::from_name(method) {
        return Ok(placed(semi::place(ts, m, &h, &semi_cfg(true))));
    }
    let upto = |last: semi::Group| cascade_upto(semi_base.variant, last);
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
        t if TEST_NAMES.contains(&t) => {
            Ok(Row { verdict: report::run_test(t, ts, m, lim, epsilon), switch_rate: None })
        }
        other => Err(unknown_method(other)),
    }
}
