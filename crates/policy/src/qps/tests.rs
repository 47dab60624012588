//! QPS's unit tests: hand-worked examples, random sets under the strict checks, the broken twin.

use super::*;
use crate::budget::testing::{random_set, set, Lcg};
use rtsched_model::exact::{one, ratio, zero};
use rtsched_model::{TaskSet, Time};

/// A small driver: jobs execute `exec[i]` ns (≤ WCET; empty: the WCET), released
/// periodically from `offsets`; returns `(tick, task per CPU)` at every event and the CPUs
/// each task ran on, or the first violation. Asserts that no task runs on two CPUs and that
/// only pending tasks run.
#[allow(clippy::type_complexity)]
fn drive(
    q: &mut Qps,
    ts: &TaskSet,
    offsets: &[Time],
    exec: &[Time],
    until: Time,
) -> Result<(Vec<(u128, Vec<Option<u32>>)>, Vec<Vec<u32>>), QpsViolation> {
    drive_with(q, ts, offsets, exec, until, &mut |_, _| 0)
}

/// [`drive`] with sporadic releases: job `k` of task `i` comes `late(i, k)` ns after its
/// earliest release instant (its previous release plus the period). A job still pending at
/// its deadline is a violation (named "missed its deadline").
#[allow(clippy::type_complexity)]
fn drive_with(
    q: &mut Qps,
    ts: &TaskSet,
    offsets: &[Time],
    exec: &[Time],
    until: Time,
    late: &mut dyn FnMut(usize, u32) -> Time,
) -> Result<(Vec<(u128, Vec<Option<u32>>)>, Vec<Vec<u32>>), QpsViolation> {
    let (l, m, n) = (q.quasi().scale(), q.quasi().m() as usize, ts.len());
    let exec: Vec<u128> = (0..n).map(|i| *exec.get(i).unwrap_or(&ts[i].wcet) as u128 * l).collect();
    let mut next: Vec<Time> = if offsets.is_empty() { vec![0; n] } else { offsets.to_vec() };
    let mut due: Vec<Time> = vec![Time::MAX; n];
    let mut jobs = vec![0u32; n];
    let mut rem = vec![0u128; n];
    let mut pend = vec![false; n];
    let mut cpus: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut out = Vec::new();
    let end = until as u128 * l;
    let mut now = 0u128;
    loop {
        for i in 0..n {
            if pend[i] && rem[i] == 0 {
                pend[i] = false;
                q.complete(i as u32)?;
            }
        }
        if now.is_multiple_of(l) {
            for i in 0..n {
                if next[i] as u128 * l == now {
                    q.release(i as u32)?;
                    if pend[i] {
                        return Err(QpsViolation(format!("task {i} missed its deadline {} ns", due[i])));
                    }
                    pend[i] = exec[i] > 0;
                    rem[i] = exec[i];
                    due[i] = next[i] + ts[i].period;
                    jobs[i] += 1;
                    next[i] = due[i] + late(i, jobs[i]);
                    if !pend[i] {
                        q.complete(i as u32)?;
                    }
                }
                if pend[i] && due[i] as u128 * l <= now {
                    return Err(QpsViolation(format!("task {i} missed its deadline {} ns", due[i])));
                }
            }
        }
        q.schedule()?;
        let on: Vec<Option<u32>> = (0..m).map(|c| q.task_on(c)).collect();
        let mut seen: Vec<u32> = on.iter().flatten().copied().collect();
        let k = seen.len();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), k, "a task on two CPUs at {now}: {on:?}");
        for (c, t) in on.iter().enumerate() {
            if let Some(i) = *t {
                assert!(pend[i as usize], "task {i} runs without a pending job at {now}");
                if cpus[i as usize].last() != Some(&(c as u32)) {
                    cpus[i as usize].push(c as u32);
                }
            }
        }
        out.push((now, on.clone()));
        let mut t = q.next_event();
        for i in on.iter().flatten() {
            t = t.min(now + rem[*i as usize]);
        }
        for &r in next.iter().chain(due.iter().filter(|&&d| d != Time::MAX)) {
            if r as u128 * l > now {
                t = t.min(r as u128 * l);
            }
        }
        if t > end {
            return Ok((out, cpus));
        }
        assert!(t > now, "no progress at {now}");
        for i in on.iter().flatten() {
            rem[*i as usize] -= t - now;
        }
        q.advance(t)?;
        now = t;
    }
}

