//! The vocabulary shared by the recording and the replay of the push/pull cost experiment:
//! a [`Recording`] is the sequence of plugin calls ([`Call`]) that `vtime::record` makes
//! while it runs a task set in virtual time, and that `replay::replay` times call by call;
//! both drive the same [`mechanism`] (the plugin at time zero with 3 push attempts) over the
//! find-CPU structure they are given.

use super::PushPull;
use crate::mechanism::TaskParams;
use crate::queue::find_cpu::FindCpu;
use crate::RunError;
use rtsched_policy::PriorityRule;

/// What a worker stopped doing, as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrevKind {
    Idle,
    Preempted,
    Completed,
}

/// One recorded plugin call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// Release domain `cpu`'s handler at `now`.
    Release { cpu: u32, now: u64 },
    /// CPU `cpu`'s scheduler after `prev` (about the job it ran), which returned `got` (task, job).
    Schedule { cpu: u32, prev: PrevKind, got: Option<(u32, u32)> },
}

/// A recorded run.
#[derive(Debug, Clone)]
pub struct Recording {
    pub m: usize,
    pub tasks: Vec<TaskParams>,
    pub rule: PriorityRule,
    pub horizon: u64,
    pub calls: Vec<Call>,
    /// Jobs released, and instants at which the global invariant was checked.
    pub jobs: u64,
    pub checks: u64,
    /// Every completion: (task, job, time).
    pub completed: Vec<(u32, u32, u64)>,
}

/// The mechanism of a recording or replay over `find` (time zero at 0, 3 push attempts).
pub(super) fn mechanism<F: FindCpu>(
    tasks: &[TaskParams],
    m: usize,
    rule: &PriorityRule,
    horizon: u64,
    find: F,
) -> Result<PushPull<F>, RunError> {
    PushPull::new("push-pull", tasks, m, rule, 0, horizon, find, 3)
}
