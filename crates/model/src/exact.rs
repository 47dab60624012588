//! Exact arithmetic for verdicts.
//!
//! Verdicts never compare floats with an epsilon. Two tools are offered:
//!
//! * [`Rational`], an arbitrary-precision rational (num's `BigRational`): always exact, slow.
//! * [`Interval`], a pair of `f64` bounds that is guaranteed to contain the exact real value.
//!   Every operation rounds its result outward by whole ulps, which covers the at most
//!   half-ulp error of round-to-nearest, so the enclosure is rigorous. When two intervals do
//!   not overlap, the comparison of the exact values is known; when they do, the caller falls
//!   back to [`Rational`]. [`decide`] packages that pattern.
//!
//! The filter decides nearly every comparison that arises from random task sets in a few
//! nanoseconds; the exact fallback only runs on (near-)ties, which are exactly the cases a
//! float epsilon would get wrong.
//!
//! Sums of many fractions (a task set's total utilization) go through [`sum_ratios`], never a
//! fold of `+` on [`Rational`]: each `+` reduces to lowest terms with a gcd of numbers that grow
//! with every co-prime period, which made the exact sum of 20,000 utilizations take minutes.

use crate::stop::Stop;
use num_bigint::BigInt;
use num_integer::Integer;
pub use num_rational::BigRational as Rational;
use num_traits::{One, Zero};

/// Exact `a/b` as a [`Rational`]. Panics if `b == 0` (callers pass validated periods).
pub fn ratio(a: u128, b: u128) -> Rational {
    Rational::new(BigInt::from(a), BigInt::from(b))
}

/// Exact integer as a [`Rational`].
pub fn int(a: i128) -> Rational {
    Rational::from_integer(BigInt::from(a))
}

/// Zero and one, for convenience.
pub fn zero() -> Rational {
    Rational::zero()
}
pub fn one() -> Rational {
    Rational::one()
}

/// Smallest integer `>= q`, saturated into `u128` (negative values give 0).
pub fn ceil_u128(q: &Rational) -> u128 {
    let c = q.ceil().to_integer();
    if c.sign() == num_bigint::Sign::Minus {
        0
    } else {
        u128::try_from(c).unwrap_or(u128::MAX)
    }
}

/// `a/b + c/d` in `u128` over the least common denominator, in lowest terms; `None` when an
/// intermediate value does not fit.
fn add_u128((a, b): (u128, u128), (c, d): (u128, u128)) -> Option<(u128, u128)> {
    let g = b.gcd(&d);
    let (bg, dg) = (b / g, d / g);
    let den = bg.checked_mul(d)?;
    let num = a.checked_mul(dg)?.checked_add(c.checked_mul(bg)?)?;
    let r = num.gcd(&den);
    Some(if r > 1 { (num / r, den / r) } else { (num, den) })
}

/// The exact sum `Σ a_i/b_i` (every `b_i > 0`; panics otherwise), **not reduced to lowest
/// terms**, or `None` when `stop` was requested before it was done. The empty sum is `0/1`.
///
/// Fast where a fold of [`Rational`] additions is quadratic: terms are sorted by denominator
/// and added in `u128` over their least common denominator while it fits (equal or related
/// periods cost nothing), and the partial sums are then added pairwise in a balanced tree,
/// `p/q + r/s = (ps + rq)/(qs)`, with no gcd, so that every multiplication is of two numbers
/// of about equal size. Comparing the result or taking its ceiling costs one division; in
/// lowest terms ([`Rational::reduced`]) it costs a gcd of the full-size numbers, which only a
/// caller that prints the fraction should pay. `stop` is polled between two additions.
pub fn sum_ratios(terms: impl IntoIterator<Item = (u128, u128)>, stop: &Stop) -> Option<Rational> {
    let mut terms: Vec<(u128, u128)> = terms
        .into_iter()
        .map(|(a, b)| {
            assert!(b > 0, "sum_ratios: zero denominator");
            (a, b)
        })
        .collect();
    terms.sort_unstable_by_key(|&(_, b)| b);
    let big = |(a, b): (u128, u128)| (BigInt::from(a), BigInt::from(b));
    let mut parts: Vec<(BigInt, BigInt)> = Vec::new();
    let mut acc: Option<(u128, u128)> = None;
    for t in terms {
        acc = Some(match acc {
            None => t,
            Some(s) => match add_u128(s, t) {
                Some(sum) => sum,
                None => {
                    parts.push(big(s));
                    t
                }
            },
        });
    }
    parts.extend(acc.map(big));
    while parts.len() > 1 {
        let mut next = Vec::with_capacity(parts.len().div_ceil(2));
        let mut it = parts.into_iter();
        while let Some((p, q)) = it.next() {
            match it.next() {
                Some((r, s)) => {
                    if stop.requested() {
                        return None;
                    }
                    next.push((&p * &s + &r * &q, q * s));
                }
                None => next.push((p, q)),
            }
        }
        parts = next;
    }
    let (num, den) = parts.pop().unwrap_or_else(|| (BigInt::zero(), BigInt::one()));
    Some(Rational::new_raw(num, den))
}

