//! Global EDF (G-EDF) schedulability analysis on `m` identical processors.
//!
//! Hard real-time tests (each in its own module, which cites its paper):
//!
//! | [`GlobalTest`] | module | paper |
//! |---|---|---|
//! | `Gfb` | [`density_bound`] | Goossens, Funk, Baruah, RTS 25(2-3), 2003 (density form) |
//! | `Bak` | [`baker`] | Baker, RTSS 2003 / TR-051101 2005 |
//! | `Bcl` | [`interference`] | Bertogna, Cirinei, Lipari, ECRTS 2005 |
//! | `BclIterative` | [`slack_iterative`] | Bertogna, Cirinei, Lipari, IEEE TPDS 20(4), 2009 |
//! | `Rta` | [`response_time`] | Bertogna, Cirinei, RTSS 2007 |
//! | `Bar` | [`baruah`] | Baruah, RTSS 2007 |
//! | `FfDbf` | [`forced_forward`] | Baruah, Bonifaci, Marchetti-Spaccamela, Stiller, ECRTS 2010 |
//! | `La` | [`la`] | Liu & Anderson, ECRTS 2013 (suspension-aware; without suspensions a G-EDF test) |
//!
//! [`combined`] ("gedf") accepts a task set if any of them does, cheapest first, LA last as in
//! SchedCAT's combined test; [`combined_no_la`] ("gedf_no_la") leaves LA out.
//!
//! **Self-suspending tasks**: LA is suspension-aware (it runs on the set as it is, with each
//! task's suspension bound); every other test runs on the suspension-oblivious view
//! (`C' = C + S`, [`crate::suspension`]). [`test`] and [`combined_of`] do both, so a caller
//! passes the set as it is; the combination tries LA both ways.
//! Soft real-time: [`srt`] (Devi and Anderson, RTSS 2005).
//!
//! Global fixed priority (G-FP): [`fp`] (response-time analysis after Bertogna & Cirinei,
//! RTSS 2007, and Guan, Stigge, Yi & Yu, RTSS 2009).
//!
//! **Assumptions shared by every hard test.** Sporadic tasks with *constrained* deadlines
//! (`D <= T`), integer time (every release at an integer ns, as the model's [`Time`] implies).
//! A task set with any `D > T` is answered [`Verdict::NotSchedulable`] ("cannot prove"): none
//! of the implemented papers covers arbitrary deadlines with the conditions as stated. Every
//! test rejects a set with `U > m`, any `u_i > 1` or any `C > D`; the empty set is schedulable;
//! `m = 0` (which [`rtsched_model::Platform::new`] rejects) is answered `NotSchedulable`
//! rather than a panic.
//!
//! Exactness: BCL, BCL-iterative, RTA, BAR and FF-DBF work in integer ns (`u64`/`u128`).
//! GFB and BAK compare sums of rationals through a rigorous floating-point filter that falls
//! back to exact rationals ([`rtsched_model::exact`]) when the filter cannot decide.

use rayon::prelude::*;
use rtsched_model::{Task, TaskSet, Time};

use crate::{Limits, Verdict};

pub mod baker;
pub mod baruah;
pub mod density_bound;
pub mod forced_forward;
pub mod fp;
pub mod gel;
pub mod interference;
pub mod la;
pub mod response_time;
pub mod slack_iterative;
pub mod srt;

/// The hard real-time G-EDF tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GlobalTest {
    Gfb,
    Bak,
    Bcl,
    BclIterative,
    Rta,
    Bar,
    FfDbf,
    La,
}

impl GlobalTest {
    /// Every test.
    pub const ALL: [GlobalTest; 8] = [
        GlobalTest::Gfb,
        GlobalTest::Bak,
        GlobalTest::Bcl,
        GlobalTest::BclIterative,
        GlobalTest::Rta,
        GlobalTest::Bar,
        GlobalTest::FfDbf,
        GlobalTest::La,
    ];

    /// The order in which [`combined`] tries the tests: cheapest first (measured,
    /// docs/performance.md). BCL 2005 is left out because BCL-iterative accepts every set it
    /// accepts at the same cost in its first round (see [`slack_iterative`]), so "any of all
    /// seven" is unchanged. LA (Liu & Anderson, ECRTS 2013) comes last, as in SchedCAT's
    /// combined test (`native/src/edf/gedf.cpp`).
    pub const COMBINED_ORDER: [GlobalTest; 7] = [
        GlobalTest::Gfb,
        GlobalTest::Bak,
        GlobalTest::BclIterative,
        GlobalTest::Bar,
        GlobalTest::Rta,
        GlobalTest::FfDbf,
        GlobalTest::La,
    ];

