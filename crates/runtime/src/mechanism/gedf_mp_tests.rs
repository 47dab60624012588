//! G-EDF-MP driven without threads: random interleavings, on m = 3 clients, of DSP releases,
//! DSP mailbox service, clients noticing requests and clients completing jobs — so every race
//! of §III-C that completions and preemptions can produce shows up (a job completed while its
//! preemption is in flight, a still-scheduled job linked elsewhere, a completed job linked
//! again before the DSP learned of its completion). After every step:
//! * the DSP's links equal those of a reference `rtsched_policy::Gedf` fed the same events
//!   *when the DSP handles them* (releases at once, completions when their message is served:
//!   the scheduling processor's delay);
//! * everything the policy linked has been published to the clients;
//! * no job runs on two clients, no completed job runs, and a client whose pair differs from
//!   what it runs has a reschedule request pending;
//! * the structures are consistent (pending jobs linked or queued, the G-EDF invariant).
use super::*;
use crate::sync::CpuSignal;
use crate::tracer::{RecKind, TraceBuffer};
use proptest::prelude::*;
use std::collections::HashSet;

struct Reference {
    policy: Gedf,
    released: Vec<u32>,
    completed: Vec<u32>,
    period: Vec<u64>,
}

impl Reference {
    fn prio(&self, task: usize, seq: u32) -> Prio {
        Prio { key: seq as u64 * self.period[task] + self.period[task], task: task as u32, job: seq }
    }
    fn release(&mut self, task: usize) {
        self.released[task] += 1;
        if self.released[task] == self.completed[task] + 1 {
            let p = self.prio(task, self.completed[task]);
            self.policy.job_ready(p);
        }
    }
    fn complete(&mut self, task: usize, seq: u32) {
        assert!(self.policy.job_done(self.prio(task, seq)), "the reference did not know {task}/{seq}");
        self.completed[task] += 1;
        if self.released[task] > self.completed[task] {
            let p = self.prio(task, self.completed[task]);
            self.policy.job_ready(p);
        }
    }
    fn linked_set(&self) -> Vec<Prio> {
        let mut v: Vec<Prio> = (0..self.policy.m()).filter_map(|c| self.policy.linked(c)).collect();
        v.sort();
        v
    }
}

fn check(
    g: &GedfMp,
    r: &Reference,
    running: &[Option<Job>],
    done: &HashSet<(u32, u32)>,
    sig: &[CpuSignal],
) -> Result<(), String> {
    let mut set: Vec<Prio> = g.linked().into_iter().flatten().collect();
    set.sort();
    if set != r.linked_set() {
        return Err(format!("links {set:?}, the policy's {:?}", r.linked_set()));
    }
    let d = g.dsp.lock_untraced();
    for c in 0..g.m {
        if d.publisher.published(c) != d.policy.linked(c) {
            return Err(format!("client {c}: policy link {:?} not published", d.policy.linked(c)));
        }
        let p = g.links.pair(c);
        if p.scheduled != running[c] {
            return Err(format!("client {c}: scheduled {:?} but runs {:?}", p.scheduled, running[c]));
        }
        let stale = p.linked.is_some_and(|j| g.links.is_done(&j));
        if p.linked != p.scheduled && !stale && !sig[c].resched_pending() {
            return Err(format!("client {c}: linked {:?} runs {:?} and has no request", p.linked, p.scheduled));
        }
    }
    let mut runs: Vec<Prio> = running.iter().flatten().map(|j| j.prio).collect();
    runs.sort();
    if runs.windows(2).any(|w| w[0] == w[1]) {
        return Err(format!("a job runs twice: {runs:?}"));
    }
    if let Some(j) = running.iter().flatten().find(|j| done.contains(&(j.task(), j.seq()))) {
        return Err(format!("completed job {j:?} runs again"));
    }
    g.check(&d)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn links_equal_the_policys_with_the_dsps_delay(
        periods in proptest::collection::vec(5u64..40, 2..7),
        boxes in 1usize..3,
        ops in proptest::collection::vec((0u8..4, 0usize..3, 1u64..15), 1..250),
    ) {
        let m = 3;
        let params: Vec<TaskParams> = periods.iter().map(|&p| TaskParams { deadline: p, period: p }).collect();
        let g = GedfMp::new(&params, m, 0, 1_000_000, IdleMode::Spin, boxes, 64);
        let n = params.len();
        let mut r = Reference {
            policy: Gedf::new(m),
            released: vec![0; n],
            completed: vec![0; n],
            period: periods.clone(),
        };
        let sig: Vec<CpuSignal> = (0..=m).map(|_| CpuSignal::new()).collect();
        let mut tb = TraceBuffer::new(0, 1_000_000);
        let mut running: Vec<Option<Job>> = vec![None; m];
        let mut done = HashSet::new();
        let mut sent: Vec<(u32, u32)> = Vec::new();
        let mut now = 0u64;
        for (op, c, dt) in ops {
            let seen = tb.records().len();
            match op {
                0 => {
                    now += dt;
                    if g.next_release(0) <= now {
                        g.release(&mut Ctx::new(m, &mut tb, &sig), 0, now);
                    }
                }
                1 => {
                    // The DSP serves its mailboxes: the reference learns the completions now.
                    if sig[m].take_notify() {
                        g.notified(&mut Ctx::new(m, &mut tb, &sig), now);
                        for (t, s) in sent.drain(..) {
                            r.complete(t as usize, s);
                        }
                    }
                }
                2 => {
                    // Client c notices a request (or is idle) and reschedules.
                    if sig[c].resched_pending() || running[c].is_none() {
                        let prev = running[c].map_or(Prev::Idle, Prev::Preempted);
                        running[c] = g.schedule(&mut Ctx::new(c, &mut tb, &sig), prev, now);
                    }
                }
                _ => {
                    if let Some(j) = running[c] {
                        done.insert((j.task(), j.seq()));
                        sent.push((j.task(), j.seq()));
                        running[c] = g.schedule(&mut Ctx::new(c, &mut tb, &sig), Prev::Completed(j), now);
                    }
                }
            }
            for x in &tb.records()[seen..] {
                if x.kind == RecKind::JobRelease {
                    r.release(x.task as usize);
                }
            }
            prop_assert_eq!(check(&g, &r, &running, &done, &sig), Ok(()));
        }
        // Whatever is left in the mailboxes is applied by the accounting, which must agree.
        let acc = g.accounting();
        prop_assert_eq!(acc.consistent, Ok(()));
        for (t, s) in sent.drain(..) {
            r.complete(t as usize, s);
        }
        prop_assert_eq!(&acc.completed, &r.completed);
        prop_assert_eq!(&acc.released, &r.released);
    }
}

