//! Metrics, computed only here and only from records (definitions: `docs/trace.md`).
//!
//! * A job counts iff it is released in `[0, horizon)`.
//! * A deadline miss: a counted job whose absolute deadline is `<= horizon` and that had not
//!   completed by its deadline (completing exactly at the deadline meets it).
//! * Tardiness: `max(0, finish - deadline)` for a completed job; for a job still incomplete at
//!   the horizon whose deadline is `<= horizon`, the lower bound `horizon - deadline`.
//! * Response time: `finish - release`, for jobs completed by the horizon only.
//! * A preemption: each time a job stops before completing and later resumes, on any CPU
//!   (counted at the resumption; so every migration is also a preemption).
//! * A migration: a resumption on a CPU other than the one the job last ran on.
//! * A context switch: each change of the job running on a CPU, idle included (job→job,
//!   job→idle, idle→job each count once); a task's context switches are the switches *to*
//!   one of its jobs.

use crate::record::{Event, JobId, OverheadKind, Record};
use rtsched_model::{ModelError, Time};
use serde::Serialize;

/// One job's life, as far as the horizon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct JobStats {
    pub task: u32,
    pub job: u32,
    pub release: Time,
    /// Absolute deadline.
    pub deadline: Time,
    pub start: Option<Time>,
    pub finish: Option<Time>,
    pub first_cpu: Option<u32>,
    pub last_cpu: Option<u32>,
    /// Execution received by the horizon (or by completion).
    pub executed: Time,
    pub preemptions: u32,
    pub migrations: u32,
}

impl JobStats {
    pub fn response_time(&self) -> Option<Time> {
        self.finish.map(|f| f - self.release)
    }
    /// Deadline miss per the definition above.
    pub fn missed(&self, horizon: Time) -> bool {
        self.deadline <= horizon && self.finish.is_none_or(|f| f > self.deadline)
    }
    /// Tardiness (a lower bound for a job still incomplete at the horizon); `None` when the
    /// job is incomplete and its deadline lies beyond the horizon.
    pub fn tardiness(&self, horizon: Time) -> Option<Time> {
        match self.finish {
            Some(f) => Some(f.saturating_sub(self.deadline)),
            None if self.deadline <= horizon => Some(horizon - self.deadline),
            None => None,
        }
    }
    /// `finish - deadline` (negative when early), for completed jobs.
    pub fn lateness(&self) -> Option<i128> {
        self.finish.map(|f| f as i128 - self.deadline as i128)
    }
}

/// Per-task totals.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TaskStats {
    pub task: u32,
    pub jobs: u64,
    pub completed: u64,
    pub deadline_misses: u64,
    pub max_tardiness_ns: Time,
    /// Over the task's jobs completed by the horizon; `None` if none completed.
    pub max_response_time_ns: Option<Time>,
    pub preemptions: u64,
    pub migrations: u64,
    /// Switches of a CPU to one of this task's jobs.
    pub context_switches: u64,
}

/// Count, total and maximum of one overhead kind's samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OverheadStats {
    pub kind: OverheadKind,
    pub count: u64,
    pub total_ns: u128,
    pub max_ns: Time,
}

/// Everything measured over `[0, horizon]`.
///
/// `per_job` is empty when the builder was told not to keep jobs
/// ([`MetricsBuilder::keep_jobs`]); every other field is the same either way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Metrics {
    pub m: u32,
    pub horizon: Time,
    /// Counted jobs (released in `[0, horizon)`).
    pub jobs: u64,
    pub completed: u64,
    /// Released but not completed at the horizon (`jobs = completed + pending`).
    pub pending: u64,
    pub deadline_misses: u64,
    pub max_tardiness_ns: Time,
    pub max_response_time_ns: Option<Time>,
    pub preemptions: u64,
    pub migrations: u64,
    pub context_switches: u64,
    /// `Steal` records (work stealing, RTWS).
    pub steals: u64,
    /// `DeadlineMiss` records seen (a cross-check: equals `deadline_misses` for sim traces).
    pub deadline_miss_records: u64,
    /// `Suspend` records up to the horizon (self-suspending jobs, the segmented model).
    #[serde(default)]
    pub suspensions: u64,
    /// Total time jobs spent self-suspended up to the horizon, ns: the sum over `Suspend`
    /// records of the time to the job's `Resume` (or to the horizon, if later).
    #[serde(default)]
    pub suspension_ns: Time,
    pub per_task: Vec<TaskStats>,
    pub overheads: Vec<OverheadStats>,
    #[serde(skip)]
    pub per_job: Vec<JobStats>,
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Live {
    running_on: u32,
    since: Time,
    /// Start of the job's current self-suspension (`Time::MAX`: not suspended).
    suspended_since: Time,
    /// The job resumed from a suspension and has not run since: its next `Run` is not a
    /// preemption.
    resumed: bool,
}

