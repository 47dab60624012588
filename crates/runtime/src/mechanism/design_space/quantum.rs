//! CQm and CQ1 (and S-CQm, S-CQ1): coarse-grained, quantum-driven G-EDF (Brandenburg &
//! Anderson, RTSS 2009, §2 S2 and §3; Table 1).
//!
//! The decision is `rtsched_policy::GedfQuantum` over the runtime's binomial heap (R1) under
//! one global lock, with the processor mapping; links change only in the tick handler:
//! * **release** (Δrel) takes only the *release lock*: it records the due jobs in the job book
//!   and appends the ready ones to a temporary queue — no processor-mapping lock and no heap
//!   operation, hence the "very little, constant" release overhead of RTSS 2009, Fig. 3(a);
//! * **tick** (Δtck; every Q on each worker, aligned or staggered by `c·Q/m`) takes the global
//!   lock, merges the temporary queue into the ready queue (swapped out in O(1) under the
//!   release lock, its jobs inserted into the binomial heap — O(1) amortized each) and applies
//!   the policy's quantum rule: with aligned quanta every CPU's tick links the `min(m, r)`
//!   highest-priority ready jobs (the first tick of a boundary does the work), with staggered
//!   quanta a worker's tick takes the highest-priority ready job if it beats its own (the
//!   policy's reading of per-CPU tick handlers). Changed CPUs are asked to reschedule
//!   (`mechanism::dispatch`, with its link swaps);
//! * **schedule** (Δsch) enacts the links: a completed job is unlinked (its CPU idles until its
//!   next tick, RTSS 2009, Fig. 1(b)) and its backlogged successor queued for the next tick; a
//!   self-suspending job (`Prev::Blocked`) is unlinked the same way;
//! * **wake** re-arrives a suspended job as `release` does: into the temporary queue, linked at
//!   the next tick.
//!
//! Lock order: the global lock, then the release lock (tick and completion nest them; release
//! takes the release lock alone). Both are the traced spin lock, loom-checked in
//! `platform::sync`; nothing else is shared.
//!
//! Against the event-driven G-EDF invariant the schedule deviates by design (a released job
//! waits up to Q for its tick; a CPU whose job completes idles until its tick): the registry
//! entry names the global invariant so that the priority-inversion monitor measures that
//! deviation on every run; the property test checks the links against `GedfQuantum`.

use crate::mechanism::dispatch::{check_at_rest, heads, Dispatch};
use crate::mechanism::registry::{ParamDecl, ParamKind, ParamSet, Setup};
use crate::mechanism::release_domain::{one_release_domain, ReleaseDomain};
use crate::mechanism::{Accounting, Ctx, Effects, Job, Plugin, Prev, TaskParams, Ticks};
use crate::queue::binomial::BinomialHeap;
use crate::queue::release::TaskBook;
use crate::sync::SpinLock;
use crate::RunError;
use rtsched_policy::{GedfQuantum, Policy, Prio, PriorityRule};

/// What the release lock protects: the job book and the temporary queue of released jobs.
struct Released {
    book: TaskBook,
    pending: Vec<Prio>,
}

/// What the global lock protects.
struct State {
    policy: GedfQuantum<BinomialHeap<Prio>>,
    /// Linked versus scheduled: what each worker runs, and where each task's job runs.
    dispatch: Dispatch,
    /// The empty vector swapped with the temporary queue at each tick.
    spare: Vec<Prio>,
    /// A copy of the book for job lookups (`job_of` reads only the task parameters).
    jobs: TaskBook,
}

/// The quantum-driven coarse-grained plugin (module docs).
pub struct Quantum {
    name: &'static str,
    m: usize,
    releases: ReleaseDomain,
    ticks: Ticks,
    rel: SpinLock<Released>,
    state: SpinLock<State>,
}

crate::mechanism_params! {
    /// The quantum-driven plugins' parameters (their entries' `params`; the S- variants
    /// default `staggered` to true).
    pub struct QuantumParams {
        /// The quantum, ns.
        quantum: u64 = ParamDecl {
            kind: ParamKind::Duration,
            default: "1ms",
            help: "the quantum Q: every worker ticks every Q and jobs are linked only at ticks",
        },
        staggered: bool = ParamDecl {
            kind: ParamKind::Bool,
            default: "false",
            help: "staggered quanta: worker c ticks at c·Q/m, each linking for itself (default: aligned)",
        },
    }
}

pub(crate) fn build(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    let p = QuantumParams::from_params(s.params)?;
    let ticks = Ticks { quantum_ns: p.quantum, staggered: p.staggered };
    Ok(Box::new(Quantum::new(s.name, s.tasks, s.m, s.dedicated, ticks, s.t0, s.end)))
}

