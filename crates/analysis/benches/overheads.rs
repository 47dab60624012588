//! Cost of overhead-aware analysis per task set: the inflation (model evaluated once per n of
//! the batch, then the rule on each set) against the combined G-EDF test that judges the inflated set (Brandenburg & Anderson,
//! RTSS 2009, §4.2: GFB, BAK, BCL, BCL-iterative, BAR). The target (docs/overheads.md,
//! "Performance"): inflation adds at most 10% to the combined test's time per set.
//!
//!     cargo bench -p rtsched-analysis --bench overheads
//!
//! Task sets as in `rtss09-hrt`: the six Baker distributions (tasks added
//! until the utilization cap is exceeded, the last one dropped), periods uniform integral in
//! [10, 100] ms, caps spread over [0.3 m, 0.9 m]. Overheads: the gsn-edf model measured on the
//! 2-core development VM (docs/examples/overheads-gsn-edf-2cpu.json), averages (its maxima
//! include 10-25 ms VM timer outliers that make every set infeasible before any test runs,
//! which would flatter the ratio), extrapolated in n and m for m = 8.

use std::hint::black_box;
use std::time::Instant;

use rtsched_analysis::global::{self, GlobalTest};
use rtsched_analysis::overheads::{self as oh, Inflation, Mode, Params};
use rtsched_analysis::Limits;
use rtsched_gen::{DeadlineGen, GenSpec, PeriodGen};
use rtsched_model::overheads::{OverheadSpec, OverheadStat};
use rtsched_model::TaskSet;

const MODEL: &str = include_str!("../../../docs/examples/overheads-gsn-edf-2cpu.json");
const SETS: usize = 300;
const REPS: usize = 5;

fn sets(dist: &str, m: u32) -> Vec<TaskSet> {
    let mut out = Vec::new();
    for k in 0..6 {
        let cap = m as f64 * (0.3 + 0.12 * k as f64);
        let spec = GenSpec {
            util: rtsched_gen::util_gen_from_name(dist, None, cap, 1.0).unwrap(),
            periods: PeriodGen::parse("integral:10ms-100ms").unwrap(),
            deadlines: DeadlineGen::parse("implicit").unwrap(),
        };
        out.extend(rtsched_gen::generate_many(&spec, 7 + k, SETS / 6).unwrap());
    }
    out
}

fn main() {
    let spec = OverheadSpec::from_json(MODEL).unwrap();
    let mech = oh::mechanism("gsn-edf").unwrap();
    let lim = Limits::default();
    let p = Params::default();
    println!(
        "{:<16} {:>3} {:>7} {:>14} {:>14} {:>8} {:>9}",
        "distribution", "m", "mean n", "inflate µs/set", "test µs/set", "ratio", "accepted"
    );
    const DISTS: [&str; 6] =
        ["uniform-light", "uniform-medium", "uniform-heavy", "bimodal-light", "bimodal-medium", "bimodal-heavy"];
    for m in [2u32, 8] {
        let (mut all_inf, mut all_test) = (0.0, 0.0);
        for dist in DISTS {
            let sets = sets(dist, m);
            let extrapolate = m > 2;
            let mut best_inf = f64::MAX;
            let mut best_test = f64::MAX;
            let mut accepted = 0;
            for _ in 0..REPS {
                // Inflation alone: the model evaluated once per n of the batch (as the sweep
                // evaluator does), then the rule on every set.
                let t0 = Instant::now();
                let (lo, hi) = sets.iter().fold((usize::MAX, 0), |(a, b), s| (a.min(s.len()), b.max(s.len())));
                let table = oh::ValueTable::new(&spec, mech, m, OverheadStat::Avg, extrapolate, lo, hi);
                let inflated: Vec<Inflation> = sets
                    .iter()
                    .map(|ts| oh::inflate(black_box(ts), m, mech, &table.get(ts.len()), &p, Mode::Hard).unwrap())
                    .collect();
                let inf = t0.elapsed().as_secs_f64();
                // The combined test on the inflated sets.
                let t1 = Instant::now();
                accepted = 0;
                for i in &inflated {
                    if let Inflation::Done(x) = i {
                        let v = global::combined_of(&GlobalTest::SEED001, black_box(&x.tasks), x.capacity, &lim);
                        accepted += v.is_schedulable() as usize;
                    }
                }
                let test = t1.elapsed().as_secs_f64();
                best_inf = best_inf.min(inf);
                best_test = best_test.min(test);
            }
            let n_mean = sets.iter().map(|s| s.len()).sum::<usize>() as f64 / sets.len() as f64;
            let per = |x: f64| x / sets.len() as f64 * 1e6;
            println!(
                "{dist:<16} {m:>3} {n_mean:>7.1} {:>14.2} {:>14.2} {:>7.1}% {:>5}/{}",
                per(best_inf),
                per(best_test),
                100.0 * best_inf / best_test,
                accepted,
                sets.len()
            );
            all_inf += best_inf;
            all_test += best_test;
        }
        println!("{:<16} {m:>3} {:>7} {:>14} {:>14} {:>7.1}%", "all six", "", "", "", 100.0 * all_inf / all_test);
    }
    println!("ratio = inflation time / combined-test time (best of {REPS} runs, one thread); target <= 10%");
}
