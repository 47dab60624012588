//! One typed run request and its outcome: every decision a front (the CLI, the Python API, a
//! Rust caller) used to make around [`crate::run`] — which CPUs, whether the workload fits them,
//! the dedicated CPU, the default placement, the placement warnings and whether the measured
//! timing can be trusted — made here once, so that every caller gets the same answers.
//!
//! [`RunRequest::prepare`] decides (no thread starts): a [`PreparedRun`] with its [`Decision`]
//! (the CPUs, the placement, the warnings to print before the run); [`PreparedRun::run`] runs
//! it and returns a [`RunOutcome`] (the run's result and summary, its exports, and the trust
//! verdict of [`assess_timing`]). [`run_request`] does both.
//!
//! What stays with the front: checking the types of what a user typed, reading files, the
//! host protocol around a run (preflight, `--isolate`, the SCHED_FIFO throttling warning:
//! `python/rtsched/protocol.py`, `rtlimits.py`) and printing.

use crate::backend::forkjoin::{forkjoin_job_csv, forkjoin_summary, run_forkjoin, slot_task_set};
use crate::backend::result::{to_trace, RunResult};
use crate::config::{IdleMode, RunConfig};
use crate::mechanism::registry::{self, DedicatedCpu, Entry, PlacementKind};
use crate::mechanism::Mechanism;
use crate::platform::body::ExecTime;
use crate::RunError;
use rtsched_analysis::partition::{default_partition, Admission, NotPlaced};
use rtsched_analysis::uni::fp::Priority;
use rtsched_analysis::{semi, Limits};
use rtsched_model::time::format_time;
use rtsched_model::{ModelError, Placement, Stop, TaskSet, Workload};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A run's timing is trustworthy when its longest poll gap and its largest timer latency are
/// at most this many times the mechanism's own reaction time ([`assess_timing`]).
pub const TRUST_FACTOR: u64 = 10;
/// The smallest reaction time the factor is applied to: about this machine's average timer
/// wake-up latency (cyclictest, Debian's rt-tests: 19 us here), so that a mechanism reacting in
/// a few microseconds does not make every microsecond of host noise suspicious.
pub const TRUST_FLOOR_NS: u64 = 20_000;

/// The placement a request gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GivenPlacement {
    /// Task indices per CPU, `partition[c]` for the `c`-th CPU of the run (a plain partition).
    Partition(Vec<Vec<usize>>),
    /// A placement (`rtsched partition --json`), read with the model's strict reader
    /// ([`Placement::from_json`]) against the request's task set.
    Placement(Placement),
}

/// The placement a run was given or decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecidedPlacement {
    /// A global mechanism: none.
    None,
    /// Task indices per CPU of the run (the summary's `partition`).
    Partition(Vec<Vec<usize>>),
    /// An SP-RES reservation placement (the summary's `placement`).
    Reservations(Placement),
}

/// What a run's trace is exported as ([`RunOutcome::exports`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// The converted trace as JSON Lines (docs/trace.md).
    Jsonl,
    /// Perfetto / Chrome trace-event JSON.
    Perfetto,
    /// One row per job (per fork-join job for a fork-join run).
    JobCsv,
    /// The Gantt chart of the whole run, SVG.
    GanttSvg,
    /// LITMUS^RT's binary `sched_trace` records.
    SchedTrace,
    /// Every overhead sample of the run in ns, per term, in trace order (JSON).
    OverheadSamples,
}

impl ExportKind {
    const ALL: [(&'static str, ExportKind); 6] = [
        ("jsonl", ExportKind::Jsonl),
        ("perfetto", ExportKind::Perfetto),
        ("job_csv", ExportKind::JobCsv),
        ("gantt_svg", ExportKind::GanttSvg),
        ("sched_trace", ExportKind::SchedTrace),
        ("overhead_samples", ExportKind::OverheadSamples),
    ];

    /// The export named `name`; an unknown name is an error naming it.
    pub fn parse(name: &str) -> Result<ExportKind, RunError> {
        Self::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, k)| *k)
            .ok_or_else(|| RunError::input(format!("unknown export {name:?}")))
    }

    /// Its name (the key of the bindings' result).
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, k)| *k == self).map(|(n, _)| *n).unwrap_or("?")
    }
}

/// One export of a run: text, or bytes for `sched_trace`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExportData {
    Text(String),
    Bytes(Vec<u8>),
}

/// Everything a run is asked with (`rtsched run` and `rtsched.run`'s options, typed).
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// The tasks: sporadic, or fork-join (under a mechanism that executes fork-join jobs).
    pub workload: Workload,
    /// The processor count the workload file says it is made for (`"m"`), if any.
    pub m: Option<u32>,
    /// The registered mechanism's name (`mechanism::registry`).
    pub mechanism: String,
    /// The mechanism's parameters as (name, text) pairs, in the order given.
    pub params: Vec<(String, String)>,
    /// The task CPUs; `None`: the first `m` of [`RunRequest::allowed`] (the dedicated CPU left out).
    pub cpus: Option<Vec<usize>>,
    /// The CPUs this process may use, ascending ([`crate::platform::allowed_cpus`] by default).
    pub allowed: Vec<usize>,
    pub duration_ns: u64,
    /// `None`: the default placement of mechanisms that need one.
    pub placement: Option<GivenPlacement>,
    pub dedicated_cpu: Option<usize>,
    pub rt_priority: Option<i32>,
    pub idle: IdleMode,
    /// Run a workload made for more CPUs than the run has (its `m` or its utilization), with a
    /// warning, instead of refusing it.
    pub force: bool,
    pub seed: u64,
    /// Each job runs a fraction uniform in `[f, 1]` of its WCET (`None`: its WCET).
    pub exec_min_fraction: Option<f64>,
    pub exports: Vec<ExportKind>,
    /// Set it to end the run early (see [`RunConfig::stop`]).
    pub stop: Option<Arc<AtomicBool>>,
}

impl RunRequest {
    /// A request to run `workload` under `mechanism` for `duration_ns`, with every option at
    /// its default (the process's allowed CPUs, no placement, normal priority, sleeping idle
    /// workers, seed 0, no exports).
    pub fn new(workload: impl Into<Workload>, mechanism: &str, duration_ns: u64) -> RunRequest {
        RunRequest {
            workload: workload.into(),
            m: None,
            mechanism: mechanism.to_string(),
            params: Vec::new(),
            cpus: None,
            allowed: crate::platform::allowed_cpus(),
            duration_ns,
            placement: None,
            dedicated_cpu: None,
            rt_priority: None,
            idle: IdleMode::Sleep,
            force: false,
            seed: 0,
            exec_min_fraction: None,
            exports: Vec::new(),
            stop: None,
        }
    }

