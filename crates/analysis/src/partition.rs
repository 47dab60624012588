//! Partitioned scheduling: bin-packing heuristics with exact uniprocessor admission.
//!
//! Tasks are taken in a decreasing order (utilization `C/T` or density `C/min(D,T)`,
//! compared exactly by cross-multiplication, ties by lower index) and each is placed on one
//! of `m` processors chosen by a fit rule (first, worst, best, next fit; Johnson's bin-packing
//! heuristics as used for real-time partitioning by Dhall & Liu, Operations Research 1978,
//! and Lopez, Diaz & Garcia, Real-Time Systems 2004). A task is placed on a processor only
//! if the processor's exact uniprocessor test passes with it: EDF by QPA
//! ([`crate::uni::edf::EdfBin`]), fixed priority by response-time analysis
//! ([`crate::uni::fp::FpBin`]). A test that gives up counts as "does not fit".
//!
//! "Remaining capacity" of a processor (for worst and best fit) is `1 - load`, where the
//! load is the sum of the utilizations of its tasks for [`Order::DecreasingUtilization`] and
//! the sum of their densities for [`Order::DecreasingDensity`], compared exactly; ties go to
//! the lower processor index. See `docs/analysis-uni.md`.

use crate::uni::edf::EdfBin;
use crate::uni::fp::{self, FpBin, Priority};
use crate::uni::{edf, P};
use crate::{Limits, Verdict};
use rayon::prelude::*;
use rtsched_model::exact::{self, Interval, Rational};
use rtsched_model::time::format_time_exact;
use rtsched_model::{ModelError, Task, TaskSet};
use std::cmp::Ordering;
use std::fmt;

/// Which processor a task goes to, among those whose exact test admits it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fit {
    /// The lowest-indexed processor that admits the task.
    First,
    /// The admitting processor with the most remaining capacity (least load).
    Worst,
    /// The admitting processor with the least remaining capacity (most load).
    Best,
    /// The current processor if it admits the task, else the next ones in index order; a
    /// processor left behind is closed for good (classic next fit, no wrap-around).
    Next,
}

impl Fit {
    /// `"ffd"`, `"wfd"`, `"bfd"`, `"nfd"` (the decreasing order is [`Order`], passed
    /// separately), also `"ff"`, `"wf"`, `"bf"`, `"nf"` and `"first"`, `"worst"`, `"best"`,
    /// `"next"`; case-insensitive.
    pub fn from_name(s: &str) -> Option<Fit> {
        match s.to_ascii_lowercase().as_str() {
            "ffd" | "ff" | "first" | "first-fit" => Some(Fit::First),
            "wfd" | "wf" | "worst" | "worst-fit" => Some(Fit::Worst),
            "bfd" | "bf" | "best" | "best-fit" => Some(Fit::Best),
            "nfd" | "nf" | "next" | "next-fit" => Some(Fit::Next),
            _ => None,
        }
    }
}

/// The order in which tasks are placed: decreasing, ties by lower index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    DecreasingUtilization,
    DecreasingDensity,
}

/// The exact uniprocessor test that admits a task to a processor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Admission {
    /// Preemptive EDF, processor demand criterion by QPA.
    Edf,
    /// Preemptive fixed priority, response-time analysis.
    Fp(Priority),
}

/// Task indices per processor (`cpus[k]` in placement order).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Partition {
    pub cpus: Vec<Vec<usize>>,
}

/// The result of [`partition`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionOutcome {
    /// Every task placed.
    Placed(Partition),
    /// `task` fitted on no processor; `partial` holds the tasks placed before it.
    Failed { task: usize, partial: Partition },
}

/// A partition made by [`default_partition`] and the note that says how it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultPartition {
    pub cpus: Vec<Vec<usize>>,
    pub note: String,
}

/// Why [`default_partition`] could not place a task set (a well-formed request whose task set
/// does not fit), in one line naming the task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotPlaced(pub String);

impl Admission {
    /// The admission test's name in messages.
    pub fn label(self) -> &'static str {
        match self {
            Admission::Edf => "EDF (QPA)",
            Admission::Fp(Priority::DeadlineMonotonic) => "deadline-monotonic FP (response-time analysis)",
            Admission::Fp(_) => "FP (response-time analysis)",
        }
    }
}

/// The default partition of the partitioned schedulers, decided in one place for the
/// simulator and the runtime: worst-fit decreasing utilization with the scheduler's own exact
/// admission test (`adm`: the processor demand criterion via QPA for P-EDF, response-time
/// analysis for P-FP). A requested stop in `limits` ends it early; the caller, which requested
/// it, discards the answer.
pub fn default_partition(ts: &TaskSet, m: u32, adm: Admission, limits: &Limits) -> Result<DefaultPartition, NotPlaced> {
    let label = adm.label();
    match partition(ts, m, Fit::Worst, Order::DecreasingUtilization, adm, limits) {
        PartitionOutcome::Placed(p) => Ok(DefaultPartition {
            cpus: p.cpus,
            note: format!("partitioned by worst-fit decreasing utilization with exact {label} admission"),
        }),
        PartitionOutcome::Failed { task, .. } => {
            let t = &ts[task];
            Err(NotPlaced(format!(
                "worst-fit decreasing with exact {label} admission cannot place task {task} (wcet {}, deadline {}, period {}) on any of the {m} processors",
                format_time_exact(t.wcet),
                format_time_exact(t.deadline),
                format_time_exact(t.period)
            )))
        }
    }
}

