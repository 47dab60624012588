//! The meta-heuristics of Brandenburg & Gül, RTSS 2016, §IV-B: pre-assign failures (PAF) and
//! reduce periods (RP), each in the readings of docs/spres.md ("Paper text versus paper code").

use super::cd::run_basic;
use super::engine::{split_budget, Item, Spec, State};
use super::{Basic, RpMode, SemiConfig, Variant};
use rtsched_model::{TaskSet, Time};
use std::collections::HashMap;

/// Outcome of one heuristic: the final state on success, or the failure reason.
pub(crate) type RunResult = Result<State, String>;

/// Per basic heuristic, its outcome on every task of the untransformed set: the tasks it left
/// (partly) unplaced and the reason. PAF's first round (2WFD-C=D on all tasks) and the divisor
/// RP's first round (its base heuristic on all tasks) are such runs, as are the cascade's basic
/// members; a cascade computes each once.
#[derive(Debug, Default)]
pub(crate) struct Round0 {
    runs: HashMap<Basic, (Vec<usize>, String)>,
}

impl Round0 {
    fn get(&mut self, ts: &TaskSet, m: usize, h: Basic, cfg: &SemiConfig) -> (Vec<usize>, String) {
        if !self.runs.contains_key(&h) {
            let mut st = State::new(m, Spec::all(ts, &vec![1; ts.len()]));
            let all: Vec<usize> = (0..ts.len()).collect();
            let items = st.items(&all);
            let f = run_basic(h, &mut st, items, cfg);
            self.record(h, &st, &f);
        }
        self.runs.get(&h).cloned().unwrap_or_default()
    }

    fn record(&mut self, h: Basic, st: &State, failed: &[Item]) {
        let mut tasks: Vec<usize> = failed.iter().map(|it| it.task).collect();
        tasks.sort_unstable();
        tasks.dedup();
        self.runs.insert(h, (tasks, reason(st)));
    }
}

pub(crate) fn reason(state: &State) -> String {
    let mut r = state.failure.clone().unwrap_or_else(|| "no placement found".into());
    if state.split_bound_hit {
        let (n, m) = (state.pieces.len(), state.bins.len());
        r.push_str(&format!(" (splitting stopped at the bound of {} splits per run)", split_budget(n, m)));
    }
    r
}

/// `h` on every task of the untransformed set.
fn untransformed(ts: &TaskSet, m: usize, h: Basic, cfg: &SemiConfig) -> RunResult {
    run_transformed(ts, m, h, &vec![1; ts.len()], cfg).map_err(|(_, why)| why)
}

/// One basic heuristic over all tasks, untransformed; its outcome is kept in `cache`.
pub(crate) fn basic(ts: &TaskSet, m: usize, h: Basic, cfg: &SemiConfig, cache: &mut Round0) -> RunResult {
    let mut st = State::new(m, Spec::all(ts, &vec![1; ts.len()]));
    let all: Vec<usize> = (0..ts.len()).collect();
    let items = st.items(&all);
    let f = run_basic(h, &mut st, items, cfg);
    if f.is_empty() {
        Ok(st)
    } else {
        cache.record(h, &st, &f);
        Err(reason(&st))
    }
}

/// Pre-assign failures (§IV-B) with `h1`; `h2` is 2WFD-C=D. Round 0 is 2WFD-C=D on every task;
/// the tasks it leaves unplaced are the failures. Each round, `h1` places the failures on empty
/// processors, then 2WFD-C=D places the rest around them; the tasks it leaves unplaced join the
/// failures. At most `n + 1` rounds.
///
/// When `h1` cannot place every failure, the text's reading gives up ("fails if h1 fails to
/// place all tasks in failures"); the artifact's (`meta_preassign_failures`) lets 2WFD-C=D try
/// the rest together with what `h1` left, and that round's outcome is final.
pub(crate) fn paf(ts: &TaskSet, m: usize, h1: Basic, cfg: &SemiConfig, cache: &mut Round0) -> RunResult {
    let n = ts.len();
    let (f0, why0) = cache.get(ts, m, Basic::TwoWfdCd, cfg);
    if f0.is_empty() {
        return untransformed(ts, m, Basic::TwoWfdCd, cfg);
    }
    let specs = Spec::all(ts, &vec![1; n]);
    let mut is_failure = vec![false; n];
    for &i in &f0 {
        is_failure[i] = true;
    }
    let mut last_reason = why0;
    for _ in 0..=n {
        let failures: Vec<usize> = (0..n).filter(|&i| is_failure[i]).collect();
        let rest: Vec<usize> = (0..n).filter(|&i| !is_failure[i]).collect();
        let mut st = State::new(m, specs.clone());
        let items = st.items(&failures);
        let left1 = run_basic(h1, &mut st, items, cfg);
        let gave_up = !left1.is_empty();
        if gave_up && cfg.variant == Variant::Text {
            return Err(format!("pre-assignment of earlier failures {failures:?} failed: {}", reason(&st)));
        }
        st.failure = None;
        let mut items = st.items(&rest);
        items.extend(left1);
        let f2 = run_basic(Basic::TwoWfdCd, &mut st, items, cfg);
        if f2.is_empty() {
            return Ok(st);
        }
        last_reason = reason(&st);
        if gave_up {
            return Err(format!(
                "{} pre-assigned failures of {failures:?} did not fit; then: {last_reason}",
                h1.name()
            ));
        }
        for it in f2 {
            is_failure[it.task] = true;
        }
    }
    Err(last_reason)
}

