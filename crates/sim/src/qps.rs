//! QPS (Massa, Lima, Regnier, Levin & Brandt, RTS 2016) in virtual time: the quasi-partition,
//! the modes and the budgets are `rtsched_policy::qps`'s; the loop is the one of the
//! server-based schedulers (`servers.rs`: it releases the jobs, tells QPS about releases and
//! completions, runs on each CPU the pending job of the task QPS puts there, and records the
//! schedule in exact ticks of `1/L` ns, `L` [`rtsched_policy::qps::QuasiPartition::scale`]).
//!
//! Refused with one line: constrained or arbitrary deadlines and `U > m` (the quasi-partition's
//! refusals), sporadic arrivals (this QPS plans its windows at every task's future release
//! instants, which sporadic arrivals do not give; the paper's QPS handles sporadic tasks, ours
//! does not), overhead injection.

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
    if let Arrivals::Sporadic { .. } = cfg.arrivals {
        return Err(ModelError::field(
            "arrivals",
            "QPS here needs periodic releases: its windows end at each task's future release instants, which sporadic arrivals do not give (the paper's QPS schedules sporadic tasks; this reconstruction does not)",
        )
        .into());
    }
    simulate_servers(ts, sched, cfg, |offsets| {
        let qp = QuasiPartition::build(ts, cfg.m)?;
        Ok(Qps::new(qp, offsets, cfg.check_invariants)?)
    })
}
