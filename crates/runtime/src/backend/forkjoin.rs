//! Fork-join workloads on the runtime (the RTWS paper's task model, §III): the thread-slot
//! task set a fork-join set runs as, the run itself, and the job-level view of its result.

use super::result::RunResult;
use super::run;
use crate::config::RunConfig;
use crate::mechanism::Mechanism;
use crate::RunError;
use rtsched_model::forkjoin::ForkJoinSet;
use rtsched_model::{Task, TaskSet};
use rtsched_trace::JobStats;
use serde_json::{json, Value};
use std::collections::BTreeMap;

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
                    segments: None,
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

/// The fork-join jobs of a run of `set` ([`run_forkjoin`]) as the trace crate's `JobStats`,
/// aggregated from the run's per-thread statistics as the simulator's RTWS does: `start` = the
/// first thread's start (`first_cpu` where it started), `finish` = the last thread's completion
/// when every thread of the job completed (`last_cpu` where it completed), `executed`,
/// `preemptions` and `migrations` summed over the threads. Sorted by task, then job.
pub fn forkjoin_jobs(set: &ForkJoinSet, r: &RunResult) -> Vec<JobStats> {
    let mut task_of = Vec::new();
    for (i, t) in set.iter().enumerate() {
        task_of.extend(std::iter::repeat_n(i as u32, t.threads()));
    }
    // (job stats, threads seen, threads completed)
    let mut jobs: BTreeMap<(u32, u32), (JobStats, usize, usize)> = BTreeMap::new();
    for th in &r.metrics.per_job {
        let Some(&i) = task_of.get(th.task as usize) else { continue };
        let e = jobs.entry((i, th.job)).or_insert_with(|| {
            (
                JobStats {
                    task: i,
                    job: th.job,
                    release: th.release,
                    deadline: th.deadline,
                    start: None,
                    finish: None,
                    first_cpu: None,
                    last_cpu: None,
                    executed: 0,
                    preemptions: 0,
                    migrations: 0,
                },
                0,
                0,
            )
        });
        let (js, seen, done) = e;
        *seen += 1;
        js.release = js.release.min(th.release);
        js.executed += th.executed;
        js.preemptions += th.preemptions;
        js.migrations += th.migrations;
        if let Some(s) = th.start {
            if js.start.is_none_or(|x| s < x) {
                js.start = Some(s);
                js.first_cpu = th.first_cpu;
            }
        }
        if let Some(f) = th.finish {
            *done += 1;
            if js.finish.is_none_or(|x| f >= x) {
                js.finish = Some(f);
                js.last_cpu = th.last_cpu;
            }
        }
    }
    jobs.into_values()
        .map(|(mut js, _, done)| {
            if done < set.tasks()[js.task as usize].threads() {
                js.finish = None;
                js.last_cpu = None;
            }
            js
        })
        .collect()
}

/// The per-job CSV of a fork-join run, one row per fork-join job (the columns of the trace's
/// job CSV; `rtsched run FJ.json --job-csv`).
pub fn forkjoin_job_csv(set: &ForkJoinSet, r: &RunResult) -> String {
    rtsched_trace::export::job_rows_csv(&forkjoin_jobs(set, r), r.duration_ns)
}

/// The job-level summary of a fork-join run (the summary's `forkjoin` object): jobs released,
/// completed and pending, deadline misses (`JobStats::missed` at the run's end), the largest
/// response time, threads and steals.
pub fn forkjoin_summary(set: &ForkJoinSet, r: &RunResult) -> Value {
    let jobs = forkjoin_jobs(set, r);
    let end = r.duration_ns;
    let completed = jobs.iter().filter(|j| j.finish.is_some()).count();
    json!({
        "tasks": set.len(),
        "jobs": jobs.len(),
        "completed": completed,
        "pending": jobs.len() - completed,
        "deadline_misses": jobs.iter().filter(|j| j.missed(end)).count(),
        "max_response_time_ns": jobs.iter().filter_map(JobStats::response_time).max(),
        "threads": r.metrics.jobs,
        "steals": r.metrics.steals,
    })
}
