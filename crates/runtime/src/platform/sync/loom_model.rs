//! The loom models (loom 0.7, a dev-dependency; they run under plain `cargo test`).
//!
//! The loom backend's futex is one mutex + condition variable per word: `futex_wait` locks
//! it, re-checks the word and waits on the condition variable — the check and the sleep are
//! atomic with respect to `futex_wake`, which takes the same mutex, exactly as the kernel's
//! hash-bucket lock makes them. The timeout is ignored (an unbounded wait), so a wake-up that
//! only the timeout would have rescued shows up as a loom deadlock.

use super::*;
use loom::sync::atomic::{AtomicBool as LBool, AtomicU32 as LU32, AtomicU64 as LU64};
use loom::sync::{Mutex, Notify};
use loom::thread;

macro_rules! loom_atom {
    ($t:ty, $a:ty) => {
        impl Atom<$t> for $a {
            fn new(v: $t) -> Self {
                <$a>::new(v)
            }
            fn load(&self, o: Ordering) -> $t {
                <$a>::load(self, o)
            }
            fn store(&self, v: $t, o: Ordering) {
                <$a>::store(self, v, o)
            }
            fn swap(&self, v: $t, o: Ordering) -> $t {
                <$a>::swap(self, v, o)
            }
            fn compare_exchange(&self, c: $t, n: $t, s: Ordering, f: Ordering) -> Result<$t, $t> {
                <$a>::compare_exchange(self, c, n, s, f)
            }
            fn fetch_or(&self, v: $t, o: Ordering) -> $t {
                <$a>::fetch_or(self, v, o)
            }
            fn fetch_and(&self, v: $t, o: Ordering) -> $t {
                <$a>::fetch_and(self, v, o)
            }
        }
    };
}
loom_atom!(u64, LU64);
loom_atom!(bool, LBool);

impl AtomAdd<u64> for LU64 {
    fn fetch_add(&self, v: u64, o: Ordering) -> u64 {
        LU64::fetch_add(self, v, o)
    }
    fn fetch_sub(&self, v: u64, o: Ordering) -> u64 {
        LU64::fetch_sub(self, v, o)
    }
}

impl AtomAdd<u32> for FutexWord {
    fn fetch_add(&self, v: u32, o: Ordering) -> u32 {
        self.v.fetch_add(v, o)
    }
    fn fetch_sub(&self, v: u32, o: Ordering) -> u32 {
        self.v.fetch_sub(v, o)
    }
}

/// A futex word: the value, its "hash bucket" (a mutex over "a waiter is queued") and
/// the waiter's wake-up (a loom `Notify`: it keeps a wake-up that arrives between the
/// unlock and the wait, like a queued futex waiter, and may return spuriously, as
/// `FUTEX_WAIT` may). One waiter per word, as each CPU's signal has one sleeper.
pub struct FutexWord {
    v: LU32,
    bucket: Mutex<bool>,
    wake: Notify,
}

impl Atom<u32> for FutexWord {
    fn new(v: u32) -> Self {
        FutexWord { v: LU32::new(v), bucket: Mutex::new(false), wake: Notify::new() }
    }
    fn load(&self, o: Ordering) -> u32 {
        self.v.load(o)
    }
    fn store(&self, v: u32, o: Ordering) {
        self.v.store(v, o)
    }
    fn swap(&self, v: u32, o: Ordering) -> u32 {
        self.v.swap(v, o)
    }
    fn compare_exchange(&self, c: u32, n: u32, s: Ordering, f: Ordering) -> Result<u32, u32> {
        self.v.compare_exchange(c, n, s, f)
    }
    fn fetch_or(&self, v: u32, o: Ordering) -> u32 {
        self.v.fetch_or(v, o)
    }
    fn fetch_and(&self, v: u32, o: Ordering) -> u32 {
        self.v.fetch_and(v, o)
    }
}

