//! Oracles for EDZL (Lee, RTCSA 1994; Cirinei & Baker, ECRTS 2007): G-EDF in which a waiting
//! job whose laxity `d − t − (C − executed)` reaches zero gets the highest priority.
//!
//! * the classic example that G-EDF misses and EDZL meets, checked record by record;
//! * zero-laxity promotion checked from the trace at every instant, with this file's own
//!   laxities: the jobs at zero laxity run first, the rest by EDF;
//! * EDZL is at least as effective as G-EDF (Cirinei & Baker, ECRTS 2007, §1): every set a G-EDF
//!   test accepts has no miss under EDZL, periodic or sporadic.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::global::{self, GlobalTest};
use rtsched_analysis::{Limits, Verdict};
use rtsched_model::{Task, TaskSet, Time};
use rtsched_sim::{simulate, Arrivals, ExecTimes, Overheads, Scheduler, SimConfig, SimResult};
use rtsched_trace::{Event, JobId};

fn j(task: u32, job: u32) -> JobId {
    JobId { task, job }
}

fn records(r: &SimResult) -> Vec<(Time, Event)> {
    r.trace.as_ref().unwrap().records.iter().map(|r| (r.time, r.event)).collect()
}

/// Three tasks (C 2, D = T 3) on two CPUs, horizon 3 (U = 2). G-EDF runs τ0.0 and τ1.0 on
/// [0, 2) and τ2.0 on [2, 4): it misses at 3. EDZL: τ2.0 waits with laxity 3 − 0 − 2 = 1, so at
/// 1 its laxity is 0: it is promoted and preempts the lowest-priority CPU (CPU 1, τ1.0: equal
/// deadlines, higher task index), running [1, 3). τ1.0 (1 ns left) would reach zero laxity at 2,
/// when τ0.0 completes on CPU 0 and τ1.0 takes it (a migration), running [2, 3). All meet 3.
#[test]
fn hand_worked_edzl_meets_what_gedf_misses() {
    use Event::*;
    let ts = TaskSet::from_cdt(&[(2, 3, 3), (2, 3, 3), (2, 3, 3)]).unwrap();
    let mut cfg = SimConfig::new(2);
    cfg.horizon = Some(3);
    cfg.record_trace = true;
    cfg.check_invariants = true;
    let r = simulate(&ts, &Scheduler::Edzl, &cfg).unwrap();
    let expect = vec![
        (0, Release { job: j(0, 0), deadline: 3 }),
        (0, Release { job: j(1, 0), deadline: 3 }),
        (0, Release { job: j(2, 0), deadline: 3 }),
        (0, Run { cpu: 0, job: j(0, 0) }),
        (0, Run { cpu: 1, job: j(1, 0) }),
        (1, Preempt { cpu: 1, job: j(1, 0) }),
        (1, Run { cpu: 1, job: j(2, 0) }),
        (2, Complete { cpu: 0, job: j(0, 0) }),
        (2, Migration { job: j(1, 0), from: 1, to: 0 }),
        (2, Run { cpu: 0, job: j(1, 0) }),
        (3, Complete { cpu: 0, job: j(1, 0) }),
        (3, Complete { cpu: 1, job: j(2, 0) }),
        (3, Idle { cpu: 0 }),
        (3, Idle { cpu: 1 }),
    ];
    assert_eq!(records(&r), expect);
    assert_eq!((r.jobs, r.completed, r.deadline_misses, r.preemptions, r.migrations), (3, 3, 0, 1, 1));
    let g = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
    assert_eq!(g.deadline_misses, 1, "G-EDF misses τ2.0");
    // No overhead loop for EDZL: refused naming it.
    cfg.overheads = Some(Overheads { schedule_ns: 1, ..Overheads::ZERO });
    let e = simulate(&ts, &Scheduler::Edzl, &cfg).unwrap_err().to_string();
    assert!(e.contains("not supported for edzl"), "{e}");
}

/// Replays the trace; after every instant, with `Z` the ready jobs whose laxity (against the
/// WCET) is at most 0: if `|Z| <= m`, the running jobs are `Z` plus the earliest-deadline
/// others (ties by task, then job) up to `m`; else `m` jobs of `Z` run. Returns the instants
/// at which some job had zero laxity.
fn check_edzl(ts: &TaskSet, m: usize, r: &SimResult) -> usize {
    let recs = &r.trace.as_ref().expect("a trace").records;
    let n = ts.len();
    // Per task: releases (time, deadline), completed count; per front job: executed, running since.
    let mut rel: Vec<Vec<(Time, Time)>> = vec![Vec::new(); n];
    let mut done = vec![0usize; n];
    let mut executed = vec![0 as Time; n];
    let mut since: Vec<Option<Time>> = vec![None; n];
    let mut running: Vec<Option<JobId>> = vec![None; m];
    let mut zl_instants = 0;
    let mut i = 0;
    while i < recs.len() {
        let t = recs[i].time;
        while i < recs.len() && recs[i].time == t {
            match recs[i].event {
                Event::Release { job, deadline } => rel[job.task as usize].push((t, deadline)),
                Event::Run { cpu, job } => {
                    running[cpu as usize] = Some(job);
                    since[job.task as usize] = Some(t);
                }
                Event::Preempt { cpu, job } => {
                    running[cpu as usize] = None;
                    let k = job.task as usize;
                    executed[k] += t - since[k].take().expect("preempted while not running");
                }
                Event::Complete { cpu, job } => {
                    running[cpu as usize] = None;
                    let k = job.task as usize;
                    since[k] = None;
                    executed[k] = 0;
                    done[k] += 1;
                }
                Event::Idle { cpu } => running[cpu as usize] = None,
                _ => {}
            }
            i += 1;
        }
        let mut zero = Vec::new();
        let mut rest = Vec::new();
        for k in 0..n {
            if rel[k].len() > done[k] {
                let d = rel[k][done[k]].1;
                let ran = executed[k] + since[k].map_or(0, |s| t - s);
                let left = ts[k].wcet - ran;
                if d as i128 - t as i128 - left as i128 <= 0 {
                    zero.push((k, done[k]));
                } else {
                    rest.push((d, k, done[k]));
                }
            }
        }
        rest.sort_unstable();
        let mut got: Vec<(usize, usize)> =
            running.iter().flatten().map(|x| (x.task as usize, x.job as usize)).collect();
        got.sort_unstable();
        if !zero.is_empty() {
            zl_instants += 1;
        }
        if zero.len() <= m {
            let mut want = zero.clone();
            want.extend(rest.iter().take(m - zero.len()).map(|&(_, k, q)| (k, q)));
            want.sort_unstable();
            assert_eq!(got, want, "at {t} ns: zero laxity {zero:?}, others {rest:?}\n{ts:?}");
        } else {
            assert!(got.len() == m && got.iter().all(|x| zero.contains(x)), "at {t} ns: {got:?} of {zero:?}");
        }
    }
    zl_instants
}

