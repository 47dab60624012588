//! Each operation of RTAS 2014, §III-C on the state machine alone (no threads): the DSP's
//! `DspCore`, the clients' pairs, and reschedule requests collected in a vector.
use super::*;
use crate::mechanism::dispatch::pairs::Pair;

/// The DSP and its clients, driven by hand.
struct Rig {
    core: DspCore,
    pairs: Pairs,
    /// Reschedule requests sent to each client (not yet taken).
    req: Vec<bool>,
}

/// Deadline `d` (EDF key of job 0: its deadline, the release being 0), period 1000.
fn p(d: u64) -> TaskParams {
    TaskParams { deadline: d, period: 1000 }
}

impl Rig {
    fn new(params: &[TaskParams], m: usize) -> Rig {
        Rig { core: DspCore::new(params, m, 0, 1_000_000), pairs: Pairs::new(m, params.len()), req: vec![false; m] }
    }
    fn enact(&mut self) {
        let req = &mut self.req;
        self.core.enact(&self.pairs, |c| req[c] = true);
    }
    fn release(&mut self, now: u64) {
        self.core.release_due(now, |_| ());
        self.enact();
    }
    /// Client `c` answers its request (operation (2)).
    fn pick(&mut self, c: usize) -> Option<Job> {
        self.req[c] = false;
        self.pairs.pick(c, None, None)
    }
    fn msg(&mut self, op: u32, sender: usize, j: Job) {
        self.core.handle(&Msg { op, sender: sender as u32, task: j.task(), seq: j.seq(), stamp: 0 });
        self.enact();
    }
    /// The client running each task's head job's link, per the DSP.
    fn on(&self, task: u32) -> Option<usize> {
        (0..self.pairs_m()).find(|&c| self.core.linked(c).is_some_and(|l| l.task == task))
    }
    fn pairs_m(&self) -> usize {
        self.req.len()
    }
    fn queued(&self) -> Vec<Prio> {
        let mut v: Vec<Prio> = self.core.policy.ready_queue().keys();
        v.sort();
        v
    }
    fn ok(&self) {
        let sched = (0..self.pairs_m()).filter_map(|c| self.pairs.pair(c).scheduled);
        assert_eq!(self.core.check(sched), Ok(()));
    }
}

#[test]
fn op1_release_links_an_idle_client_then_preempts_the_lowest() {
    let mut r = Rig::new(&[p(30), p(40)], 1);
    r.release(0);
    let a = r.core.job(0, 0);
    assert_eq!(r.core.linked(0), Some(a.prio));
    assert!(r.req[0], "the idle client is told");
    assert_eq!(r.pick(0), Some(a));
    assert_eq!(r.queued(), vec![r.core.job(1, 0).prio]);
    r.ok();
}

#[test]
fn op3_the_client_invalidates_its_link_and_idles() {
    let mut r = Rig::new(&[p(30), p(40)], 1);
    r.release(0);
    let a = r.pick(0).unwrap();
    assert_eq!(r.pairs.suspend(0, a, None), None, "nothing else is linked: it idles");
    assert_eq!(r.pairs.pair(0), Pair { linked: None, scheduled: None });
    assert!(r.pairs.is_asleep(&a));
    // Until the DSP handles the message it still links A there.
    assert_eq!(r.core.linked(0), Some(a.prio));
}

#[test]
fn op4_the_dsp_discards_the_job_and_refills_the_sender() {
    let mut r = Rig::new(&[p(30), p(40)], 1);
    r.release(0);
    let a = r.pick(0).unwrap();
    r.pairs.suspend(0, a, None);
    r.msg(OP_SUSPEND, 0, a);
    let b = r.core.job(1, 0);
    assert!(r.core.suspended(0));
    assert_eq!(r.core.linked(0), Some(b.prio));
    assert!(r.queued().is_empty(), "A is nowhere");
    assert!(r.req[0]);
    assert_eq!(r.pick(0), Some(b));
    r.ok();
}

