//! Oracles of the node-level DAG simulator (`rtsched_sim::dag`, docs/dag.md "Simulator"):
//!
//! * (a) it gives the response times of the independent unit-step simulator written for the
//!   tests (`crates/analysis/tests/common/dag_twin.rs`) on thousands of random small sets, under
//!   G-EDF and G-FP, synchronous periodic and sporadic releases;
//! * (b) no set accepted by a DAG test of `rtsched_analysis::dag` misses a deadline in the
//!   schedule that test assumes (G-EDF tests under `gedf`, federated under `federated`), on
//!   100,000 random small-integer sets, synchronous periodic and, for a share, sporadic with
//!   early completion;
//! * (c) a DAG of one node per task is scheduled job for job as the sequential G-EDF;
//! * (d) a fork-join set converted to DAGs gets the response times of the fork-join G-EDF;
//! * (e) its traces hold at every event: work-conserving in each cluster, no node before its
//!   predecessors, every node instance exactly once per job.
//!
//! Each can fail: a broken twin or a mutation must be caught by the same check (see each test).

#[path = "../../analysis/tests/common/dag_twin.rs"]
mod dag_twin;

use dag_twin::{periodic, random_set, random_task, rng, schedule, Plan};
use rand::Rng;
use rtsched_analysis::dag::federated::{federated, Federated, FederatedPlan, LowPlacement};
use rtsched_analysis::dag::gedf;
use rtsched_analysis::{Limits, Verdict};
use rtsched_model::dag::{DagSet, DagTask};
use rtsched_model::exact::{int, sum_ratios};
use rtsched_model::forkjoin::{ForkJoinSet, ForkJoinTask};
use rtsched_model::{Stop, Time};
use rtsched_policy::{FpOrder, PriorityRule};
use rtsched_sim::dag::NodeNumbering;
use rtsched_sim::{
    simulate, simulate_dag, simulate_forkjoin_gedf, Arrivals, DagResult, ExecTimes, Scheduler, SimConfig,
};
use rtsched_trace::{Event, Trace};

fn cfg(m: u32) -> SimConfig {
    let mut c = SimConfig::new(m);
    c.check_invariants = true;
    c
}

fn sporadic_cfg(m: u32, horizon: Time, delay: Time, seed: u64, early: bool) -> SimConfig {
    let mut c = cfg(m);
    c.horizon = Some(horizon);
    c.arrivals = Arrivals::Sporadic { max_extra_delay: delay, seed };
    if early {
        c.exec = ExecTimes::UniformFraction { lo: 0.25, seed: seed ^ 7 };
    }
    c
}

fn dm(set: &DagSet) -> Vec<u32> {
    match PriorityRule::fixed(&set.sequential().unwrap(), FpOrder::DeadlineMonotonic) {
        PriorityRule::Fixed(r) => r,
        PriorityRule::Edf => unreachable!(),
    }
}

/// Per task, per job: (release, finish).
fn finishes(r: &DagResult, n: usize) -> Vec<Vec<(Time, Option<Time>)>> {
    let mut out = vec![Vec::new(); n];
    for j in &r.per_job {
        assert_eq!(out[j.task as usize].len(), j.job as usize, "jobs in release order");
        out[j.task as usize].push((j.release, j.finish));
    }
    out
}

/// The twin's plan for the releases the real simulator made (every node at its WCET).
fn plan_of(set: &DagSet, got: &[Vec<(Time, Option<Time>)>]) -> Plan {
    got.iter().enumerate().map(|(i, jobs)| jobs.iter().map(|&(r, _)| (r, set[i].wcets().to_vec())).collect()).collect()
}

fn twin(set: &DagSet, m: u32, h: Time, plan: &Plan, fixed: Option<&[u32]>) -> Vec<Vec<(Time, Option<Time>)>> {
    let tasks: Vec<&DagTask> = set.iter().collect();
    let f = schedule(&tasks, m, h, plan, fixed);
    f.iter().enumerate().map(|(i, v)| v.iter().enumerate().map(|(k, &x)| (plan[i][k].0, x)).collect()).collect()
}

