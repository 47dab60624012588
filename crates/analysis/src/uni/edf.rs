//! Uniprocessor preemptive EDF, exact.
//!
//! The processor demand criterion (Baruah, Rosier & Howell, Real-Time Systems 2(4), 1990): a
//! sporadic task set is EDF-schedulable on one processor iff `U <= 1` and
//! `h(t) = sum_i dbf_i(t) <= t` for every `t > 0`, where
//! `dbf_i(t) = max(0, floor((t - D_i)/T_i) + 1) * C_i`. It holds for implicit, constrained and
//! arbitrary deadlines. Only absolute deadlines `t = k T_i + D_i` up to a bound `L` need
//! checking (Zhang & Burns, IEEE TC 58(9) 2009, Theorems 1-3):
//!
//! * `L_a = max(D_max, sum_i (T_i - D_i) U_i / (1 - U))` when `U < 1` (George, Rivierre &
//!   Spuri 1996; Zhang & Burns §3). The sum includes the negative terms of tasks with
//!   `D_i > T_i`; this is valid because `D_max >= D_i - T_i` (see `docs/analysis-uni.md`).
//! * `L_b`, the length of the synchronous busy period (Spuri 1996; Zhang & Burns §3), which
//!   also covers `U = 1`.
//!
//! `L = min(L_a, L_b)`. We check deadlines `t <= L` (the papers use `t < L`; including `L`
//! is harmless and saves an argument). [`qpa`] walks downwards from the largest deadline
//! `<= L` by Quick Processor-demand Analysis (Zhang & Burns §4, Theorem 5); [`dbf_brute`]
//! evaluates `h` at every deadline `<= L` and is the test oracle.
//!
//! For `U < 1` QPA walks down from `L_a` while the busy-period iteration runs alongside, and
//! restarts from `L_b` once that is known and lower (about twice the cheaper bound's cost).
//!
//! `L` need only be an upper bound: `L_a` is computed as a rigorous *upper* enclosure in
//! floating point (exact rationals only when the enclosure cannot show `U < 1`), so no float
//! ever decides a verdict. When `L` exceeds `Limits::max_interval` the tests check up to
//! `max_interval` only: a violation found there is a valid `NotSchedulable`, otherwise the
//! answer is `GaveUp`.

use super::{params, P};
use crate::{Limits, Verdict};
use num_bigint::BigInt;
use rayon::prelude::*;
use rtsched_model::exact::{self, Interval, Rational};
use rtsched_model::{ModelError, Task, TaskSet, Time};
use std::cmp::Ordering;

// ---------------------------------------------------------------------------------------
// Exact building blocks on parameter slices.

/// The largest absolute deadline `k T_i + D_i` (`k >= 0`) strictly below `t`, if any.
#[inline]
fn deadline_below(ps: &[P], t: u64) -> Option<u64> {
    let mut best: Option<u64> = None;
    for p in ps {
        if p.d < t {
            let d = p.d + (t - 1 - p.d) / p.t * p.t;
            best = Some(best.map_or(d, |b| b.max(d)));
        }
    }
    best
}

/// `h(t) = sum_i dbf_i(t)` (exact; saturating, which only matters beyond 2^11 huge tasks and
/// then still compares correctly against `t < 2^64`) and the largest absolute deadline strictly below `t` in one pass: both come from
/// the same quotient and remainder of `(t - D_i) / T_i` (one division per task).
#[inline]
fn demand_and_below(ps: &[P], t: u64) -> (u128, Option<u64>) {
    let mut s: u128 = 0;
    let mut below: u64 = 0;
    let mut any = false;
    for p in ps {
        if t >= p.d {
            let x = t - p.d;
            let (q, r) = (x / p.t, x % p.t);
            s = s.saturating_add((q + 1) as u128 * p.c as u128);
            // Deadlines of this task below t: d + k T for k < q, and k = q when r > 0.
            if r > 0 {
                below = below.max(t - r);
                any = true;
            } else if q > 0 {
                below = below.max(t - p.t);
                any = true;
            }
        }
    }
    (s, any.then_some(below))
}

