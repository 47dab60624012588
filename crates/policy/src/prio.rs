//! The priority order, defined once for every policy.
//!
//! A job's priority is the triple `(key, task index, job sequence number)` compared
//! lexicographically; *smaller is higher*. For EDF the key is the absolute deadline, so ties
//! are broken by task index and then by job sequence number (the rule of DESIGN.md). For
//! fixed priorities the key is the task's rank in rate- or deadline-monotonic order (Liu &
//! Layland 1973; Leung & Whitehead 1982), with ties in period/deadline broken by task index.
//! For the G-EDF-like schedulers (G-FL) the key is an exact integer image of the job's priority
//! point ([`PriorityPoints`]).

use rtsched_model::params::{parse_priorities, ParamError};
use rtsched_model::{TaskSet, Time};

/// A job's priority, which also identifies the job (task index, sequence number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Prio {
    /// EDF: absolute deadline (ns). FP: the task's rank (0 = highest).
    pub key: u64,
    pub task: u32,
    pub job: u32,
}

impl Prio {
    /// `true` iff `self` has strictly higher priority than `other`.
    #[inline]
    pub fn higher_than(&self, other: &Prio) -> bool {
        self < other
    }

    /// The order as one integer: `(key, task, job)` packed big-end first, so that
    /// `a < b` iff `a.packed() < b.packed()`.
    #[inline]
    pub fn packed(&self) -> u128 {
        (self.key as u128) << 64 | (self.task as u128) << 32 | self.job as u128
    }
}

/// Fixed-priority order of P-FP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FpOrder {
    /// Shorter period = higher priority.
    RateMonotonic,
    /// Shorter relative deadline = higher priority.
    DeadlineMonotonic,
}

/// How a job's priority key is derived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PriorityRule {
    /// Earliest absolute deadline first.
    Edf,
    /// Fixed task priorities: `ranks[task]` (0 = highest).
    Fixed(Vec<u32>),
}

impl PriorityRule {
    /// The fixed-priority rule of `order` over `ts` (ties by task index).
    pub fn fixed(ts: &TaskSet, order: FpOrder) -> PriorityRule {
        let mut idx: Vec<usize> = (0..ts.len()).collect();
        idx.sort_by_key(|&i| {
            let t = &ts[i];
            (if order == FpOrder::RateMonotonic { t.period } else { t.deadline }, i)
        });
        let mut ranks = vec![0u32; ts.len()];
        for (rank, &i) in idx.iter().enumerate() {
            ranks[i] = rank as u32;
        }
        PriorityRule::Fixed(ranks)
    }

    /// Fixed priorities from text: `dm` (deadline-monotonic), `rm` (rate-monotonic) or a
    /// comma-separated rank per task (smaller = higher, ties by task index), read by the one
    /// reader of every engine's `priorities` ([`rtsched_model::params::parse_priorities`]).
    /// The error is the parameter `priorities`' (name the scheduler with
    /// [`ParamError::in_scheduler`]).
    pub fn fixed_from_text(ts: &TaskSet, text: &str) -> Result<PriorityRule, ParamError> {
        match parse_priorities(text).map_err(|reason| ParamError::new("priorities", reason))? {
            None if text.trim().eq_ignore_ascii_case("rm") => Ok(PriorityRule::fixed(ts, FpOrder::RateMonotonic)),
            None => Ok(PriorityRule::fixed(ts, FpOrder::DeadlineMonotonic)),
            Some(ranks) if ranks.len() != ts.len() => {
                Err(ParamError::new("priorities", format!("{} priorities for {} tasks", ranks.len(), ts.len())))
            }
            Some(ranks) => Ok(PriorityRule::Fixed(ranks)),
        }
    }

    /// The priority of job `job` of `task` whose absolute deadline is `deadline`.
    #[inline]
    pub fn prio(&self, task: u32, job: u32, deadline: Time) -> Prio {
        let key = match self {
            PriorityRule::Edf => deadline,
            PriorityRule::Fixed(r) => r.get(task as usize).copied().unwrap_or(u32::MAX) as u64,
        };
        Prio { key, task, job }
    }
}

/// Job-level priority points of the G-EDF-like schedulers (Erickson & Anderson, ECRTS 2012,
/// §2): job `J` of task `i` released at `r` has priority point `r + Y_i`, earlier = higher, ties
/// as G-EDF's (task index, then job). With `Y_i = D_i` this is EDF; G-FL (the global
/// fair-lateness scheduler) takes `Y_i = D_i − (m−1)/m · C_i`.
///
/// The points are compared exactly: the key is `scale · (r + D_i) + lift_i`, an order-preserving
/// integer image of the point (for G-FL `scale = m` and `lift_i = (m−1)·(C_max − C_i)`, i.e.
/// `m·(r + Y_i)` shifted by the constant `(m−1)·C_max` so that no key is negative), computed in
/// `u128`. [`PriorityPoints::fits`] says whether every key up to a largest absolute deadline fits
/// the `u64` of [`Prio::key`]; a driver checks it once before using the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorityPoints {
    scale: u64,
    lift: Vec<u64>,
}

