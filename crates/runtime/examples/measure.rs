//! Measures release latency and overheads for a fixed small task set under every mechanism
//! and under SCHED_DEADLINE. Run: `cargo run --release -p rtsched-runtime --example measure
//! [duration_ms] [fifo_prio]`.
use rtsched_model::TaskSet;
use rtsched_runtime::{run, IdleMode, Mechanism, RunConfig};

/// The registered mechanism `name`.
fn mech(name: &str) -> Mechanism {
    Mechanism::named(name).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ms: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let prio: Option<i32> = args.get(2).and_then(|s| s.parse().ok());
    // Six tasks, U = 0.9 in total: (C, T) in µs.
    let ct: [(u64, u64); 6] =
        [(1000, 10_000), (2000, 20_000), (1500, 15_000), (3000, 25_000), (800, 8_000), (2500, 50_000)];
    let ts = TaskSet::from_ct(&ct.iter().map(|&(c, t)| (c * 1000, t * 1000)).collect::<Vec<_>>()).unwrap();
    let all = rtsched_runtime::platform::allowed_cpus();
    let cases: Vec<(Mechanism, RunConfig)> = {
        let mut v = Vec::new();
        let mut c = RunConfig::new(vec![all[0]], ms * 1_000_000);
        c.rt_priority = prio;
        c.idle = IdleMode::Sleep;
        c.start_delay_ns =
            std::env::var("START_MS").ok().and_then(|s| s.parse::<u64>().ok()).unwrap_or(100) * 1_000_000;
        v.push((mech("pedf").with_partition(vec![(0..6).collect()]), c.clone()));
        v.push((mech("pfp").with_partition(vec![(0..6).collect()]), c.clone()));
        v.push((mech("gsn-edf"), c.clone()));
        if all.len() >= 2 {
            let mut d = c.clone();
            d.dedicated_cpu = Some(all[1]);
            v.push((mech("gsn-edf-di"), d));
            let mut g = c.clone();
            g.cpus = all.clone();
            v.push((mech("gsn-edf"), g.clone()));
            v.push((mech("kernel-sd"), g));
        }
        v
    };
    for (mech, cfg) in cases {
        match run(&ts, &mech, &cfg) {
            Ok(r) => {
                let check = r.check_trace().err();
                let s = r.summary_json();
                println!("{}", serde_json::to_string(&s).unwrap());
                if check.is_some() {
                    println!("  trace check: {check:?}");
                }
            }
            Err(e) => println!("{} on {:?}: error: {e}", mech.name(), cfg.cpus),
        }
    }
}
