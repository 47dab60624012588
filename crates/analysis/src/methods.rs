//! Method names: one name per test or placement method, the same in `rtsched analyze --test`,
//! `rtsched partition --heuristic`, sweep specs and the Python API (docs/cli.md, "Method
//! names").
//!
//! The scheme:
//! * names are matched case-insensitively, and `_` and `-` are the same character
//!   (`pedf-ffd` = `PEDF_FFD` = `pedf_ffd`); results use the canonical spelling below;
//! * the schedulability tests keep their names (`gfb`, `bcl_iterative`, `gedf_srt`, ...);
//! * plain partitioning — whole tasks, decreasing utilization, each processor admitted by the
//!   exact test of its scheduler — is `<scheduler>_<fit>`: `pedf_ffd`, `pedf_wfd`, `pedf_bfd`,
//!   `pedf_nfd` (EDF, processor demand criterion via QPA), `pfp_ffd`, ... (fixed priority,
//!   deadline monotonic, response-time analysis), `pfp_rm_ffd`, ... (rate monotonic);
//! * SP-RES (Brandenburg & Gül, RTSS 2016, §IV-B) keeps the paper's names, lower case:
//!   `ffd`, `wfd`, `ffd-c=d`, `wfd-c=d`, `wfd-c=d-ms`, `2wfd-c=d`, `wwfd`, `fwfd`, `wffd`,
//!   `fffd`, `paf-<h>`, `rp-<h>` (also `PAF(WWFD)`), and the cascades `spres`,
//!   `spres-nometa`, `spres-paf`, `spres-partition`.
//!
//! So `ffd` is SP-RES's FFD (decreasing density, reservations) everywhere, and plain
//! first-fit decreasing partitioned EDF is `pedf_ffd` everywhere; for implicit deadlines the
//! two place every task set alike. Tested here and from Python (tests/test_methods.py).

use crate::partition::{Admission, Fit};
use crate::semi::Heuristic;
use crate::uni::fp::Priority;

/// The SP-RES cascades.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cascade {
    /// Every heuristic, PAF and RP included (`spres`).
    Full,
    /// The basic heuristics only (`spres-nometa`).
    NoMeta,
    /// The basic heuristics and PAF, without RP (`spres-paf`).
    Paf,
    /// The two plain heuristics, WFD and FFD, in the reading's order (`spres-partition`).
    Partition,
}

/// What a method name means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    /// A schedulability test of `report::TEST_NAMES` (its canonical name).
    Test(&'static str),
    /// Plain partitioning: whole tasks, decreasing utilization, exact admission.
    Plain { fit: Fit, admission: Admission },
    /// An SP-RES cascade.
    Cascade(Cascade),
    /// One SP-RES heuristic.
    Heuristic(Heuristic),
}

const FITS: [(&str, Fit); 4] = [("ffd", Fit::First), ("wfd", Fit::Worst), ("bfd", Fit::Best), ("nfd", Fit::Next)];
const SCHEDULERS: [(&str, Admission); 3] = [
    ("pedf", Admission::Edf),
    ("pfp", Admission::Fp(Priority::DeadlineMonotonic)),
    ("pfp_rm", Admission::Fp(Priority::RateMonotonic)),
];
const CASCADES: [(&str, Cascade); 4] = [
    ("spres", Cascade::Full),
    ("spres-nometa", Cascade::NoMeta),
    ("spres-paf", Cascade::Paf),
    ("spres-partition", Cascade::Partition),
];

/// The matching key of a name: trimmed, lower case, `_` read as `-`.
fn key(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace('_', "-")
}

/// [`key`] for the sweep's other names (the optimal schedulers).
pub(crate) fn key_of(name: &str) -> String {
    key(name)
}

/// Every plain partitioning method's canonical name, in a stable order.
pub fn plain_names() -> Vec<String> {
    SCHEDULERS.iter().flat_map(|(s, _)| FITS.iter().map(move |(f, _)| format!("{s}_{f}"))).collect()
}

