//! The record vocabulary: a compact `Copy` record with an integer-ns timestamp.

use rtsched_model::{TaskSet, Time};
use serde::{Deserialize, Serialize};

/// A job: task index and 0-based job sequence number of that task (release order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct JobId {
    pub task: u32,
    pub job: u32,
}

/// Which overhead an [`Event::Overhead`] sample measures (seed 001 §2, seed 000 App. B).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverheadKind {
    /// Interrupt handling that releases jobs (Δrel).
    Release,
    /// Selecting the next job (Δsch).
    Schedule,
    /// Switching stacks and registers (Δcxs).
    ContextSwitch,
    /// Inter-processor interrupt latency (Δipi).
    Ipi,
    /// Periodic timer tick handling.
    Tick,
    /// Cache-related preemption/migration delay (Δcpd).
    Cpmd,
    /// Anything else the runtime measures, unnamed.
    Other,
    /// A named term of the run (`TraceMeta::terms[i]`): the runtime's own terms (release
    /// latency Δev, lock waits, plugin timers) and a mechanism's (e.g. Δreq, Δdsp of seed 000).
    Term(u16),
}

impl OverheadKind {
    pub const ALL: [OverheadKind; 7] = [
        OverheadKind::Release,
        OverheadKind::Schedule,
        OverheadKind::ContextSwitch,
        OverheadKind::Ipi,
        OverheadKind::Tick,
        OverheadKind::Cpmd,
        OverheadKind::Other,
    ];
    /// The name of a fixed kind (`term` for [`OverheadKind::Term`]: its name is in the trace's
    /// meta, see [`Trace::term_name`]).
    pub fn name(self) -> &'static str {
        match self {
            OverheadKind::Release => "release",
            OverheadKind::Schedule => "schedule",
            OverheadKind::ContextSwitch => "context_switch",
            OverheadKind::Ipi => "ipi",
            OverheadKind::Tick => "tick",
            OverheadKind::Cpmd => "cpmd",
            OverheadKind::Other => "other",
            OverheadKind::Term(_) => "term",
        }
    }

    /// A dense index: the fixed kinds in [`OverheadKind::ALL`] order, then the terms.
    #[inline]
    pub fn index(self) -> usize {
        match self {
            OverheadKind::Term(i) => OverheadKind::ALL.len() + i as usize,
            k => OverheadKind::ALL.iter().position(|&x| x == k).unwrap_or(0),
        }
    }
    /// The fixed kind named `s`.
    pub fn from_name(s: &str) -> Option<OverheadKind> {
        OverheadKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// What happened. CPUs are 0-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Event {
    /// The job is released; `deadline` is its absolute deadline.
    Release { job: JobId, deadline: Time },
    /// The job starts (first time) or resumes executing on `cpu`.
    Run { cpu: u32, job: JobId },
    /// The job stops executing on `cpu` before completing.
    Preempt { cpu: u32, job: JobId },
    /// The job completes on `cpu` (and leaves it).
    Complete { cpu: u32, job: JobId },
    /// The job's absolute deadline passed (at this record's time) before it completed.
    DeadlineMiss { job: JobId },
    /// The job resumes on `to` after last running on `from` (emitted just before its `Run`).
    Migration { job: JobId, from: u32, to: u32 },
    /// `cpu` becomes idle.
    Idle { cpu: u32 },
    /// Work stealing (RTWS, seed 003 Rule E): the idle CPU `to` takes the job (a thread) from
    /// the local queue of CPU `from`; emitted just before its `Run` on `to`.
    Steal { job: JobId, from: u32, to: u32 },
    /// An overhead sample (runtime): `duration` ns of `kind` on `cpu`, starting at the time.
    Overhead { cpu: u32, kind: OverheadKind, duration: Time },
    /// The job stops executing on `cpu` and self-suspends (LITMUS^RT's `ST_BLOCK`): it is not
    /// ready until its `Resume`.
    Suspend { cpu: u32, job: JobId },
    /// The self-suspended job becomes ready again (LITMUS^RT's `ST_RESUME`).
    Resume { job: JobId },
}

/// One trace record: 32 bytes, `Copy`, no allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Record {
    pub time: Time,
    pub event: Event,
}

impl Record {
    #[inline]
    pub fn new(time: Time, event: Event) -> Record {
        Record { time, event }
    }
}

/// A task's parameters as the trace describes them (for exports that need them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub wcet: Time,
    pub deadline: Time,
    pub period: Time,
}

