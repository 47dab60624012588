//! An independent node-level DAG simulator, written for the tests and nowhere else, with the
//! random small-integer DAG sets the oracles draw. Used by `crates/analysis/tests/dag_oracle.rs`
//! (the analyses against it) and by `crates/sim/tests/dag_oracle.rs` (the real simulator,
//! `rtsched_sim::dag`, against it), through `#[path]`.
//!
//! Integer time in unit steps; at each instant every released job that is the oldest
//! unfinished one of its task offers its nodes whose predecessors have all completed; the `m`
//! with the earliest absolute deadlines run for one unit (ties: task index, release, node
//! index), so no core idles while a node is ready. Node costs and release times are integers,
//! so every release, completion and decision falls on an integer instant and the unit-step
//! schedule is the event-driven one.
#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::dag::{DagSet, DagTask};

/// Per task, its jobs: release time and the cost each node actually takes (at most its WCET).
pub type Plan = Vec<Vec<(u64, Vec<u64>)>>;

struct Job {
    task: usize,
    release: u64,
    deadline: u64,
    remaining: Vec<u64>,
    preds_left: Vec<u32>,
    left: usize,
    index: usize,
}

/// Global EDF over the nodes of `tasks` on `m` cores, jobs released as `plan` says, up to
/// `horizon`: per task, per job of the plan released before the horizon, its finish time
/// (`None`: not finished by the horizon). With `fixed = Some(ranks)` the key is the task's
/// rank instead of the deadline (global FP).
pub fn schedule(tasks: &[&DagTask], m: u32, horizon: u64, plan: &Plan, fixed: Option<&[u32]>) -> Vec<Vec<Option<u64>>> {
    let mut finish: Vec<Vec<Option<u64>>> =
        plan.iter().map(|jobs| vec![None; jobs.iter().filter(|j| j.0 < horizon).count()]).collect();
    let mut jobs: Vec<Job> = Vec::new();
    let mut next = vec![0usize; tasks.len()];
    let mut ready: Vec<(u64, usize, u64, usize, u32)> = Vec::new();
    for now in 0..horizon {
        for (i, t) in tasks.iter().enumerate() {
            while next[i] < plan[i].len() && plan[i][next[i]].0 == now {
                let costs = plan[i][next[i]].1.clone();
                jobs.push(Job {
                    task: i,
                    release: now,
                    deadline: now + t.deadline(),
                    remaining: costs,
                    preds_left: t.predecessor_counts().to_vec(),
                    left: t.nodes(),
                    index: next[i],
                });
                next[i] += 1;
            }
        }
        ready.clear();
        let mut head_seen = vec![false; tasks.len()];
        for (k, j) in jobs.iter().enumerate() {
            // Jobs are kept in release order: the first of each task is its oldest unfinished.
            if std::mem::replace(&mut head_seen[j.task], true) {
                continue;
            }
            let key = fixed.map_or(j.deadline, |r| r[j.task] as u64);
            for node in 0..j.remaining.len() {
                if j.remaining[node] > 0 && j.preds_left[node] == 0 {
                    ready.push((key, j.task, j.release, k, node as u32));
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
                if j.left == 0 {
                    finish[j.task][j.index] = Some(now + 1);
                }
            }
        }
        jobs.retain(|j| j.left > 0);
    }
    finish
}

/// `Err` naming the first job (in task order) whose deadline is at most `horizon` and that
/// did not finish by it.
pub fn check(tasks: &[&DagTask], horizon: u64, plan: &Plan, finish: &[Vec<Option<u64>>]) -> Result<(), String> {
    for (i, t) in tasks.iter().enumerate() {
        for (k, f) in finish[i].iter().enumerate() {
            let (r, d) = (plan[i][k].0, plan[i][k].0 + t.deadline());
            if d <= horizon && f.is_none_or(|f| f > d) {
                return Err(format!("task {i} released at {r} missed its deadline {d} (finish {f:?})"));
            }
        }
    }
    Ok(())
}

/// Global EDF with every deadline up to the horizon checked.
pub fn simulate(tasks: &[&DagTask], m: u32, horizon: u64, plan: &Plan) -> Result<(), String> {
    check(tasks, horizon, plan, &schedule(tasks, m, horizon, plan, None))
}

/// Synchronous periodic releases over the hyperperiod, every node at its WCET.
pub fn periodic(tasks: &[&DagTask]) -> (u64, Plan) {
    let h = tasks.iter().fold(1u64, |h, t| num_lcm(h, t.period()));
    (h, tasks.iter().map(|t| (0..h).step_by(t.period() as usize).map(|r| (r, t.wcets().to_vec())).collect()).collect())
}

/// Sporadic releases up to `horizon`: a random first release in `[0, T)`, then gaps of `T`
/// plus, half the time, a random delay below `T`; with `early`, each node takes a cost uniform
/// in `1..=WCET`.
pub fn sporadic(tasks: &[&DagTask], horizon: u64, early: bool, r: &mut ChaCha8Rng) -> Plan {
    tasks
        .iter()
        .map(|t| {
            let mut jobs = Vec::new();
            let mut at = r.random_range(0..t.period());
            while at < horizon {
                let costs = t.wcets().iter().map(|&c| if early { r.random_range(1..=c) } else { c }).collect();
                jobs.push((at, costs));
                at += t.period() + if r.random_bool(0.5) { r.random_range(0..t.period()) } else { 0 };
            }
            jobs
        })
        .collect()
}

pub fn num_lcm(a: u64, b: u64) -> u64 {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

pub const PERIODS: [u64; 6] = [4, 6, 8, 12, 16, 24]; // hyperperiod at most 48

/// A random small-integer DAG task: 1..=max_nodes nodes of cost 1..=4, forward edges with
/// probability 0.35, a period from PERIODS at least its longest path, `D` uniform in `[L, T]`.
pub fn random_task(r: &mut ChaCha8Rng, max_nodes: usize) -> DagTask {
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

/// 1–3 random tasks of at most `max_nodes` nodes and `m` in 1–4.
pub fn random_set(r: &mut ChaCha8Rng, max_nodes: usize) -> (DagSet, u32) {
    let n = r.random_range(1..=3);
    let m = r.random_range(1..=4);
    (DagSet::new((0..n).map(|_| random_task(r, max_nodes)).collect()), m)
}

/// The generator of set number `s` of a stream.
pub fn rng(s: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(s)
}
