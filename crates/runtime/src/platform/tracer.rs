//! Feather-Trace-style tracing (Brandenburg & Anderson, "Feather-Trace: A Light-Weight Event
//! Tracing Toolkit", OSPERT 2007; per-CPU buffers as in seed 000 §IV).
//!
//! Each CPU (each worker thread, and the dedicated release thread) owns one preallocated
//! [`TraceBuffer`] of fixed-size `Copy` [`Record`]s. Recording is a counter read plus a store
//! into already-faulted memory: no lock, no allocation, no atomic read-modify-write.
//!
//! **Concurrency.** A buffer is strictly single-writer and has no atomic part: it is moved
//! into its worker thread, written only through `&mut self`, and moved back out when the
//! thread is joined; only then is it read. The type system enforces this (recording needs
//! `&mut TraceBuffer`). The tests check the single-threaded contract (order, capacity, drop
//! counting) and, under loom, the hand-off itself: a buffer written by one thread and read
//! after the join is race-free in every interleaving, while reading it earlier — even after
//! a release/acquire "records written" counter says the records are there — is a data race
//! that loom reports (a live reader would need a lock-free ring, which the tracer avoids).
//!
//! **Overflow.** The buffer is linear: it keeps the first `capacity` records and counts every
//! record that did not fit in [`TraceBuffer::dropped`]; the run reports the total. Nothing is
//! dropped silently.

use crate::clock;

/// What a record says. Overhead terms come as start/end pairs on the same CPU (seed 000
/// §IV-A, seed 001 §2): Δrel, Δsch, lock wait inside Δsch, Δcxs; Δipi is a sent/noticed
/// pair; per-job records give the schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum RecKind {
    /// Release handler entered; `arg` = the due time (monotonic ns) of the earliest release it
    /// handles, so `start − arg` is the release event latency (Δev).
    ReleaseStart = 0,
    /// Release handler left (Δrel = end − start).
    ReleaseEnd,
    /// Scheduler entered (Δsch starts; includes lock waits).
    SchedStart,
    /// Scheduler left.
    SchedEnd,
    /// Waiting for a scheduler lock begins (`task` = lock id).
    LockWaitStart,
    /// The lock is held.
    LockWaitEnd,
    /// Dispatch ("context switch") to the chosen job begins.
    CxsStart,
    /// The job's body is about to run.
    CxsEnd,
    /// A reschedule "IPI" sent; `task` = target CPU index.
    IpiSent,
    /// A reschedule request noticed; `arg` = the counter value when it was sent.
    IpiNoticed,
    /// Job released (`task`, `job`); `arg` = its due release time (monotonic ns).
    JobRelease,
    /// Job starts executing for the first time on this CPU.
    JobStart,
    /// Job resumes after a preemption on this CPU.
    JobResume,
    /// Job stops executing before completing.
    JobPreempt,
    /// Job completes on this CPU.
    JobComplete,
    /// Quantum tick handler entered (`arg` = the tick's due time, monotonic ns).
    TickStart,
    /// Quantum tick handler left (Δtck = end − start).
    TickEnd,
    /// Plugin timer handler entered (`arg` = the timer's due time, monotonic ns).
    TimerStart,
    /// Plugin timer handler left.
    TimerEnd,
    /// A span of a mechanism's own overhead term begins (`task` = term id).
    TermStart,
    /// The span of term `task` ends.
    TermEnd,
    /// A latency of term `task` from a counter stamp taken elsewhere (`arg` = the stamp), e.g.
    /// a message written by a client and handled here.
    TermSince,
    /// A sample of term `task` with the value `arg` (e.g. a count).
    TermValue,
    /// Work stealing (RTWS paper, Rule E): this CPU took job (`task`, `job`), a thread, from
    /// the deque of CPU `arg` (an index in the run's CPU list).
    Steal,
    /// Host interference ended now: the host took this CPU from `arg` (monotonic ns) until
    /// this record (`platform::interference`).
    HostGap,
    /// Job (`task`, `job`) stops executing on this CPU and self-suspends (`arg` = its remaining
    /// budget, ns).
    JobSuspend,
    /// The self-suspended job (`task`, `job`) wakes up (ready again); recorded on the thread
    /// that wakes it, just before the plugin's `wake`.
    JobWake,
}

