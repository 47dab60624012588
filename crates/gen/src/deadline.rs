//! Relative-deadline generators.
//!
//! * `Implicit` (default): `D = T`.
//! * `Constrained { lo, hi }`: `D = C + f (T - C)` with `f` uniform on `[lo, hi]`,
//!   `0 <= lo <= hi <= 1`; `constrained:0-1` is the common "D uniform in [C, T]" (e.g. Baker
//!   2005; Bertogna, Cirinei & Lipari 2005 use this form for constrained-deadline sets).
//! * `PeriodFraction { lo, hi }`: `D = f T` with `f` uniform on `[lo, hi]`, `0 < lo <= hi <= 1`,
//!   raised to `C` when `f T < C` (a generated task is always feasible on its own).
//!
//! `D` is rounded to the nearest ns (ties away from zero) and kept in `[C, T]`, so generated
//! deadlines are never arbitrary (`D <= T`) and `C <= D` always.

use crate::rng::uniform;
use rand::RngCore;
use rtsched_model::{ModelError, Time, MAX_TIME};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum DeadlineGen {
    #[default]
    Implicit,
    Constrained {
        lo: f64,
        hi: f64,
    },
    PeriodFraction {
        lo: f64,
        hi: f64,
    },
}

impl DeadlineGen {
    /// Checks the fraction range; errors name `deadline_lo` or `deadline_hi`.
    pub fn validate(&self) -> Result<(), ModelError> {
        let (lo, hi, open_lo) = match *self {
            DeadlineGen::Implicit => return Ok(()),
            DeadlineGen::Constrained { lo, hi } => (lo, hi, false),
            DeadlineGen::PeriodFraction { lo, hi } => (lo, hi, true),
        };
        let lo_ok = if open_lo { lo > 0.0 && lo <= 1.0 } else { (0.0..=1.0).contains(&lo) };
        if !lo_ok {
            let range = if open_lo { "(0, 1]" } else { "[0, 1]" };
            return Err(ModelError::field("deadline_lo", format!("must lie in {range}, got {lo}")));
        }
        if !(0.0..=1.0).contains(&hi) {
            return Err(ModelError::field("deadline_hi", format!("must lie in [0, 1], got {hi}")));
        }
        if lo > hi {
            return Err(ModelError::field("deadline_lo", format!("the lower fraction {lo} exceeds the upper {hi}")));
        }
        Ok(())
    }

    /// The deadline of a task with WCET `c` and period `t`; checks the fractions and
    /// `1 <= c <= t <= 2^53` first (errors name `deadline_lo`, `deadline_hi`, `wcet`, `period`).
    pub fn sample<R: RngCore + ?Sized>(&self, c: Time, t: Time, rng: &mut R) -> Result<Time, ModelError> {
        self.validate()?;
        if t == 0 || t > MAX_TIME {
            return Err(ModelError::field("period", format!("must lie in [1 ns, 2^53 ns], got {t}")));
        }
        if c == 0 || c > t {
            return Err(ModelError::field("wcet", format!("must lie in [1 ns, period = {t} ns], got {c}")));
        }
        Ok(self.sample_valid(c, t, rng))
    }

    /// [`DeadlineGen::sample`] without the checks (`1 <= c <= t`, fractions valid).
    #[inline]
    pub(crate) fn sample_valid<R: RngCore + ?Sized>(&self, c: Time, t: Time, rng: &mut R) -> Time {
        let d = match *self {
            DeadlineGen::Implicit => return t,
            DeadlineGen::Constrained { lo, hi } => c as f64 + uniform(rng, lo, hi) * (t - c) as f64,
            DeadlineGen::PeriodFraction { lo, hi } => uniform(rng, lo, hi) * t as f64,
        };
        let d = d.round();
        if d <= c as f64 {
            c
        } else if d >= t as f64 {
            t
        } else {
            d as Time
        }
    }

