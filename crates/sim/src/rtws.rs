//! Exact virtual-time simulation of RTWS (seed 003, *RTWS: Real-Time Work-Stealing*, §III
//! task model, §V rules A–F) over fork-join task sets, driving the pure policy
//! `rtsched_policy::rtws::Rtws`. Design note: `docs/rtws.md`.
//!
//! Time advances from event to event (releases, thread completions). At each instant:
//! 1. thread completions, CPU by CPU; a completion that joins a region forks the next region
//!    on that CPU (Rule B); a job whose last region joins completes, and its task's next job
//!    (if released) becomes ready;
//! 2. a CPU freed in step 1 with local work takes it at once (Rule C);
//! 3. jobs that arrive (released now, or ready now that their predecessor completed) enter
//!    the global queue (Rule A);
//! 4. idle CPUs select work (Rules C, D, E), CPUs with local work first;
//! 5. each arrived job still waiting, in priority order, preempts the lowest-priority running
//!    entity if that has lower priority (§V; the preempted entity goes per Rule F).
//!
//! At the horizon only completions are processed (no fork, no dispatch).
//!
//! The trace is thread-level: trace task `i` is fork-join task `i`, and trace job
//! `JobId { task: i, job: k }` is the `k`-th thread of task `i` in fork order ([`ThreadInfo`]
//! says which job, region and thread it is); a thread's `Release` record is at its fork (the first
//! region's at the job's release), with its job's absolute deadline. Preemptions, migrations and context switches are the
//! trace crate's, counted over threads (a thread switch is a context switch, as in §VI).
//! Steals are the trace's `Steal` records (each Rule E pick, emitted just before the stolen
//! thread's `Run`), counted by the trace crate's metrics. Job-level results (completion at
//! the last join, deadline misses, tardiness, response times) use the trace crate's
//! `JobStats` definitions.
//!
//! Assumptions: periodic or sporadic arrivals (the paper: implicit-deadline periodic); any
//! relative deadline; thread costs are executed exactly (`ExecTimes::Wcet` only); jobs of a
//! task execute in release order.

use crate::config::{ExecTimes, Scheduler, SimConfig};
use crate::error::SimError;
use crate::recorder::{Recorder, NONE};
use crate::result::SimResult;
use crate::setup::{setup, Draw, EarlyEnd, Setup};
use rtsched_model::forkjoin::ForkJoinSet;
use rtsched_model::{ModelError, TaskSet, Time};
use rtsched_policy::rtws::{Arrival, Rtws, Source, ThreadId, Work};
use rtsched_policy::Prio;
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

/// What an RTWS simulation measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RtwsResult {
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
}

impl RtwsResult {
    /// Per-job CSV (the columns of `Trace::to_job_csv`) of the job-level statistics.
    pub fn to_job_csv(&self) -> String {
        rtsched_trace::export::job_rows_csv(&self.per_job, self.horizon)
    }
}

struct JobRt {
    task: u32,
    seq: u32,
    release: Time,
    deadline: Time,
    /// Region being executed (forked or about to fork).
    region: u32,
    /// Threads of the current region not yet complete.
    outstanding: u32,
    start: Option<Time>,
    finish: Option<Time>,
    /// The first region's threads, created at release, until the job starts.
    first: Option<Vec<ThreadId>>,
}

struct ThreadRt {
    job: u32,
    trace_seq: u32,
    /// Remaining cost while not running.
    rem: Time,
    /// CPU it last ran on (`NONE`: never), for `Migration` records.
    last_cpu: u32,
}

struct TaskRt {
    backlog: VecDeque<u32>,
    next_seq: u32,
}

struct Sim<'a> {
    set: &'a ForkJoinSet,
    cfg: &'a SimConfig,
    policy: Rtws,
    jobs: Vec<JobRt>,
    /// `job_of[task][seq]` → index into `jobs`.
    job_of: Vec<Vec<u32>>,
    threads: Vec<ThreadRt>,
    thread_info: Vec<Vec<ThreadInfo>>,
    tasks: Vec<TaskRt>,
    finish_at: Vec<Time>,
    releases: BinaryHeap<Reverse<(Time, u32)>>,
    rec: Recorder,
    draw: Draw,
    horizon: Time,
    early: EarlyEnd,
    steals: u64,
    events: u64,
    arrivals_now: Vec<Prio>,
}

