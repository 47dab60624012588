//! The simulator's schedulers, keyed by name — shaped like the runtime's mechanism registry
//! (`rtsched_runtime::mechanism::registry`, after LITMUS^RT's `register_sched_plugin` /
//! `find_sched_plugin`): every scheduler `rtsched simulate --scheduler NAME` accepts is one
//! [`Entry`] here, and nothing else lists them. The request ([`crate::request`]), the Python
//! bindings (`_core.simulate`, `_core.simulate_schedulers`, `_core.default_partition`) and the
//! CLI read this table through [`entries`] / [`find`] / [`build`].
//!
//! An entry declares:
//! * its **name** and a one-line **summary** citing its source;
//! * its **parameters** ([`ParamSpec`]: name, kind, default, help; the model's parameter
//!   vocabulary, `rtsched_model::params`, shared with the runtime's mechanism registry), which
//!   reach its builder checked by the model's one parser and typed ([`Params`]); a parameter
//!   given to a scheduler that does not declare it is refused, naming the parameter and the
//!   schedulers that take it; a bad value is refused naming the scheduler, the parameter and
//!   the value (`gedf-quantum: parameter quantum: must be at least 1 ns, got 0`);
//! * its **placement** ([`PlacementKind`]): none (global; a placement is refused), a partition
//!   (given, or the default partition of `rtsched_analysis::partition::default_partition` with
//!   the entry's own exact admission test), or reservations (given, or placed by the SP-RES
//!   cascade of Brandenburg & Gül, RTSS 2016);
//! * which **workloads** it accepts ([`Workloads`]: sporadic tasks, fork-join tasks);
//! * its **builder** ([`Builder`]): from the checked parameters, the task set, `m` and the
//!   resolved placement to the simulator's [`Scheduler`].
//!
//! # Adding a scheduler
//!
//! Write its policy (a pure state machine in `crates/policy`, docs/simulator.md), give it a
//! [`Scheduler`] variant and the loop that drives it (`simulate` in `lib.rs` dispatches on the
//! variant), then add one `static` [`Entry`] in `registry/entries.rs` and its name to
//! [`ENTRIES`]. Everything else (the name in `rtsched simulate --scheduler`, the unknown-name
//! message, parameter checking, the placement defaults, the listing) derives from the entry. A global fixed-priority
//! scheduler with a priority parameter, for example, is the entry [`GFP`] there plus its
//! scheduler variant (`Scheduler::Gfp`, run by the engine over the G-EDF policy with
//! fixed-priority keys).

use crate::config::Scheduler;
use crate::placement::{Background, SpresConfig, Suspension};
use rtsched_analysis::dag::federated::{Federated, FederatedPlan, LowPlacement};
use rtsched_analysis::partition::{Admission, DefaultPartition, NotPlaced};
use rtsched_analysis::semi;
use rtsched_analysis::uni::fp::Priority;
use rtsched_analysis::Limits;
pub use rtsched_model::params::{ParamArg, ParamKind, ParamSpec, ParamValue};
use rtsched_model::{ModelError, Placement, Stop, TaskSet, Time, Workload};
use rtsched_policy::{FpOrder, PriorityRule};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write;

/// `a`, `a or b`, `a, b or c`.
fn or_list(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The checked parameters of one scheduler: every declared one (the default where not given)
/// and which of them the caller gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    values: BTreeMap<&'static str, ParamValue>,
    given: Vec<&'static str>,
}

impl Params {
    /// Whether the caller gave `name` (rather than leaving it at its default).
    pub fn given(&self, name: &str) -> bool {
        self.given.contains(&name)
    }
    /// A duration parameter, ns (`None` if not declared or of another kind).
    pub fn duration(&self, name: &str) -> Option<Time> {
        match self.values.get(name)? {
            ParamValue::Duration(v) => Some(*v),
            _ => None,
        }
    }
    /// A flag.
    pub fn flag(&self, name: &str) -> Option<bool> {
        match self.values.get(name)? {
            ParamValue::Bool(b) => Some(*b),
            _ => None,
        }
    }
    /// An integer parameter.
    pub fn int(&self, name: &str) -> Option<u64> {
        match self.values.get(name)? {
            ParamValue::Int(v) => Some(*v),
            _ => None,
        }
    }
    /// A choice or text parameter.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.values.get(name)? {
            ParamValue::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// Where a scheduler's tasks are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlacementKind {
    /// Global: no placement (one is refused).
    None,
    /// Partitioned: a plain partition (every task one whole reservation), given or the default
    /// partition, worst-fit decreasing utilization with this exact admission test.
    Partition(Admission),
    /// Reservations (SP-RES): a reservation placement (split and period-transformed tasks
    /// allowed), given or placed by the SP-RES cascade.
    Reservations,
    /// Federated scheduling of a DAG set: the plan of
    /// [`rtsched_analysis::dag::federated::federated`] (dedicated CPUs per high-utilization
    /// task, the light tasks partitioned); a `--placement` is refused.
    Federated,
}

