//! The fork-join structure of a run, shared by the mechanisms that execute fork-join jobs
//! (`rtws`, `push-pull`): which thread slot belongs to which task and region (the numbering of
//! `backend::slot_task_set`: task `i`, region `r`, thread `k`), and the fork-join tasks' own
//! deadlines and periods (RTWS paper, §III: a job's region `r + 1` forks only when every thread
//! of region `r` has completed; the threads of one region are independent and share the job's
//! deadline).

use crate::mechanism::registry::Setup;
use crate::mechanism::TaskParams;
use crate::RunError;
use rtsched_model::forkjoin::RegionProgress;

/// The fork-join structure: per task, the first slot and the width of each region.
#[derive(Debug, Clone)]
pub struct Shape {
    pub(crate) base: Vec<Vec<u32>>,
    pub(crate) width: Vec<Vec<u32>>,
    /// Slot → (task, region).
    pub(crate) of_slot: Vec<(u32, u32)>,
}

impl Shape {
    /// Tasks whose regions have the given widths (threads per region, each ≥ 1).
    pub fn of(widths: Vec<Vec<usize>>) -> Shape {
        let (mut base, mut width, mut of_slot) = (Vec::new(), Vec::new(), Vec::new());
        for (i, regions) in widths.iter().enumerate() {
            let (mut b, mut w) = (Vec::new(), Vec::new());
            for (r, &k) in regions.iter().enumerate() {
                b.push(of_slot.len() as u32);
                w.push(k as u32);
                of_slot.extend(std::iter::repeat_n((i as u32, r as u32), k));
            }
            base.push(b);
            width.push(w);
        }
        Shape { base, width, of_slot }
    }

    /// The run's structure and the fork-join tasks' parameters: `Setup::forkjoin`'s, or — without
    /// one — every task is one region of one thread (the sequential case, slot = task).
    pub fn of_setup(s: &Setup<'_>, mechanism: &str) -> Result<(Shape, Vec<TaskParams>), RunError> {
        let shape = match s.forkjoin {
            Some(set) => Shape::of(set.iter().map(|t| t.regions.iter().map(Vec::len).collect()).collect()),
            None => Shape::of(vec![vec![1]; s.ts.len()]),
        };
        if shape.slots() != s.ts.len() {
            return Err(RunError::Config(format!(
                "{mechanism}: the fork-join structure has {} thread slots but the task set has {} tasks",
                shape.slots(),
                s.ts.len()
            )));
        }
        let params: Vec<TaskParams> = match s.forkjoin {
            Some(set) => set.iter().map(|t| TaskParams { deadline: t.deadline, period: t.period }).collect(),
            None => s.tasks.to_vec(),
        };
        Ok((shape, params))
    }

    /// The join counting of these tasks' head jobs (the model's `RegionProgress`, the one the
    /// simulator's fork-join loops use), every head at region 0.
    pub fn progress(&self) -> Result<RegionProgress, RunError> {
        RegionProgress::new(self.width.clone()).map_err(|e| RunError::Internal(format!("fork-join shape: {e}")))
    }

    /// Number of thread slots (the run's tasks).
    pub fn slots(&self) -> usize {
        self.of_slot.len()
    }

    /// Number of fork-join tasks.
    pub fn tasks(&self) -> usize {
        self.width.len()
    }

    /// Number of regions of `task`.
    pub fn regions(&self, task: u32) -> u32 {
        self.width[task as usize].len() as u32
    }

    /// The (task, region) of thread slot `slot`.
    pub fn of_slot(&self, slot: u32) -> (u32, u32) {
        self.of_slot[slot as usize]
    }

    /// The thread slots of region `r` of `task`.
    pub fn region(&self, task: u32, r: u32) -> std::ops::Range<u32> {
        let b = self.base[task as usize][r as usize];
        b..b + self.width[task as usize][r as usize]
    }

    /// Every thread slot of `task`.
    pub fn all_slots(&self, task: u32) -> std::ops::Range<u32> {
        let b = &self.base[task as usize];
        let w = &self.width[task as usize];
        b[0]..b[b.len() - 1] + w[w.len() - 1]
    }
}

#[cfg(test)]
pub(crate) mod test_model;
