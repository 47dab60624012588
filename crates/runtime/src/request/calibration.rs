//! The machine's calibration: how late this machine's timers wake a thread and how long it
//! takes a busy thread's CPU away when nothing disturbs it — the floor a run's timing is judged
//! against ([`assess_timing`](super::assess_timing); docs/runtime.md, "Trustworthy timing").
//!
//! [`measure_calibration`] spends a budget (the front uses 0.5 s, once per machine) in
//! [`CALIBRATION_WINDOWS`] windows of two kinds on one thread of its own: sleeping until an
//! absolute time 1 ms ahead again and again (the engine's release timer, `clock_nanosleep`
//! with `TIMER_ABSTIME`) and recording how late each wake-up is; and reading the monotonic clock
//! in a busy loop (as a job body polls) and recording the longest gap between two reads. Each
//! window keeps its maximum; the calibration is the median of the windows' maxima, so that a
//! disturbance in fewer than half of the windows does not raise the floor. The thread runs at
//! SCHED_FIFO where the process may (the machine's floor, not its load), else at normal
//! priority, and says which.

use crate::platform::clock::{monotonic_ns, sleep_until};
use crate::RunError;
use rtsched_model::time::format_time;
use serde_json::{json, Value};

/// The windows of each kind a calibration measures (odd: the median is one of them).
pub const CALIBRATION_WINDOWS: usize = 5;
/// The smallest and the largest budget of one calibration.
pub const CALIBRATION_BUDGET_NS: (u64, u64) = (10_000_000, 60_000_000_000);
/// A calibrated floor above this is taken as this: a calibration measured on a busy machine
/// must not make every later verdict lenient (its value is kept and said in the reason).
pub const CALIBRATION_CAP_NS: u64 = 1_000_000;
/// The relative wake-up time of the timer windows.
const SLEEP_NS: u64 = 1_000_000;

/// A machine's timer and scheduling-noise floor ([`measure_calibration`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Calibration {
    /// The median over the windows of each window's latest wake-up (ns after the requested time).
    pub timer_floor_ns: u64,
    /// The median over the windows of each window's longest gap between two clock reads.
    pub noise_ns: u64,
    /// Each window's latest wake-up and longest gap, in measurement order.
    pub timer_windows_ns: Vec<u64>,
    pub gap_windows_ns: Vec<u64>,
    /// The scheduling class it was measured at (`SCHED_FIFO 50`, or `SCHED_OTHER` and why).
    pub class: String,
}

fn median(v: &[u64]) -> u64 {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.get(s.len() / 2).copied().unwrap_or(0)
}

impl Calibration {
    /// A calibration of the windows' maxima (the floors are their medians).
    pub fn of_windows(timer_windows_ns: Vec<u64>, gap_windows_ns: Vec<u64>, class: &str) -> Calibration {
        Calibration {
            timer_floor_ns: median(&timer_windows_ns),
            noise_ns: median(&gap_windows_ns),
            timer_windows_ns,
            gap_windows_ns,
            class: class.to_string(),
        }
    }

    /// Its JSON object (the front adds the machine's key and the time it was measured).
    pub fn to_json(&self) -> Value {
        json!({
            "timer_floor_ns": self.timer_floor_ns,
            "noise_ns": self.noise_ns,
            "timer_windows_ns": self.timer_windows_ns,
            "gap_windows_ns": self.gap_windows_ns,
            "class": self.class,
        })
    }

