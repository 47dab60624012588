//! RUN's online part: budgets, deadlines, the servers that run and the task on each CPU, in
//! ticks of `1/L` ns; the module notes of [`super`] ("Online") give the rules.

use super::reduction::{leaves_under, Kind, Reduction};
use crate::budget::consume;
use rtsched_model::{ModelError, Time};

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