#[test]
fn a_the_real_simulator_agrees_with_the_test_twin() {
    let (mut compared, mut gfp_differs) = (0u32, 0u32);
    for s in 0..2_500u64 {
        let mut r = rng(5_000_000 + s);
        let (set, m) = random_set(&mut r, 6);
        let tasks: Vec<&DagTask> = set.iter().collect();
        let (h, plan) = periodic(&tasks);
        let ranks = dm(&set);
        for (sched, fixed) in
            [(Scheduler::Gedf, None), (Scheduler::Gfp { ranks: ranks.clone(), order: None }, Some(&ranks[..]))]
        {
            let real = finishes(&simulate_dag(&set, &sched, &cfg(m)).unwrap(), set.len());
            let want = twin(&set, m, h, &plan, fixed);
            assert_eq!(real, want, "seed {s}: {sched:?} on m = {m}: {set:?}");
            compared += 1;
            // Sporadic releases (with misses and backlogs: the horizon is fixed, D may be missed).
            let c = sporadic_cfg(m, 100, 5, s, false);
            let real = finishes(&simulate_dag(&set, &sched, &c).unwrap(), set.len());
            let want = twin(&set, m, 100, &plan_of(&set, &real), fixed);
            assert_eq!(real, want, "seed {s} sporadic: {sched:?} on m = {m}: {set:?}");
            compared += 1;
        }
        // The comparison can fail: the twin's G-EDF is not the real G-FP on every set.
        let real_fp = finishes(
            &simulate_dag(&set, &Scheduler::Gfp { ranks: ranks.clone(), order: None }, &cfg(m)).unwrap(),
            set.len(),
        );
        if real_fp != twin(&set, m, h, &plan, None) {
            gfp_differs += 1;
        }
    }
    assert!(compared >= 10_000, "{compared}");
    assert!(gfp_differs > 0, "the comparison never told G-FP from G-EDF");
}

/// The federated plan with one dedicated core fewer for a high task that has two or more.
fn one_core_fewer(plan: &FederatedPlan) -> Option<FederatedPlan> {
    let k = plan.high.iter().position(|(_, c)| c.end - c.start >= 2)?;
    let mut p = plan.clone();
    p.high[k].1.end -= 1;
    Some(p)
}

#[test]
fn b_no_accepted_set_misses_under_the_real_simulator() {
    const SETS: u64 = 100_000;
    let limits = Limits::default();
    let (mut gedf_checked, mut fed_checked, mut sporadic_checked) = (0u32, 0u32, 0u32);
    let (mut naive_caught, mut fewer_caught) = (0u32, 0u32);
    for s in 0..SETS {
        let mut r = rng(7_000_000 + s);
        let (set, m) = random_set(&mut r, 6);
        let accepted = [gedf::li2013, gedf::li2014, gedf::bonifaci2013].map(|f| f(&set, m) == Verdict::Schedulable);
        // A share of the sets also under sporadic releases with early completion.
        let extra: Vec<SimConfig> = if s % 4 == 0 {
            vec![
                sporadic_cfg(m, 120, r.random_range(1..=8), s, false),
                sporadic_cfg(m, 120, r.random_range(1..=8), s, true),
            ]
        } else {
            vec![]
        };
        let mut sync = cfg(m);
        sync.check_invariants = s % 16 == 0;
        let g = simulate_dag(&set, &Scheduler::Gedf, &sync).unwrap();
        if accepted.iter().any(|&a| a) {
            gedf_checked += 1;
            assert_eq!(g.deadline_misses, 0, "seed {s}: {accepted:?} accept {set:?} on m = {m}");
            for c in &extra {
                sporadic_checked += 1;
                let x = simulate_dag(&set, &Scheduler::Gedf, c).unwrap();
                assert_eq!(x.deadline_misses, 0, "seed {s} sporadic {c:?}: {accepted:?} accept {set:?}");
            }
        }
        // The broken twin of the G-EDF tests: only the necessary conditions U <= m (L <= D holds).
        let u = sum_ratios(set.iter().map(|t| (t.volume() as u128, t.period() as u128)), &Stop::never()).unwrap();
        if u <= int(m as i128) && g.deadline_misses > 0 {
            naive_caught += 1;
        }
        if let Federated::Schedulable(plan) = federated(&set, m, LowPlacement::default(), &limits) {
            fed_checked += 1;
            let f = simulate_dag(&set, &Scheduler::Federated(plan.clone()), &sync).unwrap();
            assert_eq!(f.deadline_misses, 0, "seed {s}: federated {plan:?} of {set:?} on m = {m}");
            for c in &extra {
                sporadic_checked += 1;
                let x = simulate_dag(&set, &Scheduler::Federated(plan.clone()), c).unwrap();
                assert_eq!(x.deadline_misses, 0, "seed {s} sporadic {c:?}: federated {plan:?} of {set:?}");
            }
            if let Some(p) = one_core_fewer(&plan) {
                if simulate_dag(&set, &Scheduler::Federated(p), &cfg(m)).unwrap().deadline_misses > 0 {
                    fewer_caught += 1;
                }
            }
        }
    }
    eprintln!(
        "checked: G-EDF {gedf_checked}, federated {fed_checked}, sporadic {sporadic_checked}; broken twins caught: \
         U <= m {naive_caught}, one core fewer {fewer_caught}"
    );
    assert!(gedf_checked >= 1_000 && fed_checked >= 1_000 && sporadic_checked >= 1_000);
    assert!(naive_caught > 0, "the real simulator never caught the necessary-conditions-only test");
    assert!(fewer_caught > 0, "the real simulator never caught federated with a core fewer");
}

