//! The cost of the push/pull operations per find-CPU variant as a function of `m`, with the
//! structures alone (Lelli et al., 2011, §6, measured here in the form the issue calls (a)):
//!
//! 1. [`record`] (`super::vtime`): the push/pull mechanism runs a task set in *virtual time* on `m` CPUs
//!    (every job executes for its WCET, as the paper's synthetic tasks do), driven by the
//!    events of the schedule — releases at `k·T`, completions when a running job's work is
//!    done, reschedules when requested — single-threaded. The sequence of plugin calls it makes
//!    (`release(d, now)`, `schedule(cpu, prev)` with the job returned) is the *recording*.
//!    After every instant, once the reschedule requests have settled, the running jobs must be
//!    exactly the `min(m, r)` best ready ones (`rtsched_policy::invariant::check_global`):
//!    sequentially a push never fails, so push/pull is G-EDF (or global FP) there, and the
//!    recording is a G-EDF run — `tests` also checks its completion times against the
//!    simulator's (`rtsched_sim`, Scheduler::Gedf).
//! 2. [`replay`]: the recording is replayed call by call against a fresh mechanism over each
//!    find-CPU variant, timing every `push`, `pull`, `enqueue` and `dequeue` with the TSC
//!    (nested spans: a push's own dequeue and enqueue are timed too, and the probe cost is
//!    subtracted, see [`Probe`]). The variants answer every find identically (their oracle
//!    tests), so each performs exactly the recorded sequence — checked: a replay that returns
//!    a different job than the recording is an error.
//!
//! EDF recordings drive `linear`, `fmask` and `cpudl`; rate-monotonic recordings (global FP,
//! SCHED_FIFO's policy) drive `cpupri`. Single-threaded, the structures' lines stay in one
//! core's caches: these are the algorithmic costs (scan length, heap depth, level walks, lock
//! acquisitions without contention), not the cross-core misses of the paper's 48-core machine.

use super::ops::Op;
use super::recording::{mechanism, Call, PrevKind, Recording};
pub use super::vtime::record;
use super::PushPull;
use crate::clock::{self, ClockPair};
use crate::mechanism::{Effects, Job, Prev};
use crate::queue::cpudl::Cpudl;
use crate::queue::cpupri::Cpupri;
use crate::queue::find_cpu::FindCpu;
use crate::queue::find_linear::Linear;
use crate::queue::fmask::Fmask;
use crate::sync::{Primitives, SpinGuard, SpinLock};
use crate::RunError;
use rtsched_model::{ModelError, TaskSet};

/// A find-CPU variant of the cost experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    Linear,
    Fmask,
    Cpudl,
    Cpupri,
}

impl Variant {
    pub const ALL: [Variant; 4] = [Variant::Linear, Variant::Fmask, Variant::Cpudl, Variant::Cpupri];
    pub fn name(self) -> &'static str {
        match self {
            Variant::Linear => "linear",
            Variant::Fmask => "fmask",
            Variant::Cpudl => "cpudl",
            Variant::Cpupri => "cpupri",
        }
    }
    /// The variant named `s`; the error lists the names.
    pub fn parse(s: &str) -> Result<Variant, ModelError> {
        Variant::ALL
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| ModelError::new(format!("unknown find-CPU variant {s:?}; known: linear, fmask, cpudl, cpupri")))
    }
    /// Whether it schedules by fixed priorities (rate-monotonic recordings).
    pub fn fixed_priority(self) -> bool {
        self == Variant::Cpupri
    }
}

/// Cycle counts of one operation: exact counts below [`Hist::EXACT`] cycles, the rest kept.
#[derive(Debug, Clone)]
pub struct Hist {
    counts: Vec<u64>,
    over: Vec<u64>,
    n: u64,
    sum: u128,
}

impl Default for Hist {
    fn default() -> Hist {
        Hist { counts: vec![0; Hist::EXACT], over: Vec::new(), n: 0, sum: 0 }
    }
}

impl Hist {
    pub const EXACT: usize = 1 << 14;

