//! The job book of the thread-level loops over fork-join tasks ([`crate::rtws`] and
//! [`crate::fj_gedf`]): jobs, their threads in creation order, each task's backlog of released
//! jobs, and the regions' joins — [`RegionProgress`], the one bookkeeping of fork-join jobs the
//! runtime shares (RTWS paper, §III: region `r + 1` forks only when every thread of region `r`
//! has completed; a task's jobs execute in release order). What the two loops differ in (who
//! picks a ready thread: work stealing or G-EDF links) stays in their files.
//!
//! Numbering: trace task `i` is fork-join task `i`; trace job `k` of task `i` is the `k`-th
//! thread of task `i` in creation order ([`ThreadInfo`] says which job, region and thread).

use crate::config::{ExecTimes, SimConfig};
use crate::error::SimError;
use crate::recorder::Recorder;
use crate::setup::{check_max_jobs, setup, Setup};
use rtsched_model::forkjoin::{ForkJoinSet, Join, RegionProgress};
use rtsched_model::{ModelError, TaskSet, Time};
use rtsched_trace::{Event, JobId, JobStats, Metrics, Trace};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Which job, region and thread a trace job (a thread) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ThreadInfo {
    pub task: u32,
    /// The job's sequence number.
    pub job: u32,
    pub region: u32,
    pub thread: u32,
}

/// What a simulation of a fork-join set measured (under RTWS or under G-EDF over threads).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForkJoinResult {
    pub m: u32,
    pub horizon: Time,
    pub horizon_capped: bool,
    pub horizon_message: Option<String>,
    /// Jobs released in `[0, horizon)`.
    pub jobs: u64,
    /// Jobs whose last region joined by the horizon.
    pub completed: u64,
    pub pending: u64,
    /// Job-level (`JobStats::missed`).
    pub deadline_misses: u64,
    pub max_tardiness_ns: Time,
    pub max_response_time_ns: Option<Time>,
    /// Threads forked in `[0, horizon)`, completed and still pending at the horizon.
    pub threads: u64,
    pub threads_completed: u64,
    pub threads_pending: u64,
    /// Rule E picks (`Steal` records).
    pub steals: u64,
    /// Thread-level, from `rtsched_trace::Metrics`.
    pub preemptions: u64,
    pub migrations: u64,
    pub context_switches: u64,
    /// Releases and thread completions processed.
    pub events: u64,
    /// Job-level statistics (`start`: first thread run; `finish`: last join; `executed`,
    /// `preemptions`, `migrations`: sums over the job's threads; `first_cpu`: where its first
    /// thread started; `last_cpu`: where its last join happened, `None` while incomplete).
    #[serde(skip)]
    pub per_job: Vec<JobStats>,
    /// Thread-level metrics as the trace crate computes them.
    #[serde(skip)]
    pub thread_metrics: Metrics,
    /// `thread_info[task][k]`: trace job `k` of `task`.
    #[serde(skip)]
    pub thread_info: Vec<Vec<ThreadInfo>>,
    #[serde(skip)]
    pub trace: Option<Trace>,
    /// Under G-EDF over threads: threads of a forked region (not a job's first) that first ran
    /// on a CPU other than the one they were forked on (a push/pull migration of the new
    /// thread); `None` under RTWS, where that move is a steal (`steals`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_starts: Option<u64>,
}

impl ForkJoinResult {
    /// Per-job CSV (the columns of `Trace::to_job_csv`) of the job-level statistics.
    pub fn to_job_csv(&self) -> String {
        rtsched_trace::export::job_rows_csv(&self.per_job, self.horizon)
    }
}

/// A released job.
pub(crate) struct JobRt {
    pub task: u32,
    pub seq: u32,
    pub release: Time,
    pub deadline: Time,
    /// First run of any of its threads.
    pub start: Option<Time>,
    /// Its last region's join.
    pub finish: Option<Time>,
    /// The first region's threads, created at release (so that the trace's release times are
    /// the job's), until the job becomes ready or forks.
    pub first: Option<Vec<u32>>,
}

