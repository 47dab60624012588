//! A per-CPU priority queue of work-stealing deques: RTWS's local queue (the RTWS paper in
//! `docs/papers.md`, §IV "Our proposal is to replace the single per-core deque of classical
//! work-stealing with a per-core priority queue, each element of which is a deque. A deque
//! holds one or more threads of the same priority. At any time, a core picks the bottom thread
//! from the highest-priority non-empty deque. If it finds its queue empty, it steals a thread
//! from the top of the highest-priority non-empty deque of the chosen core's queue"; §V Rules
//! B, C and E).
//!
//! **What is built: lock-free.** Every deque is a Chase–Lev deque (Chase & Lev, SPAA 2005, in
//! the C11 form of Lê, Pop, Cohen & Zappa Nardelli, PPoPP 2013) of fixed capacity over atomic
//! words: the owner pushes and pops at the *bottom* with plain loads and stores plus one
//! `SeqCst` fence per pop (a compare-exchange only when it takes the last item), thieves take
//! the *top* with one compare-exchange. No lock is taken anywhere in this module.
//!
//! **The priority layer.** A CPU's queue has a fixed number of *lanes* (one deque each); the
//! caller names the lane of every push (RTWS uses one lane per task: a task has at most one
//! job whose threads wait, and Rule C's "threads of the same priority" are one job's) and its
//! *rank* (the priority: smaller is higher; ties go to the lower lane). What the owner's side
//! needs:
//! * **push** (Rule B, a fork; §V (ii), a preempted local thread back to its deque): the
//!   lane's rank is published with the push that makes the lane non-empty (before the bottom
//!   is released, so a thief that sees the item sees its rank); a push into a non-empty lane
//!   of another rank is refused ([`PushError::Rank`]), as is one into a full lane;
//! * **pop** (Rule C): the owner keeps its lanes' order *privately* (an ordered set of
//!   `(rank, lane)` it alone touches, no atomics), tries them highest first and drops a lane
//!   from the set when it finds it empty (thieves emptied it): no scan of other CPUs' state
//!   and nothing shared but the one deque it pops.
//!
//! Thieves hold a [`Stealer`] (`Clone + Send + Sync`): [`Stealer::peek`] reads the rank and
//! lane of the highest-priority non-empty lane (Definition 2's "first entry in each of the
//! processor's local priority queue"), [`Stealer::steal_lane`] takes the top of a lane, and
//! [`Stealer::steal`] does both. The owner's [`Worker`] is `Send` but neither `Sync` nor
//! `Clone`: the one-owner rule of the bottom end is the type's.
//!
//! **What a thief's view is.** A peek is a read of each lane in turn, not an atomic snapshot:
//! concurrent pushes can make a higher-priority lane non-empty after it was read. A caller
//! that needs Definition 2's minimum over several CPUs at one instant excludes *pushes* (not
//! pops) while it peeks and steals: with pushes excluded, every concurrent change is a pop,
//! which only removes, so a lane's top item stays the same until it is taken and every other
//! lane's rank can only get worse — the chosen top is still the minimum at the instant the
//! steal's compare-exchange succeeds (the RTWS mechanism does this, `mechanism::rtws`).
//!
//! Generic over the platform [`Primitives`] so that the loom models below check the same code
//! at tiny size: a steal racing the owner's pops takes every item exactly once, and two broken
//! twins (the pop's last item taken without the compare-exchange; the pop without its fence)
//! are caught.

use crate::sync::{Atom, Primitives, Std};
use crossbeam_utils::CachePadded;
use std::collections::BTreeSet;
use std::marker::PhantomData;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};
use std::sync::Arc;

/// One Chase–Lev deque: `top..bottom` are its items (indices grow without bound and wrap
/// modulo the capacity; their difference read as signed is the length).
struct Lane<B: Primitives> {
    top: CachePadded<B::U64>,
    bottom: CachePadded<B::U64>,
    /// The rank of the lane's items (written by the owner only while the lane is empty).
    rank: B::U64,
    buf: Box<[B::U64]>,
}

impl<B: Primitives> Lane<B> {
    fn new(cap: usize) -> Lane<B> {
        Lane {
            top: CachePadded::new(B::U64::new(0)),
            bottom: CachePadded::new(B::U64::new(0)),
            rank: B::U64::new(0),
            buf: (0..cap).map(|_| B::U64::new(0)).collect(),
        }
    }
}