    /// [`GlobalTest::COMBINED_ORDER`] without LA: "gedf" as it was before LA ("gedf_no_la").
    pub const COMBINED_ORDER_NO_LA: [GlobalTest; 6] = [
        GlobalTest::Gfb,
        GlobalTest::Bak,
        GlobalTest::BclIterative,
        GlobalTest::Bar,
        GlobalTest::Rta,
        GlobalTest::FfDbf,
    ];

    /// The five tests seed 001 (Brandenburg and Anderson, RTSS 2009, §4.2) combines: its
    /// references [12] GFB, [1] Baker 2003, [4] BCL 2005, [5] BCL 2009 (iterative), [3] Baruah 2007.
    pub const SEED001: [GlobalTest; 5] =
        [GlobalTest::Gfb, GlobalTest::Bak, GlobalTest::Bcl, GlobalTest::BclIterative, GlobalTest::Bar];

    pub fn name(self) -> &'static str {
        match self {
            GlobalTest::Gfb => "gfb",
            GlobalTest::Bak => "bak",
            GlobalTest::Bcl => "bcl",
            GlobalTest::BclIterative => "bcl_iterative",
            GlobalTest::Rta => "rta",
            GlobalTest::Bar => "bar",
            GlobalTest::FfDbf => "ffdbf",
            GlobalTest::La => "la",
        }
    }

    pub fn from_name(s: &str) -> Option<GlobalTest> {
        GlobalTest::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// Runs one hard real-time test. On a set with self-suspending tasks, LA runs
/// suspension-aware (its own model: [`la`]) and every other test suspension-obliviously
/// ([`crate::suspension`]).
pub fn test(t: GlobalTest, ts: &TaskSet, m: u32, limits: &Limits) -> Verdict {
    if t == GlobalTest::La && crate::suspension::applies(ts) {
        return la::test_with_suspensions(ts, m, &crate::suspension::bounds(ts), limits);
    }
    let Ok(view) = crate::suspension::oblivious(ts) else { return Verdict::NotSchedulable };
    let sys = match System::admit(&view, m) {
        Admission::Decided(v) => return v,
        Admission::Run(s) => s,
    };
    run(t, &sys, limits)
}

fn run(t: GlobalTest, sys: &System, limits: &Limits) -> Verdict {
    match t {
        GlobalTest::Gfb => Verdict::from_bool(density_bound::check(sys)),
        GlobalTest::Bak => baker::check(sys, limits),
        GlobalTest::Bcl => interference::check(sys, limits),
        GlobalTest::BclIterative => slack_iterative::check(sys, limits),
        GlobalTest::Rta => response_time::check(sys, limits),
        GlobalTest::Bar => baruah::check(sys, limits),
        GlobalTest::FfDbf => forced_forward::check(sys, limits),
        // A system without suspensions (a suspending set reaches LA through `test` or
        // `combined_of`, suspension-aware).
        GlobalTest::La => la::check(sys, &[], limits),
    }
}

/// "gedf": schedulable if any test in [`GlobalTest::ALL`] proves it (tried in
/// [`GlobalTest::COMBINED_ORDER`], stops at the first success); `GaveUp` only if none
/// succeeded and at least one gave up.
pub fn combined(ts: &TaskSet, m: u32, limits: &Limits) -> Verdict {
    combined_of(&GlobalTest::COMBINED_ORDER, ts, m, limits)
}

/// [`combined`] without LA ("gedf_no_la"): the combination as it was before LA was added.
pub fn combined_no_la(ts: &TaskSet, m: u32, limits: &Limits) -> Verdict {
    combined_of(&GlobalTest::COMBINED_ORDER_NO_LA, ts, m, limits)
}

/// Like [`combined`] over the given tests, tried in the given order (e.g.
/// [`GlobalTest::SEED001`] to reproduce seed 001's "any of five"). On a set with
/// self-suspending tasks, the tests run on its suspension-oblivious view, and LA runs
/// suspension-aware on the set as well (each reading accepts sets the other rejects).
pub fn combined_of(tests: &[GlobalTest], ts: &TaskSet, m: u32, limits: &Limits) -> Verdict {
    let aware = crate::suspension::applies(ts);
    let Ok(view) = crate::suspension::oblivious(ts) else { return Verdict::NotSchedulable };
    let oblivious = System::admit(&view, m);
    if !aware {
        if let Admission::Decided(v) = oblivious {
            return v;
        }
    }
    let mut gave_up = false;
    for &t in tests {
        let on_view = |t| match &oblivious {
            Admission::Decided(v) => *v,
            Admission::Run(sys) => run(t, sys, limits),
        };
        let v = if aware && t == GlobalTest::La {
            // Neither reading of LA dominates the other on suspending sets (crates/sim/tests/
            // suspension_aware.rs counts both ways); both are sound, so both are tried.
            match la::test_with_suspensions(ts, m, &crate::suspension::bounds(ts), limits) {
                Verdict::Schedulable => Verdict::Schedulable,
                aware_v => match on_view(t) {
                    Verdict::NotSchedulable => aware_v,
                    v => v,
                },
            }
        } else {
            on_view(t)
        };
        match v {
            Verdict::Schedulable => return Verdict::Schedulable,
            Verdict::GaveUp => gave_up = true,
            Verdict::NotSchedulable => {}
        }
    }
    if gave_up {
        Verdict::GaveUp
    } else {
        Verdict::NotSchedulable
    }
}

/// [`test`] over many task sets in parallel (rayon); results in input order.
pub fn test_many(t: GlobalTest, sets: &[TaskSet], m: u32, limits: &Limits) -> Vec<Verdict> {
    sets.par_iter().map(|ts| test(t, ts, m, limits)).collect()
}

/// [`combined`] over many task sets in parallel (rayon); results in input order.
pub fn combined_many(sets: &[TaskSet], m: u32, limits: &Limits) -> Vec<Verdict> {
    sets.par_iter().map(|ts| combined(ts, m, limits)).collect()
}

/// A task set that passed the common preconditions: non-empty, `m >= 1`, `C <= D <= T` for
/// every task, `U <= m`. Parameters copied into flat arrays for the hot loops.
pub(crate) struct System<'a> {
    _ts: std::marker::PhantomData<&'a TaskSet>,
    pub m: u64,
    pub c: Vec<Time>,
    pub d: Vec<Time>,
    pub t: Vec<Time>,
}

