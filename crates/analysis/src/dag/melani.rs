//! Response-time analysis of sporadic DAG tasks under global fixed priority (G-FP) and global
//! EDF (G-EDF), after Melani, Bertogna, Bonifaci, Marchetti-Spaccamela & Buttazzo, "Response-
//! Time Analysis of Conditional DAG Tasks in Multiprocessor Systems", ECRTS 2015 (the model
//! here has no conditional nodes, so the paper's worst-case workload and longest path are the
//! plain `vol_i` and `len_i`).
//!
//! **Scheduling model.** Node-level preemptive global scheduling on `m` identical cores: a
//! node is ready when all its predecessors have completed; at every instant the (at most) `m`
//! highest-priority ready nodes run. Under G-FP a node has its task's priority (deadline
//! monotonic by default, or any [`Assignment`]; ties to the lower task index, as for the
//! sequential G-FP tests); under G-EDF its job's absolute deadline. Integer time: releases at
//! integer ns, integer WCETs, so every response time is an integer. Constrained deadlines.
//!
//! **Equations** (the paper's Section V–VI; equation numbers were not checked against the
//! paper's text, which was not at hand — the forms below are the ones the open DAG-scheduling
//! tool of Verucchi et al. (`mive93/DAG-scheduling`, `Melani2015.cpp`) implements, restated
//! and checked here):
//!
//! * *Self-interference and critical chain.* While a job of `τ_k` is pending, at every instant
//!   either a node of its critical chain runs or all `m` cores are busy (with other nodes of
//!   the same job or with interfering work). So `m (R_k − len_k) <= (vol_k − len_k) + Σ_i I_i`,
//!   and with integer time
//!
//!   ```text
//!       R_k = len_k + ⌊ (vol_k − len_k + Σ_i I_i(R_k)) / m ⌋            (the RTA recurrence)
//!   ```
//!
//!   iterated from `len_k + ⌊(vol_k − len_k)/m⌋` (a lower bound of its least fixed point).
//!
//! * *Workload of an interfering task in a window of length `L`* (the carry-in job ends at
//!   its response-time bound `R_i`, executing as late as possible at full parallelism `m`,
//!   the later jobs as early as possible):
//!
//!   ```text
//!       W_i(L) = ⌊(L + R_i − vol_i/m) / T_i⌋ vol_i + min(vol_i, m · ((L + R_i − vol_i/m) mod T_i))
//!   ```
//!
//!   computed exactly by multiplying through by `m`: with `X = m (L + R_i) − vol_i`,
//!   `W_i(L) = ⌊X / (m T_i)⌋ vol_i + min(vol_i, X mod (m T_i))`.
//!
//! * *G-FP*: `I_i = W_i(R_k)` for each higher-priority `τ_i`; tasks analysed in priority
//!   order, each with the bounds `R_i` of those above it.
//!
//! * *G-EDF*: every other task interferes, by at most its window workload and at most the
//!   work of its jobs with deadlines no later than the analysed job's (the deadline-based
//!   bound of Bertogna, Cirinei & Lipari, with the carry-in job's work spread over `m` cores
//!   and limited by its slack `D_i − R_i`):
//!
//!   ```text
//!       N_i       = ⌊(D_k − D_i) / T_i⌋ + 1                  (0 when D_k < D_i)
//!       W^D_i(D_k) = N_i vol_i + min(vol_i, m · max(0, D_k − N_i T_i − (D_i − R_i)))
//!       I_i       = min(W_i(R_k), W^D_i(D_k))
//!   ```
//!
//!   The DAG-scheduling tool writes the last term with `D_k mod T_i` in place of
//!   `D_k − N_i T_i`; the two agree when `D_i = T_i` and otherwise `D_k − N_i T_i` is the
//!   smaller (the jobs counted in `N_i` are exactly those released in the window with
//!   deadlines in it; the one before has its deadline at `D_k − N_i T_i` at the latest).
//!   All tasks' bounds are iterated together, each from its lower bound, until a round
//!   changes none (or one exceeds its deadline).
//!
//! **Why iterating upward is sound.** Let `R` be the bounds at the end (each `R_k` the least
//! fixed point given the others, so `R_k >= len_k + ⌊(vol_k − len_k + Σ I_i(R))/m⌋`). Suppose
//! some job exceeds its bound, and let `t*` be the first instant at which a job `J` of `τ_k`,
//! released at `r`, has been pending for `R_k`. Before `t*` no job exceeded its bound, so
//! every job of `τ_i` released before `r` executes in `[r, t*)` only before its release plus
//! `R_i` — the assumption of `W_i` and `W^D_i`. `J` pending at `t*` has run fewer than `len_k`
//! units of its critical chain, so in at least `R_k − len_k + 1` of the `R_k` unit slots of
//! `[r, t*)` all `m` cores ran other work: `m (R_k − len_k + 1) <= vol_k − len_k + Σ I_i(R_k)`,
//! i.e. `R_k + 1 <= len_k + ⌊(vol_k − len_k + Σ I_i(R_k))/m⌋`, contradicting the fixed point. (Under G-FP the
//! higher-priority bounds are final when `τ_k` is analysed; under G-EDF the same argument
//! holds for the joint fixed point.) With `D_k <= T_k` the job's own earlier jobs have
//! finished, so they do not interfere.
//!
//! **Bounded work.** Each step of each fixed-point iteration counts against
//! `Limits::max_steps` (`GaveUp` when reached, reported with the bound). A step is either the
//! plain `x ← f(x)` or, while interfering carry-in terms are still growing at slope `m` (one
//! ns of window per ns), a jump past the stretch on which `f(x) > x` provably holds (see
//! [`least_fixed_point`]); both are lower bounds of the least fixed point, so the result is the
//! plain iteration's (tested).
//!
//! Integer arithmetic throughout (`u128` for every product with `m`); no floats.

