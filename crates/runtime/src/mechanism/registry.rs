//! The mechanism registry, keyed by name — LITMUS^RT's `register_sched_plugin` /
//! `find_sched_plugin` (Calandrino et al., RTSS 2006; Brandenburg, PhD thesis, UNC 2011, ch. 3):
//! every mechanism is one [`Entry`] that declares what the rest of the system needs to know
//! about it, so that nothing else lists mechanisms. The CLI (`rtsched run --scheduler`,
//! `--list-schedulers`, `measure-overheads`), the Python API, the benchmarks and the monitor
//! all read this table (through [`entries`] / [`find`], and in Python `rtsched.schedulers()`).
//!
//! An entry declares:
//! * its **parameters** ([`ParamSpec`]: name, kind, default, help), derived from the typed
//!   struct its builder reads (`mechanism_params!`, [`ParamSet`]: each parameter's name and
//!   default written once) and reaching it validated ([`Params`]); the CLI takes them as `--param KEY=VALUE` or as named
//!   options generated from the table, Python as `params={...}`;
//! * whether it needs a **placement** (a partition of the tasks onto the CPUs);
//! * which **workloads** it executes: parallel jobs (fork-join, DAG: `parallel`) and
//!   self-suspending jobs (`suspends`), besides sporadic sequential tasks;
//! * its **dedicated-CPU** need (none, optional, required) — a service thread runs there;
//! * the **overhead terms** it traces ([`TermSpec`]), in the run summary's `overheads` and in
//!   `measure-overheads`' model file, each marked if it lies on the path from an event to the
//!   dispatch that answers it (the run's tracking delay, for the priority-inversion monitor);
//! * the **invariant** it promises ([`InvariantKind`]), which the monitor checks its trace
//!   against;
//! * its **builder** ([`Backend`]): a plugin for the engine, or the kernel-sd peer.
//!
//! Adding a mechanism: write one file in `mechanism/` with a `pub static` [`Entry`] and its
//! plugin, and add one line to the `registry!` list in `mechanism/mod.rs`.

pub use super::params::{ParamDecl, ParamKind, ParamSet, ParamSpec, ParamValue, Params};
use super::{Plugin, TaskParams};
use crate::{ParamError, RunError};
use rtsched_model::TaskSet;
use rtsched_policy::{Invariant, PriorityRule};
use std::fmt::Write;

/// Whether a mechanism needs the tasks placed on CPUs beforehand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlacementKind {
    /// Global: no placement (one is refused).
    None,
    /// Partitioned: `partition[c]` lists the tasks of the `c`-th CPU of the list (required).
    Partition,
    /// Reservations (SP-RES): a reservation placement (`rtsched partition --json`, split and
    /// period-transformed tasks allowed), or a partition (each task one whole reservation).
    Reservations,
}

/// Whether a mechanism uses a dedicated CPU (its service thread runs there, outside the
/// scheduling CPUs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DedicatedCpu {
    None,
    Optional,
    Required,
}

/// One overhead term a mechanism traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermSpec {
    /// The name in summaries, traces and overhead models (e.g. `schedule`).
    pub name: &'static str,
    /// The paper's symbol (e.g. `Δsch`).
    pub symbol: &'static str,
    pub help: &'static str,
    /// On the path from an event (a release, a completion) to the dispatch that answers it:
    /// its largest sample counts in the run's tracking delay (the monitor's bound).
    pub tracking: bool,
    /// Its samples are counts (events, attempts), not times: summaries and tables print them
    /// as numbers, never in time units (e.g. push/pull's `push_failure`, RUN's `tree_events`).
    pub count: bool,
}

