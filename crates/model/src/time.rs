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

/// Formats a duration for people: three significant digits in the unit that suits its
/// magnitude (`83.6 ms`, `1.5 s`, `250 µs`, `7 ns`), trailing zeros dropped. Inexact by design:
/// for tables, axes and messages. Files and JSON keep integer ns; [`format_duration`] is the
/// exact form.
pub fn format_time(t: Time) -> String {
    const UNITS: [(&str, f64); 4] = [("ns", 1.0), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)];
    if t < 1000 {
        return format!("{t} ns");
    }
    let mut k = match t {
        0..=999_999 => 1,
        1_000_000..=999_999_999 => 2,
        _ => 3,
    };
    loop {
        let v = t as f64 / UNITS[k].1;
        let decimals = if v >= 100.0 {
            0
        } else if v >= 10.0 {
            1
        } else {
            2
        };
        let text = format!("{v:.decimals$}");
        // 999.96 ms rounds to "1000": say 1 s instead.
        if k < 3 && text.split('.').next().is_some_and(|i| i.len() > 3) {
            k += 1;
            continue;
        }
        let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
        return format!("{text} {}", UNITS[k].0);
    }
}

/// Formats a duration for a reason line that must stay exact: a round value in the largest
/// unit that holds it exactly with at most four digits (`2 ms`, `1500 µs`, `7 ns`), otherwise the
/// readable form with the exact nanoseconds beside it (`12.3 ms (12345678 ns)`), so two values a
/// verdict compares never print alike when they differ.
pub fn format_time_exact(t: Time) -> String {
    if t == 0 {
        return "0 ns".into();
    }
    for (unit, div) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("µs", 1_000), ("ns", 1)] {
        if t.is_multiple_of(div) && t / div < 10_000 {
            return format!("{} {unit}", t / div);
        }
    }
    format!("{} ({t} ns)", format_time(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_times_read_well_and_stay_exact() {
        assert_eq!(format_time_exact(0), "0 ns");
        assert_eq!(format_time_exact(7), "7 ns");
        assert_eq!(format_time_exact(2_000_000), "2 ms");
        assert_eq!(format_time_exact(1_500_000), "1500 µs");
        assert_eq!(format_time_exact(10_000_000_000), "10 s");
        assert_eq!(format_time_exact(12_345_678), "12.3 ms (12345678 ns)");
        // Two values one nanosecond apart never print alike.
        assert_ne!(format_time_exact(10_000_000), format_time_exact(10_000_001));
    }

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
    fn format_time_reads_well() {
        for (t, want) in [
            (0u64, "0 ns"),
            (7, "7 ns"),
            (999, "999 ns"),
            (1000, "1 µs"),
            (1500, "1.5 µs"),
            (250_000, "250 µs"),
            (2_000_000, "2 ms"),
            (83_648_717, "83.6 ms"),
            (999_960_000, "1 s"),
            (999_999, "1 ms"),
            (1_234_567_890, "1.23 s"),
            (20_000_000_000, "20 s"),
            (3_600_000_000_000, "3600 s"),
        ] {
            assert_eq!(format_time(t), want, "{t}");
        }
        // Within 0.5% of the exact value (three significant digits).
        for t in [1u64, 12_345, 98_765_432, 4_999_999_999, u64::MAX / 3] {
            let s = format_time(t);
            let (num, unit) = s.split_once(' ').unwrap();
            let scale = match unit {
                "ns" => 1.0,
                "µs" => 1e3,
                "ms" => 1e6,
                _ => 1e9,
            };
            let v: f64 = num.parse::<f64>().unwrap() * scale;
            assert!((v - t as f64).abs() <= 0.005 * t as f64, "{t} -> {s}");
        }
    }

    #[test]
    fn format_round_trips() {
        for t in [0u64, 1, 999, 1000, 1_500_000, 2_000_000_000, 123_456_789] {
            assert_eq!(parse_duration(&format_duration(t)).unwrap(), t);
        }
        assert_eq!(format_duration(2_000_000), "2ms");
    }
}
