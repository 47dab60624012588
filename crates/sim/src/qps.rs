//! QPS (Massa, Lima, Regnier, Levin & Brandt, RTS 2016) in virtual time: the quasi-partition,
//! the modes and the budgets are `rtsched_policy::qps`'s; the loop is the one of the
//! server-based schedulers (`servers.rs`: it releases the jobs, tells QPS about releases and
//! completions, runs on each CPU the pending job of the task QPS puts there, and records the
//! schedule in exact ticks of `1/L` ns, `L` [`rtsched_policy::qps::QuasiPartition::scale`]).
//!
//! Sporadic arrivals run on a set without major execution sets (worst or first fit places it:
//! QPS is partitioned EDF, and a minor set's uniprocessor EDF meets every deadline of sporadic
//! jobs of rates summing to at most 1). Refused with one line: constrained or arbitrary
//! deadlines and `U > m` (the quasi-partition's refusals), sporadic arrivals on a set with a
//! major execution set (its servers' windows end at its tasks' future release instants, which
//! sporadic arrivals do not give; rtsched_policy::qps's module notes say why the obvious
//! reservation rule fails), overhead injection.

use crate::config::{Arrivals, Scheduler, SimConfig};
use crate::error::SimError;
use crate::result::SimResult;
use crate::servers::{simulate_servers, ServerPolicy};
use rtsched_model::{ModelError, TaskSet};
use rtsched_policy::qps::{Qps, QuasiPartition};

impl ServerPolicy for Qps {
    const NAME: &'static str = "QPS";
    fn scale(&self) -> u128 {
        self.quasi().scale()
    }
    fn before(&mut self, now: u128) -> Result<(), String> {
        self.advance(now).map_err(|v| v.to_string())
    }
    fn completed(&mut self, i: u32) -> Result<(), String> {
        self.complete(i).map_err(|v| v.to_string())
    }
    fn released(&mut self, i: u32) -> Result<(), String> {
        self.release(i).map_err(|v| v.to_string())
    }
    fn skip(&mut self, i: u32) -> Result<(), String> {
        self.skip_release(i).map_err(|v| v.to_string())
    }
    fn decide(&mut self, _now: u128) -> Result<(), String> {
        self.schedule().map_err(|v| v.to_string())
    }
    fn task_on(&self, cpu: usize) -> Option<u32> {
        Qps::task_on(self, cpu)
    }
    fn next_event(&self) -> u128 {
        Qps::next_event(self)
    }
}

/// Simulates QPS. Same configuration, records and metrics as [`crate::simulate`].
pub(crate) fn simulate_qps(ts: &TaskSet, sched: &Scheduler, cfg: &SimConfig) -> Result<SimResult, SimError> {
    let sporadic = matches!(cfg.arrivals, Arrivals::Sporadic { .. });
    simulate_servers(ts, sched, cfg, |offsets| {
        let qp = QuasiPartition::build(ts, cfg.m)?;
        if sporadic {
            if let Some(k) = qp.sets.iter().position(|s| s.major.is_some()) {
                return Err(ModelError::field(
                    "arrivals",
                    format!(
                        "QPS here needs periodic releases for the tasks of a major execution set (set {k} on CPU {k}): its servers' windows end at those tasks' future release instants; sporadic arrivals run QPS only on a set worst or first fit partitions"
                    ),
                )
                .into());
            }
        }
        Ok(Qps::new(qp, offsets, cfg.check_invariants)?)
    })
}
