//! RUN, "Reduction to UNiprocessor" (Regnier, Lima, Massa, Levin & Brandt, "RUN: Optimal
//! Multiprocessor Real-Time Scheduling via Reduction to Uniprocessor", RTSS 2011): an optimal
//! scheduler of implicit-deadline periodic tasks with total utilization `U ≤ m`.
//!
//! # Offline: the reduction ([`Reduction::build`])
//!
//! Every task is a *fixed-rate server* (a leaf) of rate `C/T` whose deadline set is its job
//! deadlines. Servers are exact rationals (the model's [`Rational`]).
//! * **PACK**: first-fit decreasing — servers in decreasing rate order (ties: earlier first),
//!   each into the first packed server whose rate stays `≤ 1`, else into a new one. A packed
//!   server's rate is the sum of its clients' rates and its deadline set their union. (The
//!   paper allows any packing; first fit has the property the level bound below needs: no two
//!   packed servers fit together, i.e. every two rates sum to more than 1.)
//! * **Idle fill** (`U < m`): after the first PACK, idle leaves of total rate `m − U` are added,
//!   filling the packed servers in order to rate 1 (`min(1 − ρ, what is left)` each), then new
//!   servers of one idle leaf each; an idle leaf's deadlines are its server's other clients'.
//!   The system is then fully utilized, as the paper's reduction assumes; a set that first fit
//!   places on `m` processors becomes `m` unit servers, i.e. partitioned EDF.
//! * **Unit servers**: a packed server of rate exactly 1 is the root of a *proper subsystem*
//!   and is removed from the reduction; it gets processors of its own (as many as its leaves'
//!   total rate, an integer) and always runs.
//! * **DUAL**: every remaining packed server `S` gets a dual `S*` of rate `1 − ρ(S)` and the same
//!   deadlines; the duals are PACKed into the next level. DUAL then PACK repeats until no
//!   server is left. Each round at least halves the number of non-unit servers (any two duals
//!   fit together, so first fit puts at least two in every server but the last), so a
//!   subsystem's reduction level `p` (the number of DUAL rounds above its leaves) is at most
//!   `⌈log₂ k⌉` for the `k < 2m` non-unit servers of the first PACK ([`Reduction::level_bound`]).
//!
//! # Online: [`Run`]
//!
//! A server's *release instants* are its deadlines: at each, its budget becomes
//! `ρ · (d − t)` for its next deadline `d`. A server consumes budget while it runs. At every
//! scheduling event (a deadline of any leaf, or a running server's budget reaching zero):
//! * a subsystem's root always runs;
//! * a running packed server runs its client with budget left and the earliest deadline (EDF;
//!   ties: the client that ran last, then the earlier client), the others do not;
//! * a dual server runs exactly when its primal does not (the dual rule);
//! * the leaves that run are the tasks to run (an idle leaf's processor idles; a task leaf
//!   runs its pending job, or idles if it has none — RUN as published is not work-conserving).
//!
//! Processors: each subsystem owns a fixed set of CPUs; a task that ran at the previous event
//! keeps its CPU, and a task that starts takes the CPU it last ran on if that one is free,
//! else the free CPU of its subsystem with the smallest index.
//!
//! Time: budgets are `ρ · (d − t)` with integer `d − t`, so every event instant is a multiple
//! of `1/L` ns, `L` the least common multiple of the rates' denominators (a divisor of the
//! hyperperiod). The online state counts time in these *ticks* of `1/L` ns, exactly, in
//! 128-bit integers ([`Reduction::scale`]).

use crate::budget::{admit, consume, grid_with, ticks};
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
    rate_ticks: u128,
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
    m: u32,
    /// Ticks per ns (`L`).
    scale: u128,
    periods: Vec<Time>,
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

    /// The bound on [`Reduction::levels`] argued in the module notes: `⌈log₂ k⌉` for the `k`
    /// non-unit servers of the first PACK (0 when `k ≤ 1`).
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

