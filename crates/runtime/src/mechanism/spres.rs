//! SP-RES on real threads: semi-partitioned reservations (Brandenburg & Gül, "Global
//! Scheduling Not Required", RTSS 2016, §III-A, §IV-A and §VII), executing a reservation
//! placement (`rtsched partition --heuristic spres --json`).
//!
//! **The policy decides.** Each CPU's state holds that CPU's [`SpresCpu`] — the per-CPU
//! SP-RES rules of `rtsched_policy::spres`, the same the simulator drives: EDF over polling
//! reservations, hard and soft reservations (depleted soft ones served in background
//! round-robin, every `rr_quantum`), CASH slack reclamation, windows of split and
//! period-transformed tasks in the flipped C=D order. The mechanism only calls the rules at
//! every event, under the CPU's lock, and moves jobs between CPUs:
//!
//! * **releases**: each CPU is the release domain of the tasks whose first part it holds
//!   (`TaskBook`); a released job enters its first part's reservation, anchored at its due
//!   time (a backlogged job, when its predecessor completes, at that instant);
//! * **one timer per CPU** (the plugin timer): the next instant the rules name — the budget
//!   (or CASH slack) of the served reservation running out (*budget enforcement*), a window
//!   boundary of a held job, a slack deadline, the end of a round-robin quantum. A timer that
//!   moves a job to a part on another CPU is the **migration timer** of §VII (traced as
//!   `migration_timer`), the others `budget_enforcement`;
//! * **migration** (§IV-A, Fig. 8): the source CPU's rules release the job at its window's
//!   end; if the source worker is running it, the job is handed over only when that worker has
//!   stopped it (in its `schedule`, which is what plugin contract 2 asks), else at once. The
//!   hand-over appends it to the target's inbox under the target's lock and notifies the
//!   target ("IPI"); the target activates it in its part's reservation in `notified` (traced
//!   as `subtask_activation`). A job that completes in its first window — helped by its soft
//!   reservation's background service and CASH slack — never migrates (§IV-A);
//! * **completion** on any CPU turns the reservation inactive (CASH: its unused budget
//!   becomes slack there) and completes the job in its home CPU's book, which activates the
//!   task's next backlogged job.
//!
//! No thread ever holds two CPU locks.
//!
//! **Budgets are charged by execution** ([`Charging::Execution`]), as LITMUS^RT's P-RES
//! charges a reservation only while its client runs: a CPU's budget (or CASH slack) is drained
//! from the end of the `schedule` that dispatched the job to the entry of the next callback
//! its worker runs (`release` of its domain, `timer`, `notified`, `schedule`: each takes the
//! CPU's lock, charges up to its entry stamp with [`SpresCpu::pause`] and restarts charging at
//! its exit with [`SpresCpu::resume`], re-arming the timer from there). So the scheduler's,
//! the release handler's and the timers' time is nobody's budget, and the job whose worker
//! is still running it when another CPU changes the decision is charged, not the reservation
//! just chosen. A hard reservation's job that runs past its budget (until the worker's next
//! poll notices the budget timer) *overruns*: every overrun is traced as a `budget_overrun`
//! sample when it ends, and the timer's lateness as `enforcement_latency` (from the instant
//! the CPU's timer was due to the first callback of that CPU that handles it), so that
//! `budget_overrun ≤ enforcement_latency` can be checked on every run (the overrun oracle,
//! `tests/spres_runtime.rs`).

use crate::mechanism::registry::{
    self, Backend, DedicatedCpu, Entry, InvariantKind, ParamDecl, ParamKind, ParamSet, PlacementKind, Setup, TermSpec,
};
use crate::mechanism::{Accounting, Ctx, Effects, Job, Plugin, Prev, TaskParams};
use crate::queue::release::TaskBook;
use crate::sync::SpinLock;
use crate::RunError;
use crossbeam_utils::CachePadded;
use rtsched_policy::spres::{Background, Charging, Departure, Rules, SpresCpu, Suspension};
use rtsched_model::Placement;
use rtsched_policy::PriorityRule;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Term ids (indices into [`SPRES`]`.terms`).
const MIGRATION_TIMER: u32 = 0;
const SUBTASK_ACTIVATION: u32 = 1;
const BUDGET_ENFORCEMENT: u32 = 2;
const BUDGET_OVERRUN: u32 = 3;
const ENFORCEMENT_LATENCY: u32 = 4;

