//! The one recorder of the event loops: every record a loop emits goes through
//! [`Recorder::emit`] into `rtsched_trace::MetricsBuilder` (which computes every metric) and,
//! when the trace is kept, into the trace; the dispatch records (a job starts, with its
//! migration; a job is preempted; a CPU idles, announced once) are written by the same three
//! helpers in all loops. [`DirtyCpus`] is the set of CPUs whose link changed, for the loops
//! that dispatch from a link-based policy.

use crate::error::SimError;
use rtsched_model::{TaskSet, Time};
use rtsched_trace::{Event, JobId, Metrics, MetricsBuilder, Record, Trace, TraceMeta};

/// "No CPU" (and "no task") in the loops' `u32` fields (and in [`Recorder::run`]'s `last`).
pub(crate) const NONE: u32 = u32::MAX;

pub(crate) struct Recorder {
    builder: MetricsBuilder,
    records: Option<Vec<Record>>,
    /// Per CPU: its idleness has been recorded and nothing ran since.
    idle_announced: Vec<bool>,
    /// Names the loop in the message of an inconsistent record (a simulator bug).
    who: &'static str,
}

impl Recorder {
    /// A recorder for `n` tasks on `m` CPUs up to `horizon`, keeping the trace if `trace`;
    /// `jobs` reserves the metrics' per-job rows. Every CPU starts idle (not announced).
    pub(crate) fn new(n: usize, m: u32, horizon: Time, trace: bool, jobs: usize, who: &'static str) -> Recorder {
        let mut builder = MetricsBuilder::new(n, m, horizon);
        builder.reserve_jobs(jobs);
        Recorder { builder, records: trace.then(Vec::new), idle_announced: vec![true; m as usize], who }
    }

    /// `SimConfig::keep_jobs`: without it the metrics keep no per-job rows (a job's statistics
    /// are folded into the totals once it completes). Before the first record.
    pub(crate) fn keep_jobs(mut self, keep: bool) -> Recorder {
        if !keep {
            let b = std::mem::replace(&mut self.builder, MetricsBuilder::new(0, 0, 0));
            self.builder = b.keep_jobs(false);
        }
        self
    }

    /// Ends the measurement at `t` instead of the planned horizon (see `setup::EarlyEnd`).
    pub(crate) fn shorten_horizon(&mut self, t: Time) -> Result<(), SimError> {
        self.builder
            .shorten_horizon(t)
            .map_err(|e| SimError::internal(format!("{} could not end early at {t} ns: {e}", self.who)))
    }

    /// Records kept so far (0 without a trace).
    #[inline]
    pub(crate) fn trace_len(&self) -> u64 {
        self.records.as_ref().map_or(0, |r| r.len() as u64)
    }

    /// Whether the trace is kept (loops then also record deadline misses as they pass).
    #[inline]
    pub(crate) fn tracing(&self) -> bool {
        self.records.is_some()
    }

    /// Records `event` at `time`.
    #[inline]
    pub(crate) fn emit(&mut self, time: Time, event: Event) -> Result<(), SimError> {
        let r = Record { time, event };
        self.builder.push(&r).map_err(|e| {
            SimError::internal(format!("{} emitted an inconsistent record at {time} ns: {e}", self.who))
        })?;
        if let Some(v) = &mut self.records {
            v.push(r);
        }
        Ok(())
    }

    /// `job` starts on `cpu` at `t`; it last ran on `last` (`NONE`: never, or not since it
    /// completed a job): a start elsewhere is a migration, recorded first.
    #[inline]
    pub(crate) fn run(&mut self, t: Time, cpu: u32, job: JobId, last: u32) -> Result<(), SimError> {
        if last != NONE && last != cpu {
            self.emit(t, Event::Migration { job, from: last, to: cpu })?;
        }
        self.idle_announced[cpu as usize] = false;
        self.emit(t, Event::Run { cpu, job })
    }

    /// `job` stops running on `cpu` at `t` without completing.
    #[inline]
    pub(crate) fn preempt(&mut self, t: Time, cpu: u32, job: JobId) -> Result<(), SimError> {
        self.emit(t, Event::Preempt { cpu, job })
    }

    /// `cpu` runs nothing at `t`: recorded once per idle stretch.
    #[inline]
    pub(crate) fn idle(&mut self, t: Time, cpu: u32) -> Result<(), SimError> {
        if self.idle_announced[cpu as usize] {
            return Ok(());
        }
        self.idle_announced[cpu as usize] = true;
        self.emit(t, Event::Idle { cpu })
    }

    /// The metrics, and the trace (of `ts` on `m` CPUs up to `horizon`) when it was kept.
    pub(crate) fn finish(self, ts: &TaskSet, m: u32, horizon: Time) -> (Metrics, Option<Trace>) {
        let metrics = self.builder.finish();
        (metrics, self.records.map(|records| Trace { meta: TraceMeta::new(ts, m, horizon), records }))
    }
}

/// CPUs whose link changed (or that freed up) since the last dispatch, each once, in the order
/// they were marked.
pub(crate) struct DirtyCpus {
    list: Vec<u32>,
    flag: Vec<bool>,
}

impl DirtyCpus {
    pub(crate) fn new(m: usize) -> DirtyCpus {
        DirtyCpus { list: Vec::with_capacity(m), flag: vec![false; m] }
    }

    #[inline]
    pub(crate) fn mark(&mut self, c: u32) {
        if !self.flag[c as usize] {
            self.flag[c as usize] = true;
            self.list.push(c);
        }
    }

    /// The list, for a policy to append the CPUs it dirtied (`Policy::drain_dirty`); those may
    /// repeat marked ones, which the dispatch passes tolerate.
    #[inline]
    pub(crate) fn list_mut(&mut self) -> &mut Vec<u32> {
        &mut self.list
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    #[inline]
    pub(crate) fn get(&self, k: usize) -> u32 {
        self.list[k]
    }

    /// Unmarks `c` (it has been dispatched).
    #[inline]
    pub(crate) fn unmark(&mut self, c: u32) {
        self.flag[c as usize] = false;
    }

    #[inline]
    pub(crate) fn clear(&mut self) {
        self.list.clear();
    }
}
