//! A job model for the property tests of the mechanisms that execute parallel jobs (rtws,
//! push-pull): each task's completed jobs and the nodes of its current job completed, kept
//! from the completions alone, independent of the mechanisms' own bookkeeping
//! ([`super::Shape`], [`super::Progress`], the job books). A task is a DAG; a fork-join task is
//! given by its regions' widths and becomes the DAG whose every thread of region `r` precedes
//! every thread of region `r + 1` (written out here, not taken from the model's conversion).
//! Test builds only.

use crate::mechanism::Job;
use rtsched_policy::Prio;
use std::collections::HashSet;

/// A task's graph: its node count and edges between its nodes.
pub(crate) type Graph = (usize, Vec<(u32, u32)>);

/// The graphs the tests draw: the fork-join tasks of `widths` (threads per region), or — with
/// `dag` — per task as many nodes, with the forward edge `a → b` (`a < b`) present when bit
/// `(a·n + b) mod 64` of `bits[i mod len]` is set.
pub(crate) fn graphs(widths: &[Vec<usize>], dag: bool, bits: &[u64]) -> Vec<Graph> {
    widths
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let n: usize = w.iter().sum();
            let mut edges = Vec::new();
            if dag {
                let b = bits[i % bits.len()];
                for x in 0..n {
                    for y in x + 1..n {
                        if b >> ((x * n + y) % 64) & 1 == 1 {
                            edges.push((x as u32, y as u32));
                        }
                    }
                }
            } else {
                let mut first = 0;
                for r in w.windows(2) {
                    for a in 0..r[0] {
                        for b in 0..r[1] {
                            edges.push(((first + a) as u32, (first + r[0] + b) as u32));
                        }
                    }
                    first += r[0];
                }
            }
            (n, edges)
        })
        .collect()
}

/// The test's own view of each task.
pub(crate) struct Model {
    /// Per task: its first slot and node count.
    base: Vec<u32>,
    nodes: Vec<u32>,
    /// Per slot: its predecessors (slots).
    preds: Vec<Vec<u32>>,
    pub(crate) period: Vec<u64>,
    pub(crate) done_jobs: Vec<u32>,
    done_in_job: Vec<u32>,
    /// (slot, job) completed.
    pub(crate) completed: HashSet<(u32, u32)>,
}

impl Model {
    /// DAG tasks `graphs` with periods `period[i]` (implicit deadlines).
    pub(crate) fn of_graphs(graphs: &[Graph], period: Vec<u64>) -> Model {
        let (mut base, mut nodes, mut preds) = (Vec::new(), Vec::new(), Vec::new());
        for (n, edges) in graphs {
            let b = preds.len() as u32;
            base.push(b);
            nodes.push(*n as u32);
            preds.extend(std::iter::repeat_with(Vec::new).take(*n));
            for &(u, v) in edges {
                preds[(b + v) as usize].push(b + u);
            }
        }
        let k = graphs.len();
        Model { base, nodes, preds, period, done_jobs: vec![0; k], done_in_job: vec![0; k], completed: HashSet::new() }
    }

    fn task(&self, s: u32) -> usize {
        self.base.iter().rposition(|&b| b <= s).expect("slot in range")
    }

    /// `j` may be handed out: its task's current job, not completed, every predecessor of the
    /// same job completed.
    pub(crate) fn handed(&self, j: &Job) -> Result<(), String> {
        let i = self.task(j.task());
        if j.seq() != self.done_jobs[i] {
            return Err(format!("{j:?}: task {i} is at job {}", self.done_jobs[i]));
        }
        if self.completed.contains(&(j.task(), j.seq())) {
            return Err(format!("{j:?} handed out after it completed"));
        }
        if let Some(p) = self.preds[j.task() as usize].iter().find(|&&p| !self.completed.contains(&(p, j.seq()))) {
            return Err(format!("{j:?} handed out before its predecessor {p} completed"));
        }
        Ok(())
    }

    pub(crate) fn complete(&mut self, j: &Job) {
        let i = self.task(j.task());
        self.completed.insert((j.task(), j.seq()));
        self.done_in_job[i] += 1;
        if self.done_in_job[i] == self.nodes[i] {
            self.done_in_job[i] = 0;
            self.done_jobs[i] += 1;
        }
    }

    /// The ready nodes at `now` (every job due by `now` released, from 0): the oldest pending
    /// job's nodes not completed whose predecessors all completed, as EDF priorities.
    pub(crate) fn ready(&self, now: u64) -> Vec<Prio> {
        let mut out = Vec::new();
        for i in 0..self.nodes.len() {
            let released = (now / self.period[i] + 1) as u32;
            let seq = self.done_jobs[i];
            if released <= seq {
                continue;
            }
            let deadline = seq as u64 * self.period[i] + self.period[i];
            for s in self.base[i]..self.base[i] + self.nodes[i] {
                let ready = self.preds[s as usize].iter().all(|&p| self.completed.contains(&(p, seq)));
                if ready && !self.completed.contains(&(s, seq)) {
                    out.push(Prio { key: deadline, task: s, job: seq });
                }
            }
        }
        out.sort_unstable();
        out
    }
}
