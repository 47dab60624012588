//! What the RUN and QPS oracles (`tests/run.rs`, `tests/qps.rs`) share.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rtsched_model::exact::{int, ratio, zero};
use rtsched_model::{TaskSet, Time};
use rtsched_sim::{ExecTimes, SimConfig, SimResult};
use rtsched_trace::{Event, JobId};

pub fn j(task: u32, job: u32) -> JobId {
    JobId { task, job }
}

pub fn records(r: &SimResult) -> Vec<(Time, Event)> {
    r.trace.as_ref().unwrap().records.iter().map(|r| (r.time, r.event)).collect()
}

/// A random implicit-deadline set with `U ≤ m` over periods with a small hyperperiod; with
/// `full`, a last task tops `U` up to `m` exactly when one task can.
pub fn random_set(rng: &mut ChaCha8Rng, m: u32, full: bool) -> TaskSet {
    let periods = [4u64, 5, 6, 8, 10, 12, 15, 20, 30, 60];
    let mut tasks = Vec::new();
    let mut u = zero();
    loop {
        let t = periods[rng.random_range(0..periods.len())];
        let c = rng.random_range(1..=t);
        let nu = u.clone() + ratio(c as u128, t as u128);
        if nu > int(m as i128) {
            if full {
                for &t in &periods {
                    let gap = int(m as i128) - u.clone();
                    let c = gap.clone() * int(t as i128);
                    if gap > zero() && c.is_integer() && c <= int(t as i128) {
                        tasks.push((u64::try_from(&c.to_integer()).unwrap(), t, t));
                        break;
                    }
                }
            }
            break;
        }
        u = nu;
        tasks.push((c, t, t));
    }
    TaskSet::from_cdt(&tasks).unwrap()
}

/// Per job, its preemptions and migrations counted from the trace's records alone (a
/// `Preempt` of the job, a `Migration` of the job), independently of the metrics.
pub fn trace_counts(r: &SimResult) -> std::collections::BTreeMap<JobId, (u64, u64)> {
    let mut out = std::collections::BTreeMap::new();
    for rec in &r.trace.as_ref().unwrap().records {
        match rec.event {
            Event::Preempt { job, .. } => out.entry(job).or_insert((0, 0)).0 += 1,
            Event::Migration { job, .. } => out.entry(job).or_insert((0, 0)).1 += 1,
            _ => {}
        }
    }
    out
}

/// The configuration of the trace-counting oracles: invariants checked, jobs kept, the trace
/// recorded, and (`short`) jobs completing early, at 30–100% of their WCET drawn from `seed`.
pub fn traced_config(m: u32, short: bool, seed: u64) -> SimConfig {
    let mut cfg = SimConfig::new(m);
    cfg.check_invariants = true;
    cfg.keep_jobs = true;
    cfg.record_trace = true;
    if short {
        cfg.exec = ExecTimes::UniformFraction { lo: 0.3, seed };
    }
    cfg
}
