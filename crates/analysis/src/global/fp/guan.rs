//! `gfp_guan`: response-time analysis for global fixed priority with limited carry-in after
//! N. Guan, M. Stigge, W. Yi, G. Yu, "New response time bounds for fixed priority
//! multiprocessor scheduling", RTSS 2009, Sec. 4 (constrained deadlines; the paper's
//! arbitrary-deadline extension of Sec. 5 is not implemented: `D > T` is answered
//! `NotSchedulable` by the common admission).
//!
//! The analysis window of `τ_k`'s job starts at the latest instant before its release at
//! which some processor was idle (Baruah's window, RTSS 2007), so at most `m - 1`
//! higher-priority tasks have a job *carried in* (one that was running at that idle instant,
//! hence at most `C_i - 1` of it remains). With `[a]_b^c = min(max(a, b), c)` and equation
//! numbers as SchedCAT's `schedcat/sched/fp/guan.py` cites them:
//!
//! ```text
//!     W_NC(τ_i, x) = floor(x / T_i) C_i + [x mod T_i]^{C_i}                              (Eq. 5)
//!     W_CI(τ_i, x) = floor([x - C_i]_0 / T_i) C_i + C_i + α,
//!                α = [ [x - C_i]_0 mod T_i - (T_i - R_i) ]_0^{C_i - 1}                      (Eq. 6)
//!     I_NC(τ_i, x) = [W_NC(τ_i, x)]_0^{x - C_k + 1},  I_CI(τ_i, x) = [W_CI(τ_i, x)]_0^{x - C_k + 1}   (Eq. 7, 8)
//!     Ω_k(x) = sum_{i in hp(k)} I_NC(τ_i, x) + (sum of the m - 1 largest I_CI - I_NC)       (Eq. 9, 10)
//!     R_k = least x with x = C_k + floor(Ω_k(x) / m),  from x = C_k                         (Eq. 12)
//! ```
//!
//! `R_i` is the bound already computed for the higher-priority task `τ_i` (analysis in
//! priority order). Every difference `I_CI - I_NC` is non-negative (so "the `m - 1`
//! largest" is the best choice of at most `m - 1` carry-in tasks), and each term is
//! non-decreasing in `x` with slope at most 1, which the common fixed-point iteration needs
//! ([`super::least_fixed_point`]).
//!
//! **Dominance over Bertogna & Cirinei** (stated by the paper, checked by tests): with
//! `x - C_i = q T_i + r` and `R_i <= T_i`, `W_CI(τ_i, x)` is `q C_i + C_i` when
//! `r + R_i < T_i` and `(q+1) C_i + min(C_i - 1, r + R_i - T_i)` otherwise, never above
//! Bertogna & Cirinei's slack-aware `W_i(x)` (`N C_i + min(C_i, x + R_i - C_i - N T_i)`); and
//! `W_NC <= W_CI`. Capped at the same `x - C_k + 1`, every term of `Ω_k` is at most the
//! corresponding term of [`super::bertogna`]'s sum, so `R_k` is never larger.
//!
//! SchedCAT computes the same quantities; no difference from the paper was found.

use super::super::divmod;
use super::{capped, staircase, Hp};

/// One higher-priority task's terms at `x`: `I_CI - I_NC` and the two growth allowances.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pair {
    diff: u64,
    gap_ci: u64,
    gap_nc: u64,
}

