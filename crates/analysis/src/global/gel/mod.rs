//! Response-time and lateness bounds for G-EDF-like (GEL) schedulers: G-EDF and G-FL.
//!
//! J. P. Erickson, J. H. Anderson, "Fair lateness scheduling: reducing maximum lateness in
//! G-EDF-like soft real-time systems", ECRTS 2012 (journal version with B. C. Ward,
//! Real-Time Systems 50(1), 2014), built on the compliant vectors of J. P. Erickson,
//! U. Devi, S. K. Baruah, "Improved tardiness bounds for global EDF", ECRTS 2010, and on the
//! piecewise-linear analysis of J. P. Erickson, N. Guan, S. K. Baruah, "Tardiness bounds for
//! global EDF with deadlines different from periods", OPODIS 2010 (also Erickson's
//! dissertation, UNC 2014).
//!
//! **Scheduler.** A GEL scheduler gives each task a *relative priority point* `Y_i`; a job
//! released at `r` has priority point `r + Y_i`, and at every instant the (at most) `m`
//! pending jobs with the earliest priority points run (ties: lower task index first).
//! [`Scheduler::Gedf`] is `Y_i = D_i`; [`Scheduler::Gfl`] (global fair lateness) is
//! `Y_i = D_i - (m-1)/m · C_i` (a rational; compared exactly).
//!
//! **Analysis** (notation of Erickson & Anderson, ECRTS 2012). Lowering every `Y_i` by the
//! same amount changes no scheduling decision, so the analysis uses `Y'_i = Y_i - min_j Y_j`
//! (shown there to improve the bounds). With `U_i = C_i/T_i`, `U = Σ U_i` and
//!
//! ```text
//!     S_i  = C_i · max(0, 1 - Y'_i / T_i)          S = Σ S_i
//!     x_i  = s - C_i/m
//!     G(s) = the sum of the ceil(U) - 1 largest values of  x_i U_i + C_i - S_i
//!     M(s) = G(s) + S - m·s
//! ```
//!
//! any `s` with `M(s) <= 0` makes `x⃗` compliant, and every job of `τ_i` then completes
//! within `Y'_i + x_i + C_i = Y'_i + s - C_i/m + C_i` of its release (Erickson & Anderson,
//! ECRTS 2012, Theorem 1 with Erickson, Devi & Baruah's compliant-vector condition). Its
//! lateness (completion minus absolute deadline) is that minus `D_i`. `M` is convex (a maximum
//! of sums of lines), strictly decreasing (its slope is a sum of at most `ceil(U) - 1 <= m - 1`
//! utilizations, each at most 1, minus `m`) and positive at `s = 0` (each chosen line is at
//! least `C_i (1 - U_i/m) - S_i > -S_i`), so it has one root `s* > 0`, the least `s` allowed.
//!
//! **Solving for `s`** ([`Solve`]):
//! * `Exact`: the root `s*` in exact rationals ([`rtsched_model::exact`]). At any `s`, the
//!   lines that are largest there give a supporting line of the convex `M`; its root is
//!   `<= s*`, and `> s` while `M(s) > 0` (Newton's method on a convex piecewise-linear
//!   function). The iterates increase through roots of distinct line subsets and stop exactly
//!   at `s*` (`M(s) = 0`). The iteration runs in floats first; the exact one starts from the
//!   root of the line subset the floats end with (a lower bound of `s*` whatever the float
//!   errors) and usually confirms it in one step. Each exact step is one `Limits` step.
//!   (SchedCAT sweeps the intersections of the lines instead; the root is the same.) The
//!   `ceil(U) - 1` largest lines are chosen by a float filter, with an exact comparison
//!   whenever the filter cannot separate them.
//! * `BinarySearch { rounds }`: the variant SchedCAT also offers: from `[0, 1]` ns, double the
//!   upper end while `M > 0`, then halve `[lo, hi]` `rounds` times keeping `M(hi) <= 0`; `s =
//!   hi` (exact dyadic rationals, so `M(hi) <= 0` holds exactly). Its bounds are never below
//!   the exact ones.
//!
//! **Reported.** Per task, the response-time bound `ceil(Y'_i + s - C_i/m + C_i)` in integer
//! ns (rounded **up** once, from the exact value), and the lateness bound as that integer
//! minus `D_i` (so possibly negative). Under G-FL, `Y'_i - C_i/m + C_i = D_i - min_j Y_j`, so
//! every task gets the same lateness bound `ceil(s - min_j Y_j)` (the "fair" in its name).
//!
//! **Model and admission.** Sporadic tasks with `C_i <= T_i` and `D_i <= T_i` (implicit or
//! constrained deadlines; `C_i > D_i` is allowed: lateness is bounded all the same), integer
//! time. Bounded iff `U <= m` (exact) and every `U_i <= 1`; otherwise, or with some
//! `D_i > T_i` (outside this implementation's model) or `m = 0`: `NotSchedulable` and no
//! bounds. The empty set: `Schedulable` with no bounds to report. `Schedulable` here means
//! *bounded lateness*, as for `gedf_srt`, not that deadlines are met.
//!
//! **Where SchedCAT differs** (pinned by tests in `tests/global_gel.rs`): its G-FL rounds
//! `(m-1)/m · C_i` down to an integer (a slightly different scheduler and bound); with `m = 1`
//! and every `Y_i = T_i` it reports `T_i` (uniprocessor EDF meets implicit deadlines) instead
//! of the paper's bound, which there is `T_i - T_min + U·T_min <= T_i` before rounding up.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive, Zero};
use rayon::prelude::*;
use rtsched_model::exact::{self, Interval, Rational};
use rtsched_model::TaskSet;

