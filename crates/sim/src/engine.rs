//! The event loop. One instant at a time: completions, deadline checks (trace only),
//! releases, quantum ticks, then dispatch (linked → scheduled), then optional invariant
//! checks. Time never advances by less than one event.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_model::{ModelError, TaskSet, Time, MAX_TIME};
use rtsched_policy::{FpOrder, Gedf, GedfQuantum, Partitioned, Policy, Prio, PriorityRule};
use rtsched_trace::{Event, JobId, JobStats, Metrics, MetricsBuilder, Record, TaskStats, Trace, TraceMeta};
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
                format!("G-EDF quantum {} {}", rtsched_model::time::format_duration(*quantum), if *staggered { "staggered" } else { "aligned" })
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
    #[serde(skip)]
    pub per_job: Vec<JobStats>,
    #[serde(skip)]
    pub trace: Option<Trace>,
}

impl SimResult {
    pub(crate) fn from_metrics(sched: &Scheduler, m: Metrics, capped: Option<String>, events: u64, trace: Option<Trace>) -> SimResult {
        SimResult {
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
                    return Err(ModelError::task_field(i, "exec", format!("a fixed execution time must be in 1..=WCET ({}), got {x}", t.wcet)));
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
    completed: u32,
    /// CPU the front job last ran on.
    last_cpu: u32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    Global,
    GlobalAtTicks,
    Partitioned,
    None,
}

struct Engine<'a, P: Policy> {
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
}

impl<'a, P: Policy> Engine<'a, P> {
    #[inline]
    fn emit(&mut self, time: Time, event: Event) -> Result<(), ModelError> {
        let r = Record { time, event };
        self.builder.push(&r).map_err(|e| ModelError::new(format!("internal error: the simulator emitted an inconsistent record at {time} ns: {e}")))?;
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
        self.tasks[task].backlog.front().map(|j| self.rule.prio(task as u32, j.seq, j.deadline))
    }

    fn release(&mut self, t: Time, i: usize) -> Result<(), ModelError> {
        let ts = &mut self.tasks[i];
        let seq = ts.next_seq;
        ts.next_seq = seq.checked_add(1).ok_or_else(|| ModelError::task_field(i, "period", "more than 2^32 jobs of one task"))?;
        let deadline = t + ts.deadline;
        let rem = self.draw.exec(self.exec, i, ts.wcet);
        let gap = self.draw.gap(self.arrivals, ts.period);
        ts.backlog.push_back(Pending { seq, deadline, rem });
        let first = ts.backlog.len() == 1;
        self.releases.push(Reverse(((t + gap) as u128) << 32 | i as u128));
        self.released += 1;
        if self.records.is_some() && deadline <= self.horizon {
            self.deadlines.push(Reverse((deadline, i as u32, seq)));
        }
        self.emit(t, Event::Release { job: JobId { task: i as u32, job: seq }, deadline })?;
        if first {
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
        self.policy.job_complete(c);
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
                        ModelError::new(format!("internal error: policy linked job {}.{} which is not ready at {t} ns", w.task, w.job))
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
        match self.check {
            Check::Global | Check::GlobalAtTicks if self.check == Check::Global || ticked => {
                let mut sorted = ready;
                sorted.sort();
                sorted.truncate(self.sched.len());
                if sorted != running {
                    return fail(format!("G-EDF runs {running:?} but the highest-priority ready jobs are {sorted:?}"));
                }
            }
            Check::Partitioned => {
                for (c, s) in self.sched.iter().enumerate() {
                    let best = ready.iter().filter(|p| self.cpu_of[p.task as usize] == c as u32).min().copied();
                    if best != *s {
                        return fail(format!("cpu {c} runs {s:?} but its highest-priority ready job is {best:?}"));
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn run(&mut self) -> Result<(), ModelError> {
        let h = self.horizon;
        let m = self.sched.len();
        loop {
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
            while let Some(&Reverse((d, i, seq))) = self.deadlines.peek() {
                if d > t {
                    break;
                }
                self.deadlines.pop();
                if seq >= self.tasks[i as usize].completed {
                    self.emit(t, Event::DeadlineMiss { job: JobId { task: i, job: seq } })?;
                }
            }
            // 3. Releases (only before the horizon).
            if t < h {
                while let Some(&Reverse(packed)) = self.releases.peek() {
                    let (r, i) = ((packed >> 32) as Time, packed as u32);
                    if r != t {
                        break;
                    }
                    self.releases.pop();
                    self.events += 1;
                    self.release(t, i as usize)?;
                }
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
}

fn validate_partition(ts: &TaskSet, m: u32, part: &[Vec<usize>]) -> Result<Vec<u32>, ModelError> {
    if part.len() != m as usize {
        return Err(ModelError::field("partition", format!("lists {} CPUs but m = {m}", part.len())));
    }
    let mut cpu_of = vec![NONE; ts.len()];
    for (c, tasks) in part.iter().enumerate() {
        for &i in tasks {
            if i >= ts.len() {
                return Err(ModelError::field("partition", format!("cpu {c} names task {i} but there are only {} tasks", ts.len())));
            }
            if cpu_of[i] != NONE {
                return Err(ModelError::task_field(i, "partition", format!("assigned twice (cpus {} and {c})", cpu_of[i])));
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
            (PriorityRule::Edf, Some((*quantum, *staggered)), if *staggered { Check::None } else { Check::GlobalAtTicks }, vec![])
        }
        Scheduler::Pedf(p) => (PriorityRule::Edf, None, Check::Partitioned, validate_partition(ts, m, p)?),
        Scheduler::Pfp(p, order) => (PriorityRule::fixed(ts, *order), None, Check::Partitioned, validate_partition(ts, m, p)?),
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
        .map(|t| TaskState { wcet: t.wcet, deadline: t.deadline, period: t.period, backlog: VecDeque::new(), next_seq: 0, completed: 0, last_cpu: NONE })
        .collect();
    let releases: BinaryHeap<Reverse<u128>> = (0..n).map(|i| Reverse((offsets[i] as u128) << 32 | i as u128)).collect();
    macro_rules! go {
        ($policy:expr) => {{
            let mut e = Engine {
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
            Ok(SimResult::from_metrics(sched, metrics, capped, e.events, trace))
        }};
    }
    match sched {
        Scheduler::Gedf => go!(Gedf::new(mu)),
        Scheduler::GedfQuantum { .. } => go!(GedfQuantum::new(mu)),
        Scheduler::Pedf(p) | Scheduler::Pfp(p, _) => {
            let cpu_of = validate_partition(ts, m, p)?;
            go!(Partitioned::new(mu, cpu_of))
        }
        Scheduler::Spres(_) | Scheduler::Rtws => unreachable!("handled above"),
    }
}
