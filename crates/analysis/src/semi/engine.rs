//! The placement heuristics of seed 004 §III-C, §III-D and §IV-B over processor "bins".
//!
//! A *piece* is a (sub)reservation placed on a processor. Each task is first turned into one
//! item `(c, d, t)` = `(Q, D', Δ)` (its possibly period-transformed reservation); items are
//! taken in order of decreasing density `c/d` (exact cross-multiplication, lower task index
//! first on ties). The C=D rule splits an item that does not fit on processor `P` into the
//! zero-laxity piece `(x, x, t)` on `P` (which is then closed) and the remainder
//! `(c - x, d - x, t)`, which goes back into the queue.

use super::demand::{edf_test, max_split, util_le_one, Outcome, Res};
use super::{Basic, SemiConfig};
use rtsched_model::exact::Interval;
use rtsched_model::{TaskSet, Time};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The (possibly period-transformed) reservation of one task before any split.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spec {
    pub c: Time,
    pub d: Time,
    pub t: Time,
    pub k: u64,
}

impl Spec {
    /// The untransformed reservation: `(C, min(D, T), T)` (a deadline beyond the period is
    /// truncated to it, seed 004 §II).
    pub fn of(ts: &TaskSet, i: usize) -> Spec {
        let task = &ts[i];
        Spec { c: task.wcet, d: task.deadline.min(task.period), t: task.period, k: 1 }
    }

