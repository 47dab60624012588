//! Parallel user jobs: a periodic fork-join job with a deadline written as closures, with
//! `join`- and `scope`-style forks (the RTWS paper's task model, Nogueira et al., EUC 2012 §III:
//! a job is a sequence of regions, each region a set of threads that join at its end), run by
//! the `rtws` mechanism (§V: a region's threads are forked on the CPU where the job is, idle
//! CPUs steal them).
//!
//! Each thread of a region is a [`user`](crate::user) body: called step by step, preemptible
//! between two steps, resumed on whichever CPU the mechanism picks (a stolen thread continues
//! at its next step). A [`ParallelTask`] is built region by region: [`ParallelTask::then`] adds
//! a sequential region (one thread), [`ParallelTask::join`] a region of two threads (as
//! `rayon::join`), [`ParallelTask::scope`] a region of any number of threads spawned in a
//! closure (as `rayon::scope`: all of them complete before the next region starts). Each thread
//! carries its WCET: the figure the model, the analysis and the trace use (the closure decides
//! when the thread is done; nothing enforces the budget, as for every user job).
//! [`parallel_jobs`] turns the tasks into the fork-join set and the per-slot bodies that
//! [`run_forkjoin`](crate::run_forkjoin) takes. A thread's [`JobCtx`](crate::user::JobCtx) has
//! `task` = its thread slot (task `i`, region `r`, thread `k`, in that order, as
//! [`slot_task_set`](crate::slot_task_set) numbers them) and `job` = the job's number.
//!
//! The example below is `crates/runtime/examples/parallel_job.rs` (built by `cargo test`) and
//! the one in docs/runtime.md ("Parallel user jobs").
//!
//! ```no_run
//! use rtsched_runtime::parallel::{parallel_jobs, ParallelTask};
//! use rtsched_runtime::user::Step;
//! use rtsched_runtime::{run_forkjoin, Mechanism, RunConfig};
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use std::sync::Arc;
//!
//! const MS: u64 = 1_000_000;
//! let sum = Arc::new(AtomicU64::new(0));
//! let s = sum.clone();
//! // Ten steps of work per call of `work`: a preemption point after each.
//! let work = move |steps: u64| {
//!     let s = s.clone();
//!     move |ctx: &rtsched_runtime::user::JobCtx<'_>| {
//!         s.fetch_add(std::hint::black_box((0..20_000u64).sum::<u64>()) & 1, Ordering::Relaxed);
//!         if ctx.step + 1 == steps { Step::Done } else { Step::Continue }
//!     }
//! };
//! // Every 20 ms, deadline 15 ms: a sequential step, two threads joined, a scope of four
//! // threads, a last sequential step.
//! let filter = ParallelTask::periodic("filter", 20 * MS)
//!     .deadline(15 * MS)
//!     .then(MS, work(10))
//!     .join((MS, work(10)), (MS, work(10)))
//!     .scope(|s| {
//!         for _ in 0..4 {
//!             s.spawn(MS / 2, work(5));
//!         }
//!     })
//!     .then(MS, work(10));
//! let (set, bodies) = parallel_jobs(vec![filter]).unwrap();
//! let mut cfg = RunConfig::new(vec![0, 1], 200 * MS);
//! cfg.user_jobs = bodies;
//! let r = run_forkjoin(&set, &Mechanism::named("rtws").unwrap(), &cfg).unwrap();
//! assert_eq!(r.accounting.error, None);
//! println!("{}", rtsched_runtime::forkjoin_summary(&set, &r));
//! ```

use crate::user::{JobCtx, Step, UserJob, UserJobs};
use crate::RunError;
use rtsched_model::forkjoin::{ForkJoinSet, ForkJoinTask};
use rtsched_model::Time;
use std::sync::Arc;

/// One thread of a region: its WCET and its body.
type Thread = (Time, UserJob);

