//! rtsched-sim: an exact simulator in virtual integer-nanosecond time that drives the pure
//! policies of `rtsched-policy` and reports through `rtsched-trace` (design note:
//! `docs/simulator.md`).
//!
//! * G-EDF, event-driven and link-based (Brandenburg & Anderson, RTSS 2009, §3), and
//!   quantum-driven with aligned or staggered quanta (ibid. §2, Fig. 1);
//! * P-EDF and P-FP (rate or deadline monotonic) over a given partition;
//! * SP-RES, semi-partitioned reservations executing a placement (Brandenburg & Gül, RTSS
//!   2016, §III-A, §IV-A), in [`spres`];
//! * RTWS, global EDF with priority-aware work stealing over fork-join tasks (seed 003, §V), in
//!   [`rtws`]; event-driven G-EDF over the threads of fork-join tasks (the seed-003
//!   baseline), in [`fj_gedf`].
//!
//! Jobs of a task execute in release order: a job released while its predecessor is
//! unfinished waits (it is released and counted, but becomes ready only when the predecessor
//! completes). Arbitrary deadlines are accepted; `C > D` or `C > T` tasks simply miss.
//! Every metric is computed by `rtsched_trace::MetricsBuilder` from the records the simulator
//! emits, whether or not the trace is kept.

mod engine;
pub mod fj_gedf;
pub mod overheads;
pub mod rtws;
pub mod spres;

pub use engine::{simulate, Arrivals, ExecTimes, OverheadReport, Scheduler, SimConfig, SimResult};
pub use fj_gedf::{simulate_forkjoin_gedf, ForkJoinGedfResult};
pub use overheads::{simulator_view, OverheadModel, OverheadSpec, OverheadStat, Overheads, Term};
pub use rtsched_policy::FpOrder;
pub use rtws::{simulate_rtws, RtwsResult, ThreadInfo};
pub use spres::{SpresConfig, SpresPlacement};
