//! Reading model files and constants objects; every error names the field.

use super::{vocabulary, OverheadModel, OverheadSpec, Overheads, PointStats, Term, TermTable, MAX_OVERHEAD};
use crate::time::parse_duration;
use crate::{ModelError, Time};
use serde_json::{Map, Value};

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
    let bad = || field_err(field, format!("must be a non-negative integer number of ns or a duration string, got {v}"));
    let x = match v {
        Value::Number(_) => v.as_u64().ok_or_else(bad)?,
        Value::String(s) => parse_duration(s).map_err(|e| field_err(field, e.reason))?,
        _ => return Err(bad()),
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
    const KEYS: [&str; 9] =
        ["n", "avg_ns", "max_ns", "count", "p50_ns", "p99_ns", "max_raw_ns", "discarded", "outliers"];
    for k in o.keys() {
        if !KEYS.contains(&k.as_str()) {
            return Err(field_err(&format!("terms.{name}.{k}"), format!("unknown key (expected {})", KEYS.join(", "))));
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
    let opt_col = |k: &str| o.get(k).map(|_| col(k)).transpose();
    let counts = |k: &str| -> Result<Option<Vec<u64>>, ModelError> {
        let Some(c) = o.get(k) else { return Ok(None) };
        c.as_array()
            .filter(|a| a.len() == n.len())
            .and_then(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
            .map(Some)
            .ok_or_else(|| {
                field_err(
                    &format!("terms.{name}.{k}"),
                    format!("must be an array of {} non-negative integers", n.len()),
                )
            })
    };
    let stats = PointStats {
        count: counts("count")?,
        p50_ns: opt_col("p50_ns")?,
        p99_ns: opt_col("p99_ns")?,
        max_raw_ns: opt_col("max_raw_ns")?,
        discarded: counts("discarded")?,
        outliers: counts("outliers")?,
    };
    // The average counts every kept sample, the outliers too; the maximum after the outlier
    // rule may then fall below it (a heavy tail), never the maximum before the rule.
    for (i, (a, m)) in avg_ns.iter().zip(&max_ns).enumerate() {
        let raw = stats.max_raw_ns.as_ref().map(|r| r[i]);
        if a > m && raw.is_none_or(|r| *a > r) {
            return Err(field_err(
                &format!("terms.{name}.avg_ns[{i}]"),
                format!("the average {a} ns exceeds the maximum {} ns", raw.unwrap_or(*m)),
            ));
        }
    }
    if let Some(raw) = &stats.max_raw_ns {
        for (i, (m, r)) in max_ns.iter().zip(raw).enumerate() {
            if m > r {
                return Err(field_err(
                    &format!("terms.{name}.max_raw_ns[{i}]"),
                    format!("the maximum before the outlier rule ({r} ns) is below the maximum after it ({m} ns)"),
                ));
            }
        }
    }
    Ok(TermTable::with_stats(n, avg_ns, max_ns, stats))
}

fn machine_line(v: &Value) -> Option<String> {
    let o = v.as_object()?;
    let mut parts = Vec::new();
    if let Some(h) = o.get("hostname").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        parts.push(h.to_string());
    }
    if let Some(c) = o.get("cpu_count").and_then(Value::as_u64) {
        parts.push(format!("{c} CPUs"));
    }
    if let Some(p) = o.get("processor").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        parts.push(p.to_string());
    }
    if let Some(p) = o.get("platform").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        parts.push(p.to_string());
    }
    (!parts.is_empty()).then(|| parts.join(", "))
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
    let machine = o.get("machine").and_then(machine_line);
    let interrupted = o.get("interrupted").and_then(Value::as_bool).unwrap_or(false);
    let protocol = match o.get("protocol") {
        None | Some(Value::Null) => None,
        Some(v @ Value::Object(_)) => Some(v.clone()),
        Some(v) => return Err(field_err("protocol", format!("must be an object, got {v}"))),
    };
    let provenance = match o.get("provenance") {
        None | Some(Value::Null) => None,
        Some(v @ Value::Object(_)) => Some(v.clone()),
        Some(v) => return Err(field_err("provenance", format!("must be an object, got {v}"))),
    };
    let terms_v =
        o.get("terms").and_then(Value::as_object).ok_or_else(|| field_err("terms", "missing or not an object"))?;
    let mut terms: Vec<Option<TermTable>> = vec![None; Term::ALL.len()];
    for (k, v) in terms_v {
        let idx = Term::ALL
            .iter()
            .position(|t| t.name() == k)
            .ok_or_else(|| field_err(&format!("terms.{k}"), format!("unknown term (known terms: {})", vocabulary())))?;
        terms[idx] = Some(parse_term(k, v)?);
    }
    Ok(OverheadModel { scheduler, m, machine, interrupted, protocol, provenance, terms })
}

impl OverheadModel {
    /// Reads a measured model; anything else (constants included) is an error naming the field.
    pub fn from_json(text: &str) -> Result<OverheadModel, ModelError> {
        match OverheadSpec::from_json(text)? {
            OverheadSpec::Model(m) => Ok(*m),
            OverheadSpec::Constant(_) => Err(field_err(
                "format",
                "expected a measured model (\"format\": \"rtsched-overhead-model\"), got a constants object",
            )),
        }
    }
}

impl OverheadSpec {
    /// Reads either a measured model (`"format": "rtsched-overhead-model"`) or a constants
    /// object (`{"release_ns": 2000, "schedule_ns": "1us", ...}`: keys `<term>_ns` of the
    /// vocabulary, missing keys = 0, unknown keys rejected). Errors name the field, e.g.
    /// `field 'overheads.terms.ipi.max_ns[2]'`.
    pub fn from_json(text: &str) -> Result<OverheadSpec, ModelError> {
        // The strict reader: a duplicate key is an error (serde_json alone keeps the last one).
        let v: Value = crate::json::parse(text).map_err(|e| match e.field {
            Some(key) => ModelError::field(format!("overheads.{key}"), e.reason),
            None => ModelError::field("overheads", e.reason),
        })?;
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
        let mut vals = Overheads::ZERO;
        for (k, x) in o {
            let t = Term::ALL.iter().copied().find(|t| t.constant_key() == k).ok_or_else(|| {
                let keys: Vec<&str> = Term::ALL.iter().map(|t| t.constant_key()).collect();
                field_err(
                    k,
                    format!(
                        "unknown key; a constants object takes {} (or give a measured model with \"format\": \"rtsched-overhead-model\")",
                        keys.join(", ")
                    ),
                )
            })?;
            vals.set(t, constant_ns(x, k)?);
        }
        Ok(OverheadSpec::Constant(vals))
    }
}
