//! Semi-partitioned reservations (SP-RES): exact placement of polling reservations with C=D
//! splitting, period transformation and meta-heuristics.
//!
//! Brandenburg & Gül, "Global Scheduling Not Required: Simple, Near-Optimal Multiprocessor
//! Real-Time Scheduling with Semi-Partitioned Reservations", RTSS 2016 (seed 004), §III–§VI;
//! the C=D splitting rule of Burns, Davis, Wang & Zhang, "Partitioned EDF scheduling for
//! multiprocessors using a C=D task splitting scheme", Real-Time Systems 48(1), 2012.
//!
//! Assumptions: sporadic tasks on `m` identical processors, per-processor EDF over polling
//! reservations. Implicit and constrained deadlines are supported; a deadline beyond the period
//! is truncated to the period (seed 004 §II). Period transformation (the RP meta-heuristic) is
//! applied to implicit-deadline tasks only (seed 004 §VIII). Every admission decision is exact
//! (integer ns, `u128` demand, rational fallback); see docs/spres.md for the design note.
//!
//! * [`place`] runs one [`Heuristic`]; [`cascade`] runs them cheapest first and reports the
//!   first that succeeds; [`place_many`] runs many sets in parallel (rayon).
//! * [`check`] re-verifies a [`Placement`] on a separate code path.
//! * [`Placement::to_json`] / [`Placement::from_json`] give the documented JSON form.

mod check;
mod demand;
mod engine;
mod placement;

pub use check::{check, CheckError, BRUTE_POINTS};
pub use placement::{CpuPlacement, Placement, Reservation, TaskPlacement};

use crate::Limits;
use rayon::prelude::*;
use rtsched_model::{TaskSet, Time};

/// The basic (non-meta) heuristics of seed 004 §III-C, §III-D and §IV-B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Basic {
    /// Worst-fit decreasing (by density), no splitting.
    Wfd,
    /// First-fit decreasing (by density), no splitting.
    Ffd,
    /// FFD with the C=D splitting rule (Burns et al.'s continuous strategy).
    FfdCd,
    /// WFD with the C=D splitting rule on the least-loaded processor.
    WfdCd,
    /// WFD-C=D, splitting on the processor that admits the largest chunk ("maximal split").
    WfdCdMs,
    /// WFD-C=D, then WFD-C=D-MS from scratch if it fails.
    TwoWfdCd,
    /// Two-phase: WFD without splitting, then 2WFD-C=D on the leftovers.
    Wwfd,
    /// Two-phase: FFD, then 2WFD-C=D.
    Fwfd,
    /// Two-phase: WFD, then FFD-C=D.
    Wffd,
    /// Two-phase: FFD, then FFD-C=D.
    Fffd,
}

impl Basic {
    pub const ALL: [Basic; 10] = [
        Basic::Wfd,
        Basic::Ffd,
        Basic::FfdCd,
        Basic::WfdCd,
        Basic::WfdCdMs,
        Basic::TwoWfdCd,
        Basic::Wwfd,
        Basic::Fwfd,
        Basic::Wffd,
        Basic::Fffd,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Basic::Wfd => "WFD",
            Basic::Ffd => "FFD",
            Basic::FfdCd => "FFD-C=D",
            Basic::WfdCd => "WFD-C=D",
            Basic::WfdCdMs => "WFD-C=D-MS",
            Basic::TwoWfdCd => "2WFD-C=D",
            Basic::Wwfd => "WWFD",
            Basic::Fwfd => "FWFD",
            Basic::Wffd => "WFFD",
            Basic::Fffd => "FFFD",
        }
    }
}

/// A placement heuristic: a basic one, PAF with `h1` (and `h2` = 2WFD-C=D), or RP over a base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Heuristic {
    Basic(Basic),
    /// Pre-assign failures with `h1` ∈ {FFD-C=D, 2WFD-C=D, WWFD, FWFD, WFFD, FFFD} in the paper.
    Paf(Basic),
    /// Reduce periods over a base heuristic (2WFD-C=D, FWFD, WWFD in the paper).
    Rp(Basic),
}