/// A created thread.
pub(crate) struct ThreadRt {
    /// Index into the book's jobs.
    pub job: u32,
    /// Its trace job number within its task.
    pub trace_seq: u32,
    /// Remaining cost while not running.
    pub rem: Time,
    /// CPU it last ran on (`NONE`: never ran), for `Migration` records.
    pub last_cpu: u32,
    /// CPU its region was forked on (`NONE`: a job's first region).
    pub fork_cpu: u32,
}

/// What a thread's completion did to its job.
pub(crate) enum Progress {
    /// Other threads of the region are outstanding.
    Pending,
    /// The region joined; the job (index) forks `region` next.
    Fork { job: u32, region: u32 },
    /// The job completed; `next` is its task's next released job, now the head.
    JobDone { next: Option<u32> },
}

/// The simulation's fork-join parameters, checked once for either loop: the sequential view
/// (hyperperiod, utilization, the trace's tasks), the release setup, and the bound on threads.
pub(crate) fn prepare(set: &ForkJoinSet, cfg: &SimConfig, who: &str) -> Result<(TaskSet, Setup), SimError> {
    if cfg.exec != ExecTimes::Wcet {
        return Err(ModelError::field(
            "exec",
            format!("{who} executes the thread costs as given: use ExecTimes::Wcet"),
        )
        .into());
    }
    let seq = set.sequential()?;
    let s = setup(&seq, cfg)?;
    // These loops keep their rows whatever `keep_jobs` says (job statistics are sums over
    // threads), so the memory bound always applies.
    check_max_jobs(s.expected as u128, cfg)?;
    let threads_per_job: u128 = set.iter().map(|t| t.threads() as u128).max().unwrap_or(0);
    if (s.expected as u128) * threads_per_job > u32::MAX as u128 {
        return Err(ModelError::field(
            "horizon",
            format!(
                "up to {} threads would be forked, above 2^32; shorten the horizon",
                s.expected as u128 * threads_per_job
            ),
        )
        .into());
    }
    Ok((seq, s))
}

/// Pending releases: (time, task), earliest first.
pub(crate) type Releases = BinaryHeap<Reverse<(Time, u32)>>;

/// The loops' next instant: the earliest thread completion, or release before the horizon `h`;
/// `None` once that is past `h`.
pub(crate) fn next_instant(finish_at: &[Time], releases: &Releases, h: Time) -> Option<Time> {
    let mut t = finish_at.iter().copied().min().unwrap_or(Time::MAX);
    if let Some(&Reverse((r, _))) = releases.peek() {
        if r < h {
            t = t.min(r);
        }
    }
    (t <= h).then_some(t)
}

/// The task of the next release due at `t`, taken off the queue.
pub(crate) fn due(releases: &mut Releases, t: Time) -> Option<usize> {
    match releases.peek() {
        Some(&Reverse((r, i))) if r == t => {
            releases.pop();
            Some(i as usize)
        }
        _ => None,
    }
}

pub(crate) struct Book<'a> {
    set: &'a ForkJoinSet,
    pub jobs: Vec<JobRt>,
    pub threads: Vec<ThreadRt>,
    /// `job_of[task][seq]` → index into `jobs`.
    job_of: Vec<Vec<u32>>,
    /// `thread_of[task][trace_seq]` → index into `threads`.
    thread_of: Vec<Vec<u32>>,
    pub thread_info: Vec<Vec<ThreadInfo>>,
    backlog: Vec<VecDeque<u32>>,
    next_seq: Vec<u32>,
    progress: RegionProgress,
}

