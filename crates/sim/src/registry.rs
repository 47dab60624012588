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
//! variant), then add one `static` [`Entry`] below and its name to [`ENTRIES`]. Everything else
//! (the name in `rtsched simulate --scheduler`, the unknown-name message, parameter checking,
//! the placement defaults, the listing) derives from the entry. A global fixed-priority
//! scheduler with a priority parameter, for example, is the entry [`GFP`] below plus its
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

/// The registry, in the order listings show it.
pub static ENTRIES: &[&Entry] =
    &[&GEDF, &GEDF_QUANTUM, &GFP, &GFL, &EDZL, &LLF, &PD2, &PEDF, &PFP, &SPRES, &RTWS, &RUN, &QPS, &FEDERATED];

/// The partition a [`PlacementKind::Partition`] builder was given.
fn partition(s: &mut Setup<'_>) -> Result<Vec<Vec<usize>>, ModelError> {
    s.partition.take().ok_or_else(|| ModelError::field("placement", format!("{} needs a partition", s.name)))
}

pub static GEDF: Entry = Entry {
    name: "gedf",
    summary: "event-driven global EDF, link-based (Brandenburg & Anderson, RTSS 2009, §3); a fork-join set runs \
              over its threads, a DAG set over its ready nodes",
    params: &[],
    placement: PlacementKind::None,
    workloads: Workloads { sporadic: true, fork_join: true, dag: true },
    build: |_| Ok(Scheduler::Gedf),
};

pub static GEDF_QUANTUM: Entry = Entry {
    name: "gedf-quantum",
    summary: "quantum-driven global EDF, aligned or staggered quanta (Brandenburg & Anderson, RTSS 2009, §2)",
    params: &[
        ParamSpec { name: "quantum", kind: ParamKind::Duration, default: "1ms", help: "the quantum" },
        ParamSpec {
            name: "staggered",
            kind: ParamKind::Bool,
            default: "false",
            help: "staggered instead of aligned quanta",
        },
    ],
    placement: PlacementKind::None,
    workloads: Workloads::SPORADIC,
    build: |s| {
        Ok(Scheduler::GedfQuantum {
            quantum: s.params.duration("quantum").unwrap_or(1_000_000),
            staggered: s.params.flag("staggered").unwrap_or(false),
        })
    },
};

pub static GFP: Entry = Entry {
    name: "gfp",
    summary: "event-driven global preemptive fixed priority, link-based like gedf; DM, RM or given ranks; a DAG \
              set over its ready nodes (task-level priorities)",
    params: &[ParamSpec {
        name: "priorities",
        kind: ParamKind::Priorities,
        default: "dm",
        help: "dm (deadline monotonic), rm (rate monotonic), or one integer rank per task, comma-separated \
               (smaller = higher, ties by task index)",
    }],
    placement: PlacementKind::None,
    workloads: Workloads { sporadic: true, fork_join: false, dag: true },
    build: |s| {
        // The task set's own priorities (its file's `priority` fields) unless given here.
        if let (false, Some(ranks)) = (s.params.given("priorities"), s.ts.priorities()) {
            return Ok(Scheduler::Gfp { ranks: ranks.to_vec(), order: None });
        }
        let text = s.params.text("priorities").unwrap_or("dm");
        let order = match text.trim().to_ascii_lowercase().as_str() {
            "dm" => Some(FpOrder::DeadlineMonotonic),
            "rm" => Some(FpOrder::RateMonotonic),
            _ => None,
        };
        match PriorityRule::fixed_from_text(s.ts, text).map_err(|e| e.in_scheduler(s.name))? {
            PriorityRule::Fixed(ranks) => Ok(Scheduler::Gfp { ranks, order }),
            PriorityRule::Edf => Err(ModelError::field("priorities", "not a fixed-priority rule")),
        }
    },
};

pub static GFL: Entry = Entry {
    name: "gfl",
    summary: "G-FL, global fair lateness: gedf with priority points r + D − (m−1)/m·C, compared exactly \
              (Erickson & Anderson, ECRTS 2012)",
    params: &[],
    placement: PlacementKind::None,
    workloads: Workloads::SPORADIC,
    build: |_| Ok(Scheduler::Gfl),
};

