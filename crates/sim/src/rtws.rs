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
//! Self-suspending jobs (sequential tasks with `segments`, [`simulate`](crate::simulate) with
//! `Scheduler::Rtws`; docs/mechanisms/rtws.md, "Self-suspending jobs"): a thread runs up to
//! the end of its current execution segment; there, with execution left, it *blocks* — it
//! leaves its CPU as at a completion without a join (step 1; the CPU takes work by Rules C–E
//! in steps 2 and 4) and a `Suspend` record is written — and at the end of its suspension
//! (its upper bound, or drawn, `SimConfig::suspensions`) it *wakes*: a `Resume` record, and
//! the job arrives in step 3 as a released job does (Rule A, release and deadline
//! unchanged), with the §V check of step 5; it never goes to a deque. Ends of suspensions are
//! processed right after step 1 (at the horizon too, as the engine's loop does).
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

use crate::config::{Scheduler, SimConfig};
use crate::error::SimError;
use crate::forkjoin::{due, next_instant, prepare, Book, Progress, Releases};
pub use crate::forkjoin::{ForkJoinResult, ThreadInfo};
use crate::recorder::Recorder;
use crate::result::SimResult;
use crate::setup::{Draw, EarlyEnd, Setup};
use rtsched_model::forkjoin::ForkJoinSet;
use rtsched_model::task::Segments;
use rtsched_model::{TaskSet, Time};
use rtsched_policy::rtws::{Arrival, Rtws, Source, ThreadId, Work};
use rtsched_policy::Prio;
use rtsched_trace::{Event, JobId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

struct Sim<'a> {
    cfg: &'a SimConfig,
    policy: Rtws,
    book: Book<'a>,
    finish_at: Vec<Time>,
    releases: Releases,
    rec: Recorder,
    draw: Draw,
    horizon: Time,
    early: EarlyEnd,
    steals: u64,
    events: u64,
    arrivals_now: Vec<Prio>,
    /// Per fork-join task: the segments of a self-suspending sequential task (empty: none).
    segs: Vec<Option<Segments>>,
    /// Per CPU: the execution its thread has left after its current segment (0: the thread
    /// completes at `finish_at`, otherwise it blocks there).
    after: Vec<Time>,
    /// Ends of suspensions: `(time, thread)`.
    resumes: BinaryHeap<Reverse<(Time, u32)>>,
}