crate::mechanism_params! {
    /// SP-RES's parameters ([`SPRES`]`.params` is derived from these).
    pub struct SpresParams {
        cash: bool = ParamDecl {
            kind: ParamKind::Bool,
            default: "true",
            help: "CASH slack reclamation (Caccamo et al., RTSS 2000), as SP-RES runs it",
        },
        soft: bool = ParamDecl {
            kind: ParamKind::Bool,
            default: "false",
            help: "unsplit tasks in soft reservations too (split tasks always are)",
        },
        rr_quantum: u64 = ParamDecl {
            kind: ParamKind::Duration,
            default: "1ms",
            help: "round-robin quantum of depleted soft reservations in background",
        },
        background: &'static str = ParamDecl {
            kind: ParamKind::Choice(&Background::NAMES),
            default: "round-robin",
            help: "depleted soft reservations in background: round-robin every rr_quantum (the paper's, RTSS 2016 \
                   §III-A) or earliest-end (earliest window end first); the simulator's --background is the same",
        },
        enforcement: bool = ParamDecl {
            kind: ParamKind::Bool,
            default: "true",
            help: "budget timers for hard reservations; false only to show what the overrun oracle catches",
        },
        suspension: &'static str = ParamDecl {
            kind: ParamKind::Choice(&Suspension::NAMES),
            default: "keep",
            help: "a self-suspending job's budget while suspended: keep (charged only while it executes) or donate \
                   (CASH slack, what is left regained at the wake-up: RTSS 2016 §VIII; needs cash); the simulator's \
                   suspension is the same",
        },
    }
}

/// SP-RES.
pub static SPRES: Entry = Entry {
    name: "spres",
    summary: "semi-partitioned reservations: per-CPU EDF over polling reservations with budget timers, CASH, \
              migrating split tasks by migration timer and remote activation (Brandenburg & Gül, RTSS 2016)",
    params: SpresParams::SPECS,
    placement: PlacementKind::Reservations,
    parallel: false,
    dedicated: DedicatedCpu::None,
    dedicated_role: "",
    terms: &[
        TermSpec {
            name: "migration_timer",
            symbol: "",
            help: "migration timer on the source CPU: budget charge, the job leaves, hand-over",
            tracking: true, count: false,
        },
        TermSpec {
            name: "subtask_activation",
            symbol: "",
            help: "activation of a migrating job's next part on the target CPU (notification to done)",
            tracking: true, count: false,
        },
        TermSpec {
            name: "budget_enforcement",
            symbol: "",
            help: "budget timer: charge, depletion, window boundaries, the new choice",
            tracking: true, count: false,
        },
        TermSpec {
            name: "budget_overrun",
            symbol: "",
            help: "execution a hard reservation received after its budget ran out (one sample per overrun)",
            tracking: false, count: false,
        },
        TermSpec {
            name: "enforcement_latency",
            symbol: "",
            help: "a CPU's timer (budget, window, quantum) from its due instant to the callback that handles it",
            tracking: false, count: false,
        },
    ],
    invariant: InvariantKind::Unobservable(
        "SP-RES serves reservations by budget and window, not jobs by priority (checked by its budget oracle)",
    ),
    priority: registry::edf,
    user_jobs: true,
    suspends: true,
    backend: Backend::Engine(build),
};

fn build(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    // The placement was checked for this task set (`Mechanism::validate`, before any build).
    let whole;
    let placement = match (s.reservations, s.partition) {
        (Some(p), _) => p,
        (None, Some(part)) => {
            whole = Placement::whole(s.ts, part)
                .ok_or_else(|| RunError::Config("spres: the partition does not place every task once".into()))?;
            &whole
        }
        (None, None) => return Err(RunError::Config("spres needs a reservation placement".into())),
    };
    if placement.m as usize != s.m {
        return Err(RunError::Config(format!("the placement is for m = {} but the run has {} CPUs", placement.m, s.m)));
    }
    let p = SpresParams::from_params(s.params)?;
    let rules = Rules {
        soft_unsplit: p.soft,
        cash: p.cash,
        background: Background::parse(p.background, p.rr_quantum).map_err(|e| RunError::Config(format!("spres: {e}")))?,
        charging: Charging::Execution,
        suspension: Suspension::parse(p.suspension, p.cash).map_err(|e| RunError::Config(format!("spres: {e}")))?,
    };
    let mut mech = SpresMech::new(s.tasks, placement, rules, s.rule.clone(), s.t0, s.end);
    mech.enforce = p.enforcement;
    Ok(Box::new(mech))
}