/// The canonical name of a schedulability test (`BCL-iterative` -> `bcl_iterative`), if `name`
/// is one of `tests`.
pub fn test(name: &str, tests: &[&'static str]) -> Option<&'static str> {
    let k = key(name);
    tests.iter().copied().find(|t| key(t) == k)
}

/// Resolves any method name; returns its meaning and canonical spelling, or None.
pub fn resolve(name: &str, tests: &[&'static str]) -> Option<(Method, String)> {
    let k = key(name);
    if let Some(t) = test(name, tests) {
        return Some((Method::Test(t), t.to_string()));
    }
    for (s, adm) in SCHEDULERS {
        for (f, fit) in FITS {
            let canonical = format!("{s}_{f}");
            if key(&canonical) == k {
                return Some((Method::Plain { fit, admission: adm }, canonical));
            }
        }
    }
    if let Some((c, cascade)) = CASCADES.iter().find(|(c, _)| *c == k) {
        return Some((Method::Cascade(*cascade), c.to_string()));
    }
    let h = Heuristic::from_name(&k)?;
    Some((Method::Heuristic(h), canonical_heuristic(&h)))
}

/// `PAF(WWFD)` -> `paf-wwfd`: the lower-case, hyphenated spelling of an SP-RES heuristic.
pub fn canonical_heuristic(h: &Heuristic) -> String {
    h.name().to_ascii_lowercase().replace('(', "-").replace(')', "")
}

/// The one-line list of names for error messages.
pub fn help(tests: &[&'static str]) -> String {
    let heuristics: Vec<String> = Heuristic::all().iter().map(canonical_heuristic).collect();
    let tests = if tests.is_empty() { String::new() } else { format!("tests: {}; ", tests.join(", ")) };
    format!(
        "{tests}partitioning: {}; SP-RES: {}, {} (docs/cli.md, Method names)",
        plain_names().join(", "),
        CASCADES.iter().map(|(c, _)| *c).collect::<Vec<_>>().join(", "),
        heuristics.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::TEST_NAMES;

    #[test]
    fn every_spelling_resolves_to_one_canonical_name() {
        for (name, canonical) in [
            ("PEDF-FFD", "pedf_ffd"),
            (" pfp_rm_wfd ", "pfp_rm_wfd"),
            ("BCL-iterative", "bcl_iterative"),
            ("SPRES", "spres"),
            ("PAF(WWFD)", "paf-wwfd"),
            ("ffd-c=d", "ffd-c=d"),
        ] {
            let (_, c) = resolve(name, &TEST_NAMES).unwrap_or_else(|| panic!("{name} did not resolve"));
            assert_eq!(c, canonical, "{name}");
            // The canonical spelling resolves to itself.
            assert_eq!(resolve(&c, &TEST_NAMES).unwrap().1, c);
        }
        assert!(resolve("no-such-method", &TEST_NAMES).is_none());
        assert!(resolve("gfb", &[]).is_none(), "a test name is only a method where tests are allowed");
    }

    #[test]
    fn plain_names_are_every_scheduler_and_fit_and_help_lists_them() {
        let names = plain_names();
        assert_eq!(names.len(), SCHEDULERS.len() * FITS.len());
        let h = help(&TEST_NAMES);
        for n in &names {
            assert!(matches!(resolve(n, &[]), Some((Method::Plain { .. }, _))), "{n}");
            assert!(h.contains(n.as_str()), "{n} missing from the help line");
        }
        for c in ["spres", "spres-nometa", "spres-paf", "spres-partition"] {
            assert!(matches!(resolve(c, &[]), Some((Method::Cascade(_), _))), "{c}");
        }
        for heuristic in Heuristic::all() {
            let n = canonical_heuristic(&heuristic);
            assert_eq!(resolve(&n, &[]), Some((Method::Heuristic(heuristic), n.clone())));
        }
    }
}
