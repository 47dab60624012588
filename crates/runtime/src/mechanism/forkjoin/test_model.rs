//! A job model for the fork-join property tests of the mechanisms that execute fork-join jobs
//! (rtws, push-pull): each task's completed jobs, current region and threads of it done, kept
//! from the completions alone, independent of the mechanisms' own bookkeeping
//! ([`super::Shape`], the job books). Test builds only.

use crate::mechanism::Job;
use rtsched_policy::Prio;
use std::collections::HashSet;

/// The test's own view of each fork-join task.
pub(crate) struct Model {
    pub(crate) width: Vec<Vec<u32>>,
    pub(crate) period: Vec<u64>,
    pub(crate) done_jobs: Vec<u32>,
    pub(crate) region: Vec<u32>,
    pub(crate) done_in_region: Vec<u32>,
    /// (slot, job) completed.
    pub(crate) completed: HashSet<(u32, u32)>,
}

impl Model {
    /// Tasks with regions of `width[i][r]` threads and periods `period[i]` (implicit deadlines).
    pub(crate) fn new(width: Vec<Vec<u32>>, period: Vec<u64>) -> Model {
        let n = width.len();
        Model {
            width,
            period,
            done_jobs: vec![0; n],
            region: vec![0; n],
            done_in_region: vec![0; n],
            completed: HashSet::new(),
        }
    }
    pub(crate) fn base(&self, i: usize, r: u32) -> u32 {
        let before: u32 = self.width[..i].iter().flatten().sum();
        before + self.width[i][..r as usize].iter().sum::<u32>()
    }
    pub(crate) fn slot(&self, s: u32) -> (usize, u32) {
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
    pub(crate) fn handed(&self, j: &Job) -> Result<(), String> {
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
    pub(crate) fn complete(&mut self, j: &Job) {
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
    pub(crate) fn ready(&self, now: u64) -> Vec<Prio> {
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