#[test]
fn three_tasks_of_rate_two_thirds_by_hand() {
    // Our example, worked by hand from the definitions (the paper's own could not be read):
    // three tasks needing 2 of every 3 ns on two processors. No partition exists; next fit
    // with overflow makes set 0 = {τ0 | τ1} major (R = 4/3, x = 1/3, P^a = {τ0},
    // P^b = {τ1}) and set 1 = {slave of set 0, τ2} minor (R = 1).
    let ts = set(&[(2, 3), (2, 3), (2, 3)]);
    let qp = QuasiPartition::build(&ts, 2).unwrap();
    assert!(!qp.partitioned);
    assert_eq!(qp.sets.len(), 2);
    assert_eq!(qp.sets[0].items, vec![Item::Task(0), Item::Task(1)]);
    assert_eq!(qp.sets[0].rate, ratio(4, 3));
    let mj = qp.sets[0].major.clone().unwrap();
    assert_eq!((mj.a, mj.b, mj.excess, mj.host), (vec![0], vec![1], ratio(1, 3), 1));
    assert_eq!(qp.sets[1].items, vec![Item::Slave(0), Item::Task(2)]);
    assert_eq!((qp.sets[1].rate.clone(), qp.sets[1].major.is_none()), (one(), true));
    assert_eq!(qp.scale(), 3); // ticks of 1/3 ns
    assert_eq!(qp.set_of(1), (0, true));
    assert_eq!(qp.set_of(0), (0, false));
    // Window [0, 3): A = 4/3 > 1, QPS mode: M = 1 ns, σ^a = σ^b = 2 − 1 = 1 ns. Set 1 runs
    // EDF over τ2 and the slave's job (1 ns, due 3; ties: tasks first): τ2 on CPU 1 in
    // [0, 2), the slave in [2, 3). CPU 0: σ^a (τ0) in [0, 1), σ^b (τ1) in [1, 2); in [2, 3)
    // the master runs τ0 on CPU 0 and the slave τ1 on CPU 1 (τ1 migrates once).
    let mut q = Qps::new(qp, &[], true).unwrap();
    let (tr, cpus) = drive(&mut q, &ts, &[], &[], 3).unwrap();
    let s = |a: Option<u32>, b: Option<u32>| vec![a, b];
    let want =
        vec![(0, s(Some(0), Some(2))), (3, s(Some(1), Some(2))), (6, s(Some(0), Some(1))), (9, s(Some(0), Some(2)))];
    assert_eq!(tr, want);
    assert_eq!(q.mode(0), Mode::Qps);
    assert_eq!(cpus[1], vec![0, 1]);
    assert_eq!(q.activations(), 2); // the windows [0, 3) and [3, 6)
    assert_eq!(q.switches(), 0);
}

#[test]
fn switch_rate_bounds_by_hand() {
    // Two switches per activation (Brandenburg & Gül, RTSS 2016, §VI). The 3 × 2/3 example
    // with T = 3 ns: set 0 has boundaries at τ0's and τ1's releases (B = 2/3 per ns); its
    // CPU: τ0 and τ1 (2 · 2/3) plus σ^a, σ^b and the master (3 · 2 · 2/3); CPU 1: τ2
    // (2/3) plus the slave (2 · 2/3). Per second: × 10^9.
    let ts = set(&[(2, 3), (2, 3), (2, 3)]);
    let b = QuasiPartition::structure(&ts, 2).unwrap().switch_rate_bound();
    assert!((b[0] - 16e9 / 3.0).abs() < 1.0 && (b[1] - 2e9).abs() < 1.0, "{b:?}");
    // A set worst fit places: partitioning's bound, 2/T per task on its CPU.
    let ts = set(&[(1, 2), (2, 4), (3, 6), (1, 4)]);
    let b = QuasiPartition::structure(&ts, 2).unwrap().switch_rate_bound();
    assert!((b[0] - (1e9 + 2e9 / 6.0)).abs() < 1.0 && (b[1] - 1e9).abs() < 1.0, "{b:?}");
    // The structure alone has no tick grid: Qps refuses it.
    assert!(Qps::new(QuasiPartition::structure(&ts, 2).unwrap(), &[], true).is_err());
}

