//! Monitors over a (converted) trace: priority-inversion time against a policy's invariant.
//!
//! **Global (G-EDF).** At every instant the `min(m, r)` highest-priority *ready* jobs must be
//! running, where `r` is the number of ready jobs and the order is `rtsched_policy::Prio`
//! (absolute deadline, then task index, then job number — the order of seed 001's GSN-EDF
//! and of the simulator). A job is ready from its release until its completion, provided its
//! task's previous job has completed (jobs of a task run in order: a tardy job delays its
//! successor, as in the runtime and the simulator). **Partitioned (P-EDF / P-FP).** On each
//! CPU, whenever a job of its partition is ready, the highest-priority such job runs (on that
//! CPU); P-FP's order is `(rank, task, job)`.
//!
//! The priority-inversion time is the total length of the intervals in `[0, horizon)` in
//! which the invariant is violated, found by one sweep over the records in time order: all
//! records sharing a timestamp are applied, then the invariant is checked and the interval to
//! the next timestamp is charged if it fails. On real runs this measures the time between a
//! scheduling-relevant event (a release, a completion) and the mechanism acting on it, i.e.
//! release/scheduling/IPI overheads and any lost or delayed preemption, plus host
//! interference (sources: Brandenburg & Anderson, RTSS 2009, seed 001 §2 — overheads as the
//! gap between the ideal and the real schedule; Cerqueira et al., RTAS 2014, seed 000 §II).
//!
//! Assumptions: any deadline type; one job per task may run at a time.

use crate::backend::result::RunResult;
use crate::mechanism::Mechanism;
use rtsched_model::{TaskSet, Time};
use rtsched_policy::invariant::Scope;
use rtsched_policy::Prio;
use rtsched_policy::PriorityRule;
use rtsched_trace::{Event, JobId, Trace};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};

/// The invariant to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invariant {
    /// Global: the `min(m, r)` highest-priority ready jobs (EDF order) run.
    GlobalEdf { m: usize },
    /// Partitioned: `partition[c]` lists the tasks of CPU `c`; `ranks` = `Some(rank per task)`
    /// for fixed priority (smaller = higher), `None` for EDF.
    Partitioned { partition: Vec<Vec<usize>>, ranks: Option<Vec<u64>> },
}

/// Priority-inversion time (ns) of `trace` over `[0, trace.meta.horizon)` against `inv`.
///
/// Errors on an inconsistent trace (a job run or completed before its release, a task that
/// is in no partition, a partition naming a task the trace lacks).
pub fn priority_inversion(trace: &Trace, inv: &Invariant) -> Result<Time, String> {
    priority_inversion_report(trace, inv, Time::MAX).map(|r| r.total_ns)
}

/// The priority inversion of a run, split into maximal violation intervals (consecutive
/// charged gaps form one interval) and measured against a tracking bound.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
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

/// The run's own tracking delay: the sum of the largest samples it measured of each
/// overhead on the path from an event to the dispatch that answers it (timer latency Δev,
/// Δrel, lock wait, Δsch, Δcxs, Δipi). A violation interval longer than this is not explained
/// by any reaction the run measured — a lost or wrong decision, or interference the tracer
/// cannot see.
pub fn tracking_bound_ns(r: &RunResult) -> Time {
    ["release_event", "release", "lock_wait", "schedule", "context_switch", "ipi"]
        .iter()
        .filter_map(|k| r.overheads.get(*k))
        .map(|v| v.iter().copied().max().unwrap_or(0))
        .fold(0, Time::saturating_add)
}

