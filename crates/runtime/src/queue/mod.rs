//! Sequential and concurrent structures the mechanisms are built from, one per file, each with
//! an oracle test against a plain reference (and, where concurrent, a loom model). Lock
//! preconditions are written where they apply, as in Linux's `cpudeadline.c`.
//!
//! * [`binomial`]: the binomial-heap ready queue (seed 001 R1).
//! * [`release`]: the release queue and per-task job book of a release domain.

pub mod binomial;
pub mod release;
