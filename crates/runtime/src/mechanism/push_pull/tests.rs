//! The mechanism checked against the policy it implements, without threads.
//!
//! * Random interleavings of releases, reschedules and completions on 3 CPUs, for every
//!   find-CPU variant in lockstep: after every callback the mechanism is consistent (every
//!   pending job on exactly one run-queue, caches and find-CPU structure right), no job runs
//!   twice, and all EDF variants return the same jobs (their finds agree); whenever the
//!   reschedule requests have settled, the running jobs are the `min(m, r)` best ready ones —
//!   the global invariant of `rtsched_policy::invariant`, for EDF and for rate-monotonic FP.
//! * The recorder's virtual-time runs against the simulator's G-EDF (`rtsched_sim`): the same
//!   completion times, job by job.
//! * Replays of a recording over every variant reproduce it call by call, with the same
//!   operation counts.
//! * Loom: a push racing a pull for the same job over two run-queues (the lock drop and
//!   re-validation of `double_lock`): the job ends on exactly one run-queue; without the
//!   re-validation loom finds it duplicated.

use super::ops::{Core, Op, T_DEQ, T_ENQ, T_FAIL, T_PULL, T_PUSH};
use super::replay::{self, Probe, Variant};
use super::vtime;
use super::*;
use crate::queue::find_cpu::FREE;
use crate::sync::{Primitives, SpinGuard, Std};
use proptest::prelude::*;
use rtsched_policy::{invariant, Prio};

mod forkjoin;

/// A test double of the effects: untraced locks, requests as flags, counts of operations and
/// push failures.
#[derive(Default)]
struct Flags {
    resched: Vec<bool>,
    ops: [u64; 4],
    failed: u64,
}

impl Effects for Flags {
    fn lock<'a, T, B: Primitives>(&mut self, l: &'a SpinLock<T, B>) -> SpinGuard<'a, T, B> {
        l.lock_untraced()
    }
    fn preempt(&mut self, cpu: usize) {
        self.resched[cpu] = true;
    }
    fn notify(&mut self, cpu: usize) {
        self.resched[cpu] = true;
    }
    fn term_start(&mut self, term: u32) {
        if let Some(op) = Op::of_term(term) {
            self.ops[op.index()] += 1;
        }
    }
    fn term_value(&mut self, term: u32, _tries: u64) {
        if term == T_FAIL {
            self.failed += 1;
        }
    }
}

/// The core's term ids are the registered entries' terms.
#[test]
fn the_cores_term_ids_name_the_entries_terms() {
    for e in [&PUSH_PULL, &PUSH_PULL_FP] {
        let name = |t: u32| e.terms[t as usize].name;
        let got = [T_PUSH, T_PULL, T_FAIL, T_ENQ, T_DEQ].map(name);
        assert_eq!(got, ["push", "pull", "push_failure", "enqueue", "dequeue"], "{}", e.name);
    }
    for op in Op::ALL {
        assert_eq!(Op::of_term(op.term()), Some(op));
    }
    assert_eq!(Op::of_term(T_FAIL), None);
}

/// One mechanism under test with its workers' state.
struct Driven<F: FindCpu> {
    pp: PushPull<F>,
    env: Flags,
    running: Vec<Option<Job>>,
}

impl<F: FindCpu> Driven<F> {
    fn new(pp: PushPull<F>, m: usize) -> Self {
        Driven { pp, env: Flags { resched: vec![false; m], ..Flags::default() }, running: vec![None; m] }
    }

    /// CPU `c` reschedules (as a worker noticing a request, or an idle one polling).
    fn schedule(&mut self, c: usize, completed: bool) -> Option<Job> {
        let prev = match (self.running[c], completed) {
            (Some(j), true) => Prev::Completed(j),
            (Some(j), false) => Prev::Preempted(j),
            (None, _) => Prev::Idle,
        };
        self.env.resched[c] = false;
        self.running[c] = self.pp.schedule_with(&mut self.env, c, prev);
        self.running[c]
    }

