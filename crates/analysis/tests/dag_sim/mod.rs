//! An exact node-level simulator of DAG task sets under global EDF or global fixed priority,
//! written for the test oracles and nowhere else (`mod dag_sim;` from a test file).
//!
//! Integer time in unit steps: at each instant the released jobs offer their ready nodes (all
//! predecessors completed); the `m` of highest priority run for one unit, so no core idles
//! while a node is ready. Priorities: G-EDF by absolute deadline, then task index, release,
//! node; G-FP by the task's rank, then release, node (task-level priorities, every node of a
//! job at its task's priority). Node costs and releases are integers, so every release,
//! completion and decision falls on an integer instant and the unit-step schedule is the
//! event-driven one. Deadlines up to the horizon are checked; the largest response time of
//! each task's completed jobs is recorded.

#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::dag::{DagSet, DagTask};

/// The scheduler simulated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    Edf,
    /// `rank[i]`: task `i`'s priority, smaller = higher (distinct ranks).
    Fp(Vec<usize>),
}

impl Policy {
    /// Fixed priorities from an order, highest first.
    pub fn from_order(order: &[usize]) -> Policy {
        let mut rank = vec![0; order.len()];
        for (r, &i) in order.iter().enumerate() {
            rank[i] = r;
        }
        Policy::Fp(rank)
    }
}

/// Per task, its jobs: release time and the cost each node actually takes (at most its WCET).
pub type Plan = Vec<Vec<(u64, Vec<u64>)>>;

/// What a simulation saw: the first miss (`Err` names it), else per task the largest response
/// time of its jobs that completed (0 when none did).
pub type Outcome = Result<Vec<u64>, String>;

struct Job {
    task: usize,
    release: u64,
    deadline: u64,
    remaining: Vec<u64>,
    preds_left: Vec<u32>,
    left: usize,
}

pub fn lcm(a: u64, b: u64) -> u64 {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

/// Synchronous periodic releases over the hyperperiod, every node at its WCET.
pub fn periodic(set: &DagSet) -> (u64, Plan) {
    let h = set.iter().fold(1u64, |h, t| lcm(h, t.period()));
    (h, set.iter().map(|t| (0..h).step_by(t.period() as usize).map(|r| (r, t.wcets().to_vec())).collect()).collect())
}

/// Sporadic releases up to `horizon`: a random first release in `[0, T)`, then gaps of `T`
/// plus, half the time, a random delay below `T`; with `early`, each node takes a cost uniform
/// in `1..=WCET`.
pub fn sporadic(set: &DagSet, horizon: u64, early: bool, r: &mut ChaCha8Rng) -> Plan {
    set.iter()
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

/// Simulates `set` on `m` cores under `policy`, jobs released as `plan` says, up to `horizon`.
pub fn simulate(set: &DagSet, m: u32, policy: &Policy, horizon: u64, plan: &Plan) -> Outcome {
    let tasks: Vec<&DagTask> = set.iter().collect();
    let mut jobs: Vec<Job> = Vec::new();
    let mut next = vec![0usize; tasks.len()];
    let mut worst = vec![0u64; tasks.len()];
    let mut ready: Vec<(u64, u64, u64, usize, u32)> = Vec::new();
    for now in 0..=horizon {
        if let Some(j) = jobs.iter().find(|j| j.deadline <= now) {
            return Err(format!("task {} released at {} missed its deadline {}", j.task, j.release, j.deadline));
        }
        if now == horizon {
            break;
        }
        for (i, t) in tasks.iter().enumerate() {
            while next[i] < plan[i].len() && plan[i][next[i]].0 == now {
                let costs = plan[i][next[i]].1.clone();
                next[i] += 1;
                jobs.push(Job {
                    task: i,
                    release: now,
                    deadline: now + t.deadline(),
                    remaining: costs,
                    preds_left: t.predecessor_counts().to_vec(),
                    left: t.nodes(),
                });
            }
        }
        ready.clear();
        for (k, j) in jobs.iter().enumerate() {
            let key = match policy {
                Policy::Edf => (j.deadline, j.task as u64),
                Policy::Fp(rank) => (rank[j.task] as u64, 0),
            };
            for node in 0..j.remaining.len() {
                if j.remaining[node] > 0 && j.preds_left[node] == 0 {
                    ready.push((key.0, key.1, j.release, k, node as u32));
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
                    worst[j.task] = worst[j.task].max(now + 1 - j.release);
                }
            }
        }
        jobs.retain(|j| j.left > 0);
    }
    Ok(worst)
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

/// 1–3 random tasks of 1..=max_nodes nodes and `m` in 1..=4.
pub fn random_set(r: &mut ChaCha8Rng, max_nodes: usize) -> (DagSet, u32) {
    let n = r.random_range(1..=3);
    let m = r.random_range(1..=4);
    (DagSet::new((0..n).map(|_| random_task(r, max_nodes)).collect()), m)
}

/// A seeded generator for set number `s` of a stream.
pub fn rng(stream: u64, s: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(stream * 10_000_000 + s)
}