impl Quantum {
    /// The plugin registered as `name`: `m` workers (and with `dedicated` the service thread
    /// releasing), tasks `params` released from `t0` until `end`, ticks `ticks`.
    pub fn new(
        name: &'static str,
        params: &[TaskParams],
        m: usize,
        dedicated: bool,
        ticks: Ticks,
        t0: u64,
        end: u64,
    ) -> Quantum {
        let n = params.len();
        let all: Vec<usize> = (0..n).collect();
        let book = TaskBook::new(params, &all, PriorityRule::Edf, t0, end);
        let releases = ReleaseDomain::new(dedicated, m, book.next_due());
        Quantum {
            name,
            m,
            releases,
            ticks,
            state: SpinLock::new(
                0,
                State {
                    policy: GedfQuantum::with_queue(m, BinomialHeap::with_capacity(2 * n + 4)),
                    dispatch: Dispatch::new(m, n),
                    spare: Vec::with_capacity(n),
                    jobs: book.clone(),
                },
            ),
            rel: SpinLock::new(1, Released { book, pending: Vec::with_capacity(n) }),
        }
    }

    /// The jobs linked to each CPU now (for tests against the policy).
    #[cfg(test)]
    pub(crate) fn linked(&self) -> Vec<Option<Prio>> {
        let st = self.state.lock_untraced();
        (0..self.m).map(|c| st.policy.linked(c)).collect()
    }
}

impl Plugin for Quantum {
    fn name(&self) -> &'static str {
        self.name
    }
    one_release_domain!(releases);

    fn release(&self, ctx: &mut Ctx<'_>, _domain: usize, now: u64) {
        let mut g = self.rel.lock(ctx.trace());
        let r = &mut *g;
        let (book, pending) = (&mut r.book, &mut r.pending);
        book.release_due(now, |j, ready| {
            ctx.record_release(&j);
            if ready {
                pending.push(j.prio);
            }
        });
        self.releases.set(r.book.next_due());
    }

    fn ticks(&self) -> Option<Ticks> {
        Some(self.ticks)
    }

    fn tick(&self, ctx: &mut Ctx<'_>, _due: u64, _now: u64) {
        let c = ctx.cpu();
        let mut g = self.state.lock(ctx.trace());
        let st = &mut *g;
        std::mem::swap(&mut self.rel.lock(ctx.trace()).pending, &mut st.spare);
        for p in st.spare.drain(..) {
            st.policy.job_ready(p);
        }
        st.policy.tick(if self.ticks.staggered { Some(c) } else { None });
        st.dispatch.enact(&mut st.policy, |x| ctx.preempt(x));
    }

    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev, _now: u64) -> Option<Job> {
        let cpu = ctx.cpu();
        let mut g = self.state.lock(ctx.trace());
        let st = &mut *g;
        st.dispatch.leave(cpu, prev);
        if let Prev::Blocked(j) = prev {
            // Self-suspension: the job leaves the policy as a completed one does (unlinked
            // without a refill, or dequeued), and the book holds it suspended until `wake`.
            st.policy.job_done(j.prio);
            self.rel.lock(ctx.trace()).book.suspend(&j);
        }
        if let Prev::Completed(j) = prev {
            // Unlinked without a refill (linked anywhere), or removed from the queue (it
            // completed after being unlinked, before noticing).
            st.policy.job_done(j.prio);
            let next = self.rel.lock(ctx.trace()).book.complete(&j);
            if let Some(n) = next {
                st.policy.job_ready(n.prio);
            }
        }
        st.dispatch.enact(&mut st.policy, |x| ctx.preempt(x));
        let next = st.dispatch.take(cpu, st.policy.linked(cpu), |p| st.jobs.job_of(p));
        ctx.ack_resched();
        next
    }

    /// The woken job re-arrives as a released one does: under the release lock alone, into
    /// the temporary queue, linked at the next tick (RTSS 2009, §2 S2: quantum-driven
    /// scheduling defers every arrival to a quantum boundary).
    fn wake(&self, ctx: &mut Ctx<'_>, job: Job, _now: u64) {
        let mut g = self.rel.lock(ctx.trace());
        let r = &mut *g;
        if r.book.resume(&job) {
            r.pending.push(job.prio);
        }
    }

    fn accounting(&self) -> Accounting {
        let st = self.state.lock_untraced();
        let r = self.rel.lock_untraced();
        let linked: Vec<Option<Prio>> = (0..self.m).map(|c| st.policy.linked(c)).collect();
        // Quantum-driven: at rest every pending job is linked, queued or in the temporary
        // queue, exactly once (the global invariant holds only at aligned boundaries).
        let queued = st.policy.ready_queue().keys().into_iter().chain(r.pending.iter().copied());
        let scheduled = st.dispatch.scheduled().iter().flatten().copied();
        let consistent = check_at_rest(&heads(&r.book), &linked, queued, scheduled, false)
            .map_err(|e| format!("{}: {e}", self.name()));
        Accounting { released: r.book.released().to_vec(), completed: r.book.completed().to_vec(), consistent: consistent.map_err(crate::Inconsistency) }
    }
}

#[cfg(test)]
mod tests;