impl Sim<'_> {
    fn prio(&self, j: u32) -> Prio {
        let job = &self.jobs[j as usize];
        Prio { key: job.deadline, task: job.task, job: job.seq }
    }

    fn job_of_prio(&self, p: Prio) -> u32 {
        self.job_of[p.task as usize][p.job as usize]
    }

    /// Creates the threads of region `jobs[j].region` and emits their `Release` records.
    fn create_region(&mut self, t: Time, j: u32) -> Result<Vec<ThreadId>, SimError> {
        let (task, seq, r, deadline) = {
            let job = &self.jobs[j as usize];
            (job.task, job.seq, job.region, job.deadline)
        };
        let set = self.set;
        let costs = &set[task as usize].regions[r as usize];
        let mut ids: Vec<ThreadId> = Vec::with_capacity(costs.len());
        for (k, &c) in costs.iter().enumerate() {
            let id = u32::try_from(self.threads.len())
                .map_err(|_| ModelError::field("horizon", "more than 2^32 threads; shorten the horizon"))?;
            let trace_seq = self.thread_info[task as usize].len() as u32;
            self.threads.push(ThreadRt { job: j, trace_seq, rem: c, last_cpu: NONE });
            self.thread_info[task as usize].push(ThreadInfo { task, job: seq, region: r, thread: k as u32 });
            ids.push(id);
            self.rec.emit(t, Event::Release { job: JobId { task, job: trace_seq }, deadline })?;
        }
        self.jobs[j as usize].outstanding = costs.len() as u32;
        Ok(ids)
    }

    /// Job `j` forks its current region on `cpu` (Rule B). The first region's threads were
    /// created at the job's release (so that the trace's release times are the job's).
    fn fork(&mut self, t: Time, cpu: usize, j: u32) -> Result<(), SimError> {
        let ids = match self.jobs[j as usize].first.take() {
            Some(ids) => ids,
            None => self.create_region(t, j)?,
        };
        let p = self.prio(j);
        self.policy.fork(cpu, p, &ids);
        Ok(())
    }

    fn tid(&self, id: ThreadId) -> JobId {
        let th = &self.threads[id as usize];
        JobId { task: self.jobs[th.job as usize].task, job: th.trace_seq }
    }

    /// An idle `cpu` selects (Rules C, D, E) until it runs a thread or finds nothing.
    fn fill(&mut self, t: Time, cpu: usize) -> Result<(), SimError> {
        loop {
            match self.policy.select(cpu) {
                // Idleness is announced at the end of the instant (a CPU idle in step 2 may
                // still receive an arriving job in step 3: one context switch, not two).
                None => return Ok(()),
                Some(pick) => match pick.work {
                    Work::Start => {
                        let j = self.job_of_prio(pick.prio);
                        self.fork(t, cpu, j)?;
                    }
                    Work::Thread(id, _) => {
                        if let Source::Steal { victim } = pick.source {
                            self.steals += 1;
                            let job = self.tid(id);
                            self.rec.emit(t, Event::Steal { job, from: victim, to: cpu as u32 })?;
                        }
                        return self.start(t, cpu, id);
                    }
                },
            }
        }
    }

    fn start(&mut self, t: Time, cpu: usize, id: ThreadId) -> Result<(), SimError> {
        let job = self.tid(id);
        // A preempted thread (or job) resuming elsewhere is a migration, as in the other loops.
        let last = std::mem::replace(&mut self.threads[id as usize].last_cpu, cpu as u32);
        let th = &self.threads[id as usize];
        self.finish_at[cpu] = t + th.rem;
        let jr = &mut self.jobs[th.job as usize];
        jr.start.get_or_insert(t);
        self.rec.run(t, cpu as u32, job, last)
    }

    fn fill_idle(&mut self, t: Time) -> Result<(), SimError> {
        let m = self.finish_at.len();
        // CPUs with local work first, so that thieves find their victims busy (Rule E).
        for pass in 0..2 {
            for c in 0..m {
                if self.policy.running(c).is_none() && ((pass == 0) == (self.policy.waiting_local(c) > 0)) {
                    self.fill(t, c)?;
                }
            }
        }
        Ok(())
    }

    fn release(&mut self, t: Time, i: usize) -> Result<(), SimError> {
        let task = &self.set[i];
        let seq = self.tasks[i].next_seq;
        self.tasks[i].next_seq =
            seq.checked_add(1).ok_or_else(|| ModelError::task_field(i, "period", "more than 2^32 jobs of one task"))?;
        let j = self.jobs.len() as u32;
        self.jobs.push(JobRt {
            task: i as u32,
            seq,
            release: t,
            deadline: t + task.deadline,
            region: 0,
            outstanding: 0,
            start: None,
            finish: None,
            first: None,
        });
        self.job_of[i].push(j);
        let ids = self.create_region(t, j)?;
        self.jobs[j as usize].first = Some(ids);
        let gap = self.draw.gap(&self.cfg.arrivals, task.period);
        self.releases.push(Reverse((t + gap, i as u32)));
        self.tasks[i].backlog.push_back(j);
        if self.tasks[i].backlog.len() == 1 {
            let p = self.prio(j);
            self.arrivals_now.push(p);
        }
        Ok(())
    }

    fn complete(&mut self, t: Time, cpu: usize) -> Result<(), SimError> {
        let r = self.policy.stop(cpu).ok_or_else(|| SimError::internal("a CPU completed but ran nothing"))?;
        let job = self.tid(r.thread);
        self.rec.emit(t, Event::Complete { cpu: cpu as u32, job })?;
        self.finish_at[cpu] = Time::MAX;
        self.threads[r.thread as usize].rem = 0;
        let j = self.threads[r.thread as usize].job;
        let jr = &mut self.jobs[j as usize];
        jr.outstanding -= 1;
        if jr.outstanding > 0 {
            return Ok(());
        }
        // The region joins.
        let task = jr.task as usize;
        if (jr.region as usize) + 1 < self.set[task].regions.len() {
            jr.region += 1;
            if t < self.horizon {
                self.fork(t, cpu, j)?;
            }
            return Ok(());
        }
        jr.finish = Some(t);
        let ts = &mut self.tasks[task];
        ts.backlog.pop_front();
        if let Some(&next) = ts.backlog.front() {
            if t < self.horizon {
                let p = self.prio(next);
                self.arrivals_now.push(p);
            }
        }
        Ok(())
    }

    fn preempt_check(&mut self, t: Time, p: Prio) -> Result<bool, SimError> {
        let Arrival::Run { cpu, preempted } = self.policy.preempt_check(p) else {
            return Ok(false);
        };
        let c = cpu as usize;
        if let Some(r) = preempted {
            let job = self.tid(r.thread);
            self.threads[r.thread as usize].rem = self.finish_at[c] - t;
            self.finish_at[c] = Time::MAX;
            self.rec.preempt(t, cpu, job)?;
        }
        let j = self.job_of_prio(p);
        self.fork(t, c, j)?;
        self.fill(t, c)?;
        Ok(true)
    }

    fn run(&mut self) -> Result<(), SimError> {
        let mut h = self.horizon;
        let m = self.finish_at.len();
        loop {
            let mut t = self.finish_at.iter().copied().min().unwrap_or(Time::MAX);
            if let Some(&Reverse((r, _))) = self.releases.peek() {
                if r < h {
                    t = t.min(r);
                }
            }
            if t > h {
                return Ok(());
            }
            if self.early.check(self.cfg, t, h, self.events, &mut self.rec)? {
                h = t; // end at t (Ctrl-C or a work bound): only completions are processed there
                self.horizon = t;
            }
            // 1. Completions.
            for c in 0..m {
                if self.finish_at[c] == t {
                    self.events += 1;
                    self.complete(t, c)?;
                }
            }
            if t == h {
                return Ok(());
            }
            // 2. Freed CPUs with local work take it (Rule C).
            for c in 0..m {
                if let Some(pick) = self.policy.select_local(c) {
                    if let Work::Thread(id, _) = pick.work {
                        self.start(t, c, id)?;
                    }
                }
            }
            // 3. Arrivals enter the global queue.
            while let Some(&Reverse((r, i))) = self.releases.peek() {
                if r != t {
                    break;
                }
                self.releases.pop();
                self.events += 1;
                self.release(t, i as usize)?;
            }
            let mut now = std::mem::take(&mut self.arrivals_now);
            now.sort_unstable();
            for &p in &now {
                self.policy.release(p);
            }
            // 4. Idle CPUs select (Rules C, D, E).
            self.fill_idle(t)?;
            // 5. Preemption by arrived jobs still waiting, highest priority first.
            for &p in &now {
                self.preempt_check(t, p)?;
            }
            now.clear();
            self.arrivals_now = now;
            for c in 0..m {
                if self.policy.running(c).is_none() {
                    self.rec.idle(t, c as u32)?;
                }
            }
            if self.cfg.check_invariants {
                self.check(t)?;
            }
        }
    }

    /// Work conservation (§V: a CPU idles only when its local queue, the global queue and
    /// every eligible victim are empty): no CPU idle while any work waits.
    fn check(&self, t: Time) -> Result<(), SimError> {
        let idle = (0..self.finish_at.len()).filter(|&c| self.policy.running(c).is_none()).count();
        if idle > 0 && self.policy.waiting_total() > 0 {
            return Err(SimError::internal(format!(
                "invariant violated at {t} ns: {idle} CPUs idle while {} work items wait",
                self.policy.waiting_total()
            )));
        }
        for c in 0..self.finish_at.len() {
            if (self.policy.running(c).is_some()) != (self.finish_at[c] != Time::MAX) {
                return Err(SimError::internal(format!(
                    "invariant violated at {t} ns: cpu {c} policy/driver disagree"
                )));
            }
        }
        Ok(())
    }
}

