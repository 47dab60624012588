//! The overhead model: the one definition of overhead terms, overhead values and the measured
//! model file that analysis (inflation rules), the simulator (injection) and the runtime
//! (measurement) share. Design note: `docs/formats.md` ("Overhead models") and
//! `docs/overheads.md`.
//!
//! # Terms
//!
//! The vocabulary is defined once, in [`define_terms!`] below: each [`Term`] has a name (the
//! key in model files), a symbol (as the papers write it), a [`TermKind`] (CPU time on some
//! processor, or a latency that delays a job without using a processor) and a field of
//! [`Overheads`]. Sources: Cerqueira, Vanga & Brandenburg, RTAS 2014, §IV-A (Δev, Δrel, Δipi,
//! Δsch, Δcxs, tick, Δreq, Δdsp, Δcpd); Brandenburg & Anderson, RTSS 2009, §2 "Overheads";
//! Brandenburg & Gül, RTSS 2016, §VII-A (migration timer, subtask activation); Lelli et al.
//! 2011 (push, pull); the RTWS paper (steal).
//!
//! | term | symbol | kind | runtime traces it | simulator charges it | analysis charges it |
//! |---|---|---|---|---|---|
//! | `release` | Δrel | CPU | all mechanisms | yes | every rule |
//! | `release_event` | Δev | latency | all mechanisms | yes | every rule (period shrink) |
//! | `schedule` | Δsch | CPU | all but kernel-sd | yes | every rule |
//! | `context_switch` | Δcxs | CPU | all but kernel-sd | yes | every rule |
//! | `ipi` | Δipi | latency | global mechanisms | yes | global rules |
//! | `tick` | Δtck | CPU | quantum-driven plugins (coming) | gedf-quantum only | every rule (U_tck) |
//! | `lock_wait` | — | CPU | gsn-edf, pedf | no (inside `schedule`) | no (inside `schedule`) |
//! | `request` | Δreq | latency | gedf-mp (coming) | no | G-EDF-MP |
//! | `dsp` | Δdsp | CPU (DSP) | gedf-mp (coming) | no | G-EDF-MP |
//! | `migration_timer` | — | CPU | spres (coming) | no | SP-RES |
//! | `subtask_activation` | — | CPU | spres (coming) | no | SP-RES |
//! | `budget_enforcement` | — | CPU | spres (coming) | no | SP-RES |
//! | `push` | — | CPU | push-pull (coming) | no | push/pull (added to Δrel) |
//! | `pull` | — | CPU | push-pull (coming) | no | push/pull (added to Δsch) |
//! | `steal` | — | CPU | rtws (coming) | no | none (no RTWS inflation rule) |
//!
//! "Simulator charges it": [`SIMULATOR_TERMS`]. Which terms each inflation rule charges is in
//! the rule table of `rtsched_analysis::overheads`.
//!
//! # Evaluation
//!
//! A measured term is a table of sample points in the task count n with the average and the
//! maximum observed value. [`TermTable::eval`] evaluates it at n: piecewise-linear between the
//! points, clamped (constant) outside them, rounded up to whole ns; for the maximum the samples
//! are first replaced by their running maximum in n, so the curve is a monotone upper bound
//! (Brandenburg & Anderson, RTSS 2009, §4.1: "monotonic piece-wise linear interpolation to
//! derive upper-bounds"). [`TermTable::eval_extrapolated`] instead continues the last segment
//! beyond the last sample (never downward), and [`OverheadModel::resolve_extrapolated`] also
//! scales chosen terms from the processor count the model was measured on to another one —
//! both are *extrapolations*, not measurements, and every output that uses them says so.

use crate::time::parse_duration;
use crate::{ModelError, Time};
use serde::Serialize;
use serde_json::{Map, Value};

/// Largest accepted value of any term: 1 s. Keeps every sum of charges far from `u64` overflow.
pub const MAX_OVERHEAD: Time = 1_000_000_000;

/// Whether a term is processor time or a latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TermKind {
    /// Processor time spent by a handler or the scheduler on some CPU.
    CpuTime,
    /// A delay between two events that uses no processor time of the delayed job's CPU.
    Latency,
}

