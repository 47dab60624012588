//! The engine of the global and partitioned schedulers: G-EDF (event-driven, link-based,
//! Brandenburg & Anderson, RTSS 2009, §3; quantum-driven with aligned or staggered quanta,
//! ibid. §2), G-FP and G-FL (the event-driven G-EDF policy over fixed-priority keys and over
//! G-FL's priority points), P-EDF and P-FP over a given partition, each with or without
//! overhead injection.
//!
//! `state.rs` holds the engine's state and the steps its two loops share; `ideal.rs` is the loop
//! without overheads, `overhead.rs` the loop with them (docs/simulator.md, "Overhead
//! injection"). [`run`] validates the request, builds the engine for the policy and runs the
//! loop; `crate::simulate` dispatches here.

mod ideal;
mod overhead;
mod state;

use crate::config::{Scheduler, SimConfig};
use crate::error::SimError;
use crate::recorder::{DirtyCpus, Recorder, NONE};
use crate::result::SimResult;
use crate::setup::{setup, Draw, EarlyEnd, Setup};
use rtsched_model::{ModelError, TaskSet, Time, MAX_TIME};
use rtsched_policy::{Gedf, GedfQuantum, Partitioned, PriorityPoints, PriorityRule};
use state::{Check, Engine, Keys, Ovh, TaskState};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A scheduler this engine does not run (SP-RES and RTWS have their own loops): a bug of the
/// caller, not of the input.
fn not_engine(sched: &Scheduler) -> SimError {
    SimError::internal(format!("the engine was asked to run {}", sched.name()))
}

fn validate_partition(ts: &TaskSet, m: u32, part: &[Vec<usize>]) -> Result<Vec<u32>, ModelError> {
    if part.len() != m as usize {
        return Err(ModelError::field("partition", format!("lists {} CPUs but m = {m}", part.len())));
    }
    let mut cpu_of = vec![NONE; ts.len()];
    for (c, tasks) in part.iter().enumerate() {
        for &i in tasks {
            if i >= ts.len() {
                return Err(ModelError::field(
                    "partition",
                    format!("cpu {c} names task {i} but there are only {} tasks", ts.len()),
                ));
            }
            if cpu_of[i] != NONE {
                return Err(ModelError::task_field(
                    i,
                    "partition",
                    format!("assigned twice (cpus {} and {c})", cpu_of[i]),
                ));
            }
            cpu_of[i] = c as u32;
        }
    }
    if let Some(i) = cpu_of.iter().position(|&c| c == NONE) {
        return Err(ModelError::task_field(i, "partition", "not assigned to any CPU"));
    }
    Ok(cpu_of)
}

/// A G-FP scheduler given a rank count other than the tasks': the same one line the registry's
/// `priorities` parameter gives (`gfp: parameter priorities: 3 priorities for 2 tasks`).
pub(crate) fn ranks_count_error(ranks: usize, tasks: usize) -> rtsched_model::params::ParamError {
    rtsched_model::params::ParamError::new("priorities", format!("{ranks} priorities for {tasks} tasks"))
        .in_scheduler("gfp")
}

