//! Measured models and their evaluation at n: piecewise-linear, clamped, maxima made monotone
//! (Brandenburg & Anderson, RTSS 2009, §4.1), and the explicit extrapolations in n and m.

use super::{Overheads, Term, MAX_OVERHEAD};
use crate::{ModelError, Time};
use serde::Serialize;

/// Which statistic of a measured model to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OverheadStat {
    /// Averages (the soft real-time view, Brandenburg & Anderson, RTSS 2009, §4.2).
    Avg,
    /// Maxima (the hard real-time view, ibid.), made monotone in n (ibid. §4.1).
    Max,
}

impl OverheadStat {
    pub fn parse(s: &str) -> Result<OverheadStat, ModelError> {
        match s {
            "avg" => Ok(OverheadStat::Avg),
            "max" => Ok(OverheadStat::Max),
            other => Err(ModelError::field("overhead_stat", format!("must be \"max\" or \"avg\", got {other:?}"))),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            OverheadStat::Avg => "avg",
            OverheadStat::Max => "max",
        }
    }
}

/// One measured term: sample points in n with the average and the maximum (integer ns,
/// rounded up from the file's numbers), and the optional per-point statistics of the
/// measurement protocol ([`PointStats`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermTable {
    pub n: Vec<u64>,
    pub avg_ns: Vec<Time>,
    pub max_ns: Vec<Time>,
    /// What the file says besides n, avg and max (each column as long as `n`, when present).
    pub stats: PointStats,
    /// The running maximum of `max_ns` in n (computed once, at construction).
    max_mono: Vec<Time>,
}

/// The optional per-point columns of a term (docs/formats.md, "Overhead models"): what the
/// measurement protocol kept, discarded and filtered at each n (docs/overheads.md,
/// "Measurement protocol"). Each column, when present, has one value per point.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PointStats {
    /// Samples kept (after the interference filter).
    pub count: Option<Vec<u64>>,
    /// Median of the kept samples.
    pub p50_ns: Option<Vec<Time>>,
    /// 99th percentile of the kept samples.
    pub p99_ns: Option<Vec<Time>>,
    /// The maximum before the outlier rule (`max_ns` is after it).
    pub max_raw_ns: Option<Vec<Time>>,
    /// Samples discarded because a host interruption fell inside them.
    pub discarded: Option<Vec<u64>>,
    /// Samples removed from the maximum by the outlier rule.
    pub outliers: Option<Vec<u64>>,
}

impl TermTable {
    /// A table from its columns (equal lengths, `n` strictly increasing and non-empty: the
    /// parser checks this for files).
    pub fn new(n: Vec<u64>, avg_ns: Vec<Time>, max_ns: Vec<Time>) -> TermTable {
        TermTable::with_stats(n, avg_ns, max_ns, PointStats::default())
    }

    /// As [`TermTable::new`], with the protocol's per-point statistics.
    pub fn with_stats(n: Vec<u64>, avg_ns: Vec<Time>, max_ns: Vec<Time>, stats: PointStats) -> TermTable {
        // A maximum is never charged below its point's average: after the outlier rule a heavy
        // tail can leave `max_ns` under the mean of all kept samples (docs/overheads.md).
        let max_mono = max_ns
            .iter()
            .zip(&avg_ns)
            .map(|(&m, &a)| m.max(a))
            .scan(0, |run, y| {
                *run = (*run).max(y);
                Some(*run)
            })
            .collect();
        TermTable { n, avg_ns, max_ns, stats, max_mono }
    }
}

/// A measured overhead model (`"format": "rtsched-overhead-model"`, version 1), as
/// `rtsched measure-overheads` writes it (docs/formats.md, "Overhead models").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverheadModel {
    /// The runtime mechanism it was measured under (e.g. `gsn-edf`), if given.
    pub scheduler: Option<String>,
    /// The processors the measured mechanism scheduled on (`--cpus`; a dedicated release or
    /// scheduling processor is not counted), if given.
    pub m: Option<u32>,
    /// The machine it was measured on (`hostname`, `cpu_count`, `platform` of the file's
    /// `machine` object, as one line), if given.
    pub machine: Option<String>,
    /// True when the measurement was interrupted (fewer n than planned).
    pub interrupted: bool,
    /// The measurement protocol the file states (`protocol` object: filter, outlier rule,
    /// background load, grid, preflight), as written; `None` for older files.
    pub protocol: Option<serde_json::Value>,
    /// Where each value comes from, for models built from published numbers (`provenance`
    /// object), as written.
    pub provenance: Option<serde_json::Value>,
    /// Per term of [`Term::ALL`] (same index): its table, or `None` when absent (charged as 0).
    pub terms: Vec<Option<TermTable>>,
}

