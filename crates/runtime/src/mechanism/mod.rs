//! The mechanism interface: a table of callbacks in the spirit of LITMUS^RT's
//! `struct sched_plugin` (Brandenburg, "Scheduling and Locking in Multiprocessor Real-Time
//! Operating Systems", PhD thesis, UNC 2011, ch. 3; seed 001 §2 "event handlers").
//!
//! The engine (`engine`) owns the threads, the clocks, the job bodies and the tracer; a
//! [`Plugin`] owns the scheduling state and decides. The split follows seed 001 §3
//! "processor mapping": a plugin keeps *linked* (which job each CPU should run — the
//! decision, changeable by any CPU under the plugin's synchronisation) apart from
//! *scheduled* (which job each CPU's worker actually runs — changed only by that worker,
//! inside [`Plugin::schedule`]). A change of `linked[c]` by another CPU is communicated with
//! [`Ctx::preempt`] (flag + wake-up, the "IPI"); the worker on `c` notices it at its next
//! poll and calls `schedule`.
//!
//! Callbacks and their preconditions (each is called on the CPU named by `ctx.cpu`):
//! * [`Plugin::release`] — the release "timer interrupt" of one release domain. Called when
//!   `now >= next_release(domain)`, by the worker that polls that domain
//!   ([`Plugin::release_domain`]) or by the dedicated release thread. Must release every job
//!   due by `now`, record `JobRelease` for each, and request preemptions as needed.
//! * [`Plugin::schedule`] — the scheduler of `ctx.cpu`. `prev` says what the worker just
//!   stopped: nothing, a job it was preempted from (its remaining budget already saved by
//!   the engine), or a job that completed (job completion is handled here, under the
//!   plugin's lock, as LITMUS^RT's `schedule` calls `job_completion`). Returns the job the
//!   worker must run next (it becomes `scheduled`). A returned job must not be scheduled on
//!   any other CPU at the same time; the engine's trace check verifies this. It calls
//!   [`Ctx::ack_resched`] last, still under the lock that serialises preemption requests
//!   to this CPU.
//! * `tick` — a periodic tick, for quantum-driven plugins; the event-driven ones
//!   here do not use it and the engine does not call it (no tick overhead exists here).
//! * Block / wake: the synthetic jobs never self-suspend, so no such callbacks exist yet;
//!   a suspension-based workload (locks, RTWS joins) adds `task_block(job)` /
//!   `task_wake(job)` with the same preconditions as LITMUS^RT's.
//!
//! Writing other mechanisms against it: push/pull (seed 002) keeps one ready queue and lock
//! per CPU and pushes/pulls inside `release`/`schedule`; G-EDF-MP (seed 000 §III) makes the
//! dedicated thread the scheduling processor and `schedule` a mailbox exchange; the RTSS'09
//! plugins differ only in the ready-queue type and the release domain (CE1/FE1 = dedicated).

pub use crate::queue::release::{Job, TaskBook, TaskParams};
use crate::sync::CpuSignal;
use crate::tracer::{RecKind, TraceBuffer};

/// What a worker stopped doing before calling [`Plugin::schedule`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prev {
    /// It ran nothing.
    Idle,
    /// It stopped running this job before completion (preemption request noticed).
    Preempted(Job),
    /// This job completed.
    Completed(Job),
}

/// Per-call context: which CPU (index into the run's CPU list; the dedicated release thread
/// has index `m`), its trace buffer, and every CPU's reschedule signal.
pub struct Ctx<'a> {
    pub cpu: usize,
    pub trace: &'a mut TraceBuffer,
    pub signals: &'a [CpuSignal],
    /// Sleeping CPUs sent a request by this call and not yet woken (bit = CPU index).
    wakes: u128,
}

impl Drop for Ctx<'_> {
    fn drop(&mut self) {
        self.flush_wakes();
    }
}

