//! P-EDF and P-FP: partitioned EDF / fixed-priority — one ready queue, one release queue and
//! one spin lock per CPU; tasks never migrate (Calandrino et al., "LITMUS^RT: A Testbed for
//! Empirically Comparing Real-Time Multiprocessor Schedulers", RTSS 2006; the partitioned
//! baselines of seed 001). Each CPU handles its own partition's releases, so no IPIs are ever
//! sent. Deadlines may be implicit, constrained or arbitrary.
//!
//! **The policy decides.** Each CPU's state holds that CPU's `rtsched_policy::Uniprocessor` —
//! the rule each CPU of `rtsched_policy::Partitioned` follows (uniprocessor EDF or FP, here over
//! the runtime's binomial heap) — so the per-CPU locks of the mechanism are kept while what runs
//! is the policy's. P-EDF orders jobs by absolute deadline, P-FP by the task's rank (given, or
//! deadline-monotonic); ties by task index, then job number ([`rtsched_policy::Prio`]).

use crate::mechanism::registry::{
    self, Backend, DedicatedCpu, Entry, FixedPriorityParams, InvariantKind, ParamSet, PlacementKind, Setup,
};
use crate::mechanism::{Accounting, Ctx, Effects, Job, Plugin, Prev, TaskParams};
use crate::queue::binomial::BinomialHeap;
use crate::queue::release::TaskBook;
use crate::RunError;
use crate::sync::SpinLock;
use crossbeam_utils::CachePadded;
use rtsched_policy::{Prio, PriorityRule, Uniprocessor};
use std::sync::atomic::{AtomicU64, Ordering};

/// P-EDF.
pub static PEDF: Entry = Entry {
    name: "pedf",
    summary: "partitioned EDF: per-CPU ready queue, release queue and lock, no migration (Calandrino et al., \
              RTSS 2006)",
    ..PARTITIONED
};

/// P-FP.
pub static PFP: Entry = Entry {
    name: "pfp",
    summary: "partitioned fixed priority, deadline-monotonic by default: per-CPU queues and locks",
    params: FixedPriorityParams::SPECS,
    priority: registry::fixed_priorities,
    ..PARTITIONED
};

const PARTITIONED: Entry = Entry {
    name: "",
    summary: "",
    params: &[],
    placement: PlacementKind::Partition,
    parallel: false,
    dedicated: DedicatedCpu::None,
    dedicated_role: "",
    terms: &[],
    invariant: InvariantKind::Partitioned,
    priority: registry::edf,
    user_jobs: true,
    suspends: true,
    backend: Backend::Engine(build),
};

fn build(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    let part = s.partition.ok_or_else(|| RunError::Config("a partitioned mechanism needs a partition".into()))?;
    Ok(Box::new(Pedf::with_rule(s.tasks, part, s.rule.clone(), s.t0, s.end)))
}

struct CpuState {
    book: TaskBook,
    /// This CPU's policy.
    policy: Uniprocessor<BinomialHeap<Prio>>,
    scheduled: Option<Job>,
    tasks: Vec<usize>,
}

/// P-EDF or P-FP (by the priority rule).
pub struct Pedf {
    name: &'static str,
    cpus: Vec<CachePadded<SpinLock<CpuState>>>,
    next_rel: Vec<CachePadded<AtomicU64>>,
    n: usize,
    /// Per task: the CPU index of its partition.
    cpu_of: Vec<usize>,
}

impl Pedf {
    /// P-EDF: `partition[c]` lists the task indices of CPU index `c` (validated by the caller).
    pub fn new(params: &[TaskParams], partition: &[Vec<usize>], t0: u64, end: u64) -> Pedf {
        Pedf::with_rule(params, partition, PriorityRule::Edf, t0, end)
    }

    /// P-EDF (`rule` = EDF) or P-FP (`rule` = fixed ranks, smaller = higher priority).
    pub fn with_rule(params: &[TaskParams], partition: &[Vec<usize>], rule: PriorityRule, t0: u64, end: u64) -> Pedf {
        let name = if matches!(rule, PriorityRule::Edf) { "pedf" } else { "pfp" };
        let cpus: Vec<_> = partition
            .iter()
            .enumerate()
            .map(|(c, ts)| {
                let queue = BinomialHeap::with_capacity(ts.len() + 4);
                CachePadded::new(SpinLock::new(
                    c as u32,
                    CpuState {
                        book: TaskBook::new(params, ts, rule.clone(), t0, end),
                        policy: Uniprocessor::new(queue),
                        scheduled: None,
                        tasks: ts.clone(),
                    },
                ))
            })
            .collect();
        let next_rel =
            cpus.iter().map(|s| CachePadded::new(AtomicU64::new(s.lock_untraced().book.next_due()))).collect();
        let mut cpu_of = vec![0; params.len()];
        for (c, ts) in partition.iter().enumerate() {
            for &t in ts {
                cpu_of[t] = c;
            }
        }
        Pedf { name, cpus, next_rel, n: params.len(), cpu_of }
    }