    /// Period transformation with ratio `k` (implicit-deadline tasks only): budget
    /// `ceil(C/k)`, period and deadline `floor(T/k)`, so that `k Q >= C` and `k Δ <= T`.
    pub fn transformed(ts: &TaskSet, i: usize, k: u64) -> Spec {
        let task = &ts[i];
        if k <= 1 {
            return Spec::of(ts, i);
        }
        let t = task.period / k;
        Spec { c: task.wcet.div_ceil(k), d: t, t, k }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Item {
    task: usize,
    c: Time,
    d: Time,
    t: Time,
}

impl Ord for Item {
    fn cmp(&self, o: &Self) -> Ordering {
        // Max-heap: higher density first, then lower task index.
        (self.c as u128 * o.d as u128).cmp(&(o.c as u128 * self.d as u128)).then_with(|| o.task.cmp(&self.task))
    }
}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Bin {
    pub res: Vec<Res>,
    u: Interval,
    dens: Interval,
    implicit: bool,
    pub closed: bool,
}

impl Bin {
    fn new() -> Bin {
        Bin { res: Vec::new(), u: Interval::point(0.0), dens: Interval::point(0.0), implicit: true, closed: false }
    }

    /// Exact: does `r` fit whole on this processor?
    fn fits(&self, r: Res, cfg: &SemiConfig, scratch: &mut Vec<Res>) -> bool {
        if r.c > r.d {
            return false;
        }
        let u = self.u.add(r.util());
        if self.implicit && r.d == r.t {
            return util_le_one(self.res.iter().chain(std::iter::once(&r)), u);
        }
        if u.hi <= 1.0 && self.dens.add(r.dens()).hi <= 1.0 {
            return true; // density test: sufficient
        }
        if u.lo > 1.0 {
            return false;
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

    /// For worst-fit ordering only (never a verdict).
    fn load(&self) -> f64 {
        self.u.lo
    }
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
    last: Option<usize>,
    /// The first failure of the latest run, in words.
    pub failure: Option<String>,
}

impl State {
    pub fn new(m: usize, specs: Vec<Spec>) -> State {
        let n = specs.len();
        State { bins: vec![Bin::new(); m], pieces: vec![Vec::new(); n], specs, last: None, failure: None }
    }

    fn item(&self, task: usize) -> Item {
        let s = self.specs[task];
        Item { task, c: s.c, d: s.d, t: s.t }
    }

    fn put(&mut self, b: usize, it: Item) {
        self.bins[b].add(Res { c: it.c, d: it.d, t: it.t });
        self.pieces[it.task].push(Piece { cpu: b, c: it.c, d: it.d });
        self.last = Some(b);
    }

    fn split(&mut self, b: usize, it: Item, x: Time) -> Item {
        self.bins[b].add(Res { c: x, d: x, t: it.t });
        self.bins[b].closed = true;
        self.pieces[it.task].push(Piece { cpu: b, c: x, d: x });
        self.last = Some(b);
        Item { task: it.task, c: it.c - x, d: it.d - x, t: it.t }
    }

    fn fail(&mut self, it: Item, why: &str) {
        if self.failure.is_none() {
            let s = self.specs[it.task];
            let piece = if it.c != s.c || it.d != s.d {
                format!(" (remaining piece budget {} ns, deadline {} ns)", it.c, it.d)
            } else {
                String::new()
            };
            self.failure = Some(format!(
                "task {} (reservation budget {} ns, deadline {} ns, period {} ns, period ratio {}){piece} {why}",
                it.task, s.c, s.d, s.t, s.k
            ));
        }
    }

    /// Largest admissible C=D chunk of `it` on bin `b` (both parts `>= max(eps, 1)`).
    fn chunk(&self, b: usize, it: Item, cfg: &SemiConfig) -> Option<Time> {
        let min = cfg.epsilon.max(1);
        if it.c < min.saturating_mul(2) || it.c > it.d {
            return None;
        }
        max_split(&self.bins[b].res, it.t, min, it.c - min, &cfg.limits)
    }

    /// Cheap upper bound on the chunk: `floor((1 - U_b) t)` from a float enclosure, rounded up.
    fn chunk_bound(&self, b: usize, it: Item) -> f64 {
        ((1.0 - self.bins[b].u.lo) * it.t as f64).ceil() + 1.0
    }
}

fn heap_of(state: &State, tasks: &[usize]) -> BinaryHeap<Item> {
    tasks.iter().map(|&i| state.item(i)).collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Fit {
    First,
    Worst,
}

/// FFD / WFD without splitting: every task is tried; the ones that fit nowhere are returned.
fn run_plain(state: &mut State, tasks: &[usize], fit: Fit, cfg: &SemiConfig) -> Vec<usize> {
    let mut heap = heap_of(state, tasks);
    let mut failed = Vec::new();
    let mut scratch = Vec::new();
    let mut order: Vec<usize> = (0..state.bins.len()).collect();
    while let Some(it) = heap.pop() {
        let r = Res { c: it.c, d: it.d, t: it.t };
        if fit == Fit::Worst {
            order.sort_by(|&a, &b| state.bins[a].load().total_cmp(&state.bins[b].load()).then(a.cmp(&b)));
        }
        let found = order.iter().copied().find(|&b| !state.bins[b].closed && state.bins[b].fits(r, cfg, &mut scratch));
        match found {
            Some(b) => state.put(b, it),
            None => {
                state.fail(it, "fits on no processor");
                failed.push(it.task);
            }
        }
    }
    failed
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CdMode {
    Ffd,
    Wfd,
    WfdMs,
}

/// FFD-C=D, WFD-C=D, WFD-C=D-MS (continuous strategy of Burns et al., seed 004 §III-D, §IV-B).
fn run_cd(state: &mut State, tasks: &[usize], mode: CdMode, cfg: &SemiConfig) -> Vec<usize> {
    let mut heap = heap_of(state, tasks);
    let mut failed = Vec::new();
    let mut scratch = Vec::new();
    let m = state.bins.len();
    while let Some(it) = heap.pop() {
        if it.c > it.d {
            state.fail(it, "has a budget larger than its deadline");
            failed.push(it.task);
            continue;
        }
        let r = Res { c: it.c, d: it.d, t: it.t };
        match mode {
            CdMode::Ffd => {
                let fit = (0..m).find(|&b| {
                    let bin = &state.bins[b];
                    !bin.closed && !bin.res.is_empty() && bin.fits(r, cfg, &mut scratch)
                });
                if let Some(b) = fit {
                    state.put(b, it);
                    continue;
                }
                // Split on the processor last added to, else the first open non-empty one
                // that admits a chunk.
                let mut cands: Vec<usize> = Vec::with_capacity(m);
                if let Some(l) = state.last {
                    cands.push(l);
                }
                cands.extend((0..m).filter(|&b| Some(b) != state.last));
                let mut done = false;
                for b in cands {
                    if state.bins[b].closed || state.bins[b].res.is_empty() {
                        continue;
                    }
                    if let Some(x) = state.chunk(b, it, cfg) {
                        let rest = state.split(b, it, x);
                        heap.push(rest);
                        done = true;
                        break;
                    }
                }
                if done {
                    continue;
                }
                if let Some(b) = (0..m).find(|&b| !state.bins[b].closed && state.bins[b].res.is_empty()) {
                    state.put(b, it); // c <= d: always fits an empty processor
                    continue;
                }
                state.fail(it, "fits on no processor and no processor admits a C=D chunk");
                failed.push(it.task);
            }
            CdMode::Wfd | CdMode::WfdMs => {
                let k = (0..m)
                    .filter(|&b| !state.bins[b].closed)
                    .min_by(|&a, &b| state.bins[a].load().total_cmp(&state.bins[b].load()).then(a.cmp(&b)));
                let Some(k) = k else {
                    state.fail(it, "found every processor closed");
                    failed.push(it.task);
                    continue;
                };
                if state.bins[k].fits(r, cfg, &mut scratch) {
                    state.put(k, it);
                    continue;
                }
                let target = if mode == CdMode::Wfd {
                    state.chunk(k, it, cfg).map(|x| (k, x))
                } else {
                    // Maximal split: the largest chunk over all open processors (lowest index
                    // on ties); processors whose utilization room cannot beat the best are skipped.
                    let mut best: Option<(usize, Time)> = None;
                    for b in 0..m {
                        if state.bins[b].closed {
                            continue;
                        }
                        if let Some((_, bx)) = best {
                            if state.chunk_bound(b, it) <= bx as f64 {
                                continue;
                            }
                        }
                        if let Some(x) = state.chunk(b, it, cfg) {
                            if best.is_none_or(|(_, bx)| x > bx) {
                                best = Some((b, x));
                            }
                        }
                    }
                    best
                };
                match target {
                    Some((b, x)) => {
                        let rest = state.split(b, it, x);
                        heap.push(rest);
                    }
                    None => {
                        state.fail(
                            it,
                            &format!("does not fit on CPU {k} (least loaded) and no admissible C=D split exists"),
                        );
                        failed.push(it.task);
                    }
                }
            }
        }
    }
    failed
}

/// Runs one basic heuristic on `tasks` on top of `state`; returns the tasks it failed to place.
pub(crate) fn run_basic(h: Basic, state: &mut State, tasks: &[usize], cfg: &SemiConfig) -> Vec<usize> {
    match h {
        Basic::Wfd => run_plain(state, tasks, Fit::Worst, cfg),
        Basic::Ffd => run_plain(state, tasks, Fit::First, cfg),
        Basic::FfdCd => run_cd(state, tasks, CdMode::Ffd, cfg),
        Basic::WfdCd => run_cd(state, tasks, CdMode::Wfd, cfg),
        Basic::WfdCdMs => run_cd(state, tasks, CdMode::WfdMs, cfg),
        Basic::TwoWfdCd => {
            let snapshot = state.clone();
            let f = run_cd(state, tasks, CdMode::Wfd, cfg);
            if f.is_empty() {
                return f;
            }
            *state = snapshot;
            run_cd(state, tasks, CdMode::WfdMs, cfg)
        }
        Basic::Wwfd | Basic::Fwfd | Basic::Wffd | Basic::Fffd => {
            let (first, second) = match h {
                Basic::Wwfd => (Fit::Worst, Basic::TwoWfdCd),
                Basic::Fwfd => (Fit::First, Basic::TwoWfdCd),
                Basic::Wffd => (Fit::Worst, Basic::FfdCd),
                _ => (Fit::First, Basic::FfdCd),
            };
            let rest = run_plain(state, tasks, first, cfg);
            state.failure = None; // phase-1 leftovers are not failures
            if rest.is_empty() {
                return rest;
            }
            run_basic(second, state, &rest, cfg)
        }
    }
}

/// Outcome of one heuristic: the final state on success, or the failure reason.
pub(crate) type RunResult = Result<State, String>;

fn reason(state: &State) -> String {
    state.failure.clone().unwrap_or_else(|| "no placement found".into())
}

/// The tasks 2WFD-C=D fails to place (all tasks, untransformed) and its reason: PAF's round 0.
pub(crate) fn paf_round0(ts: &TaskSet, m: usize, cfg: &SemiConfig) -> (Vec<usize>, String) {
    let specs = (0..ts.len()).map(|i| Spec::of(ts, i)).collect();
    let mut st = State::new(m, specs);
    let all: Vec<usize> = (0..ts.len()).collect();
    let f = run_basic(Basic::TwoWfdCd, &mut st, &all, cfg);
    (f, reason(&st))
}

/// One basic heuristic over all tasks, untransformed.
pub(crate) fn basic(ts: &TaskSet, m: usize, h: Basic, cfg: &SemiConfig) -> RunResult {
    let specs = (0..ts.len()).map(|i| Spec::of(ts, i)).collect();
    let mut st = State::new(m, specs);
    let all: Vec<usize> = (0..ts.len()).collect();
    if run_basic(h, &mut st, &all, cfg).is_empty() {
        Ok(st)
    } else {
        Err(reason(&st))
    }
}

/// Pre-assign failures (seed 004 §IV-B): `h1` places the tasks that failed before, then
/// 2WFD-C=D places the rest; tasks `h2` fails to place join the failures. At most `n + 1` rounds.
///
/// `round0`, when given, is the outcome of the first round (2WFD-C=D on all tasks: the failed
/// tasks and the reason), which does not depend on `h1`; the cascade computes it once for all
/// six instantiations.
pub(crate) fn paf(
    ts: &TaskSet,
    m: usize,
    h1: Basic,
    cfg: &SemiConfig,
    round0: Option<&(Vec<usize>, String)>,
) -> RunResult {
    let n = ts.len();
    let specs: Vec<Spec> = (0..n).map(|i| Spec::of(ts, i)).collect();
    let mut is_failure = vec![false; n];
    let mut last_reason = String::from("no placement found");
    if let Some((f, why)) = round0 {
        if f.is_empty() {
            // Round 0 succeeds: recompute its state (cheap relative to the failing case).
            return basic(ts, m, Basic::TwoWfdCd, cfg);
        }
        for &i in f {
            is_failure[i] = true;
        }
        last_reason = why.clone();
    }
    for _ in 0..=n {
        let failures: Vec<usize> = (0..n).filter(|&i| is_failure[i]).collect();
        let rest: Vec<usize> = (0..n).filter(|&i| !is_failure[i]).collect();
        let mut st = State::new(m, specs.clone());
        if !failures.is_empty() && !run_basic(h1, &mut st, &failures, cfg).is_empty() {
            return Err(format!("pre-assignment of earlier failures {failures:?} failed: {}", reason(&st)));
        }
        st.failure = None;
        let f2 = run_basic(Basic::TwoWfdCd, &mut st, &rest, cfg);
        if f2.is_empty() {
            return Ok(st);
        }
        last_reason = reason(&st);
        for i in f2 {
            is_failure[i] = true;
        }
    }
    Err(last_reason)
}

/// Reduce periods (seed 004 §IV-B): period-transform every implicit-deadline task whose
/// (transformed) period is at least the threshold θ, and every task that failed in the previous
/// round, with the smallest ratio `k` that brings its period below θ (a failed task at least
/// `k + 1`); θ starts at the largest period and halves each round down to `cfg.rp_floor`.
/// No transformation lowers a budget below ε or a period below 1 ns.
pub(crate) fn rp(ts: &TaskSet, m: usize, base: Basic, cfg: &SemiConfig) -> RunResult {
    let n = ts.len();
    let transformable: Vec<bool> = ts.iter().map(|t| t.deadline >= t.period).collect();
    let Some(tmax) = ts.iter().zip(&transformable).filter(|(_, &ok)| ok).map(|(t, _)| t.period).max() else {
        return Err("no implicit-deadline task to period-transform".into());
    };
    let floor = cfg.rp_floor.max(1);
    let mut theta = tmax.max(floor);
    let mut ks = vec![1u64; n];
    let mut failed = vec![false; n];
    let all: Vec<usize> = (0..n).collect();
    let mut last_reason = String::from("no placement found");
    loop {
        let mut changed = false;
        for i in 0..n {
            if !transformable[i] {
                continue;
            }
            let task = &ts[i];
            let cur = task.period / ks[i];
            if cur < theta && !failed[i] {
                continue;
            }
            let mut k = (task.period / theta + 1).max(ks[i]);
            if failed[i] {
                k = k.max(ks[i] + 1);
            }
            // Keep budgets >= eps (when the WCET allows) and periods >= 1 ns.
            let min_budget = cfg.epsilon.max(1).min(task.wcet);
            let kmax_budget = if min_budget <= 1 { u64::MAX } else { (task.wcet - 1) / (min_budget - 1) };
            k = k.min(kmax_budget.max(1)).min(task.period).max(1);
            while k > 1 && task.wcet.div_ceil(k) < min_budget {
                k -= 1;
            }
            if k != ks[i] {
                ks[i] = k;
                changed = true;
            }
        }
        if changed || theta == tmax.max(floor) {
            let specs = (0..n).map(|i| Spec::transformed(ts, i, ks[i])).collect();
            let mut st = State::new(m, specs);
            let f = run_basic(base, &mut st, &all, cfg);
            if f.is_empty() {
                return Ok(st);
            }
            last_reason = reason(&st);
            failed.iter_mut().for_each(|x| *x = false);
            for i in f {
                failed[i] = true;
            }
        }
        if theta <= floor {
            return Err(last_reason);
        }
        theta = (theta / 2).max(floor);
    }
}
