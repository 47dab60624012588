//! Fork-join workloads on the runtime (the RTWS paper's task model, §III): the thread-slot
//! task set a fork-join set runs as, the run itself, and the job-level view of its result.

use super::result::RunResult;
use super::run;
use crate::config::RunConfig;
use crate::mechanism::Mechanism;
use crate::RunError;
use rtsched_model::forkjoin::ForkJoinSet;
use rtsched_model::{Task, TaskSet};
use rtsched_trace::Event;
use serde_json::{json, Value};
use std::collections::HashMap;

/// The run's task set for a fork-join workload (RTWS paper, §III): one sequential task per
/// thread *slot* — task `i`, region `r`, thread `k`, in that order — with the thread's cost as
/// its WCET and the fork-join task's deadline and period, named `NAME/rR.K` (`NAME` = the task's
/// name or index). A job of slot `s` is the thread of job `j` of its fork-join task: the run's
/// trace, summary and exports are per thread, as the simulator's RTWS trace is.
pub fn slot_task_set(set: &ForkJoinSet) -> Result<TaskSet, RunError> {
    let mut tasks = Vec::new();
    for (i, t) in set.iter().enumerate() {
        let name = t.name.clone().unwrap_or_else(|| i.to_string());
        for (r, region) in t.regions.iter().enumerate() {
            for (k, &c) in region.iter().enumerate() {
                tasks.push(Task {
                    name: Some(format!("{name}/r{r}.{k}")),
                    wcet: c,
                    deadline: t.deadline,
                    period: t.period,
                });
            }
        }
    }
    TaskSet::new(tasks).map_err(|e| RunError::Config(e.to_string()))
}

/// Runs the fork-join set `set` under `mech` (a mechanism that executes fork-join jobs, e.g.
/// `rtws`): the run's task set is [`slot_task_set`]`(set)`, and `cfg.forkjoin` is set to `set`.
pub fn run_forkjoin(set: &ForkJoinSet, mech: &Mechanism, cfg: &RunConfig) -> Result<RunResult, RunError> {
    let ts = slot_task_set(set)?;
    let mut cfg = cfg.clone();
    cfg.forkjoin = Some(std::sync::Arc::new(set.clone()));
    run(&ts, mech, &cfg)
}

/// One fork-join job as the run's trace shows it (times in ns from time zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForkJoinJob {
    pub task: u32,
    pub seq: u32,
    pub release: u64,
    pub deadline: u64,
    /// When its last thread completed, if every thread of the job completed.
    pub finish: Option<u64>,
}

/// The fork-join jobs of a run of `set` ([`run_forkjoin`]): a job completes when every one of
/// its threads (slots) has completed, at the latest completion.
pub fn forkjoin_jobs(set: &ForkJoinSet, r: &RunResult) -> Vec<ForkJoinJob> {
    let mut task_of = Vec::new();
    for (i, t) in set.iter().enumerate() {
        task_of.extend(std::iter::repeat_n(i as u32, t.threads()));
    }
    let mut jobs: HashMap<(u32, u32), (ForkJoinJob, usize)> = HashMap::new();
    for x in &r.trace.records {
        let (job, done) = match x.event {
            Event::Release { job, deadline } => {
                let Some(&i) = task_of.get(job.task as usize) else { continue };
                let e = jobs
                    .entry((i, job.job))
                    .or_insert((ForkJoinJob { task: i, seq: job.job, release: x.time, deadline, finish: None }, 0));
                e.0.release = e.0.release.min(x.time);
                continue;
            }
            Event::Complete { job, .. } => (job, x.time),
            _ => continue,
        };
        let Some(&i) = task_of.get(job.task as usize) else { continue };
        if let Some(e) = jobs.get_mut(&(i, job.job)) {
            e.1 += 1;
            e.0.finish = Some(e.0.finish.map_or(done, |f| f.max(done)));
        }
    }
    let mut out: Vec<ForkJoinJob> = jobs
        .into_values()
        .map(|(mut j, n)| {
            if n < set.tasks()[j.task as usize].threads() {
                j.finish = None;
            }
            j
        })
        .collect();
    out.sort_unstable_by_key(|j| (j.task, j.seq));
    out
}

/// The job-level summary of a fork-join run (the summary's `forkjoin` object): jobs released,
/// completed and pending, deadline misses (a job misses when it did not complete by its
/// deadline, for deadlines up to the run's end), the largest response time, threads and steals.
pub fn forkjoin_summary(set: &ForkJoinSet, r: &RunResult) -> Value {
    let jobs = forkjoin_jobs(set, r);
    let end = r.duration_ns;
    let completed = jobs.iter().filter(|j| j.finish.is_some()).count();
    let misses = jobs.iter().filter(|j| j.deadline <= end && j.finish.is_none_or(|f| f > j.deadline)).count();
    let response = jobs.iter().filter_map(|j| j.finish.map(|f| f - j.release)).max();
    json!({
        "tasks": set.len(),
        "jobs": jobs.len(),
        "completed": completed,
        "pending": jobs.len() - completed,
        "deadline_misses": misses,
        "max_response_time_ns": response,
        "threads": r.metrics.jobs,
        "steals": r.metrics.steals,
    })
}
