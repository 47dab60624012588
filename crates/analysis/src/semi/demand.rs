//! The exact uniprocessor EDF test used *inside* the placement heuristics, and the exact
//! C=D split computation.
//!
//! Processor demand criterion (Baruah, Rosier, Howell, RTSS 1990; cited as [10] in seed 004
//! §III-D): a set of sporadic reservations `(c, d, t)` with `d <= t` is EDF-schedulable on one
//! processor iff `U <= 1` and `sum_j dbf_j(t) <= t` for every `t` up to a bound `L`. The points
//! are walked with QPA (Zhang & Burns, IEEE TC 2009). `L` is the smaller of the La bound
//! (`max(d_max, sum (t_j - d_j) u_j / (1 - U))`, only when `U < 1` is proven) and the
//! synchronous busy period (valid for `U <= 1`); a larger `L` than needed is always safe.
//!
//! Fast exact paths first: all implicit (`d = t`) means `U <= 1` decides; a total density
//! `sum c/d <= 1` (proven by rigorous intervals) is sufficient.
//!
//! Integer nanoseconds throughout; `u128` demands; rationals only where intervals overlap.
//! This module is deliberately *not* used by the independent checker (`check.rs`).

use crate::Limits;
use num_bigint::BigInt;
use rtsched_model::exact::{self, decide, Interval, Rational};
use rtsched_model::Time;

/// One reservation (or the demand it stands for): budget `c`, relative deadline `d`, period `t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Res {
    pub c: Time,
    pub d: Time,
    pub t: Time,
}

impl Res {
    #[inline]
    pub fn dbf(&self, at: Time) -> u128 {
        if at < self.d {
            0
        } else {
            ((at - self.d) / self.t + 1) as u128 * self.c as u128
        }
    }
    #[inline]
    pub fn util(&self) -> Interval {
        Interval::ratio(self.c as u128, self.t as u128)
    }
    #[inline]
    pub fn dens(&self) -> Interval {
        Interval::ratio(self.c as u128, self.d as u128)
    }
    pub fn util_exact(&self) -> Rational {
        exact::ratio(self.c as u128, self.t as u128)
    }
}

/// Why a set failed the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Feasible,
    /// `U > 1`.
    Util,
    /// The demand exceeds the supply in `[0, t]` (or a single job has `c > d`: `t = d`).
    Miss(Time),
    /// A work bound was hit; callers treat it as "does not fit" (safe).
    GaveUp,
}

/// Exactly whether `sum c/t <= 1`, with `approx` a rigorous enclosure of the sum. Near ties
/// (the enclosure contains 1, e.g. a processor a C=D chunk filled to exactly 1) are decided in
/// integers over the periods' lcm when it stays below 2^96, else with exact rationals.
pub(crate) fn util_le_one<'a>(rs: impl Iterator<Item = &'a Res> + Clone, approx: Interval) -> bool {
    decide(
        || approx.le(Interval::point(1.0)),
        || match util_le_one_lcm(rs.clone()) {
            Some(v) => v,
            None => rs.fold(exact::zero(), |acc, r| acc + r.util_exact()) <= exact::one(),
        },
    )
}

/// `floor((1 - sum c_j/t_j) t)` (0 when negative) in integers: with `L = lcm(t, t_j)`, it is
/// `(L - sum c_j (L/t_j)) / (L/t)`; `None` when `L` exceeds 2^96 or a term overflows.
fn util_room_lcm(rs: &[Res], t: Time) -> Option<Time> {
    let mut l: u128 = t as u128;
    for r in rs {
        let tj = r.t as u128;
        l = (l / num_integer::gcd(l, tj)).checked_mul(tj)?;
        if l > 1u128 << 96 {
            return None;
        }
    }
    let mut sum: u128 = 0;
    for r in rs {
        sum = sum.checked_add((r.c as u128).checked_mul(l / r.t as u128)?)?;
        if sum >= l {
            return Some(0);
        }
    }
    Time::try_from((l - sum) / (l / t as u128)).ok()
}

/// `sum c/t <= 1` as `sum c (L/t) <= L` with `L = lcm(t)`, all in `u128`; `None` when `L`
/// exceeds 2^96 or a term overflows (the caller then uses rationals).
fn util_le_one_lcm<'a>(rs: impl Iterator<Item = &'a Res> + Clone) -> Option<bool> {
    let mut l: u128 = 1;
    for r in rs.clone() {
        let t = r.t as u128;
        l = (l / num_integer::gcd(l, t)).checked_mul(t)?;
        if l > 1u128 << 96 {
            return None;
        }
    }
    let mut sum: u128 = 0;
    for r in rs {
        sum = sum.checked_add((r.c as u128).checked_mul(l / r.t as u128)?)?;
        if sum > l {
            return Some(false);
        }
    }
    Some(true)
}

