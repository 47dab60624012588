//! Overhead values for the simulator: constants, or a measured overhead model (the JSON that
//! `rtsched measure-overheads` writes, docs/runtime.md "Overhead model format") evaluated at
//! the task count n. How the simulator charges them: docs/simulator.md, "Overhead injection".
//!
//! Terms (seed 000 §IV-A; seed 001 §2 "Overheads", §4.1):
//! * `release` Δrel — CPU time of one release-handler invocation;
//! * `release_event` Δev — latency from a release's due time to its handler (no CPU time);
//! * `schedule` Δsch and `context_switch` Δcxs — CPU time of each dispatch of a job;
//! * `ipi` Δipi — latency of a reschedule request sent to another CPU (no CPU time);
//! * `tick` — CPU time of a quantum boundary per CPU (quantum-driven G-EDF only; the measured
//!   models have no tick term because our runtime mechanisms are event-driven).
//!
//! The model's `lock_wait` term is part of `schedule` (docs/runtime.md) and is not charged
//! separately.

use rtsched_model::time::parse_duration;
use rtsched_model::{ModelError, Time};
use serde::Serialize;
use serde_json::{Map, Value};

/// Largest accepted value of any term: 1 s. Keeps every sum of charges far from `u64` overflow
/// (at most `max_jobs` releases and dispatches per simulation).
pub const MAX_OVERHEAD: Time = 1_000_000_000;

/// Overhead values in integer ns, constant over a simulation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Overheads {
    /// Δrel: CPU time of one release-handler invocation (all releases of one domain due at
    /// the same instant), on the CPU that handles the domain.
    pub release_ns: Time,
    /// Δev: due time → start of the release handler (latency, no CPU time).
    pub release_event_ns: Time,
    /// Δsch: CPU time of the scheduler before each dispatch of a job.
    pub schedule_ns: Time,
    /// Δcxs: CPU time of the context switch of each dispatch of a job.
    pub context_switch_ns: Time,
    /// Δipi: send → delivery of a reschedule request to another CPU (latency).
    pub ipi_ns: Time,
    /// CPU time of one quantum tick on one CPU (quantum-driven G-EDF only).
    pub tick_ns: Time,
}

/// The key names of a constants file, in order.
pub const CONSTANT_KEYS: [&str; 6] =
    ["release_ns", "release_event_ns", "schedule_ns", "context_switch_ns", "ipi_ns", "tick_ns"];

impl Overheads {
    /// All terms zero.
    pub const ZERO: Overheads =
        Overheads { release_ns: 0, release_event_ns: 0, schedule_ns: 0, context_switch_ns: 0, ipi_ns: 0, tick_ns: 0 };

    fn values(&self) -> [Time; 6] {
        [self.release_ns, self.release_event_ns, self.schedule_ns, self.context_switch_ns, self.ipi_ns, self.tick_ns]
    }

    fn from_values(v: [Time; 6]) -> Overheads {
        Overheads {
            release_ns: v[0],
            release_event_ns: v[1],
            schedule_ns: v[2],
            context_switch_ns: v[3],
            ipi_ns: v[4],
            tick_ns: v[5],
        }
    }

    /// True when every term is zero.
    pub fn is_zero(&self) -> bool {
        self.values().iter().all(|&x| x == 0)
    }

    /// Checks every value against [`MAX_OVERHEAD`]; the error names the key.
    pub fn validate(&self) -> Result<(), ModelError> {
        for (k, v) in CONSTANT_KEYS.iter().zip(self.values()) {
            if v > MAX_OVERHEAD {
                return Err(ModelError::field(
                    format!("overheads.{k}"),
                    format!("must be at most {MAX_OVERHEAD} ns (1 s), got {v}"),
                ));
            }
        }
        Ok(())
    }
}

/// Which statistic of a measured model to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OverheadStat {
    /// Averages (soft real-time view, seed 001 §4.2).
    Avg,
    /// Maxima (hard real-time view, seed 001 §4.2), made monotone in n (seed 001 §4.1).
    Max,
}

impl OverheadStat {
    pub fn parse(s: &str) -> Result<OverheadStat, ModelError> {
        match s {
            "avg" => Ok(OverheadStat::Avg),
            "max" => Ok(OverheadStat::Max),
            other => Err(ModelError::field("overhead_stat", format!("must be \"max\" or \"avg\", got {other:?}"))),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            OverheadStat::Avg => "avg",
            OverheadStat::Max => "max",
        }
    }
}

