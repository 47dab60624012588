//! The state of the engine that runs the global and partitioned schedulers over a link-based
//! policy (`rtsched_policy::Policy`), and the steps both of its loops share: releases,
//! completions, deadline records, the next instant, and the independent invariant check.
//! The loops themselves are in `ideal.rs` (no overheads) and `overhead.rs` (overhead injection).

use crate::config::{Arrivals, ExecTimes, SimConfig};
use crate::error::SimError;
use crate::overheads::Overheads;
use crate::recorder::{DirtyCpus, Recorder, NONE};
use crate::setup::{Draw, EarlyEnd};
use rtsched_model::{ModelError, Time};
use rtsched_policy::{invariant, Policy, Prio, PriorityPoints, PriorityRule};
use rtsched_trace::{Event, JobId, OverheadKind};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// How the engine keys its jobs: a task-level rule (EDF, fixed priorities) or G-EDF-like
/// priority points (G-FL).
pub(super) enum Keys {
    Rule(PriorityRule),
    Points(PriorityPoints),
    /// EDZL: EDF keys, and key 0 (above every deadline, which is at least 1 ns) for a job
    /// promoted at zero laxity ([`TaskState::zl`]).
    Edzl,
}

impl Keys {
    #[inline]
    pub(super) fn prio(&self, task: u32, job: u32, deadline: Time) -> Prio {
        match self {
            Keys::Rule(r) => r.prio(task, job, deadline),
            Keys::Points(p) => p.prio(task, job, deadline),
            Keys::Edzl => PriorityRule::Edf.prio(task, job, deadline),
        }
    }
}

pub(super) struct Pending {
    pub(super) seq: u32,
    pub(super) deadline: Time,
    /// Remaining execution.
    pub(super) rem: Time,
    /// The execution time drawn for the job (`rem + rest` at release).
    pub(super) exec: Time,
    /// Self-suspension: the execution segment `rem` belongs to, and the execution left in
    /// the segments after it (0 for a task without segments).
    pub(super) seg: u32,
    pub(super) rest: Time,
}

pub(super) struct TaskState {
    pub(super) wcet: Time,
    pub(super) deadline: Time,
    pub(super) period: Time,
    pub(super) backlog: VecDeque<Pending>,
    pub(super) next_seq: u32,
    /// Jobs whose release has been handled: only `seq < handled` may be ready. Without
    /// overheads a release is handled when it happens, so this follows `next_seq`.
    pub(super) handled: u32,
    pub(super) completed: u32,
    /// CPU the front job last ran on.
    pub(super) last_cpu: u32,
    /// CPU the front job is scheduled on now, or NONE (kept by the overhead engine only).
    pub(super) on_cpu: u32,
    /// EDZL: the front job reached zero laxity while waiting and has the highest priority
    /// until it completes.
    pub(super) zl: bool,
    /// The task's self-suspension segments (`None`: it never suspends).
    pub(super) segs: Option<Box<rtsched_model::task::Segments>>,
    /// The front job is self-suspended: not ready until its resume.
    pub(super) suspended: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    Global,
    GlobalAtTicks,
    Partitioned,
    /// Only what holds under any dispatch delay (overheads): no job on two CPUs, running jobs
    /// ready, every CPU whose scheduled job differs from its linked one has a reschedule
    /// pending.
    Structural,
    None,
}

/// A piece of overhead CPU time on one CPU. A CPU serves its pieces one after another, in the
/// order they were charged, without preemption; the job scheduled there progresses only
/// while no piece is being served.
pub(super) struct Seg {
    pub(super) kind: OverheadKind,
    pub(super) dur: Time,
    /// A release handler: `(domain, due)`. When it ends, the domain's jobs due by then are
    /// handled (they become ready).
    pub(super) group: Option<(u32, Time)>,
}