impl FutexWord {
    /// Queues the caller and sleeps, with no check of the word (for the broken variant).
    fn wait_unchecked(&self) {
        *self.bucket.lock().unwrap() = true;
        // No guard may be alive while blocked: loom cannot unwind through one after it
        // reports a deadlock.
        self.wake.wait();
    }
}

/// Loom atomics, fences and the futex model above.
pub struct Loom;

impl Primitives for Loom {
    type U32 = FutexWord;
    type U64 = LU64;
    type Bool = LBool;
    fn fence(o: Ordering) {
        loom::sync::atomic::fence(o)
    }
    fn futex_wait(word: &FutexWord, expected: u32, _timeout_ns: u64) {
        {
            let mut queued = word.bucket.lock().unwrap();
            // The kernel reads the word under the bucket lock, after a full barrier.
            loom::sync::atomic::fence(Ordering::SeqCst);
            if word.v.load(Ordering::Relaxed) != expected {
                return;
            }
            *queued = true;
        }
        word.wake.wait();
    }
    fn futex_wake(word: &FutexWord) {
        let mut queued = word.bucket.lock().unwrap();
        if std::mem::take(&mut *queued) {
            word.wake.notify();
        }
    }
    fn spin_hint(_spins: u32) {
        thread::yield_now();
    }
}

type Sig = CpuSignal<Loom>;

/// Shared objects are leaked rather than reference-counted: after loom reports a deadlock
/// nothing of loom's may be dropped while the panic unwinds (it would abort the process).
fn leak<T>(t: T) -> &'static T {
    Box::leak(Box::new(t))
}

/// The idle loop of a worker (engine `idle`): sleep until a request is pending, take it.
fn sleeper(s: &Sig) -> Option<u64> {
    while !s.is_set() {
        s.sleep(u64::MAX);
    }
    s.take()
}

#[test]
fn loom_no_lost_wake_up() {
    loom::model(|| {
        let s = leak(Sig::default());
        let s2 = s;
        let t = thread::spawn(move || sleeper(s2));
        s.send(7);
        // A lost wake-up leaves the sleeper waiting forever: loom reports a deadlock.
        assert_eq!(t.join().unwrap(), Some(7));
        assert_eq!(s.take(), None);
    });
}

/// The deferred form the engine uses: the request is sent under the plugin's lock and
/// the sleeper woken only after the lock is left, with other work in between.
#[test]
fn loom_no_lost_wake_up_when_the_wake_is_deferred() {
    loom::model(|| {
        let s = leak(Sig::default());
        let s2 = s;
        let t = thread::spawn(move || sleeper(s2));
        let sleeps = s.send_deferred(7);
        loom::thread::yield_now();
        if sleeps {
            s.kick();
        }
        assert_eq!(t.join().unwrap(), Some(7));
        assert_eq!(s.take(), None);
    });
}

/// Two senders race while the target takes requests. Every request is noticed; a stamp
/// is returned at most once and only if it was sent; once the target has taken every
/// request, no stamp is left behind to be charged to a later, unrelated request. (The
/// target polls here instead of sleeping: sleeping is `loom_no_lost_wake_up`'s subject,
/// and three threads that all sleep and wake make the state space too large.)
#[test]
fn loom_sent_stamps_never_outlive_their_request() {
    loom::model(|| {
        let s = leak(Sig::default());
        let ta = thread::spawn(move || s.send(11));
        let tb = thread::spawn(move || s.send(22));
        let mut got: Vec<u64> = s.take().into_iter().collect();
        ta.join().unwrap();
        tb.join().unwrap();
        while let Some(x) = s.take() {
            got.push(x);
        }
        assert!(!got.is_empty(), "a request was lost");
        assert!(got[0] == 11 || got[0] == 22, "the first notice carries a stamp: {got:?}");
        let stamps: Vec<u64> = got.iter().copied().filter(|&x| x != 0).collect();
        assert!(stamps.iter().all(|x| [11, 22].contains(x)), "{got:?}");
        assert!(stamps.len() <= 2 && (stamps.len() < 2 || stamps[0] != stamps[1]));
        assert_eq!(s.flag.load(Ordering::Relaxed), 0);
        assert_eq!(s.sent.load(Ordering::Relaxed), 0, "a stamp outlived its request");
    });
}

