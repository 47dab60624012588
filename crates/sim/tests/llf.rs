//! Oracles for LLF (least laxity first; Mok 1983; on m CPUs Dertouzos & Mok, IEEE TSE 1989),
//! as `rtsched_policy::llf` states it: laxity `d − t − (C − executed)`, decisions at job events
//! and every quantum `Q`, ties by deadline then task index.
//!
//! * a hand-worked Dhall-style set that G-EDF misses and LLF meets, record by record;
//! * the LLF order replayed from the trace at every integer instant, with this file's own
//!   laxities: exact at decisions (quantum boundaries and instants with records), and between
//!   them no waiting job's laxity is `Q` or more below a running one's (the quantum rule);
//! * optimality on one CPU: on integer sets with every parameter a multiple of `Q` (here
//!   `Q` = 1 ns and integer C, D, T), synchronous periodic releases and WCET execution, every
//!   decision falls on a slot boundary and LLF is an optimal slot scheduler (Mok's exchange
//!   argument holds slot by slot), so: 0 misses over the hyperperiod whenever `Σ C/T ≤ 1`
//!   (implicit deadlines), and 0 misses wherever EDF has none (constrained deadlines).

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::{Task, TaskSet, Time};
use rtsched_sim::{simulate, Arrivals, ExecTimes, Overheads, Scheduler, SimConfig, SimResult};
use rtsched_trace::{Event, JobId};

fn j(task: u32, job: u32) -> JobId {
    JobId { task, job }
}

fn records(r: &SimResult) -> Vec<(Time, Event)> {
    r.trace.as_ref().unwrap().records.iter().map(|r| (r.time, r.event)).collect()
}

/// The Dhall-style set on two CPUs: two light tasks (C 2, D = T 10) and a heavy one (C 10,
/// D = T 11), quantum 1 (ns), horizon 11.
///
/// G-EDF runs the light jobs (deadline 10) first on both CPUs over [0, 2) and the heavy job over
/// [2, 12): it misses 11. LLF at 0: laxities 10 − 0 − 2 = 8, 8 and 11 − 0 − 10 = 1: the heavy job
/// and τ0.0 (tie with τ1.0 by task index) run, on CPUs 0 and 1. At 1 (quantum boundary) τ0.0 has
/// laxity 8 (running), τ1.0 waited: 10 − 1 − 2 = 7 < 8, so τ1.0 preempts τ0.0 on CPU 1. At 2 both
/// have laxity 7, equal deadlines: τ0.0 wins by task index and returns to CPU 1 (its last CPU) —
/// the laxity-tie switching the quantum bounds. τ0.0 completes at 3, τ1.0 runs [3, 4); the heavy
/// job runs [0, 10) on CPU 0 and meets 11. At 10 the light tasks' second jobs start.
#[test]
fn hand_worked_llf_meets_what_gedf_misses() {
    use Event::*;
    let ts = TaskSet::from_cdt(&[(2, 10, 10), (2, 10, 10), (10, 11, 11)]).unwrap();
    let mut cfg = SimConfig::new(2);
    cfg.horizon = Some(11);
    cfg.record_trace = true;
    cfg.check_invariants = true;
    let r = simulate(&ts, &Scheduler::Llf { quantum: 1 }, &cfg).unwrap();
    let expect = vec![
        (0, Release { job: j(0, 0), deadline: 10 }),
        (0, Release { job: j(1, 0), deadline: 10 }),
        (0, Release { job: j(2, 0), deadline: 11 }),
        (0, Run { cpu: 0, job: j(2, 0) }),
        (0, Run { cpu: 1, job: j(0, 0) }),
        (1, Preempt { cpu: 1, job: j(0, 0) }),
        (1, Run { cpu: 1, job: j(1, 0) }),
        (2, Preempt { cpu: 1, job: j(1, 0) }),
        (2, Run { cpu: 1, job: j(0, 0) }),
        (3, Complete { cpu: 1, job: j(0, 0) }),
        (3, Run { cpu: 1, job: j(1, 0) }),
        (4, Complete { cpu: 1, job: j(1, 0) }),
        (4, Idle { cpu: 1 }),
        (10, Complete { cpu: 0, job: j(2, 0) }),
        (10, Release { job: j(0, 1), deadline: 20 }),
        (10, Release { job: j(1, 1), deadline: 20 }),
        (10, Run { cpu: 0, job: j(0, 1) }),
        (10, Run { cpu: 1, job: j(1, 1) }),
    ];
    assert_eq!(records(&r), expect);
    assert_eq!((r.jobs, r.completed, r.deadline_misses, r.preemptions, r.migrations), (5, 3, 0, 2, 0));
    let g = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
    assert_eq!(g.deadline_misses, 1, "G-EDF misses τ2.0");
    // A quantum of 5: no decision at 1 or 2, so no laxity-tie switching; still no miss.
    let r5 = simulate(&ts, &Scheduler::Llf { quantum: 5 }, &cfg).unwrap();
    assert_eq!((r5.deadline_misses, r5.preemptions), (0, 0));
    // No overhead loop for LLF: refused naming it.
    cfg.overheads = Some(Overheads { schedule_ns: 1, ..Overheads::ZERO });
    let e = simulate(&ts, &Scheduler::Llf { quantum: 1 }, &cfg).unwrap_err().to_string();
    assert!(e.contains("not supported for llf"), "{e}");
    cfg.overheads = None;
    let e = simulate(&ts, &Scheduler::Llf { quantum: 0 }, &cfg).unwrap_err().to_string();
    assert!(e.starts_with("field 'quantum': must be in 1..=") && e.ends_with("ns, got 0"), "{e}");
}