/// Simulates `ts` under `sched` (G-EDF, quantum-driven G-EDF, P-EDF or P-FP) with `cfg`.
pub(crate) fn run(ts: &TaskSet, sched: &Scheduler, cfg: &SimConfig) -> Result<SimResult, SimError> {
    let Setup { offsets, horizon, capped, expected } = setup(ts, cfg)?;
    let (m, n) = (cfg.m, ts.len());
    let mu = m as usize;
    let (rule, quantum, check, cpu_of) = match sched {
        Scheduler::Gedf => (Keys::Rule(PriorityRule::Edf), None, Check::Global, vec![]),
        Scheduler::Gfp { ranks, .. } => {
            if ranks.len() != n {
                return Err(ModelError::from(ranks_count_error(ranks.len(), n)).into());
            }
            (Keys::Rule(PriorityRule::Fixed(ranks.clone())), None, Check::Global, vec![])
        }
        Scheduler::Edzl => (Keys::Edzl, None, Check::Global, vec![]),
        Scheduler::Gfl => {
            let points = PriorityPoints::gfl(ts, m);
            // Every absolute deadline is below horizon + max D: the keys must stay exact.
            let dmax = ts.iter().map(|t| t.deadline).max().unwrap_or(0);
            if !points.fits(horizon.saturating_add(dmax)) {
                return Err(ModelError::field(
                    "horizon",
                    format!(
                        "G-FL compares m·(r + D) − (m−1)·C exactly in 64 bits: a horizon of {} on m = {m} is too long",
                        rtsched_model::time::format_duration(horizon)
                    ),
                )
                .into());
            }
            (Keys::Points(points), None, Check::Global, vec![])
        }
        Scheduler::GedfQuantum { quantum, staggered } => {
            if *quantum == 0 || *quantum > MAX_TIME {
                return Err(ModelError::field("quantum", format!("must be in 1..={MAX_TIME} ns, got {quantum}")).into());
            }
            (
                Keys::Rule(PriorityRule::Edf),
                Some((*quantum, *staggered)),
                if *staggered { Check::None } else { Check::GlobalAtTicks },
                vec![],
            )
        }
        Scheduler::Pedf(p) => (Keys::Rule(PriorityRule::Edf), None, Check::Partitioned, validate_partition(ts, m, p)?),
        Scheduler::Pfp(p, order) => {
            (Keys::Rule(PriorityRule::fixed(ts, *order)), None, Check::Partitioned, validate_partition(ts, m, p)?)
        }
        Scheduler::Spres(_)
        | Scheduler::Rtws
        | Scheduler::Llf { .. }
        | Scheduler::Pd2 { .. }
        | Scheduler::Run
        | Scheduler::Federated(_)
        | Scheduler::Qps => return Err(not_engine(sched)),
    };
    if let Some((q, staggered)) = quantum {
        // Quantum ticks are work without jobs: bounded before the run, not only during it.
        let ticks = (horizon / q) as u128 + 1;
        let instants = if staggered { ticks * mu as u128 } else { ticks };
        if instants > cfg.max_events as u128 {
            return Err(ModelError::field(
                "quantum",
                format!(
                    "a quantum of {} over a horizon of {} is {instants} scheduling instants, above the bound of max_events = {}; use a larger quantum or a shorter horizon",
                    rtsched_model::time::format_duration(q),
                    rtsched_model::time::format_duration(horizon),
                    cfg.max_events
                ),
            )
            .into());
        }
    }
    let next_tick: Vec<Time> = match quantum {
        None => vec![],
        Some((_, false)) => vec![0],
        Some((q, true)) => (0..mu).map(|p| (q as u128 * p as u128 / mu as u128) as Time).collect(),
    };
    let tasks: Vec<TaskState> = ts
        .iter()
        .map(|t| TaskState {
            wcet: t.wcet,
            deadline: t.deadline,
            period: t.period,
            backlog: VecDeque::new(),
            next_seq: 0,
            handled: 0,
            completed: 0,
            last_cpu: NONE,
            on_cpu: NONE,
            zl: false,
            segs: t.segments.clone(),
            suspended: false,
        })
        .collect();
    // Release domains (docs/simulator.md, "Overhead injection"): one per CPU under
    // partitioning, handled on that CPU; one for a global scheduler, handled on CPU 0.
    let ovh = |cpu_of: &[u32]| -> Ovh {
        let Some(v) = cfg.overheads else { return Ovh::default() };
        let (dom_of, dom_cpu): (Vec<u32>, Vec<u32>) =
            if cpu_of.is_empty() { (vec![0; n], vec![0]) } else { (cpu_of.to_vec(), (0..m).collect()) };
        let nd = dom_cpu.len();
        Ovh {
            v,
            dom_of,
            dom_cpu,
            dom_jobs: vec![VecDeque::new(); nd],
            dom_last_due: vec![Time::MAX; nd],
            irqs: VecDeque::new(),
            segs: (0..mu).map(|_| VecDeque::new()).collect(),
            seg_end: vec![Time::MAX; mu],
            busy_until: vec![0; mu],
            resched_at: vec![Time::MAX; mu],
            pending: Vec::with_capacity(mu),
            local: vec![false; mu],
            local_list: Vec::with_capacity(mu),
            due: Vec::with_capacity(mu),
        }
    };
    // Under any delay the schedule lags the policy's links, so only the structural checks
    // apply.
    let check = if cfg.overheads.is_some_and(|o| !o.is_zero()) { Check::Structural } else { check };
    let releases: BinaryHeap<Reverse<u128>> = (0..n).map(|i| Reverse((offsets[i] as u128) << 32 | i as u128)).collect();
    macro_rules! go {
        ($policy:expr, $ov:literal) => {{
            let ov_state = ovh(&cpu_of);
            let mut e = Engine::<_, $ov> {
                policy: $policy,
                rule,
                tasks,
                sched: vec![None; mu],
                finish_at: vec![Time::MAX; mu],
                releases,
                deadlines: BinaryHeap::new(),
                resumes: BinaryHeap::new(),
                rec: Recorder::new(n, m, horizon, cfg.record_trace, expected as usize, "the simulator")
                    .keep_jobs(cfg.keep_jobs),
                dirty: DirtyCpus::new(mu),
                horizon,
                arrivals: &cfg.arrivals,
                exec: &cfg.exec,
                draw: Draw::new(cfg),
                quantum,
                next_tick,
                check: if cfg.check_invariants { check } else { Check::None },
                cpu_of,
                events: 0,
                released: 0,
                ov: ov_state,
                cfg,
                early: EarlyEnd::new(),
            };
            e.run()?;
            let backlog: u64 = e.tasks.iter().map(|t| t.backlog.len() as u64).sum();
            let (metrics, trace) = e.rec.finish(ts, m, e.horizon);
            if cfg.check_invariants
                && (metrics.jobs != e.released
                    || metrics.pending != backlog
                    || metrics.completed + backlog != e.released)
            {
                return Err(SimError::internal(format!(
                    "accounting mismatch: released {} (metrics {}), pending {backlog} (metrics {}), completed {}",
                    e.released, metrics.jobs, metrics.pending, metrics.completed
                )));
            }
            let message = e.early.message(capped);
            Ok(SimResult::from_metrics_ovh(sched, metrics, message, e.events, trace, cfg.overheads))
        }};
    }
    let ov = cfg.overheads.is_some();
    match sched {
        // G-FP and G-FL are the link-based G-EDF policy over other keys (it only compares Prios).
        Scheduler::Gedf | Scheduler::Gfp { .. } | Scheduler::Gfl if ov => go!(Gedf::new(mu), true),
        Scheduler::Gedf | Scheduler::Gfp { .. } | Scheduler::Gfl => go!(Gedf::new(mu), false),
        Scheduler::Edzl if !ov => go!(Gedf::new(mu), false),
        Scheduler::Edzl => Err(SimError::internal("EDZL has no overhead loop (refused by check_overheads)")),
        Scheduler::GedfQuantum { .. } if ov => go!(GedfQuantum::new(mu), true),
        Scheduler::GedfQuantum { .. } => go!(GedfQuantum::new(mu), false),
        Scheduler::Pedf(p) | Scheduler::Pfp(p, _) => {
            let part = validate_partition(ts, m, p)?;
            if ov {
                go!(Partitioned::new(mu, part), true)
            } else {
                go!(Partitioned::new(mu, part), false)
            }
        }
        Scheduler::Spres(_)
        | Scheduler::Rtws
        | Scheduler::Llf { .. }
        | Scheduler::Pd2 { .. }
        | Scheduler::Run
        | Scheduler::Federated(_)
        | Scheduler::Qps => Err(not_engine(sched)),
    }
}
