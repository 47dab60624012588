//! The loom model of the fine-grained protocol (`Core::settle`) over Hunt et al.'s heap on
//! one CPU, with the processor-mapping lock, the heap's node locks and the completion counts
//! all under loom: worker 0 runs job `a`; the service thread releases `b` (earlier deadline),
//! which reserves CPU 0, dequeues `b` and requeues `a` without the mapping lock; meanwhile
//! the worker notices, runs whatever it was given and completes it. In every interleaving,
//! at rest, no CPU is reserved, every pending job is linked or queued exactly once and the
//! linked job is the pending one of highest priority (the G-EDF invariant: no missed
//! preemption). The broken twin skips the re-check after the last insertion — RTSS 2009, §3:
//! "priorities are checked again upon re-insertion, otherwise, preemptions could be missed"
//! — and loom finds the interleaving in which the worker completed `b`, found the queue empty
//! and went idle just before `a` was requeued.

use super::*;
use crate::sync::loom_model::Loom;
use crate::sync::SpinGuard;
use crate::tracer::TraceBuffer;
use loom::thread;

/// A test double of the effects without threads (shared with `fine/tests.rs`): traced locks
/// on its own buffer; requests go nowhere (the model's worker reschedules by itself).
pub(super) struct TestSink {
    tb: TraceBuffer,
}

impl Effects for TestSink {
    fn lock<'l, T, B: Primitives>(&mut self, l: &'l SpinLock<T, B>) -> SpinGuard<'l, T, B> {
        l.lock(&mut self.tb)
    }
    fn preempt(&mut self, _cpu: usize) {}
    fn notify(&mut self, _thread: usize) {}
}

/// The double for thread `cpu`.
pub(super) fn sink(cpu: usize) -> TestSink {
    TestSink { tb: TraceBuffer::new(cpu as u16, 4096) }
}

fn model<const RECHECK: bool>() {
    let mut b = loom::model::Builder::new();
    // One preemption: the missed preemption needs one (the service thread, this one, is
    // preempted between dropping the mapping lock and requeueing, and the worker runs to its
    // end); two did not finish in ten minutes here.
    b.preemption_bound = Some(1);
    b.check(|| {
        let params = [TaskParams { deadline: 100, period: 1000 }, TaskParams { deadline: 50, period: 1000 }];
        let mut book = TaskBook::new(&params, &[0, 1], PriorityRule::Edf, 0, 1000);
        let mut jobs = Vec::new();
        book.release_due(0, |j, _| jobs.push(j));
        let (a, b) = (jobs[0], jobs[1]);
        assert!(b.prio < a.prio, "b has the earlier deadline");
        type C<const R: bool> = Core<ConcurrentHeap<Prio, Loom>, Loom, R>;
        let core: &'static C<RECHECK> = Box::leak(Box::new(C::<RECHECK>::new(1, book, 2, ConcurrentHeap::with_capacity(4))));
        // Worker 0 runs a.
        let mut w = sink(0);
        let mut hand = Hand::new();
        hand.push(a.prio);
        core.release(&mut w, 0, &mut hand);
        assert_eq!(core.schedule(&mut w, 0, Prev::Idle, None), Some(a));
        // The worker (a thread of its own) reschedules once and completes what it got.
        let t = thread::spawn(move || {
            let completed = core.schedule(&mut w, 0, Prev::Preempted(a), None);
            if let Some(j) = completed {
                core.schedule(&mut w, 0, Prev::Completed(j), None);
            }
            completed
        });
        // The service thread (this one) releases b.
        let mut s = sink(1);
        let mut hand = Hand::new();
        hand.push(b.prio);
        core.release(&mut s, 1, &mut hand);
        let completed = t.join().unwrap();
        let mut pending: Vec<Prio> = [a, b].iter().filter(|j| Some(**j) != completed).map(|j| j.prio).collect();
        pending.sort_unstable();
        if let Err(e) = core.check_at_rest(&pending) {
            panic!("missed preemption: {e}");
        }
    });
}

#[test]
fn loom_the_protocol_misses_no_preemption() {
    model::<true>();
}

#[test]
#[should_panic(expected = "missed preemption")]
fn loom_catches_a_protocol_without_the_recheck() {
    model::<false>();
}