impl<'a> Ctx<'a> {
    pub fn new(cpu: usize, trace: &'a mut TraceBuffer, signals: &'a [CpuSignal]) -> Ctx<'a> {
        Ctx { cpu, trace, signals, wakes: 0 }
    }

    /// Wakes the sleeping targets of the requests sent so far. The engine calls it after the
    /// plugin call returns, i.e. outside the plugin's lock and outside the traced Δsch / Δrel
    /// section: waking a sleeping worker is a futex system call, the user-space price of an
    /// IPI, and it belongs to Δipi (send → noticed), not to the lock hold time.
    pub fn flush_wakes(&mut self) {
        while self.wakes != 0 {
            let t = self.wakes.trailing_zeros() as usize;
            self.wakes &= self.wakes - 1;
            self.signals[t].kick();
        }
    }

    /// Asks CPU `target` to call `schedule` soon: locally a flag, remotely a traced "IPI".
    pub fn preempt(&mut self, target: usize) {
        if target == self.cpu {
            self.signals[target].set_local();
        } else {
            let stamp = crate::clock::counter();
            self.trace.record_at(stamp, RecKind::IpiSent, target as u32, 0, 0);
            if self.signals[target].send_deferred(stamp) {
                if target < 128 {
                    self.wakes |= 1 << target;
                } else {
                    self.signals[target].kick();
                }
            }
        }
    }

    /// Clears this CPU's pending reschedule request (recording `IpiNoticed` for a remote
    /// one). `schedule` calls it while holding the lock under which requests to this CPU are
    /// sent: every request made before is answered by the decision being taken, so the
    /// worker is not sent back to reschedule for a decision it already follows.
    pub fn ack_resched(&mut self) {
        if let Some(stamp) = self.signals[self.cpu].take() {
            if stamp != 0 {
                self.trace.record(RecKind::IpiNoticed, self.cpu as u32, 0, stamp);
            }
        }
    }

    /// Records a job's release (`arg` = its due time).
    pub fn record_release(&mut self, j: &Job) {
        self.trace.record(RecKind::JobRelease, j.task(), j.seq(), j.release);
    }
}

/// End-of-run accounting from the plugin's own state (the trace is checked against it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accounting {
    /// Jobs released per task.
    pub released: Vec<u32>,
    /// Jobs completed per task.
    pub completed: Vec<u32>,
    /// Result of the plugin's consistency check: every released, incomplete job's head job
    /// (the task's oldest) is findable in the plugin's structures (ready, linked or scheduled).
    pub consistent: Result<(), String>,
}

/// A scheduler mechanism (see the module docs for each callback's precondition).
pub trait Plugin: Send + Sync {
    fn name(&self) -> &'static str;
    /// Number of release domains (release queues with their own "timer").
    fn release_domains(&self) -> usize;
    /// The release domain whose timer the worker of CPU `cpu` polls, if any.
    fn release_domain(&self, cpu: usize) -> Option<usize>;
    /// Earliest due release of `domain` (`u64::MAX` if none before the end); lock-free.
    fn next_release(&self, domain: usize) -> u64;
    /// Called before `release` by a poller that saw `next_release(domain) == due`; returns
    /// false if another CPU already took this release (the default suits a single poller).
    fn try_claim_release(&self, _domain: usize, _due: u64) -> bool {
        true
    }
    fn release(&self, ctx: &mut Ctx<'_>, domain: usize, now: u64);
    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev) -> Option<Job>;
    /// Called after every thread has stopped.
    fn accounting(&self) -> Accounting;
}

pub mod gsn_edf;
pub mod partitioned;

use crate::config::RunConfig;
use crate::{platform, RunError};
use rtsched_model::TaskSet;
use rtsched_policy::{FpOrder, PriorityRule};

/// The scheduler implementation to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mechanism {
    /// Partitioned EDF; `partition[c]` = task indices of the `c`-th CPU of the list.
    Pedf { partition: Vec<Vec<usize>> },
    /// Partitioned fixed priority; `ranks[i]` = task i's priority (smaller = higher), or
    /// `None` for deadline-monotonic (D, then task index).
    Pfp { partition: Vec<Vec<usize>>, ranks: Option<Vec<u64>> },
    /// Global EDF, one lock, releases handled by the workers (seed 001 CEm).
    GsnEdf,
    /// GSN-EDF with a dedicated release CPU (`RunConfig::dedicated_cpu`; seed 001 CE1).
    GsnEdfDi,
    /// The same workload as Linux SCHED_DEADLINE threads (see `backend::kernel_sd`).
    KernelSd,
}

