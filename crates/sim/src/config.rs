//! What a simulation is asked to do: the scheduler ([`Scheduler`]), the arrivals
//! ([`Arrivals`]), the execution times ([`ExecTimes`]) and the rest of [`SimConfig`].

use crate::overheads::Overheads;
use crate::placement::SpresConfig;
use rtsched_model::{ModelError, Stop, Time};
use rtsched_policy::FpOrder;

/// Most CPUs a simulation accepts (memory is O(m)): the model's bound, [`rtsched_model::MAX_M`].
pub const MAX_CPUS: u32 = rtsched_model::MAX_M;

/// Which policy to simulate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scheduler {
    /// Event-driven global EDF (link-based).
    Gedf,
    /// Quantum-driven global EDF; `staggered`: CPU `p` ticks at `k·Q + ⌊p·Q/m⌋`, else all at `k·Q`.
    GedfQuantum { quantum: Time, staggered: bool },
    /// Partitioned EDF: `partition[cpu]` lists the task indices of each CPU (length m).
    Pedf(Vec<Vec<usize>>),
    /// Partitioned fixed priority with rate- or deadline-monotonic priorities (ties by index).
    Pfp(Vec<Vec<usize>>, FpOrder),
    /// Global preemptive fixed priority (event-driven, link-based like `Gedf`): `ranks[task]`
    /// (0 = highest, ties by task index); `order` is the rule they came from (`None`: given).
    Gfp { ranks: Vec<u32>, order: Option<FpOrder> },
    /// G-FL, the global fair-lateness scheduler (Erickson & Anderson, ECRTS 2012): `Gedf` with
    /// priority points `r + D_i − (m−1)/m·C_i` (`rtsched_policy::PriorityPoints`).
    Gfl,
    /// EDZL (Lee, RTCSA 1994; Cirinei & Baker, ECRTS 2007): G-EDF in which a waiting job
    /// whose laxity reaches zero gets the highest priority until it completes.
    Edzl,
    /// LLF, least laxity first on m CPUs (Mok 1983; Dertouzos & Mok, IEEE TSE 1989): decisions at
    /// job events and every `quantum` (`rtsched_policy::llf`).
    Llf { quantum: Time },
    /// PD², Pfair with slots of `quantum` (Anderson & Srinivasan, ECRTS 2000 / JCSS 2004;
    /// `rtsched_policy::pfair`).
    Pd2 { quantum: Time },
    /// Semi-partitioned reservations executing a placement (seed 004).
    Spres(SpresConfig),
    /// RTWS (seed 003) with each task one sequential region; fork-join sets: `rtws::simulate_rtws`.
    Rtws,
    /// RUN (Regnier, Lima, Massa, Levin & Brandt, RTSS 2011): optimal for implicit-deadline
    /// periodic tasks with `U ≤ m` (`rtsched_policy::run`).
    Run,
    /// QPS (Massa, Lima, Regnier, Levin & Brandt, RTS 2016): quasi-partitioned, optimal for
    /// implicit-deadline periodic tasks with `U ≤ m` (`rtsched_policy::qps`).
    Qps,
}

impl Scheduler {
    pub fn name(&self) -> String {
        match self {
            Scheduler::Gedf => "G-EDF".into(),
            Scheduler::GedfQuantum { quantum, staggered } => {
                format!(
                    "G-EDF quantum {} {}",
                    rtsched_model::time::format_duration(*quantum),
                    if *staggered { "staggered" } else { "aligned" }
                )
            }
            Scheduler::Pedf(_) => "P-EDF".into(),
            Scheduler::Pfp(_, FpOrder::RateMonotonic) => "P-FP (RM)".into(),
            Scheduler::Pfp(_, FpOrder::DeadlineMonotonic) => "P-FP (DM)".into(),
            Scheduler::Gfp { order: Some(FpOrder::RateMonotonic), .. } => "G-FP (RM)".into(),
            Scheduler::Gfp { order: Some(FpOrder::DeadlineMonotonic), .. } => "G-FP (DM)".into(),
            Scheduler::Gfp { order: None, .. } => "G-FP (given priorities)".into(),
            Scheduler::Gfl => "G-FL".into(),
            Scheduler::Edzl => "EDZL".into(),
            Scheduler::Llf { quantum } => format!("LLF quantum {}", rtsched_model::time::format_duration(*quantum)),
            Scheduler::Pd2 { quantum } => format!("PD2 quantum {}", rtsched_model::time::format_duration(*quantum)),
            Scheduler::Spres(c) => format!("SP-RES ({})", c.placement.heuristic),
            Scheduler::Rtws => "RTWS".into(),
            Scheduler::Run => "RUN".into(),
            Scheduler::Qps => "QPS".into(),
        }
    }
}

/// How jobs arrive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arrivals {
    /// Strictly periodic; `offsets[i]` is task i's first release (empty = all at 0).
    Periodic { offsets: Vec<Time> },
    /// Sporadic: first release at 0, then each gap is the period plus an integer delay drawn
    /// uniformly from `[0, max_extra_delay]` (ChaCha8 seeded with `seed`).
    Sporadic { max_extra_delay: Time, seed: u64 },
}

