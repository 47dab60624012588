//! Mechanisms: how a policy's decisions are computed and communicated under concurrency
//! (DESIGN.md, "Policy versus mechanism"), one file per mechanism family, each registered by
//! name.
//!
//! * [`plugin`]: the interface every engine mechanism implements ([`Plugin`]) and its
//!   context, with the happens-before contract between the engine and a plugin;
//! * [`params`]: a mechanism's typed parameter struct (`mechanism_params!`), from which its
//!   registry entry's parameter list is derived;
//! * [`registry`]: the table of mechanisms ([`Entry`]: parameters, placement and
//!   dedicated-CPU needs, overhead terms, invariant, builder) and its lookup;
//! * [`spec`]: a mechanism chosen for a run ([`Mechanism`]: entry, placement, parameters);
//! * the families: [`partitioned`] (P-EDF, P-FP), [`gsn_edf`] (GSN-EDF, GSN-EDF-DI), [`spres`] (SP-RES),
//!   [`gedf_mp`] (G-EDF-MP, a dedicated scheduling processor), [`kernel_sd`] (Linux
//!   `SCHED_DEADLINE`, run by the peer backend), [`design_space`] (the G-EDF implementation
//!   design space of Brandenburg & Anderson, RTSS 2009: seven plugins from three choices,
//!   registered under the paper's names; GSN-EDF is their CEm);
//!   [`run`] (RUN, the reduction tree of Regnier et al., RTSS 2011, under one global lock), [`qps`]
//!   (QPS-G and QPS-C: quasi-partitioned scheduling under one global lock or per-cluster locks);
//! * [`forkjoin`]: the precedence structure (thread slots, a DAG per task; fork-join tasks as
//!   their DAGs) of the mechanisms that execute parallel jobs (`rtws`, `push-pull`);
//! * `dispatch`: linked versus scheduled — the one link-swap algorithm and reschedule requests,
//!   shared by the link-based global mechanisms (and G-EDF-MP's per-client pairs), the
//!   one-lock dispatch structure (`scheduled`, leave, take, enact) and the at-rest check;
//! * `release_domain`: the one release domain of the global mechanisms, polled by every
//!   worker or by the service thread, claimed by compare-and-swap.
//!
//! **Adding a mechanism**: one new file here with its plugin, its parameter struct
//! ([`mechanism_params!`](crate::mechanism_params), if it takes any) and a `pub static`
//! [`Entry`], and one line in the `registry!` list below.
//!
//! The smallest complete mechanism (uniprocessor EDF under one lock, self-suspension included:
//! an entry of 14 lines and a plugin of about 65), driven here without threads as the engine would call it:
//!
//! ```
//! use rtsched_policy::{Prio, PriorityRule};
//! use rtsched_runtime::mechanism::registry::{self, Backend, DedicatedCpu, Entry, InvariantKind, PlacementKind, Setup};
//! use rtsched_runtime::mechanism::{Accounting, Ctx, Effects, Job, Mechanism, Plugin, Prev, TaskParams};
//! use rtsched_runtime::queue::{binomial::BinomialHeap, release::TaskBook};
//! use rtsched_runtime::sync::{CpuSignal, SpinLock};
//! use rtsched_runtime::{tracer::TraceBuffer, RunError};
//! use std::sync::atomic::{AtomicU64, Ordering};
//!
//! pub static UNI_EDF: Entry = Entry {
//!     name: "uni-edf",
//!     summary: "EDF on one CPU under one lock (an example)",
//!     params: &[],
//!     placement: PlacementKind::None,
//!     parallel: false,
//!     dedicated: DedicatedCpu::None,
//!     dedicated_role: "",
//!     terms: &[],
//!     invariant: InvariantKind::Global,
//!     priority: registry::edf,
//!     user_jobs: true,
//!     suspends: true,
//!     backend: Backend::Engine(build),
//! };
//!
//! struct State { book: TaskBook, ready: BinomialHeap<Prio>, running: Option<Job> }
//! pub struct UniEdf { state: SpinLock<State>, next: AtomicU64 }
//!
//! fn build(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
//!     if s.m != 1 {
//!         return Err(RunError::Config("uni-edf runs on one CPU".into()));
//!     }
//!     Ok(Box::new(UniEdf::new(s.tasks, s.rule.clone(), s.t0, s.end)))
//! }
//!
//! impl UniEdf {
//!     fn new(tasks: &[TaskParams], rule: PriorityRule, t0: u64, end: u64) -> UniEdf {
//!         let all: Vec<usize> = (0..tasks.len()).collect();
//!         let book = TaskBook::new(tasks, &all, rule, t0, end);
//!         let next = AtomicU64::new(book.next_due());
//!         let ready = BinomialHeap::with_capacity(tasks.len());
//!         UniEdf { state: SpinLock::new(0, State { book, ready, running: None }), next }
//!     }
//! }
//!
//! impl Plugin for UniEdf {
//!     fn name(&self) -> &'static str { UNI_EDF.name }
//!     fn release_domains(&self) -> usize { 1 }
//!     fn release_domain(&self, thread: usize) -> Option<usize> { (thread == 0).then_some(0) }
//!     fn next_release(&self, _domain: usize) -> u64 { self.next.load(Ordering::Acquire) }
//!     fn release(&self, ctx: &mut Ctx<'_>, _domain: usize, now: u64) {
//!         let mut g = ctx.lock(&self.state);
//!         let State { book, ready, running } = &mut *g;
//!         book.release_due(now, |j, is_ready| {
//!             ctx.record_release(&j);
//!             if is_ready { ready.push(j.prio) }
//!         });
//!         self.next.store(book.next_due(), Ordering::Release);
//!         if ready.peek().is_some_and(|p| running.is_none_or(|r| *p < r.prio)) {
//!             ctx.preempt(0);
//!         }
//!     }
//!     fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev, _now: u64) -> Option<Job> {
//!         let mut g = ctx.lock(&self.state);
//!         match prev {
//!             Prev::Preempted(j) => g.ready.push(j.prio),
//!             Prev::Completed(j) => if let Some(n) = g.book.complete(&j) { g.ready.push(n.prio) },
//!             Prev::Blocked(j) => g.book.suspend(&j), // self-suspends: held nowhere until `wake`
//!             Prev::Idle => {}
//!         }
//!         let next = g.ready.pop().map(|p| g.book.job_of(p));
//!         g.running = next;
//!         ctx.ack_resched();
//!         next
//!     }
//!     fn wake(&self, ctx: &mut Ctx<'_>, j: Job, _now: u64) {
//!         let mut g = ctx.lock(&self.state);
//!         if g.book.resume(&j) {
//!             g.ready.push(j.prio);
//!             if g.running.is_none_or(|r| j.prio < r.prio) { ctx.preempt(0) }
//!         }
//!     }
//!     fn accounting(&self) -> Accounting {
//!         let g = self.state.lock_untraced();
//!         Accounting { released: g.book.released().to_vec(), completed: g.book.completed().to_vec(), consistent: Ok(()) }
//!     }
//! }
//!
//! // Unregistered, it is still a mechanism a run can take (`registry!` would list it).
//! assert_eq!(Mechanism::from_entry(&UNI_EDF).entry().name, "uni-edf");
//! // Two tasks (D = 10 and 5), both released at 0; the earlier deadline runs first.
//! let tasks = [TaskParams { deadline: 10, period: 100 }, TaskParams { deadline: 5, period: 100 }];
//! let p = UniEdf::new(&tasks, PriorityRule::Edf, 0, 100);
//! let (signals, mut tb) = ([CpuSignal::new()], TraceBuffer::new(0, 1024));
//! let mut ctx = Ctx::new(0, &mut tb, &signals);
//! p.release(&mut ctx, 0, 0);
//! let a = p.schedule(&mut ctx, Prev::Idle, 0).unwrap();
//! let b = p.schedule(&mut ctx, Prev::Completed(a), 3).unwrap();
//! assert_eq!((a.task(), b.task()), (1, 0));
//! // B self-suspends; nothing else is ready; B wakes and runs again.
//! assert_eq!(p.schedule(&mut ctx, Prev::Blocked(b), 5), None);
//! p.wake(&mut ctx, b, 7);
//! let b = p.schedule(&mut ctx, Prev::Idle, 7).unwrap();
//! assert_eq!(p.schedule(&mut ctx, Prev::Completed(b), 9), None);
//! assert_eq!(p.accounting().completed, [1, 1]);
//! ```

