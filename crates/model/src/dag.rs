//! DAG tasks: sporadic tasks whose jobs are directed acyclic graphs of subjobs (design note:
//! `docs/dag.md`; format: `docs/formats.md`).
//!
//! The model of Baruah, Bonifaci, Marchetti-Spaccamela, Stougie & Wiese, RTSS 2012 (the
//! "sporadic DAG task model"): task `τ_i = (G_i, D_i, T_i)`; each node (vertex) of `G_i` is a
//! sequential piece of work with a worst-case execution time, each edge `(u, v)` says that `v`
//! may start only once `u` has completed. Every release of the task releases all nodes of the
//! graph at once (a node becomes ready when all its predecessors have completed); all must
//! complete within `D_i` of the release, and releases are at least `T_i` apart. Derived
//! quantities (named as in that paper and in Li, Chen, Agrawal, Lu & Gill, ECRTS 2014):
//!
//! * the **volume** `vol_i = C_i`, the sum of all node WCETs (the work of one job, the
//!   response time on one core);
//! * the **longest path** `len_i = L_i` (the critical path), the largest sum of WCETs along a
//!   path of the graph (the response time on infinitely many cores);
//! * a **topological order** (Kahn's algorithm, smallest node index first, so it is one fixed
//!   order).
//!
//! Decisions (each stated in `docs/dag.md`):
//! * Several sources and sinks are allowed: in Baruah et al.'s model all nodes are released
//!   together, so a node without predecessors is simply ready at the release. Hence no node of
//!   an acyclic graph is "unreachable": every node is a source or follows one.
//! * A node's WCET is at least 1 ns (a zero-cost node says nothing a plain edge cannot).
//! * A longest path above the deadline is an error: no scheduler on any number of cores can
//!   meet it (unlike a sequential task's `C > D`, which stays a valid task so that tests can be
//!   asked about it, the message here names the path).
//! * Arbitrary deadlines (`D > T`) are valid in the model, as in Bonifaci, Marchetti-Spaccamela,
//!   Stiller & Wiese, ECRTS 2013; the analyses of `rtsched_analysis::dag` need constrained
//!   deadlines (`D <= T`) and answer "not schedulable" otherwise, as the G-EDF tests do.
//! * Bounds: at most [`MAX_NODES_PER_TASK`] nodes and [`MAX_EDGES_PER_TASK`] edges per task,
//!   checked before anything is allocated per node; the message says the bound.
//!
//! JSON: `{"m": 4, "tasks": [{"name": "a", "period": "10ms", "deadline": "8ms", "nodes":
//! [1000, "2ms", 300], "edges": [[0, 1], [0, 2]]}]}`; `name`, `deadline` (default: the period)
//! and `edges` (default: none) are optional; unknown and repeated keys are errors.

use crate::forkjoin::{time_value, ForkJoinSet, ForkJoinTask};
use crate::task::Task;
use crate::taskset::TaskSet;
use crate::time::{format_time_exact, Time, MAX_TIME};
use crate::ModelError;
use serde_json::{Map, Value};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

mod io;
pub use io::*;

/// Most nodes one DAG task may have (the fork-join model's thread bound).
pub const MAX_NODES_PER_TASK: usize = crate::forkjoin::MAX_THREADS_PER_TASK;

/// Most edges one DAG task may have.
pub const MAX_EDGES_PER_TASK: usize = 1 << 20;

/// A validated DAG task. The graph is immutable once built, so its derived quantities are
/// computed once, at construction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DagTask {
    name: Option<String>,
    period: Time,
    deadline: Time,
    wcets: Vec<Time>,
    edges: Vec<(u32, u32)>,
    // Derived, from the fields above.
    succ_start: Vec<u32>,
    succ: Vec<u32>,
    pred_count: Vec<u32>,
    order: Vec<u32>,
    volume: Time,
    longest: Time,
    critical: Vec<u32>,
}

/// The error of a task (name attached; [`DagSet`] adds the index).
fn err(name: &Option<String>, field: impl Into<String>, reason: impl Into<String>) -> ModelError {
    ModelError { task_name: name.clone(), ..ModelError::field(field, reason) }
}