#[test]
fn op1_a_clients_resumption_message_makes_the_job_ready_and_preempts() {
    let mut r = Rig::new(&[p(30), p(40)], 1);
    r.release(0);
    let a = r.pick(0).unwrap();
    r.pairs.suspend(0, a, None);
    r.msg(OP_SUSPEND, 0, a);
    let b = r.pick(0).unwrap();
    // Some client (here the same one) wakes A: flag cleared, then the message.
    r.pairs.wake(&a);
    r.msg(OP_RESUME, 0, a);
    assert!(!r.core.suspended(0));
    assert_eq!(r.core.linked(0), Some(a.prio), "A (deadline 30) preempts B (40)");
    assert_eq!(r.queued(), vec![b.prio]);
    assert!(r.req[0]);
    assert_eq!(r.pick(0), Some(a));
    r.ok();
}

#[test]
fn op1_an_external_resumption_is_handled_on_the_dsp() {
    let mut r = Rig::new(&[p(30)], 2);
    r.release(0);
    let c = r.on(0).unwrap();
    let a = r.pick(c).unwrap();
    r.pairs.suspend(c, a, None);
    r.msg(OP_SUSPEND, c, a);
    assert_eq!(r.on(0), None);
    r.pairs.wake(&a);
    r.core.resumed(0, 0);
    r.enact();
    let c2 = r.on(0).unwrap();
    assert!(r.req[c2]);
    assert_eq!(r.pick(c2), Some(a));
    r.ok();
}

#[test]
fn op5_op6_a_completion_refills_the_sender_and_a_tardy_job_joins_at_once() {
    // Task 0: period 10 (job 1 due at 10), task 1 deadline 40.
    let mut r = Rig::new(&[TaskParams { deadline: 10, period: 10 }, p(40)], 1);
    r.release(0);
    let a = r.pick(0).unwrap();
    r.release(10); // A's next job is released while A still runs: backlogged.
    assert_eq!(r.pairs.pick(0, Some(a), None), None, "operation (5)");
    r.msg(OP_COMPLETE, 0, a);
    let a1 = r.core.job(0, 1);
    assert_eq!(r.core.linked(0), Some(a1.prio), "the tardy job (deadline 20) beats B (40)");
    assert_eq!(r.pick(0), Some(a1));
    r.ok();
}

/// The race of operation (4): the DSP preempts J on c (X arrives) while J suspends on c.
#[test]
fn op4_race_a_preempted_job_that_suspends_is_taken_out_of_the_ready_queue() {
    // X: task 0 (deadline 5), its release stands for the "arrival"; J: task 1 (deadline 40).
    let mut r = Rig::new(&[p(5), p(40)], 1);
    // X is suspended from the start, so that it can arrive later by a resumption.
    r.release(0);
    let x = r.pick(0).unwrap();
    r.pairs.suspend(0, x, None);
    r.msg(OP_SUSPEND, 0, x);
    let j = r.pick(0).unwrap();
    assert_eq!(j.task(), 1);
    // The DSP: X arrives (external resumption) and preempts J: J is queued, c's link is X.
    r.pairs.wake(&x);
    r.core.resumed(0, 0);
    r.enact();
    assert_eq!(r.queued(), vec![j.prio]);
    // The client, before noticing: J suspends; its link is X already, which it takes.
    assert_eq!(r.pairs.suspend(0, j, None), Some(x));
    r.msg(OP_SUSPEND, 0, j);
    assert_eq!(r.core.linked(0), Some(x.prio), "X stays linked where it runs");
    assert!(r.queued().is_empty(), "J left the ready queue");
    r.ok();
}

