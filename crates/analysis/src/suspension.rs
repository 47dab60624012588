//! Suspension-oblivious analysis of self-suspending tasks (docs/analysis-uni.md and
//! docs/analysis-global.md, "Self-suspending tasks").
//!
//! Every test of rtsched was written for tasks that never suspend. A set with self-suspending
//! tasks (`rtsched_model::task::Segments`) is analysed *suspension-obliviously*: each task's
//! suspension is counted as execution, `C'_i = C_i + S_i`, and the test runs on that set.
//! This is sound for every work-conserving scheduler the tests cover, uniprocessor and global
//! (Chen et al., "Many suspensions, many problems", Real-Time Systems 2019, §4.1 "suspension-
//! oblivious analysis"; for global scheduling, Liu & Anderson's and Devi's analyses rest on the
//! same conversion): a schedule of the suspending jobs is one of the converted jobs in which a
//! job idles a while instead of executing, which can only lower its interference on others.
//!
//! One test is suspension-aware instead: `la` (Liu & Anderson, ECRTS 2013,
//! [`crate::global::la`]) analyses the suspensions themselves, and `gedf`, which tries LA
//! last, tries it both ways after its oblivious members ([`crate::global::combined_of`]; the report says
//! `"suspension": "aware"` for `la` and `"oblivious+aware"` for `gedf`). Overhead-aware
//! verdicts stay oblivious: the inflation rules of [`crate::overheads`] work on `C' = C + S`.
//!
//! The conversion happens here, in one place: [`crate::report`] (every other named test, the
//! report's JSON says `"suspension": "oblivious"`), [`crate::placing::place`] and the
//! overhead-aware verdicts and placements ([`crate::overheads`]) call [`oblivious`] before
//! anything else. A set without suspension is passed through unchanged (no copy).

use rtsched_model::{ModelError, TaskSet, MAX_TIME};
use std::borrow::Cow;

/// The JSON value of a verdict's `suspension` key when the rule was applied.
pub const OBLIVIOUS: &str = "oblivious";

/// The JSON value of the `suspension` key of `la`, which analyses the suspensions themselves
/// (Liu & Anderson, ECRTS 2013: [`crate::global::la`]).
pub const AWARE: &str = "aware";

/// The JSON value of the `suspension` key of `gedf`: its members run on the oblivious view,
/// and LA (the last member) suspension-aware as well.
pub const MIXED: &str = "oblivious+aware";

/// One line for reports: what was done and where it comes from.
pub const REASON: &str = "suspension-oblivious: each task's suspension S counted as execution, C' = C + S \
     (Chen et al., Real-Time Systems 2019, section 4.1)";

/// Each task's suspension bound `S_i` ([`rtsched_model::Task::suspension`]), or an empty list
/// when no task suspends (the form [`crate::global::la::test_with_suspensions`] takes).
pub fn bounds(ts: &TaskSet) -> Vec<rtsched_model::Time> {
    if applies(ts) {
        ts.iter().map(|t| t.suspension()).collect()
    } else {
        Vec::new()
    }
}

/// Whether any task of `ts` self-suspends (the rule then applies).
pub fn applies(ts: &TaskSet) -> bool {
    ts.iter().any(|t| t.is_self_suspending())
}

/// The suspension-oblivious view of `ts`: `ts` itself when no task suspends, otherwise the
/// set with `C'_i = C_i + S_i` and no segments. An error when some `C_i + S_i` exceeds
/// [`MAX_TIME`] (naming the task and the field `segments`); such a task has `C + S > T` and is
/// unschedulable by every scheduler (a job occupies `C + S` of wall time at least).
pub fn oblivious(ts: &TaskSet) -> Result<Cow<'_, TaskSet>, ModelError> {
    if !applies(ts) {
        return Ok(Cow::Borrowed(ts));
    }
    let tasks = ts
        .iter()
        .enumerate()
        .map(|(i, t)| t.suspension_oblivious().map_err(|e| e.in_task(i, t.name.as_deref())))
        .collect::<Result<Vec<_>, _>>()?;
    debug_assert!(tasks.iter().all(|t| t.wcet <= MAX_TIME));
    let view = TaskSet::new(tasks)?;
    // The same set: its per-task priorities (if its file gave them) stay.
    Ok(Cow::Owned(match ts.priorities() {
        Some(p) => view.with_priorities(p.to_vec())?,
        None => view,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::task::{Segments, SuspensionBound};
    use rtsched_model::Task;

    #[test]
    fn borrowed_without_suspension_inflated_with_it() {
        let plain = TaskSet::from_ct(&[(1, 4), (2, 8)]).unwrap();
        assert!(matches!(oblivious(&plain).unwrap(), Cow::Borrowed(_)));
        let s = Task::implicit(3, 10)
            .unwrap()
            .with_segments(Segments::new(vec![1, 2], vec![SuspensionBound { min: 1, max: 4 }]).unwrap())
            .unwrap();
        let ts = TaskSet::new(vec![Task::implicit(1, 4).unwrap(), s]).unwrap();
        let o = oblivious(&ts).unwrap();
        assert_eq!(o.as_ref(), &TaskSet::from_cdt(&[(1, 4, 4), (7, 10, 10)]).unwrap());
        let big = Task::new(MAX_TIME - 1, MAX_TIME, MAX_TIME)
            .unwrap()
            .with_segments(Segments::new(vec![1, MAX_TIME - 2], vec![SuspensionBound { min: 0, max: 9 }]).unwrap())
            .unwrap();
        let e = oblivious(&TaskSet::new(vec![big]).unwrap()).unwrap_err();
        assert!(e.to_string().starts_with("task 0: field 'segments'"), "{e}");
    }
}
