//! RUN (Regnier, Lima, Massa, Levin & Brandt, RTSS 2011) in virtual time: the reduction tree
//! and the server schedule are `rtsched_policy::run`'s; the loop is the one of the server-based
//! schedulers (`servers.rs`: it releases the jobs, runs on each CPU the pending job of the task
//! RUN puts there — or idles: a task whose job is done, an idle leaf — and records the
//! schedule in exact ticks of `1/L` ns, `L` [`rtsched_policy::run::Reduction::scale`]).
//!
//! Refused with one line: constrained or arbitrary deadlines and `U > m` (the reduction's
//! refusals), sporadic arrivals (RUN's servers need each task's future deadlines: a periodic
//! task's deadline set is known, a sporadic one's is not), overhead injection.

use crate::config::{Arrivals, Scheduler, SimConfig};
use crate::error::SimError;
use crate::result::SimResult;
use crate::servers::{simulate_servers, ServerPolicy};
use rtsched_model::{ModelError, TaskSet};
use rtsched_policy::run::{Reduction, Run};

impl ServerPolicy for Run {
    const NAME: &'static str = "RUN";
    fn scale(&self) -> u128 {
        self.reduction().scale()
    }
    /// RUN's servers at this instant (budgets, release instants, selection); at 0 they were
    /// chosen by [`Run::new`].
    fn decide(&mut self, now: u128) -> Result<(), String> {
        if now > 0 {
            self.advance(now).map_err(|v| v.to_string())?;
        }
        Ok(())
    }
    fn task_on(&self, cpu: usize) -> Option<u32> {
        Run::task_on(self, cpu)
    }
    fn next_event(&self) -> u128 {
        Run::next_event(self)
    }
}

/// Simulates RUN. Same configuration, records and metrics as [`crate::simulate`].
pub(crate) fn simulate_run(ts: &TaskSet, sched: &Scheduler, cfg: &SimConfig) -> Result<SimResult, SimError> {
    if let Arrivals::Sporadic { .. } = cfg.arrivals {
        return Err(ModelError::field(
            "arrivals",
            "RUN needs periodic releases: its servers' budgets come from each task's future deadlines (Regnier et al., RTSS 2011), which sporadic arrivals do not give",
        )
        .into());
    }
    simulate_servers(ts, sched, cfg, |offsets| {
        let red = Reduction::build(ts, cfg.m)?;
        Ok(Run::new(red, offsets, cfg.check_invariants)?)
    })
}