fn leaves_under(nodes: &[Node], v: usize) -> Vec<usize> {
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

/// A broken promise of RUN's schedule (a server left budget at its deadline, a server runs
/// with none, a subsystem runs more tasks than it has processors): found by [`Run`] when it
/// checks (`strict`); the simulator reports it as an internal error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunViolation(pub String);

impl std::fmt::Display for RunViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RUN: {}", self.0)
    }
}

impl std::error::Error for RunViolation {}

/// An unlimited budget (a subsystem of idle leaves only, which has no deadlines).
const UNLIMITED: u128 = u128::MAX >> 2;

/// The online part of RUN over a [`Reduction`]: budgets, deadlines and the servers that run,
/// in ticks of `1/L` ns ([`Reduction::scale`]), and the task each CPU runs.
#[derive(Debug, Clone)]
pub struct Run {
    red: Reduction,
    offsets: Vec<Time>,
    /// Per node: its current deadline (ns; `Time::MAX`: none), budget left (ticks), and
    /// whether it runs (now, and at the previous event).
    deadline: Vec<Time>,
    budget: Vec<u128>,
    running: Vec<bool>,
    was_running: Vec<bool>,
    /// Per subsystem: its task leaves `(leaf, task)` and its idle leaves.
    sub_tasks: Vec<Vec<(usize, u32)>>,
    sub_idle: Vec<Vec<usize>>,
    cpu_task: Vec<Option<u32>>,
    last_cpu: Vec<u32>,
    now: u128,
    strict: bool,
}

impl Run {
    /// RUN at time 0 over `red`; task `i` releases its first job at `offsets[i]` (empty: all
    /// at 0) and then periodically. Before its first release a task's leaf has one deadline at
    /// its offset (a job without work). `strict`: check RUN's promises at every event.
    pub fn new(red: Reduction, offsets: &[Time], strict: bool) -> Result<Run, ModelError> {
        if red.scale == 0 {
            return Err(ModelError::new("RUN: a reduction built by Reduction::structure has no tick grid to run on"));
        }
        let n = red.periods.len();
        let offsets = if offsets.is_empty() { vec![0; n] } else { offsets.to_vec() };
        if offsets.len() != n {
            return Err(ModelError::field("offsets", format!("{} offsets for {n} tasks", offsets.len())));
        }
        let nn = red.nodes.len();
        let mut sub_tasks = vec![Vec::new(); red.subsystems.len()];
        let mut sub_idle = vec![Vec::new(); red.subsystems.len()];
        for (k, s) in red.subsystems.iter().enumerate() {
            for l in leaves_under(&red.nodes, s.root) {
                match red.nodes[l].kind {
                    Kind::Leaf { task: Some(i) } => sub_tasks[k].push((l, i)),
                    _ => sub_idle[k].push(l),
                }
            }
            sub_tasks[k].sort_by_key(|&(_, i)| i);
        }
        let mut run = Run {
            offsets,
            deadline: vec![0; nn],
            budget: vec![0; nn],
            running: vec![false; nn],
            was_running: vec![false; nn],
            sub_tasks,
            sub_idle,
            cpu_task: vec![None; red.m as usize],
            last_cpu: vec![u32::MAX; n],
            now: 0,
            strict,
            red,
        };
        run.replenish(0, true).map_err(|v| ModelError::new(v.to_string()))?;
        run.select().map_err(|v| ModelError::new(v.to_string()))?;
        Ok(run)
    }

    pub fn reduction(&self) -> &Reduction {
        &self.red
    }

    /// The current instant, in ticks.
    pub fn now(&self) -> u128 {
        self.now
    }

    /// The task CPU `cpu` runs (`None`: idle).
    pub fn task_on(&self, cpu: usize) -> Option<u32> {
        self.cpu_task.get(cpu).copied().flatten()
    }