/// The exact EDF test of `rs` (every `d <= t` is assumed; `c > d` is reported as a miss).
pub(crate) fn edf_test(rs: &[Res], limits: &Limits) -> Outcome {
    if rs.is_empty() {
        return Outcome::Feasible;
    }
    let mut u = Interval::point(0.0);
    let mut dens = Interval::point(0.0);
    let mut implicit = true;
    for r in rs {
        if r.c > r.d {
            return Outcome::Miss(r.d);
        }
        u = u.add(r.util());
        dens = dens.add(r.dens());
        implicit &= r.d == r.t;
    }
    if !util_le_one(rs.iter(), u) {
        return Outcome::Util;
    }
    if implicit || dens.hi <= 1.0 {
        return Outcome::Feasible;
    }
    match bound(rs, u, limits) {
        Some(l) => qpa(rs, l, limits),
        None => Outcome::GaveUp,
    }
}

/// An upper bound on the interval the PDC must examine (`U <= 1` already proven).
fn bound(rs: &[Res], u: Interval, limits: &Limits) -> Option<Time> {
    let dmax = rs.iter().map(|r| r.d).max().unwrap_or(0);
    let cap = limits.max_interval;
    let mut best: Option<Time> = None;
    // La, when U < 1 is proven by the enclosure.
    let den = Interval::point(1.0).sub(u);
    if den.lo > 0.0 {
        let num =
            rs.iter().fold(Interval::point(0.0), |acc, r| acc.add(Interval::int((r.t - r.d) as u128).mul(r.util())));
        if let Some(q) = num.div(den) {
            let la = q.hi.next_up().ceil();
            if la.is_finite() && la < cap as f64 {
                best = Some((la as Time).max(dmax));
            }
        }
    }
    // Hyperperiod: for U <= 1, a violation, if any, occurs by H + d_max.
    let mut h: u128 = 1;
    for r in rs {
        h = num_integer::lcm(h, r.t as u128);
        if h > cap as u128 {
            break;
        }
    }
    if h + (dmax as u128) <= cap as u128 {
        let hb = h as Time + dmax;
        best = Some(best.map_or(hb, |b| b.min(hb)));
    }
    // Synchronous busy period: w = sum ceil(w/t) c, iterated from sum c (converges for U <= 1).
    let iters = if best.is_some() { 64 } else { limits.max_steps.min(100_000) };
    let mut w: u128 = rs.iter().map(|r| r.c as u128).sum();
    for _ in 0..iters {
        if w > cap as u128 || best.is_some_and(|b| w >= b as u128) {
            break;
        }
        let next: u128 = rs.iter().map(|r| (w.div_ceil(r.t as u128)) * r.c as u128).sum();
        if next == w {
            let w = w as Time;
            best = Some(best.map_or(w, |b| b.min(w)));
            break;
        }
        w = next;
    }
    best
}

/// Largest absolute deadline `<= at` (synchronous release), if any.
#[inline]
fn last_deadline_le(rs: &[Res], at: Time) -> Option<Time> {
    rs.iter().filter(|r| r.d <= at).map(|r| r.d + (at - r.d) / r.t * r.t).max()
}

/// QPA: walk backwards from the last deadline `<= l`.
fn qpa(rs: &[Res], l: Time, limits: &Limits) -> Outcome {
    let dmin = rs.iter().map(|r| r.d).min().unwrap_or(0) as u128;
    let h = |at: Time| rs.iter().map(|r| r.dbf(at)).sum::<u128>();
    let Some(mut t) = last_deadline_le(rs, l) else { return Outcome::Feasible };
    let mut steps = 0u64;
    loop {
        steps += 1;
        if steps > limits.max_steps {
            return Outcome::GaveUp;
        }
        let ht = h(t);
        if ht > t as u128 {
            return Outcome::Miss(t);
        }
        if ht <= dmin {
            return Outcome::Feasible;
        }
        if ht < t as u128 {
            t = ht as Time;
        } else {
            match last_deadline_le(rs, t - 1) {
                Some(p) => t = p,
                None => return Outcome::Feasible,
            }
        }
    }
}

