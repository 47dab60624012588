//! The two cross-CPU primitives: a traced spin lock and the reschedule "IPI".
//!
//! A user-space worker cannot take an interrupt, so a reschedule IPI is a per-CPU atomic flag
//! that the target polls at fine grain (while running a job body, see `body`) plus a futex
//! wake-up when the target sleeps idle. Seed 000 §IV-A: Δipi is the time from the send to the
//! moment the target notices it; the sender stamps the request with the trace counter and
//! the target records `IpiNoticed` with that stamp.
//!
//! Sleep/wake protocol (no lost wake-ups): the sleeper stores `sleeping = 1`, issues a SeqCst
//! fence and calls `FUTEX_WAIT(flag, 0)`, which atomically re-checks `flag == 0` before it
//! sleeps; the sender stores `flag = 1`, issues a SeqCst fence and reads `sleeping`, waking if
//! it is 1. The two fences are totally ordered, so either the sender's read comes after the
//! sleeper's fence (it sees `sleeping == 1` and wakes) or the futex's re-check comes after the
//! sender's fence (it sees `flag == 1` and returns at once). Fences rather than SeqCst
//! accesses: both are correct under the Rust (C++20) model and cost one full barrier per side
//! on x86, but the model checker (loom, tests below) implements the total order only for
//! fences and would report a false lost wake-up for SeqCst loads and stores.
//!
//! **Model checking.** Both primitives are generic over a [`Primitives`] of atomics and futex
//! calls: [`Std`] (the default type parameter — the real atomics and the real futex, zero
//! cost) and, in this module's tests, a loom backend whose futex is a mutex + condition
//! variable that keeps `FUTEX_WAIT`'s atomic re-check. The tests check mutual exclusion, no
//! lost wake-up and the `sent` stamp over every interleaving of small cases, and show that
//! deliberately broken variants are caught.

use crate::tracer::{RecKind, TraceBuffer};
use crossbeam_utils::CachePadded;
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::Ordering;

/// An atomic cell of `T` (the subset of `std::sync::atomic` the primitives use).
pub trait Atom<T: Copy>: Send + Sync {
    fn new(v: T) -> Self;
    fn load(&self, o: Ordering) -> T;
    fn store(&self, v: T, o: Ordering);
    fn swap(&self, v: T, o: Ordering) -> T;
    fn compare_exchange(&self, cur: T, new: T, s: Ordering, f: Ordering) -> Result<T, T>;
    fn fetch_or(&self, v: T, o: Ordering) -> T;
    fn fetch_and(&self, v: T, o: Ordering) -> T;
}

/// Wrapping arithmetic on an atomic integer (wait-free on x86: `lock xadd`), for counters
/// such as the mailbox's (`queue::mailbox`).
pub trait AtomAdd<T: Copy>: Atom<T> {
    fn fetch_add(&self, v: T, o: Ordering) -> T;
    fn fetch_sub(&self, v: T, o: Ordering) -> T;
}

/// Atomics, fences and the futex: what the primitives need from the platform.
pub trait Primitives: 'static {
    type U32: Atom<u32> + AtomAdd<u32>;
    type U64: Atom<u64> + AtomAdd<u64>;
    type Bool: Atom<bool>;
    fn fence(o: Ordering);
    /// `FUTEX_WAIT`: sleeps unless `*word != expected`, checked atomically with going to
    /// sleep; returns on a wake-up, after `timeout_ns`, or spuriously.
    fn futex_wait(word: &Self::U32, expected: u32, timeout_ns: u64);
    /// `FUTEX_WAKE` of every waiter on `word`.
    fn futex_wake(word: &Self::U32);
    /// One iteration of a spin-wait (`spins` so far).
    fn spin_hint(spins: u32);
}

macro_rules! std_atom {
    ($t:ty, $a:ty) => {
        impl Atom<$t> for $a {
            #[inline(always)]
            fn new(v: $t) -> Self {
                <$a>::new(v)
            }
            #[inline(always)]
            fn load(&self, o: Ordering) -> $t {
                <$a>::load(self, o)
            }
            #[inline(always)]
            fn store(&self, v: $t, o: Ordering) {
                <$a>::store(self, v, o)
            }
            #[inline(always)]
            fn swap(&self, v: $t, o: Ordering) -> $t {
                <$a>::swap(self, v, o)
            }
            #[inline(always)]
            fn compare_exchange(&self, c: $t, n: $t, s: Ordering, f: Ordering) -> Result<$t, $t> {
                <$a>::compare_exchange(self, c, n, s, f)
            }
            #[inline(always)]
            fn fetch_or(&self, v: $t, o: Ordering) -> $t {
                <$a>::fetch_or(self, v, o)
            }
            #[inline(always)]
            fn fetch_and(&self, v: $t, o: Ordering) -> $t {
                <$a>::fetch_and(self, v, o)
            }
        }
    };
}
std_atom!(u32, std::sync::atomic::AtomicU32);
std_atom!(u64, std::sync::atomic::AtomicU64);
std_atom!(bool, std::sync::atomic::AtomicBool);