fn util_interval(ps: &[P]) -> Interval {
    ps.iter().fold(Interval::point(0.0), |acc, p| acc.add(Interval::ratio(p.c as u128, p.t as u128)))
}

fn util_exact(ps: &[P]) -> Rational {
    ps.iter().fold(exact::zero(), |acc, p| acc + exact::ratio(p.c as u128, p.t as u128))
}

/// Exact comparison of `U = sum C_i/T_i` with 1.
pub(crate) fn cmp_util_one(ps: &[P]) -> Ordering {
    let u = util_interval(ps);
    if u.hi < 1.0 {
        Ordering::Less
    } else if u.lo > 1.0 {
        Ordering::Greater
    } else {
        util_exact(ps).cmp(&exact::one())
    }
}

/// `L_a` rounded up, as an upper bound; requires `U < 1` (exactly). Saturates at `u64::MAX`.
fn bound_la(ps: &[P]) -> u64 {
    let dmax = ps.iter().map(|p| p.d).max().unwrap_or(0);
    // S = sum (T_i - D_i) C_i / T_i, signed.
    let mut pos = Interval::point(0.0);
    let mut neg = Interval::point(0.0);
    for p in ps {
        if p.t > p.d {
            pos = pos.add(Interval::ratio((p.t - p.d) as u128 * p.c as u128, p.t as u128));
        } else if p.d > p.t {
            neg = neg.add(Interval::ratio((p.d - p.t) as u128 * p.c as u128, p.t as u128));
        }
    }
    let s = pos.sub(neg);
    if s.hi <= 0.0 {
        return dmax;
    }
    let slack = Interval::point(1.0).sub(util_interval(ps));
    let upper = if slack.lo > 0.0 {
        // Upper bound of S / (1 - U): the largest numerator over the smallest denominator.
        let q = s.hi / slack.lo;
        let q = q.next_up();
        if q.is_finite() && q < 1.8e19 {
            Some(q.ceil() as u64)
        } else {
            None
        }
    } else {
        None
    };
    let la = match upper {
        Some(v) => v,
        None => {
            // The enclosure of 1 - U touches 0: compute exactly (rare: U within ~1e-15 of 1).
            let mut s = exact::zero();
            for p in ps {
                let num = BigInt::from(p.t as i128 - p.d as i128) * BigInt::from(p.c);
                s += Rational::new(num, BigInt::from(p.t));
            }
            let q = s / (exact::one() - util_exact(ps));
            u64::try_from(exact::ceil_u128(&q)).unwrap_or(u64::MAX)
        }
    };
    la.max(dmax)
}

/// Outcome of the synchronous busy-period iteration.
enum Busy {
    /// The busy period length.
    Len(u64),
    /// It reaches at least the cap (the iteration was stopped there).
    AtLeast,
    /// The step budget ran out.
    OutOfSteps,
}

/// `w_0 = sum C_i`, `w_{k+1} = sum ceil(w_k / T_i) C_i` until a fixed point; stops once
/// `w >= cap`. Requires `U <= 1` for termination (guaranteed then, by `cap` otherwise).
fn busy_iter(ps: &[P], cap: u64, steps: &mut u64, limits: &Limits) -> Busy {
    let mut w: u128 = ps.iter().fold(0u128, |a, p| a + p.c as u128);
    loop {
        if w >= cap as u128 {
            return Busy::AtLeast;
        }
        if *steps >= limits.max_steps || limits.stop.requested() {
            return Busy::OutOfSteps;
        }
        *steps += 1;
        let w64 = w as u64;
        let next = ps.iter().fold(0u128, |a, p| a.saturating_add(w64.div_ceil(p.t) as u128 * p.c as u128));
        if next == w {
            return Busy::Len(w64);
        }
        w = next;
    }
}

/// The interval to check: `(L, truncated)` where `truncated` means the true bound exceeds
/// `limits.max_interval` and `L = max_interval`. Requires `U <= 1` (exactly).
fn analysis_bound(ps: &[P], u_cmp: Ordering, limits: &Limits, steps: &mut u64) -> Result<(u64, bool), Verdict> {
    let la = if u_cmp == Ordering::Less { Some(bound_la(ps)) } else { None };
    let cap = la.unwrap_or(u64::MAX).min(limits.max_interval);
    let l = match busy_iter(ps, cap, steps, limits) {
        Busy::Len(lb) => lb.min(la.unwrap_or(u64::MAX)),
        Busy::AtLeast => la.unwrap_or(u64::MAX),
        Busy::OutOfSteps => match la {
            Some(la) => la,
            None => return Err(Verdict::GaveUp),
        },
    };
    if l > limits.max_interval {
        Ok((limits.max_interval, true))
    } else {
        Ok((l, false))
    }
}

