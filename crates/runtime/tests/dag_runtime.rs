//! DAG jobs on real threads (docs/dag.md, "Runtime"): under every mechanism that executes
//! parallel jobs — `rtws` with both deque designs and `push-pull` — every node of every job
//! executes exactly once and never starts before every predecessor of its job completed (the
//! trace oracle `common::dag::check_dag`, which must catch a broken twin); a fork-join set run
//! as before and as its DAG gives the same jobs, node counts and precedence; a light DAG set
//! runs without a miss; the mechanisms that refuse DAG sets say so in one line. No timing is
//! asserted beyond "no miss on a light set" (each such run has a slack of tens of ms).

mod common;
use common::dag::{check_dag, random_dag, MS};
use common::forkjoin::check_fj;
use common::{at_rt_if_permitted, two_cpus, Rng};

use rtsched_model::dag::{DagSet, DagTask};
use rtsched_model::forkjoin::{ForkJoinSet, ForkJoinTask};
use rtsched_runtime::platform::allowed_cpus;
use rtsched_runtime::{run_dag, run_forkjoin, ExecTime, IdleMode, Mechanism, RunConfig, RunResult};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Runs one at a time (real threads on the same cores).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static L: std::sync::Mutex<()> = std::sync::Mutex::new(());
    L.lock().unwrap_or_else(|p| p.into_inner())
}

/// The mechanisms under test, by name and parameters.
const MECHS: &[(&str, &[(&str, &str)])] =
    &[("rtws", &[("deques", "lockfree")]), ("rtws", &[("deques", "locked")]), ("push-pull", &[])];

fn mech(name: &str, params: &[(&str, &str)]) -> Mechanism {
    Mechanism::named(name).unwrap().with_params(params.iter().copied()).unwrap()
}

/// A run of `ms` ms on `cpus`, starting 30 ms after the call.
fn cfg(cpus: Vec<usize>, ms: u64) -> RunConfig {
    let mut c = RunConfig::new(cpus, ms * MS);
    c.start_delay_ns = 30 * MS;
    c
}

fn run_rt(set: &DagSet, m: &Mechanism, mut c: RunConfig) -> RunResult {
    at_rt_if_permitted(&mut c, |c| run_dag(set, m, c))
}

