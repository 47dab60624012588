//! The simulator's entry points on arbitrary small inputs built from the fuzz bytes: every
//! scheduler (gedf, aligned and staggered gedf-quantum, gfp with arbitrary ranks, gfl, edzl, llf,
//! pd2 and run with arbitrary quanta, pedf and pfp over arbitrary — also
//! invalid — partitions, spres over the cascade's placement with one field mutated or over a
//! placement made of bytes, rtws on the plain set and on a small fork-join set), random
//! horizons, offsets, sporadic delays, execution times and overheads, with the simulator's own
//! invariant checks on. A result must be `Ok` or an input error (`SimError::Input`), never an
//! internal error (`SimError::Internal`: an invariant violation), a panic or an overflow (fuzz
//! builds have overflow checks); and every job must be accounted for: released = finished +
//! pending at the horizon, from the result and recomputed from the trace.
#![no_main]
use libfuzzer_sys::fuzz_target;
#[path = "common.rs"]
#[allow(dead_code)]
mod common;
use rtsched_analysis::semi::{cascade, SemiConfig};
use rtsched_model::forkjoin::{ForkJoinSet, ForkJoinTask};
use rtsched_model::{ModelError, Task, TaskSet, Time};
use rtsched_sim::{
    simulate, simulate_rtws, Arrivals, Background, ExecTimes, FpOrder, Overheads, Scheduler, SimConfig, SimError,
    SimResult, SpresConfig,
};
use rtsched_trace::{Event, JobId, Trace};
use serde_json::{json, Value};
use std::collections::HashMap;

struct Bytes<'a>(std::iter::Copied<std::slice::Iter<'a, u8>>);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        self.0.next().unwrap_or(0)
    }
    fn small(&mut self, max: u64) -> u64 {
        self.u8() as u64 % (max + 1)
    }
}

/// Small tasks (1..=64 ns mostly), so that horizons of a few thousand ns hold many jobs; now and
/// then a huge parameter from `common::time` (overflow-prone sums).
fn task_set(n: usize, b: &mut Bytes<'_>) -> TaskSet {
    let t = |b: &mut Bytes<'_>| if b.u8().is_multiple_of(16) { common::time(&mut b.0) } else { b.small(63) + 1 };
    let tasks: Vec<Task> =
        (0..n).map(|_| Task { name: None, wcet: t(b), deadline: t(b), period: t(b), segments: None }).collect();
    TaskSet::new(tasks).expect("parameters are in 1..=MAX_TIME")
}

fn not_internal(e: &SimError, what: &str) {
    assert!(!e.is_internal(), "{what}: {e}");
}

/// Placement parsing reports input errors only (`ModelError`); none may claim to be internal.
fn not_internal_input(e: &ModelError, what: &str) {
    assert!(!e.reason.contains("internal error"), "{what}: {e}");
}

/// Accounting from the trace: releases before the horizon = completions by it + pending,
/// per job; no job completes twice or before its release; the trace's metrics are the result's.
fn account(trace: &Trace, jobs: u64, completed: u64, pending: u64) {
    let h = trace.meta.horizon;
    let mut released: HashMap<JobId, bool> = HashMap::new();
    for r in trace.records.iter().filter(|r| r.time <= h) {
        match r.event {
            Event::Release { job, .. } if r.time < h => {
                assert!(released.insert(job, false).is_none(), "{job:?} released twice");
            }
            Event::Complete { job, .. } => {
                let done = released.get_mut(&job).expect("a job completes before its release");
                assert!(!*done, "{job:?} completes twice");
                *done = true;
            }
            _ => {}
        }
    }
    let fin = released.values().filter(|&&d| d).count() as u64;
    assert_eq!(released.len() as u64, jobs, "released");
    assert_eq!(fin, completed, "finished");
    assert_eq!(jobs - fin, pending, "pending");
}