impl DagTask {
    /// A DAG task of node WCETs `wcets` (node `k` is `wcets[k]`) and edges `(from, to)`,
    /// validated (see the module doc); errors name the field: `nodes[k]`, `edges[e]`, `edges`
    /// (a cycle, naming its nodes), `deadline` (longest path above it).
    pub fn new(period: Time, deadline: Time, wcets: Vec<Time>, edges: Vec<(u32, u32)>) -> Result<DagTask, ModelError> {
        DagTask::build(None, period, deadline, wcets, edges)
    }

    /// An implicit-deadline DAG task (`D = T`).
    pub fn implicit(period: Time, wcets: Vec<Time>, edges: Vec<(u32, u32)>) -> Result<DagTask, ModelError> {
        DagTask::new(period, period, wcets, edges)
    }

    /// Same task with a name (no NUL character; validated like a task's name).
    pub fn named(self, name: impl Into<String>) -> Result<DagTask, ModelError> {
        let name = name.into();
        if name.contains('\0') {
            return Err(err(&Some(name), "name", "must not contain a NUL character"));
        }
        Ok(DagTask { name: Some(name), ..self })
    }

    /// Same graph with another period and deadline (validated again: the longest path must
    /// still fit the deadline).
    pub fn with_timing(&self, period: Time, deadline: Time) -> Result<DagTask, ModelError> {
        DagTask::build(self.name.clone(), period, deadline, self.wcets.clone(), self.edges.clone())
    }