// ---------------------------------------------------------------------------------------
// Public tests.

/// The synchronous busy period could not be computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BusyPeriodError {
    /// `U > 1`: the processor never idles.
    Overloaded,
    /// `Limits::max_steps` iterations or `Limits::max_interval` ns were reached first.
    LimitReached,
}

/// Length of the synchronous busy period `L_b` (the smallest `w > 0` with
/// `w = sum ceil(w/T_i) C_i`); 0 for an empty set. Exact integer iteration.
pub fn busy_period(ts: &TaskSet, limits: &Limits) -> Result<Time, BusyPeriodError> {
    let ps = params(ts);
    if cmp_util_one(&ps) == Ordering::Greater {
        return Err(BusyPeriodError::Overloaded);
    }
    let mut steps = 0;
    match busy_iter(&ps, limits.max_interval.saturating_add(1), &mut steps, limits) {
        Busy::Len(l) => Ok(l),
        _ => Err(BusyPeriodError::LimitReached),
    }
}

/// The utilization / density test.
///
/// * Implicit deadlines: `U <= 1`, exact (Liu & Layland, JACM 1973).
/// * Otherwise: the density test `sum C_i / min(D_i, T_i) <= 1`, which is sufficient only:
///   `NotSchedulable` then means "not proven". It is exact when every `D_i >= T_i` (then the
///   density equals `U` and `dbf_i(t) <= U_i t`).
///
/// Exact: decided by the interval filter, rationals on near-ties.
pub fn utilization_test(ts: &TaskSet) -> Verdict {
    Verdict::from_bool(exact::decide(
        || ts.density_interval().le(Interval::point(1.0)),
        || ts.density() <= exact::one(),
    ))
}

/// QPA on parameters (see the module doc). Shortcuts, all exact: `U > 1` → no;
/// some `C_i > D_i` → no; every `D_i >= T_i` and `U <= 1` → yes (`h(t) <= U t`).
pub(crate) fn qpa_params(ps: &[P], limits: &Limits) -> Verdict {
    if ps.is_empty() {
        return Verdict::Schedulable;
    }
    let u_cmp = cmp_util_one(ps);
    if u_cmp == Ordering::Greater || ps.iter().any(|p| p.c > p.d) {
        return Verdict::NotSchedulable;
    }
    if ps.iter().all(|p| p.d >= p.t) {
        return Verdict::Schedulable;
    }
    let mut steps = 0u64;
    let max_steps = limits.max_steps;
    // For U < 1, QPA starts from L_a at once and the busy-period iteration runs alongside it,
    // one step each in turn: once L_b is known and below the current t, QPA restarts from the
    // largest deadline <= L_b. The cost is then about twice the cheaper of the two bounds.
    // For U = 1 only L_b exists and is computed first.
    let (l, mut truncated, mut busy) = if u_cmp == Ordering::Less {
        let la = bound_la(ps);
        let w0 = ps.iter().fold(0u128, |a, p| a + p.c as u128);
        (la.min(limits.max_interval), la > limits.max_interval, Some(w0))
    } else {
        match analysis_bound(ps, u_cmp, limits, &mut steps) {
            Ok((l, tr)) => (l, tr, None),
            Err(v) => return v,
        }
    };
    let dmin = ps.iter().map(|p| p.d).min().unwrap_or(0);
    // Verified every deadline in (t, L]; decide what "nothing left to check" means.
    let finish = |truncated: bool, steps: &mut u64| -> Verdict {
        if !truncated {
            return Verdict::Schedulable;
        }
        // [0, max_interval] is clean; schedulable iff L_b <= max_interval.
        match busy_iter(ps, limits.max_interval.saturating_add(1), steps, limits) {
            Busy::Len(_) => Verdict::Schedulable,
            _ => Verdict::GaveUp,
        }
    };
    // Largest deadline <= L.
    let mut t = match deadline_below(ps, l.saturating_add(1)) {
        Some(t) => t,
        None => return finish(truncated, &mut steps),
    };
    loop {
        if let Some(w) = busy {
            if w >= t as u128 {
                busy = None; // L_b >= t: it cannot shorten the walk any more.
            } else {
                if steps >= max_steps || limits.stop.requested() {
                    return Verdict::GaveUp;
                }
                steps += 1;
                let w64 = w as u64;
                let next = ps.iter().fold(0u128, |a, p| a.saturating_add(w64.div_ceil(p.t) as u128 * p.c as u128));
                if next == w {
                    // L_b = w < t <= max_interval.
                    busy = None;
                    truncated = false;
                    t = match deadline_below(ps, w64 + 1) {
                        Some(d) => d,
                        None => return Verdict::Schedulable,
                    };
                } else {
                    busy = Some(next);
                }
            }
        }
        if steps >= max_steps || limits.stop.requested() {
            return Verdict::GaveUp;
        }
        steps += 1;
        let (h, below) = demand_and_below(ps, t);
        if h > t as u128 {
            return Verdict::NotSchedulable;
        }
        if h <= dmin as u128 {
            return finish(truncated, &mut steps);
        }
        if h < t as u128 {
            t = h as u64;
        } else {
            t = match below {
                Some(d) => d,
                None => return finish(truncated, &mut steps),
            };
        }
    }
}

