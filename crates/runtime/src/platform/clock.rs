//! Clocks: `CLOCK_MONOTONIC` in integer nanoseconds for every scheduling decision, and a raw
//! cycle counter for trace timestamps (Feather-Trace, Brandenburg & Anderson, OSPERT 2007,
//! timestamps with the TSC; seed 000 §IV uses it the same way).
//!
//! On x86_64 the trace counter is `rdtsc`; it is converted to monotonic nanoseconds after the
//! run by a straight line through two `(tsc, monotonic)` pairs taken before and after the run
//! ([`TscCalibration`]), which is exact at both ends on a machine with an invariant TSC
//! (`constant_tsc nonstop_tsc`, as here). Elsewhere the "counter" is the monotonic clock itself
//! and the conversion is the identity.

/// Nanoseconds on `CLOCK_MONOTONIC`.
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Nanoseconds of CPU time consumed by the calling thread (`CLOCK_THREAD_CPUTIME_ID`).
#[inline]
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The raw trace counter: TSC cycles on x86_64, monotonic ns elsewhere.
#[inline]
pub fn counter() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no preconditions on x86_64.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        monotonic_ns()
    }
}

/// Whether [`counter`] is a hardware cycle counter (true) or the monotonic clock (false).
pub const COUNTER_IS_TSC: bool = cfg!(target_arch = "x86_64");

/// One simultaneous reading of the counter and the monotonic clock. The counter is read on
/// both sides of the clock read and averaged, which halves the pairing error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockPair {
    pub counter: u64,
    pub mono_ns: u64,
}

impl ClockPair {
    pub fn now() -> ClockPair {
        let a = counter();
        let m = monotonic_ns();
        let b = counter();
        ClockPair { counter: a + (b.wrapping_sub(a)) / 2, mono_ns: m }
    }
}

/// A linear map from the trace counter to monotonic nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TscCalibration {
    base: ClockPair,
    /// Nanoseconds per counter tick, as a 32.32 fixed-point number.
    ns_per_tick_q32: u128,
}

impl TscCalibration {
    /// Fits the line through `a` and `b` (`b` later than `a`; at least ~1 ms apart for a
    /// precise slope). With the monotonic fallback the slope is exactly 1.
    pub fn from_pairs(a: ClockPair, b: ClockPair) -> TscCalibration {
        let dc = b.counter.saturating_sub(a.counter) as u128;
        let dn = b.mono_ns.saturating_sub(a.mono_ns) as u128;
        let ns_per_tick_q32 = if !COUNTER_IS_TSC || dc == 0 { 1u128 << 32 } else { (dn << 32) / dc };
        TscCalibration { base: a, ns_per_tick_q32 }
    }

    /// Calibrates by busy-waiting `window_ns` (used before a run to know the rate early).
    pub fn measure(window_ns: u64) -> TscCalibration {
        let a = ClockPair::now();
        while monotonic_ns() < a.mono_ns + window_ns {
            std::hint::spin_loop();
        }
        TscCalibration::from_pairs(a, ClockPair::now())
    }

    /// Monotonic nanoseconds of a counter value (saturating at the ends of `u64`).
    #[inline]
    pub fn to_ns(&self, c: u64) -> u64 {
        if c >= self.base.counter {
            let d = ((c - self.base.counter) as u128 * self.ns_per_tick_q32) >> 32;
            self.base.mono_ns.saturating_add(d.min(u64::MAX as u128) as u64)
        } else {
            let d = ((self.base.counter - c) as u128 * self.ns_per_tick_q32) >> 32;
            self.base.mono_ns.saturating_sub(d.min(u64::MAX as u128) as u64)
        }
    }

    /// Counter ticks per second (for reports).
    pub fn ticks_per_second(&self) -> f64 {
        1e9 * (1u64 << 32) as f64 / self.ns_per_tick_q32 as f64
    }
}

