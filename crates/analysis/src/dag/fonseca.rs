//! The improved G-FP response-time analysis of sporadic DAG tasks of Fonseca, Nelissen &
//! Nélis, "Improved Response Time Analysis of Sporadic DAG Tasks for Global FP Scheduling",
//! RTNS 2017 (`dag_fonseca_gfp`): Melani et al.'s recurrence with each higher-priority task's
//! workload bounded through its graph by a carry-in and a carry-out *workload distribution*.
//!
//! **Sources.** The paper's text could not be read here. The procedure below is the paper's
//! as the open DAG-scheduling tool of Verucchi et al. (`mive93/DAG-scheduling`,
//! `src/tests/Fonseca2017.cpp`, `src/SP-Tree.cpp`, `src/DAGTask/DAGTask.cpp`) implements it
//! and cites its equations; where the tool and what can be established differ, the
//! departure is named below. Every line here is written anew, in exact integer arithmetic.
//!
//! **The analysis** (task `τ_i` interfering with `τ_k`, `m` cores, integer time):
//!
//! * *Recurrence* (as Melani et al., [`super::melani`]): `R_k = len_k + ⌊(vol_k − len_k +
//!   Σ_{i in hp(k)} W_i(R_k)) / m⌋`, tasks in priority order, each from `len_k + ⌊(vol_k −
//!   len_k)/m⌋`, by the plain iteration (`Limits::max_steps` bounds it).
//! * *Carry-in workload distribution* `WD^UCI_i`: the job's schedule on unboundedly many
//!   cores with every node as soon as possible (earliest start `EST`, earliest finish `EFT`,
//!   all nodes at their WCETs). Between consecutive distinct finish times `F_{t−1} < F_t`
//!   (with `F_0 = 0`) its height is the number of nodes with `EST <= F_{t−1} < EFT` (the
//!   tool's `computeWorkloadDistributionCI`). Its length is `len_i`.
//! * *Carry-in bound* (the paper's Eq. 6 and Theorem 2): with `x1` ns from the window's start
//!   to the first release of `τ_i` in it, the carry-in job (released `T_i` earlier, finished by
//!   its bound `R_i`) overlaps the window for `y = x1 − (T_i − R_i)` ns, and executes there at
//!   most the work of the last `y` ns of `WD^UCI_i` placed to end at `R_i`, and at most `m y`:
//!   `CI_i(x1) = min(last_y(WD^UCI_i), m · max(0, y))`.
//! * *Carry-out workload distribution* `WD^UCO_i` (Algorithm 1): the graph made
//!   series-parallel by removing precedence constraints, decomposed into a series-parallel
//!   tree, and the distribution built by repeatedly running, for the smallest remaining WCET
//!   among them, the largest set of nodes that the tree lets run in parallel (a P node: both
//!   sides; an S node: the side with more) — a staircase of non-increasing heights.
//! * *Carry-out bound* (Eq. 9 and Theorem 4): the carry-out job, released `x2` ns before the
//!   window's end, executes at most `CO_i(x2) = min(first_x2(WD^UCO_i), m x2, vol_i −
//!   max(0, len_i − x2))`.
//! * *Window workload* (Eq. 10–11 and Algorithm 2): the window holds a carry-in job, body
//!   jobs and a carry-out job, releases `T_i` apart, and the split between carry-in and
//!   carry-out is maximised: `CW_i(Δ) = max_{x1 + x2 = Δ} CI_i(x1) + CO_i(x2)`. The tool reads
//!   Eq. 11 as `Δ^C = x − k T_i` with `k = max(0, ⌊(x − len_i)/T_i⌋)` body jobs and Eq. 10 as
//!   `W_i(x) = CW_i(Δ^C) + k vol_i` ([`Interferer::workload_eq11`]); what runs here is the
//!   maximum over every placement instead (first departure below).
//!
//! **Departures, each named.**
//!
//! * *The body-job count of Eq. 11 is not fixed.* Read as the tool reads it, Eq. 10–11 is not
//!   a bound: with `vol = 10`, `len = 7`, `T = 16`, `R = 12`, `m = 1` a window of 22 ns holds
//!   18 units (the carry-in job's last 8, the next job's 10), a window of 23 ns at least as
//!   much, yet `⌊(23 − 7)/16⌋ = 1` body job leaves `Δ^C = 7` and `W(23) = 10 + 7 = 17`
//!   (unit test `eq11_is_not_monotone`). Here `W_i(x) = max_u CI_i(min(u, x)) + ⌊(x − u)/T_i⌋
//!   vol_i + CO_i((x − u) mod T_i)` over every offset `u in [0, T_i)` of the first release in
//!   the window — the same carry-in, body and carry-out jobs, with the split between carry-in
//!   and carry-out maximised over all placements. It is never below the Eq. 10–11 reading
//!   (tested) and is non-decreasing in `x`. Whether the paper's own Eq. 11 differs from the
//!   tool's reading could not be checked.
//! * *The maximisation over the split is exact.* Algorithm 2 (in the tool) evaluates
//!   `CI + CO` at the splits where one distribution changes height; with the caps of Theorems
//!   2 and 4 the maximum can lie between them (where a cap starts or stops binding). Here
//!   the sum is maximised over every integer split ([`Interferer::carry_workload`]) and every
//!   integer offset of the first release ([`Interferer::workload`]): between the points where
//!   a distribution changes height each term is linear, so the sum of the capped terms is
//!   concave there, and each stretch is searched exactly (unit-tested against trying every
//!   integer). The result is never below the tool's (a bound at least as large). The tool's Algorithm 2 also calls the uncapped `CI` and `CO` (its capped
//!   ones, `computeImproved*`, are defined but unused); Theorems 2 and 4 are applied here.
//! * *Which precedence constraints are removed for `WD^UCO`.* The paper transforms the DAG
//!   into a nested fork-join one by removing "conflicting" edges; the tool's procedure for it
//!   (`convertDAGintoNFJDAG`, then `SP-Tree.cpp`) is heuristic and stops on graphs it cannot
//!   convert. Here the series-parallel tree is the *modular decomposition of the graph's
//!   reachability order*: a set of nodes whose comparability graph is disconnected is a P
//!   node of its components, one whose incomparability graph is disconnected an S node of its
//!   components (in order); a set that is neither (it contains an "N", so no series-parallel
//!   tree without removing constraints) becomes a P node of chains of its own nodes (the
//!   longest chain, then the longest among the rest, up to [`MAX_CHAINS`]; nodes left are
//!   chains of one), i.e. the precedence constraints between those chains are removed. On a
//!   series-parallel graph (every nested fork-join graph) nothing is removed. Removing
//!   constraints only adds schedules, so the bound stays a bound.
//! * *The staircase is built directly from the tree*: a leaf of WCET `c` is one step `(c, 1)`,
//!   a P node the pointwise sum of its children's staircases, an S node their steps merged by
//!   decreasing height. That is what Algorithm 1's loop (run the largest parallel set for the
//!   smallest remaining WCET) produces, and it shows the bound: a P node's sides run
//!   independently (`first_x(P) <= first_x(A) + first_x(B)`), an S node's second side starts
//!   when the first has finished (`first_x(S) <= max_y first_y(A) + first_{x−y}(B)`, the merge
//!   of two concave staircases), a node executes at most `min(c, x)` in `x` ns — under any
//!   interference and with nodes completing early.
//! * *Bounded work.* The decomposition takes `O(n²)` bit operations per tree level; a graph
//!   of more than [`MAX_SP_NODES`] nodes, a tree deeper than [`MAX_SP_DEPTH`], or one whose
//!   decomposition exceeds [`MAX_SP_WORK`] pair tests falls back, for the part not yet
//!   decomposed, to the chains above (a looser bound, never a wrong one).
//! * *The tool's G-FP driver* assigns (`R[i] = interTaskWorkload(...)`) where the sum over
//!   the higher-priority tasks is meant; the sum is taken here, as the recurrence says.
//!
//! **Not combined with Melani et al.'s bound.** The paper claims its analysis dominates
//! Melani et al.'s; this module does not take the minimum with [`super::melani`]'s `W_i`, so
//! the claim is tested, not built in (`tests/dag_rta_oracle.rs`). The chain variant
//! ([`super::fonseca_chain`], `dag_fonseca_gfp_chain`) does take it.
//!
//! **Soundness is not established here.** The carry-in distribution assumes the carry-in
//! job's work near its end is at most that of its as-soon-as-possible schedule; interference
//! can delay a job's short parallel nodes to its end (docs/dag.md gives an example), and
//! whether the paper's proof excludes that could not be read. The oracle runs the analysis
//! against exact simulation.
//!
//! Integer arithmetic throughout (`u128`); no floats.