    /// Whether node `v` runs now.
    pub fn runs(&self, v: usize) -> bool {
        self.running.get(v).copied().unwrap_or(false)
    }

    /// Node `v`'s budget left (ticks) and current deadline (ns).
    pub fn budget(&self, v: usize) -> (u128, Time) {
        (self.budget[v], self.deadline[v])
    }

    /// The next scheduling event after now, in ticks: a running server's budget reaching
    /// zero, or a deadline (a release instant) of a leaf.
    pub fn next_event(&self) -> u128 {
        let mut t = u128::MAX;
        for v in 0..self.red.nodes.len() {
            if self.running[v] && self.budget[v] > 0 && self.budget[v] < UNLIMITED {
                t = t.min(self.now + self.budget[v]);
            }
        }
        for &l in &self.red.leaf_of {
            if self.deadline[l] != Time::MAX {
                t = t.min(self.deadline[l] as u128 * self.red.scale);
            }
        }
        t
    }

    /// Moves to instant `to` (ticks, not before now and not after [`Run::next_event`]): the
    /// running servers consume budget, servers at a release instant get their new budget, and
    /// the servers and tasks that run are chosen again.
    pub fn advance(&mut self, to: u128) -> Result<(), RunViolation> {
        if to < self.now {
            return Err(RunViolation(format!("time went back from tick {} to {to}", self.now)));
        }
        let dt = to - self.now;
        for v in 0..self.red.nodes.len() {
            if self.running[v] && self.budget[v] < UNLIMITED {
                consume(&mut self.budget[v], dt, self.strict, || format!("server {v}")).map_err(RunViolation)?;
            }
        }
        self.now = to;
        let l = self.red.scale;
        if to.is_multiple_of(l) {
            self.replenish((to / l) as Time, false)?;
        }
        self.select()
    }

    /// Release instants at `t` ns: every server whose deadline is `t` (all of them at `init`)
    /// gets its next deadline and the budget `ρ · (d − t)`. Children come before parents in
    /// `nodes`, so a packed server sees its clients' new deadlines; an idle leaf follows its
    /// server (which it was added to after the first PACK).
    fn replenish(&mut self, t: Time, init: bool) -> Result<(), RunViolation> {
        for v in 0..self.red.nodes.len() {
            if !init && self.deadline[v] != t {
                continue;
            }
            let node = &self.red.nodes[v];
            let d = match &node.kind {
                Kind::Leaf { task: Some(i) } => {
                    let (o, p) = (self.offsets[*i as usize], self.red.periods[*i as usize]);
                    if t < o {
                        o
                    } else {
                        o + ((t - o) / p + 1) * p
                    }
                }
                Kind::Leaf { task: None } => node.parent.map_or(Time::MAX, |s| self.deadline[s]),
                Kind::Packed { clients } => clients
                    .iter()
                    .filter(|&&c| !matches!(self.red.nodes[c].kind, Kind::Leaf { task: None }))
                    .map(|&c| self.deadline[c])
                    .min()
                    .unwrap_or(Time::MAX),
                Kind::Dual { primal } => self.deadline[*primal],
            };
            if self.strict && !init && self.budget[v] != 0 {
                return Err(RunViolation(format!(
                    "server {v} (level {}) has {} ticks of budget left at its deadline {t} ns",
                    node.level, self.budget[v]
                )));
            }
            self.deadline[v] = d;
            self.budget[v] = if d == Time::MAX { UNLIMITED } else { node.rate_ticks * (d - t) as u128 };
        }
        Ok(())
    }