/// One measured term: sample points in n with the average and the maximum (integer ns,
/// rounded up from the file's numbers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermTable {
    pub n: Vec<u64>,
    pub avg_ns: Vec<Time>,
    pub max_ns: Vec<Time>,
}

/// Term names of a model file, in the order of [`Overheads`]' fields (`tick` never occurs in
/// measured models but is accepted).
const MODEL_TERMS: [&str; 6] = ["release", "release_event", "schedule", "context_switch", "ipi", "tick"];
/// Terms a model file may contain that the simulator does not charge.
const IGNORED_TERMS: [&str; 1] = ["lock_wait"];

/// A measured overhead model (`"format": "rtsched-overhead-model"`, version 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverheadModel {
    /// The runtime scheduler it was measured under (e.g. `gsn-edf`), if given.
    pub scheduler: Option<String>,
    /// The processor count it was measured on, if given.
    pub m: Option<u32>,
    /// Per term of [`MODEL_TERMS`]: its table, or `None` when absent (charged as 0).
    pub terms: [Option<TermTable>; 6],
}

/// Where the overhead values come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverheadSpec {
    /// Fixed values (a constants file).
    Constant(Overheads),
    /// A measured model, evaluated at n.
    Model(Box<OverheadModel>),
}

fn field_err(field: &str, why: impl Into<String>) -> ModelError {
    ModelError::field(format!("overheads.{field}"), why)
}

/// A non-negative number of ns rounded up to an integer (the file may hold averages with
/// fractions), at most [`MAX_OVERHEAD`].
fn sample_ns(v: &Value, field: &str) -> Result<Time, ModelError> {
    let x = v
        .as_f64()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| field_err(field, format!("must be a non-negative number of ns, got {v}")))?;
    if x > MAX_OVERHEAD as f64 {
        return Err(field_err(field, format!("{x} ns exceeds the largest accepted overhead, {MAX_OVERHEAD} ns (1 s)")));
    }
    Ok(x.ceil() as Time)
}

/// A constant: integer ns or a duration string.
fn constant_ns(v: &Value, field: &str) -> Result<Time, ModelError> {
    let x = match v {
        Value::Number(_) => v.as_u64().ok_or_else(|| {
            field_err(field, format!("must be a non-negative integer number of ns or a duration string, got {v}"))
        })?,
        Value::String(s) => parse_duration(s).map_err(|e| field_err(field, e.reason))?,
        _ => {
            return Err(field_err(
                field,
                format!("must be a non-negative integer number of ns or a duration string, got {v}"),
            ))
        }
    };
    if x > MAX_OVERHEAD {
        return Err(field_err(field, format!("{x} ns exceeds the largest accepted overhead, {MAX_OVERHEAD} ns (1 s)")));
    }
    Ok(x)
}

fn parse_term(name: &str, v: &Value) -> Result<TermTable, ModelError> {
    let o = v
        .as_object()
        .ok_or_else(|| field_err(&format!("terms.{name}"), "must be an object with arrays n, avg_ns, max_ns"))?;
    for k in o.keys() {
        if !["n", "avg_ns", "max_ns", "count"].contains(&k.as_str()) {
            return Err(field_err(&format!("terms.{name}.{k}"), "unknown key (expected n, avg_ns, max_ns, count)"));
        }
    }
    let arr = |k: &str| -> Result<&Vec<Value>, ModelError> {
        o.get(k)
            .and_then(Value::as_array)
            .ok_or_else(|| field_err(&format!("terms.{name}.{k}"), "missing or not an array"))
    };
    let nv = arr("n")?;
    if nv.is_empty() {
        return Err(field_err(&format!("terms.{name}.n"), "is empty (a term without samples must be left out)"));
    }
    let mut n = Vec::with_capacity(nv.len());
    for (i, x) in nv.iter().enumerate() {
        let k = x.as_u64().filter(|&k| k >= 1).ok_or_else(|| {
            field_err(&format!("terms.{name}.n[{i}]"), format!("must be a positive integer task count, got {x}"))
        })?;
        if let Some(&prev) = n.last() {
            if k <= prev {
                return Err(field_err(
                    &format!("terms.{name}.n[{i}]"),
                    format!("task counts must increase strictly, got {k} after {prev}"),
                ));
            }
        }
        n.push(k);
    }
    let col = |k: &str| -> Result<Vec<Time>, ModelError> {
        let a = arr(k)?;
        if a.len() != n.len() {
            return Err(field_err(
                &format!("terms.{name}.{k}"),
                format!("has {} values for {} task counts in n", a.len(), n.len()),
            ));
        }
        a.iter().enumerate().map(|(i, x)| sample_ns(x, &format!("terms.{name}.{k}[{i}]"))).collect()
    };
    let avg_ns = col("avg_ns")?;
    let max_ns = col("max_ns")?;
    if let Some(c) = o.get("count") {
        let ok = c.as_array().is_some_and(|a| a.len() == n.len() && a.iter().all(|x| x.as_u64().is_some()));
        if !ok {
            return Err(field_err(
                &format!("terms.{name}.count"),
                format!("must be an array of {} non-negative integers", n.len()),
            ));
        }
    }
    for (i, (a, m)) in avg_ns.iter().zip(&max_ns).enumerate() {
        if a > m {
            return Err(field_err(
                &format!("terms.{name}.avg_ns[{i}]"),
                format!("the average {a} ns exceeds the maximum {m} ns"),
            ));
        }
    }
    Ok(TermTable { n, avg_ns, max_ns })
}