    /// The job linked to each CPU now (for tests against the policy).
    pub fn linked(&self) -> Vec<Option<Job>> {
        self.cpus
            .iter()
            .map(|s| {
                let st = s.lock_untraced();
                st.policy.linked().map(|p| st.book.job_of(p))
            })
            .collect()
    }
}

impl Plugin for Pedf {
    fn name(&self) -> &'static str {
        self.name
    }
    fn release_domains(&self) -> usize {
        self.cpus.len()
    }
    fn release_domain(&self, cpu: usize) -> Option<usize> {
        (cpu < self.cpus.len()).then_some(cpu)
    }
    fn next_release(&self, domain: usize) -> u64 {
        self.next_rel[domain].load(Ordering::Acquire)
    }

    fn release(&self, ctx: &mut Ctx<'_>, domain: usize, now: u64) {
        let mut g = self.cpus[domain].lock(ctx.trace());
        let st = &mut *g;
        let (book, policy) = (&mut st.book, &mut st.policy);
        book.release_due(now, |j, is_ready| {
            ctx.record_release(&j);
            if is_ready {
                policy.job_ready(j.prio);
            }
        });
        self.next_rel[domain].store(st.book.next_due(), Ordering::Release);
        if st.scheduled.map(|j| j.prio) != st.policy.linked() {
            ctx.preempt(domain);
        }
    }

    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev, _now: u64) -> Option<Job> {
        let mut g = self.cpus[ctx.cpu()].lock(ctx.trace());
        let st = &mut *g;
        match prev {
            // Still linked: it continues; otherwise the policy queued it when it was unlinked.
            Prev::Idle | Prev::Preempted(_) => {}
            // Self-suspension (LITMUS^RT's P-EDF `psnedf_task_block`): the job leaves the
            // policy — unlinked and the CPU refilled, or dequeued if it was unlinked before
            // this CPU noticed — and is held nowhere until `wake`.
            Prev::Blocked(j) => {
                st.policy.job_done(j.prio);
                st.book.suspend(&j);
            }
            Prev::Completed(j) => {
                // Linked (the CPU is refilled) or, if it completed after being unlinked, queued.
                st.policy.job_done(j.prio);
                if let Some(next) = st.book.complete(&j) {
                    st.policy.job_ready(next.prio);
                }
            }
        }
        st.scheduled = st.policy.linked().map(|p| st.book.job_of(p));
        ctx.ack_resched();
        st.scheduled
    }

    /// The job arrives again on its partition's CPU (same release and deadline): under that
    /// CPU's lock, as a release, with a reschedule request when it now beats what runs there
    /// (LITMUS^RT's `psnedf_task_wake_up` → `requeue` + `preempt`).
    fn wake(&self, ctx: &mut Ctx<'_>, job: Job, _now: u64) {
        let c = self.cpu_of[job.task() as usize];
        let mut g = self.cpus[c].lock(ctx.trace());
        let st = &mut *g;
        if st.book.resume(&job) {
            st.policy.job_ready(job.prio);
            if st.scheduled.map(|j| j.prio) != st.policy.linked() {
                ctx.preempt(c);
            }
        }
    }

    fn accounting(&self) -> Accounting {
        let mut released = vec![0; self.n];
        let mut completed = vec![0; self.n];
        let mut consistent = Ok(());
        for (c, s) in self.cpus.iter().enumerate() {
            let st = s.lock_untraced();
            let mut pending: Vec<Prio> = Vec::new();
            for &t in &st.tasks {
                released[t] = st.book.released()[t];
                completed[t] = st.book.completed()[t];
                pending.extend(st.book.ready_head(t).map(|j| j.prio));
            }
            pending.sort_unstable();
            // At rest the policy's invariant holds on this CPU, and every other pending job
            // is queued.
            let linked = st.policy.linked();
            if consistent.is_ok() && linked != pending.first().copied() {
                consistent = Err(format!(
                    "{}: CPU {c} links {linked:?}, its best pending job is {:?}",
                    self.name,
                    pending.first()
                ));
            }
            let queued = st.policy_queue_len();
            if consistent.is_ok() && queued + usize::from(linked.is_some()) != pending.len() {
                consistent =
                    Err(format!("{}: CPU {c} has {} pending jobs but holds {queued} queued", self.name, pending.len()));
            }
        }
        Accounting { released, completed, consistent: consistent.map_err(crate::Inconsistency) }
    }
}

