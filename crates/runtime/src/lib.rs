//! The runtime: real scheduler mechanisms on real pinned threads, Feather-Trace-style
//! overhead tracing, and Linux `SCHED_DEADLINE` as a peer in the same harness
//! (guide: `docs/runtime.md`; design notes: `docs/mechanisms/`).
//!
//! A *mechanism* computes and communicates the decisions of a *policy* of `rtsched_policy`
//! (which job should run where) under concurrency; every mechanism is one file in
//! [`mechanism`] and one entry in its [registry](mechanism::registry), looked up by name.
//! Layout, bottom up: [`config`] and [`error`]; [`platform`] (threads, clocks, the spin lock
//! and request words, the tracer, job bodies); [`queue`] (the structures mechanisms are built
//! from, one per file); [`mechanism`] (the plugin trait with its happens-before contract, the
//! registry, the mechanism families); [`backend`] (the plugin engine, the kernel-sd peer, the
//! run lifecycle they share, and the run's result — computed by `rtsched_trace` from the run's
//! own trace, exactly as for the simulator); on top, [`request`]: one typed [`RunRequest`]
//! that decides a run's CPUs, placement and warnings and returns a [`RunOutcome`] with the
//! trust verdict, what every front calls.
//!
//! Sources: Cerqueira, Vanga & Brandenburg, "Scaling Global Scheduling with Message Passing",
//! RTAS 2014 (seed 000: §II-B GSN-EDF, §IV overhead terms, App. A synchronous-release
//! workload); Brandenburg & Anderson, "On the Implementation of Global Real-Time
//! Schedulers", RTSS 2009 (seed 001: §2 overheads, §3 release queue / processor mapping /
//! ready queue, CEm and CE1).
//!
//! ```no_run
//! use rtsched_model::TaskSet;
//! use rtsched_runtime::mechanism::registry;
//! use rtsched_runtime::{run, Mechanism, RunConfig};
//! // What is registered: one line per mechanism.
//! for e in registry::entries() {
//!     println!("{}", e.line());
//! }
//! // Two tasks (C, T) in ns, 0.5 s under GSN-EDF on CPUs 0 and 1.
//! let ts = TaskSet::from_ct(&[(1_000_000, 10_000_000), (2_000_000, 20_000_000)]).unwrap();
//! let gsn = Mechanism::named("gsn-edf").unwrap();
//! let r = run(&ts, &gsn, &RunConfig::new(vec![0, 1], 500_000_000)).unwrap();
//! assert_eq!(r.accounting.error, None);
//! r.check_trace().unwrap();
//! // The summary is the run's own trace's metrics.
//! assert_eq!(r.summary_json()["deadline_misses"], r.trace.metrics().unwrap().deadline_misses);
//! // P-FP with rate-monotonic priorities, tasks placed one per CPU.
//! let pfp = Mechanism::named("pfp").unwrap().with_partition(vec![vec![0], vec![1]]);
//! let r = run(&ts, &pfp.with_param("priorities", "rm").unwrap(), &RunConfig::new(vec![0, 1], 500_000_000));
//! println!("{}", r.unwrap().summary_json());
//! ```
//!
//! Assumptions: sporadic tasks released periodically (the densest legal pattern) with
//! implicit, constrained or arbitrary deadlines; jobs of one task run in order (a tardy job
//! delays its successor, which waits; no job is dropped); jobs never self-suspend.

pub mod backend;
pub mod config;
pub mod error;
pub mod mechanism;
pub mod platform;
pub mod queue;
pub mod request;

pub use backend::forkjoin::{
    dag_job_csv, dag_jobs, dag_slot_task_set, dag_summary, forkjoin_job_csv, forkjoin_jobs, forkjoin_summary, run_dag,
    run_forkjoin, slot_task_set,
};
pub use backend::result::{to_trace, JobRecord, RunResult, Stats};
pub use backend::{kernel_sd, run};
pub use config::{IdleMode, RunConfig};
pub use error::{ErrorKind, Inconsistency, ParamError, RunError};
pub use mechanism::Mechanism;
pub use platform::body::ExecTime;
pub use platform::{body, clock, dag, interference, parallel, sync, tracer, user};
pub use request::{
    assess_timing, entry_terms, measure_calibration, run_request, Calibration, DecidedPlacement, Decision, ExportData,
    ExportKind, GivenPlacement, PreparedRun, RunOutcome, RunRequest, TimingFacts, TrustInputs, TrustMechanism,
    TrustVerdict,
};
