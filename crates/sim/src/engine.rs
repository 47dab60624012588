//! The event loop. One instant at a time: completions, deadline checks (trace only),
//! releases, quantum ticks, then dispatch (linked → scheduled), then optional invariant
//! checks. Time never advances by less than one event.

use crate::overheads::Overheads;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::{ModelError, TaskSet, Time, MAX_TIME};
use rtsched_policy::{invariant, FpOrder, Gedf, GedfQuantum, Partitioned, Policy, Prio, PriorityRule};
use rtsched_trace::metrics::OverheadStats;
use rtsched_trace::{
    Event, JobId, JobStats, Metrics, MetricsBuilder, OverheadKind, Record, TaskStats, Trace, TraceMeta,
};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Most CPUs a simulation accepts (memory is O(m)).
pub const MAX_CPUS: u32 = 1 << 16;

/// Which policy to simulate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scheduler {
    /// Event-driven global EDF (link-based).
    Gedf,
    /// Quantum-driven global EDF; `staggered`: CPU `p` ticks at `k·Q + ⌊p·Q/m⌋`, else all at `k·Q`.
    GedfQuantum { quantum: Time, staggered: bool },
    /// Partitioned EDF: `partition[cpu]` lists the task indices of each CPU (length m).
    Pedf(Vec<Vec<usize>>),
    /// Partitioned fixed priority with rate- or deadline-monotonic priorities (ties by index).
    Pfp(Vec<Vec<usize>>, FpOrder),
    /// Semi-partitioned reservations executing a placement (seed 004).
    Spres(crate::spres::SpresConfig),
    /// RTWS (seed 003) with each task one sequential region; fork-join sets: `rtws::simulate_rtws`.
    Rtws,
}

impl Scheduler {
    pub fn name(&self) -> String {
        match self {
            Scheduler::Gedf => "G-EDF".into(),
            Scheduler::GedfQuantum { quantum, staggered } => {
                format!(
                    "G-EDF quantum {} {}",
                    rtsched_model::time::format_duration(*quantum),
                    if *staggered { "staggered" } else { "aligned" }
                )
            }
            Scheduler::Pedf(_) => "P-EDF".into(),
            Scheduler::Pfp(_, FpOrder::RateMonotonic) => "P-FP (RM)".into(),
            Scheduler::Pfp(_, FpOrder::DeadlineMonotonic) => "P-FP (DM)".into(),
            Scheduler::Spres(c) => format!("SP-RES ({})", c.placement.heuristic),
            Scheduler::Rtws => "RTWS".into(),
        }
    }
}

/// How jobs arrive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arrivals {
    /// Strictly periodic; `offsets[i]` is task i's first release (empty = all at 0).
    Periodic { offsets: Vec<Time> },
    /// Sporadic: first release at 0, then each gap is the period plus an integer delay drawn
    /// uniformly from `[0, max_extra_delay]` (ChaCha8 seeded with `seed`).
    Sporadic { max_extra_delay: Time, seed: u64 },
}

/// Actual execution times.
#[derive(Debug, Clone, PartialEq)]
pub enum ExecTimes {
    /// Every job executes for its task's WCET.
    Wcet,
    /// `⌈C · f⌉` ns (at least 1, at most C) with `f` uniform in `[lo, 1]` (ChaCha8, `seed`).
    UniformFraction { lo: f64, seed: u64 },
    /// `Fixed[i]` ns for every job of task i (`1 ≤ Fixed[i] ≤ C_i`).
    Fixed(Vec<Time>),
}

/// Simulation parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    pub m: u32,
    /// End of the simulation; `None` = one hyperperiod (plus the largest offset).
    pub horizon: Option<Time>,
    /// The horizon never exceeds this; when it would, the result says so.
    pub horizon_cap: Time,
    pub arrivals: Arrivals,
    pub exec: ExecTimes,
    /// Keep the trace records in the result (they cost 32 bytes each).
    pub record_trace: bool,
    /// Check the scheduling invariant after every instant (slow; for tests and debugging).
    pub check_invariants: bool,
    /// Refuse simulations that would release more jobs than this (memory bound).
    pub max_jobs: u64,
    /// Overheads to inject (docs/simulator.md, "Overhead injection"); `None` = an ideal
    /// system. `Some(Overheads::ZERO)` runs the overhead-aware engine with nothing to charge
    /// (the same schedule as `None`).
    pub overheads: Option<Overheads>,
}

impl SimConfig {
    /// Synchronous periodic arrivals, WCET execution, one hyperperiod capped at 1000 s, no
    /// trace, no checks, at most 50 million jobs.
    pub fn new(m: u32) -> SimConfig {
        SimConfig {
            m,
            horizon: None,
            horizon_cap: 1_000_000_000_000,
            arrivals: Arrivals::Periodic { offsets: Vec::new() },
            exec: ExecTimes::Wcet,
            record_trace: false,
            check_invariants: false,
            max_jobs: 50_000_000,
            overheads: None,
        }
    }
}

/// What a simulation measured (every number from `rtsched_trace::Metrics`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimResult {
    pub scheduler: String,
    pub m: u32,
    pub horizon: Time,
    pub horizon_capped: bool,
    /// Why the horizon was capped, when it was.
    pub horizon_message: Option<String>,
    /// Jobs released in `[0, horizon)`.
    pub jobs: u64,
    pub completed: u64,
    pub pending: u64,
    pub deadline_misses: u64,
    pub max_tardiness_ns: Time,
    pub max_response_time_ns: Option<Time>,
    pub preemptions: u64,
    pub migrations: u64,
    pub context_switches: u64,
    /// Scheduling events processed: releases, completions, quantum ticks (per CPU tick for
    /// staggered quanta, one per boundary for aligned).
    pub events: u64,
    pub per_task: Vec<TaskStats>,
    /// The overheads injected and what they cost, when `SimConfig::overheads` was set.
    pub overheads: Option<OverheadReport>,
    #[serde(skip)]
    pub per_job: Vec<JobStats>,
    #[serde(skip)]
    pub trace: Option<Trace>,
}

