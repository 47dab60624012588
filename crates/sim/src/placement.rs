//! The simulator's SP-RES parameters. The placement it executes is the model's
//! ([`rtsched_model::Placement`], its JSON in docs/spres.md), the same the runtime executes;
//! the simulator checks it with [`rtsched_model::Placement::check_runnable`].

use rtsched_model::Placement;
pub use rtsched_policy::spres::{Background, Suspension};

/// SP-RES parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpresConfig {
    pub placement: Placement,
    /// Unsplit tasks get soft reservations too (split tasks always do).
    pub soft_unsplit: bool,
    /// CASH slack reclamation on.
    pub cash: bool,
    /// How depleted soft reservations share the background (the runtime's `background`
    /// parameter, the same rules; [`Background::DEFAULT`] for both front ends).
    pub background: Background,
    /// What a self-suspending job's reservation does with its budget while the job is
    /// suspended (the runtime's `suspension` parameter, the same rules; [`Suspension::Keep`]
    /// for both front ends): kept, or lent as CASH slack (`Donate`, needs `cash`).
    pub suspension: Suspension,
}
