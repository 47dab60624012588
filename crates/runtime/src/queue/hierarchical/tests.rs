//! Oracles for the queue of queues: single-threaded operation sequences on random CPUs
//! against std's binary heap, concurrent random sequences against a multiset (nothing lost,
//! nothing duplicated, the two levels agreeing at quiescence, the `k` smallest for `k`
//! concurrent deletions after the insertions), and loom models with a broken twin.

use super::*;
use proptest::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

proptest! {
    #[test]
    fn matches_a_sequential_heap(m in 1usize..5, ops in proptest::collection::vec((0u8..3, 0usize..5, 0u32..30), 0..200)) {
        let q: Hierarchical<u32> = Hierarchical::new(m, 4);
        let mut o: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
        for (op, cpu, k) in ops {
            match op {
                0 => {
                    q.insert(cpu, k);
                    o.push(Reverse(k));
                }
                1 => prop_assert_eq!(q.pop(), o.pop().map(|r| r.0)),
                _ => prop_assert_eq!(q.peek(), o.peek().map(|r| r.0)),
            }
            prop_assert_eq!(q.len(), o.len());
            let mut items = q.check_quiescent().map_err(|e| TestCaseError::fail(e.to_string()))?;
            items.sort_unstable();
            let mut want: Vec<u32> = o.iter().map(|r| r.0).collect();
            want.sort_unstable();
            prop_assert_eq!(items, want);
        }
    }
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Threads insert into their own local heap (and now and then another's) and delete at
/// random; then concurrent deletions after the insertions take exactly the smallest.
#[test]
fn random_concurrent_sequences_lose_and_duplicate_nothing() {
    for round in 0..6u64 {
        let q: Hierarchical<u64> = Hierarchical::new(3, 64);
        let results: Vec<(Vec<u64>, Vec<u64>)> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4u64)
                .map(|t| {
                    let q = &q;
                    s.spawn(move || {
                        let (mut ins, mut popped) = (Vec::new(), Vec::new());
                        let mut x = mix(round * 100 + t);
                        for k in 0..2000u64 {
                            x = mix(x);
                            let v = (x % 1000) << 20 | t << 16 | k;
                            match x % 7 {
                                0..=3 => {
                                    let cpu = if x.is_multiple_of(11) { (x >> 8) as usize } else { t as usize };
                                    q.insert(cpu, v);
                                    ins.push(v);
                                }
                                4..=5 => popped.extend(q.pop()),
                                _ => {
                                    let _ = q.peek();
                                }
                            }
                        }
                        (ins, popped)
                    })
                })
                .collect();
            hs.into_iter().map(|x| x.join().unwrap()).collect()
        });
        let mut inserted: Vec<u64> = results.iter().flat_map(|r| r.0.clone()).collect();
        let mut popped: Vec<u64> = results.iter().flat_map(|r| r.1.clone()).collect();
        popped.extend(q.check_quiescent().unwrap());
        inserted.sort_unstable();
        popped.sort_unstable();
        assert_eq!(popped, inserted, "round {round}");
        let mut drained = Vec::new();
        while let Some(v) = q.pop() {
            drained.push(v);
        }
        assert!(drained.windows(2).all(|w| w[0] < w[1]));
    }
    let q: Hierarchical<u64> = Hierarchical::new(4, 300);
    let mut all: Vec<u64> = (0..1000).map(|i| mix(i) % 1_000_000 * 1000 + i).collect();
    std::thread::scope(|s| {
        for (c, part) in all.chunks(250).enumerate() {
            let q = &q;
            s.spawn(move || part.iter().for_each(|&v| q.insert(c, v)));
        }
    });
    q.check_quiescent().unwrap();
    let got: Vec<Vec<u64>> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4).map(|_| s.spawn(|| (0..150).filter_map(|_| q.pop()).collect())).collect();
        hs.into_iter().map(|x| x.join().unwrap()).collect()
    });
    assert!(got.iter().all(|g| g.windows(2).all(|w| w[0] < w[1])));
    let mut got: Vec<u64> = got.concat();
    got.sort_unstable();
    all.sort_unstable();
    assert_eq!(got, all[..600].to_vec());
    q.check_quiescent().unwrap();
}

mod loom_models {
    use super::*;
    use crate::sync::loom_model::Loom;
    use loom::thread;

    type Q = Hierarchical<u32, Loom>;

    fn leak<T>(t: T) -> &'static T {
        Box::leak(Box::new(t))
    }

    fn settle(q: &Q, want: &[u32]) {
        let mut items = q.check_quiescent().unwrap_or_else(|e| panic!("queue broken: {e}"));
        items.sort_unstable();
        assert_eq!(items, want, "queue broken: an element was lost or duplicated");
    }

    fn model(bound: Option<usize>, f: impl Fn() + Sync + Send + 'static) {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = bound;
        b.check(f);
    }

    /// An insertion on CPU 1 of a new global minimum races a deletion from CPU 0's heap.
    #[test]
    fn loom_insertion_races_a_deletion() {
        model(Some(3), || {
            let q = leak(Q::new(2, 2));
            q.insert(0, 2);
            q.insert(0, 3);
            let t = thread::spawn(move || q.insert(1, 1));
            let got = q.pop().expect("never empty");
            t.join().unwrap();
            assert!(got == 1 || got == 2, "{got}");
            let left: &[u32] = if got == 1 { &[2, 3] } else { &[1, 3] };
            settle(q, left);
        });
    }

    #[test]
    fn loom_two_deletions() {
        model(Some(3), || {
            let q = leak(Q::new(2, 2));
            q.insert(0, 1);
            q.insert(1, 2);
            q.insert(0, 3);
            let t = thread::spawn(move || q.pop());
            let a = q.pop().unwrap();
            let b = t.join().unwrap().unwrap();
            let mut got = [a, b];
            got.sort_unstable();
            assert_eq!(got, [1, 2]);
            settle(q, &[3]);
        });
    }

    #[test]
    fn loom_two_insertions_into_one_local_heap() {
        model(Some(3), || {
            let q = leak(Q::new(2, 2));
            q.insert(0, 3);
            let t = thread::spawn(move || q.insert(0, 2));
            q.insert(0, 1);
            t.join().unwrap();
            settle(q, &[1, 2, 3]);
            assert_eq!(q.peek(), Some(1));
        });
    }

    /// The broken twin: an insertion that updates the global entry after releasing its local
    /// lock. Two insertions into one local heap can then replace its global entry out of
    /// order, leaving a stale entry beside the right one.
    #[test]
    #[should_panic(expected = "queue broken")]
    fn loom_catches_a_global_update_outside_the_local_lock() {
        fn broken_insert(q: &Q, c: usize, item: u32) {
            let old = {
                let mut l = q.local[c].lock_untraced();
                let old = l.peek().copied();
                l.push(item);
                old
            };
            if old.is_none_or(|o| item < o) {
                let mut g = q.global.lock_untraced();
                if let Some(o) = old {
                    g.remove(&(o, c as u32));
                }
                g.push((item, c as u32));
            }
        }
        model(Some(2), || {
            let q = leak(Q::new(2, 2));
            q.insert(0, 3);
            let t = thread::spawn(move || broken_insert(q, 0, 2));
            broken_insert(q, 0, 1);
            t.join().unwrap();
            settle(q, &[1, 2, 3]);
        });
    }
}
