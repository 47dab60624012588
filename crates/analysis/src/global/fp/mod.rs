//! Global fixed-priority (G-FP) response-time analysis on `m` identical processors.
//!
//! | [`GfpTest`] | test name (DM / RM) | module | paper |
//! |---|---|---|---|
//! | `Bc` | `gfp_bc` / `gfp_rm_bc` | [`bertogna`] | Bertogna & Cirinei, RTSS 2007, workload with `D_i` (no slack) |
//! | `BcSlack` | `gfp_bc_slack` / `gfp_rm_bc_slack` | [`bertogna`] | the same with the carry-in limited by the slack `D_i - R_i` |
//! | `Guan` | `gfp_guan` / `gfp_rm_guan` | [`guan`] | Guan, Stigge, Yi & Yu, RTSS 2009, limited carry-in |
//!
//! **Model.** Sporadic tasks with constrained deadlines (`C <= D <= T`), integer time (every
//! release at an integer ns), preemptive global fixed-priority scheduling: at every instant the
//! (at most) `m` highest-priority pending jobs run. The common admission of
//! [`super`] applies (any `D > T` or `C > D`, or `U > m`: `NotSchedulable`; the empty set:
//! `Schedulable`; `m = 0`: `NotSchedulable`).
//!
//! **Priorities** ([`Assignment`]): deadline monotonic by default, rate monotonic, or one
//! explicit value per task (smaller = higher priority); ties always go to the lower task
//! index, as in uniprocessor FP ([`crate::uni::fp::Priority`]).
//!
//! **Procedure, common to the three tests.** Tasks are analysed from the highest priority
//! down. For task `τ_k` with the set `hp(k)` of higher-priority tasks, each test gives an
//! interference sum `Ω_k(x)` over `hp(k)`, every term capped at `x - C_k + 1` (the
//! discrete-time cap: a job that misses is blocked for at least `x - C_k + 1` ns of a window
//! of length `x`), and the response-time bound is the least fixed point of
//!
//! ```text
//!     x = C_k + floor( Ω_k(x) / m )
//! ```
//!
//! iterated from `x = C_k` and abandoned once it exceeds `D_k` (then the set is
//! `NotSchedulable`: the analysis of the lower-priority tasks needs `R_k`). The right-hand
//! side is non-decreasing in `x`, so the iteration from a lower bound reaches the least fixed
//! point. Besides the step `x <- f(x)` each step may jump to the least `x + δ` that a
//! piecewise-linear lower bound of `f` on `[x, ∞)` allows to be a fixed point (every term
//! grows at slope at most 1 up to a known level; the jump of the G-EDF RTA,
//! [`super::response_time`]): both are lower bounds of the least fixed point, so the result is
//! exactly the plain iteration's. `Limits::max_steps` bounds the total number of iterations
//! (`GaveUp`), and `Limits::stop` ends the work early.
//!
//! Integer ns throughout (`u64` terms, `u128` sums): exact.
//!
//! **Dominance** (checked by tests): the workload with the slack is never above the one with
//! `D_i`, so `gfp_bc_slack` accepts every set `gfp_bc` accepts and its bounds are never
//! larger; each of Guan's terms is never above the slack-aware Bertogna–Cirinei term
//! ([`guan`] shows it), so `gfp_guan` accepts every set `gfp_bc_slack` accepts (Guan et al.,
//! RTSS 2009, state this dominance over Bertogna & Cirinei's RTA).

use rayon::prelude::*;
use rtsched_model::{ModelError, TaskSet, Time};

use super::{divmod, Admission, System};
use crate::uni::fp::{priority_order, Priority};
use crate::{Limits, Verdict};

pub mod bertogna;
pub mod guan;

/// The G-FP response-time tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GfpTest {
    /// Bertogna & Cirinei, RTSS 2007, workload bound with `D_i` (no slack).
    Bc,
    /// Bertogna & Cirinei, RTSS 2007, workload bound with the response-time bounds `R_i`
    /// of the higher-priority tasks (carry-in limited by the slack `D_i - R_i`).
    BcSlack,
    /// Guan, Stigge, Yi & Yu, RTSS 2009: at most `m - 1` tasks with carry-in.
    Guan,
}

impl GfpTest {
    pub const ALL: [GfpTest; 3] = [GfpTest::Bc, GfpTest::BcSlack, GfpTest::Guan];

