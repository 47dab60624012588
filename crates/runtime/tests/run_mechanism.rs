//! RUN on real threads (`mechanism/run.rs`) against the policy's schedule, the schedule
//! monitor: RUN's invariant is not a priority order (the priority-inversion monitor cannot
//! check it), so the run's converted trace is swept beside `rtsched_policy::run::Run` stepped
//! over the same time axis. At every instant the set of tasks the trace shows running must
//! equal the set of tasks the policy places on a CPU that have a pending job (released by
//! their due time, predecessor complete, per the same trace). The deviation intervals — each
//! opens at a policy event or a record of the trace — are measured against the run's own
//! tracking delay (`rtsched_trace::monitor::tracking_bound_ns` over the mechanism's tracking
//! terms) plus the largest host interference the tracer saw: an interval longer than that is a
//! lost or wrong decision. No timing assertion beyond that bound, which is taken from the same
//! run's trace; the monitor's broken twin (a trace with one task's executions removed) must be
//! caught.

mod common;

use rtsched_model::{TaskSet, Time};
use rtsched_policy::run::Run;
use rtsched_runtime::mechanism::run::reduction;
use rtsched_runtime::{Mechanism, RunConfig, RunResult};
use rtsched_trace::monitor::tracking_bound_ns;
use rtsched_trace::{Event, Trace};

const MS: u64 = 1_000_000;

/// Deviation of a trace from the policy's schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Deviation {
    total_ns: Time,
    intervals: u64,
    max_interval_ns: Time,
    beyond: u64,
}

/// The schedule monitor (module docs) over `[0, horizon)` with the tracking bound `bound`.
fn deviation(trace: &Trace, ts: &TaskSet, m: usize, bound: Time) -> Deviation {
    let red = reduction(ts, m).unwrap();
    let l = red.scale();
    let mut run = Run::new(red, &[], true).unwrap();
    let n = ts.len();
    let mut recs = trace.records.clone();
    recs.sort_by_key(|r| r.time);
    let horizon = trace.meta.horizon;
    let (mut released, mut completed) = (vec![0u32; n], vec![0u32; n]);
    let mut running: Vec<Option<u32>> = vec![None; m];
    let mut dev = Deviation { total_ns: 0, intervals: 0, max_interval_ns: 0, beyond: 0 };
    let close = |dev: &mut Deviation, a: Time, b: Time| {
        let len = b - a;
        dev.total_ns += len;
        dev.intervals += 1;
        dev.max_interval_ns = dev.max_interval_ns.max(len);
        dev.beyond += u64::from(len > bound);
    };
    let (mut i, mut t, mut open): (usize, Time, Option<Time>) = (0, 0, None);
    while t < horizon {
        while i < recs.len() && recs[i].time <= t {
            match recs[i].event {
                Event::Release { job, .. } => released[job.task as usize] += 1,
                Event::Run { cpu, job } => running[cpu as usize] = Some(job.task),
                Event::Preempt { cpu, .. } | Event::Idle { cpu } => running[cpu as usize] = None,
                Event::Complete { cpu, job } => {
                    running[cpu as usize] = None;
                    completed[job.task as usize] += 1;
                }
                _ => {}
            }
            i += 1;
        }
        while run.next_event() <= t as u128 * l {
            let e = run.next_event();
            run.advance(e).unwrap_or_else(|v| panic!("{v}"));
        }
        let mut want: Vec<u32> =
            (0..m).filter_map(|c| run.task_on(c)).filter(|&k| released[k as usize] > completed[k as usize]).collect();
        let mut have: Vec<u32> = running.iter().flatten().copied().collect();
        want.sort_unstable();
        have.sort_unstable();
        match (want != have, open) {
            (true, None) => open = Some(t),
            (false, Some(a)) => {
                close(&mut dev, a, t);
                open = None;
            }
            _ => {}
        }
        let next_rec = recs.get(i).map_or(Time::MAX, |r| r.time);
        let next_ev = u64::try_from(run.next_event().div_ceil(l)).unwrap_or(Time::MAX);
        t = next_rec.min(next_ev).min(horizon);
    }
    if let Some(a) = open {
        close(&mut dev, a, horizon);
    }
    dev
}

/// The bound: the run's tracking delay plus the largest host interference it saw.
fn bound(r: &RunResult, mech: &Mechanism) -> Time {
    let mut terms: Vec<&str> = mech.entry().all_terms().iter().filter(|t| t.tracking).map(|t| t.name).collect();
    terms.push("host_interference");
    tracking_bound_ns(&r.trace, &terms)
}

/// Three tasks of u = 0.6 on two CPUs (no partition exists: a reduction level), and a light one.
fn set() -> TaskSet {
    TaskSet::from_ct(&[(6 * MS, 10 * MS), (12 * MS, 20 * MS), (6 * MS, 10 * MS), (2 * MS, 20 * MS)]).unwrap()
}

