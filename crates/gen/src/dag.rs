//! Random DAG task sets (design note: `docs/dag.md`).
//!
//! Three graph shapes, each a seeded procedure:
//!
//! * [`DagShape::NestedForkJoin`] — the recursive nested fork-join procedure of Melani,
//!   Bertogna, Bonifaci, Marchetti-Spaccamela & Buttazzo, ECRTS 2015, §VII, without its
//!   conditional branches (this model has none, so its `p_cond` is 0): a source and a sink
//!   with `b` branches between them, `b` uniform in `2..=max_branches`; a branch at level
//!   `ℓ < max_depth` is, with probability `p_par`, itself a fork node and a join node with `b'`
//!   such branches between them (level `ℓ + 1`), and otherwise one terminal node; at level
//!   `max_depth` every branch is terminal. Then, as in the paper, extra edges make the
//!   series-parallel graph a general DAG: every pair `(u, v)` of nodes with `u` before `v` in
//!   the graph's topological order and no edge `u → v` yet gets one with probability `p_add`
//!   (an edge forward in a topological order never closes a cycle).
//! * [`DagShape::ErdosRenyi`] — the Erdős–Rényi method as used for random DAGs by Cordeiro,
//!   Mounié, Perarnau, Trystram, Vincent & Wagner, SIMUTools 2010: `n` nodes (uniform in
//!   a range), each pair `i < j` gets the edge `i → j` with probability `p`, independently
//!   (the upper triangle of `G(n, p)`'s adjacency matrix, so the graph is acyclic by
//!   construction). Expected edges: `p · n(n−1)/2`.
//! * [`DagShape::Layered`] — the layer-by-layer method of the same paper: a number of layers
//!   and a width per layer (each uniform in a range), nodes numbered layer by layer, each pair
//!   of nodes in layers `a < b` gets the edge with probability `p`. Expected edges:
//!   `p · Σ_{a<b} w_a w_b`.
//!
//! Node WCETs are uniform integers in `[wcet.0, wcet.1]` ns (Melani et al. draw them uniform in
//! an integer range too).
//!
//! **Utilizations and periods.** The set's task utilizations `u_i` are drawn by RandFixedSum
//! (Emberson, Stafford & Davis, WATERS 2010; [`crate::randfixedsum`]) over `(0, umax]` with sum
//! `total` (`umax` may exceed 1: a DAG task may need several cores), scaled from the unit cube.
//! Task `i`'s graph is drawn, then `T_i = ⌈vol_i / u_i⌉`, computed exactly (the `f64` `u_i` as a
//! rational). Hence `vol_i/T_i <= u_i` and `u_i − vol_i/T_i < vol_i / (T_i (T_i − 1))`: the set's
//! utilization is at most the drawn sum and below it by less than `Σ vol_i/(T_i(T_i−1))` (the
//! drawn sum is `total` up to RandFixedSum's float rounding, about `n · 2^-53 · total`). A graph
//! whose parallelism `vol_i/len_i` is below `u_i` cannot have `len_i <= T_i`; it is drawn again
//! (at most `max_tries` times, then an error naming the task and its utilization).
//!
//! **Deadlines.** [`DagDeadline::Implicit`]: `D_i = T_i`. [`DagDeadline::CriticalPathRatio`]`(β)`,
//! `0 < β <= 1`: `D_i = min(T_i, ⌈len_i / β⌉)`, the deadline at which the longest path takes
//! the fraction `β` of it, never above the period (constrained; `len_i <= D_i` always holds).
//!
//! Deterministic: set `index` of stream `seed` is a pure function of `(spec, seed, index)`;
//! the utilizations and the graphs come from two ChaCha8 streams (keyed by `seed` and a purpose
//! tag, stream `index`), so a change of shape leaves the utilizations unchanged.

use crate::rng::{below, unit};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rtsched_model::dag::{DagSet, DagTask};
use rtsched_model::exact::{ceil_u128, Rational};
use rtsched_model::{ModelError, Time, MAX_TIME};
use std::collections::HashSet;

/// Most nodes a generated task may have (each shape's worst case is checked against it before
/// anything is drawn; the extra-edge pass is quadratic in the node count).
pub const MAX_GEN_NODES: usize = 4096;

