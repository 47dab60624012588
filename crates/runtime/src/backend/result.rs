//! What a run produces: per-job records, overhead samples per term, release latencies,
//! dropped-record counts, job accounting, and a trace well-formedness check.
//!
//! Definitions (all ns, relative to the run's time zero):
//! * release = the job's due release time; deadline = release + D;
//! * start = first `JobStart`; finish = `JobComplete`; response time = finish − release;
//! * deadline miss = completed after its deadline, or still pending at the end with its
//!   deadline before the end; tardiness = max(0, finish − deadline) for completed jobs
//!   (a pending tardy job's tardiness is unknown and not counted in `max_tardiness_ns`);
//! * release latency = start − release (timer due → job starts, as the issue defines it;
//!   it includes waiting for higher-priority jobs, so it is an overhead only when the job
//!   is among the m highest-priority pending jobs at its release — true in light loads);
//! * overhead terms (seed 000 §IV-A): `release` Δrel (handler start → end), `release_event`
//!   Δev (due → handler start), `schedule` Δsch (scheduler entry → exit, lock waits
//!   included), `lock_wait` (the waits alone), `context_switch` Δcxs (dispatch), `ipi` Δipi
//!   (send → noticed). There is no periodic tick under these event-driven mechanisms, so no
//!   tick samples exist.

use crate::clock::TscCalibration;
use crate::config::RunConfig;
use crate::mechanism::Accounting;
use crate::tracer::{RecKind, Record, TraceBuffer};
use rtsched_model::TaskSet;
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};

/// One job's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobRecord {
    pub task: u32,
    pub job: u32,
    pub release_ns: u64,
    pub deadline_ns: u64,
    pub start_ns: Option<u64>,
    pub finish_ns: Option<u64>,
    /// OS CPU number of the completion (or of the last execution, if pending).
    pub cpu: Option<usize>,
    pub deadline_miss: bool,
    pub tardiness_ns: u64,
    pub response_time_ns: Option<u64>,
}

/// Summary statistics of a sample (nearest-rank percentiles).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub count: usize,
    pub avg_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

impl Stats {
    pub fn of(samples: &[u64]) -> Stats {
        if samples.is_empty() {
            return Stats { count: 0, avg_ns: 0.0, p50_ns: 0, p99_ns: 0, max_ns: 0 };
        }
        let mut v = samples.to_vec();
        v.sort_unstable();
        let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Stats {
            count: v.len(),
            avg_ns: v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64,
            p50_ns: rank(0.50),
            p99_ns: rank(0.99),
            max_ns: *v.last().unwrap(),
        }
    }
}

/// Job accounting at the end of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobAccounting {
    pub released: u64,
    pub completed: u64,
    pub pending: u64,
    /// `None` if released = completed + pending holds per task, the trace agrees with the
    /// mechanism's own counts and the mechanism lost no job; otherwise what failed.
    pub error: Option<String>,
}

/// Everything a run measured.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub scheduler: String,
    pub m: usize,
    pub cpus: Vec<usize>,
    pub dedicated_cpu: Option<usize>,
    /// The time actually run: the configured duration, or less if the run was stopped early.
    pub duration_ns: u64,
    /// The run was stopped early (`RunConfig::stop`); its results cover `duration_ns`.
    pub interrupted: bool,
    pub jobs: Vec<JobRecord>,
    /// Per-buffer trace records with `ts` converted to ns since time zero (saturating at 0).
    pub traces: Vec<Vec<Record>>,
    /// Overhead samples (ns) per term name.
    pub overheads: BTreeMap<String, Vec<u64>>,
    /// Release latency samples (ns), one per started job.
    pub release_latency: Vec<u64>,
    pub dropped_records: u64,
    pub accounting: JobAccounting,
    /// Released / completed per task, from the mechanism.
    pub per_task: Accounting,
    /// Largest gap between two preemption polls of a job body (includes host preemptions).
    pub max_poll_gap_ns: u64,
    /// Trace counter rate (Hz) found by calibration.
    pub counter_hz: f64,
}

