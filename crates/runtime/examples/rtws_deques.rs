//! RTWS's deques before and after, side by side in one run: each fork-join set runs under
//! `rtws` with `deques=locked` (the first design: one global lock over the global queue and
//! every per-CPU deque) and `deques=lockfree` (per-CPU lock-free deques, the global queue under
//! its own lock), alternately, and the mechanism's own terms are printed per design — `pop`
//! (Rule C, the owner's pop), `steal` (Rule E), `lock_wait` (waits for the global lock),
//! `schedule` (Δsch) — with the steals, migrations, preemptions and misses, so that the costs
//! are compared on schedules that are the same in their counts (migrations per set are printed
//! for both; a difference is noise of the real-time run, not a design change).
//!
//! No assertion: a measurement. Run: `cargo run --release -p rtsched-runtime --example
//! rtws_deques [ms] [fifo_prio] [rounds]` (default 300 ms, normal priority, 1 round) on the
//! first two allowed CPUs. Measurements on a shared machine: take the lock
//! (`flock /work/wt/measure.lock …`) and give a SCHED_FIFO priority.
use rtsched_model::forkjoin::{ForkJoinSet, ForkJoinTask};
use rtsched_runtime::platform::allowed_cpus;
use rtsched_runtime::{run_forkjoin, Mechanism, RunConfig};
use serde_json::Value;

const MS: u64 = 1_000_000;

fn sets() -> Vec<(&'static str, ForkJoinSet)> {
    let u = 3 * MS;
    let paper = ForkJoinSet::new(vec![
        ForkJoinTask::implicit(10 * u, vec![vec![3 * u], vec![u, u]]).expect("valid"),
        ForkJoinTask::implicit(20 * u, vec![vec![2 * u], vec![u, 3 * u, u, 3 * u]]).expect("valid"),
        ForkJoinTask::implicit(19 * u, vec![vec![4 * u]]).expect("valid"),
    ])
    .expect("valid");
    // Many short threads: the pops and steals dominate.
    let wide = ForkJoinSet::new(vec![
        ForkJoinTask::implicit(10 * MS, vec![vec![200_000], vec![300_000; 8], vec![200_000]]).expect("valid"),
        ForkJoinTask::implicit(7 * MS, vec![vec![150_000; 6], vec![250_000; 4]]).expect("valid"),
    ])
    .expect("valid");
    vec![("paper §V-A example (unit 3 ms)", paper), ("wide fork-join, short threads", wide)]
}

fn term(s: &Value, name: &str) -> String {
    let t = &s["overheads"][name];
    match (t["count"].as_u64(), t["avg_ns"].as_f64(), t["p50_ns"].as_u64(), t["p99_ns"].as_u64()) {
        (Some(n), Some(avg), Some(p50), Some(p99)) => format!("{n:>6} × avg {avg:>8.0} p50 {p50:>6} p99 {p99:>7}"),
        _ => "—".into(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ms: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(300);
    let prio: Option<i32> = args.get(2).and_then(|a| a.parse().ok());
    let rounds: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(1);
    let cpus: Vec<usize> = allowed_cpus().into_iter().take(2).collect();
    println!("rtws deques, before (locked) and after (lockfree): {ms} ms per run, CPUs {cpus:?}, SCHED_FIFO {prio:?}");
    println!("terms in ns: count × avg, p50, p99 (the summary's statistics after its outlier rule)");
    for (name, set) in sets() {
        println!("\n{name}");
        for round in 0..rounds {
            for deques in ["locked", "lockfree"] {
                let mech = Mechanism::named("rtws").and_then(|m| m.with_param("deques", deques));
                let mech = match mech {
                    Ok(m) => m,
                    Err(e) => {
                        eprintln!("rtws deques={deques}: {e}");
                        std::process::exit(2);
                    }
                };
                let mut c = RunConfig::new(cpus.clone(), ms * MS);
                c.start_delay_ns = 30 * MS;
                c.rt_priority = prio;
                let r = match run_forkjoin(&set, &mech, &c) {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("rtws deques={deques}: {e}");
                        std::process::exit(1);
                    }
                };
                let s = r.summary_json();
                let m = &r.metrics;
                println!(
                    "  round {round} {deques:>8}: steals {:>4} migrations {:>4} preemptions {:>4} misses {:>3}",
                    m.steals,
                    m.migrations,
                    m.preemptions,
                    r.deadline_misses()
                );
                for t in ["pop", "steal", "lock_wait", "schedule"] {
                    println!("      {t:<9} {}", term(&s, t));
                }
            }
        }
    }
}