    /// From its JSON object ([`Calibration::to_json`]; other fields are ignored). A missing or
    /// negative floor is an error naming the field; the window lists are optional.
    pub fn from_json(v: &Value) -> Result<Calibration, RunError> {
        let int = |k: &str| -> Result<u64, RunError> {
            v.get(k)
                .and_then(Value::as_u64)
                .ok_or_else(|| RunError::input(format!("calibration: field '{k}': expected an integer of ns >= 0")))
        };
        let list = |k: &str| -> Result<Vec<u64>, RunError> {
            match v.get(k) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|x| {
                        x.as_u64().ok_or_else(|| {
                            RunError::input(format!("calibration: field '{k}': expected integers of ns >= 0"))
                        })
                    })
                    .collect(),
                Some(_) => Err(RunError::input(format!("calibration: field '{k}': expected a list"))),
            }
        };
        if !v.is_object() {
            return Err(RunError::input("calibration: expected a JSON object"));
        }
        Ok(Calibration {
            timer_floor_ns: int("timer_floor_ns")?,
            noise_ns: int("noise_ns")?,
            timer_windows_ns: list("timer_windows_ns")?,
            gap_windows_ns: list("gap_windows_ns")?,
            class: v.get("class").and_then(Value::as_str).unwrap_or("unknown").to_string(),
        })
    }

    /// The two floors as the verdict uses them: each at most [`CALIBRATION_CAP_NS`].
    pub fn capped(&self) -> (u64, u64) {
        (self.timer_floor_ns.min(CALIBRATION_CAP_NS), self.noise_ns.min(CALIBRATION_CAP_NS))
    }

    /// One line: the floors, the class and (when it applies) the cap.
    pub fn describe(&self) -> String {
        let capped = if self.timer_floor_ns > CALIBRATION_CAP_NS || self.noise_ns > CALIBRATION_CAP_NS {
            format!(
                "; capped at {} each (the calibration was disturbed: rerun `rtsched calibrate` on a quiet machine)",
                format_time(CALIBRATION_CAP_NS)
            )
        } else {
            String::new()
        };
        format!(
            "this machine's calibrated timer floor {} and scheduling noise {} ({}){capped}",
            format_time(self.timer_floor_ns),
            format_time(self.noise_ns),
            self.class
        )
    }
}

/// Tries SCHED_FIFO `prio` for the calling thread; the class it runs at, said in words.
fn try_fifo(prio: Option<i32>) -> String {
    let Some(p) = prio else { return "SCHED_OTHER".to_string() };
    let param = libc::sched_param { sched_priority: p };
    // SAFETY: `param` is a valid sched_param; pid 0 is the calling thread.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if rc == 0 {
        format!("SCHED_FIFO {p}")
    } else {
        format!("SCHED_OTHER (SCHED_FIFO {p} refused: {})", std::io::Error::last_os_error())
    }
}

/// Measures this machine's calibration within `budget_ns` (half in timer windows, half in busy
/// windows; see the module), on a thread of its own at SCHED_FIFO `rt_priority` where allowed.
/// A budget outside [`CALIBRATION_BUDGET_NS`] is an error naming it.
pub fn measure_calibration(budget_ns: u64, rt_priority: Option<i32>) -> Result<Calibration, RunError> {
    let (lo, hi) = CALIBRATION_BUDGET_NS;
    if !(lo..=hi).contains(&budget_ns) {
        return Err(RunError::input(format!(
            "field 'budget': {} is outside {} to {}",
            format_time(budget_ns),
            format_time(lo),
            format_time(hi)
        )));
    }
    if let Some(p) = rt_priority {
        if !(1..=99).contains(&p) {
            return Err(RunError::input(format!("field 'rt_priority': {p} is outside 1 to 99")));
        }
    }
    let window = budget_ns / 2 / CALIBRATION_WINDOWS as u64;
    let worker = std::thread::Builder::new()
        .name("rtsched-calibrate".into())
        .spawn(move || {
            let class = try_fifo(rt_priority);
            let mut timer = Vec::with_capacity(CALIBRATION_WINDOWS);
            let mut gaps = Vec::with_capacity(CALIBRATION_WINDOWS);
            for _ in 0..CALIBRATION_WINDOWS {
                let end = monotonic_ns() + window;
                let mut latest = 0;
                loop {
                    let target = monotonic_ns() + SLEEP_NS;
                    if target > end {
                        break;
                    }
                    sleep_until(target);
                    latest = latest.max(monotonic_ns().saturating_sub(target));
                }
                timer.push(latest);
                let end = monotonic_ns() + window;
                let mut last = monotonic_ns();
                let mut longest = 0;
                while last < end {
                    let now = monotonic_ns();
                    longest = longest.max(now - last);
                    last = now;
                }
                gaps.push(longest);
            }
            Calibration::of_windows(timer, gaps, &class)
        })
        .map_err(|e| RunError::Internal(format!("cannot start the calibration thread: {e}")))?;
    worker.join().map_err(|_| RunError::Internal("the calibration thread panicked".into()))
}
