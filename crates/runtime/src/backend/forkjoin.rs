//! Parallel workloads on the runtime: fork-join sets (the RTWS paper's task model, §III) and
//! DAG sets (Baruah, Bonifaci, Marchetti-Spaccamela, Stougie & Wiese, RTSS 2012): the
//! thread-slot task set each runs as (one slot per thread, or per node), the run itself, and
//! the job-level view of its result. Both run through one precedence structure
//! (`mechanism::forkjoin::Shape`: a fork-join set runs as its DAG).

use super::result::RunResult;
use super::run;
use crate::config::RunConfig;
use crate::mechanism::Mechanism;
use crate::RunError;
use rtsched_model::dag::DagSet;
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
    cfg.dag = None;
    cfg.forkjoin = Some(std::sync::Arc::new(set.clone()));
    run(&ts, mech, &cfg)
}

/// The run's task set for a DAG workload: one sequential task per node *slot* — task `i`,
/// node `k`, in that order — with the node's WCET and the DAG task's deadline and period,
/// named `NAME/nK` (`NAME` = the task's name or index). A job of slot `s` is the node of job
/// `j` of its DAG task: the run's trace, summary and exports are per node.
pub fn dag_slot_task_set(set: &DagSet) -> Result<TaskSet, RunError> {
    let mut tasks = Vec::new();
    for (i, t) in set.iter().enumerate() {
        let name = t.name().map(str::to_string).unwrap_or_else(|| i.to_string());
        for (k, &c) in t.wcets().iter().enumerate() {
            tasks.push(Task {
                name: Some(format!("{name}/n{k}")),
                wcet: c,
                deadline: t.deadline(),
                period: t.period(),
                segments: None,
            });
        }
    }
    TaskSet::new(tasks).map_err(|e| RunError::Config(e.to_string()))
}

/// Runs the DAG set `set` under `mech` (a mechanism that executes parallel jobs: `rtws`,
/// `push-pull`, `push-pull-fp`): the run's task set is [`dag_slot_task_set`]`(set)`, and
/// `cfg.dag` is set to `set`. A node is ready when every predecessor of the same job has
/// completed, on the CPU that completed the last of them (docs/dag.md, "Runtime").
pub fn run_dag(set: &DagSet, mech: &Mechanism, cfg: &RunConfig) -> Result<RunResult, RunError> {
    let ts = dag_slot_task_set(set)?;
    let mut cfg = cfg.clone();
    cfg.forkjoin = None;
    cfg.dag = Some(std::sync::Arc::new(set.clone()));
    run(&ts, mech, &cfg)
}

/// The fork-join jobs of a run of `set` ([`run_forkjoin`]) as the trace crate's `JobStats`,
/// aggregated from the run's per-thread statistics as the simulator's RTWS does: `start` = the
/// first thread's start (`first_cpu` where it started), `finish` = the last thread's completion
/// when every thread of the job completed (`last_cpu` where it completed), `executed`,
/// `preemptions` and `migrations` summed over the threads. Sorted by task, then job.
pub fn forkjoin_jobs(set: &ForkJoinSet, r: &RunResult) -> Vec<JobStats> {
    jobs_of(&set.iter().map(|t| t.threads()).collect::<Vec<_>>(), r)
}

/// The DAG jobs of a run of `set` ([`run_dag`]), aggregated from its per-node statistics as
/// [`forkjoin_jobs`] does from threads: `finish` = the last node's completion when every node
/// of the job completed. Sorted by task, then job.
pub fn dag_jobs(set: &DagSet, r: &RunResult) -> Vec<JobStats> {
    jobs_of(&set.iter().map(|t| t.nodes()).collect::<Vec<_>>(), r)
}

/// The jobs of tasks of `slots[i]` consecutive slots each, from the run's per-slot statistics.
fn jobs_of(slots: &[usize], r: &RunResult) -> Vec<JobStats> {
    let mut task_of = Vec::new();
    for (i, &k) in slots.iter().enumerate() {
        task_of.extend(std::iter::repeat_n(i as u32, k));
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
            if done < slots[js.task as usize] {
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

/// The per-job CSV of a DAG run, one row per DAG job (`rtsched run DAG.json --job-csv`).
pub fn dag_job_csv(set: &DagSet, r: &RunResult) -> String {
    rtsched_trace::export::job_rows_csv(&dag_jobs(set, r), r.duration_ns)
}

/// The job-level summary of a fork-join run (the summary's `forkjoin` object): jobs released,
/// completed and pending, deadline misses (`JobStats::missed` at the run's end), the largest
/// response time, threads and steals, and the same per task (`per_task`).
pub fn forkjoin_summary(set: &ForkJoinSet, r: &RunResult) -> Value {
    let names: Vec<Option<&str>> = set.iter().map(|t| t.name.as_deref()).collect();
    let mut v = summary_of(&forkjoin_jobs(set, r), &names, r);
    v["threads"] = json!(r.metrics.jobs);
    v
}

/// The job-level summary of a DAG run (the summary's `dag` object): as [`forkjoin_summary`],
/// with `nodes` (node jobs run) for `threads`.
pub fn dag_summary(set: &DagSet, r: &RunResult) -> Value {
    let names: Vec<Option<&str>> = set.iter().map(|t| t.name()).collect();
    let mut v = summary_of(&dag_jobs(set, r), &names, r);
    v["nodes"] = json!(r.metrics.jobs);
    v
}

/// Jobs, completions, misses and response times, over all and per task.
fn summary_of(jobs: &[JobStats], names: &[Option<&str>], r: &RunResult) -> Value {
    let end = r.duration_ns;
    let count = |js: &mut dyn Iterator<Item = &JobStats>| {
        let (mut n, mut done, mut missed, mut max_rt) = (0usize, 0usize, 0usize, None::<u64>);
        for j in js {
            n += 1;
            done += usize::from(j.finish.is_some());
            missed += usize::from(j.missed(end));
            if let Some(rt) = j.response_time() {
                max_rt = Some(max_rt.map_or(rt, |m| m.max(rt)));
            }
        }
        (n, done, missed, max_rt)
    };
    let per_task: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let (n, done, missed, max_rt) = count(&mut jobs.iter().filter(|j| j.task as usize == i));
            json!({
                "task": i,
                "name": name,
                "jobs": n,
                "completed": done,
                "deadline_misses": missed,
                "max_response_time_ns": max_rt,
            })
        })
        .collect();
    let (n, done, missed, max_rt) = count(&mut jobs.iter());
    json!({
        "tasks": names.len(),
        "jobs": n,
        "completed": done,
        "pending": n - done,
        "deadline_misses": missed,
        "max_response_time_ns": max_rt,
        "steals": r.metrics.steals,
        "per_task": per_task,
    })
}
