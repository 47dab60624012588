//! The kernel peer as a registered mechanism: the same workload as Linux `SCHED_DEADLINE`
//! threads (Lelli et al., 2011; compared in Cerqueira et al., RTAS 2014, §II-C and App. A).
//! It has no plugin: `backend::kernel_sd` runs it. Its dispatching happens inside the kernel,
//! so no overhead term and no invariant can be observed from user space.

use crate::mechanism::registry::{self, Backend, DedicatedCpu, Entry, InvariantKind, PlacementKind};

/// kernel-sd.
pub static KERNEL_SD: Entry = Entry {
    name: "kernel-sd",
    summary: "Linux SCHED_DEADLINE (global EDF with push/pull in the kernel) running the same workload as \
              threads (Lelli et al., 2011)",
    params: &[],
    placement: PlacementKind::None,
    parallel: false,
    dedicated: DedicatedCpu::None,
    dedicated_role: "",
    terms: &[],
    invariant: InvariantKind::Unobservable("kernel-sd: the kernel's dispatching is not observable from user space"),
    priority: registry::edf,
    user_jobs: false,
    // Its synthetic body sleeps through each suspension; the kernel blocks and wakes the
    // thread by SCHED_DEADLINE's own rules (backend::kernel_sd).
    suspends: true,
    backend: Backend::KernelSd,
};
