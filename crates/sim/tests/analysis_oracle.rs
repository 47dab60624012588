//! Cross-engine oracle: the analysis (`rtsched-analysis`) against the simulator.
//!
//! A sound schedulability test accepts only task sets for which *every* legal job sequence
//! meets its deadlines, so in particular the synchronous periodic one (simulated over one
//! hyperperiod plus the largest deadline) and seeded random sporadic ones (with execution
//! times below the WCET). Any accepted set that misses in simulation is a soundness bug in the
//! test or in the simulator. Conversely, an implicit-deadline set with `U > 1` must miss in a
//! synchronous periodic uniprocessor EDF simulation over the hyperperiod (its demand in
//! `[0, H)` is `U·H > H`), and QPA must reject it.
//!
//! Task sets have small integer periods from a set whose LCM is 120, so hyperperiods stay short
//! and the whole file checks well over 100,000 task sets in seconds. Each test asserts a minimum
//! number of accepted sets so that the oracle is never vacuous; run with `--nocapture` to see
//! the counts.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::global::{self, GlobalTest};
use rtsched_analysis::partition::{partition, Admission, Fit, Order, PartitionOutcome};
use rtsched_analysis::uni::edf;
use rtsched_analysis::{semi, Limits, Verdict};
use rtsched_model::Placement;
use rtsched_model::{Task, TaskSet, Time};
use rtsched_sim::{simulate, Arrivals, ExecTimes, Scheduler, SimConfig, SpresConfig};
use std::collections::HashSet;

/// Every LCM of a subset divides 120.
const PERIODS: [Time; 15] = [2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 24, 30, 40, 60, 120];

/// `n` tasks with total utilization about `u` (UUniFast), periods from [`PERIODS`], WCETs
/// rounded to whole ns (at least 1, at most T), deadlines implicit or (with probability 0.6
/// when `constrained`) uniform in `[C, T]`.
fn gen(rng: &mut ChaCha8Rng, n: usize, u: f64, constrained: bool) -> TaskSet {
    let mut us = Vec::with_capacity(n);
    let mut sum = u;
    for i in 1..n {
        let next = sum * rng.random::<f64>().powf(1.0 / (n - i) as f64);
        us.push(sum - next);
        sum = next;
    }
    us.push(sum);
    let tasks = us
        .iter()
        .map(|&ui| {
            let t = PERIODS[rng.random_range(0..PERIODS.len())];
            let c = ((ui * t as f64).round() as Time).clamp(1, t);
            let d = if constrained && rng.random_bool(0.6) { rng.random_range(c..=t) } else { t };
            Task::new(c, d, t).unwrap()
        })
        .collect();
    TaskSet::new(tasks).unwrap()
}

fn max_deadline(ts: &TaskSet) -> Time {
    ts.iter().map(|t| t.deadline).max().unwrap_or(0)
}

/// Synchronous periodic release, WCET execution, over one hyperperiod plus the largest
/// deadline; the invariant checks of the simulator are on.
fn periodic(m: u32, ts: &TaskSet) -> SimConfig {
    let mut cfg = SimConfig::new(m);
    cfg.horizon = Some(ts.hyperperiod(1 << 20).unwrap() + max_deadline(ts));
    cfg.check_invariants = true;
    cfg
}

/// Sporadic release (extra delays up to 3 ns) and execution times uniform in `[C/2, C]`,
/// over three hyperperiods.
fn sporadic(m: u32, ts: &TaskSet, seed: u64) -> SimConfig {
    let mut cfg = SimConfig::new(m);
    cfg.horizon = Some(3 * ts.hyperperiod(1 << 20).unwrap() + max_deadline(ts));
    cfg.arrivals = Arrivals::Sporadic { max_extra_delay: 3, seed };
    cfg.exec = ExecTimes::UniformFraction { lo: 0.5, seed: seed.wrapping_add(1) };
    cfg.check_invariants = true;
    cfg
}

fn misses(ts: &TaskSet, sched: &Scheduler, cfg: &SimConfig) -> u64 {
    simulate(ts, sched, cfg).unwrap_or_else(|e| panic!("simulation failed: {e}\n{ts:?}")).deadline_misses
}