/// `Ω_k(x)` of the module doc, pushing the growth allowance of each chosen term into `gaps`
/// (the `m - 1` carry-in tasks chosen at `x` stay a valid choice at every larger `x`, so
/// their terms bound `Ω_k` from below there).
pub(crate) fn interference(hp: &Hp, m: u64, x: u64, cap: u64, gaps: &mut Vec<u64>, pairs: &mut Vec<Pair>) -> u128 {
    let mut sum: u128 = 0;
    pairs.clear();
    for j in 0..hp.c.len() {
        let (c, t, inv, r) = (hp.c[j], hp.t[j], hp.inv[j], hp.r[j]);
        let (w_nc, ramp_nc) = staircase(x, c, t, inv);
        let (w_ci, ramp_ci) = carry_in_workload(x, c, t, inv, r);
        let (i_nc, gap_nc) = capped(w_nc, ramp_nc, cap);
        let (i_ci, gap_ci) = capped(w_ci, ramp_ci, cap);
        debug_assert!(i_ci >= i_nc, "W_CI >= W_NC");
        sum += i_nc as u128;
        pairs.push(Pair { diff: i_ci - i_nc, gap_ci, gap_nc });
    }
    let carry = (m as usize).saturating_sub(1).min(pairs.len());
    if carry > 0 && carry < pairs.len() {
        pairs.select_nth_unstable_by(carry - 1, |a, b| b.diff.cmp(&a.diff));
    }
    for (idx, p) in pairs.iter().enumerate() {
        let g = if idx < carry {
            sum += p.diff as u128;
            p.gap_ci
        } else {
            p.gap_nc
        };
        if g > 0 {
            gaps.push(g);
        }
    }
    sum
}

/// `W_CI(τ_i, x)` (Eq. 6) and the length of its current slope-1 ramp.
#[inline(always)]
fn carry_in_workload(x: u64, c: u64, t: u64, inv: f64, r: u64) -> (u64, u64) {
    if x < c {
        return (c, 0); // [x - C_i]_0 = 0, α = [0 - (T_i - R_i)]_0 = 0, constant until x = C_i
    }
    let (q, rem) = divmod(x - c, t, inv);
    // α = [rem - (T_i - R_i)]_0^{C_i - 1}: grows with rem from 0 to C_i - 1, and rem reaches
    // T_i - R_i + C_i - 1 <= T_i - 1 before it wraps (R_i >= C_i). While rem < T_i - R_i
    // the workload stays constant (ramp 0).
    let a = rem as i64 - (t - r) as i64;
    let (alpha, ramp) = if a < 0 {
        (0, 0)
    } else if (a as u64) < c - 1 {
        (a as u64, c - 1 - a as u64)
    } else {
        (c - 1, 0)
    };
    (q * c + c + alpha, ramp)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eq. 6 written out, as a reference.
    fn w_ci(x: u64, c: u64, t: u64, r: u64) -> u64 {
        let z = x.saturating_sub(c);
        let a = (z % t) as i64 - (t - r) as i64;
        (z / t) * c + c + a.clamp(0, c as i64 - 1) as u64
    }

    /// `W_NC` (Eq. 5) is the staircase; its ramp is exact too.
    #[test]
    fn non_carry_in_workload_and_its_ramp() {
        for t in 1..=9u64 {
            for c in 1..=t {
                for x in 0..40u64 {
                    let (w, ramp) = staircase(x, c, t, 1.0 / t as f64);
                    assert_eq!(w, (x / t) * c + (x % t).min(c));
                    for delta in 0..=2 * t {
                        let later = ((x + delta) / t) * c + ((x + delta) % t).min(c);
                        assert!(later >= w + delta.min(ramp));
                    }
                }
            }
        }
    }

    #[test]
    fn carry_in_workload_and_its_ramp() {
        for t in 1..=9u64 {
            for c in 1..=t {
                for r in c..=t {
                    for x in 0..40u64 {
                        let (w, ramp) = carry_in_workload(x, c, t, 1.0 / t as f64, r);
                        assert_eq!(w, w_ci(x, c, t, r), "x {x} c {c} t {t} r {r}");
                        // Slope 1 over the ramp; never decreasing after it.
                        for delta in 0..=2 * t {
                            let later = w_ci(x + delta, c, t, r);
                            assert!(later >= w + delta.min(ramp), "x {x} δ {delta} c {c} t {t} r {r}");
                            assert!(later >= w_ci(x + delta.saturating_sub(1), c, t, r));
                        }
                    }
                }
            }
        }
    }
}