use crate::{Limits, Verdict};

/// The GEL schedulers with a built-in priority-point rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheduler {
    /// `Y_i = D_i`.
    Gedf,
    /// `Y_i = D_i - (m-1)/m · C_i` (Erickson & Anderson, ECRTS 2012).
    Gfl,
}

impl Scheduler {
    pub const ALL: [Scheduler; 2] = [Scheduler::Gedf, Scheduler::Gfl];

    /// The test name (`gel_pl_gedf`, `gel_pl_gfl`).
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::Gedf => "gel_pl_gedf",
            Scheduler::Gfl => "gel_pl_gfl",
        }
    }

    pub fn from_name(s: &str) -> Option<Scheduler> {
        Scheduler::ALL.into_iter().find(|t| t.name() == s)
    }

    /// The priority points on `m` processors as exact fractions `(numerators, denominator)`:
    /// `Y_i = num[i] / den`.
    pub fn priority_points(self, ts: &TaskSet, m: u32) -> PriorityPoints {
        match self {
            Scheduler::Gedf => PriorityPoints { num: ts.iter().map(|t| t.deadline as i128).collect(), den: 1 },
            Scheduler::Gfl => {
                let m = m.max(1) as i128;
                PriorityPoints {
                    num: ts.iter().map(|t| m * t.deadline as i128 - (m - 1) * t.wcet as i128).collect(),
                    den: m as u64,
                }
            }
        }
    }
}

/// Relative priority points `Y_i = num[i] / den` (`den >= 1`), one per task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorityPoints {
    pub num: Vec<i128>,
    pub den: u64,
}

/// How the least `s` is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Solve {
    /// The exact root of the piecewise-linear `M(s)`.
    #[default]
    Exact,
    /// SchedCAT's binary search with this many halvings (an upper bound on the root).
    BinarySearch { rounds: u32 },
}

/// Bounds of one task set (task order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GelBounds {
    /// The `s` used (exact; not necessarily in lowest terms).
    pub s: Rational,
    /// Response-time bounds, ns, rounded up.
    pub response_times: Vec<u64>,
    /// Lateness bounds `response_times[i] - D_i`, ns.
    pub lateness: Vec<i64>,
}

/// The verdict (`Schedulable`: lateness is bounded) and the bounds of a GEL scheduler.
pub fn analyze(sched: Scheduler, ts: &TaskSet, m: u32, solve: Solve, limits: &Limits) -> (Verdict, Option<GelBounds>) {
    let pp = sched.priority_points(ts, m);
    analyze_with_points(ts, m, &pp, solve, limits)
}

/// [`analyze`]'s verdict and response-time bounds only (the report's form): `None` bounds
/// when not bounded or when the analysis gave up.
pub fn response_times(sched: Scheduler, ts: &TaskSet, m: u32, limits: &Limits) -> (Verdict, Option<Vec<u64>>) {
    let (v, b) = analyze(sched, ts, m, Solve::Exact, limits);
    (v, b.map(|b| b.response_times))
}

