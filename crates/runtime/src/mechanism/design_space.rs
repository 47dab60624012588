//! The G-EDF implementation design space of Brandenburg & Anderson, "On the Implementation of
//! Global Real-Time Schedulers", RTSS 2009 (§3, Table 1): seven plugins, each one registered
//! mechanism assembled from three choices —
//!
//! * the **ready queue**: R1 a binomial heap under the processor-mapping lock (*coarse*); R2
//!   Hunt et al.'s fine-grained concurrent heap (`queue::concurrent_heap`); R3 the hierarchical
//!   queue of per-CPU binomial heaps under a global heap of their minima
//!   (`queue::hierarchical`);
//! * **scheduling**: S1 event-driven (a job is linked as soon as fewer than m higher-priority
//!   jobs are pending) or S2 quantum-driven (links change only at quantum boundaries, ticks
//!   every Q aligned on all workers or staggered by Q/m; released jobs wait in a temporary
//!   queue merged at the next tick);
//! * **interrupts**: I1 global (whichever worker sees a release due handles it) or I2
//!   dedicated (a service thread on a CPU that schedules no job handles every release, so the
//!   capacity is m − 1 of the machine's m).
//!
//! | plugin | ready queue | scheduling | interrupts | implementation |
//! |---|---|---|---|---|
//! | CQm | R1 coarse | quantum | global | [`quantum::Quantum`] |
//! | CEm | R1 coarse | event | global | [`coarse::GsnEdf`] (= GSN-EDF) |
//! | FEm | R2 concurrent heap | event | global | [`fine::Fine`] over `ConcurrentHeap` |
//! | HEm | R3 hierarchical | event | global | [`fine::Fine`] over `Hierarchical` |
//! | CQ1 | R1 coarse | quantum | dedicated | [`quantum::Quantum`] |
//! | CE1 | R1 coarse | event | dedicated | [`coarse::GsnEdf`] (= GSN-EDF-DI) |
//! | FE1 | R2 concurrent heap | event | dedicated | [`fine::Fine`] over `ConcurrentHeap` |
//!
//! S-CQm and S-CQ1 (RTSS 2009, §4.2) are CQm and CQ1 with staggered quanta, registered under
//! their own names so that their measured models are kept apart; `gsn-edf` and `gsn-edf-di`
//! are registered aliases of `cem` and `ce1` (the same entry but for the name).
//!
//! **Policy and mechanism.** The coarse plugins keep the whole decision in a sequential policy
//! under one lock: CEm/CE1 drive `rtsched_policy::Gedf` and CQm/CQ1 `GedfQuantum`, both over
//! the runtime's binomial heap (the policies' ready-queue type parameter), and their property
//! tests compare every link with the policy's. The fine-grained and hierarchical plugins cannot
//! hand their concurrent queue to a sequential policy: the queue lives outside the
//! processor-mapping lock. Under that lock they still decide with `Gedf` — over the jobs the
//! deciding thread holds (popped from the queue, or displaced from a CPU) — and use the
//! policy's own preemption check (`Gedf::target`) on the queue's top; the reserved-CPU protocol
//! of `fine` keeps the decisions consistent while the lock is dropped. Their link decisions
//! equal the policy's whenever the decision is serialized (property test: one thread drives
//! the callbacks), and on real threads the priority-inversion monitor bounds the difference by
//! the run's tracking delay (docs/reproductions.md, "The RTSS'09 plugins side by side").

pub mod coarse;
pub mod fine;
pub mod quantum;
#[cfg(test)]
pub(crate) mod testkit;

use crate::mechanism::registry::{
    self, Backend, DedicatedCpu, Entry, InvariantKind, ParamSet, ParamSpec, PlacementKind, TermSpec,
};
use quantum::QuantumParams;

/// Ready queue choice (RTSS 2009, §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadyQueueChoice {
    /// R1: a binomial heap under the processor-mapping lock.
    Coarse,
    /// R2: Hunt et al.'s fine-grained heap.
    Fine,
    /// R3: the hierarchical queue of queues.
    Hierarchical,
}

/// Scheduling choice (RTSS 2009, §2: S1 event-driven, S2 quantum-driven).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedulingChoice {
    Event,
    /// Aligned or staggered by the `staggered` parameter.
    Quantum,
}

/// Interrupt choice (RTSS 2009, §3: I1 global, I2 dedicated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterruptChoice {
    Global,
    Dedicated,
}

/// One plugin of Table 1: its name and its three choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Design {
    pub name: &'static str,
    pub queue: ReadyQueueChoice,
    pub scheduling: SchedulingChoice,
    pub interrupts: InterruptChoice,
}

