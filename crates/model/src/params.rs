//! A scheduler's parameters, the one vocabulary of the simulator's registry
//! (`rtsched_sim::registry`) and the runtime's mechanism registry
//! (`rtsched_runtime::mechanism::registry`): what kinds of value a parameter takes
//! ([`ParamKind`]), its declaration ([`ParamSpec`]: name, kind, default, help), a value as a
//! caller gives it ([`ParamArg`]: text from a command line, or an integer or a bool from Python)
//! and checked ([`ParamValue`]), and the one error a bad value is ([`ParamError`]).
//!
//! One parser reads every value ([`ParamSpec::parse`]), so both engines accept the same words:
//! a flag is `true`/`false`, `yes`/`no`, `on`/`off` or `1`/`0` (ASCII case ignored,
//! [`parse_bool`]); a duration given as text needs a unit (`2ms`, `250us`; a bare `10` is
//! refused with the fix, as everywhere on the command line), an integer is nanoseconds; an
//! integer is in its declared range; a choice is one of its words.
//!
//! A bad value reads the same in both engines, naming the scheduler, the parameter and the
//! value: `gedf-quantum: parameter staggered: expected true or false (or yes/no, on/off, 1/0),
//! got "maybe"` ([`ParamError::in_scheduler`]).
//!
//! ```
//! use rtsched_model::params::{ParamArg, ParamKind, ParamSpec, ParamValue};
//!
//! let q = ParamSpec { name: "quantum", kind: ParamKind::Duration, default: "1ms", help: "the quantum" };
//! assert_eq!(q.parse("2ms"), Ok(ParamValue::Duration(2_000_000)));
//! assert_eq!(q.parse(ParamArg::Int(500)), Ok(ParamValue::Duration(500)));
//! let flag = ParamSpec { name: "staggered", kind: ParamKind::Bool, default: "false", help: "" };
//! assert_eq!(flag.parse("on"), Ok(ParamValue::Bool(true)));
//! let e = flag.parse("maybe").unwrap_err().in_scheduler("gedf-quantum");
//! assert_eq!(
//!     e.to_string(),
//!     "gedf-quantum: parameter staggered: expected true or false (or yes/no, on/off, 1/0), got \"maybe\""
//! );
//! ```

use crate::io::parse_duration_text;
use crate::Time;
use std::fmt;

/// What values a parameter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// An integer in `min..=max`.
    Int { min: u64, max: u64 },
    /// A duration, at least 1 ns: integer ns, or text with a unit such as `2ms` or `250us`.
    Duration,
    /// A flag: `true`/`false`, `yes`/`no`, `on`/`off` or `1`/`0` ([`parse_bool`]); a bare
    /// `--name` on the command line is true.
    Bool,
    /// One of the listed words (a rule's name).
    Choice(&'static [&'static str]),
    /// Free text, checked by the scheduler (e.g. a mailbox count).
    Text,
    /// Fixed priorities: `dm`, `rm` or one integer rank per task, comma-separated (smaller =
    /// higher); the syntax is checked here ([`parse_priorities`]), the count against the task
    /// set by the scheduler.
    Priorities,
}

/// One declared parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    /// The default, written as a user would (read like a user's text).
    pub default: &'static str,
    pub help: &'static str,
}

/// A parameter value as a caller gives it: text (the command line, `--param KEY=VALUE`), or an
/// integer or a bool (the Python bindings convert `int` and `bool`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamArg {
    Int(u64),
    Text(String),
    Bool(bool),
}

impl From<u64> for ParamArg {
    fn from(v: u64) -> ParamArg {
        ParamArg::Int(v)
    }
}

impl From<&str> for ParamArg {
    fn from(v: &str) -> ParamArg {
        ParamArg::Text(v.to_string())
    }
}

impl From<bool> for ParamArg {
    fn from(v: bool) -> ParamArg {
        ParamArg::Bool(v)
    }
}

impl From<&ParamArg> for ParamArg {
    fn from(v: &ParamArg) -> ParamArg {
        v.clone()
    }
}

