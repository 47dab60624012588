//! Batch calls behind the simulation reproductions of the figure registry
//! (`rtsched reproduce spres-table1`, `rtsched reproduce rtws-tables`; docs/reproductions.md):
//!
//! * `spres_slack_runs`: one SP-RES placement simulated at several average-slack levels (seed
//!   004 §VII-C, Table I), in parallel, with CASH slack reclamation;
//! * `forkjoin_generate`: the fork-join generator of Nogueira et al., EUC 2012 §VI;
//! * `forkjoin_simulate`: a fork-join set under RTWS, thread-level G-EDF, or SP-RES over the
//!   sequentialized tasks (Nogueira et al., EUC 2012 Tables II–III).
//!
//! Kept apart from `sim.rs` (the `simulate` binding) so that the two evolve independently.

use crate::taskset::TaskSet;
use crate::{err, guarded, internal_err, sim_err, RtschedError};
use pyo3::prelude::*;
use rayon::prelude::*;
use rtsched_analysis::semi;
use rtsched_model::forkjoin::{read_json, to_json, ForkJoinSet};
use rtsched_model::{ModelError, Placement, TaskSet as RTaskSet, Time};
use rtsched_sim::{Arrivals, ExecTimes, Scheduler, SimConfig, SimError, SimResult, SpresConfig};
use serde_json::{json, Value};

/// The execution-time distribution of an average slack `s` (a fraction of the WCET): every
/// job under-runs its WCET by a uniform amount in `[0, 2s·C]`, so its execution time is uniform
/// in `[(1 − 2s)·C, C]` and the expected slack is `s` (what LITMUS^RT's `rtspin -U 2s` draws,
/// the tool that Brandenburg & Gül, RTSS 2016 §VII-C's "randomly under-run their WCET by, in expectation, the
/// configured amount" describes). `s = 0` is plain WCET execution. `s` must be in `[0, 1/2]`.
pub(crate) fn slack_exec(slack: f64, seed: u64) -> Result<ExecTimes, ModelError> {
    if !slack.is_finite() || !(0.0..=0.5).contains(&slack) {
        return Err(ModelError::field(
            "slack",
            format!("an average slack must be in [0, 0.5] (a fraction of the WCET), got {slack}"),
        ));
    }
    Ok(if slack == 0.0 { ExecTimes::Wcet } else { ExecTimes::UniformFraction { lo: 1.0 - 2.0 * slack, seed } })
}

/// Mean over completed jobs of `1 − executed / C`: the slack the run actually drew.
fn observed_slack(r: &SimResult, ts: &RTaskSet) -> Option<f64> {
    let (mut sum, mut k) = (0.0, 0u64);
    for j in r.per_job.iter().filter(|j| j.finish.is_some()) {
        sum += 1.0 - j.executed as f64 / ts[j.task as usize].wcet as f64;
        k += 1;
    }
    (k > 0).then(|| sum / k as f64)
}