#[test]
fn early_completions_switch_to_partitioned_mode() {
    // The same set with τ1 released first at 3 ns: in the window [0, 3) set 0's pending
    // rate is A = 2/3 (τ0 alone), so it is in partitioned mode (EDF on CPU 0) and its slave
    // asks nothing of set 1; from 3 ns A = 4/3 and its servers are activated.
    let ts = set(&[(2, 3), (2, 3), (2, 3)]);
    let mut q = Qps::new(QuasiPartition::build(&ts, 2).unwrap(), &[0, 3, 0], true).unwrap();
    let (tr, _) = drive(&mut q, &ts, &[0, 3, 0], &[], 6).unwrap();
    // [0, 3): set 0 partitioned (τ0 alone, EDF on CPU 0); the slave asks nothing, so set 1
    // runs τ2 then idles.
    // Both jobs run their 2 ns and complete at 2 ns; CPUs idle until 3 ns; then as in the
    // synchronous case.
    let s = |a: Option<u32>, b: Option<u32>| vec![a, b];
    assert_eq!(tr[..3], [(0, s(Some(0), Some(2))), (6, s(None, None)), (9, s(Some(0), Some(2)))]);
    assert_eq!(q.switches(), 1);
    assert_eq!(q.mode(0), Mode::Qps);
    assert_eq!(q.activations(), 2); // the windows [3, 6) and [6, 9)
}

#[test]
fn a_set_worst_fit_places_is_partitioned_edf() {
    let ts = set(&[(1, 2), (2, 4), (3, 6), (1, 4)]);
    let qp = QuasiPartition::build(&ts, 2).unwrap();
    assert!(qp.partitioned);
    assert_eq!(qp.majors(), 0);
    // Worst fit, decreasing rate (ties: lower index, lower CPU): τ0 → CPU 0, τ1 → CPU 1,
    // τ2 → CPU 0 (both at 1/2), τ3 → CPU 1.
    assert_eq!(qp.partition(), vec![vec![0, 2], vec![1, 3]]);
    let mut q = Qps::new(qp, &[], true).unwrap();
    let (_, cpus) = drive(&mut q, &ts, &[], &[], 12).unwrap();
    for c in &cpus {
        assert!(c.len() <= 1, "{cpus:?}");
    }
    assert_eq!(q.activations(), 0);
}

#[test]
fn refusals_name_the_task_and_field() {
    let ts = TaskSet::from_cdt(&[(1, 4, 4), (1, 3, 5)]).unwrap();
    let e = QuasiPartition::build(&ts, 2).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("deadline"));
    assert!(e.to_string().contains("task 1") && e.to_string().contains("implicit-deadline"), "{e}");
    let e = QuasiPartition::build(&set(&[(2, 3), (2, 3), (3, 4)]), 2).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("m"));
    assert!(e.to_string().contains("exceeds m = 2"), "{e}");
    assert!(QuasiPartition::build(&set(&[(1, 2)]), 0).is_err());
    // Periods whose rates' common denominator passes 2^64 in major sets are refused; the
    // same periods are fine when worst fit places the set (no budgets).
    let primes = [1_000_003u64, 1_000_033, 1_000_037, 1_000_039];
    let big: Vec<(Time, Time)> = primes.iter().map(|&p| (p / 2 + 1, p)).collect();
    let e = QuasiPartition::build(&set(&big), 3).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("period"));
    assert!(e.to_string().contains("major"), "{e}");
    let small: Vec<(Time, Time)> = primes.iter().map(|&p| (1, p)).collect();
    assert_eq!(QuasiPartition::build(&set(&small), 2).unwrap().scale(), 1);
    // U = m exactly is accepted.
    assert!(QuasiPartition::build(&set(&[(2, 3), (2, 3), (2, 3)]), 2).is_ok());
    // A release before its task's next release instant is refused; a later one (sporadic) is
    // accepted, in a minor set as in a major one.
    let ts = set(&[(1, 2)]);
    let mut q = Qps::new(QuasiPartition::build(&ts, 1).unwrap(), &[], true).unwrap();
    q.release(0).unwrap();
    q.schedule().unwrap();
    q.advance(1).unwrap();
    q.complete(0).unwrap();
    assert!(q.release(0).unwrap_err().to_string().contains("before its next release instant 2 ns"));
    q.advance(3).unwrap();
    q.release(0).unwrap();
    let ts = set(&[(2, 3), (2, 3), (2, 3)]);
    for late in [(1, 1), (2, 1)] {
        let mut q = Qps::new(QuasiPartition::build(&ts, 2).unwrap(), &[], true).unwrap();
        drive_with(&mut q, &ts, &[], &[], 12, &mut |i, k| if (i, k) == late { 1 } else { 0 }).unwrap();
    }
}