    #[inline]
    pub fn add(&mut self, v: u64) {
        if (v as usize) < Hist::EXACT {
            self.counts[v as usize] += 1;
        } else {
            self.over.push(v);
        }
        self.n += 1;
        self.sum += v as u128;
    }

    pub fn merge(&mut self, o: &Hist) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.over.extend_from_slice(&o.over);
        self.n += o.n;
        self.sum += o.sum;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64)
    }

    /// The robust statistics of the samples (`rtsched_trace::is_outlier`, the measurement
    /// protocol's rule for maxima): median, p99, the outliers, and the mean and maximum of the
    /// samples that are not outliers. None without samples.
    pub fn robust(&self) -> Option<Robust> {
        let (q1, q3, p50, p99) = (self.quantile(0.25)?, self.quantile(0.75)?, self.quantile(0.5)?, self.quantile(0.99)?);
        let out = |x: u64| rtsched_trace::is_outlier(x, q1, q3, p99);
        let (mut n, mut sum, mut max, mut outliers) = (0u64, 0u128, 0u64, 0u64);
        let exact = self.counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(v, &c)| (v as u64, c));
        for (v, c) in exact.chain(self.over.iter().map(|&v| (v, 1))) {
            if out(v) {
                outliers += c;
            } else {
                n += c;
                sum += v as u128 * c as u128;
                max = max.max(v);
            }
        }
        Some(Robust { p50, p99, max, outliers, mean: sum as f64 / n.max(1) as f64 })
    }

    /// The nearest-rank quantile `q` in (0, 1].
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0u64;
        for (v, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(v as u64);
            }
        }
        let mut over = self.over.clone();
        over.sort_unstable();
        over.get((rank - seen - 1) as usize).copied()
    }
}

/// Robust statistics of a [`Hist`] ([`Hist::robust`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Robust {
    pub p50: u64,
    pub p99: u64,
    /// The largest sample that is not an outlier.
    pub max: u64,
    pub outliers: u64,
    /// The mean of the samples that are not outliers.
    pub mean: f64,
}

/// The TSC probe: every `begin`/`end` pair is one span; a span's sample is its length minus the
/// probe's own cost (`self_cost`, an empty span) and `child_cost` per span nested in it (what
/// an empty inner span adds to the outer one), both calibrated by [`Probe::calibrate`].
#[derive(Debug, Clone)]
pub struct Probe {
    pub hist: [Hist; 4],
    stack: Vec<(Op, u64, u32)>,
    pub self_cost: u64,
    pub child_cost: u64,
    enabled: bool,
}

impl Default for Probe {
    fn default() -> Probe {
        Probe { hist: Default::default(), stack: Vec::with_capacity(8), self_cost: 0, child_cost: 0, enabled: true }
    }
}

impl Probe {
    /// A probe that times nothing (criterion measures whole replays).
    pub fn disabled() -> Probe {
        Probe { enabled: false, ..Probe::default() }
    }

    #[inline]
    fn begin(&mut self, op: Op) {
        if self.enabled {
            self.stack.push((op, clock::counter(), 0));
        }
    }

    #[inline]
    fn end(&mut self, _op: Op) {
        if !self.enabled {
            return;
        }
        let t = clock::counter();
        if let Some((op, start, children)) = self.stack.pop() {
            let raw = t.saturating_sub(start);
            let v = raw.saturating_sub(self.self_cost + children as u64 * self.child_cost);
            self.hist[op.index()].add(v);
            if let Some(parent) = self.stack.last_mut() {
                parent.2 += 1;
            }
        }
    }

    /// Measures the probe's own costs (medians of 20,000 empty spans and of 20,000 spans around
    /// one empty span) and sets them; the histograms are cleared.
    pub fn calibrate(&mut self) {
        let median = |h: &Hist| h.quantile(0.5).unwrap_or(0);
        let mut p = Probe::default();
        for _ in 0..20_000 {
            p.begin(Op::Push);
            p.end(Op::Push);
            p.begin(Op::Pull);
            p.begin(Op::Enqueue);
            p.end(Op::Enqueue);
            p.end(Op::Pull);
        }
        self.self_cost = median(&p.hist[Op::Push.index()]);
        self.child_cost = median(&p.hist[Op::Pull.index()]).saturating_sub(self.self_cost);
        self.hist = Default::default();
    }
}