/// The values a simulation charged and the totals of the `Overhead` records it emitted up to
/// the horizon (counted by `MetricsBuilder`, like every metric).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverheadReport {
    pub values: Overheads,
    /// Per kind: release, schedule, context_switch, tick (CPU time) and ipi (latency).
    pub charged: Vec<OverheadStats>,
    /// CPU time charged: release + schedule + context_switch + tick.
    pub cpu_time_ns: u128,
}

impl OverheadReport {
    fn new(values: Overheads, all: &[OverheadStats]) -> OverheadReport {
        use OverheadKind::*;
        let charged: Vec<OverheadStats> = [Release, Schedule, ContextSwitch, Tick, Ipi]
            .iter()
            .filter_map(|k| all.iter().find(|s| s.kind == *k).copied())
            .collect();
        let cpu_time_ns = charged.iter().filter(|s| s.kind != Ipi).map(|s| s.total_ns).sum();
        OverheadReport { values, charged, cpu_time_ns }
    }
}

impl SimResult {
    pub(crate) fn from_metrics(
        sched: &Scheduler,
        m: Metrics,
        capped: Option<String>,
        events: u64,
        trace: Option<Trace>,
    ) -> SimResult {
        SimResult::from_metrics_ovh(sched, m, capped, events, trace, None)
    }

    pub(crate) fn from_metrics_ovh(
        sched: &Scheduler,
        m: Metrics,
        capped: Option<String>,
        events: u64,
        trace: Option<Trace>,
        ovh: Option<Overheads>,
    ) -> SimResult {
        SimResult {
            overheads: ovh.map(|v| OverheadReport::new(v, &m.overheads)),
            scheduler: sched.name(),
            m: m.m,
            horizon: m.horizon,
            horizon_capped: capped.is_some(),
            horizon_message: capped,
            jobs: m.jobs,
            completed: m.completed,
            pending: m.pending,
            deadline_misses: m.deadline_misses,
            max_tardiness_ns: m.max_tardiness_ns,
            max_response_time_ns: m.max_response_time_ns,
            preemptions: m.preemptions,
            migrations: m.migrations,
            context_switches: m.context_switches,
            events,
            per_task: m.per_task,
            per_job: m.per_job,
            trace,
        }
    }

    /// Per-job CSV (the columns of `Trace::to_job_csv`), available without keeping the trace.
    pub fn to_job_csv(&self) -> String {
        rtsched_trace::export::job_rows_csv(&self.per_job, self.horizon)
    }

    /// The summary (everything but per-job rows and the trace) as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("SimResult serialises")
    }
}

pub(crate) const NONE: u32 = u32::MAX;

/// Seeded draws of inter-arrival gaps and execution times (shared by all engines).
pub(crate) struct Draw {
    arr_rng: ChaCha8Rng,
    exec_rng: ChaCha8Rng,
}

impl Draw {
    pub(crate) fn new(cfg: &SimConfig) -> Draw {
        let arr = match cfg.arrivals {
            Arrivals::Sporadic { seed, .. } => seed,
            _ => 0,
        };
        let exec = match cfg.exec {
            ExecTimes::UniformFraction { seed, .. } => seed,
            _ => 0,
        };
        Draw { arr_rng: ChaCha8Rng::seed_from_u64(arr), exec_rng: ChaCha8Rng::seed_from_u64(exec) }
    }
    #[inline]
    pub(crate) fn exec(&mut self, exec: &ExecTimes, task: usize, wcet: Time) -> Time {
        match exec {
            ExecTimes::Wcet => wcet,
            ExecTimes::UniformFraction { lo, .. } => {
                let u: f64 = self.exec_rng.random();
                let f = lo + (1.0 - lo) * u;
                ((wcet as f64 * f).ceil() as Time).clamp(1, wcet)
            }
            ExecTimes::Fixed(v) => v.get(task).copied().unwrap_or(wcet).clamp(1, wcet),
        }
    }
    #[inline]
    pub(crate) fn gap(&mut self, arrivals: &Arrivals, period: Time) -> Time {
        match arrivals {
            Arrivals::Periodic { .. } => period,
            Arrivals::Sporadic { max_extra_delay, .. } => period + self.arr_rng.random_range(0..=*max_extra_delay),
        }
    }
}

/// Validated common parameters: first releases, horizon, why it was capped, jobs expected.
pub(crate) struct Setup {
    pub(crate) offsets: Vec<Time>,
    pub(crate) horizon: Time,
    pub(crate) capped: Option<String>,
    pub(crate) expected: u64,
}

