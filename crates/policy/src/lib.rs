//! rtsched-policy: scheduling *policies* as pure state machines — no clock, no threads, no
//! allocation on the event path once the queues have grown. A driver (the simulator in
//! virtual time; the runtime's mechanisms in real time) tells a policy that a job became
//! ready, that the job on a CPU completed, or that a CPU's quantum tick arrived; the policy
//! answers with the job it *links* to each CPU. Dispatching (what a CPU really runs,
//! "scheduled") is the driver's business: linked is kept apart from scheduled, as in
//! LITMUS^RT's link-based G-EDF (Brandenburg & Anderson, "On the Implementation of Global
//! Real-Time Schedulers", RTSS 2009, §3; Cerqueira, Vanga & Brandenburg, RTAS 2014, §III-B).
//!
//! * [`prio`]: the one priority order of every policy (key, then task index, then job
//!   sequence number).
//! * [`gedf`]: global EDF, event-driven and quantum-driven (aligned or staggered quanta,
//!   RTSS 2009 §2).
//! * [`partitioned`]: P-EDF and P-FP over a given partition (uniprocessor EDF / FP per CPU).
//! * [`queue`]: the ready-queue trait the policies are generic over (so a mechanism plugs in
//!   its own queue structure without restating the policy).
//! * [`invariant`]: the invariants the policies promise, checked by the simulator, the
//!   runtime's monitor and the mechanisms' tests — the one definition.
//! * [`rtws`]: RTWS, global EDF with priority-aware work stealing for fork-join jobs (seed 003).
//!
//! Assumptions: a policy sees at most one ready job per task (the driver enforces that jobs
//! of a task execute in release order); deadlines may be implicit, constrained or arbitrary.

pub mod gedf;
pub mod invariant;
pub mod partitioned;
pub mod prio;
pub mod queue;
pub mod rtws;

pub use gedf::{Gedf, GedfQuantum};
pub use invariant::Invariant;
pub use partitioned::Partitioned;
pub use prio::{FpOrder, Prio, PriorityRule};
pub use queue::ReadyQueue;
pub use rtws::Rtws;

/// What every policy offers its driver. `cpu` is 0-based and `< m()`; preconditions are
/// stated per method and violated ones are ignored (never a panic), so a faulty driver shows
/// up as a wrong schedule that the driver's invariant checks catch.
pub trait Policy {
    /// Number of CPUs.
    fn m(&self) -> usize;
    /// A job became ready (released with its predecessor complete, or its predecessor just
    /// completed). Precondition: the job is not ready or linked already.
    fn job_ready(&mut self, job: Prio);
    /// The job linked to `cpu` completed. Precondition: a job is linked to `cpu`.
    fn job_complete(&mut self, cpu: usize);
    /// A quantum boundary: `Some(cpu)` for one CPU's tick (staggered quanta), `None` for all
    /// CPUs at once (aligned quanta). Event-driven policies ignore ticks.
    fn tick(&mut self, _cpu: Option<usize>) {}
    /// A job completed while not linked to the CPU it ran on: a driver whose dispatch lags
    /// the links (the simulator under IPI latency, docs/simulator.md "Overhead injection")
    /// can see a job finish on a CPU it was unlinked from, before that CPU's reschedule.
    /// The policy forgets the job wherever it is: linked to a CPU (handled like
    /// `job_complete` of that CPU) or queued (removed). Returns whether it found the job.
    /// The default handles only the linked case; policies with queues override it.
    fn job_done(&mut self, job: Prio) -> bool {
        match (0..self.m()).find(|&c| self.linked(c) == Some(job)) {
            Some(c) => {
                self.job_complete(c);
                true
            }
            None => false,
        }
    }
    /// The job linked to `cpu`, if any.
    fn linked(&self, cpu: usize) -> Option<Prio>;
    /// Appends the CPUs whose link changed since the last call (each once) and forgets them.
    fn drain_dirty(&mut self, out: &mut Vec<u32>);
}

/// Which CPUs changed their link; no allocation after construction.
#[derive(Debug, Clone)]
pub(crate) struct Dirty {
    list: Vec<u32>,
    flag: Vec<bool>,
}

impl Dirty {
    pub(crate) fn new(m: usize) -> Dirty {
        Dirty { list: Vec::with_capacity(m), flag: vec![false; m] }
    }
    #[inline]
    pub(crate) fn mark(&mut self, cpu: usize) {
        if !self.flag[cpu] {
            self.flag[cpu] = true;
            self.list.push(cpu as u32);
        }
    }
    #[inline]
    pub(crate) fn drain(&mut self, out: &mut Vec<u32>) {
        for &c in &self.list {
            self.flag[c as usize] = false;
        }
        out.append(&mut self.list);
    }
}