/// A local request races a remote one: the remote stamp is noticed at most once, nothing
/// else is reported as a stamp, and none is left behind.
#[test]
fn loom_local_and_remote_requests() {
    loom::model(|| {
        let s = leak(Sig::default());
        let a = s;
        let t = thread::spawn(move || a.send(5));
        s.set_local();
        let mut got = vec![];
        while let Some(x) = s.take() {
            got.push(x);
        }
        t.join().unwrap();
        while let Some(x) = s.take() {
            got.push(x);
        }
        assert!(!got.is_empty());
        assert!(got.iter().filter(|&&x| x == 5).count() <= 1, "{got:?}");
        assert!(got.iter().all(|&x| x == 0 || x == 5), "{got:?}");
        assert_eq!(s.sent.load(Ordering::Relaxed), 0, "a stamp outlived its request");
    });
}

/// Mutual exclusion: the protected data is a loom cell, so two guards alive at once (or a
/// hand-over without happens-before) is reported as a causality violation; the count
/// checks that no increment is lost.
#[test]
fn loom_spin_lock_excludes() {
    loom::model(|| {
        let l = leak(SpinLock::<loom::cell::UnsafeCell<u32>, Loom>::new(0, loom::cell::UnsafeCell::new(0)));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                thread::spawn(move || {
                    let mut tr = TraceBuffer::new(0, 4);
                    let g = l.lock(&mut tr);
                    // SAFETY: the guard gives exclusive access (what loom checks).
                    g.with_mut(|p| unsafe { *p += 1 });
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let g = l.lock_untraced();
        // SAFETY: as above.
        assert_eq!(g.with(|p| unsafe { *p }), 2);
    });
}

/// A notification and a reschedule request race a sleeper: both are noticed (neither
/// wake-up is lost), the stamp comes with the reschedule request, and consuming one kind
/// leaves the other pending.
#[test]
fn loom_a_notification_and_a_reschedule_both_arrive() {
    loom::model(|| {
        let s = leak(Sig::default());
        let s2 = s;
        let t = thread::spawn(move || {
            let (mut notified, mut stamp) = (false, None);
            while !(notified && stamp.is_some()) {
                if !s2.is_set() {
                    s2.sleep(u64::MAX);
                }
                notified |= s2.take_notify();
                if let Some(x) = s2.take() {
                    stamp = Some(x);
                }
            }
            stamp
        });
        if s.notify_deferred() {
            s.kick();
        }
        s.send(9);
        assert_eq!(t.join().unwrap(), Some(9));
        assert_eq!(s.flag.load(Ordering::Relaxed), 0);
    });
}

// ---- Deliberately broken variants: loom must catch each (the models can fail). ----

/// A notification kept in its own word, outside the futex word the thread sleeps on: the
/// sleeper can check it, the notifier can set it and see no sleeper yet, and the sleeper
/// then sleeps through it.
#[test]
#[should_panic(expected = "deadlock")]
fn loom_catches_a_notification_outside_the_futex_word() {
    loom::model(|| {
        let s = leak(Sig::default());
        let notified = leak(LBool::new(false));
        let s2 = s;
        let t = thread::spawn(move || {
            while !notified.load(Ordering::Acquire) {
                s2.sleep(u64::MAX);
            }
        });
        notified.store(true, Ordering::Release);
        Loom::fence(Ordering::SeqCst);
        if s.sleeping.load(Ordering::Relaxed) != 0 {
            s.kick();
        }
        t.join().unwrap();
    });
}

/// The sender reads `sleeping` before it sets the flag: a sleeper that announced itself
/// in between sleeps through the request.
#[test]
#[should_panic(expected = "deadlock")]
fn loom_catches_a_sender_that_checks_sleeping_first() {
    loom::model(|| {
        let s = leak(Sig::default());
        let s2 = s;
        let t = thread::spawn(move || sleeper(s2));
        let sleeping = s.sleeping.load(Ordering::Relaxed) != 0;
        let _ = s.sent.compare_exchange(0, 7, Ordering::Relaxed, Ordering::Relaxed);
        s.flag.store(1, Ordering::Release);
        if sleeping {
            Loom::futex_wake(&s.flag);
        }
        t.join().unwrap();
    });
}

/// `send` with a plain store of the flag instead of a swap: the target can consume both
/// requests' flags while the first sender's stamp arrives after its `sent` swap, leaving
/// a stamp behind (see `send`).
#[test]
#[should_panic(expected = "a stamp outlived its request")]
fn loom_catches_a_stamp_left_behind_by_a_plain_flag_store() {
    fn send_with_store(s: &Sig, stamp: u64) {
        let _ = s.sent.compare_exchange(0, stamp, Ordering::Relaxed, Ordering::Relaxed);
        s.flag.store(1, Ordering::Release);
    }
    loom::model(|| {
        let s = leak(Sig::default());
        let ta = thread::spawn(move || send_with_store(s, 11));
        let tb = thread::spawn(move || send_with_store(s, 22));
        let _ = s.take();
        ta.join().unwrap();
        tb.join().unwrap();
        while s.take().is_some() {}
        assert_eq!(s.sent.load(Ordering::Relaxed), 0, "a stamp outlived its request");
    });
}

/// The sleeper waits without the futex's atomic re-check of the word (a bare condition
/// variable). It checks the flag first, as the brief's "check before announcing" variant
/// does — that order alone is harmless here only because `FUTEX_WAIT` re-checks; without
/// the re-check a request sent between the check and the wait is never seen.
#[test]
#[should_panic(expected = "deadlock")]
fn loom_catches_a_wait_without_the_futex_recheck() {
    loom::model(|| {
        let s = leak(Sig::default());
        let s2 = s;
        let t = thread::spawn(move || {
            if s2.flag.load(Ordering::Relaxed) == 0 {
                s2.sleeping.store(1, Ordering::Relaxed);
                Loom::fence(Ordering::SeqCst);
                s2.flag.wait_unchecked();
                s2.sleeping.store(0, Ordering::Relaxed);
            }
        });
        s.send(7);
        t.join().unwrap();
    });
}

/// Without the SeqCst fences (release/acquire only) both sides may read the other's
/// old value — the store-buffering outcome — and the wake-up is lost.
#[test]
#[should_panic(expected = "deadlock")]
fn loom_catches_the_protocol_without_fences() {
    loom::model(|| {
        let s = leak(Sig::default());
        let s2 = s;
        let t = thread::spawn(move || {
            while s2.flag.load(Ordering::Acquire) == 0 {
                s2.sleeping.store(1, Ordering::Release);
                if s2.flag.load(Ordering::Acquire) == 0 {
                    Loom::futex_wait(&s2.flag, 0, u64::MAX);
                }
                s2.sleeping.store(0, Ordering::Release);
            }
        });
        s.flag.store(1, Ordering::Release);
        if s.sleeping.load(Ordering::Acquire) != 0 {
            Loom::futex_wake(&s.flag);
        }
        t.join().unwrap();
    });
}

/// A "lock" that tests and then sets in two steps lets both threads in: loom reports the
/// concurrent accesses to the protected cell.
#[test]
#[should_panic(expected = "Causality violation")]
fn loom_catches_a_lock_without_an_atomic_test_and_set() {
    loom::model(|| {
        let locked = leak(LBool::new(false));
        let data = leak(loom::cell::UnsafeCell::new(0u32));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                thread::spawn(move || {
                    while locked.load(Ordering::Acquire) {
                        thread::yield_now();
                    }
                    locked.store(true, Ordering::Relaxed);
                    // SAFETY: deliberately unsound; loom reports the race.
                    data.with_mut(|p| unsafe { *p += 1 });
                    locked.store(false, Ordering::Release);
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    });
}
