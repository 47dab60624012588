//! The processor mapping (seed 001 §3): a min-heap of CPUs ordered so that the CPU whose
//! linked job has the *lowest* priority (an idle CPU first) is on top.

/// The processor mapping: an indexed binary heap of CPUs; the top is the CPU whose linked
/// job has the lowest priority, idle CPUs (key `None`) first; ties by lower CPU index.
/// A key is a job's priority key where smaller = higher priority.
#[derive(Debug, Clone)]
pub struct CpuHeap<P> {
    heap: Vec<usize>,
    pos: Vec<usize>,
    key: Vec<Option<P>>,
}

impl<P: Ord + Copy> CpuHeap<P> {
    /// All `m` CPUs idle.
    pub fn new(m: usize) -> Self {
        CpuHeap { heap: (0..m).collect(), pos: (0..m).collect(), key: vec![None; m] }
    }

    /// True if CPU `a` should be nearer the top than `b` (lower priority).
    fn above(&self, a: usize, b: usize) -> bool {
        match (&self.key[a], &self.key[b]) {
            (None, None) => a < b,
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (Some(x), Some(y)) => x > y || (x == y && a < b),
        }
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        self.pos[self.heap[i]] = i;
        self.pos[self.heap[j]] = j;
    }

    /// Sets CPU `cpu`'s linked-job key and restores the heap.
    pub fn update(&mut self, cpu: usize, key: Option<P>) {
        self.key[cpu] = key;
        let mut i = self.pos[cpu];
        while i > 0 {
            let p = (i - 1) / 2;
            if self.above(self.heap[i], self.heap[p]) {
                self.swap(i, p);
                i = p;
            } else {
                break;
            }
        }
        loop {
            let l = 2 * i + 1;
            let r = l + 1;
            let mut best = i;
            if l < self.heap.len() && self.above(self.heap[l], self.heap[best]) {
                best = l;
            }
            if r < self.heap.len() && self.above(self.heap[r], self.heap[best]) {
                best = r;
            }
            if best == i {
                break;
            }
            self.swap(i, best);
            i = best;
        }
    }

    /// The lowest-priority CPU.
    pub fn lowest(&self) -> usize {
        self.heap[0]
    }

    pub fn key(&self, cpu: usize) -> Option<P> {
        self.key[cpu]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;

    proptest! {
        /// Oracle: a linear scan for the lowest-priority CPU.
        #[test]
        fn cpu_heap_top_is_the_lowest_priority(ups in proptest::collection::vec((0usize..6, proptest::option::of(0u32..20)), 0..200)) {
            let mut h = CpuHeap::new(6);
            let mut keys = [None; 6];
            for (c, k) in ups {
                h.update(c, k);
                keys[c] = k;
                let best = (0..6).min_by(|&a, &b| {
                    // lowest priority first: None, then larger key; ties by index
                    let ka = keys[a].map(Reverse); let kb = keys[b].map(Reverse);
                    ka.cmp(&kb).then(a.cmp(&b))
                }).unwrap();
                prop_assert_eq!(h.lowest(), best);
            }
        }
    }
}
