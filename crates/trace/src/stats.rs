//! Summary statistics of overhead and latency samples, defined once for the runtime's run
//! summaries and its overhead models: count, mean, nearest-rank percentiles and maximum; and
//! the measurement protocol's filters for overhead samples ([`OverheadStats`]): samples the
//! host disturbed are discarded, then an outlier rule bounds the maximum (`docs/overheads.md`,
//! "Measurement protocol").

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

/// The name of the pseudo-term whose samples are host interference: intervals in which the
/// host took a CPU away from the run (a job body's poll gap or an idle spin's clock jump above
/// [`INTERFERENCE_GAP_NS`], a run-queue wait above [`INTERFERENCE_WAIT_NS`]; the runtime
/// records them). It is not an overhead of any mechanism: its samples are what the
/// interference filter discards other samples by, and it is never filtered itself.
pub const INTERFERENCE_TERM: &str = "host_interference";
/// A gap between two consecutive clock reads of a busy loop (a job body's poll, an idle
/// spin) longer than this is host interference: one poll takes about 0.1 µs, a timer tick's
/// interrupt a few µs; 10 µs is a hundred polls.
pub const INTERFERENCE_GAP_NS: Time = 10_000;
/// A thread's time waiting on the kernel's run queue (`/proc/thread-self/schedstat`, second
/// field) that grew by more than this between two checks is host interference: a wake-up of an
/// idle CPU waits a few µs (that wait is the overhead being measured), longer waits mean
/// another thread held the CPU.
pub const INTERFERENCE_WAIT_NS: Time = 50_000;
/// Tukey's upper fence factor k of the outlier rule: a sample above `Q3 + k · (Q3 − Q1)` is
/// an outlier (Tukey, *Exploratory Data Analysis*, 1977; the box plot's inner fence).
pub const OUTLIER_IQR_FACTOR: (u64, u64) = (3, 2);

/// The outlier rule for maxima (see [`OverheadStats`]), given the sample's nearest-rank
/// quartiles and p99: `x` is an outlier iff it lies above Tukey's fence `Q3 + 1.5 · (Q3 − Q1)`
/// (compared exactly in integers) and above the p99. One definition for every cost rtsched
/// reports (run summaries, overhead models, `reproduce sd-push-cost`).
pub fn is_outlier(x: Time, q1: Time, q3: Time, p99: Time) -> bool {
    let (kn, kd) = OUTLIER_IQR_FACTOR;
    let fence = (kd as u128) * q3 as u128 + (kn as u128) * q3.saturating_sub(q1) as u128;
    (kd as u128) * x as u128 > fence && x > p99
}

/// An overhead sample where and when it was taken: CPU (trace lane), start, duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub cpu: u32,
    pub start: Time,
    pub duration: Time,
}

/// Statistics of one overhead term under the measurement protocol (`docs/overheads.md`,
/// "Measurement protocol"):
/// 1. *interference filter*: a sample whose interval `[start, start + duration]` overlaps an
///    interval of host interference on its own CPU is discarded (`discarded`), as Feather-Trace
///    discards samples during which an interrupt occurred (B. Brandenburg on the LITMUS^RT
///    mailing list, 6 Aug 2013: samples disturbed by interrupts are "erroneous outliers" that
///    "should be filtered", true outliers "must not be");
/// 2. `count`, `avg_ns`, `p50_ns`, `p99_ns` describe the kept samples;
/// 3. *outlier rule for the maximum*: the kept samples above Tukey's fence `Q3 + 1.5 · IQR`
///    (nearest-rank quartiles, exact integer comparison) *and* above the kept samples' p99 are
///    `outliers`; `max_ns` is the largest kept sample that is not one; `max_raw_ns` the largest
///    of all samples, disturbed ones included. The p99 bound is ours: the rule removes at most
///    1 % of the kept samples (none of fewer than 101), so a heavy tail is not cut as a whole
///    and `p50_ns ≤ p99_ns ≤ max_ns` holds; the outliers still count in `avg_ns` and the
///    percentiles (the rule is for the maximum only).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverheadStats {
    pub count: usize,
    pub discarded: usize,
    pub outliers: usize,
    pub avg_ns: f64,
    pub p50_ns: Time,
    pub p99_ns: Time,
    pub max_ns: Time,
    pub max_raw_ns: Time,
}

/// Intervals of host interference per CPU, merged and sorted, for overlap queries.
#[derive(Debug, Clone, Default)]
pub struct Interference {
    by_cpu: std::collections::BTreeMap<u32, Vec<(Time, Time)>>,
}