const PERIODS: [Time; 15] = [2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 24, 30, 40, 60, 120];

/// `n` tasks of total utilization about `u` (UUniFast), integer WCETs, deadlines implicit or
/// (probability 0.6) uniform in `[C, T]`.
fn gen(rng: &mut ChaCha8Rng, n: usize, u: f64) -> TaskSet {
    let mut sum = u;
    let mut us = Vec::with_capacity(n);
    for i in 1..n {
        let next = sum * rng.random::<f64>().powf(1.0 / (n - i) as f64);
        us.push(sum - next);
        sum = next;
    }
    us.push(sum);
    let tasks = us
        .iter()
        .map(|&ui| {
            let t = PERIODS[rng.random_range(0..PERIODS.len())];
            let c = ((ui * t as f64).round() as Time).clamp(1, t);
            let d = if rng.random_bool(0.6) { rng.random_range(c..=t) } else { t };
            Task::new(c, d, t).unwrap()
        })
        .collect();
    TaskSet::new(tasks).unwrap()
}

fn horizon(ts: &TaskSet) -> Time {
    ts.hyperperiod(1 << 20).unwrap() + ts.iter().map(|t| t.deadline).max().unwrap_or(0)
}

#[test]
fn zero_laxity_jobs_run_first_at_every_instant() {
    let mut rng = ChaCha8Rng::seed_from_u64(1994);
    let (mut zl, mut differ) = (0, 0);
    for k in 0..300u64 {
        let m = rng.random_range(2..=4u32);
        let n = rng.random_range(m as usize + 1..=7);
        let u = rng.random_range(0.5..m as f64 * 1.1);
        let ts = gen(&mut rng, n, u);
        let mut cfg = SimConfig::new(m);
        cfg.horizon = Some(2 * horizon(&ts));
        cfg.record_trace = true;
        cfg.check_invariants = true;
        if k % 2 == 1 {
            cfg.arrivals = Arrivals::Sporadic { max_extra_delay: 4, seed: k };
            cfg.exec = ExecTimes::UniformFraction { lo: 0.3, seed: k + 1 };
        }
        let r = simulate(&ts, &Scheduler::Edzl, &cfg).unwrap_or_else(|e| panic!("{e}\n{ts:?}"));
        zl += check_edzl(&ts, m as usize, &r);
        differ += usize::from(records(&r) != records(&simulate(&ts, &Scheduler::Gedf, &cfg).unwrap()));
    }
    println!("{zl} instants with a zero-laxity job; EDZL ≠ G-EDF on {differ} of 300 sets");
    assert!(zl > 1_000 && differ > 30, "{zl} {differ}");
}

#[test]
fn sets_a_gedf_test_accepts_never_miss_under_edzl() {
    let mut rng = ChaCha8Rng::seed_from_u64(2007);
    let lim = Limits::default();
    let (mut accepted, mut edf_misses_edzl_meets) = (0, 0);
    for k in 0..1_500u64 {
        let m = rng.random_range(2..=4u32);
        let n = rng.random_range(m as usize + 1..=8);
        let u = rng.random_range(0.3..m as f64 * 0.95);
        let ts = gen(&mut rng, n, u);
        let mut cfg = SimConfig::new(m);
        cfg.horizon = Some(horizon(&ts));
        if k % 2 == 1 {
            cfg.horizon = Some(3 * horizon(&ts));
            cfg.arrivals = Arrivals::Sporadic { max_extra_delay: 3, seed: k };
            cfg.exec = ExecTimes::UniformFraction { lo: 0.5, seed: k + 1 };
        }
        let edzl = simulate(&ts, &Scheduler::Edzl, &cfg).unwrap().deadline_misses;
        if GlobalTest::ALL.iter().any(|&t| global::test(t, &ts, m, &lim) == Verdict::Schedulable) {
            accepted += 1;
            assert_eq!(edzl, 0, "a G-EDF test accepts but EDZL misses on m = {m}: {ts:?}");
        }
        if edzl == 0 && simulate(&ts, &Scheduler::Gedf, &cfg).unwrap().deadline_misses > 0 {
            edf_misses_edzl_meets += 1;
        }
    }
    println!("{accepted} accepted by a G-EDF test; {edf_misses_edzl_meets} sets G-EDF misses and EDZL meets");
    assert!(accepted >= 300 && edf_misses_edzl_meets >= 5, "{accepted} {edf_misses_edzl_meets}");
}
