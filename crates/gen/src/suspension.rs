//! Self-suspension added to generated task sets (the segmented model, `rtsched_model::task::
//! Segments`; docs/generators.md, "Self-suspension").
//!
//! The construction follows the evaluations of the self-suspension literature (e.g. Huang,
//! Chen, Zhou & Liu, DAC 2015, and the experiments reviewed by Chen et al., "Many suspensions,
//! many problems", Real-Time Systems 2019): a task's total suspension is a fraction of its
//! slack, `S_i = R_i · (T_i − C_i)`, with `R_i` fixed or drawn uniformly from a range (the
//! papers' "short", "moderate" and "long" suspensions are `0.01–0.1`, `0.1–0.3`, `0.3–0.6`).
//! Here, per task:
//!
//! 1. `R_i` is `R` (a fixed ratio) or uniform on `[lo, hi]` (a range);
//! 2. `S_i = round(R_i · (T_i − C_i))` ns (nearest, ties away from zero; 0 when `C_i >= T_i`);
//! 3. the task gets `k_i = min(K, C_i, S_i + 1)` execution segments (`K` the requested count,
//!    so that every segment is at least 1 ns); `k_i < 2` leaves the task without suspension;
//! 4. `C_i` is split into `k_i` positive integer parts and `S_i` into `k_i − 1`, each uniformly
//!    over the compositions (distinct cut points drawn uniformly, Floyd's algorithm), so that
//!    `E[part] = C_i / k_i` and the parts sum exactly to `C_i` and `S_i`.
//!
//! Suspensions get no lower bound. The draws come from their own ChaCha8 stream per task set
//! ([`crate::rng`], purpose `Suspension`): the set's tasks, utilizations and periods are those
//! the same seed gives without suspension.

use crate::rng::{below, stream, uniform, Purpose};
use rand::RngCore;
use rtsched_model::task::{Segments, SuspensionBound, MAX_SEGMENTS};
use rtsched_model::{ModelError, Task, TaskSet, Time};
use std::collections::BTreeSet;

/// How suspension is added: the ratio `R` of a task's slack `T − C` it suspends for (fixed,
/// `lo == hi`, or uniform on `[lo, hi]`), and the number `K` of execution segments per task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SuspensionGen {
    pub lo: f64,
    pub hi: f64,
    pub segments: usize,
}

impl SuspensionGen {
    /// `"R"` (a fixed ratio) or `"LO-HI"` (uniform), each in `[0, 1]`, with `segments` execution
    /// segments per task (`2 ..= 4096`). Errors name `suspension_ratio` or `suspension_segments`.
    pub fn parse(ratio: &str, segments: usize) -> Result<SuspensionGen, ModelError> {
        let bad = |why: String| ModelError::field("suspension_ratio", why);
        let num = |s: &str| -> Result<f64, ModelError> {
            s.trim().parse::<f64>().map_err(|_| bad(format!("expected a number in [0, 1] or LO-HI, got {:?}", ratio)))
        };
        let (lo, hi) = match ratio.trim().split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let r = num(ratio)?;
                (r, r)
            }
        };
        let g = SuspensionGen { lo, hi, segments };
        g.validate()?;
        Ok(g)
    }

    /// `0 <= lo <= hi <= 1` (finite) and `2 <= segments <= MAX_SEGMENTS`.
    pub fn validate(&self) -> Result<(), ModelError> {
        let ok = |x: f64| x.is_finite() && (0.0..=1.0).contains(&x);
        if !ok(self.lo) || !ok(self.hi) || self.lo > self.hi {
            return Err(ModelError::field(
                "suspension_ratio",
                format!(
                    "the ratio of the slack T - C a task suspends for must be in [0, 1] (LO <= HI), got {}-{}",
                    self.lo, self.hi
                ),
            ));
        }
        if self.segments < 2 || self.segments > MAX_SEGMENTS {
            return Err(ModelError::field(
                "suspension_segments",
                format!(
                    "execution segments per task must be in 2..={MAX_SEGMENTS} (one suspension between two), got {}",
                    self.segments
                ),
            ));
        }
        Ok(())
    }
}

/// `s` distinct integers drawn uniformly from `1..=n` (every `s`-subset equally likely;
/// Floyd's algorithm), sorted. `s <= n`.
fn distinct_cuts<R: RngCore>(rng: &mut R, n: u64, s: usize) -> Vec<u64> {
    let mut set = BTreeSet::new();
    for j in (n - s as u64 + 1)..=n {
        let t = 1 + below(rng, j);
        if !set.insert(t) {
            set.insert(j);
        }
    }
    set.into_iter().collect()
}