fn body(f: impl Fn(&JobCtx<'_>) -> Step + Send + Sync + 'static) -> UserJob {
    Arc::new(f)
}

/// A periodic parallel task built region by region (module docs).
pub struct ParallelTask {
    name: String,
    period: Time,
    deadline: Time,
    regions: Vec<Vec<Thread>>,
}

/// The threads a [`ParallelTask::scope`] region spawns.
#[derive(Default)]
pub struct Scope {
    threads: Vec<Thread>,
}

impl Scope {
    /// Spawns a thread of cost `wcet` running `f` step by step; it joins at the scope's end.
    pub fn spawn(&mut self, wcet: Time, f: impl Fn(&JobCtx<'_>) -> Step + Send + Sync + 'static) -> &mut Scope {
        self.threads.push((wcet, body(f)));
        self
    }
}

impl ParallelTask {
    /// A task released every `period` ns (from time 0), deadline = period, no region yet.
    pub fn periodic(name: impl Into<String>, period: Time) -> ParallelTask {
        ParallelTask { name: name.into(), period, deadline: period, regions: Vec::new() }
    }

    /// The relative deadline (ns).
    pub fn deadline(mut self, deadline: Time) -> ParallelTask {
        self.deadline = deadline;
        self
    }

    /// A sequential region: one thread of cost `wcet` running `f`.
    pub fn then(mut self, wcet: Time, f: impl Fn(&JobCtx<'_>) -> Step + Send + Sync + 'static) -> ParallelTask {
        self.regions.push(vec![(wcet, body(f))]);
        self
    }

    /// A region of two threads `(wcet, body)` that may run in parallel, joined before the next
    /// region (as `rayon::join`).
    pub fn join<A, B>(mut self, a: (Time, A), b: (Time, B)) -> ParallelTask
    where
        A: Fn(&JobCtx<'_>) -> Step + Send + Sync + 'static,
        B: Fn(&JobCtx<'_>) -> Step + Send + Sync + 'static,
    {
        self.regions.push(vec![(a.0, body(a.1)), (b.0, body(b.1))]);
        self
    }

    /// A region of the threads `f` spawns on its [`Scope`], all joined before the next region
    /// (as `rayon::scope`). A scope that spawns nothing is an error of [`parallel_jobs`].
    pub fn scope(mut self, f: impl FnOnce(&mut Scope)) -> ParallelTask {
        let mut s = Scope::default();
        f(&mut s);
        self.regions.push(s.threads);
        self
    }
}

/// The fork-join set of `tasks` (regions of thread WCETs; the model's checks: positive period
/// and costs, non-empty regions, deadline > 0) and the user bodies of its thread slots, for
/// [`run_forkjoin`](crate::run_forkjoin) with `cfg.user_jobs` = the bodies under `rtws`.
/// Errors name the task and what is wrong.
pub fn parallel_jobs(tasks: Vec<ParallelTask>) -> Result<(ForkJoinSet, UserJobs), RunError> {
    let mut fj = Vec::with_capacity(tasks.len());
    let mut bodies = Vec::new();
    for t in tasks {
        let costs: Vec<Vec<Time>> = t.regions.iter().map(|r| r.iter().map(|th| th.0).collect()).collect();
        let task = ForkJoinTask::new(t.period, t.deadline, costs)
            .map_err(|e| RunError::Config(format!("parallel task {:?}: {e}", t.name)))?
            .named(t.name);
        fj.push(task);
        bodies.extend(t.regions.into_iter().flatten().map(|(_, b)| Some(b)));
    }
    let set = ForkJoinSet::new(fj).map_err(|e| RunError::Config(e.to_string()))?;
    Ok((set, UserJobs::new(bodies)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(_: &JobCtx<'_>) -> Step {
        Step::Done
    }

    #[test]
    fn regions_and_slots_follow_the_builder_order() {
        let t = ParallelTask::periodic("a", 10).deadline(8).then(1, done).join((2, done), (3, done)).scope(|s| {
            s.spawn(4, done).spawn(5, done);
        });
        let (set, bodies) = parallel_jobs(vec![t, ParallelTask::periodic("b", 20).then(6, done)]).unwrap();
        assert_eq!(set.tasks()[0].regions, vec![vec![1], vec![2, 3], vec![4, 5]]);
        assert_eq!((set.tasks()[0].deadline, set.tasks()[1].period), (8, 20));
        assert_eq!(set.tasks()[1].name.as_deref(), Some("b"));
        // One body per thread slot, as slot_task_set numbers them.
        assert_eq!(crate::slot_task_set(&set).unwrap().len(), 6);
        assert!(bodies.validate(6).is_ok() && bodies.validate(5).is_err());
    }

    #[test]
    fn invalid_tasks_are_refused_with_their_name() {
        let e = parallel_jobs(vec![ParallelTask::periodic("empty", 10).scope(|_| {})]).unwrap_err();
        assert!(e.to_string().contains("\"empty\""), "{e}");
        let e = parallel_jobs(vec![ParallelTask::periodic("none", 10)]).unwrap_err();
        assert!(e.to_string().contains("\"none\""), "{e}");
        let e = parallel_jobs(vec![ParallelTask::periodic("zero", 0).then(1, done)]).unwrap_err();
        assert!(e.to_string().contains("\"zero\""), "{e}");
    }
}