/// Deliberately broken pops for the model checker.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Broken {
    None,
    /// The last item is taken with a plain store of `top` instead of the compare-exchange.
    NoCas,
    /// The pop's `SeqCst` fence between publishing `bottom` and reading `top` is left out.
    NoFence,
}

struct Shared<B: Primitives> {
    lanes: Box<[Lane<B>]>,
    cap: u64,
    #[cfg(test)]
    broken: Broken,
}

/// The owner's handle of one CPU's queue: pushes and pops at the bottom (see the module docs).
pub struct Worker<B: Primitives = Std> {
    shared: Arc<Shared<B>>,
    /// Lanes that may hold items, in priority order (the owner's alone).
    order: BTreeSet<(u64, u32)>,
    /// Each lane's rank while it is in `order`.
    in_order: Vec<Option<u64>>,
    /// Not `Sync`: one thread owns the bottom end.
    _owner: PhantomData<std::cell::Cell<()>>,
}

/// A thief's handle of one CPU's queue: takes from the top (see the module docs).
pub struct Stealer<B: Primitives = Std> {
    shared: Arc<Shared<B>>,
}

impl<B: Primitives> Clone for Stealer<B> {
    fn clone(&self) -> Self {
        Stealer { shared: self.shared.clone() }
    }
}

/// An item taken, with its lane and the lane's rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Taken {
    pub lane: u32,
    pub rank: u64,
    pub item: u64,
}

/// What a steal found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steal {
    /// No lane (or not the lane asked for) had an item.
    Empty,
    /// Another thief or the owner took the item first: look again.
    Retry,
    Taken(Taken),
}

/// Why a push was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushError {
    /// The lane holds `capacity` items.
    Full,
    /// The lane holds items of this other rank (a deque holds threads of one priority).
    Rank(u64),
    /// No such lane.
    Lane,
}

/// A CPU's queue of `lanes` deques of `capacity` items each (each at least 1): the owner's
/// handle and a thieves' handle (clone it for each thief).
pub fn new<B: Primitives>(lanes: usize, capacity: usize) -> (Worker<B>, Stealer<B>) {
    let cap = capacity.max(1);
    let shared = Arc::new(Shared {
        lanes: (0..lanes).map(|_| Lane::new(cap)).collect(),
        cap: cap as u64,
        #[cfg(test)]
        broken: Broken::None,
    });
    let w = Worker { shared: shared.clone(), order: BTreeSet::new(), in_order: vec![None; lanes], _owner: PhantomData };
    (w, Stealer { shared })
}

/// `bottom - top` read as signed (negative while a pop has reserved the last item).
#[inline(always)]
fn len(b: u64, t: u64) -> i64 {
    b.wrapping_sub(t) as i64
}

impl<B: Primitives> Worker<B> {
    /// Rule B / §V (ii): `item` at the bottom of `lane`, whose items have rank `rank`.
    pub fn push(&mut self, lane: u32, rank: u64, item: u64) -> Result<(), PushError> {
        let l = self.shared.lanes.get(lane as usize).ok_or(PushError::Lane)?;
        let b = l.bottom.load(Relaxed);
        let t = l.top.load(Acquire);
        let n = len(b, t);
        if n >= self.shared.cap as i64 {
            return Err(PushError::Full);
        }
        if n <= 0 {
            // Empty, and no thief can change that before this push is published.
            l.rank.store(rank, Relaxed);
        } else {
            let r = l.rank.load(Relaxed);
            if r != rank {
                return Err(PushError::Rank(r));
            }
        }
        l.buf[(b % self.shared.cap) as usize].store(item, Relaxed);
        // The item and the rank before the new bottom (a thief acquires the bottom).
        B::fence(Release);
        l.bottom.store(b.wrapping_add(1), Relaxed);
        let slot = &mut self.in_order[lane as usize];
        if *slot != Some(rank) {
            if let Some(old) = slot.take() {
                self.order.remove(&(old, lane));
            }
            self.order.insert((rank, lane));
            *slot = Some(rank);
        }
        Ok(())
    }