pub(crate) fn setup(ts: &TaskSet, cfg: &SimConfig) -> Result<Setup, ModelError> {
    let m = cfg.m;
    if m == 0 || m > MAX_CPUS {
        return Err(ModelError::field("m", format!("must be in 1..={MAX_CPUS}, got {m}")));
    }
    let n = ts.len();
    if cfg.horizon_cap == 0 || cfg.horizon_cap > 1 << 60 {
        return Err(ModelError::field("horizon_cap", "must be in 1..=2^60 ns"));
    }
    let offsets: Vec<Time> = match &cfg.arrivals {
        Arrivals::Periodic { offsets } if offsets.is_empty() => vec![0; n],
        Arrivals::Periodic { offsets } => {
            if offsets.len() != n {
                return Err(ModelError::field("offsets", format!("{} offsets for {n} tasks", offsets.len())));
            }
            if let Some(i) = offsets.iter().position(|&o| o > MAX_TIME) {
                return Err(ModelError::task_field(i, "offset", format!("exceeds {MAX_TIME} ns")));
            }
            offsets.clone()
        }
        Arrivals::Sporadic { max_extra_delay, .. } => {
            if *max_extra_delay > MAX_TIME {
                return Err(ModelError::field("max_extra_delay", format!("exceeds {MAX_TIME} ns")));
            }
            vec![0; n]
        }
    };
    match &cfg.exec {
        ExecTimes::UniformFraction { lo, .. } if !(0.0..=1.0).contains(lo) => {
            return Err(ModelError::field("lo", format!("the execution-time fraction must be in [0, 1], got {lo}")));
        }
        ExecTimes::Fixed(v) => {
            if v.len() != n {
                return Err(ModelError::field("exec", format!("{} fixed execution times for {n} tasks", v.len())));
            }
            for (i, (&x, t)) in v.iter().zip(ts.iter()).enumerate() {
                if x == 0 || x > t.wcet {
                    return Err(ModelError::task_field(
                        i,
                        "exec",
                        format!("a fixed execution time must be in 1..=WCET ({}), got {x}", t.wcet),
                    ));
                }
            }
        }
        _ => {}
    }
    let cap = cfg.horizon_cap;
    let max_off = offsets.iter().copied().max().unwrap_or(0);
    let (horizon, capped) = match cfg.horizon {
        Some(0) => return Err(ModelError::field("horizon", "must be at least 1 ns")),
        Some(h) if h > cap => (cap, Some(format!("the requested horizon {h} ns exceeds the cap of {cap} ns; simulated to the cap"))),
        Some(h) => (h, None),
        None => match ts.hyperperiod(cap) {
            Ok(hp) if hp.saturating_add(max_off) <= cap => (hp + max_off, None),
            Ok(hp) => (cap, Some(format!("one hyperperiod ({hp} ns) after the largest offset ({max_off} ns) exceeds the cap of {cap} ns; simulated to the cap"))),
            Err(e) => (cap, Some(format!("{e}; simulated to the cap of {cap} ns"))),
        },
    };
    // Memory bound: jobs released before the horizon.
    let mut expected: u128 = 0;
    for (i, t) in ts.iter().enumerate() {
        if offsets[i] < horizon {
            expected += ((horizon - offsets[i] - 1) / t.period) as u128 + 1;
        }
    }
    if expected > cfg.max_jobs as u128 {
        return Err(ModelError::field("horizon", format!("the simulation would release {expected} jobs, above max_jobs = {}; shorten the horizon or raise the bound", cfg.max_jobs)));
    }
    Ok(Setup { offsets, horizon, capped, expected: expected as u64 })
}

struct Pending {
    seq: u32,
    deadline: Time,
    /// Remaining execution.
    rem: Time,
}

struct TaskState {
    wcet: Time,
    deadline: Time,
    period: Time,
    backlog: VecDeque<Pending>,
    next_seq: u32,
    /// Jobs whose release has been handled: only `seq < handled` may be ready. Without
    /// overheads a release is handled when it happens, so this follows `next_seq`.
    handled: u32,
    completed: u32,
    /// CPU the front job last ran on.
    last_cpu: u32,
    /// CPU the front job is scheduled on now, or NONE (kept by the overhead engine only).
    on_cpu: u32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    Global,
    GlobalAtTicks,
    Partitioned,
    /// Only what holds under any dispatch delay (overheads): no job on two CPUs, running jobs
    /// ready, every CPU whose scheduled job differs from its linked one has a reschedule
    /// pending.
    Structural,
    None,
}

/// A piece of overhead CPU time on one CPU. A CPU serves its pieces one after another, in the
/// order they were charged, without preemption; the job scheduled there progresses only
/// while no piece is being served.
struct Seg {
    kind: OverheadKind,
    dur: Time,
    /// A release handler: `(domain, due)`. When it ends, the domain's jobs due by then are
    /// handled (they become ready).
    group: Option<(u32, Time)>,
}

/// State of the overhead engine (docs/simulator.md, "Overhead injection"); empty otherwise.
#[derive(Default)]
struct Ovh {
    v: Overheads,
    /// Release domain of each task and the CPU that handles each domain.
    dom_of: Vec<u32>,
    dom_cpu: Vec<u32>,
    /// Per domain: released jobs whose handler has not run yet, `(due, task)`, in release order.
    dom_jobs: Vec<VecDeque<(Time, u32)>>,
    /// Per domain: due time of the last handler invocation queued (`Time::MAX`: none).
    dom_last_due: Vec<Time>,
    /// Handler invocations not yet started: `(due + Δev, domain, due)`, in time order.
    irqs: VecDeque<(Time, u32, Time)>,
    segs: Vec<VecDeque<Seg>>,
    /// End of each CPU's piece in service (`Time::MAX`: none).
    seg_end: Vec<Time>,
    /// End of each CPU's last charged piece (at most now when none is queued).
    busy_until: Vec<Time>,
    /// When each CPU next brings `scheduled` in line with `linked` (`Time::MAX`: not pending).
    resched_at: Vec<Time>,
    pending: Vec<u32>,
    /// CPUs that handled an event at this instant: their reschedule needs no IPI.
    local: Vec<bool>,
    local_list: Vec<u32>,
    due: Vec<u32>,
}

struct Engine<'a, P: Policy, const OV: bool> {
    policy: P,
    rule: PriorityRule,
    tasks: Vec<TaskState>,
    sched: Vec<Option<Prio>>,
    /// Completion time of the job each CPU runs; `Time::MAX` when it runs nothing.
    finish_at: Vec<Time>,
    idle_announced: Vec<bool>,
    /// Next release per task, packed `time << 32 | task` (one integer compare per heap step).
    releases: BinaryHeap<Reverse<u128>>,
    deadlines: BinaryHeap<Reverse<(Time, u32, u32)>>,
    builder: MetricsBuilder,
    records: Option<Vec<Record>>,
    dirty: Vec<u32>,
    dirty_flag: Vec<bool>,
    horizon: Time,
    arrivals: &'a Arrivals,
    exec: &'a ExecTimes,
    draw: Draw,
    /// Quantum, staggered, next tick per CPU (aligned: only entry 0 is used).
    quantum: Option<(Time, bool)>,
    next_tick: Vec<Time>,
    check: Check,
    cpu_of: Vec<u32>,
    events: u64,
    released: u64,
    ov: Ovh,
}

