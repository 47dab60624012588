//! LA: Liu & Anderson's suspension-aware ("s-aware") G-EDF test.
//!
//! Cong Liu and James H. Anderson, "Suspension-aware analysis for hard real-time
//! multiprocessor scheduling", ECRTS 2013. The test extends Baruah's interval argument
//! (RTSS 2007, [`super::baruah`]) to sporadic tasks that may suspend themselves for at most
//! `S_i` time units per job. The numbers below were checked against SchedCAT's published
//! implementation (brandenburg/schedcat, `native/src/edf/la.cpp`), which is the one that
//! SchedCAT's default G-EDF test calls; every line here is our own.
//!
//! For a task `τ_l`, a suspension length `s` in `0..=S_l` and an integer `A >= 0` (the busy
//! prefix of the problem window `[r, r + A + D_l)` ending at `τ_l`'s missed deadline), with
//! `t = A + D_l` and the hard real-time tardiness thresholds `λ_i = 0`:
//!
//! ```text
//!     cap      = t - C_l - s + 1
//!     dbf_i(t) = max(0, floor((t - D_i)/T_i) + 1) C_i                (no carry-in)
//!     δ_i(t)   = floor(t/T_i) C_i + min(C_i, t mod T_i)               (carry-in)
//!     i != l:  I_nc,i = min(dbf_i(t), cap),        I_c,i = min(δ_i(t), cap)
//!     i  = l:  I_nc,l = min(dbf_l(t) - C_l, max(A, t - T_l)),
//!              I_c,l  = min(δ_l(t) - C_l,   max(A, t - T_l))
//! ```
//!
//! A task that suspends (`S_i > 0`) contributes `max(I_nc,i, I_c,i)`, a computational task
//! `I_nc,i`, and the `m - 1` largest differences `I_c,i - I_nc,i` of the computational tasks
//! are added. `τ_l` is schedulable if for every `s` and every test point `A`
//!
//! ```text
//!     Σ + (sum of the m-1 largest differences)  <=  m (t - C_l - s).
//! ```
//!
//! The test points are the `A` at which some `dbf_i(A + D_l)` steps (`A = D_i - D_l + j T_i
//! >= 0`), up to the bound `A <= (m (C_l + s) + Σ_i C_i) / (m - U)` (rounded up), which
//! needs `U < m` strictly: a set with `U = m` is answered `NotSchedulable`, as SchedCAT does.
//!
//! **One length suffices.** The paper (and SchedCAT) checks every integer `s` in `0..=S_l`,
//! each up to its own bound on `A`. Checking `s = S_l` alone, up to its bound (the largest),
//! gives the same verdict: fix `A` (so `t`), write `x = t - C_l - s`; for one choice of the
//! `m - 1` carry-in tasks the left-hand side is a constant plus the sum over `i != l` of
//! `min(v_i, x + 1)` (`v_i` one of `dbf_i(t)`, `δ_i(t)`, their maximum: none depends on `s`),
//! so `g(x) = LHS - m x` is concave in `x`. If `g` rose from `x` to `x + 1`, at least `m + 1`
//! terms would still grow, i.e. equal `x + 1` at `x`, and `LHS >= (m + 1)(x + 1) > m x`:
//! `g(x) > 0`. So where the condition holds at the smallest `x` (the largest `s`), `g` only
//! falls as `x` grows: it holds for every shorter suspension at the same `A`; and every `A`
//! that a shorter length examines, `S_l` examines too. A unit test compares the verdict with
//! the enumeration of every length and every point (a suspension of milliseconds would be a
//! million lengths in ns).
//!
//! **Without suspensions** (`S_i = 0` for all `i`) the condition is, term by term, the one of SchedCAT's Baruah test (`baruah.cpp`: caps
//! `A + D_k - C_k + 1`, `<=` against `m (A + D_k - C_k)`), only over another range of `A`.
//! rtsched's [`super::baruah`] compares the same left-hand side against the larger
//! `m (x + 1) - 1` (`x = A + D_l - C_l`) at every breakpoint up to its own bound, so every set
//! LA accepts is accepted by `bar` too (unless `bar` gave up); LA is here for self-suspending
//! tasks, and for SchedCAT users who look for it. Tested in
//! crates/analysis/tests/global_props.rs.
//!
//! **With suspensions** [`super::test`] and [`super::combined`] run LA on the set as it is
//! (`C_i` the execution, `S_i` = [`rtsched_model::Task::suspension`], the sum of the
//! segmented model's suspension upper bounds: a segmented job is one of the paper's jobs that
//! suspend for at most `S_i` in any pattern) and every other test on the suspension-oblivious
//! set (`crate::suspension`). The simulator oracle is crates/sim/tests/suspension_aware.rs.
//!
//! Where we differ from SchedCAT: SchedCAT evaluates every test point and stops a task's search
//! after one second of CPU time, then answers "not schedulable"; here the points are searched
//! by bisection (`task_passes`: same verdict, fewer evaluations) for the longest suspension
//! length only, `Limits::max_steps` (evaluations, over all tasks) and `Limits::max_interval`
//! bound the work, and hitting either answers `GaveUp`. The bound on `A` is computed with a rigorous float enclosure
//! rounded up, exact rationals near `U = m` (a bound that is too large only adds points).
//!
//! Integer ns throughout (`u64` parameters, `u128` sums): exact. Constrained deadlines only
//! (the common admission of [`super`]); `C_l + S_l > D_l` is `NotSchedulable`.

