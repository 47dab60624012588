//! The state the placement heuristics of Brandenburg & Gül, RTSS 2016 (§III-C, §III-D, §IV-B)
//! work on: processor "bins" of (sub)reservations, the pieces of each task, and the items still
//! to place.
//!
//! A *piece* is a (sub)reservation placed on a processor. Each task is first turned into one
//! item `(c, d, t)` = `(Q, D', Δ)` (its possibly period-transformed reservation); items are
//! taken in order of decreasing density `c/d` (exact cross-multiplication, lower task index
//! first on ties). The C=D rule splits an item that does not fit on processor `P` into the
//! zero-laxity piece `(x, x, t)` on `P` and the remainder `(c - x, d - x, t)`, which is placed
//! later (docs/spres.md).

use super::demand::{edf_test, max_split, util_le_one, Outcome, Res};
use super::SemiConfig;
use rtsched_model::exact::Interval;
use rtsched_model::time::format_time_exact as fe;
use rtsched_model::{TaskSet, Time};
use std::cmp::Ordering;

/// The (possibly period-transformed) reservation of one task before any split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spec {
    pub c: Time,
    pub d: Time,
    pub t: Time,
    pub k: u64,
}

impl Spec {
    /// The untransformed reservation: `(C, min(D, T), T)` (a deadline beyond the period is
    /// truncated to it, §II).
    pub fn of(ts: &TaskSet, i: usize) -> Spec {
        let task = &ts[i];
        Spec { c: task.wcet, d: task.deadline.min(task.period), t: task.period, k: 1 }
    }

    /// Period transformation with ratio `k` (§III-B; implicit-deadline tasks only): budget
    /// `ceil(C/k)`, period and deadline `floor(T/k)`, so that `k Q >= C` and `k Δ <= T`.
    pub fn transformed(ts: &TaskSet, i: usize, k: u64) -> Spec {
        let task = &ts[i];
        if k <= 1 {
            return Spec::of(ts, i);
        }
        let t = task.period / k;
        Spec { c: task.wcet.div_ceil(k), d: t, t, k }
    }

    /// The specs of every task with ratios `ks` (1 = untransformed).
    pub fn all(ts: &TaskSet, ks: &[u64]) -> Vec<Spec> {
        (0..ts.len()).map(|i| Spec::transformed(ts, i, ks[i])).collect()
    }
}

/// A reservation (or the remainder of one) still to be placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Item {
    pub task: usize,
    pub c: Time,
    pub d: Time,
    pub t: Time,
}

impl Item {
    pub fn res(&self) -> Res {
        Res { c: self.c, d: self.d, t: self.t }
    }
}

impl Ord for Item {
    /// Greater = placed earlier: higher density, then lower task index.
    fn cmp(&self, o: &Self) -> Ordering {
        (self.c as u128 * o.d as u128).cmp(&(o.c as u128 * self.d as u128)).then_with(|| o.task.cmp(&self.task))
    }
}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Sorts items in placement order (decreasing density, then increasing task index).
pub(crate) fn sort_items(v: &mut [Item]) {
    v.sort_unstable_by(|a, b| b.cmp(a));
}

#[derive(Debug, Clone)]
pub(crate) struct Bin {
    pub res: Vec<Res>,
    u: Interval,
    dens: Interval,
    implicit: bool,
}

impl Bin {
    fn new() -> Bin {
        Bin { res: Vec::new(), u: Interval::point(0.0), dens: Interval::point(0.0), implicit: true }
    }

    /// Exact: does `r` fit whole on this processor?
    pub fn fits(&self, r: Res, cfg: &SemiConfig, scratch: &mut Vec<Res>) -> bool {
        self.admits(&Probe::of(r), cfg, scratch)
    }

