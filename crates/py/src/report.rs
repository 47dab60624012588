//! The analysis report: named tests run on one task set, as the documented JSON object
//! (docs/cli.md#analyze). Shared by `rtsched analyze`, the Python API and the experiments.

use rtsched_analysis::global::{self, GlobalTest};
use rtsched_analysis::partition::{self, Admission, Fit, Order, PartitionOutcome};
use rtsched_analysis::uni::{edf, fp};
use rtsched_analysis::{semi, Limits, Verdict};
use rtsched_model::{ModelError, TaskSet};
use serde_json::{json, Map, Value};

/// Every test name `analyze` knows, in report order.
pub const TEST_NAMES: [&str; 14] = [
    "gfb",
    "bak",
    "bcl",
    "bcl_iterative",
    "rta",
    "bar",
    "ffdbf",
    "gedf",
    "gedf_srt",
    "edf_uni",
    "fp_dm_uni",
    "pedf_ffd",
    "pfp_ffd",
    "spres",
];

/// Tests that only make sense on one processor.
fn uniprocessor_only(name: &str) -> bool {
    matches!(name, "edf_uni" | "fp_dm_uni")
}

/// The default selection: everything that applies to `m`.
pub fn default_tests(m: u32) -> Vec<&'static str> {
    TEST_NAMES.iter().copied().filter(|t| m == 1 || !uniprocessor_only(t)).collect()
}

/// Validates a requested test list against `m`.
pub fn resolve_tests(requested: Option<&[String]>, m: u32) -> Result<Vec<String>, ModelError> {
    match requested {
        None => Ok(default_tests(m).into_iter().map(String::from).collect()),
        Some(list) => {
            let mut out: Vec<String> = Vec::new();
            for name in list {
                // Any spelling of a name (case, `_` or `-`): crate::methods.
                let t = crate::methods::test(name, &TEST_NAMES).ok_or_else(|| {
                    ModelError::field("test", format!("unknown test {name:?}; available: {}", TEST_NAMES.join(", ")))
                })?;
                if uniprocessor_only(t) && m != 1 {
                    return Err(ModelError::field("test", format!("{t} applies only to m = 1, got m = {m}")));
                }
                if !out.iter().any(|o| o == t) {
                    out.push(t.to_string());
                }
            }
            Ok(out)
        }
    }
}

fn verdict_json(v: Verdict) -> Value {
    json!({"schedulable": v.decided(), "gave_up": v == Verdict::GaveUp})
}

/// Runs one named test; `Verdict` for the experiment engine.
pub fn run_test(name: &str, ts: &TaskSet, m: u32, limits: &Limits, epsilon: u64) -> Verdict {
    if let Some(t) = GlobalTest::from_name(name) {
        return global::test(t, ts, m, limits);
    }
    match name {
        "gedf" => global::combined(ts, m, limits),
        "gedf_srt" => Verdict::from_bool(global::srt::bounded_tardiness(ts, m)),
        "edf_uni" => edf::qpa(ts, limits),
        "fp_dm_uni" => fp::rta(ts, fp::Priority::DeadlineMonotonic, limits).0,
        "pedf_ffd" => partition_verdict(partition::partition(
            ts,
            m,
            Fit::First,
            Order::DecreasingUtilization,
            Admission::Edf,
            limits,
        )),
        "pfp_ffd" => partition_verdict(partition::partition(
            ts,
            m,
            Fit::First,
            Order::DecreasingUtilization,
            Admission::Fp(fp::Priority::DeadlineMonotonic),
            limits,
        )),
        "spres" => {
            let cfg = semi::SemiConfig { epsilon, ..semi::SemiConfig::default() };
            Verdict::from_bool(semi::cascade(ts, m, &cfg).schedulable)
        }
        other => match semi::Heuristic::from_name(other) {
            Some(h) => {
                let cfg = semi::SemiConfig { epsilon, ..semi::SemiConfig::default() };
                Verdict::from_bool(semi::place(ts, m, &h, &cfg).schedulable)
            }
            None => Verdict::GaveUp,
        },
    }
}

fn partition_verdict(p: PartitionOutcome) -> Verdict {
    Verdict::from_bool(matches!(p, PartitionOutcome::Placed(_)))
}

/// The report object for one task set.
pub fn report(ts: &TaskSet, m: u32, tests: &[String], limits: &Limits) -> Value {
    let u = ts.utilization();
    let mut results = Map::new();
    for name in tests {
        let value = match name.as_str() {
            "gedf_srt" => {
                let bounds = global::srt::tardiness_bounds(ts, m);
                json!({"schedulable": global::srt::bounded_tardiness(ts, m), "gave_up": false, "tardiness_ns": bounds})
            }
            "fp_dm_uni" => {
                let (v, rts) = fp::rta(ts, fp::Priority::DeadlineMonotonic, limits);
                let mut o = verdict_json(v);
                o["response_times_ns"] = json!(rts);
                o
            }
            other => verdict_json(run_test(other, ts, m, limits, 0)),
        };
        results.insert(name.clone(), value);
    }
    json!({
        "m": m,
        "n": ts.len(),
        "utilization": format!("{}/{}", u.numer(), u.denom()),
        "utilization_float": ts.utilization_f64(),
        "results": Value::Object(results),
    })
}
