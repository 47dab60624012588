//! The RTSS'09 plugins (Brandenburg & Anderson, RTSS 2009, Table 1) on real threads, checked by
//! the priority-inversion monitor (`rtsched_trace::monitor`): on a set that passes the G-EDF
//! density test of Goossens, Funk & Baruah (U ≤ m − (m − 1)·u_max) with a wide margin, the
//! event-driven plugins — the fine-grained and hierarchical ones drop the processor-mapping
//! lock around queue operations (§3) — show no violation of the G-EDF invariant longer than the
//! run's own tracking delay: no missed preemption. The quantum-driven plugins deviate by design
//! (a job waits up to Q): their runs are checked for consistency and their inversion printed.
//! Short runs (SCHED_FIFO 10 where permitted); no timing assertion beyond the monitor's
//! own bound, which is taken from the same run's trace.

mod common;

use rtsched_model::TaskSet;
use rtsched_runtime::mechanism::registry::DedicatedCpu;
use rtsched_runtime::platform::allowed_cpus;
use rtsched_runtime::{Mechanism, RunConfig};
use rtsched_trace::monitor::{priority_inversion_report, tracking_bound_ns};

const MS: u64 = 1_000_000;

/// (C, T) pairs, implicit deadlines: U = 0.525, u_max = 0.2.
const SET: [(u64, u64); 4] = [(MS, 10 * MS), (MS, 8 * MS), (2 * MS, 20 * MS), (MS, 5 * MS)];

/// Whether `set` passes U ≤ m − (m − 1)·u_max with `margin` to spare (all exact: scaled by
/// the product of the periods).
fn passes_density_test(set: &[(u64, u64)], m: u128, margin_permille: u128) -> bool {
    let l: u128 = set.iter().map(|&(_, t)| t as u128).product();
    let u: u128 = set.iter().map(|&(c, t)| c as u128 * (l / t as u128)).sum();
    let umax = set.iter().map(|&(c, t)| c as u128 * (l / t as u128)).max().unwrap_or(0);
    // 1000·U + margin·L ≤ 1000·(m·L − (m − 1)·u_max)
    1000 * u + margin_permille * l <= 1000 * (m * l - (m - 1) * umax)
}

/// Runs take turns, as in every other real-thread test file: the two tests below run in
/// parallel threads of the test harness, and two runs pinned to the same CPUs at the same
/// SCHED_FIFO priority would take each other's CPU time — a worker kept off its CPU by the
/// other run's threads answers a reschedule request late, which the monitor then reports as a
/// missed preemption of the plugin under test.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static RUNS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    RUNS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `name` for 400 ms (one run at a time: [`serial`]) and returns (tracking bound,
/// intervals beyond it, largest interval).
fn inversion(name: &str) -> Option<(u64, u64, u64)> {
    let _serial = serial();
    let cpus = allowed_cpus();
    let mech = Mechanism::named(name).unwrap();
    let dedicated = mech.entry().dedicated == DedicatedCpu::Required;
    if cpus.len() < 2 {
        eprintln!("{name}: needs two CPUs, this machine has one");
        return None;
    }
    let workers = if dedicated { vec![cpus[0]] } else { cpus[..2].to_vec() };
    let m = workers.len() as u128;
    assert!(passes_density_test(&SET, m, 400), "{name}: the set must pass the G-EDF test with margin");
    let mut cfg = RunConfig::new(workers, 400 * MS);
    if dedicated {
        cfg.dedicated_cpu = Some(cpus[1]);
    }
    let ts = TaskSet::from_ct(&SET).unwrap();
    // At SCHED_FIFO where permitted: at normal priority a loaded host deschedules the run.
    let r = common::run_rt_if_permitted(&ts, &mech, &mut cfg);
    assert_eq!(r.accounting.error, None, "{name}");
    r.check_trace().unwrap_or_else(|e| panic!("{name}: {e}"));
    let inv = mech.invariant(&ts, r.m).unwrap().expect("a global invariant");
    let tracking: Vec<&str> = mech.entry().all_terms().iter().filter(|t| t.tracking).map(|t| t.name).collect();
    let rep = priority_inversion_report(&r.trace, &inv, tracking_bound_ns(&r.trace, &tracking)).unwrap();
    eprintln!(
        "{name}: {} jobs, inversion {} ns in {} intervals (largest {} ns), tracking bound {} ns, beyond it: {} intervals",
        r.metrics.jobs,
        rep.total_ns,
        rep.intervals,
        rep.max_interval_ns,
        rep.tracking_bound_ns,
        rep.beyond_tracking_intervals
    );
    Some((rep.tracking_bound_ns, rep.beyond_tracking_intervals, rep.max_interval_ns))
}

#[test]
fn event_driven_plugins_miss_no_preemption() {
    for name in ["cem", "fem", "hem", "ce1", "fe1"] {
        if let Some((_, beyond, _)) = inversion(name) {
            assert_eq!(beyond, 0, "{name}: a violation of the G-EDF invariant outlasted the tracking delay");
        }
    }
}

/// The quantum-driven plugins: the run is consistent (accounting, trace) and the deviation
/// the monitor measures is printed — a job waits for the next tick (up to Q = 1 ms) and a
/// CPU whose job completed idles until its tick, so violations of the event-driven invariant
/// longer than the tracking delay are expected here, not asserted either way.
#[test]
fn quantum_driven_plugins_report_their_deviation() {
    for name in ["cqm", "cq1", "s-cqm"] {
        let _ = inversion(name);
    }
}

#[test]
fn the_margin_check_can_fail() {
    assert!(passes_density_test(&SET, 2, 400));
    // Three tasks of u = 0.9 on two CPUs fail the density test.
    assert!(!passes_density_test(&[(9, 10), (9, 10), (9, 10)], 2, 0));
}
