//! Uniprocessor schedulability tests.
//!
//! * [`edf`]: preemptive EDF on one processor: the utilization / density test, the processor
//!   demand criterion (Baruah, Rosier, Howell, RTS 1990) decided by QPA (Zhang & Burns, IEEE
//!   Transactions on Computers 58(9), 2009) and by brute force over every absolute deadline,
//!   the synchronous busy period, and [`edf::EdfBin`] for incremental admission.
//! * [`fp`]: preemptive fixed priority on one processor: rate- and deadline-monotonic
//!   priorities, exact response-time analysis (Joseph & Pandya, Computer Journal 1986; Audsley,
//!   Burns, Richardson, Tindell, Wellings, Software Engineering Journal 1993) with Lehoczky's
//!   busy-period extension for arbitrary deadlines (Lehoczky, RTSS 1990).
//!
//! Model: independent sporadic tasks `(C, D, T)` with implicit, constrained or arbitrary
//! deadlines, no release jitter, no blocking, zero overheads, integer nanoseconds. Every
//! verdict is exact (`u128` integer arithmetic; rationals only where the interval filter of
//! `rtsched_model::exact` cannot decide). See `docs/analysis-uni.md`.

pub mod edf;
pub mod fp;

use rtsched_model::{Task, TaskSet};

/// The three integer parameters of a task, copied out of [`Task`] so that the hot loops do
/// not touch names. Only built from validated tasks (all parameters in `1..=MAX_TIME`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct P {
    pub c: u64,
    pub d: u64,
    pub t: u64,
}

impl P {
    pub(crate) fn of(task: &Task) -> P {
        P { c: task.wcet, d: task.deadline, t: task.period }
    }
}

pub(crate) fn params(ts: &TaskSet) -> Vec<P> {
    ts.iter().map(P::of).collect()
}
