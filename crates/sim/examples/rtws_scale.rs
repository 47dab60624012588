//! Prints how long the RTWS simulation takes on a large fork-join set (no assertion).
//! `cargo run --release -p rtsched-sim --example rtws_scale`

use rtsched_model::forkjoin::{ForkJoinSet, ForkJoinTask};
use rtsched_sim::{simulate_rtws, SimConfig};
use std::time::Instant;

fn main() {
    for m in [2u32, 4, 8, 16] {
        // 5m tasks, periods 700..800 ms, u = 0.15 each (U = 0.75 m), 2m parallel threads of
        // unequal lengths between two sequential parts.
        let tasks: Vec<ForkJoinTask> = (0..5 * m as u64)
            .map(|i| {
                let t = 700_000_000 + (i * 7_919_113) % 100_000_000;
                let c = t * 15 / 100;
                let n = 2 * m as u64;
                let seq = c / 10;
                let par = c - 2 * seq;
                let mut threads: Vec<u64> = (0..n).map(|k| par * (k + 1) / (n * (n + 1) / 2)).collect();
                let s: u64 = threads.iter().sum();
                threads[0] += par - s;
                ForkJoinTask::implicit(t, vec![vec![seq], threads, vec![seq]]).unwrap()
            })
            .collect();
        let set = ForkJoinSet::new(tasks).unwrap();
        let mut cfg = SimConfig::new(m);
        cfg.horizon = Some(100_000_000_000); // 100 s
        let t0 = Instant::now();
        let r = simulate_rtws(&set, &cfg).unwrap();
        let dt = t0.elapsed();
        println!(
            "m={m:2} tasks={:3} jobs={:6} threads={:8} steals={:7} ctx={:8} misses={} : {:.1} ms ({:.0} ns/thread)",
            set.len(),
            r.jobs,
            r.threads,
            r.steals,
            r.context_switches,
            r.deadline_misses,
            dt.as_secs_f64() * 1e3,
            dt.as_nanos() as f64 / r.threads as f64
        );
    }
}
