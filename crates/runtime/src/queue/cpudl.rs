//! `cpudl`: the heap of CPU deadlines (Lelli et al., 2011, §5, Figs. 5–7; mainline Linux's
//! `kernel/sched/cpudeadline.c`): a binary max-heap of `(rank, cpu)` over the *busy* CPUs
//! (key = the earliest rank of the CPU's run-queue, so the root is the CPU running the
//! latest-deadline job), a `cpu → index` map so that a CPU's entry is updated in place in
//! O(log m), and the free-CPU mask — all under one spin lock. `find` returns a free CPU if the
//! mask has one, else the root if its rank is later than the job's: O(1).
//!
//! Layout as in the paper's `struct dl_heap` (0-based: the children of `i` are `2i+1`, `2i+2`).
//! Every field is an atomic: written only under the lock (relaxed stores; the lock orders
//! them), while `find` reads the free mask and the root *without* the lock, as Linux's
//! `cpudl_find` does. Such a read may pair a root CPU with another update's rank (two loads):
//! the answer is a hint that push/pull re-validates under the target run-queue's lock, and a
//! wrong hint costs one of its retries.
//!
//! Lock preconditions: `set(cpu, r)` is called with run-queue `cpu`'s lock held (Linux:
//! "assumes cpu_rq(cpu)->lock is locked") and takes the heap's own lock; the heap lock is a
//! leaf (nothing is locked while holding it). `find` takes no lock. The loom model below
//! checks the heap under concurrent updates and that updating it without the lock corrupts it.

use super::cpumask::CpuMask;
use super::find_cpu::{Earliest, FindCpu, FREE};
use crate::sync::{Atom, Primitives, SpinLock, Std};
use crate::RunError;
use std::sync::atomic::Ordering::Relaxed;

const NONE: u64 = u64::MAX;

/// The max-heap of busy CPUs' ranks plus the free mask, under one lock.
pub struct Cpudl<B: Primitives = Std> {
    lock: SpinLock<(), B>,
    size: B::U64,
    /// `elements[i].dl`.
    dl: Box<[B::U64]>,
    /// `elements[i].cpu`.
    cpu: Box<[B::U64]>,
    /// `cpu_to_idx[cpu]` (`NONE`: free, not in the heap).
    idx: Box<[B::U64]>,
    free: CpuMask<B>,
}

impl<B: Primitives> Cpudl<B> {
    /// `m` CPUs, all free (the heap is empty).
    pub fn new(m: usize) -> Cpudl<B> {
        let arr = |v: u64| (0..m).map(|_| B::U64::new(v)).collect::<Box<[B::U64]>>();
        Cpudl {
            lock: SpinLock::new(u32::MAX - 1, ()),
            size: B::U64::new(0),
            dl: arr(0),
            cpu: arr(0),
            idx: arr(NONE),
            free: CpuMask::full(m),
        }
    }

    #[inline]
    fn exchange(&self, a: usize, b: usize) {
        let (ca, cb) = (self.cpu[a].load(Relaxed), self.cpu[b].load(Relaxed));
        let (da, db) = (self.dl[a].load(Relaxed), self.dl[b].load(Relaxed));
        self.dl[a].store(db, Relaxed);
        self.dl[b].store(da, Relaxed);
        self.cpu[a].store(cb, Relaxed);
        self.cpu[b].store(ca, Relaxed);
        self.idx[ca as usize].store(b as u64, Relaxed);
        self.idx[cb as usize].store(a as u64, Relaxed);
    }

    #[inline]
    fn sift_up(&self, mut i: usize) -> usize {
        while i > 0 {
            let p = (i - 1) / 2;
            if self.dl[p].load(Relaxed) < self.dl[i].load(Relaxed) {
                self.exchange(i, p);
                i = p;
            } else {
                break;
            }
        }
        i
    }

    #[inline]
    fn sift_down(&self, mut i: usize) {
        let n = self.size.load(Relaxed) as usize;
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut largest = i;
            if l < n && self.dl[largest].load(Relaxed) < self.dl[l].load(Relaxed) {
                largest = l;
            }
            if r < n && self.dl[largest].load(Relaxed) < self.dl[r].load(Relaxed) {
                largest = r;
            }
            if largest == i {
                return;
            }
            self.exchange(i, largest);
            i = largest;
        }
    }

    /// The update itself. Precondition: the heap lock is held (and run-queue `cpu`'s lock).
    fn update(&self, cpu: usize, rank: u64) {
        let old = self.idx[cpu].load(Relaxed);
        if rank == FREE {
            if old != NONE {
                // Remove: the last element takes the hole, then moves up or down.
                let old = old as usize;
                let last = self.size.load(Relaxed) as usize - 1;
                let (lc, ld) = (self.cpu[last].load(Relaxed), self.dl[last].load(Relaxed));
                self.dl[old].store(ld, Relaxed);
                self.cpu[old].store(lc, Relaxed);
                self.idx[lc as usize].store(old as u64, Relaxed);
                self.size.store(last as u64, Relaxed);
                self.idx[cpu].store(NONE, Relaxed);
                if old < last {
                    let i = self.sift_up(old);
                    self.sift_down(i);
                }
            }
            self.free.set(cpu);
        } else if old == NONE {
            let i = self.size.load(Relaxed) as usize;
            self.dl[i].store(rank, Relaxed);
            self.cpu[i].store(cpu as u64, Relaxed);
            self.idx[cpu].store(i as u64, Relaxed);
            self.size.store(i as u64 + 1, Relaxed);
            self.sift_up(i);
            self.free.clear(cpu);
        } else {
            let i = old as usize;
            self.dl[i].store(rank, Relaxed);
            let i = self.sift_up(i);
            self.sift_down(i);
        }
    }

    /// The heap's `(cpu, rank)` pairs in index order (tests).
    #[cfg(test)]
    fn elements(&self) -> Vec<(u64, u64)> {
        (0..self.size.load(Relaxed) as usize).map(|i| (self.cpu[i].load(Relaxed), self.dl[i].load(Relaxed))).collect()
    }
}