/// Task indices in the given decreasing order.
pub fn task_order(ts: &TaskSet, order: Order) -> Vec<usize> {
    let tasks = ts.tasks();
    let mut idx: Vec<usize> = (0..tasks.len()).collect();
    idx.sort_by(|&a, &b| {
        let c = match order {
            Order::DecreasingUtilization => tasks[b].cmp_utilization(&tasks[a]),
            Order::DecreasingDensity => tasks[b].cmp_density(&tasks[a]),
        };
        c.then(a.cmp(&b))
    });
    idx
}

enum Bin {
    Edf(EdfBin),
    Fp(FpBin),
}

struct Cpu {
    bin: Bin,
    /// Enclosure of the load (utilization or density sum) and the tasks, for exact ties.
    load: Interval,
    members: Vec<usize>,
}

impl Cpu {
    fn exact_load(&self, ts: &TaskSet, order: Order) -> Rational {
        self.members.iter().fold(exact::zero(), |acc, &i| acc + weight(&ts[i], order))
    }

    fn admits(&self, index: usize, p: P, limits: &Limits) -> bool {
        let v = match &self.bin {
            Bin::Edf(b) => b.fits_p(p, limits),
            Bin::Fp(b) => b.fits_p(index, p, limits),
        };
        v == Verdict::Schedulable
    }

    fn push(&mut self, index: usize, task: &Task, order: Order) {
        let p = P::of(task);
        match &mut self.bin {
            Bin::Edf(b) => b.push_p(p),
            Bin::Fp(b) => b.push_p(index, p),
        }
        self.load = self.load.add(weight_interval(task, order));
        self.members.push(index);
    }
}

fn weight(t: &Task, order: Order) -> Rational {
    match order {
        Order::DecreasingUtilization => t.utilization(),
        Order::DecreasingDensity => t.density(),
    }
}

fn weight_interval(t: &Task, order: Order) -> Interval {
    match order {
        Order::DecreasingUtilization => t.utilization_interval(),
        Order::DecreasingDensity => t.density_interval(),
    }
}

/// Exact comparison of two processors' loads.
fn cmp_load(a: &Cpu, b: &Cpu, ts: &TaskSet, order: Order) -> Ordering {
    if a.load.hi < b.load.lo {
        Ordering::Less
    } else if a.load.lo > b.load.hi {
        Ordering::Greater
    } else if a.load.lo == a.load.hi && a.load == b.load {
        Ordering::Equal // both enclosures are the same single point, e.g. empty processors
    } else {
        a.exact_load(ts, order).cmp(&b.exact_load(ts, order))
    }
}

/// Places every task of `ts` on one of `m` processors (see the module doc). Nothing is
/// placed without the exact admission test passing. `m = 0` fails on the first task (or
/// places an empty set).
pub fn partition(
    ts: &TaskSet,
    m: u32,
    fit: Fit,
    order: Order,
    admission: Admission,
    limits: &Limits,
) -> PartitionOutcome {
    // Self-suspending tasks are admitted suspension-obliviously (crate::suspension); a task
    // whose C + S exceeds the largest time fits nowhere.
    let view = match crate::suspension::oblivious(ts) {
        Ok(v) => v,
        Err(e) => {
            return PartitionOutcome::Failed {
                task: e.task.unwrap_or(0),
                partial: Partition { cpus: vec![Vec::new(); m as usize] },
            }
        }
    };
    let ts = view.as_ref();
    let mut cpus: Vec<Cpu> = (0..m)
        .map(|_| Cpu {
            bin: match admission {
                Admission::Edf => Bin::Edf(EdfBin::new()),
                Admission::Fp(prio) => Bin::Fp(FpBin::new(prio)),
            },
            load: Interval::point(0.0),
            members: Vec::new(),
        })
        .collect();
    let mut next = 0usize;
    let mut by_load: Vec<usize> = Vec::with_capacity(m as usize);
    for i in task_order(ts, order) {
        if limits.stop.requested() {
            // Stopped early (Ctrl-C): the caller discards this answer.
            return PartitionOutcome::Failed {
                task: i,
                partial: Partition { cpus: cpus.into_iter().map(|c| c.members).collect() },
            };
        }
        let task = &ts[i];
        let p = P::of(task);
        let chosen = match fit {
            Fit::First => (0..cpus.len()).find(|&k| cpus[k].admits(i, p, limits)),
            Fit::Next => {
                while next < cpus.len() && !cpus[next].admits(i, p, limits) {
                    next += 1;
                }
                (next < cpus.len()).then_some(next)
            }
            Fit::Worst | Fit::Best => {
                by_load.clear();
                by_load.extend(0..cpus.len());
                // Least load first for worst fit, most load first for best fit; stable sort
                // keeps lower indices first among equal loads.
                by_load.sort_by(|&a, &b| {
                    let c = cmp_load(&cpus[a], &cpus[b], ts, order);
                    if fit == Fit::Worst {
                        c
                    } else {
                        c.reverse()
                    }
                });
                by_load.iter().copied().find(|&k| cpus[k].admits(i, p, limits))
            }
        };
        match chosen {
            Some(k) => cpus[k].push(i, task, order),
            None => {
                return PartitionOutcome::Failed {
                    task: i,
                    partial: Partition { cpus: cpus.into_iter().map(|c| c.members).collect() },
                }
            }
        }
    }
    PartitionOutcome::Placed(Partition { cpus: cpus.into_iter().map(|c| c.members).collect() })
}

