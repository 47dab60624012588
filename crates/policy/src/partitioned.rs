//! Partitioned scheduling: each task is assigned to one CPU, and each CPU runs uniprocessor
//! EDF (P-EDF) or fixed priorities (P-FP) over its own tasks (e.g. Lopez, Diaz & Garcia,
//! "Utilization bounds for EDF scheduling on real-time multiprocessor systems", RTS 2004).
//! Whether it is EDF or FP is only the [`crate::PriorityRule`] that made the jobs' keys.
//! Any deadline kind; the partition itself is validated by the driver.

use crate::queue::{BinaryReady, ReadyQueue};
use crate::{Dirty, Policy, Prio};

/// Per-CPU uniprocessor scheduling of a fixed partition; `Q` is each CPU's ready queue
/// (default: std's binary heap). A mechanism with per-CPU state (and locks) keeps one
/// instance per CPU: `Partitioned::with_queues(1, ...)` is uniprocessor EDF or FP.
#[derive(Debug, Clone)]
pub struct Partitioned<Q: ReadyQueue = BinaryReady> {
    cpu_of: Vec<u32>,
    ready: Vec<Q>,
    linked: Vec<Option<Prio>>,
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
        Partitioned { cpu_of, ready: queues, linked: vec![None; m], dirty: Dirty::new(m) }
    }

    /// CPU `cpu`'s ready queue (read-only: every change goes through the policy).
    pub fn queue(&self, cpu: usize) -> Option<&Q> {
        self.ready.get(cpu)
    }
}

impl<Q: ReadyQueue> Policy for Partitioned<Q> {
    fn m(&self) -> usize {
        self.linked.len()
    }
    fn job_ready(&mut self, job: Prio) {
        let Some(&c) = self.cpu_of.get(job.task as usize) else { return };
        let c = c as usize;
        if c >= self.linked.len() {
            return;
        }
        match self.linked[c] {
            Some(cur) if !job.higher_than(&cur) => self.ready[c].push(job),
            cur => {
                if let Some(old) = cur {
                    self.ready[c].push(old);
                }
                self.linked[c] = Some(job);
                self.dirty.mark(c);
            }
        }
    }
    fn job_complete(&mut self, cpu: usize) {
        if cpu < self.linked.len() && self.linked[cpu].take().is_some() {
            self.linked[cpu] = self.ready[cpu].pop();
            self.dirty.mark(cpu);
        }
    }
    fn job_done(&mut self, job: Prio) -> bool {
        let Some(&c) = self.cpu_of.get(job.task as usize) else { return false };
        let c = c as usize;
        if c >= self.linked.len() {
            return false;
        }
        if self.linked[c] == Some(job) {
            self.job_complete(c);
            return true;
        }
        self.ready[c].remove(job)
    }
    fn linked(&self, cpu: usize) -> Option<Prio> {
        self.linked.get(cpu).copied().flatten()
    }
    fn drain_dirty(&mut self, out: &mut Vec<u32>) {
        self.dirty.drain(out)
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
