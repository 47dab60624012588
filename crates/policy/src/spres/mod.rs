//! SP-RES: semi-partitioned reservations (Brandenburg & Gül, "Global Scheduling Not Required",
//! RTSS 2016, §III-A and §IV-A), executing a placement — the rules defined once, driven by the
//! simulator (`rtsched_sim`, in virtual time) and by the runtime's `spres` mechanism (on real
//! threads, one CPU's rules under that CPU's lock). The placement they execute is the model's
//! [`rtsched_model::Placement`], checked with [`rtsched_model::Placement::check_runnable`] by the
//! engines before they build the rules.
//!
//! Each CPU runs EDF over *polling reservations* (budget Q, replenishment period Δ, scheduling
//! deadline). A reservation of part `p` of task i is active, per replenishment period
//! `[a, a + Δ)` of the task's current job (`a` = the job's activation + k·Δ), during its
//! window `[a + offset, a + offset + deadline)`, with budget Q refilled at the window start
//! and scheduling deadline at the window end. Parts of a split task have back-to-back windows
//! on different CPUs, so the job migrates at window boundaries; the placement's order is the
//! flipped C=D order (§IV-A: the part with laxity first, the zero-laxity chunks last), so a job
//! that completes within its first window never migrates.
//!
//! The rules are *not* clock-free like the other policies: budgets are time. Every operation
//! takes `now` (integer ns, any origin), and the driver calls them at every event instant —
//! a release, a completion, and the instants [`SpresCpu::next_event`] names (window
//! boundaries, budget or slack exhaustion, slack deadlines, round-robin quanta):
//!
//! 1. [`SpresCpu::advance`]`(now)` — charge the service since the last call (budget or CASH
//!    slack of the reservation served, or slack burnt by an idle CPU);
//! 2. completions ([`SpresCpu::complete`]), self-suspensions and wake-ups
//!    ([`SpresCpu::suspend`], [`SpresCpu::wake`]: the job leaves its reservation, which keeps
//!    its budget, charged only while the job executes — or, with [`Suspension::Donate`], lends
//!    it as CASH slack until the wake-up), and activations ([`SpresCpu::activate`]: a job
//!    released with its predecessor complete, or a backlogged job when its predecessor
//!    completes; it enters the slot of its first part);
//! 3. [`SpresCpu::expire`]`(now)`, then [`SpresCpu::departures`]`(now)` — jobs whose window
//!    moved to a part on another CPU leave (the driver delivers them, [`Departure`]), and the
//!    target activates them in that part's slot;
//! 4. [`SpresCpu::decide`]`(now)` — what the CPU serves ([`SpresCpu::served`]).
//!
//! [`Spres`] is the synchronous driver of all CPUs (departures delivered at once): the
//! simulator runs it, and the runtime mechanism's property test holds the mechanism's
//! asynchronous hand-offs (migration timer on the source, activation by signal on the target)
//! to it.
//!
//! Selection per CPU (§III-A): the active, non-depleted reservation with the earliest
//! scheduling deadline (ties: task index, then part); otherwise, background service for *soft*
//! reservations whose job is on this CPU (depleted, or after their window): round-robin with a
//! quantum ([`Background::RoundRobin`], the paper's "in a round-robin fashion", the default of
//! the simulator's and the runtime's front ends) or earliest window end first
//! ([`Background::EarliestEnd`]); both engines take either, under the name `background`.
//! Budgets are charged by decision (the synchronous driver) or by execution (the runtime,
//! [`Charging`]); a hard reservation's job that executes past its budget *overruns*
//! ([`SpresCpu::take_overruns`]).
//! Split-task reservations are always soft (§IV-A); unsplit ones are hard unless
//! `soft_unsplit`. CASH slack reclamation (Caccamo, Buttazzo & Sha, RTSS 2000): when a job
//! completes inside its window, its reservation's remaining budget becomes slack with the
//! window's deadline; the reservation a CPU serves consumes the earliest-deadline unexpired
//! slack whose deadline is no later than its own scheduling deadline before its own budget;
//! an idle CPU, and a CPU serving in background, consumes its earliest-deadline slack (CASH's
//! idle rule); slack expires at its deadline. A self-suspending job's reservation keeps its
//! budget while the job is suspended ([`Suspension::Keep`], the default), or lends it as CASH
//! slack and takes back what is left at the wake-up ([`Suspension::Donate`], Brandenburg &
//! Gül, RTSS 2016, §VIII).

