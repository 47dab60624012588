//! The analysis report: named tests run on one task set, as the documented JSON object
//! (docs/cli.md#analyze). Shared by `rtsched analyze`, the Python API and the experiments.
//!
//! A report is a plain struct ([`Report`]) written straight to JSON text
//! ([`Report::write_json`]) or to a Python dict (`crates/py/src/batch/`), without an intermediate
//! `serde_json::Value`. The total utilization is reported as a decimal (`utilization`, a float
//! for reading only); the exact fraction (`utilization_exact`, `"num/den"`) is computed only
//! when asked for, since summing 40 co-prime periods exactly gives 140-digit fractions and
//! costs a hundred times more than the tests. Verdicts never depend on it: every test decides
//! exactly on its own (integer cross-multiplication, or a rigorous float filter with exact
//! rationals on near-ties).

use crate::global::fp::{self as gfp, GfpTest};
use crate::global::gel::{self, Scheduler as GelScheduler};
use crate::global::{self, GlobalTest};
use crate::partition::{self, Admission, Fit, Order, PartitionOutcome};
use crate::uni::{edf, fp};
use crate::{semi, suspension, Limits, Verdict};
use rtsched_model::{ModelError, TaskSet, Time};
use std::fmt::Write as _;

/// Every test name `analyze` knows, in report order.
pub const TEST_NAMES: [&str; 24] = [
    "gfb",
    "bak",
    "bcl",
    "bcl_iterative",
    "rta",
    "bar",
    "ffdbf",
    "la",
    "gedf",
    "gedf_no_la",
    "gedf_srt",
    "gfp_bc",
    "gfp_bc_slack",
    "gfp_guan",
    "gfp_rm_bc",
    "gfp_rm_bc_slack",
    "gfp_rm_guan",
    "gel_pl_gedf",
    "gel_pl_gfl",
    "edf_uni",
    "fp_dm_uni",
    "pedf_ffd",
    "pfp_ffd",
    "spres",
];

/// Every DAG test name, in report order (run on DAG sets by `crate::dag::report`; never on a
/// sequential set, as [`TEST_NAMES`] never run on a DAG set). `dag_graham` (Graham's bound for
/// one DAG alone) runs by default only on a set of one task, and is an error when named on a
/// larger one. `dag_melani_gfp`, `dag_melani_gedf`, `dag_fonseca_gfp` and `dag_fonseca_gfp_chain`
/// are response-time analyses (`crate::dag::melani`, `crate::dag::fonseca`,
/// `crate::dag::fonseca_chain`); their results carry per-task bounds.
pub const DAG_TEST_NAMES: [&str; 9] = [
    "dag_federated",
    "dag_gedf_li2013",
    "dag_gedf_li2014",
    "dag_gedf_bonifaci2013",
    "dag_melani_gfp",
    "dag_melani_gedf",
    "dag_fonseca_gfp",
    "dag_fonseca_gfp_chain",
    "dag_graham",
];

/// A test of [`TEST_NAMES`], resolved once per call rather than matched by name per set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestId {
    Global(GlobalTest),
    /// A global fixed-priority test under deadline- or rate-monotonic priorities.
    Gfp(GfpTest, fp::Priority),
    /// GEL-PL response-time bounds (Erickson & Anderson, ECRTS 2012) under G-EDF or G-FL.
    Gel(GelScheduler),
    Gedf,
    /// "gedf" without Liu & Anderson's test (the combination before LA was added).
    GedfNoLa,
    GedfSrt,
    EdfUni,
    FpDmUni,
    PedfFfd,
    PfpFfd,
    Spres,
}

