//! Shared by the runtime's integration tests (each test file that needs it says `mod common;`).
// Each test crate compiles this module and uses a part of it.
#![allow(dead_code)]

pub mod forkjoin;

use rtsched_model::TaskSet;
use rtsched_runtime::{run, Mechanism, RunConfig, RunResult};

/// Runs at SCHED_FIFO priority 10 where the process may (CAP_SYS_NICE), else at normal
/// priority. For tests whose oracle needs the run to keep up with its releases (that a
/// preemption or a migration happened, that the trace of a clean run is clean): at normal
/// priority a loaded machine (parallel builds, other tests) can deschedule the whole run.
/// Bounded like every test run: its duration, the watchdog and the kernel's RT throttling.
pub fn run_rt_if_permitted(ts: &TaskSet, mech: &Mechanism, cfg: &mut RunConfig) -> RunResult {
    cfg.rt_priority = Some(10);
    match run(ts, mech, cfg) {
        Err(e) if e.to_string().contains("CAP_SYS_NICE") => {
            cfg.rt_priority = None;
            run(ts, mech, cfg).unwrap()
        }
        other => other.unwrap(),
    }
}

/// splitmix64: small, seedable, good enough for picking random cases (a failing case prints its
/// seed and reproduces alone).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, n) (modulo bias negligible for the small n of tests).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [lo, hi].
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}
