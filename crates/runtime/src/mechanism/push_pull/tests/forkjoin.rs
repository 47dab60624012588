//! Fork-join jobs (RTWS paper, §III) and DAG jobs under push/pull, without threads: random
//! fork-join shapes or random DAGs on 3 CPUs and random interleavings of releases, reschedules
//! and completions. Against an independent job model kept from the releases and completions
//! alone: every thread handed out belongs to its task's oldest pending job, follows every
//! predecessor of that job and has not completed before (precedence, exactly once); the mechanism's ready threads are the model's;
//! whenever the requests have settled the running threads are the `min(m, r)` best ready ones
//! (global EDF over threads, the simulator's fork-join G-EDF); after every callback the
//! mechanism is consistent (held threads on no run-queue).

use super::*;
use crate::mechanism::forkjoin::Shape;
use crate::mechanism::forkjoin::test_model::{graphs, Model};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn fork_join_threads_follow_regions_once_and_settle_to_gedf(
        shape in proptest::collection::vec((5u64..40, proptest::collection::vec(1usize..4, 1..4)), 1..4),
        ops in proptest::collection::vec((0u8..4, 0usize..3, 1u64..15), 1..200),
        dag in any::<bool>(),
        bits in proptest::collection::vec(any::<u64>(), 1..4),
    ) {
        let m = 3;
        let fj: Vec<TaskParams> = shape.iter().map(|&(p, _)| TaskParams { deadline: p, period: p }).collect();
        let widths: Vec<Vec<usize>> = shape.iter().map(|(_, w)| w.clone()).collect();
        let g = graphs(&widths, dag, &bits);
        let sh = Shape::of_graphs(g.iter().map(|(n, e)| (*n, &e[..])));
        let pp = PushPull::with_shape("push-pull", sh, &fj, m, &PriorityRule::Edf, 0, 1_000_000, Cpudl::new(m), 3)
            .unwrap();
        let mut a = Driven::new(pp, m);
        let mut model = Model::of_graphs(&g, shape.iter().map(|&(p, _)| p).collect());
        let mut now = 0;
        for d in 0..m {
            a.pp.release_with(&mut a.env, d, now);
        }
        for (op, cpu, dt) in ops {
            match op {
                0 => {
                    now += dt;
                    for d in 0..m {
                        if a.pp.next_release(d) <= now {
                            a.pp.release_with(&mut a.env, d, now);
                        }
                    }
                }
                1 | 2 => {
                    let done = op == 2 && a.running[cpu].is_some();
                    if done || a.env.resched[cpu] || a.running[cpu].is_none() {
                        let before = a.running[cpu];
                        if done {
                            model.complete(&before.unwrap());
                        }
                        let got = a.schedule(cpu, done);
                        if let Some(j) = got {
                            if done || Some(j) != before {
                                model.handed(&j).map_err(TestCaseError::fail)?;
                            }
                        }
                    }
                }
                _ => {
                    prop_assert_eq!(a.settle(), Ok(()));
                    let run: Vec<Option<Prio>> = a.running.iter().map(|r| r.map(|j| j.prio)).collect();
                    prop_assert_eq!(invariant::check_global(m, &model.ready(now), &run), Ok(()));
                }
            }
            prop_assert_eq!(a.check(), Ok(()));
            let mut heads: Vec<Prio> = a.pp.heads().iter().map(|j| j.prio).collect();
            heads.sort_unstable();
            prop_assert_eq!(heads, model.ready(now));
        }
        prop_assert_eq!(a.settle(), Ok(()));
        let acc = a.pp.accounting();
        prop_assert_eq!(acc.consistent, Ok(()));
        for (s, &c) in acc.completed.iter().enumerate() {
            let mine = (0..=model.done_jobs.iter().copied().max().unwrap_or(0))
                .filter(|&j| model.completed.contains(&(s as u32, j)))
                .count() as u32;
            prop_assert_eq!(c, mine, "slot {} completions", s);
        }
    }
}
