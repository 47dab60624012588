//! The scheduling invariants the policies promise, defined once for the whole workspace: the
//! simulator checks its schedule against them after every event, the runtime's
//! priority-inversion monitor measures how long a real schedule violates them
//! (`rtsched_trace::monitor`), and the mechanisms' property tests hold their decisions to them.
//!
//! * **Global** (G-EDF, and global FP with fixed-priority keys): the running set is exactly the
//!   `min(m, r)` highest-priority of the `r` ready jobs — the global scheduling invariant of
//!   Cerqueira, Vanga & Brandenburg, RTAS 2014, §II-A.
//! * **Partitioned** (P-EDF, P-FP): on each CPU, the job running is exactly the highest-priority
//!   ready job of that CPU's partition (none if it has none).
//!
//! Priorities are [`Prio`]s made by one [`PriorityRule`], so the order is the one of every
//! policy (key, then task index, then job number).

use crate::{Prio, PriorityRule, Violation};

/// Which jobs must run, given the ready ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The `min(m, r)` highest-priority ready jobs run, on any of the `m` CPUs.
    Global { m: usize },
    /// `cpu_of[task]` is the task's CPU; on each CPU its partition's best ready job runs.
    Partitioned { cpu_of: Vec<u32> },
}

/// A policy's invariant: the scope and the priority rule its jobs are ordered by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invariant {
    pub scope: Scope,
    pub rule: PriorityRule,
}

impl Invariant {
    /// G-EDF on `m` CPUs.
    pub fn global_edf(m: usize) -> Invariant {
        Invariant { scope: Scope::Global { m }, rule: PriorityRule::Edf }
    }

    /// A partition (`cpu_of[task]`) with per-CPU scheduling by `rule`.
    pub fn partitioned(cpu_of: Vec<u32>, rule: PriorityRule) -> Invariant {
        Invariant { scope: Scope::Partitioned { cpu_of }, rule }
    }

    /// Checks the running jobs (`running[c]` on CPU or lane `c`) against the ready jobs
    /// `ready`, given in priority order (highest first). `Err` describes the violation.
    pub fn check(&self, ready: &[Prio], running: &[Option<Prio>]) -> Result<(), Violation> {
        match &self.scope {
            Scope::Global { m } => check_global(*m, ready, running),
            Scope::Partitioned { cpu_of } => check_partitioned(cpu_of, ready, running),
        }
    }
}

/// The global invariant: the jobs in `running` (CPUs or lanes; `None` = idle) are exactly the
/// first `min(m, ready.len())` of `ready` (priority order, highest first).
pub fn check_global(m: usize, ready: &[Prio], running: &[Option<Prio>]) -> Result<(), Violation> {
    let top = &ready[..m.min(ready.len())];
    let busy = running.iter().flatten().count();
    if busy == top.len() && top.iter().all(|p| running.contains(&Some(*p))) {
        return Ok(());
    }
    let mut run: Vec<Prio> = running.iter().flatten().copied().collect();
    run.sort();
    Err(Violation::Global { running: run, top: top.to_vec() })
}

/// The partitioned invariant: on each CPU `c`, `running[c]` is the first job of `ready`
/// (priority order) whose task is on `c` (`cpu_of[task]`), or `None` if there is none. Tasks
/// without an entry in `cpu_of` belong to no CPU.
pub fn check_partitioned(cpu_of: &[u32], ready: &[Prio], running: &[Option<Prio>]) -> Result<(), Violation> {
    for (c, s) in running.iter().enumerate() {
        let best = ready.iter().find(|p| cpu_of.get(p.task as usize) == Some(&(c as u32))).copied();
        if best != *s {
            return Err(Violation::Partitioned { cpu: c, running: *s, best });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(key: u64, task: u32) -> Prio {
        Prio { key, task, job: 0 }
    }

    #[test]
    fn global_needs_exactly_the_top_jobs() {
        let ready = [p(1, 0), p(2, 1), p(3, 2)];
        assert!(check_global(2, &ready, &[Some(p(2, 1)), Some(p(1, 0))]).is_ok());
        assert!(check_global(2, &ready, &[Some(p(3, 2)), Some(p(1, 0))]).is_err());
        assert!(check_global(2, &ready, &[None, Some(p(1, 0))]).is_err(), "an idle CPU with a ready job");
        assert!(check_global(4, &ready, &[Some(p(1, 0)), Some(p(2, 1)), Some(p(3, 2)), None]).is_ok());
        assert!(check_global(2, &[], &[None, None]).is_ok());
        // A dedicated lane that runs nothing does not matter.
        assert!(check_global(1, &ready, &[Some(p(1, 0)), None]).is_ok());
        assert!(check_global(1, &ready, &[Some(p(1, 0)), Some(p(2, 1))]).is_err(), "more run than m");
    }

    #[test]
    fn partitioned_needs_each_cpus_best() {
        let cpu_of = [0, 1, 0];
        let ready = [p(1, 2), p(2, 1), p(3, 0)];
        assert!(check_partitioned(&cpu_of, &ready, &[Some(p(1, 2)), Some(p(2, 1))]).is_ok());
        assert!(check_partitioned(&cpu_of, &ready, &[Some(p(3, 0)), Some(p(2, 1))]).is_err());
        assert!(check_partitioned(&cpu_of, &ready[2..], &[Some(p(3, 0)), None]).is_ok());
        assert!(check_partitioned(&cpu_of, &ready[2..], &[Some(p(3, 0)), Some(p(3, 0))]).is_err());
        let inv = Invariant::partitioned(cpu_of.to_vec(), PriorityRule::Edf);
        assert!(inv.check(&ready, &[Some(p(1, 2)), Some(p(2, 1))]).is_ok());
        assert!(Invariant::global_edf(1).check(&ready, &[Some(p(2, 1))]).is_err());
    }
}
