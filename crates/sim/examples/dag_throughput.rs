//! Prints the node-level DAG simulator's throughput (node events per second, `DagResult::
//! node_events`: one per node instance released and one per node completion) under gedf, gfp
//! (DM) and federated, on n = 10 DAG tasks of 10–50 nodes (Erdős–Rényi, p = 0.1, node WCETs
//! 10 µs–1 ms, utilization 3.0 with a largest task of 1.5) on m = 8, 10 s of virtual time, timed
//! by wall clock and by this thread's on-CPU time (/proc/thread-self/schedstat), since on a
//! shared machine wall time overstates the cost per core. No assertion: a measurement.
//!
//! `cargo run --release -p rtsched-sim --example dag_throughput [reps] [trace]`

use rtsched_analysis::dag::federated::{federated, Federated, LowPlacement};
use rtsched_analysis::Limits;
use rtsched_gen::dag::{generate_dag_set, DagDeadline, DagGenSpec, DagShape};
use rtsched_policy::{FpOrder, PriorityRule};
use rtsched_sim::{simulate_dag, Scheduler, SimConfig};
use std::time::Instant;

fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat").ok()?.split_whitespace().next()?.parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let reps: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let m = 8;
    let spec = DagGenSpec {
        n: 10,
        total: 3.0,
        umax: 1.5,
        shape: DagShape::ErdosRenyi { nodes: (10, 50), p: 0.1 },
        wcet: (10_000, 1_000_000),
        deadline: DagDeadline::Implicit,
        max_tries: 1000,
    };
    let set = generate_dag_set(&spec, 42, 0).expect("the benchmark set is drawn");
    let nodes: usize = set.iter().map(|t| t.nodes()).sum();
    let ranks = match PriorityRule::fixed(&set.sequential().expect("valid"), FpOrder::DeadlineMonotonic) {
        PriorityRule::Fixed(r) => r,
        PriorityRule::Edf => unreachable!(),
    };
    let mut scheds = vec![("gedf", Scheduler::Gedf), ("gfp", Scheduler::Gfp { ranks, order: None })];
    match federated(&set, m, LowPlacement::default(), &Limits::default()) {
        Federated::Schedulable(plan) => scheds.push(("federated", Scheduler::Federated(plan))),
        Federated::NotSchedulable(why) => println!("federated: not placed ({why}); skipped"),
    }
    let mut cfg = SimConfig::new(m);
    cfg.horizon = Some(10_000_000_000);
    cfg.record_trace = args.iter().any(|a| a == "trace");
    cfg.max_trace_records = u64::MAX;
    println!("n = 10 DAG tasks, {nodes} nodes, m = {m}, horizon 10 s, trace {}", cfg.record_trace);
    for (name, sched) in &scheds {
        let mut best: Option<(f64, f64, u64)> = None;
        for _ in 0..reps {
            let (c0, t0) = (cpu_ns(), Instant::now());
            let r = simulate_dag(&set, sched, &cfg).expect("the benchmark simulates");
            let wall = t0.elapsed().as_secs_f64();
            let cpu = match (c0, cpu_ns()) {
                (Some(a), Some(b)) => (b - a) as f64 / 1e9,
                _ => wall,
            };
            if best.is_none_or(|b| cpu < b.1) {
                best = Some((wall, cpu, r.node_events));
            }
        }
        if let Some((wall, cpu, ev)) = best {
            println!(
                "{name:<10} node events {ev:>10}  {:>8.2} M/s on-CPU  {:>8.2} M/s wall  (best of {reps})",
                ev as f64 / cpu / 1e6,
                ev as f64 / wall / 1e6
            );
        }
    }
}