impl TestId {
    pub fn from_name(name: &str) -> Option<TestId> {
        if let Some(t) = GlobalTest::from_name(name) {
            return Some(TestId::Global(t));
        }
        if let Some((t, p)) = GfpTest::from_name(name) {
            return Some(TestId::Gfp(t, p));
        }
        if let Some(g) = GelScheduler::from_name(name) {
            return Some(TestId::Gel(g));
        }
        Some(match name {
            "gedf" => TestId::Gedf,
            "gedf_no_la" => TestId::GedfNoLa,
            "gedf_srt" => TestId::GedfSrt,
            "edf_uni" => TestId::EdfUni,
            "fp_dm_uni" => TestId::FpDmUni,
            "pedf_ffd" => TestId::PedfFfd,
            "pfp_ffd" => TestId::PfpFfd,
            "spres" => TestId::Spres,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            TestId::Global(t) => t.name(),
            TestId::Gfp(t, fp::Priority::DeadlineMonotonic) => t.name(),
            TestId::Gfp(t, fp::Priority::RateMonotonic) => t.rm_name(),
            TestId::Gel(g) => g.name(),
            TestId::Gedf => "gedf",
            TestId::GedfNoLa => "gedf_no_la",
            TestId::GedfSrt => "gedf_srt",
            TestId::EdfUni => "edf_uni",
            TestId::FpDmUni => "fp_dm_uni",
            TestId::PedfFfd => "pedf_ffd",
            TestId::PfpFfd => "pfp_ffd",
            TestId::Spres => "spres",
        }
    }

    /// The `suspension` key of this test's result on a set with self-suspending tasks:
    /// `"aware"` for `la` (Liu & Anderson, ECRTS 2013), `"oblivious+aware"` for `gedf` (its
    /// members obliviously, LA aware), `"oblivious"` for every other test
    /// ([`crate::suspension`]).
    pub fn suspension_mode(self) -> &'static str {
        match self {
            TestId::Global(GlobalTest::La) => suspension::AWARE,
            TestId::Gedf => suspension::MIXED,
            _ => suspension::OBLIVIOUS,
        }
    }

    /// Tests that only make sense on one processor.
    fn uniprocessor_only(self) -> bool {
        matches!(self, TestId::EdfUni | TestId::FpDmUni)
    }

    /// Tests run only when asked for by name: the rate-monotonic variants of the G-FP tests
    /// (the default list has each G-FP test once, under deadline-monotonic priorities), and the
    /// GEL-PL bounds, whose verdict is `gedf_srt`'s and whose value is their per-task bounds,
    /// and `gedf_no_la` (the switch that leaves LA out of `gedf`).
    fn on_request_only(self) -> bool {
        matches!(self, TestId::Gfp(_, fp::Priority::RateMonotonic) | TestId::Gel(_) | TestId::GedfNoLa)
    }
}

/// Checks the requested names (unknown ones are an error for the whole call); `None` asks
/// for every test. The result still depends on `m` through [`Selection::for_m`].
#[derive(Debug, Clone)]
pub struct Selection {
    requested: Option<Vec<TestId>>,
}

impl Selection {
    pub fn new(requested: Option<&[String]>) -> Result<Selection, ModelError> {
        let requested = match requested {
            None => None,
            Some(list) => {
                let mut out: Vec<TestId> = Vec::new();
                for t in list {
                    // Any spelling of a name (case, `_` or `-`): crate::methods.
                    let id = crate::methods::test(t, &TEST_NAMES).and_then(TestId::from_name).ok_or_else(|| {
                        if crate::methods::test(t, &DAG_TEST_NAMES).is_some() {
                            return ModelError::field(
                                "test",
                                format!("{t:?} takes DAG tasks; this is a sequential task set"),
                            );
                        }
                        ModelError::field("test", format!("unknown test {t:?}; available: {}", TEST_NAMES.join(", ")))
                    })?;
                    if !out.contains(&id) {
                        out.push(id);
                    }
                }
                Some(out)
            }
        };
        Ok(Selection { requested })
    }