#[test]
fn c_one_node_dags_are_the_sequential_gedf_job_for_job() {
    let (mut compared, mut gfp_differs) = (0u32, 0u32);
    for s in 0..3_000u64 {
        let mut r = rng(9_000_000 + s);
        let n = r.random_range(1..=5);
        let m = r.random_range(1..=3);
        let set = DagSet::new((0..n).map(|_| random_task(&mut r, 1)).collect());
        let ts = set.sequential().unwrap();
        let configs = [cfg(m), sporadic_cfg(m, 150, 4, s, false), sporadic_cfg(m, 150, 4, s, true)];
        for c in configs {
            let seq = simulate(&ts, &Scheduler::Gedf, &c).unwrap();
            let dag = simulate_dag(&set, &Scheduler::Gedf, &c).unwrap();
            // The sequential engine also dispatches at the horizon instant itself (a start at the
            // horizon, no execution); the DAG loop processes only completions there.
            let h = seq.horizon;
            let key = |j: &rtsched_trace::JobStats| {
                (j.task, j.job, j.release, j.deadline, j.start.filter(|&x| x < h), j.finish, j.executed)
            };
            let mut a: Vec<_> = seq.per_job.iter().map(key).collect();
            let mut b: Vec<_> = dag.per_job.iter().map(key).collect();
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "seed {s} {c:?}: {set:?}");
            assert_eq!(seq.deadline_misses, dag.deadline_misses, "seed {s}");
            // Preemptions too, but for the horizon instant, where the sequential engine still
            // dispatches (and may preempt) and the DAG loop does not.
            let pre = |t: &Option<rtsched_trace::Trace>| {
                t.as_ref().map(|t| {
                    t.records.iter().filter(|r| r.time < h && matches!(r.event, Event::Preempt { .. })).count()
                })
            };
            let mut c2 = c.clone();
            c2.record_trace = true;
            let (sa, sb) =
                (simulate(&ts, &Scheduler::Gedf, &c2).unwrap(), simulate_dag(&set, &Scheduler::Gedf, &c2).unwrap());
            assert_eq!(pre(&sa.trace), pre(&sb.trace), "seed {s}: preemptions before the horizon");
            compared += 1;
            let fp = simulate_dag(&set, &Scheduler::Gfp { ranks: dm(&set), order: None }, &c).unwrap();
            let mut f: Vec<_> = fp.per_job.iter().map(key).collect();
            f.sort_unstable();
            if f != a {
                gfp_differs += 1;
            }
        }
    }
    assert!(compared >= 9_000);
    assert!(gfp_differs > 0, "the comparison never told G-FP from G-EDF");
}

/// A random fork-join task of 1–3 regions of 1–3 threads of cost 1–4 whose critical path fits
/// its period (D uniform in [critical path, T]).
fn random_fj(r: &mut rand_chacha::ChaCha8Rng) -> ForkJoinTask {
    loop {
        let regions: Vec<Vec<Time>> = (0..r.random_range(1..=3))
            .map(|_| (0..r.random_range(1..=3)).map(|_| r.random_range(1..=4)).collect())
            .collect();
        let t = dag_twin::PERIODS[r.random_range(0..dag_twin::PERIODS.len())];
        let probe = ForkJoinTask::implicit(1 << 40, regions.clone()).unwrap();
        if probe.critical_path() > t {
            continue;
        }
        return ForkJoinTask::new(t, r.random_range(probe.critical_path()..=t), regions).unwrap();
    }
}