/// Where the overhead values come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverheadSpec {
    /// Fixed values (a constants file).
    Constant(Overheads),
    /// A measured model, evaluated at n.
    Model(Box<OverheadModel>),
}

/// How to evaluate a model outside what it measured (docs/overheads.md, "Beyond the measured
/// range"). Both parts are extrapolations, applied per term and statistic:
///
/// | statistic | term | beyond the largest measured n | to more processors than measured |
/// |---|---|---|---|
/// | average | contended, with `scale_averages` | held at the last measured value | × m / m0 |
/// | average | any other | held at the last measured value | not scaled |
/// | maximum | contended | the fitted trend ([`BeyondRule::Trend`]) | × m / m0 |
/// | maximum | not contended | held at the last (monotone) value | not scaled |
///
/// Cerqueira, Vanga & Brandenburg, RTAS 2014, observe that the maxima of terms that contend for
/// a shared lock or queue grow with the processor count (Figs. 6(a), 6(b), 6(f)), while averages
/// mostly do not: SD's "remain low throughout the tested range" (§II-C) and G-EDF-MP's average
/// client request latency "is not strongly affected" (§IV-B) — peak contention is rare. The
/// exception is one global lock: GSN-EDF's average scheduling and release overheads grow with m
/// too (§II-B, Fig. 1), which the caller says with `scale_averages`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Extrapolation {
    /// Beyond the largest measured n, continue the maxima of contended terms along their
    /// fitted trend instead of holding the last value.
    pub beyond_n: bool,
    /// Scale from the model's processor count `m0` to this `m`: the *maximum* of each term in
    /// `scaled_terms` (and its average with `scale_averages`) is multiplied by `m / m0` (rounded
    /// up) when `m > m0` (a linear-contention assumption: a shared lock or queue is waited for
    /// by at most one request of each other processor); never scaled down. `None`, or a model
    /// without `m`, scales nothing.
    pub m: Option<u32>,
    /// The contended terms (chosen per mechanism by the caller): their maxima follow the trend
    /// beyond n and scale with m.
    pub scaled_terms: Vec<Term>,
    /// Whether the averages of `scaled_terms` scale with m as well (a global lock; see above).
    pub scale_averages: bool,
}

/// What a term does beyond its largest measured n.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BeyondRule {
    /// Held at the last measured value (for maxima, the running maximum).
    Flat,
    /// The running maximum at the last measured n, continued with the slope of the
    /// least-squares line through *all* measured points, the slope constrained to be ≥ 0
    /// (monotone least squares): one noisy last segment cannot set the trend.
    Trend,
}

impl BeyondRule {
    pub fn name(self) -> &'static str {
        match self {
            BeyondRule::Flat => "flat",
            BeyondRule::Trend => "trend",
        }
    }
}

/// How one term of a model is evaluated at some n and m: for reports ("every verdict that
/// extrapolates says how").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TermExtrapolation {
    pub term: Term,
    pub stat: OverheadStat,
    /// The largest n the term was measured at.
    pub measured_max_n: u64,
    /// True when the evaluated n lies beyond `measured_max_n`.
    pub beyond_measured_n: bool,
    /// The rule beyond the measured n.
    pub beyond: BeyondRule,
    /// The fitted slope (ns per task) that [`BeyondRule::Trend`] continues with; 0 for `Flat`.
    pub slope_ns_per_task: f64,
    /// `(m, m0)` when the value is scaled by `m / m0`.
    pub m_scale: Option<(u32, u32)>,
}

impl OverheadModel {
    /// The table of `t`, if measured.
    pub fn term(&self, t: Term) -> Option<&TermTable> {
        Term::ALL.iter().position(|&x| x == t).and_then(|i| self.terms[i].as_ref())
    }