    /// The tests to run on a set for `m` processors: every test that applies by default (but
    /// those [`TestId::on_request_only`]); a
    /// uniprocessor-only test asked for with `m != 1` is an error (of that set).
    pub fn for_m(&self, m: u32) -> Result<Vec<TestId>, ModelError> {
        match &self.requested {
            None => Ok(TEST_NAMES
                .iter()
                .filter_map(|n| TestId::from_name(n))
                .filter(|t| (m == 1 || !t.uniprocessor_only()) && !t.on_request_only())
                .collect()),
            Some(list) => {
                if let Some(t) = list.iter().find(|t| t.uniprocessor_only() && m != 1) {
                    return Err(ModelError::field("test", format!("{} applies only to m = 1, got m = {m}", t.name())));
                }
                Ok(list.clone())
            }
        }
    }
}

/// Validates a requested test list against `m` (names as strings, for the experiment engine).
pub fn resolve_tests(requested: Option<&[String]>, m: u32) -> Result<Vec<String>, ModelError> {
    Ok(Selection::new(requested)?.for_m(m)?.into_iter().map(|t| t.name().to_string()).collect())
}

/// Runs one named test; `Verdict` for the experiment engine. A set with self-suspending
/// tasks is analysed suspension-obliviously ([`crate::suspension`]), but by `la` (and `la`
/// within `gedf`), which is suspension-aware.
pub fn run_test(name: &str, ts: &TaskSet, m: u32, limits: &Limits, epsilon: u64) -> Verdict {
    match TestId::from_name(name) {
        Some(t) => verdict(t, ts, m, limits, epsilon),
        None => match semi::Heuristic::from_name(name) {
            Some(h) => {
                let Ok(ts) = suspension::oblivious(ts) else { return Verdict::NotSchedulable };
                let ts = ts.as_ref();
                let cfg = semi::SemiConfig { epsilon, ..semi::SemiConfig::default() };
                Verdict::from_bool(semi::place(ts, m, &h, &cfg).schedulable)
            }
            None => Verdict::GaveUp,
        },
    }
}

/// The verdict of one test. A set with self-suspending tasks is analysed
/// suspension-obliviously ([`crate::suspension`]; a task whose `C + S` exceeds the largest
/// time is unschedulable), but by `la`, suspension-aware, also within `gedf` and
/// `gedf_no_la` ([`global::combined_of`] handles both kinds itself).
pub fn verdict(t: TestId, ts: &TaskSet, m: u32, limits: &Limits, epsilon: u64) -> Verdict {
    if matches!(t, TestId::Global(_) | TestId::Gedf | TestId::GedfNoLa) {
        return verdict_plain(t, ts, m, limits, epsilon);
    }
    match suspension::oblivious(ts) {
        Ok(ts) => verdict_plain(t, ts.as_ref(), m, limits, epsilon),
        Err(_) => Verdict::NotSchedulable,
    }
}

fn verdict_plain(t: TestId, ts: &TaskSet, m: u32, limits: &Limits, epsilon: u64) -> Verdict {
    let partitioned = |adm| {
        let p = partition::partition(ts, m, Fit::First, Order::DecreasingUtilization, adm, limits);
        Verdict::from_bool(matches!(p, PartitionOutcome::Placed(_)))
    };
    match t {
        TestId::Global(g) => global::test(g, ts, m, limits),
        // The set's own priorities (its file's `priority` fields) replace deadline monotonic.
        TestId::Gfp(g, fp::Priority::DeadlineMonotonic) if ts.priorities().is_some() => {
            let own = file_priorities(ts).expect("has priorities");
            gfp::analyze(g, ts, m, &own, limits).map_or(Verdict::NotSchedulable, |r| r.verdict)
        }
        TestId::Gfp(g, p) => gfp::test(g, ts, m, p, limits),
        TestId::Gel(g) => gel::analyze(g, ts, m, gel::Solve::Exact, limits).0,
        TestId::Gedf => global::combined(ts, m, limits),
        TestId::GedfNoLa => global::combined_no_la(ts, m, limits),
        TestId::GedfSrt => Verdict::from_bool(global::srt::bounded_tardiness(ts, m)),
        TestId::EdfUni => edf::qpa(ts, limits),
        TestId::FpDmUni => fp::rta(ts, fp::Priority::DeadlineMonotonic, limits).0,
        TestId::PedfFfd => partitioned(Admission::Edf),
        TestId::PfpFfd => partitioned(Admission::Fp(fp::Priority::DeadlineMonotonic)),
        TestId::Spres => {
            let mut cfg = semi::SemiConfig { epsilon, ..semi::SemiConfig::default() };
            cfg.limits.stop = limits.stop.clone();
            Verdict::from_bool(semi::cascade(ts, m, &cfg).schedulable)
        }
    }
}

