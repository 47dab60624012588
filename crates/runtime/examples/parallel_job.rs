//! A periodic parallel job written as closures, run by RTWS on real threads (docs/runtime.md,
//! "Parallel user jobs"; `rtsched_runtime::parallel`). `cargo run --release -p rtsched-runtime
//! --example parallel_job` runs it for 200 ms on the first two CPUs this process may use.

use rtsched_runtime::parallel::{parallel_jobs, ParallelTask};
use rtsched_runtime::platform::allowed_cpus;
use rtsched_runtime::user::{JobCtx, Step};
use rtsched_runtime::{forkjoin_summary, run_forkjoin, Mechanism, RunConfig};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const MS: u64 = 1_000_000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let checksum = Arc::new(AtomicU64::new(0));
    // A thread of `steps` steps of real work; between two steps the job may be preempted,
    // and it resumes at its next step on whichever CPU RTWS picks.
    let work = |steps: u64| {
        let c = checksum.clone();
        move |ctx: &JobCtx<'_>| {
            let x = std::hint::black_box((0..20_000u64).fold(ctx.step, |a, b| a ^ b.wrapping_mul(31)));
            c.fetch_add(x & 1, Ordering::Relaxed);
            if ctx.step + 1 == steps {
                Step::Done
            } else {
                Step::Continue
            }
        }
    };
    // Every 20 ms, deadline 15 ms: a sequential step, two threads joined (as rayon::join), a
    // scope of four threads (as rayon::scope), a last sequential step. WCETs are in ns.
    let filter = ParallelTask::periodic("filter", 20 * MS)
        .deadline(15 * MS)
        .then(MS, work(10))
        .join((MS, work(10)), (MS, work(10)))
        .scope(|s| {
            for _ in 0..4 {
                s.spawn(MS / 2, work(5));
            }
        })
        .then(MS, work(10));
    let (set, bodies) = parallel_jobs(vec![filter])?;
    let cpus: Vec<usize> = allowed_cpus().into_iter().take(2).collect();
    let mut cfg = RunConfig::new(cpus, 200 * MS);
    cfg.user_jobs = bodies;
    let r = run_forkjoin(&set, &Mechanism::named("rtws")?, &cfg)?;
    if let Some(e) = &r.accounting.error {
        return Err(e.clone().into());
    }
    println!("{}", forkjoin_summary(&set, &r));
    Ok(())
}