/// spres_slack_runs(ts, m, placement, horizon, slacks, seed, cash=True, soft_unsplit=False)
/// -> list[str]: one JSON object per slack level (same order): slack, exec_lo (None for 0),
/// jobs, completed, deadline_misses, preemptions, migrations, context_switches, events,
/// observed_slack, horizon_ns. Every level draws from the same seed, so a job's execution
/// time shrinks monotonically with the slack level (common random numbers).
#[pyfunction]
#[pyo3(signature = (ts, m, placement, horizon, slacks, seed=0, cash=true, soft_unsplit=false))]
#[allow(clippy::too_many_arguments)]
fn spres_slack_runs(
    py: Python<'_>,
    ts: TaskSet,
    m: u32,
    placement: &str,
    horizon: u64,
    slacks: Vec<f64>,
    seed: u64,
    cash: bool,
    soft_unsplit: bool,
) -> PyResult<Vec<String>> {
    if m == 0 {
        return Err(RtschedError::new_err("field 'm': the number of processors must be at least 1, got 0"));
    }
    if horizon == 0 {
        return Err(RtschedError::new_err("field 'horizon': must be at least 1 ns"));
    }
    guarded(py, || {
        let ts = &ts.inner;
        let placement = Placement::from_json_runnable(placement, ts).map_err(err)?;
        if placement.m != m {
            return Err(err(ModelError::field("m", format!("the placement is for m = {} but m is {m}", placement.m))));
        }
        let execs: Vec<ExecTimes> =
            slacks.iter().map(|&s| slack_exec(s, seed)).collect::<Result<_, _>>().map_err(err)?;
        let sched = Scheduler::Spres(SpresConfig {
            placement,
            soft_unsplit,
            cash,
            background: rtsched_sim::Background::EarliestEnd,
            suspension: rtsched_sim::Suspension::Keep,
        });
        let runs: Vec<Result<String, SimError>> = slacks
            .par_iter()
            .zip(execs.into_par_iter())
            .map(|(&s, exec)| {
                let lo = match exec {
                    ExecTimes::UniformFraction { lo, .. } => Some(lo),
                    _ => None,
                };
                let mut cfg = SimConfig::new(m);
                cfg.horizon = Some(horizon);
                cfg.exec = exec;
                let r = rtsched_sim::simulate(ts, &sched, &cfg)?;
                Ok(json!({
                    "slack": s, "exec_lo": lo, "jobs": r.jobs, "completed": r.completed,
                    "deadline_misses": r.deadline_misses, "preemptions": r.preemptions,
                    "migrations": r.migrations, "context_switches": r.context_switches, "events": r.events,
                    "observed_slack": observed_slack(&r, ts), "horizon_ns": r.horizon,
                })
                .to_string())
            })
            .collect();
        runs.into_iter().map(|r| r.map_err(sim_err)).collect()
    })
}

/// forkjoin_generate(m, lo, hi, seed, count, start=0) -> list[str]: fork-join sets `start ..
/// start + count` of stream `seed` from Nogueira et al., EUC 2012's generator for `m` cores and the per-core
/// utilization window `[lo, hi]`, as fork-join JSON (docs/rtws.md) with "m".
#[pyfunction]
#[pyo3(signature = (m, lo, hi, seed, count, start=0))]
fn forkjoin_generate(
    py: Python<'_>,
    m: u32,
    lo: f64,
    hi: f64,
    seed: u64,
    count: u64,
    start: u64,
) -> PyResult<Vec<String>> {
    guarded(py, || {
        let spec = rtsched_gen::forkjoin::ForkJoinGenSpec::seed003(m, lo, hi);
        (start..start.saturating_add(count))
            .into_par_iter()
            .map(|i| rtsched_gen::forkjoin::generate_forkjoin(&spec, seed, i).map(|s| to_json(&s, Some(m))))
            .collect::<Result<Vec<_>, _>>()
            .map_err(err)
    })
}

/// Names `forkjoin_simulate` accepts.
const FORKJOIN_SCHEDULERS: [&str; 3] = ["rtws", "gedf", "spres"];

fn spres_sequential(set: &ForkJoinSet, cfg: &SimConfig) -> Result<Value, SimError> {
    let ts = set.sequential()?;
    let p = semi::cascade(&ts, cfg.m, &semi::SemiConfig::default());
    if !p.schedulable {
        return Ok(json!({"scheduler": "spres", "m": cfg.m, "placed": false, "reason": p.reason}));
    }
    let split_tasks = p.tasks.iter().filter(|t| t.parts > 1).count();
    let heuristic = p.heuristic.clone();
    let sched = Scheduler::Spres(SpresConfig {
        placement: p,
        soft_unsplit: false,
        cash: true,
        background: rtsched_sim::Background::EarliestEnd,
        suspension: rtsched_sim::Suspension::Keep,
    });
    let r = rtsched_sim::simulate(&ts, &sched, cfg)?;
    Ok(json!({
        "scheduler": "spres", "m": cfg.m, "placed": true, "heuristic": heuristic, "split_tasks": split_tasks,
        "horizon": r.horizon, "horizon_message": r.horizon_message, "jobs": r.jobs, "completed": r.completed,
        "pending": r.pending, "deadline_misses": r.deadline_misses, "max_tardiness_ns": r.max_tardiness_ns,
        "max_response_time_ns": r.max_response_time_ns,
        // Each job runs its threads one after the other in its reservation: one "thread" per job.
        "threads": r.jobs, "steals": 0, "remote_starts": 0, "preemptions": r.preemptions,
        "migrations": r.migrations, "context_switches": r.context_switches, "events": r.events,
    }))
}