pub(crate) mod dispatch;
pub mod forkjoin;
pub mod params;
pub mod plugin;
pub mod registry;
pub(crate) mod release_domain;
pub(crate) mod servers;
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
    design_space: [CQM, CEM, FEM, HEM, CQ1, CE1, FE1, S_CQM, S_CQ1],
    rtws: [RTWS],
    push_pull: [PUSH_PULL, PUSH_PULL_FP],
    gedf_mp: [GEDF_MP],
    run: [RUN],
    qps: [QPS_G, QPS_C],
}

#[cfg(test)]
mod tests {
    //! Every registered parameter list is the one derived from its mechanism's typed struct.

    use super::params::{ParamKind, ParamSet, ParamSpec, Params};
    use super::registry::{entries, FixedPriorityParams};
    use super::{design_space, gedf_mp, push_pull, rtws, spres};
    use crate::ParamError;

    /// A typed struct's list and its reader, type-erased.
    struct Typed {
        specs: &'static [ParamSpec],
        read: fn(&Params) -> Result<(), ParamError>,
        parse_bad: fn(&str, &str) -> Option<ParamError>,
    }

    fn typed<T: ParamSet>() -> Typed {
        Typed { specs: T::SPECS, read: |p| T::from_params(p).map(|_| ()), parse_bad: |k, v| T::parse([(k, v)]).err() }
    }