/// Which workloads a scheduler simulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workloads {
    pub sporadic: bool,
    pub fork_join: bool,
    pub dag: bool,
}

impl Workloads {
    /// Sequential sporadic tasks only.
    pub const SPORADIC: Workloads = Workloads { sporadic: true, fork_join: false, dag: false };
    /// Sporadic and fork-join tasks.
    pub const BOTH: Workloads = Workloads { sporadic: true, fork_join: true, dag: false };

    fn accepts(self, w: &Workload) -> bool {
        match w {
            Workload::Sporadic(_) => self.sporadic,
            Workload::ForkJoin(_) => self.fork_join,
            Workload::Dag(_) => self.dag,
        }
    }
}

/// What a builder gets: the checked parameters and the resolved placement.
pub struct Setup<'a> {
    /// The registered name.
    pub name: &'static str,
    /// The tasks (for a fork-join workload, its sequential view).
    pub ts: &'a TaskSet,
    pub m: u32,
    pub params: &'a Params,
    /// [`PlacementKind::Partition`]: task indices per CPU (given or the default).
    pub partition: Option<Vec<Vec<usize>>>,
    /// [`PlacementKind::Reservations`]: the placement (given or the cascade's).
    pub reservations: Option<Placement>,
    /// [`PlacementKind::Federated`]: the federated plan of the DAG set.
    pub federated: Option<FederatedPlan>,
}

/// Builds the simulator's scheduler; an error names the parameter at fault.
pub type Builder = fn(Setup<'_>) -> Result<Scheduler, ModelError>;

/// One registered simulator scheduler.
#[derive(Debug)]
pub struct Entry {
    /// The name users type (`--scheduler NAME`).
    pub name: &'static str,
    /// One line: what it is, with its source.
    pub summary: &'static str,
    pub params: &'static [ParamSpec],
    pub placement: PlacementKind,
    pub workloads: Workloads,
    pub build: Builder,
}

/// Why [`build`] made no scheduler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// Invalid input: the error names the field (`scheduler`, a parameter, `placement`, `m`).
    Input(ModelError),
    /// A well-formed request whose task set the default placement cannot place.
    NotPlaced(NotPlaced),
}

impl From<ModelError> for BuildError {
    fn from(e: ModelError) -> BuildError {
        BuildError::Input(e)
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Input(e) => e.fmt(f),
            BuildError::NotPlaced(NotPlaced(why)) => write!(f, "not placed: {why}"),
        }
    }
}

/// A built scheduler and the notes for the user (which default placement was used).
#[derive(Debug, Clone, PartialEq)]
pub struct Built {
    pub scheduler: Scheduler,
    pub notes: Vec<String>,
}