/// The terms the engine traces for every plugin (seed 000 §IV-A, seed 001 §2).
pub const ENGINE_TERMS: &[TermSpec] = &[
    TermSpec {
        name: "release",
        symbol: "Δrel",
        help: "release handler (releases, preemption checks)",
        tracking: true,
        count: false,
    },
    TermSpec {
        name: "release_event",
        symbol: "Δev",
        help: "release timer latency (due time to handler start)",
        tracking: true,
        count: false,
    },
    TermSpec {
        name: "schedule", symbol: "Δsch", help: "scheduler, lock waits included", tracking: true, count: false
    },
    TermSpec {
        name: "lock_wait",
        symbol: "",
        help: "waiting for a scheduler lock (inside Δsch or Δrel)",
        tracking: true,
        count: false,
    },
    TermSpec {
        name: "context_switch",
        symbol: "Δcxs",
        help: "dispatch of the chosen job",
        tracking: true,
        count: false,
    },
    TermSpec {
        name: "ipi", symbol: "Δipi", help: "reschedule request: sent to noticed", tracking: true, count: false
    },
];

/// The invariant a mechanism promises about its schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvariantKind {
    /// The `min(m, r)` highest-priority ready jobs run (G-EDF; seed 000 §II-A).
    Global,
    /// On each CPU the best ready job of its partition runs.
    Partitioned,
    /// The schedule cannot be observed (the reason): no monitor.
    Unobservable(&'static str),
}

/// What a builder gets.
pub struct Setup<'a> {
    /// The registered name the run chose (an alias keeps its own): the plugin's name.
    pub name: &'static str,
    pub ts: &'a TaskSet,
    /// Deadline and period per task.
    pub tasks: &'a [TaskParams],
    /// Scheduling CPUs (workers).
    pub m: usize,
    /// Their OS CPU numbers (worker `i` runs on `cpus[i]`; `m` of them), for mechanisms that
    /// follow the machine's topology (G-EDF-MP's mailbox per last-level-cache cluster).
    pub cpus: &'a [usize],
    /// A service thread runs on a dedicated CPU (thread index `m`).
    pub dedicated: bool,
    /// The partition, for mechanisms that need one (validated).
    pub partition: Option<&'a [Vec<usize>]>,
    /// The reservation placement, for [`PlacementKind::Reservations`] mechanisms given one
    /// (validated against `ts`; else `partition` is set).
    pub reservations: Option<&'a rtsched_model::Placement>,
    /// The jobs' priority rule (from [`Entry::priority`]).
    pub rule: PriorityRule,
    pub params: &'a Params,
    /// Time zero and the end of the run (monotonic ns).
    pub t0: u64,
    pub end: u64,
    /// The fork-join structure when the run executes fork-join jobs (`RunConfig::forkjoin`;
    /// `ts` then lists thread slots); `None` for sequential tasks.
    pub forkjoin: Option<&'a rtsched_model::forkjoin::ForkJoinSet>,
    /// The DAG structure when the run executes DAG jobs (`RunConfig::dag`; `ts` then lists
    /// one thread slot per node); `None` otherwise.
    pub dag: Option<&'a rtsched_model::dag::DagSet>,
}

/// Builds a mechanism's plugin for one run.
pub type Builder = fn(&Setup<'_>) -> Result<Box<dyn Plugin>, RunError>;

/// What executes a mechanism.
#[derive(Clone, Copy)]
pub enum Backend {
    /// The plugin engine (`backend::engine`) with the plugin this builds.
    Engine(Builder),
    /// Linux `SCHED_DEADLINE` threads (`backend::kernel_sd`).
    KernelSd,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Engine(_) => "Engine",
            Backend::KernelSd => "KernelSd",
        })
    }
}

/// The jobs' priority rule from the task set and the parameters (an error names the parameter).
pub type PriorityFn = fn(&TaskSet, &Params) -> Result<PriorityRule, ParamError>;

/// EDF: the absolute deadline.
pub fn edf(_: &TaskSet, _: &Params) -> Result<PriorityRule, ParamError> {
    Ok(PriorityRule::Edf)
}

crate::mechanism_params! {
    /// The parameter [`fixed_priorities`] reads: P-FP's list (deadline-monotonic by default).
    /// A fixed-priority mechanism with more parameters declares `priorities` among them, with
    /// its own default (`push-pull-fp`: rate-monotonic).
    pub struct FixedPriorityParams {
        priorities: String = ParamDecl {
            kind: ParamKind::Priorities,
            default: "dm",
            help: "dm (deadline-monotonic), rm (rate-monotonic), or one rank per task, comma-separated (0 = highest)",
        },
    }
}