fn parse_model(o: &Map<String, Value>) -> Result<OverheadModel, ModelError> {
    match o.get("version") {
        Some(v) if v.as_u64() == Some(1) => {}
        Some(v) => return Err(field_err("version", format!("unsupported version {v} (this build reads version 1)"))),
        None => return Err(field_err("version", "missing")),
    }
    let scheduler = match o.get("scheduler") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => return Err(field_err("scheduler", format!("must be a string, got {v}"))),
    };
    let m = match o.get("m") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .filter(|&m| (1..=u32::MAX as u64).contains(&m))
                .ok_or_else(|| field_err("m", format!("must be a positive integer, got {v}")))? as u32,
        ),
    };
    let terms_v =
        o.get("terms").and_then(Value::as_object).ok_or_else(|| field_err("terms", "missing or not an object"))?;
    let mut terms: [Option<TermTable>; 6] = Default::default();
    for (k, v) in terms_v {
        if IGNORED_TERMS.contains(&k.as_str()) {
            continue;
        }
        let idx = MODEL_TERMS.iter().position(|t| t == k).ok_or_else(|| {
            field_err(&format!("terms.{k}"), format!("unknown term (expected {} or lock_wait)", MODEL_TERMS.join(", ")))
        })?;
        terms[idx] = Some(parse_term(k, v)?);
    }
    Ok(OverheadModel { scheduler, m, terms })
}

impl OverheadSpec {
    /// Reads either a measured model (`"format": "rtsched-overhead-model"`) or a constants
    /// object (`{"release_ns": 2000, "schedule_ns": "1us", ...}`, missing keys = 0, unknown
    /// keys rejected). Errors name the field, e.g. `field 'overheads.terms.ipi.max_ns[2]'`.
    pub fn from_json(text: &str) -> Result<OverheadSpec, ModelError> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| ModelError::field("overheads", format!("invalid JSON: {e}")))?;
        let o = v.as_object().ok_or_else(|| {
            ModelError::field(
                "overheads",
                "must be a JSON object (an overhead model or constants like {\"release_ns\": 2000})",
            )
        })?;
        match o.get("format") {
            Some(Value::String(f)) if f == "rtsched-overhead-model" => {
                return Ok(OverheadSpec::Model(Box::new(parse_model(o)?)))
            }
            Some(f) => {
                return Err(field_err(
                    "format",
                    format!("expected \"rtsched-overhead-model\" (or no format for a constants object), got {f}"),
                ))
            }
            None => {}
        }
        let mut vals = [0; 6];
        for (k, x) in o {
            let i = CONSTANT_KEYS.iter().position(|c| c == k).ok_or_else(|| {
                field_err(k, format!("unknown key; a constants object takes {} (or give a measured model with \"format\": \"rtsched-overhead-model\")", CONSTANT_KEYS.join(", ")))
            })?;
            vals[i] = constant_ns(x, k)?;
        }
        Ok(OverheadSpec::Constant(Overheads::from_values(vals)))
    }

    /// The values for a task set of `n` tasks. Constants ignore `n` and `stat`.
    pub fn resolve(&self, n: usize, stat: OverheadStat) -> Overheads {
        match self {
            OverheadSpec::Constant(o) => *o,
            OverheadSpec::Model(m) => {
                let mut v = [0; 6];
                for (i, t) in m.terms.iter().enumerate() {
                    if let Some(t) = t {
                        v[i] = t.eval(n as u64, stat);
                    }
                }
                Overheads::from_values(v)
            }
        }
    }

    pub fn source(&self) -> &'static str {
        match self {
            OverheadSpec::Constant(_) => "constant",
            OverheadSpec::Model(_) => "model",
        }
    }
}