impl Entry {
    /// The declared parameter `name`.
    pub fn param(&self, name: &str) -> Option<&'static ParamSpec> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Every declared parameter at its default, overridden by `given`: the one reading of a
    /// scheduler's parameters ([`rtsched_model::params::resolve`], the runtime's too). A
    /// parameter this scheduler does not declare is refused naming the schedulers that take it
    /// (or, if none does, the ones this one takes); a value of the wrong kind is refused naming
    /// the parameter.
    pub fn resolve<'a, V>(&self, given: impl IntoIterator<Item = (&'a str, V)>) -> Result<Params, ModelError>
    where
        V: std::borrow::Borrow<ParamArg>,
    {
        let given = given.into_iter().map(|(k, v)| (k, v.borrow().clone()));
        let owners = |k: &str| entries().iter().filter(|e| e.param(k).is_some()).map(|e| e.name).collect();
        let r = rtsched_model::params::resolve(self.name, self.params, given, owners)?;
        Ok(Params { values: r.values, given: r.given })
    }

    /// The default partition of a [`PlacementKind::Partition`] scheduler (`None` for the others):
    /// worst-fit decreasing utilization with its exact admission test
    /// ([`rtsched_analysis::partition::default_partition`], the one `rtsched run` uses too). A
    /// requested `stop` (Ctrl-C) ends it early; the caller, which requested it, discards the answer.
    pub fn default_partition(&self, ts: &TaskSet, m: u32, stop: &Stop) -> Option<Result<DefaultPartition, NotPlaced>> {
        let PlacementKind::Partition(adm) = self.placement else {
            return None;
        };
        Some(default_partition(adm, ts, m, stop))
    }

    /// One line for a listing: name, summary, what it needs and its parameters.
    pub fn line(&self) -> String {
        let mut s = format!("{:<12} {}", self.name, self.summary);
        match self.placement {
            PlacementKind::Partition(_) => s.push_str("; placement: a partition (default: worst-fit decreasing)"),
            PlacementKind::Reservations => s.push_str("; placement: reservations (default: the SP-RES cascade)"),
            PlacementKind::Federated => s.push_str("; DAG task sets only; placement: the federated plan"),
            PlacementKind::None => {}
        }
        if !self.params.is_empty() {
            let ps: Vec<String> = self.params.iter().map(|p| format!("{}={}", p.name, p.default)).collect();
            let _ = write!(s, "; params {}", ps.join(", "));
        }
        s
    }

    /// The entry as JSON (for the Python bindings).
    pub fn to_json(&self) -> serde_json::Value {
        let workloads: Vec<&str> = [
            ("sporadic", self.workloads.sporadic),
            ("fork-join", self.workloads.fork_join),
            ("dag", self.workloads.dag),
        ]
        .iter()
        .filter(|(_, on)| *on)
        .map(|(k, _)| *k)
        .collect();
        serde_json::json!({
            "name": self.name,
            "summary": self.summary,
            "line": self.line(),
            "params": self.params.iter().map(|p| serde_json::json!({
                "name": p.name, "kind": p.kind_name(), "default": p.default, "help": p.help,
            })).collect::<Vec<_>>(),
            "placement": match self.placement {
                PlacementKind::None => "none",
                PlacementKind::Partition(_) => "partition",
                PlacementKind::Reservations => "reservations",
                PlacementKind::Federated => "federated",
            },
            "workloads": workloads,
        })
    }
}

fn default_partition(adm: Admission, ts: &TaskSet, m: u32, stop: &Stop) -> Result<DefaultPartition, NotPlaced> {
    let lim = Limits { stop: stop.clone(), ..Limits::default() };
    rtsched_analysis::partition::default_partition(ts, m, adm, &lim)
}

/// The plain partition a placement is ([`Placement::plain_partition`], the model's one rule).
pub fn plain_partition(p: &Placement, ts: &TaskSet, m: u32, m_is: &str) -> Result<Vec<Vec<usize>>, ModelError> {
    p.plain_partition(ts, m, m_is)
}

impl Entry {
    /// Whether the scheduler takes a placement (`--placement`): an error naming the ones that do
    /// when it does not. Front ends call it before they read a placement file, so that a
    /// placement given to a global scheduler is reported as such rather than as the file's error.
    pub fn takes_placement(&self) -> Result<(), ModelError> {
        let takes = |k: PlacementKind| matches!(k, PlacementKind::Partition(_) | PlacementKind::Reservations);
        if takes(self.placement) {
            return Ok(());
        }
        let placed: Vec<&str> = entries().iter().filter(|e| takes(e.placement)).map(|e| e.name).collect();
        Err(ModelError::field("placement", format!("applies only to {}, not {}", and_list(&placed), self.name)))
    }
}