/// Fixed priorities from a `priorities` parameter: `dm` (deadline-monotonic), `rm`
/// (rate-monotonic) or a comma-separated rank per task (smaller = higher).
pub fn fixed_priorities(ts: &TaskSet, p: &Params) -> Result<PriorityRule, ParamError> {
    // The one reader of the rule, the simulator's too (rtsched_policy::prio).
    let text = FixedPriorityParams::from_params(p)?.priorities;
    PriorityRule::fixed_from_text(ts, &text)
}

/// One registered mechanism.
#[derive(Debug)]
pub struct Entry {
    /// The name users type (`--scheduler NAME`).
    pub name: &'static str,
    /// One line: what it is, with its source.
    pub summary: &'static str,
    pub params: &'static [ParamSpec],
    pub placement: PlacementKind,
    /// Whether it executes parallel jobs, fork-join and DAG (`Setup::forkjoin`, `Setup::dag`;
    /// the run's tasks are then thread slots, `mechanism::forkjoin::Shape`). A fork-join or DAG
    /// workload is refused at prepare time on a mechanism without it ([`sequential_only`]).
    pub parallel: bool,
    pub dedicated: DedicatedCpu,
    /// What the dedicated CPU does (for messages), e.g. "release handling".
    pub dedicated_role: &'static str,
    /// The overhead terms it traces beyond the engine's ([`ENGINE_TERMS`], traced for every
    /// engine mechanism); a plugin traces term `i` of this list as its term id `i`.
    pub terms: &'static [TermSpec],
    pub invariant: InvariantKind,
    /// The priority rule of its jobs.
    pub priority: PriorityFn,
    /// Whether it runs user jobs (closures) as well as the synthetic body.
    pub user_jobs: bool,
    /// Whether it executes self-suspending jobs: its plugin implements the block
    /// (`schedule(Prev::Blocked)`) and [`Plugin::wake`] callbacks (`mechanism::plugin`, rules
    /// 6–7). A run whose jobs suspend is refused at prepare time on a mechanism without it.
    pub suspends: bool,
    pub backend: Backend,
}