    /// Rule C: the bottom item of the highest-priority non-empty lane.
    pub fn pop(&mut self) -> Option<Taken> {
        while let Some(&(rank, lane)) = self.order.first() {
            if let Some(item) = self.pop_lane(lane) {
                return Some(Taken { lane, rank, item });
            }
            // Empty (the last items were stolen or popped): out of the order until a push.
            self.order.pop_first();
            self.in_order[lane as usize] = None;
        }
        None
    }

    /// The rank and lane [`pop`](Self::pop) would take from now (a lane emptied by thieves
    /// since the owner's last look may be named; the pop then moves on).
    pub fn peek(&self) -> Option<(u64, u32)> {
        self.order.iter().copied().find(|&(_, lane)| {
            let l = &self.shared.lanes[lane as usize];
            len(l.bottom.load(Relaxed), l.top.load(Acquire)) > 0
        })
    }

    /// Items waiting in every lane (exact for the owner but for concurrent steals).
    pub fn len(&self) -> usize {
        waiting(&self.shared)
    }

    /// Whether no lane holds an item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The Chase–Lev pop of one lane.
    fn pop_lane(&mut self, lane: u32) -> Option<u64> {
        let l = &self.shared.lanes[lane as usize];
        let b = l.bottom.load(Relaxed).wrapping_sub(1);
        // Reserve the bottom item before looking at the top ...
        l.bottom.store(b, Relaxed);
        // ... and order that store before the load of `top` (against a thief's fence between
        // its load of `top` and its load of `bottom`): either the thief sees the reservation
        // or this pop sees the thief's increment.
        #[cfg(test)]
        let fence = self.shared.broken != Broken::NoFence;
        #[cfg(not(test))]
        let fence = true;
        if fence {
            B::fence(SeqCst);
        }
        let t = l.top.load(Relaxed);
        let n = len(b, t);
        if n < 0 {
            // Empty: undo the reservation.
            l.bottom.store(b.wrapping_add(1), Relaxed);
            return None;
        }
        let item = l.buf[(b % self.shared.cap) as usize].load(Relaxed);
        if n > 0 {
            // Thieves stop at the reservation: this item is the owner's.
            return Some(item);
        }
        // The last item: a thief may be taking it; the compare-exchange decides.
        #[cfg(test)]
        let won = if self.shared.broken == Broken::NoCas {
            l.top.store(t.wrapping_add(1), Relaxed);
            true
        } else {
            l.top.compare_exchange(t, t.wrapping_add(1), SeqCst, Relaxed).is_ok()
        };
        #[cfg(not(test))]
        let won = l.top.compare_exchange(t, t.wrapping_add(1), SeqCst, Relaxed).is_ok();
        l.bottom.store(b.wrapping_add(1), Relaxed);
        won.then_some(item)
    }
}

fn waiting<B: Primitives>(s: &Shared<B>) -> usize {
    s.lanes.iter().map(|l| len(l.bottom.load(Acquire), l.top.load(Acquire)).max(0) as usize).sum()
}

impl<B: Primitives> Stealer<B> {
    /// The rank and lane of the highest-priority non-empty lane (ties to the lower lane), as
    /// read lane by lane (see the module docs for when that is a consistent view).
    pub fn peek(&self) -> Option<(u64, u32)> {
        let mut best: Option<(u64, u32)> = None;
        for (i, l) in self.shared.lanes.iter().enumerate() {
            let t = l.top.load(Acquire);
            B::fence(SeqCst);
            let b = l.bottom.load(Acquire);
            if len(b, t) > 0 {
                let r = l.rank.load(Relaxed);
                if best.is_none_or(|bst| (r, i as u32) < bst) {
                    best = Some((r, i as u32));
                }
            }
        }
        best
    }

    /// Rule E: the top item of `lane`.
    pub fn steal_lane(&self, lane: u32) -> Steal {
        let Some(l) = self.shared.lanes.get(lane as usize) else { return Steal::Empty };
        let t = l.top.load(Acquire);
        // Against the owner's pop fence (see `Worker::pop_lane`).
        B::fence(SeqCst);
        let b = l.bottom.load(Acquire);
        if len(b, t) <= 0 {
            return Steal::Empty;
        }
        // Read before the compare-exchange; kept only if it succeeds (the owner rewrites a
        // slot or the rank only after `top` has passed it, and then the exchange fails).
        let rank = l.rank.load(Relaxed);
        let item = l.buf[(t % self.shared.cap) as usize].load(Relaxed);
        match l.top.compare_exchange(t, t.wrapping_add(1), SeqCst, Relaxed) {
            Ok(_) => Steal::Taken(Taken { lane, rank, item }),
            Err(_) => Steal::Retry,
        }
    }