/// The missed jobs and the records of the first one's window, for a failure message.
fn explain(ts: &TaskSet, sched: &Scheduler, cfg: &SimConfig) -> String {
    let mut cfg = cfg.clone();
    cfg.record_trace = true;
    let r = simulate(ts, sched, &cfg).unwrap();
    let missed: Vec<_> = r.per_job.iter().filter(|j| j.missed(r.horizon)).collect();
    let mut out = format!("missed jobs: {missed:?}\n");
    if let (Some(j), Some(tr)) = (missed.first(), &r.trace) {
        for rec in tr.records.iter().filter(|x| x.time + 12 >= j.release && x.time <= j.deadline + 2) {
            out += &format!("  {} {:?}\n", rec.time, rec.event);
        }
    }
    out
}

fn describe(ts: &TaskSet) -> String {
    let v: Vec<String> = ts.iter().map(|t| format!("(C={}, D={}, T={})", t.wcet, t.deadline, t.period)).collect();
    v.join(", ")
}

#[test]
fn qpa_accepted_sets_meet_deadlines_under_edf() {
    let lim = Limits::default();
    let (mut total, mut accepted, mut acc_constrained) = (0u64, 0u64, 0u64);
    for seed in 0..4u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(0xE0F_0000 + seed);
        for k in 0..10_000u64 {
            let n = rng.random_range(1..=6);
            let constrained = k % 2 == 0;
            let u = rng.random_range(0.3..1.05);
            let ts = gen(&mut rng, n, u, constrained);
            total += 1;
            if edf::qpa(&ts, &lim) != Verdict::Schedulable {
                continue;
            }
            accepted += 1;
            acc_constrained += ts.iter().any(|t| t.deadline < t.period) as u64;
            let a = misses(&ts, &Scheduler::Gedf, &periodic(1, &ts));
            let b = misses(&ts, &Scheduler::Gedf, &sporadic(1, &ts, seed * 100_000 + k));
            assert!(
                a == 0 && b == 0,
                "QPA accepts but EDF misses (periodic {a}, sporadic {b}): m = 1, {}",
                describe(&ts)
            );
        }
    }
    println!("qpa: {accepted} of {total} sets accepted ({acc_constrained} with a constrained deadline), none missed");
    assert!(
        accepted >= 15_000 && acc_constrained >= 5_000,
        "oracle too weak: {accepted} accepted, {acc_constrained} constrained"
    );
}

#[test]
fn qpa_rejects_and_edf_misses_when_overloaded() {
    let lim = Limits::default();
    let mut checked = 0u64;
    let mut rng = ChaCha8Rng::seed_from_u64(0x0E_7104D);
    for _ in 0..10_000 {
        let n = rng.random_range(1..=6);
        let u = rng.random_range(1.0..1.4);
        let ts = gen(&mut rng, n, u, false);
        if ts.utilization_at_most(1) {
            continue; // rounding brought U back to <= 1
        }
        checked += 1;
        assert_eq!(edf::qpa(&ts, &lim), Verdict::NotSchedulable, "QPA accepts U > 1: {}", describe(&ts));
        let mut cfg = periodic(1, &ts);
        cfg.horizon = Some(ts.hyperperiod(1 << 20).unwrap());
        assert!(misses(&ts, &Scheduler::Gedf, &cfg) > 0, "EDF meets every deadline with U > 1: {}", describe(&ts));
    }
    println!("overload: {checked} sets with U > 1, all rejected by QPA and all missing under EDF");
    assert!(checked >= 8_000, "oracle too weak: {checked}");
}

#[test]
fn global_edf_tests_accepted_sets_meet_deadlines() {
    let lim = Limits::default();
    let mut accepted = [0u64; GlobalTest::ALL.len()];
    let mut total = 0u64;
    for m in 2..=4u32 {
        let mut rng = ChaCha8Rng::seed_from_u64(0x6ED_F000 + m as u64);
        for k in 0..10_000u64 {
            let n = rng.random_range(m as usize + 1..=m as usize + 5);
            let u = rng.random_range(0.15..0.75) * m as f64;
            let ts = gen(&mut rng, n, u, k % 2 == 0);
            total += 1;
            let verdicts: Vec<bool> =
                GlobalTest::ALL.iter().map(|&t| global::test(t, &ts, m, &lim) == Verdict::Schedulable).collect();
            if !verdicts.iter().any(|&v| v) {
                continue;
            }
            for (i, &v) in verdicts.iter().enumerate() {
                accepted[i] += v as u64;
            }
            let a = misses(&ts, &Scheduler::Gedf, &periodic(m, &ts));
            let b = misses(&ts, &Scheduler::Gedf, &sporadic(m, &ts, (m as u64) << 32 | k));
            if a + b > 0 {
                let who: Vec<&str> =
                    GlobalTest::ALL.iter().zip(&verdicts).filter(|(_, &v)| v).map(|(t, _)| t.name()).collect();
                panic!("{who:?} accept but G-EDF misses (periodic {a}, sporadic {b}): m = {m}, {}", describe(&ts));
            }
        }
    }
    for (t, a) in GlobalTest::ALL.iter().zip(&accepted) {
        println!("global {}: {a} of {total} sets accepted, none missed", t.name());
    }
    for (t, &a) in GlobalTest::ALL.iter().zip(&accepted) {
        assert!(a >= 1_000, "oracle too weak for {}: {a} accepted", t.name());
    }
}