/// Where the builder holds jobs. Keeping every job (the default) gives `Metrics::per_job`;
/// without it, a job leaves memory as soon as it and every earlier job of its task have
/// completed (its contribution folded into the totals at once), so a long simulation holds
/// only the jobs still pending: memory per task, not per job.
enum Jobs {
    All {
        jobs: Vec<JobStats>,
        live: Vec<Live>,
        /// Per task: job sequence number -> index into `jobs`.
        index: Vec<Vec<u32>>,
    },
    Window {
        /// Per task: the jobs from sequence number `base[task]` on, in release order.
        window: Vec<std::collections::VecDeque<(JobStats, Live)>>,
        base: Vec<u32>,
        /// Jobs released per task (the next sequence number).
        released: Vec<u32>,
        jobs: u64,
    },
}

/// A job named by a record: one held in memory, or one already complete and folded.
enum Slot<'a> {
    Held(&'a mut JobStats, &'a mut Live),
    Folded,
}

/// The totals of the jobs accounted so far.
#[derive(Default)]
struct Totals {
    completed: u64,
    misses: u64,
    max_tardiness: Time,
    max_response: Option<Time>,
}

/// The one place a job's end state enters the totals (definitions at the top of this file).
fn fold(js: &JobStats, h: Time, per_task: &mut [TaskStats], acc: &mut Totals) {
    let ts = &mut per_task[js.task as usize];
    if let Some(r) = js.response_time() {
        acc.completed += 1;
        ts.completed += 1;
        ts.max_response_time_ns = Some(ts.max_response_time_ns.map_or(r, |x| x.max(r)));
        acc.max_response = Some(acc.max_response.map_or(r, |x| x.max(r)));
    }
    if js.missed(h) {
        acc.misses += 1;
        ts.deadline_misses += 1;
    }
    if let Some(td) = js.tardiness(h) {
        ts.max_tardiness_ns = ts.max_tardiness_ns.max(td);
        acc.max_tardiness = acc.max_tardiness.max(td);
    }
}

/// The job a record names; errors on a task or job that does not exist (yet).
fn slot(jobs: &mut Jobs, n_tasks: usize, job: JobId) -> Result<Slot<'_>, ModelError> {
    let before =
        || ModelError::field("job", format!("trace names job {} of task {} before its release", job.job, job.task));
    if job.task as usize >= n_tasks {
        return Err(ModelError::field(
            "task",
            format!("trace names task {} but there are only {n_tasks} tasks", job.task),
        ));
    }
    match jobs {
        Jobs::All { jobs, live, index } => {
            let i = *index[job.task as usize].get(job.job as usize).ok_or_else(before)? as usize;
            Ok(Slot::Held(&mut jobs[i], &mut live[i]))
        }
        Jobs::Window { window, base, .. } => {
            let b = base[job.task as usize];
            if job.job < b {
                return Ok(Slot::Folded);
            }
            let (js, lv) = window[job.task as usize].get_mut((job.job - b) as usize).ok_or_else(before)?;
            Ok(Slot::Held(js, lv))
        }
    }
}

/// Streaming metrics: feed records in time order with [`MetricsBuilder::push`], then
/// [`MetricsBuilder::finish`]. O(1) per record; the simulator feeds it directly so that
/// metrics never need the stored trace.
pub struct MetricsBuilder {
    m: u32,
    horizon: Time,
    last_time: Time,
    jobs: Jobs,
    totals: Totals,
    /// Per CPU: the job whose context it holds (`None` = idle) and the job running now.
    current: Vec<Option<JobId>>,
    running: Vec<Option<JobId>>,
    per_task: Vec<TaskStats>,
    context_switches: u64,
    miss_records: u64,
    steals: u64,
    overheads: Vec<OverheadStats>,
    suspensions: u64,
    suspension_ns: u128,
}

