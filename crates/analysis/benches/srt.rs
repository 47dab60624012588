//! The soft real-time G-EDF test with Devi and Anderson's tardiness bounds
//! (`global::srt::tardiness_bounds`) against its first implementation
//! (`src/global/srt_reference.rs`, big rationals reduced after every addition), on one random
//! set per size: periods uniform in [10, 100] ms (integer ns), utilizations drawn around
//! `0.9 m / n` so that U is about 0.9 m. Prints the time of each and their ratio, and checks
//! that both give the same bounds. Not a criterion bench: the first implementation takes
//! minutes at n = 20,000, so it runs only up to `--old-max N` tasks (default 5000).
//!
//!     cargo bench -p rtsched-analysis --bench srt
//!     cargo bench -p rtsched-analysis --bench srt -- --old-max 20000   # minutes

#[path = "../src/global/srt_reference.rs"]
mod reference;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::global::srt;
use rtsched_model::TaskSet;
use std::time::Instant;

const SIZES: [usize; 3] = [2_000, 5_000, 20_000];

fn random_set(n: usize, m: u32, seed: u64) -> TaskSet {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let share = 0.9 * m as f64 / n as f64;
    let tasks: Vec<(u64, u64)> = (0..n)
        .map(|_| {
            let t: u64 = rng.random_range(10_000_000..=100_000_000);
            let u = share * rng.random_range(0.5..1.5);
            (((t as f64 * u) as u64).clamp(1, t), t)
        })
        .collect();
    TaskSet::from_ct(&tasks).expect("valid")
}

fn time<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t0 = Instant::now();
    let out = f();
    (out, t0.elapsed().as_secs_f64())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let old_max: usize = args
        .iter()
        .position(|a| a == "--old-max")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.parse().expect("--old-max N"))
        .unwrap_or(5_000);
    println!("G-EDF SRT test with Devi-Anderson bounds, one random set per size (U ~ 0.9 m)");
    println!("{:>6} {:>5} {:>12} {:>12} {:>9}", "n", "m", "new (s)", "first (s)", "ratio");
    for m in [8u32, 256] {
        for n in SIZES {
            let ts = random_set(n, m, n as u64 ^ m as u64);
            // Best of three for the new one (it takes milliseconds).
            let mut new = f64::INFINITY;
            let mut bounds = None;
            for _ in 0..3 {
                let (b, s) = time(|| srt::tardiness_bounds(&ts, m));
                new = new.min(s);
                bounds = b;
            }
            assert!(bounds.is_some(), "the set is meant to have bounded tardiness");
            if n <= old_max && m == 8 {
                let (old_bounds, old) = time(|| reference::tardiness_bounds(&ts, m));
                assert_eq!(bounds, old_bounds, "n = {n}, m = {m}: the two implementations disagree");
                println!("{n:>6} {m:>5} {new:>12.6} {old:>12.3} {:>8.0}x", old / new);
            } else {
                println!("{n:>6} {m:>5} {new:>12.6} {:>12} {:>9}", "-", "-");
            }
        }
    }
}