/// The PAF instantiations of seed 004 §IV-B (`h1`; `h2` is always 2WFD-C=D).
pub const PAF_H1: [Basic; 6] = [Basic::FfdCd, Basic::TwoWfdCd, Basic::Wwfd, Basic::Fwfd, Basic::Wffd, Basic::Fffd];
/// The RP instantiations of seed 004 §IV-B.
pub const RP_BASE: [Basic; 3] = [Basic::TwoWfdCd, Basic::Fwfd, Basic::Wwfd];

impl Heuristic {
    /// `"WFD-C=D"`, `"PAF(WWFD)"`, `"RP(2WFD-C=D)"`, ...
    pub fn name(&self) -> String {
        match self {
            Heuristic::Basic(b) => b.name().to_owned(),
            Heuristic::Paf(b) => format!("PAF({})", b.name()),
            Heuristic::Rp(b) => format!("RP({})", b.name()),
        }
    }

    /// Inverse of [`Heuristic::name`], case-insensitive; also accepts `PAF-X` and `RP-X`.
    pub fn from_name(s: &str) -> Option<Heuristic> {
        let s = s.trim().to_ascii_uppercase();
        let basic = |x: &str| Basic::ALL.into_iter().find(|b| b.name() == x);
        if let Some(b) = basic(&s) {
            return Some(Heuristic::Basic(b));
        }
        let inner = |pre: &str| -> Option<Basic> {
            let rest = s.strip_prefix(pre)?;
            let rest = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')).or_else(|| rest.strip_prefix('-'))?;
            basic(rest)
        };
        if let Some(b) = inner("PAF") {
            return Some(Heuristic::Paf(b));
        }
        inner("RP").map(Heuristic::Rp)
    }

    /// Every heuristic of the paper: the 10 basic ones, the 6 PAF and the 3 RP instantiations.
    pub fn all() -> Vec<Heuristic> {
        let mut v: Vec<Heuristic> = Basic::ALL.into_iter().map(Heuristic::Basic).collect();
        v.extend(PAF_H1.into_iter().map(Heuristic::Paf));
        v.extend(RP_BASE.into_iter().map(Heuristic::Rp));
        v
    }

    /// The order [`cascade`] tries (cheapest first). 2WFD-C=D is left out: it succeeds iff
    /// WFD-C=D or WFD-C=D-MS does, both of which run before it.
    pub fn cascade_order(meta: bool) -> Vec<Heuristic> {
        use Basic::*;
        let mut v: Vec<Heuristic> =
            [Wfd, Ffd, WfdCd, FfdCd, WfdCdMs, Wwfd, Fwfd, Wffd, Fffd].into_iter().map(Heuristic::Basic).collect();
        if meta {
            v.extend(PAF_H1.into_iter().map(Heuristic::Paf));
            v.extend(RP_BASE.into_iter().map(Heuristic::Rp));
        }
        v
    }
}

/// Configuration of the placement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemiConfig {
    /// Minimum slice size ε (seed 004 §VI): a split is made only if both pieces get at least
    /// ε ns of budget, and RP never transforms a budget below ε. Default 0 (the paper's main
    /// experiments, §V; §VI studies up to 2000 µs).
    pub epsilon: Time,
    /// Whether [`cascade`] also tries the PAF and RP meta-heuristics (`--no-meta` = false).
    pub meta: bool,
    /// The RP meta-heuristic's minimum threshold (seed 004 §IV-B: 4 ms).
    pub rp_floor: Time,
    /// Work bounds of each exact demand test inside the heuristics; a test that hits one counts
    /// as "does not fit" (safe, but a C=D chunk may then come out below the exact maximum).
    /// Default: 20,000 QPA steps, intervals up to 2^62 ns. The checker has its own bounds.
    pub limits: Limits,
}