impl MetricsBuilder {
    pub fn new(n_tasks: usize, m: u32, horizon: Time) -> MetricsBuilder {
        MetricsBuilder {
            m,
            horizon,
            last_time: 0,
            jobs: Jobs::All { jobs: Vec::new(), live: Vec::new(), index: vec![Vec::new(); n_tasks] },
            totals: Totals::default(),
            current: vec![None; m as usize],
            running: vec![None; m as usize],
            per_task: (0..n_tasks).map(|i| TaskStats { task: i as u32, ..TaskStats::default() }).collect(),
            context_switches: 0,
            miss_records: 0,
            steals: 0,
            suspensions: 0,
            suspension_ns: 0,
            overheads: OverheadKind::ALL
                .iter()
                .map(|&kind| OverheadStats { kind, count: 0, total_ns: 0, max_ns: 0 })
                .collect(),
        }
    }

    /// Keep every job's statistics for `Metrics::per_job` (the default), or not: then a job's
    /// statistics are folded into the totals and dropped once it and every earlier job of its
    /// task have completed, and `per_job` is empty. Call before the first record.
    pub fn keep_jobs(mut self, keep: bool) -> MetricsBuilder {
        let n = self.per_task.len();
        self.jobs = if keep {
            Jobs::All { jobs: Vec::new(), live: Vec::new(), index: vec![Vec::new(); n] }
        } else {
            Jobs::Window {
                window: (0..n).map(|_| std::collections::VecDeque::new()).collect(),
                base: vec![0; n],
                released: vec![0; n],
                jobs: 0,
            }
        };
        self
    }

    /// Pre-sizes the job table (when every job is kept).
    pub fn reserve_jobs(&mut self, n: usize) {
        if let Jobs::All { jobs, live, .. } = &mut self.jobs {
            jobs.reserve(n);
            live.reserve(n);
        }
    }

    fn unknown_task(&self, job: JobId) -> ModelError {
        ModelError::field(
            "task",
            format!("trace names task {} but there are only {} tasks", job.task, self.per_task.len()),
        )
    }

    /// Checks that a record names a released job.
    fn check_job(&mut self, job: JobId) -> Result<(), ModelError> {
        slot(&mut self.jobs, self.per_task.len(), job).map(|_| ())
    }

    /// Without kept jobs: folds and drops the completed jobs at the front of `task`'s window.
    fn retire(&mut self, task: u32) {
        if let Jobs::Window { window, base, .. } = &mut self.jobs {
            let w = &mut window[task as usize];
            while w.front().is_some_and(|(js, _)| js.finish.is_some()) {
                let (js, _) = w.pop_front().expect("front exists");
                // A completed job's verdicts do not depend on the horizon: it finished by it.
                fold(&js, self.horizon, &mut self.per_task, &mut self.totals);
                base[task as usize] += 1;
            }
        }
    }

    fn cpu(&self, cpu: u32) -> Result<usize, ModelError> {
        if cpu < self.m {
            Ok(cpu as usize)
        } else {
            Err(ModelError::field("cpu", format!("trace names cpu {cpu} but m = {}", self.m)))
        }
    }

    fn switch_to(&mut self, c: usize, to: Option<JobId>) {
        if self.current[c] != to {
            self.current[c] = to;
            self.context_switches += 1;
            if let Some(j) = to {
                self.per_task[j.task as usize].context_switches += 1;
            }
        }
    }

