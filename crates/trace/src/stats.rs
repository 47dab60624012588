//! Summary statistics of overhead and latency samples, defined once for the runtime's run
//! summaries and its overhead models: count, mean, nearest-rank percentiles and maximum.

use rtsched_model::Time;
use serde::Serialize;

/// Statistics of a sample of non-negative integers (ns, or a term's declared unit).
/// Percentiles are nearest-rank: `pXX` is the smallest sample with at least XX % of the
/// samples at or below it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleStats {
    pub count: usize,
    pub avg_ns: f64,
    pub p50_ns: Time,
    pub p99_ns: Time,
    pub max_ns: Time,
}

impl SampleStats {
    pub fn of(samples: &[Time]) -> SampleStats {
        if samples.is_empty() {
            return SampleStats { count: 0, avg_ns: 0.0, p50_ns: 0, p99_ns: 0, max_ns: 0 };
        }
        let mut v = samples.to_vec();
        v.sort_unstable();
        let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        SampleStats {
            count: v.len(),
            avg_ns: v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64,
            p50_ns: rank(0.50),
            p99_ns: rank(0.99),
            max_ns: v[v.len() - 1],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_use_nearest_rank() {
        let s = SampleStats::of(&(1..=100).collect::<Vec<u64>>());
        assert_eq!((s.count, s.p50_ns, s.p99_ns, s.max_ns), (100, 50, 99, 100));
        assert_eq!(s.avg_ns, 50.5);
        assert_eq!(SampleStats::of(&[]).count, 0);
        let t = SampleStats::of(&[7, 1, 3]);
        assert_eq!((t.p50_ns, t.p99_ns, t.max_ns), (3, 7, 7));
    }
}
