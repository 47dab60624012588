//! Cross-engine oracle for overhead-aware analysis (docs/overheads.md, "Oracles"): every task
//! set that an inflation rule (`rtsched_analysis::overheads`) accepts as hard real-time must
//! meet every deadline in the simulator run with the same overheads injected — synchronous
//! periodic over one hyperperiod plus the largest deadline, and seeded sporadic arrivals with
//! execution times below the WCET over three hyperperiods. Zero overheads must give exactly the
//! overhead-free verdicts.
//!
//! The simulator injects Δrel, Δev, Δsch, Δcxs, Δipi and the tick (docs/simulator.md). Where a
//! mechanism has no simulator counterpart the closest available check is used, and said so:
//! * dedicated interrupt processor (GSN-EDF-DI, CE1, FE1, CQ1, S-CQ1): the simulator has no
//!   dedicated CPU; we simulate the `m − 1` scheduling CPUs with the release handler turned
//!   into latency (Δev + Δrel, handler cost 0), which is what a dedicated CPU does to them;
//! * G-EDF-MP: as dedicated, and the DSP round trip is charged as extra CPU time per dispatch
//!   on the client (`⌊(Δsch + Δcxs + Δreq + Δdsp + Δipi) / 2⌋` added to Δsch, so a job's two
//!   dispatches cost at most what the rule charges);
//! * push/pull and Linux SCHED_DEADLINE: the G-EDF policy with Δpush added to Δrel and Δpull to
//!   Δsch (the simulator has no per-CPU run queues);
//! * SP-RES: the simulator cannot inject overheads into reservations. Closest check: the
//!   placement the rule accepted passes the independent placement checker, and the inflated
//!   set runs on it (overhead-free) without a miss.
//!
//! Task sets use small integer periods (LCM 240) and overheads of a few ns, so hyperperiods are
//! short. Each test asserts a minimum number of accepted sets with non-zero overheads so that
//! it can fail; `--nocapture` prints the counts.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::global::{self, srt, GlobalTest};
use rtsched_analysis::overheads::{self as oh, Inflation, Mechanism, Mode, Params, Rule, MECHANISMS};
use rtsched_analysis::partition::{partition, Admission, Fit, Order, PartitionOutcome};
use rtsched_analysis::semi::{self, SemiConfig};
use rtsched_analysis::{Limits, Verdict};
use rtsched_model::Placement;
use rtsched_model::{Task, TaskSet, Time};
use rtsched_sim::{simulate, Arrivals, ExecTimes, FpOrder, Overheads, Scheduler, SimConfig, SpresConfig};

const PERIODS: [Time; 8] = [24, 30, 40, 48, 60, 80, 120, 240];
/// The quantum of the quantum-driven rules and of the tick utilization (divides most periods).
const Q: Time = 6;

fn gen(rng: &mut ChaCha8Rng, n: usize, u: f64, constrained: bool) -> TaskSet {
    gen_scaled(rng, n, u, constrained, 1)
}

/// As [`gen`] with every period multiplied by `scale`.
fn gen_scaled(rng: &mut ChaCha8Rng, n: usize, u: f64, constrained: bool, scale: Time) -> TaskSet {
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
            let t = PERIODS[rng.random_range(0..PERIODS.len())] * scale;
            let c = ((ui * t as f64).round() as Time).clamp(1, t);
            let d = if constrained && rng.random_bool(0.5) { rng.random_range(c..=t) } else { t };
            Task::new(c, d, t).unwrap()
        })
        .collect();
    TaskSet::new(tasks).unwrap()
}

/// Random small overheads for `rule`: no tick for the event-driven rules (the simulator's
/// event-driven G-EDF has no tick), the G-EDF-MP and push/pull terms only where charged.
fn gen_overheads(rng: &mut ChaCha8Rng, rule: Rule) -> Overheads {
    let mut v = Overheads {
        release_ns: rng.random_range(0..=2),
        release_event_ns: rng.random_range(0..=2),
        schedule_ns: rng.random_range(0..=1),
        context_switch_ns: rng.random_range(0..=1),
        ipi_ns: rng.random_range(0..=2),
        ..Overheads::ZERO
    };
    match rule {
        Rule::Quantum { .. } => {
            v.tick_ns = rng.random_range(0..=1);
            v.ipi_ns = 0;
        }
        Rule::EventGlobal { push_pull: true } => {
            v.push_ns = rng.random_range(0..=1);
            v.pull_ns = rng.random_range(0..=1);
        }
        Rule::MessagePassing => {
            v.request_ns = rng.random_range(0..=2);
            v.dsp_ns = rng.random_range(0..=2);
        }
        Rule::Partitioned(_) | Rule::SemiPartitioned => v.ipi_ns = 0,
        _ => {}
    }
    if v.is_zero() {
        v.schedule_ns = 1;
    }
    v
}