use super::precheck;
use crate::global::fp::{Assignment, GfpResult};
use crate::{Limits, Verdict};
use rtsched_model::dag::DagSet;
use rtsched_model::{ModelError, Time};

/// One analysed task's parameters, as the workload bounds need them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Params {
    pub vol: u128,
    pub len: u128,
    pub d: u128,
    pub t: u128,
}

impl Params {
    pub(crate) fn of(set: &DagSet) -> Vec<Params> {
        set.iter()
            .map(|t| Params {
                vol: t.volume() as u128,
                len: t.longest_path() as u128,
                d: t.deadline() as u128,
                t: t.period() as u128,
            })
            .collect()
    }

    /// `len + ⌊(vol − len)/m⌋`: the least value the recurrence can give.
    pub(crate) fn start(&self, m: u128) -> u128 {
        self.len + (self.vol - self.len) / m
    }
}

/// Melani et al.'s window workload `W_i(L)` (module doc) with response-time bound `r`, and
/// how much longer (in units of `1/m` ns of window, i.e. of work) its carry term keeps
/// growing at slope `m`: `(W, ramp)`, `ramp = 0` when flat.
#[inline]
pub(crate) fn window_workload(p: &Params, r: u128, l: u128, m: u128) -> (u128, u128) {
    // X = m (L + R_i) − vol_i >= 0, since m R_i >= m len_i + vol_i − len_i − (m − 1) >= vol_i.
    let x = (m * (l + r)).saturating_sub(p.vol);
    let mt = m * p.t;
    let (q, rem) = (x / mt, x % mt);
    if rem < p.vol {
        (q * p.vol + rem, p.vol - rem)
    } else {
        (q * p.vol + p.vol, 0)
    }
}