struct CpuState {
    /// Releases of the tasks whose first part is here (their home).
    book: TaskBook,
    /// This CPU's SP-RES rules.
    rules: SpresCpu,
    /// What the worker runs (set by its `schedule`).
    scheduled: Option<Job>,
    /// Jobs that left this CPU while its worker ran them: handed over by its next `schedule`.
    outgoing: Vec<Departure>,
    /// Jobs handed to this CPU, activated by its `notified`.
    inbox: Vec<Departure>,
    home_tasks: Vec<usize>,
    /// A rule refused an operation (a mechanism bug): the first one, for the accounting.
    fault: Option<String>,
}

/// The SP-RES mechanism.
pub struct SpresMech {
    cpus: Vec<CachePadded<SpinLock<CpuState>>>,
    next_rel: Vec<CachePadded<AtomicU64>>,
    next_timer: Vec<CachePadded<AtomicU64>>,
    /// Per task: the CPU of its first part.
    home: Vec<u32>,
    n: usize,
    /// Budget timers armed (false: the overrun oracle's broken twin).
    enforce: bool,
    /// Callbacks restart charging at the clock's time on exit (false: at the callback's `now`,
    /// for the virtual-time property test).
    real_clock: bool,
    /// Per task: its current job is blocked (self-suspended) and has not woken. Written under
    /// the lock of the CPU that blocks it (true) and by `wake` before it searches the CPUs
    /// (false); read by a CPU that activates a job handed over suspended (module docs).
    blocked: Vec<AtomicBool>,
}

impl SpresMech {
    /// SP-RES over `placement` (checked for these tasks: `Placement::check_runnable`) with
    /// `rules`.
    pub fn new(
        params: &[TaskParams],
        placement: &Placement,
        rules: Rules,
        rule: PriorityRule,
        t0: u64,
        end: u64,
    ) -> SpresMech {
        let parts = Arc::new(placement.parts_by_task(params.len()));
        let home: Vec<u32> = parts.iter().map(|p| p[0].cpu).collect();
        let m = placement.m as usize;
        let cpus: Vec<_> = (0..m)
            .map(|c| {
                let home_tasks: Vec<usize> = (0..home.len()).filter(|&t| home[t] as usize == c).collect();
                CachePadded::new(SpinLock::new(
                    c as u32,
                    CpuState {
                        book: TaskBook::new(params, &home_tasks, rule.clone(), t0, end),
                        rules: SpresCpu::new(c as u32, parts.clone(), rules),
                        scheduled: None,
                        outgoing: Vec::new(),
                        inbox: Vec::new(),
                        home_tasks,
                        fault: None,
                    },
                ))
            })
            .collect();
        let next_rel =
            cpus.iter().map(|s| CachePadded::new(AtomicU64::new(s.lock_untraced().book.next_due()))).collect();
        let next_timer = (0..m).map(|_| CachePadded::new(AtomicU64::new(u64::MAX))).collect();
        let blocked = (0..params.len()).map(|_| AtomicBool::new(false)).collect();
        SpresMech { cpus, next_rel, next_timer, home, n: params.len(), enforce: true, real_clock: true, blocked }
    }

    /// What CPU `c`'s rules serve now, as a job.
    fn wanted(st: &CpuState) -> Option<Job> {
        st.rules.served().map(|(task, h, _)| st.book.job(task, h.seq))
    }

    /// After a change to CPU `c`'s state at `now` (its service charged up to `now`): expires
    /// slack, lets jobs whose window moved leave (to `out`, or to `outgoing` while `c`'s worker
    /// runs one outside its `schedule`), decides, re-arms the timer and asks the worker to
    /// reschedule if the decision changed.
    fn refresh(&self, ctx: &mut Ctx<'_>, c: usize, st: &mut CpuState, now: u64, in_schedule: bool, out: &mut Vec<Departure>) {
        st.rules.expire(now);
        let mut deps = Vec::new();
        // A job arriving at a part is located there at `now`: one more round finds nothing.
        for _ in 0..4 {
            deps.clear();
            st.rules.departures(now, &mut deps);
            if deps.is_empty() {
                break;
            }
            for d in &deps {
                if d.cpu as usize == c {
                    if !st.rules.arrive(&self.arriving(d)) {
                        st.fault.get_or_insert_with(|| format!("CPU {c}: part {} of task {} is taken", d.part, d.task));
                    }
                } else if !in_schedule && st.scheduled.is_some_and(|j| j.task() == d.task && j.seq() == d.seq) {
                    st.outgoing.push(*d);
                } else {
                    out.push(*d);
                }
            }
        }
        st.rules.decide(now);
        self.next_timer[c].store(st.rules.next_event_with(now, self.enforce), Ordering::Release);
        if Self::wanted(st) != st.scheduled {
            ctx.preempt(c);
        } else if c != ctx.cpu() {
            // Its timer may have moved earlier (plugin contract 3).
            ctx.notify(c);
        }
    }