/// RTSS 2009, Table 1 (plus the staggered-quanta variants of §4.2), in the paper's order.
pub const TABLE1: &[Design] = {
    use InterruptChoice::*;
    use ReadyQueueChoice::*;
    use SchedulingChoice::*;
    &[
        Design { name: "cqm", queue: Coarse, scheduling: Quantum, interrupts: Global },
        Design { name: "cem", queue: Coarse, scheduling: Event, interrupts: Global },
        Design { name: "fem", queue: Fine, scheduling: Event, interrupts: Global },
        Design { name: "hem", queue: Hierarchical, scheduling: Event, interrupts: Global },
        Design { name: "cq1", queue: Coarse, scheduling: Quantum, interrupts: Dedicated },
        Design { name: "ce1", queue: Coarse, scheduling: Event, interrupts: Dedicated },
        Design { name: "fe1", queue: Fine, scheduling: Event, interrupts: Dedicated },
        Design { name: "s-cqm", queue: Coarse, scheduling: Quantum, interrupts: Global },
        Design { name: "s-cq1", queue: Coarse, scheduling: Quantum, interrupts: Dedicated },
    ]
};

/// The quantum-driven entries' parameters: [`QuantumParams`]' list, with `staggered` on by
/// default for the S- variants.
const ALIGNED_PARAMS: &[ParamSpec] = QuantumParams::SPECS;
const STAGGERED_PARAMS: [ParamSpec; 2] = [QuantumParams::SPECS[0], ParamSpec { default: "true", ..QuantumParams::SPECS[1] }];

/// The quantum-driven plugins' own term: the tick handler (the engine traces it).
const TICK_TERMS: [TermSpec; 1] = [TermSpec {
    name: "tick",
    symbol: "Δtck",
    help: "quantum tick: merge the released jobs, link at the boundary",
    tracking: true, count: false,
}];

const RELEASES: &str = "release handling";

/// The fields every entry of the family shares.
const FAMILY: Entry = Entry {
    name: "",
    summary: "",
    params: &[],
    placement: PlacementKind::None,
    parallel: false,
    dedicated: DedicatedCpu::None,
    dedicated_role: "",
    terms: &[],
    invariant: InvariantKind::Global,
    priority: registry::edf,
    user_jobs: true,
    suspends: false,
    backend: Backend::Engine(coarse::build),
};

const QUANTUM_FAMILY: Entry = Entry {
    params: ALIGNED_PARAMS,
    terms: &TICK_TERMS,
    suspends: true,
    backend: Backend::Engine(quantum::build),
    ..FAMILY
};

/// CEm (and the `gsn-edf` alias): the entry with everything but its name and summary.
pub(crate) const CEM_ENTRY: Entry = Entry {
    name: "cem",
    summary: "RTSS'09 CEm: coarse-grained binomial-heap ready queue under the global lock, event-driven, \
              global interrupts (= GSN-EDF; Brandenburg & Anderson, RTSS 2009)",
    suspends: true,
    ..FAMILY
};

/// CE1 (and the `gsn-edf-di` alias).
pub(crate) const CE1_ENTRY: Entry = Entry {
    name: "ce1",
    summary: "RTSS'09 CE1: CEm with a dedicated interrupt CPU that releases every job (= GSN-EDF-DI; \
              Brandenburg & Anderson, RTSS 2009)",
    dedicated: DedicatedCpu::Required,
    dedicated_role: RELEASES,
    suspends: true,
    ..FAMILY
};

pub static CQM: Entry = Entry {
    name: "cqm",
    summary: "RTSS'09 CQm: coarse-grained binomial heap, quantum-driven (links at ticks; releases merged at the \
              next tick), global interrupts (Brandenburg & Anderson, RTSS 2009)",
    ..QUANTUM_FAMILY
};

pub static CEM: Entry = CEM_ENTRY;

pub static FEM: Entry = Entry {
    name: "fem",
    summary: "RTSS'09 FEm: Hunt et al.'s fine-grained heap used without the processor-mapping lock, event-driven, \
              global interrupts (Brandenburg & Anderson, RTSS 2009)",
    backend: Backend::Engine(fine::build_hunt),
    suspends: true,
    ..FAMILY
};

pub static HEM: Entry = Entry {
    name: "hem",
    summary: "RTSS'09 HEm: hierarchical queue of per-CPU heaps (cache-local insertions), event-driven, global \
              interrupts (Brandenburg & Anderson, RTSS 2009)",
    backend: Backend::Engine(fine::build_hierarchical),
    suspends: true,
    ..FAMILY
};

pub static CQ1: Entry = Entry {
    name: "cq1",
    summary: "RTSS'09 CQ1: CQm with a dedicated interrupt CPU (Brandenburg & Anderson, RTSS 2009)",
    dedicated: DedicatedCpu::Required,
    dedicated_role: RELEASES,
    ..QUANTUM_FAMILY
};

pub static CE1: Entry = CE1_ENTRY;

pub static FE1: Entry = Entry {
    name: "fe1",
    summary: "RTSS'09 FE1: FEm with a dedicated interrupt CPU (Brandenburg & Anderson, RTSS 2009)",
    dedicated: DedicatedCpu::Required,
    dedicated_role: RELEASES,
    backend: Backend::Engine(fine::build_hunt),
    suspends: true,
    ..FAMILY
};