/// Replays the trace; at every integer instant `t` (after its records), with this file's own
/// laxities `d − t − (C − executed)` of the ready jobs (each task's earliest unfinished job):
/// no CPU idles while a job waits, and for every running `r` and waiting `w`,
/// `(lax w, d w, task w) > (lax r, d r, task r)` at a decision instant (a multiple of `q` or an
/// instant with a record other than a deadline miss), else `lax w > lax r − q`. Returns the number of exact checks.
fn check_llf(ts: &TaskSet, m: usize, q: Time, h: Time, r: &SimResult) -> usize {
    let recs = &r.trace.as_ref().expect("a trace").records;
    let n = ts.len();
    let mut rel: Vec<Vec<Time>> = vec![Vec::new(); n];
    let mut done = vec![0usize; n];
    let mut executed = vec![0 as Time; n];
    let mut since: Vec<Option<Time>> = vec![None; n];
    let mut running: Vec<Option<JobId>> = vec![None; m];
    let (mut i, mut exact) = (0, 0);
    for t in 0..h {
        let mut had = false;
        while i < recs.len() && recs[i].time == t {
            // A deadline record is no scheduling event (LLF decides at releases, completions
            // and quantum boundaries).
            had |= !matches!(recs[i].event, Event::DeadlineMiss { .. });
            match recs[i].event {
                Event::Release { job, deadline } => rel[job.task as usize].push(deadline),
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
                    assert_eq!(job.job as usize, done[k], "jobs of a task complete in order");
                    since[k] = None;
                    executed[k] = 0;
                    done[k] += 1;
                }
                _ => {}
            }
            i += 1;
        }
        let decision = had || t % q == 0;
        exact += usize::from(decision);
        // (laxity, deadline, task) of each ready job, and whether it runs.
        let mut run = Vec::new();
        let mut wait = Vec::new();
        for k in 0..n {
            if rel[k].len() > done[k] {
                let d = rel[k][done[k]];
                let ran = executed[k] + since[k].map_or(0, |s| t - s);
                let lax = d as i128 - t as i128 - (ts[k].wcet - ran) as i128;
                let job = j(k as u32, done[k] as u32);
                if running.contains(&Some(job)) {
                    run.push((lax, d, k));
                } else {
                    wait.push((lax, d, k));
                }
            }
        }
        assert_eq!(run.len(), running.iter().flatten().count(), "at {t}: a running job is not ready");
        assert!(wait.is_empty() || run.len() == m, "at {t}: a CPU idles while {wait:?} waits\n{ts:?}");
        for rj in &run {
            for wj in &wait {
                if decision {
                    assert!(wj > rj, "at {t} (a decision): {rj:?} runs while {wj:?} waits\n{ts:?}");
                } else {
                    assert!(wj.0 > rj.0 - q as i128, "at {t}: {rj:?} runs while {wj:?} waits, q = {q}\n{ts:?}");
                }
            }
        }
    }
    exact
}