/// Like [`priority_inversion`], reporting the intervals against `bound_ns`.
pub fn priority_inversion_report(trace: &Trace, inv: &Invariant, bound_ns: Time) -> Result<PiReport, String> {
    let mut rep = PiReport {
        total_ns: 0,
        intervals: 0,
        max_interval_ns: 0,
        tracking_bound_ns: bound_ns,
        beyond_tracking_ns: 0,
        beyond_tracking_intervals: 0,
    };
    let mut open: Option<Time> = None;
    let close = |rep: &mut PiReport, start: Time, end: Time| {
        let len = end - start;
        rep.intervals += 1;
        rep.max_interval_ns = rep.max_interval_ns.max(len);
        if len > bound_ns {
            rep.beyond_tracking_ns += len - bound_ns;
            rep.beyond_tracking_intervals += 1;
        }
    };
    let n = trace.meta.tasks.len();
    let mut cpu_of_task: Vec<Option<usize>> = vec![None; n];
    if let Invariant::Partitioned { partition, ranks } = inv {
        for (c, tasks) in partition.iter().enumerate() {
            for &t in tasks {
                if t >= n {
                    return Err(format!("the partition names task {t}; the trace has {n} tasks"));
                }
                cpu_of_task[t] = Some(c);
            }
        }
        if let Some(i) = cpu_of_task.iter().position(|c| c.is_none()) {
            return Err(format!("task {i} is in no partition"));
        }
        if ranks.as_ref().is_some_and(|r| r.len() != n) {
            return Err(format!("{} ranks for {n} tasks", ranks.as_ref().map_or(0, |r| r.len())));
        }
    }
    let prio = |job: JobId, deadline: Time| -> Prio {
        let key = match inv {
            Invariant::Partitioned { ranks: Some(r), .. } => r[job.task as usize],
            _ => deadline,
        };
        Prio { key, task: job.task, job: job.job }
    };
    // Per task: released, not completed jobs in order (front = the eligible one).
    let mut backlog: Vec<std::collections::VecDeque<Prio>> = vec![Default::default(); n];
    let mut deadline: HashMap<JobId, Time> = HashMap::new();
    // Ready (eligible) jobs: globally, or per CPU for partitioned invariants.
    let groups = match inv {
        Invariant::GlobalEdf { .. } => 1,
        Invariant::Partitioned { partition, .. } => partition.len(),
    };
    let mut ready: Vec<BTreeSet<Prio>> = vec![BTreeSet::new(); groups];
    let group = |task: u32| cpu_of_task.get(task as usize).copied().flatten().unwrap_or(0);
    // Running jobs and where.
    let mut running: HashMap<(u32, u32), u32> = HashMap::new();
    let horizon = trace.meta.horizon;
    let mut total: Time = 0;
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
                        return Err(format!("the trace names task {tk}; it has {n} tasks"));
                    }
                    let p = prio(job, d);
                    deadline.insert(job, d);
                    if backlog[tk].is_empty() {
                        ready[group(job.task)].insert(p);
                    }
                    backlog[tk].push_back(p);
                }
                Event::Run { cpu, job } => {
                    if !deadline.contains_key(&job) {
                        return Err(format!("job {}.{} runs at {t} before its release", job.task, job.job));
                    }
                    running.insert((job.task, job.job), cpu);
                }
                Event::Preempt { job, .. } => {
                    running.remove(&(job.task, job.job));
                }
                Event::Complete { job, .. } => {
                    running.remove(&(job.task, job.job));
                    let tk = job.task as usize;
                    let d = *deadline
                        .get(&job)
                        .ok_or_else(|| format!("job {}.{} completes at {t} before its release", job.task, job.job))?;
                    let p = prio(job, d);
                    let g = group(job.task);
                    if backlog[tk].front() == Some(&p) {
                        backlog[tk].pop_front();
                        ready[g].remove(&p);
                        if let Some(&next) = backlog[tk].front() {
                            ready[g].insert(next);
                        }
                    } else {
                        return Err(format!("job {}.{} completes at {t} before its predecessor", job.task, job.job));
                    }
                }
                _ => {}
            }
            i += 1;
        }
        let next = recs.get(i).map_or(horizon, |r| r.time.min(horizon));
        let ok = match inv {
            Invariant::GlobalEdf { m } => ready[0].iter().take(*m).all(|p| running.contains_key(&(p.task, p.job))),
            Invariant::Partitioned { .. } => ready.iter().enumerate().all(|(c, r)| match r.first() {
                None => true,
                Some(p) => running.get(&(p.task, p.job)) == Some(&(c as u32)),
            }),
        };
        if !ok {
            total += next - t;
            open.get_or_insert(t);
        } else if let Some(start) = open.take() {
            close(&mut rep, start, t);
        }
    }
    if let Some(start) = open.take() {
        close(&mut rep, start, horizon);
    }
    rep.total_ns = total;
    Ok(rep)
}

