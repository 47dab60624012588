//! The synthetic job body, like LITMUS^RT's `rtspin`: burn a given execution cost doing
//! floating-point work, optionally dirtying a working set, and poll for preemption.
//!
//! **How cost is measured.** Under the user-space mechanisms the body measures execution
//! with `CLOCK_MONOTONIC`: the worker is the only thread of its (pinned) CPU that the
//! mechanism schedules, preemption is cooperative, so every nanosecond between the body's
//! entry and exit is the job's — and reading the monotonic clock is a vDSO call (~20 ns)
//! that the poll loop needs anyway, while `CLOCK_THREAD_CPUTIME_ID` is a system call. The
//! price: time stolen by other host processes counts as execution (use SCHED_FIFO to stop
//! that). Under `kernel-sd` the kernel preempts the thread invisibly, so that body measures
//! thread CPU time instead (see `kernel_sd`).
//!
//! **Poll grain.** One iteration is a chunk of [`CHUNK`] dependent multiply-adds (~tens of
//! ns), one cache-line write into the working set (if any), one clock read and one poll; the
//! run reports the largest observed gap between polls (which includes host preemptions), and
//! every gap above `INTERFERENCE_GAP_NS` is reported to the caller as host interference
//! (`platform::interference`).

use std::sync::atomic::{AtomicU64, Ordering};

/// Multiply-adds per poll iteration.
pub const CHUNK: u32 = 32;

/// Actual execution time of each job.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ExecTime {
    /// Every job runs for its task's WCET.
    Wcet,
    /// Each job runs for a uniformly drawn fraction in `[min_fraction, 1]` of its WCET
    /// (deterministic per `(seed, task, job)`).
    Uniform { min_fraction: f64 },
}

use crate::RunError;
use serde::{Deserialize, Serialize};

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl ExecTime {
    /// Checks the model's parameter (a [`RunError::Config`]).
    pub fn validate(&self) -> Result<(), RunError> {
        match *self {
            ExecTime::Wcet => Ok(()),
            ExecTime::Uniform { min_fraction } if (0.0..=1.0).contains(&min_fraction) => Ok(()),
            ExecTime::Uniform { min_fraction } => {
                Err(RunError::Config(format!("min_fraction must be in [0, 1], got {min_fraction}")))
            }
        }
    }

    /// Cost in ns of job `seq` of task `task` with WCET `wcet` (≥ 1, ≤ wcet; rounded down).
    pub fn cost(&self, seed: u64, task: u32, seq: u32, wcet: u64) -> u64 {
        match *self {
            ExecTime::Wcet => wcet,
            ExecTime::Uniform { min_fraction } => {
                let h = splitmix(seed ^ splitmix(((task as u64) << 32) | seq as u64));
                let u = (h >> 11) as f64 / (1u64 << 53) as f64;
                let f = min_fraction + (1.0 - min_fraction) * u;
                ((wcet as f64 * f) as u64).clamp(1, wcet)
            }
        }
    }
}

/// Why the body returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The budget is used up.
    Done,
    /// The poll asked to stop.
    Polled,
}

/// Runs for up to `budget_ns` of monotonic time, polling `poll(now)` between chunks;
/// returns the time used, why it stopped, and the largest gap between polls. Each gap longer
/// than `INTERFERENCE_GAP_NS` calls `on_gap(start of the gap)` (host interference).
#[inline(never)]
pub fn spin(
    budget_ns: u64,
    wss: &[AtomicU64],
    mut poll: impl FnMut(u64) -> bool,
    mut on_gap: impl FnMut(u64),
) -> (u64, Stop, u64) {
    let start = crate::clock::monotonic_ns();
    let mut last = start;
    let mut max_gap = 0;
    let mut x = 1.000_000_1f64;
    let mut line = 0usize;
    loop {
        for _ in 0..CHUNK {
            x = x * 1.000_000_01 + 1e-12;
        }
        if !wss.is_empty() {
            // One 64-byte line per iteration, walking the whole set.
            let w = &wss[line];
            w.store(w.load(Ordering::Relaxed).wrapping_add(x as u64), Ordering::Relaxed);
            line += 8;
            if line >= wss.len() {
                line = 0;
            }
        }
        let now = crate::clock::monotonic_ns();
        let gap = now - last;
        if gap > rtsched_trace::stats::INTERFERENCE_GAP_NS {
            on_gap(last);
        }
        max_gap = max_gap.max(gap);
        last = now;
        let used = now - start;
        if used >= budget_ns {
            std::hint::black_box(x);
            return (used, Stop::Done, max_gap);
        }
        if poll(now) {
            std::hint::black_box(x);
            return (used, Stop::Polled, max_gap);
        }
    }
}