impl RecKind {
    pub fn name(self) -> &'static str {
        match self {
            RecKind::ReleaseStart => "release_start",
            RecKind::ReleaseEnd => "release_end",
            RecKind::SchedStart => "sched_start",
            RecKind::SchedEnd => "sched_end",
            RecKind::LockWaitStart => "lock_wait_start",
            RecKind::LockWaitEnd => "lock_wait_end",
            RecKind::CxsStart => "cxs_start",
            RecKind::CxsEnd => "cxs_end",
            RecKind::IpiSent => "ipi_sent",
            RecKind::IpiNoticed => "ipi_noticed",
            RecKind::JobRelease => "job_release",
            RecKind::JobStart => "job_start",
            RecKind::JobResume => "job_resume",
            RecKind::JobPreempt => "job_preempt",
            RecKind::JobComplete => "job_complete",
            RecKind::TickStart => "tick_start",
            RecKind::TickEnd => "tick_end",
            RecKind::TimerStart => "timer_start",
            RecKind::TimerEnd => "timer_end",
            RecKind::TermStart => "term_start",
            RecKind::TermEnd => "term_end",
            RecKind::TermSince => "term_since",
            RecKind::TermValue => "term_value",
            RecKind::Steal => "steal",
            RecKind::HostGap => "host_gap",
            RecKind::JobSuspend => "job_suspend",
            RecKind::JobWake => "job_wake",
        }
    }
}

/// One trace record: 32 bytes, `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Record {
    /// Raw counter value ([`clock::counter`]); converted to ns after the run.
    pub ts: u64,
    pub arg: u64,
    pub task: u32,
    pub job: u32,
    /// Index of the buffer's CPU in the run's CPU list (`u16::MAX` = release thread).
    pub cpu: u16,
    pub kind: RecKind,
}

/// Buffer id of the service thread on the dedicated CPU (thread index `m`; under GSN-EDF-DI
/// the release thread).
pub const RELEASE_CPU: u16 = u16::MAX;

/// A per-CPU, single-writer, preallocated linear trace buffer.
#[derive(Debug)]
pub struct TraceBuffer {
    cpu: u16,
    recs: Vec<Record>,
    cap: usize,
    dropped: u64,
}

impl TraceBuffer {
    /// Allocates and pre-faults room for `capacity` records (so the first writes take no page
    /// fault on the hot path).
    pub fn new(cpu: u16, capacity: usize) -> TraceBuffer {
        let blank = Record { ts: 0, arg: 0, task: 0, job: 0, cpu, kind: RecKind::JobRelease };
        let mut recs = vec![blank; capacity];
        recs.clear();
        TraceBuffer { cpu, recs, cap: capacity, dropped: 0 }
    }

    /// Records an event now. Never allocates: past capacity the record is counted as dropped.
    #[inline(always)]
    pub fn record(&mut self, kind: RecKind, task: u32, job: u32, arg: u64) {
        let ts = clock::counter();
        self.record_at(ts, kind, task, job, arg);
    }

    /// Records an event with a given counter value.
    #[inline(always)]
    pub fn record_at(&mut self, ts: u64, kind: RecKind, task: u32, job: u32, arg: u64) {
        if self.recs.len() < self.cap {
            // Within the reserved capacity: Vec::push does not reallocate.
            self.recs.push(Record { ts, arg, task, job, cpu: self.cpu, kind });
        } else {
            self.dropped += 1;
        }
    }

    /// Records an event now on behalf of CPU index `cpu` (for per-thread buffers, as under
    /// `kernel-sd`, where one buffer follows a migrating thread).
    #[inline(always)]
    pub fn record_on(&mut self, cpu: u16, kind: RecKind, task: u32, job: u32, arg: u64) {
        let ts = clock::counter();
        if self.recs.len() < self.cap {
            self.recs.push(Record { ts, arg, task, job, cpu, kind });
        } else {
            self.dropped += 1;
        }
    }

