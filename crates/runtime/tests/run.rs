//! End-to-end runs on real threads. No timing assertions: every check is about accounting
//! and the structure of the trace, which must hold however noisy the machine is.
//! Each run is ≤ 0.3 s and uses 1 CPU where possible (this machine has 2 shared cores).

mod common;

use rtsched_model::TaskSet;
use rtsched_runtime::platform::allowed_cpus;
use rtsched_runtime::tracer::RecKind;
use rtsched_runtime::{run, ExecTime, IdleMode, Mechanism, RunConfig, RunResult};
use rtsched_trace::Event;
use std::collections::HashMap;

/// The registered mechanism `name`.
fn mech(name: &str) -> Mechanism {
    Mechanism::named(name).unwrap()
}
const MS: u64 = 1_000_000;

/// Runs take turns: two runs pinned to the same core would slow each other's jobs (cost is
/// wall time under the user-space mechanisms), and SCHED_DEADLINE admission is
/// machine-wide, so one test's reservations could make another's admission fail.
static RUNS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    RUNS.lock().unwrap_or_else(|p| p.into_inner())
}

/// A tiny deterministic generator: n tasks with periods in [2, 20] ms and total utilization
/// about `u` (split unevenly), implicit deadlines.
fn random_set(seed: u64, n: usize, u: f64) -> TaskSet {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 33) as f64 / (1u64 << 31) as f64
    };
    let w: Vec<f64> = (0..n).map(|_| 0.2 + next()).collect();
    let sum: f64 = w.iter().sum();
    let params: Vec<(u64, u64)> = w
        .iter()
        .map(|wi| {
            let t = ((2.0 + 18.0 * next()) * MS as f64) as u64;
            let c = ((u * wi / sum) * t as f64).max(10_000.0) as u64;
            (c.min(t), t)
        })
        .collect();
    TaskSet::from_ct(&params).unwrap()
}

/// Releases that must happen in `[0, duration)`: ceil(duration / T) per task (a handler that
/// runs late still releases, the end-of-run drain included).
fn check_release_counts(ts: &TaskSet, r: &RunResult) {
    for (i, t) in ts.iter().enumerate() {
        let expect = r.duration_ns.div_ceil(t.period) as u32;
        let got = r.per_task.released[i];
        assert_eq!(got, expect, "task {i}: released {got}, expected {expect}");
    }
}

fn check(ts: &TaskSet, r: &RunResult) {
    assert_eq!(r.dropped_records, 0);
    assert_eq!(r.accounting.error, None, "{:?}", r.accounting);
    assert_eq!(r.accounting.released, r.accounting.completed + r.accounting.pending);
    r.check_trace().unwrap_or_else(|e| panic!("{}: {e}", r.scheduler));
    check_release_counts(ts, r);
    assert!(r.accounting.completed > 0, "nothing completed");
    for j in &r.jobs {
        if let (Some(s), Some(f)) = (j.start_ns, j.finish_ns) {
            assert!(s >= j.release_ns && f >= s, "{j:?}");
        }
    }
    let s = r.summary_json();
    assert_eq!(s["jobs"].as_u64().unwrap() as usize, r.jobs.len());
    assert!(s["overheads"]["schedule"]["count"].as_u64().is_some());
}

fn one_cpu(ms: u64) -> RunConfig {
    RunConfig::new(vec![allowed_cpus()[0]], ms * MS)
}

#[test]
fn pedf_accounts_every_job_and_traces_are_well_formed() {
    let _serial = serial();
    for seed in 0..3 {
        let ts = random_set(seed, 4, 0.6);
        let mut cfg = one_cpu(150);
        cfg.exec = ExecTime::Uniform { min_fraction: 0.5 };
        cfg.wss_bytes = 16 * 1024;
        let r = run(&ts, &mech("pedf").with_partition(vec![(0..4).collect()]), &cfg).unwrap();
        check(&ts, &r);
    }
}

#[test]
fn pedf_on_two_cpus_keeps_tasks_on_their_cpu() {
    let _serial = serial();
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        return;
    }
    let ts = random_set(11, 4, 0.8);
    let cfg = RunConfig::new(cpus[..2].to_vec(), 150 * MS);
    let part = vec![vec![0, 2], vec![1, 3]];
    let r = run(&ts, &mech("pedf").with_partition(part.clone()), &cfg).unwrap();
    check(&ts, &r);
    for j in &r.jobs {
        if let Some(c) = j.cpu {
            let home = if part[0].contains(&(j.task as usize)) { cpus[0] } else { cpus[1] };
            assert_eq!(c, home, "task {} migrated under P-EDF", j.task);
        }
    }
}