/// The simulator run that stands for `mech` on `m` CPUs with values `v`: scheduler, CPUs,
/// injected overheads (module doc for the emulations).
fn emulation(mech: &Mechanism, m: u32, v: &Overheads) -> (Scheduler, u32, Overheads) {
    let base = Overheads {
        release_ns: v.release_ns,
        release_event_ns: v.release_event_ns,
        schedule_ns: v.schedule_ns,
        context_switch_ns: v.context_switch_ns,
        ipi_ns: v.ipi_ns,
        ..Overheads::ZERO
    };
    let dedicated = Overheads { release_ns: 0, release_event_ns: v.release_event_ns + v.release_ns, ..base };
    match mech.rule {
        Rule::EventGlobal { push_pull } => {
            let mut o = base;
            if push_pull {
                o.release_ns += v.push_ns;
                o.schedule_ns += v.pull_ns;
            }
            (Scheduler::Gedf, m, o)
        }
        Rule::EventDedicated => (Scheduler::Gedf, m - 1, dedicated),
        Rule::MessagePassing => {
            let trip = (v.schedule_ns + v.context_switch_ns + v.request_ns + v.dsp_ns + v.ipi_ns) / 2;
            (Scheduler::Gedf, m - 1, Overheads { schedule_ns: v.schedule_ns + trip, ..dedicated })
        }
        Rule::Quantum { staggered, dedicated: d } => {
            let o = if d { dedicated } else { base };
            (
                Scheduler::GedfQuantum { quantum: Q, staggered },
                mech.capacity(m),
                Overheads { tick_ns: v.tick_ns, ipi_ns: 0, ..o },
            )
        }
        Rule::Partitioned(_) | Rule::SemiPartitioned => unreachable!("placed, not emulated"),
        // RUN and QPS: inflated server budgets judged by U ≤ m (their own oracles are the
        // analysis crate's hand computations and the runtime's runs with inflated budgets).
        Rule::Run | Rule::Qps => unreachable!("server budgets, not emulated"),
    }
}

fn max_deadline(ts: &TaskSet) -> Time {
    ts.iter().map(|t| t.deadline).max().unwrap_or(0)
}

fn configs(m: u32, ts: &TaskSet, ovh: Option<Overheads>, seed: u64) -> [SimConfig; 2] {
    // Inflated sets (SP-RES) have shrunk periods without a short hyperperiod: a fixed horizon.
    let h = ts.hyperperiod(1 << 20).unwrap_or(20 * 240);
    let mut a = SimConfig::new(m);
    a.horizon = Some(h + max_deadline(ts));
    a.check_invariants = true;
    a.overheads = ovh;
    let mut b = a.clone();
    b.horizon = Some(3 * h + max_deadline(ts));
    b.arrivals = Arrivals::Sporadic { max_extra_delay: 3, seed };
    b.exec = ExecTimes::UniformFraction { lo: 0.5, seed: seed ^ 0x5EED };
    [a, b]
}

fn describe(ts: &TaskSet) -> String {
    let v: Vec<String> = ts.iter().map(|t| format!("({}, {}, {})", t.wcet, t.deadline, t.period)).collect();
    v.join(", ")
}

fn check_no_miss(what: &str, ts: &TaskSet, sched: &Scheduler, m: u32, ovh: Option<Overheads>, seed: u64) {
    for cfg in configs(m, ts, ovh, seed) {
        let r = simulate(ts, sched, &cfg).unwrap_or_else(|e| panic!("{what}: simulation failed: {e}"));
        assert_eq!(
            r.deadline_misses,
            0,
            "{what} accepts but the simulation misses ({:?} arrivals): m = {m}, tasks (C, D, T) = {}, overheads {ovh:?}",
            cfg.arrivals,
            describe(ts)
        );
    }
}

fn params() -> Params {
    Params { cpd: 0, quantum: Q }
}

/// Sets accepted (hard, maximum statistic = the given values) under every global rule never
/// miss in the matching simulation.
#[test]
fn accepted_sets_meet_deadlines_with_overheads_injected_global_rules() {
    let lim = Limits::default();
    for (idx, mech) in MECHANISMS.iter().enumerate() {
        if matches!(mech.rule, Rule::Partitioned(_) | Rule::SemiPartitioned | Rule::Run | Rule::Qps) {
            continue;
        }
        let (mut total, mut accepted) = (0u64, 0u64);
        let mut rng = ChaCha8Rng::seed_from_u64(0x0E7_0000 + idx as u64);
        for k in 0..2_500u64 {
            let m = rng.random_range(2..=3u32);
            let cap = mech.capacity(m);
            let n = rng.random_range(cap as usize + 1..=cap as usize + 4);
            let u = rng.random_range(0.1..0.6) * cap as f64;
            let ts = gen(&mut rng, n, u, k % 3 == 0);
            let v = gen_overheads(&mut rng, mech.rule);
            total += 1;
            let j = oh::hard(&ts, m, mech, &v, &params(), &GlobalTest::COMBINED_ORDER, &lim).unwrap();
            if j.verdict != Verdict::Schedulable {
                continue;
            }
            accepted += 1;
            let (sched, sm, ov) = emulation(mech, m, &v);
            check_no_miss(mech.name, &ts, &sched, sm, Some(ov), k);
        }
        println!("{}: {accepted} of {total} sets accepted with overheads, none missed", mech.name);
        assert!(accepted >= 150, "oracle too weak for {}: {accepted} accepted", mech.name);
    }
}