    /// Decides the run ([`RunRequest::prepare_with`] without a way to stop the placement search).
    pub fn prepare(self) -> Result<PreparedRun, RunError> {
        self.prepare_with(&Stop::never())
    }

    /// Decides the run without starting it, in the order a user's mistakes are reported: the
    /// mechanism, the dedicated CPU it requires, the CPUs (and whether the workload fits
    /// them), the placement (given, or the default: `default_partition` for a partitioned
    /// mechanism, the SP-RES cascade for `spres`), the mechanism's parameters. `stop` ends a
    /// long placement search (its answer is then an error the caller discards).
    pub fn prepare_with(self, stop: &Stop) -> Result<PreparedRun, RunError> {
        let entry = registry::find(&self.mechanism)?;
        let ts = match &self.workload {
            Workload::Sporadic(ts) => Some(ts),
            Workload::ForkJoin(_) => None,
        };
        if entry.dedicated == DedicatedCpu::Required && self.dedicated_cpu.is_none() && ts.is_some() {
            let m = self.m.map(u64::from);
            let advice =
                dedicated_advice(entry.name, entry.dedicated_role, m, None, &self.allowed, self.cpus.as_deref());
            return Err(RunError::Placement(advice));
        }
        let (cpus, warnings) = match ts {
            Some(ts) => decide_cpus(ts, self.m, self.cpus.as_deref(), &self.allowed, self.dedicated_cpu, self.force)?,
            None => (decide_forkjoin_cpus(self.m, self.cpus.as_deref(), &self.allowed, self.force)?, Vec::new()),
        };
        let mut placement_warnings = Vec::new();
        let mut notes = Vec::new();
        let placement = match ts {
            Some(ts) => {
                let m = cpus.len();
                decide_placement(entry, ts, m, &self.params, self.placement.as_ref(), stop)?
                    .inspect_warning(&mut placement_warnings)
                    .inspect_note(&self.mechanism, &mut notes)
                    .placement
            }
            None if self.placement.is_some() => {
                return Err(RunError::Placement(format!(
                    "{} runs a fork-join workload without a placement (its mechanisms are global)",
                    self.mechanism
                )))
            }
            None => DecidedPlacement::None,
        };
        let mut mech = Mechanism::named(entry.name)?;
        match &placement {
            DecidedPlacement::Partition(p) => mech = mech.with_partition(p.clone()),
            DecidedPlacement::Reservations(p) => mech = mech.with_reservations(p.clone()),
            DecidedPlacement::None if entry.placement == PlacementKind::Partition => {
                return Err(RunError::Config(format!("{} needs a partition (task indices per CPU)", entry.name)))
            }
            DecidedPlacement::None => {}
        }
        let mech = mech.with_params(self.params.iter().map(|(k, v)| (k.as_str(), v.as_str())))?;
        let decision = Decision { cpus, placement, warnings, placement_warnings, notes };
        Ok(PreparedRun { request: self, entry, mechanism: mech, decision })
    }
}

/// What [`RunRequest::prepare`] decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The task CPUs, worker `i` on `cpus[i]`.
    pub cpus: Vec<usize>,
    pub placement: DecidedPlacement,
    /// Warnings about the run's size (a workload made for more CPUs, run with `force`): said
    /// before the run and listed in the summary's `warnings`.
    pub warnings: Vec<String>,
    /// Warnings about the placement (hard reservations made without overheads): said before
    /// the run, not listed in the summary's `warnings`.
    pub placement_warnings: Vec<String>,
    /// What was decided for the user (the default placement, and how it was made).
    pub notes: Vec<String>,
}

/// A decided run, ready to start.
#[derive(Debug, Clone)]
pub struct PreparedRun {
    pub request: RunRequest,
    entry: &'static Entry,
    mechanism: Mechanism,
    pub decision: Decision,
}

/// A run's result with the judgement of its timing.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub result: RunResult,
    /// The run's summary ([`RunResult::summary_json`]; a fork-join run's adds `"forkjoin"`,
    /// its job-level results).
    pub summary: Value,
    /// Whether the measured timing can be trusted ([`assess_timing`]), and why.
    pub trustworthy: bool,
    pub trustworthy_reason: String,
    /// The requested exports, in the order asked.
    pub exports: Vec<(ExportKind, ExportData)>,
}

impl PreparedRun {
    /// The mechanism's registry entry.
    pub fn entry(&self) -> &'static Entry {
        self.entry
    }

    /// The mechanism with its placement and parameters.
    pub fn mechanism(&self) -> &Mechanism {
        &self.mechanism
    }

    /// The run's configuration (CPUs, duration, priority, ...).
    pub fn config(&self) -> RunConfig {
        let r = &self.request;
        let mut cfg = RunConfig::new(self.decision.cpus.clone(), r.duration_ns);
        cfg.dedicated_cpu = r.dedicated_cpu;
        cfg.rt_priority = r.rt_priority;
        cfg.idle = r.idle;
        cfg.force = r.force;
        cfg.seed = r.seed;
        if let Some(f) = r.exec_min_fraction {
            cfg.exec = ExecTime::Uniform { min_fraction: f };
        }
        cfg.stop = r.stop.clone();
        cfg
    }

    /// Runs it: the result, the summary, the trust verdict and the exports.
    pub fn run(&self) -> Result<RunOutcome, RunError> {
        let cfg = self.config();
        let (result, summary, exports) = match &self.request.workload {
            Workload::Sporadic(ts) => {
                let r = crate::run(ts, &self.mechanism, &cfg)?;
                let summary = r.summary_json();
                let exports = exports(&r, &self.request.exports, || Ok(ts.clone()), |tr| Ok(tr.to_job_csv()?))?;
                (r, summary, exports)
            }
            Workload::ForkJoin(set) => {
                let r = run_forkjoin(set, &self.mechanism, &cfg)?;
                let mut summary = r.summary_json();
                summary["forkjoin"] = forkjoin_summary(set, &r);
                let exports =
                    exports(&r, &self.request.exports, || slot_task_set(set), |_| Ok(forkjoin_job_csv(set, &r)))?;
                (r, summary, exports)
            }
        };
        let terms: Vec<(&str, bool)> = self.entry.all_terms().iter().map(|t| (t.name, t.tracking)).collect();
        let (trustworthy, trustworthy_reason) =
            assess_timing(&TimingFacts::from_summary(&summary), &terms, self.request.rt_priority);
        Ok(RunOutcome { result, summary, trustworthy, trustworthy_reason, exports })
    }
}

