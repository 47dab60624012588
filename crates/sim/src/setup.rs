//! The setup shared by every event loop (the engine's ideal and overhead loops, SP-RES, RTWS
//! and fork-join G-EDF): the validated common parameters ([`setup`]: first releases, horizon
//! and why it was capped, the memory bounds on jobs and on the trace) and the seeded draws of
//! inter-arrival gaps and execution times ([`Draw`]), and [`EarlyEnd`], which ends a loop
//! before its horizon on Ctrl-C or when a work bound is reached.

use crate::config::{Arrivals, ExecTimes, SimConfig};
use crate::error::SimError;
use crate::recorder::Recorder;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::time::format_time_exact as fe;
use rtsched_model::{ModelError, TaskSet, Time, MAX_TIME};

/// Seeded draws of inter-arrival gaps and execution times (shared by all engines).
pub(crate) struct Draw {
    arr_rng: ChaCha8Rng,
    exec_rng: ChaCha8Rng,
    susp_rng: ChaCha8Rng,
}

impl Draw {
    pub(crate) fn new(cfg: &SimConfig) -> Draw {
        let arr = match cfg.arrivals {
            Arrivals::Sporadic { seed, .. } => seed,
            _ => 0,
        };
        let exec = match cfg.exec {
            ExecTimes::UniformFraction { seed, .. } => seed,
            _ => 0,
        };
        let susp = match cfg.suspensions {
            crate::config::SuspensionTimes::Uniform { seed } => seed,
            crate::config::SuspensionTimes::Max => 0,
        };
        Draw {
            arr_rng: ChaCha8Rng::seed_from_u64(arr),
            exec_rng: ChaCha8Rng::seed_from_u64(exec),
            susp_rng: ChaCha8Rng::seed_from_u64(susp),
        }
    }
    /// The length of one suspension with bounds `b`: its upper bound, or drawn uniformly.
    #[inline]
    pub(crate) fn suspension(
        &mut self,
        how: crate::config::SuspensionTimes,
        b: rtsched_model::task::SuspensionBound,
    ) -> Time {
        match how {
            crate::config::SuspensionTimes::Max => b.max,
            crate::config::SuspensionTimes::Uniform { .. } => self.susp_rng.random_range(b.min..=b.max),
        }
    }
    #[inline]
    pub(crate) fn exec(&mut self, exec: &ExecTimes, task: usize, wcet: Time) -> Time {
        match exec {
            ExecTimes::Wcet => wcet,
            ExecTimes::UniformFraction { lo, .. } => {
                let u: f64 = self.exec_rng.random();
                let f = lo + (1.0 - lo) * u;
                ((wcet as f64 * f).ceil() as Time).clamp(1, wcet)
            }
            ExecTimes::Fixed(v) => v.get(task).copied().unwrap_or(wcet).clamp(1, wcet),
        }
    }
    #[inline]
    pub(crate) fn gap(&mut self, arrivals: &Arrivals, period: Time) -> Time {
        match arrivals {
            Arrivals::Periodic { .. } => period,
            Arrivals::Sporadic { max_extra_delay, .. } => period + self.arr_rng.random_range(0..=*max_extra_delay),
        }
    }
}

/// Validated common parameters: first releases, horizon, why it was capped, jobs expected.
pub(crate) struct Setup {
    pub(crate) offsets: Vec<Time>,
    pub(crate) horizon: Time,
    pub(crate) capped: Option<String>,
    pub(crate) expected: u64,
}

