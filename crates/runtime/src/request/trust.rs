//! The trust verdict: whether a run's measured timing can be trusted, and why.
//!
//! Its reference comes from outside the run: the machine's calibrated timer floor and
//! scheduling noise ([`Calibration`]) and the mechanism's reaction time from an overhead model
//! measured earlier ([`TrustInputs`]), never from the run's own maxima, which the disturbance
//! being judged inflates (docs/runtime.md, "Trustworthy timing").

use super::*;
use rtsched_model::overheads::{OverheadModel, OverheadStat, Term};

/// A run's timing is trustworthy when its longest poll gap and its largest timer latency are
/// at most this many times the reference (floor + reaction, [`assess_timing`]).
pub const TRUST_FACTOR: u64 = 10;
/// The floor taken for both the timer and the noise when the machine has no calibration:
/// about the average timer wake-up latency of the 2-core development VM (cyclictest, Debian's
/// rt-tests: 19 µs), and said in the reason.
pub const TRUST_FLOOR_NS: u64 = 20_000;

/// The terms whose maxima are the host's latencies (a timer's and a wake-up's), judged against
/// the floor rather than counted in the mechanism's reaction.
const HOST_TERMS: [&str; 2] = ["release_event", "ipi"];

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
    /// The run's task count (the model's n), from the summary's `trust_facts`.
    pub tasks: Option<u64>,
    /// The deadline misses and, per miss, the most host interference one CPU of the run had
    /// within the job's window (the summary's `trust_facts.misses`, [`misses_in_interference`]).
    pub misses: Vec<MissInterference>,
}

/// One deadline miss with the host interference around it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MissInterference {
    pub task: u32,
    pub job: u32,
    pub tardiness_ns: u64,
    /// The most interference one CPU of the run had from the job's release to its completion
    /// (or the horizon).
    pub interference_ns: u64,
}

/// A JSON number as an integer (a float is truncated, as Python's `int()` does).
pub(super) fn int_of(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_f64().map(|f| f.max(0.0) as u64))
}

impl TimingFacts {
    /// The facts of a run summary ([`RunResult::summary_json`] with the `trust_facts` that
    /// [`PreparedRun::run`] adds, or one written by hand).
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
        let tf = s.get("trust_facts");
        let misses = tf
            .and_then(|t| t.get("misses"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|m| {
                        let get = |k: &str| m.get(k).and_then(int_of).unwrap_or(0);
                        MissInterference {
                            task: get("task") as u32,
                            job: get("job") as u32,
                            tardiness_ns: get("tardiness_ns"),
                            interference_ns: get("interference_ns"),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        TimingFacts {
            raw_max_ns,
            max_poll_gap_ns: s.get("max_poll_gap_ns").and_then(int_of),
            priority_inversion,
            quantum_ns: s.get("params").and_then(|p| p.get("quantum")).and_then(Value::as_u64),
            dropped_records: s.get("dropped_records").and_then(int_of).unwrap_or(0),
            metrics_horizon_ns: s.get("metrics_horizon_ns").and_then(Value::as_u64),
            duration_ns: s.get("duration_ns").and_then(Value::as_u64),
            tasks: tf.and_then(|t| t.get("tasks")).and_then(Value::as_u64),
            misses,
        }
    }

    fn raw_max(&self, term: &str) -> u64 {
        self.raw_max_ns.get(term).copied().unwrap_or(0)
    }
}

/// Every deadline miss of a run with the most host interference one of its CPUs had from the
/// job's release to its completion (or the run's horizon): the `misses` of the summary's
/// `trust_facts`, in job order.
pub fn misses_in_interference(r: &RunResult) -> Vec<MissInterference> {
    let interference = r.trace.interference();
    let horizon = r.metrics.horizon;
    r.jobs
        .iter()
        .filter(|j| j.deadline_miss)
        .map(|j| {
            let end = j.finish_ns.unwrap_or(horizon).max(j.deadline_ns);
            MissInterference {
                task: j.task,
                job: j.job,
                tardiness_ns: j.tardiness_ns,
                interference_ns: interference.most_within(j.release_ns, end),
            }
        })
        .collect()
}

/// The summary's `trust_facts` object: the facts the summary lacks ([`TimingFacts`]).
pub fn trust_facts_json(tasks: usize, misses: &[MissInterference]) -> Value {
    let m: Vec<Value> = misses
        .iter()
        .map(|x| {
            serde_json::json!({"task": x.task, "job": x.job, "tardiness_ns": x.tardiness_ns,
                "interference_ns": x.interference_ns})
        })
        .collect();
    serde_json::json!({"tasks": tasks, "misses": m})
}

/// What the verdict is judged against, from outside the run.
#[derive(Debug, Clone, Default)]
pub struct TrustInputs {
    /// This machine's calibration (`rtsched calibrate`; the front keeps it per machine).
    pub calibration: Option<Calibration>,
    /// Why there is none, said in the reason (e.g. "skipped: --no-calibrate").
    pub no_calibration: Option<String>,
    /// An overhead model of the mechanism and its name: the mechanism's reaction time is the
    /// sum of its tracking terms' maxima in it at the run's n.
    pub model: Option<(String, OverheadModel)>,
}

/// The mechanism as the verdict sees it: its traced terms as (name, on the tracking path), and
/// whether it runs on the kernel's scheduler (kernel-sd: no poll gap, no term can be traced).
#[derive(Debug, Clone, Copy)]
pub struct TrustMechanism<'a> {
    pub name: &'a str,
    pub terms: &'a [(&'a str, bool)],
    pub kernel: bool,
}