#[test]
fn pfp_never_preempts_the_top_priority_task() {
    let _serial = serial();
    // Task 0 is long with a long period, task 1 short and frequent: under EDF task 1's jobs
    // preempt task 0's; under P-FP with task 0 on top they never may.
    let ts = TaskSet::from_ct(&[(5 * MS, 40 * MS), (MS, 4 * MS), (MS / 2, 10 * MS), (MS / 2, 15 * MS)]).unwrap();
    for ranks in [None, Some(vec![0, 3, 2, 1])] {
        let top = match &ranks {
            Some(r) => r.iter().position(|&x| x == 0).unwrap() as u32,
            None => (0..4).min_by_key(|&i| (ts.tasks()[i].deadline, i)).unwrap() as u32,
        };
        let mut mech = mech("pfp").with_partition(vec![(0..4).collect()]);
        if let Some(r) = &ranks {
            let list: Vec<String> = r.iter().map(|x| x.to_string()).collect();
            mech = mech.with_param("priorities", &list.join(",")).unwrap();
        }
        let r = run(&ts, &mech, &one_cpu(150)).unwrap();
        assert_eq!(r.scheduler, "pfp");
        check(&ts, &r);
        let preempt = rtsched_runtime::tracer::RecKind::JobPreempt;
        assert!(
            r.traces.iter().flatten().all(|x| !(x.kind == preempt && x.task == top)),
            "the top-priority task {top} was preempted"
        );
    }
    let e = run(
        &ts,
        &mech("pfp").with_partition(vec![(0..4).collect()]).with_param("priorities", "0").unwrap(),
        &one_cpu(10),
    );
    assert!(e.unwrap_err().to_string().contains("1 priorities for 4 tasks"));
}

#[test]
fn gsn_edf_one_cpu_accounts_every_job() {
    let _serial = serial();
    for seed in 3..6 {
        let ts = random_set(seed, 5, 0.7);
        let mut cfg = one_cpu(150);
        cfg.idle = if seed % 2 == 0 { IdleMode::Spin } else { IdleMode::Sleep };
        let r = run(&ts, &mech("gsn-edf"), &cfg).unwrap();
        check(&ts, &r);
        // The summary says which idle mode ran.
        let idle = if seed % 2 == 0 { "spin" } else { "sleep" };
        assert_eq!(r.summary_json()["idle"], idle, "seed {seed}");
    }
}