impl Mechanism {
    /// The scheduler names the CLI accepts.
    pub const NAMES: [&'static str; 5] = ["pedf", "pfp", "gsn-edf", "gsn-edf-di", "kernel-sd"];

    /// Builds a mechanism from its CLI name; `pedf` and `pfp` need a partition (P-FP then
    /// uses deadline-monotonic priorities), the others refuse one.
    pub fn parse(name: &str, partition: Option<Vec<Vec<usize>>>) -> Result<Mechanism, RunError> {
        let m = match (name, partition) {
            ("pedf", Some(p)) => Mechanism::Pedf { partition: p },
            ("pfp", Some(p)) => Mechanism::Pfp { partition: p, ranks: None },
            ("pedf" | "pfp", None) => {
                return Err(RunError::Config(format!("{name} needs a partition (task indices per CPU)")))
            }
            ("gsn-edf", None) => Mechanism::GsnEdf,
            ("gsn-edf-di", None) => Mechanism::GsnEdfDi,
            ("kernel-sd", None) => Mechanism::KernelSd,
            ("gsn-edf" | "gsn-edf-di" | "kernel-sd", Some(_)) => {
                return Err(RunError::Config(format!("{name} is global and takes no partition")))
            }
            _ => {
                return Err(RunError::Config(format!(
                    "unknown scheduler {name:?}; known: {}",
                    Mechanism::NAMES.join(", ")
                )))
            }
        };
        Ok(m)
    }

    pub fn name(&self) -> &'static str {
        match self {
            Mechanism::Pedf { .. } => "pedf",
            Mechanism::Pfp { .. } => "pfp",
            Mechanism::GsnEdf => "gsn-edf",
            Mechanism::GsnEdfDi => "gsn-edf-di",
            Mechanism::KernelSd => "kernel-sd",
        }
    }

    /// The priority rule of the jobs: EDF, or P-FP's ranks (given, or deadline-monotonic).
    pub fn rule(&self, ts: &TaskSet) -> PriorityRule {
        match self {
            Mechanism::Pfp { ranks: Some(r), .. } => PriorityRule::Fixed(r.iter().map(|&x| x as u32).collect()),
            Mechanism::Pfp { ranks: None, .. } => PriorityRule::fixed(ts, FpOrder::DeadlineMonotonic),
            _ => PriorityRule::Edf,
        }
    }

    /// Checks `cfg` and `ts` for this mechanism.
    pub(crate) fn validate(&self, ts: &TaskSet, cfg: &RunConfig) -> Result<(), RunError> {
        cfg.validate_common(ts)?;
        if matches!(self, Mechanism::KernelSd) && !cfg.user_jobs.is_empty() {
            return Err(RunError::Config(
                "kernel-sd runs the synthetic body only; user jobs need one of our mechanisms".into(),
            ));
        }
        match self {
            Mechanism::GsnEdfDi if cfg.dedicated_cpu.is_none() => {
                return Err(RunError::Config("gsn-edf-di needs a dedicated_cpu for release handling".into()))
            }
            Mechanism::GsnEdfDi => {}
            _ if cfg.dedicated_cpu.is_some() => {
                return Err(RunError::Config(format!(
                    "{} does not use a dedicated CPU (only gsn-edf-di does)",
                    self.name()
                )))
            }
            _ => {}
        }
        if let Mechanism::Pedf { partition } = self {
            validate_partition(partition, ts.len(), cfg.cpus.len())?;
        }
        if let Mechanism::Pfp { partition, ranks } = self {
            validate_partition(partition, ts.len(), cfg.cpus.len())?;
            if let Some(r) = ranks {
                if r.len() != ts.len() {
                    return Err(RunError::Config(format!("pfp has {} priorities for {} tasks", r.len(), ts.len())));
                }
                if let Some(i) = r.iter().position(|&x| x > u32::MAX as u64) {
                    return Err(RunError::Config(format!("pfp: task {i}'s priority {} exceeds {}", r[i], u32::MAX)));
                }
            }
        }
        platform::validate_cpus(&cfg.cpus, cfg.dedicated_cpu, cfg.force)
    }
}

/// Each task on exactly one of `m` CPUs.
pub fn validate_partition(partition: &[Vec<usize>], n: usize, m: usize) -> Result<(), RunError> {
    if partition.len() != m {
        return Err(RunError::Config(format!("the partition has {} CPUs but the CPU list has {m}", partition.len())));
    }
    let mut seen = vec![None; n];
    for (c, tasks) in partition.iter().enumerate() {
        for &t in tasks {
            if t >= n {
                return Err(RunError::Config(format!("partition CPU {c} names task {t}, but there are {n} tasks")));
            }
            if let Some(c0) = seen[t] {
                return Err(RunError::Config(format!("task {t} is assigned to CPUs {c0} and {c}")));
            }
            seen[t] = Some(c);
        }
    }
    if let Some(t) = seen.iter().position(|s| s.is_none()) {
        return Err(RunError::Config(format!("task {t} is assigned to no CPU")));
    }
    Ok(())
}
