//! Oracle for the DAG analyses (`rtsched_analysis::dag`): an exact node-level simulator,
//! written here and nowhere else, checks on 100,000 random small-integer DAG
//! sets that no set a test accepts misses a deadline in the schedule that test assumes, under
//! synchronous periodic release over the hyperperiod (and, in a second test, sporadic and
//! asynchronous releases with and without early completion, over a fixed horizon):
//!
//! * G-EDF tests (Li et al. 2013 and 2014, Bonifaci et al. 2013): work-conserving global EDF
//!   over nodes on `m` cores;
//! * federated scheduling: each high-utilization task alone and greedy on its dedicated cores,
//!   each light core running preemptive EDF over its tasks executed sequentially;
//! * Graham's bound: each task alone on `m` cores, greedy.
//!
//! The simulator (`common/dag_twin.rs`, shared with the real simulator's oracle in
//! `crates/sim/tests/dag_oracle.rs`, which checks the two agree): integer time in unit steps;
//! at each instant the released jobs whose nodes have all predecessors completed offer those
//! nodes (a task's jobs in release order); the `m` with the earliest absolute deadlines run for
//! one unit (ties: task index, release, node index), so no core idles while a node is ready.
//! Node costs and periods are integers, so every release, completion and decision falls on an
//! integer instant and the unit-step schedule is the event-driven one. With `D <= T` every
//! deadline is at most the hyperperiod `H`, and a set that meets them all is idle at `H`, so
//! `[0, H)` decides the synchronous periodic case exactly.
//!
//! So that the oracle can fail, a wrong test (accept when `U <= m` and `L <= D`, necessary
//! conditions only) and a wrong federated rule (one dedicated core fewer) must each be caught
//! missing deadlines; and a DAG of one node per task must get the sequential verdicts where
//! the tests coincide (federated = partitioning; Graham = `C <= D`; each G-EDF test accepts
//! only sets the sequential GFB test accepts).

#[path = "common/dag_twin.rs"]
mod dag_twin;

use dag_twin::{periodic, random_set, random_task, simulate, sporadic, Plan};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::dag::federated::{federated, Federated, LowPlacement};
use rtsched_analysis::dag::{gedf, graham};
use rtsched_analysis::global::{self, GlobalTest};
use rtsched_analysis::partition::{partition, PartitionOutcome};
use rtsched_analysis::{Limits, Verdict};
use rtsched_model::dag::{DagSet, DagTask};
use rtsched_model::exact::{int, sum_ratios};
use rtsched_model::Stop;

/// Synchronous periodic global EDF over the hyperperiod.
fn simulate_gedf(tasks: &[&DagTask], m: u32) -> Result<(), String> {
    let (h, plan) = periodic(tasks);
    simulate(tasks, m, h, &plan)
}

/// The federated plan's schedule for the jobs of `jobs` (indexed like `set`): high tasks
/// alone on their cores, light cores under EDF over sequential jobs (a one-node DAG whose cost
/// is the job's total is the sequential job).
fn simulate_federated(
    set: &DagSet,
    plan: &rtsched_analysis::dag::federated::FederatedPlan,
    horizon: u64,
    jobs: &Plan,
) -> Result<(), String> {
    for (i, cores) in &plan.high {
        simulate(&[&set[*i]], cores.end - cores.start, horizon, &vec![jobs[*i].clone()])
            .map_err(|e| format!("high task {i}: {e}"))?;
    }
    for (k, cpu) in plan.low.iter().enumerate() {
        let seq: Vec<DagTask> = cpu
            .iter()
            .map(|&i| DagTask::new(set[i].period(), set[i].deadline(), vec![set[i].volume()], vec![]).unwrap())
            .collect();
        let seq_jobs: Plan =
            cpu.iter().map(|&i| jobs[i].iter().map(|(r, c)| (*r, vec![c.iter().sum()])).collect()).collect();
        simulate(&seq.iter().collect::<Vec<_>>(), 1, horizon, &seq_jobs)
            .map_err(|e| format!("light core {k} ({cpu:?}): {e}"))?;
    }
    Ok(())
}

const SETS: u64 = 100_000;

