//! Test kit of the family's property tests: a plugin driven without threads (one callback at
//! a time, on the CPU the test picks) beside a reference policy fed the same job events from
//! an independent job model (released / completed counts, EDF priorities from the task
//! parameters), and the checks every plugin of the family must pass after each callback.

use crate::mechanism::{Ctx, Job, Plugin, Prev, TaskParams};
use crate::sync::CpuSignal;
use crate::tracer::{RecKind, TraceBuffer};
use rtsched_policy::{Policy, Prio};

/// The reference: a policy fed job readiness from released/completed counts.
pub(crate) struct Reference<P: Policy> {
    pub policy: P,
    released: Vec<u32>,
    completed: Vec<u32>,
    params: Vec<TaskParams>,
}

impl<P: Policy> Reference<P> {
    pub fn new(policy: P, params: &[TaskParams]) -> Self {
        let n = params.len();
        Reference { policy, released: vec![0; n], completed: vec![0; n], params: params.to_vec() }
    }
    fn prio(&self, task: usize, seq: u32) -> Prio {
        let t = &self.params[task];
        Prio { key: seq as u64 * t.period + t.deadline, task: task as u32, job: seq }
    }
    fn release(&mut self, task: usize) {
        self.released[task] += 1;
        if self.released[task] == self.completed[task] + 1 {
            let p = self.prio(task, self.completed[task]);
            self.policy.job_ready(p);
        }
    }
    fn complete(&mut self, j: Job) -> Result<(), String> {
        let t = j.task() as usize;
        if !self.policy.job_done(self.prio(t, j.seq())) {
            return Err(format!("the reference did not know {j:?}"));
        }
        self.completed[t] += 1;
        if self.released[t] > self.completed[t] {
            let p = self.prio(t, self.completed[t]);
            self.policy.job_ready(p);
        }
        Ok(())
    }
    /// The linked set, sorted.
    pub fn linked_set(&self) -> Vec<Prio> {
        let mut v: Vec<Prio> = (0..self.policy.m()).filter_map(|c| self.policy.linked(c)).collect();
        v.sort();
        v
    }
}

/// One step of a random event sequence.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op {
    /// Time advances by `dt`; thread `cpu` takes the due release if there is one.
    Release { cpu: usize, dt: u64 },
    /// Worker `cpu` notices a request (or is idle) and reschedules.
    Notice { cpu: usize },
    /// Worker `cpu`'s job completes.
    Complete { cpu: usize },
    /// Worker `cpu` ticks (quantum-driven plugins).
    Tick { cpu: usize },
    /// Worker `cpu`'s job self-suspends (`schedule(Prev::Blocked)`).
    Block { cpu: usize },
    /// Suspended job number `pick` (modulo their count) wakes on thread `cpu`.
    Wake { cpu: usize, pick: usize },
}

/// The driver: a plugin, its workers' running jobs, and the signals.
pub(crate) struct Driver<'a, P: Plugin, R: Policy> {
    pub plugin: &'a P,
    pub reference: Reference<R>,
    pub running: Vec<Option<Job>>,
    /// Self-suspended jobs, in suspension order.
    pub suspended: Vec<Job>,
    signals: Vec<CpuSignal>,
    tb: TraceBuffer,
    now: u64,
    /// Whether a tick of worker `c` is the reference's `tick(Some(c))` (staggered) or
    /// `tick(None)` (aligned).
    staggered: bool,
}

impl<'a, P: Plugin, R: Policy> Driver<'a, P, R> {
    /// `threads` = workers (`m`) plus the service thread where there is one.
    pub fn new(plugin: &'a P, reference: Reference<R>, m: usize, threads: usize, staggered: bool) -> Self {
        Driver {
            plugin,
            reference,
            running: vec![None; m],
            suspended: Vec::new(),
            signals: (0..threads).map(|_| CpuSignal::new()).collect(),
            tb: TraceBuffer::new(0, 1_000_000),
            now: 0,
            staggered,
        }
    }