impl Interference {
    /// From interference samples (each an interval `[start, start + duration]` on its CPU).
    pub fn new(samples: &[Sample]) -> Interference {
        let mut by_cpu: std::collections::BTreeMap<u32, Vec<(Time, Time)>> = Default::default();
        for s in samples {
            by_cpu.entry(s.cpu).or_default().push((s.start, s.start.saturating_add(s.duration)));
        }
        for v in by_cpu.values_mut() {
            v.sort_unstable();
            let mut merged: Vec<(Time, Time)> = Vec::with_capacity(v.len());
            for &(a, b) in v.iter() {
                match merged.last_mut() {
                    Some(last) if a <= last.1 => last.1 = last.1.max(b),
                    _ => merged.push((a, b)),
                }
            }
            *v = merged;
        }
        Interference { by_cpu }
    }

    /// Whether `s` overlaps an interval of interference `[a, b)` on its CPU: `a < end` and
    /// `start < b`, where the sample covers `[start, end)` with `end = start + max(duration, 1)`
    /// (a sample that merely touches an interruption is not disturbed by it).
    pub fn disturbs(&self, s: &Sample) -> bool {
        let Some(v) = self.by_cpu.get(&s.cpu) else { return false };
        let end = s.start.saturating_add(s.duration.max(1));
        // The first interval that ends after the sample starts.
        let i = v.partition_point(|&(_, b)| b <= s.start);
        v.get(i).is_some_and(|&(a, _)| a < end)
    }

    /// The most interference any one CPU had within `[a, b)`: per CPU the length of its
    /// intervals' overlap with `[a, b)`, the largest of these (0 when none overlaps).
    pub fn most_within(&self, a: Time, b: Time) -> Time {
        let on = |v: &Vec<(Time, Time)>| -> Time {
            let i = v.partition_point(|&(_, end)| end <= a);
            v[i..].iter().take_while(|&&(start, _)| start < b).map(|&(start, end)| end.min(b) - start.max(a)).sum()
        };
        self.by_cpu.values().map(on).max().unwrap_or(0)
    }

    /// The number of intervals (after merging) and their total length.
    pub fn totals(&self) -> (usize, Time) {
        let v = self.by_cpu.values().flatten();
        (self.by_cpu.values().map(Vec::len).sum(), v.map(|&(a, b)| b - a).sum())
    }
}