/// `total` split into `parts` positive integers, uniformly over the compositions.
/// `1 <= parts <= total`.
fn split<R: RngCore>(rng: &mut R, total: Time, parts: usize) -> Vec<Time> {
    let cuts = distinct_cuts(rng, total - 1, parts - 1);
    let mut out = Vec::with_capacity(parts);
    let mut prev = 0;
    for c in cuts.into_iter().chain(std::iter::once(total)) {
        out.push(c - prev);
        prev = c;
    }
    out
}

/// One task with suspension added (see the module's rules), drawing from `rng`.
pub fn suspend_task<R: RngCore>(t: &Task, g: &SuspensionGen, rng: &mut R) -> Result<Task, ModelError> {
    let r = if g.lo == g.hi { g.lo } else { uniform(rng, g.lo, g.hi) };
    let slack = t.period.saturating_sub(t.wcet);
    // r <= 1, so S <= slack <= 2^53: the product and its rounding are exact enough and bounded.
    let s = ((r * slack as f64).round() as Time).min(slack);
    let k = g.segments.min(t.wcet.min(MAX_SEGMENTS as Time) as usize).min((s.min(MAX_SEGMENTS as Time) + 1) as usize);
    let plain = Task { segments: None, ..t.clone() };
    if k < 2 {
        return Ok(plain);
    }
    let exec = split(rng, t.wcet, k);
    let susp = split(rng, s, k - 1).into_iter().map(|max| SuspensionBound { min: 0, max }).collect();
    plain.with_segments(Segments::new(exec, susp)?)
}

/// Task set `ts` (number `index` of stream `seed`) with suspension added to every task; a pure
/// function of its arguments. Existing segments are replaced.
pub fn add_suspension(ts: &TaskSet, g: &SuspensionGen, seed: u64, index: u64) -> Result<TaskSet, ModelError> {
    g.validate()?;
    let mut rng = stream(seed, index, Purpose::Suspension);
    let tasks = ts
        .iter()
        .enumerate()
        .map(|(i, t)| suspend_task(t, g, &mut rng).map_err(|e| e.in_task(i, t.name.as_deref())))
        .collect::<Result<Vec<_>, _>>()?;
    TaskSet::new(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_bounds() {
        assert_eq!(SuspensionGen::parse("0.2", 2).unwrap(), SuspensionGen { lo: 0.2, hi: 0.2, segments: 2 });
        assert_eq!(SuspensionGen::parse("0.1-0.3", 3).unwrap(), SuspensionGen { lo: 0.1, hi: 0.3, segments: 3 });
        for (r, k, field) in [
            ("1.5", 2, "suspension_ratio"),
            ("-0.1", 2, "suspension_ratio"),
            ("0.3-0.1", 2, "suspension_ratio"),
            ("x", 2, "suspension_ratio"),
            ("nan", 2, "suspension_ratio"),
            ("0.2", 1, "suspension_segments"),
            ("0.2", MAX_SEGMENTS + 1, "suspension_segments"),
        ] {
            let e = SuspensionGen::parse(r, k).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{r} {k}: {e}");
        }
    }

    #[test]
    fn splits_are_exact_and_positive() {
        let mut rng = stream(5, 0, Purpose::Suspension);
        for (total, parts) in [(1, 1), (2, 2), (10, 10), (10, 3), (1 << 53, 4096), (7, 1)] {
            let v = split(&mut rng, total, parts);
            assert_eq!(v.len(), parts);
            assert_eq!(v.iter().sum::<Time>(), total);
            assert!(v.iter().all(|&x| x >= 1));
        }
    }

    #[test]
    fn small_tasks_get_fewer_segments() {
        let mut rng = stream(1, 0, Purpose::Suspension);
        let g = SuspensionGen { lo: 0.5, hi: 0.5, segments: 8 };
        // C = 3: at most 3 execution segments; S = round(0.5 * 2) = 1: at most 2.
        let t = suspend_task(&Task::implicit(3, 5).unwrap(), &g, &mut rng).unwrap();
        assert_eq!(t.exec_segments().len(), 2);
        assert_eq!(t.suspension(), 1);
        // No slack: no suspension.
        let t = suspend_task(&Task::implicit(5, 5).unwrap(), &g, &mut rng).unwrap();
        assert!(!t.is_self_suspending());
        let t = suspend_task(&Task::implicit(1, 5).unwrap(), &g, &mut rng).unwrap();
        assert!(!t.is_self_suspending(), "C = 1 ns has one execution segment");
    }
}