/// Decides and runs `request` ([`RunRequest::prepare`], then [`PreparedRun::run`]).
pub fn run_request(request: RunRequest) -> Result<RunOutcome, RunError> {
    request.prepare()?.run()
}

/// The requested exports of a run, in the order asked; the trace is converted once, for the
/// task set `ts` (per thread slot for a fork-join run), and the job CSV is `job_csv`'s.
fn exports(
    r: &RunResult,
    asked: &[ExportKind],
    ts: impl FnOnce() -> Result<TaskSet, RunError>,
    job_csv: impl Fn(&rtsched_trace::Trace) -> Result<String, RunError>,
) -> Result<Vec<(ExportKind, ExportData)>, RunError> {
    let mut out = Vec::new();
    let mut trace = None;
    let mut ts = Some(ts);
    for &k in asked {
        if k == ExportKind::OverheadSamples {
            out.push((k, ExportData::Text(serde_json::json!(r.overheads).to_string())));
            continue;
        }
        if trace.is_none() {
            let ts = ts.take().map(|f| f()).transpose()?.unwrap_or_default();
            trace = Some(to_trace(r, &ts)?);
        }
        let Some(tr) = trace.as_ref() else { continue };
        let data = match k {
            ExportKind::Jsonl => ExportData::Text(tr.to_jsonl()),
            ExportKind::Perfetto => ExportData::Text(tr.to_perfetto_json()),
            ExportKind::JobCsv => ExportData::Text(job_csv(tr)?),
            ExportKind::GanttSvg => ExportData::Text(tr.to_gantt_svg(None)),
            ExportKind::SchedTrace => ExportData::Bytes(tr.to_sched_trace_bytes()?),
            ExportKind::OverheadSamples => continue,
        };
        out.push((k, data));
    }
    Ok(out)
}