impl fmt::Display for ParamArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamArg::Int(v) => write!(f, "{v}"),
            ParamArg::Text(t) => write!(f, "{t:?}"),
            ParamArg::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// A checked parameter value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamValue {
    Int(u64),
    /// Nanoseconds.
    Duration(Time),
    Bool(bool),
    /// A choice's word or free text.
    Text(String),
}

/// A bad value of a scheduler's parameter: names the parameter, and the scheduler once known.
///
/// `Display` reads like `spres: parameter rr_quantum: must be at least 1 ns, got 0`, or, before
/// the scheduler is known, `parameter rr_quantum: must be at least 1 ns, got 0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    /// The scheduler (or mechanism) whose parameter it is, when known.
    pub scheduler: Option<String>,
    /// The parameter's name.
    pub param: String,
    /// What is wrong with its value (a value error ends `got VALUE`).
    pub reason: String,
}

impl ParamError {
    /// The value of `param` is wrong: `reason`.
    pub fn new(param: impl Into<String>, reason: impl Into<String>) -> ParamError {
        ParamError { scheduler: None, param: param.into(), reason: reason.into() }
    }

    /// `name` is not a parameter of `scheduler`, which declares `declared`; `owners`: the
    /// schedulers of the same engine that take it (the reason names them, else what
    /// `scheduler` takes). Name the scheduler with [`ParamError::in_scheduler`].
    pub fn unknown(scheduler: &str, name: &str, declared: &[ParamSpec], owners: &[&str]) -> ParamError {
        let reason = if !owners.is_empty() {
            format!("applies only to --scheduler {}, not {scheduler}", owners.join(", "))
        } else if declared.is_empty() {
            format!("unknown to {scheduler} (it takes none)")
        } else {
            let known: Vec<&str> = declared.iter().map(|p| p.name).collect();
            format!("unknown to {scheduler} (known: {})", known.join(", "))
        };
        ParamError::new(name, reason)
    }

    /// The same error, naming the scheduler `name` (kept if one is named already).
    pub fn in_scheduler(mut self, name: &str) -> ParamError {
        if self.scheduler.is_none() {
            self.scheduler = Some(name.to_string());
        }
        self
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.scheduler {
            write!(f, "{s}: ")?;
        }
        write!(f, "parameter {}: {}", self.param, self.reason)
    }
}

impl std::error::Error for ParamError {}

/// A bad parameter as invalid input: the same one line.
impl From<ParamError> for crate::ModelError {
    fn from(e: ParamError) -> crate::ModelError {
        crate::ModelError::new(e.to_string())
    }
}

