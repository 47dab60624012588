//! The platform: what every mechanism runs on — which CPUs the workers use, pinning,
//! real-time priority and thread ids (this file), and the submodules:
//!
//! * [`clock`]: the monotonic clock and the trace counter (TSC);
//! * [`sync`]: the spin lock and the per-thread signal ("IPI"), with their loom models;
//! * [`tracer`]: per-CPU Feather-Trace-style record buffers; [`interference`]: host
//!   interference (clock jumps, run-queue waits) recorded for the overhead filter;
//! * [`topology`]: which CPUs share a last-level cache (G-EDF-MP's mailbox clusters);
//! * [`body`]: the synthetic `rtspin`-like job body; [`user`]: user jobs (closures);
//!   [`parallel`]: parallel user jobs (fork-join closures with `join`/`scope`, under `rtws`).
//!
//! One worker thread per scheduling CPU, pinned with `sched_setaffinity` (the user-space
//! analogue of LITMUS^RT's per-CPU scheduler state, seed 001 §3). Workers run at normal
//! priority unless `SCHED_FIFO` is requested; a FIFO run is always bounded by the run's
//! duration and a watchdog (see `backend::engine`).

pub mod body;
pub mod clock;
pub mod dag;
pub mod interference;
pub mod parallel;
pub mod sync;
pub mod topology;
pub mod tracer;
pub mod user;

use crate::RunError;

/// The CPUs this process may run on (its affinity mask), ascending.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; sched_getaffinity writes at most
    // size_of::<cpu_set_t>() bytes into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&c| libc::CPU_ISSET(c, &set)).collect()
    }
}

/// Number of online CPUs.
pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no memory preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n < 1 {
        1
    } else {
        n as usize
    }
}

/// Checks a CPU list (plus an optional dedicated CPU) against the machine.
///
/// Refused: an empty list; a CPU the process may not run on; a CPU used twice or the
/// dedicated CPU also used as a worker, and more threads than allowed cores — these last two
/// are accepted only with `force`, because pinned threads that share a core measure the
/// host's time slicing, not the scheduler, so timings would be meaningless.
pub fn validate_cpus(cpus: &[usize], dedicated: Option<usize>, force: bool) -> Result<(), RunError> {
    if cpus.is_empty() {
        return Err(RunError::Cpus("the CPU list is empty: give at least one CPU".into()));
    }
    let allowed = allowed_cpus();
    for &c in cpus.iter().chain(dedicated.iter()) {
        if !allowed.contains(&c) {
            return Err(RunError::Cpus(format!(
                "CPU {c} is not available to this process (allowed CPUs: {allowed:?})"
            )));
        }
    }
    let mut all: Vec<usize> = cpus.to_vec();
    all.extend(dedicated);
    let mut uniq = all.clone();
    uniq.sort_unstable();
    uniq.dedup();
    if !force {
        if uniq.len() != all.len() {
            return Err(RunError::Cpus(format!(
                "CPU list {cpus:?} (dedicated {dedicated:?}) uses a CPU twice; pass force to share \
                 cores, but timings would be meaningless"
            )));
        }
        if all.len() > allowed.len() {
            return Err(RunError::Cpus(format!(
                "{} threads need more cores than the {} available; pass force to oversubscribe, \
                 but timings would be meaningless",
                all.len(),
                allowed.len()
            )));
        }
    }
    Ok(())
}

/// Pins the calling thread to `cpu`.
pub fn pin_to(cpu: usize) -> Result<(), RunError> {
    // SAFETY: the set is a valid, zero-initialised cpu_set_t and `cpu` < CPU_SETSIZE is
    // checked before CPU_SET writes into it.
    unsafe {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(RunError::Cpus(format!("CPU {cpu} is out of range")));
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(RunError::Cpus(format!(
                "cannot pin a thread to CPU {cpu}: {}",
                std::io::Error::last_os_error()
            )));
        }
    }
    Ok(())
}

