//! G-EDF-MP driven without threads: random interleavings, on m = 3 clients, of DSP releases,
//! DSP mailbox service, clients noticing requests, clients completing jobs, jobs suspending
//! (operation (3)) and resuming (operation (1): by a client's message or on the DSP as an
//! external event) — so every race of §III-C that completions, suspensions and preemptions
//! can produce shows up (a job completed or suspended while its preemption is in flight, a
//! still-scheduled job linked elsewhere, a completed or sleeping job linked before the DSP
//! learned of it, a resumption handled before its suspension). After every step:
//! * the DSP's links are G-EDF's choice (`rtsched_policy::Gedf` given the ready jobs) for what
//!   the DSP has been told: releases at once, completions and suspensions when their message
//!   is served (the scheduling processor's delay; a service drains every mailbox);
//! * everything the policy linked has been published to the clients;
//! * no job runs on two clients, no completed or suspended job runs, and a client whose pair
//!   differs from what it runs has a reschedule request pending (or a message about that job
//!   is still in flight);
//! * the structures are consistent (pending jobs linked or queued, the G-EDF invariant).
//!
//! At the end every message is served and every client follows its requests until nothing is
//! pending: then each client runs exactly what the DSP links to it (no job left behind by a
//! race).
//!
//! The same interleavings again with spinning clients (`--idle spin`): every client follows its
//! requests right after each step, and must then run exactly its link (unless that job's
//! completion or suspension is still unserved).
use super::*;
use crate::sync::CpuSignal;
use crate::tracer::{RecKind, TraceBuffer};
use proptest::prelude::*;
use rtsched_policy::{Gedf, Policy};
use std::collections::HashSet;

/// What the DSP has been told, and G-EDF's choice for it.
struct Told {
    m: usize,
    period: Vec<u64>,
    released: Vec<u32>,
    completed: Vec<u32>,
    asleep: Vec<bool>,
}

impl Told {
    fn prio(&self, task: usize, seq: u32) -> Prio {
        Prio { key: seq as u64 * self.period[task] + self.period[task], task: task as u32, job: seq }
    }
    /// G-EDF's links for the ready jobs (released head jobs not suspended), as a sorted set.
    fn gedf(&self) -> Vec<Prio> {
        let mut g = Gedf::new(self.m);
        for t in 0..self.period.len() {
            if self.released[t] > self.completed[t] && !self.asleep[t] {
                g.job_ready(self.prio(t, self.completed[t]));
            }
        }
        let mut v: Vec<Prio> = (0..self.m).filter_map(|c| g.linked(c)).collect();
        v.sort();
        v
    }
}

/// The clients' truth.
struct Truth {
    running: Vec<Option<Job>>,
    done: HashSet<(u32, u32)>,
    completed: Vec<u32>,
    asleep: Vec<Option<Job>>,
    /// Tasks with a message in flight (sent, not served).
    in_flight: HashSet<u32>,
}

fn check(g: &GedfMp, told: &Told, t: &Truth, sig: &[CpuSignal]) -> Result<(), String> {
    let mut set: Vec<Prio> = g.linked().into_iter().flatten().collect();
    set.sort();
    if set != told.gedf() {
        return Err(format!("links {set:?}, G-EDF's {:?}", told.gedf()));
    }
    let d = g.dsp.lock_untraced();
    for (c, sc) in sig.iter().enumerate().take(g.m) {
        if d.core.publisher.published(c) != d.core.policy.linked(c) {
            return Err(format!("client {c}: policy link {:?} not published", d.core.policy.linked(c)));
        }
        let p = g.links.pair(c);
        if p.scheduled != t.running[c] {
            return Err(format!("client {c}: scheduled {:?} but runs {:?}", p.scheduled, t.running[c]));
        }
        let excused = p.linked.is_some_and(|j| g.links.is_stale(&j) || t.in_flight.contains(&j.task()));
        if p.linked != p.scheduled && !excused && !sc.resched_pending() {
            return Err(format!("client {c}: linked {:?} runs {:?} and has no request", p.linked, p.scheduled));
        }
    }
    let mut runs: Vec<Prio> = t.running.iter().flatten().map(|j| j.prio).collect();
    runs.sort();
    if runs.windows(2).any(|w| w[0] == w[1]) {
        return Err(format!("a job runs twice: {runs:?}"));
    }
    if let Some(j) = t.running.iter().flatten().find(|j| t.done.contains(&(j.task(), j.seq()))) {
        return Err(format!("completed job {j:?} runs again"));
    }
    if let Some(j) = t.running.iter().flatten().find(|j| t.asleep[j.task() as usize].is_some()) {
        return Err(format!("suspended job {j:?} runs"));
    }
    g.check(&d)
}

/// Client `c` (or the DSP, `c == m`) context.
fn ctx<'a>(c: usize, tb: &'a mut TraceBuffer, sig: &'a [CpuSignal]) -> Ctx<'a> {
    Ctx::new(c, tb, sig)
}