#[test]
fn partitioned_edf_placements_meet_deadlines() {
    let lim = Limits::default();
    let (mut total, mut placed_ffd, mut placed_wfd) = (0u64, 0u64, 0u64);
    for m in 2..=4u32 {
        let mut rng = ChaCha8Rng::seed_from_u64(0x9ED_F000 + m as u64);
        for k in 0..7_000u64 {
            let n = rng.random_range(m as usize..=m as usize + 6);
            let u = rng.random_range(0.4..1.0) * m as f64;
            let ts = gen(&mut rng, n, u, k % 2 == 0);
            total += 1;
            for (fit, count) in [(Fit::First, &mut placed_ffd), (Fit::Worst, &mut placed_wfd)] {
                let PartitionOutcome::Placed(p) =
                    partition(&ts, m, fit, Order::DecreasingUtilization, Admission::Edf, &lim)
                else {
                    continue;
                };
                *count += 1;
                let sched = Scheduler::Pedf(p.cpus.clone());
                let a = misses(&ts, &sched, &periodic(m, &ts));
                let b = misses(&ts, &sched, &sporadic(m, &ts, (m as u64) << 32 | k));
                assert!(
                    a + b == 0,
                    "{fit:?} with EDF admission places {:?} but P-EDF misses (periodic {a}, sporadic {b}): m = {m}, {}",
                    p.cpus,
                    describe(&ts)
                );
            }
        }
    }
    println!("partition: {total} sets; FFD placed {placed_ffd}, WFD placed {placed_wfd}, none missed");
    assert!(placed_ffd >= 5_000 && placed_wfd >= 5_000, "oracle too weak: ffd {placed_ffd}, wfd {placed_wfd}");
}

/// Every SP-RES heuristic and the cascade; each distinct placement simulated with CASH `cash`.
fn spres_oracle(cash: bool, per_m: u64, seed_base: u64) {
    let heuristics = semi::Heuristic::all();
    // rp_floor 2 ns so that RP transforms periods at this time scale.
    let cfg = semi::SemiConfig { rp_floor: 2, ..semi::SemiConfig::default() };
    let mut placed = vec![0u64; heuristics.len() + 1];
    let (mut total, mut split, mut transformed, mut simulated) = (0u64, 0u64, 0u64, 0u64);
    for m in 2..=4u32 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed_base + m as u64);
        for k in 0..per_m {
            let n = rng.random_range(m as usize + 1..=m as usize + 5);
            let u = rng.random_range(0.5..1.0) * m as f64;
            let ts = gen(&mut rng, n, u, k % 2 == 0);
            total += 1;
            let mut seen = HashSet::new();
            let mut placements: Vec<(String, semi::Placement)> =
                heuristics.iter().map(|h| (h.name(), semi::place(&ts, m, h, &cfg))).collect();
            placements.push(("cascade".into(), semi::cascade(&ts, m, &cfg)));
            for (i, (name, p)) in placements.iter().enumerate() {
                if !p.schedulable {
                    continue;
                }
                placed[i] += 1;
                let text = p.to_json().to_string();
                // Many heuristics agree; simulate each distinct set of reservations once.
                let key = serde_json::json!({"cpus": p.to_json()["cpus"], "tasks": p.to_json()["tasks"]}).to_string();
                if !seen.insert(key) {
                    continue;
                }
                simulated += 1;
                split += p.tasks.iter().any(|t| t.parts > 1) as u64;
                transformed += p.tasks.iter().any(|t| t.period_ratio > 1) as u64;
                let placement = Placement::from_json_runnable(&text, &ts)
                    .unwrap_or_else(|e| panic!("{name}: placement rejected by the simulator: {e}\n{text}"));
                {
                    let sched = Scheduler::Spres(SpresConfig {
                        placement: placement.clone(),
                        soft_unsplit: false,
                        cash,
                        background: rtsched_sim::Background::EarliestEnd,
                        suspension: rtsched_sim::Suspension::Keep,
                    });
                    let (pc, sc) = (periodic(m, &ts), sporadic(m, &ts, (m as u64) << 32 | k));
                    let a = misses(&ts, &sched, &pc);
                    let b = misses(&ts, &sched, &sc);
                    assert!(a + b == 0, "{name} places the set but SP-RES (cash {cash}) misses (periodic {a}, sporadic {b}): m = {m}, {}\n{text}\n{}",
                            describe(&ts), explain(&ts, &sched, if a > 0 { &pc } else { &sc }));
                }
            }
        }
    }
    let names: Vec<String> = heuristics.iter().map(|h| h.name()).chain(["cascade".to_string()]).collect();
    for (h, c) in names.iter().zip(&placed) {
        println!("spres (cash {cash}) {h}: {c} of {total} sets placed, none missed");
    }
    println!("spres (cash {cash}): {simulated} distinct placements simulated ({split} with a split task, {transformed} period-transformed)");
    for (h, &c) in names.iter().zip(&placed) {
        assert!(c >= 200, "oracle too weak for {h}: {c} placed");
    }
    assert!(split >= 200, "oracle too weak: only {split} placements split a task");
}

