//! Oracles for the RTWS simulator (seed 003): the Fig. 2 example, the reduction to G-EDF on
//! one-thread tasks, accounting, join semantics and work conservation on random sets.

use proptest::prelude::*;
use rtsched_model::forkjoin::{ForkJoinSet, ForkJoinTask};
use rtsched_model::task::{Segments, SuspensionBound};
use rtsched_model::{Task, TaskSet, Time};
use rtsched_sim::{simulate, simulate_rtws, Arrivals, ForkJoinResult, Scheduler, SimConfig};
use rtsched_trace::{Event, JobId};
use std::collections::HashMap;

fn cfg(m: u32, horizon: Time) -> SimConfig {
    let mut c = SimConfig::new(m);
    c.horizon = Some(horizon);
    c.record_trace = true;
    c.check_invariants = true;
    c
}

/// Seed 003 §V-A: τ1 = (5, 10): 3 units sequential, then two threads of 1; τ2 = (10, 20):
/// 2 units sequential, then four threads of 1, 3, 1, 3; τ3 = (4, 19) sequential.
fn fig2_set(c3: Time) -> ForkJoinSet {
    ForkJoinSet::new(vec![
        ForkJoinTask::implicit(10, vec![vec![3], vec![1, 1]]).unwrap(),
        ForkJoinTask::implicit(20, vec![vec![2], vec![1, 3, 1, 3]]).unwrap(),
        ForkJoinTask::implicit(19, vec![vec![c3]]).unwrap(),
    ])
    .unwrap()
}

fn j(task: u32, job: u32) -> JobId {
    JobId { task, job }
}

fn records(r: &ForkJoinResult) -> Vec<(Time, Event)> {
    r.trace.as_ref().unwrap().records.iter().map(|r| (r.time, r.event)).collect()
}

/// Fig. 2 with the parameters as stated (C3 = 4), on two CPUs over one period of τ2, record by
/// record. Trace jobs are threads: task 0's are τ1 job 0 (seq part, then threads w^1, w^2),
/// τ1 job 1 (same); task 1's are τ2's sequential part and its threads w^1..w^4.
/// Derived by hand from rules A–F (docs/rtws.md walks through it). With C3 = 4, τ3 ends at
/// t = 4 and Rule D gives τ2 to core 2 at t = 4, one unit before the text's "at t = 5".
#[test]
fn fig2_as_stated_record_by_record() {
    use Event::*;
    let r = simulate_rtws(&fig2_set(4), &cfg(2, 20)).unwrap();
    let expect = vec![
        (0, Release { job: j(0, 0), deadline: 10 }),
        (0, Release { job: j(1, 0), deadline: 20 }),
        (0, Release { job: j(2, 0), deadline: 19 }),
        (0, Run { cpu: 0, job: j(0, 0) }),
        (0, Run { cpu: 1, job: j(2, 0) }),
        (3, Complete { cpu: 0, job: j(0, 0) }),
        (3, Release { job: j(0, 1), deadline: 10 }),
        (3, Release { job: j(0, 2), deadline: 10 }),
        (3, Run { cpu: 0, job: j(0, 2) }),
        (4, Complete { cpu: 0, job: j(0, 2) }),
        (4, Complete { cpu: 1, job: j(2, 0) }),
        (4, Run { cpu: 0, job: j(0, 1) }),
        (4, Run { cpu: 1, job: j(1, 0) }),
        (5, Complete { cpu: 0, job: j(0, 1) }),
        (5, Idle { cpu: 0 }),
        (6, Complete { cpu: 1, job: j(1, 0) }),
        (6, Release { job: j(1, 1), deadline: 20 }),
        (6, Release { job: j(1, 2), deadline: 20 }),
        (6, Release { job: j(1, 3), deadline: 20 }),
        (6, Release { job: j(1, 4), deadline: 20 }),
        (6, Run { cpu: 1, job: j(1, 4) }),
        (6, Steal { job: j(1, 1), from: 1, to: 0 }),
        (6, Run { cpu: 0, job: j(1, 1) }),
        (7, Complete { cpu: 0, job: j(1, 1) }),
        (7, Steal { job: j(1, 2), from: 1, to: 0 }),
        (7, Run { cpu: 0, job: j(1, 2) }),
        (9, Complete { cpu: 1, job: j(1, 4) }),
        (9, Run { cpu: 1, job: j(1, 3) }),
        (10, Complete { cpu: 0, job: j(1, 2) }),
        (10, Complete { cpu: 1, job: j(1, 3) }),
        (10, Release { job: j(0, 3), deadline: 20 }),
        (10, Run { cpu: 0, job: j(0, 3) }),
        (10, Idle { cpu: 1 }),
        (13, Complete { cpu: 0, job: j(0, 3) }),
        (13, Release { job: j(0, 4), deadline: 20 }),
        (13, Release { job: j(0, 5), deadline: 20 }),
        (13, Run { cpu: 0, job: j(0, 5) }),
        (13, Steal { job: j(0, 4), from: 0, to: 1 }),
        (13, Run { cpu: 1, job: j(0, 4) }),
        (14, Complete { cpu: 0, job: j(0, 5) }),
        (14, Complete { cpu: 1, job: j(0, 4) }),
        (14, Idle { cpu: 0 }),
        (14, Idle { cpu: 1 }),
        (19, Release { job: j(2, 1), deadline: 38 }),
        (19, Run { cpu: 0, job: j(2, 1) }),
    ];
    assert_eq!(records(&r), expect);
    assert_eq!((r.jobs, r.completed, r.pending, r.deadline_misses, r.steals), (5, 4, 1, 0, 3));
    let fin: Vec<_> = r.per_job.iter().map(|j| (j.task, j.job, j.finish)).collect();
    assert_eq!(fin, vec![(0, 0, Some(5)), (1, 0, Some(10)), (2, 0, Some(4)), (0, 1, Some(14)), (2, 1, None)]);
}

