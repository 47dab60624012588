//! RUN's offline part: the reduction tree (PACK, idle fill, unit servers, DUAL) and its
//! tick grid; the module notes of [`super`] ("Offline") give the rules.

use crate::budget::{admit, grid_with, ticks};
use rtsched_model::exact::{int, one, zero, Rational};
use rtsched_model::{ModelError, TaskSet, Time};

/// What a node of the reduction tree is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A task (`Some(index)`) or an idle leaf (`None`).
    Leaf { task: Option<u32> },
    /// A packed (EDF) server over its clients.
    Packed { clients: Vec<usize> },
    /// The dual of a packed server.
    Dual { primal: usize },
}

/// One server of the reduction tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: Kind,
    /// Exact rate.
    pub rate: Rational,
    /// Reduction level: the number of DUAL rounds below it (leaves and the first PACK: 0).
    pub level: u32,
    /// The packed server that has this node as a client, if any.
    pub parent: Option<usize>,
    /// `rate · L` (an integer: the rate in ticks per ns).
    pub(super) rate_ticks: u128,
}

/// A proper subsystem: a unit server and the processors it owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subsystem {
    pub root: usize,
    pub cpus: Vec<u32>,
    /// Its reduction level `p` (the root's level).
    pub level: u32,
}

/// The offline part of RUN: the reduction tree of a task set on `m` processors.
#[derive(Debug, Clone, PartialEq)]
pub struct Reduction {
    /// Every server, children before their parents (leaves first).
    pub nodes: Vec<Node>,
    pub subsystems: Vec<Subsystem>,
    /// The leaf of each task.
    pub leaf_of: Vec<usize>,
    /// Packed servers of the first PACK that are not unit servers after the idle fill.
    pub first_non_unit: usize,
    /// Per reduction level: how many packed servers it has and their total rate.
    pub level_totals: Vec<(usize, Rational)>,
    pub(super) m: u32,
    /// Ticks per ns (`L`).
    pub(super) scale: u128,
    pub(super) periods: Vec<Time>,
}

/// An exact integer (the rationals' numerator or denominator) as `u128`, if it fits.
fn to_u128<T>(q: &T) -> Option<u128>
where
    for<'a> u128: TryFrom<&'a T>,
{
    u128::try_from(q).ok()
}

impl Reduction {
    /// Builds the reduction tree of `ts` on `m` processors. Refused, with one line naming the
    /// task and field: a deadline other than the period (RUN needs implicit deadlines), total
    /// utilization above `m`, and rates whose common denominator exceeds 2^64 (the exact
    /// budgets' bound).
    pub fn build(ts: &TaskSet, m: u32) -> Result<Reduction, ModelError> {
        Reduction::build_with(ts, m, true)
    }

    /// The reduction tree alone, without the tick grid (so without its 2^64 bound): for what
    /// reads only the tree (its levels, e.g. the context-switch bound of Brandenburg & Gül's
    /// Fig. 6); [`Run::new`] refuses it.
    pub fn structure(ts: &TaskSet, m: u32) -> Result<Reduction, ModelError> {
        Reduction::build_with(ts, m, false)
    }

    fn build_with(ts: &TaskSet, m: u32, grid: bool) -> Result<Reduction, ModelError> {
        let u = admit(ts, m, "RUN", "Regnier et al., RTSS 2011")?;
        let mq = int(m as i128);
        let mut nodes: Vec<Node> = Vec::new();
        let leaf = |task: Option<u32>, rate: Rational| Node {
            kind: Kind::Leaf { task },
            rate,
            level: 0,
            parent: None,
            rate_ticks: 0,
        };
        for (i, t) in ts.iter().enumerate() {
            nodes.push(leaf(Some(i as u32), t.utilization()));
        }
        let leaf_of: Vec<usize> = (0..ts.len()).collect();
        // The first PACK.
        let mut level = 0u32;
        let mut current = pack(&mut nodes, (0..ts.len()).collect(), level);
        // Idle fill to m.
        let mut idle = mq - u;
        for &s in &current {
            if idle <= zero() {
                break;
            }
            let gap = one() - nodes[s].rate.clone();
            if gap > zero() {
                let r = if gap < idle { gap } else { idle.clone() };
                idle -= r.clone();
                add_client(&mut nodes, s, leaf(None, r));
            }
        }
        while idle > zero() {
            let r = if idle < one() { idle.clone() } else { one() };
            idle -= r.clone();
            let s = nodes.len();
            nodes.push(Node {
                kind: Kind::Packed { clients: vec![] },
                rate: zero(),
                level,
                parent: None,
                rate_ticks: 0,
            });
            add_client(&mut nodes, s, leaf(None, r));
            current.push(s);
        }
        let first_non_unit = current.iter().filter(|&&s| nodes[s].rate != one()).count();
        let mut roots = Vec::new();
        let mut level_totals = Vec::new();
        loop {
            let total = current.iter().fold(zero(), |a, &s| a + nodes[s].rate.clone());
            level_totals.push((current.len(), total));
            let (units, rest): (Vec<usize>, Vec<usize>) = current.iter().partition(|&&s| nodes[s].rate == one());
            roots.extend(units);
            if rest.is_empty() {
                break;
            }
            if level > 2 * 64 {
                return Err(ModelError::new("RUN's reduction did not terminate (a bug)"));
            }
            level += 1;
            let mut duals = Vec::with_capacity(rest.len());
            for s in rest {
                let d = nodes.len();
                nodes.push(Node {
                    kind: Kind::Dual { primal: s },
                    rate: one() - nodes[s].rate.clone(),
                    level,
                    parent: None,
                    rate_ticks: 0,
                });
                duals.push(d);
            }
            current = pack(&mut nodes, duals, level);
        }
        // L: the least common multiple of the rates' denominators.
        let too_big = || {
            ModelError::field(
                "period",
                "RUN's exact budgets need the rates' common denominator below 2^64; use periods with a smaller least common multiple",
            )
        };
        let mut scale: u128 = if grid { 1 } else { 0 };
        for n in nodes.iter().filter(|_| grid) {
            scale = grid_with(scale, &n.rate).ok_or_else(too_big)?;
        }
        for n in nodes.iter_mut().filter(|_| grid) {
            n.rate_ticks = ticks(&n.rate, scale).ok_or_else(too_big)?;
        }
        // Subsystems and their processors.
        let mut subsystems = Vec::new();
        let mut next_cpu = 0u32;
        for &r in &roots {
            let leaves = leaves_under(&nodes, r);
            let sum = leaves.iter().fold(zero(), |a, &l| a + nodes[l].rate.clone());
            if !sum.is_integer() || sum < one() {
                return Err(ModelError::new(format!(
                    "RUN: a proper subsystem's leaves sum to {sum}, not an integer (a bug)"
                )));
            }
            let k = to_u128(&sum.to_integer()).unwrap_or(0) as u32;
            subsystems.push(Subsystem { root: r, cpus: (next_cpu..next_cpu + k).collect(), level: nodes[r].level });
            next_cpu += k;
        }
        if next_cpu != m {
            return Err(ModelError::new(format!("RUN: the subsystems own {next_cpu} processors, not m = {m} (a bug)")));
        }
        Ok(Reduction {
            nodes,
            subsystems,
            leaf_of,
            first_non_unit,
            level_totals,
            m,
            scale,
            periods: ts.iter().map(|t| t.period).collect(),
        })
    }

