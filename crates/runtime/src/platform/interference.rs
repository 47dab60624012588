//! Host interference as each thread sees it (the measurement protocol, `docs/overheads.md`,
//! "Measurement protocol"): intervals in which the host took the thread's CPU away, recorded
//! as [`RecKind::HostGap`] records (`arg` = the interval's start, monotonic ns; the record's
//! time its end). The run's overhead samples that overlap one on the same CPU are discarded
//! from its statistics and counted (`rtsched_trace::OverheadStats`).
//!
//! Two detectors:
//! * **clock jumps in busy loops**: a job body polls every ~0.1 µs and an idle spin reads the
//!   clock as often; a gap between two reads longer than
//!   [`INTERFERENCE_GAP_NS`](rtsched_trace::stats::INTERFERENCE_GAP_NS) (10 µs) is an
//!   interrupt, a preemption or a hypervisor stall (the body's poll-gap detector, which also
//!   gives the run's `max_poll_gap_ns`);
//! * **run-queue waits** ([`RunQueueProbe`]): the thread's time spent runnable but not running
//!   (`/proc/thread-self/schedstat`, second field, kernel `sched_info`), read when a job
//!   completes and before a thread idles; growth above
//!   [`INTERFERENCE_WAIT_NS`](rtsched_trace::stats::INTERFERENCE_WAIT_NS) (50 µs) since the
//!   previous read marks the whole interval between the two reads (the wait's position in it
//!   is unknown). This sees what the busy-loop detector cannot: a preemption inside a
//!   scheduler or release handler, and a wake-up delayed by another thread.
//!
//! Not seen: interrupts shorter than 10 µs, interrupt time inside a handler's span (it does not
//! count as a run-queue wait), waits below 50 µs; kernels without `CONFIG_SCHED_INFO` (no
//! schedstat file: the probe is off). `kernel-sd` records neither (the kernel schedules it).

use crate::clock;
use crate::tracer::{RecKind, TraceBuffer};
use rtsched_trace::stats::INTERFERENCE_WAIT_NS;
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Records a clock jump `[from, now]` (monotonic ns) seen by a busy loop.
#[inline]
pub fn record_gap(trace: &mut TraceBuffer, from: u64) {
    trace.record(RecKind::HostGap, 0, 0, from);
}

/// Reads the calling thread's run-queue wait from `/proc/thread-self/schedstat` (opened once,
/// by the thread it describes) and records a [`RecKind::HostGap`] over the interval since the
/// previous read when it grew by more than `INTERFERENCE_WAIT_NS`.
pub struct RunQueueProbe {
    file: Option<File>,
    wait_ns: u64,
    since: u64,
}

impl RunQueueProbe {
    /// Opens the calling thread's schedstat file (none: the probe does nothing).
    pub fn for_this_thread() -> RunQueueProbe {
        let file = File::open("/proc/thread-self/schedstat").ok();
        let mut p = RunQueueProbe { file, wait_ns: 0, since: clock::monotonic_ns() };
        p.wait_ns = p.read().unwrap_or(0);
        if p.file.is_some() && p.read().is_none() {
            p.file = None;
        }
        p
    }

    /// Whether the kernel provides the file.
    pub fn active(&self) -> bool {
        self.file.is_some()
    }

    fn read(&self) -> Option<u64> {
        let f = self.file.as_ref()?;
        let mut buf = [0u8; 96];
        let n = f.read_at(&mut buf, 0).ok()?;
        parse_run_delay(std::str::from_utf8(&buf[..n]).ok()?)
    }

    /// Checks the wait since the previous check; records the interval if it grew too much.
    pub fn check(&mut self, trace: &mut TraceBuffer) {
        if let Some(w) = self.read() {
            self.saw(w, trace);
        }
    }

    /// The run-queue wait read now is `w` ns.
    fn saw(&mut self, w: u64, trace: &mut TraceBuffer) {
        let now = clock::monotonic_ns();
        if w.saturating_sub(self.wait_ns) > INTERFERENCE_WAIT_NS {
            record_gap(trace, self.since);
        }
        self.wait_ns = w;
        self.since = now;
    }
}

/// The second field of a schedstat line (`cpu_time run_delay timeslices`), ns.
pub fn parse_run_delay(text: &str) -> Option<u64> {
    text.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_second_field_is_the_run_queue_wait() {
        assert_eq!(parse_run_delay("1063630 76020 1\n"), Some(76020));
        assert_eq!(parse_run_delay("1063630\n"), None);
        assert_eq!(parse_run_delay("a b c"), None);
    }

    #[test]
    fn the_probe_reads_this_threads_schedstat_and_records_only_long_waits() {
        let mut p = RunQueueProbe::for_this_thread();
        if p.active() {
            // This thread's own file: its wait only grows.
            let (a, b) = (p.read().unwrap(), p.read().unwrap());
            assert!(b >= a);
        }
        let mut tb = TraceBuffer::new(0, 16);
        p.wait_ns = 1_000;
        p.saw(1_000 + INTERFERENCE_WAIT_NS, &mut tb); // exactly the threshold: not interference
        assert!(tb.records().is_empty());
        let since = p.since;
        p.saw(1_000 + 2 * INTERFERENCE_WAIT_NS + 1, &mut tb);
        assert_eq!(tb.records().len(), 1);
        assert_eq!((tb.records()[0].kind, tb.records()[0].arg), (RecKind::HostGap, since));
        // The next interval starts at that check.
        assert!(p.since >= since && p.wait_ns == 1_000 + 2 * INTERFERENCE_WAIT_NS + 1);
    }
}