/// The property test's driver: `ops` applied in order, each followed by the checks above; with
/// `spinning`, every client follows its reschedule requests right after each step, as a client
/// that spins on its request word (`--idle spin`) does — the interleaving G-EDF-MP's spinning
/// clients produce — and must then run exactly what is published to it.
fn drive(periods: Vec<u64>, boxes: usize, ops: Vec<(u8, usize, u64)>, spinning: bool) -> Result<(), TestCaseError> {
    let m = 3;
    let params: Vec<TaskParams> = periods.iter().map(|&p| TaskParams { deadline: p, period: p }).collect();
    let g = GedfMp::even(&params, m, 0, 1_000_000, IdleMode::Spin, boxes, 64);
    let n = params.len();
    let mut told = Told { m, period: periods.clone(), released: vec![0; n], completed: vec![0; n], asleep: vec![false; n] };
    let mut t = Truth {
        running: vec![None; m],
        done: HashSet::new(),
        completed: vec![0; n],
        asleep: vec![None; n],
        in_flight: HashSet::new(),
    };
    let sig: Vec<CpuSignal> = (0..=m).map(|_| CpuSignal::new()).collect();
    let mut tb = TraceBuffer::new(0, 1_000_000);
    let mut now = 0u64;
    // Serves the mailboxes: the DSP is told everything sent so far.
    let serve = |t: &mut Truth, told: &mut Told, tb: &mut TraceBuffer, now: u64| {
        if sig[m].take_notify() {
            g.notified(&mut ctx(m, tb, &sig), now);
            told.completed.clone_from(&t.completed);
            for (k, a) in t.asleep.iter().enumerate() {
                told.asleep[k] = a.is_some();
            }
            t.in_flight.clear();
        }
    };
    for (op, c, dt) in ops {
        let seen = tb.records().len();
        match op {
            0 => {
                now += dt;
                if g.next_release(0) <= now {
                    g.release(&mut ctx(m, &mut tb, &sig), 0, now);
                }
            }
            1 => serve(&mut t, &mut told, &mut tb, now),
            2 => {
                // Client c notices a request (or is idle) and reschedules.
                if sig[c].resched_pending() || t.running[c].is_none() {
                    let prev = t.running[c].map_or(Prev::Idle, Prev::Preempted);
                    t.running[c] = g.schedule(&mut ctx(c, &mut tb, &sig), prev, now);
                }
            }
            3 => {
                if let Some(j) = t.running[c] {
                    t.done.insert((j.task(), j.seq()));
                    t.completed[j.task() as usize] += 1;
                    t.in_flight.insert(j.task());
                    t.running[c] = g.schedule(&mut ctx(c, &mut tb, &sig), Prev::Completed(j), now);
                }
            }
            4 => {
                // The job on client c suspends (operation (3): the plugin contract's block).
                if let Some(j) = t.running[c] {
                    t.asleep[j.task() as usize] = Some(j);
                    t.in_flight.insert(j.task());
                    t.running[c] = g.schedule(&mut ctx(c, &mut tb, &sig), Prev::Blocked(j), now);
                }
            }
            _ => {
                // A sleeping job resumes (the contract's wake): woken on client c (a message)
                // or, for op 6, on the DSP's thread (an external event).
                let sleeping: Vec<usize> = (0..n).filter(|&k| t.asleep[k].is_some()).collect();
                if !sleeping.is_empty() {
                    let k = sleeping[(dt as usize + c) % sleeping.len()];
                    let j = t.asleep[k].take().unwrap();
                    if op == 5 {
                        t.in_flight.insert(j.task());
                        g.wake(&mut ctx(c, &mut tb, &sig), j, now);
                    } else {
                        g.wake(&mut ctx(m, &mut tb, &sig), j, now);
                        told.asleep[k] = false;
                    }
                }
            }
        }
        for x in &tb.records()[seen..] {
            if x.kind == RecKind::JobRelease {
                told.released[x.task as usize] += 1;
            }
        }
        if spinning {
            // Spinning clients: each takes its request before anything else happens.
            for c in 0..m {
                if sig[c].resched_pending() {
                    let prev = t.running[c].map_or(Prev::Idle, Prev::Preempted);
                    t.running[c] = g.schedule(&mut ctx(c, &mut tb, &sig), prev, now);
                }
            }
            // So every client runs what is published to it, unless that is a job whose
            // completion or suspension the DSP has not served yet (the client refuses it).
            for (c, runs) in t.running.iter().enumerate() {
                let p = g.links.pair(c);
                let excused = p.linked.is_some_and(|j| g.links.is_stale(&j) || t.in_flight.contains(&j.task()));
                prop_assert!(!sig[c].resched_pending(), "client {} left a request pending", c);
                prop_assert!(
                    excused || p.linked.map(|j| j.prio) == runs.map(|j| j.prio),
                    "spinning client {} runs {:?}, its link is {:?}",
                    c,
                    runs,
                    p.linked
                );
            }
        }
        prop_assert_eq!(check(&g, &told, &t, &sig), Ok(()));
    }
    // Quiesce: serve, let every client follow its requests, until nothing is pending.
    for _ in 0..(4 * m + 8) {
        serve(&mut t, &mut told, &mut tb, now);
        for c in 0..m {
            if sig[c].resched_pending() {
                let prev = t.running[c].map_or(Prev::Idle, Prev::Preempted);
                t.running[c] = g.schedule(&mut ctx(c, &mut tb, &sig), prev, now);
            }
        }
        prop_assert_eq!(check(&g, &told, &t, &sig), Ok(()));
    }
    prop_assert!(!sig[m].is_set() && (0..m).all(|c| !sig[c].resched_pending()), "still pending after quiescing");
    let links = g.linked();
    for (c, l) in links.iter().enumerate() {
        prop_assert_eq!(t.running[c].map(|j| j.prio), *l, "client {} does not run its link", c);
    }
    let acc = g.accounting();
    prop_assert_eq!(acc.consistent, Ok(()));
    prop_assert_eq!(&acc.completed, &t.completed);
    prop_assert_eq!(&acc.released, &told.released);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn links_equal_gedfs_with_the_dsps_delay(
        periods in proptest::collection::vec(5u64..40, 2..7),
        boxes in 1usize..4,
        ops in proptest::collection::vec((0u8..7, 0usize..3, 1u64..15), 1..250),
    ) {
        drive(periods, boxes, ops, false)?;
    }

    /// The same with spinning clients (`--idle spin`): the links are still G-EDF's, and no
    /// client is left behind its link.
    #[test]
    fn links_equal_gedfs_with_spinning_clients(
        periods in proptest::collection::vec(5u64..40, 2..7),
        boxes in 1usize..4,
        ops in proptest::collection::vec((0u8..7, 0usize..3, 1u64..15), 1..250),
    ) {
        drive(periods, boxes, ops, true)?;
    }
}

