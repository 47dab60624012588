//! PD², the Pfair scheduler of Anderson & Srinivasan ("Early-release fair scheduling", ECRTS
//! 2000; "Mixed Pfair/ERfair scheduling of asynchronous periodic tasks", JCSS 2004), over the
//! Pfair windows of Baruah, Cohen, Plaxton & Varvel (Algorithmica 1996). Time is in slots of
//! one quantum `Q`; a task of WCET `e·Q` and period `p·Q` has weight `wt = e/p` (`0 < wt ≤ 1`)
//! and its `i`-th quantum of work (`i ≥ 1`) is the *subtask* `T_i`, with
//!
//! * pseudo-release `r(T_i) = ⌊(i−1)/wt⌋` and pseudo-deadline `d(T_i) = ⌈i/wt⌉` (its window is
//!   the slots `[r, d)`; job `k ≥ 0` is the subtasks `k·e+1 ..= (k+1)·e`, whose windows lie in
//!   `[k·p, (k+1)·p)`);
//! * b-bit `b(T_i) = ⌈i/wt⌉ − ⌊i/wt⌋` (1 when `T_i`'s window overlaps `T_{i+1}`'s);
//! * group deadline `D(T_i)`: 0 for a light task (`wt < 1/2`); for a heavy one the earliest
//!   time `t ≥ d(T_i)` with `t = d(T_k)` and `b(T_k) = 0`, or `t + 1 = d(T_k)` and
//!   `|w(T_k)| = 3`, for some `k ≥ i` — computed here in the closed form
//!   `⌈⌈⌈i/wt⌉·(1 − wt)⌉ / (1 − wt)⌉` (`d(T_i)` itself when `wt = 1`), which the tests check
//!   against the definition.
//!
//! **Priority** ([`Pd2Key`]): earlier pseudo-deadline first; at equal deadlines `b = 1` before
//! `b = 0`; at equal deadlines and both `b = 1`, the later group deadline first. PD² leaves the
//! remaining ties arbitrary; here they go to the smaller task index. In every slot the `m`
//! highest-priority *eligible* subtasks run: a subtask is eligible once its pseudo-release has
//! passed and its predecessor has executed (Pfair, not the early-release ERfair).
//!
//! PD² is optimal (Anderson & Srinivasan, JCSS 2004): a periodic set of such tasks with
//! `Σ wt ≤ m` is scheduled so that every task's lag, `wt·t − (quanta received in [0, t))`,
//! stays in `(−1, 1)` at every slot boundary, hence every job completes by its period's end.
//! [`Weight::lag_scaled`] gives the lag times `p` as an exact integer.

use rtsched_model::Time;
use std::cmp::{Ordering, Reverse};

/// A task's weight `e/p` in quanta (`1 ≤ e ≤ p`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weight {
    e: u64,
    p: u64,
}

#[inline]
fn sat(x: u128) -> u64 {
    u64::try_from(x).unwrap_or(u64::MAX)
}

impl Weight {
    /// `e/p`, or `None` unless `1 ≤ e ≤ p`.
    pub fn new(e: u64, p: u64) -> Option<Weight> {
        (e >= 1 && e <= p).then_some(Weight { e, p })
    }
    /// Quanta of work per job.
    pub fn e(&self) -> u64 {
        self.e
    }
    /// Quanta per period.
    pub fn p(&self) -> u64 {
        self.p
    }
    /// `wt ≥ 1/2`.
    pub fn heavy(&self) -> bool {
        2 * self.e as u128 >= self.p as u128
    }
    /// `r(T_i) = ⌊(i−1)·p/e⌋` (slots from the task's first release); `i ≥ 1`.
    pub fn release(&self, i: u64) -> u64 {
        sat(i.saturating_sub(1) as u128 * self.p as u128 / self.e as u128)
    }
    /// `d(T_i) = ⌈i·p/e⌉`.
    pub fn deadline(&self, i: u64) -> u64 {
        sat((i as u128 * self.p as u128).div_ceil(self.e as u128))
    }
    /// `b(T_i)`: whether `i·p/e` is not an integer.
    pub fn b_bit(&self, i: u64) -> bool {
        !(i as u128 * self.p as u128).is_multiple_of(self.e as u128)
    }
    /// `D(T_i)`: 0 for a light task; else `⌈⌈d(T_i)·(p−e)/p⌉·p/(p−e)⌉` (`d(T_i)` if `e = p`).
    pub fn group_deadline(&self, i: u64) -> u64 {
        if !self.heavy() {
            return 0;
        }
        let d = (i as u128 * self.p as u128).div_ceil(self.e as u128);
        let (p, q) = (self.p as u128, (self.p - self.e) as u128);
        if q == 0 {
            return sat(d);
        }
        let g = (d * q).div_ceil(p);
        sat((g * p).div_ceil(q))
    }
    /// The PD² priority of `T_i` of task `task`, whose window starts `offset` slots after 0.
    pub fn key(&self, task: u32, i: u64, offset: u64) -> Pd2Key {
        let b = self.b_bit(i);
        Pd2Key {
            deadline: offset.saturating_add(self.deadline(i)),
            b,
            group: if b { offset.saturating_add(self.group_deadline(i)) } else { 0 },
            task,
            subtask: i,
        }
    }
    /// `p · lag` after `t` slots with `alloc` quanta received: `e·t − p·alloc`, exact.
    pub fn lag_scaled(&self, t: u64, alloc: u64) -> i128 {
        self.e as i128 * t as i128 - self.p as i128 * alloc as i128
    }
    /// `−1 < lag < 1`, i.e. `|p · lag| < p`.
    pub fn lag_within_one(&self, t: u64, alloc: u64) -> bool {
        self.lag_scaled(t, alloc).unsigned_abs() < self.p as u128
    }
}