pub(crate) enum Admission<'a> {
    Decided(Verdict),
    Run(System<'a>),
}

impl<'a> System<'a> {
    pub fn admit(ts: &'a TaskSet, m: u32) -> Admission<'a> {
        if m == 0 {
            return Admission::Decided(Verdict::NotSchedulable);
        }
        if ts.is_empty() {
            return Admission::Decided(Verdict::Schedulable);
        }
        // C <= D <= T implies u_i <= 1; D > T is outside every implemented test's model.
        if ts.iter().any(|x: &Task| x.wcet > x.deadline || x.deadline > x.period) {
            return Admission::Decided(Verdict::NotSchedulable);
        }
        // U <= m, exactly: a float sum with a rigorous error bound, exact rationals on ties.
        let n = ts.len();
        let u: f64 = ts.iter().map(|x| x.wcet as f64 / x.period as f64).sum();
        let err = (n as f64 + 2.0) * EPS * u;
        if !decide_le(u, m as f64, err, || ts.utilization_at_most(m as u64)) {
            return Admission::Decided(Verdict::NotSchedulable);
        }
        Admission::Run(System {
            _ts: std::marker::PhantomData,
            m: m as u64,
            c: ts.iter().map(|x| x.wcet).collect(),
            d: ts.iter().map(|x| x.deadline).collect(),
            t: ts.iter().map(|x| x.period).collect(),
        })
    }

    pub fn n(&self) -> usize {
        self.c.len()
    }
}

/// Unit roundoff of `f64`.
pub(crate) const EPS: f64 = f64::EPSILON / 2.0;

/// Exact `(n / t, n % t)` for `n < 2^62`, `1 <= t <= 2^53`, via a precomputed
/// `inv_t = 1.0 / t`: the float quotient is within a few units of the true quotient, and
/// integer correction steps make it exact. Avoids a hardware integer division in the O(n^2)
/// loops.
#[inline(always)]
pub(crate) fn divmod(n: u64, t: u64, inv_t: f64) -> (u64, u64) {
    let mut q = (n as f64 * inv_t) as i64; // truncation; n >= 0
    let t = t as i64;
    let mut r = n as i64 - q * t;
    while r < 0 {
        q -= 1;
        r += t;
    }
    while r >= t {
        q += 1;
        r -= t;
    }
    (q as u64, r as u64)
}

/// Decides `lhs <= rhs` for exact reals whose `f64` evaluations `lhs_f`, `rhs_f` are each known
/// to be within `err` (a rigorous a-priori rounding-error bound, computed by the caller) of
/// the exact value; calls `exact` only when the floats cannot decide.
#[inline]
pub(crate) fn decide_le(lhs_f: f64, rhs_f: f64, err: f64, exact: impl FnOnce() -> bool) -> bool {
    // `err` itself is computed in floats: inflate it by 1/8 and a tiny absolute term.
    let e = err * 1.125 + f64::MIN_POSITIVE;
    if lhs_f + e < rhs_f - e {
        true
    } else if lhs_f - e > rhs_f + e {
        false
    } else {
        exact()
    }
}

/// Per-pair interference data of BCL 2005 / BCL 2009 (EDF): for the problem window of length
/// `D_k` whose end is the deadline of a job of `τ_k`, `τ_i`'s jobs with release and deadline
/// inside the window number `N = floor((D_k - D_i)/T_i) + 1` (0 if `D_k < D_i`), and the
/// carry-in job's deadline lies `resid = D_k - N*T_i` after the window start (`resid <= 0`:
/// no carry-in). Rows are stored in the order they are first needed (`row` returns the
/// offset); nothing is allocated or zeroed for rows never used.
///
/// Memory stays `O(n)` for large sets: up to [`PairTable::CACHE_MAX_N`] tasks every row is
/// kept (at most 16 MiB), above it only the row in use, recomputed (`O(n)`, as cheap as the
/// evaluation that needs it) when another task's row is asked for. A 100,000-task set would
/// otherwise ask for 160 GB.
pub(crate) struct PairTable {
    pub base: Vec<u64>,
    pub resid: Vec<i64>,
    slot: Vec<usize>,
    inv: Vec<f64>,
    n: usize,
    /// Without the cache: the task whose row `base`/`resid` hold (`usize::MAX`: none).
    current: usize,
}

impl PairTable {
    /// The largest set whose rows are all kept (`n² · 16` bytes = 16 MiB).
    pub const CACHE_MAX_N: usize = 1024;