impl<'a, P: Policy, const OV: bool> Engine<'a, P, OV> {
    #[inline]
    fn emit(&mut self, time: Time, event: Event) -> Result<(), ModelError> {
        let r = Record { time, event };
        self.builder.push(&r).map_err(|e| {
            ModelError::new(format!("internal error: the simulator emitted an inconsistent record at {time} ns: {e}"))
        })?;
        if let Some(v) = &mut self.records {
            v.push(r);
        }
        Ok(())
    }

    #[inline]
    fn mark(&mut self, c: u32) {
        if !self.dirty_flag[c as usize] {
            self.dirty_flag[c as usize] = true;
            self.dirty.push(c);
        }
    }

    fn prio_of_front(&self, task: usize) -> Option<Prio> {
        let ts = &self.tasks[task];
        ts.backlog.front().filter(|j| j.seq < ts.handled).map(|j| self.rule.prio(task as u32, j.seq, j.deadline))
    }

    fn release(&mut self, t: Time, i: usize) -> Result<(), ModelError> {
        let ts = &mut self.tasks[i];
        let seq = ts.next_seq;
        ts.next_seq =
            seq.checked_add(1).ok_or_else(|| ModelError::task_field(i, "period", "more than 2^32 jobs of one task"))?;
        let deadline = t + ts.deadline;
        let rem = self.draw.exec(self.exec, i, ts.wcet);
        let gap = self.draw.gap(self.arrivals, ts.period);
        ts.backlog.push_back(Pending { seq, deadline, rem });
        let first = ts.backlog.len() == 1;
        if !OV {
            ts.handled = ts.next_seq;
        }
        self.releases.push(Reverse(((t + gap) as u128) << 32 | i as u128));
        self.released += 1;
        if self.records.is_some() && deadline <= self.horizon {
            self.deadlines.push(Reverse((deadline, i as u32, seq)));
        }
        self.emit(t, Event::Release { job: JobId { task: i as u32, job: seq }, deadline })?;
        if OV {
            // The job waits for its domain's release handler (one invocation per domain and
            // due time), which starts Δev later.
            let d = self.ov.dom_of[i] as usize;
            self.ov.dom_jobs[d].push_back((t, i as u32));
            if self.ov.dom_last_due[d] != t {
                self.ov.dom_last_due[d] = t;
                self.ov.irqs.push_back((t + self.ov.v.release_event_ns, d as u32, t));
            }
        } else if first {
            let p = self.rule.prio(i as u32, seq, deadline);
            self.policy.job_ready(p);
        }
        Ok(())
    }

    fn complete(&mut self, t: Time, c: usize, j: Prio) -> Result<(), ModelError> {
        self.emit(t, Event::Complete { cpu: c as u32, job: JobId { task: j.task, job: j.job } })?;
        self.sched[c] = None;
        self.finish_at[c] = Time::MAX;
        self.mark(c as u32);
        let ts = &mut self.tasks[j.task as usize];
        ts.backlog.pop_front();
        ts.completed += 1;
        ts.last_cpu = NONE;
        ts.on_cpu = NONE;
        if OV {
            self.set_local(c);
        }
        if !OV || self.policy.linked(c) == Some(j) {
            self.policy.job_complete(c);
        } else if !self.policy.job_done(j) {
            // Under IPI latency the job may finish on a CPU it was unlinked from (linked
            // elsewhere or queued) before that CPU's reschedule.
            return Err(ModelError::new(format!(
                "internal error: job {}.{} completed at {t} ns but the policy does not know it",
                j.task, j.job
            )));
        }
        if let Some(p) = self.prio_of_front(j.task as usize) {
            self.policy.job_ready(p);
        }
        Ok(())
    }

    /// Makes `scheduled` follow `linked` on every CPU whose link changed or that freed up.
    fn dispatch(&mut self, t: Time) -> Result<(), ModelError> {
        self.policy.drain_dirty(&mut self.dirty);
        // Pass 1: stop what must stop (so that a job moving between CPUs stops first).
        for k in 0..self.dirty.len() {
            let c = self.dirty[k] as usize;
            let want = self.policy.linked(c);
            if let Some(h) = self.sched[c] {
                if want != Some(h) {
                    self.emit(t, Event::Preempt { cpu: c as u32, job: JobId { task: h.task, job: h.job } })?;
                    let ts = &mut self.tasks[h.task as usize];
                    if let Some(f) = ts.backlog.front_mut() {
                        f.rem = self.finish_at[c] - t;
                    }
                    self.sched[c] = None;
                    self.finish_at[c] = Time::MAX;
                }
            }
        }
        // Pass 2: start what must start; announce idleness.
        for k in 0..self.dirty.len() {
            let c = self.dirty[k] as usize;
            self.dirty_flag[c] = false;
            if self.sched[c].is_some() {
                continue;
            }
            match self.policy.linked(c) {
                Some(w) => {
                    let ts = &self.tasks[w.task as usize];
                    let front = ts.backlog.front().filter(|f| f.seq == w.job).ok_or_else(|| {
                        ModelError::new(format!(
                            "internal error: policy linked job {}.{} which is not ready at {t} ns",
                            w.task, w.job
                        ))
                    })?;
                    let (rem, last) = (front.rem, ts.last_cpu);
                    let job = JobId { task: w.task, job: w.job };
                    if last != NONE && last != c as u32 {
                        self.emit(t, Event::Migration { job, from: last, to: c as u32 })?;
                    }
                    self.emit(t, Event::Run { cpu: c as u32, job })?;
                    self.tasks[w.task as usize].last_cpu = c as u32;
                    self.sched[c] = Some(w);
                    self.finish_at[c] = t + rem;
                    self.idle_announced[c] = false;
                }
                None => {
                    if !self.idle_announced[c] {
                        self.emit(t, Event::Idle { cpu: c as u32 })?;
                        self.idle_announced[c] = true;
                    }
                }
            }
        }
        self.dirty.clear();
        Ok(())
    }

