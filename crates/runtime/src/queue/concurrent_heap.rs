//! A concurrent priority-queue heap with one lock per node: Hunt, Michael, Parthasarathy &
//! Scott, "An efficient algorithm for concurrent priority queue heaps", Information Processing
//! Letters 60(3), 1996 — the fine-grained ready queue R2 of Brandenburg & Anderson, RTSS 2009,
//! §3 (plugins FEm and FE1).
//!
//! An array heap (root at index 1, children of `i` at `2i` and `2i + 1`) with
//! * a **size lock** protecting the element count, held only to claim or release the bottom
//!   position (never while waiting for a node);
//! * a **lock and a tag per node**: `Empty`, `Available`, or `Moving(op)` — the element an
//!   insertion `op` is still carrying up;
//! * **bit-reversed insertion positions**: the `s`-th element goes to position
//!   [`position`]`(s)` — at each level the positions are filled in bit-reversed order of their
//!   offset (4, 6, 5, 7, 8, 12, 10, 14, ...), so consecutive insertions start in different
//!   subtrees and their bubble-ups rarely meet (IPL 1996, §2);
//! * **insertion bottom-up**: the new element is written at the bottom with its tag, then
//!   moved up one level per step, each step locking parent then child (the top-down order that
//!   deletions use, so no deadlock). Between steps a concurrent deletion may move the element:
//!   the tag says where it went — a child no longer tagged by this insertion means the element
//!   was swapped up by a deletion (follow it: go to the parent), an `Empty` parent means it
//!   was taken as a deletion's bottom element and reached the root that way (stop);
//! * **deletion top-down** with hand-over-hand locking: claim and empty the bottom position,
//!   put its element at the root in place of the minimum, and sift it down holding at most a
//!   node and its two children.
//!
//! Every element is a `K: Ord + Copy`; the minimum is the highest priority. Capacity is fixed
//! (the array does not grow while others walk it): [`insert`](ConcurrentHeap::insert) returns the
//! element back when the heap is full. Guarantees (checked by the tests): no element is lost
//! or duplicated, and at quiescence the heap is in heap order. A deletion running alone
//! returns the minimum, but two concurrent deletions need not return the two smallest: a
//! deletion's bottom element may be the next minimum, carried past the root while the other
//! deletion sifts (loom finds it at three elements). An insertion takes effect when its
//! element is tagged `Available` (a concurrent `peek` may not see it yet). A user that needs
//! the exact order re-checks the top after its deletion, as the fine-grained plugins do.
//!
//! Lock order: size lock before any node lock (and never the size lock while holding a node);
//! a parent before its children, a left child before its right sibling. Generic over the
//! platform's [`Primitives`] so that the loom models (tests below) check the same code.

use crate::sync::{Primitives, SpinLock, Std};
use crate::RunError;

/// A node's tag (IPL 1996: EMPTY, AVAILABLE or the pid of the moving insertion).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Empty,
    Available,
    /// Carried up by the insertion with this id (ids are unique per heap).
    Moving(u64),
}

#[derive(Debug, Clone, Copy)]
struct Slot<K> {
    tag: Tag,
    item: Option<K>,
}

/// What the size lock protects: the element count and the next insertion id.
#[derive(Debug)]
struct Size {
    len: usize,
    next_op: u64,
}

/// The `s`-th element's position (`s >= 1`): level `⌊log2 s⌋`, and within the level the
/// offset `s − 2^level` with its bits reversed (Hunt et al.'s bit-reversed counter, computed
/// directly). Positions `1..=s` are always a heap shape with every left child filled before
/// its right sibling.
pub fn position(s: usize) -> usize {
    debug_assert!(s >= 1);
    let level = usize::BITS - 1 - s.leading_zeros();
    if level == 0 {
        return 1;
    }
    let high = 1usize << level;
    high | ((s - high).reverse_bits() >> (usize::BITS - level))
}

/// An insertion waits for another's element to settle. Under the loom model (tests only) an
/// execution in which it retries more than [`MODEL_RETRIES`] times is pruned: loom has no
/// fairness, and the waiting insertion relocks its nodes on every retry, so without the bound
/// loom explores ever longer paths in which the other insertion is never let through (its
/// spin on the lock word may keep reading an older `locked` in the C11 model). Every
/// interleaving with bounded waiting is still explored.
#[inline(always)]
fn wait<B: Primitives>(spins: u32) {
    #[cfg(test)]
    if spins > MODEL_RETRIES && std::any::type_name::<B>().ends_with("Loom") {
        loom::skip_branch();
    }
    B::spin_hint(spins);
}

/// See [`wait`].
#[cfg(test)]
const MODEL_RETRIES: u32 = 4;

/// Hunt et al.'s concurrent heap of at most `capacity` elements (see the module docs).
pub struct ConcurrentHeap<K, B: Primitives = Std> {
    size: SpinLock<Size, B>,
    /// The most elements held at once.
    cap: usize,
    /// Index 0 unused; nodes `1..=2^k − 1`, the smallest full tree with `capacity` nodes: the
    /// bit-reversed positions of one level spread over the whole level, so a partly filled
    /// last level may use any of its nodes.
    nodes: Box<[SpinLock<Slot<K>, B>]>,
}

