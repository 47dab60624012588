//! The two cross-CPU primitives: a traced spin lock and the reschedule "IPI".
//!
//! A user-space worker cannot take an interrupt, so a reschedule IPI is a per-CPU atomic flag
//! that the target polls at fine grain (while running a job body, see `body`) plus a futex
//! wake-up when the target sleeps idle. Seed 000 §IV-A: Δipi is the time from the send to the
//! moment the target notices it; the sender stamps the request with the trace counter and
//! the target records `IpiNoticed` with that stamp.
//!
//! Sleep/wake protocol (no lost wake-ups): the sleeper sets `sleeping = 1` and then calls
//! `FUTEX_WAIT(flag, 0)`, which atomically re-checks `flag == 0`; the sender stores
//! `flag = 1` and then reads `sleeping`, waking if it is 1. Both sides use SeqCst, so either
//! the sender sees `sleeping == 1` (and wakes) or the sleeper's futex sees `flag == 1` (and
//! returns at once).

use crate::tracer::{RecKind, TraceBuffer};
use crossbeam_utils::CachePadded;
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// One CPU's reschedule request word.
#[derive(Debug, Default)]
pub struct CpuSignal {
    flag: CachePadded<AtomicU32>,
    sleeping: AtomicU32,
    /// Counter value of the oldest unnoticed remote request (0 = none).
    sent: AtomicU64,
}

impl CpuSignal {
    pub fn new() -> CpuSignal {
        CpuSignal::default()
    }

    /// A remote CPU asks this one to reschedule ("sends an IPI"); `stamp` is the sender's
    /// trace counter value (non-zero).
    pub fn send(&self, stamp: u64) {
        let _ = self
            .sent
            .compare_exchange(0, stamp.max(1), Ordering::Relaxed, Ordering::Relaxed);
        self.flag.store(1, Ordering::SeqCst);
        if self.sleeping.load(Ordering::SeqCst) != 0 {
            futex_wake(&self.flag);
        }
    }

    /// This CPU asks itself to reschedule (no IPI: it will notice at its next poll).
    pub fn set_local(&self) {
        self.flag.store(1, Ordering::SeqCst);
    }

    /// Whether a request is pending (cheap; polled by job bodies).
    #[inline(always)]
    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::Relaxed) != 0
    }

    /// Consumes a pending request. Returns `Some(stamp)` if it came from a remote sender
    /// (stamp = counter at send time), `Some(0)` for a local request, `None` if none.
    pub fn take(&self) -> Option<u64> {
        if self.flag.load(Ordering::Relaxed) == 0 {
            return None;
        }
        self.flag.swap(0, Ordering::Acquire);
        Some(self.sent.swap(0, Ordering::Relaxed))
    }

    /// Sleeps until a request arrives or `timeout_ns` passes (spurious returns allowed).
    pub fn sleep(&self, timeout_ns: u64) {
        self.sleeping.store(1, Ordering::SeqCst);
        if self.flag.load(Ordering::SeqCst) == 0 {
            futex_wait(&self.flag, 0, timeout_ns);
        }
        self.sleeping.store(0, Ordering::SeqCst);
    }
}

fn futex_wait(word: &AtomicU32, expected: u32, timeout_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as _,
        tv_nsec: (timeout_ns % 1_000_000_000) as _,
    };
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

fn futex_wake(word: &AtomicU32) {
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE reads no other pointer.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        );
    }
}

/// A test-and-test-and-set spin lock whose waits are traced (`LockWaitStart/End`, seed 000
/// §IV-A: Δsch includes blocking on the scheduler state). After many failed spins it
/// yields, so a run forced onto shared cores still progresses.
pub struct SpinLock<T> {
    locked: CachePadded<AtomicBool>,
    id: u32,
    data: UnsafeCell<T>,
}

// SAFETY: the lock hands out at most one guard at a time (acquire on swap, release on drop),
// so access to `data` is exclusive; T: Send lets the data move between the locking threads.
unsafe impl<T: Send> Sync for SpinLock<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for SpinLock<T> {}

impl<T> SpinLock<T> {
    pub fn new(id: u32, data: T) -> SpinLock<T> {
        SpinLock {
            locked: CachePadded::new(AtomicBool::new(false)),
            id,
            data: UnsafeCell::new(data),
        }
    }

    /// Acquires, recording the wait in `trace`.
    pub fn lock(&self, trace: &mut TraceBuffer) -> SpinGuard<'_, T> {
        trace.record(RecKind::LockWaitStart, self.id, 0, 0);
        let g = self.lock_untraced();
        trace.record(RecKind::LockWaitEnd, self.id, 0, 0);
        g
    }

    /// Acquires without tracing (set-up and final accounting only).
    pub fn lock_untraced(&self) -> SpinGuard<'_, T> {
        let mut spins = 0u32;
        loop {
            if !self.locked.swap(true, Ordering::Acquire) {
                return SpinGuard { lock: self };
            }
            while self.locked.load(Ordering::Relaxed) {
                spins += 1;
                if spins & 4095 == 0 {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
        }
    }
}

pub struct SpinGuard<'a, T> {
    lock: &'a SpinLock<T>,
}

impl<T> Deref for SpinGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while the lock is held, so no other reference exists.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for SpinGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes this the only reference.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
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
        let l = Arc::new(SpinLock::new(0, 0u64));
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
            assert!(
                h.join().unwrap() > 0,
                "lock waits must be recorded (and drops counted)"
            );
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
}