/// How a task's graph is drawn (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub enum DagShape {
    /// Melani et al., ECRTS 2015, §VII (without conditional branches).
    NestedForkJoin { max_depth: u32, max_branches: u32, p_par: f64, p_add: f64 },
    /// Erdős–Rényi `G(n, p)` over a fixed node order, `n` uniform in `nodes`.
    ErdosRenyi { nodes: (usize, usize), p: f64 },
    /// Layer by layer: layer count uniform in `layers`, each width uniform in `width`.
    Layered { layers: (usize, usize), width: (usize, usize), p: f64 },
}

/// How deadlines follow from the period and the longest path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DagDeadline {
    /// `D = T`.
    Implicit,
    /// `D = min(T, ⌈len/β⌉)`, `0 < β <= 1`.
    CriticalPathRatio(f64),
}

/// A DAG task-set generator.
#[derive(Debug, Clone, PartialEq)]
pub struct DagGenSpec {
    /// Number of tasks.
    pub n: usize,
    /// Target total utilization `Σ vol_i/T_i`.
    pub total: f64,
    /// Largest task utilization (may exceed 1).
    pub umax: f64,
    pub shape: DagShape,
    /// Node WCET range (ns), inclusive.
    pub wcet: (Time, Time),
    pub deadline: DagDeadline,
    /// Graph draws per task before giving up when its parallelism stays below its utilization.
    pub max_tries: u32,
}

fn prob(field: &str, p: f64) -> Result<(), ModelError> {
    if !(0.0..=1.0).contains(&p) {
        return Err(ModelError::field(field, format!("a probability must lie in [0, 1], got {p}")));
    }
    Ok(())
}

fn range(field: &str, (lo, hi): (usize, usize), min: usize) -> Result<(), ModelError> {
    if lo < min || lo > hi {
        return Err(ModelError::field(field, format!("need {min} <= min <= max, got [{lo}, {hi}]")));
    }
    Ok(())
}

impl DagShape {
    /// The most nodes one draw can give.
    pub fn max_nodes(&self) -> u128 {
        match *self {
            DagShape::NestedForkJoin { max_depth, max_branches, .. } => {
                // A branch at level ℓ: 1 node if terminal, else 2 + b · (branch at ℓ + 1).
                let b = max_branches as u128;
                let mut w: u128 = 1;
                for _ in 1..max_depth {
                    w = (2 + b.saturating_mul(w)).min(u64::MAX as u128);
                }
                2 + b.saturating_mul(w)
            }
            DagShape::ErdosRenyi { nodes, .. } => nodes.1 as u128,
            DagShape::Layered { layers, width, .. } => (layers.1 as u128).saturating_mul(width.1 as u128),
        }
    }

    /// Checks the parameters; errors name them (`max_depth`, `max_branches`, `p_par`, `p_add`,
    /// `nodes`, `p`, `layers`, `width`) and the node bound.
    pub fn validate(&self) -> Result<(), ModelError> {
        match *self {
            DagShape::NestedForkJoin { max_depth, max_branches, p_par, p_add } => {
                if max_depth == 0 {
                    return Err(ModelError::field("max_depth", "must be at least 1 (the source-sink level)"));
                }
                if max_branches < 2 {
                    return Err(ModelError::field("max_branches", format!("must be at least 2, got {max_branches}")));
                }
                prob("p_par", p_par)?;
                prob("p_add", p_add)?;
            }
            DagShape::ErdosRenyi { nodes, p } => {
                range("nodes", nodes, 1)?;
                prob("p", p)?;
            }
            DagShape::Layered { layers, width, p } => {
                range("layers", layers, 1)?;
                range("width", width, 1)?;
                prob("p", p)?;
            }
        }
        let worst = self.max_nodes();
        if worst > MAX_GEN_NODES as u128 {
            return Err(ModelError::field(
                "shape",
                format!("a draw may give up to {worst} nodes, above the generator's limit of {MAX_GEN_NODES} per task"),
            ));
        }
        Ok(())
    }

