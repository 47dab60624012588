//! The summary of a finished run (module docs of [`super`]): the jobs due before the effective
//! end whose release handler had not run are released on a drain buffer, then the threads'
//! traces, the plugin's accounting and the clock calibration become the [`RunResult`].

use super::Shared;
use crate::backend::lifecycle::{missing_releases, DRAIN_CPU};
use crate::backend::result::{Promise, RunInfo, RunResult};
use crate::clock::{ClockPair, TscCalibration};
use crate::mechanism::{Ctx, Mechanism};
use crate::tracer::{RecKind, TraceBuffer};
use rtsched_model::TaskSet;

/// The [`RunResult`] of the run of `ts` under `mech` whose threads stopped with `traces` and
/// the largest host-interference gap `max_gap`; `cal_a` is the clock pair read before time
/// zero was fixed.
pub(super) fn summarize(
    sh: &Shared<'_>,
    ts: &TaskSet,
    mech: &Mechanism,
    cal_a: ClockPair,
    mut traces: Vec<TraceBuffer>,
    max_gap: u64,
) -> RunResult {
    let (cfg, plugin, life) = (sh.cfg, sh.plugin, sh.life);
    let (m, t0) = (cfg.cpus.len(), life.t0);
    let last_due =
        traces.iter().flat_map(|b| b.records()).filter(|r| r.kind == RecKind::JobRelease).map(|r| r.arg).max();
    let end = life.effective_end(last_due);
    // Jobs due before the end whose release handler had not run when the threads stopped
    // (a worker descheduled by the host near the end) are released now, as pending jobs:
    // every job due in [0, duration) is released, however late its handler ran.
    let missing = missing_releases(ts, t0, end, &plugin.accounting().released);
    // Room for everything a release handler records per job, not only the releases: its lock
    // waits, enqueue spans, reschedule requests and pushes (push/pull records a span per push
    // attempt, up to one per CPU); a buffer sized for the releases alone dropped records.
    let per_job = 32 + 8 * m;
    let mut drain = TraceBuffer::new(DRAIN_CPU, (missing as usize + plugin.release_domains()) * per_job + 1024);
    {
        let mut ctx = Ctx::new(m, &mut drain, &sh.signals);
        for d in 0..plugin.release_domains() {
            if plugin.next_release(d) < end {
                ctx.trace().record(RecKind::ReleaseStart, d as u32, 0, plugin.next_release(d));
                plugin.release(&mut ctx, d, end - 1);
                ctx.trace().record(RecKind::ReleaseEnd, d as u32, 0, 0);
                ctx.flush_wakes();
            }
        }
    }
    if !drain.records().is_empty() {
        traces.push(drain);
    }
    let cal = TscCalibration::from_pairs(cal_a, ClockPair::now());
    let acc = plugin.accounting();
    let mut info = RunInfo::of(mech, ts, m);
    if cfg.forkjoin.as_ref().is_some_and(|fj| fj.iter().any(|t| t.threads() > 1)) {
        // Threads of later regions are recorded as released with their job but wait for
        // their region's fork: the per-task invariant of the monitor does not apply.
        info.promise = Promise::Unobservable(
            "fork-join jobs: a thread is ready only once its region forks (RTWS paper, §III)".into(),
        );
    }
    if cfg.dag.as_ref().is_some_and(|d| d.iter().any(|t| t.nodes() > 1)) {
        // Nodes are recorded as released with their job but wait for their predecessors.
        info.promise = Promise::Unobservable(
            "DAG jobs: a node is ready only once its predecessors completed (Baruah et al., RTSS 2012)".into(),
        );
    }
    RunResult::build(ts, info, cfg, t0, end - t0, life.interrupted(), &cal, traces, acc, max_gap)
}