    /// CPU `c`'s worker enters a callback at `now` (under `c`'s lock): charging stops there
    /// (charged up to `now`), and the timer's lateness is traced if it was due.
    fn enter(&self, ctx: &mut Ctx<'_>, c: usize, st: &mut CpuState, now: u64) {
        let due = self.next_timer[c].load(Ordering::Acquire);
        if due <= now {
            let at = if self.real_clock { crate::clock::monotonic_ns().max(now) } else { now };
            ctx.term_value(ENFORCEMENT_LATENCY, at - due);
        }
        st.rules.pause(now);
    }

    /// CPU `c`'s worker leaves its callback (under `c`'s lock, after `refresh`): charging
    /// restarts now and the timer is re-armed from now; overruns that ended are traced.
    fn leave(&self, ctx: &mut Ctx<'_>, c: usize, st: &mut CpuState, now: u64) {
        let t = if self.real_clock { crate::clock::monotonic_ns().max(now) } else { now };
        // A worker asked to reschedule goes to `schedule` without executing its job again:
        // charging stays off until that `schedule` dispatches.
        if Self::wanted(st) == st.scheduled {
            // The worker goes on executing the job it ran, and the rules may now serve that job
            // from another of its reservations here (a split task's next part on this CPU, or
            // its next period's first part when a late job carries over): the execution is
            // charged to what they serve from now. Without this, the new reservation was never
            // charged (no `schedule` call dispatches an unchanged job) and overran its budget.
            st.rules.dispatch();
            st.rules.resume(t);
        }
        self.next_timer[c].store(st.rules.next_event_with(t, self.enforce), Ordering::Release);
        Self::trace_overruns(ctx, st);
    }

    fn trace_overruns(ctx: &mut Ctx<'_>, st: &mut CpuState) {
        for (_, o) in st.rules.take_overruns() {
            ctx.term_value(BUDGET_OVERRUN, o);
        }
    }

    /// Hands departed jobs to their targets' inboxes and notifies the targets.
    fn hand_over(&self, ctx: &mut Ctx<'_>, out: &mut Vec<Departure>) {
        for d in out.drain(..) {
            let t = d.cpu as usize;
            self.cpus[t].lock(ctx.trace()).inbox.push(d);
            ctx.notify(t);
        }
    }

    /// Job `j` completed at `now` on another CPU: its home book counts it and activates the
    /// task's next backlogged job.
    fn complete_at_home(&self, ctx: &mut Ctx<'_>, j: &Job, now: u64, out: &mut Vec<Departure>) {
        let h = self.home[j.task() as usize] as usize;
        let mut g = self.cpus[h].lock(ctx.trace());
        let st = &mut *g;
        // CPU h's worker goes on executing: charged up to now, not paused.
        st.rules.advance(now);
        if let Some(next) = st.book.complete(j) {
            Self::activate_first(st, h, &next, now);
        }
        self.refresh(ctx, h, st, now, false, out);
        Self::trace_overruns(ctx, st);
    }

    /// A job handed over arrives: suspended only if it left suspended and has not woken since
    /// (its `wake` found it nowhere while it was in transit).
    fn arriving(&self, d: &Departure) -> Departure {
        let mut d = *d;
        if d.suspended && !self.blocked[d.task as usize].load(Ordering::Acquire) {
            d.suspended = false;
        }
        d
    }

    fn activate_first(st: &mut CpuState, c: usize, j: &Job, base: u64) {
        if !st.rules.activate(j.task(), 0, j.seq(), base) {
            st.fault.get_or_insert_with(|| format!("CPU {c}: task {} already holds a job", j.task()));
        }
    }

