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
//! * [`place`] runs one [`Heuristic`]; [`cascade`] runs them in the order of the configured
//!   [`Variant`] (the paper's text or its published code) and reports the first that succeeds;
//!   [`place_many`] runs many sets in parallel (rayon).
//! * [`SemiConfig`] chooses the reading ([`Variant`]), the RP mode ([`RpMode`]) and floor, ε,
//!   and the layout of split tasks ([`SliceOrder`], merging pieces on one processor).
//! * [`check`] re-verifies a [`Placement`] on a separate code path.
//! * [`Placement`] (the model's) is what they return; [`Placement::to_json`] /
//!   [`Placement::from_json`] give the documented JSON form.

mod cd;
mod check;
mod config;
mod demand;
mod engine;
mod meta;
mod placement;

pub use check::{check, CheckError, BRUTE_POINTS};
pub use config::{RpMode, SemiConfig, SliceOrder, Variant, PAPER_PERIODS_NS};
/// The placement the heuristics write: the model's (`rtsched_model::placement`), re-exported.
pub use rtsched_model::placement::{CpuPlacement, Placement, Reservation, TaskPlacement};

use rayon::prelude::*;
use rtsched_model::TaskSet;

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

    /// The order [`cascade`] tries under `variant`: [`cascade_groups`] concatenated, the
    /// meta-heuristic groups only when `meta`.
    pub fn cascade_order(variant: Variant, meta: bool) -> Vec<Heuristic> {
        let mut v = Vec::new();
        for (group, hs) in cascade_groups(variant) {
            if meta || !matches!(group, Group::Paf | Group::Rp) {
                v.extend(hs);
            }
        }
        v
    }
}

/// The groups of the cascade, as the paper's figures group the heuristics (§V: partitioning,
/// semi-partitioning, + PAF, + RP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    Partitioning,
    Semi,
    Paf,
    Rp,
}

/// The cascade's groups and their members in the order the cascade tries them.
///
/// * `Text`: cheapest first (WFD, FFD; WFD-C=D, FFD-C=D, WFD-C=D-MS, then the two-phase ones;
///   PAF; RP). 2WFD-C=D is left out: under the text's reading it succeeds iff WFD-C=D or
///   WFD-C=D-MS does, both of which run before it.
/// * `Artifact`: the experiment script's groups, each in the order its Python 2.7 dictionary
///   iterates (what its `apply_heuristics` loop sees; checked with CPython 2.7.18, 64-bit):
///   FFD, WFD; FFD-C=D, WFFD, FFFD, WWFD, FWFD, 2WFD-C=D; PAF with h1 = FFFD, WFFD, FWFD,
///   2WFD-C=D, WWFD, FFD-C=D; RP over FWFD, 2WFD-C=D, WWFD. Only the placement a set gets (and so
///   its switch-rate bound and its simulation) depends on this order, not whether it is placed.
pub fn cascade_groups(variant: Variant) -> [(Group, Vec<Heuristic>); 4] {
    use Basic::*;
    let b = |v: &[Basic]| v.iter().map(|&x| Heuristic::Basic(x)).collect::<Vec<_>>();
    match variant {
        Variant::Text => [
            (Group::Partitioning, b(&[Wfd, Ffd])),
            (Group::Semi, b(&[WfdCd, FfdCd, WfdCdMs, Wwfd, Fwfd, Wffd, Fffd])),
            (Group::Paf, PAF_H1.iter().map(|&x| Heuristic::Paf(x)).collect()),
            (Group::Rp, RP_BASE.iter().map(|&x| Heuristic::Rp(x)).collect()),
        ],
        Variant::Artifact => [
            (Group::Partitioning, b(&[Ffd, Wfd])),
            (Group::Semi, b(&[FfdCd, Wffd, Fffd, Wwfd, Fwfd, TwoWfdCd])),
            (Group::Paf, [Fffd, Wffd, Fwfd, TwoWfdCd, Wwfd, FfdCd].iter().map(|&x| Heuristic::Paf(x)).collect()),
            (Group::Rp, [Fwfd, TwoWfdCd, Wwfd].iter().map(|&x| Heuristic::Rp(x)).collect()),
        ],
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

fn run(ts: &TaskSet, m: u32, h: &Heuristic, cfg: &SemiConfig, cache: &mut meta::Round0) -> Placement {
    let mu = m as usize;
    let res = match *h {
        Heuristic::Basic(b) => meta::basic(ts, mu, b, cfg, cache),
        Heuristic::Paf(b) => meta::paf(ts, mu, b, cfg, cache),
        Heuristic::Rp(b) => meta::rp(ts, mu, b, cfg, cache),
    };
    match res {
        Ok(st) => placement::from_state(m, h.name(), &st, cfg),
        Err(reason) => Placement::failed(m, h.name(), reason),
    }
}

/// Runs one heuristic. Never panics; an unplaceable set gives `schedulable: false` and a reason.
pub fn place(ts: &TaskSet, m: u32, h: &Heuristic, cfg: &SemiConfig) -> Placement {
    // Self-suspending tasks: reservations sized suspension-obliviously (crate::suspension).
    let ts = match crate::suspension::oblivious(ts) {
        Ok(v) => v,
        Err(e) => return Placement::failed(m, h.name(), e.to_string()),
    };
    let ts = ts.as_ref();
    if let Some(r) = precheck(ts, m) {
        return Placement::failed(m, h.name(), r);
    }
    run(ts, m, h, cfg, &mut meta::Round0::default())
}

/// Runs [`Heuristic::cascade_order`] and stops at the first success (seed 004 §IV-B, "run many
/// heuristics"). On failure the reason is the last heuristic's.
pub fn cascade(ts: &TaskSet, m: u32, cfg: &SemiConfig) -> Placement {
    cascade_of(ts, m, &Heuristic::cascade_order(cfg.variant, cfg.meta), cfg)
}

/// Tries the heuristics of `order` in turn and returns the first success (or the last failure):
/// [`cascade`] with a caller-chosen list, e.g. the cascade up to PAF without RP. The experiment
/// engine uses it to evaluate a cumulative group of heuristics at the cost of its first success.
///
/// The outcome of a basic heuristic on the untransformed set is kept for the meta-heuristics
/// whose first round is that same run (PAF's round 0 is 2WFD-C=D on every task; the divisor
/// RP's round 0 is its base heuristic), so it is computed once per set.
pub fn cascade_of(ts: &TaskSet, m: u32, order: &[Heuristic], cfg: &SemiConfig) -> Placement {
    let ts = match crate::suspension::oblivious(ts) {
        Ok(v) => v,
        Err(e) => return Placement::failed(m, "cascade".into(), e.to_string()),
    };
    let ts = ts.as_ref();
    if let Some(r) = precheck(ts, m) {
        return Placement::failed(m, "cascade".into(), r);
    }
    let mut last = None;
    let mut cache = meta::Round0::default();
    for h in order {
        let p = run(ts, m, h, cfg, &mut cache);
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