    /// The servers that run (roots; EDF among a running server's clients; the dual rule), then
    /// the tasks on the CPUs.
    fn select(&mut self) -> Result<(), RunViolation> {
        std::mem::swap(&mut self.running, &mut self.was_running);
        self.running.iter_mut().for_each(|r| *r = false);
        for s in &self.red.subsystems {
            self.running[s.root] = true;
        }
        for v in (0..self.red.nodes.len()).rev() {
            match &self.red.nodes[v].kind {
                Kind::Packed { clients } => {
                    let on = self.running[v] && self.budget[v] > 0;
                    if self.running[v] && !on && self.strict {
                        return Err(RunViolation(format!(
                            "server {v} (level {}) must run at tick {} but has no budget left",
                            self.red.nodes[v].level, self.now
                        )));
                    }
                    self.running[v] = on;
                    let mut best: Option<(Time, bool, usize)> = None;
                    if on {
                        for (k, &c) in clients.iter().enumerate() {
                            if self.budget[c] == 0 {
                                continue;
                            }
                            let key = (self.deadline[c], !self.was_running[c], k);
                            if best.is_none_or(|b| key < b) {
                                best = Some(key);
                            }
                        }
                    }
                    for (k, &c) in clients.iter().enumerate() {
                        self.running[c] = best.is_some_and(|b| b.2 == k);
                    }
                }
                Kind::Dual { primal } => {
                    let p = *primal;
                    self.running[p] = !self.running[v];
                }
                Kind::Leaf { .. } => {}
            }
        }
        self.map_cpus()
    }

