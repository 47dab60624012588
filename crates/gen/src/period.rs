//! Period generators.
//!
//! * `Uniform { min, max }`: `T` uniform on the real interval `[min, max]`, rounded to the
//!   nearest ns (ties away from zero) and kept in `[min, max]`.
//! * `LogUniform { min, max }`: `ln T` uniform on `[ln min, ln max]` (Emberson et al., WATERS
//!   2010, §5; seed 000 §V-A), rounded likewise.
//! * `Integral { min, max, granularity }`: uniform over the whole multiples of `granularity`
//!   in `[min, max]` (seed 001 §4.2: "all periods were chosen to be integral", i.e. whole ms).
//! * `Set(list)`: uniform over the list's entries (seed 004 §V draws from
//!   {1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500, 1000} ms: preset `bg2016`).
//!
//! Presets: `bg2016` (Brandenburg & Gül, RTSS 2016); `bg2016-artifact`, the same draw with every
//! period clamped up to at least 10 ms, as the published code of Brandenburg & Gül (RTSS 2016)
//! generates its §V sets (SchedCAT's Emberson–Stafford–Davis generator, called with the period
//! list as the distribution and its default range name 'uni-moderate' = (10, 100) ms, raises
//! every period to at least the range's minimum: 1, 2, 4, 5 and 8 ms become 10 ms, so 10 ms is
//! drawn with probability 6/16); and the three integral ranges of Brandenburg & Anderson, RTSS
//! 2009, `uni-short` (3–33 ms), `uni-moderate` (10–100 ms), `uni-long` (50–250 ms). The older
//! names `seed004`, `seed004-artifact`, `seed001-short`, ... are accepted too.

use crate::rng::{below, unit};
use rand::RngCore;
use rtsched_model::time::{format_duration, parse_duration};
use rtsched_model::{ModelError, Time, MAX_TIME};
use std::fmt;

const MS: Time = 1_000_000;

/// The period set of seed 004 §V (Brandenburg & Gül, RTSS 2016), in ms.
pub const SEED004_PERIODS_MS: [Time; 16] = [1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500, 1000];

/// The smallest period of the `seed004-artifact` preset: the published code's clamp (ms).
pub const SEED004_ARTIFACT_MIN_MS: Time = 10;

/// How task periods are drawn (each task independently).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeriodGen {
    Uniform { min: Time, max: Time },
    LogUniform { min: Time, max: Time },
    Integral { min: Time, max: Time, granularity: Time },
    Set(Vec<Time>),
}

/// Rounds a positive float to the nearest integer ns (ties away from zero) inside `[lo, hi]`.
#[inline]
fn round_into(x: f64, lo: Time, hi: Time) -> Time {
    let r = x.round();
    if r <= lo as f64 {
        lo
    } else if r >= hi as f64 {
        hi
    } else {
        r as Time
    }
}

impl PeriodGen {
    /// The seed 004 period set.
    pub fn seed004() -> PeriodGen {
        PeriodGen::Set(SEED004_PERIODS_MS.iter().map(|p| p * MS).collect())
    }

    /// The seed 004 period set as the paper's published code draws it: uniform over the same 16
    /// entries, each raised to at least 10 ms. Kept as a set with repeated entries (10 ms six
    /// times), so the i-th draw of a stream is exactly `max(seed004's i-th draw, 10 ms)`.
    pub fn seed004_artifact() -> PeriodGen {
        PeriodGen::Set(SEED004_PERIODS_MS.iter().map(|p| (*p).max(SEED004_ARTIFACT_MIN_MS) * MS).collect())
    }