impl TermKind {
    pub fn name(self) -> &'static str {
        match self {
            TermKind::CpuTime => "cpu_time",
            TermKind::Latency => "latency",
        }
    }
}

macro_rules! define_terms {
    ($( $variant:ident => $field:ident, $name:literal, $symbol:literal, $kind:ident, $doc:literal; )*) => {
        /// One overhead term (the vocabulary; module doc for the table).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum Term {
            $( #[doc = $doc] $variant, )*
        }

        impl Term {
            /// Every term, in vocabulary order.
            pub const ALL: &'static [Term] = &[ $( Term::$variant, )* ];

            /// The key in model files (`"release"`, `"release_event"`, ...).
            pub fn name(self) -> &'static str {
                match self { $( Term::$variant => $name, )* }
            }

            /// The symbol the papers use (`"Δrel"`), or the name where they use none.
            pub fn symbol(self) -> &'static str {
                match self { $( Term::$variant => $symbol, )* }
            }

            /// CPU time or latency.
            pub fn kind(self) -> TermKind {
                match self { $( Term::$variant => TermKind::$kind, )* }
            }

            /// One line saying what the term measures.
            pub fn description(self) -> &'static str {
                match self { $( Term::$variant => $doc, )* }
            }

            /// The key of the term in a constants object (`"release_ns"`).
            pub fn constant_key(self) -> &'static str {
                match self { $( Term::$variant => stringify!($field), )* }
            }
        }

        /// One value per term, integer ns (constant over an analysis or a simulation).
        /// Fields are named `<term>_ns`; [`Overheads::get`] reads one by [`Term`].
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
        pub struct Overheads {
            $( #[doc = $doc] pub $field: Time, )*
        }

        impl Overheads {
            /// All terms zero.
            pub const ZERO: Overheads = Overheads { $( $field: 0, )* };

            /// The value of `t`.
            pub fn get(&self, t: Term) -> Time {
                match t { $( Term::$variant => self.$field, )* }
            }

            /// Sets the value of `t`.
            pub fn set(&mut self, t: Term, v: Time) {
                match t { $( Term::$variant => self.$field = v, )* }
            }
        }
    };
}

define_terms! {
    Release => release_ns, "release", "Δrel", CpuTime,
        "Δrel: CPU time of one release-handler invocation (all releases of one domain due at the same instant).";
    ReleaseEvent => release_event_ns, "release_event", "Δev", Latency,
        "Δev: release latency, from a release's due time to the start of its handler.";
    Schedule => schedule_ns, "schedule", "Δsch", CpuTime,
        "Δsch: CPU time of one scheduler invocation before a dispatch (lock waits included).";
    ContextSwitch => context_switch_ns, "context_switch", "Δcxs", CpuTime,
        "Δcxs: CPU time of switching to the dispatched job.";
    Ipi => ipi_ns, "ipi", "Δipi", Latency,
        "Δipi: latency of a reschedule request (IPI) from its sending to its delivery.";
    Tick => tick_ns, "tick", "Δtck", CpuTime,
        "Δtck: CPU time of one periodic timer tick on one CPU (the quantum boundary of quantum-driven plugins).";
    LockWait => lock_wait_ns, "lock_wait", "lock_wait", CpuTime,
        "lock_wait: time spent waiting for a scheduler lock; already contained in Δsch or Δrel.";
    Request => request_ns, "request", "Δreq", Latency,
        "Δreq: client request latency of G-EDF-MP, from sending a message until the DSP dequeues it.";
    Dsp => dsp_ns, "dsp", "Δdsp", CpuTime,
        "Δdsp: DSP handler overhead of G-EDF-MP, the DSP's processing of one message.";
    MigrationTimer => migration_timer_ns, "migration_timer", "migration_timer", CpuTime,
        "migration_timer: SP-RES, servicing the timer that initiates a subtask migration on the source CPU.";
    SubtaskActivation => subtask_activation_ns, "subtask_activation", "subtask_activation", CpuTime,
        "subtask_activation: SP-RES, the IPI handler that activates the next subtask on the target CPU.";
    BudgetEnforcement => budget_enforcement_ns, "budget_enforcement", "budget_enforcement", CpuTime,
        "budget_enforcement: servicing the timer that enforces a reservation's budget exhaustion.";
    Push => push_ns, "push", "push", CpuTime,
        "push: push/pull global EDF, pushing a job to another CPU's run queue (at a release or a preemption).";
    Pull => pull_ns, "pull", "pull", CpuTime,
        "pull: push/pull global EDF, pulling a job from another CPU's run queue (when a CPU lowers its priority).";
    Steal => steal_ns, "steal", "steal", CpuTime,
        "steal: RTWS, stealing a thread from another core's deque.";
}