pub static S_CQM: Entry = Entry {
    name: "s-cqm",
    summary: "RTSS'09 S-CQm: CQm with staggered quanta (cqm --staggered; Brandenburg & Anderson, RTSS 2009, §4.2)",
    params: &STAGGERED_PARAMS,
    ..QUANTUM_FAMILY
};

pub static S_CQ1: Entry = Entry {
    name: "s-cq1",
    summary: "RTSS'09 S-CQ1: CQ1 with staggered quanta (cq1 --staggered; Brandenburg & Anderson, RTSS 2009, §4.2)",
    params: &STAGGERED_PARAMS,
    dedicated: DedicatedCpu::Required,
    dedicated_role: RELEASES,
    ..QUANTUM_FAMILY
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::registry::{entries, find, Setup};
    use crate::mechanism::TaskParams;
    use rtsched_model::TaskSet;

    /// A plugin names itself as the registry does (one source: `Setup::name`), aliases
    /// included — every registered global mechanism (no placement), built for a small set.
    #[test]
    fn every_global_plugin_is_named_as_registered() {
        let ts = TaskSet::from_ct(&[(1_000, 10_000), (2_000, 30_000)]).unwrap();
        let tasks: Vec<TaskParams> = ts.iter().map(|t| TaskParams { deadline: t.deadline, period: t.period }).collect();
        let mut checked = 0;
        for e in entries().iter().filter(|e| e.placement == PlacementKind::None) {
            let Backend::Engine(build) = e.backend else { continue };
            let params = e.resolve([]).unwrap();
            let setup = Setup {
                name: e.name,
                ts: &ts,
                tasks: &tasks,
                m: 2,
                cpus: &[0, 1],
                dedicated: e.dedicated != DedicatedCpu::None,
                partition: None,
                reservations: None,
                rule: rtsched_policy::PriorityRule::Edf,
                params: &params,
                t0: 0,
                end: 1_000_000,
                forkjoin: None,
                dag: None,
            };
            let plugin = build(&setup).unwrap_or_else(|err| panic!("{}: {err}", e.name));
            assert_eq!(plugin.name(), e.name);
            checked += 1;
        }
        assert!(checked >= TABLE1.len() + 2, "only {checked} mechanisms built");
    }

    /// Each registered plugin is the design Table 1 says: its builder is the one of its
    /// ready-queue and scheduling choice, its dedicated CPU the interrupt choice, its ticks the
    /// quantum choice; the aliases equal their plugin but for the name and summary.
    #[test]
    fn every_plugin_is_its_table_1_design() {
        let builder = |e: &Entry| match e.backend {
            Backend::Engine(b) => b as *const () as usize,
            Backend::KernelSd => 0,
        };
        for d in TABLE1 {
            let e = find(d.name).unwrap();
            let want = match (d.queue, d.scheduling) {
                (ReadyQueueChoice::Coarse, SchedulingChoice::Event) => coarse::build as *const () as usize,
                (ReadyQueueChoice::Coarse, SchedulingChoice::Quantum) => quantum::build as *const () as usize,
                (ReadyQueueChoice::Fine, SchedulingChoice::Event) => fine::build_hunt as *const () as usize,
                (ReadyQueueChoice::Hierarchical, SchedulingChoice::Event) => fine::build_hierarchical as *const () as usize,
                other => panic!("{}: no such design in Table 1: {other:?}", d.name),
            };
            assert_eq!(builder(e), want, "{}", d.name);
            let dedicated = d.interrupts == InterruptChoice::Dedicated;
            assert_eq!(e.dedicated == DedicatedCpu::Required, dedicated, "{}", d.name);
            let quantum = d.scheduling == SchedulingChoice::Quantum;
            assert_eq!(e.param("quantum").is_some(), quantum, "{}", d.name);
            assert_eq!(e.terms.iter().any(|t| t.name == "tick"), quantum, "{}", d.name);
            if quantum {
                let staggered = QuantumParams::from_params(&e.resolve([]).unwrap()).map(|p| p.staggered);
                assert_eq!(staggered, Ok(d.name.starts_with("s-")), "{}", d.name);
            }
            assert_eq!(e.invariant, InvariantKind::Global);
        }
        for (alias, of) in [("gsn-edf", "cem"), ("gsn-edf-di", "ce1")] {
            let (a, b) = (find(alias).unwrap(), find(of).unwrap());
            assert_eq!(builder(a), builder(b), "{alias}");
            assert_eq!(
                (a.params, a.placement, a.dedicated, a.dedicated_role, a.terms, a.invariant, a.user_jobs),
                (b.params, b.placement, b.dedicated, b.dedicated_role, b.terms, b.invariant, b.user_jobs),
                "{alias} is not {of}"
            );
            assert!(a.summary.contains(&format!("alias of {of}")), "{alias}");
        }
    }
}
