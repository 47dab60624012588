//! The task sets the reproductions of Brandenburg & Gül (RTSS 2016) test — RandFixedSum
//! utilizations, the paper's periods as its text gives them (`seed004`) and as its published
//! code draws them (`seed004-artifact`), m = 8, n = 10 and 16 near U = m — placed by the
//! cascade of each reading with each RP mode and ε: every placement passes the independent
//! checker, and the period-transformed ones obey their RP mode's rules.

use rtsched_analysis::semi::{cascade, check, RpMode, SemiConfig, SliceOrder, Variant, PAPER_PERIODS_NS};
use rtsched_gen::{generate_many, util_gen_from_name, DeadlineGen, GenSpec, PeriodGen};

fn sets(n: usize, u: f64, periods: &str, count: usize) -> Vec<rtsched_model::TaskSet> {
    let spec = GenSpec {
        util: util_gen_from_name("randfixedsum", Some(n), u, 1.0).unwrap(),
        periods: PeriodGen::parse(periods).unwrap(),
        deadlines: DeadlineGen::parse("implicit").unwrap(),
    };
    generate_many(&spec, 2016 + n as u64, count).unwrap()
}

#[test]
fn cascade_placements_of_paper_sets_pass_the_checker() {
    let mut transformed = 0;
    let mut placed = 0;
    for (n, u) in [(10, 7.9), (10, 7.96), (16, 7.96)] {
        for periods in ["seed004", "seed004-artifact"] {
            let ts_all = sets(n, u, periods, 25);
            for variant in [Variant::Text, Variant::Artifact] {
                for (rp, floor) in [(RpMode::Divisor, 2_000_000), (RpMode::Halving, 4_000_000)] {
                    for eps in [0, 500_000] {
                        let cfg = SemiConfig {
                            epsilon: eps,
                            rp,
                            rp_floor: floor,
                            slice_order: if eps == 0 { SliceOrder::Flipped } else { SliceOrder::DeadlineDesc },
                            merge_same_core: eps > 0,
                            ..SemiConfig::for_variant(variant)
                        };
                        for ts in &ts_all {
                            let p = cascade(ts, 8, &cfg);
                            if !p.schedulable {
                                continue;
                            }
                            placed += 1;
                            check(ts, &p).unwrap_or_else(|e| panic!("{variant} {rp:?} eps {eps}: {e}"));
                            for t in p.tasks.iter().filter(|t| t.period_ratio > 1) {
                                transformed += 1;
                                let delta = p.cpus.iter().flat_map(|c| &c.reservations).find(|r| r.task == t.task);
                                let delta = delta.map(|r| r.period).unwrap();
                                let period = ts[t.task].period;
                                match rp {
                                    RpMode::Divisor => {
                                        assert_eq!(delta * t.period_ratio, period);
                                        assert!(PAPER_PERIODS_NS.contains(&delta) && delta >= floor);
                                    }
                                    RpMode::Halving => assert_eq!(delta, period / t.period_ratio),
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    // The sample exercises both outcomes and period transformation (the test can fail).
    assert!(placed > 500, "{placed}");
    assert!(transformed > 0);
}