/// The words a flag takes, ASCII case ignored and surrounding blanks trimmed: `true`, `yes`,
/// `on`, `1` are true; `false`, `no`, `off`, `0` are false; anything else is `None`.
pub fn parse_bool(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

impl ParamSpec {
    /// Reads `arg` (text, an integer or a bool) as a value of this parameter; the error names
    /// the parameter and the value (name the scheduler with [`ParamError::in_scheduler`]).
    pub fn parse(&self, arg: impl Into<ParamArg>) -> Result<ParamValue, ParamError> {
        let arg = arg.into();
        let bad = |what: String| ParamError::new(self.name, format!("{what}, got {arg}"));
        match (self.kind, &arg) {
            (ParamKind::Int { min, max }, ParamArg::Int(v)) if (min..=max).contains(v) => Ok(ParamValue::Int(*v)),
            (ParamKind::Int { min, max }, ParamArg::Text(t)) => match t.trim().parse::<u64>() {
                Ok(v) if (min..=max).contains(&v) => Ok(ParamValue::Int(v)),
                _ => Err(bad(format!("expected an integer in {min}..={max}"))),
            },
            (ParamKind::Int { min, max }, _) => Err(bad(format!("expected an integer in {min}..={max}"))),
            (ParamKind::Duration, ParamArg::Int(v)) => positive(self.name, *v),
            (ParamKind::Duration, ParamArg::Text(t)) => match parse_duration_text(t) {
                Ok(v) => positive(self.name, v),
                Err(e) => Err(ParamError::new(self.name, e.reason)),
            },
            (ParamKind::Duration, ParamArg::Bool(_)) => {
                Err(bad("expected integer ns or a duration string like \"2ms\"".into()))
            }
            (ParamKind::Bool, ParamArg::Bool(b)) => Ok(ParamValue::Bool(*b)),
            (ParamKind::Bool, ParamArg::Int(v @ (0 | 1))) => Ok(ParamValue::Bool(*v == 1)),
            (ParamKind::Bool, ParamArg::Text(t)) if parse_bool(t).is_some() => {
                Ok(ParamValue::Bool(parse_bool(t) == Some(true)))
            }
            (ParamKind::Bool, _) => Err(bad("expected true or false (or yes/no, on/off, 1/0)".into())),
            (ParamKind::Choice(words), ParamArg::Text(t)) if words.contains(&t.trim()) => {
                Ok(ParamValue::Text(t.trim().to_string()))
            }
            (ParamKind::Choice(words), _) => Err(bad(format!("expected one of {}", words.join(", ")))),
            (ParamKind::Text, ParamArg::Text(t)) => Ok(ParamValue::Text(t.trim().to_string())),
            (ParamKind::Priorities, ParamArg::Text(t)) => match parse_priorities(t) {
                Ok(_) => Ok(ParamValue::Text(t.trim().to_string())),
                Err(reason) => Err(ParamError::new(self.name, reason)),
            },
            (ParamKind::Text | ParamKind::Priorities, _) => Err(bad("expected text".into())),
        }
    }

    /// The kind in words (for listings): `integer 1..=9`, `duration`, `flag`, `a|b`, `text`.
    pub fn kind_name(&self) -> String {
        match self.kind {
            ParamKind::Int { min, max } => format!("integer {min}..={max}"),
            ParamKind::Duration => "duration".into(),
            ParamKind::Bool => "flag".into(),
            ParamKind::Choice(w) => w.join("|"),
            ParamKind::Text => "text".into(),
            ParamKind::Priorities => "dm|rm|ranks".into(),
        }
    }
}

/// Fixed priorities as text, the one reader of every engine's `priorities` (the simulator's
/// and the runtime's parameter, `rtsched analyze --priorities`): `Ok(None)` for `dm`
/// (deadline-monotonic) or `rm` (rate-monotonic), ASCII case ignored, which the caller orders;
/// `Ok(Some(ranks))` for one integer rank per task, comma-separated (smaller = higher). The
/// error is the reason: the entry that is not a rank, with its task, when the text is a list
/// of ranks.
pub fn parse_priorities(text: &str) -> Result<Option<Vec<u32>>, String> {
    if matches!(text.trim().to_ascii_lowercase().as_str(), "dm" | "rm") {
        return Ok(None);
    }
    let entries: Vec<&str> = text.split(',').map(str::trim).collect();
    match entries.iter().position(|x| x.parse::<u32>().is_err()) {
        None => Ok(Some(entries.iter().map(|x| x.parse::<u32>().unwrap_or(u32::MAX)).collect())),
        // A list, or a would-be rank: name the entry and its task.
        Some(i) if entries.len() > 1 || text.chars().any(|c| c.is_ascii_digit()) => Err(format!(
            "task {i}: {:?} is not a rank (dm, rm or one integer rank per task, smaller = higher)",
            entries[i]
        )),
        Some(_) => Err(format!("dm, rm or one integer rank per task, got {text:?}")),
    }
}

/// The values of a scheduler's parameters: every one `specs` declares, at its default unless
/// given, and the names given, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolved {
    pub values: std::collections::BTreeMap<&'static str, ParamValue>,
    pub given: Vec<&'static str>,
}

