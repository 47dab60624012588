//! The trust verdict: whether a run's measured timing can be trusted, and why.

use super::*;

/// A run's timing is trustworthy when its longest poll gap and its largest timer latency are
/// at most this many times the mechanism's own reaction time ([`assess_timing`]).
pub const TRUST_FACTOR: u64 = 10;
/// The smallest reaction time the factor is applied to: about this machine's average timer
/// wake-up latency (cyclictest, Debian's rt-tests: 19 us here), so that a mechanism reacting in
/// a few microseconds does not make every microsecond of host noise suspicious.
pub const TRUST_FLOOR_NS: u64 = 20_000;

/// What the trust verdict reads from a run's summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimingFacts {
    /// Per overhead term: its largest raw sample (`max_raw_ns`, else `max_ns`).
    pub raw_max_ns: BTreeMap<String, u64>,
    /// The longest time between two polls of a job body.
    pub max_poll_gap_ns: Option<u64>,
    /// The priority-inversion monitor's longest interval and the run's tracking bound.
    pub priority_inversion: Option<(u64, u64)>,
    /// The quantum of a quantum-driven mechanism (its `quantum` parameter).
    pub quantum_ns: Option<u64>,
    pub dropped_records: u64,
    /// How far the metrics reach (the first lost record) and the run's length.
    pub metrics_horizon_ns: Option<u64>,
    pub duration_ns: Option<u64>,
}

/// A JSON number as an integer (a float is truncated, as Python's `int()` does).
pub(super) fn int_of(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_f64().map(|f| f.max(0.0) as u64))
}

impl TimingFacts {
    /// The facts of a run summary ([`RunResult::summary_json`], or one written by hand).
    pub fn from_summary(s: &Value) -> TimingFacts {
        let mut raw_max_ns = BTreeMap::new();
        if let Some(ov) = s.get("overheads").and_then(Value::as_object) {
            for (term, o) in ov {
                let v = o.get("max_raw_ns").or_else(|| o.get("max_ns")).and_then(int_of).unwrap_or(0);
                raw_max_ns.insert(term.clone(), v);
            }
        }
        let priority_inversion = s.get("priority_inversion").filter(|v| v.is_object()).map(|pi| {
            let get = |k: &str| pi.get(k).and_then(int_of).unwrap_or(0);
            (get("max_interval_ns"), get("tracking_bound_ns"))
        });
        TimingFacts {
            raw_max_ns,
            max_poll_gap_ns: s.get("max_poll_gap_ns").and_then(int_of),
            priority_inversion,
            quantum_ns: s.get("params").and_then(|p| p.get("quantum")).and_then(Value::as_u64),
            dropped_records: s.get("dropped_records").and_then(int_of).unwrap_or(0),
            metrics_horizon_ns: s.get("metrics_horizon_ns").and_then(Value::as_u64),
            duration_ns: s.get("duration_ns").and_then(Value::as_u64),
        }
    }

    fn raw_max(&self, term: &str) -> u64 {
        self.raw_max_ns.get(term).copied().unwrap_or(0)
    }
}

