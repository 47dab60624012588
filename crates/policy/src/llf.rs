//! LLF, least laxity first (Mok, MIT PhD thesis 1983; optimal on one processor), globally on
//! `m` processors as in Dertouzos & Mok, IEEE TSE 1989: at every decision instant the `m`
//! ready jobs of least laxity run.
//!
//! Rules (docs/simulator.md, "LLF"):
//! * **Laxity** of a ready job at `now`: `deadline − now − left`, where `left` is the job's
//!   remaining worst-case execution (`C − executed`: the scheduler knows the WCET, not the
//!   actual execution time, as for EDZL). Exact, in signed integer ns (a job past its
//!   zero-laxity point has negative laxity).
//! * **Decisions** at every job event (a release, a completion) and at every quantum boundary
//!   `k·Q`. Between decisions the running set is fixed. A running job's laxity is constant
//!   while a waiting job's falls by the time that passes, so pure LLF (decisions whenever two
//!   laxities cross) switches without bound between jobs of equal laxity — the known weakness
//!   of LLF (Mok 1983; Oh & Yang, RTCSA 1998, whose modified LLF defers such "laxity ties").
//!   The quantum bounds it: laxities are compared only at decisions, so a waiting job may fall at
//!   most `Q` (the time since the last decision) below a running one's laxity before it
//!   preempts.
//! * **Ties**: smaller laxity first, then earlier absolute deadline, then smaller task index,
//!   then earlier job (a policy sees one ready job per task, so the last never decides).
//!
//! [`select`] picks the running set; [`check`] is the invariant the simulator checks at every
//! decision, written pairwise (no running job ranks below a waiting one, no CPU idles while a
//! job waits) so that it does not restate `select`.

use rtsched_model::Time;
use std::cmp::Ordering;

/// A ready job as LLF sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LlfJob {
    pub task: u32,
    pub job: u32,
    /// Absolute deadline, ns.
    pub deadline: Time,
    /// Remaining worst-case execution `C − executed`, ns.
    pub left: Time,
}

impl LlfJob {
    /// `deadline − now − left`, exact (negative once the job cannot meet its deadline).
    #[inline]
    pub fn laxity(&self, now: Time) -> i128 {
        self.deadline as i128 - now as i128 - self.left as i128
    }

    /// The LLF order at `now`: `Less` = `self` runs first (laxity, then deadline, then task,
    /// then job).
    #[inline]
    pub fn cmp_at(&self, other: &LlfJob, now: Time) -> Ordering {
        (self.laxity(now), self.deadline, self.task, self.job).cmp(&(
            other.laxity(now),
            other.deadline,
            other.task,
            other.job,
        ))
    }
}

/// Reorders `ready` so that its first `min(m, len)` entries are the jobs LLF runs at `now`, in
/// LLF order (highest priority first); returns how many that is. O(r log r).
pub fn select(m: usize, now: Time, ready: &mut [LlfJob]) -> usize {
    let k = m.min(ready.len());
    if k == 0 {
        return 0;
    }
    if k < ready.len() {
        ready.select_nth_unstable_by(k - 1, |a, b| a.cmp_at(b, now));
    }
    ready[..k].sort_unstable_by(|a, b| a.cmp_at(b, now));
    k
}