impl PriorityPoints {
    /// G-FL on `m` CPUs over `ts` (at `m = 1` the keys are the absolute deadlines: EDF).
    pub fn gfl(ts: &TaskSet, m: u32) -> PriorityPoints {
        let m = u64::from(m.max(1));
        let cmax = ts.iter().map(|t| t.wcet).max().unwrap_or(0);
        // C_i <= C_max, and (m−1)·C_max fits: m <= 2^16 and C <= MAX_TIME < 2^47 (checked in fits).
        let lift = ts.iter().map(|t| (m - 1).saturating_mul(cmax - t.wcet)).collect();
        PriorityPoints { scale: m, lift }
    }

    /// Whether every key of a job whose absolute deadline is at most `max_deadline` fits a `u64`
    /// (so that [`PriorityPoints::prio`] is exact).
    pub fn fits(&self, max_deadline: Time) -> bool {
        let lift = self.lift.iter().copied().max().unwrap_or(0);
        lift < u64::MAX && self.scale as u128 * max_deadline as u128 + lift as u128 <= u64::MAX as u128
    }

    /// The priority of job `job` of `task` whose absolute deadline is `deadline` (`r + D_i`).
    #[inline]
    pub fn prio(&self, task: u32, job: u32, deadline: Time) -> Prio {
        let lift = self.lift.get(task as usize).copied().unwrap_or(0);
        let key = self.scale as u128 * deadline as u128 + lift as u128;
        Prio { key: u64::try_from(key).unwrap_or(u64::MAX), task, job }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_break_by_task_then_job() {
        let a = Prio { key: 10, task: 1, job: 5 };
        let b = Prio { key: 10, task: 2, job: 0 };
        let c = Prio { key: 10, task: 1, job: 6 };
        let d = Prio { key: 9, task: 9, job: 9 };
        assert!(a.higher_than(&b) && a.higher_than(&c) && d.higher_than(&a));
        assert!(!a.higher_than(&a));
        for (x, y) in [(a, b), (a, c), (d, a), (b, c)] {
            assert_eq!(x.cmp(&y), x.packed().cmp(&y.packed()));
        }
    }

    #[test]
    fn fixed_priorities_from_text() {
        let ts = TaskSet::from_cdt(&[(1, 9, 10), (1, 5, 20)]).unwrap();
        assert_eq!(PriorityRule::fixed_from_text(&ts, "dm").unwrap(), PriorityRule::Fixed(vec![1, 0]));
        assert_eq!(PriorityRule::fixed_from_text(&ts, " RM ").unwrap(), PriorityRule::Fixed(vec![0, 1]));
        assert_eq!(PriorityRule::fixed_from_text(&ts, "3, 2").unwrap(), PriorityRule::Fixed(vec![3, 2]));
        let e = PriorityRule::fixed_from_text(&ts, "1,2,3").unwrap_err().to_string();
        assert_eq!(e, "parameter priorities: 3 priorities for 2 tasks");
        let e = PriorityRule::fixed_from_text(&ts, "1,-2").unwrap_err().in_scheduler("gfp").to_string();
        assert_eq!(e, "gfp: parameter priorities: task 1: \"-2\" is not a rank (dm, rm or one integer rank per task, smaller = higher)");
        let e = PriorityRule::fixed_from_text(&ts, "edf").unwrap_err().to_string();
        assert_eq!(e, "parameter priorities: dm, rm or one integer rank per task, got \"edf\"");
    }

    #[test]
    fn gfl_points_are_exact_and_edf_on_one_cpu() {
        // Y_i = D_i − (m−1)/m·C_i, m = 3: task 0 (C 3, D 10): 8; task 1 (C 4, D 10): 10 − 8/3 =
        // 7.33…; task 2 (C 1, D 8): 7.33… — a tie with task 1 broken by the task index.
        let ts = TaskSet::from_cdt(&[(3, 10, 10), (4, 10, 10), (1, 8, 8)]).unwrap();
        let g = PriorityPoints::gfl(&ts, 3);
        let (a, b, c) = (g.prio(0, 0, 10), g.prio(1, 0, 10), g.prio(2, 0, 8));
        assert!(b.higher_than(&a) && c.higher_than(&a) && b.higher_than(&c), "{a:?} {b:?} {c:?}");
        assert_eq!(b.key, c.key, "7 1/3 twice: an exact tie");
        // A later release of task 2 by 1 ns is behind task 1.
        assert!(g.prio(1, 0, 10).higher_than(&g.prio(2, 0, 9)));
        let one = PriorityPoints::gfl(&ts, 1);
        for (i, d) in [(0u32, 10u64), (1, 17), (2, 3)] {
            assert_eq!(one.prio(i, 4, d), PriorityRule::Edf.prio(i, 4, d));
        }
        assert!(g.fits(u64::MAX / 3 - 8) && !g.fits(u64::MAX / 3));
    }

    #[test]
    fn rate_and_deadline_monotonic_ranks() {
        let ts = TaskSet::from_cdt(&[(1, 9, 10), (1, 5, 20), (1, 9, 10), (1, 3, 5)]).unwrap();
        assert_eq!(PriorityRule::fixed(&ts, FpOrder::RateMonotonic), PriorityRule::Fixed(vec![1, 3, 2, 0]));
        assert_eq!(PriorityRule::fixed(&ts, FpOrder::DeadlineMonotonic), PriorityRule::Fixed(vec![2, 1, 3, 0]));
    }
}