/// P-EDF and P-FP: the partition the rule accepted, simulated with the overheads injected.
#[test]
fn accepted_partitions_meet_deadlines_with_overheads_injected() {
    let lim = Limits::default();
    for (name, order) in [("pedf", None), ("pfp", Some(FpOrder::DeadlineMonotonic))] {
        let mech = oh::mechanism(name).unwrap();
        let (mut total, mut accepted) = (0u64, 0u64);
        let mut rng = ChaCha8Rng::seed_from_u64(0x9A2_7000 + name.len() as u64);
        for k in 0..2_500u64 {
            let m = rng.random_range(2..=3u32);
            let n = rng.random_range(m as usize..=m as usize + 4);
            let u = rng.random_range(0.2..0.8) * m as f64;
            let ts = gen(&mut rng, n, u, k % 3 == 0);
            let v = gen_overheads(&mut rng, mech.rule);
            total += 1;
            let (j, part) = oh::place_partitioned(&ts, m, mech, &v, &params(), Mode::Hard, &lim).unwrap();
            if j.verdict != Verdict::Schedulable {
                continue;
            }
            accepted += 1;
            let part = part.expect("a schedulable verdict comes with its partition");
            let sched = match order {
                None => Scheduler::Pedf(part),
                Some(o) => Scheduler::Pfp(part, o),
            };
            let ov = Overheads {
                release_ns: v.release_ns,
                release_event_ns: v.release_event_ns,
                schedule_ns: v.schedule_ns,
                context_switch_ns: v.context_switch_ns,
                ..Overheads::ZERO
            };
            check_no_miss(name, &ts, &sched, m, Some(ov), k);
        }
        println!("{name}: {accepted} of {total} partitions accepted with overheads, none missed");
        assert!(accepted >= 500, "oracle too weak for {name}: {accepted} accepted");
    }
}

/// SP-RES (closest check, module doc): the accepted placement of the inflated set passes the
/// independent checker and runs without a miss.
#[test]
fn spres_accepted_placements_are_valid_for_the_inflated_set() {
    let cfg = SemiConfig::default();
    let (mut total, mut accepted, mut split) = (0u64, 0u64, 0u64);
    let mut rng = ChaCha8Rng::seed_from_u64(0x5B4E_5000);
    for k in 0..1_500u64 {
        let m = rng.random_range(2..=3u32);
        let n = rng.random_range(m as usize + 1..=m as usize + 3);
        let u = rng.random_range(0.5..0.95) * m as f64;
        // Periods × 20: overheads of a few ns leave room for C=D splits.
        let ts = gen_scaled(&mut rng, n, u, false, 20);
        let mut v = gen_overheads(&mut rng, Rule::SemiPartitioned);
        v.migration_timer_ns = rng.random_range(0..=1);
        v.subtask_activation_ns = rng.random_range(0..=1);
        v.budget_enforcement_ns = rng.random_range(0..=1);
        total += 1;
        let (j, placed) = oh::place_spres(&ts, m, &v, &params(), &cfg).unwrap();
        if j.verdict != Verdict::Schedulable {
            continue;
        }
        accepted += 1;
        let (inflated, placement) = placed.expect("a schedulable verdict comes with its placement");
        split += placement.tasks.iter().any(|t| t.parts > 1) as u64;
        semi::check(&inflated, &placement).unwrap_or_else(|e| panic!("checker rejects: {e}: {}", describe(&ts)));
        let sp = Placement::from_json_runnable(&placement.to_json().to_string(), &inflated).unwrap();
        let sched = Scheduler::Spres(SpresConfig {
            placement: sp,
            soft_unsplit: false,
            cash: false,
            background: rtsched_sim::Background::EarliestEnd,
            suspension: rtsched_sim::Suspension::Keep,
        });
        check_no_miss("spres", &inflated, &sched, m, None, k);
        // Inflation only adds: every inflated cost is at least the original one.
        assert!(inflated.iter().zip(ts.iter()).all(|(a, b)| a.wcet >= b.wcet && a.period <= b.period));
    }
    println!(
        "spres: {accepted} of {total} sets accepted with overheads ({split} split), placements valid, none missed"
    );
    assert!(accepted >= 300 && split >= 20, "oracle too weak: {accepted} accepted, {split} split");
}