    /// Independent check of the policy's decision against the definition of the scheduler,
    /// from the simulator's own view of which jobs are ready.
    fn check_invariant(&self, t: Time, ticked: bool) -> Result<(), ModelError> {
        let fail = |what: String| Err(ModelError::new(format!("internal error: invariant violated at {t} ns: {what}")));
        let mut running: Vec<Prio> = self.sched.iter().flatten().copied().collect();
        running.sort();
        if running.windows(2).any(|w| w[0] == w[1]) {
            return fail("a job runs on two CPUs".into());
        }
        let ready: Vec<Prio> = (0..self.tasks.len()).filter_map(|i| self.prio_of_front(i)).collect();
        for r in &running {
            if !ready.contains(r) {
                return fail(format!("job {}.{} runs but is not ready", r.task, r.job));
            }
        }
        if OV {
            for (c, s) in self.sched.iter().enumerate() {
                if let Some(j) = s {
                    if self.tasks[j.task as usize].on_cpu != c as u32 {
                        return fail(format!(
                            "job {}.{} runs on cpu {c} but is recorded on cpu {}",
                            j.task, j.job, self.tasks[j.task as usize].on_cpu
                        ));
                    }
                }
                if *s != self.policy.linked(c) && self.ov.resched_at[c] == Time::MAX {
                    return fail(format!(
                        "cpu {c} runs {s:?}, is linked to {:?}, and has no reschedule pending",
                        self.policy.linked(c)
                    ));
                }
            }
        }
        // The policy's invariant, defined once (rtsched_policy::invariant).
        let mut sorted = ready;
        sorted.sort();
        match self.check {
            Check::Global | Check::GlobalAtTicks if self.check == Check::Global || ticked => {
                invariant::check_global(self.sched.len(), &sorted, &self.sched).or_else(fail)?
            }
            Check::Partitioned => invariant::check_partitioned(&self.cpu_of, &sorted, &self.sched).or_else(fail)?,
            _ => {}
        }
        Ok(())
    }

    /// The next instant something happens without overheads: a release before the horizon, a
    /// completion, a quantum tick, or a deadline to check.
    #[inline]
    fn next_instant(&self, h: Time) -> Time {
        let mut t = Time::MAX;
        if let Some(&Reverse(packed)) = self.releases.peek() {
            let r = (packed >> 32) as Time;
            if r < h {
                t = r;
            }
        }
        // finish_at is Time::MAX on CPUs that run nothing: a branch-free scan.
        t = t.min(self.finish_at.iter().copied().min().unwrap_or(Time::MAX));
        if self.quantum.is_some() {
            for &nt in &self.next_tick {
                if nt < h && nt < t {
                    t = nt;
                }
            }
        }
        if let Some(&Reverse((d, _, _))) = self.deadlines.peek() {
            t = t.min(d);
        }
        t
    }

    fn run(&mut self) -> Result<(), ModelError> {
        if OV {
            return self.run_ovh();
        }
        let h = self.horizon;
        let m = self.sched.len();
        loop {
            let t = self.next_instant(h);
            if t > h {
                break;
            }
            // 1. Completions.
            for c in 0..m {
                if self.finish_at[c] == t {
                    if let Some(j) = self.sched[c] {
                        self.events += 1;
                        self.complete(t, c, j)?;
                    }
                }
            }
            // 2. Deadlines passed without completion (trace only; metrics do not need them).
            self.deadline_records(t)?;
            // 3. Releases (only before the horizon).
            if t < h {
                self.releases_at(t)?;
            }
            // 4. Quantum boundaries.
            let mut ticked = false;
            if let Some((q, staggered)) = self.quantum {
                for c in 0..self.next_tick.len() {
                    if self.next_tick[c] == t && t < h {
                        self.events += 1;
                        ticked = true;
                        self.policy.tick(if staggered { Some(c) } else { None });
                        self.next_tick[c] += q;
                    }
                }
            }
            // 5. Dispatch.
            self.dispatch(t)?;
            if self.check != Check::None {
                self.check_invariant(t, ticked)?;
            }
        }
        Ok(())
    }

    #[inline]
    fn deadline_records(&mut self, t: Time) -> Result<(), ModelError> {
        while let Some(&Reverse((d, i, seq))) = self.deadlines.peek() {
            if d > t {
                break;
            }
            self.deadlines.pop();
            if seq >= self.tasks[i as usize].completed {
                self.emit(t, Event::DeadlineMiss { job: JobId { task: i, job: seq } })?;
            }
        }
        Ok(())
    }

    #[inline]
    fn releases_at(&mut self, t: Time) -> Result<(), ModelError> {
        while let Some(&Reverse(packed)) = self.releases.peek() {
            let (r, i) = ((packed >> 32) as Time, packed as u32);
            if r != t {
                break;
            }
            self.releases.pop();
            self.events += 1;
            self.release(t, i as usize)?;
        }
        Ok(())
    }

    // ---- The overhead engine (docs/simulator.md, "Overhead injection"). ----

    #[inline]
    fn set_local(&mut self, c: usize) {
        if !self.ov.local[c] {
            self.ov.local[c] = true;
            self.ov.local_list.push(c as u32);
        }
    }

    /// Charges `dur` ns of `kind` to CPU `c` at `t`: the piece starts now if the CPU serves
    /// no other piece, else after the last one; the job scheduled there is delayed by `dur`.
    /// Zero-length pieces are dropped unless they carry a release handler's action.
    fn charge(
        &mut self,
        t: Time,
        c: usize,
        kind: OverheadKind,
        dur: Time,
        group: Option<(u32, Time)>,
    ) -> Result<(), ModelError> {
        if dur == 0 && group.is_none() {
            return Ok(());
        }
        if self.ov.segs[c].is_empty() {
            self.ov.seg_end[c] = t + dur;
            if dur > 0 {
                self.emit(t, Event::Overhead { cpu: c as u32, kind, duration: dur })?;
            }
        }
        self.ov.segs[c].push_back(Seg { kind, dur, group });
        self.ov.busy_until[c] = self.ov.busy_until[c].max(t) + dur;
        if self.sched[c].is_some() {
            self.finish_at[c] += dur;
        }
        Ok(())
    }

