//! rtsched-trace: the one vocabulary of schedule events and overhead samples that the
//! simulator and the runtime emit, the one place where schedule metrics and sample statistics
//! are computed (a run's summary and its exported trace agree by construction), and the
//! exports (JSON Lines, per-job CSV, Perfetto, LITMUS^RT sched_trace, SVG Gantt).
//!
//! Design note and every definition: `docs/trace.md`. The per-job statistics follow
//! LITMUS^RT's `st-job-stats` tool (Brandenburg et al., the LITMUS^RT feather-trace tools);
//! the binary export follows LITMUS^RT's `include/litmus/sched_trace.h` record layout
//! (24-byte records: an 8-byte header and a 16-byte payload).
//!
//! Assumptions: time is integer nanoseconds; a job is identified by `(task index, job
//! sequence number)` with sequence numbers 0, 1, 2, ... per task in release order; deadlines
//! may be implicit, constrained or arbitrary.

pub mod export;
pub mod metrics;
pub mod monitor;
pub mod record;
pub mod stats;

pub use metrics::{JobStats, Metrics, MetricsBuilder, TaskStats};
pub use record::{Event, JobId, OverheadKind, Record, TaskInfo, Trace, TraceMeta};
pub use stats::{is_outlier, Interference, OverheadStats, Sample, SampleStats, INTERFERENCE_TERM};