/// The deadline-based G-EDF bound `W^D_i(D_k)` (module doc) of task `i` with bound `r_i` on a
/// job of task `k`.
#[inline]
pub(crate) fn deadline_workload(pi: &Params, r_i: u128, dk: u128, m: u128) -> u128 {
    let (di, ti) = (pi.d as i128, pi.t as i128);
    let n = (dk as i128 - di).div_euclid(ti) + 1; // >= 0 since D_k - D_i > -T_i
    let tail = dk as i128 - n * ti - (di - r_i as i128);
    n as u128 * pi.vol + pi.vol.min(m * tail.max(0) as u128)
}

/// Outcome of one task's fixed-point iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fixed {
    Met(u128),
    Missed,
    GaveUp,
}

/// The least fixed point of `x = len + ⌊(vol − len + Ω(x)) / m⌋` from `start` (a lower bound
/// of it), abandoned above `d`. `omega(x, &mut growth)` returns `Ω(x)` and sets `growth` to a
/// `g` such that `Ω(x + δ) >= Ω(x) + m δ` for all `δ <= g` (0 when it cannot say): then
/// `f(x + δ) >= f(x) + δ`, so no fixed point lies in `[x, x + g]` when `f(x) > x`, and
/// `f(x) + g <= f(x + g) <=` the least fixed point is a valid next iterate.
pub(crate) fn least_fixed_point(
    p: &Params,
    start: u128,
    m: u128,
    steps: &mut u64,
    limits: &Limits,
    mut omega: impl FnMut(u128, &mut u128) -> u128,
) -> Fixed {
    let mut x = start;
    if x > p.d {
        return Fixed::Missed;
    }
    loop {
        *steps += 1;
        if limits.exhausted(*steps) {
            return Fixed::GaveUp;
        }
        let mut g = 0u128;
        let next = p.len + (p.vol - p.len + omega(x, &mut g)) / m;
        if next <= x {
            return Fixed::Met(x);
        }
        let nx = next + g;
        if nx > p.d {
            // f(x) > d already, or f(x + g) >= f(x) + g > d: the least fixed point exceeds d.
            return Fixed::Missed;
        }
        x = nx;
    }
}

/// `Ω` of the G-FP recurrence: `Σ_{i in hp} W_i(x)`, with the growth allowance of
/// [`least_fixed_point`]: the terms never decrease and one in its carry ramp grows at slope
/// `m` for `ramp/m` more ns of window, so the sum does too (the largest such stretch).
fn fp_omega(hp: &[(usize, Params, u128)], x: u128, m: u128, growth: &mut u128) -> u128 {
    let mut sum = 0u128;
    let mut g = 0u128;
    for (_, p, r) in hp {
        let (w, ramp) = window_workload(p, *r, x, m);
        sum += w;
        g = g.max(ramp / m);
    }
    *growth = g;
    sum
}

/// The task indices from the highest priority to the lowest under `prio` (the sequential
/// G-FP tests' rule: deadline or rate monotonic, or explicit ranks; ties to the lower index).
pub(crate) fn priority_order(set: &DagSet, prio: &Assignment) -> Result<Vec<usize>, ModelError> {
    prio.order(&set.sequential()?)
}

/// Melani et al.'s G-FP RTA on `m` cores under `prio`: the verdict and per-task bounds
/// (`None` for a task not analysed or above its deadline). `Err` only for an explicit
/// assignment of the wrong length.
pub fn gfp(set: &DagSet, m: u32, prio: &Assignment, limits: &Limits) -> Result<GfpResult, ModelError> {
    gfp_with(set, m, prio, limits, fp_omega)
}

