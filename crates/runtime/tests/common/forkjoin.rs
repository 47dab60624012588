//! The fork-join oracle over a run's trace, shared by tests/rtws.rs and
//! tests/push_pull_forkjoin.rs (every mechanism that executes fork-join jobs), and the random
//! fork-join sets of their stress tests.

use super::Rng;
use rtsched_model::forkjoin::{ForkJoinSet, ForkJoinTask};
use rtsched_runtime::{forkjoin_jobs, run_forkjoin, Mechanism, RunConfig, RunResult};
use rtsched_trace::Event;
use std::collections::{BTreeMap, HashMap};

pub const MS: u64 = 1_000_000;

/// A run of `ms` ms on `cpus`, starting 30 ms after the call.
pub fn cfg(cpus: Vec<usize>, ms: u64) -> RunConfig {
    let mut c = RunConfig::new(cpus, ms * MS);
    c.start_delay_ns = 30 * MS;
    c
}

/// `set` under `mech`, at SCHED_FIFO where the machine allows it (less noise from other
/// processes), else at normal priority.
pub fn run_fj_rt(set: &ForkJoinSet, mech: &Mechanism, mut c: RunConfig) -> RunResult {
    super::at_rt_if_permitted(&mut c, |c| run_forkjoin(set, mech, c))
}

/// Slot → (task, region, thread), in `slot_task_set` order.
pub fn slots(set: &ForkJoinSet) -> Vec<(u32, u32, u32)> {
    let mut v = Vec::new();
    for (i, t) in set.iter().enumerate() {
        for (r, reg) in t.regions.iter().enumerate() {
            for k in 0..reg.len() {
                v.push((i as u32, r as u32, k as u32));
            }
        }
    }
    v
}

/// What the trace says of one thread (slot `s`, job `j`).
#[derive(Default, Debug, Clone)]
struct Th {
    released: Option<u64>,
    first_run: Option<u64>,
    complete: Option<u64>,
    completions: u32,
}

/// Per fork-join job (task, seq): the job's release, its first run, its completion (the last
/// region's last thread) and whether it completed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FjJob {
    pub release: u64,
    pub deadline: u64,
    pub finish: Option<u64>,
}

