//! QPS on real threads, in the two configurations of Compagnin et al.'s implementation that
//! Brandenburg & Gül measured (RTSS 2016, §VII-B, Fig. 9): **QPS-G**, one global spin lock, and
//! **QPS-C**, "per-cluster" spin locks (one per core on their platform, where the sets were
//! partitioned). The policy is `rtsched_policy::qps` (Massa, Lima, Regnier, Levin & Brandt,
//! Real-Time Systems 52(5), 2016; that module says which of its rules are confirmed from the
//! paper and which are its own reconstruction), the same state machine `rtsched simulate
//! --scheduler qps` drives.
//!
//! **Clusters — what is locked.** A *cluster* is a set of execution sets whose decisions are
//! coupled: a major set and the set hosting its slave item (the host lends its CPU to the
//! major set's slave server), closed under that relation — a chain of consecutive sets that
//! ends at a set closing minor. Tasks of different clusters never share a CPU nor a budget.
//! Each cluster has one spin lock over its own `Qps` (its sets' budgets, modes and decisions),
//! the job book of its tasks and `scheduled` of its CPUs; one release domain polled by its CPUs
//! (claimed by compare-and-swap); and one budget timer, on its first CPU. No thread ever holds
//! two cluster locks.
//! * `qps-g`: one cluster holding every set and every CPU — QPS's offline phase on the whole
//!   set, one lock.
//! * `qps-c`: the clusters of the whole set's quasi-partition, each given QPS's offline phase
//!   on its own tasks and CPUs. A cluster's own offline phase makes the same sets (its first
//!   set starts empty, as in the whole set's next fit) unless its worst-fit partition attempt
//!   succeeds where the whole set's did not; it is then partitioned EDF on those CPUs — QPS's
//!   own reduction to partitioning — and still a QPS schedule of the cluster. When every
//!   cluster's sets are the whole set's, qps-c decides exactly as qps-g (tested). A
//!   partitioned set has one cluster per CPU: per-CPU locks, as QPS-C on the paper's platform.
//!
//! **Driving the policy.** QPS's decisions depend on releases and completions: the policy
//! takes releases at their periodic instants, completions when they happen. Every callback
//! brings its cluster's `Qps` to its `now` event by event (each boundary or budget exhaustion
//! at its own instant, the releases due there given at their instants — those at or after the
//! end of the run as skipped), then applies what it has to say (a completion at `now`), then
//! decides. The policy is driven non-strict: on threads a job can still be pending at its
//! next release (overheads), and the policy keeps its task pending; a completed job whose task
//! has a backlogged job leaves the task pending. CPU `c` runs the pending job of the task the
//! policy puts on `c` (or idles); a job the policy moves while another worker still runs it is
//! taken only after that worker let it go (plugin contract 2), as in `run`.
//!
//! Refused when built, with the policy's one line: deadlines other than periods, U > m, rates
//! whose common denominator exceeds 2^64 (integral-millisecond parameters keep it small), a
//! dedicated CPU.

use crate::mechanism::registry::{self, Backend, DedicatedCpu, Entry, InvariantKind, PlacementKind, Setup, TermSpec};
use crate::mechanism::servers::{budget_set, BudgetTimer, Handover, ServerParams};
use crate::mechanism::params::ParamSet;
use crate::mechanism::{Accounting, Ctx, Effects, Job, Plugin, Prev, TaskParams};
use crate::queue::release::TaskBook;
use crate::sync::SpinLock;
use crate::RunError;
use crossbeam_utils::CachePadded;
use rtsched_model::{TaskSet, Time};
use rtsched_policy::qps::{Qps, QuasiPartition};
use rtsched_policy::PriorityRule;
use std::sync::atomic::{AtomicU64, Ordering};

/// Term ids (indices into the entries' `terms`).
const BUDGET_TIMER: u32 = 0;

/// The most policy events one callback applies before it reports a fault.
const MAX_EVENTS_PER_CALL: u32 = 1 << 22;

