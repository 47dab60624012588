//! Partitioned scheduling: each task is assigned to one CPU, and each CPU runs uniprocessor
//! EDF (P-EDF) or fixed priorities (P-FP) over its own tasks (e.g. Lopez, Diaz & Garcia,
//! "Utilization bounds for EDF scheduling on real-time multiprocessor systems", RTS 2004).
//! Whether it is EDF or FP is only the [`crate::PriorityRule`] that made the jobs' keys.
//! Any deadline kind; the partition itself is validated by the driver.

use crate::{Dirty, Policy, Prio};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Per-CPU uniprocessor scheduling of a fixed partition.
#[derive(Debug, Clone)]
pub struct Partitioned {
    cpu_of: Vec<u32>,
    ready: Vec<BinaryHeap<Reverse<Prio>>>,
    linked: Vec<Option<Prio>>,
    dirty: Dirty,
}

impl Partitioned {
    /// `cpu_of[task]` is the CPU of each task; every entry must be `< m`.
    pub fn new(m: usize, cpu_of: Vec<u32>) -> Partitioned {
        Partitioned { cpu_of, ready: vec![BinaryHeap::new(); m], linked: vec![None; m], dirty: Dirty::new(m) }
    }
}

impl Policy for Partitioned {
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
            Some(cur) if !job.higher_than(&cur) => self.ready[c].push(Reverse(job)),
            cur => {
                if let Some(old) = cur {
                    self.ready[c].push(Reverse(old));
                }
                self.linked[c] = Some(job);
                self.dirty.mark(c);
            }
        }
    }
    fn job_complete(&mut self, cpu: usize) {
        if cpu < self.linked.len() && self.linked[cpu].take().is_some() {
            self.linked[cpu] = self.ready[cpu].pop().map(|Reverse(j)| j);
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
        let before = self.ready[c].len();
        self.ready[c].retain(|&Reverse(j)| j != job);
        self.ready[c].len() != before
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
