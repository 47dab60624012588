//! `deques=lockfree` driven without threads: random interleavings of releases, CPUs noticing
//! requests (or idling) and CPUs completing their thread, on 1–3 CPUs and random fork-join
//! shapes or random DAGs. After every callback: what each CPU runs is its `running` record, and
//! no thread runs on two CPUs (the plugin contract's rule 2); every thread handed out belongs to
//! its task's current job, has not completed before and follows every predecessor of its job
//! (precedence and exactly once, against the job model kept from the completions alone); the
//! accounting is consistent.
//! After the requests are drained: no CPU idles while work waits (work conservation, §V);
//! then, without further releases, running every thread to completion finishes every released
//! job (no thread lost, no join missed).
//! Then Rule E against the policy: the victim and the thread are Definition 2's.

use super::*;
use crate::mechanism::forkjoin::test_model::{graphs, Model};
use crate::sync::CpuSignal;
use crate::tracer::TraceBuffer;
use proptest::prelude::*;
use std::collections::HashSet;

fn check(p: &Rtws, running: &[Option<Job>]) -> Result<(), String> {
    for (c, run) in running.iter().enumerate() {
        let rec = p.run(c).map(|r| p.slot_job(r));
        if rec != *run {
            return Err(format!("cpu {c} runs {run:?}, its record says {rec:?}"));
        }
    }
    let mut seen = HashSet::new();
    for j in running.iter().flatten() {
        if !seen.insert((j.task(), j.seq())) {
            return Err(format!("{j:?} runs on two CPUs"));
        }
    }
    p.accounting().consistent.map_err(|e| e.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn threads_run_once_and_in_order_with_work_conserved(
        shape in proptest::collection::vec(
            (5u64..40, proptest::collection::vec(1usize..4, 1..4)), 1..4),
        ops in proptest::collection::vec((0u8..3, 0usize..3, 1u64..15), 1..250),
        m in 1usize..4,
        dag in any::<bool>(),
        bits in proptest::collection::vec(any::<u64>(), 1..4),
    ) {
        let params: Vec<TaskParams> = shape.iter().map(|&(p, _)| TaskParams { deadline: p, period: p }).collect();
        let widths: Vec<Vec<usize>> = shape.iter().map(|(_, w)| w.clone()).collect();
        let g = graphs(&widths, dag, &bits);
        let sh = Shape::of_graphs(g.iter().map(|(n, e)| (*n, &e[..])));
        let plugin = Rtws::new(sh, &params, m, 0, 1_000_000).unwrap();
        let mut model = Model::of_graphs(&g, params.iter().map(|t| t.period).collect());
        let signals: Vec<CpuSignal> = (0..m).map(|_| CpuSignal::new()).collect();
        let mut tb = TraceBuffer::new(0, 200_000);
        let mut running: Vec<Option<Job>> = vec![None; m];
        let mut now = 0u64;
        let schedule = |c: usize, prev: Prev, now: u64, tb: &mut TraceBuffer, running: &mut Vec<Option<Job>>, model: &Model| {
            let mut ctx = Ctx::new(c, tb, &signals);
            let next = plugin.schedule(&mut ctx, prev, now);
            drop(ctx);
            if let Some(j) = next {
                if running[c] != Some(j) {
                    model.handed(&j)?;
                }
            }
            running[c] = next;
            Ok::<(), String>(())
        };
        for (op, c, dt) in ops {
            let c = c % m;
            match op {
                0 => {
                    now += dt;
                    if plugin.next_release(0) <= now && plugin.try_claim_release(0, plugin.next_release(0)) {
                        plugin.release(&mut Ctx::new(c, &mut tb, &signals), 0, now);
                    }
                }
                1 => {
                    // CPU c notices a request (or idles) and reschedules.
                    if signals[c].take().is_some() || running[c].is_none() {
                        let prev = running[c].map_or(Prev::Idle, Prev::Preempted);
                        schedule(c, prev, now, &mut tb, &mut running, &model).map_err(TestCaseError::fail)?;
                    }
                }
                _ => {
                    if let Some(j) = running[c] {
                        model.complete(&j);
                        schedule(c, Prev::Completed(j), now, &mut tb, &mut running, &model).map_err(TestCaseError::fail)?;
                    }
                }
            }
            prop_assert_eq!(check(&plugin, &running), Ok(()));
        }
        // Drain the requests: every CPU with one reschedules until none is left.
        for _ in 0..100 {
            let Some(c) = (0..m).find(|&c| signals[c].is_set()) else { break };
            signals[c].take();
            let prev = running[c].map_or(Prev::Idle, Prev::Preempted);
            schedule(c, prev, now, &mut tb, &mut running, &model).map_err(TestCaseError::fail)?;
            prop_assert_eq!(check(&plugin, &running), Ok(()));
        }
        prop_assert!((0..m).all(|c| !signals[c].is_set()), "requests do not settle");
        {
            let g = plugin.global.lock_untraced();
            let idle = running.iter().filter(|r| r.is_none()).count();
            let waiting = plugin.waiting_total(&g);
            prop_assert!(idle == 0 || waiting == 0, "{idle} CPUs idle while {waiting} work items wait");
        }
        // Liveness, with no more releases: completing whatever runs (and answering requests)
        // finishes every released job.
        for _ in 0..10_000 {
            if let Some(c) = (0..m).find(|&c| signals[c].is_set()) {
                signals[c].take();
                let prev = running[c].map_or(Prev::Idle, Prev::Preempted);
                schedule(c, prev, now, &mut tb, &mut running, &model).map_err(TestCaseError::fail)?;
            } else if let Some(c) = (0..m).find(|&c| running[c].is_some()) {
                let j = running[c].unwrap();
                model.complete(&j);
                schedule(c, Prev::Completed(j), now, &mut tb, &mut running, &model).map_err(TestCaseError::fail)?;
            } else {
                break;
            }
            prop_assert_eq!(check(&plugin, &running), Ok(()));
        }
        let g = plugin.global.lock_untraced();
        prop_assert!(running.iter().all(Option::is_none) && plugin.waiting_total(&g) == 0);
        prop_assert_eq!(g.book.released(), g.book.completed(), "released jobs left unfinished");
    }
}

/// The fast path is taken: a job that forks three threads on an otherwise idle 1-CPU system
/// runs them all from its own deque (Rule C, bottom first), the second and third without the
/// global lock (checked: the traced lock records every acquisition, and those two calls
/// leave none).
#[test]
fn rule_c_pops_without_the_global_lock() {
    let params = [TaskParams { deadline: 100, period: 100 }];
    let p = Rtws::new(Shape::of(vec![vec![1, 3]]), &params, 1, 0, 1_000).unwrap();
    let signals = [CpuSignal::new()];
    let mut tb = TraceBuffer::new(0, 1_000);
    p.release(&mut Ctx::new(0, &mut tb, &signals), 0, 0);
    signals[0].take();
    let first = p.schedule(&mut Ctx::new(0, &mut tb, &signals), Prev::Idle, 0).unwrap();
    assert_eq!(first.task(), 0);
    // Region 1 (slots 1..4) forks on the join.
    let a = p.schedule(&mut Ctx::new(0, &mut tb, &signals), Prev::Completed(first), 1).unwrap();
    assert_eq!(a.task(), 3, "the bottom thread first");
    let locks = |tb: &TraceBuffer| tb.records().iter().filter(|r| r.kind == RecKind::LockWaitStart).count();
    let before = locks(&tb);
    assert!(before >= 3, "release, idle schedule and the join take the global lock");
    let b = p.schedule(&mut Ctx::new(0, &mut tb, &signals), Prev::Completed(a), 2).unwrap();
    let c = p.schedule(&mut Ctx::new(0, &mut tb, &signals), Prev::Completed(b), 3).unwrap();
    assert_eq!(locks(&tb), before, "Rule C's pops took the global lock");
    assert_eq!((b.task(), c.task()), (2, 1));
    // The last thread joins: the job completes under the lock.
    assert_eq!(p.schedule(&mut Ctx::new(0, &mut tb, &signals), Prev::Completed(c), 4), None);
    assert_eq!(locks(&tb), before + 1);
    assert_eq!(p.accounting().consistent.map_err(|e| e.0), Ok(()));
}

/// Rule E: the thief's victim and thread are Definition 2's, as the policy (the simulator's
/// state machine) chooses them on the same state: CPUs 0–2 forked jobs of deadlines 30, 20
/// and 30 (three threads each) and run one of them; CPU 3 steals twice from CPU 1 (deadline
/// 20, top first), then from CPU 0 (deadline 30, task 0 before task 2), and so on until
/// nothing is left, each time the policy's pick.
#[test]
fn rule_e_takes_the_definition_2_minimum() {
    use rtsched_policy::rtws::{Pick, Rtws as Policy, Source};
    let m = 4;
    let params: Vec<TaskParams> = (0..3).map(|_| TaskParams { deadline: 1_000, period: 1_000 }).collect();
    let p = Rtws::new(Shape::of(vec![vec![3]; 3]), &params, m, 0, 10_000).unwrap();
    let mut pol = Policy::new(m);
    let mut g = p.global.lock_untraced();
    for c in 0..3u32 {
        let prio = Prio { key: 30 - 10 * (c as u64 % 2), task: c, job: 0 };
        p.fork(&mut g, c as usize, prio, p.shape.sources(c));
        pol.release(prio);
        pol.select(c as usize).unwrap();
        pol.fork(c as usize, prio, &[3 * c, 3 * c + 1, 3 * c + 2]);
        let Pick { work, .. } = pol.select(c as usize).unwrap();
        let mine = p.owner(c as usize).pop().unwrap();
        let r = running_of(mine, false);
        assert_eq!(Work::Thread(r.thread, r.origin), work);
        p.running[c as usize].set(Some(r));
    }
    let mut steals = 0;
    loop {
        let want = pol.select(3);
        let got = p.steal(3);
        match (want, got) {
            (None, None) => break,
            (Some(Pick { prio, work: Work::Thread(t, o), source: Source::Steal { victim } }), Some((q, r))) => {
                assert_eq!((q as u32, r.prio, r.thread, r.origin), (victim, prio, t, o));
                pol.stop(3);
                steals += 1;
            }
            other => panic!("policy and mechanism differ: {other:?}"),
        }
    }
    assert_eq!(steals, 6);
}

/// Self-suspension on sequential sets (the module docs' rule: block = the thread leaves its
/// CPU as at a completion without a join; wake = a Rule A arrival with its §V check). Random
/// releases, reschedules, completions, blocks and wake-ups (each wake on a random thread, as
/// the contract allows), on 1–3 CPUs, drive `deques=lockfree` and `deques=locked` (the policy
/// `rtsched_policy::rtws::Rtws`, the simulator's state machine, under one lock) in lock-step:
/// after every callback both hand every CPU the same job and leave the same reschedule
/// requests, and each one's accounting is consistent; whenever the requests are drained, what
/// runs is the global EDF choice — the `m` highest-priority ready jobs, a suspended job not
/// ready (a job book kept by the test from the same calls is the reference). A blocked job is
/// never handed out before its wake-up.
mod suspension {
    use super::super::locked::Locked;
    use super::*;

    struct Driven<'s, P: Plugin> {
        p: P,
        signals: &'s [CpuSignal],
        running: Vec<Option<Job>>,
    }

    impl<P: Plugin> Driven<'_, P> {
        fn schedule(&mut self, tb: &mut TraceBuffer, c: usize, prev: Prev, now: u64) {
            let mut ctx = Ctx::new(c, tb, self.signals);
            self.running[c] = self.p.schedule(&mut ctx, prev, now);
        }
        fn requests(&self) -> Vec<bool> {
            self.signals.iter().map(CpuSignal::is_set).collect()
        }
    }

    /// The G-EDF choice: the `m` highest-priority ready jobs of the reference book.
    fn gedf(book: &TaskBook, n: usize, m: usize) -> Vec<(u32, u32)> {
        let mut ready: Vec<Job> = (0..n).filter_map(|i| book.ready_head(i)).collect();
        ready.sort_by_key(|j| j.prio);
        let mut top: Vec<(u32, u32)> = ready.iter().take(m).map(|j| (j.task(), j.seq())).collect();
        top.sort_unstable();
        top
    }

    fn runs(r: &[Option<Job>]) -> Vec<(u32, u32)> {
        let mut v: Vec<(u32, u32)> = r.iter().flatten().map(|j| (j.task(), j.seq())).collect();
        v.sort_unstable();
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn blocks_and_wakes_follow_the_policy_and_settle_to_gedf(
            periods in proptest::collection::vec((5u64..40, 0u64..5), 1..6),
            ops in proptest::collection::vec((0u8..6, 0usize..3, 1u64..15), 1..250),
            m in 1usize..4,
        ) {
            let params: Vec<TaskParams> =
                periods.iter().map(|&(p, d)| TaskParams { deadline: p - d, period: p }).collect();
            let n = params.len();
            let shape = || Shape::of(vec![vec![1]; n]);
            let (sa, sb): (Vec<CpuSignal>, Vec<CpuSignal>) = (0..m).map(|_| (CpuSignal::new(), CpuSignal::new())).unzip();
            let mut a = Driven { p: Rtws::new(shape(), &params, m, 0, 1_000_000).unwrap(), signals: &sa, running: vec![None; m] };
            let mut b = Driven { p: Locked::new(shape(), &params, m, 0, 1_000_000).unwrap(), signals: &sb, running: vec![None; m] };
            let all: Vec<usize> = (0..n).collect();
            let mut book = TaskBook::new(&params, &all, PriorityRule::Edf, 0, 1_000_000);
            let mut suspended: Vec<Job> = Vec::new();
            let mut tb = TraceBuffer::new(0, 400_000);
            let mut now = 0u64;
            let settle = |a: &mut Driven<'_, Rtws>, b: &mut Driven<'_, Locked>, tb: &mut TraceBuffer, now: u64| {
                for _ in 0..100 {
                    let Some(c) = (0..m).find(|&c| sa[c].is_set() || sb[c].is_set()) else { return true };
                    sa[c].take();
                    sb[c].take();
                    let prev = a.running[c].map_or(Prev::Idle, Prev::Preempted);
                    a.schedule(tb, c, prev, now);
                    let prev = b.running[c].map_or(Prev::Idle, Prev::Preempted);
                    b.schedule(tb, c, prev, now);
                }
                false
            };
            for (op, c, dt) in ops {
                let c = c % m;
                match op {
                    0 => {
                        now += dt;
                        let due = a.p.next_release(0);
                        prop_assert_eq!(due, b.p.next_release(0));
                        if due <= now {
                            a.p.release(&mut Ctx::new(c, &mut tb, &sa), 0, now);
                            b.p.release(&mut Ctx::new(c, &mut tb, &sb), 0, now);
                            book.release_due(now, |_, _| {});
                        }
                    }
                    1 => {
                        if sa[c].is_set() || a.running[c].is_none() {
                            sa[c].take();
                            sb[c].take();
                            let prev = a.running[c].map_or(Prev::Idle, Prev::Preempted);
                            a.schedule(&mut tb, c, prev, now);
                            b.schedule(&mut tb, c, prev, now);
                        }
                    }
                    2 | 3 => {
                        if let Some(j) = a.running[c] {
                            let prev = if op == 2 {
                                book.complete(&j);
                                Prev::Completed(j)
                            } else {
                                book.suspend(&j);
                                suspended.push(j);
                                Prev::Blocked(j)
                            };
                            a.schedule(&mut tb, c, prev, now);
                            b.schedule(&mut tb, c, prev, now);
                        }
                    }
                    4 => {
                        if !suspended.is_empty() {
                            let j = suspended.remove(dt as usize % suspended.len());
                            prop_assert!(book.resume(&j));
                            a.p.wake(&mut Ctx::new(c, &mut tb, &sa), j, now);
                            b.p.wake(&mut Ctx::new(c, &mut tb, &sb), j, now);
                        }
                    }
                    _ => {
                        prop_assert!(settle(&mut a, &mut b, &mut tb, now), "requests do not settle");
                        prop_assert_eq!(runs(&a.running), gedf(&book, n, m), "settled, not G-EDF");
                    }
                }
                prop_assert_eq!(&a.running, &b.running, "the designs differ");
                prop_assert_eq!(a.requests(), b.requests(), "the designs' requests differ");
                prop_assert_eq!(check(&a.p, &a.running), Ok(()));
                prop_assert_eq!(b.p.accounting().consistent.map_err(|e| e.0), Ok(()));
                for j in &suspended {
                    prop_assert!(!a.running.contains(&Some(*j)), "suspended {:?} runs", j);
                }
            }
            prop_assert!(settle(&mut a, &mut b, &mut tb, now), "requests do not settle");
            prop_assert_eq!(&a.running, &b.running);
            prop_assert_eq!(runs(&a.running), gedf(&book, n, m), "settled, not G-EDF");
        }
    }
}
