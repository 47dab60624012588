//! Oracles for PD² (Anderson & Srinivasan, ECRTS 2000 / JCSS 2004; Pfair windows after
//! Baruah, Cohen, Plaxton & Varvel, Algorithmica 1996), as `rtsched_policy::pfair` states it.
//! The windows, b-bits and group deadlines of weight 8/11 are checked against the definitions
//! in `rtsched_policy::pfair`'s unit tests; here the simulator:
//!
//! * a weight-8/11 task alone runs its subtasks at the start of their windows (Pfair is not
//!   work-conserving: slots 3, 7 and 10 idle), record by record; three weight-2/3 tasks fill
//!   two CPUs, record by record;
//! * optimality: every periodic, implicit-deadline set of integral tasks with `Σ C/T ≤ m`
//!   (random, often exactly `m`) has no miss over its hyperperiod, and every task's lag
//!   `wt·t − received` — replayed from the trace by this file, exact in units of `1/p` — lies
//!   in `(−1, 1)` at every slot boundary;
//! * the refusals: a WCET, period or offset that is not whole quanta, `D ≠ T`, sporadic
//!   arrivals, overheads.

use proptest::prelude::*;
use rtsched_model::{Task, TaskSet, Time};
use rtsched_sim::{simulate, Arrivals, ExecTimes, Overheads, Scheduler, SimConfig, SimResult};
use rtsched_trace::{Event, JobId};

fn j(task: u32, job: u32) -> JobId {
    JobId { task, job }
}

fn records(r: &SimResult) -> Vec<(Time, Event)> {
    r.trace.as_ref().unwrap().records.iter().map(|r| (r.time, r.event)).collect()
}

fn cfg(m: u32, h: Time) -> SimConfig {
    let mut c = SimConfig::new(m);
    c.horizon = Some(h);
    c.record_trace = true;
    c.check_invariants = true;
    c
}

/// Weight 8/11 (C 8, T 11, quantum 1): windows [0,2) [1,3) [2,5) [4,6) [5,7) [6,9) [8,10)
/// [9,11). Alone on a CPU, T_i runs in the first slot of its window after T_{i−1}: slots 0, 1,
/// 2, then T_4 waits for its release at 4 (slot 3 idles), 4, 5, 6, T_7 waits for 8 (slot 7
/// idles), 8, 9; the job completes at 10 and slot 10 idles.
#[test]
fn weight_8_11_alone_follows_its_windows() {
    use Event::*;
    let ts = TaskSet::from_cdt(&[(8, 11, 11)]).unwrap();
    let r = simulate(&ts, &Scheduler::Pd2 { quantum: 1 }, &cfg(1, 11)).unwrap();
    let expect = vec![
        (0, Release { job: j(0, 0), deadline: 11 }),
        (0, Run { cpu: 0, job: j(0, 0) }),
        (3, Preempt { cpu: 0, job: j(0, 0) }),
        (3, Idle { cpu: 0 }),
        (4, Run { cpu: 0, job: j(0, 0) }),
        (7, Preempt { cpu: 0, job: j(0, 0) }),
        (7, Idle { cpu: 0 }),
        (8, Run { cpu: 0, job: j(0, 0) }),
        (10, Complete { cpu: 0, job: j(0, 0) }),
        (10, Idle { cpu: 0 }),
    ];
    assert_eq!(records(&r), expect);
    // The same in 1 ms quanta: every instant scaled.
    let ms = TaskSet::from_cdt(&[(8_000_000, 11_000_000, 11_000_000)]).unwrap();
    let r = simulate(&ms, &Scheduler::Pd2 { quantum: 1_000_000 }, &cfg(1, 11_000_000)).unwrap();
    let scaled: Vec<(Time, Event)> = expect.iter().map(|&(t, e)| (t * 1_000_000, e)).collect();
    let scaled: Vec<(Time, Event)> = scaled
        .into_iter()
        .map(|(t, e)| match e {
            Release { job, deadline } => (t, Release { job, deadline: deadline * 1_000_000 }),
            e => (t, e),
        })
        .collect();
    assert_eq!(records(&r), scaled);
}