/// The terms the simulator charges (docs/simulator.md, "Overhead injection"); it ignores the
/// others.
pub const SIMULATOR_TERMS: [Term; 6] =
    [Term::Release, Term::ReleaseEvent, Term::Schedule, Term::ContextSwitch, Term::Ipi, Term::Tick];

impl Term {
    /// The term named `s`; the error lists the vocabulary.
    pub fn from_name(s: &str) -> Result<Term, ModelError> {
        Term::ALL.iter().copied().find(|t| t.name() == s).ok_or_else(|| {
            ModelError::field("term", format!("unknown overhead term {s:?}; known terms: {}", vocabulary()))
        })
    }
}

/// The term names, comma-separated (for messages and help).
pub fn vocabulary() -> String {
    Term::ALL.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
}

impl Overheads {
    /// True when every term is zero.
    pub fn is_zero(&self) -> bool {
        Term::ALL.iter().all(|&t| self.get(t) == 0)
    }

    /// The terms with a non-zero value.
    pub fn nonzero_terms(&self) -> Vec<Term> {
        Term::ALL.iter().copied().filter(|&t| self.get(t) > 0).collect()
    }

    /// Checks every value against [`MAX_OVERHEAD`]; the error names the key.
    pub fn validate(&self) -> Result<(), ModelError> {
        for &t in Term::ALL {
            let v = self.get(t);
            if v > MAX_OVERHEAD {
                return Err(ModelError::field(
                    format!("overheads.{}", t.constant_key()),
                    format!("must be at most {MAX_OVERHEAD} ns (1 s), got {v}"),
                ));
            }
        }
        Ok(())
    }

    /// A JSON object `{"<term>_ns": value}` of the given terms.
    pub fn to_json_terms(&self, terms: &[Term]) -> Value {
        let mut o = Map::new();
        for &t in terms {
            o.insert(t.constant_key().to_string(), Value::from(self.get(t)));
        }
        Value::Object(o)
    }
}

/// Which statistic of a measured model to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OverheadStat {
    /// Averages (the soft real-time view, Brandenburg & Anderson, RTSS 2009, §4.2).
    Avg,
    /// Maxima (the hard real-time view, ibid.), made monotone in n (ibid. §4.1).
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
    /// The running maximum of `max_ns` in n (computed once, at construction).
    max_mono: Vec<Time>,
}

impl TermTable {
    /// A table from its columns (equal lengths, `n` strictly increasing and non-empty: the
    /// parser checks this for files).
    pub fn new(n: Vec<u64>, avg_ns: Vec<Time>, max_ns: Vec<Time>) -> TermTable {
        let max_mono = max_ns
            .iter()
            .scan(0, |run, &y| {
                *run = (*run).max(y);
                Some(*run)
            })
            .collect();
        TermTable { n, avg_ns, max_ns, max_mono }
    }
}

/// A measured overhead model (`"format": "rtsched-overhead-model"`, version 1), as
/// `rtsched measure-overheads` writes it (docs/formats.md, "Overhead models").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverheadModel {
    /// The runtime mechanism it was measured under (e.g. `gsn-edf`), if given.
    pub scheduler: Option<String>,
    /// The processors the measured mechanism scheduled on (`--cpus`; a dedicated release or
    /// scheduling processor is not counted), if given.
    pub m: Option<u32>,
    /// The machine it was measured on (`hostname`, `cpu_count`, `platform` of the file's
    /// `machine` object, as one line), if given.
    pub machine: Option<String>,
    /// True when the measurement was interrupted (fewer n than planned).
    pub interrupted: bool,
    /// Per term of [`Term::ALL`] (same index): its table, or `None` when absent (charged as 0).
    pub terms: Vec<Option<TermTable>>,
}