/// The race of §III-C on the real plugin: B is preempted on its client by X but still runs
/// there when A completes and the DSP links B to A's client; the link stays with B's
/// client (a swap) and X goes to A's client; nothing runs twice.
#[test]
fn a_still_scheduled_job_is_swapped_not_moved() {
    let p = |d| TaskParams { deadline: d, period: 1000 };
    // A (D 30), B (D 40) at time 0; X (D 5) arrives at 10.
    let g = GedfMp::new(&[p(30), p(40)], 2, 0, 1_000_000, IdleMode::Spin, 1, 8);
    let sig: Vec<CpuSignal> = (0..3).map(|_| CpuSignal::new()).collect();
    let mut tb = TraceBuffer::new(0, 1000);
    g.release(&mut Ctx::new(2, &mut tb, &sig), 0, 0);
    let on = |t: u32| g.linked().iter().position(|x| x.is_some_and(|j| j.task == t)).unwrap();
    let (ca, cb) = (on(0), on(1));
    let a = g.schedule(&mut Ctx::new(ca, &mut tb, &sig), Prev::Idle, 0).unwrap();
    let b = g.schedule(&mut Ctx::new(cb, &mut tb, &sig), Prev::Idle, 0).unwrap();
    // X: a job of a higher priority, made ready on the DSP as a release would.
    let x = Prio { key: 5, task: 0, job: 1 };
    {
        let mut d = g.dsp.lock_untraced();
        d.policy.job_ready(x);
        g.enact(&mut d, &mut Ctx::new(2, &mut tb, &sig));
    }
    assert_eq!(g.linked()[cb], Some(x));
    assert!(sig[cb].resched_pending(), "cb is told");
    // A completes on ca (its message goes out); the DSP serves it before cb noticed.
    assert_eq!(g.schedule(&mut Ctx::new(ca, &mut tb, &sig), Prev::Completed(a), 10), None);
    assert!(sig[2].take_notify());
    let mut d = g.dsp.lock_untraced();
    let msg = d.readers[0].pop().unwrap();
    // (Task 0's next job is not X's book entry: apply the completion to the policy only.)
    d.policy.unlink(ca);
    d.policy.link_all();
    g.enact(&mut d, &mut Ctx::new(2, &mut tb, &sig));
    drop(d);
    assert_eq!((msg.task, msg.seq, msg.sender as usize), (0, 0, ca));
    assert_eq!(g.swaps(), 1);
    assert_eq!(g.links.pair(cb).linked, Some(b), "B stays where it runs");
    assert_eq!(g.links.pair(ca).linked.map(|j| (j.task(), j.seq())), Some((0, 1)), "X goes to the freed client");
    assert!(sig[ca].resched_pending());
    assert_eq!(g.schedule(&mut Ctx::new(cb, &mut tb, &sig), Prev::Preempted(b), 10), Some(b));
}
