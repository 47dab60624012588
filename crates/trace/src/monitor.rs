//! Monitors over a trace: the priority-inversion time of a schedule against the invariant its
//! policy promises (`rtsched_policy::invariant`, the one definition; a runtime mechanism's
//! registry entry says which). Any trace can be checked: a real run's (the runtime computes it
//! for every run) or a simulated one (which has none: the simulator is the oracle).
//!
//! A job is *ready* from its release until its completion, provided its task's previous job
//! has completed (jobs of a task run in order: a tardy job delays its successor, as in the
//! runtime and the simulator). Priorities are the invariant's rule applied to (task, job,
//! absolute deadline).
//!
//! The priority-inversion time is the total length of the intervals in `[0, horizon)` in
//! which the invariant is violated, found by one sweep over the records in time order: all
//! records sharing a timestamp are applied, then the invariant is checked and the interval to
//! the next timestamp is charged if it fails. On real runs this measures the time between a
//! scheduling-relevant event (a release, a completion) and the mechanism acting on it, i.e.
//! release/scheduling/IPI overheads and any lost or delayed preemption, plus host
//! interference (sources: Brandenburg & Anderson, RTSS 2009, §2 — overheads as the gap
//! between the ideal and the real schedule; Cerqueira, Vanga & Brandenburg, RTAS 2014,
//! §II-A — the global scheduling invariant).
//!
//! Assumptions: any deadline type; one job per task may run at a time.

use crate::{Event, JobId, Trace};
use rtsched_model::{ModelError, Time};
use rtsched_policy::invariant::{Invariant, Scope};
use rtsched_policy::{Prio, PriorityRule};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, VecDeque};

/// Priority-inversion time (ns) of `trace` over `[0, trace.meta.horizon)` against `inv`.
///
/// Errors (input errors, the crate's [`ModelError`] like every other reader of a trace) on an
/// inconsistent trace (a job run or completed before its release) or an invariant that does
/// not fit it (a task that is in no partition, a partition or a rank list of the wrong length).
pub fn priority_inversion(trace: &Trace, inv: &Invariant) -> Result<Time, ModelError> {
    priority_inversion_report(trace, inv, Time::MAX).map(|r| r.total_ns)
}

/// The priority inversion of a run, split into maximal violation intervals (consecutive
/// charged gaps form one interval) and measured against a tracking bound.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PiReport {
    /// Total violation time in `[0, horizon)`.
    pub total_ns: Time,
    /// Number of maximal violation intervals.
    pub intervals: u64,
    /// The longest one (0 if none).
    pub max_interval_ns: Time,
    /// The bound an interval may last as the mechanism's reaction to the event that opened
    /// it (see [`tracking_bound_ns`]).
    pub tracking_bound_ns: Time,
    /// Sum over intervals of the part beyond the bound: `Σ max(0, len − bound)`.
    pub beyond_tracking_ns: Time,
    /// Intervals longer than the bound.
    pub beyond_tracking_intervals: u64,
}

/// A run's own tracking delay: the sum of the largest samples its trace holds of each of
/// `terms` — the overheads on the path from an event to the dispatch that answers it (for the
/// runtime's mechanisms: timer latency Δev, Δrel, lock wait, Δsch, Δcxs, Δipi, and whatever a
/// mechanism's registry entry marks as tracking). A violation interval longer than this is not
/// explained by any reaction the run measured — a lost or wrong decision, or interference the
/// tracer cannot see.
pub fn tracking_bound_ns<S: AsRef<str>>(trace: &Trace, terms: &[S]) -> Time {
    let samples = trace.overhead_samples();
    terms
        .iter()
        .filter_map(|k| samples.get(k.as_ref()))
        .map(|v| v.iter().copied().max().unwrap_or(0))
        .fold(0, Time::saturating_add)
}