    /// CPU `c`'s running job `j` self-suspends.
    fn block(&mut self, c: usize, j: Job) {
        self.env.resched[c] = false;
        self.running[c] = self.pp.schedule_with(&mut self.env, c, Prev::Blocked(j));
    }

    fn check(&self) -> Result<(), String> {
        self.pp.consistent().map_err(|e| e.to_string())?;
        let mut runs: Vec<Prio> = self.running.iter().flatten().map(|j| j.prio).collect();
        runs.sort();
        if runs.windows(2).any(|w| w[0] == w[1]) {
            return Err(format!("a job runs twice: {runs:?}"));
        }
        for (c, (curr, _)) in self.pp.queues().iter().enumerate() {
            if *curr != self.running[c] {
                return Err(format!("cpu {c}: run-queue curr {curr:?}, the worker runs {:?}", self.running[c]));
            }
        }
        Ok(())
    }

    /// Reschedules every CPU with a request until none has one; then the invariant must hold.
    fn settle(&mut self) -> Result<(), String> {
        let mut rounds = 0;
        while let Some(c) = self.env.resched.iter().position(|&x| x) {
            self.schedule(c, false);
            rounds += 1;
            if rounds > 1000 {
                return Err("reschedules do not settle".into());
            }
        }
        let mut ready: Vec<Prio> = self.pp.heads().iter().map(|j| j.prio).collect();
        ready.sort_unstable();
        let run: Vec<Option<Prio>> = self.running.iter().map(|r| r.map(|j| j.prio)).collect();
        invariant::check_global(self.running.len(), &ready, &run).map_err(|e| e.to_string())
    }
}

fn params(periods: &[u64]) -> Vec<TaskParams> {
    periods.iter().map(|&p| TaskParams { deadline: p, period: p }).collect()
}