    /// Each subsystem's running tasks onto its CPUs: a task that runs keeps its CPU; a task
    /// that starts takes its last CPU if free, else the free CPU with the smallest index.
    fn map_cpus(&mut self) -> Result<(), RunViolation> {
        for k in 0..self.red.subsystems.len() {
            let cpus = &self.red.subsystems[k].cpus;
            let idle = self.sub_idle[k].iter().filter(|&&l| self.running[l]).count();
            let want: Vec<u32> = self.sub_tasks[k].iter().filter(|&&(l, _)| self.running[l]).map(|&(_, i)| i).collect();
            if self.strict && want.len() + idle > cpus.len() {
                return Err(RunViolation(format!(
                    "a subsystem of {} processors runs {} leaves at tick {}",
                    cpus.len(),
                    want.len() + idle,
                    self.now
                )));
            }
            for &c in cpus {
                if let Some(i) = self.cpu_task[c as usize] {
                    if !want.contains(&i) {
                        self.cpu_task[c as usize] = None;
                    }
                }
            }
            for &i in &want {
                if cpus.iter().any(|&c| self.cpu_task[c as usize] == Some(i)) {
                    continue;
                }
                let last = self.last_cpu[i as usize];
                let c = if cpus.contains(&last) && self.cpu_task[last as usize].is_none() {
                    Some(last)
                } else {
                    cpus.iter().copied().find(|&c| self.cpu_task[c as usize].is_none())
                };
                match c {
                    Some(c) => {
                        self.cpu_task[c as usize] = Some(i);
                        self.last_cpu[i as usize] = c;
                    }
                    None => {
                        return Err(RunViolation(format!(
                            "no free processor for task {i} at tick {} (subsystem of {} processors)",
                            self.now,
                            cpus.len()
                        )))
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::testing::{random_set, set, Lcg};
    use rtsched_model::exact::ratio;

    /// Steps `run` over `[0, until_ns]`, returning at each event `(tick, tasks per CPU)`.
    fn trace(run: &mut Run, until_ns: Time) -> Vec<(u128, Vec<Option<u32>>)> {
        let m = run.reduction().m() as usize;
        let end = until_ns as u128 * run.reduction().scale();
        let mut out = vec![(0, (0..m).map(|c| run.task_on(c)).collect())];
        loop {
            let t = run.next_event();
            if t > end {
                break;
            }
            run.advance(t).unwrap_or_else(|v| panic!("{v}"));
            out.push((t, (0..m).map(|c| run.task_on(c)).collect()));
        }
        out
    }

    #[test]
    fn three_tasks_of_rate_two_thirds_on_two_processors() {
        // Regnier et al.'s opening example (§I, Fig. 1): three tasks each needing 2 units every
        // 3 on two processors — no partition exists. Reduction, from the definitions: each
        // task alone in a server of rate 2/3 (two do not fit together), three duals of rate
        // 1/3, packed into one unit server: one reduction level.
        let red = Reduction::build(&set(&[(2, 3), (2, 3), (2, 3)]), 2).unwrap();
        assert_eq!(red.levels(), 1);
        assert_eq!(red.subsystems.len(), 1);
        assert_eq!(red.subsystems[0].cpus, vec![0, 1]);
        assert_eq!(red.level_totals, vec![(3, int(2)), (1, int(1))]);
        assert_eq!(red.scale(), 3); // rates 2/3 and 1/3: ticks of 1/3 ns
        let mut run = Run::new(red, &[], true).unwrap();
        let got = trace(&mut run, 6);
        // The root runs EDF over the duals (all deadline 3): dual 0 for its budget 1, so task 0
        // does not run in [0, 1); then dual 1, then dual 2. At 3 the dual that ran last keeps
        // the tie. Task 1 starts on CPU 0 at 0 and resumes at 2 on CPU 1 (CPU 0 is task 0's).
        let s = |a: Option<u32>, b: Option<u32>| vec![a, b];
        let want = vec![
            (0, s(Some(1), Some(2))),
            (3, s(Some(0), Some(2))),
            (6, s(Some(0), Some(1))),
            (9, s(Some(0), Some(1))),
            (12, s(Some(2), Some(1))),
            (15, s(Some(2), Some(0))),
            (18, s(Some(2), Some(0))),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn five_tasks_of_rate_three_fifths_reduce_in_two_levels() {
        // Five servers of rate 3/5 on three processors (our example, not one quoted from the
        // paper), every number from the definitions: PACK leaves five servers of 3/5
        // (total 3); DUAL gives 2/5 each, packed 4/5, 4/5, 2/5 (total 2 = 5 − 3); DUAL gives
        // 1/5, 1/5, 3/5, which pack into one unit server (total 1 = 3 − 2).
        let ts = set(&[(3, 5), (6, 10), (9, 15), (6, 10), (3, 5)]);
        let red = Reduction::build(&ts, 3).unwrap();
        assert_eq!(red.levels(), 2);
        assert_eq!(red.level_totals, vec![(5, int(3)), (3, int(2)), (1, int(1))]);
        let mut level1: Vec<Rational> = red
            .nodes
            .iter()
            .filter(|n| n.level == 1 && matches!(n.kind, Kind::Packed { .. }))
            .map(|n| n.rate.clone())
            .collect();
        level1.sort();
        assert_eq!(level1, vec![ratio(2, 5), ratio(4, 5), ratio(4, 5)]);
        let root = &red.nodes[red.subsystems[0].root];
        assert_eq!((root.rate.clone(), root.level), (one(), 2));
        assert!(red.levels() <= red.level_bound());
        let mut run = Run::new(red, &[], true).unwrap();
        // Over the hyperperiod every server spends exactly its budget by each deadline
        // (checked at every release instant by `strict`).
        let tr = trace(&mut run, 30);
        assert!(tr.len() > 10);
    }

    #[test]
    fn switch_rate_bound_from_the_preemption_bound() {
        // One level (p = 1): ⌈(3·1 + 1)/2⌉ = 2 preemptions per job on average, so 2 · (1 + 2)
        // switches per job; three tasks of period 3 ns: 6 · 3 · 10^9/3 per second, half per CPU.
        let ts = set(&[(2, 3), (2, 3), (2, 3)]);
        let b = Reduction::structure(&ts, 2).unwrap().switch_rate_bound();
        assert_eq!(b, vec![3e9, 3e9]);
        assert!(Run::new(Reduction::structure(&ts, 2).unwrap(), &[], true).is_err());
    }

    #[test]
    fn a_set_first_fit_places_is_partitioned_edf() {
        // U = 1.5 on 2 processors, first fit places {0.5, 0.5} and {0.5}: the idle fill makes
        // both unit servers, so RUN is partitioned EDF (level 0, no migrations possible).
        let red = Reduction::build(&set(&[(1, 2), (2, 4), (3, 6)]), 2).unwrap();
        assert_eq!(red.levels(), 0);
        assert_eq!(red.subsystems.len(), 2);
        let mut run = Run::new(red, &[], true).unwrap();
        for (_, cpus) in trace(&mut run, 12) {
            assert!(cpus[1].is_none_or(|t| t == 2), "{cpus:?}");
            assert!(cpus[0].is_none_or(|t| t < 2), "{cpus:?}");
        }
    }

    #[test]
    fn refusals_name_the_task_and_field() {
        let ts = TaskSet::from_cdt(&[(1, 4, 4), (1, 3, 5)]).unwrap();
        let e = Reduction::build(&ts, 2).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("deadline"));
        assert!(e.to_string().contains("task 1") && e.to_string().contains("implicit-deadline"), "{e}");
        let e = Reduction::build(&set(&[(2, 3), (2, 3), (3, 4)]), 2).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("m"));
        assert!(e.to_string().contains("exceeds m = 2"), "{e}");
        assert!(Reduction::build(&set(&[(1, 2)]), 0).is_err());
        // U = m exactly is accepted.
        assert!(Reduction::build(&set(&[(2, 3), (2, 3), (2, 3)]), 2).is_ok());
    }

    #[test]
    fn reduction_invariants_and_strict_schedules_on_random_sets() {
        let mut g = Lcg(7);
        for case in 0..300 {
            let m = 2 + g.below(7) as u32;
            let tasks = random_set(&mut g, m, case % 3 == 0);
            let ts = set(&tasks);
            let red = Reduction::build(&ts, m).unwrap();
            // Every packed server's rate is at most 1; each level's total is an integer and the
            // next level's total is its non-unit servers' count minus their total.
            for n in &red.nodes {
                assert!(n.rate <= one() && n.rate >= zero());
            }
            assert_eq!(red.level_totals[0].1, int(m as i128), "{tasks:?}");
            for w in red.level_totals.windows(2) {
                assert!(w[0].1.is_integer() && w[1].1.is_integer());
            }
            // Non-unit servers at least halve per level; the levels stay within the bound,
            // which is at most ⌈log₂(2m)⌉.
            let mut k_prev: Option<usize> = None;
            for lv in 0..=red.levels() {
                let k = red
                    .nodes
                    .iter()
                    .filter(|n| n.level == lv && matches!(n.kind, Kind::Packed { .. }) && n.rate != one())
                    .count();
                if let Some(kp) = k_prev {
                    assert!(k <= kp.div_ceil(2), "level {lv}: {k} non-unit servers after {kp}: {tasks:?}");
                }
                k_prev = Some(k);
            }
            assert!(red.levels() <= red.level_bound(), "{tasks:?}");
            assert!(red.level_bound() <= 64 - (2 * m as u64 - 1).leading_zeros());
            // The subsystems own every processor once.
            let mut cpus: Vec<u32> = red.subsystems.iter().flat_map(|s| s.cpus.clone()).collect();
            cpus.sort_unstable();
            assert_eq!(cpus, (0..m).collect::<Vec<_>>());
            // Online, over the hyperperiod: every server spends its budget exactly by each
            // deadline and never runs without budget (strict), and no task is on two CPUs.
            let h = ts.hyperperiod(1 << 40).unwrap();
            let mut run = Run::new(red, &[], true).unwrap();
            for (_, on) in trace(&mut run, h) {
                let mut seen: Vec<u32> = on.iter().flatten().copied().collect();
                let k = seen.len();
                seen.sort_unstable();
                seen.dedup();
                assert_eq!(seen.len(), k, "{on:?}");
            }
        }
    }
}