    /// One graph: the number of nodes and the edges (node WCETs are drawn by the caller).
    pub fn draw_graph(&self, rng: &mut ChaCha8Rng) -> (usize, Vec<(u32, u32)>) {
        match *self {
            DagShape::NestedForkJoin { max_depth, max_branches, p_par, p_add } => {
                let mut g = Nfj { n: 2, edges: Vec::new(), max_depth, max_branches, p_par };
                let b = g.branches(rng);
                for _ in 0..b {
                    g.expand(1, 0, 1, rng);
                }
                if p_add > 0.0 {
                    add_forward_edges(g.n, &mut g.edges, p_add, rng);
                }
                (g.n as usize, g.edges)
            }
            DagShape::ErdosRenyi { nodes, p } => {
                let n = nodes.0 + below(rng, (nodes.1 - nodes.0) as u64 + 1) as usize;
                let mut edges = Vec::new();
                for i in 0..n as u32 {
                    for j in i + 1..n as u32 {
                        if unit(rng) < p {
                            edges.push((i, j));
                        }
                    }
                }
                (n, edges)
            }
            DagShape::Layered { layers, width, p } => {
                let l = layers.0 + below(rng, (layers.1 - layers.0) as u64 + 1) as usize;
                let widths: Vec<usize> =
                    (0..l).map(|_| width.0 + below(rng, (width.1 - width.0) as u64 + 1) as usize).collect();
                let mut first = Vec::with_capacity(l + 1);
                let mut acc = 0u32;
                for &w in &widths {
                    first.push(acc);
                    acc += w as u32;
                }
                first.push(acc);
                let mut edges = Vec::new();
                for a in 0..l {
                    for u in first[a]..first[a + 1] {
                        for v in first[a + 1]..acc {
                            if unit(rng) < p {
                                edges.push((u, v));
                            }
                        }
                    }
                }
                (acc as usize, edges)
            }
        }
    }
}

/// The nested fork-join construction's state: node count and edges so far.
struct Nfj {
    n: u32,
    edges: Vec<(u32, u32)>,
    max_depth: u32,
    max_branches: u32,
    p_par: f64,
}

impl Nfj {
    fn node(&mut self) -> u32 {
        self.n += 1;
        self.n - 1
    }

    /// Branch count, uniform in `2..=max_branches`.
    fn branches(&self, rng: &mut ChaCha8Rng) -> u64 {
        2 + below(rng, self.max_branches as u64 - 1)
    }

    /// One branch at `level` between `from` and `to`.
    fn expand(&mut self, level: u32, from: u32, to: u32, rng: &mut ChaCha8Rng) {
        if level < self.max_depth && unit(rng) < self.p_par {
            let (f, j) = (self.node(), self.node());
            self.edges.push((from, f));
            self.edges.push((j, to));
            let b = self.branches(rng);
            for _ in 0..b {
                self.expand(level + 1, f, j, rng);
            }
        } else {
            let v = self.node();
            self.edges.push((from, v));
            self.edges.push((v, to));
        }
    }
}

/// Adds `u → v` with probability `p` for every pair `u` before `v` in a topological order of
/// the (acyclic) graph that has no such edge yet.
fn add_forward_edges(n: u32, edges: &mut Vec<(u32, u32)>, p: f64, rng: &mut ChaCha8Rng) {
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    let mut indeg = vec![0u32; n as usize];
    for &(u, v) in edges.iter() {
        out[u as usize].push(v);
        indeg[v as usize] += 1;
    }
    let mut order = Vec::with_capacity(n as usize);
    let mut stack: Vec<u32> = (0..n).rev().filter(|&k| indeg[k as usize] == 0).collect();
    while let Some(u) = stack.pop() {
        order.push(u);
        for &v in &out[u as usize] {
            indeg[v as usize] -= 1;
            if indeg[v as usize] == 0 {
                stack.push(v);
            }
        }
    }
    let existing: HashSet<(u32, u32)> = edges.iter().copied().collect();
    for i in 0..order.len() {
        for j in i + 1..order.len() {
            let e = (order[i], order[j]);
            if !existing.contains(&e) && unit(rng) < p {
                edges.push(e);
            }
        }
    }
}

