//! The run lifecycle both backends share (the plugin engine and the kernel-sd peer): a common
//! time zero, the end of the run (lowered by an early stop), the stop watcher, the effective
//! end of an interrupted run, and the end-of-run drain that releases every job due before the
//! end that no handler reached.
//!
//! **Stopping early** (`RunConfig::stop`, e.g. on Ctrl-C): the watcher polls the flag every
//! 5 ms; when it is set it moves the end of the run to now and wakes the sleepers, and every
//! thread then stops as at a normal end. A handler that raced with the stop may have released a
//! job due a little after the stop time, so the effective end is the later of the stop time
//! and just after the latest released due time; jobs due before it that no handler reached are
//! released by the drain, and the result is marked `interrupted` with `duration_ns` = the time
//! actually run.

use crate::clock;
use crate::tracer::RELEASE_CPU;
use rtsched_model::TaskSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Buffer id of the end-of-run release drain (its records are bookkeeping, not overhead).
pub const DRAIN_CPU: u16 = RELEASE_CPU - 1;

/// Time zero, the end, and the stop state of one run (monotonic ns).
#[derive(Debug)]
pub struct Lifecycle {
    pub t0: u64,
    pub planned_end: u64,
    end: AtomicU64,
    stopped_at: AtomicU64,
}

impl Lifecycle {
    /// Time zero `start_delay_ns` from now; the planned end `duration_ns` after it.
    pub fn new(start_delay_ns: u64, duration_ns: u64) -> Lifecycle {
        let t0 = clock::monotonic_ns() + start_delay_ns;
        let planned_end = t0 + duration_ns;
        Lifecycle { t0, planned_end, end: AtomicU64::new(planned_end), stopped_at: AtomicU64::new(u64::MAX) }
    }

    /// The end of the run now (lowered by an early stop). One relaxed load: polled by bodies.
    #[inline(always)]
    pub fn end(&self) -> u64 {
        self.end.load(Ordering::Relaxed)
    }

    /// Moves the end to `now` (not before time zero) unless the run has already ended or was
    /// already stopped; returns whether it did.
    pub fn stop_at(&self, now: u64) -> bool {
        let at = now.max(self.t0);
        if self.stopped_at.load(Ordering::SeqCst) != u64::MAX || at >= self.end() {
            return false;
        }
        self.stopped_at.store(at, Ordering::SeqCst);
        self.end.store(at, Ordering::SeqCst);
        true
    }

    /// Whether an early stop ended the run.
    pub fn interrupted(&self) -> bool {
        self.stopped_at.load(Ordering::SeqCst) != u64::MAX
    }

    /// The end the results cover: the planned end, or for an interrupted run the later of the
    /// stop time and just after the latest released due time `last_due`, within
    /// `(t0, planned_end]`.
    pub fn effective_end(&self, last_due: Option<u64>) -> u64 {
        let stopped_at = self.stopped_at.load(Ordering::SeqCst);
        if stopped_at == u64::MAX {
            return self.planned_end;
        }
        stopped_at.max(last_due.unwrap_or(self.t0) + 1).clamp(self.t0 + 1, self.planned_end)
    }

    /// The watcher: until `done`, polls `stop` every 5 ms and, once it is set, stops the run
    /// and calls `wake` (which wakes every sleeping thread); `each(now)` is called on every
    /// poll and ends the watch by returning true (the engine's overrun check).
    pub fn watch(
        &self,
        stop: Option<&AtomicBool>,
        done: &AtomicBool,
        wake: impl Fn(),
        mut each: impl FnMut(u64) -> bool,
    ) -> bool {
        loop {
            if done.load(Ordering::SeqCst) {
                return false;
            }
            let now = clock::monotonic_ns();
            if stop.is_some_and(|f| f.load(Ordering::SeqCst)) && self.stop_at(now) {
                wake();
            }
            if each(now) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

/// Jobs due in `[t0, end)` per task that were not released (`released[i]` were): the size of
/// the drain, so that the drain itself never drops a record.
pub fn missing_releases(ts: &TaskSet, t0: u64, end: u64, released: &[u32]) -> u64 {
    ts.iter().zip(released).map(|(t, &r)| (end - t0).div_ceil(t.period).saturating_sub(r as u64)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_effective_end_covers_raced_releases() {
        let l =
            Lifecycle { t0: 100, planned_end: 1100, end: AtomicU64::new(1100), stopped_at: AtomicU64::new(u64::MAX) };
        assert_eq!(l.effective_end(Some(900)), 1100);
        assert!(l.stop_at(50)); // before time zero: the stop is at time zero
        assert!(l.interrupted() && l.end() == 100);
        assert!(!l.stop_at(500), "a second stop changes nothing");
        assert_eq!(l.effective_end(None), 101);
        assert_eq!(l.effective_end(Some(300)), 301);
        assert_eq!(l.effective_end(Some(5000)), 1100);
        let ts = TaskSet::from_ct(&[(1, 10), (1, 30)]).unwrap();
        assert_eq!(missing_releases(&ts, 100, 131, &[2, 0]), 4 - 2 + 2);
    }
}
