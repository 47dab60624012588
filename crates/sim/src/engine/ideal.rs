//! The ideal loop of the engine (no overheads). One instant at a time: completions (and ends of
//! execution segments, where a self-suspending job suspends), deadline records (trace only),
//! ends of suspensions, releases, quantum ticks, then dispatch (linked → scheduled), then the
//! optional invariant check. Time never advances by less than one event.

use super::state::{Check, Engine, Keys};
use crate::error::SimError;
use rtsched_model::Time;
use rtsched_policy::Policy;
use rtsched_trace::JobId;

impl<P: Policy> Engine<'_, P, false> {
    pub(super) fn run(&mut self) -> Result<(), SimError> {
        let mut h = self.horizon;
        let m = self.sched.len();
        let edzl = matches!(self.rule, Keys::Edzl);
        let mut last = None;
        loop {
            let t = self.next_instant(h);
            if t > h {
                break;
            }
            if edzl {
                // Every instant handles what is due at it, so time advances; a zero-laxity
                // instant that did not promote its job would stop it, and is a bug.
                if last.is_some_and(|l| t <= l) {
                    return Err(SimError::internal(format!("EDZL made no progress at {t} ns")));
                }
                last = Some(t);
            }
            if self.early.check(self.cfg, t, h, self.events, &mut self.rec)? {
                h = t; // end here (Ctrl-C or a work bound): t is the horizon now
                self.horizon = t;
            }
            // 1. Completions, and ends of execution segments (the job self-suspends).
            for c in 0..m {
                if self.finish_at[c] == t {
                    if let Some(j) = self.sched[c] {
                        self.events += 1;
                        self.segment_end(t, c, j)?;
                    }
                }
            }
            // 2. Deadlines passed without completion (trace only; metrics do not need them).
            self.deadline_records(t)?;
            // 2b. Suspensions that end now (at the horizon too: the job is ready again).
            self.resumes_at(t)?;
            // 3. Releases (only before the horizon).
            if t < h {
                self.releases_at(t)?;
            }
            // 4. Quantum boundaries.
            let mut ticked = false;
            if let Some((q, staggered)) = self.quantum {
                for c in 0..self.next_tick.len() {
                    if self.next_tick[c] == t && t < h {
                        self.events += 1;
                        ticked = true;
                        self.policy.tick(if staggered { Some(c) } else { None });
                        self.next_tick[c] += q;
                    }
                }
            }
            // 5. EDZL: zero-laxity promotions (after the instant's other changes).
            if edzl {
                self.promote_zero_laxity(t);
            }
            // 6. Dispatch.
            self.dispatch(t)?;
            if self.check != Check::None {
                self.check_invariant(t, ticked)?;
            }
        }
        Ok(())
    }

    /// Makes `scheduled` follow `linked` on every CPU whose link changed or that freed up.
    fn dispatch(&mut self, t: Time) -> Result<(), SimError> {
        self.policy.drain_dirty(self.dirty.list_mut());
        // Pass 1: stop what must stop (so that a job moving between CPUs stops first).
        for k in 0..self.dirty.len() {
            let c = self.dirty.get(k) as usize;
            let want = self.policy.linked(c);
            if let Some(h) = self.sched[c] {
                if want.is_some_and(|w| (w.task, w.job) == (h.task, h.job)) {
                    // The same job with a new key (EDZL's promotion): it keeps running.
                    self.sched[c] = want;
                    continue;
                }
                if want != Some(h) {
                    self.rec.preempt(t, c as u32, JobId { task: h.task, job: h.job })?;
                    let ts = &mut self.tasks[h.task as usize];
                    if let Some(f) = ts.backlog.front_mut() {
                        f.rem = self.finish_at[c] - t;
                    }
                    self.sched[c] = None;
                    self.finish_at[c] = Time::MAX;
                }
            }
        }
        // Pass 2: start what must start; announce idleness.
        for k in 0..self.dirty.len() {
            let c = self.dirty.get(k) as usize;
            self.dirty.unmark(c as u32);
            if self.sched[c].is_some() {
                continue;
            }
            match self.policy.linked(c) {
                Some(w) => {
                    let ts = &self.tasks[w.task as usize];
                    let front = ts.backlog.front().filter(|f| f.seq == w.job).ok_or_else(|| {
                        SimError::internal(format!(
                            "policy linked job {}.{} which is not ready at {t} ns",
                            w.task, w.job
                        ))
                    })?;
                    let (rem, last) = (front.rem, ts.last_cpu);
                    let job = JobId { task: w.task, job: w.job };
                    self.rec.run(t, c as u32, job, last)?;
                    self.tasks[w.task as usize].last_cpu = c as u32;
                    self.sched[c] = Some(w);
                    self.finish_at[c] = t + rem;
                }
                None => self.rec.idle(t, c as u32)?,
            }
        }
        self.dirty.clear();
        Ok(())
    }
}