impl Entry {
    /// The declared parameter `name`.
    pub fn param(&self, name: &str) -> Option<&'static ParamSpec> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Every declared parameter at its default, overridden by `given` (name, text) pairs (the
    /// one reading, [`Params::resolve`]); an unknown name, one given twice or a bad value is an
    /// error naming the mechanism and the parameter, as the simulator's registry words it.
    pub fn resolve<'a>(&self, given: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Params, RunError> {
        let owners = |k: &str| entries().iter().filter(|e| e.param(k).is_some()).map(|e| e.name).collect();
        Ok(Params::resolve(self.name, self.params, given, owners)?)
    }

    /// The invariant this mechanism promises for a run of `ts` on `m` CPUs with `partition`
    /// and `params` (`None` when its schedule is unobservable). Errors: a bad priority
    /// parameter ([`RunError::Param`]), a missing partition ([`RunError::Placement`]).
    pub fn invariant_for(
        &self,
        ts: &TaskSet,
        m: usize,
        partition: Option<&[Vec<usize>]>,
        params: &Params,
    ) -> Result<Option<Invariant>, RunError> {
        let rule = (self.priority)(ts, params).map_err(|e| e.in_scheduler(self.name))?;
        Ok(match self.invariant {
            InvariantKind::Global => Some(Invariant { scope: rtsched_policy::invariant::Scope::Global { m }, rule }),
            InvariantKind::Partitioned => {
                let part = partition.ok_or_else(|| RunError::Placement(format!("{} needs a partition", self.name)))?;
                let mut cpu_of = vec![u32::MAX; ts.len()];
                for (c, tasks) in part.iter().enumerate() {
                    for &t in tasks {
                        if let Some(x) = cpu_of.get_mut(t) {
                            *x = c as u32;
                        }
                    }
                }
                Some(Invariant::partitioned(cpu_of, rule))
            }
            InvariantKind::Unobservable(_) => None,
        })
    }

    /// Every term a run of this mechanism can trace: the engine's (engine mechanisms) and its
    /// own, in that order.
    pub fn all_terms(&self) -> Vec<&'static TermSpec> {
        let engine: &'static [TermSpec] = match self.backend {
            Backend::Engine(_) => ENGINE_TERMS,
            Backend::KernelSd => &[],
        };
        engine.iter().chain(self.terms.iter()).collect()
    }

    /// One line for `--list-schedulers`.
    pub fn line(&self) -> String {
        let mut s = format!("{:<12} {}", self.name, self.summary);
        let mut needs = Vec::new();
        match self.placement {
            PlacementKind::Partition => needs.push("a placement".to_string()),
            PlacementKind::Reservations => needs.push("a reservation placement".to_string()),
            PlacementKind::None => {}
        }
        match self.dedicated {
            DedicatedCpu::Required => needs.push("a dedicated CPU".into()),
            DedicatedCpu::Optional => needs.push("optionally a dedicated CPU".into()),
            DedicatedCpu::None => {}
        }
        if !needs.is_empty() {
            let _ = write!(s, "; needs {}", needs.join(" and "));
        }
        if !self.params.is_empty() {
            let ps: Vec<String> = self.params.iter().map(|p| format!("{}={}", p.name, p.default)).collect();
            let _ = write!(s, "; params {}", ps.join(", "));
        }
        s
    }

    /// The entry as JSON (for the Python bindings and `--list-schedulers --json`).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "name": self.name,
            "summary": self.summary,
            "line": self.line(),
            "params": self.params.iter().map(|p| serde_json::json!({
                "name": p.name, "kind": p.kind_name(), "default": p.default, "help": p.help,
                "flag": p.kind == ParamKind::Bool,
            })).collect::<Vec<_>>(),
            "placement": match self.placement {
                PlacementKind::None => "none", PlacementKind::Partition => "partition", PlacementKind::Reservations => "reservations",
            },
            "dedicated_cpu": match self.dedicated {
                DedicatedCpu::None => "none", DedicatedCpu::Optional => "optional", DedicatedCpu::Required => "required",
            },
            "dedicated_role": self.dedicated_role,
            "terms": self.all_terms().iter().map(|t| serde_json::json!({
                "name": t.name, "symbol": t.symbol, "help": t.help, "tracking": t.tracking, "count": t.count,
            })).collect::<Vec<_>>(),
            "invariant": match self.invariant {
                InvariantKind::Global => "global".to_string(),
                InvariantKind::Partitioned => "partitioned".to_string(),
                InvariantKind::Unobservable(why) => format!("none: {why}"),
            },
            "user_jobs": self.user_jobs,
            "suspends": self.suspends,
            "parallel": self.parallel,
            "backend": format!("{:?}", self.backend),
        })
    }
}

/// Every registered mechanism, in registration order.
pub fn entries() -> &'static [&'static Entry] {
    super::ENTRIES
}

/// The registered names, in registration order.
pub fn names() -> Vec<&'static str> {
    entries().iter().map(|e| e.name).collect()
}

/// The registered mechanisms that execute parallel (fork-join and DAG) jobs, in registration
/// order.
pub fn parallel_mechanisms() -> Vec<&'static str> {
    entries().iter().filter(|e| e.parallel).map(|e| e.name).collect()
}

/// The refusal of a `kind` workload (`fork-join`, `DAG`) on the mechanism `name`, which runs
/// sequential tasks only: one line naming the mechanisms that execute parallel jobs.
pub fn sequential_only(name: &str, kind: &str) -> RunError {
    RunError::Config(format!(
        "{name} runs sequential tasks only; {kind} task files need a mechanism that executes parallel jobs ({})",
        parallel_mechanisms().join(", ")
    ))
}