use rtsched_model::exact::{self, int, ratio, Interval, Rational};
use rtsched_model::{TaskSet, Time};

use super::{by_laxity, divmod, Admission, System};
use crate::{Limits, Verdict};

/// The test on a task set whose tasks suspend for at most `suspension[i]` ns per job (empty:
/// no task suspends; another length than the set's is `NotSchedulable`). `ts` holds the
/// execution costs only (not `C + S`). [`super::test`] passes each task's own bound
/// ([`rtsched_model::Task::suspension`]); a caller may pass other bounds here.
pub fn test_with_suspensions(ts: &TaskSet, m: u32, suspension: &[Time], limits: &Limits) -> Verdict {
    if !suspension.is_empty() && suspension.len() != ts.len() {
        return Verdict::NotSchedulable;
    }
    match System::admit(ts, m) {
        Admission::Decided(v) => v,
        Admission::Run(sys) => check(&sys, suspension, limits),
    }
}

/// Per-evaluation scratch and the set's constants.
struct Ctx<'a> {
    sys: &'a System<'a>,
    susp: &'a [Time],
    inv: Vec<f64>,
    diffs: Vec<u64>,
}

/// LA on an admitted system; `susp` empty means `S_i = 0` for every task.
pub(crate) fn check(sys: &System, susp: &[Time], limits: &Limits) -> Verdict {
    let n = sys.n();
    let s_of = |i: usize| susp.get(i).copied().unwrap_or(0);
    if (0..n).any(|i| sys.c[i].checked_add(s_of(i)).is_none_or(|cs| cs > sys.d[i])) {
        return Verdict::NotSchedulable;
    }
    let mut u_iv = Interval::point(0.0);
    for i in 0..n {
        u_iv = u_iv.add(Interval::ratio(sys.c[i] as u128, sys.t[i] as u128));
    }
    let slack_iv = Interval::int(sys.m as u128).sub(u_iv);
    // m - U exactly, only when the enclosure does not show it positive.
    let slack_exact: Option<Rational> = if slack_iv.lo > 0.0 {
        None
    } else {
        let u: Rational = (0..n).map(|i| ratio(sys.c[i] as u128, sys.t[i] as u128)).sum();
        let s = int(sys.m as i128) - u;
        if s <= exact::zero() {
            return Verdict::NotSchedulable; // U = m: the bound on A is infinite
        }
        Some(s)
    };
    let csum: u128 = sys.c.iter().map(|&c| c as u128).sum();
    // A <= (m (C_l + s) + Σ C_i) / (m - U), rounded up: the last test point for suspension
    // length `s` (non-decreasing in `s`).
    let bound = |l: usize, s: Time| -> u64 {
        let x = sys.m as u128 * (sys.c[l] as u128 + s as u128) + csum;
        let q: u128 = match &slack_exact {
            None => {
                let q = Interval::int(x).hi / slack_iv.lo;
                let q = q.next_up().next_up().ceil();
                if q >= (1u64 << 62) as f64 {
                    1 << 62
                } else {
                    q as u128
                }
            }
            Some(slack) => exact::ceil_u128(&(int(x as i128) / slack.clone())).min(1 << 62),
        };
        q as u64
    };
    let mut ctx = Ctx { sys, susp, inv: sys.t.iter().map(|&t| 1.0 / t as f64).collect(), diffs: Vec::with_capacity(n) };
    let mut steps: u64 = 0;
    let mut truncated = false;
    for l in by_laxity(sys) {
        // The longest suspension decides every shorter one (module doc, "One length").
        let s_max = s_of(l);
        // Examine A + D_l <= max_interval only; beyond it the answer can only be GaveUp.
        let reach = limits.max_interval.saturating_sub(sys.d[l]);
        let a_max = bound(l, s_max);
        let last = if a_max > reach {
            truncated = true;
            reach
        } else {
            a_max
        };
        match task_passes(&mut ctx, l, s_max, last, &mut steps, limits) {
            Some(true) => {}
            Some(false) => return Verdict::NotSchedulable,
            None => return Verdict::GaveUp,
        }
    }
    if truncated {
        Verdict::GaveUp
    } else {
        Verdict::Schedulable
    }
}