pub(crate) fn setup(ts: &TaskSet, cfg: &SimConfig) -> Result<Setup, ModelError> {
    let m = cfg.m;
    rtsched_model::check_m(u64::from(m))?;
    let n = ts.len();
    if cfg.horizon_cap == 0 || cfg.horizon_cap > 1 << 60 {
        return Err(ModelError::field("horizon_cap", "must be in 1..=2^60 ns"));
    }
    let offsets: Vec<Time> = match &cfg.arrivals {
        Arrivals::Periodic { offsets } if offsets.is_empty() => vec![0; n],
        Arrivals::Periodic { offsets } => {
            if offsets.len() != n {
                return Err(ModelError::field("offsets", format!("{} offsets for {n} tasks", offsets.len())));
            }
            if let Some(i) = offsets.iter().position(|&o| o > MAX_TIME) {
                return Err(ModelError::task_field(i, "offset", format!("exceeds {MAX_TIME} ns")));
            }
            offsets.clone()
        }
        Arrivals::Sporadic { max_extra_delay, .. } => {
            if *max_extra_delay > MAX_TIME {
                return Err(ModelError::field("max_extra_delay", format!("exceeds {MAX_TIME} ns")));
            }
            vec![0; n]
        }
    };
    match &cfg.exec {
        ExecTimes::UniformFraction { lo, .. } if !(0.0..=1.0).contains(lo) => {
            return Err(ModelError::field("lo", format!("the execution-time fraction must be in [0, 1], got {lo}")));
        }
        ExecTimes::Fixed(v) => {
            if v.len() != n {
                return Err(ModelError::field("exec", format!("{} fixed execution times for {n} tasks", v.len())));
            }
            for (i, (&x, t)) in v.iter().zip(ts.iter()).enumerate() {
                if x == 0 || x > t.wcet {
                    return Err(ModelError::task_field(
                        i,
                        "exec",
                        format!("a fixed execution time must be in 1..=WCET ({}), got {x}", t.wcet),
                    ));
                }
            }
        }
        _ => {}
    }
    let cap = cfg.horizon_cap;
    let max_off = offsets.iter().copied().max().unwrap_or(0);
    let (horizon, capped) = match cfg.horizon {
        Some(0) => return Err(ModelError::field("horizon", "must be at least 1 ns")),
        Some(h) if h > cap => {
            (cap, Some(format!("the requested horizon {} exceeds the cap of {}; simulated to the cap", fe(h), fe(cap))))
        }
        Some(h) => (h, None),
        None => match ts.hyperperiod(cap) {
            Ok(hp) if hp.saturating_add(max_off) <= cap => (hp + max_off, None),
            Ok(hp) => (
                cap,
                Some(format!(
                    "one hyperperiod ({}) after the largest offset ({}) exceeds the cap of {}; simulated to the cap",
                    fe(hp),
                    fe(max_off),
                    fe(cap)
                )),
            ),
            Err(e) => (cap, Some(format!("{e}; simulated to the cap of {}", fe(cap)))),
        },
    };
    // Memory bound: jobs released before the horizon.
    let mut expected: u128 = 0;
    for (i, t) in ts.iter().enumerate() {
        if offsets[i] < horizon {
            expected += ((horizon - offsets[i] - 1) / t.period) as u128 + 1;
        }
    }
    // Without kept job rows (`keep_jobs = false`) memory does not grow with the jobs, and the
    // work is bounded by `max_events`.
    if cfg.keep_jobs {
        check_max_jobs(expected, cfg)?;
    }
    // A kept trace holds at least 3 records per job (release, run, completion; about 4 with
    // preemptions, migrations and idles), 32 bytes each: refused when certain to overflow,
    // ended early (`EarlyEnd`) when it does.
    if cfg.record_trace && 3 * expected > cfg.max_trace_records as u128 {
        return Err(ModelError::field("horizon", format!(
            "keeping the trace of {expected} jobs needs at least {} records ({} MB), above max_trace_records = {} ({} MB); shorten the horizon or ask for no trace output",
            3 * expected, 3 * expected * 32 / 1_000_000, cfg.max_trace_records, cfg.max_trace_records as u128 * 32 / 1_000_000
        )));
    }
    Ok(Setup { offsets, horizon, capped, expected: expected as u64 })
}

/// The memory bound of kept job rows: `max_jobs`.
pub(crate) fn check_max_jobs(expected: u128, cfg: &SimConfig) -> Result<(), ModelError> {
    if expected > cfg.max_jobs as u128 {
        return Err(ModelError::field("horizon", format!("the simulation would release {expected} jobs, above max_jobs = {}; shorten the horizon or raise the bound", cfg.max_jobs)));
    }
    Ok(())
}

/// Ends a loop before its horizon: on Ctrl-C ([`SimConfig::stop`]), or when it has processed
/// [`SimConfig::max_events`] events or kept [`SimConfig::max_trace_records`] trace records.
/// The loop then ends at the instant it was about to process, as if that were the horizon
/// (only completions are processed there), and the result's horizon message says why.
pub(crate) struct EarlyEnd {
    why: Option<String>,
}

impl EarlyEnd {
    pub(crate) fn new() -> EarlyEnd {
        EarlyEnd { why: None }
    }

    /// Called before processing instant `t < h`: `true` (and the recorder's horizon moved to
    /// `t`) when the loop must end at `t`; the caller then sets its horizon to `t`.
    #[inline]
    pub(crate) fn check(
        &mut self,
        cfg: &SimConfig,
        t: Time,
        h: Time,
        events: u64,
        rec: &mut Recorder,
    ) -> Result<bool, SimError> {
        if t >= h || self.why.is_some() {
            return Ok(false);
        }
        let why = if cfg.stop.requested() {
            format!("interrupted (Ctrl-C): simulated up to {}", fe(t))
        } else if events >= cfg.max_events {
            format!("stopped at {} after {events} events, the bound max_events = {}; shorten the horizon (or use a larger quantum)", fe(t), cfg.max_events)
        } else if rec.trace_len() >= cfg.max_trace_records {
            format!(
                "stopped at {}: the trace reached max_trace_records = {} records ({} MB); shorten the horizon or ask for no trace output",
                fe(t),
                cfg.max_trace_records,
                cfg.max_trace_records as u128 * 32 / 1_000_000
            )
        } else {
            return Ok(false);
        };
        rec.shorten_horizon(t)?;
        self.why = Some(why);
        Ok(true)
    }

    /// The horizon message: why the loop ended early, else why the horizon was capped.
    pub(crate) fn message(self, capped: Option<String>) -> Option<String> {
        self.why.or(capped)
    }
}