/// The race of §III-C on the real plugin: B is preempted on its client by X but still runs
/// there when A completes and the DSP links B to A's client; the link stays with B's
/// client (a swap) and X goes to A's client; nothing runs twice.
#[test]
fn a_still_scheduled_job_is_swapped_not_moved() {
    let p = |d| TaskParams { deadline: d, period: 1000 };
    // A (D 30), B (D 40) at time 0; X (D 5) arrives at 10.
    let g = GedfMp::even(&[p(30), p(40)], 2, 0, 1_000_000, IdleMode::Spin, 1, 8);
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
        d.core.policy.job_ready(x);
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
    d.core.policy.unlink(ca);
    d.core.policy.link_all();
    g.enact(&mut d, &mut Ctx::new(2, &mut tb, &sig));
    drop(d);
    assert_eq!((msg.task, msg.seq, msg.sender as usize), (0, 0, ca));
    assert_eq!(g.swaps(), 1);
    assert_eq!(g.links.pair(cb).linked, Some(b), "B stays where it runs");
    assert_eq!(g.links.pair(ca).linked.map(|j| (j.task(), j.seq())), Some((0, 1)), "X goes to the freed client");
    assert!(sig[ca].resched_pending());
    assert_eq!(g.schedule(&mut Ctx::new(cb, &mut tb, &sig), Prev::Preempted(b), 10), Some(b));
}

/// `mailboxes=llc|N`: clusters from the (fake) sysfs, the fallback with its note, even splits,
/// and bad values refused naming the parameter.
#[test]
fn mailboxes_follow_the_last_level_caches_or_the_number_given() {
    let root = std::env::temp_dir().join(format!("rtsched-gedfmp-llc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for (c, shared) in ["4-5", "4-5", "6-7", "6-7"].iter().enumerate() {
        let d = root.join(format!("sys/devices/system/cpu/cpu{}/cache/index3", c + 4));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("level"), "3\n").unwrap();
        std::fs::write(d.join("shared_cpu_list"), format!("{shared}\n")).unwrap();
    }
    assert_eq!(mailbox_map("llc", &[4, 6, 5, 7], &root), Ok((vec![0, 1, 0, 1], None)));
    let (map, note) = mailbox_map("llc", &[4, 9], &root).unwrap();
    assert_eq!(map, vec![0, 0]);
    assert!(note.is_some_and(|n| n.contains("cpu9/cache") && n.ends_with("one mailbox")));
    assert_eq!(mailbox_map("2", &[0, 1, 2, 3], &root), Ok((vec![0, 0, 1, 1], None)));
    assert_eq!(mailbox_map("8", &[0, 1], &root), Ok((vec![0, 1], None)), "at most one per client");
    for bad in ["0", "65", "two", ""] {
        let e = mailbox_map(bad, &[0, 1], &root).unwrap_err();
        assert_eq!(e.param, "mailboxes");
        assert!(e.reason.contains("neither llc nor a number from 1 to 64"), "{}", e.reason);
    }
    let g = GedfMp::new(&[TaskParams { deadline: 10, period: 10 }], 4, 0, 100, IdleMode::Spin, vec![0, 1, 0, 1], 8);
    assert_eq!(g.mailboxes(), 2);
    std::fs::remove_dir_all(&root).unwrap();
}
