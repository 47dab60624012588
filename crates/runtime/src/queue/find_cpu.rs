//! The find-CPU interface of push/pull global scheduling (Lelli, Lipari, Faggioli & Cucinotta,
//! "An efficient and scalable implementation of global EDF in Linux", 2011, §4–§5; Linux
//! `find_later_rq` / `find_lowest_rq`): where should a job of a given priority be pushed?
//! The variants, one file each: [`linear`](super::find_linear) (a scan of every run-queue's
//! cached earliest deadline: the original SCHED_DEADLINE, Fig. 3), [`fmask`](super::fmask) (a
//! free-CPU bitmask checked first, then the scan: Fig. 4), [`cpudl`](super::cpudl) (a max-heap
//! of the CPUs' earliest deadlines plus the free mask under one lock: §5, Figs. 6–7, mainline
//! Linux's `cpudeadline.c`) and, for fixed priorities, [`cpupri`](super::cpupri) (Linux's
//! per-priority-level CPU masks, §3.1).
//!
//! **Ranks.** A structure sees each CPU's *rank*: a `u64` order-isomorphic to the priority of
//! the earliest job on the CPU's run-queue (smaller = higher priority), or [`FREE`] when the
//! run-queue is empty. The push/pull mechanism derives ranks from `rtsched_policy::Prio` so
//! that ties break exactly as the policy breaks them (see `mechanism::push_pull`).
//!
//! **The contract** (every variant, checked against [`reference`] by each file's oracle
//! test): for a job's rank `r < FREE`, `find(r)` returns the lowest-index free CPU if any CPU is free; otherwise the CPU
//! with the largest rank if that rank is larger than `r` (the job would preempt it);
//! otherwise `None`. Ranks of busy CPUs are distinct (a job is on one run-queue), so the
//! answer is unique and all variants take identical decisions on identical states — which is
//! what makes their costs comparable op for op (`mechanism::push_pull::replay`).
//!
//! **Lock preconditions** (as in `cpudeadline.c`): `set(cpu, r)` is called with run-queue
//! `cpu`'s lock held, every time that run-queue's earliest rank changes, in the order of the
//! changes; so the updates of one CPU never race one another, while updates of different CPUs
//! do. `find` takes no run-queue lock: its answer is a *hint*, true of some recent state, that
//! the caller re-validates under the chosen run-queue's lock (SCHED_DEADLINE's
//! `find_lock_later_rq`).

use crate::sync::{Primitives, Std};
use crate::RunError;
use crossbeam_utils::CachePadded;

/// The rank of an empty run-queue (an idle CPU): lower priority than any job.
pub const FREE: u64 = u64::MAX;

/// The per-CPU cached earliest ranks the run-queues publish (each written under its
/// run-queue's lock, read by anyone without it): what the linear scan reads.
pub type Earliest<B = Std> = [CachePadded<<B as Primitives>::U64>];

/// A find-CPU structure over `m` CPUs (see the module docs for the contract and the lock
/// preconditions).
pub trait FindCpu<B: Primitives = Std>: Send + Sync {
    /// The variant's name (`--find-cpu NAME`).
    fn name(&self) -> &'static str;
    /// Run-queue `cpu`'s earliest rank changed to `rank` ([`FREE`]: it became empty).
    /// Precondition: the caller holds run-queue `cpu`'s lock.
    fn set(&self, cpu: usize, rank: u64);
    /// Where a job of rank `rank` should go (see the contract). `earliest` is the run-queues'
    /// published earliest ranks (used by the scanning variants). No lock needed.
    fn find(&self, rank: u64, earliest: &Earliest<B>) -> Option<usize>;
    /// Checks the structure against the true ranks `ranks[cpu]` at rest (no concurrent
    /// update): its internal invariants and that it holds exactly these ranks.
    fn check(&self, ranks: &[u64]) -> Result<(), RunError>;
}

/// The contract by brute force: the lowest-index free CPU, else the CPU of the largest rank if
/// it is larger than `rank`.
pub fn reference(ranks: &[u64], rank: u64) -> Option<usize> {
    if let Some(c) = ranks.iter().position(|&r| r == FREE) {
        return Some(c);
    }
    let (c, &r) = ranks.iter().enumerate().max_by_key(|(_, &r)| r)?;
    (r > rank).then_some(c)
}

/// Test support shared by the variants' oracle tests.
#[cfg(test)]
pub(crate) mod oracle {
    use super::*;
    use crate::sync::Atom;
    use std::sync::atomic::Ordering;

    /// The published earliest ranks of `m` idle CPUs.
    pub(crate) fn earliest(m: usize) -> Box<Earliest> {
        (0..m).map(|_| CachePadded::new(std::sync::atomic::AtomicU64::new(FREE))).collect()
    }

    /// Drives `f` with the updates `ops` ((cpu, rank); a rank of 0 means FREE) on `m` CPUs as a
    /// run-queue would (only on a change, ranks distinct among busy CPUs), and after every
    /// update compares `find` for several queries and `check` against [`reference`].
    pub(crate) fn drive(f: &dyn FindCpu, m: usize, ops: &[(usize, u64)]) -> Result<(), RunError> {
        let e = earliest(m);
        let mut ranks = vec![FREE; m];
        for &(cpu, r) in ops {
            let cpu = cpu % m;
            let r = if r == 0 { FREE } else { r };
            if ranks[cpu] == r || (r != FREE && ranks.contains(&r)) {
                continue;
            }
            ranks[cpu] = r;
            e[cpu].store(r, Ordering::Relaxed);
            f.set(cpu, r);
            f.check(&ranks).map_err(|x| RunError::Internal(format!("{}: after set({cpu}, {r}): {x}", f.name())))?;
            let busy: Vec<u64> = ranks.iter().copied().filter(|&x| x != FREE).collect();
            let mut queries = vec![0, 1, u64::MAX - 1, r.saturating_sub(1), r.saturating_add(1)];
            queries.extend(busy.iter().flat_map(|&b| [b - 1, b, b + 1]));
            // A job's rank is never FREE (the contract's precondition).
            queries.retain(|&q| q != FREE);
            for q in queries {
                let (got, want) = (f.find(q, &e), reference(&ranks, q));
                if got != want {
                    return Err(RunError::Internal(format!(
                        "{}: ranks {ranks:?}, find({q}) = {got:?}, want {want:?}",
                        f.name()
                    )));
                }
            }
        }
        Ok(())
    }

    /// Random update sequences for [`drive`]: (cpu, rank) with rank 0 = FREE, small ranks so
    /// that queries near them matter.
    pub(crate) fn ops() -> impl proptest::strategy::Strategy<Value = (usize, Vec<(usize, u64)>)> {
        use proptest::prelude::*;
        (1usize..70).prop_flat_map(|m| (Just(m), proptest::collection::vec((0usize..70, 0u64..40), 0..150)))
    }

    /// A loom-backend `U64` array of published ranks.
    pub(crate) fn loom_earliest(m: usize) -> Box<[CachePadded<loom::sync::atomic::AtomicU64>]> {
        (0..m).map(|_| CachePadded::new(<loom::sync::atomic::AtomicU64 as Atom<u64>>::new(FREE))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_prefers_free_then_the_latest() {
        assert_eq!(reference(&[5, FREE, FREE], 9), Some(1));
        assert_eq!(reference(&[5, 7, 3], 6), Some(1));
        assert_eq!(reference(&[5, 7, 3], 7), None, "a tie does not preempt");
        assert_eq!(reference(&[5, 7, 3], 8), None);
        assert_eq!(reference(&[], 8), None);
    }
}