impl RunResult {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build(
        ts: &TaskSet,
        scheduler: &str,
        terms: &[&'static str],
        cfg: &RunConfig,
        t0: u64,
        duration_ns: u64,
        interrupted: bool,
        cal: &TscCalibration,
        buffers: Vec<TraceBuffer>,
        acc: Accounting,
        max_poll_gap_ns: u64,
    ) -> RunResult {
        let dropped: u64 = buffers.iter().map(|b| b.dropped()).sum();
        let to_rel = |c: u64| cal.to_ns(c).saturating_sub(t0);
        let mut traces = Vec::with_capacity(buffers.len());
        let mut overheads: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for name in crate::mechanism::registry::ENGINE_TERMS.iter().map(|t| t.name).chain(terms.iter().copied()) {
            overheads.insert(name.into(), Vec::new());
        }
        let term = |id: u32| terms.get(id as usize).copied().unwrap_or("unknown_term");
        for b in &buffers {
            // The end-of-run release drain is bookkeeping, not overhead.
            let drain = b.cpu() == super::lifecycle::DRAIN_CPU;
            let recs: Vec<Record> = b.records().iter().map(|r| Record { ts: to_rel(r.ts), ..*r }).collect();
            let mut open: HashMap<(RecKind, u32), u64> = HashMap::new();
            for (r, raw) in recs.iter().zip(b.records()) {
                let pair = match r.kind {
                    RecKind::ReleaseStart
                    | RecKind::SchedStart
                    | RecKind::LockWaitStart
                    | RecKind::CxsStart
                    | RecKind::TickStart
                    | RecKind::TimerStart
                    | RecKind::TermStart => {
                        let id = if r.kind == RecKind::TermStart { r.task } else { 0 };
                        open.insert((r.kind, id), r.ts);
                        if r.kind == RecKind::ReleaseStart && !drain {
                            let due = r.arg.saturating_sub(t0);
                            overheads.get_mut("release_event").unwrap().push(r.ts.saturating_sub(due));
                        }
                        None
                    }
                    RecKind::ReleaseEnd => Some(((RecKind::ReleaseStart, 0), "release")),
                    RecKind::SchedEnd => Some(((RecKind::SchedStart, 0), "schedule")),
                    RecKind::LockWaitEnd => Some(((RecKind::LockWaitStart, 0), "lock_wait")),
                    RecKind::CxsEnd => Some(((RecKind::CxsStart, 0), "context_switch")),
                    RecKind::TickEnd => Some(((RecKind::TickStart, 0), "tick")),
                    RecKind::TimerEnd => Some(((RecKind::TimerStart, 0), "timer")),
                    RecKind::TermEnd => Some(((RecKind::TermStart, r.task), term(r.task))),
                    RecKind::IpiNoticed => {
                        overheads.get_mut("ipi").unwrap().push(cal.to_ns(raw.ts).saturating_sub(cal.to_ns(r.arg)));
                        None
                    }
                    RecKind::TermSince => {
                        let v = cal.to_ns(raw.ts).saturating_sub(cal.to_ns(r.arg));
                        overheads.entry(term(r.task).into()).or_default().push(v);
                        None
                    }
                    RecKind::TermValue => {
                        overheads.entry(term(r.task).into()).or_default().push(r.arg);
                        None
                    }
                    _ => None,
                };
                if let Some((start, name)) = pair {
                    if drain {
                        continue;
                    }
                    if let Some(s) = open.remove(&start) {
                        overheads.entry(name.into()).or_default().push(r.ts.saturating_sub(s));
                    }
                }
            }
            traces.push(recs);
        }
        let mut res = RunResult {
            scheduler: scheduler.into(),
            m: cfg.cpus.len(),
            cpus: cfg.cpus.clone(),
            dedicated_cpu: cfg.dedicated_cpu,
            duration_ns,
            interrupted,
            jobs: Vec::new(),
            traces,
            overheads,
            release_latency: Vec::new(),
            dropped_records: dropped,
            accounting: JobAccounting { released: 0, completed: 0, pending: 0, error: None },
            per_task: acc,
            max_poll_gap_ns,
            counter_hz: cal.ticks_per_second(),
        };
        res.build_jobs(ts, t0);
        res
    }

    fn cpu_of_buffer(&self, b: u16) -> Option<usize> {
        self.cpus.get(b as usize).copied().or(self.dedicated_cpu)
    }

    /// Per-job table and accounting from the (converted) records.
    pub(crate) fn build_jobs(&mut self, ts: &TaskSet, t0: u64) {
        let mut jobs: BTreeMap<(u32, u32), JobRecord> = BTreeMap::new();
        let mut all: Vec<&Record> = self.traces.iter().flatten().collect();
        all.sort_by_key(|r| r.ts);
        for r in all {
            let key = (r.task, r.job);
            match r.kind {
                RecKind::JobRelease => {
                    let t = &ts.tasks()[r.task as usize];
                    let rel = r.arg.saturating_sub(t0);
                    jobs.insert(
                        key,
                        JobRecord {
                            task: r.task,
                            job: r.job,
                            release_ns: rel,
                            deadline_ns: rel + t.deadline,
                            start_ns: None,
                            finish_ns: None,
                            cpu: None,
                            deadline_miss: false,
                            tardiness_ns: 0,
                            response_time_ns: None,
                        },
                    );
                }
                RecKind::JobStart | RecKind::JobResume | RecKind::JobComplete => {
                    let cpu = self.cpu_of_buffer(r.cpu);
                    if let Some(j) = jobs.get_mut(&key) {
                        if r.kind == RecKind::JobStart && j.start_ns.is_none() {
                            j.start_ns = Some(r.ts);
                        }
                        if r.kind == RecKind::JobComplete {
                            j.finish_ns = Some(r.ts);
                        }
                        j.cpu = cpu;
                    }
                }
                _ => {}
            }
        }
        let mut released = 0;
        let mut completed = 0;
        for j in jobs.values_mut() {
            released += 1;
            if let Some(s) = j.start_ns {
                self.release_latency.push(s.saturating_sub(j.release_ns));
            }
            if let Some(f) = j.finish_ns {
                completed += 1;
                j.response_time_ns = Some(f.saturating_sub(j.release_ns));
                j.tardiness_ns = f.saturating_sub(j.deadline_ns);
                j.deadline_miss = f > j.deadline_ns;
            } else {
                j.deadline_miss = j.deadline_ns < self.duration_ns;
            }
        }
        self.jobs = jobs.into_values().collect();
        let pending = released - completed;
        let mut error = None;
        let acc = &self.per_task;
        let (pr, pc): (u64, u64) =
            (acc.released.iter().map(|&x| x as u64).sum(), acc.completed.iter().map(|&x| x as u64).sum());
        if self.dropped_records == 0 && (pr != released || pc != completed) {
            error =
                Some(format!("trace has {released} releases / {completed} completions, mechanism counts {pr} / {pc}"));
        }
        for t in 0..acc.released.len() {
            if acc.completed[t] > acc.released[t] {
                error = Some(format!("task {t}: completed {} > released {}", acc.completed[t], acc.released[t]));
            }
        }
        if let Err(e) = &acc.consistent {
            error = Some(e.clone());
        }
        self.accounting = JobAccounting { released, completed, pending, error };
    }

    /// Checks the trace's well-formedness: per-buffer timestamps in order; every start or
    /// resume preceded by its job's release; at most one completion per job and jobs of a
    /// task completing in order; on each CPU, run intervals alternate (start/resume, then
    /// preempt/complete of the same job); no job runs on two CPUs at once. Fails on an
    /// incomplete (dropped) trace.
    pub fn check_trace(&self) -> Result<(), String> {
        if self.dropped_records > 0 {
            return Err(format!("the trace is incomplete: {} records dropped", self.dropped_records));
        }
        let mut released: HashMap<(u32, u32), u64> = HashMap::new();
        for r in self.traces.iter().flatten() {
            if r.kind == RecKind::JobRelease && released.insert((r.task, r.job), r.ts).is_some() {
                return Err(format!("job {}:{} released twice", r.task, r.job));
            }
        }
        let mut intervals: HashMap<(u32, u32), Vec<(u64, u64)>> = HashMap::new();
        let mut completions: HashMap<(u32, u32), u64> = HashMap::new();
        for (b, recs) in self.traces.iter().enumerate() {
            if let Some(w) = recs.windows(2).find(|w| w[1].ts < w[0].ts) {
                return Err(format!(
                    "buffer {b}: {} at {} after {} at {}",
                    w[1].kind.name(),
                    w[1].ts,
                    w[0].kind.name(),
                    w[0].ts
                ));
            }
            let mut running: Option<(u32, u32, u64)> = None;
            for r in recs {
                let key = (r.task, r.job);
                match r.kind {
                    RecKind::JobStart | RecKind::JobResume => {
                        if let Some((t, j, _)) = running {
                            return Err(format!("buffer {b}: {}:{} starts while {t}:{j} runs", r.task, r.job));
                        }
                        match released.get(&key) {
                            Some(&rt) if rt <= r.ts => {}
                            _ => return Err(format!("job {}:{} starts at {} before its release", r.task, r.job, r.ts)),
                        }
                        running = Some((r.task, r.job, r.ts));
                    }
                    RecKind::JobPreempt | RecKind::JobComplete => {
                        match running {
                            Some((t, j, s)) if (t, j) == key => intervals.entry(key).or_default().push((s, r.ts)),
                            _ => {
                                return Err(format!(
                                    "buffer {b}: {} of {}:{} that is not running",
                                    r.kind.name(),
                                    r.task,
                                    r.job
                                ))
                            }
                        }
                        running = None;
                        if r.kind == RecKind::JobComplete && completions.insert(key, r.ts).is_some() {
                            return Err(format!("job {}:{} completes twice", r.task, r.job));
                        }
                    }
                    _ => {}
                }
            }
            if let Some((t, j, s)) = running {
                intervals.entry((t, j)).or_default().push((s, u64::MAX));
            }
        }
        for (k, iv) in intervals.iter_mut() {
            iv.sort_unstable();
            if let Some(w) = iv.windows(2).find(|w| w[1].0 < w[0].1) {
                return Err(format!("job {}:{} runs on two CPUs at once ({:?} and {:?})", k.0, k.1, w[0], w[1]));
            }
        }
        let mut by_task: BTreeMap<u32, Vec<(u64, u32)>> = BTreeMap::new();
        for (&(t, j), &f) in &completions {
            by_task.entry(t).or_default().push((f, j));
        }
        for (t, mut v) in by_task {
            v.sort_unstable();
            for (i, &(_, j)) in v.iter().enumerate() {
                if j != i as u32 {
                    return Err(format!("task {t}: completion #{i} is job {j} (out of order or missing)"));
                }
            }
        }
        Ok(())
    }

    pub fn deadline_misses(&self) -> usize {
        self.jobs.iter().filter(|j| j.deadline_miss).count()
    }

    /// The run summary as JSON (field list in docs/runtime.md).
    pub fn summary_json(&self) -> Value {
        let rt: Vec<u64> = self.jobs.iter().filter_map(|j| j.response_time_ns).collect();
        let rts = Stats::of(&rt);
        let rl = Stats::of(&self.release_latency);
        let mut ov = serde_json::Map::new();
        for (k, v) in &self.overheads {
            ov.insert(k.clone(), serde_json::to_value(Stats::of(v)).unwrap_or(Value::Null));
        }
        json!({
            "scheduler": self.scheduler,
            "m": self.m,
            "cpus": self.cpus,
            "dedicated_cpu": self.dedicated_cpu,
            "duration_ns": self.duration_ns,
            "interrupted": self.interrupted,
            "jobs": self.jobs.len(),
            "released": self.accounting.released,
            "completed": self.accounting.completed,
            "pending": self.accounting.pending,
            "accounting_error": self.accounting.error,
            "deadline_misses": self.deadline_misses(),
            "max_tardiness_ns": self.jobs.iter().map(|j| j.tardiness_ns).max().unwrap_or(0),
            "response_time_ns": {"avg": rts.avg_ns, "p99": rts.p99_ns, "max": rts.max_ns},
            "release_latency_ns": {"avg": rl.avg_ns, "p50": rl.p50_ns, "p99": rl.p99_ns, "max": rl.max_ns},
            "dropped_records": self.dropped_records,
            "overheads": ov,
            "max_poll_gap_ns": self.max_poll_gap_ns,
            "counter_hz": self.counter_hz,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_use_nearest_rank() {
        let s = Stats::of(&(1..=100).collect::<Vec<u64>>());
        assert_eq!((s.count, s.p50_ns, s.p99_ns, s.max_ns), (100, 50, 99, 100));
        assert_eq!(s.avg_ns, 50.5);
        assert_eq!(Stats::of(&[]).count, 0);
    }
}