const PERIODS: [Time; 12] = [2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 24, 30];

/// `n` tasks of total utilization about `u` (UUniFast), integer WCETs; deadlines implicit, or
/// with `constrained`, uniform in `[C, T]` with probability 0.6.
fn gen(rng: &mut ChaCha8Rng, n: usize, u: f64, constrained: bool) -> TaskSet {
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
            let d = if constrained && rng.random_bool(0.6) { rng.random_range(c..=t) } else { t };
            Task::new(c, d, t).unwrap()
        })
        .collect();
    TaskSet::new(tasks).unwrap()
}

fn hyper(ts: &TaskSet) -> Time {
    ts.hyperperiod(1 << 20).unwrap()
}

#[test]
fn the_llf_order_holds_at_every_instant() {
    let mut rng = ChaCha8Rng::seed_from_u64(1983);
    let (mut exact, mut preempt) = (0, 0);
    for k in 0..200u64 {
        let m = rng.random_range(1..=4u32);
        let n = rng.random_range(m as usize + 1..=7);
        let u = rng.random_range(0.5..m as f64 * 1.1);
        let ts = gen(&mut rng, n, u, true);
        let q = [1, 2, 3, 5][k as usize % 4];
        let mut cfg = SimConfig::new(m);
        let h = 2 * hyper(&ts);
        cfg.horizon = Some(h);
        cfg.record_trace = true;
        cfg.check_invariants = true;
        if k % 3 == 1 {
            cfg.arrivals = Arrivals::Sporadic { max_extra_delay: 4, seed: k };
            cfg.exec = ExecTimes::UniformFraction { lo: 0.3, seed: k + 1 };
        }
        let r = simulate(&ts, &Scheduler::Llf { quantum: q }, &cfg).unwrap_or_else(|e| panic!("{e}\n{ts:?}"));
        exact += check_llf(&ts, m as usize, q, h, &r);
        preempt += r.preemptions;
    }
    println!("{exact} exact checks, {preempt} preemptions");
    assert!(exact > 10_000 && preempt > 1_000, "{exact} {preempt}");
}

/// `Σ C/T ≤ 1`, exactly.
fn fits_one(ts: &TaskSet) -> bool {
    let h = hyper(ts) as u128;
    ts.iter().map(|t| t.wcet as u128 * (h / t.period as u128)).sum::<u128>() <= h
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// LLF is optimal on one CPU (module doc): 0 misses on every implicit-deadline integer set
    /// with `Σ C/T ≤ 1`, quantum 1, over one hyperperiod.
    #[test]
    fn no_miss_on_one_cpu_when_u_at_most_1(seed in any::<u64>(), n in 1usize..6) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let u = rng.random_range(0.3..1.0);
        let ts = gen(&mut rng, n, u, false);
        prop_assume!(fits_one(&ts));
        let mut cfg = SimConfig::new(1);
        cfg.check_invariants = true;
        let r = simulate(&ts, &Scheduler::Llf { quantum: 1 }, &cfg).unwrap();
        prop_assert_eq!(r.deadline_misses, 0, "{:?}", ts);
        prop_assert_eq!(r.completed, r.jobs);
    }

    /// On one CPU with constrained deadlines LLF misses nothing that EDF meets.
    #[test]
    fn one_cpu_llf_meets_what_edf_meets(seed in any::<u64>(), n in 1usize..6) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let u = rng.random_range(0.3..1.0);
        let ts = gen(&mut rng, n, u, true);
        let mut cfg = SimConfig::new(1);
        cfg.horizon = Some(hyper(&ts) + ts.iter().map(|t| t.deadline).max().unwrap());
        cfg.check_invariants = true;
        let edf = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
        prop_assume!(edf.deadline_misses == 0);
        let r = simulate(&ts, &Scheduler::Llf { quantum: 1 }, &cfg).unwrap();
        prop_assert_eq!(r.deadline_misses, 0, "{:?}", ts);
    }
}