/// The one reading of a scheduler's given parameters, for the simulator's registry and the
/// runtime's alike, so that a bad one reads the same whichever engine receives it: every
/// parameter of `specs` at its default, overridden by `given` (name, value) pairs. A name is
/// read with `-` as `_` (`rr-quantum` is `rr_quantum`). A name that `specs` does not declare
/// is refused naming what `scheduler` takes, or, where `owners(name)` lists schedulers of the
/// same engine that take it, those ([`ParamError::unknown`]); a name given twice is refused;
/// a value by [`ParamSpec::parse`]. The error names `scheduler`.
pub fn resolve<K, V>(
    scheduler: &str,
    specs: &'static [ParamSpec],
    given: impl IntoIterator<Item = (K, V)>,
    owners: impl Fn(&str) -> Vec<&'static str>,
) -> Result<Resolved, ParamError>
where
    K: AsRef<str>,
    V: Into<ParamArg>,
{
    let mut out = Resolved::default();
    for p in specs {
        let v = p.parse(p.default).map_err(|e| ParamError::new(p.name, format!("bad default: {}", e.reason)))?;
        out.values.insert(p.name, v);
    }
    for (k, v) in given {
        let key = k.as_ref().trim().replace('-', "_");
        let Some(spec) = specs.iter().find(|p| p.name == key) else {
            return Err(ParamError::unknown(scheduler, &key, specs, &owners(&key)).in_scheduler(scheduler));
        };
        if out.given.contains(&spec.name) {
            return Err(ParamError::new(spec.name, "given twice; give it once").in_scheduler(scheduler));
        }
        out.values.insert(spec.name, spec.parse(v).map_err(|e| e.in_scheduler(scheduler))?);
        out.given.push(spec.name);
    }
    Ok(out)
}

