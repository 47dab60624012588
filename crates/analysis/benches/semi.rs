//! Cascade throughput on seed-004-style task sets (Brandenburg & Gül, RTSS 2016, §V):
//! m = 8, n ∈ {10, 32}, total utilization spread uniformly over [1, 8], utilizations from a
//! local UUniFast-Discard (RandFixedSum-like: uniform over the simplex, u_i <= 1), periods
//! uniform from {1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500, 1000} ms.
//!
//! Prints task sets per second on one core for the whole cascade (with and without the
//! meta-heuristics) and the share each heuristic solved. Run:
//! `cargo bench -p rtsched-analysis --bench semi`

use criterion::{criterion_group, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use rtsched_analysis::semi::{cascade, SemiConfig};
use rtsched_model::TaskSet;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

const PERIODS_MS: [u64; 16] = [1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500, 1000];

fn uunifast_discard(rng: &mut impl Rng, n: usize, total: f64) -> Vec<f64> {
    loop {
        let mut sum = total;
        let mut v = Vec::with_capacity(n);
        for i in 1..n {
            let next = sum * rng.random::<f64>().powf(1.0 / (n - i) as f64);
            v.push(sum - next);
            sum = next;
        }
        v.push(sum);
        if v.iter().all(|&u| u <= 1.0) {
            return v;
        }
    }
}

fn sets(n: usize, m: u32, count: usize, seed: u64) -> Vec<TaskSet> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|i| {
            let total = 1.0 + (m as f64 - 1.0) * (i as f64 + 0.5) / count as f64;
            let us = uunifast_discard(&mut rng, n, total);
            let tasks: Vec<(u64, u64)> = us
                .iter()
                .map(|&u| {
                    let t = PERIODS_MS[rng.random_range(0..PERIODS_MS.len())] * 1_000_000;
                    (((u * t as f64).round() as u64).clamp(1, t), t)
                })
                .collect();
            TaskSet::from_ct(&tasks).unwrap()
        })
        .collect()
}

fn report(name: &str, sets: &[TaskSet], cfg: &SemiConfig) {
    let start = Instant::now();
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    let mut slowest = 0f64;
    for ts in sets {
        let t0 = Instant::now();
        let p = cascade(ts, 8, cfg);
        slowest = slowest.max(t0.elapsed().as_secs_f64());
        *by.entry(if p.schedulable { p.heuristic } else { "(none)".into() }).or_default() += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{name}: {} sets in {secs:.3} s = {:.0} sets/s/core, mean {:.1} us/set, slowest {:.2} ms; solved by {by:?}",
        sets.len(),
        sets.len() as f64 / secs,
        1e6 * secs / sets.len() as f64,
        slowest * 1e3
    );
}

fn bench(c: &mut Criterion) {
    let full = SemiConfig::default();
    let nometa = SemiConfig { meta: false, ..SemiConfig::default() };
    for n in [10usize, 32] {
        let s = sets(n, 8, 2000, 42 + n as u64);
        report(&format!("m=8 n={n} cascade"), &s, &full);
        report(&format!("m=8 n={n} cascade --no-meta"), &s, &nometa);
        let small: Vec<TaskSet> = s.iter().step_by(20).cloned().collect();
        c.bench_function(&format!("cascade m=8 n={n} (100 sets, U in [1,8])"), |b| {
            b.iter(|| {
                for ts in &small {
                    black_box(cascade(ts, 8, &full).schedulable);
                }
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