/// State of the overhead engine (docs/simulator.md, "Overhead injection"); empty otherwise.
#[derive(Default)]
pub(super) struct Ovh {
    pub(super) v: Overheads,
    /// Release domain of each task and the CPU that handles each domain.
    pub(super) dom_of: Vec<u32>,
    pub(super) dom_cpu: Vec<u32>,
    /// Per domain: released jobs whose handler has not run yet, `(due, task)`, in release order.
    pub(super) dom_jobs: Vec<VecDeque<(Time, u32)>>,
    /// Per domain: due time of the last handler invocation queued (`Time::MAX`: none).
    pub(super) dom_last_due: Vec<Time>,
    /// Handler invocations not yet started: `(due + Δev, domain, due)`, in time order.
    pub(super) irqs: VecDeque<(Time, u32, Time)>,
    pub(super) segs: Vec<VecDeque<Seg>>,
    /// End of each CPU's piece in service (`Time::MAX`: none).
    pub(super) seg_end: Vec<Time>,
    /// End of each CPU's last charged piece (at most now when none is queued).
    pub(super) busy_until: Vec<Time>,
    /// When each CPU next brings `scheduled` in line with `linked` (`Time::MAX`: not pending).
    pub(super) resched_at: Vec<Time>,
    pub(super) pending: Vec<u32>,
    /// CPUs that handled an event at this instant: their reschedule needs no IPI.
    pub(super) local: Vec<bool>,
    pub(super) local_list: Vec<u32>,
    pub(super) due: Vec<u32>,
}

impl Ovh {
    /// Marks CPU `c` as having handled an event at this instant (its reschedule needs no IPI).
    #[inline]
    pub(super) fn set_local(&mut self, c: usize) {
        if !self.local[c] {
            self.local[c] = true;
            self.local_list.push(c as u32);
        }
    }
}

/// The engine of the global and partitioned schedulers (G-EDF event- and quantum-driven, P-EDF,
/// P-FP) over a link-based policy; `OV`: with overhead injection (the overhead loop,
/// `overhead.rs`) or without (the ideal loop, `ideal.rs`).
pub(super) struct Engine<'a, P: Policy, const OV: bool> {
    pub(super) policy: P,
    pub(super) rule: Keys,
    pub(super) tasks: Vec<TaskState>,
    pub(super) sched: Vec<Option<Prio>>,
    /// Completion time of the job each CPU runs; `Time::MAX` when it runs nothing.
    pub(super) finish_at: Vec<Time>,
    /// Next release per task, packed `time << 32 | task` (one integer compare per heap step).
    pub(super) releases: BinaryHeap<Reverse<u128>>,
    pub(super) deadlines: BinaryHeap<Reverse<(Time, u32, u32)>>,
    /// Ends of suspensions: `(time, task)` of the task's suspended front job.
    pub(super) resumes: BinaryHeap<Reverse<(Time, u32)>>,
    pub(super) rec: Recorder,
    pub(super) dirty: DirtyCpus,
    pub(super) horizon: Time,
    pub(super) arrivals: &'a Arrivals,
    pub(super) exec: &'a ExecTimes,
    pub(super) draw: Draw,
    /// Quantum, staggered, next tick per CPU (aligned: only entry 0 is used).
    pub(super) quantum: Option<(Time, bool)>,
    pub(super) next_tick: Vec<Time>,
    pub(super) check: Check,
    pub(super) cpu_of: Vec<u32>,
    pub(super) events: u64,
    pub(super) released: u64,
    pub(super) ov: Ovh,
    pub(super) cfg: &'a SimConfig,
    pub(super) early: EarlyEnd,
}