/// What a test adds to its verdict in the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extra {
    None,
    /// `gedf_srt`: Devi–Anderson bounds per task (`None`: unbounded or not implicit).
    Tardiness(Option<Vec<u64>>),
    /// `fp_dm_uni`: exact response times per task (`None` where a job misses or gave up);
    /// the `gfp_*` tests: response-time bounds per task (`None` where not proved); the
    /// `gel_pl_*` tests: GEL-PL response-time bounds per task (all `None` when not bounded).
    ResponseTimes(Vec<Option<Time>>),
}

/// One test's entry of a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestResult {
    pub test: TestId,
    pub verdict: Verdict,
    pub extra: Extra,
}

/// Where the priorities of `gfp_bc`, `gfp_bc_slack` and `gfp_guan` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrioritySource {
    /// Deadline monotonic (the default), or a rule or ranks given by the caller on a set whose
    /// file has no priorities (the JSON says nothing).
    Default,
    /// The set's own per-task `priority` fields (docs/formats.md); the JSON says `"file"`.
    File,
    /// Given by the caller (`--priorities`, `priorities=`) over the set's own: the JSON says
    /// `"given-over-file"`.
    GivenOverFile,
}

impl PrioritySource {
    /// The value of the `priorities` key of a G-FP result, if it has one.
    pub fn json(self) -> Option<&'static str> {
        match self {
            PrioritySource::Default => None,
            PrioritySource::File => Some("file"),
            PrioritySource::GivenOverFile => Some("given-over-file"),
        }
    }
}

/// The report of one task set (docs/cli.md#analyze).
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub m: u32,
    pub n: usize,
    /// Total utilization, a float for reading (verdicts never use it).
    pub utilization: f64,
    /// `"num/den"`, only when asked for.
    pub utilization_exact: Option<String>,
    pub results: Vec<TestResult>,
    /// The set has self-suspending tasks: every verdict is suspension-oblivious
    /// ([`crate::suspension`]) but `la`'s (aware) and `gedf`'s (both); the JSON says which in
    /// every result ([`TestId::suspension_mode`]).
    pub suspension_oblivious: bool,
    /// Where the deadline-monotonic-named G-FP tests took their priorities from.
    pub priorities: PrioritySource,
}

/// Runs `tests` on one task set. Once `limits.stop` is requested, the tests not yet run
/// answer [`Verdict::GaveUp`] at once (the caller discards the report). A set with
/// self-suspending tasks is analysed suspension-obliviously ([`crate::suspension`]) and the
/// report says so; the utilization reported is the set's own (`C/T`).
pub fn report(ts: &TaskSet, m: u32, tests: &[TestId], limits: &Limits, exact_utilization: bool) -> Report {
    report_with_priorities(ts, m, tests, limits, exact_utilization, None)
}

