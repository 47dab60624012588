//! `linear`: the original SCHED_DEADLINE find-CPU (Lelli et al., 2011, §4.1, Fig. 3; the
//! SD V8 patch's `latest_cpu_find`): a loop over *every* CPU reading its run-queue's cached
//! earliest deadline (`earliest_dl.curr`), choosing an idle CPU if one is found and otherwise
//! the CPU with the latest deadline, if it is later than the job's. No state of its own: it
//! reads the ranks the run-queues publish, so `set` does nothing and there is nothing to
//! model-check (each read is one atomic load; the answer is a hint re-validated under the
//! chosen run-queue's lock). The loop always visits all `m` CPUs, as the paper's does (it
//! builds the mask of every suitable CPU): its cost grows linearly with `m`.
//!
//! Lock preconditions: none (`find` reads atomics; the run-queues publish their earliest rank
//! under their own locks).

use super::find_cpu::{Earliest, FindCpu, FREE};
use crate::sync::{Atom, Primitives, Std};
use crate::RunError;
use std::marker::PhantomData;
use std::sync::atomic::Ordering;

/// The linear scan (stateless).
pub struct Linear<B: Primitives = Std>(PhantomData<fn() -> B>);

impl<B: Primitives> Linear<B> {
    pub fn new(_m: usize) -> Linear<B> {
        Linear(PhantomData)
    }
}

/// The scan itself (also `fmask`'s fallback): the first free CPU, else the largest rank if it
/// is larger than `rank`. Visits every CPU.
#[inline]
pub(crate) fn scan<B: Primitives>(rank: u64, earliest: &Earliest<B>) -> Option<usize> {
    let mut free = usize::MAX;
    let (mut best, mut best_rank) = (usize::MAX, 0u64);
    for (c, e) in earliest.iter().enumerate() {
        let r = e.load(Ordering::Relaxed);
        if r == FREE {
            free = free.min(c);
        } else if r > best_rank {
            best_rank = r;
            best = c;
        }
    }
    if free != usize::MAX {
        Some(free)
    } else if best != usize::MAX && best_rank > rank {
        Some(best)
    } else {
        None
    }
}

impl<B: Primitives> FindCpu<B> for Linear<B> {
    fn name(&self) -> &'static str {
        "linear"
    }
    #[inline]
    fn set(&self, _cpu: usize, _rank: u64) {}
    #[inline]
    fn find(&self, rank: u64, earliest: &Earliest<B>) -> Option<usize> {
        scan::<B>(rank, earliest)
    }
    fn check(&self, _ranks: &[u64]) -> Result<(), RunError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::find_cpu::oracle;
    use proptest::prelude::*;

    proptest! {
        /// Oracle: the brute-force reference after every update.
        #[test]
        fn linear_equals_the_reference((m, ops) in oracle::ops()) {
            let f: Linear = Linear::new(m);
            prop_assert_eq!(oracle::drive(&f, m, &ops), Ok(()));
        }
    }
}