/// Like [`priority_inversion`], reporting the intervals against `bound_ns`.
pub fn priority_inversion_report(trace: &Trace, inv: &Invariant, bound_ns: Time) -> Result<PiReport, ModelError> {
    let n = trace.meta.tasks.len();
    if let Scope::Partitioned { cpu_of } = &inv.scope {
        if cpu_of.len() != n {
            return Err(ModelError::new(format!("the partition covers {} tasks; the trace has {n}", cpu_of.len())));
        }
        if let Some(i) = cpu_of.iter().position(|&c| c == u32::MAX) {
            return Err(ModelError::new(format!("task {i} is in no partition")));
        }
    }
    if let PriorityRule::Fixed(r) = &inv.rule {
        if r.len() != n {
            return Err(ModelError::new(format!("{} ranks for {n} tasks", r.len())));
        }
    }
    let mut rep = PiReport {
        total_ns: 0,
        intervals: 0,
        max_interval_ns: 0,
        tracking_bound_ns: bound_ns,
        beyond_tracking_ns: 0,
        beyond_tracking_intervals: 0,
    };
    let close = |rep: &mut PiReport, start: Time, end: Time| {
        let len = end - start;
        rep.intervals += 1;
        rep.max_interval_ns = rep.max_interval_ns.max(len);
        if len > bound_ns {
            rep.beyond_tracking_ns += len - bound_ns;
            rep.beyond_tracking_intervals += 1;
        }
    };
    let prio = |job: JobId, deadline: Time| inv.rule.prio(job.task, job.job, deadline);
    // Per task: released, not completed jobs in order (front = the eligible one).
    let mut backlog: Vec<VecDeque<Prio>> = vec![VecDeque::new(); n];
    let mut deadline: HashMap<JobId, Time> = HashMap::new();
    let mut ready: BTreeSet<Prio> = BTreeSet::new();
    let mut sorted: Vec<Prio> = Vec::new();
    // The job running on each lane (CPU).
    let lanes = trace.meta.m as usize;
    let mut running: Vec<Option<Prio>> = vec![None; lanes];
    let lane = |cpu: u32, t: Time| -> Result<usize, ModelError> {
        if (cpu as usize) < lanes {
            Ok(cpu as usize)
        } else {
            Err(ModelError::new(format!("a record at {t} names CPU {cpu}; the trace has {lanes}")))
        }
    };
    let horizon = trace.meta.horizon;
    let mut open: Option<Time> = None;
    let recs = &trace.records;
    let mut i = 0;
    while i < recs.len() {
        let t = recs[i].time;
        if t >= horizon {
            break;
        }
        while i < recs.len() && recs[i].time == t {
            match recs[i].event {
                Event::Release { job, deadline: d } => {
                    let tk = job.task as usize;
                    if tk >= n {
                        return Err(ModelError::new(format!("the trace names task {tk}; it has {n} tasks")));
                    }
                    let p = prio(job, d);
                    deadline.insert(job, d);
                    if backlog[tk].is_empty() {
                        ready.insert(p);
                    }
                    backlog[tk].push_back(p);
                }
                Event::Run { cpu, job } => {
                    let d = *deadline.get(&job).ok_or_else(|| {
                        ModelError::new(format!("job {}.{} runs at {t} before its release", job.task, job.job))
                    })?;
                    running[lane(cpu, t)?] = Some(prio(job, d));
                }
                Event::Preempt { cpu, .. } => running[lane(cpu, t)?] = None,
                // A self-suspended job is not ready until it resumes (it stays its task's head).
                Event::Suspend { cpu, job } => {
                    running[lane(cpu, t)?] = None;
                    if let Some(&d) = deadline.get(&job) {
                        ready.remove(&prio(job, d));
                    }
                }
                Event::Resume { job } => {
                    if let Some(&d) = deadline.get(&job) {
                        if backlog[job.task as usize].front() == Some(&prio(job, d)) {
                            ready.insert(prio(job, d));
                        }
                    }
                }
                Event::Complete { cpu, job } => {
                    running[lane(cpu, t)?] = None;
                    let tk = job.task as usize;
                    let d = *deadline.get(&job).ok_or_else(|| {
                        ModelError::new(format!("job {}.{} completes at {t} before its release", job.task, job.job))
                    })?;
                    let p = prio(job, d);
                    if backlog[tk].front() == Some(&p) {
                        backlog[tk].pop_front();
                        ready.remove(&p);
                        if let Some(&next) = backlog[tk].front() {
                            ready.insert(next);
                        }
                    } else {
                        return Err(ModelError::new(format!(
                            "job {}.{} completes at {t} before its predecessor",
                            job.task, job.job
                        )));
                    }
                }
                _ => {}
            }
            i += 1;
        }
        let next = recs.get(i).map_or(horizon, |r| r.time.min(horizon));
        sorted.clear();
        sorted.extend(ready.iter().copied());
        if inv.check(&sorted, &running).is_err() {
            rep.total_ns += next - t;
            open.get_or_insert(t);
        } else if let Some(start) = open.take() {
            close(&mut rep, start, t);
        }
    }
    if let Some(start) = open.take() {
        close(&mut rep, start, horizon);
    }
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{OverheadKind, Record, TraceMeta};
    use rtsched_model::TaskSet;

    fn j(task: u32, job: u32) -> JobId {
        JobId { task, job }
    }

    fn trace(ts: &TaskSet, m: u32, horizon: Time, ev: Vec<(Time, Event)>) -> Trace {
        Trace {
            meta: TraceMeta::new(ts, m, horizon),
            records: ev.into_iter().map(|(t, e)| Record::new(t, e)).collect(),
        }
    }

    fn one_cpu(n: usize) -> Vec<u32> {
        vec![0; n]
    }

    #[test]
    fn a_late_preemption_is_measured_exactly() {
        // One CPU. Job 0.0 (deadline 100) runs from 0; job 1.0 (deadline 50) is released at 20
        // but the CPU switches only at 27: 7 ns of inversion. Then 1.0 runs to 40, 0.0 resumes.
        let ts = TaskSet::from_cdt(&[(60, 100, 100), (13, 50, 100)]).unwrap();
        let tr = trace(
            &ts,
            1,
            100,
            vec![
                (0, Event::Release { job: j(0, 0), deadline: 100 }),
                (0, Event::Run { cpu: 0, job: j(0, 0) }),
                (20, Event::Release { job: j(1, 0), deadline: 50 }),
                (27, Event::Preempt { cpu: 0, job: j(0, 0) }),
                (27, Event::Run { cpu: 0, job: j(1, 0) }),
                (40, Event::Complete { cpu: 0, job: j(1, 0) }),
                (40, Event::Run { cpu: 0, job: j(0, 0) }),
                (87, Event::Complete { cpu: 0, job: j(0, 0) }),
            ],
        );
        assert_eq!(priority_inversion(&tr, &Invariant::global_edf(1)).unwrap(), 7);
        // The same trace as a partition of one CPU under EDF: the same 7 ns; under FP with
        // task 0 first it is never violated.
        let p = Invariant::partitioned(one_cpu(2), PriorityRule::Edf);
        assert_eq!(priority_inversion(&tr, &p).unwrap(), 7);
        let fp = Invariant::partitioned(one_cpu(2), PriorityRule::Fixed(vec![0, 1]));
        // Under FP (task 0 highest) the switch to 1.0 at 27 is itself an inversion until 40.
        assert_eq!(priority_inversion(&tr, &fp).unwrap(), 13);
    }

    #[test]
    fn idle_cpu_with_ready_job_and_slow_completion_handoff() {
        // Two CPUs, three jobs released at 0; the third (lowest priority) waits. CPU 1
        // completes at 10 but picks up job 2.0 only at 15 (5 ns), and CPU 0 sits idle from
        // 0 to 3 while 0.0 is ready (3 ns).
        let ts = TaskSet::from_cdt(&[(10, 20, 20), (10, 30, 30), (10, 40, 40)]).unwrap();
        let tr = trace(
            &ts,
            2,
            40,
            vec![
                (0, Event::Release { job: j(0, 0), deadline: 20 }),
                (0, Event::Release { job: j(1, 0), deadline: 30 }),
                (0, Event::Release { job: j(2, 0), deadline: 40 }),
                (0, Event::Run { cpu: 1, job: j(1, 0) }),
                (3, Event::Run { cpu: 0, job: j(0, 0) }),
                (10, Event::Complete { cpu: 1, job: j(1, 0) }),
                (13, Event::Complete { cpu: 0, job: j(0, 0) }),
                (15, Event::Run { cpu: 1, job: j(2, 0) }),
                (25, Event::Complete { cpu: 1, job: j(2, 0) }),
            ],
        );
        assert_eq!(priority_inversion(&tr, &Invariant::global_edf(2)).unwrap(), 3 + 5);
        // Two separate intervals, [0, 3) and [10, 15); against a bound of 4 only the second
        // goes beyond it, by 1.
        let rep = priority_inversion_report(&tr, &Invariant::global_edf(2), 4).unwrap();
        assert_eq!(
            rep,
            PiReport {
                total_ns: 8,
                intervals: 2,
                max_interval_ns: 5,
                tracking_bound_ns: 4,
                beyond_tracking_ns: 1,
                beyond_tracking_intervals: 1,
            }
        );
        // Running a lower-priority job instead of a higher one counts too.
        let bad = trace(
            &ts,
            1,
            40,
            vec![
                (0, Event::Release { job: j(0, 0), deadline: 20 }),
                (0, Event::Release { job: j(2, 0), deadline: 40 }),
                (0, Event::Run { cpu: 0, job: j(2, 0) }),
                (10, Event::Complete { cpu: 0, job: j(2, 0) }),
                (10, Event::Run { cpu: 0, job: j(0, 0) }),
                (20, Event::Complete { cpu: 0, job: j(0, 0) }),
            ],
        );
        assert_eq!(priority_inversion(&bad, &Invariant::global_edf(1)).unwrap(), 10);
        // One interval through the records at 0 and up to the switch at 10.
        let rep = priority_inversion_report(&bad, &Invariant::global_edf(1), 10).unwrap();
        assert_eq!((rep.intervals, rep.max_interval_ns, rep.beyond_tracking_ns), (1, 10, 0));
    }

    #[test]
    fn backlogged_job_is_not_ready_until_its_predecessor_completes() {
        // Task 0's job 0 is tardy: job 0.1 is released at 10 while 0.0 runs; the only CPU
        // keeps running 0.0 (0.1 is not eligible), so there is no inversion.
        let ts = TaskSet::from_cdt(&[(15, 10, 10)]).unwrap();
        let tr = trace(
            &ts,
            1,
            20,
            vec![
                (0, Event::Release { job: j(0, 0), deadline: 10 }),
                (0, Event::Run { cpu: 0, job: j(0, 0) }),
                (10, Event::Release { job: j(0, 1), deadline: 20 }),
                (15, Event::Complete { cpu: 0, job: j(0, 0) }),
                (15, Event::Run { cpu: 0, job: j(0, 1) }),
            ],
        );
        assert_eq!(priority_inversion(&tr, &Invariant::global_edf(1)).unwrap(), 0);
    }

    #[test]
    fn inconsistent_traces_are_errors() {
        let ts = TaskSet::from_cdt(&[(1, 10, 10)]).unwrap();
        let tr = trace(&ts, 1, 20, vec![(0, Event::Run { cpu: 0, job: j(0, 0) })]);
        assert!(priority_inversion(&tr, &Invariant::global_edf(1))
            .unwrap_err()
            .to_string()
            .contains("before its release"));
        let p = Invariant::partitioned(vec![u32::MAX], PriorityRule::Edf);
        assert_eq!(priority_inversion(&tr, &p).unwrap_err().to_string(), "task 0 is in no partition");
        let p = Invariant::partitioned(vec![0, 0], PriorityRule::Edf);
        assert!(priority_inversion(&tr, &p).unwrap_err().to_string().contains("covers 2 tasks"));
        let p = Invariant::partitioned(vec![0], PriorityRule::Fixed(vec![0, 1]));
        assert!(priority_inversion(&tr, &p).unwrap_err().to_string().contains("2 ranks for 1 tasks"));
        let tr = trace(
            &ts,
            1,
            20,
            vec![(0, Event::Release { job: j(0, 0), deadline: 10 }), (0, Event::Run { cpu: 3, job: j(0, 0) })],
        );
        assert!(priority_inversion(&tr, &Invariant::global_edf(1)).unwrap_err().to_string().contains("names CPU 3"));
    }

    #[test]
    fn the_tracking_bound_sums_the_largest_samples_of_the_terms() {
        let ts = TaskSet::from_cdt(&[(1, 10, 10)]).unwrap();
        let mut tr = trace(
            &ts,
            1,
            20,
            vec![
                (0, Event::Overhead { cpu: 0, kind: OverheadKind::Schedule, duration: 3 }),
                (1, Event::Overhead { cpu: 0, kind: OverheadKind::Schedule, duration: 5 }),
                (2, Event::Overhead { cpu: 0, kind: OverheadKind::Term(0), duration: 7 }),
                (3, Event::Overhead { cpu: 0, kind: OverheadKind::Release, duration: 100 }),
            ],
        );
        tr.meta.terms = vec!["lock_wait".into()];
        assert_eq!(tracking_bound_ns(&tr, &["schedule", "lock_wait", "ipi"]), 5 + 7);
    }
}
