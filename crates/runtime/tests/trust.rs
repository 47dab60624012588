//! The trust verdict on constructed runs (`rtsched_runtime::assess_timing`, docs/runtime.md,
//! "Trustworthy timing"): each disturbed case built by hand — a fake calibration and a
//! synthetic summary — and the verdict and its reason asserted. No timing is measured, except
//! that the calibration's measurement is checked for its shape.

use rtsched_model::overheads::OverheadModel;
use rtsched_runtime::mechanism::registry;
use rtsched_runtime::request::{CALIBRATION_CAP_NS, TRUST_FACTOR, TRUST_FLOOR_NS};
use rtsched_runtime::{
    assess_timing, entry_terms, measure_calibration, Calibration, TimingFacts, TrustInputs, TrustMechanism,
    TrustVerdict,
};
use serde_json::{json, Value};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

/// A quiet summary of `tasks` tasks: every term's maximum `v`, no poll gap.
fn summary(tasks: u64, v: u64) -> Value {
    let st = |v: u64| json!({"count": 1, "avg_ns": v as f64, "p50_ns": v, "p99_ns": v, "max_ns": v, "max_raw_ns": v});
    json!({
        "max_poll_gap_ns": 0,
        "overheads": {"release": st(v), "release_event": st(v), "schedule": st(v), "lock_wait": st(v),
                      "context_switch": st(v), "ipi": st(v)},
        "trust_facts": {"tasks": tasks, "misses": []},
        "duration_ns": 1_000_000_000u64,
    })
}

/// A calibration with these floors (five equal windows).
fn calibration(timer: u64, noise: u64) -> Calibration {
    Calibration::of_windows(vec![timer; 5], vec![noise; 5], "SCHED_FIFO 50")
}

fn inputs(c: Option<Calibration>, model: Option<&str>) -> TrustInputs {
    TrustInputs {
        calibration: c,
        no_calibration: None,
        model: model.map(|text| ("test-model".to_string(), OverheadModel::from_json(text).unwrap())),
    }
}

fn judge(s: &Value, mech: &str, rt: Option<i32>, inp: &TrustInputs) -> TrustVerdict {
    let e = registry::find(mech).unwrap();
    let terms = entry_terms(e);
    assess_timing(&TimingFacts::from_summary(s), &TrustMechanism::of(e, &terms), rt, inp)
}

/// A gsn-edf model whose tracking terms (release, schedule, lock_wait, context_switch) have
/// maxima 1, 2, 3, 4 µs at n = 2 and 10, 20, 30, 40 µs at n = 20 (and host terms of 1 ms,
/// which the reaction leaves out).
const MODEL: &str = r#"{"format": "rtsched-overhead-model", "version": 1, "scheduler": "gsn-edf", "terms": {
  "release": {"n": [2, 20], "avg_ns": [1000, 10000], "max_ns": [1000, 10000]},
  "schedule": {"n": [2, 20], "avg_ns": [2000, 20000], "max_ns": [2000, 20000]},
  "lock_wait": {"n": [2, 20], "avg_ns": [3000, 30000], "max_ns": [3000, 30000]},
  "context_switch": {"n": [2, 20], "avg_ns": [4000, 40000], "max_ns": [4000, 40000]},
  "release_event": {"n": [2, 20], "avg_ns": [1000000, 1000000], "max_ns": [1000000, 1000000]},
  "ipi": {"n": [2, 20], "avg_ns": [1000000, 1000000], "max_ns": [1000000, 1000000]}}}"#;

