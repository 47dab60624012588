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
//! * [`llf`]: LLF (least laxity first, Mok 1983) on `m` CPUs: laxities, the selection at a
//!   decision instant and its invariant; the simulator decides at job events and quantum ticks.
//! * [`pfair`]: PD² (Anderson & Srinivasan, ECRTS 2000 / JCSS 2004): Pfair windows, b-bits,
//!   group deadlines, priorities, lags — exact integer arithmetic in quanta.
//! * [`partitioned`]: P-EDF and P-FP over a given partition (uniprocessor EDF / FP per CPU).
//! * [`queue`]: the ready-queue trait the policies are generic over (so a mechanism plugs in
//!   its own queue structure without restating the policy).
//! * [`invariant`]: the invariants the policies promise, checked by the simulator, the
//!   runtime's monitor and the mechanisms' tests — the one definition; a failed check is an
//!   [`error::Violation`].
//! * [`run`]: RUN (Regnier et al., RTSS 2011): the offline reduction tree and the online
//!   scheduling of its servers, in exact ticks of 1/L ns; not a [`Policy`] (its events are
//!   budget instants, not job boundaries).
//! * [`qps`]: QPS (Massa et al., RTS 2016): the offline quasi-partition (minor and major
//!   execution sets) and the online switch between partitioned EDF and master/slave servers,
//!   in exact ticks of 1/L ns; not a [`Policy`] (its events are budget instants too).
//! * [`rtws`]: RTWS, global EDF with priority-aware work stealing for fork-join jobs (seed 003).
//! * [`spres`]: SP-RES, per-CPU EDF over polling reservations with CASH, executing a
//!   semi-partitioned placement (seed 004). Unlike the others its operations take `now`:
//!   budgets are time.
//!
//! Assumptions: a policy sees at most one ready job per task (the driver enforces that jobs
//! of a task execute in release order); deadlines may be implicit, constrained or arbitrary.

mod budget;
pub mod error;
pub mod gedf;
pub mod invariant;
pub mod llf;
pub mod partitioned;
pub mod pfair;
pub mod prio;
pub mod qps;
pub mod queue;
pub mod rtws;
pub mod run;
pub mod spres;

pub use error::Violation;
pub use gedf::{Gedf, GedfQuantum};
pub use invariant::Invariant;
pub use partitioned::{Partitioned, Uniprocessor};
pub use prio::{FpOrder, Prio, PriorityPoints, PriorityRule};
pub use queue::ReadyQueue;
pub use rtws::Rtws;
pub use spres::Spres;

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
    /// Calls `f` with each CPU whose link changed since the last drain (each once, in the
    /// order they changed) and forgets them. No allocation: a mechanism drains under its lock.
    fn drain_dirty_with(&mut self, f: impl FnMut(u32));
    /// Appends the CPUs whose link changed since the last drain (each once) and forgets them.
    fn drain_dirty(&mut self, out: &mut Vec<u32>) {
        self.drain_dirty_with(|c| out.push(c))
    }
    /// Exchanges the jobs linked to CPUs `a` and `b`, marking both changed; nothing when `a ==
    /// b` or either is out of range. The linked *set* is unchanged, so the policy's invariant
    /// still holds. A driver whose dispatch lags the links swaps when the policy links a job to
    /// one CPU while it still runs on another (LITMUS^RT's `link_task_to_cpu`; the link swaps of
    /// Cerqueira et al., RTAS 2014, §III-C "Concurrency challenges"; the runtime's
    /// `mechanism::dispatch`). Precondition: both links may move between the two CPUs — a
    /// policy whose jobs are bound to one CPU never links a job where another CPU runs it, and
    /// keeps the default, which does nothing.
    fn swap_links(&mut self, _a: usize, _b: usize) {}
}

/// Which CPUs changed their link, in the order they changed; no allocation after
/// construction. The first [`Dirty::INLINE`] entries and the flags of the first 128 CPUs live
/// inline (in the policy's own memory), so that marking and draining touch no separate
/// allocation on the common sizes — under a mechanism's lock every extra cache line written
/// is one more line another CPU must fetch (the runtime's GSN-EDF measured it).
#[derive(Debug, Clone)]
pub(crate) struct Dirty {
    n: usize,
    inline: [u32; Dirty::INLINE],
    spill: Vec<u32>,
    /// Flags of CPUs 0..128.
    small: u128,
    /// Flags of CPUs 128.. (empty for m <= 128).
    big: Vec<bool>,
}

impl Dirty {
    const INLINE: usize = 16;

    pub(crate) fn new(m: usize) -> Dirty {
        Dirty {
            n: 0,
            inline: [0; Dirty::INLINE],
            spill: Vec::with_capacity(m.saturating_sub(Dirty::INLINE)),
            small: 0,
            big: vec![false; m.saturating_sub(128)],
        }
    }

    /// Sets CPU `cpu`'s flag; returns whether it was clear.
    #[inline]
    fn set(&mut self, cpu: usize) -> bool {
        if cpu < 128 {
            let was = self.small & (1 << cpu) == 0;
            self.small |= 1 << cpu;
            was
        } else {
            !std::mem::replace(&mut self.big[cpu - 128], true)
        }
    }

    #[inline]
    pub(crate) fn mark(&mut self, cpu: usize) {
        if self.set(cpu) {
            if self.n < Dirty::INLINE {
                self.inline[self.n] = cpu as u32;
            } else {
                self.spill.push(cpu as u32);
            }
            self.n += 1;
        }
    }

    /// Calls `f` with each marked CPU, in marking order, and forgets them.
    #[inline]
    pub(crate) fn drain_with(&mut self, mut f: impl FnMut(u32)) {
        let k = self.n.min(Dirty::INLINE);
        for i in 0..k {
            f(self.inline[i]);
        }
        for &c in &self.spill {
            f(c);
        }
        self.small = 0;
        if !self.big.is_empty() {
            for &c in self.inline[..k].iter().chain(&self.spill) {
                if c >= 128 {
                    self.big[c as usize - 128] = false;
                }
            }
        }
        self.spill.clear();
        self.n = 0;
    }
}

#[cfg(test)]
mod dirty_tests {
    use super::Dirty;

    #[test]
    fn dirty_keeps_order_and_each_cpu_once_at_every_size() {
        for m in [1usize, 3, 16, 17, 40, 130, 300] {
            let mut d = Dirty::new(m);
            // A high CPU first (an inline entry with a flag beyond 128), then a scatter.
            let marks: Vec<usize> = std::iter::once(m - 1).chain((0..3 * m).map(|i| (i * 7 + 3) % m)).collect();
            let mut want: Vec<u32> = Vec::new();
            for &c in &marks {
                d.mark(c);
                if !want.contains(&(c as u32)) {
                    want.push(c as u32);
                }
            }
            let mut got = Vec::new();
            d.drain_with(|c| got.push(c));
            assert_eq!(got, want, "m = {m}");
            // Drained: everything can be marked again, once.
            d.mark(m - 1);
            d.mark(m - 1);
            let mut again = Vec::new();
            d.drain_with(|c| again.push(c));
            assert_eq!(again, vec![(m - 1) as u32]);
        }
    }
}