    /// [`Bin::fits`] with the piece's utilization and density enclosures computed once.
    pub fn admits(&self, p: &Probe, cfg: &SemiConfig, scratch: &mut Vec<Res>) -> bool {
        let r = p.r;
        if r.c > r.d {
            return false;
        }
        let u = self.u.add(p.u);
        if u.lo > 1.0 {
            return false;
        }
        if self.implicit && r.d == r.t {
            return util_le_one(self.res.iter().chain(std::iter::once(&r)), u);
        }
        if u.hi <= 1.0 && self.dens.add(p.dens).hi <= 1.0 {
            return true; // density test: sufficient
        }
        scratch.clear();
        scratch.extend_from_slice(&self.res);
        scratch.push(r);
        edf_test(scratch, &cfg.limits) == Outcome::Feasible
    }

    fn add(&mut self, r: Res) {
        self.u = self.u.add(r.util());
        self.dens = self.dens.add(r.dens());
        self.implicit &= r.d == r.t;
        self.res.push(r);
    }
}

/// A piece about to be tested on several processors, with its rigorous utilization and
/// density enclosures.
pub(crate) struct Probe {
    pub r: Res,
    u: Interval,
    dens: Interval,
}

impl Probe {
    pub fn of(r: Res) -> Probe {
        Probe { r, u: r.util(), dens: r.dens() }
    }
}

/// Which load a worst-fit heuristic balances (an ordering, never a verdict).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Load {
    /// `Σ c/t` (the text: "U(τ(P_k)) is minimal").
    Utilization,
    /// `Σ c/min(d, t)` (the artifact: `TaskSystem.density()`).
    Density,
}

/// A piece of a task on a processor, in creation order (split-off zero-laxity chunks first,
/// the piece placed whole last).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Piece {
    pub cpu: usize,
    pub c: Time,
    pub d: Time,
}

#[derive(Debug, Clone)]
pub(crate) struct State {
    pub bins: Vec<Bin>,
    pub pieces: Vec<Vec<Piece>>,
    pub specs: Vec<Spec>,
    /// The processor a piece was last added to (FFD-C=D of the text splits there).
    pub last: Option<usize>,
    /// The first failure of the latest run, in words.
    pub failure: Option<String>,
    /// Splits this run may still make (see [`split_budget`]).
    splits_left: usize,
    /// Whether a split was refused because the budget was spent.
    pub split_bound_hit: bool,
}

/// Most C=D splits one heuristic run makes: `8 (n + m) + 64`. A split lowers the item's budget
/// by at least `max(ε, 1)` ns, so runs end anyway, but a maximal chunk is followed by another on
/// the same processor only in contrived cases; the bound keeps adversarial inputs from making
/// millions of 1 ns pieces. When it is hit the remaining pieces fail (safe) and the reason says so.
pub(crate) fn split_budget(n: usize, m: usize) -> usize {
    8 * (n + m) + 64
}

impl State {
    pub fn new(m: usize, specs: Vec<Spec>) -> State {
        let n = specs.len();
        State {
            bins: vec![Bin::new(); m],
            pieces: vec![Vec::new(); n],
            specs,
            last: None,
            failure: None,
            splits_left: split_budget(n, m),
            split_bound_hit: false,
        }
    }

    pub fn item(&self, task: usize) -> Item {
        let s = self.specs[task];
        Item { task, c: s.c, d: s.d, t: s.t }
    }

    pub fn items(&self, tasks: &[usize]) -> Vec<Item> {
        tasks.iter().map(|&i| self.item(i)).collect()
    }

    /// Number of pieces placed (the artifact's `count_slices`).
    pub fn slices(&self) -> usize {
        self.pieces.iter().map(Vec::len).sum()
    }

    pub fn put(&mut self, b: usize, it: Item) {
        self.bins[b].add(it.res());
        self.pieces[it.task].push(Piece { cpu: b, c: it.c, d: it.d });
        self.last = Some(b);
    }

    /// Places the zero-laxity chunk `(x, x, t)` of `it` on `b`; returns the remainder.
    pub fn split(&mut self, b: usize, it: Item, x: Time) -> Item {
        self.bins[b].add(Res { c: x, d: x, t: it.t });
        self.pieces[it.task].push(Piece { cpu: b, c: x, d: x });
        self.last = Some(b);
        self.splits_left = self.splits_left.saturating_sub(1);
        Item { task: it.task, c: it.c - x, d: it.d - x, t: it.t }
    }