impl<'a> Book<'a> {
    pub fn new(set: &'a ForkJoinSet, expected_jobs: u64) -> Book<'a> {
        let n = set.len();
        Book {
            set,
            jobs: Vec::with_capacity(expected_jobs as usize),
            threads: Vec::new(),
            job_of: vec![Vec::new(); n],
            thread_of: vec![Vec::new(); n],
            thread_info: vec![Vec::new(); n],
            backlog: vec![VecDeque::new(); n],
            next_seq: vec![0; n],
            progress: RegionProgress::of_set(set),
        }
    }

    /// The job with sequence number `seq` of `task`.
    pub fn job_of(&self, task: u32, seq: u32) -> u32 {
        self.job_of[task as usize][seq as usize]
    }

    /// The thread with trace job number `trace_seq` of `task`.
    pub fn thread_of(&self, task: u32, trace_seq: u32) -> u32 {
        self.thread_of[task as usize][trace_seq as usize]
    }

    /// The trace job of thread `th`.
    pub fn trace_job(&self, th: u32) -> JobId {
        let t = &self.threads[th as usize];
        JobId { task: self.jobs[t.job as usize].task, job: t.trace_seq }
    }

    /// Releases a job of `task` at `t`: creates its first region's threads (their `Release`
    /// records at `t`) and appends it to the task's backlog. Returns the job, the threads, and
    /// whether the job is its task's head (ready now).
    pub fn release(&mut self, rec: &mut Recorder, t: Time, task: usize) -> Result<(u32, Vec<u32>, bool), SimError> {
        let seq = self.next_seq[task];
        self.next_seq[task] = seq
            .checked_add(1)
            .ok_or_else(|| ModelError::task_field(task, "period", "more than 2^32 jobs of one task"))?;
        let j = self.jobs.len() as u32;
        self.jobs.push(JobRt {
            task: task as u32,
            seq,
            release: t,
            deadline: t + self.set[task].deadline,
            start: None,
            finish: None,
            first: None,
        });
        self.job_of[task].push(j);
        let ids = self.create_region(rec, t, j, 0, crate::recorder::NONE)?;
        self.backlog[task].push_back(j);
        Ok((j, ids, self.backlog[task].len() == 1))
    }

    /// T of fork-join task `task`.
    pub fn period(&self, task: usize) -> Time {
        self.set[task].period
    }

    /// The region the head job of `task` executes (or forks next).
    pub fn region(&self, task: u32) -> u32 {
        self.progress.region(task)
    }

    /// Creates the threads of region `r` of job `j`, forked on `fork_cpu` (`NONE` for a first
    /// region), with their `Release` records at `t` (the job's absolute deadline).
    pub fn create_region(
        &mut self,
        rec: &mut Recorder,
        t: Time,
        j: u32,
        r: u32,
        fork_cpu: u32,
    ) -> Result<Vec<u32>, SimError> {
        let (task, seq, deadline) = {
            let job = &self.jobs[j as usize];
            (job.task, job.seq, job.deadline)
        };
        let set = self.set;
        let costs = &set[task as usize].regions[r as usize];
        let mut ids = Vec::with_capacity(costs.len());
        for (k, &c) in costs.iter().enumerate() {
            let id = u32::try_from(self.threads.len())
                .map_err(|_| ModelError::field("horizon", "more than 2^32 threads; shorten the horizon"))?;
            let trace_seq = self.thread_info[task as usize].len() as u32;
            self.threads.push(ThreadRt { job: j, trace_seq, rem: c, last_cpu: crate::recorder::NONE, fork_cpu });
            self.thread_of[task as usize].push(id);
            self.thread_info[task as usize].push(ThreadInfo { task, job: seq, region: r, thread: k as u32 });
            ids.push(id);
            rec.emit(t, Event::Release { job: JobId { task, job: trace_seq }, deadline })?;
        }
        Ok(ids)
    }

    /// Thread `th` completed at `t`: its region joins when it was the last; a job whose last
    /// region joined completes and leaves its task's backlog.
    pub fn thread_done(&mut self, t: Time, th: u32) -> Result<Progress, SimError> {
        self.threads[th as usize].rem = 0;
        let j = self.threads[th as usize].job;
        let task = self.jobs[j as usize].task;
        match self.progress.thread_done(task) {
            None => Err(SimError::internal(format!("task {task}: a thread completed with none outstanding"))),
            Some(Join::Pending) => Ok(Progress::Pending),
            Some(Join::Fork { region }) => Ok(Progress::Fork { job: j, region }),
            Some(Join::JobDone) => {
                self.jobs[j as usize].finish = Some(t);
                let b = &mut self.backlog[task as usize];
                b.pop_front();
                Ok(Progress::JobDone { next: b.front().copied() })
            }
        }
    }

    /// Released jobs not yet complete.
    pub fn pending(&self) -> u64 {
        self.backlog.iter().map(|b| b.len() as u64).sum()
    }

    /// The job-level result: per job, its release, deadline, start (first thread run) and
    /// finish (last join), with execution, preemptions and migrations summed over its threads;
    /// first CPU = where its first thread started, last CPU = where its last join happened
    /// (completed jobs only). Jobs released at or after the horizon are not counted.
    pub fn result(
        self,
        cfg: &SimConfig,
        horizon: Time,
        capped: Option<String>,
        events: u64,
        (thread_metrics, trace): (Metrics, Option<Trace>),
        remote_starts: Option<u64>,
    ) -> Result<ForkJoinResult, SimError> {
        let mut per_job: Vec<JobStats> = self
            .jobs
            .iter()
            .filter(|j| j.release < horizon)
            .map(|j| JobStats {
                task: j.task,
                job: j.seq,
                release: j.release,
                deadline: j.deadline,
                start: j.start,
                finish: j.finish,
                first_cpu: None,
                last_cpu: None,
                executed: 0,
                preemptions: 0,
                migrations: 0,
            })
            .collect();
        let index: std::collections::HashMap<(u32, u32), usize> =
            per_job.iter().enumerate().map(|(k, j)| ((j.task, j.job), k)).collect();
        let mut first: Vec<Option<Time>> = vec![None; per_job.len()];
        for th in &thread_metrics.per_job {
            let Some(info) = self.thread_info.get(th.task as usize).and_then(|v| v.get(th.job as usize)) else {
                continue;
            };
            let Some(&k) = index.get(&(info.task, info.job)) else { continue };
            let js = &mut per_job[k];
            js.executed += th.executed;
            js.preemptions += th.preemptions;
            js.migrations += th.migrations;
            if let Some(s) = th.start {
                if first[k].is_none_or(|f| s < f) {
                    first[k] = Some(s);
                    js.first_cpu = th.first_cpu;
                }
            }
            if th.finish.is_some() && th.finish == js.finish {
                js.last_cpu = th.last_cpu;
            }
        }
        let completed = per_job.iter().filter(|j| j.finish.is_some()).count() as u64;
        if cfg.check_invariants && completed + self.pending() != per_job.len() as u64 {
            return Err(SimError::internal(format!(
                "accounting mismatch: {} jobs released, {completed} completed, {} in the backlogs",
                per_job.len(),
                self.pending()
            )));
        }
        Ok(ForkJoinResult {
            m: cfg.m,
            horizon,
            horizon_capped: capped.is_some(),
            horizon_message: capped,
            jobs: per_job.len() as u64,
            completed,
            pending: per_job.len() as u64 - completed,
            deadline_misses: per_job.iter().filter(|j| j.missed(horizon)).count() as u64,
            max_tardiness_ns: per_job.iter().filter_map(|j| j.tardiness(horizon)).max().unwrap_or(0),
            max_response_time_ns: per_job.iter().filter_map(JobStats::response_time).max(),
            threads: thread_metrics.jobs,
            threads_completed: thread_metrics.completed,
            threads_pending: thread_metrics.pending,
            steals: thread_metrics.steals,
            preemptions: thread_metrics.preemptions,
            migrations: thread_metrics.migrations,
            context_switches: thread_metrics.context_switches,
            events,
            per_job,
            thread_metrics,
            thread_info: self.thread_info,
            trace,
            remote_starts,
        })
    }
}