/// The LLF invariant at a decision instant `now`: with `ready` every ready job and `running`
/// the `(task, job)` each CPU runs (`None`: idle), (1) every running job is ready and runs on
/// one CPU only, (2) no CPU idles while a ready job waits, and (3) no running job ranks below
/// a waiting one in the LLF order (laxity, deadline, task, job). `Err` says which.
pub fn check(now: Time, ready: &[LlfJob], running: &[Option<(u32, u32)>]) -> Result<(), crate::Violation> {
    let mut run: Vec<&LlfJob> = Vec::with_capacity(running.len());
    for r in running.iter().flatten() {
        let Some(j) = ready.iter().find(|j| (j.task, j.job) == *r) else {
            return Err(crate::Violation::Selection(format!("LLF runs job {}.{} which is not ready", r.0, r.1)));
        };
        if run.iter().any(|x| (x.task, x.job) == *r) {
            return Err(crate::Violation::Selection(format!("LLF runs job {}.{} on two CPUs", r.0, r.1)));
        }
        run.push(j);
    }
    let waiting: Vec<&LlfJob> =
        ready.iter().filter(|j| !run.iter().any(|r| (r.task, r.job) == (j.task, j.job))).collect();
    if let Some(w) = waiting.first() {
        if run.len() < running.len() {
            return Err(crate::Violation::Selection(format!(
                "a CPU idles at {now} ns while job {}.{} waits",
                w.task, w.job
            )));
        }
    }
    for r in &run {
        for w in &waiting {
            if r.cmp_at(w, now) == Ordering::Greater {
                return Err(crate::Violation::Selection(format!(
                    "LLF runs job {}.{} (laxity {} ns, deadline {}) while job {}.{} (laxity {} ns, deadline {}) waits at {now} ns",
                    r.task,
                    r.job,
                    r.laxity(now),
                    r.deadline,
                    w.task,
                    w.job,
                    w.laxity(now),
                    w.deadline
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(task: u32, deadline: Time, left: Time) -> LlfJob {
        LlfJob { task, job: 0, deadline, left }
    }

    #[test]
    fn laxity_is_exact_and_signed() {
        assert_eq!(j(0, 10, 3).laxity(4), 3);
        assert_eq!(j(0, 10, 3).laxity(9), -2);
        assert_eq!(j(0, u64::MAX, 0).laxity(0), u64::MAX as i128);
    }

    #[test]
    fn select_orders_by_laxity_then_deadline_then_task() {
        // Laxities at 0: 5, 2, 2, 2, 7; deadlines 9, 8, 6, 6, 8.
        let mut r = [j(0, 9, 4), j(1, 8, 6), j(4, 6, 4), j(3, 6, 4), j(2, 8, 1)];
        assert_eq!(select(3, 0, &mut r), 3);
        let top: Vec<u32> = r[..3].iter().map(|x| x.task).collect();
        assert_eq!(top, vec![3, 4, 1]);
        assert_eq!(select(9, 0, &mut r), 5);
        assert_eq!(r.iter().map(|x| x.task).collect::<Vec<_>>(), vec![3, 4, 1, 0, 2]);
        assert_eq!(select(0, 0, &mut r), 0);
        assert_eq!(select(2, 0, &mut []), 0);
    }

    #[test]
    fn check_finds_each_violation() {
        let ready = [j(0, 9, 4), j(1, 8, 6), j(2, 8, 1)];
        // Laxities 5, 2, 7: on two CPUs tasks 1 and 0 run.
        assert!(check(0, &ready, &[Some((1, 0)), Some((0, 0))]).is_ok());
        assert!(check(0, &ready, &[Some((0, 0)), Some((1, 0)), Some((2, 0))]).is_ok());
        let e = check(0, &ready, &[Some((2, 0)), Some((1, 0))]).unwrap_err().to_string();
        assert!(e.contains("runs job 2.0 (laxity 7 ns"), "{e}");
        let e = check(0, &ready, &[Some((1, 0)), None]).unwrap_err().to_string();
        assert!(e.contains("idles"), "{e}");
        let e = check(0, &ready, &[Some((1, 0)), Some((1, 0))]).unwrap_err().to_string();
        assert!(e.contains("two CPUs"), "{e}");
        let e = check(0, &ready, &[Some((5, 0)), None]).unwrap_err().to_string();
        assert!(e.contains("not ready"), "{e}");
        // At 4, after task 1 ran [0, 4) on one CPU: its laxity is still 2, task 0's fell to
        // 9 − 4 − 4 = 1, so task 0 must run now.
        let later = [j(0, 9, 4), j(1, 8, 2), j(2, 8, 1)];
        assert!(check(4, &later, &[Some((1, 0))]).unwrap_err().to_string().contains("while job 0.0 (laxity 1 ns"));
        assert!(check(4, &later, &[Some((0, 0))]).is_ok());
    }
}