macro_rules! std_add {
    ($t:ty, $a:ty) => {
        impl AtomAdd<$t> for $a {
            #[inline(always)]
            fn fetch_add(&self, v: $t, o: Ordering) -> $t {
                <$a>::fetch_add(self, v, o)
            }
            #[inline(always)]
            fn fetch_sub(&self, v: $t, o: Ordering) -> $t {
                <$a>::fetch_sub(self, v, o)
            }
        }
    };
}
std_add!(u32, std::sync::atomic::AtomicU32);
std_add!(u64, std::sync::atomic::AtomicU64);

/// The real platform: `std` atomics and the Linux futex.
#[derive(Debug, Default, Clone, Copy)]
pub struct Std;

impl Primitives for Std {
    type U32 = std::sync::atomic::AtomicU32;
    type U64 = std::sync::atomic::AtomicU64;
    type Bool = std::sync::atomic::AtomicBool;
    #[inline(always)]
    fn fence(o: Ordering) {
        std::sync::atomic::fence(o)
    }
    fn futex_wait(word: &Self::U32, expected: u32, timeout_ns: u64) {
        futex_wait(word, expected, timeout_ns)
    }
    fn futex_wake(word: &Self::U32) {
        futex_wake(word)
    }
    #[inline(always)]
    fn spin_hint(spins: u32) {
        // After many failed spins yield, so a run forced onto shared cores still progresses.
        if spins & 4095 == 0 {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Request bit: reschedule (the "IPI").
const RESCHED: u32 = 1;
/// Request bit: a notification (mailbox, timer change) that does not deschedule a running job.
const NOTIFY: u32 = 2;
/// Request bit: a user `Event` this thread's suspended job waits on was signalled
/// ([`CpuSignal::event`]); no plugin callback, the worker only polls its sleepers.
const EVENT: u32 = 4;

/// One thread's request word: a reschedule request (the "IPI", bit 1) and a notification
/// (bit 2) share one futex word, so that a sleeping thread wakes for either.
pub struct CpuSignal<B: Primitives = Std> {
    flag: CachePadded<B::U32>,
    sleeping: B::U32,
    /// Counter value of the oldest unnoticed remote reschedule request (0 = none).
    sent: B::U64,
}

impl<B: Primitives> Default for CpuSignal<B> {
    fn default() -> Self {
        CpuSignal { flag: CachePadded::new(B::U32::new(0)), sleeping: B::U32::new(0), sent: B::U64::new(0) }
    }
}

impl std::fmt::Debug for CpuSignal<Std> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuSignal")
            .field("flag", &self.flag.load(Ordering::Relaxed))
            .field("sleeping", &self.sleeping.load(Ordering::Relaxed))
            .field("sent", &self.sent.load(Ordering::Relaxed))
            .finish()
    }
}

impl CpuSignal<Std> {
    pub fn new() -> CpuSignal {
        CpuSignal::default()
    }
}

impl<B: Primitives> CpuSignal<B> {
    /// A remote CPU asks this one to reschedule ("sends an IPI"); `stamp` is the sender's
    /// trace counter value (non-zero).
    pub fn send(&self, stamp: u64) {
        if self.send_deferred(stamp) {
            B::futex_wake(&self.flag);
        }
    }

    /// [`send`](Self::send) without the wake-up: returns whether the target sleeps, in which
    /// case the caller must [`kick`](Self::kick) it later (e.g. after leaving a lock). Waking
    /// late is safe: the flag is already set, so a sleeper that has not yet slept returns at
    /// once from FUTEX_WAIT's re-check, and one that sleeps is woken by the kick.
    pub fn send_deferred(&self, stamp: u64) -> bool {
        // The stamp is published before the flag (Release). Every write of the flag is a
        // read-modify-write, so the flag's writes form one release sequence: the `take` whose
        // RMW consumes this request (Acquire) synchronises with this send even when a later
        // request set the flag again, and so takes the stamp with it. With a plain store
        // here, loom finds an execution (legal in the language model, not on x86) in which
        // the request is consumed but its stamp is left behind, to be charged to the next,
        // unrelated request as a huge Δipi.
        let _ = self.sent.compare_exchange(0, stamp.max(1), Ordering::Relaxed, Ordering::Relaxed);
        self.flag.fetch_or(RESCHED, Ordering::Release);
        B::fence(Ordering::SeqCst);
        self.sleeping.load(Ordering::Relaxed) != 0
    }

