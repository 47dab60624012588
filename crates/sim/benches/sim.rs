//! Simulator throughput: G-EDF at m = 8, n = 80, 100 s of virtual time, periods uniform in
//! [10, 100] ms (whole ms), U ≈ 0.6·m from a tiny local UUniFast. Reports jobs/s and
//! scheduling events/s per core (criterion throughput = jobs; events printed once).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rtsched_model::TaskSet;
use rtsched_sim::{simulate, Scheduler, SimConfig};

/// SplitMix64: enough randomness for a benchmark input.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// UUniFast (Bini & Buttazzo 2005), discarding sets with a utilization above 1.
fn task_set(n: usize, u: f64, seed: u64) -> TaskSet {
    let mut rng = Rng(seed);
    loop {
        let mut us = Vec::with_capacity(n);
        let mut sum = u;
        for i in 1..n {
            let next = sum * rng.unit().powf(1.0 / (n - i) as f64);
            us.push(sum - next);
            sum = next;
        }
        us.push(sum);
        if us.iter().any(|&x| x > 1.0) {
            continue;
        }
        let params: Vec<(u64, u64)> = us
            .iter()
            .map(|&ui| {
                let p = (10 + rng.next() % 91) * 1_000_000;
                (((ui * p as f64).round() as u64).max(1), p)
            })
            .collect();
        return TaskSet::from_ct(&params).unwrap();
    }
}

fn bench(c: &mut Criterion) {
    let ts = task_set(80, 0.6 * 8.0, 42);
    let mut cfg = SimConfig::new(8);
    cfg.horizon = Some(100_000_000_000);
    let r = simulate(&ts, &Scheduler::Gedf, &cfg).unwrap();
    eprintln!(
        "input: n=80 m=8 U={:.3} horizon=100s: {} jobs, {} events, {} preemptions, {} migrations, {} misses",
        ts.utilization_f64(), r.jobs, r.events, r.preemptions, r.migrations, r.deadline_misses
    );
    let t0 = std::time::Instant::now();
    let reps = 5;
    for _ in 0..reps {
        std::hint::black_box(simulate(&ts, &Scheduler::Gedf, &cfg).unwrap());
    }
    let s = t0.elapsed().as_secs_f64() / reps as f64;
    eprintln!("per run {:.1} ms: {:.2} M jobs/s, {:.2} M events/s", s * 1e3, r.jobs as f64 / s / 1e6, r.events as f64 / s / 1e6);
    let mut g = c.benchmark_group("sim");
    g.sample_size(10);
    g.throughput(Throughput::Elements(r.jobs));
    g.bench_function("gedf_m8_n80_100s_jobs", |b| b.iter(|| simulate(&ts, &Scheduler::Gedf, &cfg).unwrap()));
    g.throughput(Throughput::Elements(r.events));
    g.bench_function("gedf_m8_n80_100s_events", |b| b.iter(|| simulate(&ts, &Scheduler::Gedf, &cfg).unwrap()));
    let mut cfg_t = cfg.clone();
    cfg_t.record_trace = true;
    g.throughput(Throughput::Elements(r.jobs));
    g.bench_function("gedf_m8_n80_100s_jobs_with_trace", |b| b.iter(|| simulate(&ts, &Scheduler::Gedf, &cfg_t).unwrap()));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
