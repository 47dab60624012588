//! Exact node-level simulation of sporadic DAG tasks (`rtsched_model::dag`; the model of
//! Baruah, Bonifaci, Marchetti-Spaccamela, Stougie & Wiese, RTSS 2012). Design note:
//! `docs/dag.md`, "Simulator".
//!
//! A release of DAG task `i` releases one instance of every node of its graph; a node instance
//! is **ready** when every predecessor of the same job has completed (a source at once), and
//! the job completes with its last node. Jobs of a task execute in release order, as everywhere
//! in this simulator: a job released while its predecessor is unfinished waits (its nodes are
//! released and counted, but its sources become ready only when the predecessor completes).
//! With constrained deadlines and no miss, a job always completes before its successor's
//! release, so this rule changes nothing for a schedulable set.
//!
//! Scheduling is **work-conserving and global over ready node instances** inside a *cluster*
//! of CPUs, driven by the one link-based [`Gedf`] policy of `crates/policy`: in each cluster the
//! `min(m_c, r)` highest-priority of its `r` ready node instances run at every instant. A node
//! instance's priority is a [`Prio`] made by the one [`PriorityRule`]: the key (the job's
//! absolute deadline under EDF, the task's rank under FP), then the DAG task index, then
//! `seq · n_i + k` for node `k` of job `seq` — so ties fall to the task index, then the earlier
//! release, then the smaller node index.
//!
//! * `gedf` ([`Scheduler::Gedf`]): one cluster of all `m` CPUs, EDF keys.
//! * `gfp` ([`Scheduler::Gfp`]): one cluster, task-level fixed priorities (`ranks[task]`, DM by
//!   default, from the sequential view `(vol_i, D_i, T_i)`).
//! * `federated` ([`Scheduler::Federated`], the plan of
//!   `rtsched_analysis::dag::federated::federated`; Li, Chen, Agrawal, Lu & Gill, ECRTS 2014):
//!   each high-utilization task alone on its dedicated cores (a cluster, greedy: EDF keys over
//!   its own nodes), and each light core a cluster of one CPU running EDF over its tasks. On one
//!   CPU a job's nodes run one at a time, smallest ready index first, and a job resumes the node
//!   it was preempted in (no node of its own became ready meanwhile), which is exactly the job
//!   executed sequentially in the model's topological order (Kahn, smallest ready index first):
//!   the sequential task `(vol_i, D_i, T_i)` under preemptive EDF, as the analysis assumes.
//!   Light core `k` is CPU `h + k`, `h` the end of the last dedicated range.
//!
//! At each instant: (1) every node completion (successors whose last predecessor this was
//! become ready; a job's last node completes it and makes its task's next released job ready);
//! (2) releases; (3) dispatch in every cluster (preemptions first, then runs). At the horizon
//! only completions are processed, as in the fork-join loops.
//!
//! The trace names the node: trace task `base_i + k` is node `k` of DAG task `i` (`base_i` the
//! nodes of the tasks before it), named `NAME[k]` (`T{i}[k]` without a name), and trace job
//! `seq` of it is node `k` of job `seq`; so the Gantt chart labels a box `NAME[k].seq` and has
//! one row of release and deadline marks per node. Metrics from the trace (preemptions,
//! migrations, context switches) are node-level; response times, misses and the per-job rows
//! are DAG-job-level, from the loop's own book.

use crate::config::{ExecTimes, Scheduler, SimConfig};
use crate::error::SimError;
use crate::forkjoin::{due, next_instant, Releases};
use crate::recorder::{DirtyCpus, Recorder, NONE};
use crate::setup::{check_max_jobs, setup, Draw, EarlyEnd, Setup};
use rtsched_analysis::dag::federated::FederatedPlan;
use rtsched_model::dag::DagSet;
use rtsched_model::{ModelError, Time};
use rtsched_policy::{invariant, Gedf, Policy, Prio, PriorityRule};
use rtsched_trace::{Event, JobId, JobStats};
use std::cmp::Reverse;
use std::collections::{BTreeSet, VecDeque};

mod result;

pub use result::{node_task_set, DagResult, DagTaskStats, NodeNumbering};

struct NodeRt {
    rem: Time,
    preds: u32,
    last_cpu: u32,
}

