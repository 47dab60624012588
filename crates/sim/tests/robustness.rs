//! Every registered scheduler on small arbitrary inputs, with the simulator's invariant checks
//! on: a build or a simulation must succeed or refuse the input (`BuildError`, `SimError::Input`),
//! never fail an invariant (`SimError::Internal`) or panic, and every job must be accounted for
//! (released = completed + pending). The schedulers come from the registry, so one added later
//! is covered without a change here. (The `simulator` fuzz target does the same under libFuzzer;
//! this runs in every `cargo test`.)
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use rtsched_model::task::{Segments, SuspensionBound};
use rtsched_model::{Stop, Task, TaskSet, Time, Workload};
use rtsched_sim::registry::{self, ParamArg};
use rtsched_sim::{simulate_workload, Arrivals, ExecTimes, SimConfig, SimError, Simulated};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// One task: small parameters, now and then a C > D or a huge period, and maybe two execution
/// segments with a suspension between them.
fn task() -> impl Strategy<Value = Task> {
    (1u64..=12, 1u64..=40, 1u64..=40, 0u8..8, 1u64..=8).prop_map(|(c, d, t, shape, s)| {
        let period = if shape == 7 { 1 << 40 } else { t };
        // Implicit deadlines half the time (RUN and PD² take only those).
        let d = if shape % 2 == 0 { period } else { d };
        let segments = (shape >= 4 && c >= 2).then(|| {
            let first = c / 2;
            Box::new(Segments::new(vec![first, c - first], vec![SuspensionBound { min: s / 2, max: s }]).unwrap())
        });
        Task { name: None, wcet: c, deadline: d, period, segments }
    })
}

#[derive(Debug, Clone)]
struct Case {
    tasks: Vec<Task>,
    m: u32,
    horizon: Option<Time>,
    sporadic: Option<Time>,
    exec_lo: Option<f64>,
    draw_suspensions: bool,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(task(), 1..=5),
        1u32..=4,
        prop::option::of(1u64..=600),
        prop::option::of(0u64..=20),
        prop::option::of(0.1f64..=1.0),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(tasks, m, horizon, sporadic, exec_lo, draw_suspensions, seed)| Case {
            tasks,
            m,
            horizon,
            sporadic,
            exec_lo,
            draw_suspensions,
            seed,
        })
}

fn config(c: &Case) -> SimConfig {
    let mut cfg = SimConfig::new(c.m);
    cfg.check_invariants = true;
    cfg.record_trace = true;
    cfg.max_jobs = 5_000;
    cfg.horizon_cap = 2_000;
    cfg.horizon = c.horizon;
    if let Some(d) = c.sporadic {
        cfg.arrivals = Arrivals::Sporadic { max_extra_delay: d, seed: c.seed };
    }
    if let Some(lo) = c.exec_lo {
        cfg.exec = ExecTimes::UniformFraction { lo, seed: c.seed };
    }
    if c.draw_suspensions {
        cfg.suspensions = rtsched_sim::SuspensionTimes::Uniform { seed: c.seed };
    }
    cfg
}

/// Cases per run (deterministic: proptest's fixed-seed runner), and the fewest simulations
/// each scheduler must have completed among them (so that a scheduler refusing everything
/// cannot pass unexercised).
const CASES: usize = 3000;
const MIN_SIMULATED: usize = 50;

#[test]
fn every_scheduler_refuses_or_simulates_consistently() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut simulated = vec![0usize; registry::entries().len()];
    for _ in 0..CASES {
        let c = case().new_tree(&mut runner).expect("a case").current();
        let Ok(ts) = TaskSet::new(c.tasks.clone()) else { continue };
        let w = Workload::from(ts);
        let cfg = config(&c);
        for (k, e) in registry::entries().iter().enumerate() {
            // Every scheduler is asked, also one that takes no sequential sets (it must refuse).
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                // Quanta of 1-2 ns, so that the small integer parameters are whole quanta.
                let q: Vec<(&str, ParamArg)> =
                    e.param("quantum").map(|_| ("quantum", ParamArg::Int(1 + c.seed % 2))).into_iter().collect();
                let built = registry::build(e.name, q, &w, c.m, None, &Stop::never());
                let Ok(built) = built else { return Ok(None) };
                simulate_workload(&w, &built.scheduler, &cfg).map(Some)
            }));
            match outcome {
                Err(_) => panic!("{}: panicked on {c:?}", e.name),
                Ok(Err(SimError::Internal(why))) => panic!("{}: internal error {why} on {c:?}", e.name),
                Ok(Err(SimError::Input(_))) | Ok(Ok(None)) => {}
                Ok(Ok(Some(Simulated::Jobs(r)))) => {
                    assert_eq!(r.jobs, r.completed + r.pending, "{}: jobs not accounted for on {c:?}", e.name);
                    simulated[k] += 1;
                }
                Ok(Ok(Some(Simulated::Dag(_)))) => panic!("{}: a DAG result from a sequential set", e.name),
                Ok(Ok(Some(Simulated::ForkJoin(r)))) => {
                    assert_eq!(r.jobs, r.completed + r.pending, "{}: jobs not accounted for on {c:?}", e.name);
                    simulated[k] += 1;
                }
            }
        }
    }
    for (k, e) in registry::entries().iter().enumerate().filter(|(_, e)| e.workloads.sporadic) {
        println!("{:<14} simulated {:>5} of {CASES}", e.name, simulated[k]);
        assert!(simulated[k] >= MIN_SIMULATED, "{} simulated only {} of {CASES} cases", e.name, simulated[k]);
    }
}