impl<B: Primitives> FindCpu<B> for Cpudl<B> {
    fn name(&self) -> &'static str {
        "cpudl"
    }

    /// Precondition: run-queue `cpu`'s lock is held. Takes the heap lock.
    #[inline]
    fn set(&self, cpu: usize, rank: u64) {
        let _g = self.lock.lock_untraced();
        self.update(cpu, rank);
    }

    /// No lock: reads the free mask, then the root (a hint).
    #[inline]
    fn find(&self, rank: u64, _earliest: &Earliest<B>) -> Option<usize> {
        if let Some(c) = self.free.first() {
            return Some(c);
        }
        if self.size.load(Relaxed) == 0 {
            return None;
        }
        let (c, d) = (self.cpu[0].load(Relaxed), self.dl[0].load(Relaxed));
        (rank < d).then_some(c as usize)
    }

    fn check(&self, ranks: &[u64]) -> Result<(), RunError> {
        let _g = self.lock.lock_untraced();
        let n = self.size.load(Relaxed) as usize;
        let busy = ranks.iter().filter(|&&r| r != FREE).count();
        if n != busy {
            return Err(RunError::Internal(format!("cpudl: heap size {n}, {busy} busy CPUs")));
        }
        for i in 1..n {
            let p = (i - 1) / 2;
            if self.dl[p].load(Relaxed) < self.dl[i].load(Relaxed) {
                return Err(RunError::Internal(format!("cpudl: heap property broken at {i} (parent {p})")));
            }
        }
        for (c, &r) in ranks.iter().enumerate() {
            let i = self.idx[c].load(Relaxed);
            if r == FREE {
                if i != NONE || !self.free.test(c) {
                    return Err(RunError::Internal(format!(
                        "cpudl: free CPU {c} has index {i} / free bit {}",
                        self.free.test(c)
                    )));
                }
            } else if i == NONE || i as usize >= n {
                return Err(RunError::Internal(format!("cpudl: busy CPU {c} has index {i}")));
            } else {
                let i = i as usize;
                let (hc, hd) = (self.cpu[i].load(Relaxed), self.dl[i].load(Relaxed));
                if hc != c as u64 || hd != r || self.free.test(c) {
                    return Err(RunError::Internal(format!(
                        "cpudl: CPU {c} (rank {r}) at index {i} holds ({hc}, {hd})"
                    )));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::find_cpu::oracle;
    use crate::sync::loom_model::Loom;
    use proptest::prelude::*;

    proptest! {
        /// Oracle: the brute-force reference (and the heap's own invariants) after every update.
        #[test]
        fn cpudl_equals_the_reference((m, ops) in oracle::ops()) {
            let f: Cpudl = Cpudl::new(m);
            prop_assert_eq!(oracle::drive(&f, m, &ops), Ok(()));
        }
    }

    #[test]
    fn the_root_is_the_latest_cpu() {
        let h: Cpudl = Cpudl::new(4);
        for (c, r) in [(0, 10), (1, 40), (2, 20), (3, 30)] {
            h.set(c, r);
        }
        assert_eq!(h.elements()[0], (1, 40));
        h.set(1, FREE);
        assert_eq!(h.elements()[0], (3, 30));
        assert_eq!(h.find(35, &oracle::earliest(4)), Some(1), "a free CPU first");
        h.set(1, 5);
        assert_eq!(h.find(25, &oracle::earliest(4)), Some(3));
        assert_eq!(h.find(30, &oracle::earliest(4)), None);
        h.check(&[10, 5, 20, 30]).unwrap();
    }

    fn model(f: impl Fn() + Sync + Send + 'static) {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(3);
        b.check(f);
    }

    /// Loom: two run-queue lock holders move their CPUs concurrently (CPU 0's key rises to the
    /// root, CPU 1 leaves the heap) while a third thread finds. With the heap lock the heap is
    /// consistent at the end in every interleaving, and the lock-free `find` returns a CPU
    /// index or nothing (a hint).
    #[test]
    fn loom_concurrent_updates_keep_the_heap() {
        model(|| {
            let h: &'static Cpudl<Loom> = Box::leak(Box::new(Cpudl::new(3)));
            h.set(0, 10);
            h.set(1, 20);
            h.set(2, 15);
            let a = loom::thread::spawn(move || h.set(0, 30));
            let b = loom::thread::spawn(move || h.set(1, FREE));
            let got = h.find(5, &oracle::loom_earliest(3));
            a.join().unwrap();
            b.join().unwrap();
            assert!(got.is_none_or(|c| c < 3), "{got:?}");
            h.check(&[30, FREE, 15]).unwrap();
        });
    }

    /// The broken twin: the same updates without the heap lock corrupt the heap (or the
    /// `cpu → index` map) in some interleaving.
    #[test]
    #[should_panic]
    fn loom_catches_updates_without_the_lock() {
        model(|| {
            let h: &'static Cpudl<Loom> = Box::leak(Box::new(Cpudl::new(3)));
            h.set(0, 10);
            h.set(1, 20);
            h.set(2, 15);
            let a = loom::thread::spawn(move || h.update(0, 30));
            h.update(1, FREE);
            a.join().unwrap();
            h.check(&[30, FREE, 15]).unwrap();
        });
    }
}