    /// Checks the parameters; errors name the field (`min`, `max`, `granularity`, `set`).
    pub fn validate(&self) -> Result<(), ModelError> {
        let range = |min: Time, max: Time| -> Result<(), ModelError> {
            if min == 0 {
                return Err(ModelError::field("min", "the smallest period must be at least 1 ns, got 0"));
            }
            if max > MAX_TIME {
                return Err(ModelError::field("max", format!("{max} ns exceeds the largest supported time 2^53 ns")));
            }
            if min > max {
                return Err(ModelError::field(
                    "min",
                    format!("the smallest period {min} ns exceeds the largest {max} ns"),
                ));
            }
            Ok(())
        };
        match self {
            PeriodGen::Uniform { min, max } | PeriodGen::LogUniform { min, max } => range(*min, *max),
            PeriodGen::Integral { min, max, granularity } => {
                range(*min, *max)?;
                if *granularity == 0 {
                    return Err(ModelError::field("granularity", "must be at least 1 ns, got 0"));
                }
                if Self::multiples(*min, *max, *granularity).is_none() {
                    return Err(ModelError::field(
                        "granularity",
                        format!("no multiple of {granularity} ns lies in [{min}, {max}] ns"),
                    ));
                }
                Ok(())
            }
            PeriodGen::Set(v) => {
                if v.is_empty() {
                    return Err(ModelError::field("set", "the period set is empty"));
                }
                for (i, &p) in v.iter().enumerate() {
                    if p == 0 || p > MAX_TIME {
                        return Err(ModelError::field(
                            "set",
                            format!("entry {i} is {p} ns; periods must lie in [1 ns, 2^53 ns]"),
                        ));
                    }
                }
                Ok(())
            }
        }
    }

    /// `(first, last)` multiplier `k` with `k * g` in `[min, max]`, if any.
    fn multiples(min: Time, max: Time, g: Time) -> Option<(u64, u64)> {
        let lo = min.div_ceil(g);
        let hi = max / g;
        (lo <= hi && lo >= 1).then_some((lo, hi))
    }

    /// One period; checks the parameters first (errors as [`PeriodGen::validate`]).
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> Result<Time, ModelError> {
        self.validate()?;
        Ok(self.sample_valid(rng))
    }

    /// One period, parameters already validated.
    #[inline]
    pub(crate) fn sample_valid<R: RngCore + ?Sized>(&self, rng: &mut R) -> Time {
        match self {
            PeriodGen::Uniform { min, max } => {
                let (a, b) = (*min as f64, *max as f64);
                round_into(a + (b - a) * unit(rng), *min, *max)
            }
            PeriodGen::LogUniform { min, max } => {
                let (a, b) = ((*min as f64).ln(), (*max as f64).ln());
                round_into((a + (b - a) * unit(rng)).exp(), *min, *max)
            }
            PeriodGen::Integral { min, max, granularity } => match Self::multiples(*min, *max, *granularity) {
                Some((lo, hi)) => (lo + below(rng, hi - lo + 1)) * granularity,
                None => *min,
            },
            PeriodGen::Set(v) => v[below(rng, v.len() as u64) as usize],
        }
    }