/// The ideal quantum-driven transformation (Brandenburg & Anderson, RTSS 2009, §2): costs
/// rounded up to quanta, periods and deadlines one quantum shorter (plus the staggering
/// offset for staggered quanta; soft: unchanged periods).
fn ideal_quantum(ts: &TaskSet, q: Time, shrink: Time, soft: bool) -> Option<TaskSet> {
    let mut out = Vec::new();
    for t in ts.iter() {
        let c = t.wcet.div_ceil(q) * q;
        let s = if soft { 0 } else { shrink };
        if s >= t.deadline || s >= t.period {
            return None;
        }
        let (d, p) = (t.deadline - s, t.period - s);
        if c > if soft { p } else { d } {
            return None;
        }
        out.push(Task::new(c, d, p).unwrap());
    }
    TaskSet::new(out).ok()
}

/// Zero overheads give exactly the overhead-free verdicts: the combined G-EDF test on the
/// capacity, bounded tardiness, pedf_ffd / pfp_ffd, the SP-RES cascade, and for the
/// quantum-driven rules the ideal quantum transformation.
#[test]
fn zero_overheads_give_the_overhead_free_verdicts() {
    let lim = Limits::default();
    let z = Overheads::ZERO;
    let mut rng = ChaCha8Rng::seed_from_u64(0x2E60);
    let mut differ_from_m = 0u64;
    for k in 0..1_500u64 {
        let m = rng.random_range(2..=4u32);
        let n = rng.random_range(m as usize..=m as usize + 4);
        let u = rng.random_range(0.2..1.0) * m as f64;
        let ts = gen(&mut rng, n, u, k % 2 == 0);
        for mech in MECHANISMS {
            let cap = mech.capacity(m);
            let h = oh::hard(&ts, m, mech, &z, &params(), &GlobalTest::COMBINED_ORDER, &lim).unwrap().verdict;
            let s = oh::soft(&ts, m, mech, &z, &params(), &lim).unwrap().verdict;
            let (eh, es) = match mech.rule {
                Rule::Partitioned(adm) => {
                    let placed = |set: &TaskSet, a| {
                        Verdict::from_bool(matches!(
                            partition(set, m, Fit::First, Order::DecreasingUtilization, a, &lim),
                            PartitionOutcome::Placed(_)
                        ))
                    };
                    let implicit =
                        TaskSet::new(ts.iter().map(|t| Task { deadline: t.period, ..t.clone() }).collect()).unwrap();
                    (placed(&ts, adm), placed(&implicit, Admission::Edf))
                }
                Rule::SemiPartitioned => {
                    let v = Verdict::from_bool(semi::cascade(&ts, m, &SemiConfig::default()).schedulable);
                    (v, v)
                }
                // Optimal for implicit deadlines: U ≤ m; other deadlines are refused.
                Rule::Run | Rule::Qps => {
                    let implicit = ts.iter().all(|t| t.deadline == t.period);
                    let v = Verdict::from_bool(implicit && ts.utilization_at_most(m as u64));
                    (v, v)
                }
                Rule::Quantum { staggered, .. } => {
                    let stagger = if staggered && cap > 1 { (Q * (cap as Time - 1)).div_ceil(cap as Time) } else { 0 };
                    let hh = ideal_quantum(&ts, Q, Q + stagger, false)
                        .map_or(Verdict::NotSchedulable, |t| global::combined(&t, cap, &lim));
                    let ss = ideal_quantum(&ts, Q, 0, true)
                        .map_or(Verdict::NotSchedulable, |t| Verdict::from_bool(srt::bounded_tardiness(&t, cap)));
                    (hh, ss)
                }
                _ => (global::combined(&ts, cap, &lim), Verdict::from_bool(srt::bounded_tardiness(&ts, cap))),
            };
            assert_eq!(h, eh, "hard, {} m = {m}: {}", mech.name, describe(&ts));
            assert_eq!(s, es, "soft, {} m = {m}: {}", mech.name, describe(&ts));
            differ_from_m += (cap != m && h != global::combined(&ts, m, &lim)) as u64;
        }
        // The inflation itself is the identity for the event-driven rules.
        let i = oh::inflate(&ts, m, oh::mechanism("gsn-edf").unwrap(), &z, &params(), Mode::Hard).unwrap();
        assert!(matches!(&i, Inflation::Done(x) if x.tasks == ts), "{i:?}");
    }
    // The check distinguishes m from m − 1 (it could not pass by ignoring the capacity).
    assert!(differ_from_m > 100, "{differ_from_m}");
}