struct JobRt {
    task: u32,
    seq: u32,
    release: Time,
    deadline: Time,
    start: Option<Time>,
    finish: Option<Time>,
    left: u32,
    executed: Time,
    preemptions: u32,
    migrations: u32,
    first_cpu: Option<u32>,
    last_cpu: Option<u32>,
    /// Its node instances (dropped when the job completes).
    nodes: Vec<NodeRt>,
}

struct Cluster {
    first: u32,
    m: u32,
    rule: PriorityRule,
    policy: Gedf,
    /// Ready (incomplete, predecessors done, job at its task's head) node instances, kept only
    /// for the invariant check.
    ready: Option<BTreeSet<Prio>>,
}

/// The clusters of `sched` over `set` on `m` CPUs, and each task's cluster. Errors name the
/// field: a scheduler that does not schedule DAGs, ranks of the wrong length, a plan that does
/// not fit `m` or does not place every task exactly once.
fn clusters(set: &DagSet, sched: &Scheduler, m: u32, check: bool) -> Result<(Vec<Cluster>, Vec<u32>), ModelError> {
    let n = set.len();
    let one = |first: u32, m: u32, rule: PriorityRule| Cluster {
        first,
        m,
        rule,
        policy: Gedf::new(m as usize),
        ready: check.then(BTreeSet::new),
    };
    match sched {
        Scheduler::Gedf => Ok((vec![one(0, m, PriorityRule::Edf)], vec![0; n])),
        Scheduler::Gfp { ranks, .. } => {
            if ranks.len() != n {
                return Err(crate::engine::ranks_count_error(ranks.len(), n).into());
            }
            Ok((vec![one(0, m, PriorityRule::Fixed(ranks.clone()))], vec![0; n]))
        }
        Scheduler::Federated(plan) => {
            let bad = |why: String| ModelError::field("federated", why);
            let mut of = vec![u32::MAX; n];
            let mut out = Vec::new();
            let mut used = vec![false; m as usize];
            let place = |of: &mut Vec<u32>, i: usize, c: u32| -> Result<(), ModelError> {
                if i >= n {
                    return Err(bad(format!("the plan places task {i}, but the set has {n} tasks")));
                }
                if of[i] != u32::MAX {
                    return Err(bad(format!("the plan places task {i} twice")));
                }
                of[i] = c;
                Ok(())
            };
            let mut end = 0u32;
            for (i, r) in &plan.high {
                if r.start >= r.end || r.end > m {
                    return Err(bad(format!("task {i}: dedicated CPUs {}..{} are not within 0..{m}", r.start, r.end)));
                }
                for c in r.clone() {
                    if std::mem::replace(&mut used[c as usize], true) {
                        return Err(bad(format!("task {i}: CPU {c} is dedicated twice")));
                    }
                }
                place(&mut of, *i, out.len() as u32)?;
                out.push(one(r.start, r.end - r.start, PriorityRule::Edf));
                end = end.max(r.end);
            }
            if end as u64 + plan.low.len() as u64 > m as u64 {
                return Err(bad(format!("{} light cores after CPU {end} do not fit m = {m}", plan.low.len())));
            }
            for (k, core) in plan.low.iter().enumerate() {
                let c = out.len() as u32;
                for &i in core {
                    place(&mut of, i, c)?;
                }
                out.push(one(end + k as u32, 1, PriorityRule::Edf));
            }
            if let Some(i) = of.iter().position(|&c| c == u32::MAX) {
                return Err(bad(format!("the plan does not place task {i}")));
            }
            Ok((out, of))
        }
        Scheduler::Rtws => Err(ModelError::field(
            "scheduler",
            format!(
                "{} simulates sequential and fork-join task sets, not general DAG tasks (docs/dag.md); a DAG task \
                 set runs under gedf, gfp or federated",
                Scheduler::Rtws.name()
            ),
        )),
        other => Err(ModelError::field(
            "scheduler",
            format!("{} schedules sequential tasks; a DAG task set runs under gedf, gfp or federated", other.name()),
        )),
    }
}

