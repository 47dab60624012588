//! Conversion of a run's tracer records into the `rtsched-trace` vocabulary, so that every
//! simulator metric and export (JSON Lines, per-job CSV, Perfetto, sched_trace, Gantt SVG)
//! works on runtime traces (design note: `docs/runtime.md`, "Converting to the trace crate").
//!
//! Mapping (Feather-Trace-style records of Brandenburg & Anderson, OSPERT 2007, to the
//! LITMUS^RT-like schedule events of `rtsched_trace`):
//! * `JobRelease` → `Release { job, deadline }` at the job's *due* time (`JobRecord::release_ns`,
//!   the run's definition of release) with the deadline `release + D`;
//! * `JobStart` / `JobResume` → `Run { cpu, job }`, preceded by `Migration` when the job last
//!   ran on another CPU; `JobPreempt` → `Preempt`; `JobComplete` → `Complete`;
//! * start/end pairs → `Overhead` at the start with kinds `Release` (Δrel), `Schedule` (Δsch),
//!   `ContextSwitch` (Δcxs); `IpiNoticed` → `Overhead { kind: Ipi }`; Δev and lock waits →
//!   `Other`. Sample values are the run's own (`RunResult::overheads`), taken in the order the
//!   run computed them, so the trace's overhead totals equal the summary's.
//!
//! CPU numbers are indices into the run's CPU list; the dedicated release thread of
//! GSN-EDF-DI is CPU index `m` (its overhead samples only; `meta.m = m + 1` then). The
//! end-of-run release drain contributes releases only. Under `kernel-sd` the kernel's
//! dispatching is invisible from user space, so each task's thread is shown as its own lane:
//! CPU index = task index and `meta.m = n`; that trace gives correct per-job times but is not
//! a schedule of m CPUs.
//!
//! Assumptions: jobs of a task are numbered 0, 1, ... in release order (the runtime's
//! numbering); the horizon is the run's duration (records after it are ignored by metrics).

use super::result::RunResult;
use crate::tracer::{RecKind, RELEASE_CPU};
use rtsched_model::TaskSet;
use rtsched_trace::{Event, JobId, OverheadKind, Record, Trace, TraceMeta};
use std::collections::HashMap;

/// Order of events that share a timestamp: releases first, then a CPU giving a job up, then
/// the job taking a CPU, then overhead samples.
fn class(e: &Event) -> u8 {
    match e {
        Event::Release { .. } => 0,
        Event::Preempt { .. } | Event::Complete { .. } => 1,
        Event::DeadlineMiss { .. } | Event::Idle { .. } => 2,
        Event::Migration { .. } => 3,
        Event::Run { .. } => 4,
        // The runtime has no work stealing; listed for exhaustiveness.
        Event::Overhead { .. } | Event::Steal { .. } => 5,
    }
}