/// The invariant a mechanism promises: G-EDF for `gsn-edf` / `gsn-edf-di` (over the `m`
/// scheduling CPUs), the per-CPU invariant for `pedf` / `pfp` (P-FP: the given ranks or
/// deadline-monotonic), and `None` for `kernel-sd`, whose dispatching is not observable
/// from user space (the kernel preempts the threads invisibly).
pub fn invariant_of(mech: &Mechanism, ts: &TaskSet, m: usize) -> Option<Invariant> {
    let inv = mech.invariant(ts, m).ok()??;
    Some(match inv.scope {
        Scope::Global { m } => Invariant::GlobalEdf { m },
        Scope::Partitioned { .. } => Invariant::Partitioned {
            partition: mech.partition().map(<[_]>::to_vec).unwrap_or_default(),
            ranks: match inv.rule {
                PriorityRule::Fixed(r) => Some(r.into_iter().map(u64::from).collect()),
                PriorityRule::Edf => None,
            },
        },
    })
}

/// `r.summary_json()` plus `priority_inversion_ns` (null when the mechanism's schedule is not
/// observable or the trace is incomplete; then `priority_inversion_error` says why).
pub fn summary_with_monitors(r: &RunResult, ts: &TaskSet, mech: &Mechanism) -> Value {
    let mut v = r.summary_json();
    let (pi, detail, why) = match invariant_of(mech, ts, r.m) {
        None => (
            Value::Null,
            Value::Null,
            Some(match mech.entry().invariant {
                crate::mechanism::registry::InvariantKind::Unobservable(why) => why.to_string(),
                _ => format!("{}: no invariant for this run", mech.name()),
            }),
        ),
        Some(inv) => match crate::backend::to_trace::to_trace(r, ts)
            .and_then(|t| priority_inversion_report(&t, &inv, tracking_bound_ns(r)))
        {
            Ok(x) => (json!(x.total_ns), json!(x), None),
            Err(e) => (Value::Null, Value::Null, Some(e)),
        },
    };
    if let Value::Object(o) = &mut v {
        o.insert("priority_inversion_ns".into(), pi);
        o.insert("priority_inversion".into(), detail);
        o.insert("priority_inversion_error".into(), json!(why));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::TaskSet;
    use rtsched_trace::{Record, TraceMeta};

    fn j(task: u32, job: u32) -> JobId {
        JobId { task, job }
    }

    fn trace(ts: &TaskSet, m: u32, horizon: Time, ev: Vec<(Time, Event)>) -> Trace {
        Trace {
            meta: TraceMeta::new(ts, m, horizon),
            records: ev.into_iter().map(|(t, e)| Record::new(t, e)).collect(),
        }
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
        assert_eq!(priority_inversion(&tr, &Invariant::GlobalEdf { m: 1 }).unwrap(), 7);
        // The same trace as a partition of one CPU under EDF: the same 7 ns; under FP with
        // task 0 first it is never violated.
        let p = Invariant::Partitioned { partition: vec![vec![0, 1]], ranks: None };
        assert_eq!(priority_inversion(&tr, &p).unwrap(), 7);
        let fp = Invariant::Partitioned { partition: vec![vec![0, 1]], ranks: Some(vec![0, 1]) };
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
        assert_eq!(priority_inversion(&tr, &Invariant::GlobalEdf { m: 2 }).unwrap(), 3 + 5);
        // Two separate intervals, [0, 3) and [10, 15); against a bound of 4 only the second
        // goes beyond it, by 1.
        let rep = priority_inversion_report(&tr, &Invariant::GlobalEdf { m: 2 }, 4).unwrap();
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
        assert_eq!(priority_inversion(&bad, &Invariant::GlobalEdf { m: 1 }).unwrap(), 10);
        // One interval through the records at 0 and up to the switch at 10.
        let rep = priority_inversion_report(&bad, &Invariant::GlobalEdf { m: 1 }, 10).unwrap();
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
        assert_eq!(priority_inversion(&tr, &Invariant::GlobalEdf { m: 1 }).unwrap(), 0);
    }

    #[test]
    fn inconsistent_traces_are_errors() {
        let ts = TaskSet::from_cdt(&[(1, 10, 10)]).unwrap();
        let tr = trace(&ts, 1, 20, vec![(0, Event::Run { cpu: 0, job: j(0, 0) })]);
        assert!(priority_inversion(&tr, &Invariant::GlobalEdf { m: 1 }).unwrap_err().contains("before its release"));
        let p = Invariant::Partitioned { partition: vec![vec![]], ranks: None };
        assert!(priority_inversion(&tr, &p).unwrap_err().contains("no partition"));
    }

    fn sim_trace(ts: &TaskSet, sched: &rtsched_sim::Scheduler, m: u32, horizon: Time) -> Trace {
        let mut cfg = rtsched_sim::SimConfig::new(m);
        cfg.record_trace = true;
        cfg.horizon = Some(horizon);
        rtsched_sim::simulate(ts, sched, &cfg).unwrap().trace.unwrap()
    }

    #[test]
    fn simulated_schedules_have_no_inversion() {
        // The simulator is the oracle: its G-EDF and P-EDF schedules satisfy the invariants
        // exactly, including in overload (tardy jobs, backlogs).
        let sets = [
            TaskSet::from_ct(&[(1, 4), (2, 6), (3, 10), (2, 5), (1, 7)]).unwrap(),
            TaskSet::from_ct(&[(3, 4), (5, 6), (7, 10), (4, 5)]).unwrap(), // U > 2: overload
            TaskSet::from_cdt(&[(2, 3, 5), (3, 7, 9), (1, 2, 4), (5, 12, 15)]).unwrap(),
        ];
        for ts in &sets {
            for m in [1u32, 2, 3] {
                let tr = sim_trace(ts, &rtsched_sim::Scheduler::Gedf, m, 300);
                let pi = priority_inversion(&tr, &Invariant::GlobalEdf { m: m as usize }).unwrap();
                assert_eq!(pi, 0, "G-EDF m={m} {ts:?}");
            }
            let part: Vec<Vec<usize>> =
                vec![(0..ts.len()).filter(|i| i % 2 == 0).collect(), (0..ts.len()).filter(|i| i % 2 == 1).collect()];
            let tr = sim_trace(ts, &rtsched_sim::Scheduler::Pedf(part.clone()), 2, 300);
            let inv = Invariant::Partitioned { partition: part.clone(), ranks: None };
            assert_eq!(priority_inversion(&tr, &inv).unwrap(), 0, "P-EDF {ts:?}");
            // The same P-EDF schedule checked against G-EDF on 2 CPUs is generally not
            // G-EDF: the monitor must be able to say so (a non-zero result on some set).
            let _ = priority_inversion(&tr, &Invariant::GlobalEdf { m: 2 }).unwrap();
        }
        // And a set where P-EDF visibly violates the global invariant: both heavy tasks on
        // CPU 0, CPU 1 idle.
        let ts = TaskSet::from_ct(&[(5, 10), (5, 10), (1, 10)]).unwrap();
        let part = vec![vec![0, 1], vec![2]];
        let tr = sim_trace(&ts, &rtsched_sim::Scheduler::Pedf(part), 2, 10);
        assert_eq!(priority_inversion(&tr, &Invariant::GlobalEdf { m: 2 }).unwrap(), 5);
    }
}
