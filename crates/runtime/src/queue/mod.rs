//! Sequential and concurrent structures the mechanisms are built from, one per file, each with
//! an oracle test against a plain reference (and, where concurrent, a loom model). Lock
//! preconditions are written where they apply, as in Linux's `cpudeadline.c`.
//!
//! * [`binomial`]: the binomial-heap ready queue (seed 001 R1).
//! * [`release`]: the release queue and per-task job book of a release domain.
//! * [`mailbox`]: a bounded multi-producer FIFO with wait-free writers (G-EDF-MP's mailbox).
//! * [`link`]: per-client linked/scheduled pairs and their publication with link swaps
//!   (G-EDF-MP's client state).

pub mod binomial;
pub mod link;
pub mod mailbox;
pub mod release;