/// Where the overhead values come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverheadSpec {
    /// Fixed values (a constants file).
    Constant(Overheads),
    /// A measured model, evaluated at n.
    Model(Box<OverheadModel>),
}

/// How to evaluate a model outside what it measured. Both parts are extrapolations.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Extrapolation {
    /// Beyond the largest measured n, continue the last segment of each curve (its slope
    /// floored at 0) instead of holding the last value.
    pub beyond_n: bool,
    /// Scale from the model's processor count `m0` to this `m`: each term in `scaled_terms` is
    /// multiplied by `m / m0` (rounded up) when `m > m0` (a linear-contention assumption: a
    /// shared lock or queue is waited for by at most one request of each other processor);
    /// never scaled down. `None`, or a model without `m`, scales nothing.
    pub m: Option<u32>,
    /// The terms that scale with m (chosen per mechanism by the caller).
    pub scaled_terms: Vec<Term>,
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
    Ok(TermTable::new(n, avg_ns, max_ns))
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
    Ok(OverheadModel { scheduler, m, machine, interrupted, terms })
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

    /// The table of `t`, if measured.
    pub fn term(&self, t: Term) -> Option<&TermTable> {
        Term::ALL.iter().position(|&x| x == t).and_then(|i| self.terms[i].as_ref())
    }

    /// The measured terms.
    pub fn measured_terms(&self) -> Vec<Term> {
        Term::ALL.iter().copied().filter(|&t| self.term(t).is_some()).collect()
    }

    /// The largest measured n over all terms (0 for a model without samples).
    pub fn max_n(&self) -> u64 {
        self.terms.iter().flatten().filter_map(|t| t.n.last().copied()).max().unwrap_or(0)
    }

    /// The values at `n` tasks (clamped outside the measured range).
    pub fn resolve(&self, n: usize, stat: OverheadStat) -> Overheads {
        let mut v = Overheads::ZERO;
        for (&t, table) in Term::ALL.iter().zip(&self.terms) {
            if let Some(table) = table {
                v.set(t, table.eval(n as u64, stat));
            }
        }
        v
    }

    /// The values at `n` tasks with the extrapolations of `ext` (see [`Extrapolation`]).
    /// Values are capped at [`MAX_OVERHEAD`].
    pub fn resolve_extrapolated(&self, n: usize, stat: OverheadStat, ext: &Extrapolation) -> Overheads {
        let mut v = Overheads::ZERO;
        let factor = match (ext.m, self.m) {
            (Some(m), Some(m0)) if m > m0 => Some((m as u128, m0 as u128)),
            _ => None,
        };
        for (&t, table) in Term::ALL.iter().zip(&self.terms) {
            if let Some(table) = table {
                let mut x =
                    if ext.beyond_n { table.eval_extrapolated(n as u64, stat) } else { table.eval(n as u64, stat) }
                        as u128;
                if let Some((m, m0)) = factor.filter(|_| ext.scaled_terms.contains(&t)) {
                    x = (x * m).div_ceil(m0);
                }
                v.set(t, x.min(MAX_OVERHEAD as u128) as Time);
            }
        }
        v
    }
}

impl OverheadSpec {
    /// Reads either a measured model (`"format": "rtsched-overhead-model"`) or a constants
    /// object (`{"release_ns": 2000, "schedule_ns": "1us", ...}`: keys `<term>_ns` of the
    /// vocabulary, missing keys = 0, unknown keys rejected). Errors name the field, e.g.
    /// `field 'overheads.terms.ipi.max_ns[2]'`.
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

