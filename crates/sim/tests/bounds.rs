//! Work and memory bounds of the simulator and its early end (issue 14): quantum ticks beyond
//! `max_events` are refused before the run; a run that reaches `max_events`, or is stopped
//! (Ctrl-C), ends at the instant it reached, as if that were the horizon — exactly the result
//! of a simulation whose horizon is that instant (the oracle below); a kept trace is bounded.

use rtsched_analysis::semi;
use rtsched_model::forkjoin::read_json;
use rtsched_model::Placement;
use rtsched_model::{Stop, TaskSet};
use rtsched_sim::{
    simulate, simulate_forkjoin_gedf, simulate_rtws, Scheduler, SimConfig, SimError, SimResult, SpresConfig,
};

fn set() -> TaskSet {
    TaskSet::from_cdt(&[(3, 7, 10), (4, 12, 12), (5, 15, 15), (2, 6, 9), (7, 20, 25), (6, 18, 30)]).unwrap()
}

fn cfg(m: u32, horizon: u64) -> SimConfig {
    let mut c = SimConfig::new(m);
    c.horizon = Some(horizon);
    c.check_invariants = true;
    c
}

/// The metrics two runs must share (everything but the horizon message and the event count).
fn key(r: &SimResult) -> impl PartialEq + std::fmt::Debug {
    (
        r.horizon,
        r.jobs,
        r.completed,
        r.pending,
        r.deadline_misses,
        r.max_tardiness_ns,
        r.max_response_time_ns,
        r.preemptions,
        r.migrations,
        r.context_switches,
        r.per_task.clone(),
    )
}

fn schedulers(ts: &TaskSet) -> Vec<Scheduler> {
    let placement = semi::cascade(ts, 2, &semi::SemiConfig::default());
    assert!(placement.schedulable);
    let sp = Placement::from_json_runnable(&placement.to_json().to_string(), ts).unwrap();
    vec![
        Scheduler::Gedf,
        Scheduler::GedfQuantum { quantum: 3, staggered: false },
        Scheduler::GedfQuantum { quantum: 4, staggered: true },
        Scheduler::Pedf(vec![vec![0, 2, 4], vec![1, 3, 5]]),
        Scheduler::Spres(SpresConfig {
            placement: sp,
            soft_unsplit: false,
            cash: true,
            background: rtsched_sim::Background::EarliestEnd,
            suspension: rtsched_sim::Suspension::Keep,
        }),
        Scheduler::Rtws,
    ]
}

#[test]
fn ending_at_the_event_bound_equals_a_shorter_horizon() {
    let ts = set();
    for sched in schedulers(&ts) {
        let mut tried = 0;
        for max_events in [5u64, 17, 40, 101] {
            // Quantum ticks are bounded before the run: a horizon whose ticks fit the bound.
            let horizon = match sched {
                Scheduler::GedfQuantum { quantum, staggered } => {
                    quantum * max_events / if staggered { 2 } else { 1 } - quantum
                }
                _ => 2_000,
            };
            let mut c = cfg(2, horizon);
            c.max_events = max_events;
            let early = simulate(&ts, &sched, &c).unwrap();
            assert!(early.horizon < horizon, "{sched:?}: {max_events} events cannot reach {horizon} ns");
            let msg = early.horizon_message.clone().unwrap_or_default();
            assert!(early.horizon_capped && msg.contains("max_events"), "{sched:?}: {msg}");
            let plain = simulate(&ts, &sched, &cfg(2, early.horizon.max(1))).unwrap();
            if early.horizon > 0 {
                assert_eq!(key(&early), key(&plain), "{sched:?} ended at {} ns", early.horizon);
                tried += 1;
            }
        }
        assert!(tried >= 3, "{sched:?}");
    }
}

#[test]
fn the_overhead_engine_ends_early_too() {
    let ts = set();
    let mut c = cfg(2, 5_000);
    c.overheads = Some(rtsched_sim::Overheads { release_ns: 1, schedule_ns: 1, ..rtsched_sim::Overheads::ZERO });
    c.max_events = 60;
    let early = simulate(&ts, &Scheduler::Gedf, &c).unwrap();
    assert!(early.horizon < 5_000 && early.horizon_message.unwrap().contains("max_events"));
}

#[test]
fn a_stop_ends_every_loop_at_once() {
    let ts = set();
    let stop = Stop::new();
    stop.request();
    for sched in schedulers(&ts) {
        let mut c = cfg(2, 1_000_000);
        c.stop = stop.clone();
        let r = simulate(&ts, &sched, &c).unwrap();
        assert!(r.horizon <= 10, "{sched:?} ended at {} ns", r.horizon); // its first instants
        assert!(r.horizon_message.unwrap().contains("interrupted"));
    }
    let fj =
        read_json(r#"{"tasks": [{"period": 10, "regions": [[2], [3, 3], [1]]}, {"period": 7, "regions": [[2, 2]]}]}"#)
            .unwrap();
    let mut c = cfg(2, 1_000_000);
    c.stop = stop;
    let r = simulate_rtws(&fj.set, &c).unwrap();
    assert_eq!(r.horizon, 0);
    assert!(r.horizon_message.unwrap().contains("interrupted"));
    let r = simulate_forkjoin_gedf(&fj.set, &c).unwrap();
    assert_eq!(r.horizon, 0);
}

#[test]
fn a_tiny_quantum_over_a_long_horizon_is_refused() {
    // Periods of one second: 2,000 jobs in 1000 s, but 10^12 ticks of a 1 ns quantum.
    let ts = TaskSet::from_ct(&[(1_000_000, 1_000_000_000), (2_000_000, 1_000_000_000)]).unwrap();
    let mut c = SimConfig::new(2);
    c.horizon = Some(1_000_000_000_000); // 1000 s
    let e = simulate(&ts, &Scheduler::GedfQuantum { quantum: 1, staggered: false }, &c).unwrap_err();
    let SimError::Input(e) = e else { panic!("an input error, got {e:?}") };
    let msg = e.to_string();
    assert!(msg.contains("quantum") && msg.contains("max_events") && msg.contains("1000s"), "{msg}");
}

#[test]
fn a_kept_trace_is_bounded() {
    let ts = set();
    let mut c = cfg(2, 10_000_000);
    c.record_trace = true;
    c.max_trace_records = 100_000;
    let e = simulate(&ts, &Scheduler::Gedf, &c).unwrap_err();
    assert!(e.to_string().contains("max_trace_records"), "{e}");
    // Within the upfront estimate (3 records per job) but past the bound during the run (idle
    // records, preemptions): ends there.
    let jobs = simulate(&ts, &Scheduler::Gedf, &cfg(2, 3_000)).unwrap().jobs;
    let mut c = cfg(2, 3_000);
    c.record_trace = true;
    c.max_trace_records = 3 * jobs + 3;
    let r = simulate(&ts, &Scheduler::Gedf, &c).unwrap();
    assert!(r.horizon < 3_000 && r.horizon_message.unwrap().contains("max_trace_records"));
    let records = r.trace.unwrap().records.len() as u64;
    assert!((3 * jobs + 3..3 * jobs + 40).contains(&records), "{records}");
}