/// [`analyze`]'s verdict over many task sets in parallel (rayon); results in input order.
pub fn test_many(sched: Scheduler, sets: &[TaskSet], m: u32, limits: &Limits) -> Vec<Verdict> {
    sets.par_iter().map(|ts| analyze(sched, ts, m, Solve::Exact, limits).0).collect()
}

/// The GEL analysis for any priority points (one per task; panics if the lengths differ or
/// `den == 0`).
pub fn analyze_with_points(
    ts: &TaskSet,
    m: u32,
    pp: &PriorityPoints,
    solve: Solve,
    limits: &Limits,
) -> (Verdict, Option<GelBounds>) {
    assert_eq!(pp.num.len(), ts.len(), "one priority point per task");
    assert!(pp.den >= 1, "priority-point denominator must be positive");
    if m == 0 || ts.iter().any(|t| t.wcet > t.period || t.deadline > t.period) {
        return (Verdict::NotSchedulable, None);
    }
    if ts.is_empty() {
        let none = GelBounds { s: exact::zero(), response_times: Vec::new(), lateness: Vec::new() };
        return (Verdict::Schedulable, Some(none));
    }
    // U <= m and ceil(U) from a rigorous float enclosure, exactly where it cannot decide.
    let u = ts.utilization_interval();
    let fits = match u.le(Interval::int(m as u128)) {
        Some(b) => b,
        None => match ts.utilization_sum(&limits.stop) {
            Some(sum) => sum <= exact::int(m as i128),
            None => return (Verdict::GaveUp, None),
        },
    };
    if !fits {
        return (Verdict::NotSchedulable, None);
    }
    // ceil(U) - 1 lines, at most m - 1.
    let Some(ceil_u) = super::srt::ceil_utilization(ts, u, &limits.stop) else { return (Verdict::GaveUp, None) };
    let k = (ceil_u as usize).saturating_sub(1);
    let sys = Lines::new(ts, m, pp, k);
    let mut steps = 0u64;
    let s = match solve {
        Solve::Exact => sys.exact_root(&mut steps, limits),
        Solve::BinarySearch { rounds } => sys.binary_search(rounds, &mut steps, limits),
    };
    let Some(s) = s else { return (Verdict::GaveUp, None) };
    let b = sys.bounds(ts, s);
    (Verdict::Schedulable, Some(b))
}

/// The lines `y_i + U_i s` (with `y_i = C_i - C_i U_i/m - S_i`), `S` and what the bounds need.
struct Lines {
    m: u64,
    k: usize,
    y: Vec<Rational>,
    u: Vec<Rational>,
    yf: Vec<f64>,
    uf: Vec<f64>,
    /// The largest `C_i`: `yf` is a difference of terms up to about `3 C_i` (see `top`).
    cmax: f64,
    total_s: Rational,
    /// `m·q·(Y'_i - C_i/m + C_i)`, integer; the response-time bound is `s + a_i/(m q)`.
    a: Vec<BigInt>,
    q: u64,
}