    fn build(
        name: Option<String>,
        period: Time,
        deadline: Time,
        wcets: Vec<Time>,
        edges: Vec<(u32, u32)>,
    ) -> Result<DagTask, ModelError> {
        if name.as_deref().is_some_and(|n| n.contains('\0')) {
            return Err(err(&name, "name", "must not contain a NUL character"));
        }
        for (field, v) in [("period", period), ("deadline", deadline)] {
            if v == 0 || v > MAX_TIME {
                return Err(err(&name, field, format!("must be in 1..={MAX_TIME} ns, got {v}")));
            }
        }
        check_counts(&name, wcets.len(), edges.len())?;
        let n = wcets.len();
        let mut volume: u128 = 0;
        for (k, &c) in wcets.iter().enumerate() {
            if c == 0 || c > MAX_TIME {
                return Err(err(
                    &name,
                    format!("nodes[{k}]"),
                    format!("node {k}: WCET must be in 1..={MAX_TIME} ns, got {c}"),
                ));
            }
            volume += c as u128;
        }
        if volume > MAX_TIME as u128 {
            return Err(err(
                &name,
                "nodes",
                format!("the volume (sum of node WCETs) {volume} ns exceeds {MAX_TIME} ns"),
            ));
        }
        let mut seen: HashMap<(u32, u32), usize> = HashMap::with_capacity(edges.len());
        let mut out_deg = vec![0u32; n];
        let mut pred_count = vec![0u32; n];
        for (e, &(u, v)) in edges.iter().enumerate() {
            for x in [u, v] {
                if x as usize >= n {
                    return Err(err(
                        &name,
                        format!("edges[{e}]"),
                        format!(
                            "edge {e} ({u} → {v}): node {x} does not exist (the task has {n} nodes, 0..={})",
                            n - 1
                        ),
                    ));
                }
            }
            if u == v {
                return Err(err(&name, format!("edges[{e}]"), format!("edge {e} ({u} → {v}) is a self-loop")));
            }
            if let Some(first) = seen.insert((u, v), e) {
                return Err(err(&name, format!("edges[{e}]"), format!("edge {e} ({u} → {v}) repeats edge {first}")));
            }
            out_deg[u as usize] += 1;
            pred_count[v as usize] += 1;
        }
        drop(seen);
        // Successors in compressed rows, each row in edge order.
        let mut succ_start = Vec::with_capacity(n + 1);
        let mut acc = 0u32;
        succ_start.push(0);
        for &d in &out_deg {
            acc += d;
            succ_start.push(acc);
        }
        let mut fill: Vec<u32> = succ_start[..n].to_vec();
        let mut succ = vec![0u32; edges.len()];
        for &(u, v) in &edges {
            succ[fill[u as usize] as usize] = v;
            fill[u as usize] += 1;
        }
        // Kahn's algorithm, smallest ready index first.
        let mut indeg = pred_count.clone();
        let mut ready: BinaryHeap<Reverse<u32>> =
            (0..n as u32).filter(|&k| indeg[k as usize] == 0).map(Reverse).collect();
        let mut order = Vec::with_capacity(n);
        while let Some(Reverse(u)) = ready.pop() {
            order.push(u);
            for &v in &succ[succ_start[u as usize] as usize..succ_start[u as usize + 1] as usize] {
                indeg[v as usize] -= 1;
                if indeg[v as usize] == 0 {
                    ready.push(Reverse(v));
                }
            }
        }
        if order.len() < n {
            let cycle = find_cycle(n, &edges, &indeg);
            let shown: Vec<String> = cycle.iter().chain(cycle.first()).map(u32::to_string).collect();
            return Err(err(
                &name,
                "edges",
                format!("the edges form a cycle through node {} ({})", cycle[0], shown.join(" → ")),
            ));
        }
        // Longest path: latest finish over the topological order, with the predecessor that
        // set it, for naming the path.
        let mut finish = vec![0u64; n];
        let mut start = vec![0u64; n];
        let mut via = vec![u32::MAX; n];
        for &u in &order {
            let f = start[u as usize] + wcets[u as usize];
            finish[u as usize] = f;
            for &v in &succ[succ_start[u as usize] as usize..succ_start[u as usize + 1] as usize] {
                if f > start[v as usize] {
                    start[v as usize] = f;
                    via[v as usize] = u;
                }
            }
        }
        let last = (0..n).max_by_key(|&k| (finish[k], Reverse(k))).unwrap_or(0);
        let longest = finish[last];
        let mut critical = vec![last as u32];
        while via[*critical.last().unwrap_or(&0) as usize] != u32::MAX {
            let p = via[*critical.last().unwrap_or(&0) as usize];
            critical.push(p);
        }
        critical.reverse();
        if longest > deadline {
            let path: Vec<String> = critical.iter().map(u32::to_string).collect();
            return Err(err(
                &name,
                "deadline",
                format!(
                    "the longest path (nodes {}) takes {}, above the deadline of {}: no number of cores can meet it",
                    path.join(" → "),
                    format_time_exact(longest),
                    format_time_exact(deadline)
                ),
            ));
        }
        Ok(DagTask {
            name,
            period,
            deadline,
            wcets,
            edges,
            succ_start,
            succ,
            pred_count,
            order,
            volume: volume as Time,
            longest,
            critical,
        })
    }

    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    /// T (ns).
    pub fn period(&self) -> Time {
        self.period
    }
    /// D, relative deadline (ns).
    pub fn deadline(&self) -> Time {
        self.deadline
    }
    /// Node WCETs (ns): `wcets()[k]` is node `k`'s.
    pub fn wcets(&self) -> &[Time] {
        &self.wcets
    }
    /// Edges `(from, to)` in the order given.
    pub fn edges(&self) -> &[(u32, u32)] {
        &self.edges
    }
    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.wcets.len()
    }
    /// Successors of node `k`.
    pub fn successors(&self, k: u32) -> &[u32] {
        &self.succ[self.succ_start[k as usize] as usize..self.succ_start[k as usize + 1] as usize]
    }
    /// Number of predecessors of each node.
    pub fn predecessor_counts(&self) -> &[u32] {
        &self.pred_count
    }
    /// The topological order (Kahn, smallest ready index first).
    pub fn topological_order(&self) -> &[u32] {
        &self.order
    }
    /// `vol = C`: the sum of node WCETs.
    pub fn volume(&self) -> Time {
        self.volume
    }
    /// `len = L`: the longest path's length (the critical path).
    pub fn longest_path(&self) -> Time {
        self.longest
    }
    /// The nodes of one longest path, source to sink (the latest-finishing node, smallest index
    /// on ties, and the predecessors that set each start).
    pub fn critical_path(&self) -> &[u32] {
        &self.critical
    }
    /// The sequential task `(vol, D, T)`: the task executed on one core in topological order.
    pub fn sequential(&self) -> Task {
        Task {
            name: self.name.clone(),
            wcet: self.volume,
            deadline: self.deadline,
            period: self.period,
            segments: None,
        }
    }
}