#[test]
fn the_run_follows_the_policys_schedule_and_the_monitor_can_fail() {
    let Some(cpus) = common::two_cpus() else { return };
    let ts = set();
    let mech = Mechanism::named("run").unwrap();
    let mut cfg = RunConfig::new(cpus, 400 * MS);
    let r = common::run_rt_if_permitted(&ts, &mech, &mut cfg);
    assert_eq!(r.accounting.error, None);
    r.check_trace().unwrap();
    assert!(r.metrics.jobs > 50, "{} jobs", r.metrics.jobs);
    let b = bound(&r, &mech);
    let good = deviation(&r.trace, &ts, 2, b);
    eprintln!("run: {} jobs, deviation {good:?}, bound {b} ns", r.metrics.jobs);
    assert_eq!(good.beyond, 0, "a deviation from RUN's schedule outlasted the run's tracking delay: {good:?}");
    // The broken twin: task 0's executions removed from the trace (its CPU shown idle while the
    // policy runs it, 6 ms per period) — caught, whatever the bound of this run.
    let mut bad = r.trace.clone();
    bad.records.retain(|x| !matches!(x.event, Event::Run { job, .. } if job.task == 0));
    let caught = deviation(&bad, &ts, 2, b);
    assert!(caught.total_ns >= good.total_ns + 50 * MS, "{caught:?} vs {good:?}");
}

#[test]
fn the_monitor_sees_no_deviation_in_the_policys_own_schedule() {
    // A trace written from the policy itself (every task pending at all times, which a job of
    // WCET = its server's budget keeps true until its last instant) deviates nowhere.
    let ts = set();
    let red = reduction(&ts, 2).unwrap();
    let l = red.scale();
    let mut run = Run::new(red, &[], true).unwrap();
    let horizon = 40 * MS;
    let mut recs = Vec::new();
    for (k, t) in ts.iter().enumerate() {
        let mut at = 0;
        let mut j = 0;
        while at < horizon {
            let job = rtsched_trace::JobId { task: k as u32, job: j };
            recs.push(rtsched_trace::Record::new(at, Event::Release { job, deadline: at + t.period }));
            at += t.period;
            j += 1;
        }
    }
    let mut on: Vec<Option<u32>> = vec![None; 2];
    let mut now = 0u128;
    loop {
        let tn = (now / l) as Time;
        for (c, on_c) in on.iter_mut().enumerate() {
            let want = run.task_on(c);
            if want != *on_c {
                let job = |k: u32| rtsched_trace::JobId { task: k, job: (tn / ts[k as usize].period) as u32 };
                if let Some(k) = *on_c {
                    recs.push(rtsched_trace::Record::new(tn, Event::Preempt { cpu: c as u32, job: job(k) }));
                }
                if let Some(k) = want {
                    recs.push(rtsched_trace::Record::new(tn, Event::Run { cpu: c as u32, job: job(k) }));
                }
                *on_c = want;
            }
        }
        let e = run.next_event();
        if e >= horizon as u128 * l {
            break;
        }
        assert_eq!(e % l, 0, "this set's events fall on whole ns");
        run.advance(e).unwrap();
        now = e;
    }
    let tr = Trace { meta: rtsched_trace::TraceMeta::new(&ts, 2, horizon), records: recs };
    let d = deviation(&tr, &ts, 2, 0);
    assert_eq!(d.intervals, 0, "{d:?}");
}

/// `rtsched run --inflate`'s path on real threads, light: RUN, QPS-G and QPS-C with the servers'
/// budgets inflated by constant overheads (`rtsched_analysis::overheads::inflate_optimal`, the
/// rule `analyze --overheads` judges with) run to the end with a consistent accounting and a
/// trace that passes the trace oracles. No timing assertion (the machine is shared); the misses
/// are printed.
#[test]
fn runs_with_inflated_budgets_pass_the_trace_oracles() {
    use rtsched_analysis::overheads::{inflate_optimal, mechanism, Params};
    use rtsched_model::overheads::Overheads;
    let Some(cpus) = common::two_cpus() else { return };
    // U = 1.2 on two CPUs, integral milliseconds; no partition would need a major set: τ0, τ1
    // of rate 0.5, τ2 of rate 0.2.
    let ts = TaskSet::from_ct(&[(5 * MS, 10 * MS), (10 * MS, 20 * MS), (4 * MS, 20 * MS)]).unwrap();
    let v = Overheads {
        release_ns: 20_000,
        release_event_ns: 50_000,
        schedule_ns: 20_000,
        context_switch_ns: 10_000,
        ipi_ns: 20_000,
        budget_timer_ns: 20_000,
        ..Overheads::ZERO
    };
    for name in ["run", "qps-g", "qps-c"] {
        let (j, budgets) = inflate_optimal(&ts, 2, mechanism(name).unwrap(), &v, &Params::default()).unwrap();
        let budgets = budgets.unwrap_or_else(|| panic!("{name}: {:?}", j.reason));
        let text = budgets.iter().map(|t| t.wcet.to_string()).collect::<Vec<_>>().join(",");
        assert!(budgets.iter().zip(ts.iter()).all(|(b, t)| b.wcet > t.wcet), "{name}: {text}");
        let mech = Mechanism::named(name).unwrap().with_param("budgets", &text).unwrap();
        let mut cfg = RunConfig::new(cpus.clone(), 200 * MS);
        let r = common::run_rt_if_permitted(&ts, &mech, &mut cfg);
        assert_eq!(r.accounting.error, None, "{name}");
        r.check_trace().unwrap();
        assert!(r.metrics.jobs > 10, "{name}: {} jobs", r.metrics.jobs);
        eprintln!("{name} with budgets {text}: {} jobs, {} misses", r.metrics.jobs, r.metrics.deadline_misses);
    }
    // A budget below a WCET is refused when the run is built, in one line.
    let mech = Mechanism::named("run").unwrap().with_param("budgets", "1,10000000,4000000").unwrap();
    let e = rtsched_runtime::run(&ts, &mech, &RunConfig::new(cpus, 50 * MS)).err().unwrap().to_string();
    assert!(e.contains("budgets") && e.contains("task 0") && e.contains("below its WCET") && !e.contains('\n'), "{e}");
}