#[test]
fn spres_placements_meet_deadlines() {
    spres_oracle(false, 2_500, 0x5E5_F000);
}

/// SP-RES with CASH slack reclamation on (fewer, different sets: the placements are the same
/// code path). This oracle found two simulator bugs, both fixed in crates/sim/src/spres.rs:
/// slack with a later deadline than the served reservation's was consumed, and slack survived
/// idle time (CASH consumes the earliest residual capacity while the CPU idles); see
/// [`cash_counterexample`].
#[test]
fn spres_placements_meet_deadlines_with_cash() {
    spres_oracle(true, 1_500, 0xCA5_0000);
}

/// The second CASH counterexample, minimised to one task set and placement. m = 2, tasks
/// (C, D, T) = (11, 20, 20), (1, 1, 8), (3, 5, 12), (1, 5, 60), (2, 13, 15), (1, 20, 20),
/// (1, 8, 8); placement RP(FWFD) (rp_floor 2 ns). With seed k = 12 (sporadic, delay ≤ 3 ns,
/// execution in [C/2, C]) the old simulator let cpu 0 idle at 234-235 while 3 ns of slack
/// (deadlines 240, 245) survived; τ0's window [235, 245) then ran 9 ns on a budget of 6 and
/// τ1's job (244, deadline 245) missed.
#[test]
fn cash_counterexample() {
    let ts = TaskSet::new(
        [(11, 20, 20), (1, 1, 8), (3, 5, 12), (1, 5, 60), (2, 13, 15), (1, 20, 20), (1, 8, 8)]
            .iter()
            .map(|&(c, d, t)| Task::new(c, d, t).unwrap())
            .collect(),
    )
    .unwrap();
    let cfg = semi::SemiConfig { rp_floor: 2, ..semi::SemiConfig::default() };
    let p = semi::place(&ts, 2, &semi::Heuristic::Rp(semi::Basic::Fwfd), &cfg);
    assert!(p.schedulable);
    let placement = Placement::from_json_runnable(&p.to_json().to_string(), &ts).unwrap();
    for k in 0..3_000u64 {
        let seed = 2u64 << 32 | k;
        let mut sc = SimConfig::new(2);
        sc.horizon = Some(3 * 120 + 20);
        sc.arrivals = Arrivals::Sporadic { max_extra_delay: 3, seed };
        sc.exec = ExecTimes::UniformFraction { lo: 0.5, seed: seed.wrapping_add(1) };
        sc.check_invariants = true;
        let sched = Scheduler::Spres(SpresConfig {
            placement: placement.clone(),
            soft_unsplit: false,
            cash: true,
            background: rtsched_sim::Background::EarliestEnd,
            suspension: rtsched_sim::Suspension::Keep,
        });
        assert_eq!(misses(&ts, &sched, &sc), 0, "seed k = {k}\n{}", explain(&ts, &sched, &sc));
    }
}
