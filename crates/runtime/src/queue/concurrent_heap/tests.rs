//! Oracles for Hunt et al.'s heap: the positions against their definition, single-threaded
//! operation sequences against std's binary heap, concurrent random operation sequences
//! against a multiset (nothing lost, nothing duplicated, heap order at quiescence), and loom
//! models at capacity 3 with a deliberately broken twin the models must catch.

use super::*;
use proptest::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[test]
fn positions_are_bit_reversed_within_each_level() {
    let first: Vec<usize> = (1..=15).map(position).collect();
    assert_eq!(first, vec![1, 2, 3, 4, 6, 5, 7, 8, 12, 10, 14, 9, 13, 11, 15]);
    // Every prefix is a heap shape: each filled node's parent is filled, and a right child is
    // filled only after its left sibling.
    let mut filled = std::collections::BTreeSet::new();
    for s in 1..=5000usize {
        let p = position(s);
        assert!(!filled.contains(&p), "position {p} used twice");
        if p > 1 {
            assert!(filled.contains(&(p / 2)), "s = {s}: parent of {p} empty");
        }
        if p % 2 == 1 && p > 1 {
            assert!(filled.contains(&(p - 1)), "s = {s}: right child {p} before its left sibling");
        }
        filled.insert(p);
        let level = usize::BITS - 1 - s.leading_zeros();
        assert_eq!(usize::BITS - 1 - p.leading_zeros(), level, "same level as the count");
    }
}

proptest! {
    /// Oracle: std's binary heap under the same single-threaded sequence (duplicates
    /// included), with the heap's shape and order checked after every operation.
    #[test]
    fn matches_a_sequential_heap(cap in 1usize..20, ops in proptest::collection::vec((0u8..3, 0u32..30), 0..200)) {
        let h: ConcurrentHeap<u32> = ConcurrentHeap::with_capacity(cap);
        let mut o: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
        for (op, k) in ops {
            match op {
                0 => {
                    let r = h.insert(k);
                    if o.len() < cap {
                        prop_assert_eq!(r, Ok(()));
                        o.push(Reverse(k));
                    } else {
                        prop_assert_eq!(r, Err(k), "a full heap hands the element back");
                    }
                }
                1 => prop_assert_eq!(h.pop(), o.pop().map(|r| r.0)),
                _ => prop_assert_eq!(h.peek(), o.peek().map(|r| r.0)),
            }
            prop_assert_eq!(h.len(), o.len());
            let mut items = h.check_quiescent().map_err(|e| TestCaseError::fail(e.to_string()))?;
            items.sort_unstable();
            let mut want: Vec<u32> = o.iter().map(|r| r.0).collect();
            want.sort_unstable();
            prop_assert_eq!(items, want);
        }
    }
}