/// Reduce periods (§IV-B) over `base`, in the configured [`RpMode`].
pub(crate) fn rp(ts: &TaskSet, m: usize, base: Basic, cfg: &SemiConfig, cache: &mut Round0) -> RunResult {
    match cfg.rp {
        RpMode::Divisor => rp_divisor(ts, m, base, cfg, cache),
        RpMode::Halving => rp_halving(ts, m, base, cfg),
    }
}

fn transformable(ts: &TaskSet) -> Vec<bool> {
    ts.iter().map(|t| t.deadline >= t.period).collect()
}

/// Runs `base` on the set transformed with ratios `ks`: `Ok` on success, else the failed tasks
/// and the reason.
fn run_transformed(
    ts: &TaskSet,
    m: usize,
    base: Basic,
    ks: &[u64],
    cfg: &SemiConfig,
) -> Result<State, (Vec<usize>, String)> {
    let mut st = State::new(m, Spec::all(ts, ks));
    let all: Vec<usize> = (0..ts.len()).collect();
    let items = st.items(&all);
    let f = run_basic(base, &mut st, items, cfg);
    if f.is_empty() {
        Ok(st)
    } else {
        Err((f.iter().map(|it| it.task).collect(), reason(&st)))
    }
}

/// The divisor RP (the artifact's `meta_reduce_periods` with its script's arguments: the
/// paper's period set as candidates, only failed tasks transformed). Round 0 is `base` on the
/// untransformed set. Then one round per candidate `limit ≥ floor`, from the largest down; each
/// starts from the original set and transforms every task that failed in any earlier round and
/// whose original period is at least `limit`: to the largest candidate `p` with
/// `floor ≤ p < limit`, `p | T` and `⌊T/k⌋ ≥ ⌈C/k⌉` (`k = T/p`), else to the smallest candidate
/// `p ≥ limit` with the same properties (possibly `T` itself). A round whose transformed set
/// equals the previous round's is skipped: `base` is deterministic, so it would fail the same
/// way and add no failure.
fn rp_divisor(ts: &TaskSet, m: usize, base: Basic, cfg: &SemiConfig, cache: &mut Round0) -> RunResult {
    let n = ts.len();
    let (f0, why0) = cache.get(ts, m, base, cfg);
    if f0.is_empty() {
        return untransformed(ts, m, base, cfg);
    }
    let ok = transformable(ts);
    let cands = cfg.candidates();
    let floor = cfg.rp_floor;
    let mut failed = vec![false; n];
    for &i in &f0 {
        failed[i] = true;
    }
    let mut last_reason = why0;
    let mut prev = vec![1u64; n];
    let mut ks = vec![1u64; n];
    for (li, &limit) in cands.iter().enumerate().rev() {
        if limit < floor {
            break;
        }
        for i in 0..n {
            ks[i] = 1;
            let (t, c) = (ts[i].period, ts[i].wcet);
            if !ok[i] || !failed[i] || t < limit {
                continue;
            }
            if let Some(p) = divisor_period(t, c, &cands, li, floor) {
                ks[i] = t / p;
            }
        }
        if ks == prev {
            continue;
        }
        match run_transformed(ts, m, base, &ks, cfg) {
            Ok(st) => return Ok(st),
            Err((f, why)) => {
                for i in f {
                    failed[i] = true;
                }
                last_reason = why;
            }
        }
        prev.clone_from(&ks);
    }
    Err(last_reason)
}