/// The race continued: before the suspension message is handled, the DSP links the queued J
/// to another client; that client refuses J (asleep), and the message then unlinks it there.
#[test]
fn op4_race_a_suspended_job_linked_elsewhere_is_refused_then_discarded() {
    // Tasks: X (5), J (40), A (30) on 2 clients.
    let mut r = Rig::new(&[p(5), p(40), p(30), p(50)], 2);
    r.release(0);
    // X and A linked; J and W queued. X suspends so it can arrive later.
    let cx = r.on(0).unwrap();
    let ca = r.on(2).unwrap();
    let x = r.pick(cx).unwrap();
    let a = r.pick(ca).unwrap();
    r.pairs.suspend(cx, x, None);
    r.msg(OP_SUSPEND, cx, x);
    let j = r.pick(cx).unwrap();
    assert_eq!(j.task(), 1);
    // X arrives and preempts J on cx (J queued); J suspends on cx and takes X.
    r.pairs.wake(&x);
    r.core.resumed(0, 0);
    r.enact();
    assert_eq!(r.pairs.suspend(cx, j, None), Some(x));
    // Before the DSP sees J's suspension, A completes on ca: the DSP links J (queued, highest)
    // to ca — cx no longer runs J, so no swap.
    assert_eq!(r.pairs.pick(ca, Some(a), None), None);
    r.msg(OP_COMPLETE, ca, a);
    assert_eq!(r.core.linked(ca), Some(j.prio));
    assert_eq!(r.pick(ca), None, "ca refuses the sleeping J");
    // Now the suspension: J is unlinked from ca, W takes its place.
    r.msg(OP_SUSPEND, cx, j);
    let w = r.core.job(3, 0);
    assert_eq!(r.core.linked(ca), Some(w.prio));
    assert!(r.req[ca]);
    assert_eq!(r.pick(ca), Some(w));
    assert_eq!(r.core.linked(cx), Some(x.prio));
    r.ok();
}

/// A resumption handled before its suspension (two mailboxes): counted, the job stays held,
/// and the client that invalidated its link gets it back.
#[test]
fn op1_an_early_resumption_is_counted_and_the_job_republished() {
    let mut r = Rig::new(&[p(30), p(40)], 1);
    r.release(0);
    let a = r.pick(0).unwrap();
    r.pairs.suspend(0, a, None);
    r.pairs.wake(&a);
    assert_eq!(r.pairs.pair(0).linked, None);
    r.msg(OP_RESUME, 0, a);
    assert!(!r.core.suspended(0));
    assert_eq!(r.pairs.pair(0).linked, Some(a), "published again");
    assert!(r.req[0]);
    assert_eq!(r.pick(0), Some(a));
    r.msg(OP_SUSPEND, 0, a);
    assert!(!r.core.suspended(0), "the suspension only balances the count");
    assert_eq!(r.core.linked(0), Some(a.prio));
    r.ok();
}

/// Messages about a job that completed before they were handled are ignored.
#[test]
fn late_messages_of_a_completed_job_are_ignored() {
    let mut r = Rig::new(&[TaskParams { deadline: 10, period: 10 }, p(40)], 1);
    r.release(0);
    let a = r.pick(0).unwrap();
    r.pairs.suspend(0, a, None);
    r.pairs.wake(&a);
    r.msg(OP_RESUME, 0, a); // early: republished
    assert_eq!(r.pick(0), Some(a));
    assert_eq!(r.pairs.pick(0, Some(a), None), None);
    r.msg(OP_COMPLETE, 0, a);
    r.release(10);
    let a1 = r.core.job(0, 1);
    assert_eq!(r.core.linked(0), Some(a1.prio));
    r.msg(OP_SUSPEND, 0, a); // A's suspension, late
    assert!(!r.core.suspended(0));
    assert_eq!(r.core.linked(0), Some(a1.prio));
    r.ok();
}

/// The naive handling (unlink the sender) loses the preempting job in the race.
#[test]
fn the_naive_handling_loses_the_preempting_job() {
    let mut r = Rig::new(&[p(5), p(40)], 1);
    r.core.naive_suspend = true;
    r.release(0);
    let x = r.pick(0).unwrap();
    r.pairs.suspend(0, x, None);
    r.msg(OP_SUSPEND, 0, x); // ordinary case: naive and right agree
    let j = r.pick(0).unwrap();
    r.pairs.wake(&x);
    r.core.resumed(0, 0);
    r.enact();
    assert_eq!(r.pairs.suspend(0, j, None), Some(x));
    r.msg(OP_SUSPEND, 0, j);
    let sched = (0..1).filter_map(|c| r.pairs.pair(c).scheduled);
    assert!(r.core.check(sched).is_err(), "X unlinked while it runs, J still queued");
}
