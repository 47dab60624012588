//! The placement an SP-RES simulation executes — defined with the SP-RES rules in
//! `rtsched_policy::spres::placement` (the runtime executes the same placements) and
//! re-exported here — and the simulator's SP-RES parameters.
//!
//! Placement JSON: `{"m", "schedulable", "heuristic", "cpus": [{"cpu", "reservations":
//! [{"task", "budget", "period", "deadline", "offset", "part", "parts"}]}], "tasks": [{"task",
//! "period_ratio", "parts"}], "reason"?}` — `part` is 1-based, `period = ⌊T / period_ratio⌋`.

pub use rtsched_policy::spres::placement::{Reservation, SpresPlacement};
pub use rtsched_policy::spres::Background;

/// SP-RES parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpresConfig {
    pub placement: SpresPlacement,
    /// Unsplit tasks get soft reservations too (split tasks always do).
    pub soft_unsplit: bool,
    /// CASH slack reclamation on.
    pub cash: bool,
    /// How depleted soft reservations share the background (the runtime's `background`
    /// parameter, the same rules; [`Background::DEFAULT`] for both front ends).
    pub background: Background,
}