    pub fn fail(&mut self, it: Item, why: &str) {
        if self.failure.is_none() {
            let s = self.specs[it.task];
            let piece = if it.c != s.c || it.d != s.d {
                format!(" (remaining piece budget {}, deadline {})", fe(it.c), fe(it.d))
            } else {
                String::new()
            };
            self.failure = Some(format!(
                "task {} (reservation budget {}, deadline {}, period {}, period ratio {}){piece} {why}",
                it.task,
                fe(s.c),
                fe(s.d),
                fe(s.t),
                s.k
            ));
        }
    }

    fn may_split(&mut self) -> bool {
        if self.splits_left == 0 {
            self.split_bound_hit = true;
            return false;
        }
        true
    }

    /// Largest admissible C=D chunk of `it` on bin `b` with both parts `>= max(ε, 1)`.
    pub fn chunk(&mut self, b: usize, it: Item, cfg: &SemiConfig) -> Option<Time> {
        let min = cfg.epsilon.max(1);
        if it.c < min.saturating_mul(2) || it.c > it.d || !self.may_split() {
            return None;
        }
        max_split(&self.bins[b].res, it.t, min, it.c - min, &cfg.limits)
    }

    /// Largest admissible C=D chunk of `it` on `b` below `c`, without the ε bounds (the
    /// artifact's `qpa_split_off_chunk`, which WFD-C=D-MS ranks processors by).
    pub fn chunk_unbounded(&mut self, b: usize, it: Item, cfg: &SemiConfig) -> Option<Time> {
        if it.c < 2 || it.c > it.d || !self.may_split() {
            return None;
        }
        max_split(&self.bins[b].res, it.t, 1, it.c - 1, &cfg.limits)
    }

    /// Cheap upper bound on any chunk of `it` on `b`: `floor((1 - U_b) t)` from a float
    /// enclosure, rounded up (only to skip processors, never a verdict).
    pub fn chunk_bound(&self, b: usize, it: Item) -> f64 {
        ((1.0 - self.bins[b].u.lo) * it.t as f64).ceil() + 1.0
    }

    /// Processor indices by increasing load, ties by index (float enclosures' lower ends: a
    /// heuristic order, never a verdict; deterministic).
    pub fn by_load(&self, load: Load, out: &mut Vec<usize>) {
        let key = |b: usize| match load {
            Load::Utilization => self.bins[b].u.lo,
            Load::Density => self.bins[b].dens.lo,
        };
        out.clear();
        out.extend(0..self.bins.len());
        out.sort_by(|&a, &b| key(a).total_cmp(&key(b)).then(a.cmp(&b)));
    }

    /// The first processor of `order` that admits `it` whole.
    pub fn first_fit(&self, order: &[usize], it: Item, cfg: &SemiConfig, scratch: &mut Vec<Res>) -> Option<usize> {
        let p = Probe::of(it.res());
        order.iter().copied().find(|&b| self.bins[b].admits(&p, cfg, scratch))
    }
}

/// FFD (`load = None`: lowest index first) or WFD (processors by increasing `load`) without
/// splitting (§III-C): every item is tried once; the ones that fit nowhere are returned.
pub(crate) fn run_plain(state: &mut State, mut items: Vec<Item>, load: Option<Load>, cfg: &SemiConfig) -> Vec<Item> {
    sort_items(&mut items);
    let mut failed = Vec::new();
    let mut scratch = Vec::new();
    let mut order: Vec<usize> = (0..state.bins.len()).collect();
    for it in items {
        if let Some(l) = load {
            state.by_load(l, &mut order);
        }
        match state.first_fit(&order, it, cfg, &mut scratch) {
            Some(b) => state.put(b, it),
            None => {
                state.fail(it, "fits on no processor");
                failed.push(it);
            }
        }
    }
    failed
}
