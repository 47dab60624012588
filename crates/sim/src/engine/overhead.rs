//! The overhead loop of the engine (docs/simulator.md, "Overhead injection"): the instants of
//! the ideal loop plus release handlers (Δev latency, then Δrel of CPU time on the domain's
//! CPU), reschedules that lag the policy's links by Δipi on remote CPUs, and the CPU time of
//! scheduling (Δsch), context switches (Δcxs) and ticks, served as pieces during which the job
//! scheduled on the CPU does not progress.

use super::state::{Check, Engine, Seg};
use crate::error::SimError;
use crate::recorder::NONE;
use rtsched_model::Time;
use rtsched_policy::Policy;
use rtsched_trace::{Event, JobId, OverheadKind};

impl<P: Policy> Engine<'_, P, true> {
    pub(super) fn run(&mut self) -> Result<(), SimError> {
        let mut h = self.horizon;
        let m = self.sched.len();
        loop {
            let mut t = self.next_instant(h);
            if let Some(&(s, _, _)) = self.ov.irqs.front() {
                t = t.min(s);
            }
            t = t.min(self.ov.seg_end.iter().copied().min().unwrap_or(Time::MAX));
            for &c in &self.ov.pending {
                t = t.min(self.ov.resched_at[c as usize]);
            }
            if t > h {
                break;
            }
            if self.early.check(self.cfg, t, h, self.events, &mut self.rec)? {
                h = t; // end here (Ctrl-C or a work bound): t is the horizon now
                self.horizon = t;
            }
            // 1. Completions (the CPU reschedules itself).
            for c in 0..m {
                if self.finish_at[c] == t {
                    if let Some(j) = self.sched[c] {
                        self.events += 1;
                        self.complete(t, c, j)?;
                    }
                }
            }
            // 2. Deadline records (trace only).
            self.deadline_records(t)?;
            // 3. Releases: counted now, ready after their handler.
            if t < h {
                self.releases_at(t)?;
            }
            // 4. Release handlers that start now: Δrel on the domain's CPU.
            while let Some(&(s, d, due)) = self.ov.irqs.front() {
                if s != t {
                    break;
                }
                self.ov.irqs.pop_front();
                let c = self.ov.dom_cpu[d as usize] as usize;
                let rel = self.ov.v.release_ns;
                self.charge(t, c, OverheadKind::Release, rel, Some((d, due)))?;
            }
            // 5. Overhead pieces that end now (release handlers make their jobs ready).
            self.end_pieces(t)?;
            // 6. Quantum boundaries: the tick handler's time, then the policy's tick.
            let mut ticked = false;
            if let Some((q, staggered)) = self.quantum {
                for c in 0..self.next_tick.len() {
                    if self.next_tick[c] == t && t < h {
                        self.events += 1;
                        ticked = true;
                        let tick = self.ov.v.tick_ns;
                        if staggered {
                            self.charge(t, c, OverheadKind::Tick, tick, None)?;
                            self.ov.set_local(c);
                        } else {
                            for p in 0..m {
                                self.charge(t, p, OverheadKind::Tick, tick, None)?;
                                self.ov.set_local(p);
                            }
                        }
                        self.policy.tick(if staggered { Some(c) } else { None });
                        self.next_tick[c] += q;
                    }
                }
            }
            // 7. Reschedules: planned (local now, remote after Δipi), then the due ones.
            self.plan_reschedules(t)?;
            self.reschedule(t)?;
            if self.check != Check::None {
                self.check_invariant(t, ticked)?;
            }
        }
        Ok(())
    }

    /// Charges `dur` ns of `kind` to CPU `c` at `t`: the piece starts now if the CPU serves
    /// no other piece, else after the last one; the job scheduled there is delayed by `dur`.
    /// Zero-length pieces are dropped unless they carry a release handler's action.
    fn charge(
        &mut self,
        t: Time,
        c: usize,
        kind: OverheadKind,
        dur: Time,
        group: Option<(u32, Time)>,
    ) -> Result<(), SimError> {
        if dur == 0 && group.is_none() {
            return Ok(());
        }
        if self.ov.segs[c].is_empty() {
            self.ov.seg_end[c] = t + dur;
            if dur > 0 {
                self.rec.emit(t, Event::Overhead { cpu: c as u32, kind, duration: dur })?;
            }
        }
        self.ov.segs[c].push_back(Seg { kind, dur, group });
        self.ov.busy_until[c] = self.ov.busy_until[c].max(t) + dur;
        if self.sched[c].is_some() {
            self.finish_at[c] += dur;
        }
        Ok(())
    }

    /// Ends the pieces that end at `t` (running release handlers' actions) and starts the
    /// next ones.
    fn end_pieces(&mut self, t: Time) -> Result<(), SimError> {
        for c in 0..self.sched.len() {
            while self.ov.seg_end[c] == t {
                let Some(s) = self.ov.segs[c].pop_front() else {
                    self.ov.seg_end[c] = Time::MAX;
                    break;
                };
                if let Some((d, due)) = s.group {
                    self.handle_releases(c, d as usize, due);
                }
                match self.ov.segs[c].front() {
                    Some(nx) => {
                        let (kind, dur) = (nx.kind, nx.dur);
                        self.ov.seg_end[c] = t + dur;
                        if dur > 0 {
                            self.rec.emit(t, Event::Overhead { cpu: c as u32, kind, duration: dur })?;
                        }
                    }
                    None => self.ov.seg_end[c] = Time::MAX,
                }
            }
        }
        Ok(())
    }

    /// The end of a release handler on CPU `c`: the domain's jobs due by `due` are handled, in
    /// release order; each that heads its task's backlog becomes ready.
    fn handle_releases(&mut self, c: usize, d: usize, due: Time) {
        self.ov.set_local(c);
        while let Some(&(r, i)) = self.ov.dom_jobs[d].front() {
            if r > due {
                break;
            }
            self.ov.dom_jobs[d].pop_front();
            let ts = &mut self.tasks[i as usize];
            let seq = ts.handled;
            ts.handled += 1;
            if let Some(f) = ts.backlog.front().filter(|f| f.seq == seq) {
                let p = self.rule.prio(i, seq, f.deadline);
                self.policy.job_ready(p);
            }
        }
    }

    /// Plans a reschedule for each CPU whose link changed: now if it handled an event at this
    /// instant, else when an IPI sent now arrives (Δipi later; no second IPI while one is
    /// pending).
    fn plan_reschedules(&mut self, t: Time) -> Result<(), SimError> {
        self.policy.drain_dirty(self.dirty.list_mut());
        for k in 0..self.dirty.len() {
            let c = self.dirty.get(k) as usize;
            self.dirty.unmark(c as u32);
            let when = if self.ov.local[c] { t } else { t + self.ov.v.ipi_ns };
            if when < self.ov.resched_at[c] {
                if self.ov.resched_at[c] == Time::MAX {
                    self.ov.pending.push(c as u32);
                }
                self.ov.resched_at[c] = when;
                if when > t {
                    self.rec.emit(
                        t,
                        Event::Overhead { cpu: c as u32, kind: OverheadKind::Ipi, duration: self.ov.v.ipi_ns },
                    )?;
                }
            }
        }
        self.dirty.clear();
        for k in 0..self.ov.local_list.len() {
            let c = self.ov.local_list[k] as usize;
            self.ov.local[c] = false;
        }
        self.ov.local_list.clear();
        Ok(())
    }

    /// Reschedules every CPU whose reschedule is due: first all preemptions, then each idle
    /// CPU takes its linked job after Δsch + Δcxs of its own time. A job still scheduled on
    /// another CPU (whose reschedule is pending) is taken when that CPU lets it go.
    fn reschedule(&mut self, t: Time) -> Result<(), SimError> {
        let mut due = std::mem::take(&mut self.ov.due);
        due.clear();
        let mut k = 0;
        while k < self.ov.pending.len() {
            let c = self.ov.pending[k] as usize;
            if self.ov.resched_at[c] <= t {
                self.ov.resched_at[c] = Time::MAX;
                self.ov.pending.swap_remove(k);
                due.push(c as u32);
            } else {
                k += 1;
            }
        }
        due.sort_unstable();
        for &c in &due {
            let c = c as usize;
            if let Some(h) = self.sched[c] {
                if self.policy.linked(c) != Some(h) {
                    self.rec.preempt(t, c as u32, JobId { task: h.task, job: h.job })?;
                    let left = self.finish_at[c] - t.max(self.ov.busy_until[c]);
                    let ts = &mut self.tasks[h.task as usize];
                    if let Some(f) = ts.backlog.front_mut() {
                        f.rem = left;
                    }
                    ts.on_cpu = NONE;
                    self.sched[c] = None;
                    self.finish_at[c] = Time::MAX;
                }
            }
        }
        for &c in &due {
            let c = c as usize;
            if self.sched[c].is_some() {
                continue;
            }
            match self.policy.linked(c) {
                Some(w) => {
                    let other = self.tasks[w.task as usize].on_cpu;
                    if other != NONE {
                        let at = self.ov.resched_at[other as usize];
                        if at == Time::MAX {
                            return Err(SimError::internal(format!(
                                "job {}.{} is linked to cpu {c} but stays on cpu {other} with no reschedule pending at {t} ns",
                                w.task, w.job
                            )));
                        }
                        self.ov.resched_at[c] = at;
                        self.ov.pending.push(c as u32);
                        continue;
                    }
                    let ts = &self.tasks[w.task as usize];
                    let front =
                        ts.backlog.front().filter(|f| f.seq == w.job && f.seq < ts.handled).ok_or_else(|| {
                            SimError::internal(format!(
                                "policy linked job {}.{} which is not ready at {t} ns",
                                w.task, w.job
                            ))
                        })?;
                    let (rem, last) = (front.rem, ts.last_cpu);
                    let (sch, cxs) = (self.ov.v.schedule_ns, self.ov.v.context_switch_ns);
                    self.charge(t, c, OverheadKind::Schedule, sch, None)?;
                    self.charge(t, c, OverheadKind::ContextSwitch, cxs, None)?;
                    let job = JobId { task: w.task, job: w.job };
                    self.rec.run(t, c as u32, job, last)?;
                    let ts = &mut self.tasks[w.task as usize];
                    ts.last_cpu = c as u32;
                    ts.on_cpu = c as u32;
                    self.sched[c] = Some(w);
                    self.finish_at[c] = t.max(self.ov.busy_until[c]) + rem;
                }
                None => self.rec.idle(t, c as u32)?,
            }
        }
        self.ov.due = due;
        Ok(())
    }
}
