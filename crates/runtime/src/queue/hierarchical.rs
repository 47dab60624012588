//! The hierarchical "queue of queues" of Brandenburg & Anderson, RTSS 2009, §3 (ready queue
//! R3, plugin HEm; their Fig. 2): one *local* binomial heap per CPU holding the bulk of the
//! elements, and a *global* binomial heap holding each non-empty local heap's minimum
//! (with the CPU it came from). "Insertion and merge operations are always performed on the
//! cache-local queue, and an update of the global queue is only required if the
//! highest-priority job changes in the local queue. However, removal of the highest-priority
//! job from the global queue may require non-cache-local updates" (ibid.).
//!
//! Two-level locking: a lock per local heap and one for the global heap, always taken in that
//! order (local, then global). Invariant whenever no lock is held: the global heap holds
//! exactly `(min of local c, c)` for every non-empty local heap `c`. An insertion locks its
//! own local heap and, only if the local minimum changed, the global heap. A deletion reads
//! the global minimum's CPU `c` under the global lock, drops it (the order forbids taking a
//! local lock while holding the global one), locks local `c` then the global heap, and
//! retries if the global minimum is no longer `c`'s; otherwise it pops local `c` and
//! replaces `c`'s global entry by its new minimum. Every operation is linearizable (its
//! effect happens under the global lock, or under a local lock that the global heap's next
//! reader must wait for). Generic over the platform's [`Primitives`] for the loom models.

use crate::queue::binomial::BinomialHeap;
use crate::sync::{Primitives, SpinLock, Std};
use crate::RunError;

/// The queue of queues over `m` local heaps.
pub struct Hierarchical<K, B: Primitives = Std> {
    local: Box<[SpinLock<BinomialHeap<K>, B>]>,
    global: SpinLock<BinomialHeap<(K, u32)>, B>,
}

impl<K: Ord + Copy + Send, B: Primitives> Hierarchical<K, B> {
    /// `m` local heaps (at least 1), each preallocated for `per_cpu` elements.
    pub fn new(m: usize, per_cpu: usize) -> Self {
        let m = m.max(1);
        Hierarchical {
            local: (0..m).map(|c| SpinLock::new(c as u32, BinomialHeap::with_capacity(per_cpu))).collect(),
            global: SpinLock::new(u32::MAX, BinomialHeap::with_capacity(m)),
        }
    }

    /// Number of local heaps.
    pub fn locals(&self) -> usize {
        self.local.len()
    }

    /// Inserts `item` into the local heap of `cpu` (taken modulo the number of local heaps).
    pub fn insert(&self, cpu: usize, item: K) {
        let c = cpu % self.local.len();
        let mut l = self.local[c].lock_untraced();
        let old = l.peek().copied();
        l.push(item);
        if old.is_none_or(|o| item < o) {
            // The local minimum changed: replace c's global entry (still under c's lock).
            let mut g = self.global.lock_untraced();
            if let Some(o) = old {
                g.remove(&(o, c as u32));
            }
            g.push((item, c as u32));
        }
    }

    /// The minimum.
    pub fn peek(&self) -> Option<K> {
        self.global.lock_untraced().peek().map(|e| e.0)
    }

    /// Removes and returns the minimum.
    pub fn pop(&self) -> Option<K> {
        let mut spins = 0u32;
        loop {
            let c = self.global.lock_untraced().peek()?.1 as usize;
            let mut l = self.local[c].lock_untraced();
            let mut g = self.global.lock_untraced();
            match (g.peek().copied(), l.peek().copied()) {
                (Some((k, gc)), Some(h)) if gc as usize == c && k == h => {
                    g.pop();
                    let item = l.pop();
                    if let Some(&next) = l.peek() {
                        g.push((next, c as u32));
                    }
                    return item;
                }
                // The global minimum moved (another deletion or insertion won): retry.
                _ => {
                    drop(g);
                    drop(l);
                    spins = spins.wrapping_add(1);
                    B::spin_hint(spins);
                }
            }
        }
    }

    /// Number of elements (a sum over the local heaps; exact at quiescence).
    pub fn len(&self) -> usize {
        self.local.iter().map(|l| l.lock_untraced().len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.peek().is_none()
    }

    /// The elements and whether the two levels agree, read at quiescence: the global heap
    /// holds exactly each non-empty local heap's minimum. For tests and end-of-run checks.
    pub fn check_quiescent(&self) -> Result<Vec<K>, RunError> {
        let mut out = Vec::new();
        let mut want = Vec::new();
        for (c, l) in self.local.iter().enumerate() {
            let l = l.lock_untraced();
            if let Some(&h) = l.peek() {
                want.push((h, c as u32));
            }
            out.extend(l.keys());
        }
        let mut got = self.global.lock_untraced().keys();
        got.sort_unstable();
        want.sort_unstable();
        if got != want {
            return Err(RunError::Internal(format!(
                "the global heap holds {} entries that are not the local minima ({} non-empty local heaps)",
                got.len(),
                want.len()
            )));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