    /// Ends the pieces that end at `t` (running release handlers' actions) and starts the
    /// next ones.
    fn end_pieces(&mut self, t: Time) -> Result<(), ModelError> {
        for c in 0..self.sched.len() {
            while self.ov.seg_end[c] == t {
                let Some(s) = self.ov.segs[c].pop_front() else {
                    self.ov.seg_end[c] = Time::MAX;
                    break;
                };
                if let Some((d, due)) = s.group {
                    self.handle_releases(c, d as usize, due);
                }
                match self.ov.segs[c].front() {
                    Some(nx) => {
                        let (kind, dur) = (nx.kind, nx.dur);
                        self.ov.seg_end[c] = t + dur;
                        if dur > 0 {
                            self.emit(t, Event::Overhead { cpu: c as u32, kind, duration: dur })?;
                        }
                    }
                    None => self.ov.seg_end[c] = Time::MAX,
                }
            }
        }
        Ok(())
    }

    /// The end of a release handler on CPU `c`: the domain's jobs due by `due` are handled, in
    /// release order; each that heads its task's backlog becomes ready.
    fn handle_releases(&mut self, c: usize, d: usize, due: Time) {
        self.set_local(c);
        while let Some(&(r, i)) = self.ov.dom_jobs[d].front() {
            if r > due {
                break;
            }
            self.ov.dom_jobs[d].pop_front();
            let ts = &mut self.tasks[i as usize];
            let seq = ts.handled;
            ts.handled += 1;
            if let Some(f) = ts.backlog.front().filter(|f| f.seq == seq) {
                let p = self.rule.prio(i, seq, f.deadline);
                self.policy.job_ready(p);
            }
        }
    }

    /// Plans a reschedule for each CPU whose link changed: now if it handled an event at this
    /// instant, else when an IPI sent now arrives (Δipi later; no second IPI while one is
    /// pending).
    fn plan_reschedules(&mut self, t: Time) -> Result<(), ModelError> {
        self.policy.drain_dirty(&mut self.dirty);
        for k in 0..self.dirty.len() {
            let c = self.dirty[k] as usize;
            self.dirty_flag[c] = false;
            let when = if self.ov.local[c] { t } else { t + self.ov.v.ipi_ns };
            if when < self.ov.resched_at[c] {
                if self.ov.resched_at[c] == Time::MAX {
                    self.ov.pending.push(c as u32);
                }
                self.ov.resched_at[c] = when;
                if when > t {
                    self.emit(
                        t,
                        Event::Overhead { cpu: c as u32, kind: OverheadKind::Ipi, duration: self.ov.v.ipi_ns },
                    )?;
                }
            }
        }
        self.dirty.clear();
        for k in 0..self.ov.local_list.len() {
            let c = self.ov.local_list[k] as usize;
            self.ov.local[c] = false;
        }
        self.ov.local_list.clear();
        Ok(())
    }

    /// Reschedules every CPU whose reschedule is due: first all preemptions, then each idle
    /// CPU takes its linked job after Δsch + Δcxs of its own time. A job still scheduled on
    /// another CPU (whose reschedule is pending) is taken when that CPU lets it go.
    fn reschedule(&mut self, t: Time) -> Result<(), ModelError> {
        let mut due = std::mem::take(&mut self.ov.due);
        due.clear();
        let mut k = 0;
        while k < self.ov.pending.len() {
            let c = self.ov.pending[k] as usize;
            if self.ov.resched_at[c] <= t {
                self.ov.resched_at[c] = Time::MAX;
                self.ov.pending.swap_remove(k);
                due.push(c as u32);
            } else {
                k += 1;
            }
        }
        due.sort_unstable();
        for &c in &due {
            let c = c as usize;
            if let Some(h) = self.sched[c] {
                if self.policy.linked(c) != Some(h) {
                    self.emit(t, Event::Preempt { cpu: c as u32, job: JobId { task: h.task, job: h.job } })?;
                    let left = self.finish_at[c] - t.max(self.ov.busy_until[c]);
                    let ts = &mut self.tasks[h.task as usize];
                    if let Some(f) = ts.backlog.front_mut() {
                        f.rem = left;
                    }
                    ts.on_cpu = NONE;
                    self.sched[c] = None;
                    self.finish_at[c] = Time::MAX;
                }
            }
        }
        for &c in &due {
            let c = c as usize;
            if self.sched[c].is_some() {
                continue;
            }
            match self.policy.linked(c) {
                Some(w) => {
                    let other = self.tasks[w.task as usize].on_cpu;
                    if other != NONE {
                        let at = self.ov.resched_at[other as usize];
                        if at == Time::MAX {
                            return Err(ModelError::new(format!(
                                "internal error: job {}.{} is linked to cpu {c} but stays on cpu {other} with no reschedule pending at {t} ns",
                                w.task, w.job
                            )));
                        }
                        self.ov.resched_at[c] = at;
                        self.ov.pending.push(c as u32);
                        continue;
                    }
                    let ts = &self.tasks[w.task as usize];
                    let front =
                        ts.backlog.front().filter(|f| f.seq == w.job && f.seq < ts.handled).ok_or_else(|| {
                            ModelError::new(format!(
                                "internal error: policy linked job {}.{} which is not ready at {t} ns",
                                w.task, w.job
                            ))
                        })?;
                    let (rem, last) = (front.rem, ts.last_cpu);
                    let (sch, cxs) = (self.ov.v.schedule_ns, self.ov.v.context_switch_ns);
                    self.charge(t, c, OverheadKind::Schedule, sch, None)?;
                    self.charge(t, c, OverheadKind::ContextSwitch, cxs, None)?;
                    let job = JobId { task: w.task, job: w.job };
                    if last != NONE && last != c as u32 {
                        self.emit(t, Event::Migration { job, from: last, to: c as u32 })?;
                    }
                    self.emit(t, Event::Run { cpu: c as u32, job })?;
                    let ts = &mut self.tasks[w.task as usize];
                    ts.last_cpu = c as u32;
                    ts.on_cpu = c as u32;
                    self.sched[c] = Some(w);
                    self.finish_at[c] = t.max(self.ov.busy_until[c]) + rem;
                    self.idle_announced[c] = false;
                }
                None => {
                    if !self.idle_announced[c] {
                        self.emit(t, Event::Idle { cpu: c as u32 })?;
                        self.idle_announced[c] = true;
                    }
                }
            }
        }
        self.ov.due = due;
        Ok(())
    }

