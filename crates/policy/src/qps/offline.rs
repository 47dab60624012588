//! QPS's offline phase: the execution sets (module notes of [`crate::qps`]).

use crate::budget::{admit, grid_with, ticks};
use rtsched_model::exact::{one, zero, Rational};
use rtsched_model::{ModelError, TaskSet, Time};

/// A member of an execution set: a task, or the slave item of a major set (its index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    Task(u32),
    Slave(usize),
}

/// A major set's split: `P^a` and `P^b` (indices into its items, each of rate ≤ 1), its
/// excess `x = R − 1` and the set that hosts its slave item.
#[derive(Debug, Clone, PartialEq)]
pub struct Major {
    pub a: Vec<usize>,
    pub b: Vec<usize>,
    pub excess: Rational,
    pub host: usize,
}

/// One execution set, on CPU `cpu` (its index).
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutionSet {
    pub cpu: u32,
    pub items: Vec<Item>,
    /// `R(P)`: its tasks' rates plus its slave items' excesses.
    pub rate: Rational,
    /// `Some` for a major set.
    pub major: Option<Major>,
}

/// The offline part of QPS: the execution sets of a task set on `m` processors.
#[derive(Debug, Clone, PartialEq)]
pub struct QuasiPartition {
    pub sets: Vec<ExecutionSet>,
    /// Every set is minor: QPS is partitioned EDF on [`QuasiPartition::partition`].
    pub partitioned: bool,
    pub(super) m: u32,
    /// Ticks per ns (`L`).
    pub(super) scale: u128,
    pub(super) periods: Vec<Time>,
    /// Per task: `u · L` (ticks per ns).
    pub(super) rate_ticks: Vec<u128>,
    /// Per task: its set and its position there.
    pub(super) place: Vec<(usize, usize)>,
}

impl QuasiPartition {
    /// The execution sets of `ts` on `m` processors. Refused, with one line naming the task and
    /// field: a deadline other than the period (QPS schedules implicit-deadline tasks), total
    /// utilization above `m`, and (only when a major set is needed) rates of the major sets'
    /// tasks whose common denominator exceeds 2^64 (the exact budgets' grid).
    pub fn build(ts: &TaskSet, m: u32) -> Result<QuasiPartition, ModelError> {
        QuasiPartition::build_with(ts, m, true)
    }

    /// The execution sets alone, without the tick grid (so without its 2^64 bound): for what
    /// reads only the sets (e.g. the context-switch bound of Brandenburg & Gül's Fig. 6);
    /// [`Qps::new`] refuses it.
    pub fn structure(ts: &TaskSet, m: u32) -> Result<QuasiPartition, ModelError> {
        QuasiPartition::build_with(ts, m, false)
    }

    fn build_with(ts: &TaskSet, m: u32, grid: bool) -> Result<QuasiPartition, ModelError> {
        admit(ts, m, "QPS", "Massa et al., RTS 2016")?;
        let too_big = |i: usize| {
            ModelError::task_field(
                i,
                "period",
                "QPS's exact budgets need the common denominator of the rates of its major execution sets' tasks below 2^64; use periods with a smaller least common multiple",
            )
        };
        let rates: Vec<Rational> = ts.iter().map(|t| t.utilization()).collect();
        let mut order: Vec<usize> = (0..ts.len()).collect();
        order.sort_by(|&a, &b| rates[b].cmp(&rates[a]).then(a.cmp(&b)));
        let (sets, partitioned) = match fit(&rates, &order, m, true).or_else(|| fit(&rates, &order, m, false)) {
            Some(sets) => (sets, true),
            None => (next_fit_with_overflow(&rates, &order), false),
        };
        if sets.len() > m as usize {
            return Err(ModelError::new(format!(
                "QPS: the quasi-partition has {} sets for m = {m} processors (a bug)",
                sets.len()
            )));
        }
        // The tick grid: only tasks of major sets have window budgets (a minor set's tasks run
        // plain EDF in whole ns), so L covers their rates only; a partitioned set needs none.
        let mut scale: u128 = if grid { 1 } else { 0 };
        let mut rate_ticks = vec![0u128; ts.len()];
        let in_major: Vec<u32> = sets
            .iter()
            .filter(|s| s.major.is_some())
            .flat_map(|s| s.items.iter().filter_map(|it| if let Item::Task(i) = *it { Some(i) } else { None }))
            .filter(|_| grid)
            .collect();
        for &i in &in_major {
            scale = grid_with(scale, &rates[i as usize]).ok_or_else(|| too_big(i as usize))?;
        }
        for &i in &in_major {
            rate_ticks[i as usize] = ticks(&rates[i as usize], scale).ok_or_else(|| too_big(i as usize))?;
        }
        let mut place = vec![(0, 0); ts.len()];
        for (k, s) in sets.iter().enumerate() {
            for (j, it) in s.items.iter().enumerate() {
                if let Item::Task(i) = *it {
                    place[i as usize] = (k, j);
                }
            }
        }
        Ok(QuasiPartition {
            sets,
            partitioned,
            m,
            scale,
            periods: ts.iter().map(|t| t.period).collect(),
            rate_ticks,
            place,
        })
    }

