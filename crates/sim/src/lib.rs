//! rtsched-sim: an exact simulator in virtual integer-nanosecond time that drives the pure
//! policies of `rtsched-policy` and reports through `rtsched-trace` (design note:
//! `docs/simulator.md`).
//!
//! * G-EDF, event-driven and link-based (Brandenburg & Anderson, RTSS 2009, §3), and
//!   quantum-driven with aligned or staggered quanta (ibid. §2, Fig. 1);
//! * G-FP, global preemptive fixed priority (DM, RM or given ranks), and G-FL, G-EDF with the
//!   fair-lateness priority points of Erickson & Anderson, ECRTS 2012 — the same link-based
//!   policy as G-EDF with other priority keys; EDZL (Lee, RTCSA 1994; Cirinei & Baker, ECRTS
//!   2007), the same with zero-laxity promotion;
//! * P-EDF and P-FP (rate or deadline monotonic) over a given partition;
//! * LLF, least laxity first (Mok 1983; Dertouzos & Mok, IEEE TSE 1989), deciding at job
//!   events and every quantum, and PD², Pfair scheduling in quanta (Anderson & Srinivasan,
//!   ECRTS 2000 / JCSS 2004) — the selection schedulers, whose priorities change with time, in
//!   `selection.rs`;
//! * SP-RES, semi-partitioned reservations executing a placement (Brandenburg & Gül, RTSS
//!   2016, §III-A, §IV-A), in [`spres`];
//! * RUN, optimal multiprocessor scheduling by reduction to uniprocessor (Regnier, Lima, Massa,
//!   Levin & Brandt, RTSS 2011), in `run.rs` over `rtsched_policy::run`;
//! * QPS, quasi-partitioned scheduling (Massa, Lima, Regnier, Levin & Brandt, RTS 2016), in
//!   `qps.rs` over `rtsched_policy::qps`;
//! * RTWS, global EDF with priority-aware work stealing over fork-join tasks (seed 003, §V), in
//!   [`rtws`]; event-driven G-EDF over the threads of fork-join tasks (the seed-003
//!   baseline), in [`fj_gedf`];
//! * DAG tasks at node level (Baruah et al., RTSS 2012): global EDF, global FP and federated
//!   scheduling (Li, Chen, Agrawal, Lu & Gill, ECRTS 2014) over ready nodes, in [`dag`].
//!
//! Jobs of a task execute in release order: a job released while its predecessor is
//! unfinished waits (it is released and counted, but becomes ready only when the predecessor
//! completes). Arbitrary deadlines are accepted; `C > D` or `C > T` tasks simply miss.
//! Every metric is computed by `rtsched_trace::MetricsBuilder` from the records the simulator
//! emits, whether or not the trace is kept.

//!
//! Code layout: [`config`] (what is asked) and [`result`] (what is measured); `setup.rs` (the
//! validation, horizon and seeded draws every loop shares) and `recorder.rs` (the one recorder
//! of records and dispatch events); the loops: `engine/` (G-EDF, quantum G-EDF, P-EDF, P-FP:
//! `engine/ideal.rs` without overheads, `engine/overhead.rs` with them, `engine/state.rs` what
//! both share), `selection.rs` (LLF and PD², whose priorities change with time), [`spres`]
//! (executing a [`placement`]), [`rtws`] and [`fj_gedf`] over one fork-join
//! job book (`forkjoin.rs`, on the model's `RegionProgress`); [`overheads`]
//! (the overhead values and models). [`simulate`] dispatches to the loop of the scheduler.
//! [`registry`] names the schedulers (one entry each, with parameters, placement and builder),
//! and [`request`] is the one typed request the front ends use ([`simulate_request`]).

pub mod config;
pub mod dag;
mod engine;
pub mod error;
pub mod fj_gedf;
mod forkjoin;
pub mod overheads;
pub mod placement;
mod qps;
mod recorder;
pub mod registry;
pub mod request;
pub mod result;
pub mod rtws;
mod run;
mod selection;
mod servers;
mod setup;
pub mod spres;

pub use config::{Arrivals, ExecTimes, Scheduler, SimConfig, SuspensionTimes};
pub use dag::{simulate_dag, DagResult};
pub use error::SimError;
pub use fj_gedf::simulate_forkjoin_gedf;
pub use overheads::{simulator_view, OverheadModel, OverheadSpec, OverheadStat, Overheads, Term};
pub use placement::{Background, SpresConfig, Suspension};
pub use registry::ParamArg;
pub use request::{simulate_request, Export, SimOutcome, SimReport, SimRequest};
pub use result::{OverheadReport, SimResult};
pub use rtsched_policy::FpOrder;
pub use rtws::{simulate_rtws, ForkJoinResult, ThreadInfo};

use rtsched_model::{ModelError, TaskSet, Workload};