/// splitmix64 (a seeded stream of choices for the threads).
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Four threads run random insert / pop / peek sequences on one heap. Every element is
/// unique, so the oracle is a set: what was popped plus what is left equals what was
/// inserted, no element is popped twice, the heap is well formed at the end and drains in
/// order. Then, with every insertion done, four threads delete concurrently: nothing lost or
/// duplicated.
#[test]
fn random_concurrent_sequences_lose_and_duplicate_nothing() {
    for round in 0..6u64 {
        let h: ConcurrentHeap<u64> = ConcurrentHeap::with_capacity(300);
        let threads = 4u64;
        let results: Vec<(Vec<u64>, Vec<u64>, Vec<u64>)> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|t| {
                    let h = &h;
                    s.spawn(move || {
                        let (mut ins, mut popped, mut full) = (Vec::new(), Vec::new(), Vec::new());
                        let mut x = mix(round * 100 + t);
                        for k in 0..2000u64 {
                            x = mix(x);
                            // Unique values with random order: low bits carry (thread, k).
                            let v = (x % 1000) << 20 | t << 16 | k;
                            match x % 7 {
                                0..=3 => match h.insert(v) {
                                    Ok(()) => ins.push(v),
                                    Err(e) => full.push(e),
                                },
                                4..=5 => popped.extend(h.pop()),
                                _ => {
                                    let _ = h.peek();
                                }
                            }
                        }
                        (ins, popped, full)
                    })
                })
                .collect();
            hs.into_iter().map(|x| x.join().unwrap()).collect()
        });
        let mut inserted: Vec<u64> = results.iter().flat_map(|r| r.0.clone()).collect();
        let mut popped: Vec<u64> = results.iter().flat_map(|r| r.1.clone()).collect();
        let left = h.check_quiescent().unwrap();
        assert_eq!(left.len(), h.len());
        popped.extend(&left);
        inserted.sort_unstable();
        popped.sort_unstable();
        assert_eq!(popped, inserted, "round {round}: popped + left != inserted");
        let mut drained = Vec::new();
        while let Some(v) = h.pop() {
            drained.push(v);
        }
        assert!(drained.windows(2).all(|w| w[0] < w[1]), "round {round}: not drained in order");
    }
    // Concurrent deletions after the insertions: the k smallest, each once.
    let h: ConcurrentHeap<u64> = ConcurrentHeap::with_capacity(1024);
    let mut all: Vec<u64> = (0..1000).map(|i| mix(i) % 1_000_000 * 1000 + i).collect();
    std::thread::scope(|s| {
        for part in all.chunks(250) {
            let h = &h;
            s.spawn(move || part.iter().for_each(|&v| h.insert(v).unwrap()));
        }
    });
    h.check_quiescent().unwrap();
    let got: Vec<Vec<u64>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4).map(|_| s.spawn(|| (0..150).filter_map(|_| h.pop()).collect())).collect();
        hs.into_iter().map(|x| x.join().unwrap()).collect()
    });
    // Nothing lost or duplicated, and the heap well formed after. (Concurrent deletions need
    // not return exactly the 600 smallest: see `loom_two_deletions`.)
    let mut got: Vec<u64> = got.concat();
    assert_eq!(got.len(), 600);
    got.extend(h.check_quiescent().unwrap());
    got.sort_unstable();
    all.sort_unstable();
    assert_eq!(got, all);
}

#[test]
fn a_full_heap_hands_the_element_back_and_an_empty_one_pops_none() {
    let h: ConcurrentHeap<u8> = ConcurrentHeap::with_capacity(2);
    assert_eq!(h.pop(), None);
    assert_eq!(h.peek(), None);
    assert_eq!((h.insert(5), h.insert(3), h.insert(4)), (Ok(()), Ok(()), Err(4)));
    assert_eq!((h.pop(), h.pop(), h.pop()), (Some(3), Some(5), None));
    assert!(h.is_empty());
}

/// The loom models: every interleaving of two threads (preemption-bounded where noted) at
/// capacity 3.
mod loom_models {
    use super::*;
    use crate::sync::loom_model::Loom;
    use loom::thread;

    type H = ConcurrentHeap<u32, Loom>;