    /// Parses `implicit`, `constrained` (= `constrained:0-1`), `constrained:LO-HI`,
    /// `fraction:LO-HI` (fractions as decimals, e.g. `fraction:0.5-1`).
    pub fn parse(s: &str) -> Result<DeadlineGen, ModelError> {
        let text = s.trim().to_ascii_lowercase();
        let bad = |why: &str| ModelError::field("deadlines", format!("cannot read deadline generator {s:?}: {why}"));
        let fractions = |r: &str| -> Result<(f64, f64), ModelError> {
            let (a, b) = r.split_once('-').ok_or_else(|| bad("expected a range LO-HI of fractions, like 0.5-1"))?;
            let num = |x: &str| x.trim().parse::<f64>().map_err(|_| bad("fractions must be decimal numbers"));
            Ok((num(a)?, num(b)?))
        };
        let g = match text.split_once(':') {
            None if text == "implicit" => DeadlineGen::Implicit,
            None if text == "constrained" => DeadlineGen::Constrained { lo: 0.0, hi: 1.0 },
            Some(("constrained", r)) => {
                let (lo, hi) = fractions(r)?;
                DeadlineGen::Constrained { lo, hi }
            }
            Some(("fraction", r)) => {
                let (lo, hi) = fractions(r)?;
                DeadlineGen::PeriodFraction { lo, hi }
            }
            _ => return Err(bad("expected implicit, constrained, constrained:LO-HI or fraction:LO-HI")),
        };
        g.validate()?;
        Ok(g)
    }
}

/// The canonical string form, accepted by [`DeadlineGen::parse`] (floats print exactly).
impl fmt::Display for DeadlineGen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeadlineGen::Implicit => f.write_str("implicit"),
            DeadlineGen::Constrained { lo, hi } => write!(f, "constrained:{lo}-{hi}"),
            DeadlineGen::PeriodFraction { lo, hi } => write!(f, "fraction:{lo}-{hi}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Purpose};

    #[test]
    fn parses_and_rejects() {
        assert_eq!(DeadlineGen::parse("implicit").unwrap(), DeadlineGen::Implicit);
        assert_eq!(DeadlineGen::parse("constrained").unwrap(), DeadlineGen::Constrained { lo: 0.0, hi: 1.0 });
        assert_eq!(DeadlineGen::parse("fraction:0.5-1").unwrap(), DeadlineGen::PeriodFraction { lo: 0.5, hi: 1.0 });
        for (s, f) in [
            ("fraction:0-1", "deadline_lo"),
            ("constrained:0.8-0.2", "deadline_lo"),
            ("constrained:0-1.5", "deadline_hi"),
            ("constrained:nan-1", "deadline_lo"),
            ("constrained:a-1", "deadlines"),
            ("sporadic", "deadlines"),
        ] {
            assert_eq!(DeadlineGen::parse(s).unwrap_err().field.as_deref(), Some(f), "{s}");
        }
    }

    #[test]
    fn display_round_trips() {
        for g in [
            DeadlineGen::Implicit,
            DeadlineGen::Constrained { lo: 0.0, hi: 1.0 },
            DeadlineGen::Constrained { lo: 0.1 + 0.2, hi: 0.9 },
            DeadlineGen::PeriodFraction { lo: 1e-9, hi: 0.5 },
        ] {
            assert_eq!(DeadlineGen::parse(&g.to_string()).unwrap(), g, "{g}");
        }
    }

    #[test]
    fn deadlines_stay_in_c_t() {
        let mut r = stream(1, 0, Purpose::Deadline);
        for g in [DeadlineGen::Constrained { lo: 0.0, hi: 1.0 }, DeadlineGen::PeriodFraction { lo: 0.01, hi: 0.2 }] {
            for (c, t) in [(1u64, 1u64), (1, 2), (5, 10), (999, 1000), (1, 1 << 53)] {
                for _ in 0..200 {
                    let d = g.sample(c, t, &mut r).unwrap();
                    assert!(c <= d && d <= t, "{g:?} c={c} t={t} d={d}");
                }
            }
        }
        // The constrained form spans its range: f = 0.5 exactly gives the midpoint.
        assert_eq!(DeadlineGen::Constrained { lo: 0.5, hi: 0.5 }.sample(10, 30, &mut r).unwrap(), 20);
        assert_eq!(DeadlineGen::PeriodFraction { lo: 0.5, hi: 0.5 }.sample(10, 30, &mut r).unwrap(), 15);
        assert_eq!(DeadlineGen::PeriodFraction { lo: 0.1, hi: 0.1 }.sample(10, 30, &mut r).unwrap(), 10);
        let g = DeadlineGen::Constrained { lo: 0.0, hi: 1.0 };
        assert_eq!(g.sample(31, 30, &mut r).unwrap_err().field.as_deref(), Some("wcet"));
        assert_eq!(g.sample(0, 30, &mut r).unwrap_err().field.as_deref(), Some("wcet"));
        assert_eq!(g.sample(1, 0, &mut r).unwrap_err().field.as_deref(), Some("period"));
        let bad = DeadlineGen::PeriodFraction { lo: 0.0, hi: 1.0 };
        assert_eq!(bad.sample(1, 2, &mut r).unwrap_err().field.as_deref(), Some("deadline_lo"));
    }
}