/// The replay's effects: untraced locks, requests (and notifications, which push/pull does not
/// send) as flags, every operation's span timed by the probe.
struct TimingEnv<'p> {
    resched: Vec<bool>,
    probe: &'p mut Probe,
}

impl Effects for TimingEnv<'_> {
    #[inline]
    fn lock<'a, T, B: Primitives>(&mut self, l: &'a SpinLock<T, B>) -> SpinGuard<'a, T, B> {
        l.lock_untraced()
    }
    #[inline]
    fn preempt(&mut self, cpu: usize) {
        self.resched[cpu] = true;
    }
    fn notify(&mut self, cpu: usize) {
        self.resched[cpu] = true;
    }
    #[inline]
    fn term_start(&mut self, term: u32) {
        if let Some(op) = Op::of_term(term) {
            self.probe.begin(op);
        }
    }
    #[inline]
    fn term_end(&mut self, term: u32) {
        if let Some(op) = Op::of_term(term) {
            self.probe.end(op);
        }
    }
}

/// Replays `rec` against a fresh mechanism over the find-CPU structure `find` (sized for
/// `rec.m`), adding each operation's cycles to `probe`. Errors if the replay diverges from the
/// recording (a variant that decided differently).
pub fn replay<F: FindCpu>(rec: &Recording, find: F, probe: &mut Probe) -> Result<(), RunError> {
    let pp = mechanism(&rec.tasks, rec.m, &rec.rule, rec.horizon, find)?;
    let mut running: Vec<Option<Job>> = vec![None; rec.m];
    let mut env = TimingEnv { resched: vec![false; rec.m], probe };
    for (i, call) in rec.calls.iter().enumerate() {
        match *call {
            Call::Release { cpu, now } => pp.release_with(&mut env, cpu as usize, now),
            Call::Schedule { cpu, prev, got } => {
                let c = cpu as usize;
                let p = match (prev, running[c]) {
                    (PrevKind::Idle, _) | (_, None) => Prev::Idle,
                    (PrevKind::Preempted, Some(j)) => Prev::Preempted(j),
                    (PrevKind::Completed, Some(j)) => Prev::Completed(j),
                };
                let r = pp.schedule_with(&mut env, c, p);
                if r.map(|j| (j.task(), j.seq())) != got {
                    return Err(RunError::Internal(format!(
                        "replay over {}: call {i} (schedule on CPU {c}) returned {:?}, the recording {got:?}",
                        find_name::<F>(&pp),
                        r.map(|j| (j.task(), j.seq()))
                    )));
                }
                running[c] = r;
            }
        }
    }
    Ok(())
}

fn find_name<F: FindCpu>(pp: &PushPull<F>) -> &'static str {
    pp.core().find().name()
}

/// The robust statistics of each operation of one variant, in TSC cycles and ns: the median,
/// the p99, the mean of the samples the outlier rule keeps (`avg_*`; the raw mean of all
/// samples in `avg_raw_cycles`), the largest kept sample and the outliers (at most 1 %).
#[derive(Debug, Clone, PartialEq)]
pub struct OpCost {
    pub op: &'static str,
    pub count: u64,
    pub outliers: u64,
    pub avg_cycles: f64,
    pub avg_raw_cycles: f64,
    pub p50_cycles: u64,
    pub p99_cycles: u64,
    pub max_cycles: u64,
    pub avg_ns: f64,
    pub p50_ns: f64,
    pub p99_ns: f64,
}

