//! DAG user jobs: a periodic job written as closures (its *nodes*) with precedence edges
//! between them — the sporadic DAG task model of Baruah, Bonifaci, Marchetti-Spaccamela,
//! Stougie & Wiese, RTSS 2012 — run by a mechanism that executes parallel jobs (`rtws`,
//! `push-pull`): a node runs once every predecessor of its job has completed, made ready on the
//! CPU that completed the last of them (the RTWS paper's local push, §V Rule B); idle CPUs
//! steal ready nodes under `rtws`.
//!
//! This is the general form of [`parallel`](crate::parallel)'s fork-join builder (a region
//! there is a set of nodes every node of the next region depends on). Each node is a
//! [`user`](crate::user) body: called step by step, preemptible between two steps, resumed on
//! whichever CPU the mechanism picks. [`DagJob::node`] adds a node of a given WCET (the figure
//! the model, the analyses and the trace use; the closure decides when the node is done) and
//! returns its [`NodeId`]; [`DagJob::edge`] says that one node precedes another. [`dag_user_jobs`]
//! validates the graphs by the model's rules (`rtsched_model::dag`: no cycle, no edge to a
//! missing node, no self-loop or repeated edge, a longest path within the deadline; each a
//! one-line error naming the job, the field and the node) and returns the DAG set and the
//! per-slot bodies that [`run_dag`](crate::run_dag) takes. A node's
//! [`JobCtx`](crate::user::JobCtx) has `task` = its slot (task `i`, node `k`, in that order, as
//! [`dag_slot_task_set`](crate::dag_slot_task_set) numbers them) and `job` = the job's number.
//!
//! The example below is `crates/runtime/examples/dag_job.rs` (built by `cargo test` and run by
//! `tests/dag_jobs.rs` at a tiny size) and the one in docs/runtime.md ("DAG user jobs").
//!
//! ```no_run
//! use rtsched_runtime::dag::{dag_user_jobs, DagJob};
//! use rtsched_runtime::user::{JobCtx, Step};
//! use rtsched_runtime::{run_dag, Mechanism, RunConfig};
//!
//! const MS: u64 = 1_000_000;
//! fn work(steps: u64) -> impl Fn(&JobCtx<'_>) -> Step + Send + Sync + 'static {
//!     move |ctx: &JobCtx<'_>| {
//!         std::hint::black_box((0..20_000u64).sum::<u64>());
//!         if ctx.step + 1 == steps { Step::Done } else { Step::Continue }
//!     }
//! }
//! // Every 20 ms: capture, then detect and track in parallel, then fuse.
//! let mut cam = DagJob::periodic("camera", 20 * MS).deadline(15 * MS);
//! let capture = cam.node(MS, work(10));
//! let detect = cam.node(2 * MS, work(20));
//! let track = cam.node(MS, work(10));
//! let fuse = cam.node(MS, work(10));
//! cam.edge(capture, detect).edge(capture, track).edge(detect, fuse).edge(track, fuse);
//! let (set, bodies) = dag_user_jobs(vec![cam]).unwrap();
//! let mut cfg = RunConfig::new(vec![0, 1], 200 * MS);
//! cfg.user_jobs = bodies;
//! let r = run_dag(&set, &Mechanism::named("rtws").unwrap(), &cfg).unwrap();
//! assert_eq!(r.accounting.error, None);
//! println!("{}", rtsched_runtime::dag_summary(&set, &r));
//! ```

use crate::user::{JobCtx, Step, UserJob, UserJobs};
use crate::RunError;
use rtsched_model::dag::{DagSet, DagTask};
use rtsched_model::Time;
use std::sync::Arc;

/// A node of a [`DagJob`]: its index in the job, in the order the nodes were added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// A periodic DAG job built node by node and edge by edge (module docs).
pub struct DagJob {
    name: String,
    period: Time,
    deadline: Time,
    nodes: Vec<(Time, UserJob)>,
    edges: Vec<(u32, u32)>,
}

impl DagJob {
    /// A task released every `period` ns (from time 0), deadline = period, no node yet.
    pub fn periodic(name: impl Into<String>, period: Time) -> DagJob {
        DagJob { name: name.into(), period, deadline: period, nodes: Vec::new(), edges: Vec::new() }
    }

    /// The relative deadline (ns).
    pub fn deadline(mut self, deadline: Time) -> DagJob {
        self.deadline = deadline;
        self
    }