/// The G-FP driver, with the interference sum `omega(hp, x, m, growth)` as a parameter (Fonseca
/// et al.'s variant passes its own); `hp` holds `(task index, parameters, R_i)` of the tasks
/// above the one analysed.
pub(crate) fn gfp_with(
    set: &DagSet,
    m: u32,
    prio: &Assignment,
    limits: &Limits,
    mut omega: impl FnMut(&[(usize, Params, u128)], u128, u128, &mut u128) -> u128,
) -> Result<GfpResult, ModelError> {
    let n = set.len();
    let order = priority_order(set, prio)?;
    if let Some(v) = precheck(set, m) {
        return Ok(GfpResult { verdict: v, response_times: vec![None; n] });
    }
    let ps = Params::of(set);
    let m = m as u128;
    let mut response_times: Vec<Option<Time>> = vec![None; n];
    let mut hp: Vec<(usize, Params, u128)> = Vec::with_capacity(n);
    let mut steps = 0u64;
    for k in order {
        let p = ps[k];
        let fixed = least_fixed_point(&p, p.start(m), m, &mut steps, limits, |x, g| omega(&hp, x, m, g));
        let r = match fixed {
            Fixed::Met(r) => r,
            Fixed::Missed => return Ok(GfpResult { verdict: Verdict::NotSchedulable, response_times }),
            Fixed::GaveUp => return Ok(GfpResult { verdict: Verdict::GaveUp, response_times }),
        };
        response_times[k] = Some(r as Time);
        hp.push((k, p, r));
    }
    Ok(GfpResult { verdict: Verdict::Schedulable, response_times })
}