/// Whether `τ_l` with suspension length `s` passes at every test point `A <= last`; `None`
/// when the step budget ends first.
///
/// The left-hand side is non-decreasing in `A` (it is the largest, over the choices of `m - 1`
/// carry-in tasks, of sums of non-decreasing terms) and the right-hand side increases, so when
/// `LHS(b) <= RHS(a)` every test point in `[a, b]` passes. The points are searched by
/// bisection on that rule, as in [`super::baruah`]: the verdict is the one of checking every
/// point (a unit test compares the two), at a fraction of the evaluations.
fn task_passes(ctx: &mut Ctx, l: usize, s: Time, last: u64, steps: &mut u64, limits: &Limits) -> Option<bool> {
    let sys = ctx.sys;
    let dl = sys.d[l];
    // The first step point A >= 0 of each dbf_i(A + D_l): A = D_i - D_l + j T_i.
    let first: Vec<u64> = (0..sys.n())
        .map(|i| {
            if sys.d[i] >= dl {
                sys.d[i] - dl
            } else {
                let behind = dl - sys.d[i];
                behind.div_ceil(sys.t[i]) * sys.t[i] - behind
            }
        })
        .collect();
    let next_point = |x: u64| -> Option<u64> {
        (0..sys.n())
            .filter_map(|i| {
                if x <= first[i] {
                    Some(first[i])
                } else {
                    (x - first[i]).div_ceil(sys.t[i]).checked_mul(sys.t[i])?.checked_add(first[i])
                }
            })
            .min()
    };
    let prev_point = |x: u64| -> Option<u64> {
        (0..sys.n()).filter(|&i| x >= first[i]).map(|i| first[i] + (x - first[i]) / sys.t[i] * sys.t[i]).max()
    };
    // Intervals still to search, the leftmost on top.
    let mut stack: Vec<(u64, u64)> = vec![(0, last)];
    while let Some((lo, hi)) = stack.pop() {
        let Some(a) = next_point(lo).filter(|&a| a <= hi) else { continue };
        let b = prev_point(hi).expect("a <= hi is a point");
        *steps += 1;
        if limits.exhausted(*steps) {
            return None;
        }
        if a == b {
            if lhs(ctx, l, s, a) > rhs(ctx, l, s, a) {
                return Some(false);
            }
            continue;
        }
        if lhs(ctx, l, s, b) <= rhs(ctx, l, s, a) {
            continue;
        }
        let mid = a + (b - a) / 2;
        stack.push((mid + 1, b));
        stack.push((a, mid));
    }
    Some(true)
}

/// `m (t - C_l - s)`, the right-hand side of the condition at `A` (`t = A + D_l`).
fn rhs(ctx: &Ctx, l: usize, s: Time, a: u64) -> u128 {
    let sys = ctx.sys;
    sys.m as u128 * (a + sys.d[l] - sys.c[l] - s) as u128
}

/// The condition of the module doc for `τ_l`, suspension length `s`, busy prefix `A`.
#[cfg(test)]
fn condition_holds(ctx: &mut Ctx, l: usize, s: Time, a: u64) -> bool {
    lhs(ctx, l, s, a) <= rhs(ctx, l, s, a)
}