/// Sleeps until the absolute CLOCK_MONOTONIC time `t` (ns).
pub fn sleep_until(t: u64) {
    let ts = libc::timespec { tv_sec: (t / 1_000_000_000) as _, tv_nsec: (t % 1_000_000_000) as _ };
    // SAFETY: `ts` is valid for the call; a null remainder is allowed with TIMER_ABSTIME.
    unsafe {
        libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut());
    }
}

/// Sleeps until the absolute CLOCK_MONOTONIC time `t` (ns) or until `word` is non-zero and
/// [`wake_sleepers`] is called on it, whichever comes first (spurious returns allowed: the
/// caller re-checks). A `FUTEX_WAIT_BITSET` with an absolute monotonic timeout: the same
/// hrtimer expiry as `clock_nanosleep(TIMER_ABSTIME)`, but interruptible by a stop request.
pub fn sleep_until_or(t: u64, word: &std::sync::atomic::AtomicU32) {
    let ts = libc::timespec { tv_sec: (t / 1_000_000_000) as _, tv_nsec: (t % 1_000_000_000) as _ };
    // SAFETY: `word` is a live, aligned u32 and `ts` a valid timespec for the call; the
    // second address is unused by FUTEX_WAIT_BITSET.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT_BITSET | libc::FUTEX_PRIVATE_FLAG,
            0u32,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            libc::FUTEX_BITSET_MATCH_ANY,
        );
    }
}

/// Sets `word` and wakes every thread in [`sleep_until_or`] on it.
pub fn wake_sleepers(word: &std::sync::atomic::AtomicU32) {
    word.store(1, std::sync::atomic::Ordering::SeqCst);
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE reads no other pointer.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, i32::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_never_goes_back() {
        let mut last = monotonic_ns();
        for _ in 0..10_000 {
            let t = monotonic_ns();
            assert!(t >= last);
            last = t;
        }
    }

    #[test]
    fn calibration_maps_its_end_points() {
        let a = ClockPair { counter: 1_000, mono_ns: 5_000 };
        let b = ClockPair { counter: 3_000, mono_ns: 6_000 };
        let c = TscCalibration::from_pairs(a, b);
        if COUNTER_IS_TSC {
            assert_eq!(c.to_ns(1_000), 5_000);
            assert_eq!(c.to_ns(3_000), 6_000);
            assert_eq!(c.to_ns(2_000), 5_500);
            assert_eq!(c.to_ns(0), 4_500);
        } else {
            assert_eq!(c.to_ns(1_000), 5_000);
            assert_eq!(c.to_ns(1_500), 5_500);
        }
    }

    #[test]
    fn measured_calibration_tracks_the_monotonic_clock() {
        // Not a timing assertion: a pair read now must map back to within a generous 50 ms of
        // its own monotonic reading (a wrong slope or offset gives errors of seconds).
        let cal = TscCalibration::measure(20_000_000);
        let p = ClockPair::now();
        let err = cal.to_ns(p.counter) as i128 - p.mono_ns as i128;
        assert!(err.abs() < 50_000_000, "calibration off by {err} ns");
    }

    #[test]
    fn an_interruptible_sleep_ends_at_its_time_or_when_woken() {
        use std::sync::atomic::AtomicU32;
        let w = AtomicU32::new(0);
        let t = monotonic_ns() + 2_000_000;
        while monotonic_ns() < t {
            sleep_until_or(t, &w);
        }
        // Woken long before its time: a 60 s sleep must end once the word is set.
        let w = std::sync::Arc::new(AtomicU32::new(0));
        let w2 = w.clone();
        let h = std::thread::spawn(move || {
            let t = monotonic_ns() + 60_000_000_000;
            while w2.load(std::sync::atomic::Ordering::SeqCst) == 0 && monotonic_ns() < t {
                sleep_until_or(t, &w2);
            }
            monotonic_ns() < t
        });
        std::thread::sleep(std::time::Duration::from_millis(10));
        wake_sleepers(&w);
        assert!(h.join().unwrap(), "the sleep was not interrupted");
    }
}