    /// The name under deadline-monotonic priorities (`gfp_bc`, `gfp_bc_slack`, `gfp_guan`).
    pub fn name(self) -> &'static str {
        match self {
            GfpTest::Bc => "gfp_bc",
            GfpTest::BcSlack => "gfp_bc_slack",
            GfpTest::Guan => "gfp_guan",
        }
    }

    /// The name under rate-monotonic priorities (`gfp_rm_bc`, ...).
    pub fn rm_name(self) -> &'static str {
        match self {
            GfpTest::Bc => "gfp_rm_bc",
            GfpTest::BcSlack => "gfp_rm_bc_slack",
            GfpTest::Guan => "gfp_rm_guan",
        }
    }

    /// The test and priority rule of a canonical name.
    pub fn from_name(s: &str) -> Option<(GfpTest, Priority)> {
        GfpTest::ALL.into_iter().find_map(|t| {
            if t.name() == s {
                Some((t, Priority::DeadlineMonotonic))
            } else if t.rm_name() == s {
                Some((t, Priority::RateMonotonic))
            } else {
                None
            }
        })
    }
}

/// A fixed-priority assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assignment {
    /// Deadline or rate monotonic (ties: lower task index first).
    Rule(Priority),
    /// One value per task, in task order; smaller = higher priority, ties: lower index first.
    Explicit(Vec<u64>),
}

impl Default for Assignment {
    fn default() -> Self {
        Assignment::Rule(Priority::DeadlineMonotonic)
    }
}

impl Assignment {
    /// Priorities from text, as `rtsched analyze --priorities` and `rtsched.analyze(...,
    /// priorities=...)` take them: `dm`, `rm` or one integer rank per task, comma-separated
    /// (smaller = higher, ties to the lower task index). Read by the one reader of every
    /// engine's `priorities` (`rtsched_policy::PriorityRule::fixed_from_text`), so a bad one
    /// reads as the simulator's and the runtime's parameter does: `parameter priorities: task 1:
    /// "x" is not a rank (...)`.
    pub fn from_text(ts: &TaskSet, text: &str) -> Result<Assignment, ModelError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "dm" => return Ok(Assignment::Rule(Priority::DeadlineMonotonic)),
            "rm" => return Ok(Assignment::Rule(Priority::RateMonotonic)),
            _ => {}
        }
        match rtsched_policy::PriorityRule::fixed_from_text(ts, text)? {
            rtsched_policy::PriorityRule::Fixed(ranks) => {
                Ok(Assignment::Explicit(ranks.into_iter().map(u64::from).collect()))
            }
            rtsched_policy::PriorityRule::Edf => {
                Err(ModelError::field("priorities", "fixed priorities expected".to_string()))
            }
        }
    }

    /// Task indices from the highest priority to the lowest; an explicit assignment must
    /// give exactly one value per task.
    pub fn order(&self, ts: &TaskSet) -> Result<Vec<usize>, ModelError> {
        match self {
            Assignment::Rule(p) => Ok(priority_order(ts, *p)),
            Assignment::Explicit(v) => {
                if v.len() != ts.len() {
                    return Err(ModelError::field(
                        "priorities",
                        format!("{} priorities given for {} tasks (one per task)", v.len(), ts.len()),
                    ));
                }
                let mut order: Vec<usize> = (0..v.len()).collect();
                order.sort_by_key(|&i| (v[i], i));
                Ok(order)
            }
        }
    }
}

/// The answer of a G-FP test: the verdict and, per task index, the response-time bound
/// (`Some(R_i)`, `R_i <= D_i`) or `None` (the bound exceeds `D_i`, the analysis gave up, or a
/// higher-priority task already failed, so the task was not analysed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GfpResult {
    pub verdict: Verdict,
    pub response_times: Vec<Option<Time>>,
}

/// Runs one G-FP test under a priority assignment. `Err` only for an explicit assignment of
/// the wrong length.
pub fn analyze(t: GfpTest, ts: &TaskSet, m: u32, prio: &Assignment, limits: &Limits) -> Result<GfpResult, ModelError> {
    let order = prio.order(ts)?;
    let n = ts.len();
    let sys = match System::admit(ts, m) {
        Admission::Decided(v) => {
            // Decided without analysis: the empty set, or a set outside the model.
            return Ok(GfpResult { verdict: v, response_times: vec![None; n] });
        }
        Admission::Run(s) => s,
    };
    Ok(run(t, &sys, &order, limits))
}

