//! Simulator throughput: G-EDF at m = 8, n = 80, 100 s of virtual time, periods uniform in
//! [10, 100] ms (whole ms), U ≈ 0.6·m from a tiny local UUniFast. Reports jobs/s and
//! scheduling events/s per core (criterion throughput = jobs; events printed once).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rtsched_sim::{simulate, Scheduler, SimConfig};

#[path = "common/workload.rs"]
mod workload;
use workload::task_set;

fn bench(c: &mut Criterion) {
    let ts = task_set(80, 0.6 * 8.0, 42);
    let mut cfg = SimConfig::new(8);
    cfg.horizon = Some(100_000_000_000);
    let r = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
    eprintln!(
        "input: n=80 m=8 U={:.3} horizon=100s: {} jobs, {} events, {} preemptions, {} migrations, {} misses",
        ts.utilization_f64(),
        r.jobs,
        r.events,
        r.preemptions,
        r.migrations,
        r.deadline_misses
    );
    let t0 = std::time::Instant::now();
    let reps = 5;
    for _ in 0..reps {
        std::hint::black_box(simulate(&ts, &Scheduler::Gedf, &cfg).unwrap());
    }
    let s = t0.elapsed().as_secs_f64() / reps as f64;
    eprintln!(
        "per run {:.1} ms: {:.2} M jobs/s, {:.2} M events/s",
        s * 1e3,
        r.jobs as f64 / s / 1e6,
        r.events as f64 / s / 1e6
    );
    let mut g = c.benchmark_group("sim");
    g.sample_size(10);
    g.throughput(Throughput::Elements(r.jobs));
    g.bench_function("gedf_m8_n80_100s_jobs", |b| b.iter(|| simulate(&ts, &Scheduler::Gedf, &cfg).unwrap()));
    g.throughput(Throughput::Elements(r.events));
    g.bench_function("gedf_m8_n80_100s_events", |b| b.iter(|| simulate(&ts, &Scheduler::Gedf, &cfg).unwrap()));
    let mut cfg_t = cfg.clone();
    cfg_t.record_trace = true;
    g.throughput(Throughput::Elements(r.jobs));
    g.bench_function("gedf_m8_n80_100s_jobs_with_trace", |b| {
        b.iter(|| simulate(&ts, &Scheduler::Gedf, &cfg_t).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