/// Three tasks of weight 2/3 on two CPUs (U = 2). Subtasks T_1: window [0, 2), b = 1, group
/// deadline ⌈⌈2·(1/3)⌉·3⌉ = 3; T_2: [1, 3), b = 0. Slot 0: three equal T_1's, tasks 0 and 1 by
/// index. Slot 1: τ2's T_1 (deadline 2) first, then τ0's T_2 before τ1's (deadline 3 both, b 0,
/// task index). Slot 2: τ1's and τ2's T_2; τ0's T_3 is released only at 3. Every job meets 3.
#[test]
fn three_two_thirds_tasks_fill_two_cpus() {
    use Event::*;
    let ts = TaskSet::from_cdt(&[(2, 3, 3), (2, 3, 3), (2, 3, 3)]).unwrap();
    let r = simulate(&ts, &Scheduler::Pd2 { quantum: 1 }, &cfg(2, 3)).unwrap();
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
    assert_eq!((r.deadline_misses, r.completed), (0, 3));
}

/// Weights 1, 2/3, 1/2, 7/8 and 23/24 on four CPUs (U = 4 exactly). Ordering by pseudo-deadline
/// alone (EPDF, PD² without its b-bit and group-deadline tie-breaks) lets the weight-23/24 task
/// fall a full quantum behind (lag 24/24 at slot 24): the property test below found this set
/// when the tie-breaks were removed by hand. PD² keeps every lag in (−1, 1) and misses nothing.
#[test]
fn the_tie_breaks_matter_at_full_utilization() {
    let ts = TaskSet::from_cdt(&[(5, 5, 5), (4, 6, 6), (3, 6, 6), (7, 8, 8), (23, 24, 24)]).unwrap();
    let h = 120; // the hyperperiod
    let r = simulate(&ts, &Scheduler::Pd2 { quantum: 1 }, &cfg(4, h)).unwrap();
    assert_eq!((r.deadline_misses, r.completed, r.jobs), (0, 84, 84));
    assert_eq!(check_lags(&ts, 1, &[0; 5], h, &r), 5 * 120);
}

#[test]
fn pd2_refuses_what_pfair_does_not_model() {
    let q = Scheduler::Pd2 { quantum: 1_000 };
    let err = |ts: &TaskSet, c: &SimConfig| simulate(ts, &q, c).unwrap_err().to_string();
    let c = cfg(2, 100_000);
    let ts = TaskSet::from_cdt(&[(2_000, 5_000, 5_000), (1_500, 4_000, 4_000)]).unwrap();
    assert_eq!(
        err(&ts, &c),
        "task 1: field 'wcet': pd2 needs whole quanta: 1500ns is not a multiple of the quantum 1us"
    );
    let ts = TaskSet::from_cdt(&[(2_000, 4_500, 4_500)]).unwrap();
    assert!(err(&ts, &c).starts_with("task 0: field 'period': pd2 needs whole quanta"), "{}", err(&ts, &c));
    let ts = TaskSet::from_cdt(&[(2_000, 4_000, 5_000)]).unwrap();
    assert!(err(&ts, &c).starts_with("task 0: field 'deadline': pd2 schedules implicit deadlines"), "{}", err(&ts, &c));
    let ts = TaskSet::from_cdt(&[(2_000, 5_000, 5_000)]).unwrap();
    let mut o = c.clone();
    o.arrivals = Arrivals::Periodic { offsets: vec![500] };
    assert!(err(&ts, &o).starts_with("task 0: field 'offset': pd2 needs whole quanta"), "{}", err(&ts, &o));
    o.arrivals = Arrivals::Sporadic { max_extra_delay: 1_000, seed: 1 };
    assert!(err(&ts, &o).starts_with("field 'arrivals': pd2 needs periodic arrivals"), "{}", err(&ts, &o));
    o.arrivals = Arrivals::Periodic { offsets: vec![] };
    o.overheads = Some(Overheads { schedule_ns: 1, ..Overheads::ZERO });
    assert!(err(&ts, &o).contains("not supported for pd2"), "{}", err(&ts, &o));
    // A job shorter than its WCET completes mid-slot; its CPU idles to the slot's end.
    let mut e = cfg(1, 10_000);
    e.exec = ExecTimes::Fixed(vec![1_500]);
    let r = simulate(&ts, &q, &e).unwrap();
    assert_eq!(r.deadline_misses, 0);
    let times: Vec<Time> =
        records(&r).iter().filter(|(_, e)| matches!(e, Event::Complete { .. })).map(|x| x.0).collect();
    assert_eq!(times, vec![2_500, 7_500]); // T_2 of weight 2/5 is released at slot 2
}