/// [`report`] with the G-FP tests named for deadline-monotonic priorities (`gfp_bc`,
/// `gfp_bc_slack`, `gfp_guan`) run under `priorities` instead (`None`: the set's own
/// per-task priorities if its file gave them, [`TaskSet::priorities`], else deadline
/// monotonic); the `gfp_rm_*` names keep rate-monotonic priorities. Given priorities override
/// the set's own, and the report says so ([`PrioritySource`]). An explicit assignment must
/// have one value per task ([`gfp::Assignment::from_text`] checks it); a wrong length leaves
/// those tests not schedulable.
pub fn report_with_priorities(
    ts: &TaskSet,
    m: u32,
    tests: &[TestId],
    limits: &Limits,
    exact_utilization: bool,
    priorities: Option<&gfp::Assignment>,
) -> Report {
    let applies = suspension::applies(ts);
    let own = file_priorities(ts);
    let (priorities, source) = match (priorities, &own) {
        (Some(p), Some(_)) => (Some(p), PrioritySource::GivenOverFile),
        (Some(p), None) => (Some(p), PrioritySource::Default),
        (None, Some(f)) => (Some(f), PrioritySource::File),
        (None, None) => (None, PrioritySource::Default),
    };
    let mut r = match suspension::oblivious(ts) {
        Ok(view) => report_plain(ts, view.as_ref(), m, tests, limits, false, priorities),
        // A C + S beyond the largest time: unschedulable by every test.
        Err(_) => Report {
            m,
            n: ts.len(),
            utilization: 0.0,
            utilization_exact: None,
            results: tests
                .iter()
                .map(|&t| TestResult {
                    test: t,
                    verdict: Verdict::NotSchedulable,
                    extra: match t {
                        TestId::GedfSrt => Extra::Tardiness(None),
                        TestId::FpDmUni | TestId::Gfp(..) | TestId::Gel(_) => {
                            Extra::ResponseTimes(vec![None; ts.len()])
                        }
                        _ => Extra::None,
                    },
                })
                .collect(),
            suspension_oblivious: true,
            priorities: source,
        },
    };
    r.priorities = source;
    r.utilization = ts.utilization_f64() + 0.0;
    r.utilization_exact = exact_utilization.then(|| {
        let u = ts.utilization();
        format!("{}/{}", u.numer(), u.denom())
    });
    r.suspension_oblivious = applies;
    r
}

/// The report of `ts` (as given) whose suspension-oblivious view is `view` (`ts` itself
/// without suspensions).
fn report_plain(
    orig: &TaskSet,
    ts: &TaskSet,
    m: u32,
    tests: &[TestId],
    limits: &Limits,
    exact_utilization: bool,
    priorities: Option<&gfp::Assignment>,
) -> Report {
    let results = tests
        .iter()
        .map(|&t| match t {
            _ if limits.stop.requested() => TestResult { test: t, verdict: Verdict::GaveUp, extra: Extra::None },
            TestId::GedfSrt => {
                let (verdict, bounds) = global::srt::test(ts, m, &limits.stop);
                TestResult { test: t, verdict, extra: Extra::Tardiness(bounds) }
            }
            TestId::FpDmUni => {
                let (v, rts) = fp::rta(ts, fp::Priority::DeadlineMonotonic, limits);
                TestResult { test: t, verdict: v, extra: Extra::ResponseTimes(rts) }
            }
            TestId::Gfp(g, p) => {
                let rule = gfp::Assignment::Rule(p);
                let prio = match priorities {
                    Some(a) if p == fp::Priority::DeadlineMonotonic => a,
                    _ => &rule,
                };
                let r = gfp::analyze(g, ts, m, prio, limits).unwrap_or(gfp::GfpResult {
                    verdict: Verdict::NotSchedulable,
                    response_times: vec![None; ts.len()],
                });
                TestResult { test: t, verdict: r.verdict, extra: Extra::ResponseTimes(r.response_times) }
            }
            TestId::Gel(g) => {
                let (v, rts) = gel::response_times(g, ts, m, limits);
                let rts = match rts {
                    Some(r) => r.into_iter().map(Some).collect(),
                    None => vec![None; ts.len()],
                };
                TestResult { test: t, verdict: v, extra: Extra::ResponseTimes(rts) }
            }
            // `verdict` converts (or, for the G-EDF family, lets LA see the suspensions).
            _ => TestResult { test: t, verdict: verdict(t, orig, m, limits, 0), extra: Extra::None },
        })
        .collect();
    Report {
        m,
        n: ts.len(),
        // + 0.0: the float sum of no tasks is -0.0; an empty set's utilization is 0.
        utilization: ts.utilization_f64() + 0.0,
        utilization_exact: exact_utilization.then(|| {
            let u = ts.utilization();
            format!("{}/{}", u.numer(), u.denom())
        }),
        results,
        suspension_oblivious: false,
        priorities: PrioritySource::Default,
    }
}