/// Simulates `ts` under `sched` on `cfg.m` CPUs from time 0 to the horizon.
///
/// Errors (never panics) on invalid parameters: m = 0 or above 65,536, a bad partition, a
/// zero quantum, offsets of the wrong length, a fraction outside [0, 1], a zero horizon, or a
/// simulation that would release more than `cfg.max_jobs` jobs.
pub fn simulate(ts: &TaskSet, sched: &Scheduler, cfg: &SimConfig) -> Result<SimResult, SimError> {
    cfg.check_overheads(sched)?;
    check_suspensions(ts, sched, cfg)?;
    match sched {
        Scheduler::Spres(sc) => spres::simulate_spres(ts, sched, sc, cfg),
        Scheduler::Rtws => rtws::simulate_sequential(ts, sched, cfg),
        Scheduler::Llf { .. } | Scheduler::Pd2 { .. } => selection::simulate_selection(ts, sched, cfg),
        Scheduler::Run => run::simulate_run(ts, sched, cfg),
        Scheduler::Qps => qps::simulate_qps(ts, sched, cfg),
        Scheduler::Federated(_) => Err(ModelError::field(
            "scheduler",
            "federated schedules DAG task sets; a sequential task set runs under the other schedulers",
        )
        .into()),
        Scheduler::Gedf
        | Scheduler::GedfQuantum { .. }
        | Scheduler::Gfp { .. }
        | Scheduler::Gfl
        | Scheduler::Edzl
        | Scheduler::Pedf(_)
        | Scheduler::Pfp(..) => engine::run(ts, sched, cfg),
    }
}

/// Self-suspending tasks (docs/simulator.md, "Self-suspension") run in the engine's ideal loop:
/// every global and partitioned scheduler of the engine executes their segments exactly, and so
/// does the SP-RES loop (a suspended job leaves its reservation, whose budget is kept or lent
/// as slack by `suspension`: RTSS 2016 §VIII) and the RTWS loop (a blocked job leaves its CPU as
/// at a completion without a join and wakes as a Rule A arrival); the LLF, PD², RUN and QPS
/// loops and overhead injection do not model suspensions yet: a one-line error.
fn check_suspensions(ts: &TaskSet, sched: &Scheduler, cfg: &SimConfig) -> Result<(), SimError> {
    let Some(i) = ts.iter().position(|t| t.is_self_suspending()) else { return Ok(()) };
    let why: Option<String> = match sched {
        Scheduler::Llf { .. } | Scheduler::Pd2 { .. } => Some(format!(
            "{} does not simulate self-suspending tasks yet (its selection loop has no suspended state)",
            sched.name()
        )),
        Scheduler::Run | Scheduler::Qps => {
            Some(format!("{} does not simulate self-suspending tasks (its servers' budgets assume none)", sched.name()))
        }
        _ if cfg.overheads.is_some() => {
            Some("self-suspending tasks are not simulated with overheads yet (simulate without --overheads)".into())
        }
        _ => None,
    };
    match why {
        Some(w) => Err(ModelError::task_field(
            i,
            "segments",
            format!("{w}; gedf, gedf-quantum, gfp, gfl, edzl, pedf, pfp, spres and rtws run them"),
        )
        .in_task(i, ts[i].name.as_deref())
        .into()),
        None => Ok(()),
    }
}

/// What [`simulate_workload`] measured: a job-level result for sporadic tasks, a thread- and
/// job-level one for fork-join tasks, a node- and DAG-job-level one for DAG tasks.
#[derive(Debug, Clone, PartialEq)]
pub enum Simulated {
    Jobs(SimResult),
    ForkJoin(ForkJoinResult),
    Dag(DagResult),
}

/// The simulator's one entry point over any workload: sporadic tasks under every scheduler
/// ([`simulate`]); fork-join tasks under `Rtws` ([`simulate_rtws`]) or `Gedf` over their threads
/// ([`simulate_forkjoin_gedf`]); DAG tasks at node level under `Gedf`, `Gfp` or `Federated`
/// ([`simulate_dag`]). Another scheduler on a fork-join or DAG set is an error naming the ones
/// that run it.
pub fn simulate_workload(w: &Workload, sched: &Scheduler, cfg: &SimConfig) -> Result<Simulated, SimError> {
    match w {
        Workload::Sporadic(ts) => simulate(ts, sched, cfg).map(Simulated::Jobs),
        Workload::Dag(set) => simulate_dag(set, sched, cfg).map(Simulated::Dag),
        Workload::ForkJoin(set) => match sched {
            Scheduler::Rtws => simulate_rtws(set, cfg).map(Simulated::ForkJoin),
            Scheduler::Gedf => simulate_forkjoin_gedf(set, cfg).map(Simulated::ForkJoin),
            other => Err(ModelError::field(
                "scheduler",
                format!(
                    "{} schedules sequential tasks; a fork-join task set runs under rtws or gedf (over its threads)",
                    other.name()
                ),
            )
            .into()),
        },
    }
}