/// `a / b` rounded up, for `b > 0` and any sign of `a`.
fn div_ceil_i128(a: i128, b: i128) -> i128 {
    if a >= 0 {
        (a + b - 1) / b
    } else {
        -((-a) / b)
    }
}

impl TermTable {
    /// The term at task count `n`: piecewise-linear between the sample points, constant
    /// beyond the first and the last (clamped), rounded up to whole ns. For `Max`, the sample
    /// maxima are first replaced by their running maximum in n, so that the curve is a
    /// monotone upper bound (seed 001 §4.1: "monotonic piece-wise linear interpolation to
    /// derive upper-bounds").
    pub fn eval(&self, n: u64, stat: OverheadStat) -> Time {
        let ys: Vec<Time> = match stat {
            OverheadStat::Avg => self.avg_ns.clone(),
            OverheadStat::Max => self
                .max_ns
                .iter()
                .scan(0, |run, &y| {
                    *run = (*run).max(y);
                    Some(*run)
                })
                .collect(),
        };
        let xs = &self.n;
        if n <= xs[0] {
            return ys[0];
        }
        let last = xs.len() - 1;
        if n >= xs[last] {
            return ys[last];
        }
        let k = xs.partition_point(|&x| x <= n); // xs[k-1] <= n < xs[k]
        let (x0, x1, y0, y1) = (xs[k - 1] as i128, xs[k] as i128, ys[k - 1] as i128, ys[k] as i128);
        (y0 + div_ceil_i128((y1 - y0) * (n as i128 - x0), x1 - x0)) as Time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> TermTable {
        TermTable { n: vec![2, 4, 8], avg_ns: vec![10, 30, 20], max_ns: vec![100, 50, 300] }
    }

    #[test]
    fn interpolation_is_piecewise_linear_clamped_and_rounded_up() {
        let t = table();
        // Avg: exact at the points, linear between, clamped outside.
        assert_eq!([1, 2, 3, 4, 5, 6, 8, 100].map(|n| t.eval(n, OverheadStat::Avg)), [10, 10, 20, 30, 28, 25, 20, 20]);
        // 30 + ceil(-10 * 1 / 4) = 30 - 2 = 28 (the exact 27.5 rounded up).
        // Max: running maximum 100, 100, 300 (the dip at n = 4 is lifted).
        assert_eq!(
            [1, 2, 3, 4, 5, 6, 7, 8, 9].map(|n| t.eval(n, OverheadStat::Max)),
            [100, 100, 100, 100, 150, 200, 250, 300, 300]
        );
    }

    #[test]
    fn single_point_is_constant() {
        let t = TermTable { n: vec![5], avg_ns: vec![7], max_ns: vec![9] };
        assert_eq!([1, 5, 50].map(|n| t.eval(n, OverheadStat::Max)), [9, 9, 9]);
    }

    #[test]
    fn constants_and_errors() {
        let s = OverheadSpec::from_json(r#"{"release_ns": 5, "schedule_ns": "2us"}"#).unwrap();
        assert_eq!(s.resolve(3, OverheadStat::Max), Overheads { release_ns: 5, schedule_ns: 2000, ..Overheads::ZERO });
        let e = OverheadSpec::from_json(r#"{"relase_ns": 5}"#).unwrap_err().to_string();
        assert!(e.contains("overheads.relase_ns"), "{e}");
        let e = OverheadSpec::from_json(r#"{"ipi_ns": -1}"#).unwrap_err().to_string();
        assert!(e.contains("overheads.ipi_ns"), "{e}");
        let e = OverheadSpec::from_json(r#"{"tick_ns": "2s"}"#).unwrap_err().to_string();
        assert!(e.contains("overheads.tick_ns") && e.contains("1 s"), "{e}");
    }
}