    fn run_ovh(&mut self) -> Result<(), ModelError> {
        let h = self.horizon;
        let m = self.sched.len();
        loop {
            let mut t = self.next_instant(h);
            if let Some(&(s, _, _)) = self.ov.irqs.front() {
                t = t.min(s);
            }
            t = t.min(self.ov.seg_end.iter().copied().min().unwrap_or(Time::MAX));
            for &c in &self.ov.pending {
                t = t.min(self.ov.resched_at[c as usize]);
            }
            if t > h {
                break;
            }
            // 1. Completions (the CPU reschedules itself).
            for c in 0..m {
                if self.finish_at[c] == t {
                    if let Some(j) = self.sched[c] {
                        self.events += 1;
                        self.complete(t, c, j)?;
                    }
                }
            }
            // 2. Deadline records (trace only).
            self.deadline_records(t)?;
            // 3. Releases: counted now, ready after their handler.
            if t < h {
                self.releases_at(t)?;
            }
            // 4. Release handlers that start now: Δrel on the domain's CPU.
            while let Some(&(s, d, due)) = self.ov.irqs.front() {
                if s != t {
                    break;
                }
                self.ov.irqs.pop_front();
                let c = self.ov.dom_cpu[d as usize] as usize;
                let rel = self.ov.v.release_ns;
                self.charge(t, c, OverheadKind::Release, rel, Some((d, due)))?;
            }
            // 5. Overhead pieces that end now (release handlers make their jobs ready).
            self.end_pieces(t)?;
            // 6. Quantum boundaries: the tick handler's time, then the policy's tick.
            let mut ticked = false;
            if let Some((q, staggered)) = self.quantum {
                for c in 0..self.next_tick.len() {
                    if self.next_tick[c] == t && t < h {
                        self.events += 1;
                        ticked = true;
                        let tick = self.ov.v.tick_ns;
                        if staggered {
                            self.charge(t, c, OverheadKind::Tick, tick, None)?;
                            self.set_local(c);
                        } else {
                            for p in 0..m {
                                self.charge(t, p, OverheadKind::Tick, tick, None)?;
                                self.set_local(p);
                            }
                        }
                        self.policy.tick(if staggered { Some(c) } else { None });
                        self.next_tick[c] += q;
                    }
                }
            }
            // 7. Reschedules: planned (local now, remote after Δipi), then the due ones.
            self.plan_reschedules(t)?;
            self.reschedule(t)?;
            if self.check != Check::None {
                self.check_invariant(t, ticked)?;
            }
        }
        Ok(())
    }
}

fn validate_partition(ts: &TaskSet, m: u32, part: &[Vec<usize>]) -> Result<Vec<u32>, ModelError> {
    if part.len() != m as usize {
        return Err(ModelError::field("partition", format!("lists {} CPUs but m = {m}", part.len())));
    }
    let mut cpu_of = vec![NONE; ts.len()];
    for (c, tasks) in part.iter().enumerate() {
        for &i in tasks {
            if i >= ts.len() {
                return Err(ModelError::field(
                    "partition",
                    format!("cpu {c} names task {i} but there are only {} tasks", ts.len()),
                ));
            }
            if cpu_of[i] != NONE {
                return Err(ModelError::task_field(
                    i,
                    "partition",
                    format!("assigned twice (cpus {} and {c})", cpu_of[i]),
                ));
            }
            cpu_of[i] = c as u32;
        }
    }
    if let Some(i) = cpu_of.iter().position(|&c| c == NONE) {
        return Err(ModelError::task_field(i, "partition", "not assigned to any CPU"));
    }
    Ok(cpu_of)
}