struct Sim<'a> {
    set: &'a DagSet,
    cfg: &'a SimConfig,
    numbering: NodeNumbering,
    clusters: Vec<Cluster>,
    cluster_of_task: Vec<u32>,
    cluster_of_cpu: Vec<u32>,
    jobs: Vec<JobRt>,
    job_of: Vec<Vec<u32>>,
    backlog: Vec<VecDeque<u32>>,
    next_seq: Vec<u32>,
    /// Per CPU: the node instance it runs (job index, node), since when, until when.
    sched: Vec<Option<(u32, u32)>>,
    since: Vec<Time>,
    finish_at: Vec<Time>,
    dirty: DirtyCpus,
    releases: Releases,
    rec: Recorder,
    draw: Draw,
    horizon: Time,
    early: EarlyEnd,
    events: u64,
    node_events: u64,
    /// Node instances made ready during this instant's completions; handed to the policies
    /// only after every completion of the instant (as in `fj_gedf`).
    newly_ready: Vec<(u32, u32)>,
}

impl Sim<'_> {
    fn prio(&self, j: u32, k: u32) -> Prio {
        let job = &self.jobs[j as usize];
        let n = self.set[job.task as usize].nodes() as u32;
        let c = &self.clusters[self.cluster_of_task[job.task as usize] as usize];
        c.rule.prio(job.task, job.seq * n + k, job.deadline)
    }

    fn of_prio(&self, p: Prio) -> (u32, u32) {
        let n = self.set[p.task as usize].nodes() as u32;
        (self.job_of[p.task as usize][(p.job / n) as usize], p.job % n)
    }

    fn jid(&self, j: u32, k: u32) -> JobId {
        let job = &self.jobs[j as usize];
        JobId { task: self.numbering.trace_task(job.task as usize, k), job: job.seq }
    }

    fn make_ready(&mut self, list: &[(u32, u32)]) {
        for &(j, k) in list {
            let p = self.prio(j, k);
            let c = &mut self.clusters[self.cluster_of_task[self.jobs[j as usize].task as usize] as usize];
            if let Some(r) = &mut c.ready {
                r.insert(p);
            }
            c.policy.job_ready(p);
        }
    }

    /// The sources of job `j` (it has become its task's head).
    fn sources(&self, j: u32) -> Vec<(u32, u32)> {
        let job = &self.jobs[j as usize];
        (0..job.nodes.len() as u32).filter(|&k| job.nodes[k as usize].preds == 0).map(|k| (j, k)).collect()
    }

    fn release(&mut self, t: Time, i: usize) -> Result<(), SimError> {
        let task = &self.set[i];
        let seq = self.next_seq[i];
        self.next_seq[i] =
            seq.checked_add(1).ok_or_else(|| ModelError::task_field(i, "period", "more than 2^32 jobs of one task"))?;
        let j = u32::try_from(self.jobs.len()).map_err(|_| ModelError::field("horizon", "more than 2^32 DAG jobs"))?;
        let preds = task.predecessor_counts();
        let nodes: Vec<NodeRt> = task
            .wcets()
            .iter()
            .enumerate()
            .map(|(k, &c)| NodeRt { rem: self.draw.exec(&self.cfg.exec, i, c), preds: preds[k], last_cpu: NONE })
            .collect();
        let deadline = t + task.deadline();
        self.jobs.push(JobRt {
            task: i as u32,
            seq,
            release: t,
            deadline,
            start: None,
            finish: None,
            left: nodes.len() as u32,
            executed: 0,
            preemptions: 0,
            migrations: 0,
            first_cpu: None,
            last_cpu: None,
            nodes,
        });
        self.job_of[i].push(j);
        for k in 0..task.nodes() as u32 {
            let jid = self.jid(j, k);
            self.rec.emit(t, Event::Release { job: jid, deadline })?;
        }
        self.node_events += task.nodes() as u64;
        self.backlog[i].push_back(j);
        if self.backlog[i].len() == 1 {
            let s = self.sources(j);
            self.make_ready(&s);
        }
        let gap = self.draw.gap(&self.cfg.arrivals, task.period());
        self.releases.push(Reverse((t + gap, i as u32)));
        Ok(())
    }

    fn complete(&mut self, t: Time, c: usize) -> Result<(), SimError> {
        let (j, k) = self.sched[c].take().ok_or_else(|| SimError::internal("a CPU completed but ran nothing"))?;
        let jid = self.jid(j, k);
        self.rec.emit(t, Event::Complete { cpu: c as u32, job: jid })?;
        self.node_events += 1;
        let p = self.prio(j, k);
        let cl = &mut self.clusters[self.cluster_of_cpu[c] as usize];
        if let Some(r) = &mut cl.ready {
            r.remove(&p);
        }
        cl.policy.job_complete(c - cl.first as usize);
        self.finish_at[c] = Time::MAX;
        self.dirty.mark(c as u32);
        let task = self.jobs[j as usize].task as usize;
        let job = &mut self.jobs[j as usize];
        job.executed += t - self.since[c];
        job.nodes[k as usize].rem = 0;
        job.left -= 1;
        for &s in self.set[task].successors(k) {
            let node = &mut job.nodes[s as usize];
            node.preds -= 1;
            if node.preds == 0 {
                self.newly_ready.push((j, s));
            }
        }
        if job.left == 0 {
            job.finish = Some(t);
            job.last_cpu = Some(c as u32);
            job.nodes = Vec::new();
            let b = &mut self.backlog[task];
            b.pop_front();
            if let Some(&next) = b.front() {
                let s = self.sources(next);
                self.newly_ready.extend(s);
            }
        }
        Ok(())
    }

    /// Makes every CPU whose link changed (or that freed up) run its cluster's linked node.
    fn dispatch(&mut self, t: Time) -> Result<(), SimError> {
        for cl in &mut self.clusters {
            let (first, dirty) = (cl.first, &mut self.dirty);
            cl.policy.drain_dirty_with(|c| dirty.mark(first + c));
        }
        for x in 0..self.dirty.len() {
            let c = self.dirty.get(x) as usize;
            let want = self.linked(c);
            if let Some((j, k)) = self.sched[c] {
                if want != Some((j, k)) {
                    let jid = self.jid(j, k);
                    self.rec.preempt(t, c as u32, jid)?;
                    let job = &mut self.jobs[j as usize];
                    job.nodes[k as usize].rem = self.finish_at[c] - t;
                    job.executed += t - self.since[c];
                    job.preemptions += 1;
                    self.sched[c] = None;
                    self.finish_at[c] = Time::MAX;
                }
            }
        }
        for x in 0..self.dirty.len() {
            let c = self.dirty.get(x) as usize;
            self.dirty.unmark(c as u32);
            if self.sched[c].is_some() {
                continue;
            }
            match self.linked(c) {
                Some((j, k)) => {
                    let jid = self.jid(j, k);
                    let job = &mut self.jobs[j as usize];
                    let node = &mut job.nodes[k as usize];
                    let last = node.last_cpu;
                    node.last_cpu = c as u32;
                    let rem = node.rem;
                    if last != NONE && last != c as u32 {
                        job.migrations += 1;
                    }
                    job.start.get_or_insert(t);
                    job.first_cpu.get_or_insert(c as u32);
                    self.rec.run(t, c as u32, jid, last)?;
                    self.sched[c] = Some((j, k));
                    self.since[c] = t;
                    self.finish_at[c] = t + rem;
                }
                None => self.rec.idle(t, c as u32)?,
            }
        }
        self.dirty.clear();
        Ok(())
    }

    /// The node instance linked to CPU `c` (none on a CPU outside every cluster).
    fn linked(&self, c: usize) -> Option<(u32, u32)> {
        let cl = self.clusters.get(self.cluster_of_cpu[c] as usize)?;
        cl.policy.linked(c - cl.first as usize).map(|p| self.of_prio(p))
    }

    /// In every cluster the running node instances are exactly the `min(m_c, r)` highest-priority
    /// of its `r` ready ones (from the simulator's own ready sets, not the policy's queues).
    fn check(&self, t: Time) -> Result<(), SimError> {
        for cl in &self.clusters {
            let Some(ready) = &cl.ready else { return Ok(()) };
            let cpus = cl.first as usize..(cl.first + cl.m) as usize;
            let running: Vec<Option<Prio>> = self.sched[cpus].iter().map(|x| x.map(|(j, k)| self.prio(j, k))).collect();
            let ready: Vec<Prio> = ready.iter().copied().collect();
            invariant::check_global(cl.m as usize, &ready, &running).map_err(|e| {
                SimError::internal(format!("invariant violated at {t} ns (DAG nodes, CPUs from {}): {e}", cl.first))
            })?;
        }
        Ok(())
    }

    fn run(&mut self) -> Result<(), SimError> {
        let mut h = self.horizon;
        let m = self.sched.len();
        loop {
            let Some(t) = next_instant(&self.finish_at, &self.releases, h) else { return Ok(()) };
            if self.early.check(self.cfg, t, h, self.events, &mut self.rec)? {
                h = t;
                self.horizon = t;
            }
            for c in 0..m {
                if self.finish_at[c] == t {
                    self.events += 1;
                    self.complete(t, c)?;
                }
            }
            if t == h {
                return Ok(());
            }
            let fresh = std::mem::take(&mut self.newly_ready);
            self.make_ready(&fresh);
            while let Some(i) = due(&mut self.releases, t) {
                self.events += 1;
                self.release(t, i)?;
            }
            self.dispatch(t)?;
            if self.cfg.check_invariants {
                self.check(t)?;
            }
        }
    }
}