    /// Notifies this thread (a mailbox has messages, a timer moved): it calls the plugin's
    /// `notified` at its next poll point, without descheduling a running job. Returns whether
    /// the target sleeps (then [`kick`](Self::kick) it, as for [`send_deferred`](Self::send_deferred)).
    pub fn notify_deferred(&self) -> bool {
        self.flag.fetch_or(NOTIFY, Ordering::Release);
        B::fence(Ordering::SeqCst);
        self.sleeping.load(Ordering::Relaxed) != 0
    }

    /// A user `Event` that a job suspended by this worker waits on was signalled (by any
    /// thread, after it stored the signal): sets the event bit and wakes the worker if it
    /// sleeps, so that it polls its sleepers at once instead of at its next timeout. The same
    /// handshake as [`notify_deferred`](Self::notify_deferred) + [`kick`](Self::kick): the bit
    /// is set before the fence and the sleeper re-checks the word after its own, so no wake-up
    /// is lost.
    pub fn event(&self) {
        self.flag.fetch_or(EVENT, Ordering::Release);
        B::fence(Ordering::SeqCst);
        if self.sleeping.load(Ordering::Relaxed) != 0 {
            B::futex_wake(&self.flag);
        }
    }

    /// Consumes a pending event bit ([`event`](Self::event)); returns whether there was one.
    /// What the signaller wrote before is visible after it.
    pub fn take_event(&self) -> bool {
        if self.flag.load(Ordering::Relaxed) & EVENT == 0 {
            return false;
        }
        self.flag.fetch_and(!EVENT, Ordering::Acquire);
        true
    }

    /// Wakes the CPU if it sleeps, without a request (used to stop a run early: the woken
    /// worker re-checks the end of the run).
    pub fn kick(&self) {
        B::futex_wake(&self.flag);
    }

    /// This CPU asks itself to reschedule (no IPI: it will notice at its next poll).
    pub fn set_local(&self) {
        // A read-modify-write, not a store: a store would break the release sequence of the
        // remote requests before it (see `send`).
        self.flag.fetch_or(RESCHED, Ordering::Release);
    }

    /// Whether any request (reschedule or notification) is pending (cheap; polled by bodies).
    #[inline(always)]
    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::Relaxed) != 0
    }

    /// Whether a reschedule request is pending.
    #[inline(always)]
    pub fn resched_pending(&self) -> bool {
        self.flag.load(Ordering::Relaxed) & RESCHED != 0
    }

    /// Consumes a pending reschedule request. Returns `Some(stamp)` if it came from a remote
    /// sender (stamp = counter at send time), `Some(0)` for a local request (or a remote one
    /// whose stamp an earlier, concurrent request's `take` consumed), `None` if none. A
    /// pending notification stays pending.
    pub fn take(&self) -> Option<u64> {
        if self.flag.load(Ordering::Relaxed) & RESCHED == 0 {
            return None;
        }
        self.flag.fetch_and(!RESCHED, Ordering::Acquire);
        Some(self.sent.swap(0, Ordering::Relaxed))
    }

    /// Consumes a pending notification; returns whether there was one. Everything the
    /// notifier wrote before [`notify_deferred`](Self::notify_deferred) is visible after it.
    pub fn take_notify(&self) -> bool {
        if self.flag.load(Ordering::Relaxed) & NOTIFY == 0 {
            return false;
        }
        self.flag.fetch_and(!NOTIFY, Ordering::Acquire);
        true
    }

    /// Sleeps until a request arrives or `timeout_ns` passes (spurious returns allowed).
    pub fn sleep(&self, timeout_ns: u64) {
        self.sleeping.store(1, Ordering::Relaxed);
        B::fence(Ordering::SeqCst);
        if self.flag.load(Ordering::Relaxed) == 0 {
            B::futex_wait(&self.flag, 0, timeout_ns);
        }
        self.sleeping.store(0, Ordering::Relaxed);
    }
}

fn futex_wait(word: &std::sync::atomic::AtomicU32, expected: u32, timeout_ns: u64) {
    let ts = libc::timespec { tv_sec: (timeout_ns / 1_000_000_000) as _, tv_nsec: (timeout_ns % 1_000_000_000) as _ };
    // SAFETY: `word` is a live, aligned u32 for the call; `ts` outlives the call; the other
    // pointer arguments are unused by FUTEX_WAIT.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

fn futex_wake(word: &std::sync::atomic::AtomicU32) {
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE reads no other pointer.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, i32::MAX);
    }
}