#[test]
fn no_accepted_set_misses_a_deadline() {
    let limits = Limits::default();
    let mut accepted = [0u32; 5]; // li2013, li2014, bonifaci2013, federated, graham (tasks)
    let mut naive_misses = 0u32;
    let mut fewer_core_misses = 0u32;
    for s in 0..SETS {
        let mut r = ChaCha8Rng::seed_from_u64(s);
        let (set, m) = random_set(&mut r, 6);
        let tasks: Vec<&DagTask> = set.iter().collect();
        let gedf_result = simulate_gedf(&tasks, m);
        for (k, (name, f)) in [
            ("li2013", gedf::li2013 as fn(&DagSet, u32) -> Verdict),
            ("li2014", gedf::li2014),
            ("bonifaci2013", gedf::bonifaci2013),
        ]
        .into_iter()
        .enumerate()
        {
            if f(&set, m) == Verdict::Schedulable {
                accepted[k] += 1;
                assert!(gedf_result.is_ok(), "seed {s}: {name} accepts {set:?} on m = {m}, but G-EDF: {gedf_result:?}");
            }
        }
        match federated(&set, m, LowPlacement::default(), &limits) {
            Federated::Schedulable(plan) => {
                accepted[3] += 1;
                let (h, jobs) = periodic(&tasks);
                if let Err(e) = simulate_federated(&set, &plan, h, &jobs) {
                    panic!("seed {s}: federated accepts {set:?} on m = {m} ({plan:?}), but {e}");
                }
                // The broken twin: one dedicated core fewer for a high task that has two or more.
                if let Some((i, c)) = plan.high.iter().find(|(_, c)| c.end - c.start >= 2) {
                    if simulate_gedf(&[&set[*i]], c.end - c.start - 1).is_err() {
                        fewer_core_misses += 1;
                    }
                }
            }
            Federated::NotSchedulable(reason) => assert!(!reason.is_empty() && !reason.contains('\n')),
        }
        for t in set.iter() {
            if graham::single_task(t, m) == Verdict::Schedulable {
                accepted[4] += 1;
                assert!(simulate_gedf(&[t], m).is_ok(), "seed {s}: Graham accepts {t:?} on m = {m}");
            }
        }
        // The broken twin of the G-EDF tests: only the necessary conditions U <= m, L <= D.
        let u = sum_ratios(set.iter().map(|t| (t.volume() as u128, t.period() as u128)), &Stop::never()).unwrap();
        if u <= int(m as i128) && gedf_result.is_err() {
            naive_misses += 1;
        }
    }
    eprintln!("accepted of {SETS}: li2013, li2014, bonifaci2013, federated, graham(tasks) = {accepted:?}");
    eprintln!("broken twins caught: U <= m {naive_misses}, one core fewer {fewer_core_misses}");
    for (k, &a) in accepted.iter().enumerate() {
        assert!(a >= 300, "test {k} accepted only {a} sets: the oracle would check too little");
    }
    assert!(naive_misses > 0, "the simulator never caught the necessary-conditions-only test");
    assert!(fewer_core_misses > 0, "the simulator never caught federated with a core fewer");
}

#[test]
fn one_node_dags_get_the_sequential_verdicts() {
    let limits = Limits::default();
    let mut compared = 0u32;
    for s in 0..SETS / 3 {
        let mut r = ChaCha8Rng::seed_from_u64(1_000_000 + s);
        let n = r.random_range(1..=5);
        let m = r.random_range(1..=4);
        let set = DagSet::new((0..n).map(|_| random_task(&mut r, 1)).collect());
        let ts = set.sequential().unwrap();
        // Federated = partitioning the sequential tasks (no task is high: vol = L <= D).
        let low = LowPlacement::default();
        let want = matches!(partition(&ts, m, low.fit, low.order, low.admission, &limits), PartitionOutcome::Placed(_));
        assert_eq!(
            federated(&set, m, low, &limits).verdict() == Verdict::Schedulable,
            want,
            "seed {s}: {set:?} m = {m}"
        );
        // Graham on one node: C <= D.
        for t in set.iter() {
            assert_eq!(graham::single_task(t, m), Verdict::from_bool(t.volume() <= t.deadline()));
        }
        // Each G-EDF test accepts only what the sequential GFB accepts (on one-node tasks each
        // of their conditions implies GFB's density bound).
        let gfb = global::test(GlobalTest::Gfb, &ts, m, &limits);
        for f in [gedf::li2013, gedf::li2014, gedf::bonifaci2013] {
            if f(&set, m) == Verdict::Schedulable {
                assert_eq!(gfb, Verdict::Schedulable, "seed {s}: {set:?} m = {m}");
                compared += 1;
            }
        }
    }
    assert!(compared > 500, "only {compared} accepted one-node sets compared");
}

#[test]
fn no_accepted_set_misses_under_sporadic_releases_and_early_completion() {
    // Sporadic and asynchronous releases, some with early completion: legal job sequences of
    // the sporadic model the tests are proven for, other than the synchronous periodic one.
    let limits = Limits::default();
    let horizon = 120;
    let mut checked = 0u32;
    for s in 0..SETS / 5 {
        let mut r = ChaCha8Rng::seed_from_u64(2_000_000 + s);
        let (set, m) = random_set(&mut r, 6);
        let tasks: Vec<&DagTask> = set.iter().collect();
        let accepted_gedf =
            [gedf::li2013, gedf::li2014, gedf::bonifaci2013].map(|f| f(&set, m) == Verdict::Schedulable);
        let fed = federated(&set, m, LowPlacement::default(), &limits);
        let graham_ok: Vec<bool> = set.iter().map(|t| graham::single_task(t, m) == Verdict::Schedulable).collect();
        if !accepted_gedf.iter().any(|&a| a) && fed.verdict() != Verdict::Schedulable && !graham_ok.contains(&true) {
            continue;
        }
        for round in 0..3 {
            let plan = sporadic(&tasks, horizon, round > 0, &mut r);
            if accepted_gedf.iter().any(|&a| a) {
                checked += 1;
                let res = simulate(&tasks, m, horizon, &plan);
                assert!(res.is_ok(), "seed {s} round {round}: {accepted_gedf:?} accept {set:?} on m = {m}: {res:?}");
            }
            if let Federated::Schedulable(p) = &fed {
                checked += 1;
                let res = simulate_federated(&set, p, horizon, &plan);
                assert!(res.is_ok(), "seed {s} round {round}: federated {p:?} of {set:?}: {res:?}");
            }
            for (i, _) in graham_ok.iter().enumerate().filter(|(_, &ok)| ok) {
                let res = simulate(&[&set[i]], m, horizon, &vec![plan[i].clone()]);
                assert!(res.is_ok(), "seed {s} round {round}: Graham, task {i} of {set:?}: {res:?}");
            }
        }
    }
    assert!(checked > 10_000, "only {checked} schedules checked");
}