    /// Adds a node of cost `wcet` running `f` step by step; it runs once per job, after every
    /// node that [`DagJob::edge`] puts before it.
    pub fn node(&mut self, wcet: Time, f: impl Fn(&JobCtx<'_>) -> Step + Send + Sync + 'static) -> NodeId {
        self.nodes.push((wcet, Arc::new(f)));
        NodeId(self.nodes.len() as u32 - 1)
    }

    /// `from` precedes `to`: in each job, `to` starts only after `from` has completed.
    pub fn edge(&mut self, from: NodeId, to: NodeId) -> &mut DagJob {
        self.edges.push((from.0, to.0));
        self
    }
}

/// The DAG set of `tasks` (validated as the model validates a DAG file: positive period,
/// deadline and WCETs, at least one node, edges between existing nodes, no self-loop, repeated
/// edge or cycle, a longest path within the deadline) and the user bodies of its node slots,
/// for [`run_dag`](crate::run_dag) with `cfg.user_jobs` = the bodies. Errors are one line
/// naming the job, the field and the node or edge.
pub fn dag_user_jobs(tasks: Vec<DagJob>) -> Result<(DagSet, UserJobs), RunError> {
    let mut dags = Vec::with_capacity(tasks.len());
    let mut bodies = Vec::new();
    for (i, t) in tasks.into_iter().enumerate() {
        let wcets = t.nodes.iter().map(|n| n.0).collect();
        let task = DagTask::new(t.period, t.deadline, wcets, t.edges)
            .and_then(|d| d.named(t.name.clone()))
            .map_err(|e| RunError::Config(format!("DAG job {}", e.in_task(i, Some(&t.name)))))?;
        dags.push(task);
        bodies.extend(t.nodes.into_iter().map(|(_, b)| Some(b)));
    }
    Ok((DagSet::new(dags), UserJobs::new(bodies)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(_: &JobCtx<'_>) -> Step {
        Step::Done
    }

    #[test]
    fn nodes_and_slots_follow_the_builder_order() {
        let mut a = DagJob::periodic("a", 10).deadline(8);
        let (x, y, z) = (a.node(1, done), a.node(2, done), a.node(3, done));
        a.edge(x, z).edge(y, z);
        let mut b = DagJob::periodic("b", 20);
        b.node(6, done);
        let (set, bodies) = dag_user_jobs(vec![a, b]).unwrap();
        assert_eq!(set[0].wcets(), &[1, 2, 3]);
        assert_eq!(set[0].edges(), &[(0, 2), (1, 2)]);
        assert_eq!((set[0].deadline(), set[1].period(), set[1].name()), (8, 20, Some("b")));
        // One body per node slot, as dag_slot_task_set numbers them.
        assert_eq!(crate::dag_slot_task_set(&set).unwrap().len(), 4);
        assert!(bodies.validate(4).is_ok() && bodies.validate(3).is_err());
    }

    #[test]
    fn invalid_graphs_are_refused_in_one_line_naming_the_job() {
        let cycle = {
            let mut t = DagJob::periodic("loop", 100);
            let (a, b, c) = (t.node(1, done), t.node(1, done), t.node(1, done));
            t.edge(a, b).edge(b, c).edge(c, a);
            t
        };
        let dangling = {
            let mut t = DagJob::periodic("dangling", 100);
            let a = t.node(1, done);
            t.edge(a, NodeId(7));
            t
        };
        let long = {
            let mut t = DagJob::periodic("long", 10);
            let (a, b) = (t.node(6, done), t.node(5, done));
            t.edge(a, b);
            t
        };
        for (t, words) in [
            (cycle, ["\"loop\"", "field 'edges'", "cycle through node 0 (0 → 1 → 2 → 0)"]),
            (dangling, ["\"dangling\"", "field 'edges[0]'", "node 7 does not exist"]),
            (long, ["\"long\"", "field 'deadline'", "nodes 0 → 1"]),
            (DagJob::periodic("empty", 10), ["\"empty\"", "field 'nodes'", "at least one node"]),
        ] {
            let mut ok = DagJob::periodic("fine", 10);
            ok.node(1, done);
            let e = dag_user_jobs(vec![ok, t]).unwrap_err().to_string();
            for w in words {
                assert!(e.contains(w), "{e} lacks {w}");
            }
            assert!(e.contains("task 1") && !e.contains('\n'), "{e}");
        }
    }
}
