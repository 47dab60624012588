//! Schedulability analysis and placement.
//!
//! * [`uni`]: uniprocessor EDF (utilization bound, demand-bound function, QPA) and
//!   fixed-priority response-time analysis.
//! * [`global`]: global EDF on `m` identical processors, hard (GFB, BAK, BCL, BCL-iterative,
//!   RTA, BAR, FF-DBF, and "any of them") and soft (bounded tardiness).
//! * [`partition`]: bin-packing heuristics with exact per-processor admission.
//! * [`semi`]: semi-partitioned reservations (SP-RES, seed 004).
//! * [`overheads`]: overhead-aware analysis — task-parameter inflation per mechanism, hard and
//!   soft real-time verdicts on the inflated sets.
//!
//! Every verdict is exact (integer ns, `u128`, exact rationals; see `rtsched_model::exact`).
//! Work that can explode takes a [`Limits`] and reports [`Verdict::GaveUp`] when it hits one.

pub mod global;
pub mod overheads;
pub mod partition;
pub mod semi;
pub mod uni;
mod verdict;

pub use verdict::{Limits, Stop, Verdict};