/// The one place where a scheduler name becomes a [`Scheduler`]: finds the entry, checks that it
/// accepts the workload, checks the parameters ([`Entry::resolve`]), resolves the placement
/// (the given one, checked for `ts` and `m`, or the entry's default, with a note saying which)
/// and calls the entry's builder. A default placement that cannot place the task set is
/// [`BuildError::NotPlaced`]; `stop` (Ctrl-C) ends the default partition early.
pub fn build<'a, V>(
    name: &str,
    params: impl IntoIterator<Item = (&'a str, V)>,
    workload: &Workload,
    m: u32,
    placement: Option<Placement>,
    stop: &Stop,
) -> Result<Built, BuildError>
where
    V: std::borrow::Borrow<ParamArg>,
{
    let e = find(name)?;
    if !e.workloads.accepts(workload) {
        let able: Vec<&str> = entries().iter().filter(|e| e.workloads.accepts(workload)).map(|e| e.name).collect();
        let what = match (e.workloads.sporadic, e.workloads.fork_join) {
            (true, true) => "sequential and fork-join task sets",
            (true, false) => "sequential tasks",
            _ => "DAG task sets",
        };
        return Err(ModelError::field(
            "scheduler",
            format!("{} schedules {what}; a {} task set runs under {}", e.name, workload.kind(), or_list(&able)),
        )
        .into());
    }
    let params = e.resolve(params)?;
    if placement.is_some() {
        e.takes_placement()?;
    }
    let ts: Cow<'_, TaskSet> = match workload {
        Workload::Sporadic(ts) => Cow::Borrowed(ts),
        other => Cow::Owned(other.sequential()?),
    };
    let mut notes = Vec::new();
    let (mut partition, mut reservations, mut federated) = (None, None, None);
    match e.placement {
        PlacementKind::None => {}
        PlacementKind::Federated => {
            let Workload::Dag(set) = workload else {
                return Err(ModelError::field("scheduler", format!("{} schedules DAG task sets", e.name)).into());
            };
            let lim = Limits { stop: stop.clone(), ..Limits::default() };
            match rtsched_analysis::dag::federated::federated(set, m, LowPlacement::default(), &lim) {
                Federated::Schedulable(plan) => {
                    notes.push(format!("federated plan: {}", describe_plan(&plan)));
                    federated = Some(plan);
                }
                Federated::NotSchedulable(why) => {
                    return Err(BuildError::NotPlaced(NotPlaced(format!(
                        "federated scheduling (Li, Chen, Agrawal, Lu & Gill, ECRTS 2014) cannot place the set on {m} \
                         processors: {why}"
                    ))))
                }
            }
        }
        PlacementKind::Partition(adm) => {
            partition = Some(match placement {
                Some(p) => {
                    p.check_runnable(&ts)?;
                    plain_partition(&p, &ts, m, "--m is")?
                }
                None => {
                    let p = default_partition(adm, &ts, m, stop).map_err(BuildError::NotPlaced)?;
                    notes.push(format!("no --placement given: {}", p.note));
                    p.cpus
                }
            });
        }
        PlacementKind::Reservations => {
            let p = match placement {
                Some(p) => {
                    p.check_runnable(&ts)?;
                    p
                }
                None => {
                    let p = semi::cascade(&ts, m, &semi::SemiConfig::default());
                    if !p.schedulable {
                        return Err(BuildError::NotPlaced(NotPlaced(format!(
                            "the SP-RES cascade cannot place the task set on {m} processors: {}",
                            p.reason.as_deref().unwrap_or("no reason given")
                        ))));
                    }
                    notes.push(format!("no --placement given: placed by the SP-RES cascade ({})", p.heuristic));
                    p
                }
            };
            p.check_for_m(m, "--m is")?;
            reservations = Some(p);
        }
    }
    if ts.priorities().is_some() {
        match e.name {
            "gfp" if params.given("priorities") => {
                notes.push("priorities=... overrides the task set's own priorities".into())
            }
            "gfp" => notes.push("priorities from the task set (its `priority` fields)".into()),
            "pfp" => notes.push("pfp orders by deadline monotonic: the task set's own priorities are not used".into()),
            _ => {}
        }
    }
    let scheduler = (e.build)(Setup { name: e.name, ts: &ts, m, params: &params, partition, reservations, federated })?;
    Ok(Built { scheduler, notes })
}

/// The plan in words: `task 1 on CPUs 0..5; light cores 5: [0, 2], 6: [3]`.
fn describe_plan(plan: &FederatedPlan) -> String {
    let mut parts: Vec<String> =
        plan.high.iter().map(|(i, r)| format!("task {i} on CPUs {}..{}", r.start, r.end)).collect();
    let first = plan.high.iter().map(|(_, r)| r.end).max().unwrap_or(0);
    let light: Vec<String> =
        plan.low.iter().enumerate().map(|(k, ts)| format!("CPU {}: {ts:?}", first + k as u32)).collect();
    if !light.is_empty() {
        parts.push(format!("light tasks {}", light.join(", ")));
    }
    if parts.is_empty() {
        parts.push("no tasks".into());
    }
    parts.join("; ")
}

/// Every registered scheduler, in registration order.
pub fn entries() -> &'static [&'static Entry] {
    ENTRIES
}

/// The registered names, in registration order.
pub fn names() -> Vec<&'static str> {
    entries().iter().map(|e| e.name).collect()
}

/// The scheduler registered as `name` (ASCII case ignored); the error lists the known names.
pub fn find(name: &str) -> Result<&'static Entry, ModelError> {
    entries().iter().copied().find(|e| e.name.eq_ignore_ascii_case(name)).ok_or_else(|| {
        let name = name.to_ascii_lowercase();
        ModelError::field("scheduler", format!("unknown scheduler {name:?}; use one of: {}", names().join(", ")))
    })
}

mod entries;
pub use entries::*;

#[cfg(test)]
mod tests;