/// Melani et al.'s G-EDF RTA on `m` cores: the verdict and per-task bounds (all `Some` when
/// schedulable; on a failure, the bounds of the round in progress that were at most their
/// deadlines are not reported: every entry is `None`).
pub fn gedf(set: &DagSet, m: u32, limits: &Limits) -> GfpResult {
    let n = set.len();
    if let Some(v) = precheck(set, m) {
        return GfpResult { verdict: v, response_times: vec![None; n] };
    }
    let ps = Params::of(set);
    let m = m as u128;
    let mut r: Vec<u128> = ps.iter().map(|p| p.start(m)).collect();
    if ps.iter().zip(&r).any(|(p, &r)| r > p.d) {
        return GfpResult { verdict: Verdict::NotSchedulable, response_times: vec![None; n] };
    }
    let mut steps = 0u64;
    loop {
        let mut changed = false;
        for k in 0..n {
            let p = ps[k];
            let fixed = least_fixed_point(&p, r[k], m, &mut steps, limits, |x, growth| {
                let mut sum = 0u128;
                let mut g = 0u128;
                for i in (0..n).filter(|&i| i != k) {
                    let (w, ramp) = window_workload(&ps[i], r[i], x, m);
                    let cap = deadline_workload(&ps[i], r[i], p.d, m);
                    if w < cap {
                        sum += w;
                        // min(W, cap) grows at slope m while W ramps and stays below cap.
                        g = g.max(ramp.min(cap - w) / m);
                    } else {
                        sum += cap;
                    }
                }
                *growth = g;
                sum
            });
            match fixed {
                Fixed::Met(x) => {
                    if x != r[k] {
                        r[k] = x;
                        changed = true;
                    }
                }
                Fixed::Missed => return GfpResult { verdict: Verdict::NotSchedulable, response_times: vec![None; n] },
                Fixed::GaveUp => return GfpResult { verdict: Verdict::GaveUp, response_times: vec![None; n] },
            }
        }
        if !changed {
            break;
        }
    }
    GfpResult { verdict: Verdict::Schedulable, response_times: r.into_iter().map(|x| Some(x as Time)).collect() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::dag::DagTask;

    fn p(vol: u128, len: u128, d: u128, t: u128) -> Params {
        Params { vol, len, d, t }
    }

    #[test]
    fn window_workload_matches_the_rational_formula() {
        // vol 6, T 10, R 5, m 2: L + R − vol/m = L + 2.
        let q = p(6, 3, 10, 10);
        for l in 0..40u128 {
            let x2 = 2 * (l + 5) - 6; // 2 (L + 2)
            let whole = (x2 / 20) * 6;
            let carry = 6.min(x2 % 20);
            assert_eq!(window_workload(&q, 5, l, 2).0, whole + carry, "L = {l}");
        }
        // L = 0: X = 4 → carry 4 (the carry-in job's last 2 ns at full parallelism).
        assert_eq!(window_workload(&q, 5, 0, 2), (4, 2));
        assert_eq!(window_workload(&q, 5, 1, 2), (6, 0));
        assert_eq!(window_workload(&q, 5, 7, 2), (6, 0));
        assert_eq!(window_workload(&q, 5, 8, 2), (6, 6), "the next job's release: ramps again");
        assert_eq!(window_workload(&q, 5, 9, 2), (8, 4), "next job's first ns on 2 cores");
    }

    #[test]
    fn deadline_workload_counts_jobs_with_earlier_deadlines() {
        // D_i = 4, T_i = 10, R_i = 3, vol 5, m = 2, D_k = 20: N = ⌊16/10⌋ + 1 = 2,
        // tail = 20 − 20 − 1 < 0 → 10.
        assert_eq!(deadline_workload(&p(5, 2, 4, 10), 3, 20, 2), 10);
        // D_k = 27: N = 3, tail = 27 − 30 − 1 < 0 → 15; D_k = 24: N = 3 → 15.
        assert_eq!(deadline_workload(&p(5, 2, 4, 10), 3, 27, 2), 15);
        // D_i = T_i = 10, R_i = 6, D_k = 13: N = 1, tail = 13 − 10 − 4 < 0 → 5; D_k = 16:
        // tail 2 → min(5, 4) → 9.
        assert_eq!(deadline_workload(&p(5, 2, 10, 10), 6, 13, 2), 5);
        assert_eq!(deadline_workload(&p(5, 2, 10, 10), 6, 16, 2), 9);
        // D_k < D_i: no job of τ_i has its deadline in the window except a carry-in one.
        // N = 0, tail = 5 − (10 − 6) = 1 → min(5, 2·1).
        assert_eq!(deadline_workload(&p(5, 2, 10, 10), 6, 5, 2), 2);
    }

    /// The plain iteration `x ← f(x)` from `start`.
    fn plain(p: &Params, start: u128, m: u128, f: &dyn Fn(u128) -> u128) -> Option<u128> {
        let mut x = start;
        if x > p.d {
            return None;
        }
        loop {
            let next = p.len + (p.vol - p.len + f(x)) / m;
            if next <= x {
                return Some(x);
            }
            if next > p.d {
                return None;
            }
            x = next;
        }
    }

    #[test]
    fn the_jump_gives_the_plain_iteration_s_fixed_point() {
        let mut next = crate::dag::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut met = 0;
        for _ in 0..20_000 {
            let m = next(4) as u128 + 1;
            let scale = [1u128, 7, 1000][next(3) as usize];
            let hp: Vec<(usize, Params, u128)> = (0..next(5))
                .map(|_| {
                    let t = (next(30) as u128 + 2) * scale;
                    let len = (next(t as u64 / scale as u64) as u128 + 1) * scale;
                    let vol = len + next(3 * t as u64 + 1) as u128 % (m * t - len + 1);
                    let r = p(vol, len, t, t).start(m) + next(t as u64) as u128;
                    (0, p(vol, len, t, t), r)
                })
                .collect();
            let len = (next(10) as u128 + 1) * scale;
            let vol = len + next(40) as u128 * scale;
            let k = p(vol, len, len + next(200) as u128 * scale, 1 << 40);
            let want = plain(&k, k.start(m), m, &|x| hp.iter().map(|(_, q, r)| window_workload(q, *r, x, m).0).sum());
            let got =
                match least_fixed_point(&k, k.start(m), m, &mut 0, &Limits::default(), |x, g| fp_omega(&hp, x, m, g)) {
                    Fixed::Met(r) => Some(r),
                    Fixed::Missed => None,
                    Fixed::GaveUp => panic!("gave up"),
                };
            assert_eq!(got, want, "m {m} k {k:?} hp {hp:?}");
            met += got.is_some() as u32;
        }
        assert!(met > 2_000, "too few fixed points: {met}");
    }

    #[test]
    fn a_small_set_by_hand() {
        // τ0: chain 2 → 2 (vol 4, len 4), T = D = 10. τ1: fork of 3 nodes of 3 (vol 9, len 3),
        // T = D = 12. m = 2, DM: τ0 first. R0 = 4 + 0 = 4.
        // τ1: start 3 + ⌊6/2⌋ = 6; W0(6) with R0 = 4: X = 2·10 − 4 = 16 < 20 → 0·4 + min(4, 16)
        // = 4; f = 3 + ⌊(6 + 4)/2⌋ = 8; W0(8): X = 20 → q = 1, rem 0 → 4; f(8) = 8. R1 = 8.
        let t0 = DagTask::new(10, 10, vec![2, 2], vec![(0, 1)]).unwrap();
        let t1 = DagTask::new(12, 12, vec![3, 3, 3], vec![]).unwrap();
        let set = DagSet::new(vec![t0, t1]);
        let r = gfp(&set, 2, &Assignment::default(), &Limits::default()).unwrap();
        assert_eq!(r.verdict, Verdict::Schedulable);
        assert_eq!(r.response_times, vec![Some(4), Some(8)]);
        // Explicit priorities, τ1 first: R1 = 6; τ0: start 4, W1(4) with R1 = 6: X = 2·10 − 9 =
        // 11 < 24 → min(9, 11) = 9; f = 4 + ⌊9/2⌋ = 8; W1(8): X = 19 → 9; f(8) = 8. R0 = 8.
        let r = gfp(&set, 2, &Assignment::Explicit(vec![2, 1]), &Limits::default()).unwrap();
        assert_eq!(r.response_times, vec![Some(8), Some(6)]);
        assert!(gfp(&set, 2, &Assignment::Explicit(vec![1]), &Limits::default()).is_err());
        // G-EDF: both start at their lower bounds 4 and 6 and interfere both ways.
        let e = gedf(&set, 2, &Limits::default());
        assert_eq!(e.verdict, Verdict::Schedulable);
        // One core: τ1 alone needs 9 + τ0's 4 = 13 > 12.
        assert_eq!(gfp(&set, 1, &Assignment::default(), &Limits::default()).unwrap().verdict, Verdict::NotSchedulable);
        // A step bound that is hit is GaveUp.
        let r = gfp(&set, 2, &Assignment::default(), &Limits::steps(1)).unwrap();
        assert_eq!(r.verdict, Verdict::GaveUp);
        assert_eq!(gedf(&set, 2, &Limits::steps(1)).verdict, Verdict::GaveUp);
        assert_eq!(gedf(&set, 0, &Limits::default()).verdict, Verdict::NotSchedulable);
        assert_eq!(gedf(&DagSet::default(), 1, &Limits::default()).verdict, Verdict::Schedulable);
        let none = gfp(&DagSet::default(), 1, &Assignment::default(), &Limits::default()).unwrap();
        assert_eq!(none.verdict, Verdict::Schedulable);
        // D > T is outside the model: not schedulable, no bounds.
        let arb = DagSet::new(vec![DagTask::new(10, 12, vec![1], vec![]).unwrap()]);
        let r = gfp(&arb, 4, &Assignment::default(), &Limits::default()).unwrap();
        assert_eq!((r.verdict, r.response_times), (Verdict::NotSchedulable, vec![None]));
        assert_eq!(gedf(&arb, 4, &Limits::default()).verdict, Verdict::NotSchedulable);
        assert_eq!(gfp(&set, 0, &Assignment::default(), &Limits::default()).unwrap().verdict, Verdict::NotSchedulable);
    }
}