impl Default for SemiConfig {
    fn default() -> Self {
        SemiConfig {
            epsilon: 0,
            meta: true,
            rp_floor: 4_000_000,
            limits: Limits { max_steps: 20_000, max_interval: 1 << 62, ..Limits::default() },
        }
    }
}

/// Exact necessary conditions checked before any heuristic: `m >= 1`, every `C <= min(D, T)`,
/// `U <= m`. Returns the reason when one fails.
fn precheck(ts: &TaskSet, m: u32) -> Option<String> {
    if m == 0 {
        return Some("field 'm': the number of processors must be at least 1, got 0".into());
    }
    for (i, t) in ts.iter().enumerate() {
        if t.wcet > t.deadline.min(t.period) {
            return Some(format!(
                "task {i}: WCET {} ns exceeds min(D, T) = {} ns; no reservation can serve it",
                t.wcet,
                t.deadline.min(t.period)
            ));
        }
    }
    if !ts.utilization_at_most(m as u64) {
        return Some(format!("total utilization {:.6} exceeds m = {m}", ts.utilization_f64()));
    }
    None
}

fn run(ts: &TaskSet, m: u32, h: &Heuristic, cfg: &SemiConfig, round0: Option<&(Vec<usize>, String)>) -> Placement {
    let mu = m as usize;
    let res = match *h {
        Heuristic::Basic(b) => engine::basic(ts, mu, b, cfg),
        Heuristic::Paf(b) => engine::paf(ts, mu, b, cfg, round0),
        Heuristic::Rp(b) => engine::rp(ts, mu, b, cfg),
    };
    match res {
        Ok(st) => Placement::from_state(m, h.name(), &st),
        Err(reason) => Placement::failed(m, h.name(), reason),
    }
}

/// Runs one heuristic. Never panics; an unplaceable set gives `schedulable: false` and a reason.
pub fn place(ts: &TaskSet, m: u32, h: &Heuristic, cfg: &SemiConfig) -> Placement {
    if let Some(r) = precheck(ts, m) {
        return Placement::failed(m, h.name(), r);
    }
    run(ts, m, h, cfg, None)
}

/// Runs [`Heuristic::cascade_order`] and stops at the first success (seed 004 §IV-B, "run many
/// heuristics"). On failure the reason is the last heuristic's.
pub fn cascade(ts: &TaskSet, m: u32, cfg: &SemiConfig) -> Placement {
    cascade_of(ts, m, &Heuristic::cascade_order(cfg.meta), cfg)
}

/// Tries the heuristics of `order` in turn and returns the first success (or the last failure):
/// [`cascade`] with a caller-chosen list, e.g. the cascade up to PAF without RP. The experiment
/// engine uses it to evaluate a cumulative group of heuristics at the cost of its first success.
pub fn cascade_of(ts: &TaskSet, m: u32, order: &[Heuristic], cfg: &SemiConfig) -> Placement {
    if let Some(r) = precheck(ts, m) {
        return Placement::failed(m, "cascade".into(), r);
    }
    let mut last = None;
    let mut round0 = None;
    for h in order {
        if matches!(h, Heuristic::Paf(_)) && round0.is_none() {
            round0 = Some(engine::paf_round0(ts, m as usize, cfg));
        }
        let p = run(ts, m, h, cfg, round0.as_ref());
        if p.schedulable {
            return p;
        }
        last = Some(p);
    }
    last.unwrap_or_else(|| Placement::failed(m, "cascade".into(), "no heuristic".into()))
}

/// For experiments: per set, per heuristic, whether it places the set (rayon over sets).
pub fn place_many(sets: &[TaskSet], m: u32, hs: &[Heuristic], cfg: &SemiConfig) -> Vec<Vec<bool>> {
    sets.par_iter().map(|ts| hs.iter().map(|h| place(ts, m, h, cfg).schedulable).collect()).collect()
}