fn check(r: &SimResult) {
    assert_eq!(r.jobs, r.completed + r.pending);
    assert_eq!(r.per_job.len() as u64, r.jobs);
    assert_eq!(r.per_job.iter().filter(|j| j.finish.is_some()).count() as u64, r.completed);
    let trace = r.trace.as_ref().expect("trace requested");
    account(trace, r.jobs, r.completed, r.pending);
    let m = trace.metrics().expect("the simulator's own trace is consistent");
    assert_eq!(
        (m.jobs, m.completed, m.deadline_misses, m.preemptions, m.migrations),
        (r.jobs, r.completed, r.deadline_misses, r.preemptions, r.migrations)
    );
    if let Some(o) = &r.overheads {
        for s in &o.charged {
            let own = m.overheads.iter().find(|x| x.kind == s.kind).unwrap();
            assert_eq!((own.count, own.total_ns), (s.count, s.total_ns));
        }
    }
}

fn partition(n: usize, m: u32, b: &mut Bytes<'_>) -> Vec<Vec<usize>> {
    let sel = b.u8();
    let cpus = match sel % 8 {
        0 => m as usize + 1, // wrong length
        1 => (m as usize).saturating_sub(1),
        _ => m as usize,
    };
    let mut part = vec![Vec::new(); cpus];
    for i in 0..n {
        let c = b.u8() as usize;
        if cpus > 0 && c % 16 != 15 {
            part[c % cpus].push(i); // a task left out when c % 16 == 15
        }
    }
    if sel % 8 == 2 && cpus > 0 {
        part[0].push(b.u8() as usize % (n + 2)); // a duplicate or an unknown task
    }
    part
}

/// A placement JSON: the cascade's with one field replaced, or one made from bytes.
fn placement(ts: &TaskSet, m: u32, b: &mut Bytes<'_>) -> String {
    let sel = b.u8();
    let p = cascade(ts, m, &SemiConfig::default());
    let mut v = p.to_json();
    if !sel.is_multiple_of(4) {
        if sel % 4 == 1 {
            return v.to_string(); // as placed (maybe not schedulable: rejected)
        }
        let field = ["budget", "period", "deadline", "offset", "part", "parts", "task"][b.u8() as usize % 7];
        let val = b.small(70);
        if let Some(cpus) = v.get_mut("cpus").and_then(Value::as_array_mut) {
            let nc = cpus.len().max(1);
            let pick = b.u8() as usize % nc;
            if let Some(rs) = cpus.get_mut(pick).and_then(|c| c.get_mut("reservations")).and_then(Value::as_array_mut) {
                let nr = rs.len().max(1);
                if let Some(r) = rs.get_mut(b.u8() as usize % nr) {
                    r[field] = json!(val);
                }
            }
        }
        return v.to_string();
    }
    let mut cpus = Vec::new();
    for c in 0..m {
        let mut rs = Vec::new();
        for _ in 0..b.small(2) {
            rs.push(json!({"task": b.small(ts.len() as u64), "budget": b.small(40), "period": b.small(70),
                           "deadline": b.small(70), "offset": b.small(30), "part": b.small(2), "parts": b.small(2)}));
        }
        cpus.push(json!({"cpu": c, "reservations": rs}));
    }
    json!({"m": m, "schedulable": true, "heuristic": "fuzz", "cpus": cpus, "tasks": [], "reason": null}).to_string()
}