impl Lines {
    fn new(ts: &TaskSet, m: u32, pp: &PriorityPoints, k: usize) -> Lines {
        let (m, q) = (m as u64, pp.den);
        let pmin = pp.num.iter().copied().min().unwrap_or(0);
        let big = |x: u128| BigInt::from(x);
        let mut y = Vec::with_capacity(ts.len());
        let mut u = Vec::with_capacity(ts.len());
        let mut a = Vec::with_capacity(ts.len());
        let mut s_terms: Vec<(BigInt, BigInt)> = Vec::with_capacity(ts.len());
        let (mut yf, mut uf) = (Vec::with_capacity(ts.len()), Vec::with_capacity(ts.len()));
        for (t, &p) in ts.iter().zip(&pp.num) {
            let (c, tp) = (t.wcet as u128, t.period as u128);
            // P'_i = q Y'_i >= 0 (an integer); max(0, q T_i - P'_i) = q T_i S_i / C_i.
            let p_shift = BigInt::from(p) - BigInt::from(pmin);
            let qt = big(q as u128 * tp);
            let head = (&qt - &p_shift).max(BigInt::zero());
            // S_i = C_i · head / (q T_i)
            s_terms.push((big(c) * &head, qt.clone()));
            // y_i = C_i (m q T_i - q C_i - m head) / (m q T_i)
            let mq = big(m as u128 * q as u128);
            let num = big(c) * (&mq * big(tp) - big(q as u128 * c) - big(m as u128) * &head);
            // Floats for the filter of `top` (a few roundings each; its tolerance covers them);
            // the exact values unreduced: only the few chosen lines are ever summed.
            let (cf, mqt) = (c as f64, (m * q) as f64 * tp as f64);
            yf.push(cf * (mqt - q as f64 * cf - m as f64 * head.to_f64().unwrap_or(f64::NAN)) / mqt);
            uf.push(cf / tp as f64);
            y.push(Rational::new_raw(num, &mq * big(tp)));
            u.push(Rational::new_raw(big(c), big(tp)));
            // m q (Y'_i + C_i - C_i/m) = m P'_i + q (m - 1) C_i
            a.push(big(m as u128) * &p_shift + big(q as u128 * (m as u128 - 1) * c));
        }
        // Σ S_i without a gcd per addition where the terms fit (exact::sum_ratios).
        let small: Option<Vec<(u128, u128)>> =
            s_terms.iter().map(|(n, d)| Some((n.to_u128()?, d.to_u128()?))).collect();
        let total_s = match small.and_then(|t| exact::sum_ratios(t, &rtsched_model::Stop::never())) {
            Some(sum) => sum,
            None => s_terms.into_iter().fold(exact::zero(), |acc, (n, d)| acc + Rational::new(n, d)),
        };
        let cmax = ts.iter().map(|t| t.wcet as f64).fold(0.0, f64::max);
        Lines { m, k, y, u, yf, uf, cmax, total_s, a, q }
    }

    /// The indices of `k` lines that are largest at `s` (exact: any choice among equal values
    /// gives the same sum).
    fn top(&self, s: &Rational) -> Vec<usize> {
        let n = self.y.len();
        let mut idx: Vec<usize> = (0..n).collect();
        if self.k == 0 {
            return Vec::new();
        }
        if self.k >= n {
            return idx;
        }
        let sf = s.to_f64().unwrap_or(f64::NAN);
        let vf: Vec<f64> = (0..n).map(|i| self.yf[i] + self.uf[i] * sf).collect();
        if vf.iter().all(|v| v.is_finite()) {
            idx.sort_unstable_by(|&i, &j| vf[j].total_cmp(&vf[i]).then(i.cmp(&j)));
            // `yf_i` is `C_i (m q T_i - q C_i - m head_i) / (m q T_i)` after a few roundings of
            // terms at most `3 C_i` in size, `uf_i` and `s` are correctly rounded, and
            // `v_i = y_i + U_i s` adds two more: `v_i` is within a few ulps of
            // `3 C_max + U_i |s|` of the exact value. A gap above 1e-10 of the largest such
            // magnitude separates the chosen lines from the rest exactly.
            let scale = (0..n)
                .fold(f64::MIN_POSITIVE, |acc, i| acc.max(3.0 * self.cmax + self.yf[i].abs() + self.uf[i] * sf.abs()));
            if vf[idx[self.k - 1]] - vf[idx[self.k]] > 1e-10 * scale {
                idx.truncate(self.k);
                return idx;
            }
        }
        let v: Vec<Rational> = (0..n).map(|i| &self.y[i] + &self.u[i] * s).collect();
        idx.sort_by(|&i, &j| v[j].cmp(&v[i]).then(i.cmp(&j)));
        idx.truncate(self.k);
        idx
    }

    /// `(Σ y_i, Σ U_i)` over the lines `idx`.
    fn sums(&self, idx: &[usize]) -> (Rational, Rational) {
        let mut sy = exact::zero();
        let mut su = exact::zero();
        for &i in idx {
            sy += &self.y[i];
            su += &self.u[i];
        }
        (sy, su)
    }

    /// `M(s)`, exact.
    fn m_of(&self, s: &Rational) -> Rational {
        let (sy, su) = self.sums(&self.top(s));
        sy + su * s + &self.total_s - exact::int(self.m as i128) * s
    }