    /// Parses the CLI syntax (durations take units: `10ms`, `250us`, `1s`, plain = ns):
    ///
    /// * `uniform:10ms-100ms`, `loguniform:10ms-100ms`
    /// * `integral:10ms-100ms` (granularity 1 ms) or `integral:10ms-100ms/5ms`
    /// * `set:1ms,2ms,4ms`
    /// * presets named by their paper: `bg2016`, the period set of Brandenburg & Gül, RTSS
    ///   2016, and `bg2016-artifact`, the same set as their published code draws it (periods
    ///   clamped up to 10 ms); `uni-short`, `uni-moderate`, `uni-long`, the integral ranges of
    ///   Brandenburg & Anderson, RTSS 2009 (SchedCAT's names for them). The older names
    ///   `seed004`, `seed004-artifact`, `seed001-short`, `seed001-moderate`, `seed001-long` are
    ///   accepted too.
    ///
    /// The result is validated; errors name the field (`periods` for malformed text).
    pub fn parse(s: &str) -> Result<PeriodGen, ModelError> {
        let text = s.trim();
        let bad = |why: String| ModelError::field("periods", format!("cannot read period generator {s:?}: {why}"));
        let dur = |t: &str| parse_duration(t).map_err(|e| bad(e.reason));
        let range = |t: &str| -> Result<(Time, Time), ModelError> {
            let (a, b) = t.split_once('-').ok_or_else(|| bad("expected a range MIN-MAX, like 10ms-100ms".into()))?;
            Ok((dur(a)?, dur(b)?))
        };
        let g = match text.to_ascii_lowercase().as_str() {
            "bg2016" | "seed004" => PeriodGen::seed004(),
            "bg2016-artifact" | "seed004-artifact" => PeriodGen::seed004_artifact(),
            "uni-short" | "seed001-short" => PeriodGen::Integral { min: 3 * MS, max: 33 * MS, granularity: MS },
            "uni-moderate" | "seed001-moderate" => PeriodGen::Integral { min: 10 * MS, max: 100 * MS, granularity: MS },
            "uni-long" | "seed001-long" => PeriodGen::Integral { min: 50 * MS, max: 250 * MS, granularity: MS },
            _ => {
                let (kind, rest) = text.split_once(':').ok_or_else(|| {
                    bad("expected uniform:MIN-MAX, loguniform:MIN-MAX, integral:MIN-MAX[/GRANULARITY], set:P1,P2,... or a preset (bg2016, bg2016-artifact, uni-short, uni-moderate, uni-long)".into())
                })?;
                match kind.trim().to_ascii_lowercase().as_str() {
                    "uniform" => {
                        let (min, max) = range(rest)?;
                        PeriodGen::Uniform { min, max }
                    }
                    "loguniform" | "log-uniform" => {
                        let (min, max) = range(rest)?;
                        PeriodGen::LogUniform { min, max }
                    }
                    "integral" => {
                        let (r, granularity) = match rest.split_once('/') {
                            Some((r, gr)) => (r, dur(gr)?),
                            None => (rest, MS),
                        };
                        let (min, max) = range(r)?;
                        PeriodGen::Integral { min, max, granularity }
                    }
                    "set" => PeriodGen::Set(rest.split(',').map(dur).collect::<Result<_, _>>()?),
                    other => return Err(bad(format!("unknown kind {other:?} (uniform, loguniform, integral, set)"))),
                }
            }
        };
        g.validate()?;
        Ok(g)
    }
}

