//! Cost of one trace record (target ≤ 50 ns). Run: `cargo bench -p rtsched-runtime --bench tracer`.
use criterion::{criterion_group, criterion_main, Criterion};
use rtsched_runtime::tracer::{RecKind, TraceBuffer};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let mut buf = TraceBuffer::new(0, 1 << 20);
    c.bench_function("tracer_record", |b| {
        b.iter(|| {
            if buf.is_full() {
                buf.clear();
            }
            buf.record(black_box(RecKind::JobStart), black_box(1), black_box(2), black_box(3));
        })
    });
    let mut buf2 = TraceBuffer::new(0, 1 << 20);
    c.bench_function("tracer_record_at_given_timestamp", |b| {
        b.iter(|| {
            if buf2.is_full() {
                buf2.clear();
            }
            buf2.record_at(black_box(7), black_box(RecKind::JobStart), black_box(1), black_box(2), black_box(3));
        })
    });
    c.bench_function("counter_read", |b| b.iter(|| black_box(rtsched_runtime::clock::counter())));
    c.bench_function("monotonic_ns", |b| b.iter(|| black_box(rtsched_runtime::clock::monotonic_ns())));
}

criterion_group!(benches, bench);
criterion_main!(benches);