mod cpu;
mod driver;

pub use cpu::{Held, SpresCpu};
pub use driver::Spres;
use rtsched_model::placement::Reservation;
use rtsched_model::Time;

/// How depleted soft reservations share the background.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Background {
    /// The earliest window end first.
    EarliestEnd,
    /// Round-robin among them, switching every `quantum` ns (> 0) or when the served one
    /// leaves (seed 004 §III-A: "in a round-robin fashion").
    RoundRobin { quantum: Time },
}

impl Background {
    /// The names of the two rules, the same in the simulator (`simulate --background`) and the
    /// runtime (`run --param background=`): `round-robin` (default of both) and `earliest-end`.
    pub const NAMES: [&'static str; 2] = ["round-robin", "earliest-end"];

    /// The rule named `name` (one of [`Background::NAMES`]), with round-robin quantum
    /// `quantum` ns (at least 1).
    pub fn parse(name: &str, quantum: Time) -> Result<Background, rtsched_model::ModelError> {
        match name {
            "round-robin" if quantum > 0 => Ok(Background::RoundRobin { quantum }),
            "round-robin" => Err(rtsched_model::ModelError::field("rr_quantum", "must be at least 1 ns, got 0")),
            "earliest-end" => Ok(Background::EarliestEnd),
            other => Err(rtsched_model::ModelError::field(
                "background",
                format!("unknown rule {other:?}; use {}", Background::NAMES.join(" or ")),
            )),
        }
    }

    /// The default of both engines: the paper's round-robin with a 1 ms quantum.
    pub const DEFAULT: Background = Background::RoundRobin { quantum: 1_000_000 };
}

/// What a job's reservation does with its budget while the job self-suspends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suspension {
    /// The reservation keeps its budget: charged only while the job executes, nothing while
    /// it is suspended, no CASH slack made of it (the default of both engines; a job that
    /// wakes late still has what it needs).
    Keep,
    /// Brandenburg & Gül, RTSS 2016, §VIII ("Self suspensions"): "jobs in polling reservations
    /// generate slack when they suspend, and they regain whatever of their slack is left (if
    /// any) when they resume". While the job is suspended, its reservation's budget in its
    /// current window (a window opened meanwhile included) is CASH slack with the window's
    /// deadline, consumed by the CPU's other reservations and by an idle CPU as any CASH
    /// slack; at the wake-up the job takes back what is left of it as its budget (0 if it was
    /// used up or its window ended). Needs CASH (`cash`).
    Donate,
}

impl Suspension {
    /// The names of the two rules, the same in the simulator and the runtime (`--param
    /// suspension=`): `keep` (default of both) and `donate`.
    pub const NAMES: [&'static str; 2] = ["keep", "donate"];

    /// The rule named `name` (one of [`Suspension::NAMES`]); `donate` only with CASH on
    /// (`cash`): without slack reclamation there is no slack to give.
    pub fn parse(name: &str, cash: bool) -> Result<Suspension, rtsched_model::ModelError> {
        match name {
            "keep" => Suspension::Keep.check(cash),
            "donate" => Suspension::Donate.check(cash),
            other => Err(rtsched_model::ModelError::field(
                "suspension",
                format!("unknown rule {other:?}; use {}", Suspension::NAMES.join(" or ")),
            )),
        }
    }

    /// This rule, if it goes with CASH on or off (`cash`): `donate` only with CASH on.
    pub fn check(self, cash: bool) -> Result<Suspension, rtsched_model::ModelError> {
        match self {
            Suspension::Donate if !cash => Err(rtsched_model::ModelError::field(
                "suspension",
                "donate makes a suspending job's budget CASH slack and needs cash=true",
            )),
            rule => Ok(rule),
        }
    }
}

/// What a CPU's budgets (and CASH slack) are charged for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charging {
    /// The reservation the rules serve, from the instant they choose it: exact where dispatch
    /// is instantaneous (the simulator, the synchronous driver).
    Decision,
    /// The reservation whose job the CPU's worker executes, only while it executes, as
    /// LITMUS^RT's P-RES charges a reservation (its budget is drained by the time its client
    /// runs, not by the scheduler's time): the driver says when the worker enters and leaves
    /// a scheduler callback ([`SpresCpu::pause`], [`SpresCpu::resume`]) and what it dispatched
    /// ([`SpresCpu::dispatch`]). The runtime's.
    Execution,
}

