//! The policy crate's one error: a schedule that breaks the invariant a policy promises
//! ([`crate::invariant`]). It is not an error of the policies themselves (they never fail: a
//! violated precondition is ignored, see [`crate::Policy`]) but the finding of the one
//! invariant check, which its callers classify: the simulator reports it as an internal error
//! (a bug), the runtime's priority-inversion monitor measures how long it lasts, and the
//! mechanisms' property tests fail on it.

use crate::Prio;
use std::fmt;

/// What runs, and what the invariant says should run.
///
/// `Display` reads like `G-EDF runs [..] but the highest-priority ready jobs are [..]` or
/// `cpu 1 runs Some(..) but its highest-priority ready job is None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// The global invariant: the jobs `running` (in priority order) are not the `top`
    /// `min(m, r)` highest-priority ready jobs.
    Global { running: Vec<Prio>, top: Vec<Prio> },
    /// The partitioned invariant on `cpu`: it runs `running`, but the highest-priority ready
    /// job of its partition is `best` (`None`: it has none).
    Partitioned { cpu: usize, running: Option<Prio>, best: Option<Prio> },
    /// The invariant of a policy whose priorities change with time (LLF's laxity order, PD²'s
    /// slot order and lag bound: [`crate::llf::check`], [`crate::pfair::check`]), with what broke it.
    Selection(String),
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::Global { running, top } => {
                write!(f, "G-EDF runs {running:?} but the highest-priority ready jobs are {top:?}")
            }
            Violation::Partitioned { cpu, running, best } => {
                write!(f, "cpu {cpu} runs {running:?} but its highest-priority ready job is {best:?}")
            }
            Violation::Selection(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for Violation {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::invariant::{check_global, check_partitioned};

    fn p(key: u64, task: u32) -> Prio {
        Prio { key, task, job: 0 }
    }

    #[test]
    fn violations_are_typed_and_read_as_before() {
        let ready = [p(1, 0), p(2, 1), p(3, 2)];
        let v = check_global(2, &ready, &[Some(p(3, 2)), Some(p(1, 0))]).unwrap_err();
        assert_eq!(v, Violation::Global { running: vec![p(1, 0), p(3, 2)], top: vec![p(1, 0), p(2, 1)] });
        assert_eq!(
            v.to_string(),
            "G-EDF runs [Prio { key: 1, task: 0, job: 0 }, Prio { key: 3, task: 2, job: 0 }] but the \
             highest-priority ready jobs are [Prio { key: 1, task: 0, job: 0 }, Prio { key: 2, task: 1, job: 0 }]"
        );
        let v = check_partitioned(&[0, 1, 0], &ready[2..], &[Some(p(3, 2)), Some(p(3, 2))]).unwrap_err();
        assert_eq!(v, Violation::Partitioned { cpu: 1, running: Some(p(3, 2)), best: None });
        assert_eq!(
            v.to_string(),
            "cpu 1 runs Some(Prio { key: 3, task: 2, job: 0 }) but its highest-priority ready job is None"
        );
    }
}