    /// The measured terms.
    pub fn measured_terms(&self) -> Vec<Term> {
        Term::ALL.iter().copied().filter(|&t| self.term(t).is_some()).collect()
    }

    /// The largest measured n over all terms (0 for a model without samples).
    pub fn max_n(&self) -> u64 {
        self.terms.iter().flatten().filter_map(|t| t.n.last().copied()).max().unwrap_or(0)
    }

    /// The values at `n` tasks (clamped outside the measured range).
    pub fn resolve(&self, n: usize, stat: OverheadStat) -> Overheads {
        let mut v = Overheads::ZERO;
        for (&t, table) in Term::ALL.iter().zip(&self.terms) {
            if let Some(table) = table {
                v.set(t, table.eval(n as u64, stat));
            }
        }
        v
    }

    /// The values at `n` tasks with the extrapolations of `ext` (see [`Extrapolation`] for the
    /// rule per term and statistic). Values are capped at [`MAX_OVERHEAD`].
    pub fn resolve_extrapolated(&self, n: usize, stat: OverheadStat, ext: &Extrapolation) -> Overheads {
        let mut v = Overheads::ZERO;
        for (&t, table) in Term::ALL.iter().zip(&self.terms) {
            if let Some(table) = table {
                let (beyond, scale) = self.rule_for(t, stat, ext);
                let mut x = table.eval_beyond(n as u64, stat, beyond) as u128;
                if let Some((m, m0)) = scale {
                    x = (x * m as u128).div_ceil(m0 as u128);
                }
                v.set(t, x.min(MAX_OVERHEAD as u128) as Time);
            }
        }
        v
    }

    /// The rule beyond n and the m scaling that `ext` gives term `t` for `stat`.
    fn rule_for(&self, t: Term, stat: OverheadStat, ext: &Extrapolation) -> (BeyondRule, Option<(u32, u32)>) {
        let contended = ext.scaled_terms.contains(&t);
        let contended_max = stat == OverheadStat::Max && contended;
        let beyond = if ext.beyond_n && contended_max { BeyondRule::Trend } else { BeyondRule::Flat };
        let scales = contended_max || (contended && ext.scale_averages);
        let scale = match (ext.m, self.m) {
            (Some(m), Some(m0)) if m > m0 && scales => Some((m, m0)),
            _ => None,
        };
        (beyond, scale)
    }

    /// How each measured term is evaluated at `n` under `ext`: the rule, the fitted slope, the
    /// m scaling (for reports; the values are [`OverheadModel::resolve_extrapolated`]'s).
    pub fn extrapolation_report(&self, n: usize, stat: OverheadStat, ext: &Extrapolation) -> Vec<TermExtrapolation> {
        Term::ALL
            .iter()
            .zip(&self.terms)
            .filter_map(|(&t, table)| {
                let table = table.as_ref()?;
                let (beyond, m_scale) = self.rule_for(t, stat, ext);
                let measured_max_n = *table.n.last().expect("non-empty");
                let slope_ns_per_task = match beyond {
                    BeyondRule::Flat => 0.0,
                    BeyondRule::Trend => {
                        let (num, den) = table.trend_slope(stat);
                        num as f64 / den as f64
                    }
                };
                Some(TermExtrapolation {
                    term: t,
                    stat,
                    measured_max_n,
                    beyond_measured_n: n as u64 > measured_max_n,
                    beyond,
                    slope_ns_per_task,
                    m_scale,
                })
            })
            .collect()
    }
}

impl OverheadSpec {
    /// The values for a task set of `n` tasks. Constants ignore `n` and `stat`.
    pub fn resolve(&self, n: usize, stat: OverheadStat) -> Overheads {
        match self {
            OverheadSpec::Constant(o) => *o,
            OverheadSpec::Model(m) => m.resolve(n, stat),
        }
    }

    /// As [`OverheadSpec::resolve`], with the extrapolations of `ext` for a model.
    pub fn resolve_extrapolated(&self, n: usize, stat: OverheadStat, ext: &Extrapolation) -> Overheads {
        match self {
            OverheadSpec::Constant(o) => *o,
            OverheadSpec::Model(m) => m.resolve_extrapolated(n, stat, ext),
        }
    }