pub static EDZL: Entry = Entry {
    name: "edzl",
    summary: "EDZL: global EDF in which a waiting job reaching zero laxity gets the highest priority (Lee, RTCSA \
              1994; Cirinei & Baker, ECRTS 2007)",
    params: &[],
    placement: PlacementKind::None,
    workloads: Workloads::SPORADIC,
    build: |_| Ok(Scheduler::Edzl),
};

pub static LLF: Entry = Entry {
    name: "llf",
    summary: "LLF, least laxity first on m CPUs (Mok 1983; Dertouzos & Mok, IEEE TSE 1989): laxity against the \
              WCET, decisions at job events and every quantum, ties by deadline then task",
    params: &[ParamSpec {
        name: "quantum",
        kind: ParamKind::Duration,
        default: "1ms",
        help: "decisions also at every multiple of the quantum (bounds LLF's switching on laxity ties)",
    }],
    placement: PlacementKind::None,
    workloads: Workloads::SPORADIC,
    build: |s| Ok(Scheduler::Llf { quantum: s.params.duration("quantum").unwrap_or(1_000_000) }),
};

pub static PD2: Entry = Entry {
    name: "pd2",
    summary: "PD², Pfair in slots of one quantum (Anderson & Srinivasan, ECRTS 2000 / JCSS 2004; Baruah et al., \
              Algorithmica 1996); periodic, C and T = D whole quanta",
    params: &[ParamSpec {
        name: "quantum",
        kind: ParamKind::Duration,
        default: "1ms",
        help: "the slot length Q (every WCET, period and offset a multiple of it)",
    }],
    placement: PlacementKind::None,
    workloads: Workloads::SPORADIC,
    build: |s| Ok(Scheduler::Pd2 { quantum: s.params.duration("quantum").unwrap_or(1_000_000) }),
};

pub static PEDF: Entry = Entry {
    name: "pedf",
    summary: "partitioned EDF",
    params: &[],
    placement: PlacementKind::Partition(Admission::Edf),
    workloads: Workloads::SPORADIC,
    build: |mut s| Ok(Scheduler::Pedf(partition(&mut s)?)),
};

pub static PFP: Entry = Entry {
    name: "pfp",
    summary: "partitioned fixed priority, deadline monotonic",
    params: &[],
    placement: PlacementKind::Partition(Admission::Fp(Priority::DeadlineMonotonic)),
    workloads: Workloads::SPORADIC,
    build: |mut s| Ok(Scheduler::Pfp(partition(&mut s)?, FpOrder::DeadlineMonotonic)),
};

pub static SPRES: Entry = Entry {
    name: "spres",
    summary: "semi-partitioned reservations executing a placement (Brandenburg & Gül, RTSS 2016, §III-A, §IV-A)",
    params: &[
        ParamSpec { name: "cash", kind: ParamKind::Bool, default: "false", help: "CASH slack reclamation" },
        ParamSpec {
            name: "soft",
            kind: ParamKind::Bool,
            default: "false",
            help: "unsplit reservations soft too (split parts always are)",
        },
        ParamSpec {
            name: "background",
            kind: ParamKind::Choice(&Background::NAMES),
            default: "round-robin",
            help: "how depleted soft reservations share the background",
        },
        ParamSpec {
            name: "rr_quantum",
            kind: ParamKind::Duration,
            default: "1ms",
            help: "the background round-robin quantum",
        },
        ParamSpec {
            name: "suspension",
            kind: ParamKind::Choice(&Suspension::NAMES),
            default: "keep",
            help: "a self-suspending job's budget while suspended: keep (charged only while it executes) or donate \
                   (CASH slack, what is left regained at the wake-up: RTSS 2016 §VIII; needs cash)",
        },
    ],
    placement: PlacementKind::Reservations,
    workloads: Workloads::SPORADIC,
    build: |s| {
        let p = s.params;
        let rule = p.text("background").unwrap_or("round-robin");
        if rule != "round-robin" && p.given("rr_quantum") {
            return Err(ModelError::field("rr_quantum", "applies only with background round-robin"));
        }
        let background = Background::parse(rule, p.duration("rr_quantum").unwrap_or(1_000_000))?;
        let placement =
            s.reservations.ok_or_else(|| ModelError::field("placement", "spres needs a reservation placement"))?;
        let cash = p.flag("cash").unwrap_or(false);
        let suspension = Suspension::parse(p.text("suspension").unwrap_or("keep"), cash)?;
        Ok(Scheduler::Spres(SpresConfig {
            placement,
            soft_unsplit: p.flag("soft").unwrap_or(false),
            cash,
            background,
            suspension,
        }))
    },
};