/// A closed interval `[lo, hi]` of reals that contains the exact value it stands for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

fn down(x: f64, steps: u32) -> f64 {
    (0..steps).fold(x, |v, _| v.next_down())
}
fn up(x: f64, steps: u32) -> f64 {
    (0..steps).fold(x, |v, _| v.next_up())
}

impl Interval {
    /// The exact value `x` (when representable) or a 1-ulp enclosure of it.
    pub fn int(x: u128) -> Interval {
        let f = x as f64;
        if x < (1u128 << 53) {
            Interval { lo: f, hi: f }
        } else {
            Interval { lo: down(f, 1), hi: up(f, 1) }
        }
    }

    /// A point interval for a value known to be exact in `f64` (e.g. a small integer).
    pub fn point(x: f64) -> Interval {
        Interval { lo: x, hi: x }
    }

    /// An enclosure of `a/b` (`b > 0`).
    pub fn ratio(a: u128, b: u128) -> Interval {
        debug_assert!(b > 0);
        // Two conversions and one division: relative error below 3.01 eps, i.e. below 4 ulps.
        let q = a as f64 / b as f64;
        Interval { lo: down(q, 4).max(0.0), hi: up(q, 4) }
    }

    #[allow(clippy::should_implement_trait)] // outward-rounded, not the std operator
    pub fn add(self, o: Interval) -> Interval {
        Interval { lo: (self.lo + o.lo).next_down(), hi: (self.hi + o.hi).next_up() }
    }

    #[allow(clippy::should_implement_trait)] // outward-rounded, not the std operator
    pub fn sub(self, o: Interval) -> Interval {
        Interval { lo: (self.lo - o.hi).next_down(), hi: (self.hi - o.lo).next_up() }
    }

    #[allow(clippy::should_implement_trait)] // outward-rounded, not the std operator
    pub fn mul(self, o: Interval) -> Interval {
        let p = [self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi];
        let lo = p.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = p.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Interval { lo: lo.next_down(), hi: hi.next_up() }
    }

    /// Division by an interval that does not contain zero; `None` if it does.
    #[allow(clippy::should_implement_trait)] // partial (None when o contains 0), not the std operator
    pub fn div(self, o: Interval) -> Option<Interval> {
        if o.lo <= 0.0 && o.hi >= 0.0 {
            return None;
        }
        let p = [self.lo / o.lo, self.lo / o.hi, self.hi / o.lo, self.hi / o.hi];
        let lo = p.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = p.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Interval { lo: lo.next_down(), hi: hi.next_up() })
    }

    pub fn min(self, o: Interval) -> Interval {
        Interval { lo: self.lo.min(o.lo), hi: self.hi.min(o.hi) }
    }

    pub fn max(self, o: Interval) -> Interval {
        Interval { lo: self.lo.max(o.lo), hi: self.hi.max(o.hi) }
    }

    /// `Some(x <= y)` when the enclosures decide it, `None` when they overlap.
    pub fn le(self, o: Interval) -> Option<bool> {
        if self.hi <= o.lo {
            Some(true)
        } else if self.lo > o.hi {
            Some(false)
        } else {
            None
        }
    }

    /// `Some(x < y)` when the enclosures decide it, `None` when they overlap.
    pub fn lt(self, o: Interval) -> Option<bool> {
        if self.hi < o.lo {
            Some(true)
        } else if self.lo >= o.hi {
            Some(false)
        } else {
            None
        }
    }

    /// Midpoint, for reports only.
    pub fn approx(self) -> f64 {
        0.5 * (self.lo + self.hi)
    }
}

