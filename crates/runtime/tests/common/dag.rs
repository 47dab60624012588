//! The DAG trace oracle, shared by tests/dag_runtime.rs and tests/dag_jobs.rs (every mechanism
//! that executes DAG jobs), and the random small DAG sets of their tests.

use super::Rng;
use rtsched_model::dag::{DagSet, DagTask};
use rtsched_runtime::{dag_jobs, RunResult};
use rtsched_trace::Event;
use std::collections::{BTreeMap, HashMap};

pub const MS: u64 = 1_000_000;

/// What the trace says of one node (slot `s`, job `j`).
#[derive(Default, Debug, Clone)]
struct Node {
    released: Option<u64>,
    first_run: Option<u64>,
    complete: Option<u64>,
    completions: u32,
}

/// Per DAG job (task, seq): its release, deadline, completion (the last node's, when every
/// node completed) and how many of its nodes completed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DagJobView {
    pub release: u64,
    pub deadline: u64,
    pub finish: Option<u64>,
    pub nodes_done: u32,
}

/// The oracle over a run's trace, judged against the graphs of `set` (which need not be the
/// graphs the run used: a broken twin is judged against a graph with an edge the run did not
/// have). Every node of every job completes at most once and never runs after it completed,
/// every node released with its job; no node runs before every predecessor of the same job
/// completed; a task's jobs run in order; the accounting and `check_trace` hold; the library's
/// job view (`dag_jobs`) agrees. Returns the job-level view.
pub fn check_dag(set: &DagSet, r: &RunResult) -> Result<BTreeMap<(u32, u32), DagJobView>, String> {
    if r.dropped_records != 0 {
        return Err(format!("{} records dropped", r.dropped_records));
    }
    if let Some(e) = &r.accounting.error {
        return Err(format!("accounting: {e}"));
    }
    r.check_trace().map_err(|e| format!("check_trace: {e}"))?;
    // Slot → (task, node).
    let mut map = Vec::new();
    let mut base = Vec::new();
    for (i, t) in set.iter().enumerate() {
        base.push(map.len() as u32);
        map.extend((0..t.nodes() as u32).map(|k| (i as u32, k)));
    }
    let mut nodes: HashMap<(u32, u32), Node> = HashMap::new();
    let mut deadline: HashMap<(u32, u32), u64> = HashMap::new();
    for x in &r.trace.records {
        match x.event {
            Event::Release { job, deadline: d } => {
                let Some(&(i, _)) = map.get(job.task as usize) else {
                    return Err(format!("slot {} is not a node of the set", job.task));
                };
                nodes.entry((job.task, job.job)).or_default().released = Some(x.time);
                deadline.insert((i, job.job), d);
            }
            Event::Run { job, .. } => {
                let e = nodes.entry((job.task, job.job)).or_default();
                e.first_run.get_or_insert(x.time);
                if e.completions > 0 {
                    return Err(format!("slot {} job {} runs after completing", job.task, job.job));
                }
            }
            Event::Complete { job, .. } => {
                let e = nodes.entry((job.task, job.job)).or_default();
                e.complete = Some(x.time);
                e.completions += 1;
            }
            _ => {}
        }
    }
    let mut jobs = BTreeMap::new();
    for (i, t) in set.iter().enumerate() {
        let (i, b) = (i as u32, base[i]);
        let mut seq = 0u32;
        let mut prev_finish: Option<u64> = None;
        loop {
            let get = |k: u32| nodes.get(&(b + k, seq)).cloned().unwrap_or_default();
            let all: Vec<Node> = (0..t.nodes() as u32).map(get).collect();
            if all.iter().all(|n| n.released.is_none()) {
                break;
            }
            let release = all[0].released.unwrap_or(0);
            if all.iter().any(|n| n.released != Some(release)) {
                return Err(format!("task {i} job {seq}: its nodes are not released together"));
            }
            for (k, n) in all.iter().enumerate() {
                if n.completions > 1 {
                    return Err(format!("task {i} job {seq} node {k} completed {} times", n.completions));
                }
                let Some(start) = n.first_run else { continue };
                if start < release {
                    return Err(format!("task {i} job {seq} node {k} runs at {start} before its release {release}"));
                }
                // Precedence: every predecessor completed before this node first ran.
                for (u, v) in t.edges() {
                    if *v as usize != k {
                        continue;
                    }
                    match all[*u as usize].complete {
                        Some(c) if all[*u as usize].completions == 1 && c <= start => {}
                        other => {
                            return Err(format!(
                                "task {i} job {seq} node {k} runs at {start} before its predecessor {u} completed \
                                 ({other:?})"
                            ))
                        }
                    }
                }
            }
            let nodes_done = all.iter().filter(|n| n.completions == 1).count() as u32;
            let finish =
                (nodes_done as usize == all.len()).then(|| all.iter().filter_map(|n| n.complete).max()).flatten();
            // Jobs of a task in order: nothing of this job before the previous one completed.
            let first = all.iter().filter_map(|n| n.first_run).min();
            if let Some(f) = first {
                if seq > 0 && prev_finish.is_none_or(|p| p > f) {
                    return Err(format!(
                        "task {i} job {seq} starts at {f} before its predecessor ends ({prev_finish:?})"
                    ));
                }
            }
            prev_finish = finish;
            let d = deadline.get(&(i, seq)).copied().unwrap_or(u64::MAX);
            jobs.insert((i, seq), DagJobView { release, deadline: d, finish, nodes_done });
            seq += 1;
        }
        if r.per_task.released[b as usize] != seq {
            return Err(format!("task {i}: {seq} jobs in the trace, {} released", r.per_task.released[b as usize]));
        }
    }
    let lib: BTreeMap<(u32, u32), Option<u64>> = dag_jobs(set, r).iter().map(|j| ((j.task, j.job), j.finish)).collect();
    let mine: BTreeMap<(u32, u32), Option<u64>> =
        jobs.iter().map(|(k, j)| (*k, j.finish.filter(|&f| f <= r.duration_ns))).collect();
    if lib != mine {
        return Err(format!("dag_jobs {lib:?} != the oracle's {mine:?}"));
    }
    Ok(jobs)
}