pub static RTWS: Entry = Entry {
    name: "rtws",
    summary: "global EDF with priority-aware work stealing (Nogueira, Fonseca, Maia & Pinho, EUC 2012); a \
              sequential task is one region of one thread",
    params: &[],
    placement: PlacementKind::None,
    workloads: Workloads::BOTH,
    build: |_| Ok(Scheduler::Rtws),
};

pub static RUN: Entry = Entry {
    name: "run",
    summary: "RUN, optimal by reduction to uniprocessor: servers packed first-fit decreasing, DUAL and PACK to unit \
              servers, EDF at each level (Regnier, Lima, Massa, Levin & Brandt, RTSS 2011); implicit deadlines, \
              periodic releases, U ≤ m",
    params: &[],
    placement: PlacementKind::None,
    workloads: Workloads::SPORADIC,
    build: |_| Ok(Scheduler::Run),
};

pub static FEDERATED: Entry = Entry {
    name: "federated",
    summary: "federated scheduling of DAG tasks (Li, Chen, Agrawal, Lu & Gill, ECRTS 2014): dedicated CPUs per \
              high-utilization task, greedy over its nodes; light tasks sequential under EDF, partitioned first-fit \
              decreasing density with exact EDF (QPA) admission",
    params: &[],
    placement: PlacementKind::Federated,
    workloads: Workloads { sporadic: false, fork_join: false, dag: true },
    build: |s| {
        s.federated
            .map(Scheduler::Federated)
            .ok_or_else(|| ModelError::field("scheduler", "federated schedules DAG task sets"))
    },
};