/// Actual execution times.
#[derive(Debug, Clone, PartialEq)]
pub enum ExecTimes {
    /// Every job executes for its task's WCET.
    Wcet,
    /// `⌈C · f⌉` ns (at least 1, at most C) with `f` uniform in `[lo, 1]` (ChaCha8, `seed`).
    UniformFraction { lo: f64, seed: u64 },
    /// `Fixed[i]` ns for every job of task i (`1 ≤ Fixed[i] ≤ C_i`).
    Fixed(Vec<Time>),
}

/// How long a self-suspending job suspends (docs/simulator.md, "Self-suspension").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SuspensionTimes {
    /// Every suspension lasts its upper bound (the default).
    #[default]
    Max,
    /// Each suspension is an integer drawn uniformly from its `[min, max]` (ChaCha8, `seed`).
    Uniform { seed: u64 },
}

/// Simulation parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    pub m: u32,
    /// End of the simulation; `None` = one hyperperiod (plus the largest offset).
    pub horizon: Option<Time>,
    /// The horizon never exceeds this; when it would, the result says so.
    pub horizon_cap: Time,
    pub arrivals: Arrivals,
    pub exec: ExecTimes,
    /// Keep the trace records in the result (they cost 32 bytes each).
    pub record_trace: bool,
    /// Check the scheduling invariant after every instant (slow; for tests and debugging).
    pub check_invariants: bool,
    /// Keep every job's statistics in `SimResult::per_job` (default). Without it, a job's
    /// statistics are folded into the totals when it completes and dropped, so memory grows
    /// with the jobs pending, not with the jobs simulated; every other metric is the same.
    /// The fork-join loops (RTWS, fork-join G-EDF) always keep their thread rows: their
    /// job-level statistics are sums over threads.
    pub keep_jobs: bool,
    /// Refuse simulations that would release more jobs than this (memory bound: each job
    /// keeps a row of about 100 bytes of metrics). Not applied with `keep_jobs = false`, where
    /// no row is kept (`max_events` bounds the work).
    pub max_jobs: u64,
    /// Work bound in scheduling events (releases, completions, quantum ticks, reservation
    /// boundaries, overhead pieces): a simulation known to need more is refused (a 1 ns quantum
    /// over 1,000 s is 10^12 ticks), one that reaches it ends there and says so.
    pub max_events: u64,
    /// Memory bound of a kept trace, in records (32 bytes each, about 4 per job): a simulation
    /// expected to need more is refused, one that reaches it ends there and says so.
    pub max_trace_records: u64,
    /// Ends the simulation early when requested (Ctrl-C): it ends at the current instant as
    /// if that were the horizon, and the result says so.
    pub stop: Stop,
    /// Overheads to inject (docs/simulator.md, "Overhead injection"); `None` = an ideal
    /// system. `Some(Overheads::ZERO)` runs the overhead-aware engine with nothing to charge
    /// (the same schedule as `None`).
    pub overheads: Option<Overheads>,
    /// How long self-suspending jobs suspend; tasks without segments never do.
    pub suspensions: SuspensionTimes,
}

impl SimConfig {
    /// Synchronous periodic arrivals, WCET execution, one hyperperiod capped at 1000 s, no
    /// trace, no checks, at most 50 million jobs, 2·10^9 events and 10^8 trace records (3.2 GB).
    pub fn new(m: u32) -> SimConfig {
        SimConfig {
            m,
            horizon: None,
            horizon_cap: 1_000_000_000_000,
            arrivals: Arrivals::Periodic { offsets: Vec::new() },
            exec: ExecTimes::Wcet,
            record_trace: false,
            check_invariants: false,
            keep_jobs: true,
            max_jobs: 50_000_000,
            max_events: 2_000_000_000,
            max_trace_records: 100_000_000,
            overheads: None,
            suspensions: SuspensionTimes::Max,
            stop: Stop::never(),
        }
    }

    /// Whether the overheads (if any) apply to `sched`: only the engine's overhead loop injects
    /// them (gedf, gedf-quantum, gfp, gfl, pedf, pfp), and a tick overhead only under quantum-driven
    /// G-EDF, below the quantum.
    pub(crate) fn check_overheads(&self, sched: &Scheduler) -> Result<(), ModelError> {
        if let Some(o) = &self.overheads {
            o.validate()?;
            let unsupported = match sched {
                Scheduler::Spres(_) => Some("spres"),
                Scheduler::Rtws => Some("rtws"),
                Scheduler::Edzl => Some("edzl"),
                Scheduler::Llf { .. } => Some("llf"),
                Scheduler::Pd2 { .. } => Some("pd2"),
                Scheduler::Run => Some("run"),
                Scheduler::Qps => Some("qps"),
                _ => None,
            };
            if let Some(name) = unsupported {
                return Err(ModelError::field(
                    "overheads",
                    format!(
                        "overhead injection is not supported for {name} (supported: gedf, gedf-quantum, gfp, gfl, pedf, pfp)"
                    ),
                ));
            }
            match sched {
                Scheduler::GedfQuantum { quantum, .. } if o.tick_ns >= *quantum && *quantum > 0 => {
                    return Err(ModelError::field(
                        "overheads.tick_ns",
                        format!("the tick overhead ({} ns) must be below the quantum ({quantum} ns)", o.tick_ns),
                    ));
                }
                Scheduler::GedfQuantum { .. } => {}
                _ if o.tick_ns > 0 => {
                    return Err(ModelError::field(
                        "overheads.tick_ns",
                        format!(
                            "applies only to gedf-quantum (the event-driven {} has no periodic tick), got {} ns",
                            sched.name(),
                            o.tick_ns
                        ),
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }
}
