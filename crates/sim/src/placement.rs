//! The simulator's SP-RES parameters. The placement it executes is the model's
//! ([`rtsched_model::Placement`], its JSON in docs/spres.md), the same the runtime executes;
//! the simulator checks it with [`rtsched_model::Placement::check_runnable`].

use rtsched_model::Placement;
pub use rtsched_policy::spres::Background;

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
}