/// The processor demand criterion decided by QPA (Zhang & Burns 2009, Theorem 5): exact for
/// implicit, constrained and arbitrary deadlines.
///
/// Every `h(t)` evaluation and every busy-period iteration is one step of
/// `limits.max_steps`; reaching it gives `GaveUp`. If the bound `L` exceeds
/// `limits.max_interval`, only `t <= max_interval` is examined (`NotSchedulable` if a
/// violation is found there, else `GaveUp`).
pub fn qpa(ts: &TaskSet, limits: &Limits) -> Verdict {
    // The exact shortcuts of `qpa_params` without copying the parameters: the whole answer
    // for implicit (and all-`D >= T`) sets whose utilization enclosure decides.
    let mut u = Interval::point(0.0);
    let mut all_d_ge_t = true;
    for t in ts {
        if t.wcet > t.deadline {
            return Verdict::NotSchedulable;
        }
        u = u.add(t.utilization_interval());
        all_d_ge_t &= t.deadline >= t.period;
    }
    if u.lo > 1.0 {
        return Verdict::NotSchedulable;
    }
    if all_d_ge_t && u.hi <= 1.0 {
        return Verdict::Schedulable;
    }
    qpa_params(&params(ts), limits)
}

/// The same criterion by brute force: `U > 1` → `NotSchedulable`; else `h(t) <= t` is
/// checked at every absolute deadline `t <= L` (the same `L` as [`qpa`]), with `h` computed
/// by [`Task::dbf`]. The oracle for [`qpa`]; one step per deadline.
pub fn dbf_brute(ts: &TaskSet, limits: &Limits) -> Verdict {
    let ps = params(ts);
    if ps.is_empty() {
        return Verdict::Schedulable;
    }
    let u_cmp = cmp_util_one(&ps);
    if u_cmp == Ordering::Greater {
        return Verdict::NotSchedulable;
    }
    let mut steps = 0u64;
    let (l, truncated) = match analysis_bound(&ps, u_cmp, limits, &mut steps) {
        Ok(b) => b,
        Err(v) => return v,
    };
    for task in ts.iter() {
        let mut d = task.deadline;
        while d <= l {
            if steps >= limits.max_steps || limits.stop.requested() {
                return Verdict::GaveUp;
            }
            steps += 1;
            let h = ts.iter().fold(0u128, |a, x| a.saturating_add(x.dbf(d)));
            if h > d as u128 {
                return Verdict::NotSchedulable;
            }
            d = match d.checked_add(task.period) {
                Some(n) => n,
                None => break,
            };
        }
    }
    if truncated {
        Verdict::GaveUp
    } else {
        Verdict::Schedulable
    }
}

