//! Generator throughput. Run: `cargo bench -p rtsched-gen --bench gen`.
//!
//! * `randfixedsum/N`: the utilization vector alone (n = 10, 40, 80);
//! * `rfs_taskset/N`: a whole task set: RandFixedSum + log-uniform periods [1 ms, 1 s] +
//!   WCET rounding + validation (what `generate` does per set);
//! * `baker_cap8/DIST`: a seed-001 set, cap 8, integral moderate periods;
//! * `generate_many_rfs40_x1000`: 1000 sets of n = 40 on the rayon pool.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::SeedableRng;
use rtsched_gen::*;
use std::time::Duration;

const MS: u64 = 1_000_000;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("randfixedsum");
    for n in [10usize, 40, 80] {
        g.throughput(Throughput::Elements(n as u64));
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter(|| randfixedsum(n, black_box(n as f64 * 0.4), 1.0, &mut r).unwrap())
        });
    }
    g.finish();

    let mut g = c.benchmark_group("rfs_taskset");
    for n in [10usize, 40, 80] {
        g.throughput(Throughput::Elements(n as u64));
        let spec = GenSpec {
            util: UtilGen::RandFixedSum { n, total: n as f64 * 0.4, umax: 1.0 },
            periods: PeriodGen::LogUniform { min: MS, max: 1000 * MS },
            deadlines: DeadlineGen::Implicit,
        };
        let mut i = 0u64;
        g.bench_with_input(BenchmarkId::from_parameter(n), &spec, |b, spec| {
            b.iter(|| {
                i += 1;
                generate(spec, 7, i).unwrap()
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("baker_cap8");
    for d in Dist::ALL {
        let spec = GenSpec {
            util: UtilGen::Dist { dist: d, count: Count::Cap(8.0) },
            periods: PeriodGen::Integral { min: 10 * MS, max: 100 * MS, granularity: MS },
            deadlines: DeadlineGen::Implicit,
        };
        let mut i = 0u64;
        g.bench_function(d.name(), |b| {
            b.iter(|| {
                i += 1;
                generate(&spec, 7, i).unwrap()
            })
        });
    }
    g.finish();

    let spec = GenSpec {
        util: UtilGen::RandFixedSum { n: 40, total: 16.0, umax: 1.0 },
        periods: PeriodGen::LogUniform { min: MS, max: 1000 * MS },
        deadlines: DeadlineGen::Implicit,
    };
    c.bench_function("generate_many_rfs40_x1000", |b| b.iter(|| generate_many(&spec, 3, 1000).unwrap()));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
