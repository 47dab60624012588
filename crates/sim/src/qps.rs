//! QPS (Massa, Lima, Regnier, Levin & Brandt, RTS 2016) in virtual time: the quasi-partition,
//! the modes and the budgets are `rtsched_policy::qps`'s; the loop is the one of the
//! server-based schedulers (`servers.rs`: it releases the jobs, tells QPS about releases and
//! completions, runs on each CPU the pending job of the task QPS puts there, and records the
//! schedule in exact ticks of `1/L` ns, `L` [`rtsched_policy::qps::QuasiPartition::scale`]).
//!
//! Sporadic arrivals run on every set QPS takes: in minor sets by uniprocessor EDF, in major
//! sets by our rule for late tasks (rtsched_policy::qps's module notes, "Sporadic releases": a
//! window with a late task stays partitioned, or lasts 1 ns when its load with the late tasks
//! exceeds 1; each such window counts as an event toward `max_events`). Refused with one line: constrained or arbitrary deadlines and `U > m` (the
//! quasi-partition's refusals), overhead injection.

use crate::config::{Scheduler, SimConfig};
use crate::error::SimError;
use crate::result::SimResult;
use crate::servers::{simulate_servers, ServerPolicy};
use rtsched_model::TaskSet;
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
    fn extra_events(&self) -> u64 {
        self.short_windows()
    }
}

/// Simulates QPS. Same configuration, records and metrics as [`crate::simulate`].
pub(crate) fn simulate_qps(ts: &TaskSet, sched: &Scheduler, cfg: &SimConfig) -> Result<SimResult, SimError> {
    simulate_servers(ts, sched, cfg, |offsets| {
        let qp = QuasiPartition::build(ts, cfg.m)?;
        Ok(Qps::new(qp, offsets, cfg.check_invariants)?)
    })
}