impl CpuState {
    fn policy_queue_len(&self) -> usize {
        self.policy.queue().len()
    }
}

#[cfg(test)]
mod tests {
    //! The mechanism driven without threads on m = 3 CPUs with random partitions, releases,
    //! preemption notices and completions; after every callback each CPU's link equals that of
    //! `rtsched_policy::Partitioned` over the whole partition, driven by the same events.
    use super::*;
    use crate::sync::CpuSignal;
    use crate::tracer::{RecKind, TraceBuffer};
    use proptest::prelude::*;
    use rtsched_policy::{Partitioned, Policy};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn links_equal_the_policys(
            tasks in proptest::collection::vec((5u64..40, 0u32..3, 0u32..6), 2..8),
            fixed in any::<bool>(),
            ops in proptest::collection::vec((0u8..5, 0usize..3, 1u64..15), 1..200),
        ) {
            let m = 3;
            let n = tasks.len();
            // Self-suspended jobs (op 3 blocks the running one, op 4 wakes one).
            let mut suspended: Vec<Job> = Vec::new();
            let params: Vec<TaskParams> = tasks.iter().map(|&(p, _, _)| TaskParams { deadline: p, period: p }).collect();
            let cpu_of: Vec<u32> = tasks.iter().map(|&(_, c, _)| c).collect();
            let mut partition = vec![Vec::new(); m];
            for (t, &c) in cpu_of.iter().enumerate() {
                partition[c as usize].push(t);
            }
            let rule = if fixed { PriorityRule::Fixed(tasks.iter().map(|&(_, _, r)| r).collect()) } else { PriorityRule::Edf };
            let g = Pedf::with_rule(&params, &partition, rule.clone(), 0, 1_000_000);
            let mut reference = Partitioned::new(m, cpu_of.clone());
            let (mut released, mut completed) = (vec![0u32; n], vec![0u32; n]);
            let prio = |t: usize, k: u32| rule.prio(t as u32, k, k as u64 * params[t].period + params[t].deadline);
            let signals: Vec<CpuSignal> = (0..m).map(|_| CpuSignal::new()).collect();
            let mut tb = TraceBuffer::new(0, 100_000);
            let mut running: Vec<Option<Job>> = vec![None; m];
            let mut now = 0u64;
            for (op, c, dt) in ops {
                let seen = tb.records().len();
                let mut ctx = Ctx::new(c, &mut tb, &signals);
                match op {
                    0 => {
                        now += dt;
                        for d in 0..m {
                            if g.next_release(d) <= now {
                                g.release(&mut Ctx::new(d, ctx.trace(), &signals), d, now);
                            }
                        }
                    }
                    1 => {
                        if signals[c].take().is_some() || running[c].is_none() {
                            let prev = running[c].map_or(Prev::Idle, Prev::Preempted);
                            running[c] = g.schedule(&mut ctx, prev, now);
                        }
                    }
                    3 => {
                        if let Some(j) = running[c] {
                            prop_assert!(reference.job_done(j.prio));
                            suspended.push(j);
                            running[c] = g.schedule(&mut ctx, Prev::Blocked(j), now);
                        }
                    }
                    4 => {
                        if !suspended.is_empty() {
                            let j = suspended.remove(dt as usize % suspended.len());
                            reference.job_ready(j.prio);
                            g.wake(&mut ctx, j, now);
                        }
                    }
                    _ => {
                        if let Some(j) = running[c] {
                            let t = j.task() as usize;
                            prop_assert!(reference.job_done(prio(t, j.seq())));
                            completed[t] += 1;
                            if released[t] > completed[t] {
                                reference.job_ready(prio(t, completed[t]));
                            }
                            running[c] = g.schedule(&mut ctx, Prev::Completed(j), now);
                        }
                    }
                }
                drop(ctx);
                for x in &tb.records()[seen..] {
                    if x.kind == RecKind::JobRelease {
                        let t = x.task as usize;
                        released[t] += 1;
                        if released[t] == completed[t] + 1 {
                            reference.job_ready(prio(t, completed[t]));
                        }
                    }
                }
                let linked: Vec<Option<Prio>> = g.linked().iter().map(|l| l.map(|j| j.prio)).collect();
                let want: Vec<Option<Prio>> = (0..m).map(|c| reference.linked(c)).collect();
                prop_assert_eq!(&linked, &want);
                for (c, r) in running.iter().enumerate() {
                    if let Some(j) = r {
                        prop_assert_eq!(cpu_of[j.task() as usize], c as u32, "a task left its CPU");
                    }
                }
                prop_assert_eq!(g.accounting().consistent, Ok(()));
            }
        }
    }
}