/// Simulates `ts` under `sched` on `cfg.m` CPUs from time 0 to the horizon.
///
/// Errors (never panics) on invalid parameters: m = 0 or above 65,536, a bad partition, a
/// zero quantum, offsets of the wrong length, a fraction outside [0, 1], a zero horizon, or a
/// simulation that would release more than `cfg.max_jobs` jobs.
pub fn simulate(ts: &TaskSet, sched: &Scheduler, cfg: &SimConfig) -> Result<SimResult, ModelError> {
    if let Some(o) = &cfg.overheads {
        o.validate()?;
        let unsupported = match sched {
            Scheduler::Spres(_) => Some("spres"),
            Scheduler::Rtws => Some("rtws"),
            _ => None,
        };
        if let Some(name) = unsupported {
            return Err(ModelError::field(
                "overheads",
                format!("overhead injection is not supported for {name} (supported: gedf, gedf-quantum, pedf, pfp)"),
            ));
        }
        match sched {
            Scheduler::GedfQuantum { quantum, .. } if o.tick_ns >= *quantum && *quantum > 0 => {
                return Err(ModelError::field(
                    "overheads.tick_ns",
                    format!("the tick overhead ({} ns) must be below the quantum ({quantum} ns)", o.tick_ns),
                ));
            }
            Scheduler::GedfQuantum { .. } => {}
            _ if o.tick_ns > 0 => {
                return Err(ModelError::field(
                    "overheads.tick_ns",
                    format!(
                        "applies only to gedf-quantum (the event-driven {} has no periodic tick), got {} ns",
                        sched.name(),
                        o.tick_ns
                    ),
                ));
            }
            _ => {}
        }
    }
    if let Scheduler::Spres(sc) = sched {
        return crate::spres::simulate_spres(ts, sched, sc, cfg);
    }
    if let Scheduler::Rtws = sched {
        return crate::rtws::simulate_sequential(ts, sched, cfg);
    }
    let Setup { offsets, horizon, capped, expected } = setup(ts, cfg)?;
    let (m, n) = (cfg.m, ts.len());
    let mu = m as usize;
    let (rule, quantum, check, cpu_of) = match sched {
        Scheduler::Gedf => (PriorityRule::Edf, None, Check::Global, vec![]),
        Scheduler::GedfQuantum { quantum, staggered } => {
            if *quantum == 0 || *quantum > MAX_TIME {
                return Err(ModelError::field("quantum", format!("must be in 1..={MAX_TIME} ns, got {quantum}")));
            }
            (
                PriorityRule::Edf,
                Some((*quantum, *staggered)),
                if *staggered { Check::None } else { Check::GlobalAtTicks },
                vec![],
            )
        }
        Scheduler::Pedf(p) => (PriorityRule::Edf, None, Check::Partitioned, validate_partition(ts, m, p)?),
        Scheduler::Pfp(p, order) => {
            (PriorityRule::fixed(ts, *order), None, Check::Partitioned, validate_partition(ts, m, p)?)
        }
        Scheduler::Spres(_) | Scheduler::Rtws => unreachable!("handled above"),
    };
    let next_tick: Vec<Time> = match quantum {
        None => vec![],
        Some((_, false)) => vec![0],
        Some((q, true)) => (0..mu).map(|p| (q as u128 * p as u128 / mu as u128) as Time).collect(),
    };
    let mut builder = MetricsBuilder::new(n, m, horizon);
    builder.reserve_jobs(expected as usize);
    let tasks: Vec<TaskState> = ts
        .iter()
        .map(|t| TaskState {
            wcet: t.wcet,
            deadline: t.deadline,
            period: t.period,
            backlog: VecDeque::new(),
            next_seq: 0,
            handled: 0,
            completed: 0,
            last_cpu: NONE,
            on_cpu: NONE,
        })
        .collect();
    // Release domains (docs/simulator.md, "Overhead injection"): one per CPU under
    // partitioning, handled on that CPU; one for a global scheduler, handled on CPU 0.
    let ovh = |cpu_of: &[u32]| -> Ovh {
        let Some(v) = cfg.overheads else { return Ovh::default() };
        let (dom_of, dom_cpu): (Vec<u32>, Vec<u32>) =
            if cpu_of.is_empty() { (vec![0; n], vec![0]) } else { (cpu_of.to_vec(), (0..m).collect()) };
        let nd = dom_cpu.len();
        Ovh {
            v,
            dom_of,
            dom_cpu,
            dom_jobs: vec![VecDeque::new(); nd],
            dom_last_due: vec![Time::MAX; nd],
            irqs: VecDeque::new(),
            segs: (0..mu).map(|_| VecDeque::new()).collect(),
            seg_end: vec![Time::MAX; mu],
            busy_until: vec![0; mu],
            resched_at: vec![Time::MAX; mu],
            pending: Vec::with_capacity(mu),
            local: vec![false; mu],
            local_list: Vec::with_capacity(mu),
            due: Vec::with_capacity(mu),
        }
    };
    // Under any delay the schedule lags the policy's links, so only the structural checks
    // apply.
    let check = if cfg.overheads.is_some_and(|o| !o.is_zero()) { Check::Structural } else { check };
    let releases: BinaryHeap<Reverse<u128>> = (0..n).map(|i| Reverse((offsets[i] as u128) << 32 | i as u128)).collect();
    macro_rules! go {
        ($policy:expr, $ov:literal) => {{
            let ov_state = ovh(&cpu_of);
            let mut e = Engine::<_, $ov> {
                policy: $policy,
                rule,
                tasks,
                sched: vec![None; mu],
                finish_at: vec![Time::MAX; mu],
                idle_announced: vec![true; mu],
                releases,
                deadlines: BinaryHeap::new(),
                builder,
                records: if cfg.record_trace { Some(Vec::new()) } else { None },
                dirty: Vec::with_capacity(mu),
                dirty_flag: vec![false; mu],
                horizon,
                arrivals: &cfg.arrivals,
                exec: &cfg.exec,
                draw: Draw::new(cfg),
                quantum,
                next_tick,
                check: if cfg.check_invariants { check } else { Check::None },
                cpu_of,
                events: 0,
                released: 0,
                ov: ov_state,
            };
            e.run()?;
            let backlog: u64 = e.tasks.iter().map(|t| t.backlog.len() as u64).sum();
            let metrics = e.builder.finish();
            if cfg.check_invariants && (metrics.jobs != e.released || metrics.pending != backlog || metrics.completed + backlog != e.released) {
                return Err(ModelError::new(format!(
                    "internal error: accounting mismatch: released {} (metrics {}), pending {backlog} (metrics {}), completed {}",
                    e.released, metrics.jobs, metrics.pending, metrics.completed
                )));
            }
            let trace = e.records.map(|records| Trace { meta: TraceMeta::new(ts, m, horizon), records });
            Ok(SimResult::from_metrics_ovh(sched, metrics, capped, e.events, trace, cfg.overheads))
        }};
    }
    let ov = cfg.overheads.is_some();
    match sched {
        Scheduler::Gedf if ov => go!(Gedf::new(mu), true),
        Scheduler::Gedf => go!(Gedf::new(mu), false),
        Scheduler::GedfQuantum { .. } if ov => go!(GedfQuantum::new(mu), true),
        Scheduler::GedfQuantum { .. } => go!(GedfQuantum::new(mu), false),
        Scheduler::Pedf(p) | Scheduler::Pfp(p, _) => {
            let part = validate_partition(ts, m, p)?;
            if ov {
                go!(Partitioned::new(mu, part), true)
            } else {
                go!(Partitioned::new(mu, part), false)
            }
        }
        Scheduler::Spres(_) | Scheduler::Rtws => unreachable!("handled above"),
    }
}