    /// Rule E on one CPU: the top item of its highest-priority non-empty lane.
    pub fn steal(&self) -> Steal {
        match self.peek() {
            Some((_, lane)) => match self.steal_lane(lane) {
                Steal::Empty => Steal::Retry,
                s => s,
            },
            None => Steal::Empty,
        }
    }

    /// Items waiting in every lane (a snapshot lane by lane).
    pub fn len(&self) -> usize {
        waiting(&self.shared)
    }

    /// Whether no lane holds an item (as read now).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handles' ownership: the worker may move to its thread but not be shared; thieves'
    /// handles are shared and cloned.
    #[test]
    fn handles_have_the_right_auto_traits() {
        fn send<T: Send>() {}
        fn sync_clone<T: Send + Sync + Clone>() {}
        send::<Worker>();
        sync_clone::<Stealer>();
        // `Worker: !Sync` and `!Clone` are checked by the compiler where it matters; here the
        // marker that makes it so is in place.
        let (w, _) = new::<Std>(1, 1);
        let _: &PhantomData<std::cell::Cell<()>> = &w._owner;
    }

    /// Owner and thief ends, the priority order (rank, then lane), refusals, and a sequential
    /// oracle: random pushes, pops and steals against a plain `VecDeque` per lane.
    #[test]
    fn sequential_oracle() {
        use std::collections::VecDeque;
        let (mut w, s) = new::<Std>(3, 4);
        w.push(1, 20, 10).unwrap();
        w.push(1, 20, 11).unwrap();
        w.push(2, 10, 12).unwrap();
        w.push(0, 20, 13).unwrap();
        assert_eq!(w.push(1, 30, 9), Err(PushError::Rank(20)));
        assert_eq!(w.push(7, 30, 9), Err(PushError::Lane));
        // Highest priority: rank 10 (lane 2); then rank 20, lane 0 before lane 1.
        assert_eq!((s.peek(), w.peek()), (Some((10, 2)), Some((10, 2))));
        assert_eq!(w.pop(), Some(Taken { lane: 2, rank: 10, item: 12 }));
        assert_eq!(s.steal(), Steal::Taken(Taken { lane: 0, rank: 20, item: 13 }));
        // The owner's view skips a lane a thief emptied.
        assert_eq!(w.peek(), Some((20, 1)));
        // Lane 1: the thief takes the top (10), the owner the bottom (11).
        assert_eq!(s.steal_lane(1), Steal::Taken(Taken { lane: 1, rank: 20, item: 10 }));
        assert_eq!(w.pop(), Some(Taken { lane: 1, rank: 20, item: 11 }));
        assert_eq!((w.pop(), s.steal(), w.len()), (None, Steal::Empty, 0));
        for k in 0..4 {
            w.push(0, 5, k).unwrap();
        }
        assert_eq!(w.push(0, 5, 4), Err(PushError::Full));
        // An emptied lane takes a new rank.
        while w.pop().is_some() {}
        w.push(0, 99, 1).unwrap();
        assert_eq!(s.peek(), Some((99, 0)));
        assert_eq!(w.pop(), Some(Taken { lane: 0, rank: 99, item: 1 }));

        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let (mut w, s) = new::<Std>(3, 5);
        let mut model: Vec<(u64, VecDeque<u64>)> = vec![(0, VecDeque::new()); 3];
        let best = |m: &Vec<(u64, VecDeque<u64>)>| {
            (0..3u32).filter(|&l| !m[l as usize].1.is_empty()).min_by_key(|&l| (m[l as usize].0, l))
        };
        for step in 0..20_000u64 {
            match rnd(3) {
                0 => {
                    let lane = rnd(3) as u32;
                    let rank = rnd(4);
                    let (r, q) = &mut model[lane as usize];
                    let want = if q.len() == 5 {
                        Err(PushError::Full)
                    } else if !q.is_empty() && *r != rank {
                        Err(PushError::Rank(*r))
                    } else {
                        *r = rank;
                        q.push_back(step);
                        Ok(())
                    };
                    assert_eq!(w.push(lane, rank, step), want);
                }
                1 => {
                    let want = best(&model).map(|l| {
                        let (r, q) = &mut model[l as usize];
                        Taken { lane: l, rank: *r, item: q.pop_back().unwrap() }
                    });
                    assert_eq!(w.pop(), want);
                }
                _ => {
                    let want = match best(&model) {
                        Some(l) => {
                            let (r, q) = &mut model[l as usize];
                            Steal::Taken(Taken { lane: l, rank: *r, item: q.pop_front().unwrap() })
                        }
                        None => Steal::Empty,
                    };
                    assert_eq!(s.steal(), want);
                }
            }
            assert_eq!(w.len(), model.iter().map(|(_, q)| q.len()).sum::<usize>());
        }
    }