/// [`partition`] over many task sets in parallel (rayon).
pub fn partition_many(
    sets: &[TaskSet],
    m: u32,
    fit: Fit,
    order: Order,
    admission: Admission,
    limits: &Limits,
) -> Vec<PartitionOutcome> {
    sets.par_iter().map(|ts| partition(ts, m, fit, order, admission, limits)).collect()
}

/// Why a partition fails [`verify`] / [`verify_partial`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionError {
    /// Processor `cpu` holds task `task`, but the set has only `n` tasks.
    NoSuchTask { cpu: usize, task: usize, n: usize },
    /// Task `task` is on processors `first` and `second`.
    PlacedTwice { task: usize, first: usize, second: usize },
    /// Task `task` is on no processor (complete partitions only).
    Unplaced { task: usize },
    /// The tasks of processor `cpu` do not form a valid task set.
    Invalid { cpu: usize, error: ModelError },
    /// Processor `cpu` (with `tasks`) fails its exact uniprocessor test (`verdict`: not
    /// schedulable, or the test gave up).
    FailsTest { cpu: usize, tasks: Vec<usize>, verdict: Verdict },
}

impl fmt::Display for PartitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartitionError::NoSuchTask { cpu, task, n } => {
                write!(f, "processor {cpu} holds task {task}, but the set has {n} tasks")
            }
            PartitionError::PlacedTwice { task, first, second } => {
                write!(f, "task {task} is placed twice (processors {first} and {second})")
            }
            PartitionError::Unplaced { task } => write!(f, "task {task} is on no processor"),
            PartitionError::Invalid { cpu, error } => write!(f, "processor {cpu}: {error}"),
            PartitionError::FailsTest { cpu, tasks, verdict } => {
                write!(f, "processor {cpu} (tasks {tasks:?}) fails its exact test: {verdict:?}")
            }
        }
    }
}

impl std::error::Error for PartitionError {}

/// Independent re-check of a complete partition: every task index of `ts` appears exactly
/// once, and each processor's task set passes the exact uniprocessor test from scratch
/// ([`edf::qpa`] or [`fp::rta`], with the processor's tasks in global index order so that
/// priority ties break as in the whole set). `Err` says what is wrong.
pub fn verify(ts: &TaskSet, p: &Partition, admission: Admission, limits: &Limits) -> Result<(), PartitionError> {
    check(ts, p, admission, limits, true)
}

/// [`verify`] for the `partial` partition of a failed run: no task twice, every processor
/// passes its exact test, but tasks may be missing.
pub fn verify_partial(
    ts: &TaskSet,
    p: &Partition,
    admission: Admission,
    limits: &Limits,
) -> Result<(), PartitionError> {
    check(ts, p, admission, limits, false)
}

fn check(
    ts: &TaskSet,
    p: &Partition,
    admission: Admission,
    limits: &Limits,
    complete: bool,
) -> Result<(), PartitionError> {
    let mut seen = vec![None; ts.len()];
    for (k, cpu) in p.cpus.iter().enumerate() {
        for &i in cpu {
            if i >= ts.len() {
                return Err(PartitionError::NoSuchTask { cpu: k, task: i, n: ts.len() });
            }
            if let Some(other) = seen[i] {
                return Err(PartitionError::PlacedTwice { task: i, first: other, second: k });
            }
            seen[i] = Some(k);
        }
    }
    if let Some(i) = seen.iter().position(Option::is_none).filter(|_| complete) {
        return Err(PartitionError::Unplaced { task: i });
    }
    for (k, cpu) in p.cpus.iter().enumerate() {
        let mut idx = cpu.clone();
        idx.sort_unstable();
        let sub = TaskSet::new(idx.iter().map(|&i| ts[i].clone()).collect())
            .map_err(|error| PartitionError::Invalid { cpu: k, error })?;
        let v = match admission {
            Admission::Edf => edf::qpa(&sub, limits),
            Admission::Fp(prio) => fp::rta(&sub, prio, limits).0,
        };
        if v != Verdict::Schedulable {
            return Err(PartitionError::FailsTest { cpu: k, tasks: idx, verdict: v });
        }
    }
    Ok(())
}