fn key(j: Option<Job>) -> Option<(u32, u32)> {
    j.map(|j| (j.task(), j.seq()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// EDF: the three variants in lockstep, and the invariant at every settled point.
    #[test]
    fn edf_variants_agree_and_settle_to_gedf(
        periods in proptest::collection::vec(5u64..40, 2..8),
        ops in proptest::collection::vec((0u8..4, 0usize..3, 1u64..15), 1..150),
    ) {
        let m = 3;
        let p = params(&periods);
        let mk = |f| PushPull::new("push-pull", &p, m, &PriorityRule::Edf, 0, 1_000_000, f, 3).unwrap();
        let mut a = Driven::new(mk_linear(&p, m), m);
        let mut b = Driven::new(PushPull::new("push-pull", &p, m, &PriorityRule::Edf, 0, 1_000_000, Fmask::new(m), 3).unwrap(), m);
        let mut c = Driven::new(mk(Cpudl::new(m)), m);
        let mut now = 0;
        for (op, cpu, dt) in ops {
            match op {
                0 => {
                    now += dt;
                    for d in 0..m {
                        if a.pp.next_release(d) <= now {
                            a.pp.release_with(&mut a.env, d, now);
                            b.pp.release_with(&mut b.env, d, now);
                            c.pp.release_with(&mut c.env, d, now);
                        }
                    }
                }
                1 => {
                    if a.env.resched[cpu] || a.running[cpu].is_none() {
                        let (x, y, z) = (a.schedule(cpu, false), b.schedule(cpu, false), c.schedule(cpu, false));
                        prop_assert_eq!((key(x), key(x)), (key(y), key(z)));
                    }
                }
                2 => {
                    if a.running[cpu].is_some() {
                        let (x, y, z) = (a.schedule(cpu, true), b.schedule(cpu, true), c.schedule(cpu, true));
                        prop_assert_eq!((key(x), key(x)), (key(y), key(z)));
                    }
                }
                _ => {
                    prop_assert_eq!(a.settle(), Ok(()));
                    prop_assert_eq!(b.settle(), Ok(()));
                    prop_assert_eq!(c.settle(), Ok(()));
                }
            }
            for d in [&a.check(), &b.check(), &c.check()] {
                prop_assert_eq!(d, &Ok(()));
            }
            prop_assert_eq!(&a.env.resched, &b.env.resched);
            prop_assert_eq!(&a.env.resched, &c.env.resched);
            prop_assert_eq!(a.env.ops, b.env.ops);
            prop_assert_eq!(a.env.ops, c.env.ops);
            prop_assert_eq!(a.env.failed + b.env.failed + c.env.failed, 0);
        }
        prop_assert_eq!(a.settle(), Ok(()));
    }

    /// Rate-monotonic over cpupri: the invariant at every settled point.
    #[test]
    fn fixed_priority_settles_to_global_fp(
        periods in proptest::collection::vec(5u64..40, 2..8),
        ops in proptest::collection::vec((0u8..4, 0usize..3, 1u64..15), 1..150),
    ) {
        let m = 3;
        let p = params(&periods);
        let ts = rtsched_model::TaskSet::from_ct(&periods.iter().map(|&t| (1, t)).collect::<Vec<_>>()).unwrap();
        let rule = PriorityRule::fixed(&ts, rtsched_policy::FpOrder::RateMonotonic);
        let mut a = Driven::new(PushPull::new("push-pull-fp", &p, m, &rule, 0, 1_000_000, Cpupri::new(m, p.len()), 3).unwrap(), m);
        let mut now = 0;
        for (op, cpu, dt) in ops {
            match op {
                0 => {
                    now += dt;
                    for d in 0..m {
                        if a.pp.next_release(d) <= now {
                            a.pp.release_with(&mut a.env, d, now);
                        }
                    }
                }
                1 => if a.env.resched[cpu] || a.running[cpu].is_none() { a.schedule(cpu, false); },
                2 => if a.running[cpu].is_some() { a.schedule(cpu, true); },
                _ => prop_assert_eq!(a.settle(), Ok(())),
            }
            prop_assert_eq!(a.check(), Ok(()));
        }
        prop_assert_eq!(a.settle(), Ok(()));
        prop_assert_eq!(a.env.failed, 0);
    }
}

fn mk_linear(p: &[TaskParams], m: usize) -> PushPull<Linear> {
    PushPull::new("push-pull", p, m, &PriorityRule::Edf, 0, 1_000_000, Linear::new(m), 3).unwrap()
}

/// The recorder's virtual-time G-EDF run equals the simulator's, job by job.
#[test]
fn recordings_complete_jobs_when_the_simulator_does() {
    use rtsched_sim::{simulate, Scheduler, SimConfig};
    let mut seed = 7u64;
    let mut rnd = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for case in 0..30 {
        let m = 1 + rnd(4) as usize;
        let n = m + rnd(3 * m as u64) as usize;
        let tasks: Vec<(u64, u64)> = (0..n)
            .map(|_| {
                let t = 1_000 * (10 + rnd(90));
                (1 + rnd(t * m as u64 / n as u64), t)
            })
            .collect();
        let ts = rtsched_model::TaskSet::from_ct(&tasks).unwrap();
        let horizon = 2_000_000;
        let rec = replay::record(&ts, m, false, horizon, 10_000_000).unwrap();
        let mut cfg = SimConfig::new(m as u32);
        cfg.horizon = Some(horizon);
        let sim = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
        let mut want: Vec<(u32, u32, u64)> =
            sim.per_job.iter().filter_map(|j| j.finish.filter(|&f| f < horizon).map(|f| (j.task, j.job, f))).collect();
        let mut got = rec.completed.clone();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, want, "case {case}: m = {m}, tasks {tasks:?}");
        assert!(rec.checks > 0 && rec.jobs > 0);
    }
}

/// Every variant replays a recording exactly, with identical operation counts (EDF), and
/// cpupri replays the rate-monotonic recording.
#[test]
fn replays_follow_the_recording() {
    let ts = rtsched_model::TaskSet::from_ct(&[
        (3_000, 10_000),
        (7_000, 20_000),
        (4_000, 15_000),
        (9_000, 40_000),
        (2_000, 12_000),
        (5_000, 25_000),
    ])
    .unwrap();
    let m = 2;
    let rec = replay::record(&ts, m, false, 1_000_000, 1_000_000).unwrap();
    let counts = |f: &mut dyn FnMut(&mut Probe) -> Result<(), RunError>| {
        let mut p = Probe::default();
        f(&mut p).unwrap();
        p.hist.iter().map(|h| h.count()).collect::<Vec<_>>()
    };
    let a = counts(&mut |p| replay::replay(&rec, Linear::new(m), p));
    let b = counts(&mut |p| replay::replay(&rec, Fmask::new(m), p));
    let c = counts(&mut |p| replay::replay(&rec, Cpudl::new(m), p));
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert!(a.iter().all(|&k| k > 0), "every operation occurs: {a:?}");
    let fp = replay::record(&ts, m, true, 1_000_000, 1_000_000).unwrap();
    let d = counts(&mut |p| replay::replay(&fp, Cpupri::new(m, ts.len()), p));
    assert!(d[Op::Push.index()] > 0);
    // A recording replayed over a mechanism that decides differently diverges: replaying the
    // EDF recording with fixed-priority ranks is caught.
    let mut wrong = fp.clone();
    wrong.calls = rec.calls.clone();
    let e = replay::replay(&wrong, Cpupri::new(m, ts.len()), &mut Probe::default()).unwrap_err();
    assert!(matches!(e, RunError::Internal(_)) && e.to_string().contains("recording"), "{e}");
    // measure: one line per variant and operation.
    let costs = replay::measure(&[ts], m, 200_000, &Variant::ALL, 1_000_000).unwrap();
    assert_eq!(costs.len(), 4);
    for (v, ops) in &costs {
        assert_eq!(ops.len(), 4, "{v:?}");
        assert!(ops.iter().any(|o| o.count > 0));
    }
}

#[test]
fn bad_parameters_are_refused() {
    let p = params(&[10, 20]);
    assert!(PushPull::new("push-pull", &p, 0, &PriorityRule::Edf, 0, 100, Linear::new(0), 3).is_err());
    let e = PushPull::new("push-pull", &p, 1, &PriorityRule::Edf, 0, 1 << 45, Linear::new(1), 3).err().unwrap();
    assert!(e.to_string().contains("44 bits"), "{e}");
    assert!(replay::record(&rtsched_model::TaskSet::from_ct(&[(1, 10)]).unwrap(), 0, false, 10, 10).is_err());
    let e = replay::record(&rtsched_model::TaskSet::from_ct(&[(1, 10)]).unwrap(), 1, false, 1000, 5).unwrap_err();
    assert!(matches!(e, RunError::Model(_)) && e.to_string().contains("calls"), "{e}");
    assert_eq!(Variant::parse("cpudl"), Ok(Variant::Cpudl));
    assert_eq!(
        Variant::parse("heap").unwrap_err().to_string(),
        "unknown find-CPU variant \"heap\"; known: linear, fmask, cpudl, cpupri"
    );
}

/// A push failure: the target found changes before it is locked, every time. Built by hand
/// with a find-CPU structure that always names CPU 1 while CPU 1 holds an earlier job.
#[test]
fn a_push_whose_targets_keep_changing_fails_and_is_reported() {
    struct Stale;
    impl FindCpu for Stale {
        fn name(&self) -> &'static str {
            "stale"
        }
        fn set(&self, _cpu: usize, _rank: u64) {}
        fn find(&self, _rank: u64, _e: &crate::queue::find_cpu::Earliest) -> Option<usize> {
            Some(1)
        }
        fn check(&self, _ranks: &[u64]) -> Result<(), RunError> {
            Ok(())
        }
    }
    let core: Core<Stale, Std> = Core::new(2, 4, Stale, 3);
    let mut env = Flags { resched: vec![false; 2], ..Flags::default() };
    let job = |task: u32, d: u64| Job { prio: Prio { key: d, task, job: 0 }, release: 0, deadline: d };
    {
        let mut g1 = core.rq(1).lock_untraced();
        core.enqueue(&mut env, 1, &mut g1, 5, job(9, 5));
        core.pick(1, &mut g1);
    }
    let mut g0 = core.rq(0).lock_untraced();
    core.enqueue(&mut env, 0, &mut g0, 10, job(0, 10));
    core.pick(0, &mut g0);
    core.enqueue(&mut env, 0, &mut g0, 20, job(1, 20));
    let (g0, moved) = core.push_one(&mut env, 0, g0);
    assert!(!moved);
    assert_eq!(env.failed, 1, "three stale targets: one failure");
    assert_eq!(g0.queued.first().map(|x| x.0), Some(20), "the job stays");
    drop(g0);
    assert_eq!(core.check(), Ok(()));
    assert_ne!(FREE, 20);
}