/// The oracle over a run's trace; returns the job-level view.
pub fn check_fj(set: &ForkJoinSet, r: &RunResult) -> Result<BTreeMap<(u32, u32), FjJob>, String> {
    if r.dropped_records != 0 {
        return Err(format!("{} records dropped", r.dropped_records));
    }
    if let Some(e) = &r.accounting.error {
        return Err(format!("accounting: {e}"));
    }
    r.check_trace().map_err(|e| format!("check_trace: {e}"))?;
    let map = slots(set);
    let mut th: HashMap<(u32, u32), Th> = HashMap::new();
    let mut deadline: HashMap<(u32, u32), u64> = HashMap::new();
    let mut steals = Vec::new();
    let mut runs: Vec<(u64, u32, (u32, u32))> = Vec::new();
    for x in &r.trace.records {
        match x.event {
            Event::Release { job, deadline: d } => {
                let e = th.entry((job.task, job.job)).or_default();
                e.released = Some(x.time);
                deadline.insert((map[job.task as usize].0, job.job), d);
            }
            Event::Run { cpu, job } => {
                let e = th.entry((job.task, job.job)).or_default();
                e.first_run.get_or_insert(x.time);
                if e.completions > 0 {
                    return Err(format!("slot {} job {} runs after completing", job.task, job.job));
                }
                runs.push((x.time, cpu, (job.task, job.job)));
            }
            Event::Complete { job, .. } => {
                let e = th.entry((job.task, job.job)).or_default();
                e.complete = Some(x.time);
                e.completions += 1;
            }
            Event::Steal { job, from, to } => steals.push((x.time, job, from, to)),
            _ => {}
        }
    }
    // Every steal is followed by the stolen thread running on the thief, from another CPU
    // (except in the last `schedule` call of a worker that stopped at the end: the engine
    // delivers its final completion and drops what the plugin picks).
    for &(t, job, from, to) in &steals {
        if from == to {
            return Err(format!("steal of {job:?} from CPU {from} by itself"));
        }
        if t < r.duration_ns && !runs.iter().any(|&(rt, c, k)| rt >= t && c == to && k == (job.task, job.job)) {
            return Err(format!("stolen {job:?} at {t} never runs on the thief {to}"));
        }
    }
    let mut jobs = BTreeMap::new();
    for (i, t) in set.iter().enumerate() {
        let i = i as u32;
        let task_slots: Vec<usize> = (0..map.len()).filter(|&s| map[s].0 == i).collect();
        let mut seq = 0u32;
        let mut prev_finish: Option<u64> = None;
        loop {
            let get = |s: usize| th.get(&(s as u32, seq)).cloned().unwrap_or_default();
            let rel: Vec<Option<u64>> = task_slots.iter().map(|&s| get(s).released).collect();
            if rel.iter().all(Option::is_none) {
                break;
            }
            if rel.iter().any(|x| *x != rel[0]) {
                return Err(format!("task {i} job {seq}: its threads are released at different times {rel:?}"));
            }
            let release = rel[0].unwrap_or(0);
            // Exactly once, and regions in order: a region's threads run only after every
            // thread of the previous region completed.
            let mut region_done: Option<u64> = Some(release);
            let mut finish = None;
            for r in 0..t.regions.len() as u32 {
                let rs: Vec<Th> = task_slots.iter().filter(|&&s| map[s].1 == r).map(|&s| get(s)).collect();
                if rs.iter().any(|x| x.completions > 1) {
                    return Err(format!("task {i} job {seq} region {r}: a thread completed twice"));
                }
                let first = rs.iter().filter_map(|x| x.first_run).min();
                match (region_done, first) {
                    (None, Some(f)) => {
                        return Err(format!("task {i} job {seq} region {r}: runs at {f} before its fork"))
                    }
                    (Some(d), Some(f)) if f < d => {
                        return Err(format!("task {i} job {seq} region {r}: runs at {f} before {d}"))
                    }
                    _ => {}
                }
                region_done = if rs.iter().all(|x| x.completions == 1) {
                    rs.iter().filter_map(|x| x.complete).max()
                } else {
                    None
                };
                if r as usize == t.regions.len() - 1 {
                    finish = region_done;
                }
            }
            // Jobs of a task in order.
            if let (Some(p), Some(f)) = (prev_finish, task_slots.iter().filter_map(|&s| get(s).first_run).min()) {
                if f < p {
                    return Err(format!("task {i} job {seq} starts at {f} before its predecessor ends at {p}"));
                }
            }
            if seq > 0 && prev_finish.is_none() && task_slots.iter().any(|&s| get(s).first_run.is_some()) {
                return Err(format!("task {i} job {seq} runs while its predecessor is incomplete"));
            }
            prev_finish = finish;
            let d = deadline.get(&(i, seq)).copied().unwrap_or(u64::MAX);
            jobs.insert((i, seq), FjJob { release, deadline: d, finish });
            seq += 1;
        }
        if r.per_task.released[task_slots[0]] != seq {
            return Err(format!("task {i}: {seq} jobs in the trace, {} released", r.per_task.released[task_slots[0]]));
        }
    }
    // The library's job-level view agrees with this one (completions after the run's end do
    // not count there, as in the trace crate's metrics).
    let lib: BTreeMap<(u32, u32), Option<u64>> =
        forkjoin_jobs(set, r).iter().map(|j| ((j.task, j.job), j.finish)).collect();
    let mine: BTreeMap<(u32, u32), Option<u64>> =
        jobs.iter().map(|(k, j)| (*k, j.finish.filter(|&f| f <= r.duration_ns))).collect();
    if lib != mine {
        return Err(format!("forkjoin_jobs {lib:?} != the oracle's {mine:?}"));
    }
    Ok(jobs)
}

/// 1–4 tasks of 1–3 regions of 1–4 threads, periods 5–30 ms, total utilization about
/// `u_pct`% of the sum of the periods' budgets (light to overloaded), deadlines implicit or
/// constrained.
pub fn random_fj(rng: &mut Rng, m: u64) -> (ForkJoinSet, u64) {
    let n = rng.range(1, 4);
    let u_pct = rng.range(20, 150) * m;
    let mut tasks = Vec::new();
    for _ in 0..n {
        let t = rng.range(5, 30) * MS;
        let budget = (t as u128 * u_pct as u128 / 100 / n as u128) as u64;
        let regions: Vec<usize> = (0..rng.range(1, 3)).map(|_| rng.range(1, 4) as usize).collect();
        let threads: usize = regions.iter().sum();
        let each = (budget / threads as u64).max(20_000);
        let regions =
            regions.iter().map(|&k| (0..k).map(|_| rng.range(each / 2, each * 3 / 2).max(1)).collect()).collect();
        let d = if rng.below(3) == 0 { rng.range(t / 2, t) } else { t };
        tasks.push(ForkJoinTask::new(t, d, regions).unwrap());
    }
    (ForkJoinSet::new(tasks).unwrap(), u_pct)
}
