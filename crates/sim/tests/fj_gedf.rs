//! Oracles for event-driven G-EDF over the threads of fork-join tasks (`fj_gedf`): a
//! hand-computed schedule, the reduction to the job-level G-EDF engine on one-thread tasks,
//! and accounting, join semantics, remote starts and the G-EDF invariant (checked by the
//! simulator at every instant) on random sets.

use proptest::prelude::*;
use rtsched_model::forkjoin::{ForkJoinSet, ForkJoinTask};
use rtsched_model::{TaskSet, Time};
use rtsched_sim::{simulate, simulate_forkjoin_gedf, Arrivals, Scheduler, SimConfig};
use rtsched_trace::{Event, JobId};
use std::collections::HashMap;

fn cfg(m: u32, horizon: Time) -> SimConfig {
    let mut c = SimConfig::new(m);
    c.horizon = Some(horizon);
    c.record_trace = true;
    c.check_invariants = true;
    c
}

/// Seed 003 §V-A's task set (τ3 with C = 5, as its narrative needs) under G-EDF over threads,
/// on two CPUs, derived by hand:
/// * 0: τ1 (d 10) on CPU 0, τ3 (d 19) on CPU 1; τ2 (d 20) waits.
/// * 3: τ1 forks w1, w2 (d 10) on CPU 0: w1 runs there, w2 preempts τ3 on CPU 1 (a remote
///   start); τ2 still waits.
/// * 4: w1, w2 complete, τ1's job ends; τ3 resumes on CPU 0 (a migration), τ2 starts on CPU 1.
/// * 6: τ3 ends on CPU 0 and τ2's sequential part ends on CPU 1, forking four threads there
///   (costs 1, 3, 1, 3): the first runs on the idle CPU 0 (remote), the second on CPU 1.
/// * 7, 8: CPU 0 takes the third and fourth threads (remote starts); 9: CPU 1 idles.
/// * 10: τ1's second job on CPU 1; 11: τ2's job ends on CPU 0.
/// * 13: τ1 forks two threads on CPU 1; one runs on the idle CPU 0 (remote); both end at 14.
#[test]
fn paper_example_by_hand() {
    let set = ForkJoinSet::new(vec![
        ForkJoinTask::implicit(10, vec![vec![3], vec![1, 1]]).unwrap(),
        ForkJoinTask::implicit(20, vec![vec![2], vec![1, 3, 1, 3]]).unwrap(),
        ForkJoinTask::implicit(19, vec![vec![5]]).unwrap(),
    ])
    .unwrap();
    let r = simulate_forkjoin_gedf(&set, &cfg(2, 20)).unwrap();
    let res = &r;
    let fin: Vec<(u32, u32, Option<Time>)> = res.per_job.iter().map(|j| (j.task, j.job, j.finish)).collect();
    assert_eq!(fin, vec![(0, 0, Some(4)), (1, 0, Some(11)), (2, 0, Some(6)), (0, 1, Some(14)), (2, 1, None)]);
    assert_eq!(
        (r.remote_starts.unwrap(), res.migrations, res.preemptions, res.steals, res.deadline_misses),
        (5, 1, 1, 0, 0)
    );
    let recs: Vec<(Time, Event)> = res.trace.as_ref().unwrap().records.iter().map(|x| (x.time, x.event)).collect();
    let j = |task, job| JobId { task, job };
    // The preemption of τ3 at 3 and its migration at 4.
    assert!(recs.contains(&(3, Event::Preempt { cpu: 1, job: j(2, 0) })));
    assert!(recs.contains(&(3, Event::Run { cpu: 1, job: j(0, 2) })));
    assert!(recs.contains(&(4, Event::Migration { job: j(2, 0), from: 1, to: 0 })));
    assert!(recs.contains(&(4, Event::Run { cpu: 1, job: j(1, 0) })));
    assert!(recs.contains(&(9, Event::Idle { cpu: 1 })));
    // Threads of a region share their job's deadline.
    assert!(recs.contains(&(6, Event::Release { job: j(1, 4), deadline: 20 })));
    assert_eq!(res.thread_info[1][4], rtsched_sim::ThreadInfo { task: 1, job: 0, region: 1, thread: 3 });
}