/// Loom: CPU 2 pushes its queued job to idle CPU 0 (a lower id: it drops and retakes its own
/// lock) while CPU 1, whose job completed, pulls the same job from CPU 2. In every
/// interleaving the job ends on exactly one run-queue.
#[test]
fn loom_push_and_pull_race_for_one_job() {
    loom_race(true);
}

/// The broken twin: the push without re-validation after retaking its lock moves a job the
/// pull already took (loom finds the job twice, or a failed dequeue).
#[test]
#[should_panic]
fn loom_catches_a_push_without_revalidation() {
    loom_race(false);
}

fn loom_race(revalidate: bool) {
    use crate::queue::find_linear::Linear;
    use crate::sync::loom_model::Loom;
    type LCore = Core<Linear<Loom>, Loom>;
    struct LEnv;
    impl Effects for LEnv {
        fn lock<'a, T, B: Primitives>(&mut self, l: &'a SpinLock<T, B>) -> SpinGuard<'a, T, B> {
            l.lock_untraced()
        }
        fn preempt(&mut self, _cpu: usize) {}
        fn notify(&mut self, _cpu: usize) {}
    }
    /// The push as `push_one`, but trusting the decision taken before its lock was dropped.
    fn push_unchecked(cr: &'static LCore, env: &mut LEnv, g: SpinGuard<'static, super::ops::Rq, Loom>) {
        let Some((rank, _)) = g.queued.first() else { return };
        let Some(c) = cr.find().find(rank, cr.earliest()) else { return };
        if c == 2 {
            return;
        }
        let (mut g, mut o, _) = cr.double_lock(env, 2, g, c);
        if rank < o.earliest() {
            let j = cr.dequeue(env, 2, &mut g, rank).expect("the job the push decided to move is gone");
            cr.enqueue(env, c, &mut o, rank, j);
        }
    }
    let job = |task: u32, d: u64| Job { prio: Prio { key: d, task, job: 0 }, release: 0, deadline: d };
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(move || {
        let cr: &'static LCore = Box::leak(Box::new(Core::new(3, 4, Linear::new(3), 3)));
        let mut env = LEnv;
        {
            // CPU 0 idle (the push's target: the first free CPU); CPU 1 runs rank 40, about to
            // complete and pull; CPU 2 runs rank 10 with rank 20 queued (pushable).
            let mut g = cr.rq(1).lock_untraced();
            cr.enqueue(&mut env, 1, &mut g, 40, job(0, 40));
            cr.pick(1, &mut g);
            drop(g);
            let mut g = cr.rq(2).lock_untraced();
            cr.enqueue(&mut env, 2, &mut g, 10, job(1, 10));
            cr.pick(2, &mut g);
            cr.enqueue(&mut env, 2, &mut g, 20, job(2, 20));
        }
        let pusher = loom::thread::spawn(move || {
            let mut env = LEnv;
            let g = cr.rq(2).lock_untraced();
            if revalidate {
                let _ = cr.push_one(&mut env, 2, g);
            } else {
                push_unchecked(cr, &mut env, g);
            }
        });
        // CPU 1: its job completes, it pulls.
        let mut g = cr.rq(1).lock_untraced();
        cr.dequeue_curr(&mut env, 1, &mut g);
        let g = cr.pull(&mut env, 1, g);
        drop(g);
        pusher.join().unwrap();
        let mut on: Vec<u64> = Vec::new();
        for c in 0..3 {
            let rq = cr.rq(c).lock_untraced();
            on.extend(rq.curr.map(|x| x.0));
            on.extend(rq.queued.iter().map(|x| x.0));
        }
        on.sort_unstable();
        assert_eq!(on, vec![10, 20], "each job on exactly one run-queue");
        cr.check().unwrap();
    });
}

