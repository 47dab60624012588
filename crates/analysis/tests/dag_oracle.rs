//! Oracle for the DAG analyses (`rtsched_analysis::dag`): an exact node-level simulator,
//! written here and nowhere else, checks on 100,000 random small-integer DAG
//! sets that no set a test accepts misses a deadline in the schedule that test assumes, under
//! synchronous periodic release over the hyperperiod:
//!
//! * G-EDF tests (Li et al. 2013 and 2014, Bonifaci et al. 2013): work-conserving global EDF
//!   over nodes on `m` cores;
//! * federated scheduling: each high-utilization task alone and greedy on its dedicated cores,
//!   each light core running preemptive EDF over its tasks executed sequentially;
//! * Graham's bound: each task alone on `m` cores, greedy.
//!
//! The simulator: integer time in unit steps; at each instant the released jobs whose nodes
//! have all predecessors completed offer those nodes; the `m` with the earliest absolute
//! deadlines run for one unit (ties: task index, release, node index), so no core idles while
//! a node is ready. Node costs and periods are integers, so every release, completion and
//! decision falls on an integer instant and the unit-step schedule is the event-driven one.
//! With `D <= T` every deadline is at most the hyperperiod `H`, and a set that meets them all
//! is idle at `H`, so `[0, H)` decides the synchronous periodic case exactly.
//!
//! So that the oracle can fail, a wrong test (accept when `U <= m` and `L <= D`, necessary
//! conditions only) and a wrong federated rule (one dedicated core fewer) must each be caught
//! missing deadlines; and a DAG of one node per task must get the sequential verdicts where
//! the tests coincide (federated = partitioning; Graham = `C <= D`; each G-EDF test accepts
//! only sets the sequential GFB test accepts).

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

struct Job {
    task: usize,
    release: u64,
    deadline: u64,
    remaining: Vec<u64>,
    preds_left: Vec<u32>,
    left: usize,
}

/// Global EDF over the nodes of `tasks` on `m` cores, synchronous periodic releases, over the
/// hyperperiod. `Err` names the first job that missed its deadline.
fn simulate_gedf(tasks: &[&DagTask], m: u32) -> Result<(), String> {
    let h = tasks.iter().fold(1u64, |h, t| num_lcm(h, t.period()));
    let mut jobs: Vec<Job> = Vec::new();
    let mut ready: Vec<(u64, usize, u64, usize, u32)> = Vec::new();
    for now in 0..=h {
        // Deadlines at `now`: every job due by now must be complete.
        if let Some(j) = jobs.iter().find(|j| j.deadline <= now) {
            return Err(format!("task {} released at {} missed its deadline {}", j.task, j.release, j.deadline));
        }
        if now == h {
            break;
        }
        for (i, t) in tasks.iter().enumerate() {
            if now % t.period() == 0 {
                jobs.push(Job {
                    task: i,
                    release: now,
                    deadline: now + t.deadline(),
                    remaining: t.wcets().to_vec(),
                    preds_left: t.predecessor_counts().to_vec(),
                    left: t.nodes(),
                });
            }
        }
        ready.clear();
        for (k, j) in jobs.iter().enumerate() {
            for node in 0..j.remaining.len() {
                if j.remaining[node] > 0 && j.preds_left[node] == 0 {
                    ready.push((j.deadline, j.task, j.release, k, node as u32));
                }
            }
        }
        ready.sort_unstable();
        let run: Vec<(usize, u32)> = ready.iter().take(m as usize).map(|r| (r.3, r.4)).collect();
        for (k, node) in run {
            let j = &mut jobs[k];
            j.remaining[node as usize] -= 1;
            if j.remaining[node as usize] == 0 {
                j.left -= 1;
                for &s in tasks[j.task].successors(node) {
                    j.preds_left[s as usize] -= 1;
                }
            }
        }
        jobs.retain(|j| j.left > 0);
    }
    Ok(())
}

fn num_lcm(a: u64, b: u64) -> u64 {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

/// The federated plan's schedule: high tasks alone on their cores, light cores under EDF over
/// sequential jobs (a one-node DAG of cost `vol` is the sequential job).
fn simulate_federated(set: &DagSet, plan: &rtsched_analysis::dag::federated::FederatedPlan) -> Result<(), String> {
    for (i, cores) in &plan.high {
        simulate_gedf(&[&set[*i]], cores.end - cores.start).map_err(|e| format!("high task {i}: {e}"))?;
    }
    for (k, cpu) in plan.low.iter().enumerate() {
        let seq: Vec<DagTask> = cpu
            .iter()
            .map(|&i| DagTask::new(set[i].period(), set[i].deadline(), vec![set[i].volume()], vec![]).unwrap())
            .collect();
        simulate_gedf(&seq.iter().collect::<Vec<_>>(), 1).map_err(|e| format!("light core {k} ({cpu:?}): {e}"))?;
    }
    Ok(())
}

const PERIODS: [u64; 6] = [4, 6, 8, 12, 16, 24]; // hyperperiod at most 48

/// A random small-integer DAG task: 1..=max_nodes nodes of cost 1..=4, forward edges with
/// probability 0.35, a period from PERIODS at least its longest path, `D` uniform in `[L, T]`.
fn random_task(r: &mut ChaCha8Rng, max_nodes: usize) -> DagTask {
    loop {
        let n = r.random_range(1..=max_nodes);
        let wcets: Vec<u64> = (0..n).map(|_| r.random_range(1..=4)).collect();
        let mut edges = Vec::new();
        for i in 0..n as u32 {
            for j in i + 1..n as u32 {
                if r.random_bool(0.35) {
                    edges.push((i, j));
                }
            }
        }
        let t = PERIODS[r.random_range(0..PERIODS.len())];
        let probe = DagTask::new(1 << 40, 1 << 40, wcets, edges).unwrap();
        let len = probe.longest_path();
        if len > t {
            continue;
        }
        let d = r.random_range(len..=t);
        return probe.with_timing(t, d).unwrap();
    }
}

fn random_set(r: &mut ChaCha8Rng, max_nodes: usize) -> (DagSet, u32) {
    let n = r.random_range(1..=3);
    let m = r.random_range(1..=4);
    (DagSet::new((0..n).map(|_| random_task(r, max_nodes)).collect()), m)
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
                if let Err(e) = simulate_federated(&set, &plan) {
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