    mod loom_models {
        use super::super::*;
        use crate::sync::loom_model::Loom;
        use loom::thread;

        /// One owner and one thief over one lane holding items 1 and 2 (and, with `two_lanes`,
        /// item 3 of a higher priority in lane 1): the thief steals until it finds nothing, the
        /// owner pops until it finds nothing, concurrently. Every item is taken exactly once;
        /// the thief takes a lane's top, the owner its bottom.
        fn model(broken: Broken, two_lanes: bool) {
            let mut b = loom::model::Builder::new();
            b.preemption_bound = Some(3);
            b.check(move || {
                let lanes = if two_lanes { 2 } else { 1 };
                // `new`'s construction with the broken mode set before any handle is shared.
                let shared =
                    Arc::new(Shared::<Loom> { lanes: (0..lanes).map(|_| Lane::new(2)).collect(), cap: 2, broken });
                let mut w = Worker::<Loom> {
                    shared: shared.clone(),
                    order: BTreeSet::new(),
                    in_order: vec![None; lanes],
                    _owner: PhantomData,
                };
                let s = Stealer { shared };
                w.push(0, 20, 1).unwrap();
                w.push(0, 20, 2).unwrap();
                if two_lanes {
                    w.push(1, 10, 3).unwrap();
                }
                let thief = thread::spawn(move || {
                    let mut got = Vec::new();
                    loop {
                        match s.steal() {
                            Steal::Taken(t) => got.push(t),
                            Steal::Retry => thread::yield_now(),
                            Steal::Empty => return got,
                        }
                    }
                });
                let mut mine = Vec::new();
                while let Some(t) = w.pop() {
                    mine.push(t);
                }
                let theirs = thief.join().unwrap();
                let mut all: Vec<u64> = mine.iter().chain(theirs.iter()).map(|t| t.item).collect();
                all.sort_unstable();
                let want: &[u64] = if two_lanes { &[1, 2, 3] } else { &[1, 2] };
                assert!(all.len() <= want.len(), "an item was taken twice: {mine:?} {theirs:?}");
                assert_eq!(all, want, "an item was lost: {mine:?} {theirs:?}");
                // Ends: the owner's lane-0 items in bottom-first order, the thief's top-first.
                let lane0 = |v: &Vec<Taken>| v.iter().filter(|t| t.lane == 0).map(|t| t.item).collect::<Vec<_>>();
                assert!(lane0(&mine).windows(2).all(|p| p[0] > p[1]), "{mine:?}");
                assert!(lane0(&theirs).windows(2).all(|p| p[0] < p[1]), "{theirs:?}");
                for t in mine.iter().chain(theirs.iter()) {
                    assert_eq!(t.rank, if t.lane == 0 { 20 } else { 10 });
                }
            });
        }

        #[test]
        fn loom_a_steal_racing_local_pops_takes_each_item_once() {
            model(Broken::None, false);
        }

        #[test]
        fn loom_two_lanes_each_item_once_with_its_rank() {
            model(Broken::None, true);
        }

        /// The broken twin: the owner takes the last item without the compare-exchange.
        #[test]
        #[should_panic(expected = "an item was taken twice")]
        fn loom_catches_the_last_item_taken_without_the_compare_exchange() {
            model(Broken::NoCas, false);
        }

        /// The broken twin: the pop without its fence (loom's weak memory lets the owner read a
        /// stale `top` while the thief reads a stale `bottom`).
        #[test]
        #[should_panic(expected = "an item was taken twice")]
        fn loom_catches_the_pop_without_its_fence() {
            model(Broken::NoFence, false);
        }
    }
}