    /// The values for a task set of `n` tasks. Constants ignore `n` and `stat`.
    pub fn resolve(&self, n: usize, stat: OverheadStat) -> Overheads {
        match self {
            OverheadSpec::Constant(o) => *o,
            OverheadSpec::Model(m) => m.resolve(n, stat),
        }
    }

    /// As [`OverheadSpec::resolve`], with the extrapolations of `ext` for a model.
    pub fn resolve_extrapolated(&self, n: usize, stat: OverheadStat, ext: &Extrapolation) -> Overheads {
        match self {
            OverheadSpec::Constant(o) => *o,
            OverheadSpec::Model(m) => m.resolve_extrapolated(n, stat, ext),
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
    /// The sample values of `stat`: averages as measured, maxima replaced by their running
    /// maximum in n (a monotone upper bound).
    fn ys(&self, stat: OverheadStat) -> &[Time] {
        match stat {
            OverheadStat::Avg => &self.avg_ns,
            OverheadStat::Max => &self.max_mono,
        }
    }

    /// The term at task count `n`: piecewise-linear between the sample points, constant
    /// beyond the first and the last (clamped), rounded up to whole ns. For `Max`, the sample
    /// maxima are first replaced by their running maximum in n, so that the curve is a
    /// monotone upper bound (Brandenburg & Anderson, RTSS 2009, §4.1: "monotonic piece-wise
    /// linear interpolation to derive upper-bounds").
    pub fn eval(&self, n: u64, stat: OverheadStat) -> Time {
        let ys = self.ys(stat);
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

    /// As [`TermTable::eval`], but beyond the last sample the last segment is continued
    /// (an *extrapolation*): `y_last + ⌈max(0, slope) · (n − x_last)⌉`, capped at
    /// [`MAX_OVERHEAD`]. With one sample point there is no slope and the value is held.
    pub fn eval_extrapolated(&self, n: u64, stat: OverheadStat) -> Time {
        let last = self.n.len() - 1;
        if n <= self.n[last] || last == 0 {
            return self.eval(n, stat);
        }
        let ys = self.ys(stat);
        let (x0, x1) = (self.n[last - 1] as i128, self.n[last] as i128);
        let dy = (ys[last] as i128 - ys[last - 1] as i128).max(0);
        let y = ys[last] as i128 + div_ceil_i128(dy * (n as i128 - x1), x1 - x0);
        y.min(MAX_OVERHEAD as i128) as Time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> TermTable {
        TermTable::new(vec![2, 4, 8], vec![10, 30, 20], vec![100, 50, 300])
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
    fn extrapolation_continues_the_last_segment_never_downward() {
        let t = table();
        // Max: last segment (4, 100) -> (8, 300), slope 50 per task.
        assert_eq!([8, 9, 10, 12].map(|n| t.eval_extrapolated(n, OverheadStat::Max)), [300, 350, 400, 500]);
        // Avg: the last segment falls (30 -> 20): held at 20, never extrapolated downward.
        assert_eq!([8, 100].map(|n| t.eval_extrapolated(n, OverheadStat::Avg)), [20, 20]);
        // Inside the range it is the interpolation.
        assert_eq!(t.eval_extrapolated(5, OverheadStat::Max), 150);
        // Fractional slope rounds up: (2, 0) -> (5, 1), at n = 6: 1 + ceil(1/3) = 2.
        let f = TermTable::new(vec![2, 5], vec![0, 1], vec![0, 1]);
        assert_eq!(f.eval_extrapolated(6, OverheadStat::Avg), 2);
        // Capped at 1 s.
        let big = TermTable::new(vec![1, 2], vec![0, 1], vec![0, 999_999_999]);
        assert_eq!(big.eval_extrapolated(1_000, OverheadStat::Max), MAX_OVERHEAD);
    }

    #[test]
    fn single_point_is_constant() {
        let t = TermTable::new(vec![5], vec![7], vec![9]);
        assert_eq!([1, 5, 50].map(|n| t.eval(n, OverheadStat::Max)), [9, 9, 9]);
        assert_eq!(t.eval_extrapolated(500, OverheadStat::Max), 9);
    }

    #[test]
    fn vocabulary_is_consistent() {
        for &t in Term::ALL {
            assert_eq!(Term::from_name(t.name()).unwrap(), t);
            assert_eq!(t.constant_key(), format!("{}_ns", t.name()));
            let mut v = Overheads::ZERO;
            v.set(t, 7);
            assert_eq!(v.get(t), 7);
            assert_eq!(v.nonzero_terms(), vec![t]);
        }
        let e = Term::from_name("relase").unwrap_err().to_string();
        assert!(e.contains("unknown overhead term \"relase\"") && e.contains("subtask_activation"), "{e}");
    }

    #[test]
    fn m_scaling_applies_to_chosen_terms_only_and_never_down() {
        let text = r#"{"format": "rtsched-overhead-model", "version": 1, "m": 2,
            "terms": {"release": {"n": [2, 4], "avg_ns": [1, 1], "max_ns": [10, 20]},
                      "context_switch": {"n": [2], "avg_ns": [3], "max_ns": [3]}}}"#;
        let m = OverheadModel::from_json(text).unwrap();
        let ext = Extrapolation { beyond_n: true, m: Some(64), scaled_terms: vec![Term::Release, Term::Schedule] };
        let v = m.resolve_extrapolated(8, OverheadStat::Max, &ext);
        // release: 20 + 5 * 2 (slope) * ... = 20 + ceil(10 * 4 / 2) = 40, then * 64 / 2 = 1280.
        assert_eq!(v.release_ns, 1280);
        assert_eq!(v.context_switch_ns, 3);
        let down = Extrapolation { beyond_n: false, m: Some(1), scaled_terms: vec![Term::Release] };
        assert_eq!(m.resolve_extrapolated(8, OverheadStat::Max, &down).release_ns, 20);
    }

    #[test]
    fn constants_and_errors() {
        let s = OverheadSpec::from_json(r#"{"release_ns": 5, "schedule_ns": "2us", "request_ns": 3}"#).unwrap();
        assert_eq!(
            s.resolve(3, OverheadStat::Max),
            Overheads { release_ns: 5, schedule_ns: 2000, request_ns: 3, ..Overheads::ZERO }
        );
        let e = OverheadSpec::from_json(r#"{"relase_ns": 5}"#).unwrap_err().to_string();
        assert!(e.contains("overheads.relase_ns") && e.contains("steal_ns"), "{e}");
        let e = OverheadSpec::from_json(r#"{"ipi_ns": -1}"#).unwrap_err().to_string();
        assert!(e.contains("overheads.ipi_ns"), "{e}");
        let e = OverheadSpec::from_json(r#"{"tick_ns": "2s"}"#).unwrap_err().to_string();
        assert!(e.contains("overheads.tick_ns") && e.contains("1 s"), "{e}");
        let e = OverheadModel::from_json(r#"{"tick_ns": 1}"#).unwrap_err().to_string();
        assert!(e.contains("overheads.format"), "{e}");
        let e = OverheadSpec::from_json(
            r#"{"format": "rtsched-overhead-model", "version": 1, "terms": {"stael": {"n": [1], "avg_ns": [1], "max_ns": [1]}}}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("overheads.terms.stael") && e.contains("unknown term") && e.contains("steal"), "{e}");
    }

    #[test]
    fn model_metadata() {
        let text = r#"{"format": "rtsched-overhead-model", "version": 1, "scheduler": "pedf", "m": 2,
            "machine": {"hostname": "vm", "platform": "Linux", "processor": "", "cpu_count": 2},
            "interrupted": true, "terms": {"lock_wait": {"n": [2], "avg_ns": [1.5], "max_ns": [4]}}}"#;
        let m = OverheadModel::from_json(text).unwrap();
        assert_eq!(m.scheduler.as_deref(), Some("pedf"));
        assert_eq!(m.machine.as_deref(), Some("vm, 2 CPUs, Linux"));
        assert!(m.interrupted);
        assert_eq!(m.measured_terms(), vec![Term::LockWait]);
        assert_eq!(m.resolve(2, OverheadStat::Avg).lock_wait_ns, 2);
        assert_eq!(m.max_n(), 2);
    }
}
