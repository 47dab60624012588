//! Event-driven global EDF over fork-join tasks, at the thread level: the baseline that seed 003
//! (*RTWS: Real-Time Work-Stealing*, §VI) compares RTWS against (there SCHED_DEADLINE, a
//! global EDF over Linux threads). Design note: `docs/rtws.md`, "G-EDF over fork-join tasks".
//!
//! Every thread is a G-EDF entity with its job's absolute deadline: the threads of a region
//! become ready together at the fork (the first region's when the job becomes ready, later
//! regions' when the previous region joins) and are scheduled by the link-based
//! [`rtsched_policy::Gedf`] exactly like independent jobs, so at every instant the
//! `min(m, r)` highest-priority of the `r` ready threads run. A thread's priority is
//! `(job deadline, task index, thread sequence number in fork order)`: threads of one job are
//! ordered by fork order, and an earlier job of a task always precedes a later one.
//!
//! At each instant: (1) thread completions (a join forks the next region at once; a last join
//! completes the job and makes the task's next released job ready); (2) releases; (3) dispatch
//! (every CPU follows its link: preemptions first, then runs). At the horizon only completions
//! are processed (no fork, no dispatch), as in [`crate::rtws`].
//!
//! The trace and metrics are thread-level and use the same vocabulary and numbering as
//! [`crate::rtws`] (trace job `k` of task `i` is the `k`-th thread of task `i` in creation
//! order; [`ThreadInfo`] says which job, region and thread it is). Besides the trace crate's
//! migrations (a thread resuming on another CPU), the result counts **remote starts**: a thread
//! of a later region (one forked on a CPU when the previous region joined there) whose first run
//! is on a different CPU. Under RTWS that move is a steal; under G-EDF it is a push/pull
//! migration of the new thread, which is what seed 003 §VI counts for SCHED_DEADLINE.
//!
//! Assumptions: as [`crate::rtws::simulate_rtws`] — periodic or sporadic arrivals, any relative
//! deadline, thread costs executed exactly (`ExecTimes::Wcet` only), jobs of a task in release
//! order.

use crate::config::{ExecTimes, SimConfig};
use crate::error::SimError;
use crate::recorder::{DirtyCpus, Recorder, NONE};
use crate::rtws::{RtwsResult, ThreadInfo};
use crate::setup::{setup, Draw, EarlyEnd, Setup};
use rtsched_model::forkjoin::ForkJoinSet;
use rtsched_model::{ModelError, Time};
use rtsched_policy::{invariant, Gedf, Policy, Prio};
use rtsched_trace::{Event, JobId, JobStats};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};

/// What a thread-level G-EDF simulation of a fork-join set measured: the RTWS result type
/// (`steals` is always 0) plus the remote starts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForkJoinGedfResult {
    #[serde(flatten)]
    pub result: RtwsResult,
    /// Threads of a forked region (not a job's first region) that first ran on a CPU other
    /// than the one they were forked on.
    pub remote_starts: u64,
}

struct JobRt {
    task: u32,
    seq: u32,
    release: Time,
    deadline: Time,
    region: u32,
    outstanding: u32,
    start: Option<Time>,
    finish: Option<Time>,
    /// The first region's threads, created at release, until the job becomes ready.
    first: Option<Vec<u32>>,
}

struct ThreadRt {
    job: u32,
    trace_seq: u32,
    /// Remaining cost while not running.
    rem: Time,
    /// CPU it last ran on (`NONE`: never ran).
    last_cpu: u32,
    /// CPU its region was forked on (`NONE`: a job's first region).
    fork_cpu: u32,
}

struct Sim<'a> {
    set: &'a ForkJoinSet,
    cfg: &'a SimConfig,
    policy: Gedf,
    jobs: Vec<JobRt>,
    threads: Vec<ThreadRt>,
    /// `thread_of[task][trace_seq]` → index into `threads`.
    thread_of: Vec<Vec<u32>>,
    thread_info: Vec<Vec<ThreadInfo>>,
    backlog: Vec<VecDeque<u32>>,
    next_seq: Vec<u32>,
    sched: Vec<Option<u32>>,
    finish_at: Vec<Time>,
    dirty: DirtyCpus,
    releases: BinaryHeap<Reverse<(Time, u32)>>,
    rec: Recorder,
    draw: Draw,
    horizon: Time,
    early: EarlyEnd,
    events: u64,
    remote_starts: u64,
    /// Threads that became ready during the completions of this instant; handed to the
    /// policy only after every completion of the instant (see `run`).
    newly_ready: Vec<u32>,
    /// Ready (forked, incomplete) threads, kept only for the invariant check.
    ready: Option<BTreeSet<Prio>>,
}

