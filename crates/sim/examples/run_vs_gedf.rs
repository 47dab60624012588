//! Simulator throughput of RUN and QPS against G-EDF on the same task sets (issue 25): jobs simulated
//! per second of this thread's on-CPU time (/proc/thread-self/schedstat; wall time overstates
//! the cost on a shared machine), no trace, one hyperperiod (200 ms) repeated to 60 s.
//!
//! Sets: the bench workload's UUniFast-discard utilizations (benches/common/workload.rs) with
//! periods mapped onto {10, 20, 25, 40, 50, 100} ms, so that RUN's and QPS's ticks (1/L ns, L
//! dividing the 200 ms hyperperiod) stay exact; m = 4 and 8, U ≈ 0.995·m (sets above m after the mapping are skipped).
//!
//! Columns: `p` is RUN's reduction level, `maj` QPS's major execution sets (0: partitioned EDF).
//!
//! `cargo run --release -p rtsched-sim --example run_vs_gedf [reps]`

use rtsched_model::TaskSet;
use rtsched_policy::qps::QuasiPartition;
use rtsched_policy::run::Reduction;
use rtsched_sim::{simulate, Scheduler, SimConfig};

#[path = "../benches/common/workload.rs"]
mod workload;
use workload::task_set;

fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat").ok()?.split_whitespace().next()?.parse().ok()
}

const PERIODS_MS: [u64; 6] = [10, 20, 25, 40, 50, 100];

fn harmonic(ts: &TaskSet) -> TaskSet {
    let params: Vec<(u64, u64)> = ts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let p = PERIODS_MS[(t.period / 1_000_000 + i as u64) as usize % PERIODS_MS.len()] * 1_000_000;
            let c = ((t.wcet as u128 * p as u128) / t.period as u128).clamp(1, p as u128) as u64;
            (c, p)
        })
        .collect();
    TaskSet::from_ct(&params).unwrap()
}

fn main() {
    let reps: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    println!("m   n   U      p  maj  sched  jobs     events    preempt/job  migr/job  M jobs/s (cpu)");
    for &(m, n) in &[(4u32, 16usize), (4, 40), (8, 32), (8, 80)] {
        for seed in 1..=3u64 {
            let ts = harmonic(&task_set(n, 0.995 * m as f64, seed));
            let Ok(red) = Reduction::build(&ts, m) else { continue };
            let Ok(qp) = QuasiPartition::build(&ts, m) else { continue };
            let mut cfg = SimConfig::new(m);
            cfg.horizon = Some(60_000_000_000);
            cfg.keep_jobs = false;
            for (name, sched) in [("gedf", Scheduler::Gedf), ("run", Scheduler::Run), ("qps", Scheduler::Qps)] {
                let r = simulate(&ts, &sched, &cfg).unwrap();
                let c0 = cpu_ns().unwrap_or(0);
                for _ in 0..reps {
                    std::hint::black_box(simulate(&ts, &sched, &cfg).unwrap());
                }
                let s = (cpu_ns().unwrap_or(0) - c0) as f64 / 1e9 / reps as f64;
                println!(
                    "{m}  {n:>3}  {:.3}  {}  {:>3}  {name:<5}  {:<7}  {:<8}  {:<11.3}  {:<8.3}  {:.2}",
                    ts.utilization_f64(),
                    red.levels(),
                    qp.majors(),
                    r.jobs,
                    r.events,
                    r.preemptions as f64 / r.jobs as f64,
                    r.migrations as f64 / r.jobs as f64,
                    r.jobs as f64 / s / 1e6
                );
            }
        }
    }
}