/// A subtask's PD² priority; `Less` = higher priority (deadline, then b-bit, then group
/// deadline when both b-bits are 1, then task index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pd2Key {
    /// Absolute pseudo-deadline, slots.
    pub deadline: u64,
    pub b: bool,
    /// Absolute group deadline when `b`, else 0 (not compared).
    pub group: u64,
    pub task: u32,
    /// `i` of `T_i` (not compared: one eligible subtask per task).
    pub subtask: u64,
}

impl Ord for Pd2Key {
    fn cmp(&self, o: &Pd2Key) -> Ordering {
        (self.deadline, Reverse(self.b), Reverse(self.group), self.task).cmp(&(
            o.deadline,
            Reverse(o.b),
            Reverse(o.group),
            o.task,
        ))
    }
}

impl PartialOrd for Pd2Key {
    fn partial_cmp(&self, o: &Pd2Key) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Reorders `eligible` so that its first `min(m, len)` keys are the subtasks PD² runs in this
/// slot, highest priority first; returns how many.
pub fn select(m: usize, eligible: &mut [Pd2Key]) -> usize {
    let k = m.min(eligible.len());
    if k == 0 {
        return 0;
    }
    if k < eligible.len() {
        eligible.select_nth_unstable(k - 1);
    }
    eligible[..k].sort_unstable();
    k
}

/// The PD² invariant of one slot: with `eligible` the eligible subtasks and `running` the task
/// each CPU runs (`None`: idle), every running task is eligible and on one CPU, no CPU idles
/// while a subtask waits, and no running subtask has lower priority than a waiting one.
pub fn check(slot: u64, eligible: &[Pd2Key], running: &[Option<u32>]) -> Result<(), crate::Violation> {
    let mut run: Vec<&Pd2Key> = Vec::with_capacity(running.len());
    for &r in running.iter().flatten() {
        let Some(k) = eligible.iter().find(|k| k.task == r) else {
            return Err(crate::Violation::Selection(format!(
                "PD2 runs task {r} in slot {slot} but it has no eligible subtask"
            )));
        };
        if run.iter().any(|x| x.task == r) {
            return Err(crate::Violation::Selection(format!("PD2 runs task {r} on two CPUs in slot {slot}")));
        }
        run.push(k);
    }
    let waiting: Vec<&Pd2Key> = eligible.iter().filter(|k| !run.iter().any(|r| r.task == k.task)).collect();
    if let Some(w) = waiting.first() {
        if run.len() < running.len() {
            return Err(crate::Violation::Selection(format!(
                "a CPU idles in slot {slot} while task {} has an eligible subtask",
                w.task
            )));
        }
    }
    for r in &run {
        for w in &waiting {
            if r > w {
                return Err(crate::Violation::Selection(format!(
                    "PD2 runs {r:?} while the higher-priority {w:?} waits in slot {slot}"
                )));
            }
        }
    }
    Ok(())
}

/// `t` ns as whole quanta of `q` ns, if it is a multiple of `q`.
pub fn quanta(t: Time, q: Time) -> Option<u64> {
    (q > 0 && t.is_multiple_of(q)).then(|| t / q)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition of the group deadline (module doc), by search over `k ≥ i`.
    fn group_by_definition(w: &Weight, i: u64) -> u64 {
        if !w.heavy() {
            return 0;
        }
        let mut t = w.deadline(i);
        loop {
            for k in i..i + 4 * w.p() + 4 {
                let dk = w.deadline(k);
                let len = dk - w.release(k);
                if (t == dk && !w.b_bit(k)) || (t + 1 == dk && len == 3) {
                    return t;
                }
            }
            t += 1;
        }
    }

    #[test]
    fn weight_8_11_windows_as_in_anderson_srinivasan() {
        // wt = 8/11: windows [r, d) of T_1..T_8 (job 1); T_3 and T_6 have length 3.
        let w = Weight::new(8, 11).unwrap();
        let got: Vec<(u64, u64, bool, u64)> =
            (1..=8).map(|i| (w.release(i), w.deadline(i), w.b_bit(i), w.group_deadline(i))).collect();
        let want = vec![
            (0, 2, true, 4),
            (1, 3, true, 4),
            (2, 5, true, 8),
            (4, 6, true, 8),
            (5, 7, true, 8),
            (6, 9, true, 11),
            (8, 10, true, 11),
            (9, 11, false, 11),
        ];
        assert_eq!(got, want);
        // The second job repeats the first 11 slots later.
        assert_eq!((w.release(9), w.deadline(9), w.group_deadline(9)), (11, 13, 15));
    }

    #[test]
    fn group_deadline_closed_form_matches_the_definition() {
        for p in 1..=24u64 {
            for e in 1..=p {
                let w = Weight::new(e, p).unwrap();
                for i in 1..=3 * e {
                    assert_eq!(w.group_deadline(i), group_by_definition(&w, i), "wt {e}/{p}, T_{i}");
                    // Windows: consecutive, overlapping by one slot exactly when b = 1.
                    assert_eq!(w.release(i + 1) + u64::from(w.b_bit(i)), w.deadline(i), "wt {e}/{p}, T_{i}");
                }
            }
        }
    }

    #[test]
    fn priority_is_deadline_then_b_then_group_then_task() {
        let k = |deadline, b, group, task| Pd2Key { deadline, b, group, task, subtask: 1 };
        assert!(k(3, false, 0, 9) < k(4, true, 9, 0));
        assert!(k(4, true, 0, 9) < k(4, false, 0, 0));
        assert!(k(4, true, 8, 9) < k(4, true, 5, 0));
        assert!(k(4, true, 5, 0) < k(4, true, 5, 1));
        assert!(k(4, false, 0, 0) < k(4, false, 0, 1));
        let w = Weight::new(8, 11).unwrap();
        // b = 0 compares no group deadline; the key stores 0.
        assert_eq!(w.key(2, 8, 0).group, 0);
        assert_eq!(w.key(2, 3, 11).group, 19);
        let mut keys = [k(5, false, 0, 0), k(4, true, 4, 1), k(4, true, 8, 2), k(6, true, 0, 3)];
        assert_eq!(select(2, &mut keys), 2);
        assert_eq!((keys[0].task, keys[1].task), (2, 1));
    }

    #[test]
    fn lag_is_exact() {
        let w = Weight::new(8, 11).unwrap();
        assert_eq!(w.lag_scaled(11, 8), 0);
        assert_eq!(w.lag_scaled(2, 1), 5); // lag 5/11
        assert!(w.lag_within_one(2, 1) && w.lag_within_one(2, 2));
        assert!(!w.lag_within_one(2, 0), "lag 16/11"); // lag 16/11
        assert!(!w.lag_within_one(0, 1), "lag −1");
        let full = Weight::new(3, 3).unwrap();
        assert!(full.lag_within_one(5, 5) && !full.lag_within_one(5, 4));
    }

    #[test]
    fn check_finds_each_violation() {
        let w = Weight::new(1, 2).unwrap();
        let e = [w.key(0, 1, 0), Weight::new(1, 3).unwrap().key(1, 1, 0)];
        assert!(check(0, &e, &[Some(0)]).is_ok());
        assert!(check(0, &e, &[Some(1)]).unwrap_err().to_string().contains("waits"));
        assert!(check(0, &e, &[Some(0), None]).unwrap_err().to_string().contains("idles"));
        assert!(check(0, &e, &[Some(0), Some(0)]).unwrap_err().to_string().contains("two CPUs"));
        assert!(check(0, &e, &[Some(7)]).unwrap_err().to_string().contains("no eligible"));
        assert_eq!(quanta(3_000_000, 1_000_000), Some(3));
        assert_eq!(quanta(3_000_001, 1_000_000), None);
    }
}