#[test]
fn quasi_partitions_and_strict_schedules_on_random_sets() {
    let mut g = Lcg(11);
    let mut majors = 0;
    for case in 0..300 {
        let m = 2 + g.below(6) as u32;
        let tasks = random_set(&mut g, m, case % 3 == 0);
        let ts = set(&tasks);
        let qp = QuasiPartition::build(&ts, m).unwrap();
        assert!(qp.sets.len() <= m as usize);
        // Rates add up: the sets hold every task once, each major set's subsets are ≤ 1
        // and its excess is R − 1 ∈ (0, 1), hosted by a later set.
        let u = ts.iter().fold(zero(), |a, t| a + t.utilization());
        let excess = qp.sets.iter().filter_map(|s| s.major.as_ref()).fold(zero(), |a, mj| a + mj.excess.clone());
        assert_eq!(qp.sets.iter().fold(zero(), |a, s| a + s.rate.clone()), u + excess);
        for (k, s) in qp.sets.iter().enumerate() {
            assert!(s.rate > zero() || qp.partitioned);
            match &s.major {
                None => assert!(s.rate <= one()),
                Some(mj) => {
                    majors += 1;
                    assert!(s.rate > one() && mj.excess > zero() && mj.excess < one());
                    assert_eq!(mj.excess, s.rate.clone() - one());
                    assert!(mj.host > k && qp.sets[mj.host].items.contains(&Item::Slave(k)));
                }
            }
        }
        let h = ts.hyperperiod(1 << 40).unwrap();
        let offsets: Vec<Time> = if case % 2 == 0 { vec![] } else { (0..ts.len()).map(|_| g.below(6)).collect() };
        let exec: Vec<Time> = if case % 4 == 1 { ts.iter().map(|t| 1 + g.below(t.wcet)).collect() } else { vec![] };
        let mut q = Qps::new(qp.clone(), &offsets, true).unwrap();
        let (_, cpus) =
            drive(&mut q, &ts, &offsets, &exec, h + 20).unwrap_or_else(|v| panic!("{v}: {tasks:?} m = {m}"));
        // Only P^b tasks migrate.
        for (i, c) in cpus.iter().enumerate() {
            let (_, in_b) = qp.set_of(i as u32);
            let mut d = c.clone();
            d.sort_unstable();
            d.dedup();
            assert!(in_b || d.len() <= 1, "task {i} ran on {c:?}: {tasks:?}");
        }
    }
    assert!(majors > 50, "{majors}");
}

#[test]
fn the_broken_twin_that_never_activates_is_caught() {
    let ts = set(&[(2, 3), (2, 3), (2, 3)]);
    let mut q = Qps::new(QuasiPartition::build(&ts, 2).unwrap(), &[], true).unwrap().broken_never_activates();
    // Set 0 stays partitioned with 4 ns of budgets in a 3 ns window: τ1's job is still
    // pending at its deadline.
    let e = drive(&mut q, &ts, &[], &[], 6).unwrap_err();
    assert!(e.to_string().contains("pending at its deadline 3 ns"), "{e}");
}