/// [`analyze`] under deadline-monotonic or rate-monotonic priorities: the verdict only.
pub fn test(t: GfpTest, ts: &TaskSet, m: u32, prio: Priority, limits: &Limits) -> Verdict {
    analyze(t, ts, m, &Assignment::Rule(prio), limits).map(|r| r.verdict).unwrap_or(Verdict::NotSchedulable)
}

/// [`test`] over many task sets in parallel (rayon); results in input order.
pub fn test_many(t: GfpTest, sets: &[TaskSet], m: u32, prio: Priority, limits: &Limits) -> Vec<Verdict> {
    sets.par_iter().map(|ts| test(t, ts, m, prio, limits)).collect()
}

/// The higher-priority tasks of the task under analysis, in priority order, as flat arrays.
pub(crate) struct Hp {
    pub c: Vec<u64>,
    pub t: Vec<u64>,
    pub inv: Vec<f64>,
    /// The response-time bound each test's workload uses: `D_i` for `Bc`, else `R_i`.
    pub r: Vec<u64>,
}

fn run(t: GfpTest, sys: &System, order: &[usize], limits: &Limits) -> GfpResult {
    let n = sys.n();
    let mut response_times: Vec<Option<Time>> = vec![None; n];
    let mut hp =
        Hp { c: Vec::with_capacity(n), t: Vec::with_capacity(n), inv: Vec::with_capacity(n), r: Vec::with_capacity(n) };
    let mut steps: u64 = 0;
    let mut gaps: Vec<u64> = Vec::with_capacity(n);
    let mut scratch: Vec<guan::Pair> = Vec::with_capacity(n);
    for &k in order {
        let (ck, dk) = (sys.c[k], sys.d[k]);
        let r = match t {
            GfpTest::Bc | GfpTest::BcSlack => {
                least_fixed_point(ck, dk, sys.m, &mut steps, limits, &mut gaps, |x, g| {
                    bertogna::interference(&hp, x, x - ck + 1, g)
                })
            }
            GfpTest::Guan => least_fixed_point(ck, dk, sys.m, &mut steps, limits, &mut gaps, |x, g| {
                guan::interference(&hp, sys.m, x, x - ck + 1, g, &mut scratch)
            }),
        };
        let r = match r {
            Fixed::Met(r) => r,
            Fixed::Missed => return GfpResult { verdict: Verdict::NotSchedulable, response_times },
            Fixed::GaveUp => return GfpResult { verdict: Verdict::GaveUp, response_times },
        };
        response_times[k] = Some(r);
        hp.c.push(ck);
        hp.t.push(sys.t[k]);
        hp.inv.push(1.0 / sys.t[k] as f64);
        hp.r.push(if t == GfpTest::Bc { dk } else { r });
    }
    GfpResult { verdict: Verdict::Schedulable, response_times }
}

/// Outcome of one task's fixed-point iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fixed {
    /// The least fixed point, `<= D_k`.
    Met(u64),
    /// The least fixed point exceeds `D_k`.
    Missed,
    /// `Limits` reached first.
    GaveUp,
}

/// The least fixed point of `x = C_k + floor(Ω(x) / m)` from `x = C_k`, bounded by `D_k`.
///
/// `omega(x, gaps)` returns `Ω(x)`, the sum of terms each capped at `x - C_k + 1`, and pushes
/// for each term the amount `g` by which it grows at least at slope 1 (`term(x + δ) >=
/// term(x) + min(δ, g)` for every `δ >= 0`); `Ω` must be non-decreasing in `x`.
pub(crate) fn least_fixed_point(
    ck: u64,
    dk: u64,
    m: u64,
    steps: &mut u64,
    limits: &Limits,
    gaps: &mut Vec<u64>,
    mut omega: impl FnMut(u64, &mut Vec<u64>) -> u128,
) -> Fixed {
    let m = m as u128;
    let mut x = ck;
    loop {
        *steps += 1;
        if limits.exhausted(*steps) {
            return Fixed::GaveUp;
        }
        gaps.clear();
        let s0 = omega(x, gaps);
        let next = ck as u128 + s0 / m;
        if next <= x as u128 {
            return Fixed::Met(x); // f(x) <= x from below: x is the least fixed point
        }
        // f(x) > x: Ω(x) >= m (x - C_k + 1). The plain step when it covers a good part of the
        // way to D_k, else the least δ the lower bound allows (see the module doc).
        let cap = (x - ck + 1) as u128;
        let nx = if (next - x as u128) * 8 >= (dk as u128).saturating_sub(x as u128) {
            next
        } else {
            next.max(x as u128 + super::response_time::least_delta(s0 - m * cap, m, gaps))
        };
        if nx > dk as u128 {
            return Fixed::Missed;
        }
        x = nx as u64;
    }
}

