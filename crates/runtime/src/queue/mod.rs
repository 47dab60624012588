//! Sequential and concurrent structures the mechanisms are built from, one per file, each with
//! an oracle test against a plain reference (and, where concurrent, a loom model). Lock
//! preconditions are written where they apply, as in Linux's `cpudeadline.c`.
//!
//! * [`binomial`]: the binomial-heap ready queue (seed 001 R1).
//! * [`release`]: the release queue and per-task job book of a release domain.
//! * [`hunt_heap`]: Hunt et al.'s fine-grained concurrent heap (seed 001 R2).
//! * [`hierarchical`]: the queue of queues with two-level locking (seed 001 R3).

pub mod binomial;
pub mod hierarchical;
pub mod hunt_heap;
pub mod release;
