//! Prints the SP-RES cascade's throughput (task sets per second on one core) on the task sets
//! of Brandenburg & Gül, RTSS 2016, §V: m = 8, n ∈ {10, 32}, RandFixedSum utilizations,
//! periods from the paper's set (`seed004`), generated exactly as the sweeps generate them.
//!
//! Two mixes: `wide` (U spread over [1, 7.9], 40 points × 50 sets) and `top` (U ∈ {7.2, 7.3,
//! …, 7.9}, 8 points × 100 sets, where the meta-heuristics run). Run on one core:
//!
//! `RAYON_NUM_THREADS=1 cargo run --release -p rtsched-analysis --example semi_throughput`
//!
//! Timings only print; nothing is asserted (the machine may be shared).

use rtsched_analysis::semi::{cascade, RpMode, SemiConfig, Variant};
use rtsched_gen::{generate_many, util_gen_from_name, DeadlineGen, GenSpec, PeriodGen};
use rtsched_model::TaskSet;
use std::collections::BTreeMap;
use std::time::Instant;

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
    let start = Instant::now();
    let mut by: BTreeMap<String, usize> = BTreeMap::new();
    let mut placed = 0;
    for ts in sets {
        let p = cascade(ts, 8, cfg);
        placed += p.schedulable as usize;
        if !p.schedulable {
            *by.entry("(none)".into()).or_default() += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{label}: {} sets in {secs:.2} s = {:.0} sets/s/core ({:.0} us/set); placed {placed}",
        sets.len(),
        sets.len() as f64 / secs,
        1e6 * secs / sets.len() as f64,
    );
}

fn main() {
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
            let w = sets(n, &wide, 50, periods);
            let t = sets(n, &top, 100, periods);
            for (name, cfg) in &configs {
                report(&format!("periods={periods} n={n} wide  {name}"), &w, cfg);
                report(&format!("periods={periods} n={n} top   {name}"), &t, cfg);
            }
        }
    }
}
