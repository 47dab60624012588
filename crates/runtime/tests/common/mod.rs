//! Shared by the runtime's integration tests (each test file that needs it says `mod common;`).
// Each test crate compiles this module and uses a part of it.
#![allow(dead_code)]

pub mod dag;
pub mod forkjoin;

use rtsched_model::TaskSet;
use rtsched_runtime::{run, Mechanism, RunConfig, RunError, RunResult};

/// Runs at SCHED_FIFO priority 10 where the process may (CAP_SYS_NICE), else at normal
/// priority. For tests whose oracle needs the run to keep up with its releases (that a
/// preemption or a migration happened, that the trace of a clean run is clean): at normal
/// priority a loaded machine (parallel builds, other tests) can deschedule the whole run.
/// Bounded like every test run: its duration, the watchdog and the kernel's RT throttling.
pub fn run_rt_if_permitted(ts: &TaskSet, mech: &Mechanism, cfg: &mut RunConfig) -> RunResult {
    at_rt_if_permitted(cfg, |c| run(ts, mech, c))
}

/// `go` at SCHED_FIFO priority 10 where the process may, else at normal priority (the
/// priority rule of [`run_rt_if_permitted`], for any kind of run); panics on other errors.
/// The run takes its turn on the machine first ([`realtime_turn`]).
pub fn at_rt_if_permitted(cfg: &mut RunConfig, go: impl Fn(&RunConfig) -> Result<RunResult, RunError>) -> RunResult {
    let _turn = realtime_turn();
    cfg.rt_priority = Some(10);
    match go(cfg) {
        Err(e) if e.to_string().contains("CAP_SYS_NICE") => {
            cfg.rt_priority = None;
            go(cfg).unwrap_or_else(|e| panic!("{e}"))
        }
        other => other.unwrap_or_else(|e| panic!("{e}")),
    }
}

/// A turn on the machine's CPUs for one real-time run, held until it is dropped: an exclusive
/// `flock` on `$TMPDIR/rtsched-realtime-UID.lock` (`/tmp` without `TMPDIR`), the file the
/// Python front's `rtsched.runtime.realtime_lock` takes around its SCHED_FIFO runs
/// (reproductions, measurements). Each test file's `serial()` makes its own runs take turns;
/// this makes them take turns with every other process's — a second test suite (another
/// checkout's `cargo test`), a reproduction. SCHED_FIFO threads of equal priority do not share
/// a CPU by time slices: another process's worker spinning a job body keeps this run's worker
/// off its CPU until it blocks, for tens of ms, and a light set then misses for that (the
/// SP-RES suspension test did, 10 times in 20, while another checkout ran the same binary).
pub struct RealtimeTurn(std::fs::File);

/// Waits for this process's turn ([`RealtimeTurn`]); panics if the lock file cannot be opened.
pub fn realtime_turn() -> RealtimeTurn {
    use std::os::fd::AsRawFd;
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let path = std::env::temp_dir().join(format!("rtsched-realtime-{uid}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    loop {
        // SAFETY: the descriptor is `file`'s, open for the whole call; the lock is released
        // when `file` is closed (the turn dropped).
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return RealtimeTurn(file);
        }
        let e = std::io::Error::last_os_error();
        assert_eq!(e.kind(), std::io::ErrorKind::Interrupted, "flock {}: {e}", path.display());
    }
}

/// The first two CPUs this process may use, or `None` after saying the test did not run.
pub fn two_cpus() -> Option<Vec<usize>> {
    let c = rtsched_runtime::platform::allowed_cpus();
    if c.len() < 2 {
        eprintln!("needs two CPUs, this machine allows {c:?}: not run");
        return None;
    }
    Some(c[..2].to_vec())
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