/// A mechanism's traced terms as (name, on the tracking path), for [`TrustMechanism`].
pub fn entry_terms(e: &Entry) -> Vec<(&'static str, bool)> {
    e.all_terms().iter().map(|t| (t.name, t.tracking)).collect()
}

impl<'a> TrustMechanism<'a> {
    /// The registry entry `e` with its terms ([`entry_terms`]).
    pub fn of(e: &'a Entry, terms: &'a [(&'a str, bool)]) -> TrustMechanism<'a> {
        TrustMechanism { name: e.name, terms, kernel: matches!(e.backend, registry::Backend::KernelSd) }
    }
}

/// The reference a run is judged against ([`reference`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustReference {
    /// The timer (wake-up) floor and the scheduling noise, ns (calibrated and capped, or the
    /// default [`TRUST_FLOOR_NS`]).
    pub timer_ns: u64,
    pub noise_ns: u64,
    /// The mechanism's reaction time from its model (0 without one).
    pub reaction_ns: u64,
    /// Where the floors and the reaction come from, in words.
    pub floor_source: String,
    pub reaction_source: String,
}

impl TrustReference {
    /// The limit of the poll gap: [`TRUST_FACTOR`] × (noise + reaction).
    pub fn gap_limit(&self) -> u64 {
        TRUST_FACTOR.saturating_mul(self.noise_ns.saturating_add(self.reaction_ns))
    }
    /// The limit of a timer's or a wake-up's lateness: [`TRUST_FACTOR`] × (timer floor + reaction).
    pub fn timer_limit(&self) -> u64 {
        TRUST_FACTOR.saturating_mul(self.timer_ns.saturating_add(self.reaction_ns))
    }
    /// Its JSON object (the summary's `trust_reference`).
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "factor": TRUST_FACTOR,
            "timer_floor_ns": self.timer_ns,
            "noise_ns": self.noise_ns,
            "reaction_ns": self.reaction_ns,
            "gap_limit_ns": self.gap_limit(),
            "timer_limit_ns": self.timer_limit(),
            "floor_source": self.floor_source,
            "reaction_source": self.reaction_source,
        })
    }
}

