//! Both mechanisms driven without threads, in virtual time, side by side on random
//! implicit-deadline sets with U ≤ m: releases, the clusters' budget timers, preemption
//! notices, random completions, callbacks on time or late. After every instant has settled:
//! `qps-g`'s CPUs run the pending job of the task a separate `Qps` over the whole set —
//! stepped as the simulator steps it (advance, completions, releases, decide) — puts there;
//! and, when every cluster's own offline phase made the whole set's sets, `qps-c` runs
//! exactly what `qps-g` runs (the per-cluster locks change who decides, not what).
use super::*;
use crate::mechanism::servers::testing::settle;
use crate::sync::CpuSignal;
use crate::tracer::TraceBuffer;
use proptest::prelude::*;

const PERIODS: [u64; 6] = [20, 30, 40, 50, 60, 120];

fn draw(m: u32, raw: &[(usize, u64)]) -> Vec<(u64, u64)> {
    let l: u128 = 600;
    let (mut num, cap) = (0u128, m as u128 * l);
    let mut out = Vec::new();
    for &(p, f) in raw {
        let t = PERIODS[p % PERIODS.len()];
        let c = (t * f / 100).clamp(1, t);
        let add = c as u128 * (l / t as u128);
        if num + add > cap {
            break;
        }
        num += add;
        out.push((c, t));
    }
    out
}