/// The canonical string form, accepted by [`PeriodGen::parse`] (presets print as their
/// definition, e.g. `seed004` as `set:1ms,2ms,...`).
impl fmt::Display for PeriodGen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = |t: &Time| format_duration(*t);
        match self {
            PeriodGen::Uniform { min, max } => write!(f, "uniform:{}-{}", d(min), d(max)),
            PeriodGen::LogUniform { min, max } => write!(f, "loguniform:{}-{}", d(min), d(max)),
            PeriodGen::Integral { min, max, granularity } => {
                write!(f, "integral:{}-{}/{}", d(min), d(max), d(granularity))
            }
            PeriodGen::Set(v) => write!(f, "set:{}", v.iter().map(d).collect::<Vec<_>>().join(",")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_format() {
        assert_eq!(PeriodGen::parse("uniform:10ms-100ms").unwrap(), PeriodGen::Uniform { min: 10 * MS, max: 100 * MS });
        assert_eq!(PeriodGen::parse("loguniform:1ms-1s").unwrap(), PeriodGen::LogUniform { min: MS, max: 1000 * MS });
        assert_eq!(
            PeriodGen::parse("integral:10ms-100ms").unwrap(),
            PeriodGen::Integral { min: 10 * MS, max: 100 * MS, granularity: MS }
        );
        assert_eq!(
            PeriodGen::parse("integral:10ms-100ms/5ms").unwrap(),
            PeriodGen::Integral { min: 10 * MS, max: 100 * MS, granularity: 5 * MS }
        );
        assert_eq!(PeriodGen::parse("set:1ms, 2ms,4ms").unwrap(), PeriodGen::Set(vec![MS, 2 * MS, 4 * MS]));
        let p = PeriodGen::parse("seed004").unwrap();
        assert_eq!(p, PeriodGen::Set(SEED004_PERIODS_MS.iter().map(|x| x * MS).collect()));
        assert!(matches!(PeriodGen::parse("seed001-moderate").unwrap(), PeriodGen::Integral { .. }));
        for (new, old) in [
            ("bg2016", "seed004"),
            ("BG2016-artifact", "seed004-artifact"),
            ("uni-short", "seed001-short"),
            ("UNI-MODERATE", "seed001-moderate"),
            ("uni-long", "seed001-long"),
        ] {
            assert_eq!(PeriodGen::parse(new).unwrap(), PeriodGen::parse(old).unwrap(), "{new}");
        }
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "uniform:10ms-100ms",
            "loguniform:1ms-1s",
            "integral:10ms-100ms/5ms",
            "set:1ms,2500us,7",
            "seed004",
            "seed004-artifact",
            "seed001-long",
        ] {
            let g = PeriodGen::parse(s).unwrap();
            assert_eq!(PeriodGen::parse(&g.to_string()).unwrap(), g, "{s} -> {g}");
        }
        assert_eq!(PeriodGen::parse("integral:10ms-100ms").unwrap().to_string(), "integral:10ms-100ms/1ms");
    }

    /// The artifact preset is seed004's draw clamped to 10 ms, draw by draw (same stream), and
    /// its empirical distribution matches: 10 ms with probability 6/16, every longer period 1/16,
    /// nothing below 10 ms.
    #[test]
    fn seed004_artifact_is_the_clamped_draw() {
        use rand::SeedableRng;
        let (a, b) = (PeriodGen::parse("seed004").unwrap(), PeriodGen::parse("Seed004-Artifact").unwrap());
        let mut ra = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut rb = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let draws = 160_000;
        let mut count = std::collections::BTreeMap::new();
        for _ in 0..draws {
            let (x, y) = (a.sample(&mut ra).unwrap(), b.sample(&mut rb).unwrap());
            assert_eq!(y, x.max(10 * MS));
            *count.entry(y / MS).or_insert(0u32) += 1;
        }
        assert!(count.keys().all(|&p| p >= 10));
        assert_eq!(count.len(), 11);
        for (&p, &c) in &count {
            let want = if p == 10 { 6.0 / 16.0 } else { 1.0 / 16.0 };
            let sd = (want * (1.0 - want) / draws as f64).sqrt();
            let got = c as f64 / draws as f64;
            assert!((got - want).abs() < 5.0 * sd, "{p} ms: {got} vs {want}");
        }
    }

    #[test]
    fn rejects_bad_generators_naming_the_field() {
        for (s, field) in [
            ("uniform:100ms-10ms", "min"),
            ("uniform:0-10ms", "min"),
            ("loguniform:0ms-1ms", "min"),
            ("set:", "periods"),
            ("set:0", "set"),
            ("integral:10ms-100ms/0", "granularity"),
            ("integral:11ms-19ms/10ms", "granularity"),
            ("uniform:10ms", "periods"),
            ("gaussian:1ms-2ms", "periods"),
            ("uniform:1fortnight-2ms", "periods"),
            ("10ms", "periods"),
            ("uniform:1ms-200days", "periods"),
        ] {
            let e = PeriodGen::parse(s).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{s}: {e}");
        }
        assert_eq!(PeriodGen::Set(vec![]).validate().unwrap_err().field.as_deref(), Some("set"));
        assert_eq!(
            PeriodGen::Uniform { min: 1, max: MAX_TIME + 1 }.validate().unwrap_err().field.as_deref(),
            Some("max")
        );
    }
}
