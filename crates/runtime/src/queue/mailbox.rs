//! A client → scheduler mailbox: a bounded multi-producer, single-consumer FIFO of small
//! messages with wait-free writers — G-EDF-MP's shared mailbox (Cerqueira, Vanga &
//! Brandenburg, RTAS 2014, §III-B "Shared mailbox": Feather-Trace buffers with wait-free
//! writes, one per socket, each message a callback, the sender and the task).
//!
//! **Protocol** (a sequence number per slot, in the style of Vyukov's bounded queue, with the
//! producers' tickets taken by `fetch_add` as Feather-Trace's buffers take theirs):
//! * slot `i` starts with `seq = i`;
//! * a producer takes ticket `t` (`tail.fetch_add(1)`: one wait-free instruction), waits for
//!   `slot[t % N].seq == t` (the slot is free in this lap — true at once unless the mailbox
//!   is full), writes the message words (Relaxed), then publishes with
//!   `seq.store(t + 1, Release)`;
//! * the one consumer, at `head = h`, reads `slot[h % N]` when `seq == h + 1` (Acquire), then
//!   frees it for the next lap with `seq.store(h + N, Release)` and advances `head`. A slot
//!   whose ticket is taken but not yet published stops the consumer there: FIFO order in
//!   ticket order, and the late producer's notification brings the consumer back.
//!
//! **Wait-freedom**: a write is one `fetch_add` and four stores as long as the mailbox has
//! room. When `N` tickets are outstanding the producer waits for the consumer (the only
//! non-wait-free path). G-EDF-MP sizes mailboxes so that this does not happen: a client has
//! at most a few messages in flight (one per completion of a job the scheduling processor
//! linked to it, and it links at most once per handled event), and the default size is many
//! times the clients per mailbox. Such a wait is not counted: it would be spent inside the
//! client's `schedule`, so a run shows it in its Δsch samples.
//!
//! **Handles** (as tokio's `Local`/`Steal` split a work-stealing queue by who may call what):
//! [`channel`] gives the shared side, an `Arc<Mailbox>` that any number of producers write
//! through ([`Mailbox::push`], `&self`), and the one [`Reader`], which owns the consumer's
//! position (a plain integer, no atomic) and is the only way to take messages
//! ([`Reader::pop`], `&mut self`; not `Clone`): the single-consumer rule is the type's, not a
//! comment's.
//!
//! Generic over the platform [`Primitives`] so that the loom models below check it over every
//! interleaving at tiny size (no lost, duplicated or reordered message per producer), with a
//! deliberately broken twin (publication before the payload) that the model must catch.

use crate::sync::{Atom, AtomAdd, Primitives, Std};
use crossbeam_utils::CachePadded;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// One message: an operation code, its sender (a client index), a job (task, sequence
/// number) and the sender's trace stamp at the write (for the request latency Δreq).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Msg {
    pub op: u32,
    pub sender: u32,
    pub task: u32,
    pub seq: u32,
    pub stamp: u64,
}

struct Slot<B: Primitives> {
    seq: B::U64,
    /// `op << 32 | sender`.
    w0: B::U64,
    /// `task << 32 | seq`.
    w1: B::U64,
    stamp: B::U64,
}

/// The shared side of a bounded MPSC FIFO of [`Msg`] with wait-free producers (see the module
/// docs): what producers write through.
pub struct Mailbox<B: Primitives = Std> {
    slots: Box<[CachePadded<Slot<B>>]>,
    tail: CachePadded<B::U64>,
    /// Broken twin for the model checker: publish before writing the payload.
    #[cfg(test)]
    broken: bool,
}

/// The consumer's side of a [`Mailbox`]: its position, owned (one per mailbox, see [`channel`]).
pub struct Reader<B: Primitives = Std> {
    mailbox: Arc<Mailbox<B>>,
    head: u64,
}

/// A mailbox of `capacity` slots (at least 2: with one slot a published message, `seq = t + 1`,
/// would read as free for the next lap, `seq = t + N`): the shared side for the producers and
/// the one reader.
pub fn channel<B: Primitives>(capacity: usize) -> (Arc<Mailbox<B>>, Reader<B>) {
    let mailbox = Arc::new(Mailbox::new(capacity));
    (mailbox.clone(), Reader { mailbox, head: 0 })
}

impl<B: Primitives> Mailbox<B> {
    fn new(capacity: usize) -> Mailbox<B> {
        let n = capacity.max(2);
        let slots = (0..n)
            .map(|i| {
                CachePadded::new(Slot {
                    seq: B::U64::new(i as u64),
                    w0: B::U64::new(0),
                    w1: B::U64::new(0),
                    stamp: B::U64::new(0),
                })
            })
            .collect();
        Mailbox {
            slots,
            tail: CachePadded::new(B::U64::new(0)),
            #[cfg(test)]
            broken: false,
        }
    }

    /// Writes `m` (any thread). Wait-free while the mailbox has room; otherwise waits for
    /// the consumer to free the slot of this ticket.
    pub fn push(&self, m: Msg) {
        let n = self.slots.len() as u64;
        let t = self.tail.fetch_add(1, Ordering::Relaxed);
        let slot = &self.slots[(t % n) as usize];
        let mut spins = 0u32;
        while slot.seq.load(Ordering::Acquire) != t {
            spins = spins.wrapping_add(1);
            B::spin_hint(spins);
        }
        #[cfg(test)]
        if self.broken {
            slot.seq.store(t + 1, Ordering::Release);
        }
        slot.w0.store((m.op as u64) << 32 | m.sender as u64, Ordering::Relaxed);
        slot.w1.store((m.task as u64) << 32 | m.seq as u64, Ordering::Relaxed);
        slot.stamp.store(m.stamp, Ordering::Relaxed);
        slot.seq.store(t + 1, Ordering::Release);
    }

