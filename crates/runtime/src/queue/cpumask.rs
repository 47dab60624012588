//! A set of small indices (CPUs, or cpupri's priority levels) as atomic 64-bit words — Linux's
//! `cpumask` with `set_bit()` / `clear_bit()`, the free-CPU mask of Lelli et al. (2011, §4.1:
//! "a low level `set_bit()` ... which performs an atomic update of a single bit of the
//! mask"), the overloaded-run-queue mask of push/pull (`dlo_mask`), and the per-level masks
//! and `pri_active` bitmap of `cpupri`.
//!
//! Concurrency: every bit update is one atomic read-modify-write (`fetch_or` / `fetch_and`,
//! release), so concurrent updates of different bits never lose one another (the loom model of
//! `fmask` shows a load-then-store update does); reads are acquire loads of whole words and
//! give a *hint*: a bit read may be changed by the time the reader acts, which every user
//! re-validates under the relevant run-queue lock. No lock is needed for any method.

use crate::sync::{Atom, Primitives, Std};
use std::sync::atomic::Ordering;

/// A bitmask over `0..len`, generic over the atomics backend (loom in the models).
pub struct CpuMask<B: Primitives = Std> {
    words: Box<[B::U64]>,
    len: usize,
}

impl<B: Primitives> CpuMask<B> {
    /// An empty mask over `0..len`.
    pub fn new(len: usize) -> CpuMask<B> {
        CpuMask { words: (0..len.div_ceil(64).max(1)).map(|_| B::U64::new(0)).collect(), len }
    }

    /// A mask over `0..len` with every bit set.
    pub fn full(len: usize) -> CpuMask<B> {
        let m = CpuMask::new(len);
        for i in 0..len {
            m.set(i);
        }
        m
    }

    /// The number of indices (`0..len`).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mask is over no index at all.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sets bit `i` (one atomic `fetch_or`).
    #[inline]
    pub fn set(&self, i: usize) {
        self.words[i / 64].fetch_or(1 << (i % 64), Ordering::Release);
    }

    /// Clears bit `i` (one atomic `fetch_and`).
    #[inline]
    pub fn clear(&self, i: usize) {
        self.words[i / 64].fetch_and(!(1 << (i % 64)), Ordering::Release);
    }

    /// Whether bit `i` is set.
    #[inline]
    pub fn test(&self, i: usize) -> bool {
        self.words[i / 64].load(Ordering::Acquire) & (1 << (i % 64)) != 0
    }

    /// The lowest set bit, if any (Linux's `cpumask_first`).
    #[inline]
    pub fn first(&self) -> Option<usize> {
        for (k, w) in self.words.iter().enumerate() {
            let v = w.load(Ordering::Acquire);
            if v != 0 {
                return Some(k * 64 + v.trailing_zeros() as usize);
            }
        }
        None
    }

    /// The lowest set bit at or above `from`, if any (Linux's `find_next_bit`).
    #[inline]
    pub fn next(&self, from: usize) -> Option<usize> {
        let mut k = from / 64;
        if k >= self.words.len() {
            return None;
        }
        let mut v = self.words[k].load(Ordering::Acquire) & (!0u64 << (from % 64));
        loop {
            if v != 0 {
                return Some(k * 64 + v.trailing_zeros() as usize);
            }
            k += 1;
            if k == self.words.len() {
                return None;
            }
            v = self.words[k].load(Ordering::Acquire);
        }
    }

    /// Whether no bit is set.
    #[inline]
    pub fn none(&self) -> bool {
        self.words.iter().all(|w| w.load(Ordering::Acquire) == 0)
    }

    /// Calls `f` with every set bit, lowest first, reading one word at a time (a bit set or
    /// cleared concurrently may or may not be seen).
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(usize)) {
        for (k, w) in self.words.iter().enumerate() {
            let mut v = w.load(Ordering::Acquire);
            while v != 0 {
                f(k * 64 + v.trailing_zeros() as usize);
                v &= v - 1;
            }
        }
    }

    /// The set bits, lowest first (tests and consistency checks).
    pub fn to_vec(&self) -> Vec<usize> {
        let mut v = Vec::new();
        self.for_each(|i| v.push(i));
        v
    }

    /// Word `k` (for the loom models' deliberately broken update).
    #[cfg(test)]
    pub(crate) fn word(&self, k: usize) -> &B::U64 {
        &self.words[k]
    }
}

impl std::fmt::Debug for CpuMask<Std> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.to_vec()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// Oracle: a `BTreeSet` of the indices, under random sets and clears at every size
        /// around the word boundaries.
        #[test]
        fn the_mask_equals_a_set(len in 1usize..200, ops in proptest::collection::vec((any::<bool>(), 0usize..200), 0..300)) {
            let m: CpuMask = CpuMask::new(len);
            let mut want = BTreeSet::new();
            for (set, i) in ops {
                let i = i % len;
                if set { m.set(i); want.insert(i); } else { m.clear(i); want.remove(&i); }
                prop_assert_eq!(m.to_vec(), want.iter().copied().collect::<Vec<_>>());
                prop_assert_eq!(m.first(), want.iter().next().copied());
                prop_assert_eq!(m.none(), want.is_empty());
                prop_assert_eq!(m.test(i), want.contains(&i));
                for from in [0, i, i + 1, len / 2, len] {
                    prop_assert_eq!(m.next(from), want.range(from..).next().copied());
                }
            }
        }
    }

    #[test]
    fn full_has_every_bit() {
        for len in [1, 63, 64, 65, 130] {
            let m: CpuMask = CpuMask::full(len);
            assert_eq!(m.to_vec(), (0..len).collect::<Vec<_>>());
            assert_eq!(m.len(), len);
        }
    }
}