use super::fonseca_chain::ChainProfile;
use super::melani::{gfp_with, Params};
use crate::global::fp::{Assignment, GfpResult};
use crate::Limits;
use rtsched_model::dag::{DagSet, DagTask};
use rtsched_model::ModelError;

/// Graphs with more nodes get the chain bound for `WD^UCO` (the reachability bit matrix is
/// `n²/8` bytes: 2 MiB at this size).
pub const MAX_SP_NODES: usize = 4096;
/// Deepest series-parallel tree built; a module deeper down gets the chain bound.
pub const MAX_SP_DEPTH: usize = 256;
/// Most pair tests one task's decomposition may take; the rest gets the chain bound.
pub const MAX_SP_WORK: u64 = 1 << 28;
/// Most chains taken greedily in a module that is not series-parallel.
pub const MAX_CHAINS: usize = 64;

/// A workload distribution: consecutive steps `(width, height)`, `height` units of work per
/// ns for `width` ns, from time 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Distribution {
    steps: Vec<(u128, u128)>,
    /// `ends[k]`: the end of step `k` (prefix sums of the widths).
    ends: Vec<u128>,
    /// `done[k]`: the work of steps `0..k` (`done[0] = 0`).
    done: Vec<u128>,
}

impl Distribution {
    /// The distribution of `steps` in order (steps of width 0 are dropped, adjacent steps of
    /// the same height joined).
    pub fn from_steps(steps: impl IntoIterator<Item = (u128, u128)>) -> Distribution {
        let mut out: Vec<(u128, u128)> = Vec::new();
        for (w, h) in steps {
            if w == 0 {
                continue;
            }
            match out.last_mut() {
                Some(last) if last.1 == h => last.0 += w,
                _ => out.push((w, h)),
            }
        }
        let mut ends = Vec::with_capacity(out.len());
        let mut done = Vec::with_capacity(out.len() + 1);
        done.push(0u128);
        let (mut t, mut work) = (0u128, 0u128);
        for &(w, h) in &out {
            t += w;
            work += w * h;
            ends.push(t);
            done.push(work);
        }
        Distribution { steps: out, ends, done }
    }

