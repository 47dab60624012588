//! The one model every rtsched engine consumes (see `docs/model.md`).
//!
//! * [`Time`] is an integer number of nanoseconds; durations in files may also be written
//!   with units (`"2ms"`, `"250us"`, `"1.5s"`), parsed exactly by [`time::parse_duration`].
//! * A [`Task`] is a sporadic (or periodic) task `(C, D, T)`: WCET, relative deadline and
//!   period / minimum inter-arrival time; deadlines may be implicit, constrained or arbitrary.
//!   A task may self-suspend ([`task::Segments`]: execution and suspension segments).
//! * A [`TaskSet`] is an ordered list of tasks; the index of a task in it is its identity in
//!   every result (placements, traces, per-task metrics).
//! * [`exact`] holds the arithmetic that verdicts use: exact rationals, and a rigorous
//!   interval filter that decides fast when floats are provably enough.
//! * [`io`] reads and writes the documented file formats (`docs/formats.md`); [`json`] is the
//!   strict JSON reader behind every JSON input (duplicate keys are errors).
//! * A [`Workload`] is what an engine schedules: sporadic tasks or fork-join tasks (with room
//!   for DAG tasks); [`workload::read_json`] reads either kind of file.
//! * [`Placement`] is where the tasks run: per-CPU reservations (split tasks' pieces, as in
//!   Brandenburg & Gül, RTSS 2016) or a plain partition, with its JSON form and validation.
//! * [`params`] is a scheduler's parameters: their kinds, declarations, the one parser of their
//!   values (flags, durations, ranges, choices) and the one error a bad value is, shared by the
//!   simulator's and the runtime's registries.
//! * [`Stop`] lets a caller end long work early (Ctrl-C).
//! * [`MAX_M`] bounds the processor count everywhere, before anything is allocated per processor.
//! * [`overheads`] is the overhead model: the term vocabulary, per-term values and the measured
//!   model file, shared by analysis, simulator and runtime.
//!
//! Invalid input is a [`ModelError`] whose message names the task and the field.

pub mod dag;
pub mod error;
pub mod exact;
pub mod forkjoin;
pub mod io;
pub mod json;
pub mod overheads;
pub mod params;
pub mod placement;
pub mod stop;
pub mod task;
pub mod taskset;
pub mod time;
pub mod workload;

pub use error::ModelError;
pub use placement::Placement;
pub use stop::Stop;
pub use task::{DeadlineKind, Task};
pub use taskset::{check_m, Platform, TaskSet, MAX_M};
pub use time::{Time, MAX_TIME};
pub use workload::{Workload, WorkloadFile};