/// forkjoin_simulate(text, m, scheduler, horizon=None, sporadic=None, seed=0, check=False) -> str:
/// a fork-join set (docs/rtws.md JSON) under `rtws`, `gedf` (event-driven G-EDF over threads,
/// `rtsched_sim::fj_gedf`) or `spres` (each job executed sequentially in SP-RES reservations
/// placed by the Brandenburg & Gül, RTSS 2016 cascade, CASH on). Returns the JSON summary: the RTWS result keys
/// (jobs, completed, pending, deadline_misses, threads, steals, preemptions, migrations,
/// context_switches, …) plus "scheduler" and "remote_starts"; spres adds "placed",
/// "heuristic", "split_tasks" (or only "placed": false and "reason"). `check` turns on the
/// simulator's invariant checks.
#[pyfunction]
#[pyo3(signature = (text, m, scheduler, horizon=None, sporadic=None, seed=0, check=false))]
#[allow(clippy::too_many_arguments)]
fn forkjoin_simulate(
    py: Python<'_>,
    text: &str,
    m: Option<u32>,
    scheduler: &str,
    horizon: Option<Time>,
    sporadic: Option<Time>,
    seed: u64,
    check: bool,
) -> PyResult<String> {
    let scheduler = scheduler.to_ascii_lowercase();
    if !FORKJOIN_SCHEDULERS.contains(&scheduler.as_str()) {
        return Err(RtschedError::new_err(format!(
            "field 'scheduler': fork-join sets are simulated under {}, not {scheduler:?}",
            FORKJOIN_SCHEDULERS.join(", ")
        )));
    }
    guarded(py, || {
        let file = read_json(text).map_err(err)?;
        let m = m
            .or(file.m)
            .ok_or_else(|| err(ModelError::field("m", "no processor count: pass m or put \"m\" in the file")))?;
        if m == 0 {
            return Err(err(ModelError::field("m", "the number of processors must be at least 1, got 0")));
        }
        let mut cfg = SimConfig::new(m);
        cfg.horizon = horizon;
        cfg.check_invariants = check;
        if let Some(d) = sporadic {
            cfg.arrivals = Arrivals::Sporadic { max_extra_delay: d, seed };
        }
        let v = match scheduler.as_str() {
            "rtws" => {
                let r = rtsched_sim::simulate_rtws(&file.set, &cfg).map_err(sim_err)?;
                let mut v = serde_json::to_value(&r).map_err(internal_err)?;
                v["remote_starts"] = Value::Null;
                v
            }
            "gedf" => {
                let r = rtsched_sim::simulate_forkjoin_gedf(&file.set, &cfg).map_err(sim_err)?;
                serde_json::to_value(&r).map_err(internal_err)?
            }
            _ => spres_sequential(&file.set, &cfg).map_err(sim_err)?,
        };
        let mut v = v;
        v["scheduler"] = Value::String(scheduler.clone());
        Ok(v.to_string())
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(spres_slack_runs, m)?)?;
    m.add_function(wrap_pyfunction!(forkjoin_generate, m)?)?;
    m.add_function(wrap_pyfunction!(forkjoin_simulate, m)?)?;
    Ok(())
}