    /// The steps `(width, height)`, in order.
    pub fn steps(&self) -> &[(u128, u128)] {
        &self.steps
    }

    /// Total width.
    pub fn length(&self) -> u128 {
        self.ends.last().copied().unwrap_or(0)
    }

    /// Total work.
    pub fn work(&self) -> u128 {
        self.done.last().copied().unwrap_or(0)
    }

    /// The work in the first `x` ns.
    pub fn first(&self, x: u128) -> u128 {
        let k = self.ends.partition_point(|&e| e <= x);
        if k == self.steps.len() {
            return self.work();
        }
        let start = if k == 0 { 0 } else { self.ends[k - 1] };
        self.done[k] + (x - start) * self.steps[k].1
    }

    /// The work in the last `y` ns.
    pub fn last(&self, y: u128) -> u128 {
        let len = self.length();
        if y >= len {
            self.work()
        } else {
            self.work() - self.first(len - y)
        }
    }

    /// Pointwise sum (a P node).
    fn sum(&self, other: &Distribution) -> Distribution {
        let (a, b) = (&self.steps, &other.steps);
        let (mut i, mut j) = (0usize, 0usize);
        let (mut ra, mut rb) = (a.first().map_or(0, |s| s.0), b.first().map_or(0, |s| s.0));
        let mut out = Vec::with_capacity(a.len() + b.len());
        while i < a.len() || j < b.len() {
            let w = match (i < a.len(), j < b.len()) {
                (true, true) => ra.min(rb),
                (true, false) => ra,
                _ => rb,
            };
            let h = if i < a.len() { a[i].1 } else { 0 } + if j < b.len() { b[j].1 } else { 0 };
            out.push((w, h));
            if i < a.len() {
                ra -= w;
                if ra == 0 {
                    i += 1;
                    ra = a.get(i).map_or(0, |s| s.0);
                }
            }
            if j < b.len() {
                rb -= w;
                if rb == 0 {
                    j += 1;
                    rb = b.get(j).map_or(0, |s| s.0);
                }
            }
        }
        Distribution::from_steps(out)
    }