    /// The root of `M` (see the module doc); `None` once `limits` are exhausted.
    ///
    /// Newton's method runs in floats first; the root `s_K` of the supporting line of the
    /// subset `K` it ends with is a lower bound of `s*` (`G(s) >=` the sum of any `K`'s lines,
    /// so `M(s_K) >= 0`), so the exact iteration starts there, and its first step confirms
    /// `s* = s_K` when the exactly largest lines at `s_K` are `K`. Float errors can only cost
    /// more exact steps.
    fn exact_root(&self, steps: &mut u64, limits: &Limits) -> Option<Rational> {
        let mut set = self.float_candidate();
        let mut s = self.line_root(&set);
        loop {
            *steps += 1;
            if limits.exhausted(*steps) {
                return None;
            }
            let mut top = self.top(&s);
            top.sort_unstable();
            if top == set {
                return Some(s); // M(s) = 0: the lines that give s are the largest there
            }
            let next = self.line_root(&top);
            if next <= s {
                return Some(s);
            }
            s = next;
            set = top;
        }
    }

    /// The root `(S + Σ_K y_i) / (m - Σ_K U_i)` of the supporting line of the subset `K`
    /// (`m - Σ_K U_i > 0`).
    ///
    /// Not reduced to lowest terms: `S`'s denominator is the product of many periods, and a
    /// gcd of such numbers costs more than the rest of the analysis.
    fn line_root(&self, set: &[usize]) -> Rational {
        let (sy, su) = self.sums(set);
        let (sn, sd) = (self.total_s.numer(), self.total_s.denom());
        // (sn/sd + yn/yd) / (m - un/ud) = (sn yd + yn sd) ud / (sd yd (m ud - un))
        let num = (sn * sy.denom() + sy.numer() * sd) * su.denom();
        let den = sd * sy.denom() * (BigInt::from(self.m) * su.denom() - su.numer());
        Rational::new_raw(num, den)
    }

    /// Newton's method in floats from `s = 0`: the subset of lines it ends with (sorted), or
    /// the exact choice at 0 if the floats misbehave.
    fn float_candidate(&self) -> Vec<usize> {
        let n = self.y.len();
        let total_s = self.total_s.to_f64().unwrap_or(f64::NAN);
        let m = self.m as f64;
        let mut s = 0.0f64;
        let mut set: Vec<usize> = Vec::new();
        for _ in 0..=n + 2 {
            let mut idx: Vec<usize> = (0..n).collect();
            idx.sort_unstable_by(|&i, &j| {
                (self.yf[j] + self.uf[j] * s).total_cmp(&(self.yf[i] + self.uf[i] * s)).then(i.cmp(&j))
            });
            idx.truncate(self.k.min(n));
            idx.sort_unstable();
            let (sy, su) = idx.iter().fold((0.0, 0.0), |(a, b), &i| (a + self.yf[i], b + self.uf[i]));
            let next = (total_s + sy) / (m - su);
            if !next.is_finite() {
                break;
            }
            let same = idx == set;
            set = idx;
            if same || next <= s {
                return set;
            }
            s = next;
        }
        let mut exact0 = self.top(&exact::zero());
        exact0.sort_unstable();
        exact0
    }