/// The reference of a run of `tasks` tasks under `mech` ([`TrustInputs`]): the calibrated
/// floors (each at most [`CALIBRATION_CAP_NS`]; without a calibration [`TRUST_FLOOR_NS`]) and
/// the mechanism's reaction time: the largest samples, in its model at n = `tasks` (the
/// model's maxima, interpolated as `analyze` does), of its tracking terms other than the
/// host's timer and wake-up latency (release handler, lock waits, Δsch, Δcxs, its own).
pub fn reference(inputs: &TrustInputs, mech: &TrustMechanism<'_>, tasks: Option<u64>) -> TrustReference {
    let (timer_ns, noise_ns, floor_source) = match &inputs.calibration {
        Some(c) => {
            let (t, n) = c.capped();
            (t, n, c.describe())
        }
        None => (
            TRUST_FLOOR_NS,
            TRUST_FLOOR_NS,
            format!(
                "the default floor {} (no calibration of this machine{})",
                format_time(TRUST_FLOOR_NS),
                inputs.no_calibration.as_deref().map(|w| format!(": {w}")).unwrap_or_default()
            ),
        ),
    };
    let tracking: Vec<Term> = mech
        .terms
        .iter()
        .filter(|(n, tracking)| *tracking && !HOST_TERMS.contains(n))
        .filter_map(|(n, _)| Term::from_name(n).ok())
        .collect();
    let (reaction_ns, reaction_source) = match (&inputs.model, tasks) {
        _ if mech.kernel => (0, "none (the kernel's scheduler is not traced)".to_string()),
        (Some((name, model)), Some(n)) => {
            let o = model.resolve(n as usize, OverheadStat::Max);
            let sum = tracking.iter().map(|&t| o.get(t)).fold(0u64, u64::saturating_add);
            (sum, format!("the mechanism's reaction {} from the model {name} at n = {n}", format_time(sum)))
        }
        (Some((name, _)), None) => {
            (0, format!("no reaction time (the run's task count is unknown to the model {name})"))
        }
        (None, _) => (0, format!("no reaction time (no overhead model of {} was given or shipped)", mech.name)),
    };
    TrustReference { timer_ns, noise_ns, reaction_ns, floor_source, reaction_source }
}

/// The trust verdict of a run ([`assess_timing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustVerdict {
    /// True only when every check could be made and none failed.
    pub trustworthy: bool,
    /// One line: what failed (the lost records first), or what was checked and against what.
    pub reason: String,
    /// The checks this mechanism's runs cannot make, each with why (kernel-sd).
    pub unchecked: Vec<String>,
    pub reference: TrustReference,
}

