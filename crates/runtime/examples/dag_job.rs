//! A periodic DAG job written as closures — nodes and the edges between them — run by RTWS on
//! real threads (docs/runtime.md, "DAG user jobs"; `rtsched_runtime::dag`). `cargo run
//! --release -p rtsched-runtime --example dag_job` runs it for 200 ms on the first two CPUs this
//! process may use; `tests/dag_jobs.rs` runs the same code for a few milliseconds.

use rtsched_runtime::dag::{dag_user_jobs, DagJob};
use rtsched_runtime::platform::allowed_cpus;
use rtsched_runtime::user::{JobCtx, Step};
use rtsched_runtime::{dag_summary, run_dag, Mechanism, RunConfig};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const MS: u64 = 1_000_000;

/// Runs the example for `ms` milliseconds under `mechanism`; returns the DAG-job summary and
/// the steps the nodes executed.
pub fn run_example(ms: u64, mechanism: &str) -> Result<(serde_json::Value, u64), Box<dyn std::error::Error>> {
    let steps_done = Arc::new(AtomicU64::new(0));
    // A node of `steps` steps of real work; between two steps the job may be preempted, and
    // it resumes at its next step on whichever CPU the mechanism picks.
    let work = |steps: u64| {
        let c = steps_done.clone();
        move |ctx: &JobCtx<'_>| {
            std::hint::black_box((0..20_000u64).fold(ctx.step, |a, b| a ^ b.wrapping_mul(31)));
            c.fetch_add(1, Ordering::Relaxed);
            if ctx.step + 1 == steps {
                Step::Done
            } else {
                Step::Continue
            }
        }
    };
    // Every 20 ms, deadline 15 ms: capture a frame, then detect and track in parallel (each
    // needs the frame), then fuse their results; a log node needs only the capture. WCETs in ns.
    let mut cam = DagJob::periodic("camera", 20 * MS).deadline(15 * MS);
    let capture = cam.node(MS, work(10));
    let detect = cam.node(2 * MS, work(20));
    let track = cam.node(MS, work(10));
    let fuse = cam.node(MS, work(10));
    let log = cam.node(MS / 2, work(5));
    cam.edge(capture, detect).edge(capture, track).edge(detect, fuse).edge(track, fuse).edge(capture, log);
    let (set, bodies) = dag_user_jobs(vec![cam])?;
    let cpus: Vec<usize> = allowed_cpus().into_iter().take(2).collect();
    let mut cfg = RunConfig::new(cpus, ms * MS);
    cfg.start_delay_ns = 20 * MS;
    cfg.user_jobs = bodies;
    let r = run_dag(&set, &Mechanism::named(mechanism)?, &cfg)?;
    if let Some(e) = &r.accounting.error {
        return Err(e.clone().into());
    }
    Ok((dag_summary(&set, &r), steps_done.load(Ordering::Relaxed)))
}

#[allow(dead_code)] // the tests include this file for `run_example`
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (summary, _) = run_example(200, "rtws")?;
    println!("{summary}");
    Ok(())
}