/// The rules' parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Unsplit tasks get soft reservations too (split tasks always do, §IV-A).
    pub soft_unsplit: bool,
    /// CASH slack reclamation.
    pub cash: bool,
    pub background: Background,
    pub charging: Charging,
    /// The budget of a self-suspending job's reservation.
    pub suspension: Suspension,
}

impl Rules {
    /// The simulator's rules: hard unsplit reservations unless `soft_unsplit`, background by
    /// earliest window end, charged by decision, budgets of suspended jobs kept.
    pub fn new(soft_unsplit: bool, cash: bool) -> Rules {
        Rules {
            soft_unsplit,
            cash,
            background: Background::EarliestEnd,
            charging: Charging::Decision,
            suspension: Suspension::Keep,
        }
    }
}

/// How a CPU serves its chosen reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// In its window with budget left (or on CASH slack).
    Budget,
    /// Depleted or after its window, soft: background service.
    Background,
}

/// A job leaving a CPU because its window moved to a part on another CPU (or to another part on
/// the same CPU): the driver activates it on `cpu` in the slot of `part`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Departure {
    pub task: u32,
    pub seq: u32,
    /// The job's activation (window anchor).
    pub base: Time,
    /// 0-based part index where it is now.
    pub part: u32,
    pub cpu: u32,
    /// It left self-suspended ([`SpresCpu::suspend`]): it arrives suspended
    /// ([`SpresCpu::arrive`]).
    pub suspended: bool,
}

/// Where a task's current job is at some instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located {
    /// 0-based part index.
    pub part: usize,
    /// The part's window in the current replenishment period.
    pub start: Time,
    pub end: Time,
    /// Inside the window (else: after the last window of the period, on the last part).
    pub in_window: bool,
    /// Start of the replenishment period.
    pub period_start: Time,
}

/// Where the job anchored at `base` is at `t` (`t ≥ base`; an earlier `t` counts as `base`).
pub fn locate(parts: &[Reservation], base: Time, t: Time) -> Located {
    let delta = parts[0].period;
    let t = t.max(base);
    let k = (t - base) / delta;
    let a = base + k * delta;
    let u = t - a;
    for (j, r) in parts.iter().enumerate() {
        if u >= r.offset && u < r.offset + r.deadline {
            return Located {
                part: j,
                start: a + r.offset,
                end: a + r.offset + r.deadline,
                in_window: true,
                period_start: a,
            };
        }
    }
    // After the last window of this period (before the first is impossible: offset 0).
    let j = parts.len() - 1;
    let r = &parts[j];
    Located { part: j, start: a + r.offset, end: a + r.offset + r.deadline, in_window: false, period_start: a }
}

/// The next window boundary strictly after `t` of the job anchored at `base`.
pub fn next_boundary(parts: &[Reservation], base: Time, t: Time) -> Time {
    let delta = parts[0].period;
    let t = t.max(base);
    let k = (t - base) / delta;
    let a = base + k * delta;
    let u = t - a;
    let mut best = a + delta;
    for r in parts {
        for b in [r.offset, r.offset + r.deadline] {
            if b > u {
                best = best.min(a + b);
            }
        }
    }
    best
}

/// When the job anchored at `base`, located at `loc`, next leaves its part: the end of its
/// window when a later part follows, else the next replenishment period (where part 1 starts
/// again); never for a task with one part.
pub fn next_departure(parts: &[Reservation], loc: &Located) -> Time {
    if parts.len() == 1 {
        Time::MAX
    } else if loc.part + 1 < parts.len() && loc.in_window {
        loc.end
    } else {
        loc.period_start + parts[0].period
    }
}