/// 1–3 tasks of 1–6 nodes with random forward edges (each pair with probability 2/5), periods
/// 5–30 ms, total utilization `u_pct`% of one CPU times `m`, 20–150% (light to overloaded),
/// deadlines implicit or constrained (never below the longest path).
pub fn random_dag(rng: &mut Rng, m: u64) -> (DagSet, u64) {
    let n = rng.range(1, 3);
    let u_pct = rng.range(20, 150) * m;
    let mut tasks = Vec::new();
    for _ in 0..n {
        let t = rng.range(5, 30) * MS;
        let budget = (t as u128 * u_pct as u128 / 100 / n as u128) as u64;
        let k = rng.range(1, 6) as usize;
        let each = (budget / k as u64).max(20_000);
        let wcets: Vec<u64> = (0..k).map(|_| rng.range(each / 2, each * 3 / 2).max(1)).collect();
        let mut edges = Vec::new();
        for a in 0..k as u32 {
            for b in a + 1..k as u32 {
                if rng.below(5) < 2 {
                    edges.push((a, b));
                }
            }
        }
        // The graph alone first, for its longest path; then a deadline that fits it.
        let g = DagTask::new(u64::MAX >> 12, u64::MAX >> 12, wcets.clone(), edges.clone()).unwrap();
        let len = g.longest_path();
        let period = t.max(len);
        let d = if rng.below(3) == 0 { rng.range(len.max(period / 2), period) } else { period };
        tasks.push(DagTask::new(period, d, wcets, edges).unwrap());
    }
    (DagSet::new(tasks), u_pct)
}
