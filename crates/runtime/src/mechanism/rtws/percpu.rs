//! RTWS's per-CPU state outside the global lock (`deques=lockfree`): the encoding of a deque
//! item and what it runs as, what each CPU runs ([`RunSlot`], a single-writer sequence lock
//! the §V check reads), and the cells only a CPU's own thread opens (its deque's owner handle,
//! its scratch list of readied successors).

use crate::queue::ws_deque::{Taken, Worker};
use crate::sync::{Primitives, Std};
use rtsched_policy::rtws::{Origin, Running};
use rtsched_policy::Prio;
use std::cell::UnsafeCell;
use std::sync::atomic::{fence, AtomicU64, Ordering};

/// A deque item: job number, thread slot and whether the thread is the job itself (a region
/// of one thread) or a locally generated one.
pub(super) fn item(job: u32, slot: u32, origin: Origin) -> u64 {
    (job as u64) << 32 | (slot as u64) << 1 | (origin == Origin::Job) as u64
}

/// What an item taken from `cpu`'s queue (by its owner or, `stolen`, a thief) runs as.
pub(super) fn running_of(t: Taken, stolen: bool) -> Running {
    let origin = if stolen {
        Origin::Stolen
    } else if t.item & 1 == 1 {
        Origin::Job
    } else {
        Origin::Local
    };
    Running {
        prio: Prio { key: t.rank, task: t.lane, job: (t.item >> 32) as u32 },
        thread: ((t.item & 0xffff_ffff) >> 1) as u32,
        origin,
    }
}

/// What one CPU runs, written by that CPU alone and read by any (a sequence lock: odd while
/// the owner writes; a reader retries until it reads one even value around its reads).
pub(super) struct RunSlot {
    seq: AtomicU64,
    /// Priority key; `task << 32 | job`; `thread << 2 | origin` with origin 1 = job, 2 =
    /// local, 3 = stolen (0: idle).
    w: [AtomicU64; 3],
}

impl RunSlot {
    pub(super) fn new() -> RunSlot {
        RunSlot { seq: AtomicU64::new(0), w: [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)] }
    }

    /// Precondition: the caller is this CPU's thread (the one writer).
    pub(super) fn set(&self, r: Option<Running>) {
        let words = match r {
            None => [0, 0, 0],
            Some(r) => {
                let o = match r.origin {
                    Origin::Job => 1,
                    Origin::Local => 2,
                    Origin::Stolen => 3,
                };
                [r.prio.key, (r.prio.task as u64) << 32 | r.prio.job as u64, (r.thread as u64) << 2 | o]
            }
        };
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        for (a, v) in self.w.iter().zip(words) {
            a.store(v, Ordering::Relaxed);
        }
        self.seq.store(s.wrapping_add(2), Ordering::Release);
    }

    pub(super) fn get(&self) -> Option<Running> {
        let mut spins = 0u32;
        let words = loop {
            let s1 = self.seq.load(Ordering::Acquire);
            let words = [0, 1, 2].map(|i| self.w[i].load(Ordering::Relaxed));
            fence(Ordering::Acquire);
            let s2 = self.seq.load(Ordering::Relaxed);
            if s1 == s2 && s1 & 1 == 0 {
                break words;
            }
            spins = spins.wrapping_add(1);
            Std::spin_hint(spins);
        };
        let origin = match words[2] & 3 {
            0 => return None,
            1 => Origin::Job,
            2 => Origin::Local,
            _ => Origin::Stolen,
        };
        Some(Running {
            prio: Prio { key: words[0], task: (words[1] >> 32) as u32, job: words[1] as u32 },
            thread: (words[2] >> 2) as u32,
            origin,
        })
    }
}

/// The owner's handle of a CPU's queue, in a cell only that CPU's thread opens.
pub(super) struct Owner(pub(super) UnsafeCell<Worker>);

// SAFETY: `owners[c]` is opened only inside `schedule` called with `ctx.cpu() == c` (see
// `Rtws::owner`), and the plugin contract runs one thread's callbacks on that thread alone,
// never overlapping: the cell is never accessed from two threads at once. `Worker` is `Send`.
unsafe impl Sync for Owner {}

/// A CPU's scratch list of readied successors, in a cell only that CPU's thread opens.
pub(super) struct ReadyBuf(pub(super) UnsafeCell<Vec<u32>>);

// SAFETY: as for `Owner`: `ready_bufs[c]` is opened only inside `schedule` called with
// `ctx.cpu() == c`, one call at a time, so never from two threads at once. `Vec<u32>` is `Send`.
unsafe impl Sync for ReadyBuf {}