/// Allocates a working set of `bytes` (rounded up to whole 8-byte words).
pub fn working_set(bytes: usize) -> Vec<AtomicU64> {
    (0..bytes.div_ceil(8)).map(|_| AtomicU64::new(0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spin_uses_its_budget_and_stops_when_polled() {
        let ws = working_set(4096);
        let (used, why, _) = spin(200_000, &ws, |_| false, |_| {});
        assert_eq!(why, Stop::Done);
        assert!(used >= 200_000);
        assert!(ws.iter().any(|w| w.load(Ordering::Relaxed) != 0), "working set not dirtied");
        let mut n = 0;
        let (_, why, _) = spin(
            10_000_000_000,
            &[],
            |_| {
                n += 1;
                n == 5
            },
            |_| {},
        );
        assert_eq!(why, Stop::Polled);
        assert_eq!(n, 5);
    }

    #[test]
    fn a_stall_between_polls_is_reported_as_interference() {
        // The third poll takes 1 ms (as if the host took the CPU): one gap of at least 1 ms is
        // reported, starting at the clock read before it.
        let (mut n, mut stalled_at, mut gaps) = (0, 0, Vec::new());
        let (_, _, max_gap) = spin(
            10_000_000_000,
            &[],
            |now| {
                n += 1;
                if n == 3 {
                    stalled_at = now;
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                n == 6
            },
            |from| gaps.push(from),
        );
        assert!(gaps.contains(&stalled_at), "{gaps:?} {stalled_at}");
        assert!(max_gap >= 1_000_000);
    }

    #[test]
    fn uniform_costs_stay_within_bounds_and_are_deterministic() {
        let e = ExecTime::Uniform { min_fraction: 0.5 };
        let mut sum = 0u64;
        for s in 0..1000 {
            let c = e.cost(7, 3, s, 1000);
            assert!((500..=1000).contains(&c));
            assert_eq!(c, e.cost(7, 3, s, 1000));
            sum += c;
        }
        // Mean of U[500,1000] is 750; 1000 samples: sd of the mean ~4.6.
        assert!((700_000..800_000).contains(&sum), "{sum}");
        assert_eq!(ExecTime::Wcet.cost(1, 1, 1, 77), 77);
        assert_eq!(
            ExecTime::Uniform { min_fraction: 1.5 }.validate().unwrap_err().to_string(),
            "bad run configuration: min_fraction must be in [0, 1], got 1.5"
        );
    }
}

/// Self-suspending synthetic jobs: per task, the segments of each job in the standard
/// segmented model (Chen et al., "Many suspensions, many problems", Real-Time Systems 2019,
/// §2): `[C_1, S_1, C_2, …, S_{k-1}, C_k]`, execution and suspension alternating, ns. A job
/// executes `C_1`, suspends for `S_1` (its CPU free meanwhile; a timer wakes it), executes
/// `C_2`, and so on; the execution segments sum to the task's WCET. A job that executes less
/// than its WCET ([`ExecTime::Uniform`]) completes when its work is done, without the
/// suspensions after that point. Empty: no task suspends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Suspensions(Vec<Option<std::sync::Arc<[u64]>>>);

impl Suspensions {
    /// Per task its segments (`None`: one execution segment, no suspension).
    pub fn new(per_task: Vec<Option<Vec<u64>>>) -> Suspensions {
        Suspensions(per_task.into_iter().map(|s| s.map(Into::into)).collect())
    }

    /// The task set's own segments (`Task::segments` of the model, each suspension at its
    /// upper bound, as the simulator runs it by default); empty when no task suspends.
    pub fn of_task_set(ts: &rtsched_model::TaskSet) -> Suspensions {
        if !ts.iter().any(|t| t.segments.is_some()) {
            return Suspensions::default();
        }
        Suspensions::new(
            ts.iter()
                .map(|t| {
                    t.segments.as_ref().map(|s| {
                        let mut v = Vec::with_capacity(2 * s.exec.len());
                        for (i, &c) in s.exec.iter().enumerate() {
                            v.push(c);
                            if let Some(b) = s.susp.get(i) {
                                v.push(b.max);
                            }
                        }
                        v
                    })
                })
                .collect(),
        )
    }

    /// The segments a run of `ts` executes: `given` (the runtime's own), else the task set's.
    pub fn effective(given: &Suspensions, ts: &rtsched_model::TaskSet) -> Suspensions {
        if given.0.is_empty() {
            Suspensions::of_task_set(ts)
        } else {
            given.clone()
        }
    }

    /// Whether no task suspends.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|s| s.as_ref().is_none_or(|s| s.len() < 2))
    }

    /// Checks the segments against the task set: one entry per task, an odd count of
    /// segments, each > 0, the execution segments summing to the task's WCET (one line naming
    /// the task and the field).
    pub fn validate(&self, ts: &rtsched_model::TaskSet) -> Result<(), RunError> {
        if self.0.is_empty() {
            return Ok(());
        }
        if self.0.len() != ts.len() {
            return Err(RunError::Config(format!("segments has {} entries for {} tasks", self.0.len(), ts.len())));
        }
        for (i, (seg, t)) in self.0.iter().zip(ts.iter()).enumerate() {
            let Some(seg) = seg else { continue };
            let bad = |why: String| RunError::Config(format!("task {i}: segments: {why}"));
            if seg.len() % 2 == 0 {
                return Err(bad(format!("{} segments; expected an odd count (execution first and last)", seg.len())));
            }
            if let Some(k) = seg.iter().position(|&x| x == 0) {
                return Err(bad(format!("segment {k} is 0 ns; every segment must be > 0")));
            }
            let exec: u128 = seg.iter().step_by(2).map(|&x| x as u128).sum();
            if exec != t.wcet as u128 {
                return Err(bad(format!("the execution segments sum to {exec} ns, the WCET is {} ns", t.wcet)));
            }
        }
        Ok(())
    }

    /// Task `task`'s next suspension after it took `taken` of them: the execution that must
    /// be done before it (cumulative, ns) and its length (ns), if any is left.
    pub fn next(&self, task: usize, taken: u32) -> Option<(u64, u64)> {
        let seg = self.0.get(task)?.as_ref()?;
        let i = taken as usize;
        let susp = *seg.get(2 * i + 1)?;
        let before: u64 = seg.iter().step_by(2).take(i + 1).sum();
        Some((before, susp))
    }

    /// Task `task`'s total suspension per job (ns).
    pub fn total(&self, task: usize) -> u64 {
        self.0.get(task).and_then(Option::as_ref).map_or(0, |s| s.iter().skip(1).step_by(2).sum())
    }
}
