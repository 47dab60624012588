//! Prints the SP-RES cascade's throughput (task sets per second on one core) on the task sets
//! of Brandenburg & Gül, RTSS 2016, §V: m = 8, n ∈ {10, 32}, RandFixedSum utilizations,
//! periods from the paper's set (`seed004`), generated exactly as the sweeps generate them.
//!
//! Two mixes: `wide` (U spread over [1, 7.9], 40 points × 50 sets; × 10 for n = 32, which is
//! fast) and `top` (U ∈ {7.2, 7.3, …, 7.9}, 8 points × 100 sets, × 10 for n = 32; where the
//! meta-heuristics run). Run on one core:
//!
//! `RAYON_NUM_THREADS=1 cargo run --release -p rtsched-analysis --example semi_throughput`
//!
//! An optional argument keeps only the lines whose label contains it (e.g. `"n=32 top"`).
//!
//! Times are the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), so that other processes on a
//! shared machine inflate them less than wall time; they only print, nothing is asserted.

use rtsched_analysis::semi::{cascade, RpMode, SemiConfig, Variant};
use rtsched_gen::{generate_many, util_gen_from_name, DeadlineGen, GenSpec, PeriodGen};
use rtsched_model::TaskSet;

/// CPU time of the calling thread, in seconds.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID is supported on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime failed");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn sets(n: usize, utils: &[f64], per: usize, periods: &str) -> Vec<TaskSet> {
    let mut out = Vec::new();
    for (i, &u) in utils.iter().enumerate() {
        let spec = GenSpec {
            util: util_gen_from_name("randfixedsum", Some(n), u, 1.0).expect("generator"),
            periods: PeriodGen::parse(periods).expect("periods"),
            deadlines: DeadlineGen::parse("implicit").expect("deadlines"),
        };
        out.extend(generate_many(&spec, 2016 + 1000 * n as u64 + i as u64, per).expect("sets"));
    }
    out
}

fn report(label: &str, sets: &[TaskSet], cfg: &SemiConfig) {
    let start = cpu_seconds();
    let mut placed = 0;
    for ts in sets {
        let p = cascade(ts, 8, cfg);
        placed += p.schedulable as usize;
    }
    let secs = cpu_seconds() - start;
    println!(
        "{label}: {} sets in {secs:.2} s CPU = {:.0} sets/s/core ({:.0} us/set); placed {placed}",
        sets.len(),
        sets.len() as f64 / secs,
        1e6 * secs / sets.len() as f64,
    );
}

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    let configs: Vec<(String, SemiConfig)> = vec![
        ("default (artifact, divisor RP, 4 ms)".into(), SemiConfig::default()),
        ("artifact as run (divisor RP, 2 ms)".into(), SemiConfig::for_variant(Variant::Artifact)),
        ("text (halving RP, 4 ms)".into(), SemiConfig::for_variant(Variant::Text)),
        ("text + divisor RP".into(), SemiConfig { rp: RpMode::Divisor, ..SemiConfig::for_variant(Variant::Text) }),
    ];
    let wide: Vec<f64> = (0..40).map(|i| 1.0 + 6.9 * i as f64 / 39.0).collect();
    let top: Vec<f64> = (0..8).map(|i| 7.2 + 0.1 * i as f64).collect();
    for periods in ["seed004", "seed004-artifact"] {
        for n in [10usize, 32] {
            let scale = if n >= 32 { 10 } else { 1 };
            let w = sets(n, &wide, 50 * scale, periods);
            let t = sets(n, &top, 100 * scale, periods);
            for (name, cfg) in &configs {
                for (mix, sets) in [("wide", &w), ("top ", &t)] {
                    let label = format!("periods={periods} n={n} {mix}  {name}");
                    if label.contains(&filter) {
                        report(&label, sets, cfg);
                    }
                }
            }
        }
    }
}