    /// The struct each registered mechanism with parameters declares them with.
    fn typed_of(name: &str) -> Option<Typed> {
        Some(match name {
            "pfp" => typed::<FixedPriorityParams>(),
            "spres" => typed::<spres::SpresParams>(),
            "cqm" | "cq1" | "s-cqm" | "s-cq1" => typed::<design_space::quantum::QuantumParams>(),
            "push-pull" => typed::<push_pull::PushPullParams>(),
            "push-pull-fp" => typed::<push_pull::PushPullFpParams>(),
            "gedf-mp" => typed::<gedf_mp::GedfMpParams>(),
            "rtws" => typed::<rtws::RtwsParams>(),
            "run" | "qps-g" | "qps-c" => typed::<crate::mechanism::servers::ServerParams>(),
            _ => return None,
        })
    }

    #[test]
    fn every_parameter_list_is_derived_from_a_typed_struct() {
        let mut with_params = 0;
        for e in entries() {
            let Some(t) = typed_of(e.name) else {
                assert!(e.params.is_empty(), "{}: parameters without a typed struct", e.name);
                continue;
            };
            with_params += 1;
            // The same parameters in the same order, with the same kinds and help; the
            // defaults too, except where an entry overrides one (the S- variants' staggered).
            let shape = |s: &[ParamSpec]| s.iter().map(|p| (p.name, p.kind, p.help)).collect::<Vec<_>>();
            assert_eq!(shape(e.params), shape(t.specs), "{}", e.name);
            for (p, q) in e.params.iter().zip(t.specs) {
                if p.default != q.default {
                    assert!(e.name.starts_with("s-") && p.name == "staggered", "{}: {} overridden", e.name, p.name);
                }
            }
            // The entry's defaults (and so every resolved value) read typed.
            (t.read)(&e.resolve([]).unwrap()).unwrap_or_else(|err| panic!("{}: {err}", e.name));
            // A bad value is refused naming its field, by the struct as by the entry.
            for p in e.params {
                let bad = match p.kind {
                    ParamKind::Text => continue,
                    ParamKind::Int { .. } | ParamKind::Duration => "-1",
                    ParamKind::Bool | ParamKind::Choice(_) | ParamKind::Priorities => "neither",
                };
                let err = (t.parse_bad)(p.name, bad).unwrap_or_else(|| panic!("{}: {}={bad} accepted", e.name, p.name));
                assert_eq!(err.param, p.name, "{}: {err}", e.name);
                let err = e.resolve([(p.name, bad)]).unwrap_err().to_string();
                assert!(err.contains(&format!("parameter {}:", p.name)), "{}: {err}", e.name);
            }
        }
        assert_eq!(
            with_params, 13,
            "pfp, spres, 4 quantum-driven, push-pull, push-pull-fp, gedf-mp, rtws, run, qps-g, qps-c"
        );
    }

    #[test]
    fn typed_defaults_are_the_documented_ones() {
        assert_eq!(rtws::RtwsParams::parse([]).unwrap(), rtws::RtwsParams { deques: "lockfree" });
        let gm = gedf_mp::GedfMpParams::parse([]).unwrap();
        assert_eq!(
            gm,
            gedf_mp::GedfMpParams { dsp: "window", spin_window: 500_000, mailboxes: "llc".into(), mailbox_size: 256 }
        );
        let pp = push_pull::PushPullParams::parse([("find_cpu", "fmask")]).unwrap();
        assert_eq!(pp, push_pull::PushPullParams { find_cpu: "fmask", retries: 3, op_spans: false });
        let sp = spres::SpresParams::parse([]).unwrap();
        assert_eq!(
            sp,
            spres::SpresParams {
                cash: true,
                soft: false,
                rr_quantum: 1_000_000,
                background: "round-robin",
                enforcement: true,
                suspension: "keep"
            }
        );
        let e = gedf_mp::GedfMpParams::parse([("mailbox_size", "1")]).unwrap_err();
        assert_eq!(e.to_string(), "parameter mailbox_size: expected an integer in 2..=65536, got \"1\"");
        assert_eq!(FixedPriorityParams::parse([]).unwrap().priorities, "dm");
        assert_eq!(push_pull::PushPullFpParams::parse([]).unwrap().priorities, "rm");
    }
}
