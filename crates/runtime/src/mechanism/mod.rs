//! Mechanisms: how a policy's decisions are computed and communicated under concurrency
//! (DESIGN.md, "Policy versus mechanism"), one file per mechanism family, each registered by
//! name.
//!
//! * [`plugin`]: the interface every engine mechanism implements ([`Plugin`]) and its
//!   context, with the happens-before contract between the engine and a plugin;
//! * [`registry`]: the table of mechanisms ([`Entry`]: parameters, placement and
//!   dedicated-CPU needs, overhead terms, invariant, builder) and its lookup;
//! * [`spec`]: a mechanism chosen for a run ([`Mechanism`]: entry, placement, parameters);
//! * the families: [`partitioned`] (P-EDF, P-FP), [`gsn_edf`] (GSN-EDF, GSN-EDF-DI), [`spres`] (SP-RES),
//!   [`gedf_mp`] (G-EDF-MP, a dedicated scheduling processor), [`kernel_sd`] (Linux
//!   `SCHED_DEADLINE`, run by the peer backend), [`rtss09`] (the seven G-EDF plugins of
//!   Brandenburg & Anderson, RTSS 2009; GSN-EDF is their CEm);
//! * [`forkjoin`]: the fork-join structure (thread slots, regions) of the mechanisms that
//!   execute fork-join jobs (`rtws`, `push-pull`);
//! * `dispatch`: linked versus scheduled — the one link-swap algorithm and reschedule requests,
//!   shared by the link-based global mechanisms (and G-EDF-MP's per-client pairs), the
//!   one-lock dispatch structure (`scheduled`, leave, take, enact) and the at-rest check;
//! * `release_domain`: the one release domain of the global mechanisms, polled by every
//!   worker or by the service thread, claimed by compare-and-swap.
//!
//! **Adding a mechanism**: one new file here with its plugin and a `pub static` [`Entry`],
//! and one line in the `registry!` list below.

pub(crate) mod dispatch;
pub mod forkjoin;
pub mod plugin;
pub mod registry;
pub(crate) mod release_domain;
pub mod spec;

pub use plugin::*;
pub use registry::{Entry, Params};
pub use spec::{validate_partition, Mechanism};

/// Declares the mechanism files and the registry's order: `module: [ENTRY, ...]`.
macro_rules! registry {
    ($($module:ident: [$($entry:ident),+ $(,)?]),+ $(,)?) => {
        $(pub mod $module;)+
        /// Every registered mechanism, in order (see [`registry::entries`]).
        pub(crate) static ENTRIES: &[&registry::Entry] = &[$($(&$module::$entry),+),+];
    };
}

registry! {
    partitioned: [PEDF, PFP],
    gsn_edf: [GSN_EDF, GSN_EDF_DI],
    kernel_sd: [KERNEL_SD],
    spres: [SPRES],
    rtss09: [CQM, CEM, FEM, HEM, CQ1, CE1, FE1, S_CQM, S_CQ1],
    rtws: [RTWS],
    push_pull: [PUSH_PULL, PUSH_PULL_FP],
    gedf_mp: [GEDF_MP],
}
