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

use crate::config::SimConfig;
use crate::error::SimError;
use crate::forkjoin::{due, next_instant, prepare, Book, ForkJoinResult, Progress, Releases};
use crate::recorder::{DirtyCpus, Recorder, NONE};
use crate::setup::{Draw, EarlyEnd, Setup};
use rtsched_model::forkjoin::ForkJoinSet;
use rtsched_model::Time;
use rtsched_policy::{invariant, Gedf, Policy, Prio};
use rtsched_trace::{Event, JobId};
use std::cmp::Reverse;
use std::collections::BTreeSet;

struct Sim<'a> {
    cfg: &'a SimConfig,
    policy: Gedf,
    book: Book<'a>,
    sched: Vec<Option<u32>>,
    finish_at: Vec<Time>,
    dirty: DirtyCpus,
    releases: Releases,
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
        let t = &self.book.threads[th as usize];
        let j = &self.book.jobs[t.job as usize];
        Prio { key: j.deadline, task: j.task, job: t.trace_seq }
    }

    fn jid(&self, th: u32) -> JobId {
        self.book.trace_job(th)
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
        let (j, ids, head) = self.book.release(&mut self.rec, t, i)?;
        let gap = self.draw.gap(&self.cfg.arrivals, self.book.period(i));
        self.releases.push(Reverse((t + gap, i as u32)));
        if head {
            self.make_ready(&ids);
        } else {
            self.book.jobs[j as usize].first = Some(ids);
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
        self.dirty.mark(c as u32);
        self.policy.job_complete(c);
        match self.book.thread_done(t, th)? {
            Progress::Pending => {}
            // The region joins on `c` and the next one forks there.
            Progress::Fork { job, region } => {
                if t < self.horizon {
                    let ids = self.book.create_region(&mut self.rec, t, job, region, c as u32)?;
                    self.newly_ready.extend(ids);
                }
            }
            Progress::JobDone { next } => {
                if let Some(next) = next.filter(|_| t < self.horizon) {
                    let ids = self.book.jobs[next as usize].first.take().unwrap_or_default();
                    self.newly_ready.extend(ids);
                }
            }
        }
        Ok(())
    }

    fn thread_of_prio(&self, p: Prio) -> u32 {
        self.book.thread_of(p.task, p.job)
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
                    self.book.threads[h as usize].rem = self.finish_at[c] - t;
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
                        let x = &self.book.threads[th as usize];
                        (x.last_cpu, x.fork_cpu, x.rem, x.job)
                    };
                    if last == NONE && fork != NONE && fork != c as u32 {
                        self.remote_starts += 1;
                    }
                    self.rec.run(t, c as u32, jid, last)?;
                    self.book.threads[th as usize].last_cpu = c as u32;
                    self.book.jobs[job as usize].start.get_or_insert(t);
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
            let Some(t) = next_instant(&self.finish_at, &self.releases, h) else { return Ok(()) };
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
            while let Some(i) = due(&mut self.releases, t) {
                self.events += 1;
                self.release(t, i)?;
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
pub fn simulate_forkjoin_gedf(set: &ForkJoinSet, cfg: &SimConfig) -> Result<ForkJoinResult, SimError> {
    let (seq, Setup { offsets, horizon, capped, expected }) = prepare(set, cfg, "fork-join G-EDF")?;
    let (m, n) = (cfg.m as usize, set.len());
    let mut sim = Sim {
        cfg,
        policy: Gedf::new(m),
        book: Book::new(set, expected),
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
    let metrics = sim.rec.finish(&seq, cfg.m, horizon);
    sim.book.result(cfg, horizon, capped, sim.events, metrics, Some(sim.remote_starts))
}