/// What a trace covers: the platform size, the horizon, the tasks, and the names of its
/// overhead terms beyond the fixed kinds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceMeta {
    pub m: u32,
    /// Jobs released in `[0, horizon)` count; metrics are taken at the horizon.
    pub horizon: Time,
    pub tasks: Vec<TaskInfo>,
    /// `terms[i]` names [`OverheadKind::Term`]`(i)` (empty for simulator traces).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terms: Vec<String>,
}

impl TraceMeta {
    pub fn new(ts: &TaskSet, m: u32, horizon: Time) -> TraceMeta {
        TraceMeta {
            m,
            horizon,
            tasks: ts
                .iter()
                .map(|t| TaskInfo { name: t.name.clone(), wcet: t.wcet, deadline: t.deadline, period: t.period })
                .collect(),
            terms: Vec::new(),
        }
    }
}

/// Records in time order plus what they cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    pub meta: TraceMeta,
    pub records: Vec<Record>,
}

impl Trace {
    /// The name of an overhead kind in this trace: a fixed kind's name, or a term's from the
    /// meta (`term<i>` if the meta lacks it).
    pub fn term_name(&self, kind: OverheadKind) -> String {
        match kind {
            OverheadKind::Term(i) => self.meta.terms.get(i as usize).cloned().unwrap_or_else(|| format!("term{i}")),
            k => k.name().to_string(),
        }
    }

    /// The kind named `name` in this trace (a fixed kind or one of its terms).
    pub fn kind_named(&self, name: &str) -> Option<OverheadKind> {
        OverheadKind::from_name(name)
            .filter(|k| !matches!(k, OverheadKind::Term(_)))
            .or_else(|| self.meta.terms.iter().position(|t| t == name).map(|i| OverheadKind::Term(i as u16)))
    }

    /// Every overhead sample (ns) by term name, in record order — all of them, the horizon
    /// does not apply (a sample is a measurement, not a schedule event).
    pub fn overhead_samples(&self) -> std::collections::BTreeMap<String, Vec<Time>> {
        let mut out: std::collections::BTreeMap<String, Vec<Time>> = std::collections::BTreeMap::new();
        for r in &self.records {
            if let Event::Overhead { kind, duration, .. } = r.event {
                out.entry(self.term_name(kind)).or_default().push(duration);
            }
        }
        out
    }

    /// Every overhead sample by term name with its CPU and start, in record order (the
    /// horizon does not apply, as in [`overhead_samples`](Self::overhead_samples)).
    pub fn overhead_samples_at(&self) -> std::collections::BTreeMap<String, Vec<crate::stats::Sample>> {
        let mut out: std::collections::BTreeMap<String, Vec<crate::stats::Sample>> = Default::default();
        for r in &self.records {
            if let Event::Overhead { cpu, kind, duration } = r.event {
                out.entry(self.term_name(kind)).or_default().push(crate::stats::Sample {
                    cpu,
                    start: r.time,
                    duration,
                });
            }
        }
        out
    }

    /// The host interference this trace records (the samples of
    /// [`INTERFERENCE_TERM`](crate::stats::INTERFERENCE_TERM)).
    pub fn interference(&self) -> crate::stats::Interference {
        let all = self.overhead_samples_at();
        crate::stats::Interference::new(all.get(crate::stats::INTERFERENCE_TERM).map_or(&[], |v| v.as_slice()))
    }

    /// The statistics of every overhead term under the measurement protocol
    /// ([`OverheadStats`](crate::stats::OverheadStats): samples overlapping host interference
    /// on their CPU discarded, the outlier rule on the maximum); the interference pseudo-term
    /// itself unfiltered (its own samples never disturb it).
    pub fn overhead_stats(&self) -> std::collections::BTreeMap<String, crate::stats::OverheadStats> {
        let all = self.overhead_samples_at();
        let none = crate::stats::Interference::default();
        let host =
            crate::stats::Interference::new(all.get(crate::stats::INTERFERENCE_TERM).map_or(&[], |v| v.as_slice()));
        all.iter()
            .map(|(k, v)| {
                let i = if k == crate::stats::INTERFERENCE_TERM { &none } else { &host };
                (k.clone(), crate::stats::OverheadStats::of(v, i))
            })
            .collect()
    }

    /// Recomputes every metric from the records (the only way metrics are computed).
    pub fn metrics(&self) -> Result<crate::Metrics, rtsched_model::ModelError> {
        let mut b = crate::MetricsBuilder::new(self.meta.tasks.len(), self.meta.m, self.meta.horizon);
        for r in &self.records {
            b.push(r)?;
        }
        Ok(b.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn record_is_compact() {
        assert!(std::mem::size_of::<Record>() <= 32, "{}", std::mem::size_of::<Record>());
    }
}