    /// An upper bound on the context-switch rate (per second, per CPU) as Brandenburg & Gül
    /// (RTSS 2016, §VI, Fig. 6) infer one for RUN from Regnier et al.'s bound: at most
    /// `⌈(3p + 1)/2⌉` preemptions per job on average, each costing two switches besides the
    /// job's own two, so `2·(1 + ⌈(3p + 1)/2⌉)·Σ 1/T` in all; RUN's jobs are not bound to a CPU,
    /// so each CPU gets the `m`-th part.
    pub fn switch_rate_bound(&self) -> Vec<f64> {
        let p = self.levels() as u64;
        let per_job = 2.0 * (1 + (3 * p + 1).div_ceil(2)) as f64;
        let total: f64 = self.periods.iter().map(|&t| per_job * 1e9 / t as f64).sum();
        vec![total / self.m as f64; self.m as usize]
    }

    /// Ticks per ns (`L`): every event instant is an integer number of ticks.
    pub fn scale(&self) -> u128 {
        self.scale
    }

    pub fn m(&self) -> u32 {
        self.m
    }

    /// The largest reduction level of a subsystem (`p`; 0: partitioned EDF).
    pub fn levels(&self) -> u32 {
        self.subsystems.iter().map(|s| s.level).max().unwrap_or(0)
    }

    /// The bound on [`Reduction::levels`] argued in the notes of [`crate::run`]: `⌈log₂ k⌉`
    /// for the `k` non-unit servers of the first PACK (0 when `k ≤ 1`).
    pub fn level_bound(&self) -> u32 {
        let k = self.first_non_unit as u64;
        if k <= 1 {
            0
        } else {
            64 - (k - 1).leading_zeros()
        }
    }
}

/// Adds `leaf` as a new client of the packed server `s`.
fn add_client(nodes: &mut Vec<Node>, s: usize, leaf: Node) {
    nodes.push(leaf);
    let l = nodes.len() - 1;
    link(nodes, s, l);
}

/// First-fit decreasing: packs `servers` into new packed servers of rate ≤ 1 at `level`;
/// returns them in creation order.
fn pack(nodes: &mut Vec<Node>, mut servers: Vec<usize>, level: u32) -> Vec<usize> {
    servers.sort_by(|&a, &b| nodes[b].rate.cmp(&nodes[a].rate).then(a.cmp(&b)));
    let mut bins: Vec<usize> = Vec::new();
    for s in servers {
        let r = nodes[s].rate.clone();
        let target = bins.iter().copied().find(|&b| nodes[b].rate.clone() + r.clone() <= one());
        let b = match target {
            Some(b) => b,
            None => {
                nodes.push(Node {
                    kind: Kind::Packed { clients: vec![] },
                    rate: zero(),
                    level,
                    parent: None,
                    rate_ticks: 0,
                });
                bins.push(nodes.len() - 1);
                nodes.len() - 1
            }
        };
        link(nodes, b, s);
    }
    bins
}

fn link(nodes: &mut [Node], b: usize, s: usize) {
    let r = nodes[s].rate.clone();
    nodes[s].parent = Some(b);
    nodes[b].rate += r;
    if let Kind::Packed { clients } = &mut nodes[b].kind {
        clients.push(s);
    }
}

/// The leaves below node `v` (through packed servers' clients and duals' primals).
pub(super) fn leaves_under(nodes: &[Node], v: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut stack = vec![v];
    while let Some(x) = stack.pop() {
        match &nodes[x].kind {
            Kind::Leaf { .. } => out.push(x),
            Kind::Packed { clients } => stack.extend(clients.iter().copied()),
            Kind::Dual { primal } => stack.push(*primal),
        }
    }
    out
}