/// A find-CPU structure that answers every find for a job of an even task with a stale CPU:
/// the busy CPU of the earliest rank, where the job never qualifies (each of the push's
/// attempts finds its target changed, so the push fails after the retry limit, or names the
/// pusher itself). Jobs of odd tasks get the linear scan's true answer.
struct StaleForEven(Linear);

impl FindCpu for StaleForEven {
    fn name(&self) -> &'static str {
        "stale-for-even"
    }
    fn set(&self, cpu: usize, rank: u64) {
        self.0.set(cpu, rank)
    }
    fn find(&self, rank: u64, e: &crate::queue::find_cpu::Earliest) -> Option<usize> {
        use std::sync::atomic::Ordering::Relaxed;
        if rank & 1 == 0 {
            let (c, r) = e.iter().enumerate().map(|(c, x)| (c, x.load(Relaxed))).min_by_key(|x| x.1)?;
            if r != FREE {
                return Some(c);
            }
        }
        self.0.find(rank, e)
    }
    fn check(&self, ranks: &[u64]) -> Result<(), RunError> {
        self.0.check(ranks)
    }
}

/// Push failures make push/pull deviate from G-EDF, and the priority-inversion monitor
/// (`rtsched_trace::monitor`, the one the runs report) measures exactly that deviation: in
/// virtual time (no overheads, so no tracking delay) the monitor's total over the run's trace
/// equals the time the global invariant is violated, summed independently at every settled
/// instant; it is zero without push failures and positive with them.
#[test]
fn the_monitor_measures_the_deviation_push_failures_cause() {
    use rtsched_policy::Invariant;
    use rtsched_trace::monitor::priority_inversion;
    let mut seed = 11u64;
    let mut rnd = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let (mut failures, mut inverted, mut runs) = (0u64, 0u64, 0);
    for case in 0..40 {
        let m = 2 + rnd(3) as usize;
        let n = m + 1 + rnd(2 * m as u64) as usize;
        let tasks: Vec<(u64, u64)> = (0..n)
            .map(|_| {
                let t = 1_000 * (10 + rnd(90));
                (1 + rnd(t * 8 * m as u64 / (10 * n as u64)), t)
            })
            .collect();
        let ts = rtsched_model::TaskSet::from_ct(&tasks).unwrap();
        let horizon = 1_000_000;
        let inv = Invariant::global_edf(m);
        // Without stale answers: G-EDF exactly, zero inversion, no failure.
        let good = vtime::run(&ts, m, false, horizon, 1_000_000, Linear::new(m), false).unwrap();
        assert_eq!((good.push_failures, good.violated_ns), (0, 0), "case {case}");
        assert_eq!(priority_inversion(&good.trace, &inv), Ok(0), "case {case}");
        // With them: the monitor equals the independent sum.
        let bad = vtime::run(&ts, m, false, horizon, 1_000_000, StaleForEven(Linear::new(m)), false).unwrap();
        let pi = priority_inversion(&bad.trace, &inv).unwrap();
        assert_eq!(pi, bad.violated_ns, "case {case}: m = {m}, tasks {tasks:?}");
        failures += bad.push_failures;
        inverted += pi;
        runs += 1;
    }
    assert!(runs == 40 && failures > 0 && inverted > 0, "failures {failures}, inversion {inverted} ns");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// Self-suspension (pull on block, push on wake): random releases, reschedules,
    /// completions, blocks of running jobs and wake-ups on any CPU, the three EDF variants in
    /// lockstep: consistent after every callback (a suspended job on no run-queue), the same
    /// decisions, and at every settled point the running jobs are the `min(m, r)` best
    /// *ready* jobs (suspended ones excluded) — the G-EDF invariant.
    #[test]
    fn block_and_wake_settle_to_gedf(
        periods in proptest::collection::vec(5u64..40, 2..8),
        ops in proptest::collection::vec((0u8..6, 0usize..3, 1u64..15), 1..150),
    ) {
        let m = 3;
        let p = params(&periods);
        let mut a = Driven::new(mk_linear(&p, m), m);
        let mut b = Driven::new(PushPull::new("push-pull", &p, m, &PriorityRule::Edf, 0, 1_000_000, Fmask::new(m), 3).unwrap(), m);
        let mut c = Driven::new(PushPull::new("push-pull", &p, m, &PriorityRule::Edf, 0, 1_000_000, Cpudl::new(m), 3).unwrap(), m);
        let mut suspended: Vec<Job> = Vec::new();
        let mut now = 0;
        for (op, cpu, dt) in ops {
            match op {
                0 => {
                    now += dt;
                    for d in 0..m {
                        if a.pp.next_release(d) <= now {
                            a.pp.release_with(&mut a.env, d, now);
                            b.pp.release_with(&mut b.env, d, now);
                            c.pp.release_with(&mut c.env, d, now);
                        }
                    }
                }
                1 | 2 => {
                    let done = op == 2;
                    if (done && a.running[cpu].is_some()) || (!done && (a.env.resched[cpu] || a.running[cpu].is_none())) {
                        let (x, y, z) = (a.schedule(cpu, done), b.schedule(cpu, done), c.schedule(cpu, done));
                        prop_assert_eq!((key(x), key(x)), (key(y), key(z)));
                    }
                }
                3 => {
                    if let Some(j) = a.running[cpu] {
                        suspended.push(j);
                        a.block(cpu, j);
                        b.block(cpu, j);
                        c.block(cpu, j);
                        prop_assert_eq!((key(a.running[cpu]), key(a.running[cpu])), (key(b.running[cpu]), key(c.running[cpu])));
                    }
                }
                4 => {
                    if !suspended.is_empty() {
                        let j = suspended.remove(dt as usize % suspended.len());
                        a.pp.wake_with(&mut a.env, cpu, j);
                        b.pp.wake_with(&mut b.env, cpu, j);
                        c.pp.wake_with(&mut c.env, cpu, j);
                    }
                }
                _ => {
                    prop_assert_eq!(a.settle(), Ok(()));
                    prop_assert_eq!(b.settle(), Ok(()));
                    prop_assert_eq!(c.settle(), Ok(()));
                }
            }
            for d in [&a.check(), &b.check(), &c.check()] {
                prop_assert_eq!(d, &Ok(()));
            }
            prop_assert_eq!(&a.env.resched, &b.env.resched);
            prop_assert_eq!(&a.env.resched, &c.env.resched);
            for j in &suspended {
                prop_assert!(!a.pp.heads().contains(j), "suspended {:?} is ready", j);
            }
        }
        prop_assert_eq!(a.settle(), Ok(()));
    }
}
