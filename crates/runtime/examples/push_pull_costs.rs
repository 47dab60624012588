//! The cost of push, pull, enqueue and dequeue per find-CPU variant as a function of m, with
//! the structures alone (Lelli et al., 2011, §6, Figs. 8–11; docs/mechanisms/push-pull.md): for
//! each m and load, `sets` task sets of the paper's workload (n = 3m RandFixedSum tasks, U =
//! load·m, periods log-uniform in [10, 100] ms, implicit deadlines) are recorded in virtual time
//! and replayed single-threaded over every variant (`mechanism::push_pull::replay`). Prints one
//! line per (variant, m, load, operation): count, average and p99 in ns and TSC cycles.
//!
//! `cargo run --release -p rtsched-runtime --example push_pull_costs -- [--m 2,4,8] [--loads
//! 0.6,0.8] [--sets 5] [--horizon-ms 1000] [--seed 2011]` (under `chrt -f 50 taskset -c 1` to
//! keep other load off the core). The reproduction `rtsched reproduce sd-push-cost` runs the
//! same measurement and draws Figs. 8–11.
use rtsched_gen::{generate, util_gen_from_name, DeadlineGen, GenSpec, PeriodGen};
use rtsched_runtime::mechanism::push_pull::replay::{measure, Variant};

fn list<T: std::str::FromStr>(s: &str) -> Vec<T> {
    s.split(',').filter_map(|x| x.trim().parse().ok()).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get = |k: &str, d: &str| -> String {
        args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned().unwrap_or_else(|| d.to_string())
    };
    let ms: Vec<usize> = list(&get("--m", "2,4,8,16,24,32,40,48,64"));
    let loads: Vec<f64> = list(&get("--loads", "0.6,0.7,0.8"));
    let sets: u64 = get("--sets", "5").parse().unwrap_or(5);
    let horizon: u64 = get("--horizon-ms", "1000").parse::<u64>().unwrap_or(1000) * 1_000_000;
    let seed: u64 = get("--seed", "2011").parse().unwrap_or(2011);
    println!("variant,m,load,operation,count,avg_ns,p99_ns,avg_cycles,p99_cycles");
    for &m in &ms {
        for &load in &loads {
            let n = 3 * m;
            let spec = GenSpec {
                util: match util_gen_from_name("randfixedsum", Some(n), load * m as f64, 1.0) {
                    Ok(u) => u,
                    Err(e) => {
                        eprintln!("m = {m}, load {load}: {e}");
                        continue;
                    }
                },
                periods: PeriodGen::parse("loguniform:10ms-100ms").expect("a valid period range"),
                deadlines: DeadlineGen::Implicit,
            };
            let ts: Vec<_> = (0..sets).filter_map(|i| generate(&spec, seed ^ (m as u64) << 16, i).ok()).collect();
            match measure(&ts, m, horizon, &Variant::ALL, 200_000_000) {
                Ok(rows) => {
                    for (v, ops) in rows {
                        for o in ops {
                            println!(
                                "{},{m},{load},{},{},{:.1},{:.1},{:.1},{}",
                                v.name(),
                                o.op,
                                o.count,
                                o.avg_ns,
                                o.p99_ns,
                                o.avg_cycles,
                                o.p99_cycles
                            );
                        }
                    }
                }
                Err(e) => eprintln!("m = {m}, load {load}: {e}"),
            }
        }
    }
}