/// Converts `r` (a run of `ts`) into a [`Trace`] with records in time order.
///
/// Errors when `ts` is not the run's task set (a record names a task it lacks) or the run
/// dropped records (an incomplete trace cannot be converted faithfully).
pub fn to_trace(r: &RunResult, ts: &TaskSet) -> Result<Trace, String> {
    if r.dropped_records > 0 {
        return Err(format!(
            "the run dropped {} trace records; raise the trace capacity to convert it",
            r.dropped_records
        ));
    }
    let n = ts.len();
    let kernel = r.scheduler == "kernel-sd";
    let m = r.m as u32;
    let has_release_cpu = r.traces.iter().flatten().any(|x| x.cpu == RELEASE_CPU);
    let meta_m = if kernel {
        n as u32
    } else if has_release_cpu {
        m + 1
    } else {
        m
    };
    let lane = |cpu: u16, task: u32| -> Option<u32> {
        if kernel {
            Some(task)
        } else if cpu == RELEASE_CPU {
            Some(m)
        } else if (cpu as u32) < m {
            Some(cpu as u32)
        } else {
            None // the end-of-run drain
        }
    };
    let jobs: HashMap<(u32, u32), (u64, u64)> =
        r.jobs.iter().map(|j| ((j.task, j.job), (j.release_ns, j.deadline_ns))).collect();
    let empty = Vec::new();
    let samples = |k: &str| r.overheads.get(k).unwrap_or(&empty);
    let (ev_s, ipi_s) = (samples("release_event"), samples("ipi"));
    let (mut ev_i, mut ipi_i) = (0usize, 0usize);
    let mut out: Vec<Record> = Vec::new();
    // First run time of each job, to keep a release no later than the job's first run
    // (timestamps from the counter and due times from the monotonic clock may differ by a
    // few ns after calibration).
    let mut first_run: HashMap<(u32, u32), u64> = HashMap::new();
    let mut released: Vec<(u32, u32)> = Vec::new();
    for buf in &r.traces {
        let mut open: HashMap<RecKind, u64> = HashMap::new();
        for x in buf {
            if x.task as usize >= n
                && matches!(
                    x.kind,
                    RecKind::JobRelease
                        | RecKind::JobStart
                        | RecKind::JobResume
                        | RecKind::JobPreempt
                        | RecKind::JobComplete
                )
            {
                return Err(format!("the trace names task {} but the task set has {n} tasks", x.task));
            }
            let job = JobId { task: x.task, job: x.job };
            let cpu = lane(x.cpu, x.task);
            let drain = cpu.is_none();
            let ov = |kind, start: u64, end: u64| Event::Overhead {
                cpu: cpu.unwrap_or(0),
                kind,
                duration: end.saturating_sub(start),
            };
            match x.kind {
                RecKind::JobRelease => released.push((x.task, x.job)),
                RecKind::JobStart | RecKind::JobResume => {
                    let c = cpu.ok_or("a job runs on the drain buffer")?;
                    first_run.entry((x.task, x.job)).or_insert(x.ts);
                    out.push(Record::new(x.ts, Event::Run { cpu: c, job }));
                }
                RecKind::JobPreempt => {
                    let c = cpu.ok_or("a job is preempted on the drain buffer")?;
                    out.push(Record::new(x.ts, Event::Preempt { cpu: c, job }));
                }
                RecKind::JobComplete => {
                    let c = cpu.ok_or("a job completes on the drain buffer")?;
                    out.push(Record::new(x.ts, Event::Complete { cpu: c, job }));
                }
                RecKind::ReleaseStart => {
                    open.insert(x.kind, x.ts);
                    if !drain {
                        if let Some(&d) = ev_s.get(ev_i) {
                            let due = x.ts.saturating_sub(d);
                            out.push(Record::new(due, ov(OverheadKind::Other, due, x.ts)));
                        }
                        ev_i += 1;
                    }
                }
                RecKind::SchedStart | RecKind::LockWaitStart | RecKind::CxsStart => {
                    open.insert(x.kind, x.ts);
                }
                RecKind::ReleaseEnd | RecKind::SchedEnd | RecKind::LockWaitEnd | RecKind::CxsEnd => {
                    let (start, kind) = match x.kind {
                        RecKind::ReleaseEnd => (RecKind::ReleaseStart, OverheadKind::Release),
                        RecKind::SchedEnd => (RecKind::SchedStart, OverheadKind::Schedule),
                        RecKind::LockWaitEnd => (RecKind::LockWaitStart, OverheadKind::Other),
                        _ => (RecKind::CxsStart, OverheadKind::ContextSwitch),
                    };
                    if let (Some(s), false) = (open.remove(&start), drain) {
                        out.push(Record::new(s, ov(kind, s, x.ts)));
                    }
                }
                RecKind::IpiNoticed => {
                    if let Some(&d) = ipi_s.get(ipi_i) {
                        let sent = x.ts.saturating_sub(d);
                        out.push(Record::new(sent, ov(OverheadKind::Ipi, sent, x.ts)));
                    }
                    ipi_i += 1;
                }
                RecKind::IpiSent
                | RecKind::TickStart
                | RecKind::TickEnd
                | RecKind::TimerStart
                | RecKind::TimerEnd
                | RecKind::TermStart
                | RecKind::TermEnd
                | RecKind::TermSince
                | RecKind::TermValue => {}
            }
        }
    }
    for (task, job) in released {
        let &(rel, dl) =
            jobs.get(&(task, job)).ok_or_else(|| format!("job {task}:{job} is released but not in the job table"))?;
        let t = first_run.get(&(task, job)).map_or(rel, |&f| f.min(rel));
        out.push(Record::new(t, Event::Release { job: JobId { task, job }, deadline: dl }));
    }
    out.sort_by_key(|x| {
        let tie = match x.event {
            Event::Release { job, .. } => (job.task, job.job),
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
    Ok(Trace { meta: TraceMeta::new(ts, meta_m, r.duration_ns), records })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::{priority_inversion, summary_with_monitors, Invariant};
    use crate::{run, Mechanism, RunConfig};

    const MS: u64 = 1_000_000;

    /// Real short runs (0.2 s, one CPU, one test so they never overlap): the metrics computed
    /// from the converted trace agree with the runtime's own job accounting, and every
    /// export of the converted trace parses.
    #[test]
    fn converted_runs_agree_with_the_runtime() {
        let cpu = crate::platform::allowed_cpus()[0];
        // Light and overloaded sets (U = 0.55 and U = 1.4 on one CPU).
        let light = TaskSet::from_ct(&[(MS, 10 * MS), (2 * MS, 20 * MS), (MS, 7 * MS)]).unwrap();
        let over = TaskSet::from_ct(&[(6 * MS, 10 * MS), (4 * MS, 10 * MS), (2 * MS, 5 * MS)]).unwrap();
        for ts in [&light, &over] {
            for mech in [
                Mechanism::named("gsn-edf").unwrap(),
                Mechanism::named("pedf").unwrap().with_partition(vec![(0..ts.len()).collect()]),
                Mechanism::named("pfp").unwrap().with_partition(vec![(0..ts.len()).collect()]),
            ] {
                let r = run(ts, &mech, &RunConfig::new(vec![cpu], 200 * MS)).unwrap();
                assert_eq!(r.accounting.error, None);
                let tr = to_trace(&r, ts).unwrap();
                let mt = tr.metrics().unwrap();
                let name = mech.name();
                assert_eq!(mt.jobs, r.accounting.released, "{name}");
                assert_eq!(mt.jobs as usize, r.jobs.len(), "{name}");
                // Completions by the horizon (a completion recorded just after the end would
                // be counted by the runtime only).
                let done = r.jobs.iter().filter(|j| j.finish_ns.is_some_and(|f| f <= r.duration_ns)).count();
                assert_eq!(mt.completed as usize, done, "{name}");
                assert_eq!(mt.jobs, mt.completed + mt.pending);
                // Misses under the trace crate's definition (deadline <= horizon), from the
                // runtime's job table.
                let h = r.duration_ns;
                let misses = r
                    .jobs
                    .iter()
                    .filter(|j| j.deadline_ns <= h && !matches!(j.finish_ns, Some(f) if f <= j.deadline_ns))
                    .count();
                assert_eq!(mt.deadline_misses as usize, misses, "{name}");
                if std::ptr::eq(ts, &over) {
                    assert!(misses > 0, "{name}: the overload must miss");
                }
                // Overhead totals are the run's samples.
                let sch = mt.overheads.iter().find(|o| o.kind == OverheadKind::Schedule).unwrap();
                let is_sch = |x: &&Record| matches!(x.event, Event::Overhead { kind: OverheadKind::Schedule, .. });
                assert_eq!(tr.records.iter().filter(is_sch).count(), r.overheads["schedule"].len());
                let by_h = tr.records.iter().filter(is_sch).filter(|x| x.time <= h).count();
                assert_eq!(sch.count as usize, by_h, "{name}");
                // Exports parse.
                let back = Trace::from_jsonl(&tr.to_jsonl()).unwrap();
                assert_eq!(back.records.len(), tr.records.len());
                let csv = tr.to_job_csv().unwrap();
                assert_eq!(csv.lines().count(), r.jobs.len() + 1);
                let pf: serde_json::Value = serde_json::from_str(&tr.to_perfetto_json()).unwrap();
                assert!(pf.is_object() || pf.is_array());
                assert_eq!(tr.to_sched_trace_bytes().unwrap().len() % 24, 0);
                assert!(tr.to_gantt_svg(None).starts_with("<svg") || tr.to_gantt_svg(None).contains("<svg"));
                // The monitor runs and the summary carries it.
                let inv = crate::monitor::invariant_of(&mech, ts, 1).unwrap();
                let pi = priority_inversion(&tr, &inv).unwrap();
                assert!(pi <= h);
                let s = summary_with_monitors(&r, ts, &mech);
                assert_eq!(s["priority_inversion_ns"], serde_json::json!(pi));
            }
        }
        // The monitor's verdict on a partitioned run checked globally is also defined.
        let _ = Invariant::GlobalEdf { m: 1 };
    }
}
