//! Exact budgets of the server-based optimal schedulers, RUN ([`crate::run`]) and QPS
//! ([`crate::qps`]): the admission both share (implicit deadlines, rates ≤ 1, `U ≤ m`), the
//! grid of *ticks* of `1/L` ns their budgets live on (`L` the least common multiple of rates'
//! denominators, below 2^64), a rate in ticks per ns, and the consumption of a budget.

use rtsched_model::exact::{int, sum_ratios, Rational};
use rtsched_model::{ModelError, Stop, TaskSet};

/// The admission of an implicit-deadline scheduler of `U ≤ m` (`who` names it in the lines,
/// `cite` its source): `m ≥ 1`, every deadline equal to its period, every rate at most 1, and
/// the total utilization (returned, exact) at most `m`. Refused with one line naming the task
/// and field.
pub(crate) fn admit(ts: &TaskSet, m: u32, who: &str, cite: &str) -> Result<Rational, ModelError> {
    if m == 0 {
        return Err(ModelError::field("m", "must be at least 1"));
    }
    for (i, t) in ts.iter().enumerate() {
        if t.deadline != t.period {
            return Err(ModelError::task_field(
                i,
                "deadline",
                format!(
                    "{who} schedules implicit-deadline tasks only ({cite}): D = {} ns but T = {} ns",
                    t.deadline, t.period
                ),
            ));
        }
        if t.wcet > t.period {
            return Err(ModelError::task_field(
                i,
                "wcet",
                format!("C = {} ns exceeds T = {} ns: rate above 1", t.wcet, t.period),
            ));
        }
    }
    let u = sum_ratios(ts.iter().map(|t| (t.wcet as u128, t.period as u128)), &Stop::never())
        .ok_or_else(|| ModelError::new("utilization sum interrupted"))?;
    if u > int(m as i128) {
        let approx = ts.iter().map(|t| t.utilization_f64()).sum::<f64>();
        return Err(ModelError::field(
            "m",
            format!("total utilization {approx:.6} exceeds m = {m}: {who} schedules U ≤ m"),
        ));
    }
    Ok(u)
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The tick grid `scale` extended to `r`'s denominator (their least common multiple); `None`
/// when it would exceed 2^64 (the exact budgets' bound) or `r` does not fit.
pub(crate) fn grid_with(scale: u128, r: &Rational) -> Option<u128> {
    let d = u128::try_from(r.denom()).ok()?;
    (scale / gcd(scale, d)).checked_mul(d).filter(|&l| l <= u64::MAX as u128)
}

/// `r · scale`, the rate `r` in ticks per ns (`scale` a multiple of its denominator).
pub(crate) fn ticks(r: &Rational, scale: u128) -> Option<u128> {
    let num = u128::try_from(r.numer()).ok()?;
    let den = u128::try_from(r.denom()).ok()?;
    num.checked_mul(scale / den)
}

/// `dt` ticks consumed from budget `b`. Running past it is a broken promise (the line names
/// `what`) when `strict`; otherwise the budget stops at 0.
pub(crate) fn consume(b: &mut u128, dt: u128, strict: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if *b < dt {
        if strict {
            return Err(format!("{} ran past its budget ({} ticks left, {dt} elapsed)", what(), *b));
        }
        *b = 0;
    } else {
        *b -= dt;
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod testing {
    //! What the RUN and QPS unit tests share.
    use rtsched_model::exact::{int, one, ratio, zero};
    use rtsched_model::{TaskSet, Time};

    /// Implicit-deadline tasks from `(C, T)` pairs.
    pub(crate) fn set(ct: &[(Time, Time)]) -> TaskSet {
        TaskSet::from_cdt(&ct.iter().map(|&(c, t)| (c, t, t)).collect::<Vec<_>>()).unwrap()
    }

    /// A small deterministic generator (the policy crate has no random-number dependency).
    pub(crate) struct Lcg(pub u64);
    impl Lcg {
        pub(crate) fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    /// `(C, T)` pairs of total rate at most `m` over periods with small hyperperiods; with
    /// `fill`, topped up to `m` exactly when one task can.
    pub(crate) fn random_set(g: &mut Lcg, m: u32, fill: bool) -> Vec<(Time, Time)> {
        let periods = [4u64, 5, 6, 8, 10, 12, 15, 20];
        let mut tasks = Vec::new();
        let mut u = zero();
        loop {
            let t = periods[g.below(periods.len() as u64) as usize];
            let c = 1 + g.below(t);
            let nu = u.clone() + ratio(c as u128, t as u128);
            if nu > int(m as i128) {
                if fill {
                    let gap = int(m as i128) - u.clone();
                    let want = gap.clone() * int(t as i128);
                    if want.is_integer() && gap > zero() && gap <= one() {
                        tasks.push((u64::try_from(&want.to_integer()).unwrap(), t));
                    }
                }
                return tasks;
            }
            u = nu;
            tasks.push((c, t));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::exact::ratio;

    #[test]
    fn grid_ticks_and_consumption() {
        let l = grid_with(1, &ratio(2, 3)).and_then(|l| grid_with(l, &ratio(3, 4))).unwrap();
        assert_eq!(l, 12);
        assert_eq!(ticks(&ratio(2, 3), l), Some(8));
        assert_eq!(grid_with(u64::MAX as u128, &ratio(1, 2)), None);
        let mut b = 5u128;
        consume(&mut b, 3, true, || "x".into()).unwrap();
        assert_eq!(b, 2);
        let e = consume(&mut b, 3, true, || "server 7".into()).unwrap_err();
        assert_eq!(e, "server 7 ran past its budget (2 ticks left, 3 elapsed)");
        consume(&mut b, 3, false, || unreachable!()).unwrap();
        assert_eq!(b, 0);
    }
}