    fn leak<T>(t: T) -> &'static T {
        Box::leak(Box::new(t))
    }

    fn filled(cap: usize, items: &[u32]) -> &'static H {
        let h = leak(H::with_capacity(cap));
        for &x in items {
            h.insert(x).unwrap();
        }
        h
    }

    /// At quiescence: well formed, and the elements are `want`.
    fn settle(h: &H, want: &[u32]) {
        let mut items = h.check_quiescent().unwrap_or_else(|e| panic!("heap broken: {e}"));
        items.sort_unstable();
        assert_eq!(items, want, "heap broken: an element was lost or duplicated");
    }

    fn model(bound: Option<usize>, f: impl Fn() + Sync + Send + 'static) {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = bound;
        b.check(f);
    }

    #[test]
    fn loom_two_insertions() {
        model(Some(3), || {
            let h = filled(3, &[3]);
            let t = thread::spawn(move || h.insert(1).unwrap());
            h.insert(2).unwrap();
            t.join().unwrap();
            settle(h, &[1, 2, 3]);
            assert_eq!(h.peek(), Some(1));
        });
    }

    #[test]
    fn loom_insertion_and_deletion() {
        model(Some(3), || {
            let h = filled(3, &[1, 3]);
            let t = thread::spawn(move || h.insert(2).unwrap());
            // 1 is the minimum before and after the insertion of 2.
            assert_eq!(h.pop(), Some(1));
            t.join().unwrap();
            settle(h, &[2, 3]);
        });
    }

    #[test]
    fn loom_insertion_of_a_new_minimum_races_a_deletion() {
        model(Some(3), || {
            let h = filled(3, &[2]);
            let t = thread::spawn(move || h.insert(1).unwrap());
            let got = h.pop().expect("the heap is never empty");
            t.join().unwrap();
            // Either order is linearizable; the other element stays.
            let left: &[u32] = if got == 1 { &[2] } else { &[1] };
            assert!(got == 1 || got == 2);
            settle(h, left);
        });
    }

    /// Two deletions: the minimum goes to whichever locks the root first, nothing is lost or
    /// duplicated, and the heap is well formed after. They need *not* return the two smallest:
    /// a deletion's bottom element may be the heap's next minimum, carried past the root
    /// while the other deletion sifts — the interleaving below, which loom finds. Hunt et
    /// al.'s deletions are not linearizable in that sense; the fine-grained plugins re-check
    /// the queue's top after every dequeue (`mechanism::design_space::fine`), so such a job is
    /// linked at the protocol's next iteration.
    #[test]
    fn loom_two_deletions() {
        model(Some(3), || {
            let h = filled(3, &[1, 2, 3]);
            let t = thread::spawn(move || h.pop());
            let a = h.pop().expect("three elements");
            let b = t.join().unwrap().expect("three elements");
            let mut got = [a, b];
            got.sort_unstable();
            assert!(got == [1, 2] || got == [1, 3], "{got:?}: the minimum must be among them");
            settle(h, if got == [1, 2] { &[3] } else { &[2] });
        });
    }

    /// The non-linearizable outcome of [`loom_two_deletions`] exists (so that the comment
    /// there stays true): some interleaving returns 1 and 3.
    #[test]
    #[should_panic(expected = "returned 1 and 3")]
    fn loom_two_deletions_may_skip_the_second_smallest() {
        model(Some(3), || {
            let h = filled(3, &[1, 2, 3]);
            let t = thread::spawn(move || h.pop());
            let a = h.pop().expect("three elements");
            let b = t.join().unwrap().expect("three elements");
            let mut got = [a, b];
            got.sort_unstable();
            assert!(got != [1, 3], "returned 1 and 3");
        });
    }

    /// The broken twin: an insertion that releases the size lock *before* locking its bottom
    /// node. A deletion can then claim that node while it is still empty and take nothing
    /// from it; the element written afterwards sits beyond the heap's end — lost.
    #[test]
    #[should_panic(expected = "heap broken")]
    fn loom_catches_an_insertion_that_locks_its_node_too_late() {
        fn broken_insert(h: &H, item: u32) {
            let (i, me) = {
                let mut s = h.size.lock_untraced();
                s.len += 1;
                s.next_op += 1;
                (position(s.len), Tag::Moving(s.next_op))
            };
            *h.nodes[i].lock_untraced() = Slot { tag: me, item: Some(item) };
            let mut root = h.nodes[1].lock_untraced();
            if root.tag == me {
                root.tag = Tag::Available;
            }
        }
        model(Some(2), || {
            let h = leak(H::with_capacity(3));
            let t = thread::spawn(move || broken_insert(h, 1));
            let got = h.pop();
            t.join().unwrap();
            let left: Vec<u32> = if got.is_some() { vec![] } else { vec![1] };
            settle(h, &left);
        });
    }
}