    /// An empty table; rows are filled by [`PairTable::row`] on first use.
    pub fn new(sys: &System) -> PairTable {
        Self::with_cache(sys, sys.n() <= Self::CACHE_MAX_N)
    }

    fn with_cache(sys: &System, cache: bool) -> PairTable {
        let n = sys.n();
        PairTable {
            base: Vec::new(),
            resid: Vec::new(),
            slot: if cache { vec![usize::MAX; n] } else { Vec::new() },
            inv: sys.t.iter().map(|&t| 1.0 / t as f64).collect(),
            n,
            current: usize::MAX,
        }
    }

    /// Fills row `k` if needed and returns its offset.
    #[inline]
    pub fn row(&mut self, sys: &System, k: usize) -> usize {
        if self.slot.is_empty() {
            if self.current != k {
                self.base.clear();
                self.resid.clear();
                self.fill(sys, k);
                self.current = k;
            }
            return 0;
        }
        if self.slot[k] == usize::MAX {
            let off = self.base.len();
            if off == 0 {
                self.base.reserve(self.n * self.n);
                self.resid.reserve(self.n * self.n);
            }
            self.fill(sys, k);
            self.slot[k] = off;
        }
        self.slot[k]
    }

    /// Appends row `k`.
    fn fill(&mut self, sys: &System, k: usize) {
        let dk = sys.d[k];
        for i in 0..self.n {
            let (b, r) = if dk >= sys.d[i] {
                let (q, rem) = divmod(dk - sys.d[i], sys.t[i], self.inv[i]);
                // D_k - (q+1) T_i = rem + D_i - T_i
                ((q + 1) * sys.c[i], rem as i64 + sys.d[i] as i64 - sys.t[i] as i64)
            } else {
                (0, dk as i64)
            };
            self.base.push(b);
            self.resid.push(r);
        }
    }