#[test]
fn gsn_edf_two_cpus_migrates_without_running_a_job_twice() {
    let _serial = serial();
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        return;
    }
    let (mut migrations, mut preempted_checks) = (0, 0);
    // Two random sets, and one built to preempt and migrate: two long jobs occupy both CPUs
    // and short, frequent jobs preempt one of them at each release; the preempted job resumes
    // on whichever CPU frees first.
    let built = TaskSet::from_ct(&[(8 * MS, 40 * MS), (8 * MS, 40 * MS), (MS, 3 * MS), (MS, 4 * MS)]).unwrap();
    for ts in [random_set(6, 6, 1.5), random_set(7, 6, 1.5), built] {
        // SCHED_FIFO where permitted: on a loaded machine, normal-priority workers can be
        // descheduled for most of the run, and then nothing preempts or migrates. (Bounded:
        // 200 ms, the watchdog and the kernel's RT throttling.)
        let mut cfg = RunConfig::new(cpus[..2].to_vec(), 200 * MS);
        let r = common::run_rt_if_permitted(&ts, &mech("gsn-edf"), &mut cfg);
        check(&ts, &r);
        // Migrations: counted by the metrics, recorded in the trace, and each a resumption on
        // the other CPU of a job that last ran on this one.
        let recorded = r.trace.records.iter().filter(|x| matches!(x.event, Event::Migration { .. })).count();
        assert_eq!(recorded as u64, r.metrics.migrations);
        for x in &r.trace.records {
            if let Event::Migration { job, from, to } = x.event {
                assert!(from != to && from < 2 && to < 2);
                assert!(r.metrics.per_job.iter().any(|j| j.task == job.task && j.job == job.job && j.migrations > 0));
            }
        }
        migrations += r.metrics.migrations;
        // EDF order: a worker preempted from job J next runs J again (a link swap put it back)
        // or a job of higher EDF priority (earlier deadline; ties by task, then job) — G-EDF
        // preempts a running job only for a higher-priority one.
        let deadline: HashMap<(u32, u32), u64> = r.jobs.iter().map(|j| ((j.task, j.job), j.deadline_ns)).collect();
        let prio = |t: u32, k: u32| (deadline[&(t, k)], t, k);
        for buf in &r.traces[..2] {
            let mut after: Option<(u32, u32)> = None;
            for x in buf {
                match x.kind {
                    RecKind::JobPreempt => after = Some((x.task, x.job)),
                    RecKind::JobStart | RecKind::JobResume => {
                        if let Some((t, k)) = after.take() {
                            assert!(
                                (x.task, x.job) == (t, k) || prio(x.task, x.job) < prio(t, k),
                                "after preempting {t}.{k} the CPU ran {}.{} of lower EDF priority",
                                x.task,
                                x.job
                            );
                            preempted_checks += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    eprintln!("preemption checks {preempted_checks}, migrations {migrations}");
    assert!(preempted_checks > 0, "no preemption happened: the EDF order was not exercised");
    assert!(migrations > 0, "G-EDF on two CPUs never migrated a job");
}

#[test]
fn gsn_edf_di_releases_on_the_dedicated_cpu() {
    let _serial = serial();
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        return;
    }
    let ts = random_set(9, 5, 0.7);
    let mut cfg = RunConfig::new(vec![cpus[0]], 150 * MS);
    cfg.dedicated_cpu = Some(cpus[1]);
    let r = run(&ts, &mech("gsn-edf-di"), &cfg).unwrap();
    check(&ts, &r);
    // Every release record is in the release thread's buffer (the last one).
    let rel = rtsched_runtime::tracer::RecKind::JobRelease;
    assert!(r.traces[0].iter().all(|x| x.kind != rel));
    assert!(r.traces[1].iter().any(|x| x.kind == rel));
    assert!(!r.overheads["ipi"].is_empty(), "a remote release must send IPIs");
}

/// G-EDF-MP with nothing that sleeps: `dsp=spin` and spinning clients (`--idle spin`, the
/// release taken without any wake-up; docs/mechanisms/gedf-mp.md "Waiting"). A light set
/// completes every job whose deadline falls within the run, every release is the scheduling
/// processor's, and every completion reaches it as a message (Δreq samples). SCHED_FIFO where
/// permitted (bounded: 200 ms, the watchdog and the kernel's RT throttling).
#[test]
fn gedf_mp_with_spinning_clients_completes_every_job() {
    let _serial = serial();
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        return;
    }
    let ts = random_set(12, 4, 0.4);
    let mut cfg = RunConfig::new(vec![cpus[0]], 200 * MS);
    cfg.dedicated_cpu = Some(cpus[1]);
    cfg.idle = IdleMode::Spin;
    let r = common::run_rt_if_permitted(&ts, &mech("gedf-mp").with_param("dsp", "spin").unwrap(), &mut cfg);
    check(&ts, &r);
    assert_eq!(r.deadline_misses(), 0, "a light set missed");
    let due = r.jobs.iter().filter(|j| j.deadline_ns <= r.duration_ns).collect::<Vec<_>>();
    assert!(due.len() > 10, "{} jobs due within the run", due.len());
    for j in due {
        assert!(j.finish_ns.is_some(), "job {}.{} (deadline {} ns) did not complete", j.task, j.job, j.deadline_ns);
    }
    let rel = RecKind::JobRelease;
    assert!(r.traces[0].iter().all(|x| x.kind != rel), "the client released a job");
    let msgs = r.overheads["request"].len() as u64;
    assert!(msgs > 0 && msgs <= r.accounting.completed, "{msgs} requests for {} completions", r.accounting.completed);
}

/// The one SCHED_FIFO run of the default suite, kept so CI covers that path: 100 ms at U = 0.4
/// on one CPU, bounded by the run's end, the watchdog and the kernel's RT throttling, so it
/// cannot starve a shared machine. Where SCHED_FIFO is not permitted it checks the message.
#[test]
fn sched_fifo_runs_are_bounded_and_account_every_job() {
    let _serial = serial();
    let ts = random_set(21, 3, 0.4);
    let mut cfg = one_cpu(100);
    cfg.rt_priority = Some(10);
    match run(&ts, &mech("gsn-edf"), &cfg) {
        Ok(r) => check(&ts, &r),
        Err(e) => assert!(e.to_string().contains("CAP_SYS_NICE"), "{e}"),
    }
}

#[test]
fn overload_runs_to_the_end_and_accounts_every_job() {
    let _serial = serial();
    // U = 1.6 on one CPU: demand exceeds supply, so jobs must miss and pile up.
    let ts = TaskSet::from_ct(&[(4 * MS, 5 * MS), (3 * MS, 8 * MS), (2 * MS, 10 * MS)]).unwrap();
    let mut cases =
        vec![(mech("gsn-edf"), one_cpu(200)), (mech("pedf").with_partition(vec![vec![0, 1, 2]]), one_cpu(200))];
    if allowed_cpus().len() >= 2 {
        let mut d = one_cpu(200);
        d.dedicated_cpu = Some(allowed_cpus()[1]);
        cases.push((mech("gsn-edf-di"), d));
    }
    for (mech, cfg) in cases {
        let r = run(&ts, &mech, &cfg).unwrap();
        check(&ts, &r);
        assert!(r.deadline_misses() > 0, "{}: an overloaded set must miss", r.scheduler);
        assert!(r.accounting.pending > 0);
        // Jobs of one task never overtake each other (the next waits for the tardy one).
        for t in 0..3u32 {
            let fin: Vec<u64> = r.jobs.iter().filter(|j| j.task == t).filter_map(|j| j.finish_ns).collect();
            assert!(fin.windows(2).all(|w| w[0] <= w[1]));
        }
    }
}

/// Time zero fixed before the threads could be ready (no start delay at all): the engine
/// abandons that attempt before anything runs and retries with a longer delay, instead of
/// starting workers after their first releases (a run in which nothing executed was seen
/// when a busy host started the threads after a 30 ms delay had passed).
#[test]
fn threads_not_ready_by_time_zero_retry_with_a_longer_start_delay() {
    let _serial = serial();
    let ts = random_set(3, 3, 0.5);
    for name in ["gsn-edf", "gsn-edf-di"] {
        let mut cfg = one_cpu(100);
        if name == "gsn-edf-di" {
            let cpus = allowed_cpus();
            if cpus.len() < 2 {
                continue;
            }
            cfg.dedicated_cpu = Some(cpus[1]);
        }
        cfg.start_delay_ns = 0;
        let r = run(&ts, &mech(name), &cfg).unwrap();
        check(&ts, &r);
        assert!(r.traces[0].iter().any(|x| x.kind == RecKind::JobStart), "{name}: the worker ran no job");
    }
}

#[test]
fn a_tiny_trace_buffer_counts_drops() {
    let _serial = serial();
    let ts = random_set(1, 3, 0.5);
    let mut cfg = one_cpu(50);
    // Room for exactly the run's jobs at the bound's 3 records each: admitted, and gsn-edf
    // writes more per job (release and scheduler spans), so records are dropped.
    let jobs: u64 = ts.iter().map(|t| (50 * MS).div_ceil(t.period)).sum();
    cfg.trace_capacity = (jobs * rtsched_runtime::config::MIN_RECORDS_PER_JOB) as usize;
    let r = run(&ts, &mech("gsn-edf"), &cfg).unwrap();
    assert!(r.dropped_records > 0);
    let e = r.check_trace().unwrap_err();
    assert!(matches!(e, rtsched_runtime::RunError::Trace(_)) && e.to_string().contains("dropped"), "{e}");
    assert_eq!(r.summary_json()["dropped_records"].as_u64(), Some(r.dropped_records));
    // One record less and the run is refused before it starts, with the numbers.
    cfg.trace_capacity -= 1;
    let e = run(&ts, &mech("gsn-edf"), &cfg).unwrap_err().to_string();
    assert!(e.contains(&format!("3 tasks would release {jobs} jobs in 50 ms")), "{e}");
    assert!(e.contains("more than the run's trace can hold") && e.contains("shorter duration"), "{e}");
}

#[test]
fn bad_configurations_give_clear_errors() {
    let _serial = serial();
    let ts = random_set(2, 3, 0.5);
    let c0 = allowed_cpus()[0];
    let err = |m: &Mechanism, cfg: &RunConfig| run(&ts, m, cfg).unwrap_err().to_string();
    assert!(err(&mech("gsn-edf"), &RunConfig::new(vec![], MS)).contains("empty"));
    assert!(err(&mech("gsn-edf"), &RunConfig::new(vec![99_999], MS)).contains("CPU 99999"));
    let many = vec![c0; allowed_cpus().len() + 1];
    assert!(err(&mech("gsn-edf"), &RunConfig::new(many, MS)).contains("meaningless"));
    assert!(err(&mech("gsn-edf"), &RunConfig::new(vec![c0], 0)).contains("duration"));
    assert!(err(&mech("gsn-edf-di"), &one_cpu(10)).contains("dedicated"));
    let mut d = one_cpu(10);
    d.dedicated_cpu = Some(c0);
    assert!(err(&mech("gsn-edf"), &d).contains("only gsn-edf-di"));
    let p = |part: Vec<Vec<usize>>| err(&mech("pedf").with_partition(part), &one_cpu(10));
    assert!(p(vec![vec![0, 1]]).contains("task 2 is assigned to no CPU"));
    assert!(p(vec![vec![0, 1, 2, 2]]).contains("task 2 is assigned to CPUs 0 and 0"));
    assert!(p(vec![vec![0, 1, 7]]).contains("names task 7"));
    assert!(p(vec![vec![0], vec![1, 2]]).contains("partition has 2 CPUs"));
    let mut f = one_cpu(10);
    f.rt_priority = Some(0);
    assert!(err(&mech("gsn-edf"), &f).contains("rt_priority"));
    assert!(Mechanism::parse("gedf", None).unwrap_err().to_string().contains("known: pedf, pfp"));
    assert!(Mechanism::parse("pedf", None).unwrap_err().to_string().contains("needs a partition"));
    assert!(Mechanism::parse("gsn-edf", Some(vec![])).unwrap_err().to_string().contains("no partition"));
    assert_eq!(Mechanism::parse("gsn-edf-di", None).unwrap(), mech("gsn-edf-di"));
    assert_ne!(mech("pfp"), mech("pfp").with_param("priorities", "rm").unwrap());
    assert!(mech("pfp")
        .with_param("order", "rm")
        .unwrap_err()
        .to_string()
        .contains("pfp: parameter order: unknown to pfp (known: priorities)"));
    let mut u = one_cpu(10);
    u.exec = ExecTime::Uniform { min_fraction: -1.0 };
    assert!(err(&mech("gsn-edf"), &u).contains("min_fraction"));
}

#[test]
fn kernel_sd_runs_the_same_workload() {
    let _serial = serial();
    let ts = random_set(4, 3, 0.3);
    let cfg = RunConfig::new(allowed_cpus(), 200 * MS);
    match run(&ts, &mech("kernel-sd"), &cfg) {
        Ok(r) => {
            check(&ts, &r);
            // The kernel idles its CPUs: no idle mode of ours ran.
            assert!(r.summary_json()["idle"].is_null());
        }
        // Without CAP_SYS_NICE the error must say so (this machine runs the tests as root).
        Err(e) => assert!(e.to_string().contains("CAP_SYS_NICE"), "{e}"),
    }
}

#[test]
fn kernel_sd_overload_runs_to_the_end_and_accounts_every_job() {
    let _serial = serial();
    // One task with C = T: the reservation runtime is capped at D, so every job overruns
    // its budget (throttled) and the task falls behind; the run must still end and count
    // every release.
    let ts = TaskSet::from_ct(&[(10 * MS, 10 * MS)]).unwrap();
    let cfg = RunConfig::new(allowed_cpus(), 200 * MS);
    match run(&ts, &mech("kernel-sd"), &cfg) {
        Ok(r) => {
            check(&ts, &r);
            assert!(r.deadline_misses() > 0);
        }
        Err(e) => assert!(e.to_string().contains("CAP_SYS_NICE"), "{e}"),
    }
}

#[test]
fn kernel_sd_admission_errors_name_the_limit() {
    let _serial = serial();
    let m = allowed_cpus().len() as u64;
    // m + 1 tasks of utilization 0.9 exceed m × 0.95.
    let ts = TaskSet::from_ct(&vec![(9 * MS, 10 * MS); m as usize + 1]).unwrap();
    let cfg = RunConfig::new(allowed_cpus(), 50 * MS);
    let e = run(&ts, &mech("kernel-sd"), &cfg).unwrap_err().to_string();
    assert!(e.contains("sched_rt_runtime_us") || e.contains("CAP_SYS_NICE"), "{e}");
    // Reservations of 0.924 per CPU: under m × 0.95 but over m × 0.90, which is what Linux
    // ≥ 6.12 leaves after its fair-server reservations (0.05 per CPU). There the refusal must
    // say so; an older kernel (or a tuned fair server) admits the set.
    let between = TaskSet::from_ct(&vec![(8_800_000, 10 * MS); m as usize]).unwrap();
    match run(&between, &mech("kernel-sd"), &cfg) {
        Ok(r) => assert_eq!(r.accounting.error, None),
        Err(e) => {
            let e = e.to_string();
            if e.contains("EBUSY") && rtsched_runtime::kernel_sd::fair_server_bandwidth_per_cpu().is_some() {
                assert!(e.contains("fair-server") && e.contains("leaving"), "{e}");
            } else {
                assert!(e.contains("EBUSY") || e.contains("CAP_SYS_NICE"), "{e}");
            }
        }
    }
    // A period above the kernel's maximum (4.19 s by default) is named with the bound.
    let long = TaskSet::from_ct(&[(MS, 10_000 * MS)]).unwrap();
    let e = run(&long, &mech("kernel-sd"), &cfg).unwrap_err().to_string();
    assert!(e.contains("sched_deadline_period_min_us / _max_us") || e.contains("CAP_SYS_NICE"), "{e}");
    let bad = TaskSet::from_cdt(&[(MS, 20 * MS, 10 * MS)]).unwrap();
    let e = run(&bad, &mech("kernel-sd"), &cfg).unwrap_err().to_string();
    assert!(e.contains("deadline ≤ period"), "{e}");
    let e = run(&ts, &mech("kernel-sd"), &one_cpu(10)).unwrap_err().to_string();
    if m > 1 {
        assert!(e.contains("root domain"), "{e}");
    }
}

/// Stops a 30 s run after `after_ms` from another thread (as Ctrl-C does in the CLI).
fn stopped_run(ts: &TaskSet, mech: &Mechanism, mut cfg: RunConfig, after_ms: u64) -> RunResult {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    cfg.stop = Some(flag.clone());
    let planned = cfg.duration_ns;
    let f = flag.clone();
    let h = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(after_ms));
        f.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let r = run(ts, mech, &cfg).unwrap();
    h.join().unwrap();
    assert!(r.interrupted, "{}: not marked interrupted", r.scheduler);
    assert!(r.duration_ns < planned, "{}: ran its whole duration", r.scheduler);
    assert_eq!(r.summary_json()["interrupted"], true);
    assert_eq!(r.summary_json()["duration_ns"], r.duration_ns);
    r
}

#[test]
fn a_stop_request_ends_the_run_early_with_consistent_results() {
    let _serial = serial();
    let ts = random_set(31, 4, 0.7);
    for mech in [mech("gsn-edf"), mech("pedf").with_partition(vec![(0..4).collect()])] {
        let r = stopped_run(&ts, &mech, one_cpu(30_000), 300);
        // Every job due before the (shortened) end is released and accounted for.
        check(&ts, &r);
    }
    if allowed_cpus().len() >= 2 {
        let mut cfg = one_cpu(30_000);
        cfg.dedicated_cpu = Some(allowed_cpus()[1]);
        let r = stopped_run(&ts, &mech("gsn-edf-di"), cfg, 300);
        check(&ts, &r);
    }
    // A stop before time zero: nothing ran, the synchronous releases are all pending.
    let r = stopped_run(&ts, &mech("gsn-edf"), one_cpu(30_000), 0);
    assert_eq!(r.accounting.error, None);
    assert_eq!(r.accounting.released, r.accounting.completed + r.accounting.pending);
    r.check_trace().unwrap();
    check_release_counts(&ts, &r);
    let unset = run(&ts, &mech("gsn-edf"), &{
        let mut c = one_cpu(100);
        c.stop = Some(Default::default());
        c
    })
    .unwrap();
    assert!(!unset.interrupted && unset.duration_ns == 100 * MS);
}

#[test]
fn a_stop_request_wakes_kernel_sd_threads_sleeping_towards_a_long_period() {
    let _serial = serial();
    // Periods of 4 s (the kernel's default maximum is 4.19 s): without an interruptible
    // sleep the run would take that long to stop.
    let ts = TaskSet::from_ct(&[(MS, 4_000 * MS), (2 * MS, 4_000 * MS), (MS, 20 * MS)]).unwrap();
    let cfg = RunConfig::new(allowed_cpus(), 30_000 * MS);
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut c2 = cfg.clone();
    c2.stop = Some(flag.clone());
    let f = flag.clone();
    let h = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        f.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let res = run(&ts, &mech("kernel-sd"), &c2);
    h.join().unwrap();
    match res {
        Ok(r) => {
            assert!(r.interrupted && r.duration_ns < cfg.duration_ns);
            check(&ts, &r);
        }
        Err(e) => assert!(e.to_string().contains("CAP_SYS_NICE"), "{e}"),
    }
}
