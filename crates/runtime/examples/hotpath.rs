//! The hot-path benchmark of the restructure (docs/performance.md, "Hot path before and after the
//! restructure"): one fixed set (six tasks, U = 1.8 on two CPUs) under gsn-edf and pedf, and
//! the p50 / p99 of Δsch and Δrel (with `SHAPE=1` in the environment also the distributions'
//! p50…p99.9 and the record counts). Run:
//! `cargo run --release -p rtsched-runtime --example hotpath -- [duration_ms] [fifo_prio]`.
use rtsched_model::TaskSet;
use rtsched_runtime::{run, Mechanism, RunConfig};

/// Percentiles (nearest rank) of a sample, for the distribution's shape.
fn pct(v: &[u64]) -> String {
    let mut v = v.to_vec();
    v.sort_unstable();
    let r = |p: f64| v.get(((p * v.len() as f64).ceil() as usize).clamp(1, v.len().max(1)) - 1).copied().unwrap_or(0);
    format!("p50={} p75={} p90={} p95={} p99={} p999={}", r(0.5), r(0.75), r(0.9), r(0.95), r(0.99), r(0.999))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ms: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let prio: Option<i32> = args.get(2).and_then(|s| s.parse().ok());
    // (C, T) in µs; C doubled from the `measure` example's set: U = 1.8.
    let ct: [(u64, u64); 6] =
        [(1000, 10_000), (2000, 20_000), (1500, 15_000), (3000, 25_000), (800, 8_000), (2500, 50_000)];
    let ts = TaskSet::from_ct(&ct.iter().map(|&(c, t)| (2 * c * 1000, t * 1000)).collect::<Vec<_>>()).unwrap();
    let all = rtsched_runtime::platform::allowed_cpus();
    let mut cfg = RunConfig::new(all[..2].to_vec(), ms * 1_000_000);
    cfg.rt_priority = prio;
    let gsn = Mechanism::named("gsn-edf").unwrap();
    let pedf = Mechanism::named("pedf").unwrap().with_partition(vec![vec![0, 2, 4], vec![1, 3, 5]]);
    for mech in [gsn, pedf] {
        let r = run(&ts, &mech, &cfg).unwrap();
        if std::env::var("SHAPE").is_ok() {
            println!("{} schedule {}", mech.name(), pct(&r.overheads["schedule"]));
            println!("{} release  {}", mech.name(), pct(&r.overheads["release"]));
            let count = |k| r.traces.iter().flatten().filter(|x| x.kind == k).count();
            use rtsched_runtime::tracer::RecKind as K;
            println!(
                "{} counts ipi_sent={} ipi_noticed={} sched={} preempt={} start={} resume={} complete={}",
                mech.name(),
                count(K::IpiSent),
                count(K::IpiNoticed),
                count(K::SchedStart),
                count(K::JobPreempt),
                count(K::JobStart),
                count(K::JobResume),
                count(K::JobComplete)
            );
        }
        let s = r.summary_json();
        let o = &s["overheads"];
        println!(
            "{} jobs={} misses={} sch_p50={} sch_p99={} rel_p50={} rel_p99={} lw_p99={} cxs_p99={} ipi_p50={} sch_n={}",
            mech.name(),
            s["jobs"],
            s["deadline_misses"],
            o["schedule"]["p50_ns"],
            o["schedule"]["p99_ns"],
            o["release"]["p50_ns"],
            o["release"]["p99_ns"],
            o["lock_wait"]["p99_ns"],
            o["context_switch"]["p99_ns"],
            o["ipi"]["p50_ns"],
            o["schedule"]["count"]
        );
    }
}