    /// BCL 2009's bound on `τ_i`'s interference on `τ_k` when `τ_i` has slack `s_i`:
    /// `N*C_i + min(C_i, max(0, D_k - N*T_i - s_i))` (row `off` must be filled).
    #[inline(always)]
    pub fn workload(&self, idx: usize, c_i: u64, s_i: u64) -> u64 {
        let carry = (self.resid[idx] - s_i as i64).clamp(0, c_i as i64) as u64;
        self.base[idx] + carry
    }
}

/// Task indices, those most likely to fail a per-task interference condition first, so that
/// failing sets are rejected early (the order never changes a verdict). The interference on
/// `τ_k` grows like `U D_k` plus carry-in, against a capacity of `m (D_k - C_k)`: sort by
/// the float estimate `(m - U) D_k - m C_k`, ascending, then by index.
pub(crate) fn by_laxity(sys: &System) -> Vec<usize> {
    let mut keyed = laxity_keys(sys);
    keyed.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    keyed.into_iter().map(|(_, k)| k).collect()
}

fn laxity_keys(sys: &System) -> Vec<(f64, usize)> {
    let u: f64 = (0..sys.n()).map(|i| sys.c[i] as f64 / sys.t[i] as f64).sum();
    let m = sys.m as f64;
    (0..sys.n()).map(|k| ((m - u) * sys.d[k] as f64 - m * sys.c[k] as f64, k)).collect()
}

/// [`by_laxity`]'s order as an iterator that sorts only when asked for a second task: most
/// sets that fail, fail at the first (a single pass finds it), so one-pass tests such as BCL
/// skip the sort then.
pub(crate) struct LaxityOrder {
    keyed: Vec<(f64, usize)>,
    pos: usize,
}

impl LaxityOrder {
    pub fn new(sys: &System) -> LaxityOrder {
        LaxityOrder { keyed: laxity_keys(sys), pos: 0 }
    }
}

impl Iterator for LaxityOrder {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        let cmp = |a: &(f64, usize), b: &(f64, usize)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
        if self.pos == 0 {
            let first = self.keyed.iter().min_by(|a, b| cmp(a, b))?.1;
            self.pos = 1;
            return Some(first);
        }
        if self.pos == 1 {
            // The first one returned is the least, so it sorts to the front.
            self.keyed.sort_unstable_by(cmp);
        }
        let k = self.keyed.get(self.pos)?.1;
        self.pos += 1;
        Some(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row-at-a-time table (large sets) holds the same rows as the cached one.
    #[test]
    fn uncached_rows_equal_cached_rows() {
        let ts = TaskSet::from_cdt(&[(3, 10, 10), (5, 17, 20), (1, 4, 7), (9, 30, 31), (2, 5, 5)]).unwrap();
        let Admission::Run(sys) = System::admit(&ts, 2) else { panic!("admitted") };
        let (mut a, mut b) = (PairTable::with_cache(&sys, true), PairTable::with_cache(&sys, false));
        for &k in &[3usize, 0, 0, 4, 1, 3, 2, 2, 0] {
            let (ra, rb) = (a.row(&sys, k), b.row(&sys, k));
            assert_eq!(rb, 0);
            assert_eq!(a.base[ra..ra + 5], b.base[..5], "k = {k}");
            assert_eq!(a.resid[ra..ra + 5], b.resid[..5], "k = {k}");
        }
        assert_eq!(b.base.len(), 5, "one row at a time");
    }

    #[test]
    fn laxity_order_iterator_equals_the_sorted_order() {
        let mut x: u64 = 99;
        for n in 1..40 {
            let params: Vec<(u64, u64, u64)> = (0..n)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    let t = x >> 58 | 1;
                    (1.max((x >> 40) % t / 4), t, t) // repeated keys occur: ties by index
                })
                .collect();
            let ts = TaskSet::from_cdt(&params).unwrap();
            let Admission::Run(sys) = System::admit(&ts, 64) else { continue };
            assert_eq!(LaxityOrder::new(&sys).collect::<Vec<_>>(), by_laxity(&sys), "{params:?}");
        }
    }

    #[test]
    fn divmod_is_exact() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = x % ((1u64 << 53) + 1);
            let t = (x.rotate_left(29) % (1u64 << ((x % 53) + 1))).max(1);
            assert_eq!(divmod(n, t, 1.0 / t as f64), (n / t, n % t), "{n} / {t}");
        }
        for (n, t) in [(1u64 << 53, 1u64), (1 << 53, 3), ((1 << 53) - 1, (1 << 53)), (0, 7), (6, 3)] {
            assert_eq!(divmod(n, t, 1.0 / t as f64), (n / t, n % t));
        }
    }
}