    /// An upper bound on the context-switch rate (per second, per CPU) by two switches per
    /// activation, as Brandenburg & Gül (RTSS 2016, §VI, Fig. 6) infer QPS's: every job of a
    /// task activates once on its set's CPU (`2/T`); in every window a major set's servers
    /// activate at most once each — `σ^a`, `σ^b` and the master on its CPU, the slave on its
    /// host's — and a set has at most as many windows per second as its boundaries, the
    /// releases of its tasks and of the tasks of the sets whose slaves it hosts, transitively
    /// (`B = Σ 1/T` over them). A partitioned set gets partitioning's bound. The bound
    /// counts activations as that paper does; a master/slave segment split by its host's own
    /// preemptions costs further switches (the simulator counts them).
    pub fn switch_rate_bound(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.m as usize];
        let mut rel = vec![0.0f64; self.sets.len()];
        for (k, s) in self.sets.iter().enumerate() {
            for it in &s.items {
                match *it {
                    Item::Task(i) => {
                        let r = 1e9 / self.periods[i as usize] as f64;
                        rel[k] += r;
                        out[s.cpu as usize] += 2.0 * r;
                    }
                    Item::Slave(q) => rel[k] += rel[q],
                }
            }
        }
        for (k, s) in self.sets.iter().enumerate() {
            if let Some(mj) = &s.major {
                out[s.cpu as usize] += 2.0 * 3.0 * rel[k];
                out[self.sets[mj.host].cpu as usize] += 2.0 * rel[k];
            }
        }
        out
    }

    /// Ticks per ns (`L`): every event instant is an integer number of ticks.
    pub fn scale(&self) -> u128 {
        self.scale
    }

    pub fn m(&self) -> u32 {
        self.m
    }

    /// The number of major sets.
    pub fn majors(&self) -> usize {
        self.sets.iter().filter(|s| s.major.is_some()).count()
    }

    /// The tasks of each CPU's set (slave items left out): the placement partitioned EDF
    /// would use when [`QuasiPartition::partitioned`]; one list per CPU (`m` lists).
    pub fn partition(&self) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new(); self.m as usize];
        for s in &self.sets {
            for it in &s.items {
                if let Item::Task(i) = *it {
                    out[s.cpu as usize].push(i);
                }
            }
        }
        out
    }

    /// Task `i`'s set, and whether it is in the `P^b` subset of a major set (the only tasks
    /// that may migrate).
    pub fn set_of(&self, i: u32) -> (usize, bool) {
        let (k, j) = self.place[i as usize];
        (k, self.sets[k].major.as_ref().is_some_and(|mj| mj.b.contains(&j)))
    }
}

/// Worst-fit (`worst`) or first-fit decreasing into `m` sets of rate ≤ 1; `None` if a task
/// does not fit.
fn fit(rates: &[Rational], order: &[usize], m: u32, worst: bool) -> Option<Vec<ExecutionSet>> {
    let mut sets: Vec<ExecutionSet> =
        (0..m).map(|k| ExecutionSet { cpu: k, items: Vec::new(), rate: zero(), major: None }).collect();
    for &i in order {
        let fits = |k: &usize| sets[*k].rate.clone() + rates[i].clone() <= one();
        let k = if worst {
            (0..sets.len()).min_by(|&a, &b| sets[a].rate.cmp(&sets[b].rate).then(a.cmp(&b))).filter(fits)?
        } else {
            (0..sets.len()).find(fits)?
        };
        sets[k].rate += rates[i].clone();
        sets[k].items.push(Item::Task(i as u32));
    }
    Some(sets)
}

/// The quasi-partition by next fit with overflow (module notes).
fn next_fit_with_overflow(rates: &[Rational], order: &[usize]) -> Vec<ExecutionSet> {
    let mut sets: Vec<ExecutionSet> = Vec::new();
    let mut cur = ExecutionSet { cpu: 0, items: Vec::new(), rate: zero(), major: None };
    for &i in order {
        let r = rates[i].clone();
        let sum = cur.rate.clone() + r.clone();
        if sum <= one() {
            cur.items.push(Item::Task(i as u32));
            cur.rate = sum;
            continue;
        }
        let k = sets.len();
        let next = if cur.rate == one() {
            ExecutionSet { cpu: k as u32 + 1, items: vec![Item::Task(i as u32)], rate: r, major: None }
        } else {
            let excess = sum.clone() - one();
            let a: Vec<usize> = (0..cur.items.len()).collect();
            cur.items.push(Item::Task(i as u32));
            cur.rate = sum;
            cur.major = Some(Major { a, b: vec![cur.items.len() - 1], excess: excess.clone(), host: k + 1 });
            ExecutionSet { cpu: k as u32 + 1, items: vec![Item::Slave(k)], rate: excess, major: None }
        };
        sets.push(std::mem::replace(&mut cur, next));
    }
    if !cur.items.is_empty() {
        sets.push(cur);
    }
    sets
}