/// The costs of every operation of `variant` over the sets `sets` on `m` CPUs: each set is
/// recorded for `horizon` ns (EDF, or rate-monotonic for cpupri) and replayed once, timed.
/// The TSC is calibrated against the monotonic clock over the whole measurement.
pub fn measure(sets: &[TaskSet], m: usize, horizon: u64, variants: &[Variant], max_calls: usize) -> Result<Vec<(Variant, Vec<OpCost>)>, RunError> {
    let mut probe = Probe::default();
    probe.calibrate();
    let a = ClockPair::now();
    let mut hists: Vec<[Hist; 4]> = variants.iter().map(|_| Default::default()).collect();
    for (k, ts) in sets.iter().enumerate() {
        let edf = variants.iter().any(|v| !v.fixed_priority()).then(|| record(ts, m, false, horizon, max_calls)).transpose()?;
        let fp = variants.iter().any(|v| v.fixed_priority()).then(|| record(ts, m, true, horizon, max_calls)).transpose()?;
        // Rotate the order per set, so that no variant always runs first.
        for i in 0..variants.len() {
            let vi = (i + k) % variants.len();
            let v = variants[vi];
            probe.hist = Default::default();
            let rec = if v.fixed_priority() { fp.as_ref() } else { edf.as_ref() };
            let Some(rec) = rec else { continue };
            match v {
                Variant::Linear => replay(rec, Linear::new(m), &mut probe)?,
                Variant::Fmask => replay(rec, Fmask::new(m), &mut probe)?,
                Variant::Cpudl => replay(rec, Cpudl::new(m), &mut probe)?,
                Variant::Cpupri => replay(rec, Cpupri::new(m, rec.tasks.len()), &mut probe)?,
            }
            for (h, p) in hists[vi].iter_mut().zip(&probe.hist) {
                h.merge(p);
            }
        }
    }
    let b = ClockPair::now();
    let ns_per_tick = if clock::COUNTER_IS_TSC && b.counter > a.counter {
        b.mono_ns.saturating_sub(a.mono_ns) as f64 / (b.counter - a.counter) as f64
    } else {
        1.0
    };
    Ok(variants
        .iter()
        .zip(&hists)
        .map(|(&v, hs)| {
            let costs = Op::ALL
                .iter()
                .map(|&op| {
                    let h = &hs[op.index()];
                    let r = h.robust().unwrap_or(Robust { p50: 0, p99: 0, max: 0, outliers: 0, mean: 0.0 });
                    OpCost {
                        op: op.name(),
                        count: h.count(),
                        outliers: r.outliers,
                        avg_cycles: r.mean,
                        avg_raw_cycles: h.mean().unwrap_or(0.0),
                        p50_cycles: r.p50,
                        p99_cycles: r.p99,
                        max_cycles: r.max,
                        avg_ns: r.mean * ns_per_tick,
                        p50_ns: r.p50 as f64 * ns_per_tick,
                        p99_ns: r.p99 as f64 * ns_per_tick,
                    }
                })
                .collect();
            (v, costs)
        })
        .collect())
}

#[cfg(test)]
mod hist_tests {
    use super::*;

    #[test]
    fn robust_statistics_drop_rare_huge_samples_from_the_mean_and_the_maximum() {
        let mut h = Hist::default();
        for _ in 0..198 {
            h.add(100);
        }
        // Two interrupted operations, above the exact range: the raw mean is 5× the median.
        h.add(40_000);
        h.add(50_000);
        let r = h.robust().unwrap();
        assert_eq!((r.p50, r.p99, r.max, r.outliers), (100, 100, 100, 2));
        assert_eq!(r.mean, 100.0);
        assert_eq!(h.mean(), Some((198.0 * 100.0 + 90_000.0) / 200.0));
        // A heavy tail (3 % above the fence) is kept whole: the p99 bound.
        let mut t = Hist::default();
        for v in std::iter::repeat_n(100, 194).chain(std::iter::repeat_n(20_000, 6)) {
            t.add(v);
        }
        let r = t.robust().unwrap();
        assert_eq!((r.p99, r.max, r.outliers), (20_000, 20_000, 0));
        assert_eq!(r.mean, t.mean().unwrap());
        assert_eq!(Hist::default().robust(), None);
    }
}
