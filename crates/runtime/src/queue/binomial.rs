//! The ready queue of a global scheduler (seed 001 §3): a binomial heap, LITMUS^RT's choice
//! because of its O(log n) merge (R1 of seed 001). A preallocated arena: no allocation while
//! the number of queued jobs stays within the initial capacity. Sequential: the caller's lock
//! (e.g. GSN-EDF's global lock) serialises every operation.

use rtsched_policy::{Prio, ReadyQueue};

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node<K> {
    key: K,
    child: u32,
    sibling: u32,
    degree: u32,
}

/// A binomial min-heap (CLRS ch. 19) over an index arena.
///
/// As the ready queue of a policy ([`rtsched_policy::ReadyQueue`]) it holds job priorities;
/// its caller's lock serialises every operation.
#[derive(Debug, Clone)]
pub struct BinomialHeap<K> {
    nodes: Vec<Node<K>>,
    free: Vec<u32>,
    head: u32,
    len: usize,
}

impl<K: Ord + Copy> BinomialHeap<K> {
    pub fn with_capacity(cap: usize) -> Self {
        BinomialHeap { nodes: Vec::with_capacity(cap), free: Vec::with_capacity(cap), head: NIL, len: 0 }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn alloc(&mut self, key: K) -> u32 {
        let n = Node { key, child: NIL, sibling: NIL, degree: 0 };
        if let Some(i) = self.free.pop() {
            self.nodes[i as usize] = n;
            i
        } else {
            self.nodes.push(n);
            (self.nodes.len() - 1) as u32
        }
    }

    /// Merges two root lists ordered by degree.
    fn merge_roots(&mut self, mut a: u32, mut b: u32) -> u32 {
        let mut head = NIL;
        let mut tail = NIL;
        while a != NIL || b != NIL {
            let take_a = b == NIL || (a != NIL && self.nodes[a as usize].degree <= self.nodes[b as usize].degree);
            let x = if take_a {
                let x = a;
                a = self.nodes[a as usize].sibling;
                x
            } else {
                let x = b;
                b = self.nodes[b as usize].sibling;
                x
            };
            if tail == NIL {
                head = x;
            } else {
                self.nodes[tail as usize].sibling = x;
            }
            tail = x;
        }
        if tail != NIL {
            self.nodes[tail as usize].sibling = NIL;
        }
        head
    }

    /// Makes `y` a child of `z`.
    fn link(&mut self, y: u32, z: u32) {
        self.nodes[y as usize].sibling = self.nodes[z as usize].child;
        self.nodes[z as usize].child = y;
        self.nodes[z as usize].degree += 1;
    }

    fn union(&mut self, other: u32) {
        let h = self.merge_roots(self.head, other);
        self.head = h;
        if h == NIL {
            return;
        }
        let mut prev = NIL;
        let mut x = h;
        let mut next = self.nodes[x as usize].sibling;
        while next != NIL {
            let dx = self.nodes[x as usize].degree;
            let nn = self.nodes[next as usize].sibling;
            if dx != self.nodes[next as usize].degree || (nn != NIL && self.nodes[nn as usize].degree == dx) {
                prev = x;
                x = next;
            } else if self.nodes[x as usize].key <= self.nodes[next as usize].key {
                self.nodes[x as usize].sibling = nn;
                self.link(next, x);
            } else {
                if prev == NIL {
                    self.head = next;
                } else {
                    self.nodes[prev as usize].sibling = next;
                }
                self.link(x, next);
                x = next;
            }
            next = self.nodes[x as usize].sibling;
        }
    }

    pub fn push(&mut self, key: K) {
        let n = self.alloc(key);
        self.union(n);
        self.len += 1;
    }

    /// (root index, previous root) of the minimum.
    fn min_root(&self) -> Option<(u32, u32)> {
        let mut best = None::<(u32, u32)>;
        let mut prev = NIL;
        let mut x = self.head;
        while x != NIL {
            match best {
                Some((b, _)) if self.nodes[b as usize].key <= self.nodes[x as usize].key => {}
                _ => best = Some((x, prev)),
            }
            prev = x;
            x = self.nodes[x as usize].sibling;
        }
        best
    }

    pub fn peek(&self) -> Option<&K> {
        self.min_root().map(|(b, _)| &self.nodes[b as usize].key)
    }

    pub fn pop(&mut self) -> Option<K> {
        let (b, prev) = self.min_root()?;
        Some(self.remove_root(b, prev))
    }

    /// Unlinks root `b` (whose predecessor in the root list is `prev`) and returns its key.
    fn remove_root(&mut self, b: u32, prev: u32) -> K {
        let next = self.nodes[b as usize].sibling;
        if prev == NIL {
            self.head = next;
        } else {
            self.nodes[prev as usize].sibling = next;
        }
        // Reverse b's children into a root list of increasing degree.
        let mut rev = NIL;
        let mut c = self.nodes[b as usize].child;
        while c != NIL {
            let s = self.nodes[c as usize].sibling;
            self.nodes[c as usize].sibling = rev;
            rev = c;
            c = s;
        }
        self.union(rev);
        self.len -= 1;
        self.free.push(b);
        self.nodes[b as usize].key
    }

    /// Depth-first search below root-list entry `x` for a node holding `key`: fills `path`
    /// (root first) and returns its length. Skips subtrees whose root is already larger.
    /// No allocation: a binomial tree of n nodes has depth at most log2(n) < 64.
    fn find(&self, x: u32, key: &K, path: &mut [u32; 64], depth: usize) -> Option<usize> {
        let n = &self.nodes[x as usize];
        if n.key > *key || depth >= 64 {
            return None;
        }
        path[depth] = x;
        if n.key == *key {
            return Some(depth + 1);
        }
        let mut c = n.child;
        while c != NIL {
            if let Some(len) = self.find(c, key, path, depth + 1) {
                return Some(len);
            }
            c = self.nodes[c as usize].sibling;
        }
        None
    }

    /// Removes one entry equal to `key`; returns whether one was found. The found node's key
    /// moves to its tree's root and each ancestor's key one level down, which keeps heap
    /// order (the classic delete: decrease to the minimum, then extract; CLRS §19.2); then
    /// that root is removed. O(n) to find, O(log n) to remove, no allocation — for the rare
    /// removal of a job that completed while queued.
    pub fn remove(&mut self, key: &K) -> bool {
        let mut path = [NIL; 64];
        let (mut prev, mut root) = (NIL, self.head);
        let len = loop {
            if root == NIL {
                return false;
            }
            if let Some(len) = self.find(root, key, &mut path, 0) {
                break len;
            }
            prev = root;
            root = self.nodes[root as usize].sibling;
        };
        let found = self.nodes[path[len - 1] as usize].key;
        for d in (1..len).rev() {
            self.nodes[path[d] as usize].key = self.nodes[path[d - 1] as usize].key;
        }
        self.nodes[root as usize].key = found;
        self.remove_root(root, prev);
        true
    }

    /// Every key, in no particular order (for consistency checks).
    pub fn keys(&self) -> Vec<K> {
        let mut out = Vec::with_capacity(self.len);
        let mut stack = vec![self.head];
        while let Some(x) = stack.pop() {
            if x == NIL {
                continue;
            }
            out.push(self.nodes[x as usize].key);
            stack.push(self.nodes[x as usize].sibling);
            stack.push(self.nodes[x as usize].child);
        }
        out
    }
}

impl ReadyQueue for BinomialHeap<Prio> {
    #[inline]
    fn push(&mut self, job: Prio) {
        BinomialHeap::push(self, job)
    }
    #[inline]
    fn peek(&self) -> Option<Prio> {
        BinomialHeap::peek(self).copied()
    }
    #[inline]
    fn pop(&mut self) -> Option<Prio> {
        BinomialHeap::pop(self)
    }
    fn remove(&mut self, job: Prio) -> bool {
        BinomialHeap::remove(self, &job)
    }
    #[inline]
    fn len(&self) -> usize {
        BinomialHeap::len(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Oracle: a sorted vector (a plain multiset) under the same random push / pop /
        /// remove sequence, duplicates included.
        #[test]
        fn binomial_heap_matches_a_sorted_vector(ops in proptest::collection::vec((0u8..3, 0u32..40), 0..300)) {
            let mut b = BinomialHeap::with_capacity(4);
            let mut o: Vec<u32> = Vec::new();
            for (op, k) in ops {
                match op {
                    0 => { b.push(k); o.push(k); o.sort_unstable(); }
                    1 => {
                        let want = if o.is_empty() { None } else { Some(o.remove(0)) };
                        prop_assert_eq!(b.pop(), want);
                    }
                    _ => {
                        let pos = o.iter().position(|&x| x == k);
                        prop_assert_eq!(b.remove(&k), pos.is_some());
                        if let Some(i) = pos { o.remove(i); }
                    }
                }
                prop_assert_eq!(b.peek().copied(), o.first().copied());
                prop_assert_eq!(b.len(), o.len());
                let mut ks = b.keys(); ks.sort_unstable();
                prop_assert_eq!(&ks, &o);
            }
        }
    }
}
