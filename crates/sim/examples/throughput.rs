//! Prints simulator throughput for the bench workload (G-EDF, m = 8, n = 80, 100 s), timed by
//! both wall clock and this thread's on-CPU time (/proc/thread-self/schedstat), since on a
//! shared machine wall time overstates the cost per core.
//!
//! `cargo run --release -p rtsched-sim --example throughput [reps] [trace] [quantum] [zero-overheads|overheads]`
//! (`overheads`: Δrel 5 µs, Δev 2 µs, Δsch 1 µs, Δcxs 0.5 µs, Δipi 10 µs; `zero-overheads`: the
//! overhead engine with nothing to charge).

use rtsched_sim::{simulate, Overheads, Scheduler, SimConfig};

#[path = "../benches/common/workload.rs"]
mod workload;
use workload::task_set;

fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat").ok()?.split_whitespace().next()?.parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let reps: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let trace = args.iter().any(|a| a == "trace");
    let ts = task_set(80, 4.8, 42);
    let sched = if args.iter().any(|a| a == "quantum") {
        Scheduler::GedfQuantum { quantum: 1_000_000, staggered: false }
    } else {
        Scheduler::Gedf
    };
    let mut cfg = SimConfig::new(8);
    cfg.horizon = Some(100_000_000_000);
    cfg.record_trace = trace;
    if args.iter().any(|a| a == "zero-overheads") {
        cfg.overheads = Some(Overheads::ZERO);
    } else if args.iter().any(|a| a == "overheads") {
        cfg.overheads = Some(Overheads {
            release_ns: 5_000,
            release_event_ns: 2_000,
            schedule_ns: 1_000,
            context_switch_ns: 500,
            ipi_ns: 10_000,
            ..Overheads::ZERO
        });
    }
    let r = simulate(&ts, &sched, &cfg).unwrap();
    // Trace records (release, run, preempt, complete, migration, idle) of one run.
    let records = if trace {
        r.trace.as_ref().map_or(0, |t| t.records.len())
    } else {
        let mut c = cfg.clone();
        c.record_trace = true;
        simulate(&ts, &sched, &c).unwrap().trace.map_or(0, |t| t.records.len())
    };
    let (w0, c0) = (std::time::Instant::now(), cpu_ns());
    for _ in 0..reps {
        std::hint::black_box(simulate(&ts, &sched, &cfg).unwrap());
    }
    let wall = w0.elapsed().as_secs_f64() / reps as f64;
    let cpu = cpu_ns().zip(c0).map(|(a, b)| (a - b) as f64 / 1e9 / reps as f64);
    println!(
        "{}: n=80 m=8 U={:.3} 100 s: {} jobs, {} events (releases+completions{}), {} preemptions, {} migrations, {} context switches, {} misses",
        sched.name(), ts.utilization_f64(), r.jobs, r.events, if matches!(sched, Scheduler::Gedf) { "" } else { "+ticks" }, r.preemptions, r.migrations, r.context_switches, r.deadline_misses
    );
    if let Some(o) = &r.overheads {
        println!("overheads {:?}: {} ns of CPU time charged", o.values, o.cpu_time_ns);
    }
    println!("{records} trace records per run");
    println!(
        "wall {:.1} ms/run: {:.2} M jobs/s, {:.2} M events/s",
        wall * 1e3,
        r.jobs as f64 / wall / 1e6,
        r.events as f64 / wall / 1e6
    );
    if let Some(c) = cpu {
        println!(
            "cpu  {:.1} ms/run: {:.2} M jobs/s, {:.2} M events/s, {:.2} M trace records/s (per core, on-CPU time)",
            c * 1e3,
            r.jobs as f64 / c / 1e6,
            r.events as f64 / c / 1e6,
            records as f64 / c / 1e6
        );
    }
}