impl<K: Ord + Copy + Send, B: Primitives> ConcurrentHeap<K, B> {
    /// An empty heap for up to `capacity` elements (at least 1).
    pub fn with_capacity(capacity: usize) -> Self {
        let cap = capacity.max(1);
        let full = (cap + 1).next_power_of_two() - 1;
        ConcurrentHeap {
            size: SpinLock::new(0, Size { len: 0, next_op: 0 }),
            cap,
            nodes: (0..=full).map(|_| SpinLock::new(0, Slot { tag: Tag::Empty, item: None })).collect(),
        }
    }

    /// The most elements the heap holds at once.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// The last node index (the full tree's size).
    fn last_node(&self) -> usize {
        self.nodes.len() - 1
    }

    /// Number of elements (those being inserted or deleted right now included or not,
    /// depending on which side of the size lock they are).
    pub fn len(&self) -> usize {
        self.size.lock_untraced().len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Inserts `item`; `Err(item)` if the heap is full.
    pub fn insert(&self, item: K) -> Result<(), K> {
        // Claim the bottom position and lock it before the size lock is released, so that a
        // deletion cannot take the position before the element is in it.
        let (mut i, me) = {
            let mut s = self.size.lock_untraced();
            if s.len == self.capacity() {
                return Err(item);
            }
            s.len += 1;
            s.next_op += 1;
            let me = Tag::Moving(s.next_op);
            let i = position(s.len);
            let mut node = self.nodes[i].lock_untraced();
            drop(s);
            *node = Slot { tag: me, item: Some(item) };
            (i, me)
        };
        // Bubble up: parent, then child; the tags say where a concurrent deletion moved the
        // element (module docs).
        let mut spins = 0u32;
        while i > 1 {
            let p = i / 2;
            let mut parent = self.nodes[p].lock_untraced();
            let mut child = self.nodes[i].lock_untraced();
            if parent.tag == Tag::Available && child.tag == me {
                if child.item < parent.item {
                    std::mem::swap(&mut *parent, &mut *child);
                    i = p;
                } else {
                    child.tag = Tag::Available;
                    i = 0;
                }
            } else if parent.tag == Tag::Empty {
                // The element was taken as a deletion's bottom element: it is placed.
                i = 0;
            } else if child.tag != me {
                // A deletion swapped the element up: follow it.
                i = p;
            } else {
                // The parent is another insertion's element on its way up: wait for it.
                drop(child);
                drop(parent);
                spins = spins.wrapping_add(1);
                wait::<B>(spins);
            }
        }
        if i == 1 {
            let mut root = self.nodes[1].lock_untraced();
            if root.tag == me {
                root.tag = Tag::Available;
            }
        }
        Ok(())
    }

    /// The minimum (a snapshot: the root's element).
    pub fn peek(&self) -> Option<K> {
        let root = self.nodes[1].lock_untraced();
        if root.tag == Tag::Empty {
            None
        } else {
            root.item
        }
    }

    /// Removes and returns the minimum.
    pub fn pop(&self) -> Option<K> {
        // Take the bottom element out.
        let bottom_item = {
            let mut s = self.size.lock_untraced();
            if s.len == 0 {
                return None;
            }
            let b = position(s.len);
            s.len -= 1;
            let mut bottom = self.nodes[b].lock_untraced();
            drop(s);
            bottom.tag = Tag::Empty;
            bottom.item.take()
        };
        let mut cur = self.nodes[1].lock_untraced();
        if cur.tag == Tag::Empty {
            // The root itself was the bottom: the heap had one element.
            return bottom_item;
        }
        // The bottom element replaces the minimum at the root and sifts down.
        let result = std::mem::replace(&mut cur.item, bottom_item);
        cur.tag = Tag::Available;
        let cap = self.last_node();
        let mut i = 1;
        while 2 * i <= cap {
            let (l, r) = (2 * i, 2 * i + 1);
            let left = self.nodes[l].lock_untraced();
            let right = (r <= cap).then(|| self.nodes[r].lock_untraced());
            if left.tag == Tag::Empty {
                // Left children fill first: no children.
                break;
            }
            let (mut child, c) = match right {
                Some(rg) if rg.tag != Tag::Empty && rg.item < left.item => {
                    drop(left);
                    (rg, r)
                }
                _ => (left, l),
            };
            if child.item < cur.item {
                std::mem::swap(&mut *cur, &mut *child);
                cur = child;
                i = c;
            } else {
                break;
            }
        }
        drop(cur);
        result
    }

    /// The elements and whether the heap is well formed, read at quiescence (no operation in
    /// progress): positions `1..=len` hold `Available` elements in heap order, the others are
    /// `Empty`. For tests and end-of-run consistency checks.
    pub fn check_quiescent(&self) -> Result<Vec<K>, RunError> {
        let len = self.len();
        let filled: std::collections::BTreeSet<usize> = (1..=len).map(position).collect();
        let mut out = Vec::with_capacity(len);
        for i in 1..=self.last_node() {
            let s = *self.nodes[i].lock_untraced();
            match (filled.contains(&i), s.tag, s.item) {
                (true, Tag::Available, Some(k)) => {
                    if i > 1 {
                        let p = self.nodes[i / 2].lock_untraced().item;
                        if p.is_some_and(|p| k < p) {
                            return Err(RunError::Internal(format!("node {i} is smaller than its parent {}", i / 2)));
                        }
                    }
                    out.push(k);
                }
                (false, Tag::Empty, None) => {}
                (true, t, _) => {
                    return Err(RunError::Internal(format!("node {i} of {len} is {t:?}, not an available element")))
                }
                (false, t, _) => {
                    return Err(RunError::Internal(format!("node {i} beyond the {len} elements is {t:?}")))
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