impl Sim<'_> {
    fn prio(&self, th: u32) -> Prio {
        let t = &self.threads[th as usize];
        let j = &self.jobs[t.job as usize];
        Prio { key: j.deadline, task: j.task, job: t.trace_seq }
    }

    fn jid(&self, th: u32) -> JobId {
        let t = &self.threads[th as usize];
        JobId { task: self.jobs[t.job as usize].task, job: t.trace_seq }
    }

    /// Creates the threads of job `j`'s current region (their `Release` records at `t`).
    fn create_region(&mut self, t: Time, j: u32, fork_cpu: u32) -> Result<Vec<u32>, SimError> {
        let (task, seq, r, deadline) = {
            let job = &self.jobs[j as usize];
            (job.task, job.seq, job.region, job.deadline)
        };
        let set = self.set;
        let costs = &set[task as usize].regions[r as usize];
        let mut ids = Vec::with_capacity(costs.len());
        for (k, &c) in costs.iter().enumerate() {
            let id = u32::try_from(self.threads.len())
                .map_err(|_| ModelError::field("horizon", "more than 2^32 threads; shorten the horizon"))?;
            let trace_seq = self.thread_info[task as usize].len() as u32;
            self.threads.push(ThreadRt { job: j, trace_seq, rem: c, last_cpu: NONE, fork_cpu });
            self.thread_of[task as usize].push(id);
            self.thread_info[task as usize].push(ThreadInfo { task, job: seq, region: r, thread: k as u32 });
            ids.push(id);
            self.rec.emit(t, Event::Release { job: JobId { task, job: trace_seq }, deadline })?;
        }
        self.jobs[j as usize].outstanding = costs.len() as u32;
        Ok(ids)
    }

    fn make_ready(&mut self, ids: &[u32]) {
        for &id in ids {
            let p = self.prio(id);
            if let Some(r) = &mut self.ready {
                r.insert(p);
            }
            self.policy.job_ready(p);
        }
    }

    fn release(&mut self, t: Time, i: usize) -> Result<(), SimError> {
        let task = &self.set[i];
        let seq = self.next_seq[i];
        self.next_seq[i] =
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
        let ids = self.create_region(t, j, NONE)?;
        let gap = self.draw.gap(&self.cfg.arrivals, task.period);
        self.releases.push(Reverse((t + gap, i as u32)));
        self.backlog[i].push_back(j);
        if self.backlog[i].len() == 1 {
            self.make_ready(&ids);
        } else {
            self.jobs[j as usize].first = Some(ids);
        }
        Ok(())
    }

    fn complete(&mut self, t: Time, c: usize) -> Result<(), SimError> {
        let th = self.sched[c].take().ok_or_else(|| SimError::internal("a CPU completed but ran nothing"))?;
        let jid = self.jid(th);
        self.rec.emit(t, Event::Complete { cpu: c as u32, job: jid })?;
        let p = self.prio(th);
        if let Some(r) = &mut self.ready {
            r.remove(&p);
        }
        self.finish_at[c] = Time::MAX;
        self.threads[th as usize].rem = 0;
        self.dirty.mark(c as u32);
        self.policy.job_complete(c);
        let j = self.threads[th as usize].job;
        let jr = &mut self.jobs[j as usize];
        jr.outstanding -= 1;
        if jr.outstanding > 0 {
            return Ok(());
        }
        let task = jr.task as usize;
        if (jr.region as usize) + 1 < self.set[task].regions.len() {
            // The region joins on `c` and the next one forks there.
            jr.region += 1;
            if t < self.horizon {
                let ids = self.create_region(t, j, c as u32)?;
                self.newly_ready.extend(ids);
            }
            return Ok(());
        }
        jr.finish = Some(t);
        self.backlog[task].pop_front();
        if let Some(&next) = self.backlog[task].front() {
            if t < self.horizon {
                let ids = self.jobs[next as usize].first.take().unwrap_or_default();
                self.newly_ready.extend(ids);
            }
        }
        Ok(())
    }

    fn thread_of_prio(&self, p: Prio) -> u32 {
        self.thread_of[p.task as usize][p.job as usize]
    }

    /// Makes every CPU whose link changed (or that freed up) run its linked thread.
    fn dispatch(&mut self, t: Time) -> Result<(), SimError> {
        let mut drained = Vec::new();
        self.policy.drain_dirty(&mut drained);
        for c in drained {
            self.dirty.mark(c);
        }
        for k in 0..self.dirty.len() {
            let c = self.dirty.get(k) as usize;
            let want = self.policy.linked(c).map(|p| self.thread_of_prio(p));
            if let Some(h) = self.sched[c] {
                if want != Some(h) {
                    let jid = self.jid(h);
                    self.rec.preempt(t, c as u32, jid)?;
                    self.threads[h as usize].rem = self.finish_at[c] - t;
                    self.sched[c] = None;
                    self.finish_at[c] = Time::MAX;
                }
            }
        }
        for k in 0..self.dirty.len() {
            let c = self.dirty.get(k) as usize;
            self.dirty.unmark(c as u32);
            if self.sched[c].is_some() {
                continue;
            }
            match self.policy.linked(c).map(|p| self.thread_of_prio(p)) {
                Some(th) => {
                    let jid = self.jid(th);
                    let (last, fork, rem, job) = {
                        let x = &self.threads[th as usize];
                        (x.last_cpu, x.fork_cpu, x.rem, x.job)
                    };
                    if last == NONE && fork != NONE && fork != c as u32 {
                        self.remote_starts += 1;
                    }
                    self.rec.run(t, c as u32, jid, last)?;
                    self.threads[th as usize].last_cpu = c as u32;
                    self.jobs[job as usize].start.get_or_insert(t);
                    self.sched[c] = Some(th);
                    self.finish_at[c] = t + rem;
                }
                None => self.rec.idle(t, c as u32)?,
            }
        }
        self.dirty.clear();
        Ok(())
    }

    /// G-EDF over threads: the running set is exactly the `min(m, r)` highest-priority ready
    /// threads (from the simulator's own ready set, not the policy's queues).
    fn check(&self, t: Time) -> Result<(), SimError> {
        let Some(ready) = &self.ready else { return Ok(()) };
        let running: Vec<Option<Prio>> = self.sched.iter().map(|th| th.map(|th| self.prio(th))).collect();
        let ready: Vec<Prio> = ready.iter().copied().collect();
        invariant::check_global(self.sched.len(), &ready, &running)
            .map_err(|e| SimError::internal(format!("invariant violated at {t} ns (over threads): {e}")))
    }

    fn run(&mut self) -> Result<(), SimError> {
        let mut h = self.horizon;
        let m = self.sched.len();
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
            // Completions first, all of them, before any new thread reaches the policy: a
            // thread made ready at once could be linked to a CPU whose thread completes at
            // this same instant but is not processed yet, and that CPU's completion would then
            // unlink the wrong thread.
            for c in 0..m {
                if self.finish_at[c] == t {
                    self.events += 1;
                    self.complete(t, c)?;
                }
            }
            if t == h {
                return Ok(());
            }
            let fresh = std::mem::take(&mut self.newly_ready);
            self.make_ready(&fresh);
            while let Some(&Reverse((r, i))) = self.releases.peek() {
                if r != t {
                    break;
                }
                self.releases.pop();
                self.events += 1;
                self.release(t, i as usize)?;
            }
            self.dispatch(t)?;
            if self.cfg.check_invariants {
                self.check(t)?;
            }
        }
    }
}