    /// Steps of all `parts` merged by decreasing height (an S node).
    fn merge(parts: &[Distribution]) -> Distribution {
        let mut steps: Vec<(u128, u128)> = parts.iter().flat_map(|d| d.steps.iter().copied()).collect();
        steps.sort_by_key(|s| std::cmp::Reverse(s.1));
        Distribution::from_steps(steps)
    }
}

/// Earliest start and finish times of every node on unboundedly many cores, all nodes at
/// their WCETs.
pub fn earliest_times(task: &DagTask) -> (Vec<u128>, Vec<u128>) {
    let n = task.nodes();
    let c = task.wcets();
    let mut est = vec![0u128; n];
    let mut eft = vec![0u128; n];
    for &v in task.topological_order() {
        let v = v as usize;
        eft[v] = est[v] + c[v] as u128;
        for &s in task.successors(v as u32) {
            est[s as usize] = est[s as usize].max(eft[v]);
        }
    }
    (est, eft)
}

/// The as-soon-as-possible profile over the breakpoints `points` (sorted, distinct, from 0):
/// between consecutive points, the number of nodes with `EST <= start < EFT`.
pub fn profile_over(points: &[u128], est: &[u128], eft: &[u128]) -> Distribution {
    Distribution::from_steps(points.windows(2).map(|p| {
        let h = est.iter().zip(eft).filter(|&(&s, &f)| s <= p[0] && p[0] < f).count() as u128;
        (p[1] - p[0], h)
    }))
}

/// `WD^UCI`: the as-soon-as-possible profile between consecutive distinct finish times (the
/// module doc). Its length is the longest path, its work the volume.
pub fn carry_in_distribution(task: &DagTask) -> Distribution {
    let (est, eft) = earliest_times(task);
    let mut points: Vec<u128> = std::iter::once(0).chain(eft.iter().copied()).collect();
    points.sort_unstable();
    points.dedup();
    // Every EST is 0 or a predecessor's EFT, so the height is constant between the points;
    // counting by a sweep keeps it O(n log n).
    let mut events: Vec<(u128, i64)> = est.iter().map(|&s| (s, 1)).chain(eft.iter().map(|&f| (f, -1))).collect();
    events.sort_unstable();
    let mut steps = Vec::with_capacity(points.len());
    let (mut e, mut h) = (0usize, 0i64);
    for p in points.windows(2) {
        while e < events.len() && events[e].0 <= p[0] {
            h += events[e].1;
            e += 1;
        }
        steps.push((p[1] - p[0], h as u128));
    }
    Distribution::from_steps(steps)
}

/// The reachability order of a task as bit rows: `below[v]` has bit `u` when `v` precedes `u`.
struct Order {
    words: usize,
    below: Vec<u64>,
}