#[test]
fn d_fork_join_sets_as_dags_get_the_fork_join_gedf_response_times() {
    let (mut compared, mut gfp_differs) = (0u32, 0u32);
    for s in 0..3_000u64 {
        let mut r = rng(11_000_000 + s);
        let fj = ForkJoinSet::new((0..r.random_range(1..=3)).map(|_| random_fj(&mut r)).collect()).unwrap();
        let set = DagSet::from_forkjoin(&fj).unwrap();
        let m = r.random_range(1..=4);
        for c in [cfg(m), sporadic_cfg(m, 120, 6, s, false)] {
            let a: Vec<_> = simulate_forkjoin_gedf(&fj, &c)
                .unwrap()
                .per_job
                .iter()
                .map(|j| (j.task, j.job, j.release, j.finish))
                .collect();
            let b: Vec<_> = simulate_dag(&set, &Scheduler::Gedf, &c)
                .unwrap()
                .per_job
                .iter()
                .map(|j| (j.task, j.job, j.release, j.finish))
                .collect();
            let (mut a, mut b) = (a, b);
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "seed {s} {c:?}: {fj:?} on m = {m}");
            compared += 1;
            let mut f: Vec<_> = simulate_dag(&set, &Scheduler::Gfp { ranks: dm(&set), order: None }, &c)
                .unwrap()
                .per_job
                .iter()
                .map(|j| (j.task, j.job, j.release, j.finish))
                .collect();
            f.sort_unstable();
            if f != a {
                gfp_differs += 1;
            }
        }
    }
    assert!(compared >= 6_000);
    assert!(gfp_differs > 0, "the comparison never told G-FP from G-EDF");
}

/// The trace invariants at every instant of `tr`, a trace of `set` on the CPUs `cpus_of[i]`
/// of each task's cluster (all `m` for global scheduling): a node instance runs only after
/// every predecessor of its job completed and its task's previous job completed, completes
/// exactly once, and never runs after completing; no CPU of a cluster is idle while a node of
/// that cluster's tasks is ready and not running.
fn check_trace(set: &DagSet, cpus_of: &[std::ops::Range<u32>], m: u32, tr: &Trace) -> Result<(), String> {
    let num = NodeNumbering::of(set);
    use std::collections::HashMap;
    // (task, job) → per node: released, completed count; running: cpu → (task, job, node).
    let mut done: HashMap<(usize, u32), Vec<u32>> = HashMap::new();
    let mut released: HashMap<(usize, u32), Vec<bool>> = HashMap::new();
    let mut running: Vec<Option<(usize, u32, u32)>> = vec![None; m as usize];
    let job_done = |done: &HashMap<(usize, u32), Vec<u32>>, i: usize, j: u32| {
        done.get(&(i, j)).is_some_and(|v| v.iter().all(|&c| c == 1))
    };
    let recs = &tr.records;
    let mut x = 0;
    while x < recs.len() {
        let t = recs[x].time;
        while x < recs.len() && recs[x].time == t {
            let e = recs[x].event;
            x += 1;
            let node = |task: u32| num.node_of(task).ok_or_else(|| format!("at {t}: unknown trace task {task}"));
            match e {
                Event::Release { job, .. } => {
                    let (i, k) = node(job.task)?;
                    let r = released.entry((i, job.job)).or_insert_with(|| vec![false; set[i].nodes()]);
                    if std::mem::replace(&mut r[k as usize], true) {
                        return Err(format!("at {t}: node {k} of job {} of task {i} released twice", job.job));
                    }
                    done.entry((i, job.job)).or_insert_with(|| vec![0; set[i].nodes()]);
                }
                Event::Run { cpu, job } => {
                    let (i, k) = node(job.task)?;
                    let d =
                        done.get(&(i, job.job)).ok_or_else(|| format!("at {t}: a node of an unreleased job runs"))?;
                    if d[k as usize] > 0 {
                        return Err(format!("at {t}: node {k} of job {} of task {i} runs after completing", job.job));
                    }
                    for (p, _) in
                        (0..set[i].nodes() as u32).map(|p| (p, ())).filter(|(p, _)| set[i].successors(*p).contains(&k))
                    {
                        if d[p as usize] != 1 {
                            return Err(format!(
                                "at {t}: node {k} of job {} of task {i} runs before its predecessor {p} completed",
                                job.job
                            ));
                        }
                    }
                    if job.job > 0 && !job_done(&done, i, job.job - 1) {
                        return Err(format!(
                            "at {t}: job {} of task {i} runs before job {} completed",
                            job.job,
                            job.job - 1
                        ));
                    }
                    if !cpus_of[i].contains(&cpu) {
                        return Err(format!("at {t}: task {i} runs on CPU {cpu}, outside its cluster"));
                    }
                    running[cpu as usize] = Some((i, job.job, k));
                }
                Event::Preempt { cpu, .. } => running[cpu as usize] = None,
                Event::Complete { cpu, job } => {
                    let (i, k) = node(job.task)?;
                    let d =
                        done.get_mut(&(i, job.job)).ok_or_else(|| format!("at {t}: an unreleased node completes"))?;
                    d[k as usize] += 1;
                    if d[k as usize] > 1 {
                        return Err(format!("at {t}: node {k} of job {} of task {i} completes twice", job.job));
                    }
                    running[cpu as usize] = None;
                }
                _ => {}
            }
        }
        if t >= tr.meta.horizon {
            break;
        }
        // Work conservation after the instant: a ready node of a cluster with an idle CPU.
        for ((i, j), d) in &done {
            if job_done(&done, *i, *j) || (*j > 0 && !job_done(&done, *i, j - 1)) {
                continue;
            }
            for k in 0..set[*i].nodes() as u32 {
                let preds_done = (0..set[*i].nodes() as u32)
                    .filter(|p| set[*i].successors(*p).contains(&k))
                    .all(|p| d[p as usize] == 1);
                let is_running = running.contains(&Some((*i, *j, k)));
                if d[k as usize] == 0 && preds_done && !is_running {
                    if let Some(c) = cpus_of[*i].clone().find(|&c| running.get(c as usize).is_none_or(|r| r.is_none()))
                    {
                        return Err(format!("at {t}: CPU {c} idles while node {k} of job {j} of task {i} is ready"));
                    }
                }
            }
        }
    }
    Ok(())
}