fn forkjoin(n: usize, b: &mut Bytes<'_>) -> Option<ForkJoinSet> {
    let mut tasks = Vec::new();
    for _ in 0..n {
        let period = b.small(63) + 1;
        let deadline = b.small(63) + 1;
        let regions: Vec<Vec<Time>> =
            (0..b.small(2) + 1).map(|_| (0..b.small(3) + 1).map(|_| b.small(15) + 1).collect()).collect();
        tasks.push(ForkJoinTask::new(period, deadline, regions).ok()?);
    }
    ForkJoinSet::new(tasks).ok()
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data.iter().copied());
    let head = b.u8();
    let n = (head % 6) as usize + 1;
    let m = (head / 6 % 4) as u32 + 1;
    let ts = task_set(n, &mut b);
    let mut cfg = SimConfig::new(m);
    cfg.record_trace = true;
    cfg.check_invariants = true;
    cfg.max_jobs = 20_000;
    cfg.horizon_cap = 20_000;
    let hs = b.u8();
    cfg.horizon = match hs % 4 {
        0 => None,               // one hyperperiod, capped at 20 µs
        1 => Some(b.small(200)), // 0 is rejected
        2 => Some(b.small(4000) + 1),
        _ => Some(common::time(&mut b.0)), // far beyond the cap
    };
    let arr = b.u8();
    cfg.arrivals = match arr % 3 {
        0 => Arrivals::Periodic { offsets: vec![] },
        1 => Arrivals::Periodic {
            offsets: (0..n + (arr as usize / 3).is_multiple_of(5) as usize).map(|_| b.small(40)).collect(),
        },
        _ => Arrivals::Sporadic { max_extra_delay: b.small(20), seed: b.u8() as u64 },
    };
    let ex = b.u8();
    cfg.exec = match ex % 4 {
        0 | 1 => ExecTimes::Wcet,
        2 => ExecTimes::UniformFraction { lo: b.u8() as f64 / 255.0, seed: b.u8() as u64 },
        _ => ExecTimes::Fixed(ts.iter().map(|t| (b.small(70)).min(t.wcet + (ex as u64 / 4 % 2))).collect()),
    };
    let ov = b.u8();
    if ov % 3 != 0 {
        let v = |b: &mut Bytes<'_>| if b.u8().is_multiple_of(32) { 1_000_000 } else { b.small(6) };
        cfg.overheads = Some(Overheads {
            release_ns: v(&mut b),
            release_event_ns: v(&mut b),
            schedule_ns: v(&mut b),
            context_switch_ns: v(&mut b),
            ipi_ns: v(&mut b),
            tick_ns: if ov % 3 == 2 { b.small(3) } else { 0 },
            ..Overheads::ZERO
        });
    }
    let sched = match b.u8() % 15 {
        0 | 1 => Scheduler::Gedf,
        2 => Scheduler::GedfQuantum { quantum: b.small(8), staggered: false },
        3 => Scheduler::GedfQuantum { quantum: b.small(8) + 1, staggered: true },
        4 => Scheduler::Pedf(partition(n, m, &mut b)),
        5 => Scheduler::Pfp(
            partition(n, m, &mut b),
            if b.u8() % 2 == 0 { FpOrder::RateMonotonic } else { FpOrder::DeadlineMonotonic },
        ),
        6 => {
            let text = placement(&ts, m, &mut b);
            match rtsched_model::Placement::from_json_runnable(&text, &ts) {
                Ok(placement) => {
                    let soft_unsplit = b.u8() % 2 == 0;
                    let cash = b.u8() % 2 == 0;
                    // The paper's suspension rule (donate) needs CASH; keep otherwise.
                    let suspension = if cash && b.u8() % 2 == 0 {
                        rtsched_sim::Suspension::Donate
                    } else {
                        rtsched_sim::Suspension::Keep
                    };
                    Scheduler::Spres(SpresConfig {
                        placement,
                        soft_unsplit,
                        cash,
                        background: Background::DEFAULT,
                        suspension,
                    })
                }
                Err(e) => return not_internal_input(&e, "placement"),
            }
        }
        7 => Scheduler::Rtws,
        8 => Scheduler::Gfp { ranks: (0..n).map(|_| b.small(n as u64) as u32).collect(), order: None },
        9 => Scheduler::Gfl,
        10 => Scheduler::Edzl,
        11 => Scheduler::Llf { quantum: b.small(8) },
        12 => Scheduler::Pd2 { quantum: b.small(4) },
        13 => Scheduler::Run,
        _ => {
            // RTWS on a fork-join set (Wcet only; other execution models are refused).
            let Some(set) = forkjoin(n, &mut b) else { return };
            match simulate_rtws(&set, &cfg) {
                Ok(r) => {
                    assert_eq!(r.jobs, r.completed + r.pending);
                    assert_eq!(r.threads, r.threads_completed + r.threads_pending);
                    assert_eq!(r.per_job.len() as u64, r.jobs);
                    let trace = r.trace.as_ref().expect("trace requested");
                    account(trace, r.threads, r.threads_completed, r.threads_pending);
                    assert_eq!(trace.metrics().expect("consistent").steals, r.steals);
                }
                Err(e) => not_internal(&e, "rtws fork-join"),
            }
            return;
        }
    };
    match simulate(&ts, &sched, &cfg) {
        Ok(r) => check(&r),
        Err(e) => not_internal(&e, &sched.name()),
    }
});