impl Order {
    fn of(task: &DagTask) -> Order {
        let n = task.nodes();
        let words = n.div_ceil(64);
        let mut below = vec![0u64; n * words];
        for &v in task.topological_order().iter().rev() {
            let v = v as usize;
            for &s in task.successors(v as u32) {
                let s = s as usize;
                below[v * words + s / 64] |= 1 << (s % 64);
                for w in 0..words {
                    let x = below[s * words + w];
                    below[v * words + w] |= x;
                }
            }
        }
        Order { words, below }
    }

    fn precedes(&self, u: usize, v: usize) -> bool {
        self.below[u * self.words + v / 64] >> (v % 64) & 1 == 1
    }

    fn comparable(&self, u: usize, v: usize) -> bool {
        self.precedes(u, v) || self.precedes(v, u)
    }
}

/// Connected components of `nodes` under the relation `linked` (or its complement when
/// `complement`), each in the order of `nodes`; `work` counts the pair tests.
fn components(nodes: &[usize], order: &Order, complement: bool, work: &mut u64) -> Vec<Vec<usize>> {
    let n = nodes.len();
    let mut comp = vec![usize::MAX; n];
    let mut count = 0;
    let mut stack = Vec::new();
    for s in 0..n {
        if comp[s] != usize::MAX {
            continue;
        }
        comp[s] = count;
        stack.push(s);
        while let Some(a) = stack.pop() {
            for b in 0..n {
                if comp[b] == usize::MAX && order.comparable(nodes[a], nodes[b]) != complement {
                    comp[b] = count;
                    stack.push(b);
                }
            }
            *work += n as u64;
        }
        count += 1;
    }
    let mut out = vec![Vec::new(); count];
    for (k, &c) in comp.iter().enumerate() {
        out[c].push(nodes[k]);
    }
    out
}

/// A P node of chains of `nodes` (sorted topologically): the longest chain (by WCET) among the
/// nodes left, up to [`MAX_CHAINS`] times, then one chain per node left.
fn chains(nodes: &[usize], order: &Order, c: &[u64], work: &mut u64) -> Distribution {
    let mut left: Vec<usize> = nodes.to_vec();
    let mut weights: Vec<u128> = Vec::new();
    while !left.is_empty() && weights.len() < MAX_CHAINS {
        let n = left.len();
        let mut best = vec![0u128; n];
        let mut parent = vec![usize::MAX; n];
        for b in 0..n {
            best[b] = c[left[b]] as u128;
            for a in 0..b {
                if order.precedes(left[a], left[b]) && best[a] + c[left[b]] as u128 > best[b] {
                    best[b] = best[a] + c[left[b]] as u128;
                    parent[b] = a;
                }
            }
        }
        *work += (n * n) as u64;
        let mut end = 0;
        for b in 1..n {
            if best[b] > best[end] {
                end = b;
            }
        }
        weights.push(best[end]);
        let mut taken = vec![false; n];
        let mut v = end;
        loop {
            taken[v] = true;
            if parent[v] == usize::MAX {
                break;
            }
            v = parent[v];
        }
        left = left.iter().zip(&taken).filter(|(_, &t)| !t).map(|(&v, _)| v).collect();
    }
    weights.extend(left.iter().map(|&v| c[v] as u128));
    chain_staircase(weights)
}

/// The staircase of independent chains of weights `w`: `Σ_j min(w_j, x)` in the first `x` ns.
fn chain_staircase(mut w: Vec<u128>) -> Distribution {
    w.sort_unstable();
    let k = w.len() as u128;
    let mut prev = 0u128;
    Distribution::from_steps(w.into_iter().enumerate().map(|(j, a)| {
        let step = (a - prev, k - j as u128);
        prev = a;
        step
    }))
}

