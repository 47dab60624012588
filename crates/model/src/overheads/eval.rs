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
/// rounded up from the file's numbers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TermTable {
    pub n: Vec<u64>,
    pub avg_ns: Vec<Time>,
    pub max_ns: Vec<Time>,
    /// The running maximum of `max_ns` in n (computed once, at construction).
    max_mono: Vec<Time>,
}

impl TermTable {
    /// A table from its columns (equal lengths, `n` strictly increasing and non-empty: the
    /// parser checks this for files).
    pub fn new(n: Vec<u64>, avg_ns: Vec<Time>, max_ns: Vec<Time>) -> TermTable {
        let max_mono = max_ns
            .iter()
            .scan(0, |run, &y| {
                *run = (*run).max(y);
                Some(*run)
            })
            .collect();
        TermTable { n, avg_ns, max_ns, max_mono }
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

/// How to evaluate a model outside what it measured. Both parts are extrapolations.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Extrapolation {
    /// Beyond the largest measured n, continue the last segment of each curve (its slope
    /// floored at 0) instead of holding the last value.
    pub beyond_n: bool,
    /// Scale from the model's processor count `m0` to this `m`: each term in `scaled_terms` is
    /// multiplied by `m / m0` (rounded up) when `m > m0` (a linear-contention assumption: a
    /// shared lock or queue is waited for by at most one request of each other processor);
    /// never scaled down. `None`, or a model without `m`, scales nothing.
    pub m: Option<u32>,
    /// The terms that scale with m (chosen per mechanism by the caller).
    pub scaled_terms: Vec<Term>,
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

    /// The values at `n` tasks with the extrapolations of `ext` (see [`Extrapolation`]).
    /// Values are capped at [`MAX_OVERHEAD`].
    pub fn resolve_extrapolated(&self, n: usize, stat: OverheadStat, ext: &Extrapolation) -> Overheads {
        let mut v = Overheads::ZERO;
        let factor = match (ext.m, self.m) {
            (Some(m), Some(m0)) if m > m0 => Some((m as u128, m0 as u128)),
            _ => None,
        };
        for (&t, table) in Term::ALL.iter().zip(&self.terms) {
            if let Some(table) = table {
                let mut x =
                    if ext.beyond_n { table.eval_extrapolated(n as u64, stat) } else { table.eval(n as u64, stat) }
                        as u128;
                if let Some((m, m0)) = factor.filter(|_| ext.scaled_terms.contains(&t)) {
                    x = (x * m).div_ceil(m0);
                }
                v.set(t, x.min(MAX_OVERHEAD as u128) as Time);
            }
        }
        v
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

    /// As [`TermTable::eval`], but beyond the last sample the last segment is continued
    /// (an *extrapolation*): `y_last + ⌈max(0, slope) · (n − x_last)⌉`, capped at
    /// [`MAX_OVERHEAD`]. With one sample point there is no slope and the value is held.
    pub fn eval_extrapolated(&self, n: u64, stat: OverheadStat) -> Time {
        let last = self.n.len() - 1;
        if n <= self.n[last] || last == 0 {
            return self.eval(n, stat);
        }
        let ys = self.ys(stat);
        let (x0, x1) = (self.n[last - 1] as i128, self.n[last] as i128);
        let dy = (ys[last] as i128 - ys[last - 1] as i128).max(0);
        let y = ys[last] as i128 + div_ceil_i128(dy * (n as i128 - x1), x1 - x0);
        y.min(MAX_OVERHEAD as i128) as Time
    }
}