/// A test-and-test-and-set spin lock whose waits are traced (`LockWaitStart/End`, seed 000
/// §IV-A: Δsch includes blocking on the scheduler state). After many failed spins it
/// yields, so a run forced onto shared cores still progresses.
pub struct SpinLock<T, B: Primitives = Std> {
    locked: CachePadded<B::Bool>,
    id: u32,
    data: UnsafeCell<T>,
}

// SAFETY: the lock hands out at most one guard at a time (acquire on swap, release on drop),
// so access to `data` is exclusive; T: Send lets the data move between the locking threads.
unsafe impl<T: Send, B: Primitives> Sync for SpinLock<T, B> {}
// SAFETY: as above.
unsafe impl<T: Send, B: Primitives> Send for SpinLock<T, B> {}

impl<T, B: Primitives> SpinLock<T, B> {
    pub fn new(id: u32, data: T) -> SpinLock<T, B> {
        SpinLock { locked: CachePadded::new(B::Bool::new(false)), id, data: UnsafeCell::new(data) }
    }

    /// Acquires, recording the wait in `trace`.
    pub fn lock(&self, trace: &mut TraceBuffer) -> SpinGuard<'_, T, B> {
        trace.record(RecKind::LockWaitStart, self.id, 0, 0);
        let g = self.lock_untraced();
        trace.record(RecKind::LockWaitEnd, self.id, 0, 0);
        g
    }

    /// Acquires without tracing (set-up and final accounting only).
    pub fn lock_untraced(&self) -> SpinGuard<'_, T, B> {
        let mut spins = 0u32;
        loop {
            // compare_exchange rather than swap: a failed attempt writes nothing (and loom's
            // exploration of a swap-based spin lock does not terminate).
            if self.locked.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                return SpinGuard { lock: self };
            }
            while self.locked.load(Ordering::Relaxed) {
                spins = spins.wrapping_add(1);
                B::spin_hint(spins);
            }
        }
    }
}

pub struct SpinGuard<'a, T, B: Primitives = Std> {
    lock: &'a SpinLock<T, B>,
}

impl<T, B: Primitives> Deref for SpinGuard<'_, T, B> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while the lock is held, so no other reference exists.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T, B: Primitives> DerefMut for SpinGuard<'_, T, B> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes this the only reference.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T, B: Primitives> Drop for SpinGuard<'_, T, B> {
    fn drop(&mut self) {
        self.lock.locked.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn spin_lock_excludes() {
        let l = Arc::new(SpinLock::<u64>::new(0, 0u64));
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let l = l.clone();
                std::thread::spawn(move || {
                    let mut tr = TraceBuffer::new(0, 16);
                    for _ in 0..20_000 {
                        let mut g = l.lock(&mut tr);
                        let v = *g;
                        *g = v + 1;
                    }
                    tr.dropped()
                })
            })
            .collect();
        for h in hs {
            assert!(h.join().unwrap() > 0, "lock waits must be recorded (and drops counted)");
        }
        assert_eq!(*l.lock_untraced(), 60_000);
    }

    #[test]
    fn a_sent_request_wakes_a_sleeper_and_carries_its_stamp() {
        let s = Arc::new(CpuSignal::new());
        let s2 = s.clone();
        let h = std::thread::spawn(move || {
            // Sleep in bounded slices until the request is seen (no lost wake-up means this
            // loop ends; a lost one would still end by the slice timeout, so count slices).
            let mut slices = 0;
            while !s2.is_set() {
                s2.sleep(5_000_000_000);
                slices += 1;
            }
            (s2.take(), slices)
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        s.send(42);
        let (stamp, _slices) = h.join().unwrap();
        assert_eq!(stamp, Some(42));
        assert_eq!(s.take(), None);
        s.set_local();
        assert_eq!(s.take(), Some(0));
    }

    #[test]
    fn taking_one_kind_of_request_leaves_the_other() {
        let s = CpuSignal::new();
        assert!(!s.notify_deferred());
        assert!(s.is_set() && !s.resched_pending());
        assert_eq!(s.take(), None, "a notification is not a reschedule request");
        s.send(5);
        assert!(s.resched_pending());
        assert_eq!(s.take(), Some(5));
        assert!(s.is_set(), "the notification is still pending");
        assert!(s.take_notify() && !s.take_notify());
        assert!(!s.is_set());
    }
}

/// The loom models (loom 0.7, a dev-dependency; they run under plain `cargo test`).
///
/// The loom backend's futex is one mutex + condition variable per word: `futex_wait` locks
/// it, re-checks the word and waits on the condition variable — the check and the sleep are
/// atomic with respect to `futex_wake`, which takes the same mutex, exactly as the kernel's
/// hash-bucket lock makes them. The timeout is ignored (an unbounded wait), so a wake-up that
/// only the timeout would have rescued shows up as a loom deadlock.
#[cfg(test)]
pub(crate) mod loom_model;