    /// Consumes one record. Records after the horizon are ignored; inconsistent records
    /// (time going backwards, unknown task/job/CPU, running a job twice) are errors.
    #[inline]
    pub fn push(&mut self, r: &Record) -> Result<(), ModelError> {
        if r.time < self.last_time {
            return Err(ModelError::field(
                "time",
                format!("records out of order: {} after {}", r.time, self.last_time),
            ));
        }
        self.last_time = r.time;
        if r.time > self.horizon {
            return Ok(());
        }
        let t = r.time;
        match r.event {
            Event::Release { job, deadline } => {
                if t >= self.horizon {
                    return Ok(());
                }
                if job.task as usize >= self.per_task.len() {
                    return Err(self.unknown_task(job));
                }
                let expected = match &self.jobs {
                    Jobs::All { index, .. } => index[job.task as usize].len() as u32,
                    Jobs::Window { released, .. } => released[job.task as usize],
                };
                if expected != job.job {
                    return Err(ModelError::task_field(
                        job.task as usize,
                        "job",
                        format!("job {} released out of sequence (expected {expected})", job.job),
                    ));
                }
                let js = JobStats {
                    task: job.task,
                    job: job.job,
                    release: t,
                    deadline,
                    start: None,
                    finish: None,
                    first_cpu: None,
                    last_cpu: None,
                    executed: 0,
                    preemptions: 0,
                    migrations: 0,
                };
                let lv = Live { running_on: NONE, since: 0, suspended_since: Time::MAX, resumed: false };
                match &mut self.jobs {
                    Jobs::All { jobs, live, index } => {
                        index[job.task as usize].push(jobs.len() as u32);
                        jobs.push(js);
                        live.push(lv);
                    }
                    Jobs::Window { window, released, jobs, .. } => {
                        window[job.task as usize].push_back((js, lv));
                        released[job.task as usize] += 1;
                        *jobs += 1;
                    }
                }
                self.per_task[job.task as usize].jobs += 1;
            }
            Event::Run { cpu, job } => {
                let c = self.cpu(cpu)?;
                if self.running[c].is_some() {
                    return Err(ModelError::field(
                        "cpu",
                        format!("job {}.{} runs on cpu {cpu} at {t} while another job runs there", job.task, job.job),
                    ));
                }
                let running_or_complete = || {
                    ModelError::field(
                        "job",
                        format!("job {}.{} runs at {t} while running or complete", job.task, job.job),
                    )
                };
                let Slot::Held(js, lv) = slot(&mut self.jobs, self.per_task.len(), job)? else {
                    return Err(running_or_complete());
                };
                if lv.running_on != NONE || js.finish.is_some() {
                    return Err(running_or_complete());
                }
                let ts = &mut self.per_task[job.task as usize];
                if lv.suspended_since != Time::MAX {
                    return Err(ModelError::field(
                        "job",
                        format!("job {}.{} runs at {t} while suspended", job.task, job.job),
                    ));
                }
                let after_suspension = std::mem::take(&mut lv.resumed);
                match js.last_cpu {
                    None => {
                        js.start = Some(t);
                        js.first_cpu = Some(cpu);
                    }
                    Some(last) => {
                        if !after_suspension {
                            js.preemptions += 1;
                            ts.preemptions += 1;
                        }
                        if last != cpu {
                            js.migrations += 1;
                            ts.migrations += 1;
                        }
                    }
                }
                js.last_cpu = Some(cpu);
                lv.running_on = cpu;
                lv.since = t;
                self.running[c] = Some(job);
                self.switch_to(c, Some(job));
            }
            Event::Preempt { cpu, job } | Event::Complete { cpu, job } | Event::Suspend { cpu, job } => {
                let c = self.cpu(cpu)?;
                let not_running = || {
                    ModelError::field(
                        "job",
                        format!("job {}.{} stops on cpu {cpu} at {t} but does not run there", job.task, job.job),
                    )
                };
                let Slot::Held(js, lv) = slot(&mut self.jobs, self.per_task.len(), job)? else {
                    return Err(not_running());
                };
                if lv.running_on != cpu {
                    return Err(not_running());
                }
                js.executed += t - lv.since;
                lv.running_on = NONE;
                if matches!(r.event, Event::Suspend { .. }) {
                    lv.suspended_since = t;
                    self.suspensions += 1;
                }
                let complete = matches!(r.event, Event::Complete { .. });
                if complete {
                    js.finish = Some(t);
                }
                self.running[c] = None;
                if complete {
                    self.retire(job.task);
                }
            }
            Event::Resume { job } => {
                let not_suspended = || {
                    ModelError::field(
                        "job",
                        format!("job {}.{} resumes at {t} but is not suspended", job.task, job.job),
                    )
                };
                let Slot::Held(_, lv) = slot(&mut self.jobs, self.per_task.len(), job)? else {
                    return Err(not_suspended());
                };
                if lv.suspended_since == Time::MAX {
                    return Err(not_suspended());
                }
                self.suspension_ns += (t - lv.suspended_since) as u128;
                lv.suspended_since = Time::MAX;
                lv.resumed = true;
            }
            Event::Idle { cpu } => {
                let c = self.cpu(cpu)?;
                if self.running[c].is_some() {
                    return Err(ModelError::field("cpu", format!("cpu {cpu} idles at {t} while a job runs there")));
                }
                self.switch_to(c, None);
            }
            Event::DeadlineMiss { job } => {
                self.check_job(job)?;
                self.miss_records += 1;
            }
            Event::Migration { job, from, to } => {
                self.check_job(job)?;
                self.cpu(from)?;
                self.cpu(to)?;
            }
            Event::Steal { job, from, to } => {
                self.check_job(job)?;
                self.cpu(from)?;
                self.cpu(to)?;
                self.steals += 1;
            }
            Event::Overhead { cpu, kind, duration } => {
                self.cpu(cpu)?;
                let i = kind.index();
                while self.overheads.len() <= i {
                    let t = (self.overheads.len() - OverheadKind::ALL.len()) as u16;
                    self.overheads.push(OverheadStats {
                        kind: OverheadKind::Term(t),
                        count: 0,
                        total_ns: 0,
                        max_ns: 0,
                    });
                }
                let o = &mut self.overheads[i];
                o.count += 1;
                o.total_ns += duration as u128;
                o.max_ns = o.max_ns.max(duration);
            }
        }
        Ok(())
    }