/// The left-hand side of the condition of the module doc for `τ_l`, suspension length `s`,
/// busy prefix `A`.
fn lhs(ctx: &mut Ctx, l: usize, s: Time, a: u64) -> u128 {
    let sys = ctx.sys;
    let (cl, dl, tl) = (sys.c[l], sys.d[l], sys.t[l]);
    let t = a + dl;
    // t >= D_l >= C_l + s, so cap >= 1.
    let cap = t - cl - s + 1;
    let own_cap = a.max(t.saturating_sub(tl));
    ctx.diffs.clear();
    let mut sum: u128 = 0;
    for i in 0..sys.n() {
        let (c, d, p) = (sys.c[i], sys.d[i], sys.t[i]);
        let (q, rem) = divmod(t, p, ctx.inv[i]);
        let carry = q * c + rem.min(c);
        let no_carry = if t >= d { ((t - d) / p + 1) * c } else { 0 };
        let (nc, ci) = if i == l {
            ((no_carry - cl).min(own_cap), (carry - cl).min(own_cap))
        } else {
            (no_carry.min(cap), carry.min(cap))
        };
        if ctx.susp.get(i).copied().unwrap_or(0) > 0 {
            sum += nc.max(ci) as u128;
        } else {
            sum += nc as u128;
            ctx.diffs.push(ci.saturating_sub(nc));
        }
    }
    let k = (sys.m as usize - 1).min(ctx.diffs.len());
    if k > 0 {
        if k < ctx.diffs.len() {
            ctx.diffs.select_nth_unstable_by(k - 1, |x, y| y.cmp(x));
        }
        sum += ctx.diffs[..k].iter().map(|&x| x as u128).sum::<u128>();
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(v: &[(u64, u64, u64)], m: u32, susp: &[Time]) -> Verdict {
        test_with_suspensions(&TaskSet::from_cdt(v).unwrap(), m, susp, &Limits::default())
    }

    /// The condition by hand. Two tasks (C, D, T) = (2, 4, 4) and (3, 6, 6) on m = 2: U = 1,
    /// bound on A for l = 0: (2·2 + 5) / 1 = 9. At A = 0 for l = 0 (t = 4): cap = 3; task 0:
    /// dbf - C = 0, δ - C = 0; task 1: dbf(4) = 0, δ(4) = 3 -> min(3, 3) = 3: Σ = 0 + 0, the
    /// largest difference 3, 3 <= 2·2 = 4. A set that passes.
    #[test]
    fn hand_worked_two_tasks() {
        let ts = TaskSet::from_cdt(&[(2, 4, 4), (3, 6, 6)]).unwrap();
        let Admission::Run(sys) = System::admit(&ts, 2) else { panic!() };
        let mut ctx = Ctx { sys: &sys, susp: &[], inv: sys.t.iter().map(|&t| 1.0 / t as f64).collect(), diffs: vec![] };
        assert!(condition_holds(&mut ctx, 0, 0, 0));
        assert_eq!(run(&[(2, 4, 4), (3, 6, 6)], 2, &[]), Verdict::Schedulable);
        // Three (2,3,3) on two processors (Dhall-like, G-EDF misses): l = 0, A = 0, t = 3,
        // cap = 2; the other two give dbf = 2 each: Σ = 4 > 2·1.
        let ts = TaskSet::from_cdt(&[(2, 3, 3); 3]).unwrap();
        let Admission::Run(sys) = System::admit(&ts, 2) else { panic!() };
        let mut ctx = Ctx { sys: &sys, susp: &[], inv: sys.t.iter().map(|&t| 1.0 / t as f64).collect(), diffs: vec![] };
        assert!(!condition_holds(&mut ctx, 0, 0, 0));
        assert_eq!(run(&[(2, 3, 3); 3], 2, &[]), Verdict::NotSchedulable);
    }

    #[test]
    fn suspensions_only_make_it_harder() {
        let v = [(2, 8, 8), (3, 10, 10), (1, 5, 5)];
        assert_eq!(run(&v, 2, &[]), Verdict::Schedulable);
        assert_eq!(run(&v, 2, &[0, 0, 0]), Verdict::Schedulable);
        // C + S > D: cannot meet its deadline.
        assert_eq!(run(&v, 2, &[0, 0, 5]), Verdict::NotSchedulable);
        // A wrong-length list is refused rather than misread.
        assert_eq!(run(&v, 2, &[1]), Verdict::NotSchedulable);
        let mut prev = true;
        for s in 0..=4 {
            let now = run(&v, 2, &[s, s, s]).is_schedulable();
            assert!(prev || !now, "suspension {s} accepted after a shorter one was rejected");
            prev = now;
        }
        assert!(!prev, "4 ns of suspension per job should not pass here");
    }

    /// Every test point, one after the other (the paper's procedure, as SchedCAT runs it).
    fn every_point(ts: &TaskSet, m: u32, susp: &[Time]) -> bool {
        let Admission::Run(sys) = System::admit(ts, m) else { panic!() };
        let n = sys.n();
        let u: Rational = (0..n).map(|i| ratio(sys.c[i] as u128, sys.t[i] as u128)).sum();
        let slack = int(sys.m as i128) - u;
        assert!(slack > exact::zero());
        let csum: i128 = sys.c.iter().map(|&c| c as i128).sum();
        let mut ctx = Ctx { sys: &sys, susp, inv: sys.t.iter().map(|&t| 1.0 / t as f64).collect(), diffs: vec![] };
        for l in 0..n {
            for s in 0..=susp.get(l).copied().unwrap_or(0) {
                let x = sys.m as i128 * (sys.c[l] + s) as i128 + csum;
                let a_max = exact::ceil_u128(&(int(x) / slack.clone())) as u64;
                for a in 0..=a_max {
                    let step = (0..n).any(|i| {
                        let v = a as i128 + sys.d[l] as i128 - sys.d[i] as i128;
                        v >= 0 && v % sys.t[i] as i128 == 0
                    });
                    if step && !condition_holds(&mut ctx, l, s, a) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// The bisection gives the verdict of checking every point, on random small sets with and
    /// without suspensions.
    #[test]
    fn bisection_equals_every_point() {
        let mut x: u64 = 0x2013_1a1a;
        let mut next = move |k: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % k
        };
        let (mut yes, mut no) = (0, 0);
        for _ in 0..6_000 {
            let m = 1 + next(3) as u32;
            let n = 2 + next(4) as usize;
            let v: Vec<(u64, u64, u64)> = (0..n)
                .map(|_| {
                    let t = 2 + next(30);
                    let c = 1 + next(t / 2);
                    (c, c + next(t - c + 1), t)
                })
                .collect();
            let ts = TaskSet::from_cdt(&v).unwrap();
            if !ts.utilization_at_most(m as u64) || ts.utilization() == exact::int(m as i128) {
                continue; // U > m: admission; U = m: LA's bound is infinite
            }
            // No suspension, short ones, or lengths whose decisive values (not every one of
            // 0..=S_l) are checked by `decisive_lengths`.
            let susp: Vec<Time> = match next(3) {
                0 => vec![],
                1 => (0..n).map(|_| next(3)).collect(),
                _ => (0..n).map(|_| next(2) * next(12)).collect(),
            };
            if v.iter().zip(susp.iter().chain(std::iter::repeat(&0))).any(|(&(c, d, _), &s)| c + s > d) {
                continue;
            }
            let got = test_with_suspensions(&ts, m, &susp, &Limits::default());
            let want = every_point(&ts, m, &susp);
            assert_eq!(got.is_schedulable(), want, "m = {m}, {v:?}, S = {susp:?}");
            if want {
                yes += 1
            } else {
                no += 1
            }
        }
        assert!(yes > 300 && no > 300, "{yes} {no}");
    }

    #[test]
    fn full_utilization_and_limits() {
        // U = m: the paper's bound on A is infinite.
        assert_eq!(run(&[(1, 2, 2), (1, 2, 2)], 1, &[]), Verdict::NotSchedulable);
        // A step budget of 1 cannot finish a set with many points.
        let ts = TaskSet::from_cdt(&[(1, 7, 7), (2, 11, 11), (3, 13, 13), (1, 5, 5)]).unwrap();
        assert_eq!(test_with_suspensions(&ts, 2, &[], &Limits::steps(1)), Verdict::GaveUp);
        assert_eq!(test_with_suspensions(&ts, 2, &[], &Limits::default()), Verdict::Schedulable);
        let short = Limits { max_interval: 8, ..Limits::default() };
        assert_eq!(test_with_suspensions(&ts, 2, &[], &short), Verdict::GaveUp);
    }
}
