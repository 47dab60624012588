//! The conversion of a run's tracer records into the `rtsched-trace` vocabulary. Every run is
//! converted when it ends: its summary is computed from this trace by `rtsched_trace`, exactly
//! as the simulator's is (the one metrics path), so the summary, the per-job CSV, Perfetto and
//! the Gantt chart agree (design note: `docs/runtime.md`, "Converted traces").
//!
//! Mapping (Feather-Trace-style records of Brandenburg & Anderson, OSPERT 2007, to the
//! LITMUS^RT-like schedule events of `rtsched_trace`):
//! * `JobRelease` → `Release { job, deadline }` at the job's *due* time (the run's definition of
//!   release; never after the job's first run) with the deadline `release + D`;
//! * `JobStart` / `JobResume` → `Run { cpu, job }`, preceded by `Migration` when the job last
//!   ran on another CPU; `JobPreempt` → `Preempt`; `JobComplete` → `Complete`; a
//!   self-suspension's `JobSuspend` → `Suspend { cpu, job }` and its `JobWake` → `Resume`;
//! * `DeadlineMiss` at the deadline of every job that had not completed by it (deadline ≤
//!   horizon), as the simulator writes them;
//! * overhead samples → `Overhead` at their start: start/end pairs (`release` Δrel, `schedule`
//!   Δsch, `context_switch` Δcxs, `tick` Δtck, and the named terms `lock_wait`, `timer` and a
//!   mechanism's spans), `IpiNoticed` (`ipi` Δipi, from the send), the release latency
//!   (`release_event` Δev, from the due time), and a mechanism's latency (`TermSince`, from its
//!   stamp) and value (`TermValue`: the sample is the value, in the term's unit) samples, and
//!   host interference (`HostGap`: the pseudo-term `host_interference`, from its start). Names
//!   beyond the trace crate's fixed kinds are `TraceMeta::terms`.
//!
//! CPU numbers are indices into the run's CPU list; the service thread on the dedicated CPU is
//! CPU index `m` (its overhead samples only; `meta.m = m + 1` then). The end-of-run release
//! drain contributes releases only. Under `kernel-sd` the kernel's dispatching is invisible
//! from user space, so each task's thread is shown as its own lane: CPU index = task index and
//! `meta.m = n`; that trace gives correct per-job times but is not a schedule of m CPUs.
//!
//! Assumptions: jobs of a task are numbered 0, 1, ... in release order (the runtime's
//! numbering); the horizon is the run's duration (records after it are ignored by metrics).

use super::lifecycle::DRAIN_CPU;
use crate::clock::TscCalibration;
use crate::tracer::{RecKind, Record as TRecord, RELEASE_CPU};
use crate::RunError;
use rtsched_model::TaskSet;
use rtsched_trace::{Event, JobId, OverheadKind, Record, Trace, TraceMeta};
use std::collections::HashMap;

/// Order of events that share a timestamp: releases first, then a CPU giving a job up, then
/// the job taking a CPU, then overhead samples.
fn class(e: &Event) -> u8 {
    match e {
        Event::Release { .. } | Event::Resume { .. } => 0,
        Event::Preempt { .. } | Event::Complete { .. } | Event::Suspend { .. } => 1,
        Event::DeadlineMiss { .. } | Event::Idle { .. } => 2,
        Event::Migration { .. } => 3,
        Event::Run { .. } => 4,
        Event::Overhead { .. } | Event::Steal { .. } => 5,
    }
}

/// What the conversion needs besides the records.
pub(crate) struct Conversion<'a> {
    pub ts: &'a TaskSet,
    /// Per-task lanes (kernel-sd) instead of CPUs.
    pub kernel: bool,
    pub m: usize,
    /// The mechanism's own term names, by term id.
    pub terms: &'a [&'static str],
    pub horizon: u64,
    pub t0: u64,
    pub cal: &'a TscCalibration,
}

/// The overhead kinds of a run: the trace crate's fixed ones by name, the others as named
/// terms (in `names`).
struct Kinds {
    names: Vec<String>,
}

impl Kinds {
    fn get(&mut self, name: &str) -> OverheadKind {
        match OverheadKind::from_name(name) {
            Some(k) if k != OverheadKind::Other => k,
            _ => match self.names.iter().position(|n| n == name) {
                Some(i) => OverheadKind::Term(i as u16),
                None => {
                    self.names.push(name.to_string());
                    OverheadKind::Term((self.names.len() - 1) as u16)
                }
            },
        }
    }
}

