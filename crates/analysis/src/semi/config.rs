//! The placement's configuration: the two readings of Brandenburg & Gül, RTSS 2016 (the
//! paper's text and its published code), the period-transformation mode of the RP
//! meta-heuristic, and how a split task's pieces are laid out (docs/spres.md, "Paper text
//! versus paper code").

use crate::Limits;
use rtsched_model::{ModelError, Time};
use std::fmt;

const MS: Time = 1_000_000;

/// The period set of the paper's §V experiments, {1, 2, 4, …, 1000} ms: the divisor RP's
/// candidate periods (the artifact's experiment script passes exactly this list).
pub const PAPER_PERIODS_NS: [Time; 16] = [
    MS,
    2 * MS,
    4 * MS,
    5 * MS,
    8 * MS,
    10 * MS,
    20 * MS,
    25 * MS,
    40 * MS,
    50 * MS,
    100 * MS,
    125 * MS,
    200 * MS,
    250 * MS,
    500 * MS,
    1000 * MS,
];

/// Which reading of the placement heuristics runs (docs/spres.md has the table of differences).
///
/// * `Text`: the heuristics as §III-D and §IV-B of the paper describe them: WFD-C=D tries only
///   the least-utilized processor and splits there; 2WFD-C=D runs WFD-C=D-MS only if WFD-C=D
///   fails; FFD-C=D is Burns et al.'s continuous strategy (first non-empty processor that
///   admits, else split on the processor last added to, which is then no longer considered);
///   PAF gives up when `h1` cannot pre-assign the failures; the cascade runs the heuristics
///   cheapest first.
/// * `Artifact`: the heuristics as the paper's published code (SchedCAT's
///   `schedcat/mapping/apa.py` of Oct 2016 and its experiment script) runs them: WFD places
///   on any processor that admits the piece (least density first) and splits only when none
///   does, on the first processor by increasing density that admits a chunk of at least ε
///   (-MS: the largest chunk, the highest index on ties), retrying earlier failures after
///   each split; 2WFD-C=D runs both and keeps the one with fewer failures, then fewer pieces
///   (ties: -MS); FFD-C=D fills processor after processor and closes each at its first
///   non-fitting piece (split there when a chunk of at least ε fits); PAF lets 2WFD-C=D place
///   what `h1` could not pre-assign; the cascade runs the groups partitioning, semi-partitioning,
///   PAF, RP in the script's (Python 2 dictionary) order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Variant {
    Text,
    #[default]
    Artifact,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Text => "text",
            Variant::Artifact => "artifact",
        }
    }

    /// `"text"` or `"artifact"` (case-insensitive); the error names the field `variant`.
    pub fn parse(s: &str) -> Result<Variant, ModelError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "text" => Ok(Variant::Text),
            "artifact" => Ok(Variant::Artifact),
            other => Err(ModelError::field("variant", format!("unknown variant {other:?} (use text or artifact)"))),
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the RP meta-heuristic (§IV-B, "reduce periods") transforms periods.
///
/// * `Divisor` (the artifact's `meta_reduce_periods`): one round per candidate period (the
///   paper's period set by default), from the largest down to the floor; each round starts
///   from the original task set and transforms only the tasks that failed in any earlier
///   round and whose original period is at least the round's limit, to the largest candidate
///   below the limit (and at least the floor) that divides `T` with `⌊T/k⌋ ≥ ⌈C/k⌉`, else to
///   the smallest candidate at or above the limit that does; no ε bound on budgets.
/// * `Halving`: the threshold θ starts at the largest period and halves each round down to the
///   floor; each round transforms every implicit-deadline task whose current period is at
///   least θ (smallest `k` with `T/k < θ`) and every task that failed in any earlier round (at
///   least one more slice than before); periods `⌊T/k⌋` need not divide `T`; budgets stay
///   `≥ ε`. Failures accumulate over the rounds, as the text says ("failed … in previous
///   iterations").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RpMode {
    #[default]
    Divisor,
    Halving,
}

