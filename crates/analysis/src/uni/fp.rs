//! Uniprocessor preemptive fixed-priority scheduling: exact response-time analysis.
//!
//! Priorities: rate monotonic (shorter period = higher priority; Liu & Layland, JACM 1973) or
//! deadline monotonic (shorter relative deadline = higher priority; Leung & Whitehead,
//! Performance Evaluation 1982); ties go to the lower task index.
//!
//! Response-time analysis (Joseph & Pandya, The Computer Journal 29(5), 1986; Audsley, Burns,
//! Richardson, Tindell & Wellings, Software Engineering Journal 8(5), 1993): for `D_i <= T_i`
//! the worst-case response time is the least fixed point of
//! `R = C_i + sum_{j in hp(i)} ceil(R / T_j) C_j`, iterated in exact integers from
//! `R = C_i + sum_{hp} C_j` and stopped as soon as `R > D_i` (then the task misses).
//!
//! Arbitrary deadlines (`D_i > T_i`): Lehoczky's busy-period extension (Lehoczky, RTSS 1990;
//! Tindell, Burns & Wellings, Real-Time Systems 6(2), 1994): the `q`-th job (`q = 0, 1, ..`)
//! of the level-i busy period completes at the least fixed point `w_q` of
//! `w = (q+1) C_i + sum_{hp} ceil(w / T_j) C_j`, its response time is `w_q - q T_i`, and the
//! busy period ends at the first `q` with `w_q <= (q+1) T_i`; `R_i` is the largest response
//! time seen. Jobs of one task run in release order. For `D_i <= T_i` this is the classic
//! recurrence (the busy period ends at `q = 0` whenever `R_i <= D_i`).
//!
//! No release jitter, no blocking, no overheads; synchronous release is the critical instant.

use super::{params, P};
use crate::{Limits, Verdict};
use rayon::prelude::*;
use rtsched_model::{TaskSet, Time};

/// A fixed-priority assignment rule. Ties are broken by task index (lower index = higher
/// priority).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Priority {
    /// Shorter period first.
    RateMonotonic,
    /// Shorter relative deadline first.
    DeadlineMonotonic,
}

impl Priority {
    /// `"rm"` / `"dm"` (also the long names).
    pub fn from_name(s: &str) -> Option<Priority> {
        match s.to_ascii_lowercase().as_str() {
            "rm" | "rate-monotonic" | "rate_monotonic" | "ratemonotonic" => Some(Priority::RateMonotonic),
            "dm" | "deadline-monotonic" | "deadline_monotonic" | "deadlinemonotonic" => {
                Some(Priority::DeadlineMonotonic)
            }
            _ => None,
        }
    }

    /// Sort key: smaller = higher priority (the index breaks ties).
    pub(crate) fn key(self, p: &P, index: usize) -> (u64, usize) {
        match self {
            Priority::RateMonotonic => (p.t, index),
            Priority::DeadlineMonotonic => (p.d, index),
        }
    }
}

/// Task indices from highest to lowest priority.
pub fn priority_order(ts: &TaskSet, prio: Priority) -> Vec<usize> {
    let ps = params(ts);
    let mut order: Vec<usize> = (0..ps.len()).collect();
    order.sort_by_key(|&i| prio.key(&ps[i], i));
    order
}

/// Outcome of the analysis of one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rt {
    /// Worst-case response time, `<= D`.
    Meets(u64),
    /// Some job's response time exceeds `D`.
    Misses,
    /// A limit was reached first.
    GaveUp,
}