/// Largest integer `x` with `U(rs) + x/t <= 1` (exact), saturating at 0.
fn util_room(rs: &[Res], t: Time) -> Time {
    let u = rs.iter().fold(Interval::point(0.0), |acc, r| acc.add(r.util()));
    let v = Interval::point(1.0).sub(u).mul(Interval::int(t as u128));
    let lo = v.lo.max(0.0).floor();
    let hi = v.hi.max(0.0).floor();
    if lo == hi && hi < 1e18 {
        return hi as Time;
    }
    if let Some(room) = util_room_lcm(rs, t) {
        return room;
    }
    let room: Rational =
        (exact::one() - rs.iter().fold(exact::zero(), |acc, r| acc + r.util_exact())) * exact::int(t as i128);
    let f = room.floor().to_integer();
    if f <= BigInt::from(0) {
        0
    } else {
        u64::try_from(f).unwrap_or(u64::MAX)
    }
}

/// The C=D split (Burns, Davis, Wang, Zhang, RTS journal 2012; seed 004 §III-D step 2):
/// the largest `x` in `[lo, hi]` such that the zero-laxity reservation `(x, x, t)` added to
/// `rs` still passes the exact test, or `None`.
///
/// Feasibility is monotone in `x` (if `(x, x, t)` fits then every smaller `x'` does; proof in
/// docs/spres.md), so the feasible `x` form an interval `[1, x*]`. Starting from `x = hi`, each
/// failed test names a violated constraint (`U > 1`, or the demand at a point `tm`); `x` is
/// lowered to the largest value that satisfies *that* constraint, which is still `>= x*`. The
/// first `x` that passes is therefore `x*` exactly. Should the constraint solving take too long,
/// an integer binary search with the same exact test finishes the job.
pub(crate) fn max_split(rs: &[Res], t: Time, lo: Time, hi: Time, limits: &Limits) -> Option<Time> {
    if hi < lo || lo == 0 {
        return None;
    }
    let mut work: Vec<Res> = Vec::with_capacity(rs.len() + 1);
    work.extend_from_slice(rs);
    work.push(Res { c: hi, d: hi, t });
    let last = work.len() - 1;
    let test = |x: Time, work: &mut Vec<Res>| {
        work[last] = Res { c: x, d: x, t };
        edf_test(work, limits)
    };
    // Necessary: at every first deadline d_j of the processor's reservations, the zero-laxity
    // job (released together with them) leaves room only for x <= d_j - dbf(d_j).
    let mut x = hi.min(util_room(rs, t));
    for r in rs {
        let demand: u128 = rs.iter().map(|o| o.dbf(r.d)).sum();
        x = x.min((r.d as u128).saturating_sub(demand) as Time);
    }
    if x < lo {
        return None;
    }
    for _ in 0..64 {
        match test(x, &mut work) {
            Outcome::Feasible => return Some(x),
            Outcome::Util => {
                let r = util_room(rs, t);
                x = if r < x { r } else { x - 1 };
            }
            Outcome::Miss(tm) => match solve_at(rs, t, x, tm) {
                Solved::Max(nx) => x = nx,
                Solved::None => return None,
                Solved::TooLong => break,
            },
            Outcome::GaveUp => break,
        }
        if x < lo {
            return None;
        }
    }
    // Fallback: binary search over the integers in [lo, x] with the exact test.
    let (mut a, mut b) = (lo, x); // invariant: answer, if any, is in [a, b]
    if test(a, &mut work) != Outcome::Feasible {
        return None;
    }
    while a < b {
        let mid = a + (b - a).div_ceil(2);
        if test(mid, &mut work) == Outcome::Feasible {
            a = mid;
        } else {
            b = mid - 1;
        }
    }
    Some(a)
}

enum Solved {
    Max(Time),
    None,
    TooLong,
}