/// Whether every cluster's own offline phase makes the whole set's sets.
fn same_sets(ts: &TaskSet, m: usize) -> bool {
    let whole = quasi_partition("t", ts, m).unwrap();
    let part = whole.partition();
    clusters(&whole).into_iter().all(|(cpus, tasks)| {
        let sub = TaskSet::new(tasks.iter().map(|&i| ts[i as usize].clone()).collect()).unwrap();
        let own = quasi_partition("t", &sub, cpus.len()).unwrap().partition();
        cpus.iter().enumerate().all(|(j, &c)| {
            own[j].iter().map(|&l| tasks[l as usize]).collect::<Vec<_>>() == part[c]
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]
    #[test]
    fn dispatch_follows_the_policy_and_clusters_agree(
        m in 1u32..=4,
        raw in proptest::collection::vec((0usize..6, 5u64..100), 1..12),
        ops in proptest::collection::vec((0u8..3, 0usize..4, 1u64..40), 1..160),
    ) {
        follows(m, &raw, ops)?;
    }
}

#[allow(clippy::needless_range_loop)] // per-CPU and per-task arrays
fn follows(m: u32, raw: &[(usize, u64)], ops: Vec<(u8, usize, u64)>) -> Result<(), TestCaseError> {
    let ct = draw(m, raw);
    if ct.is_empty() {
        return Err(TestCaseError::reject("no task"));
    }
    let ts = TaskSet::from_ct(&ct).unwrap();
    let params: Vec<TaskParams> = ct.iter().map(|&(_, t)| TaskParams { deadline: t, period: t }).collect();
    let (m, n) = (m as usize, ct.len());
    let end = 2_000u64;
    let gm = QpsMech::new("qps-g", &ts, &params, m, false, PriorityRule::Edf, 0, end).unwrap();
    let cm = QpsMech::new("qps-c", &ts, &params, m, true, PriorityRule::Edf, 0, end).unwrap();
    let agree = same_sets(&ts, m);
    let qp = quasi_partition("t", &ts, m).unwrap();
    let l = qp.scale();
    let mut policy = Qps::new(qp, &[], false).unwrap();
    let signals: Vec<CpuSignal> = (0..m).map(|_| CpuSignal::new()).collect();
    let signals_c: Vec<CpuSignal> = (0..m).map(|_| CpuSignal::new()).collect();
    let mut tb = TraceBuffer::new(0, 1 << 20);
    let (mut run_g, mut run_c): (Vec<Option<Job>>, Vec<Option<Job>>) = (vec![None; m], vec![None; m]);
    let mut completed = vec![0u32; n];
    let mut rel = vec![0u64; n];
    let mut policy_released = vec![0u32; n];
    let mut now = 0u64;
    let mut ops = ops.into_iter();
    let step_to = |policy: &mut Qps, rel: &mut [u64], pr: &mut [u32], to: u128| -> Result<(), TestCaseError> {
        // The policy's next event or a due release instant of this periodic driver (as the
        // mechanism's `sync`: the policy's `next_event` looks only past now).
        let next = |policy: &Qps, rel: &[u64]| -> u128 {
            let r = rel.iter().map(|&t| t as u128 * l).min().unwrap_or(u128::MAX);
            policy.next_event().min(r.max(policy.now()))
        };
        while next(policy, rel) <= to {
            let e = next(policy, rel);
            policy.advance(e).map_err(|v| TestCaseError::fail(v.to_string()))?;
            if e.is_multiple_of(l) {
                let t = (e / l) as u64;
                for i in 0..rel.len() {
                    if rel[i] == t {
                        let r = if t < end {
                            pr[i] += 1;
                            policy.release(i as u32)
                        } else {
                            policy.skip_release(i as u32)
                        };
                        r.map_err(|v| TestCaseError::fail(v.to_string()))?;
                        rel[i] += params[i].period;
                    }
                }
            }
            policy.schedule().map_err(|v| TestCaseError::fail(v.to_string()))?;
        }
        Ok(())
    };
    while now < end {
        settle(&gm, m, now, &mut run_g, &mut tb, &signals);
        settle(&cm, m, now, &mut run_c, &mut tb, &signals_c);
        step_to(&mut policy, &mut rel, &mut policy_released, now as u128 * l)?;
        let tasks: Vec<Option<u32>> = (0..m).map(|c| policy.task_on(c)).collect();
        prop_assert_eq!(&gm.tasks_on(), &tasks, "qps-g's policy at {}", now);
        for c in 0..m {
            let want = tasks[c].and_then(|i| {
                let t = params[i as usize].period;
                let released = (now / t + 1).min(end.div_ceil(t)) as u32;
                (completed[i as usize] < released).then_some((i, completed[i as usize]))
            });
            prop_assert_eq!(run_g[c].map(|j| (j.task(), j.seq())), want, "qps-g CPU {} at {}", c, now);
        }
        if agree {
            prop_assert_eq!(&run_c, &run_g, "qps-c and qps-g at {}", now);
        }
        prop_assert_eq!(gm.accounting().consistent, Ok(()));
        prop_assert_eq!(cm.accounting().consistent, Ok(()));
        let Some((op, c, dt)) = ops.next() else { break };
        let c = c % m;
        match op {
            0 if run_g[c].is_some() => {
                let j = run_g[c].unwrap();
                let mut ctx = Ctx::new(c, &mut tb, &signals);
                run_g[c] = gm.schedule(&mut ctx, Prev::Completed(j), now);
                drop(ctx);
                // qps-c completes the same job where it runs it.
                if let Some(d) = (0..m).find(|&d| run_c[d] == Some(j)) {
                    let mut ctx = Ctx::new(d, &mut tb, &signals_c);
                    run_c[d] = cm.schedule(&mut ctx, Prev::Completed(j), now);
                } else {
                    prop_assert!(!agree, "qps-c does not run {:?}", j);
                    return Ok(());
                }
                let i = j.task() as usize;
                completed[i] += 1;
                if completed[i] >= policy_released[i] {
                    policy.advance(now as u128 * l).map_err(|v| TestCaseError::fail(v.to_string()))?;
                    policy.complete(i as u32).map_err(|v| TestCaseError::fail(v.to_string()))?;
                    policy.schedule().map_err(|v| TestCaseError::fail(v.to_string()))?;
                }
            }
            1 => {
                let mut next = now + dt;
                for g in [&gm, &cm] {
                    for d in 0..g.release_domains() {
                        next = next.min(g.next_release(d));
                    }
                    for c in 0..m {
                        next = next.min(g.next_timer(c));
                    }
                }
                prop_assert!(next > now, "an event at {} was not handled", next);
                now = next;
            }
            _ => now += dt,
        }
    }
    Ok(())
}

#[test]
fn clusters_chain_majors_to_their_hosts_and_partitions_are_per_cpu() {
    // A partitionable set: one cluster per CPU (QPS-C's per-core locks on the paper's platform).
    let ts = TaskSet::from_ct(&[(5, 10), (5, 10), (3, 10)]).unwrap();
    let qp = quasi_partition("t", &ts, 2).unwrap();
    assert!(qp.partitioned);
    assert_eq!(clusters(&qp).len(), 2);
    // Three tasks of rate 2/3 on two CPUs: no partition, one major set hosting on the other
    // CPU — one cluster of both.
    let ts = TaskSet::from_ct(&[(2, 3), (2, 3), (2, 3)]).unwrap();
    let qp = quasi_partition("t", &ts, 2).unwrap();
    assert!(!qp.partitioned);
    assert_eq!(clusters(&qp), vec![(vec![0, 1], vec![0, 1, 2])]);
    // Refusals: the policy's one line.
    let ts = TaskSet::from_cdt(&[(1, 4, 4), (1, 3, 5)]).unwrap();
    let params: Vec<TaskParams> = ts.iter().map(|t| TaskParams { deadline: t.deadline, period: t.period }).collect();
    let e = QpsMech::new("qps-c", &ts, &params, 2, true, PriorityRule::Edf, 0, 10).err().unwrap().to_string();
    assert!(e.contains("qps-c:") && e.contains("task 1") && !e.contains('\n'), "{e}");
}