fn small_sets() -> impl Strategy<Value = (Vec<(Time, Time)>, u32)> {
    (prop::collection::vec((1u64..=12, 2u64..=30), 1..=6), 1u32..=3)
        .prop_map(|(v, m)| (v.into_iter().map(|(c, t)| (c.min(t + 3), t)).collect(), m))
}

/// (period, deadline reduction, regions) per task, and m.
type FjCase = (Vec<(Time, Time, Vec<Vec<Time>>)>, u32);

fn fj_sets() -> impl Strategy<Value = FjCase> {
    let task = (4u64..=40, 0u64..=10, prop::collection::vec(prop::collection::vec(1u64..=6, 1..=5), 1..=4));
    (prop::collection::vec(task, 1..=5), 1u32..=4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// One region of one thread per task: the same schedule as the job-level G-EDF engine
    /// (same completions and misses; the same releases, runs, preemptions and completions at
    /// the same instants up to the CPU mapping).
    #[test]
    fn one_thread_tasks_equal_gedf((ct, m) in small_sets()) {
        let ts = TaskSet::from_cdt(&ct.iter().map(|&(c, t)| (c, t, t)).collect::<Vec<_>>()).unwrap();
        let c = cfg(m, 200);
        let g = simulate(&ts, &Scheduler::Gedf, &c);
        prop_assume!(g.is_ok());
        let g = g.unwrap();
        let fj = ForkJoinSet::sequential_ct(&ct).unwrap();
        let r = simulate_forkjoin_gedf(&fj, &c).unwrap();
        prop_assert_eq!(r.deadline_misses, g.deadline_misses);
        prop_assert_eq!((r.jobs, r.completed), (g.jobs, g.completed));
        let fin = |x: &[rtsched_trace::JobStats]| x.iter().map(|j| (j.task, j.job, j.release, j.finish)).collect::<Vec<_>>();
        prop_assert_eq!(fin(&r.per_job), fin(&g.per_job));
        // Preemption and migration totals are not compared: at the horizon the engine still
        // dispatches (a resumption there counts), this simulator, like RTWS, does not.
        let events = |recs: &[rtsched_trace::Record]| {
            let mut v: Vec<(Time, u8, JobId)> = recs
                .iter()
                .filter(|q| q.time < 200)
                .filter_map(|q| match q.event {
                    Event::Release { job, .. } => Some((q.time, 0, job)),
                    Event::Run { job, .. } => Some((q.time, 1, job)),
                    Event::Preempt { job, .. } => Some((q.time, 2, job)),
                    Event::Complete { job, .. } => Some((q.time, 3, job)),
                    _ => None,
                })
                .collect();
            v.sort();
            v
        };
        prop_assert_eq!(events(&r.trace.as_ref().unwrap().records), events(&g.trace.as_ref().unwrap().records));
    }

    /// Random fork-join sets, periodic and sporadic, tardy ones included: the G-EDF invariant
    /// over threads at every instant (the simulator's check, from its own ready set), thread and
    /// job accounting, forks at joins, exact thread execution, and remote starts recounted from
    /// the trace.
    #[test]
    fn forkjoin_invariant_accounting_remote_starts((tasks, m) in fj_sets(), sporadic in any::<bool>(), seed in 0u64..1000) {
        let set = ForkJoinSet::new(tasks.iter().map(|(t, dd, regions)| ForkJoinTask::new(*t, (*t + 5).saturating_sub(*dd).max(1), regions.clone()).unwrap()).collect()).unwrap();
        let mut c = cfg(m, 300);
        if sporadic {
            c.arrivals = Arrivals::Sporadic { max_extra_delay: 7, seed };
        }
        let out = simulate_forkjoin_gedf(&set, &c).unwrap();
        let r = &out;
        let tr = r.trace.as_ref().unwrap();
        let mt = tr.metrics().unwrap();
        prop_assert_eq!(mt.jobs, r.threads);
        prop_assert_eq!(mt.completed + mt.pending, mt.jobs);
        prop_assert_eq!(r.completed + r.pending, r.jobs);
        prop_assert_eq!((mt.migrations, mt.preemptions, mt.context_switches, mt.steals), (r.migrations, r.preemptions, r.context_switches, 0));
        let mut rel: HashMap<JobId, Time> = HashMap::new();
        let mut first_cpu: HashMap<JobId, (Time, u32)> = HashMap::new();
        let mut done: HashMap<JobId, (Time, u32)> = HashMap::new();
        for rec in &tr.records {
            match rec.event {
                Event::Release { job, .. } => { rel.insert(job, rec.time); }
                Event::Run { job, cpu } => { first_cpu.entry(job).or_insert((rec.time, cpu)); }
                Event::Complete { job, cpu } => { done.insert(job, (rec.time, cpu)); }
                _ => {}
            }
        }
        let mut regions: HashMap<(u32, u32, u32), Vec<JobId>> = HashMap::new();
        for (task, infos) in r.thread_info.iter().enumerate() {
            for (k, inf) in infos.iter().enumerate() {
                regions.entry((task as u32, inf.job, inf.region)).or_default().push(JobId { task: task as u32, job: k as u32 });
            }
        }
        let mut remote = 0u64;
        for (&(task, job, region), ids) in &regions {
            let st = &set[task as usize];
            prop_assert_eq!(ids.len(), st.regions[region as usize].len());
            let fork = rel[&ids[0]];
            for id in ids {
                prop_assert_eq!(rel[id], fork);
                if let Some(&(s, _)) = first_cpu.get(id) { prop_assert!(s >= fork); }
            }
            if region > 0 {
                // Forked at the previous region's join, on the CPU of its last completion.
                let prev = &regions[&(task, job, region - 1)];
                let join = prev.iter().map(|p| done[p].0).max().unwrap();
                prop_assert_eq!(fork, join);
                // Several threads may complete at the join instant; the fork is on the CPU
                // whose completion was processed last, i.e. the highest such CPU index.
                let fork_cpu = prev.iter().map(|p| done[p]).filter(|&(t, _)| t == join).map(|(_, c)| c).max().unwrap();
                remote += ids.iter().filter(|id| first_cpu.get(id).is_some_and(|&(_, c)| c != fork_cpu)).count() as u64;
            }
            for (k, id) in ids.iter().enumerate() {
                if done.contains_key(id) {
                    let js = mt.per_job.iter().find(|x| x.task == id.task && x.job == id.job).unwrap();
                    prop_assert_eq!(js.executed, st.regions[region as usize][k]);
                }
            }
        }
        prop_assert_eq!(Some(remote), out.remote_starts);
        for js in &r.per_job {
            let last = set[js.task as usize].regions.len() as u32 - 1;
            let join = regions.get(&(js.task, js.job, last)).and_then(|ids| ids.iter().map(|p| done.get(p).map(|d| d.0)).collect::<Option<Vec<_>>>()).map(|v| v.into_iter().max().unwrap());
            prop_assert_eq!(js.finish, join);
        }
    }
}

#[test]
fn rejects_bad_parameters() {
    let set = ForkJoinSet::sequential_ct(&[(1, 4)]).unwrap();
    let mut c = cfg(0, 20);
    assert_eq!(simulate_forkjoin_gedf(&set, &c).unwrap_err().input().and_then(|e| e.field.as_deref()), Some("m"));
    c.m = 2;
    c.exec = rtsched_sim::ExecTimes::Fixed(vec![1]);
    assert_eq!(simulate_forkjoin_gedf(&set, &c).unwrap_err().input().and_then(|e| e.field.as_deref()), Some("exec"));
    c.exec = rtsched_sim::ExecTimes::Wcet;
    c.horizon = Some(0);
    assert!(simulate_forkjoin_gedf(&set, &c).is_err());
}

/// Both thread-level loops share one job book (crates/sim/src/forkjoin.rs), so their job-level
/// statistics mean the same: a completed job executed exactly the sum of its threads' costs
/// (its sequential WCET), started where its first thread ran, and a job's preemptions and
/// migrations are its threads' sums. (Before the shared book, fork-join G-EDF reported 0 for
/// every job's execution, CPUs, preemptions and migrations.)
#[test]
fn both_loops_aggregate_job_statistics_from_their_threads() {
    let set = ForkJoinSet::new(vec![
        ForkJoinTask::implicit(10, vec![vec![3], vec![1, 1]]).unwrap(),
        ForkJoinTask::implicit(20, vec![vec![2], vec![1, 3, 1, 3]]).unwrap(),
        ForkJoinTask::implicit(19, vec![vec![5]]).unwrap(),
    ])
    .unwrap();
    let c = cfg(2, 200);
    let g = simulate_forkjoin_gedf(&set, &c).unwrap();
    let r = rtsched_sim::simulate_rtws(&set, &c).unwrap();
    for res in [&g, &r] {
        assert!(res.completed > 0);
        let threads = &res.thread_metrics.per_job;
        for j in res.per_job.iter().filter(|j| j.finish.is_some()) {
            assert_eq!(j.executed, set[j.task as usize].wcet(), "task {} job {}", j.task, j.job);
            assert!(j.first_cpu.is_some() && j.last_cpu.is_some());
            let mine: Vec<_> = threads
                .iter()
                .filter(|t| {
                    let i = res.thread_info[t.task as usize][t.job as usize];
                    (i.task, i.job) == (j.task, j.job)
                })
                .collect();
            assert_eq!(j.preemptions, mine.iter().map(|t| t.preemptions).sum::<u32>());
            assert_eq!(j.migrations, mine.iter().map(|t| t.migrations).sum::<u32>());
        }
    }
}

/// The one entry point over a workload runs the same loops: a fork-join set under rtws and gedf
/// gives what simulate_rtws and simulate_forkjoin_gedf give, a sporadic set what simulate
/// gives, and another scheduler on a fork-join set is refused naming the two that run it.
#[test]
fn simulate_workload_is_the_loops_of_each_kind() {
    use rtsched_model::Workload;
    use rtsched_sim::{simulate_rtws, simulate_workload, Simulated};
    let set = ForkJoinSet::new(vec![
        ForkJoinTask::implicit(10, vec![vec![3], vec![1, 1]]).unwrap(),
        ForkJoinTask::implicit(20, vec![vec![2], vec![1, 3, 1, 3]]).unwrap(),
    ])
    .unwrap();
    let c = cfg(2, 60);
    let w = Workload::ForkJoin(set.clone());
    assert_eq!(
        simulate_workload(&w, &Scheduler::Rtws, &c).unwrap(),
        Simulated::ForkJoin(simulate_rtws(&set, &c).unwrap())
    );
    assert_eq!(
        simulate_workload(&w, &Scheduler::Gedf, &c).unwrap(),
        Simulated::ForkJoin(simulate_forkjoin_gedf(&set, &c).unwrap())
    );
    let e = simulate_workload(&w, &Scheduler::Pedf(vec![vec![0], vec![1]]), &c).unwrap_err().to_string();
    assert!(e.contains("rtws or gedf"), "{e}");
    let ts = TaskSet::from_cdt(&[(1, 4, 4), (2, 5, 5)]).unwrap();
    assert_eq!(
        simulate_workload(&Workload::Sporadic(ts.clone()), &Scheduler::Gedf, &c).unwrap(),
        Simulated::Jobs(simulate(&ts, &Scheduler::Gedf, &c).unwrap())
    );
}