impl DagGenSpec {
    /// Checks every parameter; errors name it (`n`, `total`, `umax`, `wcet`, `beta`,
    /// `max_tries` or the shape's).
    pub fn validate(&self) -> Result<(), ModelError> {
        if self.n == 0 || self.n > crate::RANDFIXEDSUM_MAX_N {
            return Err(ModelError::field(
                "n",
                format!("the number of tasks must be in 1..={}, got {}", crate::RANDFIXEDSUM_MAX_N, self.n),
            ));
        }
        if !(self.umax.is_finite() && self.umax > 0.0 && self.umax <= rtsched_model::MAX_M as f64) {
            return Err(ModelError::field(
                "umax",
                format!("the largest task utilization must lie in (0, {}], got {}", rtsched_model::MAX_M, self.umax),
            ));
        }
        if !(self.total.is_finite() && self.total > 0.0 && self.total <= self.n as f64 * self.umax) {
            return Err(ModelError::field(
                "total",
                format!(
                    "the total utilization must lie in (0, n * umax = {}], got {}",
                    self.n as f64 * self.umax,
                    self.total
                ),
            ));
        }
        let (lo, hi) = self.wcet;
        if lo == 0 || lo > hi || hi > MAX_TIME / MAX_GEN_NODES as Time {
            return Err(ModelError::field(
                "wcet",
                format!("need 1 <= min <= max <= {} ns, got [{lo}, {hi}]", MAX_TIME / MAX_GEN_NODES as Time),
            ));
        }
        if let DagDeadline::CriticalPathRatio(b) = self.deadline {
            if !(b > 0.0 && b <= 1.0) {
                return Err(ModelError::field("beta", format!("the critical-path ratio must lie in (0, 1], got {b}")));
            }
        }
        if self.max_tries == 0 {
            return Err(ModelError::field("max_tries", "must be at least 1"));
        }
        self.shape.validate()
    }
}

fn rng_for(seed: u64, tag: u64, index: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&tag.to_le_bytes());
    let mut r = ChaCha8Rng::from_seed(key);
    r.set_stream(index);
    r
}

const TAG_UTIL: u64 = 0x5eed_0da6_0001;
const TAG_GRAPH: u64 = 0x5eed_0da6_0002;

/// `⌈vol / u⌉` exactly, for a finite `u > 0`.
fn period_for(vol: Time, u: f64) -> Option<u128> {
    let u = Rational::from_float(u)?;
    Some(ceil_u128(&(Rational::from_integer(vol.into()) / u)))
}