#[test]
fn sporadic_releases_in_minor_sets_meet_every_deadline_on_random_sets() {
    // Random sets with U ≤ m (U = m in a third), every job of a minor set's task 0 to T ns
    // late with probability 1/2 (a major set's tasks stay periodic), under the strict checks:
    // a minor set is uniprocessor EDF over its jobs and its slave items' jobs, of rates
    // summing to at most 1. The twin that keeps a late job's periodic deadline is caught.
    let mut g = Lcg(23);
    let (mut caught, mut late_jobs) = (0, 0u64);
    for case in 0..300 {
        let m = 2 + g.below(5) as u32;
        let tasks = random_set(&mut g, m, case % 3 == 0);
        let ts = set(&tasks);
        let qp = QuasiPartition::build(&ts, m).unwrap();
        let h = ts.hyperperiod(1 << 40).unwrap();
        let exec: Vec<Time> = if case % 4 == 1 { ts.iter().map(|t| 1 + g.below(t.wcet)).collect() } else { vec![] };
        let seed = g.below(1 << 30);
        let minor: Vec<bool> = (0..ts.len()).map(|i| qp.sets[qp.set_of(i as u32).0].major.is_none()).collect();
        let late_of = |i: usize, k: u32| {
            let mut r = Lcg(seed ^ ((i as u64) << 32) ^ k as u64);
            if !minor[i] || r.below(2) == 0 {
                0
            } else {
                r.below(ts[i].period + 1)
            }
        };
        let mut counted = |i: usize, k: u32| {
            let d = late_of(i, k);
            late_jobs += (d > 0) as u64;
            d
        };
        let mut q = Qps::new(qp.clone(), &[], true).unwrap();
        drive_with(&mut q, &ts, &[], &exec, 2 * h, &mut counted).unwrap_or_else(|v| panic!("{v}: {tasks:?} m = {m}"));
        let mut twin = Qps::new(qp, &[], true).unwrap().broken_grid_deadlines();
        if drive_with(&mut twin, &ts, &[], &exec, 2 * h, &mut { late_of }).is_err() {
            caught += 1;
        }
    }
    assert!(late_jobs > 1000, "{late_jobs}");
    assert!(caught > 10, "the twin was caught {caught} times");
}

/// Set 0 of the 3 × 2/3 example on two CPUs (R = 4/3, `P^a` = {τ0}, `P^b` = {τ1}; its slave
/// hosted by set 1 with τ2, offset 1 ns), τ0's second job 1 ns late (release instant 3 ns,
/// released at 4 ns).
#[allow(clippy::type_complexity)]
fn late_in_major_set(twin: bool, strict: bool) -> Result<Vec<(u128, Vec<Option<u32>>)>, QpsViolation> {
    let ts = set(&[(2, 3), (2, 3), (2, 3)]);
    let offsets = [0, 0, 1];
    let mut q = Qps::new(QuasiPartition::build(&ts, 2).unwrap(), &offsets, strict).unwrap();
    if twin {
        q = q.broken_reserves_absent();
    }
    let (tr, _) = drive_with(&mut q, &ts, &offsets, &[], 12, &mut |i, k| if (i, k) == (0, 1) { 1 } else { 0 })?;
    Ok(tr)
}

#[test]
fn a_late_task_no_longer_lets_master_time_pass_idle() {
    // The rule tried before ours (the twin): at 3 ns τ0 is late; its rate stays reserved, so
    // set 0's window [3, 6) is in QPS mode (M = σ^a = σ^b = 1 ns) with nothing in P^a. Set 1
    // (τ2 done, due 4 ns) runs the slave item at once: master time [3, 4) runs τ1 on CPU 1 and
    // nothing on CPU 0 — τ0's share passes idle. τ0 comes at 4 ns with u·(6 − 4) = 4/3 ns to
    // run by 6 ns, but CPU 0 has σ^b (τ1, earlier deadline) in [4, 5) and only σ^a's 1 ns in
    // [5, 6): 1/3 ns (1 tick) is left at the boundary, and without the checks τ0 gets 5/3 of
    // its 2 ns by its deadline 7 ns.
    let e = late_in_major_set(true, true).unwrap_err().to_string();
    assert!(e.contains("Task(0) of set 0 has 1 ticks of budget left at its boundary 6 ns"), "{e}");
    let e = late_in_major_set(true, false).unwrap_err().to_string();
    assert!(e.contains("task 0 missed its deadline 7 ns"), "{e}");
    let t = |ns: u128| ns * 3;
    // Ours: at 3 ns the load with the late task is 4/3 > 1, so the window lasts 1 ns; in
    // [3, 4) set 0 is partitioned (τ1 alone, rate 2/3) and asks nothing of set 1. At 4 ns τ0
    // is released at a boundary and set 0's window [4, 6) is in QPS mode: no budget is left
    // at any boundary and no job misses.
    let tr = late_in_major_set(false, true).unwrap();
    let at = |tick: u128| tr.iter().rev().find(|(x, _)| *x <= tick).map(|(_, on)| on.clone()).unwrap();
    assert_eq!(at(t(3)), vec![Some(1), None], "{tr:?}");
    assert!(tr.iter().any(|(x, _)| *x == t(4)), "{tr:?}");
    assert!(tr.iter().any(|(x, on)| (t(4)..t(6)).contains(x) && on == &vec![Some(0), Some(1)]), "{tr:?}");
}

