//! Shared by the runtime's integration tests (each test file that needs it says `mod common;`).

use rtsched_model::TaskSet;
use rtsched_runtime::{run, Mechanism, RunConfig, RunResult};

/// Runs at SCHED_FIFO priority 10 where the process may (CAP_SYS_NICE), else at normal
/// priority. For tests whose oracle needs the run to keep up with its releases (that a
/// preemption or a migration happened, that the trace of a clean run is clean): at normal
/// priority a loaded machine (parallel builds, other tests) can deschedule the whole run.
/// Bounded like every test run: its duration, the watchdog and the kernel's RT throttling.
pub fn run_rt_if_permitted(ts: &TaskSet, mech: &Mechanism, cfg: &mut RunConfig) -> RunResult {
    cfg.rt_priority = Some(10);
    match run(ts, mech, cfg) {
        Err(e) if e.to_string().contains("CAP_SYS_NICE") => {
            cfg.rt_priority = None;
            run(ts, mech, cfg).unwrap()
        }
        other => other.unwrap(),
    }
}