    /// The jobs each CPU holds (rules, outgoing, inbox): for tests and the accounting.
    pub fn held(&self) -> Vec<Vec<(u32, u32)>> {
        self.cpus
            .iter()
            .map(|s| {
                let st = s.lock_untraced();
                let mut v: Vec<(u32, u32)> = st.rules.held().map(|(t, _, h)| (t, h.seq)).collect();
                v.extend(st.outgoing.iter().chain(&st.inbox).map(|d| (d.task, d.seq)));
                v
            })
            .collect()
    }
}

impl Plugin for SpresMech {
    fn name(&self) -> &'static str {
        "spres"
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
    fn uses_timers(&self) -> bool {
        true
    }
    fn next_timer(&self, thread: usize) -> u64 {
        self.next_timer.get(thread).map_or(u64::MAX, |t| t.load(Ordering::Acquire))
    }

    fn release(&self, ctx: &mut Ctx<'_>, domain: usize, now: u64) {
        let mut out = Vec::new();
        {
            let mut g = self.cpus[domain].lock(ctx.trace());
            let st = &mut *g;
            // The domain is polled by worker `domain` only (`release_domain`): its own callback.
            self.enter(ctx, domain, st, now);
            let mut ready = Vec::new();
            st.book.release_due(now, |j, is_ready| {
                ctx.record_release(&j);
                if is_ready {
                    ready.push(j);
                }
            });
            for j in &ready {
                Self::activate_first(st, domain, j, j.release);
            }
            self.next_rel[domain].store(st.book.next_due(), Ordering::Release);
            self.refresh(ctx, domain, st, now, false, &mut out);
            self.leave(ctx, domain, st, now);
        }
        self.hand_over(ctx, &mut out);
    }

    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev, now: u64) -> Option<Job> {
        let c = ctx.cpu();
        let mut out = Vec::new();
        let mut done_elsewhere = None;
        let next = {
            let mut g = self.cpus[c].lock(ctx.trace());
            let st = &mut *g;
            self.enter(ctx, c, st, now);
            if let Prev::Blocked(j) = prev {
                // The block (module docs): the job leaves its reservation, held here or in
                // `outgoing` (it left while it ran) and handed over suspended.
                self.blocked[j.task() as usize].store(true, Ordering::Release);
                if !st.rules.suspend(j.task(), now) {
                    match st.outgoing.iter_mut().find(|d| d.task == j.task() && d.seq == j.seq()) {
                        Some(d) => d.suspended = true,
                        None => {
                            st.fault.get_or_insert_with(|| format!("CPU {c}: blocked job {j:?} is not held here"));
                        }
                    }
                }
            }
            if let Prev::Completed(j) = prev {
                // Held here, or it left while it ran (then it never reaches the target).
                if st.rules.complete(j.task(), now).is_none() {
                    st.outgoing.retain(|d| !(d.task == j.task() && d.seq == j.seq()));
                }
                if self.home[j.task() as usize] as usize == c {
                    if let Some(nx) = st.book.complete(&j) {
                        Self::activate_first(st, c, &nx, nx.release.max(now));
                    }
                } else {
                    done_elsewhere = Some(j);
                }
            }
            // The worker runs nothing now: jobs that left while it ran them go.
            out.append(&mut st.outgoing);
            st.scheduled = None;
            self.refresh(ctx, c, st, now, true, &mut out);
            st.scheduled = Self::wanted(st);
            // The worker executes what the rules serve from the end of this callback.
            st.rules.dispatch();
            self.leave(ctx, c, st, now);
            ctx.ack_resched();
            st.scheduled
        };
        if let Some(j) = done_elsewhere {
            self.complete_at_home(ctx, &j, now, &mut out);
        }
        self.hand_over(ctx, &mut out);
        next
    }

    fn timer(&self, ctx: &mut Ctx<'_>, now: u64) {
        let c = ctx.cpu();
        let stamp = ctx.stamp();
        let mut out = Vec::new();
        let migrated = {
            let mut g = self.cpus[c].lock(ctx.trace());
            let st = &mut *g;
            self.enter(ctx, c, st, now);
            let before = st.outgoing.len();
            self.refresh(ctx, c, st, now, false, &mut out);
            self.leave(ctx, c, st, now);
            st.outgoing.len() > before
        };
        let migrated = migrated || !out.is_empty();
        self.hand_over(ctx, &mut out);
        ctx.term_since(if migrated { MIGRATION_TIMER } else { BUDGET_ENFORCEMENT }, stamp);
    }
    fn notified(&self, ctx: &mut Ctx<'_>, now: u64) {
        let c = ctx.cpu();
        if c >= self.cpus.len() {
            return;
        }
        let stamp = ctx.stamp();
        let mut out = Vec::new();
        let arrived = {
            let mut g = self.cpus[c].lock(ctx.trace());
            let st = &mut *g;
            self.enter(ctx, c, st, now);
            let inbox = std::mem::take(&mut st.inbox);
            for d in &inbox {
                if !st.rules.arrive(&self.arriving(d)) {
                    st.fault.get_or_insert_with(|| format!("CPU {c}: part {} of task {} is taken", d.part, d.task));
                }
            }
            self.refresh(ctx, c, st, now, false, &mut out);
            self.leave(ctx, c, st, now);
            !inbox.is_empty()
        };
        self.hand_over(ctx, &mut out);
        if arrived {
            ctx.term_since(SUBTASK_ACTIVATION, stamp);
        }
    }

    /// The wake-up (plugin contract rule 6): the job re-enters the reservation that holds it
    /// with the budget it kept (`suspension=keep`) or whatever is left of the slack it lent at
    /// its block (`suspension=donate`, Brandenburg & Gül, RTSS 2016, §VIII "Self
    /// suspensions"), the replenishment rule unchanged (`SpresCpu::wake`); the CPU holding it
    /// decides again and its worker is
    /// asked to reschedule if the choice changed. Any thread: `blocked` is cleared first, then
    /// each CPU is searched under its own lock (never two at once). A job in transit between
    /// CPUs (handed over at a window boundary while suspended) is found by none of them; the
    /// CPU that activates it reads `blocked` after taking its lock, which this call's store
    /// happens-before once this call has taken and released that lock too, so it activates
    /// the job ready — and if it activated it before, this call finds it there, suspended.
    fn wake(&self, ctx: &mut Ctx<'_>, job: Job, now: u64) {
        let t = job.task();
        self.blocked[t as usize].store(false, Ordering::Release);
        let mut out = Vec::new();
        for c in 0..self.cpus.len() {
            let mut g = self.cpus[c].lock(ctx.trace());
            let st = &mut *g;
            if !st.rules.is_suspended(t) {
                continue;
            }
            if c == ctx.cpu() {
                // This CPU's own worker: a callback of its own, not charged.
                self.enter(ctx, c, st, now);
                st.rules.wake(t, now);
                self.refresh(ctx, c, st, now, false, &mut out);
                self.leave(ctx, c, st, now);
            } else {
                // CPU c's worker goes on executing: charged up to now, not paused.
                st.rules.advance(now);
                st.rules.wake(t, now);
                self.refresh(ctx, c, st, now, false, &mut out);
                Self::trace_overruns(ctx, st);
            }
            break;
        }
        self.hand_over(ctx, &mut out);
    }

    fn accounting(&self) -> Accounting {
        let mut released = vec![0; self.n];
        let mut completed = vec![0; self.n];
        let mut consistent = Ok(());
        let held = self.held();
        let mut seen: Vec<Option<(u32, usize)>> = vec![None; self.n];
        for (c, jobs) in held.iter().enumerate() {
            for &(t, seq) in jobs {
                if let Some((s0, c0)) = seen[t as usize] {
                    if consistent.is_ok() {
                        consistent = Err(format!("spres: task {t} held twice (job {s0} on CPU {c0}, job {seq} on CPU {c})"));
                    }
                }
                seen[t as usize] = Some((seq, c));
            }
        }
        for (c, s) in self.cpus.iter().enumerate() {
            let st = s.lock_untraced();
            if let (Some(f), true) = (&st.fault, consistent.is_ok()) {
                consistent = Err(format!("spres: {f}"));
            }
            for &t in &st.home_tasks {
                released[t] = st.book.released()[t];
                completed[t] = st.book.completed()[t];
                // Every pending task's head job is held somewhere, and no other job is.
                let head = st.book.head(t).map(|j| j.seq());
                let at = seen[t].map(|(seq, _)| seq);
                if consistent.is_ok() && head != at {
                    consistent = Err(format!("spres: task {t} (home CPU {c}) has head job {head:?} but holds {at:?}"));
                }
            }
        }
        Accounting { released, completed, consistent: consistent.map_err(crate::Inconsistency) }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod overrun_tests;