/// A term `min(w, cap)` of an interference sum whose workload `w` grows at slope 1 for
/// `ramp` more ns: the term and its growth allowance (see [`least_fixed_point`]).
#[inline(always)]
pub(crate) fn capped(w: u64, ramp: u64, cap: u64) -> (u64, u64) {
    let term = w.min(cap);
    // term(x + δ) >= min(w + min(δ, ramp), cap + δ) >= term + min(δ, w + ramp - term).
    (term, (w + ramp) - term)
}

/// `floor(x / t) C + min(x mod t, C)` and its ramp (`C - x mod t` while `x mod t < C`, else
/// 0): the workload of jobs of execution `C` released every `t` in a window whose first job
/// starts at its beginning (the shape of every workload term here).
#[inline(always)]
pub(crate) fn staircase(x: u64, c: u64, t: u64, inv_t: f64) -> (u64, u64) {
    let (q, rem) = divmod(x, t, inv_t);
    if rem < c {
        (q * c + rem, c - rem)
    } else {
        (q * c + c, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain iteration `x <- f(x)` from `C_k`.
    fn plain(ck: u64, dk: u64, m: u64, f: &dyn Fn(u64) -> u128) -> Option<u64> {
        let mut x = ck;
        loop {
            let next = ck as u128 + f(x) / m as u128;
            if next <= x as u128 {
                return Some(x);
            }
            if next > dk as u128 {
                return None;
            }
            x = next as u64;
        }
    }

    /// The jump never passes the least fixed point: random staircase workloads (the shape of
    /// every term) give the plain iteration's answer.
    #[test]
    fn accelerated_fixed_point_equals_the_plain_iteration() {
        let mut s: u64 = 0x1234_5678_9abc_def1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut met = 0;
        for _ in 0..20_000 {
            let m = next() % 4 + 1;
            let n = (next() % 8) as usize;
            let scale = [1u64, 3, 1000][(next() % 3) as usize];
            let hp: Vec<(u64, u64, u64)> = (0..n)
                .map(|_| {
                    let t = (next() % 20 + 1) * scale;
                    let c = (next() % (t / scale) + 1) * scale;
                    let off = next() % (t + 1);
                    (c, t, off)
                })
                .collect();
            let ck = (next() % 10 + 1) * scale;
            let dk = ck + next() % (30 * scale);
            let f = |x: u64| -> u128 {
                hp.iter().map(|&(c, t, off)| staircase(x + off, c, t, 1.0 / t as f64).0.min(x - ck + 1) as u128).sum()
            };
            let want = plain(ck, dk, m, &f);
            let mut gaps = Vec::new();
            let mut steps = 0;
            let got = least_fixed_point(ck, dk, m, &mut steps, &Limits::default(), &mut gaps, |x, g| {
                hp.iter()
                    .map(|&(c, t, off)| {
                        let (w, ramp) = staircase(x + off, c, t, 1.0 / t as f64);
                        let (term, gap) = capped(w, ramp, x - ck + 1);
                        if gap > 0 {
                            g.push(gap);
                        }
                        term as u128
                    })
                    .sum()
            });
            let got = match got {
                Fixed::Met(r) => Some(r),
                Fixed::Missed => None,
                Fixed::GaveUp => panic!("gave up"),
            };
            assert_eq!(got, want, "m {m} ck {ck} dk {dk} hp {hp:?}");
            met += got.is_some() as u32;
        }
        assert!(met > 2_000, "too few fixed points: {met}");
    }

    #[test]
    fn explicit_assignment_orders_by_value_then_index_and_checks_its_length() {
        let ts = TaskSet::from_cdt(&[(1, 10, 10), (1, 5, 5), (1, 7, 7)]).unwrap();
        assert_eq!(Assignment::Explicit(vec![3, 1, 1]).order(&ts).unwrap(), vec![1, 2, 0]);
        assert_eq!(Assignment::default().order(&ts).unwrap(), vec![1, 2, 0]);
        assert_eq!(Assignment::Rule(Priority::RateMonotonic).order(&ts).unwrap(), vec![1, 2, 0]);
        let e = Assignment::Explicit(vec![1, 2]).order(&ts).unwrap_err();
        assert!(e.to_string().contains("2 priorities given for 3 tasks"), "{e}");
    }
}