/// Whether a run's measured timing is trustworthy, and why (docs/runtime.md, "Trustworthy
/// timing"). `terms`: the mechanism's traced terms as (name, on the tracking path).
///
/// The run's tracking delay (the monitor's bound) sums the largest samples of the terms on the
/// path from an event to its dispatch; host interference inflates its host terms — timer
/// latency (`release_event`) and the reschedule notice (`ipi`), both waits for the kernel to
/// wake a thread — together with the rest, so the comparison is against the mechanism's own
/// share: the largest samples of its other tracking terms (release handler, lock waits,
/// scheduler, dispatch, its own), at least [`TRUST_FLOOR_NS`]. A job body polls every ~0.1 us,
/// so its longest poll gap is the longest time the host took a worker's CPU away.
/// Untrustworthy: the poll gap or the largest timer latency above [`TRUST_FACTOR`] times that
/// reaction time, or the largest Δipi (a wake-up, the timer latency's twin) likewise, or the
/// priority-inversion monitor's longest interval above that limit and above [`TRUST_FACTOR`]
/// times the run's tracking bound, plus the quantum of a quantum-driven mechanism (a worker
/// that never ran records neither a poll gap nor a Δipi). Every maximum here is the raw one
/// (samples the interference filter discards and outliers included), since this judges the
/// host's disturbance itself. Never trustworthy when the run dropped trace records: its metrics
/// then cover only the time up to the first lost record, and the reason says so first.
pub fn assess_timing(f: &TimingFacts, terms: &[(&str, bool)], rt_priority: Option<i32>) -> (bool, String) {
    const HOST: [&str; 2] = ["release_event", "ipi"];
    let own: u64 = terms.iter().filter(|(n, tracking)| *tracking && !HOST.contains(n)).map(|(n, _)| f.raw_max(n)).sum();
    let reaction = own.max(TRUST_FLOOR_NS);
    let limit = TRUST_FACTOR.saturating_mul(reaction);
    let mut found = Vec::new();
    if let Some(gap) = f.max_poll_gap_ns.filter(|&g| g > limit) {
        found.push(format!("a job body waited {} between two polls (the host took its CPU)", format_time(gap)));
    }
    let timer = f.raw_max("release_event");
    if timer > limit {
        found.push(format!("a release timer fired {} late", format_time(timer)));
    }
    let wake = f.raw_max("ipi");
    if wake > limit {
        found.push(format!("a reschedule request took {} to be noticed (Δipi: waking a thread)", format_time(wake)));
    }
    // A worker the host never let run leaves no poll gap and no Δipi sample (nothing ran to
    // record them): its trace shows it as a CPU that stayed idle, or kept a lower-priority job,
    // while a ready job waited — one long priority-inversion interval.
    if let Some((longest, bound)) = f.priority_inversion {
        // A quantum-driven mechanism holds a release back until the next tick, by design.
        let allowed = limit.max(TRUST_FACTOR.saturating_mul(bound)).saturating_add(f.quantum_ns.unwrap_or(0));
        if longest > allowed {
            found.push(format!(
                "a ready job waited {} beside an idle or lower-priority CPU (the host kept a worker from running, or \
                 the mechanism missed a preemption)",
                format_time(longest)
            ));
        }
    }
    let reference = format!("{TRUST_FACTOR}× the mechanism's reaction time ({})", format_time(reaction));
    // A run whose trace buffers filled is judged on a prefix only (its metrics stop at the
    // first lost record), so nothing after it can be vouched for, whatever the maxima say.
    let lost = (f.dropped_records > 0).then(|| {
        let cover = match (f.metrics_horizon_ns, f.duration_ns) {
            (Some(h), Some(d)) => {
                format!("its jobs, misses and overheads cover only its first {} of {}", format_time(h), format_time(d))
            }
            _ => "its jobs, misses and overheads cover only a prefix of it".to_string(),
        };
        format!(
            "the run dropped {} trace records (its trace buffers filled): {cover}; run fewer tasks or a shorter \
             duration",
            f.dropped_records
        )
    });
    if found.is_empty() {
        return match lost {
            Some(lost) => (false, lost),
            None => (true, format!("poll gaps, timer and wake-up latency within {reference}")),
        };
    }
    let place = match rt_priority {
        None => "at normal priority: other processes preempted the run; rerun with --rt-priority 50 (SCHED_FIFO)"
            .to_string(),
        Some(p) => format!("at SCHED_FIFO priority {p}: higher-priority threads or interrupts took the CPUs"),
    };
    let disturbed = format!("{}, above {reference}, {place}", found.join(" and "));
    match lost {
        Some(lost) => (false, format!("{lost}; and {disturbed}")),
        None => (false, disturbed),
    }
}