/// Fig. 2's narrative ("in the interval t = [0, 5] none of the cores is idle", "at t = 5, τ2
/// is scheduled in core 1") needs τ3 to occupy a core for 5 units; with C3 = 5 every event the
/// text states is reproduced (cores 1, 2 of the paper are CPUs 0, 1):
/// * τ1 and τ3 start at 0; τ1 runs its threads sequentially on core 1 until 5;
/// * τ2 starts at 5 on core 1, forks at 7, and core 2 steals w_2^1 at 7;
/// * at 10 τ1's second job preempts a stolen thread of τ2 (w_2^2: stolen at 8), which goes to
///   the global queue (Rule F) and resumes at 11 on core 1;
/// * at 13 τ1's threads run in parallel on both cores, by work stealing.
///
/// The text's "core 2 is idle after t = 12" is core 1 here (the thread resumed at 11 on core 1
/// and ends at 12); see docs/rtws.md.
#[test]
fn fig2_narrative_record_by_record() {
    use Event::*;
    let r = simulate_rtws(&fig2_set(5), &cfg(2, 20)).unwrap();
    let expect = vec![
        (0, Release { job: j(0, 0), deadline: 10 }),
        (0, Release { job: j(1, 0), deadline: 20 }),
        (0, Release { job: j(2, 0), deadline: 19 }),
        (0, Run { cpu: 0, job: j(0, 0) }),
        (0, Run { cpu: 1, job: j(2, 0) }),
        (3, Complete { cpu: 0, job: j(0, 0) }),
        (3, Release { job: j(0, 1), deadline: 10 }),
        (3, Release { job: j(0, 2), deadline: 10 }),
        (3, Run { cpu: 0, job: j(0, 2) }),
        (4, Complete { cpu: 0, job: j(0, 2) }),
        (4, Run { cpu: 0, job: j(0, 1) }),
        (5, Complete { cpu: 0, job: j(0, 1) }),
        (5, Complete { cpu: 1, job: j(2, 0) }),
        (5, Run { cpu: 0, job: j(1, 0) }),
        (5, Idle { cpu: 1 }),
        (7, Complete { cpu: 0, job: j(1, 0) }),
        (7, Release { job: j(1, 1), deadline: 20 }),
        (7, Release { job: j(1, 2), deadline: 20 }),
        (7, Release { job: j(1, 3), deadline: 20 }),
        (7, Release { job: j(1, 4), deadline: 20 }),
        (7, Run { cpu: 0, job: j(1, 4) }),
        (7, Steal { job: j(1, 1), from: 0, to: 1 }),
        (7, Run { cpu: 1, job: j(1, 1) }),
        (8, Complete { cpu: 1, job: j(1, 1) }),
        (8, Steal { job: j(1, 2), from: 0, to: 1 }),
        (8, Run { cpu: 1, job: j(1, 2) }),
        (10, Complete { cpu: 0, job: j(1, 4) }),
        (10, Run { cpu: 0, job: j(1, 3) }),
        (10, Release { job: j(0, 3), deadline: 20 }),
        (10, Preempt { cpu: 1, job: j(1, 2) }),
        (10, Run { cpu: 1, job: j(0, 3) }),
        (11, Complete { cpu: 0, job: j(1, 3) }),
        // The preempted stolen thread resumes on the other core: a migration record.
        (11, Migration { job: j(1, 2), from: 1, to: 0 }),
        (11, Run { cpu: 0, job: j(1, 2) }),
        (12, Complete { cpu: 0, job: j(1, 2) }),
        (12, Idle { cpu: 0 }),
        (13, Complete { cpu: 1, job: j(0, 3) }),
        (13, Release { job: j(0, 4), deadline: 20 }),
        (13, Release { job: j(0, 5), deadline: 20 }),
        (13, Run { cpu: 1, job: j(0, 5) }),
        (13, Steal { job: j(0, 4), from: 1, to: 0 }),
        (13, Run { cpu: 0, job: j(0, 4) }),
        (14, Complete { cpu: 0, job: j(0, 4) }),
        (14, Complete { cpu: 1, job: j(0, 5) }),
        (14, Idle { cpu: 0 }),
        (14, Idle { cpu: 1 }),
        (19, Release { job: j(2, 1), deadline: 38 }),
        (19, Run { cpu: 0, job: j(2, 1) }),
    ];
    assert_eq!(records(&r), expect);
    assert_eq!((r.deadline_misses, r.steals), (0, 3));
    // The preempted stolen thread is τ2 region 1 thread 1 (w_2^2).
    assert_eq!(r.thread_info[1][2], rtsched_sim::ThreadInfo { task: 1, job: 0, region: 1, thread: 1 });
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

    /// With one region of one thread per task, RTWS is G-EDF: same completion times and the
    /// same deadline misses as the G-EDF simulation (C > T and C > D tasks included).
    #[test]
    fn one_thread_tasks_reduce_to_gedf((ct, m) in small_sets()) {
        let ts = TaskSet::from_cdt(&ct.iter().map(|&(c, t)| (c, t.max(2) - 1, t)).collect::<Vec<_>>()).unwrap();
        let c = cfg(m, 200);
        let g = simulate(&ts, &Scheduler::Gedf, &c).unwrap();
        let r = simulate(&ts, &Scheduler::Rtws, &c).unwrap();
        prop_assert_eq!(r.deadline_misses, g.deadline_misses);
        prop_assert_eq!(r.jobs, g.jobs);
        prop_assert_eq!(r.completed, g.completed);
        let fin = |x: &rtsched_sim::SimResult| x.per_job.iter().map(|j| (j.task, j.job, j.release, j.finish)).collect::<Vec<_>>();
        prop_assert_eq!(fin(&r), fin(&g));
        // The same schedule before the horizon, up to the CPU mapping: the same releases, runs,
        // preemptions and completions of the same jobs at the same instants (at the horizon
        // the G-EDF engine still dispatches, RTWS does not).
        let before = |x: &rtsched_sim::SimResult| {
            let mut v: Vec<(Time, u8, JobId)> = x
                .trace
                .as_ref()
                .unwrap()
                .records
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
        prop_assert_eq!(before(&r), before(&g));
        // The fork-join entry point agrees with the Scheduler::Rtws path.
        let fj = ForkJoinSet::sequential_ct(&ct.iter().map(|&(c, t)| (c, t)).collect::<Vec<_>>()).unwrap();
        let _ = simulate_rtws(&fj, &c).unwrap();
    }

    /// With self-suspending one-thread tasks (random segments, suspensions at their upper
    /// bound), RTWS is still G-EDF (docs/mechanisms/rtws.md: a block leaves the CPU as a
    /// completion without a join, a wake-up arrives as a released job, Rule A, with the §V
    /// check): job for job the same completions and misses, the same releases, runs,
    /// preemptions, completions, suspensions and resumptions at the same instants before the
    /// horizon, and the same suspension totals.
    #[test]
    fn one_thread_suspending_tasks_reduce_to_gedf(
        (ct, m) in small_sets(),
        cuts in prop::collection::vec(prop::collection::vec((0u64..=12, 1u64..=6), 0..=3), 6),
    ) {
        let tasks: Vec<Task> = ct.iter().zip(&cuts).map(|(&(c, t), cut)| {
            let d = t.max(2) - 1;
            // Execution segments: c split at the cut points (distinct, inside 1..c).
            let mut at: Vec<Time> = cut.iter().map(|&(x, _)| x).filter(|&x| x > 0 && x < c).collect();
            at.sort_unstable();
            at.dedup();
            if at.is_empty() {
                return Task::new(c, d, t).unwrap();
            }
            let mut exec = Vec::new();
            let mut prev = 0;
            for &x in at.iter().chain(std::iter::once(&c)) {
                exec.push(x - prev);
                prev = x;
            }
            // One suspension per cut (there are at least as many cuts as cut points).
            let susp = cut.iter().map(|&(_, s)| SuspensionBound { min: 0, max: s }).take(exec.len() - 1).collect();
            Task::new(c, d, t).unwrap().with_segments(Segments::new(exec, susp).unwrap()).unwrap()
        }).collect();
        let ts = TaskSet::new(tasks).unwrap();
        let c = cfg(m, 200);
        let g = simulate(&ts, &Scheduler::Gedf, &c).unwrap();
        let r = simulate(&ts, &Scheduler::Rtws, &c).unwrap();
        prop_assert_eq!(r.deadline_misses, g.deadline_misses);
        prop_assert_eq!((r.jobs, r.completed), (g.jobs, g.completed));
        prop_assert_eq!((r.suspensions, r.suspension_ns), (g.suspensions, g.suspension_ns));
        let fin = |x: &rtsched_sim::SimResult| x.per_job.iter().map(|j| (j.task, j.job, j.release, j.finish)).collect::<Vec<_>>();
        prop_assert_eq!(fin(&r), fin(&g));
        let before = |x: &rtsched_sim::SimResult| {
            let mut v: Vec<(Time, u8, JobId)> = x
                .trace
                .as_ref()
                .unwrap()
                .records
                .iter()
                .filter(|q| q.time < 200)
                .filter_map(|q| match q.event {
                    Event::Release { job, .. } => Some((q.time, 0, job)),
                    Event::Run { job, .. } => Some((q.time, 1, job)),
                    Event::Preempt { job, .. } => Some((q.time, 2, job)),
                    Event::Complete { job, .. } => Some((q.time, 3, job)),
                    Event::Suspend { job, .. } => Some((q.time, 4, job)),
                    Event::Resume { job } => Some((q.time, 5, job)),
                    _ => None,
                })
                .collect();
            v.sort();
            v
        };
        prop_assert_eq!(before(&r), before(&g));
    }

    /// Accounting, join semantics and work conservation (checked by the simulator's invariant
    /// check at every instant) on random fork-join sets, periodic and sporadic.
    #[test]
    fn forkjoin_accounting_and_joins((tasks, m) in fj_sets(), sporadic in any::<bool>(), seed in 0u64..1000) {
        let set = ForkJoinSet::new(tasks.iter().map(|(t, dd, regions)| ForkJoinTask::new(*t, (*t + 5).saturating_sub(*dd).max(1), regions.clone()).unwrap()).collect()).unwrap();
        let mut c = cfg(m, 300);
        if sporadic {
            c.arrivals = Arrivals::Sporadic { max_extra_delay: 7, seed };
        }
        let r = simulate_rtws(&set, &c).unwrap();
        let tr = r.trace.as_ref().unwrap();
        // Threads: released = completed + pending (metrics recomputed from the records).
        let mt = tr.metrics().unwrap();
        prop_assert_eq!(mt.jobs, r.threads);
        prop_assert_eq!(mt.completed + mt.pending, mt.jobs);
        prop_assert_eq!(r.completed + r.pending, r.jobs);
        // Per thread: release (fork) time, first run, completion.
        let mut rel: HashMap<JobId, Time> = HashMap::new();
        let mut first_run: HashMap<JobId, Time> = HashMap::new();
        let mut done: HashMap<JobId, Time> = HashMap::new();
        let mut busy = vec![false; m as usize];
        for rec in &tr.records {
            match rec.event {
                Event::Release { job, .. } => { rel.insert(job, rec.time); }
                Event::Run { job, cpu } => { first_run.entry(job).or_insert(rec.time); busy[cpu as usize] = true; }
                Event::Complete { job, cpu } => { done.insert(job, rec.time); busy[cpu as usize] = false; }
                Event::Preempt { cpu, .. } => busy[cpu as usize] = false,
                _ => {}
            }
        }
        // Group threads by (task, job, region).
        let mut regions: HashMap<(u32, u32, u32), Vec<JobId>> = HashMap::new();
        for (task, infos) in r.thread_info.iter().enumerate() {
            for (k, inf) in infos.iter().enumerate() {
                regions.entry((task as u32, inf.job, inf.region)).or_default().push(JobId { task: task as u32, job: k as u32 });
            }
        }
        for (&(task, job, region), ids) in &regions {
            let set_task = &set[task as usize];
            prop_assert_eq!(ids.len(), set_task.regions[region as usize].len());
            let fork = rel[&ids[0]];
            for id in ids {
                prop_assert_eq!(rel[id], fork);
                if let Some(&s) = first_run.get(id) { prop_assert!(s >= fork); }
            }
            if region > 0 {
                // The fork is the join of the previous region: its last thread's completion.
                let prev = &regions[&(task, job, region - 1)];
                let join = prev.iter().map(|p| done[p]).max().unwrap();
                prop_assert_eq!(fork, join);
            }
            // Executed time of a completed thread is its cost.
            for (k, id) in ids.iter().enumerate() {
                if done.contains_key(id) {
                    let js = mt.per_job.iter().find(|x| x.task == id.task && x.job == id.job).unwrap();
                    prop_assert_eq!(js.executed, set_task.regions[region as usize][k]);
                }
            }
        }
        // A job completes exactly at its last region's join.
        for js in &r.per_job {
            let last = set[js.task as usize].regions.len() as u32 - 1;
            let join = regions.get(&(js.task, js.job, last)).and_then(|ids| ids.iter().map(|p| done.get(p).copied()).collect::<Option<Vec<_>>>()).map(|v| v.into_iter().max().unwrap());
            prop_assert_eq!(js.finish, join);
            // Job-level aggregates: a completed job executed its whole cost, on at least one
            // CPU, and its last join happened on a CPU.
            if js.finish.is_some() {
                prop_assert_eq!(js.executed, set[js.task as usize].wcet());
                prop_assert!(js.first_cpu.is_some() && js.last_cpu.is_some());
            } else {
                prop_assert!(js.executed < set[js.task as usize].wcet());
                prop_assert!(js.last_cpu.is_none());
            }
        }
        // Thread-level preemptions and migrations add up to the job-level ones.
        prop_assert_eq!(r.per_job.iter().map(|j| j.preemptions as u64).sum::<u64>(), r.preemptions);
        prop_assert_eq!(r.per_job.iter().map(|j| j.migrations as u64).sum::<u64>(), r.migrations);
        // Steals: the trace's Steal records, and never a thread that already ran.
        let marks = tr.records.iter().filter(|x| matches!(x.event, Event::Steal { .. })).count() as u64;
        prop_assert_eq!(marks, r.steals);
    }
}

#[test]
fn rejects_bad_parameters() {
    let set = fig2_set(4);
    let mut c = cfg(0, 20);
    assert_eq!(simulate_rtws(&set, &c).unwrap_err().input().and_then(|e| e.field.as_deref()), Some("m"));
    c.m = 2;
    c.exec = rtsched_sim::ExecTimes::Fixed(vec![1, 1, 1]);
    assert_eq!(simulate_rtws(&set, &c).unwrap_err().input().and_then(|e| e.field.as_deref()), Some("exec"));
    c.exec = rtsched_sim::ExecTimes::Wcet;
    c.horizon = Some(0);
    assert!(simulate_rtws(&set, &c).is_err());
    c.horizon = None; // one hyperperiod: lcm(10, 20, 19) = 380
    assert_eq!(simulate_rtws(&set, &c).unwrap().horizon, 380);
}

/// The thread-level trace (with its `Steal` records) survives the JSON Lines export, every
/// other export accepts it, and its metrics recomputed from the records match the result.
#[test]
fn trace_exports_and_metrics() {
    let r = simulate_rtws(&fig2_set(5), &cfg(2, 40)).unwrap();
    let tr = r.trace.as_ref().unwrap();
    let back = rtsched_trace::Trace::from_jsonl(&tr.to_jsonl()).unwrap();
    assert_eq!(&back, tr);
    assert!(tr.to_jsonl().contains("\"steal\""));
    let m = back.metrics().unwrap();
    assert_eq!(
        (m.steals, m.preemptions, m.migrations, m.context_switches, m.jobs),
        (r.steals, r.preemptions, r.migrations, r.context_switches, r.threads)
    );
    assert!(tr.to_perfetto_json().contains("steal"));
    assert!(tr.to_sched_trace_bytes().is_ok());
    assert!(tr.to_gantt_svg(None).starts_with("<svg"));
    assert!(tr.to_job_csv().is_ok());
}