#[test]
fn e_traces_are_work_conserving_and_respect_precedence() {
    let limits = Limits::default();
    let (mut checked, mut extra_cpu_caught, mut dropped_caught, mut doubled_caught) = (0u32, 0u32, 0u32, 0u32);
    for s in 0..1_500u64 {
        let mut r = rng(13_000_000 + s);
        let (set, m) = random_set(&mut r, 6);
        let mut scheds = vec![Scheduler::Gedf, Scheduler::Gfp { ranks: dm(&set), order: None }];
        if let Federated::Schedulable(p) = federated(&set, m, LowPlacement::default(), &limits) {
            scheds.push(Scheduler::Federated(p));
        }
        for sched in scheds {
            let cpus_of: Vec<std::ops::Range<u32>> = match &sched {
                Scheduler::Federated(p) => {
                    let first = p.high.iter().map(|(_, c)| c.end).max().unwrap_or(0);
                    let mut v = vec![0..0; set.len()];
                    for (i, c) in &p.high {
                        v[*i] = c.clone();
                    }
                    for (k, core) in p.low.iter().enumerate() {
                        for &i in core {
                            v[i] = first + k as u32..first + k as u32 + 1;
                        }
                    }
                    v
                }
                _ => vec![0..m; set.len()],
            };
            for mut c in [cfg(m), sporadic_cfg(m, 100, 5, s, true)] {
                c.record_trace = true;
                let res = simulate_dag(&set, &sched, &c).unwrap();
                let tr = res.trace.as_ref().unwrap();
                check_trace(&set, &cpus_of, m, tr).unwrap_or_else(|e| panic!("seed {s} {sched:?}: {e}"));
                checked += 1;
                // Every completed DAG job completed each of its nodes once (the check counts them).
                let completions =
                    tr.records.iter().filter(|x| matches!(x.event, Event::Complete { .. })).count() as u64;
                assert_eq!(completions, res.nodes_completed);
                // Mutations the check must catch: one CPU more than the schedule had (so an idle
                // CPU beside waiting nodes), a predecessor's completion dropped, a completion doubled.
                if !matches!(sched, Scheduler::Federated(_)) {
                    let wider: Vec<_> = cpus_of.iter().map(|r| r.start..r.end + 1).collect();
                    if check_trace(&set, &wider, m + 1, tr).is_err() {
                        extra_cpu_caught += 1;
                    }
                }
                let with_succ = tr.records.iter().position(|x| match x.event {
                    Event::Complete { job, .. } => {
                        let (i, k) = NodeNumbering::of(&set).node_of(job.task).unwrap();
                        !set[i].successors(k).is_empty()
                    }
                    _ => false,
                });
                if let Some(p) = with_succ {
                    let mut bad = tr.clone();
                    bad.records.remove(p);
                    if check_trace(&set, &cpus_of, m, &bad).is_err() {
                        dropped_caught += 1;
                    }
                    let mut bad = tr.clone();
                    bad.records.insert(p, bad.records[p]);
                    if check_trace(&set, &cpus_of, m, &bad).is_err() {
                        doubled_caught += 1;
                    }
                }
            }
        }
    }
    assert!(checked >= 6_000, "{checked}");
    assert!(
        extra_cpu_caught > 100 && dropped_caught > 100 && doubled_caught > 100,
        "{extra_cpu_caught} {dropped_caught} {doubled_caught}"
    );
}
