//! Unit tests of the metrics: a hand-computed trace, the streaming form without per-job rows,
//! refusals of inconsistent records, and the tardiness of incomplete jobs as a lower bound.

use super::*;
use crate::record::Event::*;

fn j(task: u32, job: u32) -> JobId {
    JobId { task, job }
}

#[test]
fn hand_computed_metrics() {
    // Two tasks, one CPU pair: task 0 job 0 runs on cpu 0, is preempted by task 1, then
    // resumes on cpu 1 (a preemption and a migration) and finishes late.
    let rs = [
        Record::new(0, Release { job: j(0, 0), deadline: 10 }),
        Record::new(0, Run { cpu: 0, job: j(0, 0) }),
        Record::new(2, Release { job: j(1, 0), deadline: 5 }),
        Record::new(2, Preempt { cpu: 0, job: j(0, 0) }),
        Record::new(2, Run { cpu: 0, job: j(1, 0) }),
        Record::new(4, Migration { job: j(0, 0), from: 0, to: 1 }),
        Record::new(4, Run { cpu: 1, job: j(0, 0) }),
        Record::new(5, Complete { cpu: 0, job: j(1, 0) }),
        Record::new(5, Idle { cpu: 0 }),
        Record::new(10, DeadlineMiss { job: j(0, 0) }),
        Record::new(12, Complete { cpu: 1, job: j(0, 0) }),
        Record::new(12, Idle { cpu: 1 }),
        Record::new(15, Release { job: j(1, 1), deadline: 25 }),
        Record::new(20, Release { job: j(0, 1), deadline: 30 }),
    ];
    let mut b = MetricsBuilder::new(2, 2, 20);
    for r in &rs {
        b.push(r).unwrap();
    }
    let m = b.finish();
    assert_eq!(m.jobs, 3); // the release at 20 = horizon does not count
    assert_eq!((m.completed, m.pending), (2, 1));
    assert_eq!(m.deadline_misses, 1);
    assert_eq!(m.deadline_miss_records, 1);
    assert_eq!(m.max_tardiness_ns, 2);
    assert_eq!(m.max_response_time_ns, Some(12));
    assert_eq!((m.preemptions, m.migrations), (1, 1));
    // cpu0: idle->A, A->B, B->idle; cpu1: idle->A, A->idle
    assert_eq!(m.context_switches, 5);
    assert_eq!(m.per_task[0].context_switches, 2);
    assert_eq!(m.per_job[0].executed, 10);
    assert_eq!(m.per_task[1].max_response_time_ns, Some(3));
}

/// Without kept jobs every metric is the same; only `per_job` is empty.
fn same_but_jobs(rs: &[Record], n: usize, m: u32, h: Time) -> Metrics {
    let (mut a, mut b) = (MetricsBuilder::new(n, m, h), MetricsBuilder::new(n, m, h).keep_jobs(false));
    for r in rs {
        a.push(r).unwrap();
        b.push(r).unwrap();
    }
    let (a, b) = (a.finish(), b.finish());
    assert!(b.per_job.is_empty());
    assert_eq!(Metrics { per_job: Vec::new(), ..a.clone() }, b);
    a
}

#[test]
fn streaming_without_jobs_gives_the_same_metrics() {
    let rs = [
        Record::new(0, Release { job: j(0, 0), deadline: 10 }),
        Record::new(0, Run { cpu: 0, job: j(0, 0) }),
        Record::new(2, Release { job: j(1, 0), deadline: 5 }),
        Record::new(2, Preempt { cpu: 0, job: j(0, 0) }),
        Record::new(2, Run { cpu: 0, job: j(1, 0) }),
        Record::new(4, Run { cpu: 1, job: j(0, 0) }),
        Record::new(5, Complete { cpu: 0, job: j(1, 0) }),
        // A record naming a job already complete (and folded away) is still valid.
        Record::new(5, DeadlineMiss { job: j(1, 0) }),
        Record::new(5, Idle { cpu: 0 }),
        Record::new(10, DeadlineMiss { job: j(0, 0) }),
        Record::new(12, Complete { cpu: 1, job: j(0, 0) }),
        Record::new(12, Idle { cpu: 1 }),
        Record::new(15, Release { job: j(1, 1), deadline: 25 }),
        Record::new(16, Run { cpu: 0, job: j(1, 1) }),
        Record::new(20, Release { job: j(0, 1), deadline: 30 }),
    ];
    for h in [5, 12, 16, 18, 20, 40] {
        let m = same_but_jobs(&rs, 2, 2, h);
        assert_eq!(m.per_job.len() as u64, m.jobs);
    }
    // Running a job that completed is an error in both modes.
    let mut b = MetricsBuilder::new(1, 1, 100).keep_jobs(false);
    b.push(&Record::new(0, Release { job: j(0, 0), deadline: 5 })).unwrap();
    b.push(&Record::new(0, Run { cpu: 0, job: j(0, 0) })).unwrap();
    b.push(&Record::new(1, Complete { cpu: 0, job: j(0, 0) })).unwrap();
    assert!(b.push(&Record::new(2, Run { cpu: 0, job: j(0, 0) })).is_err());
    assert!(b.push(&Record::new(2, Run { cpu: 0, job: j(0, 1) })).is_err());
}

#[test]
fn rejects_inconsistent_records() {
    let mut b = MetricsBuilder::new(1, 1, 100);
    assert!(b.push(&Record::new(0, Run { cpu: 0, job: j(0, 0) })).is_err());
    b.push(&Record::new(0, Release { job: j(0, 0), deadline: 5 })).unwrap();
    assert!(b.push(&Record::new(0, Run { cpu: 3, job: j(0, 0) })).is_err());
    assert!(b.push(&Record::new(0, Release { job: j(0, 2), deadline: 5 })).is_err());
    assert!(b.push(&Record::new(0, Release { job: j(7, 0), deadline: 5 })).is_err());
    b.push(&Record::new(1, Run { cpu: 0, job: j(0, 0) })).unwrap();
    assert!(b.push(&Record::new(0, Idle { cpu: 0 })).is_err());
    assert!(b.push(&Record::new(2, Idle { cpu: 0 })).is_err());
}

#[test]
fn incomplete_job_tardiness_is_a_lower_bound() {
    let mut b = MetricsBuilder::new(1, 1, 100);
    b.push(&Record::new(0, Release { job: j(0, 0), deadline: 40 })).unwrap();
    b.push(&Record::new(90, Release { job: j(0, 1), deadline: 130 })).unwrap();
    let m = b.finish();
    assert_eq!(m.deadline_misses, 1);
    assert_eq!(m.max_tardiness_ns, 60);
    assert_eq!(m.max_response_time_ns, None);
    assert_eq!(m.pending, 2);
}
