//! Partitioned scheduling: each task is assigned to one CPU, and each CPU runs uniprocessor
//! EDF (P-EDF) or fixed priorities (P-FP) over its own tasks (e.g. Lopez, Diaz & Garcia,
//! "Utilization bounds for EDF scheduling on real-time multiprocessor systems", RTS 2004).
//! Whether it is EDF or FP is only the [`crate::PriorityRule`] that made the jobs' keys.
//! Any deadline kind; the partition itself is validated by the driver.

use crate::queue::{BinaryReady, ReadyQueue};
use crate::{Dirty, Policy, Prio};

/// One CPU's uniprocessor scheduling (EDF or FP: only the jobs' keys differ): its ready queue
/// and the job linked to it — the highest-priority ready job. The rule of each CPU of
/// [`Partitioned`], and what a mechanism with per-CPU state (and locks) keeps per CPU.
#[derive(Debug, Clone)]
pub struct Uniprocessor<Q: ReadyQueue = BinaryReady> {
    ready: Q,
    linked: Option<Prio>,
}

impl<Q: ReadyQueue> Uniprocessor<Q> {
    /// An idle CPU over the (empty) ready queue `ready`.
    pub fn new(ready: Q) -> Uniprocessor<Q> {
        Uniprocessor { ready, linked: None }
    }

    /// A job became ready: it is linked if it beats the linked job (which is queued again) or
    /// the CPU is idle. Returns whether the link changed.
    #[inline]
    pub fn job_ready(&mut self, job: Prio) -> bool {
        match self.linked {
            Some(cur) if !job.higher_than(&cur) => {
                self.ready.push(job);
                false
            }
            cur => {
                if let Some(old) = cur {
                    self.ready.push(old);
                }
                self.linked = Some(job);
                true
            }
        }
    }

    /// The linked job completed: the highest-priority ready job is linked. Returns whether a
    /// job was linked before (whether anything changed).
    #[inline]
    pub fn job_complete(&mut self) -> bool {
        if self.linked.take().is_some() {
            self.linked = self.ready.pop();
            true
        } else {
            false
        }
    }

    /// `job` completed wherever it is: linked (as [`job_complete`](Self::job_complete)) or
    /// queued (removed). Returns whether it was found.
    #[inline]
    pub fn job_done(&mut self, job: Prio) -> bool {
        if self.linked == Some(job) {
            self.job_complete()
        } else {
            self.ready.remove(job)
        }
    }

    /// The linked job.
    #[inline]
    pub fn linked(&self) -> Option<Prio> {
        self.linked
    }

    /// The ready queue (read-only: every change goes through the policy).
    pub fn queue(&self) -> &Q {
        &self.ready
    }
}

/// Per-CPU uniprocessor scheduling of a fixed partition: one [`Uniprocessor`] per CPU, `Q`
/// its ready queue (default: std's binary heap).
#[derive(Debug, Clone)]
pub struct Partitioned<Q: ReadyQueue = BinaryReady> {
    cpu_of: Vec<u32>,
    cpus: Vec<Uniprocessor<Q>>,
    dirty: Dirty,
}

impl Partitioned {
    /// `cpu_of[task]` is the CPU of each task; every entry must be `< m`.
    pub fn new(m: usize, cpu_of: Vec<u32>) -> Partitioned {
        Partitioned::with_queues(cpu_of, (0..m).map(|_| BinaryReady::new()).collect())
    }
}

impl<Q: ReadyQueue> Partitioned<Q> {
    /// One (empty) ready queue per CPU; `cpu_of[task]` is the CPU of each task. Jobs of tasks
    /// without a CPU `< queues.len()` are ignored.
    pub fn with_queues(cpu_of: Vec<u32>, queues: Vec<Q>) -> Partitioned<Q> {
        let m = queues.len();
        Partitioned { cpu_of, cpus: queues.into_iter().map(Uniprocessor::new).collect(), dirty: Dirty::new(m) }
    }

    /// CPU `cpu`'s ready queue (read-only: every change goes through the policy).
    pub fn queue(&self, cpu: usize) -> Option<&Q> {
        self.cpus.get(cpu).map(Uniprocessor::queue)
    }

    /// The CPU of `job`'s task, if it has one.
    #[inline]
    fn cpu(&self, job: &Prio) -> Option<usize> {
        let c = *self.cpu_of.get(job.task as usize)? as usize;
        (c < self.cpus.len()).then_some(c)
    }
}

impl<Q: ReadyQueue> Policy for Partitioned<Q> {
    fn m(&self) -> usize {
        self.cpus.len()
    }
    fn job_ready(&mut self, job: Prio) {
        if let Some(c) = self.cpu(&job) {
            if self.cpus[c].job_ready(job) {
                self.dirty.mark(c);
            }
        }
    }
    fn job_complete(&mut self, cpu: usize) {
        if self.cpus.get_mut(cpu).is_some_and(Uniprocessor::job_complete) {
            self.dirty.mark(cpu);
        }
    }
    fn job_done(&mut self, job: Prio) -> bool {
        let Some(c) = self.cpu(&job) else { return false };
        let linked = self.cpus[c].linked() == Some(job);
        let found = self.cpus[c].job_done(job);
        if linked {
            self.dirty.mark(c);
        }
        found
    }
    fn linked(&self, cpu: usize) -> Option<Prio> {
        self.cpus.get(cpu).and_then(Uniprocessor::linked)
    }
    fn drain_dirty_with(&mut self, f: impl FnMut(u32)) {
        self.dirty.drain_with(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cpu_runs_its_highest() {
        let mut p = Partitioned::new(2, vec![0, 1, 0]);
        let j = |key, task| Prio { key, task, job: 0 };
        p.job_ready(j(10, 0));
        p.job_ready(j(5, 2));
        p.job_ready(j(99, 1));
        assert_eq!(p.linked(0), Some(j(5, 2)));
        assert_eq!(p.linked(1), Some(j(99, 1)));
        p.job_complete(0);
        assert_eq!(p.linked(0), Some(j(10, 0)));
        p.job_complete(0);
        assert_eq!(p.linked(0), None);
        let mut d = vec![];
        p.drain_dirty(&mut d);
        assert_eq!(d, vec![0, 1]);
        p.job_ready(j(3, 0));
        p.job_ready(j(4, 2));
        assert!(p.job_done(j(4, 2)) && !p.job_done(j(4, 2)));
        assert!(p.job_done(j(3, 0)));
        assert_eq!(p.linked(0), None);
    }
}