impl<P: Policy, const OV: bool> Engine<'_, P, OV> {
    pub(super) fn prio_of_front(&self, task: usize) -> Option<Prio> {
        let ts = &self.tasks[task];
        ts.backlog.front().filter(|j| j.seq < ts.handled && !ts.suspended).map(|j| {
            let p = self.rule.prio(task as u32, j.seq, j.deadline);
            if ts.zl {
                Prio { key: 0, ..p }
            } else {
                p
            }
        })
    }

    /// EDZL (Lee, RTCSA 1994; Cirinei & Baker, ECRTS 2007): a ready job that is not linked and
    /// whose laxity `d − t − (C − executed)` has reached zero gets the highest priority (key 0,
    /// ties by task index) until it completes. Laxity is taken against the WCET, which is all
    /// the scheduler knows. A running job's laxity is constant, so it is promoted only once it
    /// is displaced; a promoted job may displace another whose laxity is zero too, hence the
    /// loop (each job is promoted at most once).
    pub(super) fn promote_zero_laxity(&mut self, t: Time) {
        let m = self.sched.len();
        loop {
            let mut changed = false;
            for i in 0..self.tasks.len() {
                if self.tasks[i].zl {
                    continue;
                }
                let Some(p) = self.prio_of_front(i) else { continue };
                if (0..m).any(|c| self.policy.linked(c) == Some(p)) {
                    continue;
                }
                let ts = &self.tasks[i];
                let Some(f) = ts.backlog.front() else { continue };
                let rem = match (0..m).find(|&c| self.sched[c] == Some(p)) {
                    Some(c) => self.finish_at[c] - t,
                    None => f.rem,
                };
                let left = ts.wcet.saturating_sub(f.exec - rem - f.rest);
                if f.deadline.saturating_sub(left) <= t {
                    self.policy.job_done(p);
                    self.tasks[i].zl = true;
                    self.policy.job_ready(Prio { key: 0, ..p });
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// EDZL: the earliest instant a waiting (ready, not running) job reaches zero laxity.
    pub(super) fn next_zero_laxity(&self) -> Time {
        let mut z = Time::MAX;
        for (i, ts) in self.tasks.iter().enumerate() {
            if ts.zl {
                continue;
            }
            let Some(p) = self.prio_of_front(i) else { continue };
            if self.sched.contains(&Some(p)) {
                continue;
            }
            if let Some(f) = ts.backlog.front() {
                z = z.min(f.deadline.saturating_sub(ts.wcet.saturating_sub(f.exec - f.rem - f.rest)));
            }
        }
        z
    }

    pub(super) fn release(&mut self, t: Time, i: usize) -> Result<(), SimError> {
        let ts = &mut self.tasks[i];
        let seq = ts.next_seq;
        ts.next_seq =
            seq.checked_add(1).ok_or_else(|| ModelError::task_field(i, "period", "more than 2^32 jobs of one task"))?;
        let deadline = t + ts.deadline;
        let exec = self.draw.exec(self.exec, i, ts.wcet);
        let gap = self.draw.gap(self.arrivals, ts.period);
        // A job of a self-suspending task runs its first execution segment first; a job drawn
        // shorter than the WCET uses its execution up segment by segment (docs/simulator.md).
        let rem = ts.segs.as_ref().map_or(exec, |s| s.exec[0].min(exec));
        ts.backlog.push_back(Pending { seq, deadline, rem, exec, seg: 0, rest: exec - rem });
        let first = ts.backlog.len() == 1;
        if !OV {
            ts.handled = ts.next_seq;
        }
        self.releases.push(Reverse(((t + gap) as u128) << 32 | i as u128));
        self.released += 1;
        if self.rec.tracing() && deadline <= self.horizon {
            self.deadlines.push(Reverse((deadline, i as u32, seq)));
        }
        self.rec.emit(t, Event::Release { job: JobId { task: i as u32, job: seq }, deadline })?;
        if OV {
            // The job waits for its domain's release handler (one invocation per domain and
            // due time), which starts Δev later.
            let d = self.ov.dom_of[i] as usize;
            self.ov.dom_jobs[d].push_back((t, i as u32));
            if self.ov.dom_last_due[d] != t {
                self.ov.dom_last_due[d] = t;
                self.ov.irqs.push_back((t + self.ov.v.release_event_ns, d as u32, t));
            }
        } else if first {
            let p = self.rule.prio(i as u32, seq, deadline);
            self.policy.job_ready(p);
        }
        Ok(())
    }

    /// The job `j` on CPU `c` finished its current execution segment at `t`: it completes, or,
    /// with execution left in later segments, self-suspends (ideal loop only).
    pub(super) fn segment_end(&mut self, t: Time, c: usize, j: Prio) -> Result<(), SimError> {
        let i = j.task as usize;
        let Some(front) = self.tasks[i].backlog.front() else {
            return Err(SimError::internal(format!(
                "job {}.{} ends a segment at {t} ns but is not pending",
                j.task, j.job
            )));
        };
        if front.rest == 0 {
            return self.complete(t, c, j);
        }
        let seg = front.seg as usize;
        let (bound, next) = {
            let s = self.tasks[i].segs.as_ref().ok_or_else(|| {
                SimError::internal(format!("job {}.{} has execution left but its task has no segments", j.task, j.job))
            })?;
            (s.susp[seg], s.exec[seg + 1])
        };
        let d = self.draw.suspension(self.cfg.suspensions, bound);
        self.rec.emit(t, Event::Suspend { cpu: c as u32, job: JobId { task: j.task, job: j.job } })?;
        self.sched[c] = None;
        self.finish_at[c] = Time::MAX;
        self.dirty.mark(c as u32);
        self.policy.job_complete(c);
        let ts = &mut self.tasks[i];
        let f = ts.backlog.front_mut().expect("checked above");
        f.seg += 1;
        f.rem = next.min(f.rest);
        f.rest -= f.rem;
        ts.suspended = true;
        ts.zl = false;
        self.resumes.push(Reverse((t + d, j.task)));
        Ok(())
    }

    /// Suspensions ending at `t`: each job is ready again.
    pub(super) fn resumes_at(&mut self, t: Time) -> Result<(), SimError> {
        while let Some(&Reverse((r, i))) = self.resumes.peek() {
            if r > t {
                break;
            }
            self.resumes.pop();
            self.events += 1;
            let ts = &mut self.tasks[i as usize];
            ts.suspended = false;
            let seq = ts
                .backlog
                .front()
                .map(|f| f.seq)
                .ok_or_else(|| SimError::internal(format!("task {i} resumes at {t} ns without a pending job")))?;
            self.rec.emit(t, Event::Resume { job: JobId { task: i, job: seq } })?;
            if let Some(p) = self.prio_of_front(i as usize) {
                self.policy.job_ready(p);
            }
        }
        Ok(())
    }

    pub(super) fn complete(&mut self, t: Time, c: usize, j: Prio) -> Result<(), SimError> {
        self.rec.emit(t, Event::Complete { cpu: c as u32, job: JobId { task: j.task, job: j.job } })?;
        self.sched[c] = None;
        self.finish_at[c] = Time::MAX;
        self.dirty.mark(c as u32);
        let ts = &mut self.tasks[j.task as usize];
        ts.backlog.pop_front();
        ts.zl = false;
        ts.completed += 1;
        ts.last_cpu = NONE;
        ts.on_cpu = NONE;
        if OV {
            self.ov.set_local(c);
        }
        if !OV || self.policy.linked(c) == Some(j) {
            self.policy.job_complete(c);
        } else if !self.policy.job_done(j) {
            // Under IPI latency the job may finish on a CPU it was unlinked from (linked
            // elsewhere or queued) before that CPU's reschedule.
            return Err(SimError::internal(format!(
                "job {}.{} completed at {t} ns but the policy does not know it",
                j.task, j.job
            )));
        }
        if let Some(p) = self.prio_of_front(j.task as usize) {
            self.policy.job_ready(p);
        }
        Ok(())
    }

    /// Independent check of the policy's decision against the definition of the scheduler,
    /// from the simulator's own view of which jobs are ready.
    pub(super) fn check_invariant(&self, t: Time, ticked: bool) -> Result<(), SimError> {
        let fail = |what: String| Err(SimError::internal(format!("invariant violated at {t} ns: {what}")));
        let mut running: Vec<Prio> = self.sched.iter().flatten().copied().collect();
        running.sort();
        if running.windows(2).any(|w| w[0] == w[1]) {
            return fail("a job runs on two CPUs".into());
        }
        let ready: Vec<Prio> = (0..self.tasks.len()).filter_map(|i| self.prio_of_front(i)).collect();
        for r in &running {
            if !ready.contains(r) {
                return fail(format!("job {}.{} runs but is not ready", r.task, r.job));
            }
        }
        if OV {
            for (c, s) in self.sched.iter().enumerate() {
                if let Some(j) = s {
                    if self.tasks[j.task as usize].on_cpu != c as u32 {
                        return fail(format!(
                            "job {}.{} runs on cpu {c} but is recorded on cpu {}",
                            j.task, j.job, self.tasks[j.task as usize].on_cpu
                        ));
                    }
                }
                if *s != self.policy.linked(c) && self.ov.resched_at[c] == Time::MAX {
                    return fail(format!(
                        "cpu {c} runs {s:?}, is linked to {:?}, and has no reschedule pending",
                        self.policy.linked(c)
                    ));
                }
            }
        }
        // The policy's invariant, defined once (rtsched_policy::invariant).
        let mut sorted = ready;
        sorted.sort();
        match self.check {
            Check::Global | Check::GlobalAtTicks if self.check == Check::Global || ticked => {
                invariant::check_global(self.sched.len(), &sorted, &self.sched).or_else(|v| fail(v.to_string()))?
            }
            Check::Partitioned => {
                invariant::check_partitioned(&self.cpu_of, &sorted, &self.sched).or_else(|v| fail(v.to_string()))?
            }
            _ => {}
        }
        Ok(())
    }

    /// The next instant something happens without overheads: a release before the horizon, a
    /// completion, a quantum tick, or a deadline to check.
    #[inline]
    pub(super) fn next_instant(&self, h: Time) -> Time {
        let mut t = Time::MAX;
        if let Some(&Reverse(packed)) = self.releases.peek() {
            let r = (packed >> 32) as Time;
            if r < h {
                t = r;
            }
        }
        // finish_at is Time::MAX on CPUs that run nothing: a branch-free scan.
        t = t.min(self.finish_at.iter().copied().min().unwrap_or(Time::MAX));
        if self.quantum.is_some() {
            for &nt in &self.next_tick {
                if nt < h && nt < t {
                    t = nt;
                }
            }
        }
        if let Some(&Reverse((d, _, _))) = self.deadlines.peek() {
            t = t.min(d);
        }
        if let Some(&Reverse((r, _))) = self.resumes.peek() {
            t = t.min(r);
        }
        if matches!(self.rule, Keys::Edzl) {
            t = t.min(self.next_zero_laxity());
        }
        t
    }

    #[inline]
    pub(super) fn deadline_records(&mut self, t: Time) -> Result<(), SimError> {
        while let Some(&Reverse((d, i, seq))) = self.deadlines.peek() {
            if d > t {
                break;
            }
            self.deadlines.pop();
            if seq >= self.tasks[i as usize].completed {
                self.rec.emit(t, Event::DeadlineMiss { job: JobId { task: i, job: seq } })?;
            }
        }
        Ok(())
    }

    #[inline]
    pub(super) fn releases_at(&mut self, t: Time) -> Result<(), SimError> {
        while let Some(&Reverse(packed)) = self.releases.peek() {
            let (r, i) = ((packed >> 32) as Time, packed as u32);
            if r != t {
                break;
            }
            self.releases.pop();
            self.events += 1;
            self.release(t, i as usize)?;
        }
        Ok(())
    }
}