/// A random implicit-deadline set for the sporadic campaign: periods dividing 24, rates
/// mostly above 2/5 (so that no partition exists and a major set is likely), total rate in
/// `[0.8·m, m]`; `None` when the draw ends below `0.8·m`.
fn heavy_set(g: &mut Lcg, m: u32) -> Option<Vec<(Time, Time)>> {
    let periods = [2u64, 3, 4, 6, 8, 12, 24];
    let (cap, mut u24) = (24 * m as u64, 0u64); // rates in 24ths
    let mut tasks = Vec::new();
    loop {
        let t = periods[g.below(periods.len() as u64) as usize];
        let c = (t * (40 + g.below(56)) / 100).clamp(1, t);
        let c = c.min((cap - u24) / (24 / t));
        if c == 0 {
            return (u24 * 10 >= cap * 8).then_some(tasks);
        }
        tasks.push((c, t));
        u24 += c * (24 / t);
        if u24 * 10 >= cap * 8 && g.below(3) == 0 {
            return Some(tasks);
        }
    }
}

#[test]
fn sporadic_releases_in_major_sets_meet_every_deadline_on_random_sets() {
    // Our rule (module notes, "Sporadic releases") on 3000 random sets with U in [0.8·m, m],
    // m = 2..4: every job of every task on time, up to T ns late, or 1 to 4 periods late (a
    // third each), execution times the WCET or shorter on half the sets, under the strict
    // checks over 120 ns: no budget left at a boundary, no job pending at its deadline. The
    // rule tried before ours (the twin) is caught on some of them.
    let mut g = Lcg(31);
    let (mut sets, mut with_major, mut late_major, mut caught) = (0, 0, 0u64, 0);
    let (mut inside, mut short) = (0, 0);
    while sets < 3000 {
        let m = 2 + g.below(3) as u32;
        let Some(tasks) = heavy_set(&mut g, m) else { continue };
        sets += 1;
        let ts = set(&tasks);
        let qp = QuasiPartition::build(&ts, m).unwrap();
        with_major += (qp.majors() > 0) as u32;
        let exec: Vec<Time> = if sets % 2 == 0 { ts.iter().map(|t| 1 + g.below(t.wcet)).collect() } else { vec![] };
        let seed = g.below(1 << 30);
        let in_major: Vec<bool> = (0..ts.len()).map(|i| qp.sets[qp.set_of(i as u32).0].major.is_some()).collect();
        let late_of = |i: usize, k: u32| {
            let mut r = Lcg(seed ^ ((i as u64) << 32) ^ k as u64);
            let t = ts[i].period;
            match r.below(3) {
                0 => 0,
                1 => r.below(t + 1),
                _ => t * (1 + r.below(4)) + r.below(t),
            }
        };
        let mut counted = |i: usize, k: u32| {
            let d = late_of(i, k);
            late_major += (d > 0 && in_major[i]) as u64;
            d
        };
        let mut q = Qps::new(qp.clone(), &[], true).unwrap();
        drive_with(&mut q, &ts, &[], &exec, 120, &mut counted).unwrap_or_else(|v| panic!("{v}: {tasks:?} m = {m}"));
        (inside, short) = (inside + q.late_inside_windows(), short + q.short_windows());
        let mut twin = Qps::new(qp, &[], true).unwrap().broken_reserves_absent();
        if drive_with(&mut twin, &ts, &[], &exec, 120, &mut { late_of }).is_err() {
            caught += 1;
        }
    }
    println!(
        "{sets} sets, {with_major} with a major set, {late_major} late jobs in major sets ({inside} released inside a partitioned window; {short} windows of 1 ns), twin caught on {caught}"
    );
    assert!(with_major > 1000 && late_major > 5000, "{with_major} {late_major}");
    // Both halves of the rule ran: late jobs inside partitioned windows, and 1-ns windows.
    assert!(inside > 100 && short > 100, "{inside} {short}");
    assert!(caught > 10, "the twin was caught {caught} times");
}