pub static QPS: Entry = Entry {
    name: "qps",
    summary: "QPS, quasi-partitioned: minor execution sets under EDF on one CPU, major sets switching between \
              partitioned EDF and master/slave servers on two CPUs as their load varies (Massa, Lima, Regnier, Levin & \
              Brandt, RTS 2016); partitioned EDF when worst or first fit places the set; implicit deadlines, periodic releases, U ≤ m",
    params: &[],
    placement: PlacementKind::None,
    workloads: Workloads::SPORADIC,
    build: |_| Ok(Scheduler::Qps),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn ts() -> TaskSet {
        TaskSet::from_cdt(&[(2, 5, 5), (3, 7, 7), (4, 9, 10)]).unwrap()
    }

    fn forkjoin() -> Workload {
        let text = r#"{"tasks": [{"period": 10, "regions": [[2], [1, 1]]}, {"period": 20, "regions": [[4]]}]}"#;
        Workload::ForkJoin(rtsched_model::forkjoin::read_json(text).unwrap().set)
    }

    fn none() -> Vec<(&'static str, ParamArg)> {
        Vec::new()
    }

    #[test]
    fn names_are_unique_and_every_default_parses() {
        let mut n = names();
        n.sort_unstable();
        let k = n.len();
        n.dedup();
        assert_eq!(n.len(), k, "two schedulers share a name");
        for e in entries() {
            let p = e.resolve(none()).unwrap_or_else(|err| panic!("{}: {err}", e.name));
            assert!(e.params.iter().all(|s| !p.given(s.name)), "{}: a default counted as given", e.name);
            assert!(!e.summary.is_empty() && e.line().starts_with(e.name), "{}", e.line());
            assert_eq!(e.to_json()["name"], e.name);
        }
    }

    #[test]
    fn gfp_takes_the_task_sets_own_priorities_unless_given() {
        let own = ts().with_priorities((0..ts().len() as u32).rev().collect()).unwrap();
        let want: Vec<u32> = own.priorities().unwrap().to_vec();
        let w = Workload::Sporadic(own);
        let b = build("gfp", none(), &w, 2, None, &Stop::never()).unwrap();
        assert_eq!(b.scheduler, Scheduler::Gfp { ranks: want.clone(), order: None });
        assert_eq!(b.notes, vec!["priorities from the task set (its `priority` fields)".to_string()]);
        let given = vec![("priorities", ParamArg::Text("dm".into()))];
        let b = build("gfp", given, &w, 2, None, &Stop::never()).unwrap();
        assert_ne!(b.scheduler, Scheduler::Gfp { ranks: want, order: None });
        assert!(matches!(b.scheduler, Scheduler::Gfp { order: Some(FpOrder::DeadlineMonotonic), .. }));
        assert_eq!(b.notes, vec!["priorities=... overrides the task set's own priorities".to_string()]);
        let b = build("pfp", none(), &w, 2, None, &Stop::never()).unwrap();
        assert!(b.notes.iter().any(|n| n.contains("own priorities are not used")), "{:?}", b.notes);
    }

    #[test]
    fn every_name_builds_with_its_default_placement() {
        let w = Workload::Sporadic(ts());
        for e in entries().iter().filter(|e| e.workloads.sporadic) {
            let b =
                build(e.name, none(), &w, 2, None, &Stop::never()).unwrap_or_else(|err| panic!("{}: {err}", e.name));
            // The scheduler built is the entry's: its display name starts like the registered one.
            let shown = b.scheduler.name().to_ascii_lowercase().replace('-', "");
            assert!(shown.starts_with(&e.name.replace('-', "")[..3]), "{} built {}", e.name, b.scheduler.name());
            let note = b.notes.join(" ");
            match e.placement {
                PlacementKind::None => assert!(b.notes.is_empty(), "{}: {note}", e.name),
                PlacementKind::Partition(_) => assert!(note.contains("worst-fit decreasing"), "{}: {note}", e.name),
                PlacementKind::Reservations => assert!(note.contains("SP-RES cascade"), "{}: {note}", e.name),
                PlacementKind::Federated => unreachable!("federated takes DAG sets only"),
            }
            if e.workloads.fork_join {
                build(e.name, none(), &forkjoin(), 2, None, &Stop::never()).unwrap();
            } else {
                let err = build(e.name, none(), &forkjoin(), 2, None, &Stop::never()).unwrap_err().to_string();
                assert!(err.contains("runs under gedf or rtws"), "{err}");
            }
        }
        // Case is ignored, as the CLI always did.
        assert_eq!(build("PFP", none(), &w, 2, None, &Stop::never()).unwrap().scheduler.name(), "P-FP (DM)");
    }

    #[test]
    fn an_unknown_name_lists_the_names() {
        let e = find("G-EDF").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("scheduler"));
        assert_eq!(
            e.to_string(),
            "field 'scheduler': unknown scheduler \"g-edf\"; use one of: gedf, gedf-quantum, gfp, gfl, edzl, llf, pd2, pedf, pfp, spres, rtws, run, qps, federated"
        );
        let w = Workload::Sporadic(ts());
        assert!(matches!(build("nope", none(), &w, 2, None, &Stop::never()), Err(BuildError::Input(_))));
    }

    #[test]
    fn parameters_are_checked_by_kind_and_owner() {
        let q = find("gedf-quantum").unwrap();
        let p = q.resolve([("quantum", ParamArg::from("2ms")), ("staggered", ParamArg::from(true))]).unwrap();
        assert_eq!((p.duration("quantum"), p.flag("staggered")), (Some(2_000_000), Some(true)));
        assert!(p.given("quantum") && p.given("staggered"));
        assert_eq!(q.resolve([("quantum", ParamArg::Int(500))]).unwrap().duration("quantum"), Some(500));
        // A value of the wrong kind is refused naming the parameter.
        // The model's one format: the scheduler, the parameter and the value.
        let e = q.resolve([("quantum", ParamArg::Bool(true))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "gedf-quantum: parameter quantum: expected integer ns or a duration string like \"2ms\", got true"
        );
        let e = q.resolve([("staggered", ParamArg::from("maybe"))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "gedf-quantum: parameter staggered: expected true or false (or yes/no, on/off, 1/0), got \"maybe\""
        );
        // A flag takes the runtime's words too.
        for (t, want) in [("yes", true), ("On", true), ("0", false), ("off", false)] {
            assert_eq!(q.resolve([("staggered", ParamArg::from(t))]).unwrap().flag("staggered"), Some(want), "{t}");
        }
        let e = q.resolve([("quantum", ParamArg::Int(0))]).unwrap_err();
        assert_eq!(e.to_string(), "gedf-quantum: parameter quantum: must be at least 1 ns, got 0");
        let e = q.resolve([("quantum", ParamArg::from("2"))]).unwrap_err();
        assert!(e.to_string().starts_with("gedf-quantum: parameter quantum: duration \"2\" has no unit"), "{e}");
        let e = q.resolve([("quantum", ParamArg::from("1ms")), ("quantum", ParamArg::from("2ms"))]).unwrap_err();
        assert_eq!(e.to_string(), "gedf-quantum: parameter quantum: given twice; give it once");
        // A parameter of another scheduler names the schedulers that take it.
        let gedf = find("gedf").unwrap();
        let e = gedf.resolve([("quantum", ParamArg::from("1ms"))]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "gedf: parameter quantum: applies only to --scheduler gedf-quantum, llf, pd2, not gedf"
        );
        let e = gedf.resolve([("cash", ParamArg::from(true))]).unwrap_err();
        assert_eq!(e.to_string(), "gedf: parameter cash: applies only to --scheduler spres, not gedf");
        // One nobody takes names what this one takes.
        assert_eq!(
            gedf.resolve([("x", ParamArg::Int(1))]).unwrap_err().to_string(),
            "gedf: parameter x: unknown to gedf (it takes none)"
        );
        let e = q.resolve([("x", ParamArg::Int(1))]).unwrap_err().to_string();
        assert_eq!(e, "gedf-quantum: parameter x: unknown to gedf-quantum (known: quantum, staggered)");
        // A name reads with `-` as `_`, so `rr-quantum` is `rr_quantum` and given twice with it.
        let e = find("spres")
            .unwrap()
            .resolve([("rr-quantum", ParamArg::from("2ms")), ("rr_quantum", ParamArg::from("3ms"))]);
        assert_eq!(e.unwrap_err().to_string(), "spres: parameter rr_quantum: given twice; give it once");
        // Choices and the SP-RES background rules (the runtime's words and message).
        let spres = find("spres").unwrap();
        let e = spres.resolve([("background", ParamArg::from("fifo"))]).unwrap_err().to_string();
        assert_eq!(e, "spres: parameter background: expected one of round-robin, earliest-end, got \"fifo\"");
        let w = Workload::Sporadic(ts());
        let ee = [("background", ParamArg::from("earliest-end")), ("rr_quantum", ParamArg::from("2ms"))];
        let e = build("spres", ee.iter().map(|(k, v)| (*k, v)), &w, 2, None, &Stop::never()).unwrap_err();
        assert_eq!(e.to_string(), "field 'rr_quantum': applies only with background round-robin");
        let rr = [("rr_quantum", ParamArg::from("2ms")), ("cash", ParamArg::from(true))];
        let b = build("spres", rr.iter().map(|(k, v)| (*k, v)), &w, 2, None, &Stop::never()).unwrap();
        let Scheduler::Spres(c) = b.scheduler else { panic!("spres built {:?}", b.scheduler) };
        assert_eq!(
            (c.background, c.cash, c.soft_unsplit, c.suspension),
            (Background::RoundRobin { quantum: 2_000_000 }, true, false, Suspension::Keep)
        );
        // The suspension rule: donate needs CASH (the runtime's messages).
        let d = [("suspension", ParamArg::from("donate"))];
        let e = build("spres", d.iter().map(|(k, v)| (*k, v)), &w, 2, None, &Stop::never()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "field 'suspension': donate makes a suspending job's budget CASH slack and needs cash=true"
        );
        let d = [("suspension", ParamArg::from("donate")), ("cash", ParamArg::from(true))];
        let b = build("spres", d.iter().map(|(k, v)| (*k, v)), &w, 2, None, &Stop::never()).unwrap();
        let Scheduler::Spres(c) = b.scheduler else { panic!("spres built {:?}", b.scheduler) };
        assert_eq!(c.suspension, Suspension::Donate);
        let e = spres.resolve([("suspension", ParamArg::from("lend"))]).unwrap_err().to_string();
        assert!(e.starts_with("spres: parameter suspension: expected one of keep, donate"), "{e}");
    }

    #[test]
    fn placements_are_checked_against_the_scheduler_the_tasks_and_m() {
        let ts = ts();
        let w = Workload::Sporadic(ts.clone());
        let part = vec![vec![0, 2], vec![1]];
        let p = Placement::whole(&ts, &part).unwrap();
        let b = build("pedf", none(), &w, 2, Some(p.clone()), &Stop::never()).unwrap();
        assert_eq!((b.scheduler, b.notes.len()), (Scheduler::Pedf(part), 0));
        let e = build("gedf", none(), &w, 2, Some(p.clone()), &Stop::never()).unwrap_err();
        assert_eq!(e.to_string(), "field 'placement': applies only to pedf, pfp and spres, not gedf");
        let e = build("pfp", none(), &w, 3, Some(p.clone()), &Stop::never()).unwrap_err();
        assert_eq!(e.to_string(), "field 'm': the placement is for m = 2 but --m is 3");
        let e = build("spres", none(), &w, 3, Some(p), &Stop::never()).unwrap_err();
        assert_eq!(e.to_string(), "field 'm': the placement is for m = 2 but --m is 3");
        // A split placement is not a partition.
        let split = semi_split();
        let e = plain_partition(&split.1, &split.0, 2, "--m is").unwrap_err().to_string();
        assert!(e.contains("is split or period-transformed"), "{e}");
    }

    /// A set that the SP-RES cascade places only by splitting a task.
    fn semi_split() -> (TaskSet, Placement) {
        let ts = TaskSet::from_cdt(&[(6, 10, 10), (6, 10, 10), (6, 10, 10)]).unwrap();
        let p = semi::cascade(&ts, 2, &semi::SemiConfig::default());
        assert!(p.schedulable && p.tasks.iter().any(|t| t.parts > 1), "{p:?}");
        (ts, p)
    }

    #[test]
    fn the_default_partition_is_the_entrys_admission() {
        // Schedulable under EDF on one CPU (U < 1), not under deadline-monotonic FP (task 1's
        // response time is 8 > 7).
        let ts = TaskSet::from_cdt(&[(2, 5, 5), (4, 7, 7)]).unwrap();
        let pedf = find("pedf").unwrap().default_partition(&ts, 1, &Stop::never()).unwrap().unwrap();
        assert_eq!(pedf.cpus, vec![vec![1, 0]]); // decreasing utilization
        assert!(pedf.note.contains("EDF (QPA)"), "{}", pedf.note);
        let NotPlaced(why) = find("pfp").unwrap().default_partition(&ts, 1, &Stop::never()).unwrap().unwrap_err();
        assert!(why.contains("deadline-monotonic FP") && why.contains("cannot place task 0"), "{why}");
        assert!(find("gedf").unwrap().default_partition(&ts, 1, &Stop::never()).is_none());
        let w = Workload::Sporadic(ts);
        assert!(matches!(build("pfp", none(), &w, 1, None, &Stop::never()), Err(BuildError::NotPlaced(_))));
    }
}