#[test]
fn a_big_poll_gap_is_judged_against_the_calibrated_floor_not_the_runs_maxima() {
    // The issue's case: fem at normal priority, a 48 ms poll gap, lock and release maxima of
    // several ms (inflated by the same interference). The old reference (the run's own maxima)
    // let it pass; against the machine's floor (30 µs noise) and no model it fails.
    let inp = inputs(Some(calibration(40 * US, 30 * US)), None);
    let mut s = summary(20, 4 * MS);
    s["max_poll_gap_ns"] = json!(48 * MS);
    s["overheads"]["release_event"]["max_raw_ns"] = json!(10 * US);
    s["overheads"]["ipi"]["max_raw_ns"] = json!(10 * US);
    let v = judge(&s, "fem", None, &inp);
    assert!(!v.trustworthy);
    assert!(v.reason.starts_with("a job body waited 48 ms between two polls"), "{}", v.reason);
    assert!(v.reason.contains("poll gap 300 µs"), "{}", v.reason);
    assert!(v.reason.contains("calibrated timer floor 40 µs and scheduling noise 30 µs"), "{}", v.reason);
    assert!(v.reason.contains("--rt-priority 50"), "{}", v.reason);
    assert_eq!(v.reference.reaction_ns, 0);
    // At the limit it passes; one ns above it does not.
    let limit = TRUST_FACTOR * 30 * US;
    let mut quiet = summary(20, 10 * US);
    quiet["max_poll_gap_ns"] = json!(limit);
    let v = judge(&quiet, "fem", None, &inp);
    assert!(v.trustworthy, "{}", v.reason);
    assert!(v.reason.starts_with("poll gaps, timer and wake-up latency within the limits 10×"), "{}", v.reason);
    quiet["max_poll_gap_ns"] = json!(limit + 1);
    assert!(!judge(&quiet, "fem", None, &inp).trustworthy);
}

#[test]
fn the_reaction_time_comes_from_the_mechanisms_model_at_the_runs_n() {
    let cal = calibration(20 * US, 10 * US);
    let inp = inputs(Some(cal), Some(MODEL));
    // At n = 20 the reaction is 10 + 20 + 30 + 40 = 100 µs (the host terms left out).
    let mut s = summary(20, 5 * US);
    let v = judge(&s, "gsn-edf", Some(50), &inp);
    assert!(v.trustworthy, "{}", v.reason);
    assert_eq!(v.reference.reaction_ns, 100 * US);
    assert_eq!(v.reference.gap_limit(), TRUST_FACTOR * 110 * US);
    assert_eq!(v.reference.timer_limit(), TRUST_FACTOR * 120 * US);
    assert!(v.reason.contains("the mechanism's reaction 100 µs from the model test-model at n = 20"), "{}", v.reason);
    s["overheads"]["release_event"]["max_raw_ns"] = json!(TRUST_FACTOR * 120 * US);
    assert!(judge(&s, "gsn-edf", Some(50), &inp).trustworthy);
    s["overheads"]["release_event"]["max_raw_ns"] = json!(TRUST_FACTOR * 120 * US + 1);
    let v = judge(&s, "gsn-edf", Some(50), &inp);
    assert!(!v.trustworthy);
    assert!(v.reason.starts_with("a release timer fired 1.2 ms late, above the limit 1.2 ms"), "{}", v.reason);
    assert!(v.reason.contains("at SCHED_FIFO priority 50"), "{}", v.reason);
    // At n = 2 the reaction is 10 µs: the same timer latency is judged against a lower limit.
    let mut small = summary(2, 5 * US);
    small["overheads"]["release_event"]["max_raw_ns"] = json!(TRUST_FACTOR * 30 * US + 1);
    let v = judge(&small, "gsn-edf", Some(50), &inp);
    assert_eq!(v.reference.reaction_ns, 10 * US);
    assert!(!v.trustworthy, "{}", v.reason);
    // The run's own maxima never enter the reference: a run whose terms all took 5 ms judges
    // against the same limits.
    assert_eq!(
        judge(&summary(20, 5 * MS), "gsn-edf", Some(50), &inp).reference,
        judge(&s, "gsn-edf", Some(50), &inp).reference
    );
}

