//! Push/pull per find-CPU variant (Lelli et al., 2011, §6), criterion form: one recorded
//! run of the paper's workload (n = 3m RandFixedSum tasks, U = 0.7m, log-uniform periods in
//! [10, 100] ms, 200 ms of virtual time) per m, replayed over each variant without the TSC
//! probe; criterion reports the time per recorded plugin call (a release or a scheduling
//! decision with the pushes, pulls, enqueues and dequeues it makes). Per-operation averages and
//! p99s come from the printing example `push_pull_costs` and `rtsched reproduce sd-push-cost`.
//!
//! Run: `cargo bench -p rtsched-runtime --bench push_pull` (under `chrt -f 50 taskset -c 1`).
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rtsched_gen::{generate, util_gen_from_name, DeadlineGen, GenSpec, PeriodGen};
use rtsched_runtime::mechanism::push_pull::replay::{record, replay, Probe};
use rtsched_runtime::queue::{cpudl::Cpudl, cpupri::Cpupri, find_linear::Linear, fmask::Fmask};

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("push_pull_replay");
    g.sample_size(10);
    for m in [2usize, 8, 32, 64] {
        let spec = GenSpec {
            util: util_gen_from_name("randfixedsum", Some(3 * m), 0.7 * m as f64, 1.0).expect("valid"),
            periods: PeriodGen::parse("loguniform:10ms-100ms").expect("valid"),
            deadlines: DeadlineGen::Implicit,
        };
        let ts = generate(&spec, 2011, 0).expect("a task set");
        let edf = record(&ts, m, false, 200_000_000, 100_000_000).expect("recorded");
        let fp = record(&ts, m, true, 200_000_000, 100_000_000).expect("recorded");
        g.throughput(Throughput::Elements(edf.calls.len() as u64));
        let mut probe = Probe::disabled();
        g.bench_with_input(BenchmarkId::new("linear", m), &m, |b, &m| {
            b.iter(|| replay(&edf, Linear::new(m), &mut probe).expect("replayed"))
        });
        g.bench_with_input(BenchmarkId::new("fmask", m), &m, |b, &m| {
            b.iter(|| replay(&edf, Fmask::new(m), &mut probe).expect("replayed"))
        });
        g.bench_with_input(BenchmarkId::new("cpudl", m), &m, |b, &m| {
            b.iter(|| replay(&edf, Cpudl::new(m), &mut probe).expect("replayed"))
        });
        g.throughput(Throughput::Elements(fp.calls.len() as u64));
        g.bench_with_input(BenchmarkId::new("cpupri", m), &m, |b, &m| {
            b.iter(|| replay(&fp, Cpupri::new(m, ts.len()), &mut probe).expect("replayed"))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