/// Whether a run's measured timing is trustworthy, and why (docs/runtime.md, "Trustworthy
/// timing"), against the [`reference`] of `inputs`: not trustworthy when
/// - the longest poll gap of a job body (a body polls every ~0.1 µs, so a gap is time the host
///   took the worker's CPU) exceeds [`TRUST_FACTOR`] × (scheduling noise + reaction);
/// - the largest timer latency (`release_event`) or Δipi (a wake-up, its twin) exceeds
///   [`TRUST_FACTOR`] × (timer floor + reaction);
/// - the priority-inversion monitor's longest interval (a ready job beside an idle or
///   lower-priority CPU: how a worker the host never let run shows) exceeds that timer limit
///   plus the quantum of a quantum-driven mechanism;
/// - a deadline miss had host interference within its window, on one CPU, of at least its
///   tardiness and above the poll-gap limit (the miss is the host's as much as the mechanism's);
/// - the run dropped trace records (its metrics cover only a prefix; said first).
///
/// Every maximum is the raw one (outliers and samples the interference filter discards
/// included). A mechanism on the kernel's scheduler (kernel-sd) traces no poll gap and no term:
/// those checks are listed in [`TrustVerdict::unchecked`], the rest judged, and such a run is
/// never called trustworthy.
pub fn assess_timing(
    f: &TimingFacts,
    mech: &TrustMechanism<'_>,
    rt_priority: Option<i32>,
    inputs: &TrustInputs,
) -> TrustVerdict {
    let r = reference(inputs, mech, f.tasks);
    let (gap_limit, timer_limit) = (r.gap_limit(), r.timer_limit());
    let mut found = Vec::new();
    let mut unchecked = Vec::new();
    if mech.kernel {
        unchecked
            .push("poll gaps (its jobs are SCHED_DEADLINE threads, which the kernel preempts by design)".to_string());
        unchecked.push(
            "timer and wake-up latency and the mechanism's reaction (the kernel's scheduler is not traced from user \
             space)"
                .to_string(),
        );
    } else {
        if let Some(gap) = f.max_poll_gap_ns.filter(|&g| g > gap_limit) {
            found.push(format!(
                "a job body waited {} between two polls (the host took its CPU), above the limit {}",
                format_time(gap),
                format_time(gap_limit)
            ));
        }
        let timer = f.raw_max("release_event");
        if timer > timer_limit {
            found.push(format!(
                "a release timer fired {} late, above the limit {}",
                format_time(timer),
                format_time(timer_limit)
            ));
        }
        let wake = f.raw_max("ipi");
        if wake > timer_limit {
            found.push(format!(
                "a reschedule request took {} to be noticed (Δipi: waking a thread), above the limit {}",
                format_time(wake),
                format_time(timer_limit)
            ));
        }
    }
    if let Some((longest, _)) = f.priority_inversion {
        // A quantum-driven mechanism holds a release back until the next tick, by design.
        let allowed = timer_limit.saturating_add(f.quantum_ns.unwrap_or(0));
        if longest > allowed {
            found.push(format!(
                "a ready job waited {} beside an idle or lower-priority CPU, above {} (the host kept a worker from \
                 running, or the mechanism missed a preemption)",
                format_time(longest),
                format_time(allowed)
            ));
        }
    }
    let explained: Vec<&MissInterference> =
        f.misses.iter().filter(|m| m.interference_ns >= m.tardiness_ns && m.interference_ns > gap_limit).collect();
    if let Some(worst) = explained.iter().max_by_key(|m| m.interference_ns) {
        found.push(format!(
            "{} of {} deadline misses had host interruptions on one CPU of the run at least as long as their \
             tardiness and above {} (worst: job {}:{} late {}, with {} interrupted within its window)",
            explained.len(),
            f.misses.len(),
            format_time(gap_limit),
            worst.task,
            worst.job,
            format_time(worst.tardiness_ns),
            format_time(worst.interference_ns)
        ));
    }
    let reference_text = format!(
        "the limits {TRUST_FACTOR}× (floor + reaction): poll gap {}, timer and wake-up {} — {}; {}",
        format_time(gap_limit),
        format_time(timer_limit),
        r.floor_source,
        r.reaction_source
    );
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
    let trustworthy = found.is_empty() && lost.is_none() && unchecked.is_empty();
    let cannot = (!unchecked.is_empty()).then(|| format!("cannot judge {}", unchecked.join(", nor ")));
    let reason = if found.is_empty() {
        match (lost, &cannot) {
            (Some(lost), _) => lost,
            (None, Some(cannot)) => format!(
                "partly judged: no trace record lost and no deadline miss explained by host interruptions ({}); \
                 {cannot}",
                r.floor_source
            ),
            (None, None) => format!("poll gaps, timer and wake-up latency within {reference_text}"),
        }
    } else {
        let place = match rt_priority {
            None => "at normal priority: other processes preempted the run; rerun with --rt-priority 50 (SCHED_FIFO)"
                .to_string(),
            Some(p) => format!(
                "at SCHED_FIFO priority {p}: higher-priority threads, interrupts or the kernel's limits took the CPUs"
            ),
        };
        let mut text = format!("{} ({reference_text}), {place}", found.join(" and "));
        if let Some(cannot) = &cannot {
            text = format!("{text}; {cannot}");
        }
        match lost {
            Some(lost) => format!("{lost}; and {text}"),
            None => text,
        }
    };
    TrustVerdict { trustworthy, reason, unchecked, reference: r }
}