/// Simulates the DAG set `set` at node level under `sched` (`Gedf`, `Gfp` or `Federated`) on
/// `cfg.m` CPUs from time 0 to the horizon (default: one hyperperiod of the periods, capped by
/// `cfg.horizon_cap`); see the module doc.
///
/// Releases and execution times come from `cfg` as for sequential tasks: periodic (with
/// offsets per DAG task) or sporadic arrivals, every node at its WCET or (`UniformFraction`)
/// each node instance drawn in `[⌈f·C⌉, C]` (early completion). Errors (never panics): the
/// parameters `simulate` rejects, a scheduler that is not a DAG scheduler, a federated plan that
/// does not fit, `ExecTimes::Fixed` (per task, not per node), overheads (not injected for
/// DAGs), more than 2^32 node instances of one task or a trace above `max_trace_records`.
pub fn simulate_dag(set: &DagSet, sched: &Scheduler, cfg: &SimConfig) -> Result<DagResult, SimError> {
    if cfg.overheads.is_some() {
        return Err(ModelError::field("overheads", "overhead injection is not supported for DAG task sets").into());
    }
    if matches!(cfg.exec, ExecTimes::Fixed(_)) {
        return Err(ModelError::field(
            "exec",
            "DAG nodes execute their WCETs or a drawn fraction of them (ExecTimes::Wcet or UniformFraction)",
        )
        .into());
    }
    let seq = set.sequential()?;
    let Setup { offsets, horizon, capped, expected } = setup(&seq, cfg)?;
    check_max_jobs(expected as u128, cfg)?;
    let (clusters, cluster_of_task) = clusters(set, sched, cfg.m, cfg.check_invariants)?;
    // Node instances: per task, its jobs times its nodes must number a u32 (the priority's job
    // field), and a kept trace holds at least three records per node instance.
    let mut instances: u128 = 0;
    for (i, t) in set.iter().enumerate() {
        let jobs = if offsets[i] < horizon { ((horizon - offsets[i] - 1) / t.period()) as u128 + 1 } else { 0 };
        let nodes = jobs * t.nodes() as u128;
        if nodes > u32::MAX as u128 {
            return Err(ModelError::task_field(
                i,
                "nodes",
                format!("{jobs} jobs of {} nodes are above 2^32 node instances; shorten the horizon", t.nodes()),
            )
            .in_task(i, t.name())
            .into());
        }
        instances += nodes;
    }
    if cfg.record_trace && 3 * instances > cfg.max_trace_records as u128 {
        return Err(ModelError::field(
            "horizon",
            format!(
                "keeping the trace of {instances} node instances needs at least {} records, above max_trace_records = {}; \
                 shorten the horizon or ask for no trace output",
                3 * instances,
                cfg.max_trace_records
            ),
        )
        .into());
    }
    let node_ts = node_task_set(set)?;
    let (m, n) = (cfg.m as usize, set.len());
    let mut cluster_of_cpu = vec![u32::MAX; m];
    for (x, cl) in clusters.iter().enumerate() {
        for c in cl.first..cl.first + cl.m {
            cluster_of_cpu[c as usize] = x as u32;
        }
    }
    let mut sim = Sim {
        set,
        cfg,
        numbering: NodeNumbering::of(set),
        clusters,
        cluster_of_task,
        cluster_of_cpu,
        jobs: Vec::with_capacity(expected.min(1 << 20) as usize),
        job_of: vec![Vec::new(); n],
        backlog: vec![VecDeque::new(); n],
        next_seq: vec![0; n],
        sched: vec![None; m],
        since: vec![0; m],
        finish_at: vec![Time::MAX; m],
        dirty: DirtyCpus::new(m),
        releases: (0..n).map(|i| Reverse((offsets[i], i as u32))).collect(),
        rec: Recorder::new(node_ts.len(), cfg.m, horizon, cfg.record_trace, 0, "the DAG simulator").keep_jobs(false),
        draw: Draw::new(cfg),
        horizon,
        early: EarlyEnd::new(),
        events: 0,
        node_events: 0,
        newly_ready: Vec::new(),
    };
    // CPUs outside every cluster (a federated plan that leaves some unused) stay idle.
    for c in 0..m {
        sim.dirty.mark(c as u32);
    }
    sim.run()?;
    let horizon = sim.horizon;
    let capped = std::mem::replace(&mut sim.early, EarlyEnd::new()).message(capped);
    let (node_metrics, trace) = sim.rec.finish(&node_ts, cfg.m, horizon);
    // Execution of the node instances still running at the horizon.
    for c in 0..m {
        if let Some((j, _)) = sim.sched[c] {
            sim.jobs[j as usize].executed += horizon - sim.since[c];
        }
    }
    let per_job: Vec<JobStats> = sim
        .jobs
        .iter()
        .filter(|j| j.release < horizon)
        .map(|j| JobStats {
            task: j.task,
            job: j.seq,
            release: j.release,
            deadline: j.deadline,
            start: j.start,
            finish: j.finish,
            first_cpu: j.first_cpu,
            last_cpu: j.last_cpu,
            executed: j.executed,
            preemptions: j.preemptions,
            migrations: j.migrations,
        })
        .collect();
    let mean = |v: &[Time]| (!v.is_empty()).then(|| v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64);
    let mut per_task = Vec::with_capacity(n);
    for (i, t) in set.iter().enumerate() {
        let mine: Vec<&JobStats> = per_job.iter().filter(|j| j.task == i as u32).collect();
        let rts: Vec<Time> = mine.iter().filter_map(|j| j.response_time()).collect();
        per_task.push(DagTaskStats {
            task: i as u32,
            name: t.name().map(str::to_string),
            nodes: t.nodes() as u32,
            jobs: mine.len() as u64,
            completed: rts.len() as u64,
            deadline_misses: mine.iter().filter(|j| j.missed(horizon)).count() as u64,
            max_response_time_ns: rts.iter().copied().max(),
            mean_response_time_ns: mean(&rts),
        });
    }
    let rts: Vec<Time> = per_job.iter().filter_map(JobStats::response_time).collect();
    let completed = rts.len() as u64;
    let pending: u64 = sim.backlog.iter().map(|b| b.len() as u64).sum();
    if cfg.check_invariants && completed + pending != per_job.len() as u64 {
        return Err(SimError::internal(format!(
            "accounting mismatch: {} DAG jobs released, {completed} completed, {pending} in the backlogs",
            per_job.len()
        )));
    }
    let federated = match sched {
        Scheduler::Federated(plan) => Some(plan_json(plan)),
        _ => None,
    };
    Ok(DagResult {
        scheduler: sched.name(),
        m: cfg.m,
        horizon,
        horizon_capped: capped.is_some(),
        horizon_message: capped,
        jobs: per_job.len() as u64,
        completed,
        pending: per_job.len() as u64 - completed,
        deadline_misses: per_job.iter().filter(|j| j.missed(horizon)).count() as u64,
        max_tardiness_ns: per_job.iter().filter_map(|j| j.tardiness(horizon)).max().unwrap_or(0),
        max_response_time_ns: rts.iter().copied().max(),
        mean_response_time_ns: mean(&rts),
        nodes: node_metrics.jobs,
        nodes_completed: node_metrics.completed,
        node_events: sim.node_events,
        preemptions: node_metrics.preemptions,
        migrations: node_metrics.migrations,
        context_switches: node_metrics.context_switches,
        events: sim.events,
        per_task,
        federated,
        per_job,
        node_metrics,
        trace,
    })
}

fn plan_json(plan: &FederatedPlan) -> serde_json::Value {
    let light_first = plan.high.iter().map(|(_, r)| r.end).max().unwrap_or(0);
    serde_json::json!({
        "high": plan.high.iter().map(|(i, r)| serde_json::json!({"task": i, "cpus": [r.start, r.end]})).collect::<Vec<_>>(),
        "light": plan.low,
        "light_first_cpu": light_first,
    })
}

#[cfg(test)]
mod tests;
