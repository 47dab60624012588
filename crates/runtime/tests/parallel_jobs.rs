//! Parallel user jobs (`rtsched_runtime::parallel`: fork-join closures with `join`/`scope`) under
//! `rtws` on real threads. No timing assertion: every thread of every completed fork-join job
//! ran each of its steps exactly once and in order (across preemptions and steals), a region
//! started only after the previous one joined, and the accounting holds.

use rtsched_runtime::parallel::{parallel_jobs, ParallelTask};
use rtsched_runtime::platform::allowed_cpus;
use rtsched_runtime::user::{JobCtx, Step};
use rtsched_runtime::{forkjoin_jobs, run_forkjoin, Mechanism, RunConfig, RunResult};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const MS: u64 = 1_000_000;

/// (slot, job, step, cpu) in the order the steps ran (the lock orders them).
type Log = Arc<Mutex<Vec<(usize, u32, u64, usize)>>>;

fn steps(n: u64, log: &Log) -> impl Fn(&JobCtx<'_>) -> Step + Send + Sync + 'static {
    let log = log.clone();
    move |ctx: &JobCtx<'_>| {
        let t0 = std::time::Instant::now();
        while t0.elapsed().as_micros() < 100 && !ctx.preemption_requested() {
            std::hint::spin_loop();
        }
        log.lock().unwrap().push((ctx.task, ctx.job, ctx.step, ctx.cpu));
        if ctx.step + 1 == n {
            Step::Done
        } else {
            Step::Continue
        }
    }
}

fn run_rt_if_permitted(set: &rtsched_model::forkjoin::ForkJoinSet, cfg: &mut RunConfig) -> RunResult {
    let rtws = Mechanism::named("rtws").unwrap();
    cfg.rt_priority = Some(10);
    match run_forkjoin(set, &rtws, cfg) {
        Err(e) if e.to_string().contains("CAP_SYS_NICE") => {
            cfg.rt_priority = None;
            run_forkjoin(set, &rtws, cfg).unwrap()
        }
        other => other.unwrap(),
    }
}

#[test]
fn parallel_user_jobs_run_every_step_once_and_respect_the_joins() {
    let log: Log = Default::default();
    // Task "a": [1 thread of 10 steps] [join: 2 threads of 8] [scope: 3 threads of 5] [1 of 4];
    // task "b": a sequential job of 20 steps with a shorter period (it preempts a's threads).
    let a = ParallelTask::periodic("a", 20 * MS)
        .then(MS, steps(10, &log))
        .join((MS, steps(8, &log)), (MS, steps(8, &log)))
        .scope(|s| {
            for _ in 0..3 {
                s.spawn(MS, steps(5, &log));
            }
        })
        .then(MS, steps(4, &log));
    let b = ParallelTask::periodic("b", 10 * MS).deadline(8 * MS).then(2 * MS, steps(20, &log));
    let n_steps = [10u64, 8, 8, 5, 5, 5, 4, 20];
    // Slot -> (task, region).
    let region_of = [(0, 0), (0, 1), (0, 1), (0, 2), (0, 2), (0, 2), (0, 3), (1, 0)];
    let (set, bodies) = parallel_jobs(vec![a, b]).unwrap();
    let cpus: Vec<usize> = allowed_cpus().into_iter().take(2).collect();
    let mut cfg = RunConfig::new(cpus.clone(), 200 * MS);
    cfg.user_jobs = bodies;
    let r = run_rt_if_permitted(&set, &mut cfg);
    assert_eq!(r.accounting.error, None, "{:?}", r.accounting);
    r.check_trace().unwrap();
    let log = log.lock().unwrap();
    let mut per_thread: HashMap<(usize, u32), Vec<u64>> = HashMap::new();
    // Per (task, job, region): index in the log of its first and last step.
    let mut span: HashMap<(usize, u32, usize), (usize, usize)> = HashMap::new();
    for (i, &(slot, job, step, cpu)) in log.iter().enumerate() {
        assert!(cpu < cpus.len());
        per_thread.entry((slot, job)).or_default().push(step);
        let (t, reg) = region_of[slot];
        let e = span.entry((t, job, reg)).or_insert((i, i));
        e.1 = i;
    }
    // Every thread: its steps 0, 1, ..., in order, exactly once; all of them iff it completed.
    let mut done = 0;
    for j in &r.jobs {
        let got = per_thread.remove(&(j.task as usize, j.job)).unwrap_or_default();
        let k = n_steps[j.task as usize];
        assert!(got.iter().copied().eq(0..got.len() as u64), "thread {}.{}: {got:?}", j.task, j.job);
        if j.finish_ns.is_some() {
            assert_eq!(got.len() as u64, k, "thread {}.{}", j.task, j.job);
            done += 1;
        } else {
            assert!(got.len() as u64 <= k);
        }
    }
    assert!(per_thread.is_empty(), "steps of threads the run never released: {per_thread:?}");
    assert!(done > 0);
    // Joins: no step of region r+1 of a job before the last step of its region r.
    for (&(t, job, reg), &(first, _)) in &span {
        if reg > 0 {
            let prev = span.get(&(t, job, reg - 1)).expect("a later region ran before an earlier one");
            assert!(prev.1 < first, "task {t} job {job}: region {reg} started before region {} joined", reg - 1);
        }
    }
    // Job level: every fork-join job released is complete or pending, and complete ones
    // completed every thread.
    let jobs = forkjoin_jobs(&set, &r);
    assert!(jobs.iter().any(|j| j.task == 0 && j.finish.is_some()));
    assert_eq!(jobs.iter().filter(|j| j.task == 0).count(), 10);
    assert_eq!(jobs.iter().filter(|j| j.task == 1).count(), 20);
}

#[test]
fn user_jobs_must_match_the_thread_slots() {
    let log: Log = Default::default();
    let (set, _) =
        parallel_jobs(vec![ParallelTask::periodic("a", 10 * MS).join((MS, steps(1, &log)), (MS, steps(1, &log)))])
            .unwrap();
    let (_, one) = parallel_jobs(vec![ParallelTask::periodic("b", 10 * MS).then(MS, steps(1, &log))]).unwrap();
    let mut cfg = RunConfig::new(vec![allowed_cpus()[0]], 10 * MS);
    cfg.user_jobs = one;
    let e = run_forkjoin(&set, &Mechanism::named("rtws").unwrap(), &cfg).unwrap_err().to_string();
    assert!(e.contains("user_jobs has 1 entries for 2 tasks"), "{e}");
}

/// A thread of a parallel job that suspends ends the run under rtws with one line: rtws
/// executes self-suspending jobs of sequential tasks only (docs/mechanisms/rtws.md,
/// "Self-suspending jobs").
#[test]
fn a_suspending_thread_of_a_parallel_job_fails_the_run_under_rtws() {
    let log: Log = Default::default();
    let sleeper = |c: &JobCtx<'_>| if c.step == 0 { Step::Suspend(MS) } else { Step::Done };
    let (set, bodies) =
        parallel_jobs(vec![ParallelTask::periodic("a", 10 * MS).join((MS, sleeper), (MS, steps(1, &log)))]).unwrap();
    let mut cfg = RunConfig::new(vec![allowed_cpus()[0]], 50 * MS);
    cfg.user_jobs = bodies;
    let e = run_forkjoin(&set, &Mechanism::named("rtws").unwrap(), &cfg).unwrap_err().to_string();
    assert!(e.contains("self-suspended") && e.contains("sequential tasks only") && !e.contains('\n'), "{e}");
}
