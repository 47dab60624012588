//! Time: integer nanoseconds, and exact parsing of duration strings.

use crate::ModelError;

/// A point in time or a duration, in nanoseconds.
pub type Time = u64;

/// The largest time a task parameter may have: 2^53 ns (about 104 days).
///
/// Below it every time converts to `f64` exactly, and sums and products of a few of them fit
/// `u128` with room to spare, which the exact tests rely on.
pub const MAX_TIME: Time = 1 << 53;

const UNITS: [(&str, u32); 6] = [("ns", 0), ("us", 3), ("µs", 3), ("μs", 3), ("ms", 6), ("s", 9)];

/// Parses a duration: a plain integer (nanoseconds) or a decimal number followed by a unit
/// `ns`, `us` (or `µs`), `ms` or `s`, optionally separated by a space: `"2ms"`, `"250 us"`,
/// `"1.5s"`, `"1000"`. The conversion is exact; a value that is not a whole number of
/// nanoseconds (`"0.5ns"`) or that exceeds `u64` is an error, never silently rounded.
pub fn parse_duration(text: &str) -> Result<Time, ModelError> {
    let s = text.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, unit) = (&s[..split], s[split..].trim());
    let exp = if unit.is_empty() {
        0
    } else {
        match UNITS.iter().find(|(u, _)| *u == unit) {
            Some(&(_, e)) => e,
            None => {
                return Err(ModelError::new(format!(
                    "cannot read duration {text:?}: unknown unit {unit:?} (use ns, us, ms or s)"
                )))
            }
        }
    };
    let bad = || {
        ModelError::new(format!("cannot read duration {text:?}: expected a non-negative number with an optional unit, like \"2ms\", \"250us\" or \"1.5s\""))
    };
    let (int_part, frac_part) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() || frac_part.contains('.') {
        return Err(bad());
    }
    let frac_trimmed = frac_part.trim_end_matches('0');
    if frac_trimmed.len() as u32 > exp {
        return Err(ModelError::new(format!("cannot read duration {text:?}: not a whole number of nanoseconds")));
    }
    let overflow = || ModelError::new(format!("duration {text:?} does not fit in 64-bit nanoseconds"));
    let mut value: u128 = 0;
    for c in int_part.chars().chain(frac_trimmed.chars()) {
        value = value * 10 + c.to_digit(10).ok_or_else(bad)? as u128;
        if value > u64::MAX as u128 {
            return Err(overflow());
        }
    }
    value *= 10u128.pow(exp - frac_trimmed.len() as u32);
    u64::try_from(value).map_err(|_| overflow())
}

/// Formats a duration with the largest unit that represents it exactly (`2ms`, `1500us`, `7ns`).
pub fn format_duration(t: Time) -> String {
    if t == 0 {
        return "0ns".into();
    }
    for (unit, div) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if t.is_multiple_of(div) {
            return format!("{}{unit}", t / div);
        }
    }
    format!("{t}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_exactly() {
        assert_eq!(parse_duration("2ms").unwrap(), 2_000_000);
        assert_eq!(parse_duration("250us").unwrap(), 250_000);
        assert_eq!(parse_duration("250 µs").unwrap(), 250_000);
        assert_eq!(parse_duration("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration("1000").unwrap(), 1000);
        assert_eq!(parse_duration("7ns").unwrap(), 7);
        assert_eq!(parse_duration("0.000001ms").unwrap(), 1);
        assert_eq!(parse_duration("1.250ms").unwrap(), 1_250_000);
        assert_eq!(parse_duration(".5us").unwrap(), 500);
    }

    #[test]
    fn rejects_bad_durations() {
        for s in ["", "ms", "-1ms", "1.5", "0.5ns", "1.2.3s", "2 hours", "1e3", "99999999999999999999"] {
            assert!(parse_duration(s).is_err(), "{s:?} should be rejected");
        }
        let msg = parse_duration("3 fortnights").unwrap_err().to_string();
        assert!(msg.contains("unknown unit"), "{msg}");
    }

    #[test]
    fn format_round_trips() {
        for t in [0u64, 1, 999, 1000, 1_500_000, 2_000_000_000, 123_456_789] {
            assert_eq!(parse_duration(&format_duration(t)).unwrap(), t);
        }
        assert_eq!(format_duration(2_000_000), "2ms");
    }
}