    /// SchedCAT's binary search (see the module doc); `None` once `limits` are exhausted.
    fn binary_search(&self, rounds: u32, steps: &mut u64, limits: &Limits) -> Option<Rational> {
        let mut lo = exact::zero();
        let mut hi = exact::one();
        loop {
            *steps += 1;
            if limits.exhausted(*steps) {
                return None;
            }
            if !self.m_of(&hi).is_positive() {
                break;
            }
            lo = hi.clone();
            hi *= exact::int(2);
        }
        let half = exact::ratio(1, 2);
        for _ in 0..rounds {
            *steps += 1;
            if limits.exhausted(*steps) {
                return None;
            }
            let mid = (&lo + &hi) * &half;
            if self.m_of(&mid).is_negative() {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi)
    }

    /// `ceil(s + a_i/(m q))` per task without adding rationals (each addition would take a gcd
    /// of `s`'s large terms): with `s = fl + r/d` (`0 <= r < d`) and `a_i = A m q + ρ`
    /// (`0 <= ρ < m q`), the bound is `fl + A + ceil(r/d + ρ/(m q))`, whose last term is 0, 1
    /// or 2.
    fn bounds(&self, ts: &TaskSet, s: Rational) -> GelBounds {
        let mq = BigInt::from(self.m as u128 * self.q as u128);
        let d = s.denom();
        let (fl, r) = s.numer().div_mod_floor(d);
        let dmq = d * &mq;
        let response_times: Vec<u64> = self
            .a
            .iter()
            .map(|a| {
                let (big_a, rho) = a.div_mod_floor(&mq);
                // r/d + ρ/(mq) against 0 and 1: r·mq + ρ·d against 0 and d·mq.
                let lhs = &r * &mq + &rho * d;
                let frac = if lhs.is_zero() {
                    0
                } else if lhs <= dmq {
                    1
                } else {
                    2
                };
                let total = &fl + big_a + BigInt::from(frac);
                total.to_u64().unwrap_or(if total.is_negative() { 0 } else { u64::MAX })
            })
            .collect();
        let lateness =
            response_times.iter().zip(ts.iter()).map(|(&r, t)| (r as i128 - t.deadline as i128) as i64).collect();
        GelBounds { s, response_times, lateness }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Newton's method in exact rationals only, from `s = 0`, the exactly largest lines each
    /// step: the reference for the float-first [`Lines::exact_root`].
    fn reference_root(sys: &Lines) -> Rational {
        let mut s = exact::zero();
        loop {
            let v: Vec<Rational> = (0..sys.y.len()).map(|i| &sys.y[i] + &sys.u[i] * &s).collect();
            let mut idx: Vec<usize> = (0..v.len()).collect();
            idx.sort_by(|&i, &j| v[j].cmp(&v[i]));
            idx.truncate(sys.k);
            let next = sys.line_root(&idx);
            if next <= s {
                return s;
            }
            s = next;
        }
    }

    #[test]
    fn float_first_root_equals_the_exact_newton_root() {
        let mut x: u64 = 0x2012_0ec7_5eed_0001;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut checked = 0;
        for round in 0..3000 {
            let m = (next() % 6 + 1) as u32;
            let n = (next() % 12 + 1) as usize;
            // ns-scale periods (up to 100 ms) and small ones with many ties.
            let scale = if round % 2 == 0 { 100_000_000 } else { 6 };
            let cdt: Vec<(u64, u64, u64)> = (0..n)
                .map(|_| {
                    let t = next() % scale + 1;
                    let c = next() % t + 1;
                    let d = c.max(t - next() % t);
                    (c, d, t)
                })
                .collect();
            let ts = TaskSet::from_cdt(&cdt).unwrap();
            if !ts.utilization_at_most(m as u64) {
                continue;
            }
            let k = (exact::ceil_u128(&ts.utilization()) as usize).saturating_sub(1);
            for sched in Scheduler::ALL {
                let sys = Lines::new(&ts, m, &sched.priority_points(&ts, m), k);
                let got = sys.exact_root(&mut 0, &Limits::default()).unwrap();
                assert_eq!(got, reference_root(&sys), "{cdt:?} m {m}");
                checked += 1;
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    /// `M(s*) = 0` exactly, and `M` is positive just below.
    #[test]
    fn exact_root_is_the_root_of_m() {
        let sets: [&[(u64, u64, u64)]; 4] = [
            &[(2, 3, 3), (2, 3, 3), (2, 3, 3)],
            &[(3, 7, 7), (5, 11, 11), (1, 2, 2), (4, 9, 13), (6, 10, 10)],
            &[(1, 10, 10), (9, 10, 10), (5, 5, 5), (1, 1, 1)],
            &[(7, 8, 9), (2, 13, 14), (5, 5, 6), (3, 20, 20), (11, 12, 12), (1, 3, 4)],
        ];
        for cdt in sets {
            let ts = TaskSet::from_cdt(cdt).unwrap();
            for m in 1..=4u32 {
                if !ts.utilization_at_most(m as u64) {
                    continue;
                }
                for sched in Scheduler::ALL {
                    let pp = sched.priority_points(&ts, m);
                    let u = ts.utilization();
                    let k = (exact::ceil_u128(&u) as usize).saturating_sub(1);
                    let sys = Lines::new(&ts, m, &pp, k);
                    let s = sys.exact_root(&mut 0, &Limits::default()).unwrap();
                    assert!(s.is_positive());
                    assert!(sys.m_of(&s).is_zero(), "{cdt:?} m {m}");
                    let below = &s - exact::ratio(1, 1_000_000);
                    assert!(sys.m_of(&below).is_positive());
                }
            }
        }
    }
}