/// Replays the trace and checks, at every slot boundary `s·q < h`, each task's lag: with `e/p`
/// its weight in quanta and `a` the quanta it received since its first release `o`,
/// `|e·(s − o) − p·a| < p`. Returns the number of checks.
fn check_lags(ts: &TaskSet, q: Time, offsets: &[Time], h: Time, r: &SimResult) -> usize {
    let recs = &r.trace.as_ref().expect("a trace").records;
    let n = ts.len();
    let mut received = vec![0 as Time; n];
    let mut since: Vec<Option<Time>> = vec![None; n];
    let mut i = 0;
    let mut checks = 0;
    let mut s = 0;
    while s * q < h {
        let t = s * q;
        // Everything before t, and the stops at t (what runs from t does not count yet).
        while i < recs.len() && recs[i].time <= t {
            let rt = recs[i].time;
            match recs[i].event {
                Event::Run { job, .. } if rt < t => since[job.task as usize] = Some(rt),
                Event::Run { .. } => break,
                Event::Preempt { job, .. } | Event::Complete { job, .. } => {
                    let k = job.task as usize;
                    received[k] += rt - since[k].take().expect("stopped while not running");
                }
                _ => {}
            }
            i += 1;
        }
        for (k, task) in ts.iter().enumerate() {
            if offsets[k] > t {
                continue;
            }
            let got = received[k] + since[k].map_or(0, |st| t - st);
            assert_eq!(got % q, 0, "task {k} received {got} ns by {t}");
            let (e, p) = ((task.wcet / q) as i128, (task.period / q) as i128);
            let lag = e * ((t - offsets[k]) / q) as i128 - p * (got / q) as i128;
            assert!(lag.abs() < p, "task {k}: lag {lag}/{p} at slot {s}\n{ts:?}");
            checks += 1;
        }
        s += 1;
    }
    checks
}

/// Tasks `(e, p)` of weight at most 1 until the next would pass `m`; then, if the remainder
/// `m − Σ e/p` is a weight with denominator at most 40, a task of exactly that weight.
fn fill(picks: &[(u64, u64)], m: u32) -> Vec<(u64, u64)> {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let (mut num, mut den) = (0u64, 1u64);
    let mut out = Vec::new();
    for &(e, p) in picks {
        let (n2, d2) = (num * p + e * den, den * p);
        let g = gcd(n2, d2);
        let (n2, d2) = (n2 / g, d2 / g);
        if n2 > u64::from(m) * d2 {
            break;
        }
        (num, den) = (n2, d2);
        out.push((e, p));
    }
    let rest = u64::from(m) * den - num;
    if rest > 0 && rest <= den && den <= 40 {
        out.push((rest, den));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// PD² is optimal: no miss and every lag in (−1, 1) on every integral set with U ≤ m.
    #[test]
    fn optimal_with_lags_within_one(
        m in 1u32..=4,
        picks in prop::collection::vec((1u64..=12, 0usize..8), 1..14),
        quantum in prop::sample::select(vec![1u64, 1_000]),
        offsets in prop::collection::vec(0u64..4, 16),
    ) {
        const P: [u64; 8] = [2, 3, 4, 5, 6, 8, 11, 12];
        let picks: Vec<(u64, u64)> = picks.iter().map(|&(e, k)| (e.min(P[k]), P[k])).collect();
        let w = fill(&picks, m);
        let ts = TaskSet::new(
            w.iter().map(|&(e, p)| Task::new(e * quantum, p * quantum, p * quantum).unwrap()).collect(),
        )
        .unwrap();
        let hp = ts.hyperperiod(1 << 40).unwrap();
        prop_assume!(hp / quantum <= 3_000);
        let offs: Vec<Time> = (0..ts.len()).map(|i| offsets[i] * quantum).collect();
        let h = hp + 4 * quantum;
        let mut c = cfg(m, h);
        c.arrivals = Arrivals::Periodic { offsets: offs.clone() };
        let r = simulate(&ts, &Scheduler::Pd2 { quantum }, &c).unwrap_or_else(|e| panic!("{e}\n{ts:?}"));
        prop_assert_eq!(r.deadline_misses, 0, "{:?}", ts);
        prop_assert!(check_lags(&ts, quantum, &offs, h, &r) > 0);
    }
}