/// The staircase of the module `nodes` (sorted topologically) of the series-parallel tree.
fn decompose(nodes: &[usize], order: &Order, c: &[u64], depth: usize, work: &mut u64) -> Distribution {
    if nodes.len() == 1 {
        return Distribution::from_steps([(c[nodes[0]] as u128, 1)]);
    }
    if depth >= MAX_SP_DEPTH || *work >= MAX_SP_WORK {
        return chains(nodes, order, c, work);
    }
    let parallel = components(nodes, order, false, work);
    if parallel.len() > 1 {
        let mut acc = Distribution::from_steps([]);
        for part in &parallel {
            acc = acc.sum(&decompose(part, order, c, depth + 1, work));
        }
        return acc;
    }
    let series = components(nodes, order, true, work);
    if series.len() > 1 {
        let parts: Vec<Distribution> = series.iter().map(|p| decompose(p, order, c, depth + 1, work)).collect();
        return Distribution::merge(&parts);
    }
    chains(nodes, order, c, work)
}

/// `WD^UCO` (the module doc): the staircase of the graph's series-parallel tree, with chains
/// where the graph is not series-parallel or the decomposition's bounds are reached.
pub fn carry_out_distribution(task: &DagTask) -> Distribution {
    if task.nodes() > MAX_SP_NODES {
        return chain_staircase(ChainProfile::of(task).weights().to_vec());
    }
    let order = Order::of(task);
    let nodes: Vec<usize> = task.topological_order().iter().map(|&v| v as usize).collect();
    let mut work = 0u64;
    decompose(&nodes, &order, task.wcets(), 0, &mut work)
}

/// One interfering task as the workload bound needs it.
#[derive(Debug, Clone)]
pub struct Interferer {
    pub vol: u128,
    pub len: u128,
    pub period: u128,
    pub uci: Distribution,
    pub uco: Distribution,
}

impl Interferer {
    /// The task's parameters and both distributions.
    pub fn of(task: &DagTask) -> Interferer {
        Interferer {
            vol: task.volume() as u128,
            len: task.longest_path() as u128,
            period: task.period() as u128,
            uci: carry_in_distribution(task),
            uco: carry_out_distribution(task),
        }
    }

    /// `CI(x1)` (Eq. 6, Theorem 2): the carry-in job's work when the first release in the
    /// window is `x1` ns after its start, the job's bound being `r`.
    pub fn carry_in(&self, r: u128, x1: u128, m: u128) -> u128 {
        let gap = self.period - r.min(self.period);
        if x1 <= gap {
            return 0;
        }
        let y = x1 - gap;
        self.uci.last(y).min(m * y)
    }

    /// `CO(x2)` (Eq. 9, Theorem 4): the carry-out job's work in its first `x2` ns.
    pub fn carry_out(&self, x2: u128, m: u128) -> u128 {
        self.uco.first(x2).min(m * x2).min(self.vol - self.len.saturating_sub(x2))
    }

    /// `CW(Δ) = max_{x1 in [0, Δ]} CI(x1) + CO(Δ − x1)`, exactly (the module doc).
    pub fn carry_workload(&self, r: u128, delta: u128, m: u128) -> u128 {
        let gap = self.period - r.min(self.period);
        let mut cuts: Vec<u128> = vec![0, delta];
        self.carry_in_cuts(gap, &mut cuts);
        // CO changes slope where UCO changes height, and at x2 = len (the volume cap).
        cuts.extend(self.uco.ends.iter().chain([&self.len]).filter(|&&e| e <= delta).map(|&e| delta - e));
        max_on_pieces(cuts, delta, |x1| self.carry_in(r, x1, m) + self.carry_out(delta - x1, m))
    }

    /// The points `x1` where `CI(x1)` changes form: the gap `T − R`, and where the end-aligned
    /// `WD^UCI` changes height.
    fn carry_in_cuts(&self, gap: u128, cuts: &mut Vec<u128>) {
        let ul = self.uci.length();
        cuts.push(gap);
        cuts.extend(self.uci.ends.iter().map(|&e| gap + (ul - e)));
    }

    /// Eq. 10–11 as the DAG-scheduling tool reads them: `CW(Δ^C) + k vol` with `k =
    /// max(0, ⌊(x − len)/T⌋)` body jobs and `Δ^C = x − k T`. **Not a bound**: it fixes the
    /// number of body jobs, and it can decrease as `x` grows (unit test
    /// `eq11_is_not_monotone`); kept to show the difference, not used by [`gfp`].
    pub fn workload_eq11(&self, r: u128, x: u128, m: u128) -> u128 {
        let body = x.saturating_sub(self.len) / self.period;
        self.carry_workload(r, x - body * self.period, m) + body * self.vol
    }