/// [`utilization_test`] over many task sets in parallel (rayon).
pub fn utilization_test_many(sets: &[TaskSet]) -> Vec<Verdict> {
    sets.par_iter().map(utilization_test).collect()
}

/// [`qpa`] over many task sets in parallel (rayon).
pub fn qpa_many(sets: &[TaskSet], limits: &Limits) -> Vec<Verdict> {
    sets.par_iter().map(|ts| qpa(ts, limits)).collect()
}

/// [`dbf_brute`] over many task sets in parallel (rayon).
pub fn dbf_brute_many(sets: &[TaskSet], limits: &Limits) -> Vec<Verdict> {
    sets.par_iter().map(|ts| dbf_brute(ts, limits)).collect()
}

// ---------------------------------------------------------------------------------------
// Incremental admission.

/// One processor's EDF task set, for partitioning: answers "does this task fit too?" by the
/// exact test, cheapest check first: `U > 1` → no; every `D >= T` (e.g. all implicit) and
/// `U <= 1` → yes; otherwise QPA on the processor's tasks plus the candidate.
#[derive(Debug, Clone)]
pub struct EdfBin {
    tasks: Vec<P>,
    /// Enclosure of the running utilization (recomputed exactly when it cannot decide).
    u: Interval,
    all_d_ge_t: bool,
}

impl Default for EdfBin {
    fn default() -> Self {
        EdfBin::new()
    }
}

impl EdfBin {
    pub fn new() -> EdfBin {
        EdfBin { tasks: Vec::new(), u: Interval::point(0.0), all_d_ge_t: true }
    }

    /// Number of tasks on this processor.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Exact utilization of the processor.
    pub fn utilization(&self) -> Rational {
        util_exact(&self.tasks)
    }

    /// Rigorous enclosure of the processor's utilization.
    pub fn utilization_interval(&self) -> Interval {
        self.u
    }

    /// Whether `task` can be added with the processor still EDF-schedulable: `Schedulable`
    /// yes, `NotSchedulable` no, `GaveUp` when QPA hit `limits` (treat as no). An invalid
    /// task (a parameter 0 or above `MAX_TIME`) is an error.
    pub fn fits(&self, task: &Task, limits: &Limits) -> Result<Verdict, ModelError> {
        task.validate()?;
        Ok(self.fits_p(P::of(task), limits))
    }

    pub(crate) fn fits_p(&self, p: P, limits: &Limits) -> Verdict {
        if p.c > p.d {
            return Verdict::NotSchedulable;
        }
        let u = self.u.add(Interval::ratio(p.c as u128, p.t as u128));
        if u.lo > 1.0 {
            return Verdict::NotSchedulable;
        }
        let all_d_ge_t = self.all_d_ge_t && p.d >= p.t;
        if all_d_ge_t && u.hi <= 1.0 {
            // Decided by the enclosure, without copying the processor's tasks: partitioning
            // thousands of tasks tests every almost-full processor again and again.
            return Verdict::Schedulable;
        }
        let mut ps = Vec::with_capacity(self.tasks.len() + 1);
        ps.extend_from_slice(&self.tasks);
        ps.push(p);
        if all_d_ge_t {
            return Verdict::from_bool(cmp_util_one(&ps) != Ordering::Greater);
        }
        qpa_params(&ps, limits)
    }

    /// Adds `task` unconditionally (call [`EdfBin::fits`] first).
    pub fn push(&mut self, task: &Task) -> Result<(), ModelError> {
        task.validate()?;
        self.push_p(P::of(task));
        Ok(())
    }

    pub(crate) fn push_p(&mut self, p: P) {
        self.u = self.u.add(Interval::ratio(p.c as u128, p.t as u128));
        self.all_d_ge_t &= p.d >= p.t;
        self.tasks.push(p);
    }

    /// Adds `task` iff it fits; returns the admission verdict.
    pub fn try_add(&mut self, task: &Task, limits: &Limits) -> Result<Verdict, ModelError> {
        let v = self.fits(task, limits)?;
        if v == Verdict::Schedulable {
            self.push_p(P::of(task));
        }
        Ok(v)
    }
}