/// Worst-case response time of `task` under interference from `hp` (the higher-priority
/// tasks), exact, bounded by `task.d`, `limits` and the shared `steps` counter.
pub(crate) fn response_time(task: P, hp: &[P], limits: &Limits, steps: &mut u64) -> Rt {
    let c = task.c as u128;
    let d = task.d as u128;
    let ti = task.t as u128;
    let interval = limits.max_interval as u128;
    let hp_sum: u128 = hp.iter().map(|p| p.c as u128).sum();
    let mut worst: u128 = 0;
    let mut w: u128 = c + hp_sum;
    let mut q: u128 = 0;
    loop {
        // Fixed point for job q. Invariant: w <= true w_q (start values are lower bounds).
        loop {
            let offset = q * ti;
            if w > offset + d {
                return Rt::Misses;
            }
            if w > interval {
                return Rt::GaveUp;
            }
            if *steps >= limits.max_steps {
                return Rt::GaveUp;
            }
            *steps += 1;
            let w64 = w as u64; // w <= max_interval < 2^64
            let next = hp.iter().fold((q + 1) * c, |a, p| a.saturating_add(w64.div_ceil(p.t) as u128 * p.c as u128));
            if next == w {
                break;
            }
            w = next;
        }
        worst = worst.max(w - q * ti);
        if w <= (q + 1) * ti {
            return Rt::Meets(worst as u64);
        }
        // The next job completes at least C_i later.
        q += 1;
        w += c;
    }
}

/// Response-time analysis of every task under `prio`.
///
/// Returns the verdict and, per task index, `Some(R_i)` (the exact worst-case response time,
/// `<= D_i`) or `None` (a job misses its deadline, or the analysis of that task gave up).
/// The verdict is `NotSchedulable` if any task provably misses, else `GaveUp` if any analysis
/// hit `limits` (`max_steps` fixed-point iterations per task set, or `max_interval`), else
/// `Schedulable`. Exact for constrained and arbitrary deadlines.
pub fn rta(ts: &TaskSet, prio: Priority, limits: &Limits) -> (Verdict, Vec<Option<Time>>) {
    let ps = params(ts);
    let order = priority_order(ts, prio);
    let mut out = vec![None; ps.len()];
    let mut hp: Vec<P> = Vec::with_capacity(ps.len());
    let (mut miss, mut gave_up) = (false, false);
    let mut steps = 0u64;
    for &i in &order {
        match response_time(ps[i], &hp, limits, &mut steps) {
            Rt::Meets(r) => out[i] = Some(r),
            Rt::Misses => miss = true,
            Rt::GaveUp => gave_up = true,
        }
        hp.push(ps[i]);
    }
    let v = if miss {
        Verdict::NotSchedulable
    } else if gave_up {
        Verdict::GaveUp
    } else {
        Verdict::Schedulable
    };
    (v, out)
}

/// [`rta`] over many task sets in parallel (rayon).
pub fn rta_many(sets: &[TaskSet], prio: Priority, limits: &Limits) -> Vec<(Verdict, Vec<Option<Time>>)> {
    sets.par_iter().map(|ts| rta(ts, prio, limits)).collect()
}

/// One processor's fixed-priority task set, for partitioning. Tasks keep their global index
/// (the priority tie-breaker). Adding a task can only delay tasks of lower priority, so
/// [`FpBin::fits`] re-analyses the candidate and those tasks only.
#[derive(Debug, Clone)]
pub struct FpBin {
    prio: Priority,
    /// `(global index, params)` in priority order, highest first.
    tasks: Vec<(usize, P)>,
}

impl FpBin {
    pub fn new(prio: Priority) -> FpBin {
        FpBin { prio, tasks: Vec::new() }
    }

    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    fn position(&self, index: usize, p: &P) -> usize {
        let key = self.prio.key(p, index);
        self.tasks.partition_point(|(j, q)| self.prio.key(q, *j) < key)
    }

    /// Whether the task with global index `index` and parameters `p` can join with every
    /// task still meeting its deadline.
    pub(crate) fn fits_p(&self, index: usize, p: P, limits: &Limits) -> Verdict {
        let pos = self.position(index, &p);
        let mut all: Vec<P> = self.tasks.iter().map(|(_, q)| *q).collect();
        all.insert(pos, p);
        let mut steps = 0u64;
        let mut gave_up = false;
        for k in pos..all.len() {
            match response_time(all[k], &all[..k], limits, &mut steps) {
                Rt::Meets(_) => {}
                Rt::Misses => return Verdict::NotSchedulable,
                Rt::GaveUp => gave_up = true,
            }
        }
        if gave_up {
            Verdict::GaveUp
        } else {
            Verdict::Schedulable
        }
    }

    pub(crate) fn push_p(&mut self, index: usize, p: P) {
        let pos = self.position(index, &p);
        self.tasks.insert(pos, (index, p));
    }
}