    /// Runs one step; the reference follows the releases the plugin recorded.
    pub(crate) fn step(&mut self, op: Op) -> Result<(), String> {
        let seen = self.tb.records().len();
        let m = self.running.len();
        let mut completed = None;
        {
            let cpu = match op {
                Op::Release { cpu, .. } | Op::Wake { cpu, .. } => cpu % self.signals.len(),
                Op::Notice { cpu } | Op::Complete { cpu } | Op::Tick { cpu } | Op::Block { cpu } => cpu % m,
            };
            let mut ctx = Ctx::new(cpu, &mut self.tb, &self.signals);
            match op {
                Op::Release { dt, .. } => {
                    self.now += dt;
                    let p = self.plugin;
                    if p.release_domain(cpu) == Some(0) {
                        let due = p.next_release(0);
                        if due <= self.now && p.try_claim_release(0, due) {
                            p.release(&mut ctx, 0, self.now);
                        }
                    }
                }
                Op::Notice { .. } => {
                    if self.signals[cpu].take().is_some() || self.running[cpu].is_none() {
                        let prev = self.running[cpu].map_or(Prev::Idle, Prev::Preempted);
                        self.running[cpu] = self.plugin.schedule(&mut ctx, prev, self.now);
                    }
                }
                Op::Complete { .. } => {
                    if let Some(j) = self.running[cpu] {
                        completed = Some(j);
                        self.running[cpu] = self.plugin.schedule(&mut ctx, Prev::Completed(j), self.now);
                    }
                }
                Op::Tick { .. } => {
                    self.plugin.tick(&mut ctx, self.now, self.now);
                    self.reference.policy.tick(if self.staggered { Some(cpu) } else { None });
                }
                Op::Block { .. } => {
                    if let Some(j) = self.running[cpu] {
                        // The reference: the job leaves the ready set (LITMUS^RT's task_block).
                        if !self.reference.policy.job_done(j.prio) {
                            return Err(format!("the reference did not know the blocked {j:?}"));
                        }
                        self.suspended.push(j);
                        self.running[cpu] = self.plugin.schedule(&mut ctx, Prev::Blocked(j), self.now);
                    }
                }
                Op::Wake { pick, .. } => {
                    if !self.suspended.is_empty() {
                        let j = self.suspended.remove(pick % self.suspended.len());
                        // The reference: the job is ready again, as on an arrival.
                        self.reference.policy.job_ready(j.prio);
                        self.plugin.wake(&mut ctx, j, self.now);
                    }
                }
            }
        }
        if let Some(j) = completed {
            self.reference.complete(j)?;
        }
        for x in &self.tb.records()[seen..] {
            if x.kind == RecKind::JobRelease {
                self.reference.release(x.task as usize);
            }
        }
        self.check_running()
    }

    /// No job runs on two workers.
    fn check_running(&self) -> Result<(), String> {
        let mut runs: Vec<Prio> = self.running.iter().flatten().map(|j| j.prio).collect();
        runs.sort();
        if runs.windows(2).any(|w| w[0] == w[1]) {
            return Err(format!("a job runs twice: {runs:?}"));
        }
        Ok(())
    }

    /// After [`check_links`](Self::check_links): permutes the reference's links to the
    /// plugin's with `swap` — the plugin's link swaps (`mechanism::dispatch`) move a job to the
    /// CPU where it still runs, which keeps the linked set but matters to a per-CPU decision
    /// (a staggered tick).
    pub fn align(&mut self, linked: &[Option<Prio>], swap: impl Fn(&mut R, usize, usize)) {
        for c in 0..linked.len() {
            if self.reference.policy.linked(c) != linked[c] {
                if let Some(o) = (c + 1..linked.len()).find(|&o| self.reference.policy.linked(o) == linked[c]) {
                    swap(&mut self.reference.policy, c, o);
                }
            }
        }
    }

    /// The plugin's links equal the reference's (as a set), and a linked job runs nowhere
    /// but on its CPU.
    pub(crate) fn check_links(&self, linked: &[Option<Prio>]) -> Result<(), String> {
        let mut set: Vec<Prio> = linked.iter().flatten().copied().collect();
        set.sort();
        if set != self.reference.linked_set() {
            return Err(format!("links {set:?}, the policy's {:?}", self.reference.linked_set()));
        }
        for (c, l) in linked.iter().enumerate() {
            if let Some(l) = l {
                if let Some(s) = self.running.iter().position(|x| x.is_some_and(|j| j.prio == *l)) {
                    if s != c {
                        return Err(format!("job {l:?} linked to {c} but still running on {s}"));
                    }
                }
            }
        }
        Ok(())
    }
}