const TERMS: &[TermSpec] = &[TermSpec {
    name: "budget_timer",
    symbol: "",
    help: "a cluster's budget timer: the policy brought to the exhaustion or boundary, decided, reschedule requests",
    tracking: true, count: false,
}];

const QPS: Entry = Entry {
    name: "",
    summary: "",
    params: ServerParams::SPECS,
    placement: PlacementKind::None,
    parallel: false,
    dedicated: DedicatedCpu::None,
    dedicated_role: "",
    terms: TERMS,
    invariant: InvariantKind::Unobservable(
        "QPS serves execution sets by window budgets and modes, not jobs by priority (checked against the \
         policy in virtual time: mechanism::qps::tests)",
    ),
    priority: registry::edf,
    user_jobs: true,
    suspends: false,
    backend: Backend::Engine(build_g),
};

/// QPS-G: one global lock.
pub static QPS_G: Entry = Entry {
    name: "qps-g",
    summary: "QPS (quasi-partitioned scheduling; Massa et al., Real-Time Systems 2016) under one global lock \
              (QPS-G of Compagnin et al., measured by Brandenburg & Gül, RTSS 2016); implicit deadlines, U ≤ m",
    ..QPS
};

/// QPS-C: one lock per cluster.
pub static QPS_C: Entry = Entry {
    name: "qps-c",
    summary: "QPS with one lock per cluster (a major set and the sets hosting its slave, chained; one per CPU \
              when partitioned): QPS-C of Compagnin et al. (Brandenburg & Gül, RTSS 2016); implicit deadlines, U ≤ m",
    backend: Backend::Engine(build_c),
    ..QPS
};

fn build_g(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    if s.dedicated {
        return Err(RunError::Config("qps-g does not use a dedicated CPU".into()));
    }
    // The quasi-partition is built from the servers' budgets (the WCETs unless `budgets`).
    let ts = budget_set(s.ts, s.params)?;
    Ok(Box::new(QpsMech::new("qps-g", &ts, s.tasks, s.m, false, s.rule.clone(), s.t0, s.end)?))
}

fn build_c(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    if s.dedicated {
        return Err(RunError::Config("qps-c does not use a dedicated CPU".into()));
    }
    let ts = budget_set(s.ts, s.params)?;
    Ok(Box::new(QpsMech::new("qps-c", &ts, s.tasks, s.m, true, s.rule.clone(), s.t0, s.end)?))
}

/// QPS's offline phase of `ts` on `m` CPUs, or the policy's refusal as one line.
pub fn quasi_partition(name: &str, ts: &TaskSet, m: usize) -> Result<QuasiPartition, RunError> {
    let m32 = u32::try_from(m).map_err(|_| RunError::Config(format!("{name}: {m} CPUs")))?;
    QuasiPartition::build(ts, m32).map_err(|e| RunError::Config(format!("{name}: {e}")))
}

/// The clusters of a quasi-partition: per cluster, its sets' CPUs (ascending) and tasks
/// (ascending). Sets chained by major → host are one cluster; CPUs without a set are in none.
pub fn clusters(qp: &QuasiPartition) -> Vec<(Vec<usize>, Vec<u32>)> {
    let k = qp.sets.len();
    let mut root: Vec<usize> = (0..k).collect();
    fn find(r: &mut [usize], x: usize) -> usize {
        let mut x = x;
        while r[x] != x {
            r[x] = r[r[x]];
            x = r[x];
        }
        x
    }
    for (s, set) in qp.sets.iter().enumerate() {
        if let Some(mj) = &set.major {
            let (a, b) = (find(&mut root, s), find(&mut root, mj.host));
            root[a.max(b)] = a.min(b);
        }
    }
    let part = qp.partition();
    let mut out: Vec<(usize, Vec<usize>, Vec<u32>)> = Vec::new();
    for (s, set) in qp.sets.iter().enumerate() {
        let r = find(&mut root, s);
        let cpu = set.cpu as usize;
        match out.iter_mut().find(|c| c.0 == r) {
            Some(c) => {
                c.1.push(cpu);
                c.2.extend(part[cpu].iter().copied());
            }
            None => out.push((r, vec![cpu], part[cpu].clone())),
        }
    }
    out.into_iter()
        .map(|(_, mut cpus, mut tasks)| {
            cpus.sort_unstable();
            tasks.sort_unstable();
            (cpus, tasks)
        })
        .collect()
}