#[test]
fn a_late_wakeup_and_a_long_priority_inversion_are_caught() {
    let inp = inputs(Some(calibration(20 * US, 10 * US)), None);
    let limit = TRUST_FACTOR * 20 * US;
    let mut s = summary(4, 5 * US);
    s["overheads"]["ipi"]["max_raw_ns"] = json!(limit + 1);
    let v = judge(&s, "gsn-edf", Some(50), &inp);
    assert!(!v.trustworthy && v.reason.contains("to be noticed (Δipi: waking a thread)"), "{}", v.reason);
    // A worker the host never let run: a 94 ms priority inversion, no gap, no Δipi.
    let mut s = summary(4, 5 * US);
    s["priority_inversion"] = json!({"max_interval_ns": 94 * MS, "tracking_bound_ns": 100 * MS});
    let v = judge(&s, "gsn-edf", Some(50), &inp);
    assert!(!v.trustworthy && v.reason.contains("a ready job waited 94 ms"), "{}", v.reason);
    // A quantum-driven mechanism may hold a release back one quantum more.
    s["params"] = json!({"quantum": 3 * MS});
    s["priority_inversion"] = json!({"max_interval_ns": limit + 3 * MS, "tracking_bound_ns": 0});
    assert!(judge(&s, "cqm", Some(50), &inp).trustworthy);
    s["priority_inversion"]["max_interval_ns"] = json!(limit + 3 * MS + 1);
    assert!(!judge(&s, "cqm", Some(50), &inp).trustworthy);
}

#[test]
fn dropped_trace_records_are_never_trustworthy() {
    let inp = inputs(Some(calibration(20 * US, 10 * US)), None);
    let mut s = summary(20_000, 5 * US);
    assert!(judge(&s, "gsn-edf", None, &inp).trustworthy);
    s["dropped_records"] = json!(2_200_000);
    s["metrics_horizon_ns"] = json!(2 * MS);
    let v = judge(&s, "gsn-edf", None, &inp);
    assert!(!v.trustworthy);
    assert_eq!(
        v.reason,
        "the run dropped 2200000 trace records (its trace buffers filled): its jobs, misses and overheads cover \
         only its first 2 ms of 1 s; run fewer tasks or a shorter duration"
    );
    // Disturbed as well: both, the lost records first.
    s["max_poll_gap_ns"] = json!(50 * MS);
    let v = judge(&s, "gsn-edf", None, &inp);
    assert!(
        v.reason.starts_with("the run dropped") && v.reason.contains("; and a job body waited 50 ms"),
        "{}",
        v.reason
    );
}

#[test]
fn misses_that_coincide_with_host_interruptions_are_not_the_mechanisms() {
    let inp = inputs(Some(calibration(20 * US, 10 * US)), None);
    let gap_limit = TRUST_FACTOR * 10 * US;
    let mut s = summary(3, 5 * US);
    // Three misses: one with no interference, one whose interference is below its tardiness,
    // one with 5 ms interrupted and 2 ms late.
    s["trust_facts"]["misses"] = json!([
        {"task": 0, "job": 1, "tardiness_ns": 3 * MS, "interference_ns": 0},
        {"task": 1, "job": 4, "tardiness_ns": 3 * MS, "interference_ns": 2 * MS},
        {"task": 2, "job": 7, "tardiness_ns": 2 * MS, "interference_ns": 5 * MS},
    ]);
    let v = judge(&s, "gsn-edf", Some(50), &inp);
    assert!(!v.trustworthy);
    assert!(
        v.reason.starts_with(
            "1 of 3 deadline misses had host interruptions on one CPU of the run at least as long as their tardiness \
             and above 100 µs (worst: job 2:7 late 2 ms, with 5 ms interrupted within its window)"
        ),
        "{}",
        v.reason
    );
    // Interruptions within the machine's noise explain nothing, however small the tardiness.
    s["trust_facts"]["misses"] = json!([{"task": 2, "job": 7, "tardiness_ns": 1, "interference_ns": gap_limit}]);
    assert!(judge(&s, "gsn-edf", Some(50), &inp).trustworthy);
}