/// A cycle among the nodes Kahn's algorithm could not order (those with `indeg > 0`): walk
/// predecessors from one of them until a node repeats. Returns the cycle in edge direction.
fn find_cycle(n: usize, edges: &[(u32, u32)], indeg: &[u32]) -> Vec<u32> {
    // One remaining predecessor per remaining node (every remaining node has one).
    let mut pred = vec![u32::MAX; n];
    for &(u, v) in edges {
        if indeg[u as usize] > 0 && indeg[v as usize] > 0 && pred[v as usize] == u32::MAX {
            pred[v as usize] = u;
        }
    }
    let Some(start) = (0..n).find(|&k| indeg[k] > 0) else { return vec![] };
    let mut pos = vec![usize::MAX; n];
    let mut walk = Vec::new();
    let mut x = start as u32;
    while pos[x as usize] == usize::MAX {
        pos[x as usize] = walk.len();
        walk.push(x);
        x = pred[x as usize];
        if x == u32::MAX {
            return walk; // unreachable for a set left by Kahn's algorithm
        }
    }
    let mut cycle: Vec<u32> = walk[pos[x as usize]..].to_vec();
    cycle.reverse(); // predecessor walk → edge direction
                     // Start at the smallest node, for a stable message.
    let k = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
    cycle.rotate_left(k);
    cycle
}

fn check_counts(name: &Option<String>, nodes: usize, edges: usize) -> Result<(), ModelError> {
    if nodes == 0 {
        return Err(err(name, "nodes", "a DAG task needs at least one node"));
    }
    if nodes > MAX_NODES_PER_TASK {
        return Err(err(name, "nodes", format!("{nodes} nodes, above the limit of {MAX_NODES_PER_TASK} per task")));
    }
    if edges > MAX_EDGES_PER_TASK {
        return Err(err(name, "edges", format!("{edges} edges, above the limit of {MAX_EDGES_PER_TASK} per task")));
    }
    Ok(())
}

impl TryFrom<&ForkJoinTask> for DagTask {
    type Error = ModelError;

    /// The fork-join task as a DAG: thread `k` of region `r` becomes a node (numbered region
    /// by region), and every thread of region `r` precedes every thread of region `r + 1` (the
    /// join of region `r` is the fork of region `r + 1`). A sequential region's one thread is
    /// thus the fork node of the next region and the join node of the previous one, as in the
    /// RTWS paper's `[[s], [p_1 .. p_n], [s]]` tasks; between two parallel regions of `a` and `b`
    /// threads the `a·b` edges stand for the barrier (no zero-cost join node, which the model
    /// does not have). Volume and longest path are those of the fork-join task. Errors: the
    /// edge bound, or a longest path above the deadline (valid in the fork-join model).
    fn try_from(t: &ForkJoinTask) -> Result<DagTask, ModelError> {
        let wcets: Vec<Time> = t.regions.iter().flatten().copied().collect();
        let mut edges_count: usize = 0;
        for w in t.regions.windows(2) {
            edges_count = edges_count.saturating_add(w[0].len().saturating_mul(w[1].len()));
        }
        check_counts(&t.name, wcets.len(), edges_count)?;
        let mut edges = Vec::with_capacity(edges_count);
        let mut first = 0u32;
        for w in t.regions.windows(2) {
            let next = first + w[0].len() as u32;
            for a in 0..w[0].len() as u32 {
                for b in 0..w[1].len() as u32 {
                    edges.push((first + a, next + b));
                }
            }
            first = next;
        }
        DagTask::build(t.name.clone(), t.period, t.deadline, wcets, edges)
    }
}

/// A validated list of DAG tasks; the index of a task is its identity.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct DagSet {
    tasks: Vec<DagTask>,
}

impl DagSet {
    /// A set of (already validated) tasks.
    pub fn new(tasks: Vec<DagTask>) -> DagSet {
        DagSet { tasks }
    }

    /// The fork-join set as DAGs ([`DagTask::try_from`]); errors carry the task index.
    pub fn from_forkjoin(set: &ForkJoinSet) -> Result<DagSet, ModelError> {
        let tasks = set
            .iter()
            .enumerate()
            .map(|(i, t)| DagTask::try_from(t).map_err(|e| e.in_task(i, t.name.as_deref())))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(DagSet { tasks })
    }