/// DAG set number `index` of stream `seed` for `spec` (validated first; see the module doc).
pub fn generate_dag_set(spec: &DagGenSpec, seed: u64, index: u64) -> Result<DagSet, ModelError> {
    spec.validate()?;
    let mut ur = rng_for(seed, TAG_UTIL, index);
    let mut gr = rng_for(seed, TAG_GRAPH, index);
    let x = crate::randfixedsum(spec.n, spec.total / spec.umax, 1.0, &mut ur)?;
    let mut tasks = Vec::with_capacity(spec.n);
    for (i, &xi) in x.iter().enumerate() {
        let u = xi * spec.umax;
        let mut made = None;
        for _ in 0..spec.max_tries {
            let (n, edges) = spec.shape.draw_graph(&mut gr);
            let (lo, hi) = spec.wcet;
            let wcets: Vec<Time> = (0..n).map(|_| lo + below(&mut gr, hi - lo + 1)).collect();
            // The graph at its own deadline first, for volume and longest path.
            let vol: Time = wcets.iter().sum();
            let probe = DagTask::new(MAX_TIME, MAX_TIME, wcets, edges).map_err(|e| e.in_task(i, None))?;
            let len = probe.longest_path();
            let t = period_for(vol, u)
                .ok_or_else(|| ModelError::task_field(i, "period", format!("utilization {u} gives no period")))?;
            if t > MAX_TIME as u128 {
                return Err(ModelError::task_field(
                    i,
                    "period",
                    format!("utilization {u} with volume {vol} ns gives a period above {MAX_TIME} ns"),
                ));
            }
            let t = t as Time;
            if len > t {
                continue; // not enough parallelism for u: draw again
            }
            let d = match spec.deadline {
                DagDeadline::Implicit => t,
                DagDeadline::CriticalPathRatio(b) => {
                    let d = (len as f64 / b).ceil();
                    if d >= t as f64 {
                        t
                    } else {
                        (d as Time).max(len)
                    }
                }
            };
            made = Some(probe.with_timing(t, d).map_err(|e| e.in_task(i, None))?);
            break;
        }
        match made {
            Some(t) => tasks.push(t),
            None => {
                return Err(ModelError::task_field(
                    i,
                    "umax",
                    format!(
                        "{} graphs drawn for utilization {u:.4} and none had the parallelism (volume / longest path) \
                         to reach it; lower umax or draw wider graphs",
                        spec.max_tries
                    ),
                ))
            }
        }
    }
    Ok(DagSet::new(tasks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_fork_join_graphs_are_series_parallel_before_extra_edges() {
        let shape = DagShape::NestedForkJoin { max_depth: 3, max_branches: 4, p_par: 0.6, p_add: 0.0 };
        let mut r = rng_for(1, 9, 0);
        for _ in 0..200 {
            let (n, edges) = shape.draw_graph(&mut r);
            let t = DagTask::new(MAX_TIME, MAX_TIME, vec![1; n], edges.clone()).unwrap();
            // One source (node 0) and one sink (node 1); every other node has in- and out-edges.
            let preds = t.predecessor_counts();
            assert_eq!(preds.iter().filter(|&&c| c == 0).count(), 1);
            assert_eq!(preds[0], 0);
            assert!((0..n as u32).filter(|&k| t.successors(k).is_empty()).eq([1u32]));
            // Series-parallel with unit WCETs: the longest path is 2 + 1 per nesting level used.
            assert!(t.longest_path() >= 3 && t.longest_path() <= 2 + 2 * (3 - 1) + 1);
            assert!(n as u128 <= shape.max_nodes());
        }
    }

    #[test]
    fn bad_specs_name_the_parameter() {
        let ok = DagGenSpec {
            n: 4,
            total: 2.0,
            umax: 2.0,
            shape: DagShape::ErdosRenyi { nodes: (5, 10), p: 0.3 },
            wcet: (1, 100),
            deadline: DagDeadline::Implicit,
            max_tries: 100,
        };
        assert!(ok.validate().is_ok());
        for (field, spec) in [
            ("n", DagGenSpec { n: 0, ..ok.clone() }),
            ("total", DagGenSpec { total: 9.0, ..ok.clone() }),
            ("total", DagGenSpec { total: f64::NAN, ..ok.clone() }),
            ("umax", DagGenSpec { umax: 0.0, ..ok.clone() }),
            ("wcet", DagGenSpec { wcet: (0, 3), ..ok.clone() }),
            ("wcet", DagGenSpec { wcet: (5, 3), ..ok.clone() }),
            ("beta", DagGenSpec { deadline: DagDeadline::CriticalPathRatio(0.0), ..ok.clone() }),
            ("beta", DagGenSpec { deadline: DagDeadline::CriticalPathRatio(1.5), ..ok.clone() }),
            ("max_tries", DagGenSpec { max_tries: 0, ..ok.clone() }),
            ("p", DagGenSpec { shape: DagShape::ErdosRenyi { nodes: (5, 10), p: 1.5 }, ..ok.clone() }),
            ("nodes", DagGenSpec { shape: DagShape::ErdosRenyi { nodes: (0, 10), p: 0.5 }, ..ok.clone() }),
            ("shape", DagGenSpec { shape: DagShape::ErdosRenyi { nodes: (5, 5000), p: 0.5 }, ..ok.clone() }),
            (
                "shape",
                DagGenSpec {
                    shape: DagShape::NestedForkJoin { max_depth: 6, max_branches: 6, p_par: 0.5, p_add: 0.0 },
                    ..ok.clone()
                },
            ),
            (
                "max_branches",
                DagGenSpec {
                    shape: DagShape::NestedForkJoin { max_depth: 2, max_branches: 1, p_par: 0.5, p_add: 0.0 },
                    ..ok.clone()
                },
            ),
            ("width", DagGenSpec { shape: DagShape::Layered { layers: (1, 2), width: (3, 2), p: 0.5 }, ..ok.clone() }),
        ] {
            let e = generate_dag_set(&spec, 1, 0).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{spec:?}: {e}");
        }
        // Utilization 3 out of chains (p = 1: a total order, parallelism 1): gives up, naming it.
        let chain = DagGenSpec {
            n: 1,
            total: 3.0,
            umax: 3.0,
            shape: DagShape::ErdosRenyi { nodes: (4, 4), p: 1.0 },
            max_tries: 5,
            ..ok
        };
        let e = generate_dag_set(&chain, 1, 0).unwrap_err();
        assert_eq!((e.task, e.field.as_deref()), (Some(0), Some("umax")));
        assert!(e.to_string().contains("parallelism"), "{e}");
    }
}