/// Decides a comparison exactly: `fast` gives the answer from interval enclosures when they
/// suffice (`Some`), and `exact` is evaluated only when they do not.
///
/// ```
/// use rtsched_model::exact::{decide, ratio, Interval};
/// // 1/3 + 1/3 + 1/3 <= 1, which a float sum gets wrong half the time.
/// let fast = || {
///     let third = Interval::ratio(1, 3);
///     third.add(third).add(third).le(Interval::point(1.0))
/// };
/// let exact = || ratio(1, 3) + ratio(1, 3) + ratio(1, 3) <= ratio(1, 1);
/// assert!(decide(fast, exact));
/// ```
#[inline]
pub fn decide(fast: impl FnOnce() -> Option<bool>, exact: impl FnOnce() -> bool) -> bool {
    match fast() {
        Some(v) => v,
        None => exact(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn contains(i: Interval, q: &Rational) -> bool {
        // Compare through exact rationals: lo <= q <= hi.
        let lo = Rational::from_float(i.lo).unwrap();
        let hi = Rational::from_float(i.hi).unwrap();
        &lo <= q && q <= &hi
    }

    proptest! {
        #[test]
        fn ratio_and_ops_enclose_exact(a in 0u64..1u64<<60, b in 1u64..1u64<<60,
                                       c in 0u64..1u64<<60, d in 1u64..1u64<<60) {
            let (x, y) = (Interval::ratio(a as u128, b as u128), Interval::ratio(c as u128, d as u128));
            let (qx, qy) = (ratio(a as u128, b as u128), ratio(c as u128, d as u128));
            prop_assert!(contains(x, &qx));
            prop_assert!(contains(x.add(y), &(&qx + &qy)));
            prop_assert!(contains(x.sub(y), &(&qx - &qy)));
            prop_assert!(contains(x.mul(y), &(&qx * &qy)));
            if c > 0 {
                prop_assert!(contains(x.div(y).unwrap(), &(&qx / &qy)));
            }
        }
    }

    proptest! {
        #[test]
        fn sum_ratios_is_the_exact_sum(terms in proptest::collection::vec((0u128..1u128<<64, 1u128..1u128<<64), 0..40),
                                       small in proptest::collection::vec((0u128..20, 1u128..12), 0..40)) {
            for ts in [&terms, &small] {
                let want = ts.iter().fold(zero(), |acc, &(a, b)| acc + ratio(a, b));
                let got = sum_ratios(ts.iter().copied(), &Stop::never()).unwrap();
                prop_assert!(got.denom() > &BigInt::zero());
                prop_assert_eq!(got.reduced(), want.clone());
                prop_assert_eq!(ceil_u128(&got), ceil_u128(&want));
            }
        }
    }

    #[test]
    fn sum_ratios_edges() {
        assert_eq!(sum_ratios([], &Stop::never()).unwrap(), zero());
        // Equal denominators are added in u128; 1/3 three times is exactly 1.
        assert_eq!(sum_ratios([(1, 3); 3], &Stop::never()).unwrap(), one());
        // Numerators near u128::MAX overflow the u128 path and go through BigInt.
        let big = u128::MAX - 1;
        let s = sum_ratios([(big, 1), (big, 1), (1, 2)], &Stop::never()).unwrap();
        assert_eq!(s, Rational::from_integer(BigInt::from(big) * 2) + ratio(1, 2));
        // A requested stop ends a sum that needs the big-number tree.
        let stop = Stop::new();
        stop.request();
        let wide = [(1, (1u128 << 64) - 59), (1, (1 << 64) - 83), (1, (1 << 64) - 95)];
        assert_eq!(sum_ratios(wide, &stop), None);
        let want = wide.iter().fold(zero(), |acc, &(a, b)| acc + ratio(a, b));
        assert_eq!(sum_ratios(wide, &Stop::never()).unwrap().reduced(), want);
    }

    #[test]
    fn decide_falls_back_on_ties() {
        let third = Interval::ratio(1, 3);
        let s = third.add(third).add(third);
        assert_eq!(s.le(Interval::point(1.0)), None, "a tie must not be decided by floats");
        assert!(decide(|| s.le(Interval::point(1.0)), || ratio(1, 3) * int(3) <= one()));
        assert_eq!(ceil_u128(&ratio(7, 2)), 4);
        assert_eq!(ceil_u128(&(zero() - ratio(7, 2))), 0);
    }
}
