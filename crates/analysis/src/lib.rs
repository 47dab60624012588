//! Schedulability analysis and placement.
//!
//! * [`uni`]: uniprocessor EDF (utilization bound, demand-bound function, QPA) and
//!   fixed-priority response-time analysis.
//! * [`global`]: global EDF on `m` identical processors, hard (GFB, BAK, BCL, BCL-iterative,
//!   RTA, BAR, FF-DBF, and "any of them") and soft (bounded tardiness).
//! * [`partition`]: bin-packing heuristics with exact per-processor admission.
//! * [`semi`]: semi-partitioned reservations (SP-RES, seed 004).
//! * [`report`]: the registry of named tests (`analyze --test NAME`) and the report of running
//!   them on one task set; [`methods`]: one name per test or placement method, resolved in any
//!   spelling (the CLI, sweep specs and the Python API share it).
//! * [`overheads`]: overhead-aware analysis — task-parameter inflation per mechanism, hard and
//!   soft real-time verdicts on the inflated sets.
//! * [`suspension`]: suspension-oblivious analysis of self-suspending tasks (`C' = C + S`),
//!   applied by the report, the placements and the overhead-aware verdicts.
//! * [`placing`]: placement by method name (`rtsched partition`); [`sweep`]: the experiment
//!   engine's evaluator of one sweep point (generate, run every method, one row per set).
//!
//! Every verdict is exact (integer ns, `u128`, exact rationals; see `rtsched_model::exact`).
//! Work that can explode takes a [`Limits`] and reports [`Verdict::GaveUp`] when it hits one.

pub mod dag;
pub mod global;
pub mod methods;
pub mod overheads;
pub mod partition;
pub mod placing;
pub mod report;
pub mod semi;
pub mod suspension;
pub mod sweep;
pub mod uni;
mod verdict;

pub use verdict::{Limits, Stop, Verdict};