/// The divisor RP's new period for a task `(C, T)` in the round of `cands[li]` (`cands`
/// ascending): the largest candidate `p` with `floor ≤ p < cands[li]`, `p | T` and
/// `⌊T/k⌋ ≥ ⌈C/k⌉` (`k = T/p`), else the smallest candidate `p ≥ cands[li]` with the same
/// properties (the artifact's "try smallest period that works"), else none.
fn divisor_period(t: Time, c: Time, cands: &[Time], li: usize, floor: Time) -> Option<Time> {
    let fits = |p: Time| p > 0 && p <= t && t.is_multiple_of(p) && p >= c.div_ceil(t / p);
    let below = cands[..li].iter().rev().take_while(|&&p| p >= floor).copied().find(|&p| fits(p));
    below.or_else(|| cands[li..].iter().copied().find(|&p| fits(p)))
}

/// The halving RP (the text's threshold reading): θ starts at the largest period (at least the
/// floor) and halves each round down to the floor. Each round, every implicit-deadline task
/// whose current period is at least θ gets the smallest `k` with `T/k < θ`, and every task that
/// failed in any earlier round (the set accumulates) at least one more slice than it has;
/// `base` runs from scratch on the transformed set. No transformation lowers a budget below ε
/// (when the WCET allows) or a period below 1 ns.
fn rp_halving(ts: &TaskSet, m: usize, base: Basic, cfg: &SemiConfig) -> RunResult {
    let n = ts.len();
    let ok = transformable(ts);
    let Some(tmax) = ts.iter().zip(&ok).filter(|(_, &ok)| ok).map(|(t, _)| t.period).max() else {
        return Err("no implicit-deadline task to period-transform".into());
    };
    let floor = cfg.rp_floor.max(1);
    let start = tmax.max(floor);
    let mut theta = start;
    let mut ks = vec![1u64; n];
    let mut failed = vec![false; n];
    let mut last_reason = String::from("no placement found");
    loop {
        let mut changed = false;
        for i in 0..n {
            if !ok[i] {
                continue;
            }
            let task = &ts[i];
            if task.period / ks[i] < theta && !failed[i] {
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
        if changed || theta == start {
            match run_transformed(ts, m, base, &ks, cfg) {
                Ok(st) => return Ok(st),
                Err((f, why)) => {
                    last_reason = why;
                    for i in f {
                        failed[i] = true;
                    }
                }
            }
        }
        if theta <= floor {
            return Err(last_reason);
        }
        theta = (theta / 2).max(floor);
    }
}

#[cfg(test)]
mod tests {
    use super::divisor_period;
    use crate::semi::PAPER_PERIODS_NS;

    const MS: u64 = 1_000_000;

    fn at(limit_ms: u64) -> usize {
        PAPER_PERIODS_NS.iter().position(|&p| p == limit_ms * MS).unwrap()
    }

    #[test]
    fn largest_divisor_below_the_limit_then_the_smallest_at_or_above() {
        let c = &PAPER_PERIODS_NS;
        let p = |t: u64, limit: u64, floor: u64| divisor_period(t * MS, MS, c, at(limit), floor * MS).map(|p| p / MS);
        assert_eq!(p(1000, 1000, 2), Some(500));
        assert_eq!(p(1000, 250, 2), Some(200));
        assert_eq!(p(25, 25, 2), Some(5)); // 20, 10, 8 do not divide 25
        assert_eq!(p(125, 100, 4), Some(25)); // 50, 40 do not divide 125
        assert_eq!(p(10, 10, 4), Some(5));
        assert_eq!(p(10, 5, 4), Some(5)); // 4 does not divide 10: the smallest >= 5 that does
        assert_eq!(p(10, 5, 2), Some(2));
        assert_eq!(p(125, 5, 4), Some(5)); // 4 does not divide 125
        assert_eq!(p(333, 250, 2), None); // no candidate divides 333 ms
                                          // Feasibility: a budget of C/k must fit in T/k (in integer ns).
        assert_eq!(divisor_period(10, 10, &[2, 5, 10], 2, 1), Some(5));
        assert_eq!(divisor_period(10, 7, &[3, 5, 10], 2, 1), Some(5));
    }
}