/// The mechanism registered as `name`; the error lists the known names.
pub fn find(name: &str) -> Result<&'static Entry, RunError> {
    entries()
        .iter()
        .copied()
        .find(|e| e.name == name)
        .ok_or_else(|| RunError::Config(format!("unknown scheduler {name:?}; known: {}", names().join(", "))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_default_parses() {
        let mut n = names();
        n.sort_unstable();
        let before = n.len();
        n.dedup();
        assert_eq!(n.len(), before, "two mechanisms share a name");
        for e in entries() {
            e.resolve([]).unwrap_or_else(|err| panic!("{}: {err}", e.name));
            assert!(!e.summary.is_empty() && e.line().starts_with(e.name));
            let mut t: Vec<&str> = e.terms.iter().map(|t| t.name).collect();
            t.sort_unstable();
            let k = t.len();
            t.dedup();
            assert_eq!(t.len(), k, "{}: a term is declared twice", e.name);
        }
        assert!(find("no-such").unwrap_err().to_string().contains("known: pedf, pfp"));
    }

    #[test]
    fn the_parallel_flag_says_which_mechanisms_take_fork_join_and_dag_sets() {
        assert_eq!(parallel_mechanisms(), ["rtws", "push-pull", "push-pull-fp"]);
        for e in entries() {
            assert_eq!(e.to_json()["parallel"], e.parallel, "{}", e.name);
        }
        let e = sequential_only("pedf", "DAG").to_string();
        assert_eq!(
            e,
            "bad run configuration: pedf runs sequential tasks only; DAG task files need a mechanism that executes \
             parallel jobs (rtws, push-pull, push-pull-fp)"
        );
    }

    #[test]
    fn parameters_are_parsed_by_their_kind() {
        let spec = |kind| ParamSpec { name: "x", kind, default: "", help: "" };
        assert_eq!(spec(ParamKind::Int { min: 1, max: 5 }).parse("3"), Ok(ParamValue::Int(3)));
        let e = spec(ParamKind::Int { min: 1, max: 5 }).parse("9").unwrap_err();
        assert_eq!(e.param, "x");
        assert_eq!(e.to_string(), "parameter x: expected an integer in 1..=5, got \"9\"");
        assert_eq!(spec(ParamKind::Duration).parse("2ms"), Ok(ParamValue::Duration(2_000_000)));
        assert!(spec(ParamKind::Duration).parse("0").is_err());
        assert_eq!(spec(ParamKind::Bool).parse("yes"), Ok(ParamValue::Bool(true)));
        assert!(spec(ParamKind::Choice(&["a", "b"])).parse("c").unwrap_err().to_string().contains("one of a, b"));
        let pfp = find("pfp").unwrap();
        let e = pfp.resolve([("prio", "dm")]).unwrap_err().to_string();
        assert_eq!(e, "pfp: parameter prio: unknown to pfp (known: priorities)");
        let e = find("gsn-edf").unwrap().resolve([("x", "1")]).unwrap_err().to_string();
        assert_eq!(e, "gsn-edf: parameter x: unknown to gsn-edf (it takes none)");
        // The priorities' syntax is checked with the value, before any task set is seen.
        let e = pfp.resolve([("priorities", "1,x")]).unwrap_err().to_string();
        assert_eq!(e, "pfp: parameter priorities: task 1: \"x\" is not a rank (dm, rm or one integer rank per task, smaller = higher)");
        let ts = TaskSet::from_cdt(&[(1, 9, 10), (1, 5, 20)]).unwrap();
        let p = pfp.resolve([("priorities", "rm")]).unwrap();
        assert_eq!((pfp.priority)(&ts, &p), Ok(PriorityRule::Fixed(vec![0, 1])));
        let p = pfp.resolve([]).unwrap();
        assert_eq!((pfp.priority)(&ts, &p), Ok(PriorityRule::Fixed(vec![1, 0])));
        let p = pfp.resolve([("priorities", "1,0,2")]).unwrap();
        let e = (pfp.priority)(&ts, &p).unwrap_err();
        assert_eq!(e, ParamError::new("priorities", "3 priorities for 2 tasks"));
        assert_eq!(e.to_string(), "parameter priorities: 3 priorities for 2 tasks");
    }
}