    pub fn cpu(&self) -> u16 {
        self.cpu
    }
    pub fn records(&self) -> &[Record] {
        &self.recs
    }
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
    pub fn capacity(&self) -> usize {
        self.cap
    }
    pub fn is_full(&self) -> bool {
        self.recs.len() >= self.cap
    }
    /// Forgets the records (keeps the memory and the drop count).
    pub fn clear(&mut self) {
        self.recs.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Record>(), 32);
    }

    #[test]
    fn records_keep_order_and_timestamps_do_not_decrease() {
        let mut b = TraceBuffer::new(3, 1000);
        for i in 0..1000u32 {
            b.record(RecKind::JobStart, i, i * 2, i as u64);
        }
        let r = b.records();
        assert_eq!(r.len(), 1000);
        assert_eq!(b.dropped(), 0);
        for (i, w) in r.windows(2).enumerate() {
            assert!(w[0].ts <= w[1].ts);
            assert_eq!(w[0].task, i as u32);
            assert_eq!(w[0].cpu, 3);
        }
    }

    #[test]
    fn a_full_buffer_counts_drops_and_does_not_grow() {
        let mut b = TraceBuffer::new(0, 4);
        let ptr = b.records().as_ptr();
        for i in 0..10 {
            b.record(RecKind::JobRelease, i, 0, 0);
        }
        assert_eq!(b.records().len(), 4);
        assert_eq!(b.dropped(), 6);
        assert_eq!(b.records().as_ptr(), ptr, "the buffer was reallocated");
        assert_eq!(b.records()[3].task, 3, "a linear buffer keeps the first records");
        let mut z = TraceBuffer::new(0, 0);
        z.record(RecKind::JobRelease, 0, 0, 0);
        assert_eq!(z.dropped(), 1);
    }
}

/// The read-after-join contract under loom (see the module docs). The buffer sits in a loom
/// cell so that loom sees every write and read of it and checks they are ordered.
#[cfg(test)]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::atomic::{AtomicU32, Ordering};
    use loom::sync::Arc;
    use loom::thread;

    fn write_three(cell: &UnsafeCell<TraceBuffer>, progress: &AtomicU32) {
        for i in 0..3u32 {
            // SAFETY: this thread is the buffer's only writer (what loom checks).
            cell.with_mut(|b| unsafe { (*b).record(RecKind::JobStart, i, 0, 0) });
            progress.store(i + 1, Ordering::Release);
        }
    }

    #[test]
    fn loom_a_buffer_read_after_join_sees_every_record() {
        loom::model(|| {
            let cell = Arc::new(UnsafeCell::new(TraceBuffer::new(1, 2)));
            let progress = Arc::new(AtomicU32::new(0));
            let (c2, p2) = (cell.clone(), progress.clone());
            thread::spawn(move || write_three(&c2, &p2)).join().unwrap();
            // SAFETY: the writer has been joined.
            cell.with(|b| unsafe {
                let b = &*b;
                assert_eq!(b.records().len(), 2);
                assert_eq!(b.dropped(), 1, "the third record must be counted as dropped");
                assert_eq!(b.records().iter().map(|r| (r.task, r.cpu)).collect::<Vec<_>>(), [(0, 1), (1, 1)]);
            });
        });
    }

    /// Reading while the writer may still record is a race even after an acquire load of a
    /// released progress counter: loom must report it.
    #[test]
    #[should_panic(expected = "Causality violation")]
    fn loom_catches_a_read_before_join() {
        loom::model(|| {
            let cell = Arc::new(UnsafeCell::new(TraceBuffer::new(1, 4)));
            let progress = Arc::new(AtomicU32::new(0));
            let (c2, p2) = (cell.clone(), progress.clone());
            let t = thread::spawn(move || write_three(&c2, &p2));
            if progress.load(Ordering::Acquire) >= 1 {
                // SAFETY: deliberately unsound; loom reports the race.
                cell.with(|b| unsafe { assert!(!(*b).records().is_empty()) });
            }
            t.join().unwrap();
        });
    }
}