impl Sim<'_> {
    fn prio(&self, j: u32) -> Prio {
        let job = &self.book.jobs[j as usize];
        Prio { key: job.deadline, task: job.task, job: job.seq }
    }

    fn job_of_prio(&self, p: Prio) -> u32 {
        self.book.job_of(p.task, p.job)
    }

    /// Job `j` forks its current region on `cpu` (Rule B). The first region's threads were
    /// created at the job's release (so that the trace's release times are the job's).
    fn fork(&mut self, t: Time, cpu: usize, j: u32) -> Result<(), SimError> {
        let ids = match self.book.jobs[j as usize].first.take() {
            Some(ids) => ids,
            None => {
                let r = self.book.region(self.book.jobs[j as usize].task);
                self.book.create_region(&mut self.rec, t, j, r, cpu as u32)?
            }
        };
        let p = self.prio(j);
        self.policy.fork(cpu, p, &ids);
        Ok(())
    }

    fn tid(&self, id: ThreadId) -> JobId {
        self.book.trace_job(id)
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
        let last = std::mem::replace(&mut self.book.threads[id as usize].last_cpu, cpu as u32);
        let th = &self.book.threads[id as usize];
        // A self-suspending job's thread runs to the end of its current execution segment.
        let task = self.book.jobs[th.job as usize].task as usize;
        let after = match self.segs.get(task).and_then(Option::as_ref) {
            None => 0,
            Some(s) => {
                let cost: Time = s.exec.iter().sum();
                let done = cost - th.rem;
                let mut end = 0;
                s.exec
                    .iter()
                    .map(|&c| {
                        end += c;
                        end
                    })
                    .find(|&e| e > done)
                    .map_or(0, |e| cost - e)
            }
        };
        self.after[cpu] = after;
        self.finish_at[cpu] = t + th.rem - after;
        let jr = &mut self.book.jobs[th.job as usize];
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
        let (j, ids, head) = self.book.release(&mut self.rec, t, i)?;
        self.book.jobs[j as usize].first = Some(ids);
        let gap = self.draw.gap(&self.cfg.arrivals, self.book.period(i));
        self.releases.push(Reverse((t + gap, i as u32)));
        if head {
            let p = self.prio(j);
            self.arrivals_now.push(p);
        }
        Ok(())
    }

    fn complete(&mut self, t: Time, cpu: usize) -> Result<(), SimError> {
        let r = self.policy.stop(cpu).ok_or_else(|| SimError::internal("a CPU completed but ran nothing"))?;
        let job = self.tid(r.thread);
        let after = std::mem::take(&mut self.after[cpu]);
        if after > 0 {
            return self.block(t, cpu, r.thread, after);
        }
        self.rec.emit(t, Event::Complete { cpu: cpu as u32, job })?;
        self.finish_at[cpu] = Time::MAX;
        match self.book.thread_done(t, r.thread)? {
            Progress::Pending => {}
            // The region joins: the next one forks here (Rule B).
            Progress::Fork { job, .. } => {
                if t < self.horizon {
                    self.fork(t, cpu, job)?;
                }
            }
            Progress::JobDone { next } => {
                if let Some(next) = next.filter(|_| t < self.horizon) {
                    let p = self.prio(next);
                    self.arrivals_now.push(p);
                }
            }
        }
        Ok(())
    }

    /// Thread `id` (a self-suspending sequential job) ended an execution segment on `cpu` at
    /// `t` with `rest` execution left: it blocks — off the CPU as at a completion without a
    /// join — and wakes at the end of its suspension.
    fn block(&mut self, t: Time, cpu: usize, id: ThreadId, rest: Time) -> Result<(), SimError> {
        self.finish_at[cpu] = Time::MAX;
        let th = &mut self.book.threads[id as usize];
        th.rem = rest;
        let task = self.book.jobs[th.job as usize].task as usize;
        let s = self.segs[task].as_ref().ok_or_else(|| SimError::internal("a job without segments blocked"))?;
        let cost: Time = s.exec.iter().sum();
        let mut end = 0;
        let k = s.exec.iter().position(|&c| {
            end += c;
            cost - end == rest
        });
        let bound = k.and_then(|k| s.susp.get(k).copied()).ok_or_else(|| {
            SimError::internal(format!("task {task}: no suspension after {} ns of execution", cost - rest))
        })?;
        let d = self.draw.suspension(self.cfg.suspensions, bound);
        let job = self.tid(id);
        self.rec.emit(t, Event::Suspend { cpu: cpu as u32, job })?;
        self.resumes.push(Reverse((t + d, id)));
        Ok(())
    }

    /// Suspensions ending at `t`: each job arrives again (Rule A, step 3), unstarted, with its
    /// one thread (which keeps its remaining execution).
    fn resumes_at(&mut self, t: Time) -> Result<(), SimError> {
        while let Some(&Reverse((r, id))) = self.resumes.peek() {
            if r > t {
                break;
            }
            self.resumes.pop();
            self.events += 1;
            let job = self.tid(id);
            self.rec.emit(t, Event::Resume { job })?;
            let j = self.book.threads[id as usize].job;
            self.book.jobs[j as usize].first = Some(vec![id]);
            let p = self.prio(j);
            self.arrivals_now.push(p);
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
            self.book.threads[r.thread as usize].rem = self.finish_at[c] - t + std::mem::take(&mut self.after[c]);
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
            let wake = self.resumes.peek().map_or(Time::MAX, |r| r.0 .0);
            let Some(t) = next_instant(&self.finish_at, &self.releases, h)
                .map_or((wake <= h).then_some(wake), |t| Some(t.min(wake)))
            else {
                return Ok(());
            };
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
            // 1b. Ends of suspensions: the jobs arrive in step 3 (at the horizon, only the
            // records).
            self.resumes_at(t)?;
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
            while let Some(i) = due(&mut self.releases, t) {
                self.events += 1;
                self.release(t, i)?;
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
pub fn simulate_rtws(set: &ForkJoinSet, cfg: &SimConfig) -> Result<ForkJoinResult, SimError> {
    simulate_with(set, cfg, Vec::new())
}

/// [`simulate_rtws`] with the segments of self-suspending tasks (`segs[i]` for fork-join task
/// `i`, a sequential task's one region of one thread; empty: none suspends).
fn simulate_with(set: &ForkJoinSet, cfg: &SimConfig, segs: Vec<Option<Segments>>) -> Result<ForkJoinResult, SimError> {
    let (seq, Setup { offsets, horizon, capped, expected }) = prepare(set, cfg, "RTWS")?;
    let (m, n) = (cfg.m as usize, set.len());
    let mut sim = Sim {
        cfg,
        policy: Rtws::new(m),
        book: Book::new(set, expected),
        finish_at: vec![Time::MAX; m],
        releases: (0..n).map(|i| Reverse((offsets[i], i as u32))).collect(),
        rec: Recorder::new(n, cfg.m, horizon, cfg.record_trace, 0, "the RTWS simulator"),
        draw: Draw::new(cfg),
        horizon,
        early: EarlyEnd::new(),
        steals: 0,
        events: 0,
        arrivals_now: Vec::new(),
        segs,
        after: vec![0; m],
        resumes: BinaryHeap::new(),
    };
    sim.run()?;
    let horizon = sim.horizon;
    let capped = std::mem::replace(&mut sim.early, EarlyEnd::new()).message(capped);
    let (thread_metrics, trace) = sim.rec.finish(&seq, cfg.m, horizon);
    if cfg.check_invariants && thread_metrics.steals != sim.steals {
        return Err(SimError::internal(format!("{} steals made, {} in the trace", sim.steals, thread_metrics.steals)));
    }
    sim.book.result(cfg, horizon, capped, sim.events, (thread_metrics, trace), None)
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
    let segs = ts.iter().map(|t| t.segments.as_deref().cloned()).collect();
    let r = simulate_with(&set, cfg, segs)?;
    Ok(SimResult::from_metrics(sched, r.thread_metrics, r.horizon_message, r.events, r.trace))
}
