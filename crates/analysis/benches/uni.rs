//! Uniprocessor EDF and partitioning benchmark (see docs/performance.md, "uniprocessor and
//! partitioning").
//!
//! Workload as in SchedCAT's QPA measurement: m = 8, n in {10, 20, 40, 80}, periods uniform
//! in [10, 100] ms, total utilization uniform in [0.5 m, 0.7 m] split by UUniFast-Discard
//! (local copy: the gen crate is written in parallel). Two deadline variants: implicit, and
//! constrained with D uniform in [C + 0.5 (T - C), T]. Measured per task set:
//! * `qpa_ffd_cpus`: QPA over every processor of a precomputed FFD partition (EDF admission);
//! * `ffd_edf`: the FFD partitioning itself, exact QPA admission included.
//!
//! Run: `cargo bench -p rtsched-analysis --bench uni`. After criterion, a summary table prints
//! the mean per task set and the ratio to SchedCAT's published 16 / 1,190 / 25,400 us
//! (n = 10 / 40 / 80).

use criterion::{black_box, Criterion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::partition::{partition, Admission, Fit, Order, PartitionOutcome};
use rtsched_analysis::uni::edf::qpa;
use rtsched_analysis::{Limits, Verdict};
use rtsched_model::{Task, TaskSet};
use std::time::{Duration, Instant};

const M: u32 = 8;
const SETS: usize = 100;

/// UUniFast (Bini & Buttazzo 2005) with discard of any u_i > 1.
fn uunifast_discard(rng: &mut ChaCha8Rng, n: usize, total: f64) -> Vec<f64> {
    loop {
        let mut us = Vec::with_capacity(n);
        let mut sum = total;
        for i in 1..n {
            let next = sum * rng.random::<f64>().powf(1.0 / (n - i) as f64);
            us.push(sum - next);
            sum = next;
        }
        us.push(sum);
        if us.iter().all(|&u| u <= 1.0) {
            return us;
        }
    }
}

fn gen_set(rng: &mut ChaCha8Rng, n: usize, constrained: bool) -> TaskSet {
    let total = rng.random_range(0.5 * M as f64..=0.7 * M as f64);
    let tasks = uunifast_discard(rng, n, total)
        .into_iter()
        .map(|u| {
            let t: u64 = rng.random_range(10_000_000..=100_000_000);
            let c = ((u * t as f64).round() as u64).clamp(1, t);
            let d = if constrained { rng.random_range(c + (t - c) / 2..=t) } else { t };
            Task { name: None, wcet: c, deadline: d, period: t, segments: None }
        })
        .collect();
    TaskSet::new(tasks).unwrap()
}

struct Case {
    n: usize,
    constrained: bool,
    sets: Vec<TaskSet>,
    /// Per set, the processors of its FFD partition (placed or partial) as task sets.
    cpus: Vec<Vec<TaskSet>>,
}

fn cases() -> Vec<Case> {
    let limits = Limits::default();
    let mut out = Vec::new();
    for constrained in [false, true] {
        for n in [10usize, 20, 40, 80] {
            let mut rng = ChaCha8Rng::seed_from_u64(1000 + n as u64 + constrained as u64);
            let sets: Vec<TaskSet> = (0..SETS).map(|_| gen_set(&mut rng, n, constrained)).collect();
            let cpus = sets
                .iter()
                .map(|ts| {
                    let p = match partition(ts, M, Fit::First, Order::DecreasingUtilization, Admission::Edf, &limits) {
                        PartitionOutcome::Placed(p) => p,
                        PartitionOutcome::Failed { partial, .. } => partial,
                    };
                    p.cpus.iter().map(|c| TaskSet::new(c.iter().map(|&i| ts[i].clone()).collect()).unwrap()).collect()
                })
                .collect();
            out.push(Case { n, constrained, sets, cpus });
        }
    }
    out
}

fn qpa_all(case: &Case, limits: &Limits) -> usize {
    let mut ok = 0;
    for cpus in &case.cpus {
        for ts in cpus {
            if qpa(black_box(ts), limits) == Verdict::Schedulable {
                ok += 1;
            }
        }
    }
    ok
}

fn ffd_all(case: &Case, limits: &Limits) -> usize {
    case.sets
        .iter()
        .filter(|ts| {
            matches!(
                partition(black_box(ts), M, Fit::First, Order::DecreasingUtilization, Admission::Edf, limits),
                PartitionOutcome::Placed(_)
            )
        })
        .count()
}

fn label(c: &Case) -> String {
    format!("{}/n={}", if c.constrained { "constrained" } else { "implicit" }, c.n)
}

/// Mean seconds per call of `f` over at least `min` of wall time.
fn time_per_call(min: Duration, mut f: impl FnMut()) -> f64 {
    f();
    let start = Instant::now();
    let mut k = 0u64;
    while start.elapsed() < min {
        f();
        k += 1;
    }
    start.elapsed().as_secs_f64() / k as f64
}

fn main() {
    let limits = Limits::default();
    let cases = cases();
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    {
        let mut g = c.benchmark_group("uni");
        g.throughput(criterion::Throughput::Elements(SETS as u64));
        for case in &cases {
            g.bench_function(format!("qpa_ffd_cpus/{}", label(case)), |b| b.iter(|| qpa_all(case, &limits)));
            g.bench_function(format!("ffd_edf/{}", label(case)), |b| b.iter(|| ffd_all(case, &limits)));
        }
        g.finish();
    }
    c.final_summary();

    println!(
        "\nper task set (mean over {SETS} sets, m = {M}); SchedCAT QPA: 16 / 1,190 / 25,400 us at n = 10 / 40 / 80"
    );
    println!(
        "{:<18} {:>9} {:>14} {:>10} {:>12} {:>10} {:>9}",
        "case", "placed", "QPA cpus (us)", "ratio", "FFD+QPA (us)", "ratio", "QPA runs"
    );
    for case in &cases {
        let qpa_s = time_per_call(Duration::from_millis(600), || {
            black_box(qpa_all(case, &limits));
        }) / SETS as f64;
        let ffd_s = time_per_call(Duration::from_millis(600), || {
            black_box(ffd_all(case, &limits));
        }) / SETS as f64;
        let placed = ffd_all(case, &limits);
        // Processors on which QPA must iterate (some D < T); the rest end at U <= 1.
        let iterating: usize = case.cpus.iter().flatten().filter(|ts| ts.iter().any(|t| t.deadline < t.period)).count();
        let total: usize = case.cpus.iter().map(Vec::len).sum();
        let schedcat = match case.n {
            10 => Some(16.0),
            40 => Some(1190.0),
            80 => Some(25400.0),
            _ => None,
        };
        let ratio = |s: f64| schedcat.map_or("-".to_string(), |r| format!("{:.0}x", r / (s * 1e6)));
        println!(
            "{:<18} {:>5}/{:<3} {:>14.3} {:>10} {:>12.2} {:>10} {:>5}/{:<3}",
            label(case),
            placed,
            SETS,
            qpa_s * 1e6,
            ratio(qpa_s),
            ffd_s * 1e6,
            ratio(ffd_s),
            iterating,
            total
        );
    }
}