    /// Moves the horizon earlier, to `horizon` (a simulation that ends early: stopped by
    /// Ctrl-C or by a work bound). No record after `horizon` may have been pushed yet.
    pub fn shorten_horizon(&mut self, horizon: Time) -> Result<(), ModelError> {
        if horizon > self.horizon || horizon < self.last_time {
            return Err(ModelError::field(
                "horizon",
                format!(
                    "cannot end at {horizon} ns: horizon {} ns, last record at {} ns",
                    self.horizon, self.last_time
                ),
            ));
        }
        self.horizon = horizon;
        Ok(())
    }

    /// Closes the books at the horizon.
    pub fn finish(mut self) -> Metrics {
        let h = self.horizon;
        let (held, per_job, jobs) = match std::mem::replace(
            &mut self.jobs,
            Jobs::Window { window: Vec::new(), base: Vec::new(), released: Vec::new(), jobs: 0 },
        ) {
            Jobs::All { jobs, live, .. } => {
                let n = jobs.len() as u64;
                (jobs.into_iter().zip(live).collect::<Vec<_>>(), true, n)
            }
            Jobs::Window { window, jobs, .. } => (window.into_iter().flatten().collect(), false, jobs),
        };
        let mut kept = Vec::with_capacity(if per_job { held.len() } else { 0 });
        for (mut js, lv) in held {
            // Execution of jobs still running at the horizon.
            if lv.running_on != NONE {
                js.executed += h - lv.since;
            }
            // Suspensions still open at the horizon count up to it.
            if lv.suspended_since != Time::MAX {
                self.suspension_ns += (h - lv.suspended_since.min(h)) as u128;
            }
            fold(&js, h, &mut self.per_task, &mut self.totals);
            if per_job {
                kept.push(js);
            }
        }
        let t = self.totals;
        Metrics {
            m: self.m,
            horizon: h,
            jobs,
            completed: t.completed,
            pending: jobs - t.completed,
            deadline_misses: t.misses,
            max_tardiness_ns: t.max_tardiness,
            max_response_time_ns: t.max_response,
            preemptions: self.per_task.iter().map(|t| t.preemptions).sum(),
            migrations: self.per_task.iter().map(|t| t.migrations).sum(),
            context_switches: self.context_switches,
            deadline_miss_records: self.miss_records,
            steals: self.steals,
            suspensions: self.suspensions,
            suspension_ns: self.suspension_ns.min(u64::MAX as u128) as u64,
            per_task: self.per_task,
            overheads: self.overheads,
            per_job: kept,
        }
    }
}

#[cfg(test)]
mod tests;
