//! Simulator throughput of LLF and PD² against G-EDF on the same sets: the bench workload
//! (m = 8, n = 80, U ≈ 4.8, periods whole ms in [10, 100], 100 s), with every WCET rounded up to
//! whole milliseconds so that PD² (quantum 1 ms) accepts the set; LLF decides at events and
//! every 1 ms. Timed by this thread's on-CPU time (/proc/thread-self/schedstat) and wall clock.
//! Reports numbers only (no assertion).
//!
//! `cargo run --release -p rtsched-sim --example selection_throughput [reps] [seeds]`

use rtsched_model::TaskSet;
use rtsched_sim::{simulate, Scheduler, SimConfig};

#[path = "../benches/common/workload.rs"]
mod workload;
use workload::task_set;

fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat").ok()?.split_whitespace().next()?.parse().ok()
}

const MS: u64 = 1_000_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let reps: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let seeds: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let mut cfg = SimConfig::new(8);
    cfg.horizon = Some(100_000 * MS);
    for seed in 42..42 + seeds {
        let raw = task_set(80, 4.8, seed);
        let ct: Vec<(u64, u64)> = raw.iter().map(|t| (t.wcet.div_ceil(MS).min(t.period / MS) * MS, t.period)).collect();
        let ts = TaskSet::from_ct(&ct).unwrap();
        println!("set {seed}: n=80 m=8 U={:.3} (WCETs rounded up to whole ms), 100 s", ts.utilization_f64());
        for sched in [Scheduler::Gedf, Scheduler::Llf { quantum: MS }, Scheduler::Pd2 { quantum: MS }] {
            let r = simulate(&ts, &sched, &cfg).unwrap();
            let (w0, c0) = (std::time::Instant::now(), cpu_ns());
            for _ in 0..reps {
                std::hint::black_box(simulate(&ts, &sched, &cfg).unwrap());
            }
            let wall = w0.elapsed().as_secs_f64() / reps as f64;
            let cpu = cpu_ns().zip(c0).map_or(wall, |(a, b)| (a - b) as f64 / 1e9 / reps as f64);
            println!(
                "  {:<18} {:>7} jobs {:>8} events {:>7} preemptions {:>7} migrations {:>3} misses | {:>7.1} ms cpu/run: {:.3} M jobs/s cpu ({:.3} M wall)",
                sched.name(),
                r.jobs,
                r.events,
                r.preemptions,
                r.migrations,
                r.deadline_misses,
                cpu * 1e3,
                r.jobs as f64 / cpu / 1e6,
                r.jobs as f64 / wall / 1e6
            );
        }
    }
}