    /// `W(x)`: the most work of the task in a window of `x` ns, over every placement of its
    /// releases `T` apart: the first release in the window `u` ns after its start (`u < T`),
    /// the carry-in job before it, `⌊(x − u)/T⌋` body jobs, and the carry-out job's first
    /// `(x − u) mod T` ns: `max_u CI(min(u, x)) + ⌊(x − u)/T⌋ vol + CO((x − u) mod T)`. With
    /// `x − u` in place of Eq. 11's fixed `Δ^C` (module doc, "Departures").
    pub fn workload(&self, r: u128, x: u128, m: u128) -> u128 {
        let t = self.period;
        let gap = t - r.min(t);
        let hi = x.min(t - 1);
        let body = |y: u128| (y / t) * self.vol + self.carry_out(y % t, m);
        let mut cuts: Vec<u128> = vec![0, hi];
        self.carry_in_cuts(gap, &mut cuts);
        // x − u runs over [x − hi, x]: at most two periods, each with CO's own points.
        for j in [(x - hi) / t, x / t] {
            for &e in self.uco.ends.iter().chain([&0, &self.len]) {
                if let Some(u) = x.checked_sub(j * t + e) {
                    cuts.push(u);
                }
            }
        }
        max_on_pieces(cuts, hi, |u| self.carry_in(r, u.min(x), m) + body(x - u))
    }
}

/// The maximum of `f` over the integers of `[0, hi]`, where `f` is concave on the integers
/// strictly between consecutive points of `cuts` (which include 0 and `hi`; others above
/// `hi` are dropped): every cut is evaluated, and each stretch between two is searched for
/// the first point whose step does not increase.
fn max_on_pieces(mut cuts: Vec<u128>, hi: u128, f: impl Fn(u128) -> u128) -> u128 {
    cuts.retain(|&x| x <= hi);
    cuts.sort_unstable();
    cuts.dedup();
    let mut best = cuts.iter().map(|&x| f(x)).max().unwrap_or(0);
    for w in cuts.windows(2) {
        if w[1] > w[0] + 1 {
            let (mut a, mut b) = (w[0] + 1, w[1] - 1);
            while a < b {
                let mid = a + (b - a) / 2;
                if f(mid + 1) <= f(mid) {
                    b = mid;
                } else {
                    a = mid + 1;
                }
            }
            best = best.max(f(a));
        }
    }
    best
}

/// The G-FP driver with the window workload `w(i, R_i, x, m)` of interfering task `i` as a
/// parameter (the oracle's broken twins use it): the recurrence of the module doc.
pub fn gfp_with_workload(
    set: &DagSet,
    m: u32,
    prio: &Assignment,
    limits: &Limits,
    mut w: impl FnMut(usize, u128, u128, u128) -> u128,
) -> Result<GfpResult, ModelError> {
    gfp_with(set, m, prio, limits, |hp: &[(usize, Params, u128)], x, m, growth| {
        *growth = 0;
        hp.iter().map(|&(i, _, r)| w(i, r, x, m)).sum()
    })
}

/// Fonseca et al.'s G-FP RTA (module doc) on `m` cores under `prio`: verdict and per-task
/// bounds. `Err` only for an explicit assignment of the wrong length.
pub fn gfp(set: &DagSet, m: u32, prio: &Assignment, limits: &Limits) -> Result<GfpResult, ModelError> {
    // Distributions are built when a task first interferes.
    let mut tasks: Vec<Option<Interferer>> = vec![None; set.len()];
    gfp_with_workload(set, m, prio, limits, |i, r, x, m| {
        tasks[i].get_or_insert_with(|| Interferer::of(&set[i])).workload(r, x, m)
    })
}

#[cfg(test)]
mod tests;