struct State {
    qps: Qps,
    /// The cluster's tasks' releases and completions (global task indices).
    book: TaskBook,
    /// Per local task: its next release instant (ns since time zero) the policy has not had,
    /// and the jobs the policy has released.
    next_rel: Vec<Time>,
    released: Vec<u32>,
    /// Per local CPU the job its worker runs; per local task the local CPU its job runs on.
    hand: Handover,
    fault: Option<String>,
}

/// One cluster: its lock, CPUs and tasks (global indices), its release domain and timer.
struct Cluster {
    state: SpinLock<State>,
    cpus: Vec<usize>,
    tasks: Vec<u32>,
    periods: Vec<Time>,
    scale: u128,
    next_rel: CachePadded<AtomicU64>,
    timer: BudgetTimer,
}

/// QPS-G or QPS-C (module docs).
pub struct QpsMech {
    name: &'static str,
    clusters: Vec<Cluster>,
    /// Per global CPU: its cluster and its index there.
    cpu_at: Vec<Option<(usize, usize)>>,
    /// Per global task: its cluster and its index there.
    task_at: Vec<(usize, usize)>,
    t0: u64,
    end: u64,
    n: usize,
}

impl QpsMech {
    /// QPS of `ts` on `m` workers, per cluster (`per_cluster`) or under one lock. Refused with
    /// the offline phase's one line.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: &'static str,
        ts: &TaskSet,
        params: &[TaskParams],
        m: usize,
        per_cluster: bool,
        rule: PriorityRule,
        t0: u64,
        end: u64,
    ) -> Result<QpsMech, RunError> {
        let whole = quasi_partition(name, ts, m)?;
        let groups: Vec<(Vec<usize>, Vec<u32>)> =
            if per_cluster { clusters(&whole) } else { vec![((0..m).collect(), (0..ts.len() as u32).collect())] };
        let mut cpu_at = vec![None; m];
        let mut task_at = vec![(usize::MAX, 0); ts.len()];
        let mut out = Vec::with_capacity(groups.len());
        for (g, (cpus, tasks)) in groups.into_iter().enumerate() {
            let (qp, sub) = if per_cluster {
                let sub = TaskSet::new(tasks.iter().map(|&i| ts[i as usize].clone()).collect())
                    .map_err(|e| RunError::Config(format!("{name}: {e}")))?;
                (quasi_partition(name, &sub, cpus.len())?, sub)
            } else {
                (whole.clone(), ts.clone())
            };
            let scale = qp.scale();
            let qps = Qps::new(qp, &[], false).map_err(|e| RunError::Config(format!("{name}: {e}")))?;
            for (j, &c) in cpus.iter().enumerate() {
                cpu_at[c] = Some((g, j));
            }
            for (j, &i) in tasks.iter().enumerate() {
                task_at[i as usize] = (g, j);
            }
            let subset: Vec<usize> = tasks.iter().map(|&i| i as usize).collect();
            let book = TaskBook::new(params, &subset, rule.clone(), t0, end);
            let first = book.next_due();
            let state = State {
                qps,
                book,
                next_rel: vec![0; tasks.len()],
                released: vec![0; tasks.len()],
                hand: Handover::new(cpus.len(), tasks.len()),
                fault: None,
            };
            out.push(Cluster {
                state: SpinLock::new(g as u32, state),
                periods: sub.iter().map(|t| t.period).collect(),
                tasks,
                scale,
                next_rel: CachePadded::new(AtomicU64::new(first)),
                timer: BudgetTimer::new(cpus[0], t0, end),
                cpus,
            });
        }
        let mech = QpsMech { name, clusters: out, cpu_at, task_at, t0, end, n: ts.len() };
        for cl in &mech.clusters {
            let mut st = cl.state.lock_untraced();
            mech.sync(cl, &mut st, t0, None);
            cl.timer.arm(mech.timer_due(cl, &st));
        }
        Ok(mech)
    }

    /// Brings cluster `cl`'s policy to `now` event by event, then, for `completed` (a local
    /// task whose job completed now), tells the policy the task has no pending job — unless a
    /// job the policy has released for it (at its release instant, whether or not the release
    /// handler has run) is still incomplete — and decides.
    fn sync(&self, cl: &Cluster, st: &mut State, now: u64, completed: Option<usize>) {
        if st.fault.is_some() {
            return;
        }
        let to = now.saturating_sub(self.t0) as u128 * cl.scale;
        let mut k = 0u32;
        // The next event: the policy's, or a release instant of this driver's own that is due
        // (the policy's `next_event` looks only past now, since a sporadic task may let its
        // instant pass; here every task releases periodically, at its instant).
        let next = |st: &State| -> u128 {
            let rel = st.next_rel.iter().map(|&t| (t as u128).saturating_mul(cl.scale)).min().unwrap_or(u128::MAX);
            st.qps.next_event().min(rel.max(st.qps.now()))
        };
        let step = |st: &mut State| -> Result<(), String> {
            let e = next(st);
            st.qps.advance(e).map_err(|v| v.to_string())?;
            if e.is_multiple_of(cl.scale) {
                let t = (e / cl.scale) as Time;
                for j in 0..st.next_rel.len() {
                    if st.next_rel[j] == t {
                        let r = if self.t0.saturating_add(t) < self.end {
                            st.released[j] += 1;
                            st.qps.release(j as u32)
                        } else {
                            st.qps.skip_release(j as u32)
                        };
                        r.map_err(|v| v.to_string())?;
                        st.next_rel[j] = t.saturating_add(cl.periods[j]);
                    }
                }
            }
            st.qps.schedule().map_err(|v| v.to_string())
        };
        while next(st) <= to {
            if k == MAX_EVENTS_PER_CALL {
                st.fault = Some(format!("more than {MAX_EVENTS_PER_CALL} policy events in one callback"));
                return;
            }
            if let Err(e) = step(st) {
                st.fault = Some(e);
                return;
            }
            k += 1;
        }
        if let Some(j) = completed.filter(|&j| st.book.completed()[cl.tasks[j] as usize] >= st.released[j]) {
            let r = st.qps.advance(to.max(st.qps.now())).and_then(|_| st.qps.complete(j as u32));
            if let Err(e) = r.and_then(|_| st.qps.schedule()) {
                st.fault = Some(e.to_string());
            }
        }
    }

    /// The job local CPU `c` should run, with its local task.
    fn wanted(cl: &Cluster, st: &State, c: usize) -> Option<(Job, usize)> {
        let j = st.qps.task_on(c)? as usize;
        st.book.ready_head(cl.tasks[j] as usize).map(|job| (job, j))
    }

    fn available(cl: &Cluster, st: &State, c: usize) -> Option<Job> {
        st.hand.available(c, Self::wanted(cl, st, c))
    }

    /// The cluster's budget timer: its policy's next event before its next release and the end.
    fn timer_due(&self, cl: &Cluster, st: &State) -> u64 {
        cl.timer.due_for(st.qps.next_event(), cl.scale, st.book.next_due())
    }

    fn refresh(&self, ctx: &mut Ctx<'_>, cl: &Cluster, st: &State) {
        st.hand.preempt_stale(ctx, |c| Self::available(cl, st, c), |c| cl.cpus[c]);
        cl.timer.rearm(ctx, self.timer_due(cl, st));
    }

    /// The task each CPU's policy places there now (for tests).
    #[cfg(test)]
    fn tasks_on(&self) -> Vec<Option<u32>> {
        (0..self.cpu_at.len())
            .map(|c| {
                self.cpu_at[c].and_then(|(g, j)| {
                    let cl = &self.clusters[g];
                    cl.state.lock_untraced().qps.task_on(j).map(|l| cl.tasks[l as usize])
                })
            })
            .collect()
    }
}

