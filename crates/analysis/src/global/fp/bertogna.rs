//! `gfp_bc`, `gfp_bc_slack`: response-time analysis for global fixed priority after
//! M. Bertogna, M. Cirinei, "Response-time analysis for globally scheduled symmetric
//! multiprocessor platforms", RTSS 2007.
//!
//! **Workload bound** (Sec. 4; Eq. 3 and 4 in SchedCAT's numbering of the paper). In any
//! window of length `L`, a task `τ_i` whose jobs all meet their deadlines executes at most
//!
//! ```text
//!     N_i(L) = floor( (L + D_i - C_i) / T_i )
//!     W_i(L) = N_i(L) C_i + min(C_i, L + D_i - C_i - N_i(L) T_i)
//! ```
//!
//! (the densest packing: the carry-in job executes as late as its deadline allows, at the
//! window's start, and the following jobs as early as possible).
//!
//! **Slack** (Sec. 4, Eq. 8 in SchedCAT's numbering). When a response-time bound `R_i <= D_i`
//! of `τ_i` is known, the carry-in job finishes by `R_i` after its release, and `D_i` above
//! may be replaced by `R_i` (that is, shifted by the slack `S_i = D_i - R_i`):
//! `N_i(L) = floor((L + R_i - C_i)/T_i)`, `W_i(L) = N_i(L) C_i + min(C_i, L + R_i - C_i -
//! N_i(L) T_i)`.
//!
//! **Fixed priority** (Sec. 5, the FP response-time bound). Only higher-priority tasks
//! interfere, each at most `W_i(x)` and at most `x - C_k + 1` (a job of `τ_k` that has not
//! finished by `x` after its release was blocked in at least `x - C_k + 1` ns, and a task
//! runs on one processor at a time), so an upper bound on `τ_k`'s response time is the least
//! fixed point of
//!
//! ```text
//!     R_k = C_k + floor( (1/m) sum_{i in hp(k)} min(W_i(R_k), R_k - C_k + 1) )
//! ```
//!
//! computed in priority order (the `R_i` of every higher-priority task is known when `τ_k`
//! is analysed, so the paper's iterative slack procedure of Sec. 6 converges in this one
//! pass for fixed priorities). `gfp_bc` uses the workload with `D_i` (no slack),
//! `gfp_bc_slack` the one with the `R_i` just computed.
//!
//! **Where SchedCAT differs** (`schedcat/sched/fp/bertogna.py`): it sums `W_i(x)` without
//! the cap `x - C_k + 1`, which is more pessimistic than the paper; we follow the paper, and
//! `crates/analysis/tests/global_fp.rs` pins a set the paper's bound accepts and the uncapped
//! sum rejects.

use super::{capped, staircase, Hp};

/// `sum_{i in hp} min(W_i(x), cap)` with the workload of the module doc (`hp.r` holds `D_i`
/// or `R_i`), pushing each term's growth allowance into `gaps`.
#[inline]
pub(crate) fn interference(hp: &Hp, x: u64, cap: u64, gaps: &mut Vec<u64>) -> u128 {
    let mut sum: u128 = 0;
    for j in 0..hp.c.len() {
        let c = hp.c[j];
        // L + R_i - C_i >= 0 since R_i >= C_i; at most 2^54 (times are at most 2^53).
        let (w, ramp) = staircase(x + hp.r[j] - c, c, hp.t[j], hp.inv[j]);
        let (term, gap) = capped(w, ramp, cap);
        if gap > 0 {
            gaps.push(gap);
        }
        sum += term as u128;
    }
    sum
}
