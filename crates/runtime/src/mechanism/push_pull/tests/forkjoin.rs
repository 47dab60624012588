//! Fork-join jobs (RTWS paper, §III) under push/pull, without threads: random fork-join shapes
//! on 3 CPUs and random interleavings of releases, reschedules and completions. Against an
//! independent job model kept here from the releases and completions alone: every thread handed
//! out belongs to its task's oldest pending job and that job's current region and has not
//! completed before (precedence, exactly once); the mechanism's ready threads are the model's;
//! whenever the requests have settled the running threads are the `min(m, r)` best ready ones
//! (global EDF over threads, the simulator's fork-join G-EDF); after every callback the
//! mechanism is consistent (held threads on no run-queue).

use super::*;
use crate::mechanism::forkjoin::Shape;
use std::collections::HashSet;

/// The test's own view of each fork-join task.
struct Model {
    width: Vec<Vec<u32>>,
    period: Vec<u64>,
    done_jobs: Vec<u32>,
    region: Vec<u32>,
    done_in_region: Vec<u32>,
    /// (slot, job) completed.
    completed: HashSet<(u32, u32)>,
}

impl Model {
    fn base(&self, i: usize, r: u32) -> u32 {
        let before: u32 = self.width[..i].iter().flatten().sum();
        before + self.width[i][..r as usize].iter().sum::<u32>()
    }
    fn slot(&self, s: u32) -> (usize, u32) {
        let mut base = 0;
        for (i, w) in self.width.iter().enumerate() {
            for (r, &k) in w.iter().enumerate() {
                if s < base + k {
                    return (i, r as u32);
                }
                base += k;
            }
        }
        unreachable!("slot {s} out of range")
    }
    fn handed(&self, j: &Job) -> Result<(), String> {
        let (i, r) = self.slot(j.task());
        if j.seq() != self.done_jobs[i] {
            return Err(format!("{j:?}: task {i} is at job {}", self.done_jobs[i]));
        }
        if r != self.region[i] {
            return Err(format!("{j:?}: task {i} is at region {}, the thread is of region {r}", self.region[i]));
        }
        if self.completed.contains(&(j.task(), j.seq())) {
            return Err(format!("{j:?} handed out after it completed"));
        }
        Ok(())
    }
    fn complete(&mut self, j: &Job) {
        let (i, _) = self.slot(j.task());
        self.completed.insert((j.task(), j.seq()));
        self.done_in_region[i] += 1;
        if self.done_in_region[i] == self.width[i][self.region[i] as usize] {
            self.done_in_region[i] = 0;
            self.region[i] += 1;
            if self.region[i] as usize == self.width[i].len() {
                self.region[i] = 0;
                self.done_jobs[i] += 1;
            }
        }
    }
    /// The ready threads at `now` (every job due by `now` released, from 0): the oldest
    /// pending job's current region's threads not completed, as EDF priorities.
    fn ready(&self, now: u64) -> Vec<Prio> {
        let mut out = Vec::new();
        for i in 0..self.width.len() {
            let released = (now / self.period[i] + 1) as u32;
            let seq = self.done_jobs[i];
            if released <= seq {
                continue;
            }
            let deadline = seq as u64 * self.period[i] + self.period[i];
            let b = self.base(i, self.region[i]);
            for s in b..b + self.width[i][self.region[i] as usize] {
                if !self.completed.contains(&(s, seq)) {
                    out.push(Prio { key: deadline, task: s, job: seq });
                }
            }
        }
        out.sort_unstable();
        out
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn fork_join_threads_follow_regions_once_and_settle_to_gedf(
        shape in proptest::collection::vec((5u64..40, proptest::collection::vec(1usize..4, 1..4)), 1..4),
        ops in proptest::collection::vec((0u8..4, 0usize..3, 1u64..15), 1..200),
    ) {
        let m = 3;
        let fj: Vec<TaskParams> = shape.iter().map(|&(p, _)| TaskParams { deadline: p, period: p }).collect();
        let widths: Vec<Vec<usize>> = shape.iter().map(|(_, w)| w.clone()).collect();
        let sh = Shape::of(widths.clone());
        let pp = PushPull::with_shape("push-pull", sh, &fj, m, &PriorityRule::Edf, 0, 1_000_000, Cpudl::new(m), 3)
            .unwrap();
        let mut a = Driven::new(pp, m);
        let mut model = Model {
            width: widths.iter().map(|w| w.iter().map(|&k| k as u32).collect()).collect(),
            period: shape.iter().map(|&(p, _)| p).collect(),
            done_jobs: vec![0; fj.len()],
            region: vec![0; fj.len()],
            done_in_region: vec![0; fj.len()],
            completed: HashSet::new(),
        };
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
