//! The response-time oracles' view of the one test-file DAG simulator (`common/dag_twin.rs`,
//! which `dag_oracle.rs` and the real simulator's `crates/sim/tests/dag_oracle.rs` use too):
//! global EDF or global fixed priority (task-level ranks), per task the largest response time
//! or the first miss; and the random small-integer DAG sets these oracles draw (the twin's own).

#![allow(dead_code)]

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

/// What a simulation saw: the first miss (`Err` names it), else per task the largest response
/// time of its jobs that completed (0 when none did).
pub type Outcome = Result<Vec<u64>, String>;

#[path = "../common/dag_twin.rs"]
mod twin;

pub use twin::Plan;

pub fn lcm(a: u64, b: u64) -> u64 {
    twin::num_lcm(a, b)
}

/// Synchronous periodic releases over the hyperperiod, every node at its WCET.
pub fn periodic(set: &DagSet) -> (u64, Plan) {
    twin::periodic(&set.iter().collect::<Vec<_>>())
}

/// Sporadic releases up to `horizon` (`dag_twin::sporadic`).
pub fn sporadic(set: &DagSet, horizon: u64, early: bool, r: &mut ChaCha8Rng) -> Plan {
    twin::sporadic(&set.iter().collect::<Vec<_>>(), horizon, early, r)
}

/// Simulates `set` on `m` cores under `policy`, jobs released as `plan` says, up to `horizon`,
/// on the one test-file simulator (`common/dag_twin.rs`): the first job (by deadline) that has
/// not finished by its deadline up to the horizon is the miss; else per task the largest
/// response time of its finished jobs.
pub fn simulate(set: &DagSet, m: u32, policy: &Policy, horizon: u64, plan: &Plan) -> Outcome {
    let tasks: Vec<&DagTask> = set.iter().collect();
    let ranks: Option<Vec<u32>> = match policy {
        Policy::Edf => None,
        Policy::Fp(rank) => Some(rank.iter().map(|&r| r as u32).collect()),
    };
    let finish = twin::schedule(&tasks, m, horizon, plan, ranks.as_deref());
    let mut worst = vec![0u64; tasks.len()];
    let mut miss: Option<(u64, usize, u64)> = None;
    for (i, t) in tasks.iter().enumerate() {
        for (k, f) in finish[i].iter().enumerate() {
            let release = plan[i][k].0;
            let deadline = release + t.deadline();
            match f {
                Some(f) if *f <= deadline => worst[i] = worst[i].max(f - release),
                _ if deadline <= horizon && miss.is_none_or(|(d, _, _)| deadline < d) => {
                    miss = Some((deadline, i, release));
                }
                _ => {}
            }
        }
    }
    match miss {
        Some((deadline, task, release)) => {
            Err(format!("task {task} released at {release} missed its deadline {deadline}"))
        }
        None => Ok(worst),
    }
}

/// The random small-integer DAG draws of the one test-file simulator (`common/dag_twin.rs`):
/// the same tasks and sets `dag_oracle.rs` draws.
pub use twin::{random_set, random_task};

/// A seeded generator for set number `s` of stream `stream` (`dag_twin::rng` of one seed per
/// stream and set).
pub fn rng(stream: u64, s: u64) -> ChaCha8Rng {
    twin::rng(stream * 10_000_000 + s)
}
