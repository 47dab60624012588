//! The one source of randomness: ChaCha8 keyed by `(seed, purpose)`, stream = task-set index.
//!
//! Every task set `index` of a stream `seed` gets its own ChaCha8 streams, one per *purpose*
//! (utilizations, periods, deadlines). Task set `index` therefore never depends on how many
//! other sets were drawn, in which order, or on which thread; and changing the period
//! generator of a spec leaves its utilizations unchanged (common random numbers across an
//! experiment's variants). ChaCha8 (`rand_chacha`, pinned by `Cargo.lock`) is a portable,
//! platform-independent generator; the float conversions below use only `next_u64`, so the
//! values are bit-identical on every machine.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// What a random stream is used for; part of the ChaCha key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    Utilization = 1,
    Period = 2,
    Deadline = 3,
    Suspension = 4,
}

/// The generator for `purpose` of task set `index` of stream `seed`.
///
/// Key bytes 0..8: `seed` (little-endian); bytes 8..16: the purpose tag; the rest zero.
/// ChaCha stream: `index`.
pub(crate) fn stream(seed: u64, index: u64, purpose: Purpose) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&(purpose as u64).to_le_bytes());
    let mut rng = ChaCha8Rng::from_seed(key);
    rng.set_stream(index);
    rng
}

const TWO_M53: f64 = 1.0 / (1u64 << 53) as f64;
const TWO_M52: f64 = 1.0 / (1u64 << 52) as f64;

/// Uniform on `[0, 1)`, a multiple of 2^-53.
#[inline]
pub fn unit<R: RngCore + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * TWO_M53
}

/// Uniform on the open interval `(0, 1)`: `(k + 1/2) 2^-52` for uniform `k < 2^52`.
#[inline]
pub fn open01<R: RngCore + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 12) as f64 + 0.5) * TWO_M52
}

/// Uniform on `[lo, hi]` (`lo <= hi`; float rounding is clamped back into the range).
#[inline]
pub fn uniform<R: RngCore + ?Sized>(rng: &mut R, lo: f64, hi: f64) -> f64 {
    let x = lo + (hi - lo) * unit(rng);
    if x > hi {
        hi
    } else if x < lo {
        lo
    } else {
        x
    }
}

/// Uniform integer in `0..n`, without modulo bias (Lemire's method with rejection);
/// `n = 0` gives 0 without drawing.
#[inline]
pub fn below<R: RngCore + ?Sized>(rng: &mut R, n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let threshold = n.wrapping_neg() % n; // 2^64 mod n
    loop {
        let m = (rng.next_u64() as u128) * (n as u128);
        if (m as u64) >= threshold {
            return (m >> 64) as u64;
        }
    }
}

/// Fisher–Yates shuffle driven by [`below`].
pub fn shuffle<T, R: RngCore + ?Sized>(rng: &mut R, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = below(rng, i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_seed_index_and_purpose() {
        let a = stream(1, 0, Purpose::Utilization).next_u64();
        assert_ne!(a, stream(2, 0, Purpose::Utilization).next_u64());
        assert_ne!(a, stream(1, 1, Purpose::Utilization).next_u64());
        assert_ne!(a, stream(1, 0, Purpose::Period).next_u64());
        assert_eq!(a, stream(1, 0, Purpose::Utilization).next_u64());
    }

    #[test]
    fn open01_is_open_and_below_is_uniform() {
        let mut r = stream(7, 0, Purpose::Utilization);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            let x = open01(&mut r);
            assert!(x > 0.0 && x < 1.0);
            let u = unit(&mut r);
            assert!((0.0..1.0).contains(&u));
            counts[below(&mut r, 3) as usize] += 1;
        }
        // Each count ~ Bin(30000, 1/3): sd ~ 81.6; allow 5 sd.
        for c in counts {
            assert!((c as f64 - 10_000.0).abs() < 410.0, "{counts:?}");
        }
    }
}