impl OverheadStats {
    /// The statistics of `samples` with those `interference` disturbs discarded (see the type).
    pub fn of(samples: &[Sample], interference: &Interference) -> OverheadStats {
        let max_raw_ns = samples.iter().map(|s| s.duration).max().unwrap_or(0);
        let kept: Vec<Time> = samples.iter().filter(|s| !interference.disturbs(s)).map(|s| s.duration).collect();
        let discarded = samples.len() - kept.len();
        let st = SampleStats::of(&kept);
        let mut max_ns = st.max_ns;
        let mut outliers = 0;
        if !kept.is_empty() {
            let mut v = kept;
            v.sort_unstable();
            let rank = |num: usize, den: usize| v[(num * v.len()).div_ceil(den).clamp(1, v.len()) - 1];
            let (q1, q3) = (rank(1, 4), rank(3, 4));
            outliers = v.iter().rev().take_while(|&&x| is_outlier(x, q1, q3, st.p99_ns)).count();
            max_ns = v[v.len() - 1 - outliers];
        }
        OverheadStats {
            count: st.count,
            discarded,
            outliers,
            avg_ns: st.avg_ns,
            p50_ns: st.p50_ns,
            p99_ns: st.p99_ns,
            max_ns,
            max_raw_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn most_within_is_the_largest_overlap_on_one_cpu() {
        let smp = |cpu, start, duration| Sample { cpu, start, duration };
        let i = Interference::new(&[smp(0, 10, 10), smp(0, 15, 10), smp(0, 40, 5), smp(1, 0, 100)]);
        assert_eq!(i.most_within(0, 30), 30); // CPU 1 covers all of it
        let i = Interference::new(&[smp(0, 10, 10), smp(0, 15, 10), smp(0, 40, 5), smp(1, 90, 100)]);
        assert_eq!(i.most_within(12, 42), 13 + 2); // [12, 25) and [40, 42) on CPU 0
        assert_eq!(i.most_within(25, 40), 0);
        assert_eq!(Interference::default().most_within(0, 100), 0);
    }

    use super::*;

    fn at(cpu: u32, start: Time, duration: Time) -> Sample {
        Sample { cpu, start, duration }
    }

    /// A disturbed sample set: 100 samples of 1..=100 ns on CPU 0 every 1 µs, three of them
    /// inside an interruption of CPU 0 (one of which is huge), one huge on CPU 1 inside an
    /// interruption of CPU 0 only (kept, then an outlier), and one huge undisturbed sample.
    #[test]
    fn disturbed_samples_are_discarded_and_outliers_bound_the_maximum() {
        let mut s: Vec<Sample> = (1..=100).map(|i| at(0, i * 1_000, i)).collect();
        // Interruption of CPU 0 over [200_500, 203_000): disturbs the samples at 201 µs and
        // 202 µs, and a 33 ms sample that started before it and ran into it.
        let gap = [at(0, 200_500, 2_500)];
        s.push(at(0, 201_000, 7));
        s.push(at(0, 202_000, 9));
        s.push(at(0, 150_000, 33_000_000));
        // On CPU 1 during CPU 0's interruption: not disturbed.
        s.push(at(1, 201_000, 50));
        // A huge sample with no interruption: kept, then removed by the outlier rule.
        s.push(at(0, 500_000, 5_000_000));
        let st = OverheadStats::of(&s, &Interference::new(&gap));
        assert_eq!(st.discarded, 3);
        assert_eq!(st.count, 102);
        assert_eq!(st.max_raw_ns, 33_000_000);
        // Kept: 1..=100, 50, 5_000_000. Q1 = 26, Q3 = 76 (nearest rank of 102: the 26th and
        // 77th smallest, with 50 twice): fence 76 + 1.5 · 50 = 151; 5_000_000 is the outlier.
        assert_eq!(st.outliers, 1);
        assert_eq!(st.max_ns, 100);
        let sum: f64 = (1..=100).sum::<u64>() as f64 + 50.0 + 5_000_000.0;
        assert_eq!(st.avg_ns, sum / 102.0);
        assert_eq!((st.p50_ns, st.p99_ns), (50, 100));
        // Without interference nothing is discarded; of 105 samples the p99 is the 104th
        // smallest, the 5 ms one: only the 33 ms one is an outlier.
        let raw = OverheadStats::of(&s, &Interference::default());
        assert_eq!((raw.discarded, raw.outliers, raw.count, raw.max_ns), (0, 1, 105, 5_000_000));
    }

    #[test]
    fn interference_overlap_is_strict_and_per_cpu() {
        let i = Interference::new(&[at(0, 100, 50), at(0, 140, 20), at(2, 0, 10)]);
        assert_eq!(i.totals(), (2, 70));
        assert!(i.disturbs(&at(0, 90, 11))); // ends inside
        assert!(!i.disturbs(&at(0, 90, 10))); // ends where the interruption starts
        assert!(i.disturbs(&at(0, 155, 100))); // starts inside
        assert!(!i.disturbs(&at(0, 160, 5))); // starts where it ends
        assert!(i.disturbs(&at(0, 120, 0))); // an instant inside
        assert!(i.disturbs(&at(0, 100, 0))); // an instant at its start
        assert!(!i.disturbs(&at(0, 160, 0))); // an instant at its end
        assert!(i.disturbs(&at(0, 50, 500))); // contains it
        assert!(!i.disturbs(&at(1, 120, 5))); // another CPU
    }

    #[test]
    fn outlier_rule_removes_at_most_one_percent_and_keeps_a_tie_at_the_fence() {
        let none = Interference::default();
        let set = |v: &[(usize, Time)]| -> Vec<Sample> {
            v.iter().flat_map(|&(k, d)| std::iter::repeat_n(at(0, 0, d), k)).collect()
        };
        // Fewer than 101 samples: the p99 is the maximum, nothing is an outlier.
        let st = OverheadStats::of(&set(&[(3, 1), (1, 1_000)]), &none);
        assert_eq!((st.outliers, st.max_ns), (0, 1_000));
        // 198 × 10 and 2 × 11: IQR 0, fence 10, p99 (the 198th) 10: the two 11s go.
        let st = OverheadStats::of(&set(&[(198, 10), (2, 11)]), &none);
        assert_eq!((st.outliers, st.max_ns, st.p99_ns), (2, 10, 10));
        // 197 × 10 and 3 × 11: the p99 is 11, so more than 1 % lie above the fence: a tail, kept.
        let st = OverheadStats::of(&set(&[(197, 10), (3, 11)]), &none);
        assert_eq!((st.outliers, st.max_ns), (0, 11));
        // Tukey's fence with IQR > 0: 50 × 1, 50 × 2, 50 × 3, 49 × 4 and one x: Q1 = 1 (the
        // 50th of 200), Q3 = 3 (the 150th), fence 3 + 1.5 · 2 = 6, p99 = 4: a 6 stays, a 7 goes.
        for (last, out) in [(6, 0), (7, 1)] {
            let v = set(&[(50, 1), (50, 2), (50, 3), (49, 4), (1, last)]);
            assert_eq!(OverheadStats::of(&v, &none).outliers, out, "{last}");
        }
    }

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