    pub fn tasks(&self) -> &[DagTask] {
        &self.tasks
    }
    pub fn len(&self) -> usize {
        self.tasks.len()
    }
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }
    pub fn iter(&self) -> std::slice::Iter<'_, DagTask> {
        self.tasks.iter()
    }

    /// The sequential task set `(vol_i, D_i, T_i)` (for hyperperiods, utilizations, the trace).
    pub fn sequential(&self) -> Result<TaskSet, ModelError> {
        TaskSet::new(self.tasks.iter().map(DagTask::sequential).collect())
    }
}

impl std::ops::Index<usize> for DagSet {
    type Output = DagTask;
    fn index(&self, i: usize) -> &DagTask {
        &self.tasks[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diamond() -> DagTask {
        // 0 → {1, 2} → 3; 1 is the long branch.
        DagTask::new(100, 50, vec![2, 10, 3, 4], vec![(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap()
    }

    #[test]
    fn derived_quantities() {
        let t = diamond();
        assert_eq!((t.volume(), t.longest_path()), (19, 16));
        assert_eq!(t.critical_path(), &[0, 1, 3]);
        assert_eq!(t.topological_order(), &[0, 1, 2, 3]);
        assert_eq!(t.successors(0), &[1, 2]);
        assert_eq!(t.predecessor_counts(), &[0, 1, 1, 2]);
        let s = t.sequential();
        assert_eq!((s.wcet, s.deadline, s.period), (19, 50, 100));
        // Several sources and an isolated node are fine; the order takes the smallest ready index.
        let t = DagTask::new(10, 10, vec![1, 1, 1, 1], vec![(3, 0), (2, 1)]).unwrap();
        assert_eq!(t.topological_order(), &[2, 1, 3, 0]);
        assert_eq!((t.volume(), t.longest_path()), (4, 2));
    }

    #[test]
    fn longest_path_against_brute_force() {
        // Every path of a small layered graph, enumerated.
        let wcets = vec![3, 1, 4, 1, 5, 9, 2];
        let edges = vec![(0, 2), (1, 2), (2, 4), (2, 5), (3, 5), (4, 6), (5, 6), (0, 3)];
        let t = DagTask::new(100, 100, wcets.clone(), edges.clone()).unwrap();
        fn best(k: usize, w: &[u64], e: &[(u32, u32)]) -> u64 {
            w[k] + e.iter().filter(|x| x.0 as usize == k).map(|x| best(x.1 as usize, w, e)).max().unwrap_or(0)
        }
        let want = (0..wcets.len()).map(|k| best(k, &wcets, &edges)).max().unwrap();
        assert_eq!(t.longest_path(), want);
        let path_sum: u64 = t.critical_path().iter().map(|&k| wcets[k as usize]).sum();
        assert_eq!(path_sum, want);
        for w in t.critical_path().windows(2) {
            assert!(edges.contains(&(w[0], w[1])), "the critical path follows edges");
        }
    }

    #[test]
    fn errors_name_task_node_and_edge() {
        for (text, field, words) in [
            (r#"{"tasks": [{"period": 10, "nodes": [1, 0]}]}"#, "nodes[1]", "node 1"),
            (r#"{"tasks": [{"period": 10, "nodes": [1, 2], "edges": [[0, 5]]}]}"#, "edges[0]", "node 5 does not exist"),
            (r#"{"tasks": [{"period": 10, "nodes": [1, 2], "edges": [[1, 1]]}]}"#, "edges[0]", "self-loop"),
            (
                r#"{"tasks": [{"period": 10, "nodes": [1, 2], "edges": [[0, 1], [0, 1]]}]}"#,
                "edges[1]",
                "repeats edge 0",
            ),
            (
                r#"{"tasks": [{"period": 10, "nodes": [1, 1, 1, 1], "edges": [[0, 1], [1, 2], [2, 3], [3, 1]]}]}"#,
                "edges",
                "cycle through node 1 (1 → 2 → 3 → 1)",
            ),
            (r#"{"tasks": [{"period": 10, "nodes": [6, 5], "edges": [[0, 1]]}]}"#, "deadline", "nodes 0 → 1"),
            (r#"{"tasks": [{"period": 10, "nodes": []}]}"#, "nodes", "at least one node"),
            (r#"{"tasks": [{"period": 10}]}"#, "nodes", "missing"),
            (r#"{"tasks": [{"nodes": [1]}]}"#, "period", "missing"),
            (r#"{"tasks": [{"period": 10, "nodes": [1], "wcet": 1}]}"#, "wcet", "unknown key"),
            (r#"{"tasks": [{"period": 10, "nodes": [1, "2 parsecs"]}]}"#, "nodes[1]", "node 1"),
            (r#"{"tasks": [{"period": 10, "nodes": [1, 1], "edges": [[0]]}]}"#, "edges[0]", "pair"),
            (r#"{"tasks": [{"period": 10, "nodes": [1, 1], "edges": [[0, -1]]}]}"#, "edges[0]", "node index"),
            (r#"{"tasks": [{"period": 10, "deadline": 0, "nodes": [1]}]}"#, "deadline", "1..="),
        ] {
            let e = read_json(text).unwrap_err();
            assert_eq!(e.task, Some(0), "{text}: {e}");
            assert_eq!(e.field.as_deref(), Some(field), "{text}: {e}");
            assert!(e.to_string().contains(words), "{text}: {e}");
            assert!(!e.to_string().contains('\n'), "one line: {e}");
        }
        let e = read_json(r#"{"tasks": [{"period": 10, "nodes": [1]}, {"name": "cam", "period": 10, "nodes": [0]}]}"#)
            .unwrap_err();
        assert!(e.to_string().starts_with("task 1 (\"cam\"): field 'nodes[0]'"), "{e}");
        let e = read_json(r#"{"m": 0, "tasks": []}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("m"));
        assert_eq!(read_json(r#"{"tasks": [], "x": 1}"#).unwrap_err().field.as_deref(), Some("x"));
        let e = read_json(r#"{"tasks": [{"period": 10, "period": 11, "nodes": [1]}]}"#).unwrap_err();
        assert!(e.to_string().contains("duplicate key"), "{e}");
    }

    #[test]
    fn bounds_are_checked_and_said() {
        let e = DagTask::new(10, 10, vec![1; MAX_NODES_PER_TASK + 1], vec![]).unwrap_err();
        assert!(e.to_string().contains(&format!("limit of {MAX_NODES_PER_TASK}")), "{e}");
        let e = DagTask::new(10, 10, vec![1; 2], vec![(0, 1); MAX_EDGES_PER_TASK + 1]).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("edges"));
        assert!(e.to_string().contains(&format!("limit of {MAX_EDGES_PER_TASK}")), "{e}");
        let e = DagTask::new(MAX_TIME, MAX_TIME, vec![MAX_TIME, 1], vec![]).unwrap_err();
        assert!(e.to_string().contains("volume"), "{e}");
        assert!(DagTask::new(10, 20, vec![1], vec![]).is_ok(), "D > T is valid in the model");
    }

    #[test]
    fn json_roundtrip_and_units() {
        let f = read_json(
            r#"{"m": 2, "tasks": [{"name": "a", "period": "10ms", "deadline": "8ms", "nodes": ["1ms", 2000000, "3ms"], "edges": [[0, 1], [0, 2]]}, {"period": 7, "nodes": [7]}]}"#,
        )
        .unwrap();
        assert_eq!(f.m, Some(2));
        let a = &f.set[0];
        assert_eq!((a.volume(), a.longest_path(), a.deadline()), (6_000_000, 4_000_000, 8_000_000));
        assert_eq!(f.set[1].deadline(), 7);
        let back = read_json(&to_json(&f.set, f.m)).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn forkjoin_tasks_become_dags_with_the_same_volume_and_longest_path() {
        for regions in [
            vec![vec![3], vec![1, 4, 1, 5], vec![9]],
            vec![vec![2, 7], vec![1, 8, 2], vec![8]],
            vec![vec![5]],
            vec![vec![1, 1, 1]],
            vec![vec![4], vec![6], vec![2, 2]],
        ] {
            let fj = ForkJoinTask::implicit(100, regions.clone()).unwrap();
            let d = DagTask::try_from(&fj).unwrap();
            assert_eq!(d.volume(), fj.wcet(), "{regions:?}");
            assert_eq!(d.longest_path(), fj.critical_path(), "{regions:?}");
            assert_eq!(d.nodes(), fj.threads());
            let want_edges: usize = regions.windows(2).map(|w| w[0].len() * w[1].len()).sum();
            assert_eq!(d.edges().len(), want_edges);
        }
        // A fork-join task whose critical path exceeds its deadline is valid there, not here.
        let fj = ForkJoinTask::new(100, 5, vec![vec![3], vec![3]]).unwrap();
        let set = ForkJoinSet::new(vec![ForkJoinTask::implicit(10, vec![vec![1]]).unwrap(), fj]).unwrap();
        let e = DagSet::from_forkjoin(&set).unwrap_err();
        assert_eq!((e.task, e.field.as_deref()), (Some(1), Some("deadline")));
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn forkjoin_conversion_preserves_volume_and_longest_path(
            regions in proptest::collection::vec(proptest::collection::vec(1u64..1000, 1..5), 1..6),
        ) {
            let fj = ForkJoinTask::implicit(1 << 40, regions).unwrap();
            let d = DagTask::try_from(&fj).unwrap();
            prop_assert_eq!(d.volume(), fj.wcet());
            prop_assert_eq!(d.longest_path(), fj.critical_path());
            prop_assert_eq!(d.nodes(), fj.threads());
        }

        #[test]
        fn any_edge_list_is_a_dag_or_an_error_naming_it(
            wcets in proptest::collection::vec(1u64..50, 1..9),
            edges in proptest::collection::vec((0u32..10, 0u32..10), 0..20),
        ) {
            match DagTask::new(1 << 40, 1 << 40, wcets.clone(), edges.clone()) {
                Ok(t) => {
                    // The order is a permutation that every edge respects.
                    let mut pos = vec![usize::MAX; wcets.len()];
                    for (i, &k) in t.topological_order().iter().enumerate() {
                        prop_assert_eq!(pos[k as usize], usize::MAX);
                        pos[k as usize] = i;
                    }
                    for &(u, v) in &edges {
                        prop_assert!(pos[u as usize] < pos[v as usize]);
                    }
                    // Longest path by n rounds of relaxation over the edge list (Bellman–Ford).
                    let mut fin: Vec<u64> = wcets.clone();
                    for _ in 0..wcets.len() {
                        for &(u, v) in &edges {
                            fin[v as usize] = fin[v as usize].max(fin[u as usize] + wcets[v as usize]);
                        }
                    }
                    prop_assert_eq!(t.longest_path(), fin.iter().copied().max().unwrap());
                    prop_assert_eq!(t.volume(), wcets.iter().sum::<u64>());
                    let back = read_json(&to_json(&DagSet::new(vec![t.clone()]), None)).unwrap();
                    prop_assert_eq!(&back.set[0], &t);
                }
                Err(e) => {
                    let f = e.field.clone().unwrap_or_default();
                    prop_assert!(f == "edges" || f.starts_with("edges["), "{}", e);
                    prop_assert!(!e.to_string().contains('\n'));
                    if f == "edges" {
                        // A cycle: the named nodes close a cycle along given edges.
                        let s = e.to_string();
                        let inside = &s[s.find('(').unwrap() + 1..s.rfind(')').unwrap()];
                        let nodes: Vec<u32> = inside.split(" → ").map(|x| x.parse().unwrap()).collect();
                        prop_assert!(nodes.len() >= 3 && nodes.first() == nodes.last());
                        for w in nodes.windows(2) {
                            prop_assert!(edges.contains(&(w[0], w[1])), "{}", s);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn dot_export_draws_nodes_edges_and_the_critical_path() {
        let t = diamond().named("cam \"front\"").unwrap();
        let dot = to_dot(&t);
        assert!(dot.starts_with("digraph \"cam \\\"front\\\"\" {"), "{dot}");
        assert_eq!(dot.matches(" -> ").count(), 4);
        assert!(dot.contains("n0 -> n1 [penwidth=2];") && dot.contains("n1 -> n3 [penwidth=2];"), "{dot}");
        assert!(dot.contains("n0 -> n2;") && dot.contains("n2 -> n3;"), "{dot}");
        assert!(dot.contains("n1 [label=\"1\\n10 ns\", penwidth=2];"), "{dot}");
        assert!(dot.contains("longest path = 16 ns"), "{dot}");
        assert!(dot.trim_end().ends_with('}'));
    }
}