/// Simulates event-driven global EDF over the threads of `set` on `cfg.m` CPUs from time 0 to
/// the horizon (default: one hyperperiod of the periods, capped by `cfg.horizon_cap`).
///
/// Errors (never panics) on the parameters `simulate` rejects, and on `cfg.exec` other than
/// `ExecTimes::Wcet` (thread costs are executed as given).
pub fn simulate_forkjoin_gedf(set: &ForkJoinSet, cfg: &SimConfig) -> Result<ForkJoinGedfResult, SimError> {
    if cfg.exec != ExecTimes::Wcet {
        return Err(ModelError::field(
            "exec",
            "fork-join G-EDF executes the thread costs as given: use ExecTimes::Wcet",
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
        policy: Gedf::new(m),
        jobs: Vec::with_capacity(expected as usize),
        threads: Vec::new(),
        thread_of: vec![Vec::new(); n],
        thread_info: vec![Vec::new(); n],
        backlog: vec![VecDeque::new(); n],
        next_seq: vec![0; n],
        sched: vec![None; m],
        finish_at: vec![Time::MAX; m],
        dirty: DirtyCpus::new(m),
        releases: (0..n).map(|i| Reverse((offsets[i], i as u32))).collect(),
        rec: Recorder::new(n, cfg.m, horizon, cfg.record_trace, 0, "the fork-join G-EDF simulator"),
        draw: Draw::new(cfg),
        horizon,
        early: EarlyEnd::new(),
        events: 0,
        remote_starts: 0,
        newly_ready: Vec::new(),
        ready: cfg.check_invariants.then(BTreeSet::new),
    };
    sim.run()?;
    let horizon = sim.horizon;
    let capped = std::mem::replace(&mut sim.early, EarlyEnd::new()).message(capped);
    let (thread_metrics, trace) = sim.rec.finish(&seq, cfg.m, horizon);
    let per_job: Vec<JobStats> = sim
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
    let completed = per_job.iter().filter(|j| j.finish.is_some()).count() as u64;
    if cfg.check_invariants {
        let pending: u64 = sim.backlog.iter().map(|b| b.len() as u64).sum();
        if completed + pending != per_job.len() as u64 {
            return Err(SimError::internal(format!(
                "accounting mismatch: {} jobs released, {completed} completed, {pending} pending",
                per_job.len()
            )));
        }
    }
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
        steals: 0,
        preemptions: thread_metrics.preemptions,
        migrations: thread_metrics.migrations,
        context_switches: thread_metrics.context_switches,
        events: sim.events,
        per_job,
        thread_metrics,
        thread_info: sim.thread_info,
        trace,
    };
    Ok(ForkJoinGedfResult { result, remote_starts: sim.remote_starts })
}
