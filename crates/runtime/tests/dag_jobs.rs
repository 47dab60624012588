//! DAG user jobs (`rtsched_runtime::dag`: nodes as closures plus edges) on real threads. No
//! timing assertion: every node of every completed DAG job ran each of its steps exactly once
//! and in order (across preemptions and steals), never before all its predecessors completed,
//! and the accounting holds; the example `examples/dag_job.rs` runs at a tiny size.

mod common;
use common::at_rt_if_permitted;
use common::dag::check_dag;

#[path = "../examples/dag_job.rs"]
mod dag_job_example;

use rtsched_runtime::dag::{dag_user_jobs, DagJob};
use rtsched_runtime::platform::allowed_cpus;
use rtsched_runtime::user::{JobCtx, Step};
use rtsched_runtime::{run_dag, Mechanism, RunConfig};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const MS: u64 = 1_000_000;

/// Runs one at a time (real threads on the same cores).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static L: std::sync::Mutex<()> = std::sync::Mutex::new(());
    L.lock().unwrap_or_else(|p| p.into_inner())
}

/// (slot, job, step) in the order the steps ran (the lock orders them).
type Log = Arc<Mutex<Vec<(usize, u32, u64)>>>;

fn steps(n: u64, log: &Log) -> impl Fn(&JobCtx<'_>) -> Step + Send + Sync + 'static {
    let log = log.clone();
    move |ctx: &JobCtx<'_>| {
        let t0 = std::time::Instant::now();
        while t0.elapsed().as_micros() < 100 && !ctx.preemption_requested() {
            std::hint::spin_loop();
        }
        log.lock().unwrap().push((ctx.task, ctx.job, ctx.step));
        if ctx.step + 1 == n {
            Step::Done
        } else {
            Step::Continue
        }
    }
}

#[test]
fn dag_user_jobs_run_every_step_once_and_after_their_predecessors() {
    let _s = serial();
    let cpus = allowed_cpus();
    let cpus = cpus[..2.min(cpus.len())].to_vec();
    for mech in ["rtws", "push-pull"] {
        let log: Log = Default::default();
        // Task "a": 0 → {1, 2, 3}, {1, 2} → 4, 3 → 5; task "b": one node, a shorter period.
        let mut a = DagJob::periodic("a", 20 * MS);
        let n: Vec<_> = [6, 4, 4, 3, 5, 2].iter().map(|&k| a.node(MS, steps(k, &log))).collect();
        a.edge(n[0], n[1]).edge(n[0], n[2]).edge(n[0], n[3]).edge(n[1], n[4]).edge(n[2], n[4]).edge(n[3], n[5]);
        let mut b = DagJob::periodic("b", 10 * MS).deadline(8 * MS);
        b.node(2 * MS, steps(10, &log));
        let (set, bodies) = dag_user_jobs(vec![a, b]).unwrap();
        let mut cfg = RunConfig::new(cpus.clone(), 120 * MS);
        cfg.start_delay_ns = 30 * MS;
        cfg.user_jobs = bodies;
        let m = Mechanism::named(mech).unwrap();
        let r = at_rt_if_permitted(&mut cfg, |c| run_dag(&set, &m, c));
        let jobs = check_dag(&set, &r).unwrap_or_else(|e| panic!("{mech}: {e}"));
        let want_steps = [6u64, 4, 4, 3, 5, 2, 10];
        let log = log.lock().unwrap();
        // Steps of each (slot, job) exactly once, in order.
        let mut seen: HashMap<(usize, u32), Vec<u64>> = HashMap::new();
        for &(slot, job, step) in log.iter() {
            seen.entry((slot, job)).or_default().push(step);
        }
        for ((slot, job), s) in &seen {
            let want: Vec<u64> = (0..s.len() as u64).collect();
            assert_eq!(s, &want, "{mech}: slot {slot} job {job} ran steps {s:?}");
            assert!(s.len() as u64 <= want_steps[*slot], "{mech}: slot {slot} ran {} steps", s.len());
        }
        // A completed job ran every step of every node.
        let mut full = 0;
        for (&(task, job), j) in &jobs {
            if j.finish.is_none() {
                continue;
            }
            let slots: Vec<usize> = if task == 0 { (0..6).collect() } else { vec![6] };
            for s in slots {
                assert_eq!(seen.get(&(s, job)).map(Vec::len), Some(want_steps[s] as usize), "{mech}: {task}/{job}");
            }
            full += 1;
        }
        assert!(full >= 4, "{mech}: only {full} jobs completed: {jobs:?}");
        // Precedence in the log too: a node's first step after its predecessors' last ones.
        let pos = |slot: usize, job: u32, step: u64| log.iter().position(|&x| x == (slot, job, step));
        for &(u, v) in set[0].edges() {
            for job in 0..4 {
                if let (Some(last_u), Some(first_v)) =
                    (pos(u as usize, job, want_steps[u as usize] - 1), pos(v as usize, job, 0))
                {
                    assert!(last_u < first_v, "{mech}: job {job}: node {v} started before {u} ended");
                }
            }
        }
    }
}

#[test]
fn the_example_runs_at_a_tiny_size() {
    let _s = serial();
    for mech in ["rtws", "push-pull"] {
        let (summary, steps) = dag_job_example::run_example(25, mech).unwrap_or_else(|e| panic!("{mech}: {e}"));
        assert_eq!(summary["tasks"], 1, "{summary}");
        assert!(summary["jobs"].as_u64().unwrap() >= 1, "{summary}");
        assert!(steps > 0, "{mech}: no node ran");
    }
}
