//! `fmask`: SCHED_DEADLINE with the idle-CPU mask (Lelli et al., 2011, §4.1, Fig. 4): a
//! bitmask of the free (idle) CPUs, one bit per CPU updated with an atomic `set_bit` /
//! `clear_bit`; `find` returns a free CPU at once if the mask has one and falls back to the
//! linear scan otherwise. At light load a free CPU is likely and `find` costs one word read
//! (flat in `m` up to 64 CPUs); at heavy load it costs the mask read plus the scan.
//!
//! Lock preconditions: `set(cpu, r)` with run-queue `cpu`'s lock held (each CPU's bit is
//! written only by its run-queue lock holder; different CPUs' bits are written concurrently,
//! which the atomic read-modify-write makes safe — the loom model below shows that a
//! load-then-store update loses bits). `find` takes no lock.

use super::cpumask::CpuMask;
use super::find_cpu::{Earliest, FindCpu, FREE};
use super::find_linear::scan;
use crate::sync::{Primitives, Std};
use crate::RunError;

/// The free-CPU mask plus the linear scan.
pub struct Fmask<B: Primitives = Std> {
    free: CpuMask<B>,
}

impl<B: Primitives> Fmask<B> {
    /// `m` CPUs, all free.
    pub fn new(m: usize) -> Fmask<B> {
        Fmask { free: CpuMask::full(m) }
    }
}

impl<B: Primitives> FindCpu<B> for Fmask<B> {
    fn name(&self) -> &'static str {
        "fmask"
    }
    #[inline]
    fn set(&self, cpu: usize, rank: u64) {
        if rank == FREE {
            self.free.set(cpu);
        } else {
            self.free.clear(cpu);
        }
    }
    #[inline]
    fn find(&self, rank: u64, earliest: &Earliest<B>) -> Option<usize> {
        match self.free.first() {
            Some(c) => Some(c),
            None => scan::<B>(rank, earliest),
        }
    }
    fn check(&self, ranks: &[u64]) -> Result<(), RunError> {
        let want: Vec<usize> = (0..ranks.len()).filter(|&c| ranks[c] == FREE).collect();
        let got = self.free.to_vec();
        if got != want {
            return Err(RunError::Internal(format!("fmask: free mask {got:?}, the free CPUs are {want:?}")));
        }
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
        fn fmask_equals_the_reference((m, ops) in oracle::ops()) {
            let f: Fmask = Fmask::new(m);
            prop_assert_eq!(oracle::drive(&f, m, &ops), Ok(()));
        }
    }

    /// Loom: two run-queue lock holders (CPUs 0 and 1, whose bits share a word) update their
    /// bits concurrently while a third thread finds; at the end the mask holds exactly the
    /// final free CPUs, and the finder got a CPU that was free at some point (CPU 2 stays free
    /// throughout, so it can never get `None`).
    #[test]
    fn loom_concurrent_bit_updates_are_not_lost() {
        use crate::sync::loom_model::Loom;
        loom::model(|| {
            let f: &'static Fmask<Loom> = Box::leak(Box::new(Fmask::new(3)));
            let e = Box::leak(oracle::loom_earliest(3));
            let a = loom::thread::spawn(move || f.set(0, 10));
            let b = loom::thread::spawn(move || f.set(1, 20));
            let got = f.find(5, e);
            a.join().unwrap();
            b.join().unwrap();
            assert!(matches!(got, Some(0..=2)), "{got:?}");
            assert_eq!(f.free.to_vec(), vec![2]);
        });
    }

    /// The broken twin: a bit update as a load and a store (not one atomic read-modify-write)
    /// loses the other CPU's concurrent update in some interleaving, which loom finds.
    #[test]
    #[should_panic]
    fn loom_catches_a_non_atomic_bit_update() {
        use crate::sync::loom_model::Loom;
        use std::sync::atomic::Ordering;
        fn clear_racy(f: &Fmask<Loom>, cpu: usize) {
            let w = f.free.word(0);
            let v = w.load(Ordering::Acquire);
            w.store(v & !(1 << cpu), Ordering::Release);
        }
        loom::model(|| {
            let f: &'static Fmask<Loom> = Box::leak(Box::new(Fmask::new(3)));
            let a = loom::thread::spawn(move || clear_racy(f, 0));
            clear_racy(f, 1);
            a.join().unwrap();
            assert_eq!(f.free.to_vec(), vec![2]);
        });
    }
}