/// Converts the run's per-buffer records (timestamps in ns since time zero, `arg`s raw) into a
/// [`Trace`] with records in time order. Errors when a record names a task `ts` lacks or a job
/// runs on the drain buffer.
pub(crate) fn convert(c: &Conversion<'_>, buffers: &[Vec<TRecord>]) -> Result<Trace, RunError> {
    let n = c.ts.len();
    let m = c.m as u32;
    let has_service = buffers.iter().flatten().any(|x| x.cpu == RELEASE_CPU);
    let meta_m = if c.kernel {
        n as u32
    } else if has_service {
        m + 1
    } else {
        m
    };
    let lane = |cpu: u16, task: u32| -> Option<u32> {
        if cpu == DRAIN_CPU {
            None
        } else if c.kernel {
            Some(task)
        } else if cpu == RELEASE_CPU {
            Some(m)
        } else {
            Some(cpu as u32)
        }
    };
    let rel = |counter: u64| c.cal.to_ns(counter).saturating_sub(c.t0);
    let term = |id: u32| c.terms.get(id as usize).copied().unwrap_or("unknown_term");
    let mut kinds = Kinds { names: ["release_event", "lock_wait", "timer"].map(String::from).to_vec() };
    for t in c.terms {
        kinds.get(t);
    }
    let mut out: Vec<Record> = Vec::new();
    // First run time of each job, to keep a release no later than the job's first run
    // (timestamps from the counter and due times from the monotonic clock may differ by a
    // few ns after calibration).
    let mut first_run: HashMap<(u32, u32), u64> = HashMap::new();
    let mut released: Vec<(u32, u32, u64)> = Vec::new();
    for buf in buffers {
        let mut open: HashMap<(RecKind, u32), u64> = HashMap::new();
        for x in buf {
            let job_rec = matches!(
                x.kind,
                RecKind::JobRelease
                    | RecKind::JobStart
                    | RecKind::JobResume
                    | RecKind::JobPreempt
                    | RecKind::JobComplete
                    | RecKind::JobSuspend
                    | RecKind::JobWake
            );
            if job_rec && x.task as usize >= n {
                return Err(RunError::Internal(format!(
                    "the trace names task {} but the task set has {n} tasks",
                    x.task
                )));
            }
            let job = JobId { task: x.task, job: x.job };
            let cpu = lane(x.cpu, x.task);
            let drain = cpu.is_none();
            let mut sample = |kinds: &mut Kinds, name: &str, start: u64, dur: u64| {
                if let Some(cpu) = cpu {
                    let kind = kinds.get(name);
                    out.push(Record::new(start, Event::Overhead { cpu, kind, duration: dur }));
                }
            };
            match x.kind {
                RecKind::JobRelease => released.push((x.task, x.job, x.arg.saturating_sub(c.t0))),
                RecKind::JobStart | RecKind::JobResume => {
                    let cpu = cpu.ok_or_else(|| RunError::Internal("a job runs on the drain buffer".into()))?;
                    first_run.entry((x.task, x.job)).or_insert(x.ts);
                    out.push(Record::new(x.ts, Event::Run { cpu, job }));
                }
                RecKind::JobPreempt => {
                    let cpu = cpu.ok_or_else(|| RunError::Internal("a job is preempted on the drain buffer".into()))?;
                    out.push(Record::new(x.ts, Event::Preempt { cpu, job }));
                }
                RecKind::JobComplete => {
                    let cpu = cpu.ok_or_else(|| RunError::Internal("a job completes on the drain buffer".into()))?;
                    out.push(Record::new(x.ts, Event::Complete { cpu, job }));
                }
                RecKind::JobSuspend => {
                    let cpu = cpu.ok_or_else(|| RunError::Internal("a job suspends on the drain buffer".into()))?;
                    out.push(Record::new(x.ts, Event::Suspend { cpu, job }));
                }
                RecKind::JobWake => out.push(Record::new(x.ts, Event::Resume { job })),
                RecKind::ReleaseStart
                | RecKind::SchedStart
                | RecKind::LockWaitStart
                | RecKind::CxsStart
                | RecKind::TickStart
                | RecKind::TimerStart
                | RecKind::TermStart => {
                    let id = if x.kind == RecKind::TermStart { x.task } else { 0 };
                    open.insert((x.kind, id), x.ts);
                    if x.kind == RecKind::ReleaseStart && !drain {
                        // Δev: from the due time to the handler's start.
                        let due = x.arg.saturating_sub(c.t0).min(x.ts);
                        sample(&mut kinds, "release_event", due, x.ts - due);
                    }
                }
                RecKind::ReleaseEnd
                | RecKind::SchedEnd
                | RecKind::LockWaitEnd
                | RecKind::CxsEnd
                | RecKind::TickEnd
                | RecKind::TimerEnd
                | RecKind::TermEnd => {
                    let (start, name) = match x.kind {
                        RecKind::ReleaseEnd => ((RecKind::ReleaseStart, 0), "release"),
                        RecKind::SchedEnd => ((RecKind::SchedStart, 0), "schedule"),
                        RecKind::LockWaitEnd => ((RecKind::LockWaitStart, 0), "lock_wait"),
                        RecKind::CxsEnd => ((RecKind::CxsStart, 0), "context_switch"),
                        RecKind::TickEnd => ((RecKind::TickStart, 0), "tick"),
                        RecKind::TimerEnd => ((RecKind::TimerStart, 0), "timer"),
                        _ => ((RecKind::TermStart, x.task), term(x.task)),
                    };
                    if let Some(s) = open.remove(&start) {
                        sample(&mut kinds, name, s, x.ts.saturating_sub(s));
                    }
                }
                RecKind::IpiNoticed => {
                    let sent = rel(x.arg).min(x.ts);
                    sample(&mut kinds, "ipi", sent, x.ts - sent);
                }
                RecKind::TermSince => {
                    let since = rel(x.arg).min(x.ts);
                    sample(&mut kinds, term(x.task), since, x.ts - since);
                }
                RecKind::TermValue => sample(&mut kinds, term(x.task), x.ts, x.arg),
                RecKind::Steal => {
                    let to = cpu.ok_or_else(|| RunError::Internal("a steal on the drain buffer".into()))?;
                    out.push(Record::new(x.ts, Event::Steal { job, from: x.arg as u32, to }));
                }
                RecKind::HostGap => {
                    // Host interference from `arg` (monotonic ns) to now: a pseudo-term.
                    let from = x.arg.saturating_sub(c.t0).min(x.ts);
                    sample(&mut kinds, rtsched_trace::INTERFERENCE_TERM, from, x.ts - from);
                }
                RecKind::IpiSent => {}
            }
        }
    }
    let mut completion: HashMap<(u32, u32), u64> = HashMap::new();
    for x in &out {
        if let Event::Complete { job, .. } = x.event {
            completion.insert((job.task, job.job), x.time);
        }
    }
    for (task, job, due) in released {
        let deadline = due + c.ts.tasks()[task as usize].deadline;
        let t = first_run.get(&(task, job)).map_or(due, |&f| f.min(due));
        let id = JobId { task, job };
        out.push(Record::new(t, Event::Release { job: id, deadline }));
        // A miss, as the simulator writes it: at the deadline, if the job had not completed
        // by then (completions after the horizon do not count).
        let done = completion.get(&(task, job)).is_some_and(|&f| f <= deadline && f <= c.horizon);
        if deadline <= c.horizon && !done {
            out.push(Record::new(deadline, Event::DeadlineMiss { job: id }));
        }
    }
    out.sort_by_key(|x| {
        let tie = match x.event {
            Event::Release { job, .. } | Event::DeadlineMiss { job } => (job.task, job.job),
            _ => (0, 0),
        };
        (x.time, class(&x.event), tie)
    });
    // Migrations: a resumption on another CPU than the job last ran on.
    let mut last: HashMap<JobId, u32> = HashMap::new();
    let mut records = Vec::with_capacity(out.len());
    for x in out {
        if let Event::Run { cpu, job } = x.event {
            if let Some(&from) = last.get(&job) {
                if from != cpu {
                    records.push(Record::new(x.time, Event::Migration { job, from, to: cpu }));
                }
            }
            last.insert(job, cpu);
        }
        records.push(x);
    }
    let mut meta = TraceMeta::new(c.ts, meta_m, c.horizon);
    meta.terms = kinds.names;
    Ok(Trace { meta, records })
}