impl RpMode {
    pub fn name(self) -> &'static str {
        match self {
            RpMode::Divisor => "divisor",
            RpMode::Halving => "halving",
        }
    }

    /// `"divisor"` or `"halving"`; the error names the field `rp`.
    pub fn parse(s: &str) -> Result<RpMode, ModelError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "divisor" => Ok(RpMode::Divisor),
            "halving" => Ok(RpMode::Halving),
            other => Err(ModelError::field("rp", format!("unknown RP mode {other:?} (use divisor or halving)"))),
        }
    }
}

/// The window order of a split task's pieces (all orders are valid: each piece is analysed as
/// a sporadic reservation with its own deadline, so any back-to-back order of the windows meets
/// the job's deadline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SliceOrder {
    /// The flipped C=D order of §IV-A: the piece placed whole (the one with laxity) first, then
    /// the zero-laxity chunks in reverse order of their creation.
    #[default]
    Flipped,
    /// By deadline, longest window first (the artifact's LITMUS^RT workload writer, used for
    /// Table I); ties by processor index, then creation order.
    DeadlineDesc,
}

impl SliceOrder {
    pub fn name(self) -> &'static str {
        match self {
            SliceOrder::Flipped => "flipped",
            SliceOrder::DeadlineDesc => "deadline-desc",
        }
    }

    /// `"flipped"` or `"deadline-desc"`; the error names the field `slice_order`.
    pub fn parse(s: &str) -> Result<SliceOrder, ModelError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "flipped" => Ok(SliceOrder::Flipped),
            "deadline-desc" => Ok(SliceOrder::DeadlineDesc),
            other => Err(ModelError::field(
                "slice_order",
                format!("unknown slice order {other:?} (use flipped or deadline-desc)"),
            )),
        }
    }
}

/// Configuration of the placement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemiConfig {
    /// Minimum slice size ε (§VI): a split is made only if both pieces get at least ε ns of
    /// budget; the halving RP never transforms a budget below ε. Default 0 (§V; §VI studies up
    /// to 2000 µs).
    pub epsilon: Time,
    /// Whether [`super::cascade`] also tries the PAF and RP meta-heuristics (`--no-meta` = false).
    pub meta: bool,
    /// Which reading of the heuristics runs. Default: the artifact's.
    pub variant: Variant,
    /// How RP transforms periods. Default: the artifact's divisor rounds.
    pub rp: RpMode,
    /// RP's minimum period (threshold): 4 ms as §IV-B and §VI say (the artifact's script runs
    /// 2 ms).
    pub rp_floor: Time,
    /// The divisor RP's candidate periods (any order; duplicates and zeros are ignored).
    /// Default: the paper's period set [`PAPER_PERIODS_NS`].
    pub rp_periods: Vec<Time>,
    /// Window order of a split task's pieces in the placement.
    pub slice_order: SliceOrder,
    /// Merge the pieces of one task that landed on the same processor into one reservation
    /// (budgets and windows added; safe because its demand is at most theirs at every point).
    /// The artifact's workload writer does this for Table I. Default false.
    pub merge_same_core: bool,
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
            variant: Variant::Artifact,
            rp: RpMode::Divisor,
            rp_floor: 4 * MS,
            rp_periods: PAPER_PERIODS_NS.to_vec(),
            slice_order: SliceOrder::Flipped,
            merge_same_core: false,
            limits: Limits { max_steps: 20_000, max_interval: 1 << 62 },
        }
    }
}

impl SemiConfig {
    /// The setup of a reading as the paper ran it: `Text` = the text's heuristics, the halving
    /// RP, the text's 4 ms floor; `Artifact` = the artifact's heuristics, the divisor RP over
    /// the paper's period set, the 2 ms floor of the artifact's experiment script. ε, `meta`,
    /// the slice layout and the limits keep their defaults.
    pub fn for_variant(variant: Variant) -> SemiConfig {
        match variant {
            Variant::Text => SemiConfig { variant, rp: RpMode::Halving, rp_floor: 4 * MS, ..SemiConfig::default() },
            Variant::Artifact => SemiConfig { variant, rp: RpMode::Divisor, rp_floor: 2 * MS, ..SemiConfig::default() },
        }
    }

    /// The divisor RP's candidates: sorted ascending, without duplicates and zeros.
    pub(crate) fn candidates(&self) -> Vec<Time> {
        let mut v: Vec<Time> = self.rp_periods.iter().copied().filter(|&p| p > 0).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}