    /// Whether the next write would wait for the consumer (its ticket's slot not yet free).
    #[cfg(test)]
    fn full(&self) -> bool {
        let t = self.tail.load(Ordering::Relaxed);
        self.slots[(t % self.slots.len() as u64) as usize].seq.load(Ordering::Acquire) != t
    }
}

impl<B: Primitives> Reader<B> {
    /// Takes the oldest published message.
    pub fn pop(&mut self) -> Option<Msg> {
        let mb = &*self.mailbox;
        let n = mb.slots.len() as u64;
        let h = self.head;
        let slot = &mb.slots[(h % n) as usize];
        if slot.seq.load(Ordering::Acquire) != h + 1 {
            return None;
        }
        let w0 = slot.w0.load(Ordering::Relaxed);
        let w1 = slot.w1.load(Ordering::Relaxed);
        let stamp = slot.stamp.load(Ordering::Relaxed);
        slot.seq.store(h + n, Ordering::Release);
        self.head = h + 1;
        Some(Msg { op: (w0 >> 32) as u32, sender: w0 as u32, task: (w1 >> 32) as u32, seq: w1 as u32, stamp })
    }

    /// Whether a ticket was taken that the consumer has not consumed (a message published or
    /// being written).
    pub fn pending(&self) -> bool {
        self.mailbox.tail.load(Ordering::Acquire) != self.head
    }
}

#[cfg(test)]
mod tests {
    //! Oracle: single-threaded random push/pop sequences against `VecDeque` (within the
    //! capacity); with threads: every producer's messages arrive once, in order.
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    fn msg(sender: u32, k: u32) -> Msg {
        Msg { op: k % 3, sender, task: k, seq: k.wrapping_mul(7), stamp: (sender as u64) << 40 | k as u64 }
    }

    proptest! {
        #[test]
        fn equals_a_plain_fifo(cap in 2usize..6, ops in proptest::collection::vec(any::<bool>(), 0..200)) {
            let (mb, mut rx) = channel::<Std>(cap);
            let mut reference = VecDeque::new();
            let mut k = 0;
            for push in ops {
                if push && reference.len() < cap {
                    // Within the capacity a write never waits.
                    prop_assert!(!mb.full());
                    let m = msg(k % 4, k);
                    mb.push(m);
                    reference.push_back(m);
                    k += 1;
                } else {
                    prop_assert_eq!(rx.pop(), reference.pop_front());
                }
                prop_assert_eq!(rx.pending(), !reference.is_empty());
            }
            prop_assert_eq!(mb.full(), reference.len() == cap);
        }
    }

    #[test]
    fn threads_lose_duplicate_and_reorder_nothing() {
        let (mb, mut rx) = channel::<Std>(4); // small: producers do wait for room
        let producers = 3u32;
        let each = 3_000u32;
        std::thread::scope(|s| {
            for p in 0..producers {
                let mb = &*mb;
                s.spawn(move || (0..each).for_each(|k| mb.push(msg(p, k))));
            }
            let mut next = vec![0u32; producers as usize];
            let mut got = 0;
            while got < producers * each {
                match rx.pop() {
                    Some(m) => {
                        assert_eq!(m, msg(m.sender, next[m.sender as usize]), "lost, duplicated or reordered");
                        next[m.sender as usize] += 1;
                        got += 1;
                    }
                    None => std::hint::spin_loop(),
                }
            }
            assert!(!rx.pending() && rx.pop().is_none());
        });
    }

    mod loom_models {
        use super::super::*;
        use crate::sync::loom_model::Loom;
        use loom::thread;

        fn leak<T>(t: T) -> &'static T {
            Box::leak(Box::new(t))
        }

        fn msg(sender: u32, k: u32) -> Msg {
            Msg { op: 1 + k, sender, task: 10 + k, seq: 20 + k, stamp: 30 + k as u64 }
        }

        /// Producers (each sends `counts[p]` messages) and the consumer; `cap` slots.
        fn model(cap: usize, broken: bool, counts: &'static [u32]) {
            let mut b = loom::model::Builder::new();
            b.preemption_bound = Some(3);
            b.check(move || {
                let mut mb: Mailbox<Loom> = Mailbox::new(cap);
                mb.broken = broken;
                let mb = Arc::new(mb);
                let mut rx = Reader { mailbox: mb.clone(), head: 0 };
                let mb = leak(mb);
                let hs: Vec<_> = (0..counts.len() as u32)
                    .map(|p| thread::spawn(move || (0..counts[p as usize]).for_each(|k| mb.push(msg(p, k)))))
                    .collect();
                let total: u32 = counts.iter().sum();
                let mut next = vec![0u32; counts.len()];
                let mut got = 0;
                while got < total {
                    match rx.pop() {
                        Some(m) => {
                            assert_eq!(m, msg(m.sender, next[m.sender as usize]), "lost, duplicated or reordered");
                            next[m.sender as usize] += 1;
                            got += 1;
                        }
                        None => thread::yield_now(),
                    }
                }
                for h in hs {
                    h.join().unwrap();
                }
                assert!(rx.pop().is_none() && !rx.pending());
            });
        }

        #[test]
        fn loom_mailbox_delivers_each_message_once_in_order() {
            model(4, false, &[2, 1]);
        }

        /// With two slots the third write finds the mailbox full unless the consumer was first.
        #[test]
        fn loom_mailbox_full_waits_for_the_consumer() {
            model(2, false, &[3]);
        }

        /// The broken twin (slot published before its payload) must be caught.
        #[test]
        #[should_panic]
        fn loom_catches_publication_before_the_payload() {
            model(4, true, &[2, 1]);
        }
    }
}