    pub fn source(&self) -> &'static str {
        match self {
            OverheadSpec::Constant(_) => "constant",
            OverheadSpec::Model(_) => "model",
        }
    }
}

/// `a / b` rounded up, for `b > 0` and any sign of `a`.
fn div_ceil_i128(a: i128, b: i128) -> i128 {
    if a >= 0 {
        (a + b - 1) / b
    } else {
        -((-a) / b)
    }
}

impl TermTable {
    /// The sample values of `stat`: averages as measured, maxima replaced by their running
    /// maximum in n (a monotone upper bound).
    fn ys(&self, stat: OverheadStat) -> &[Time] {
        match stat {
            OverheadStat::Avg => &self.avg_ns,
            OverheadStat::Max => &self.max_mono,
        }
    }

    /// The term at task count `n`: piecewise-linear between the sample points, constant
    /// beyond the first and the last (clamped), rounded up to whole ns. For `Max`, the sample
    /// maxima are first replaced by their running maximum in n, so that the curve is a
    /// monotone upper bound (Brandenburg & Anderson, RTSS 2009, §4.1: "monotonic piece-wise
    /// linear interpolation to derive upper-bounds").
    pub fn eval(&self, n: u64, stat: OverheadStat) -> Time {
        let ys = self.ys(stat);
        let xs = &self.n;
        if n <= xs[0] {
            return ys[0];
        }
        let last = xs.len() - 1;
        if n >= xs[last] {
            return ys[last];
        }
        let k = xs.partition_point(|&x| x <= n); // xs[k-1] <= n < xs[k]
        let (x0, x1, y0, y1) = (xs[k - 1] as i128, xs[k] as i128, ys[k - 1] as i128, ys[k] as i128);
        (y0 + div_ceil_i128((y1 - y0) * (n as i128 - x0), x1 - x0)) as Time
    }

    /// The least-squares slope of `stat` over all sample points, constrained to be ≥ 0, as the
    /// exact fraction `(num, den)` with `den > 0` (`(0, 1)` for one point or a falling fit).
    /// Averages are fitted as measured; maxima as measured (after the protocol's outlier rule),
    /// not their running maximum, so that one early spike does not flatten the trend.
    pub fn trend_slope(&self, stat: OverheadStat) -> (i128, i128) {
        let ys: Vec<Time> = match stat {
            OverheadStat::Avg => self.avg_ns.clone(),
            OverheadStat::Max => self.max_ns.iter().zip(&self.avg_ns).map(|(&m, &a)| m.max(a)).collect(),
        };
        let k = self.n.len() as i128;
        if k < 2 {
            return (0, 1);
        }
        // slope = (k Σxy − Σx Σy) / (k Σx² − (Σx)²); n ≤ 2^32 and y ≤ 1 s keep it in i128.
        let (mut sx, mut sy, mut sxx, mut sxy) = (0i128, 0i128, 0i128, 0i128);
        for (&x, &y) in self.n.iter().zip(&ys) {
            let (x, y) = (x as i128, y as i128);
            sx += x;
            sy += y;
            sxx += x * x;
            sxy += x * y;
        }
        let num = k * sxy - sx * sy;
        let den = k * sxx - sx * sx;
        if num <= 0 || den <= 0 {
            (0, 1)
        } else {
            (num, den)
        }
    }

    /// As [`TermTable::eval`] inside the measured range; beyond the last sample point, `rule`
    /// decides: [`BeyondRule::Flat`] holds the last value, [`BeyondRule::Trend`] continues it
    /// with the fitted slope ([`TermTable::trend_slope`]):
    /// `y_last + ⌈slope · (n − n_last)⌉`, capped at [`MAX_OVERHEAD`].
    pub fn eval_beyond(&self, n: u64, stat: OverheadStat, rule: BeyondRule) -> Time {
        let last = self.n.len() - 1;
        if n <= self.n[last] || rule == BeyondRule::Flat {
            return self.eval(n, stat);
        }
        let (num, den) = self.trend_slope(stat);
        let dx = (n - self.n[last]) as i128;
        let y = self.ys(stat)[last] as i128 + div_ceil_i128(num.saturating_mul(dx), den);
        y.min(MAX_OVERHEAD as i128) as Time
    }
}