/// Simulates RTWS on `cfg.m` CPUs over `set` from time 0 to the horizon (default: one
/// hyperperiod of the periods, capped by `cfg.horizon_cap`).
///
/// Errors (never panics) on the parameters `simulate` rejects, and on `cfg.exec` other than
/// `ExecTimes::Wcet` (thread costs are executed as given).
pub fn simulate_rtws(set: &ForkJoinSet, cfg: &SimConfig) -> Result<RtwsResult, SimError> {
    if cfg.exec != ExecTimes::Wcet {
        return Err(ModelError::field(
            "exec",
            "RTWS executes the fork-join thread costs as given: use ExecTimes::Wcet",
        )
        .into());
    }
    let seq = set.sequential()?;
    let Setup { offsets, horizon, capped, expected } = setup(&seq, cfg)?;
    let (m, n) = (cfg.m as usize, set.len());
    let threads_per_job: u128 = set.iter().map(|t| t.threads() as u128).max().unwrap_or(0);
    if (expected as u128) * threads_per_job > u32::MAX as u128 {
        return Err(ModelError::field(
            "horizon",
            format!(
                "up to {} threads would be forked, above 2^32; shorten the horizon",
                expected as u128 * threads_per_job
            ),
        )
        .into());
    }
    let mut sim = Sim {
        set,
        cfg,
        policy: Rtws::new(m),
        jobs: Vec::with_capacity(expected as usize),
        job_of: vec![Vec::new(); n],
        threads: Vec::new(),
        thread_info: vec![Vec::new(); n],
        tasks: (0..n).map(|_| TaskRt { backlog: VecDeque::new(), next_seq: 0 }).collect(),
        finish_at: vec![Time::MAX; m],
        releases: (0..n).map(|i| Reverse((offsets[i], i as u32))).collect(),
        rec: Recorder::new(n, cfg.m, horizon, cfg.record_trace, 0, "the RTWS simulator"),
        draw: Draw::new(cfg),
        horizon,
        early: EarlyEnd::new(),
        steals: 0,
        events: 0,
        arrivals_now: Vec::new(),
    };
    sim.run()?;
    let horizon = sim.horizon;
    let capped = std::mem::replace(&mut sim.early, EarlyEnd::new()).message(capped);
    let (thread_metrics, trace) = sim.rec.finish(&seq, cfg.m, horizon);
    if cfg.check_invariants && thread_metrics.steals != sim.steals {
        return Err(SimError::internal(format!("{} steals made, {} in the trace", sim.steals, thread_metrics.steals)));
    }
    let mut per_job: Vec<JobStats> = sim
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
    // Job-level aggregates of the thread-level statistics: execution, preemptions and
    // migrations summed over the job's threads; first CPU = where its first thread started,
    // last CPU = where its last join happened (completed jobs only).
    {
        let index: std::collections::HashMap<(u32, u32), usize> =
            per_job.iter().enumerate().map(|(k, j)| ((j.task, j.job), k)).collect();
        let mut first: Vec<Option<Time>> = vec![None; per_job.len()];
        for th in &thread_metrics.per_job {
            let Some(info) = sim.thread_info.get(th.task as usize).and_then(|v| v.get(th.job as usize)) else {
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
    }
    let completed = per_job.iter().filter(|j| j.finish.is_some()).count() as u64;
    let result = RtwsResult {
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
        events: sim.events,
        per_job,
        thread_metrics,
        thread_info: sim.thread_info,
        trace,
    };
    Ok(result)
}

/// `Scheduler::Rtws` on a sequential task set: each task is a fork-join task of one region of
/// one thread (RTWS then schedules like G-EDF), so trace jobs are jobs.
pub(crate) fn simulate_sequential(ts: &TaskSet, sched: &Scheduler, cfg: &SimConfig) -> Result<SimResult, SimError> {
    let set = ForkJoinSet::new(
        ts.iter()
            .map(|t| rtsched_model::forkjoin::ForkJoinTask {
                name: t.name.clone(),
                period: t.period,
                deadline: t.deadline,
                regions: vec![vec![t.wcet]],
            })
            .collect(),
    )?;
    let r = simulate_rtws(&set, cfg)?;
    Ok(SimResult::from_metrics(sched, r.thread_metrics, r.horizon_message, r.events, r.trace))
}