/// `"0,1,3"`.
fn cpu_text(cpus: &[usize]) -> String {
    cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

/// Python's `format(x, ".4g")`: four significant digits, trailing zeros dropped, scientific
/// notation below 1e-4 and from 1e4 (what the utilization in a refusal has always read like).
fn fmt_g4(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { "0".into() } else { x.to_string() };
    }
    let sci = format!("{x:.3e}"); // mantissa rounded to 4 digits, e.g. "1.500e0"
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if (-4..4).contains(&exp) {
        trim(format!("{x:.*}", (3 - exp) as usize))
    } else {
        format!("{}e{}{:02}", trim(mant.to_string()), if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

/// What to pass to run mechanism `name`, which needs a CPU of its own for `role`, on a
/// machine whose process may use `allowed` (`cpus`: the task CPUs the user chose, kept apart
/// from the suggested dedicated one; `ts_m`: the processor count the task set is made for).
pub fn dedicated_advice(
    name: &str,
    role: &str,
    ts_m: Option<u64>,
    dedicated_cpu: Option<usize>,
    allowed: &[usize],
    cpus: Option<&[usize]>,
) -> String {
    let mut allowed = allowed.to_vec();
    allowed.sort_unstable();
    if allowed.len() < 2 {
        return format!(
            "{name} needs a CPU of its own for {role} (--dedicated-cpu N; Python: dedicated_cpu=N) besides the CPUs \
             that run the tasks, so at least 2 CPUs, but this process may use {} ({})",
            allowed.len(),
            cpu_text(&allowed)
        );
    }
    let free: Vec<usize> = allowed.iter().copied().filter(|c| !matches!(cpus, Some(cs) if cs.contains(c))).collect();
    let d = dedicated_cpu.unwrap_or(*free.first().unwrap_or(&allowed[0]));
    let rest: Vec<usize> = allowed.iter().copied().filter(|&c| c != d).collect();
    let m_here = rest.len();
    let mut msg = format!("{name} needs a CPU of its own for {role} (--dedicated-cpu N; Python: dedicated_cpu=N)");
    if dedicated_cpu.is_none() {
        msg += "; none was given";
    }
    let this = match ts_m {
        Some(m) if m > m_here as u64 => format!(" (this one is made for m = {m})"),
        _ => String::new(),
    };
    format!(
        "{msg}. This process may use {} CPUs ({}): with --dedicated-cpu {d} the tasks run on the other CPU{} ({}), so \
         give a task set for m ≤ {m_here}{this}",
        allowed.len(),
        cpu_text(&allowed),
        if m_here > 1 { "s" } else { "" },
        cpu_text(&rest)
    )
}

/// The CPUs a run of `ts` uses and the warnings to say: `cpus` if given, else the first `m` of
/// `allowed` (one when the set has no `m`; the dedicated CPU left out). A task set made for
/// more CPUs than the run has (its `m`), or whose utilization exceeds their number (exactly),
/// is refused with the numbers, or with `force` run anyway with a warning: its deadline misses
/// would be the CPU count's, not the scheduler's.
pub fn decide_cpus(
    ts: &TaskSet,
    m: Option<u32>,
    cpus: Option<&[usize]>,
    allowed: &[usize],
    dedicated_cpu: Option<usize>,
    force: bool,
) -> Result<(Vec<usize>, Vec<String>), RunError> {
    let cpu_list = match cpus {
        None => {
            let mut allowed: Vec<usize> = allowed.iter().copied().filter(|&c| Some(c) != dedicated_cpu).collect();
            allowed.sort_unstable();
            let want = m.map_or(1, |m| m.max(1) as usize);
            if want > allowed.len() && !force {
                let (besides, fewer) = match dedicated_cpu {
                    None => (String::new(), "fewer CPUs".to_string()),
                    Some(d) => (
                        format!(", besides the dedicated CPU {d}"),
                        format!("m ≤ {} (with --dedicated-cpu {d} the tasks get the other CPUs)", allowed.len()),
                    ),
                };
                return Err(RunError::input(format!(
                    "the task set is made for m = {want} CPUs, but this process may use {} ({}{besides}); give a \
                     task set for {fewer}, or --force to run it on these anyway",
                    allowed.len(),
                    cpu_text(&allowed)
                )));
            }
            allowed.truncate(want);
            allowed
        }
        Some(cpus) => {
            if let Some(d) = dedicated_cpu.filter(|d| cpus.contains(d)) {
                return Err(RunError::Model(ModelError::field(
                    "dedicated_cpu",
                    format!(
                        "CPU {d} is also in cpus {}; the dedicated CPU runs the mechanism's service thread and no \
                         task: list only the task CPUs in cpus (--cpus)",
                        cpu_text(cpus)
                    ),
                )));
            }
            cpus.to_vec()
        }
    };
    let k = cpu_list.len();
    let mut over = Vec::new();
    if let Some(m) = m.filter(|&m| m as usize > k) {
        over.push(format!("is made for m = {m} CPUs"));
    }
    if !ts.utilization_at_most(k as u64) {
        over.push(format!("has utilization U = {} > {k}", fmt_g4(ts.utilization_f64())));
    }
    if over.is_empty() {
        return Ok((cpu_list, Vec::new()));
    }
    let msg = format!(
        "the task set {}, but the run has {k} CPU{} ({})",
        over.join(" and "),
        if k != 1 { "s" } else { "" },
        cpu_text(&cpu_list)
    );
    if !force {
        return Err(RunError::input(format!(
            "{msg}; give --cpus with enough CPUs (or a task set for these), or --force to run it anyway"
        )));
    }
    let warning =
        format!("{msg}; running anyway (--force): its deadline misses come from the CPU count, not the scheduler");
    Ok((cpu_list, vec![warning]))
}

/// The CPUs of a fork-join run: `cpus` if given, else the first `m` of `allowed` (one when the
/// file has no `m`); a file made for more CPUs than allowed is refused unless `force` (then
/// every allowed CPU).
pub fn decide_forkjoin_cpus(
    m: Option<u32>,
    cpus: Option<&[usize]>,
    allowed: &[usize],
    force: bool,
) -> Result<Vec<usize>, RunError> {
    if let Some(cpus) = cpus {
        return Ok(cpus.to_vec());
    }
    let mut allowed = allowed.to_vec();
    allowed.sort_unstable();
    if let Some(m) = m.filter(|&m| m as usize > allowed.len()) {
        if !force {
            return Err(RunError::input(format!(
                "the file is made for m = {m} CPUs but this process may use {}; pass --cpus",
                allowed.len()
            )));
        }
    }
    allowed.truncate(m.map_or(1, |m| m.max(1) as usize));
    Ok(allowed)
}

/// A decided placement with the warning and note it comes with.
struct PlacementChoice {
    placement: DecidedPlacement,
    warning: Option<String>,
    /// Set when the placement was the default one: how it was made (after `{name} without --placement: `).
    note: Option<String>,
}

impl PlacementChoice {
    fn plain(placement: DecidedPlacement) -> PlacementChoice {
        PlacementChoice { placement, warning: None, note: None }
    }
    fn inspect_warning(self, to: &mut Vec<String>) -> PlacementChoice {
        to.extend(self.warning.clone());
        self
    }
    fn inspect_note(self, name: &str, to: &mut Vec<String>) -> PlacementChoice {
        to.extend(self.note.as_ref().map(|n| format!("{name} without --placement: {n}")));
        self
    }
}

/// The admission test of a partitioned mechanism's default partition (the schedulers'
/// own exact tests: QPA for P-EDF, deadline-monotonic response-time analysis for P-FP, as the
/// simulator's registry entries of the same names declare them; a test in this file checks
/// that the two agree).
fn default_admission(name: &str) -> Admission {
    match name {
        "pfp" => Admission::Fp(Priority::DeadlineMonotonic),
        _ => Admission::Edf,
    }
}

/// The placement of a run of `ts` on `m` CPUs under `entry`: the given one, checked for this
/// run, or the default one.
fn decide_placement(
    entry: &Entry,
    ts: &TaskSet,
    m: usize,
    params: &[(String, String)],
    given: Option<&GivenPlacement>,
    stop: &Stop,
) -> Result<PlacementChoice, RunError> {
    let name = entry.name;
    match (entry.placement, given) {
        (PlacementKind::None, None) => Ok(PlacementChoice::plain(DecidedPlacement::None)),
        (PlacementKind::None, Some(_)) => Err(RunError::Placement(format!("{name} is global and takes no placement"))),
        (_, Some(GivenPlacement::Partition(p))) => {
            check_partition(p, ts.len(), m)?;
            Ok(PlacementChoice::plain(DecidedPlacement::Partition(p.clone())))
        }
        (PlacementKind::Partition, Some(GivenPlacement::Placement(p))) => {
            let part = partition_of_placement(p, ts, m, "the number of CPUs of the run (--cpus) is")?;
            Ok(PlacementChoice::plain(DecidedPlacement::Partition(part)))
        }
        (PlacementKind::Reservations, Some(GivenPlacement::Placement(p))) => Ok(PlacementChoice {
            warning: hard_without_overheads(p, params),
            placement: DecidedPlacement::Reservations(p.clone()),
            note: None,
        }),
        (PlacementKind::Partition, None) => {
            let m32 = u32::try_from(m).map_err(|_| RunError::input(format!("{m} CPUs are too many")))?;
            let lim = Limits { stop: stop.clone(), ..Limits::default() };
            match default_partition(ts, m32, default_admission(name), &lim) {
                Ok(p) => Ok(PlacementChoice {
                    note: Some(format!("{}: {:?}", p.note, p.cpus)),
                    placement: DecidedPlacement::Partition(p.cpus),
                    warning: None,
                }),
                Err(NotPlaced(why)) => Err(RunError::Placement(format!("{why}; pass --placement or more CPUs"))),
            }
        }
        (PlacementKind::Reservations, None) => {
            // As in simulate: the SP-RES cascade (Brandenburg & Gül, RTSS 2016) with the
            // default configuration of `rtsched partition --heuristic spres`.
            let m32 = rtsched_model::check_m(m as u64)?;
            let mut cfg = semi::SemiConfig::default();
            cfg.limits.stop = stop.clone();
            let p = semi::cascade(ts, m32, &cfg);
            if !p.schedulable {
                return Err(RunError::Placement(format!(
                    "the SP-RES cascade cannot place the task set on {m} CPUs: {}; pass --placement or more CPUs",
                    p.reason.as_deref().unwrap_or("no reason given")
                )));
            }
            Ok(PlacementChoice {
                placement: DecidedPlacement::Reservations(p),
                warning: None,
                note: Some("placed by the SP-RES cascade".into()),
            })
        }
    }
}

/// A partition given as task lists must have one list per CPU of the run and place every
/// task exactly once.
fn check_partition(p: &[Vec<usize>], n: usize, m: usize) -> Result<(), RunError> {
    let mut placed: Vec<usize> = p.iter().flatten().copied().collect();
    placed.sort_unstable();
    if placed != (0..n).collect::<Vec<_>>() || p.len() != m {
        return Err(RunError::input(format!(
            "argument 'placement': {} CPU lists must place each of the {n} tasks once on the run's {m} CPUs",
            p.len()
        )));
    }
    Ok(())
}

/// The plain partition a placement is, for a run on `m` CPUs (`m_is` says where `m` comes from,
/// for the message): runnable, for `m` processors, every task one whole reservation
/// ([`Placement::plain_partition`], the rule the simulator applies too).
pub fn partition_of_placement(
    p: &Placement,
    ts: &TaskSet,
    m: usize,
    m_is: &str,
) -> Result<Vec<Vec<usize>>, ModelError> {
    p.check_runnable(ts)?;
    let m = u32::try_from(m).map_err(|_| ModelError::field("m", format!("{m} CPUs are too many")))?;
    p.plain_partition(ts, m, m_is)
}

/// The warning for an SP-RES placement with hard reservations whose budgets were not inflated
/// by overheads (no `"overheads"` object: not made by `rtsched partition --overheads`): its jobs
/// get exactly their WCET, and the overheads a job meets in its window make it miss. Unsplit
/// tasks are hard unless the parameter `soft` is true (its last value given counts); split parts
/// are always soft (`rtsched_policy::spres`, Brandenburg & Gül, RTSS 2016, §IV-A).
pub fn hard_without_overheads(p: &Placement, params: &[(String, String)]) -> Option<String> {
    if p.overheads.is_some() {
        return None;
    }
    let soft = params
        .iter()
        .rev()
        .find(|(k, _)| k == "soft")
        .is_some_and(|(_, v)| matches!(v.trim().to_lowercase().as_str(), "true" | "1" | "yes" | "on"));
    let hard = p.tasks.iter().filter(|t| t.parts == 1).count();
    if soft || hard == 0 {
        return None;
    }
    Some(format!(
        "the placement has {hard} hard reservation(s) made without overheads (budget = WCET): overheads will make \
         jobs miss; place with `rtsched partition --overheads MODEL --mechanism spres` or run with soft=true"
    ))
}

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
fn int_of(v: &Value) -> Option<u64> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> u64 {
        x * 1_000_000
    }

    fn set(ct_ms: &[(u64, u64)]) -> TaskSet {
        TaskSet::from_ct(&ct_ms.iter().map(|&(c, t)| (ms(c), ms(t))).collect::<Vec<_>>()).unwrap()
    }

    fn request(ts: TaskSet, m: Option<u32>, mech: &str, allowed: &[usize]) -> RunRequest {
        let mut r = RunRequest::new(ts, mech, ms(10));
        r.m = m;
        r.allowed = allowed.to_vec();
        r
    }

    #[test]
    fn g4_reads_as_pythons() {
        for (x, want) in [
            (1.5, "1.5"),
            (1.0, "1"),
            (2.0 / 3.0, "0.6667"),
            (12.5, "12.5"),
            (1234.5, "1234"),
            (9999.6, "1e+04"),
            (123456.0, "1.235e+05"),
            (0.00012345, "0.0001234"),
            (0.0, "0"),
        ] {
            assert_eq!(fmt_g4(x), want, "{x}");
        }
    }

    #[test]
    fn without_cpus_the_sets_m_decides_and_the_dedicated_cpu_is_left_out() {
        let ts = set(&[(1, 10), (1, 20)]);
        let all = [2, 5, 7];
        assert_eq!(decide_cpus(&ts, None, None, &all, None, false).unwrap(), (vec![2], vec![]));
        assert_eq!(decide_cpus(&ts, Some(2), None, &all, None, false).unwrap(), (vec![2, 5], vec![]));
        assert_eq!(decide_cpus(&ts, Some(1), None, &all, Some(2), false).unwrap(), (vec![5], vec![]));
        // Given CPUs are used as given; the dedicated one may not be among them.
        assert_eq!(decide_cpus(&ts, None, Some(&[7, 2]), &all, None, false).unwrap().0, vec![7, 2]);
        let e = decide_cpus(&ts, None, Some(&[2, 5]), &all, Some(5), false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "field 'dedicated_cpu': CPU 5 is also in cpus 2,5; the dedicated CPU runs the mechanism's service thread \
             and no task: list only the task CPUs in cpus (--cpus)"
        );
    }

    #[test]
    fn a_set_made_for_more_cpus_is_refused_or_forced_with_a_warning() {
        let ts = set(&[(1, 10), (1, 20)]);
        let e = decide_cpus(&ts, Some(4), None, &[0, 1], None, false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the task set is made for m = 4 CPUs, but this process may use 2 (0,1); give a task set for fewer CPUs, \
             or --force to run it on these anyway"
        );
        assert_eq!(e.kind(), crate::ErrorKind::Input);
        let e = decide_cpus(&ts, Some(4), None, &[0, 1, 2], Some(0), false).unwrap_err().to_string();
        assert!(
            e.contains(
                "may use 2 (1,2, besides the dedicated CPU 0); give a task set for m ≤ 2 (with --dedicated-cpu 0"
            ),
            "{e}"
        );
        // Forced: every allowed CPU, and a warning with the numbers.
        let (cpus, warns) = decide_cpus(&ts, Some(4), None, &[0, 1], None, true).unwrap();
        assert_eq!(cpus, vec![0, 1]);
        assert_eq!(
            warns,
            vec!["the task set is made for m = 4 CPUs, but the run has 2 CPUs (0,1); running anyway (--force): its \
                  deadline misses come from the CPU count, not the scheduler"
                .to_string()]
        );
        let e = decide_cpus(&ts, Some(3), Some(&[1]), &[0, 1], None, false).unwrap_err().to_string();
        assert!(e.starts_with("the task set is made for m = 3 CPUs, but the run has 1 CPU (1); give --cpus"), "{e}");
    }

    #[test]
    fn utilization_above_the_cpus_is_refused_exactly() {
        // 1/3 + 2/3 = 1 fits one CPU exactly; one ns more over a second does not.
        let exact = TaskSet::from_ct(&[(1, 3), (2, 3)]).unwrap();
        assert_eq!(decide_cpus(&exact, None, Some(&[0]), &[0], None, false).unwrap().1, Vec::<String>::new());
        let over = TaskSet::from_ct(&[(1, 3), (2, 3), (1, 1_000_000_000)]).unwrap();
        let e = decide_cpus(&over, None, Some(&[0]), &[0], None, false).unwrap_err().to_string();
        assert!(e.starts_with("the task set has utilization U = 1 > 1, but the run has 1 CPU (0)"), "{e}");
        assert_eq!(decide_cpus(&over, None, Some(&[0]), &[0], None, true).unwrap().1.len(), 1);
        let both = set(&[(6, 10), (9, 10)]);
        let e = decide_cpus(&both, Some(4), Some(&[0]), &[0], None, false).unwrap_err().to_string();
        assert!(e.contains("is made for m = 4 CPUs and has utilization U = 1.5 > 1"), "{e}");
    }

    #[test]
    fn fork_join_cpus_follow_the_files_m() {
        assert_eq!(decide_forkjoin_cpus(None, None, &[3, 4], false).unwrap(), vec![3]);
        assert_eq!(decide_forkjoin_cpus(Some(2), None, &[3, 4, 5], false).unwrap(), vec![3, 4]);
        let e = decide_forkjoin_cpus(Some(3), None, &[3, 4], false).unwrap_err().to_string();
        assert_eq!(e, "the file is made for m = 3 CPUs but this process may use 2; pass --cpus");
        assert_eq!(decide_forkjoin_cpus(Some(3), None, &[3, 4], true).unwrap(), vec![3, 4]);
        assert_eq!(decide_forkjoin_cpus(Some(3), Some(&[9]), &[3, 4], false).unwrap(), vec![9]);
    }

    #[test]
    fn dedicated_advice_says_what_runs_here() {
        let two = dedicated_advice("cq1", "release handling", Some(2), None, &[0, 1], None);
        assert!(two.contains("--dedicated-cpu N; Python: dedicated_cpu=N") && two.contains("none was given"), "{two}");
        assert!(two.contains("with --dedicated-cpu 0 the tasks run on the other CPU (1)"), "{two}");
        assert!(two.contains("give a task set for m ≤ 1 (this one is made for m = 2)"), "{two}");
        // The CPUs the user chose for the tasks are not suggested as the dedicated one.
        let chosen = dedicated_advice("cq1", "release handling", Some(1), None, &[0, 1], Some(&[0]));
        assert!(chosen.contains("--dedicated-cpu 1 the tasks run on the other CPU (0)"), "{chosen}");
        let four = dedicated_advice("gedf-mp", "the scheduling processor", None, None, &[0, 1, 2, 3], None);
        assert!(four.contains("the other CPUs (1,2,3)") && four.contains("m ≤ 3") && !four.contains("made for"));
        let one = dedicated_advice("cq1", "release handling", Some(1), None, &[3], None);
        assert!(one.contains("at least 2 CPUs") && one.contains("may use 1 (3)"), "{one}");
    }

    #[test]
    fn a_mechanism_that_needs_a_dedicated_cpu_is_refused_with_the_advice() {
        let name = registry::entries().iter().find(|e| e.dedicated == DedicatedCpu::Required).unwrap().name;
        let e = request(set(&[(1, 10)]), Some(1), name, &[0, 1]).prepare().unwrap_err();
        assert!(e.to_string().contains("needs a CPU of its own"), "{e}");
        let mut ok = request(set(&[(1, 10)]), Some(1), name, &[0, 1]);
        ok.dedicated_cpu = Some(0);
        assert_eq!(ok.prepare().unwrap().decision.cpus, vec![1]);
    }

    #[test]
    fn partitioned_mechanisms_get_the_default_partition() {
        // Three tasks of U 0.6, 0.5, 0.3 on two CPUs: worst fit puts 0.6 and 0.5 apart and 0.3
        // beside 0.5.
        let ts = set(&[(6, 10), (5, 10), (3, 10)]);
        for name in ["pedf", "pfp"] {
            let p = request(ts.clone(), Some(2), name, &[0, 1]).prepare().unwrap();
            assert_eq!(p.decision.placement, DecidedPlacement::Partition(vec![vec![0], vec![1, 2]]), "{name}");
            assert_eq!(p.mechanism().partition(), Some(&[vec![0], vec![1, 2]][..]));
            let note = &p.decision.notes[0];
            assert!(note.starts_with(&format!("{name} without --placement: partitioned by worst-fit")), "{note}");
            assert!(note.ends_with(": [[0], [1, 2]]"), "{note}");
            assert!(note.contains(if name == "pedf" { "EDF (QPA)" } else { "deadline-monotonic FP" }), "{note}");
        }
        // Too much for two CPUs (forced past the capacity check): no partition, the reason.
        let mut big = request(set(&[(9, 10), (9, 10), (9, 10)]), None, "pedf", &[0, 1]);
        big.cpus = Some(vec![0, 1]);
        big.force = true;
        let e = big.prepare().unwrap_err().to_string();
        assert!(e.contains("cannot place task") && e.ends_with("; pass --placement or more CPUs"), "{e}");
    }

    #[test]
    fn a_given_partition_must_place_every_task_once_on_the_runs_cpus() {
        let ts = set(&[(1, 10), (1, 10)]);
        let mut r = request(ts.clone(), None, "pedf", &[0]);
        r.placement = Some(GivenPlacement::Partition(vec![vec![1, 0]]));
        assert_eq!(r.prepare().unwrap().decision.placement, DecidedPlacement::Partition(vec![vec![1, 0]]));
        for bad in [vec![vec![0, 0]], vec![vec![0], vec![1]]] {
            let mut r = request(ts.clone(), None, "pedf", &[0]);
            r.placement = Some(GivenPlacement::Partition(bad));
            let e = r.prepare().unwrap_err().to_string();
            assert!(e.contains("must place each of the 2 tasks once on the run's 1 CPUs"), "{e}");
        }
        let mut g = request(ts.clone(), None, "gsn-edf", &[0]);
        g.placement = Some(GivenPlacement::Partition(vec![vec![0, 1]]));
        assert_eq!(g.prepare().unwrap_err().to_string(), "gsn-edf is global and takes no placement");
        // A placement file for pedf: one whole reservation per task, for the run's m.
        let whole = Placement::whole(&ts, &[vec![0, 1]]).unwrap();
        let mut r = request(ts.clone(), None, "pedf", &[0, 1]);
        r.cpus = Some(vec![0, 1]);
        r.placement = Some(GivenPlacement::Placement(whole));
        let e = r.prepare().unwrap_err().to_string();
        assert!(e.contains("the placement is for m = 1 but the number of CPUs of the run (--cpus) is 2"), "{e}");
    }

    /// Two tasks of U 0.6 and one of U 0.5 on two CPUs: no partition fits, SP-RES splits one.
    fn split_set() -> TaskSet {
        set(&[(6, 10), (6, 10), (5, 10)])
    }

    #[test]
    fn spres_without_a_placement_gets_the_cascades() {
        let p = request(split_set(), Some(2), "spres", &[0, 1]).prepare().unwrap();
        let DecidedPlacement::Reservations(pl) = &p.decision.placement else { panic!("{:?}", p.decision) };
        assert!(pl.schedulable && pl.m == 2);
        assert!(pl.tasks.iter().any(|t| t.parts > 1), "the cascade splits a task: {pl:?}");
        let cascade = semi::cascade(&split_set(), 2, &semi::SemiConfig::default());
        assert_eq!(pl, &cascade);
        assert_eq!(p.decision.notes, vec!["spres without --placement: placed by the SP-RES cascade".to_string()]);
        // More than m CPUs can hold: refused with the cascade's reason.
        let mut r = request(set(&[(9, 10), (9, 10), (9, 10)]), None, "spres", &[0, 1]);
        r.cpus = Some(vec![0, 1]);
        r.force = true;
        let e = r.prepare().unwrap_err().to_string();
        assert!(e.starts_with("the SP-RES cascade cannot place the task set on 2 CPUs: "), "{e}");
        assert!(e.ends_with("; pass --placement or more CPUs"), "{e}");
    }

    #[test]
    fn hard_reservations_without_overheads_are_warned_about() {
        let ts = split_set();
        let plain = semi::cascade(&ts, 2, &semi::SemiConfig::default());
        let w = hard_without_overheads(&plain, &[]).unwrap();
        let hard = plain.tasks.iter().filter(|t| t.parts == 1).count();
        assert!(w.starts_with(&format!("the placement has {hard} hard reservation(s) made without overheads")), "{w}");
        assert!(w.contains("rtsched partition --overheads MODEL --mechanism spres"), "{w}");
        assert_eq!(hard_without_overheads(&plain, &[("soft".into(), " True".into())]), None);
        // The last value of soft counts.
        let twice = [("soft".to_string(), "true".to_string()), ("soft".to_string(), "no".to_string())];
        assert!(hard_without_overheads(&plain, &twice).is_some());
        let mut inflated = plain.clone();
        inflated.overheads = Some(serde_json::from_str(r#"{"model": "m.json"}"#).unwrap());
        assert_eq!(hard_without_overheads(&inflated, &[]), None);
        let mut split_only = plain.clone();
        split_only.tasks.iter_mut().for_each(|t| t.parts = 2);
        assert_eq!(hard_without_overheads(&split_only, &[]), None);
        // In a request: the warning comes with the decision, listed apart from the summary's.
        let mut r = request(ts, Some(2), "spres", &[0, 1]);
        r.placement = Some(GivenPlacement::Placement(plain));
        let d = r.prepare().unwrap().decision;
        assert_eq!((d.placement_warnings, d.warnings.len(), d.notes.len()), (vec![w], 0, 0));
    }

    #[test]
    fn bad_requests_are_refused_before_anything_runs() {
        let e = request(set(&[(1, 10)]), None, "fifo", &[0]).prepare().unwrap_err().to_string();
        assert!(e.starts_with("bad run configuration: unknown scheduler \"fifo\"; known: pedf"), "{e}");
        let mut r = request(set(&[(1, 10)]), None, "gsn-edf", &[0]);
        r.params = vec![("priorities".into(), "rm".into())];
        assert!(r.prepare().unwrap_err().to_string().contains("gsn-edf has no parameter \"priorities\""));
        assert!(ExportKind::parse("svg").unwrap_err().to_string().contains("unknown export \"svg\""));
        assert_eq!(ExportKind::parse("job_csv").unwrap().name(), "job_csv");
        let fj =
            rtsched_model::forkjoin::read_json(r#"{"tasks": [{"period": "10ms", "regions": [["1ms"]]}]}"#).unwrap().set;
        let mut r = RunRequest::new(fj, "rtws", ms(10));
        r.allowed = vec![0];
        r.placement = Some(GivenPlacement::Partition(vec![vec![0]]));
        assert!(r.prepare().unwrap_err().to_string().contains("without a placement"));
    }

    fn summary(gap: u64, timer: u64, schedule: u64, release: u64, ipi: u64) -> Value {
        let st = |v: u64| serde_json::json!({"count": 1, "avg_ns": v as f64, "p50_ns": v, "p99_ns": v, "max_ns": v});
        serde_json::json!({"max_poll_gap_ns": gap, "overheads": {
            "release": st(release), "release_event": st(timer), "schedule": st(schedule), "ipi": st(ipi)}})
    }

    fn verdict(s: &Value, mech: &str, rt: Option<i32>) -> (bool, String) {
        let e = registry::find(mech).unwrap();
        let terms: Vec<(&str, bool)> = e.all_terms().iter().map(|t| (t.name, t.tracking)).collect();
        assess_timing(&TimingFacts::from_summary(s), &terms, rt)
    }

    #[test]
    fn trust_compares_poll_gaps_timer_and_wakeup_latency_with_the_reaction_time() {
        let limit = TRUST_FACTOR * TRUST_FLOOR_NS; // the reaction (5 us) is below the floor
        let (ok, why) = verdict(&summary(limit, limit, 2_000, 3_000, limit), "gsn-edf", None);
        assert!(ok);
        assert_eq!(why, "poll gaps, timer and wake-up latency within 10× the mechanism's reaction time (20 µs)");
        let (ok, why) = verdict(&summary(0, 0, 2_000, 3_000, limit + 1), "gsn-edf", Some(50));
        assert!(!ok && why.contains("to be noticed (Δipi: waking a thread)"), "{why}");
        let (ok, why) = verdict(&summary(limit + 1, 0, 2_000, 3_000, 0), "gsn-edf", None);
        assert!(!ok && why.contains("between two polls") && why.contains("--rt-priority") && !why.contains("late"));
        let (ok, why) = verdict(&summary(0, ms(5), 2_000, 3_000, 0), "gsn-edf", Some(50));
        assert!(!ok, "{why}");
        assert_eq!(
            why,
            "a release timer fired 5 ms late, above 10× the mechanism's reaction time (20 µs), at SCHED_FIFO \
             priority 50: higher-priority threads or interrupts took the CPUs"
        );
        // A slow mechanism raises the limit: its own reaction (release + schedule) x the factor.
        assert!(verdict(&summary(TRUST_FACTOR * 300_000, 0, 200_000, 100_000, 0), "gsn-edf", None).0);
        assert!(!verdict(&summary(TRUST_FACTOR * 300_000 + 1, 0, 200_000, 100_000, 0), "gsn-edf", None).0);
        // max_raw_ns, when there, is the one judged.
        let mut s = summary(0, 0, 2_000, 3_000, 0);
        s["overheads"]["release_event"]["max_raw_ns"] = serde_json::json!(limit + 1);
        assert!(!verdict(&s, "gsn-edf", None).0);
    }

    #[test]
    fn a_worker_that_never_ran_is_caught_by_the_longest_priority_inversion() {
        let limit = TRUST_FACTOR * TRUST_FLOOR_NS;
        let mut quiet = summary(0, 0, 2_000, 3_000, 0);
        for (bound, longest, ok) in [
            (100_000, 94_000_000, false),
            (100_000, TRUST_FACTOR * 100_000, true),
            (100_000, TRUST_FACTOR * 100_000 + 1, false),
            (1_000, limit, true),
            (1_000, limit + 1, false),
        ] {
            quiet["priority_inversion"] = serde_json::json!({"max_interval_ns": longest, "tracking_bound_ns": bound});
            let (got, why) = verdict(&quiet, "gsn-edf", Some(50));
            assert_eq!(got, ok, "{bound} {longest}: {why}");
            assert!(ok || why.contains("a ready job waited"), "{why}");
        }
        // A quantum-driven mechanism may hold a release back for one quantum on top.
        quiet["params"] = serde_json::json!({"quantum": 3_000_000});
        let edge = TRUST_FACTOR * 100_000 + 3_000_000;
        quiet["priority_inversion"] = serde_json::json!({"max_interval_ns": edge, "tracking_bound_ns": 100_000});
        assert!(verdict(&quiet, "cqm", Some(50)).0);
        quiet["priority_inversion"]["max_interval_ns"] = serde_json::json!(edge + 1);
        assert!(!verdict(&quiet, "cqm", Some(50)).0);
    }

    #[test]
    fn a_run_that_dropped_trace_records_is_never_trustworthy() {
        let mut s = summary(0, 0, 2_000, 3_000, 0);
        assert!(verdict(&s, "gsn-edf", None).0);
        s["dropped_records"] = serde_json::json!(1_947_100);
        s["metrics_horizon_ns"] = serde_json::json!(ms(2));
        s["duration_ns"] = serde_json::json!(1_000_000_000u64);
        let (ok, why) = verdict(&s, "gsn-edf", None);
        assert!(!ok);
        assert_eq!(
            why,
            "the run dropped 1947100 trace records (its trace buffers filled): its jobs, misses and overheads cover \
             only its first 2 ms of 1 s; run fewer tasks or a shorter duration"
        );
        // Disturbed as well: both causes, the lost records first.
        s["max_poll_gap_ns"] = serde_json::json!(50_000_000);
        let (ok, why) = verdict(&s, "gsn-edf", None);
        assert!(!ok && why.starts_with("the run dropped") && why.contains("; and a job body waited"), "{why}");
        // Without the horizon: a prefix.
        s.as_object_mut().unwrap().remove("metrics_horizon_ns");
        assert!(verdict(&s, "gsn-edf", None).1.contains("cover only a prefix of it"));
    }

    #[test]
    fn a_request_runs_and_its_outcome_carries_the_verdict_and_the_exports() {
        // Real threads for 30 ms (no timing asserted): the outcome's verdict is the summary's.
        let cpu = crate::platform::allowed_cpus()[0];
        let mut r = RunRequest::new(set(&[(1, 10), (2, 20)]), "gsn-edf", ms(30));
        r.cpus = Some(vec![cpu]);
        r.exports = vec![ExportKind::OverheadSamples, ExportKind::Jsonl];
        let out = run_request(r).unwrap();
        assert_eq!(out.summary["cpus"], serde_json::json!([cpu]));
        assert_eq!((out.trustworthy, out.trustworthy_reason.clone()), verdict(&out.summary, "gsn-edf", None));
        let kinds: Vec<ExportKind> = out.exports.iter().map(|(k, _)| *k).collect();
        assert_eq!(kinds, vec![ExportKind::OverheadSamples, ExportKind::Jsonl]);
        // Fork-join goes through the same request; its summary adds the job-level results.
        let fj =
            rtsched_model::forkjoin::read_json(r#"{"tasks": [{"period": "10ms", "regions": [["1ms"], ["1ms"]]}]}"#)
                .unwrap()
                .set;
        let mut r = RunRequest::new(fj, "rtws", ms(30));
        r.cpus = Some(vec![cpu]);
        r.exports = vec![ExportKind::JobCsv];
        let out = run_request(r).unwrap();
        assert!(out.summary["forkjoin"]["jobs"].as_u64().is_some(), "{}", out.summary);
        assert_eq!(out.exports.len(), 1);
    }

    #[test]
    fn a_global_mechanism_runs_on_the_first_allowed_cpu() {
        let ts = set(&[(1, 10)]);
        let p = request(ts, None, "gsn-edf", &[4]).prepare().unwrap();
        assert_eq!((p.decision.cpus.clone(), p.decision.placement.clone()), (vec![4], DecidedPlacement::None));
        assert_eq!(p.config().cpus, vec![4]);
    }

    #[test]
    fn default_admissions_are_the_simulators() {
        // run and simulate place a set alike: the same admission per partitioned scheduler.
        for e in crate::mechanism::registry::entries() {
            if e.placement == PlacementKind::Partition {
                if let Ok(sim) = rtsched_sim::registry::find(e.name) {
                    assert_eq!(
                        rtsched_sim::registry::PlacementKind::Partition(default_admission(e.name)),
                        sim.placement,
                        "{}",
                        e.name
                    );
                }
            }
        }
    }
}