impl Plugin for QpsMech {
    fn name(&self) -> &'static str {
        self.name
    }
    fn release_domains(&self) -> usize {
        self.clusters.len()
    }
    fn release_domain(&self, thread: usize) -> Option<usize> {
        self.cpu_at.get(thread).copied().flatten().map(|(g, _)| g)
    }
    fn next_release(&self, domain: usize) -> u64 {
        self.clusters[domain].next_rel.load(Ordering::Acquire)
    }
    fn try_claim_release(&self, domain: usize, due: u64) -> bool {
        self.clusters[domain].next_rel.compare_exchange(due, u64::MAX, Ordering::AcqRel, Ordering::Relaxed).is_ok()
    }

    fn release(&self, ctx: &mut Ctx<'_>, domain: usize, now: u64) {
        let cl = &self.clusters[domain];
        let mut g = ctx.lock(&cl.state);
        let st = &mut *g;
        st.book.release_due(now, |j, _| ctx.record_release(&j));
        cl.next_rel.store(st.book.next_due(), Ordering::Release);
        self.sync(cl, st, now, None);
        self.refresh(ctx, cl, st);
    }

    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev, now: u64) -> Option<Job> {
        let Some((gi, c)) = self.cpu_at.get(ctx.cpu()).copied().flatten() else {
            // A CPU without an execution set runs nothing.
            ctx.ack_resched();
            return None;
        };
        let cl = &self.clusters[gi];
        let mut g = ctx.lock(&cl.state);
        let st = &mut *g;
        let mut done = None;
        if let Some(j) = prev.job() {
            let local = self.task_at[j.task() as usize].1;
            st.hand.let_go(c, local);
            if let Prev::Completed(j) = prev {
                st.book.complete(&j);
                done = Some(local);
            }
        }
        self.sync(cl, st, now, done);
        let next = Self::available(cl, st, c);
        st.hand.take(c, next.map(|j| (j, self.task_at[j.task() as usize].1)));
        ctx.ack_resched();
        self.refresh(ctx, cl, st);
        next
    }

    fn uses_timers(&self) -> bool {
        true
    }
    fn next_timer(&self, thread: usize) -> u64 {
        match self.cpu_at.get(thread).copied().flatten() {
            Some((g, 0)) => self.clusters[g].timer.load(),
            _ => u64::MAX,
        }
    }
    fn timer(&self, ctx: &mut Ctx<'_>, now: u64) {
        let Some((gi, 0)) = self.cpu_at.get(ctx.cpu()).copied().flatten() else { return };
        let stamp = ctx.stamp();
        {
            let cl = &self.clusters[gi];
            let mut g = ctx.lock(&cl.state);
            let st = &mut *g;
            self.sync(cl, st, now, None);
            self.refresh(ctx, cl, st);
        }
        ctx.term_since(BUDGET_TIMER, stamp);
    }

    fn accounting(&self) -> Accounting {
        let mut released = vec![0; self.n];
        let mut completed = vec![0; self.n];
        let mut consistent = Ok(());
        for cl in &self.clusters {
            let st = cl.state.lock_untraced();
            if let (Some(f), true) = (&st.fault, consistent.is_ok()) {
                consistent = Err(format!("{}: {f}", self.name));
            }
            for &t in &cl.tasks {
                released[t as usize] = st.book.released()[t as usize];
                completed[t as usize] = st.book.completed()[t as usize];
            }
            let mut seen = vec![false; cl.tasks.len()];
            for j in st.hand.scheduled.iter().flatten() {
                let local = self.task_at[j.task() as usize].1;
                if consistent.is_ok() && std::mem::replace(&mut seen[local], true) {
                    consistent = Err(format!("{}: task {} scheduled on two CPUs", self.name, j.task()));
                }
            }
        }
        Accounting { released, completed, consistent: consistent.map_err(crate::Inconsistency) }
    }
}

#[cfg(test)]
mod tests;