fn positive(name: &str, v: Time) -> Result<ParamValue, ParamError> {
    if v == 0 {
        return Err(ParamError::new(name, "must be at least 1 ns, got 0"));
    }
    Ok(ParamValue::Duration(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: ParamKind) -> ParamSpec {
        ParamSpec { name: "x", kind, default: "", help: "" }
    }

    #[test]
    fn a_flag_takes_the_same_words_as_text_and_as_values() {
        let f = spec(ParamKind::Bool);
        for (t, want) in [
            ("true", true),
            ("YES", true),
            (" on ", true),
            ("1", true),
            ("False", false),
            ("no", false),
            ("off", false),
            ("0", false),
        ] {
            assert_eq!(f.parse(t), Ok(ParamValue::Bool(want)), "{t}");
            assert_eq!(parse_bool(t), Some(want), "{t}");
        }
        assert_eq!(f.parse(true), Ok(ParamValue::Bool(true)));
        assert_eq!(f.parse(ParamArg::Int(0)), Ok(ParamValue::Bool(false)));
        for bad in [ParamArg::from("maybe"), ParamArg::from(""), ParamArg::Int(2)] {
            let e = f.parse(&bad).unwrap_err();
            assert_eq!(e.param, "x");
            assert_eq!(e.reason, format!("expected true or false (or yes/no, on/off, 1/0), got {bad}"));
        }
        assert_eq!(parse_bool("y"), None);
    }

    #[test]
    fn each_kind_reads_its_values_and_names_a_bad_one() {
        let int = spec(ParamKind::Int { min: 1, max: 5 });
        assert_eq!((int.parse("3"), int.parse(ParamArg::Int(5))), (Ok(ParamValue::Int(3)), Ok(ParamValue::Int(5))));
        assert_eq!(int.parse("9").unwrap_err().to_string(), "parameter x: expected an integer in 1..=5, got \"9\"");
        assert_eq!(int.parse(ParamArg::Int(0)).unwrap_err().reason, "expected an integer in 1..=5, got 0");
        assert!(int.parse(true).is_err());
        let d = spec(ParamKind::Duration);
        assert_eq!(d.parse("2ms"), Ok(ParamValue::Duration(2_000_000)));
        assert_eq!(d.parse(ParamArg::Int(7)), Ok(ParamValue::Duration(7)));
        assert_eq!(d.parse("0").unwrap_err().reason, "must be at least 1 ns, got 0");
        assert!(d.parse("2").unwrap_err().reason.starts_with("duration \"2\" has no unit"));
        assert_eq!(
            d.parse(true).unwrap_err().reason,
            "expected integer ns or a duration string like \"2ms\", got true"
        );
        let c = spec(ParamKind::Choice(&["a", "b"]));
        assert_eq!(c.parse(" b"), Ok(ParamValue::Text("b".into())));
        assert_eq!(c.parse("c").unwrap_err().reason, "expected one of a, b, got \"c\"");
        let t = spec(ParamKind::Text);
        assert_eq!(t.parse("1,2"), Ok(ParamValue::Text("1,2".into())));
        assert_eq!(t.parse(ParamArg::Int(5)).unwrap_err().reason, "expected text, got 5");
        assert_eq!(
            (int.kind_name(), d.kind_name(), spec(ParamKind::Bool).kind_name(), c.kind_name(), t.kind_name()),
            ("integer 1..=5".into(), "duration".into(), "flag".into(), "a|b".into(), "text".into())
        );
    }

    #[test]
    fn priorities_are_words_or_ranks_and_a_bad_entry_is_named_with_its_task() {
        assert_eq!((parse_priorities(" DM "), parse_priorities("rm")), (Ok(None), Ok(None)));
        assert_eq!(parse_priorities("2, 0,1"), Ok(Some(vec![2, 0, 1])));
        assert_eq!(parse_priorities("edf").unwrap_err(), "dm, rm or one integer rank per task, got \"edf\"");
        let why = "is not a rank (dm, rm or one integer rank per task, smaller = higher)";
        assert_eq!(parse_priorities("0,-1").unwrap_err(), format!("task 1: \"-1\" {why}"));
        assert_eq!(parse_priorities("1,x").unwrap_err(), format!("task 1: \"x\" {why}"));
        assert_eq!(parse_priorities("4294967296").unwrap_err(), format!("task 0: \"4294967296\" {why}"));
        let p = spec(ParamKind::Priorities);
        assert_eq!(p.parse(" 1,0 "), Ok(ParamValue::Text("1,0".into())));
        assert_eq!(p.parse("x,1").unwrap_err().to_string(), format!("parameter x: task 0: \"x\" {why}"));
        assert_eq!(p.parse(ParamArg::Int(1)).unwrap_err().reason, "expected text, got 1");
    }

    #[test]
    fn resolve_is_the_one_reading_of_given_parameters() {
        static SPECS: [ParamSpec; 2] = [
            ParamSpec { name: "rr_quantum", kind: ParamKind::Duration, default: "1ms", help: "" },
            ParamSpec { name: "cash", kind: ParamKind::Bool, default: "false", help: "" },
        ];
        let none = |_: &str| Vec::new();
        let r = resolve("spres", &SPECS, [("rr-quantum", "2ms")], none).unwrap();
        assert_eq!(r.values["rr_quantum"], ParamValue::Duration(2_000_000));
        assert_eq!((r.values["cash"].clone(), r.given), (ParamValue::Bool(false), vec!["rr_quantum"]));
        let e = |given: &[(&str, &str)]| resolve("spres", &SPECS, given.iter().copied(), none).unwrap_err().to_string();
        assert_eq!(e(&[("foo", "1")]), "spres: parameter foo: unknown to spres (known: rr_quantum, cash)");
        assert_eq!(e(&[("cash", "1"), (" cash", "0")]), "spres: parameter cash: given twice; give it once");
        assert_eq!(e(&[("rr_quantum", "0")]), "spres: parameter rr_quantum: must be at least 1 ns, got 0");
        let owners = |_: &str| vec!["gedf-quantum", "llf"];
        let e = resolve("gedf", &[], [("quantum", "1ms")], owners).unwrap_err().to_string();
        assert_eq!(e, "gedf: parameter quantum: applies only to --scheduler gedf-quantum, llf, not gedf");
        let e = resolve("gedf", &[], [("x", "1")], none).unwrap_err().to_string();
        assert_eq!(e, "gedf: parameter x: unknown to gedf (it takes none)");
    }

    #[test]
    fn the_error_names_the_scheduler_once() {
        let e = ParamError::new("retries", "expected an integer in 1..=1000, got \"0\"");
        assert_eq!(e.to_string(), "parameter retries: expected an integer in 1..=1000, got \"0\"");
        let e = e.in_scheduler("push-pull").in_scheduler("other");
        assert_eq!(e.to_string(), "push-pull: parameter retries: expected an integer in 1..=1000, got \"0\"");
    }
}