/// The diamond 0 → {1, 2} → 3 beside an independent node 4, 4 ms each.
fn diamond(period: u64) -> DagTask {
    DagTask::new(period, period, vec![4 * MS; 5], vec![(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap()
}

/// The oracle's broken twins: judged against a graph with one predecessor more than the run
/// had (an edge between two nodes the run left independent: the twin counts one predecessor
/// the mechanism did not), the trace must be rejected. For independent nodes `u`, `v` of a job
/// that both ran, one of `u → v` and `v → u` is broken by every schedule: either `v` started
/// before `u` completed, or `u` did after `v` completed — so one of the twins fails on every
/// run, whatever the timing.
#[test]
fn the_trace_oracle_holds_and_catches_a_wrong_predecessor_count() {
    let _s = serial();
    let cpus = allowed_cpus();
    let set = DagSet::new(vec![diamond(40 * MS)]);
    for &(name, params) in MECHS {
        for m in [1, 2.min(cpus.len())] {
            let r = run_rt(&set, &mech(name, params), cfg(cpus[..m].to_vec(), 100));
            let jobs = check_dag(&set, &r).unwrap_or_else(|e| panic!("{name} {params:?} m={m}: {e}"));
            assert!(jobs.values().filter(|j| j.finish.is_some()).count() >= 2, "{name}: {jobs:?}");
            assert!(jobs.values().all(|j| j.finish.is_some() || j.release + 40 * MS > r.duration_ns), "{jobs:?}");
            for (u, v) in [(1, 2), (3, 4), (0, 4)] {
                let twin = |a: u32, b: u32| {
                    let mut edges = set[0].edges().to_vec();
                    edges.push((a, b));
                    DagSet::new(vec![DagTask::new(40 * MS, 40 * MS, vec![4 * MS; 5], edges).unwrap()])
                };
                let (ab, ba) = (check_dag(&twin(u, v), &r), check_dag(&twin(v, u), &r));
                assert!(
                    ab.is_err() || ba.is_err(),
                    "{name} {params:?} m={m}: neither twin with {u} → {v} nor {v} → {u} is caught"
                );
                let e = ab.err().or(ba.err()).unwrap_or_default();
                assert!(e.contains("before its predecessor"), "{e}");
            }
        }
    }
}

/// Random small DAG sets (1–3 tasks of 1–6 nodes, random edges, light to overloaded) on 1 or 2
/// CPUs, 40–120 ms, idle sleep or spin, WCET or uniform execution times, an early stop in a
/// fifth of the cases, under each mechanism: every run passes the trace oracle and releases
/// every job due. `RTSCHED_STRESS_SEED` / `RTSCHED_STRESS_CASES` as in tests/stress.rs.
#[test]
fn random_dag_runs_keep_the_trace_oracle() {
    let _s = serial();
    let seed = std::env::var("RTSCHED_STRESS_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0xda6_2026u64);
    let cases = std::env::var("RTSCHED_STRESS_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(6usize);
    let all = allowed_cpus();
    for &(name, params) in MECHS {
        let mut done_nodes = 0u64;
        for case in 0..cases {
            let mut rng = Rng(seed ^ (case as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D));
            let m = if all.len() >= 2 && rng.below(3) > 0 { 2 } else { 1 };
            let (set, u_pct) = random_dag(&mut rng, m as u64);
            let duration = rng.range(40, 120) * MS;
            let mut c = cfg(all[..m].to_vec(), duration / MS);
            c.seed = rng.next();
            c.idle = if rng.below(3) == 0 { IdleMode::Spin } else { IdleMode::Sleep };
            if rng.below(2) == 0 {
                c.exec = ExecTime::Uniform { min_fraction: 0.3 };
            }
            let stop_after = (rng.below(5) == 0).then(|| rng.range(0, 30 + duration / MS) * MS);
            let flag = Arc::new(AtomicBool::new(false));
            if stop_after.is_some() {
                c.stop = Some(flag.clone());
            }
            let desc = format!(
                "{name} {params:?} seed={seed:#x} case {case}: m={m} U={u_pct}% dur={}ms stop={stop_after:?} set={:?}",
                duration / MS,
                set.iter()
                    .map(|t| (t.period(), t.deadline(), t.wcets().to_vec(), t.edges().to_vec()))
                    .collect::<Vec<_>>()
            );
            let stopper = stop_after.map(|after| {
                let f = flag.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(std::time::Duration::from_nanos(after));
                    f.store(true, Ordering::SeqCst);
                })
            });
            let r = run_dag(&set, &mech(name, params), &c);
            if let Some(h) = stopper {
                h.join().unwrap();
            }
            let r = r.unwrap_or_else(|e| panic!("{desc}: {e}"));
            let jobs = check_dag(&set, &r).unwrap_or_else(|e| panic!("{desc}: {e}"));
            for (i, t) in set.iter().enumerate() {
                let due = r.duration_ns.div_ceil(t.period()) as usize;
                let got = jobs.keys().filter(|k| k.0 == i as u32).count();
                assert_eq!(got, due, "{desc}: task {i}: {got} jobs released, {due} due");
            }
            done_nodes += jobs.values().map(|j| j.nodes_done as u64).sum::<u64>();
        }
        assert!(done_nodes > 0, "{name} {params:?}: no node completed in {cases} runs");
    }
}

/// A fork-join set run as before and as its DAG (`DagSet::from_forkjoin`): the same thread
/// slots (costs, order), the same jobs released, and both runs pass both oracles — the
/// fork-join one (regions in order) on the DAG run and the DAG one on the fork-join run — so
/// the DAG path keeps the regions' precedence and the fork-join path is the DAG's.
#[test]
fn a_fork_join_set_runs_the_same_as_its_dag() {
    let _s = serial();
    let cpus = allowed_cpus();
    let cpus = cpus[..2.min(cpus.len())].to_vec();
    let fj = ForkJoinSet::new(vec![
        ForkJoinTask::implicit(30 * MS, vec![vec![2 * MS], vec![3 * MS, MS, 2 * MS], vec![MS]]).unwrap(),
        ForkJoinTask::new(50 * MS, 40 * MS, vec![vec![MS, MS], vec![4 * MS]]).unwrap(),
    ])
    .unwrap();
    let dag = DagSet::from_forkjoin(&fj).unwrap();
    let slots = |ts: rtsched_model::TaskSet| ts.iter().map(|t| (t.wcet, t.deadline, t.period)).collect::<Vec<_>>();
    assert_eq!(
        slots(rtsched_runtime::slot_task_set(&fj).unwrap()),
        slots(rtsched_runtime::dag_slot_task_set(&dag).unwrap())
    );
    for &(name, params) in MECHS {
        let m = mech(name, params);
        let mut c = cfg(cpus.clone(), 150);
        let a = at_rt_if_permitted(&mut c, |c| run_forkjoin(&fj, &m, c));
        let b = run_rt(&dag, &m, cfg(cpus.clone(), 150));
        for (what, r) in [("fork-join run", &a), ("DAG run", &b)] {
            let fjv = check_fj(&fj, r).unwrap_or_else(|e| panic!("{name} {params:?} {what}, fork-join oracle: {e}"));
            let dv = check_dag(&dag, r).unwrap_or_else(|e| panic!("{name} {params:?} {what}, DAG oracle: {e}"));
            assert_eq!(fjv.len(), dv.len(), "{name} {what}");
            for (k, j) in &dv {
                assert_eq!(j.finish, fjv[k].finish, "{name} {what}: job {k:?}");
                if j.finish.is_some() {
                    assert_eq!(j.nodes_done as usize, dag[k.0 as usize].nodes(), "{name} {what}: job {k:?}");
                }
            }
        }
        assert_eq!(a.per_task.released, b.per_task.released, "{name} {params:?}: jobs released");
    }
}

/// A light DAG set (the diamond and a chain, about 30% of two CPUs, deadlines with tens of ms
/// of slack) runs without a miss under each mechanism, at SCHED_FIFO where permitted, and its
/// job-level summary says so per task.
#[test]
fn a_light_dag_set_runs_without_a_miss() {
    let _s = serial();
    let Some(cpus) = two_cpus() else { return };
    let chain = DagTask::new(50 * MS, 50 * MS, vec![2 * MS, 3 * MS, 2 * MS], vec![(0, 1), (1, 2)]).unwrap();
    let set = DagSet::new(vec![diamond(100 * MS), chain.named("chain").unwrap()]);
    for &(name, params) in MECHS {
        let r = run_rt(&set, &mech(name, params), cfg(cpus.clone(), 300));
        let jobs = check_dag(&set, &r).unwrap_or_else(|e| panic!("{name} {params:?}: {e}"));
        let late: Vec<_> = jobs.iter().filter(|(_, j)| j.finish.is_some_and(|f| f > j.deadline)).collect();
        assert!(late.is_empty(), "{name} {params:?}: {late:?}");
        assert_eq!(r.deadline_misses(), 0, "{name} {params:?}");
        let s = rtsched_runtime::dag_summary(&set, &r);
        assert_eq!(s["deadline_misses"], 0, "{s}");
        assert_eq!(s["per_task"][1]["name"], "chain", "{s}");
        let per: u64 = (0..2).map(|i| s["per_task"][i]["jobs"].as_u64().unwrap()).sum();
        assert_eq!(per, s["jobs"].as_u64().unwrap(), "{s}");
        assert!(s["per_task"][0]["max_response_time_ns"].as_u64().unwrap() >= 12 * MS, "the diamond's longest path");
    }
}

/// Mechanisms that run sequential tasks only refuse a DAG set in one line naming themselves;
/// the list the refusal gives is the mechanisms whose plugins run parallel jobs.
#[test]
fn other_mechanisms_refuse_dag_sets_in_one_line() {
    let _s = serial();
    let set = DagSet::new(vec![diamond(40 * MS)]);
    let cpu = allowed_cpus()[..1].to_vec();
    for name in ["gsn-edf", "kernel-sd"] {
        let e = run_dag(&set, &Mechanism::named(name).unwrap(), &cfg(cpu.clone(), 10)).unwrap_err().to_string();
        assert!(e.contains(&format!("{name} runs sequential tasks only; DAG task files need")), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
    for name in rtsched_runtime::mechanism::registry::parallel_mechanisms() {
        let r = run_dag(&set, &Mechanism::named(name).unwrap(), &cfg(cpu.clone(), 10))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        check_dag(&set, &r).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
