//! Sequential and concurrent structures the mechanisms are built from, one per file, each with
//! an oracle test against a plain reference (and, where concurrent, a loom model). Lock
//! preconditions are written where they apply, as in Linux's `cpudeadline.c`.
//!
//! * [`binomial`]: the binomial-heap ready queue (seed 001 R1).
//! * [`release`]: the release queue and per-task job book of a release domain.
//! * [`runqueue`]: a per-CPU run-queue ordered by priority rank (push/pull, seed 002 §4).
//! * [`cpumask`]: atomic bitmasks (free CPUs, overloaded run-queues, cpupri's levels).
//! * [`find_cpu`]: the find-CPU contract of push/pull and its variants [`find_linear`],
//!   [`fmask`], [`cpudl`] (Lelli et al., 2011, §4–§5) and [`cpupri`] (Linux SCHED_FIFO).
//! * [`mailbox`]: a bounded multi-producer FIFO with wait-free writers (G-EDF-MP's mailbox).
//! * [`concurrent_heap`]: a concurrent heap with a lock per node (Hunt, Michael, Parthasarathy
//!   & Scott, IPL 1996; seed 001 R2).
//! * [`hierarchical`]: the queue of queues with two-level locking (seed 001 R3).
//! * [`ws_deque`]: a per-CPU priority queue of lock-free work-stealing deques, owner and thief
//!   handles (RTWS's local queues, the RTWS paper §IV, §V Rules B, C, E).

pub mod binomial;
pub mod concurrent_heap;
pub mod cpudl;
pub mod cpumask;
pub mod cpupri;
pub mod find_cpu;
pub mod find_linear;
pub mod fmask;
pub mod hierarchical;
pub mod mailbox;
pub mod release;
pub mod runqueue;
pub mod ws_deque;