/// Largest `x' < x` with `dbf_rs(tm) + g(x') <= tm`, where `g(x') = (floor((tm-x')/t)+1) x'` for
/// `x' <= tm` and 0 otherwise. On each range of `x'` where `q = floor((tm-x')/t)` is constant,
/// `g` grows with `x'`; the ranges are scanned from the top.
fn solve_at(rs: &[Res], t: Time, x: Time, tm: Time) -> Solved {
    let demand: u128 = rs.iter().map(|r| r.dbf(tm)).sum();
    if demand > tm as u128 || x <= 1 {
        return Solved::None;
    }
    let avail = tm as u128 - demand;
    let top = x - 1;
    if top > tm {
        return Solved::Max(top); // g(top) = 0 (cannot happen when tm was a violation for x)
    }
    let q0 = (tm - top) / t;
    for q in q0..q0 + 64 {
        // x' in [seg_lo, seg_hi] has floor((tm - x')/t) = q
        let seg_hi = if q == q0 { top } else { tm - q * t };
        let seg_lo = match (q + 1).checked_mul(t) {
            Some(v) if v <= tm => tm - v + 1,
            _ => 1,
        };
        let cand = (avail / (q as u128 + 1)).min(seg_hi as u128) as Time;
        if cand >= seg_lo {
            return if cand >= 1 { Solved::Max(cand) } else { Solved::None };
        }
        if seg_lo <= 1 {
            return Solved::None;
        }
    }
    Solved::TooLong
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_feasible(rs: &[Res]) -> bool {
        // Exact: U <= 1 and dbf <= t on every integer t up to the hyperperiod + d_max.
        if !util_le_one(rs.iter(), rs.iter().fold(Interval::point(0.0), |a, r| a.add(r.util()))) {
            return false;
        }
        let h = rs.iter().fold(1u64, |h, r| num_integer::lcm(h, r.t));
        let dmax = rs.iter().map(|r| r.d).max().unwrap_or(0);
        (1..=h + dmax).all(|at| rs.iter().map(|r| r.dbf(at)).sum::<u128>() <= at as u128)
    }

    /// The integer path of `util_le_one` agrees with exact rationals, including exact ties.
    #[test]
    fn util_le_one_lcm_matches_rationals() {
        let cases: Vec<Vec<Res>> = vec![
            vec![Res { c: 1, d: 3, t: 3 }, Res { c: 2, d: 3, t: 3 }],
            vec![Res { c: 1, d: 3, t: 3 }, Res { c: 1, d: 6, t: 6 }, Res { c: 1, d: 2, t: 2 }],
            vec![
                Res { c: 1, d: 3, t: 3 },
                Res { c: 1, d: 6, t: 6 },
                Res { c: 1, d: 2, t: 2 },
                Res { c: 1, d: 7, t: 7 },
            ],
            vec![Res { c: 999_999, d: 1_000_000, t: 1_000_000 }, Res { c: 1, d: 1_000_000, t: 1_000_000 }],
            vec![Res { c: 999_999, d: 1_000_000, t: 1_000_000 }, Res { c: 2, d: 1_000_000, t: 1_000_000 }],
            vec![Res { c: 5, d: 7, t: 7 }, Res { c: 3, d: 11, t: 13 }, Res { c: 1, d: 5, t: 17 }],
        ];
        for rs in &cases {
            let q = rs.iter().fold(exact::zero(), |a, r| a + r.util_exact()) <= exact::one();
            assert_eq!(util_le_one_lcm(rs.iter()), Some(q), "{rs:?}");
        }
        for rs in &cases {
            for t in [1u64, 3, 6, 7, 10, 1_000_000, 999_999_937] {
                let room =
                    (exact::one() - rs.iter().fold(exact::zero(), |a, r| a + r.util_exact())) * exact::int(t as i128);
                let want = room.floor().to_integer().max(BigInt::from(0));
                assert_eq!(util_room_lcm(rs, t).map(BigInt::from), Some(want), "{rs:?}, t = {t}");
            }
        }
        // Coprime periods beyond 2^96: no answer, the rationals decide.
        let big: Vec<Res> = [1_000_000_007u64, 998_244_353, 999_999_937, 1_000_000_009]
            .iter()
            .map(|&t| Res { c: 1, d: t, t })
            .collect();
        assert_eq!(util_le_one_lcm(big.iter()), None);
    }

    #[test]
    fn fig1_split() {
        let l = Limits::default();
        let p1 = [Res { c: 10, d: 15, t: 15 }];
        assert_eq!(max_split(&p1, 15, 1, 9, &l), Some(5));
        let p2 = [Res { c: 10, d: 15, t: 15 }, Res { c: 5, d: 10, t: 15 }];
        assert_eq!(edf_test(&p2, &l), Outcome::Feasible);
        let bad = [Res { c: 10, d: 15, t: 15 }, Res { c: 6, d: 10, t: 15 }];
        assert_ne!(edf_test(&bad, &l), Outcome::Feasible);
    }

    #[test]
    fn qpa_matches_brute_force_and_split_is_max() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let l = Limits::default();
        for _ in 0..3000 {
            let n = rng.random_range(1..5);
            let rs: Vec<Res> = (0..n)
                .map(|_| {
                    let t = rng.random_range(2..30u64);
                    let d = rng.random_range(1..=t);
                    let c = rng.random_range(1..=d);
                    Res { c, d, t }
                })
                .collect();
            let fast = edf_test(&rs, &l) == Outcome::Feasible;
            assert_eq!(fast, brute_feasible(&rs), "{rs:?}");
            if fast {
                let t = rng.random_range(2..30u64);
                let hi = rng.random_range(1..=t);
                let got = max_split(&rs, t, 1, hi, &l);
                let want = (1..=hi).rev().find(|&x| {
                    let mut w = rs.clone();
                    w.push(Res { c: x, d: x, t });
                    brute_feasible(&w)
                });
                assert_eq!(got, want, "{rs:?} t={t} hi={hi}");
            }
        }
    }
}