#[test]
fn kernel_sd_says_what_it_cannot_judge_and_is_never_plainly_trustworthy() {
    let inp = inputs(Some(calibration(20 * US, 10 * US)), Some(MODEL));
    let mut s = summary(4, 0);
    s["overheads"] = json!({});
    s["max_poll_gap_ns"] = json!(80 * MS); // not the host's under SCHED_DEADLINE: not judged
    let v = judge(&s, "kernel-sd", Some(50), &inp);
    assert!(!v.trustworthy);
    assert_eq!(v.unchecked.len(), 2);
    assert!(v.reason.starts_with("partly judged: no trace record lost"), "{}", v.reason);
    assert!(
        v.reason.contains("cannot judge poll gaps") && v.reason.contains("nor timer and wake-up latency"),
        "{}",
        v.reason
    );
    assert_eq!(v.reference.reaction_ns, 0);
    // What it can judge still fails it.
    s["dropped_records"] = json!(10);
    let v = judge(&s, "kernel-sd", Some(50), &inp);
    assert!(!v.trustworthy && v.reason.starts_with("the run dropped 10 trace records"), "{}", v.reason);
    s["dropped_records"] = json!(0);
    s["trust_facts"]["misses"] = json!([{"task": 0, "job": 0, "tardiness_ns": MS, "interference_ns": 30 * MS}]);
    let v = judge(&s, "kernel-sd", Some(50), &inp);
    assert!(!v.trustworthy && v.reason.starts_with("1 of 1 deadline misses") && v.reason.contains("cannot judge"));
}

#[test]
fn without_a_calibration_the_default_floor_is_used_and_said() {
    let inp = TrustInputs { no_calibration: Some("skipped (--no-calibrate)".into()), ..Default::default() };
    let v = judge(&summary(2, 5 * US), "pedf", None, &inp);
    assert!(v.trustworthy);
    assert_eq!((v.reference.timer_ns, v.reference.noise_ns), (TRUST_FLOOR_NS, TRUST_FLOOR_NS));
    assert!(v.reason.contains("the default floor 20 µs (no calibration of this machine: skipped (--no-calibrate))"));
    assert!(v.reason.contains("no overhead model of pedf"), "{}", v.reason);
}

#[test]
fn a_disturbed_calibration_is_capped_so_it_cannot_make_every_verdict_lenient() {
    let inp = inputs(Some(calibration(50 * MS, 40 * MS)), None);
    let mut s = summary(2, 5 * US);
    s["max_poll_gap_ns"] = json!(TRUST_FACTOR * CALIBRATION_CAP_NS + 1);
    let v = judge(&s, "gsn-edf", None, &inp);
    assert!(!v.trustworthy);
    assert_eq!((v.reference.timer_ns, v.reference.noise_ns), (CALIBRATION_CAP_NS, CALIBRATION_CAP_NS));
    assert!(v.reason.contains("capped at 1 ms each"), "{}", v.reason);
}

#[test]
fn a_calibration_is_the_median_of_its_windows_and_reads_back() {
    // Two disturbed windows of five do not raise the floor.
    let c = Calibration::of_windows(vec![30, 9_000_000, 20, 40, 8_000_000], vec![5, 6, 7_000_000, 4, 3], "SCHED_OTHER");
    assert_eq!((c.timer_floor_ns, c.noise_ns), (40, 5));
    assert_eq!(Calibration::from_json(&c.to_json()).unwrap(), c);
    for (bad, field) in [
        (json!({"noise_ns": 1}), "timer_floor_ns"),
        (json!({"timer_floor_ns": -1, "noise_ns": 1}), "timer_floor_ns"),
        (json!({"timer_floor_ns": 1, "noise_ns": "1us"}), "noise_ns"),
        (json!({"timer_floor_ns": 1, "noise_ns": 1, "gap_windows_ns": [1, -2]}), "gap_windows_ns"),
    ] {
        let e = Calibration::from_json(&bad).unwrap_err().to_string();
        assert!(e.starts_with(&format!("calibration: field '{field}'")), "{e}");
    }
    assert!(Calibration::from_json(&json!([1])).is_err());
}

#[test]
fn a_calibration_measures_five_windows_of_each_kind_within_its_bounds() {
    let c = measure_calibration(20 * MS, None).unwrap();
    assert_eq!((c.timer_windows_ns.len(), c.gap_windows_ns.len()), (5, 5));
    assert!(c.gap_windows_ns.iter().all(|&g| g > 0), "{c:?}");
    assert!(c.class.starts_with("SCHED_OTHER"), "{}", c.class);
    let e = measure_calibration(MS, None).unwrap_err().to_string();
    assert_eq!(e, "field 'budget': 1 ms is outside 10 ms to 60 s");
    assert!(measure_calibration(20 * MS, Some(0)).unwrap_err().to_string().contains("'rt_priority'"));
}