/// The set's own per-task priorities ([`TaskSet::priorities`]) as an assignment.
fn file_priorities(ts: &TaskSet) -> Option<gfp::Assignment> {
    ts.priorities().map(|r| gfp::Assignment::Explicit(r.iter().map(|&x| u64::from(x)).collect()))
}

/// Appends a JSON number for a finite float (`2.0`, `4.800000050210976`, `1e-7`).
pub fn write_f64(out: &mut String, x: f64) {
    if x.is_finite() {
        // Debug prints the shortest representation that reads back exactly, always with a
        // decimal point or an exponent: valid JSON.
        let _ = write!(out, "{x:?}");
    } else {
        out.push_str("null");
    }
}

fn write_opt_bool(out: &mut String, v: Option<bool>) {
    out.push_str(match v {
        Some(true) => "true",
        Some(false) => "false",
        None => "null",
    });
}

impl Report {
    /// The `priorities` key of `test`'s result: where `gfp_bc`, `gfp_bc_slack` and `gfp_guan`
    /// took their priorities from, when not the default ([`PrioritySource`]).
    pub fn priority_note(&self, test: TestId) -> Option<&'static str> {
        match test {
            TestId::Gfp(_, fp::Priority::DeadlineMonotonic) => self.priorities.json(),
            _ => None,
        }
    }

    /// Appends the report as one line of compact JSON (no newline).
    pub fn write_json(&self, out: &mut String) {
        let _ = write!(out, "{{\"m\":{},\"n\":{},\"utilization\":", self.m, self.n);
        write_f64(out, self.utilization);
        if let Some(e) = &self.utilization_exact {
            let _ = write!(out, ",\"utilization_exact\":\"{e}\"");
        }
        out.push_str(",\"results\":{");
        for (i, r) in self.results.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "\"{}\":{{\"schedulable\":", r.test.name());
            write_opt_bool(out, r.verdict.decided());
            out.push_str(",\"gave_up\":");
            out.push_str(if r.verdict == Verdict::GaveUp { "true" } else { "false" });
            if self.suspension_oblivious {
                let _ = write!(out, ",\"suspension\":\"{}\"", r.test.suspension_mode());
            }
            if let Some(src) = self.priority_note(r.test) {
                let _ = write!(out, ",\"priorities\":\"{src}\"");
            }
            match &r.extra {
                Extra::None => {}
                Extra::Tardiness(b) => {
                    out.push_str(",\"tardiness_ns\":");
                    write_list(out, b.as_deref().map(|b| b.iter().map(|&x| Some(x))));
                }
                Extra::ResponseTimes(rts) => {
                    out.push_str(",\"response_times_ns\":");
                    write_list(out, Some(rts.iter().copied()));
                }
            }
            out.push('}');
        }
        out.push_str("}}");
    }
}

fn write_list(out: &mut String, items: Option<impl Iterator<Item = Option<u64>>>) {
    let Some(items) = items else {
        out.push_str("null");
        return;
    };
    out.push('[');
    for (i, x) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        match x {
            Some(v) => {
                let _ = write!(out, "{v}");
            }
            None => out.push_str("null"),
        }
    }
    out.push(']');
}

/// Appends `{"error": message, "line": k}` (the batch format's invalid-line record).
pub fn write_error_json(out: &mut String, message: &str, line: usize) {
    out.push_str("{\"error\":");
    out.push_str(&serde_json::Value::String(message.to_string()).to_string());
    let _ = write!(out, ",\"line\":{line}}}");
}