/// Linux thread id of the caller.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// The CPU the caller runs on now.
pub fn current_cpu() -> u32 {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    if c < 0 {
        0
    } else {
        c as u32
    }
}

/// Switches thread `tid` (0 = caller) to `SCHED_FIFO` at `prio` (1..=99).
pub fn set_fifo(tid: i32, prio: i32) -> Result<(), RunError> {
    if !(1..=99).contains(&prio) {
        return Err(RunError::Priority(format!("SCHED_FIFO priority must be in 1..=99, got {prio}")));
    }
    let p = libc::sched_param { sched_priority: prio };
    // SAFETY: `p` is a valid sched_param for the duration of the call.
    let r = unsafe { libc::sched_setscheduler(tid, libc::SCHED_FIFO, &p) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EPERM) {
            return Err(RunError::Priority("SCHED_FIFO needs root or CAP_SYS_NICE".into()));
        }
        return Err(RunError::Priority(format!("sched_setscheduler(SCHED_FIFO, {prio}) failed: {e}")));
    }
    Ok(())
}

/// Switches thread `tid` back to `SCHED_OTHER` (used by the watchdog; errors are ignored
/// because the thread may already have exited).
pub fn set_normal(tid: i32) {
    let p = libc::sched_param { sched_priority: 0 };
    // SAFETY: as in `set_fifo`.
    unsafe { libc::sched_setscheduler(tid, libc::SCHED_OTHER, &p) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_list_is_refused() {
        let e = validate_cpus(&[], None, false).unwrap_err().to_string();
        assert!(e.contains("empty"), "{e}");
    }

    #[test]
    fn unknown_cpu_is_refused_even_with_force() {
        let e = validate_cpus(&[100_000], None, true).unwrap_err().to_string();
        assert!(e.contains("CPU 100000"), "{e}");
    }

    #[test]
    fn oversubscription_needs_force() {
        let c = allowed_cpus()[0];
        let n = allowed_cpus().len();
        let many = vec![c; n + 1];
        let e = validate_cpus(&many, None, false).unwrap_err().to_string();
        assert!(e.contains("meaningless"), "{e}");
        assert!(validate_cpus(&many, None, true).is_ok());
        let e = validate_cpus(&[c], Some(c), false).unwrap_err().to_string();
        assert!(e.contains("twice"), "{e}");
    }

    #[test]
    fn pinning_moves_the_thread() {
        let c = *allowed_cpus().last().unwrap();
        std::thread::spawn(move || {
            pin_to(c).unwrap();
            assert_eq!(current_cpu() as usize, c);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn bad_fifo_priority_is_refused() {
        assert!(set_fifo(0, 0).unwrap_err().to_string().contains("1..=99"));
    }
}

#[cfg(test)]
mod permission_tests {
    use super::*;

    /// The raw setresuid syscall changes only the calling thread's credentials (glibc's
    /// wrapper would change the whole process), so a spawned thread can drop root and see
    /// the unprivileged error message.
    #[test]
    fn fifo_without_permission_names_the_capability() {
        let msg = std::thread::spawn(|| {
            // SAFETY: setresuid on the calling thread only; no memory is involved.
            let r = unsafe { libc::syscall(libc::SYS_setresuid, 65534, 65534, 65534) };
            if r != 0 {
                return None; // already unprivileged and cannot switch: nothing to compare
            }
            set_fifo(0, 10).err().map(|e| e.to_string())
        })
        .join()
        .unwrap();
        if let Some(m) = msg {
            assert_eq!(m, "SCHED_FIFO needs root or CAP_SYS_NICE");
        }
    }

    #[test]
    fn fifo_with_permission_works_and_can_be_undone() {
        std::thread::spawn(|| {
            if set_fifo(0, 10).is_ok() {
                // SAFETY: sched_getscheduler has no preconditions.
                assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_FIFO);
                set_normal(0);
                // SAFETY: as above.
                assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_OTHER);
            }
        })
        .join()
        .unwrap();
    }
}
