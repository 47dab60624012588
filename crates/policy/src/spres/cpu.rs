//! One CPU's SP-RES rules (module docs of [`super`]): its reservations (*slots*, one per part
//! placed on it), the jobs they hold, their budgets, the CPU's CASH slack, and its choice.
//! Only the CPU's own driver touches it (the runtime: under the CPU's lock); jobs move between
//! CPUs only as [`Departure`]s. The state and the choice are here; the charging of service,
//! overruns and the next instants to call back at are in `accounting`.

use super::{locate, Background, Charging, Departure, Mode, Rules, Suspension};
use rtsched_model::placement::Reservation;
use rtsched_model::Time;
use std::sync::Arc;

mod accounting;

/// No window entered yet.
const NO_WINDOW: Time = Time::MAX;

/// A job held by a slot: its sequence number and its activation (the anchor of its windows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    pub seq: u32,
    pub base: Time,
}

/// One reservation placed on this CPU.
#[derive(Debug, Clone)]
struct Slot {
    task: u32,
    /// 0-based part index.
    part: u32,
    soft: bool,
    job: Option<Held>,
    /// Start of the window whose budget `left` holds.
    win: Time,
    left: Time,
    /// Execution charged to this hard reservation after its budget ran out (an overrun, up to
    /// one enforcement latency): reported by [`SpresCpu::take_overruns`] once it ends.
    over: Time,
    /// Its job self-suspended ([`SpresCpu::suspend`]) and has not woken: held, never served.
    suspended: bool,
}

/// What the served reservation (or an idle CPU) consumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Slack(usize),
    Budget(usize),
    Nothing,
}

/// The choice of the last [`SpresCpu::decide`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Served {
    slot: usize,
    mode: Mode,
    /// Its scheduling deadline (window end) at the decision.
    end: Time,
}

/// One CPU's reservations and CASH slack, and what it serves.
#[derive(Debug, Clone)]
pub struct SpresCpu {
    cpu: u32,
    parts: Arc<Vec<Vec<Reservation>>>,
    rules: Rules,
    slots: Vec<Slot>,
    /// CASH slack: (deadline, amount, owner), in creation order. The owner is the slot whose
    /// suspended job lent it ([`Suspension::Donate`]): that job takes back what is left of it
    /// when it wakes; `None` for the slack of a completion.
    slack: Vec<(Time, Time, Option<usize>)>,
    served: Option<Served>,
    /// Background candidates at the last decision.
    background: usize,
    /// Round-robin: the slot served last in background and the end of its quantum.
    rr_last: Option<usize>,
    rr_until: Time,
    /// The instant service was charged up to.
    since: Time,
    /// [`Charging::Execution`]: what the worker executes (set by [`SpresCpu::dispatch`]).
    exec: Option<Served>,
    /// [`Charging::Execution`]: the worker is in a scheduler callback; nothing is charged.
    paused: bool,
    /// Overruns that ended, not yet taken: (task, ns).
    overruns: Vec<(u32, Time)>,
}
impl SpresCpu {
    /// CPU `cpu` of the placement whose reservations per task (in window order) are `parts`.
    pub fn new(cpu: u32, parts: Arc<Vec<Vec<Reservation>>>, rules: Rules) -> SpresCpu {
        let mut slots = Vec::new();
        for ps in parts.iter() {
            for (j, r) in ps.iter().enumerate() {
                if r.cpu == cpu {
                    slots.push(Slot {
                        task: r.task as u32,
                        part: j as u32,
                        soft: ps.len() > 1 || rules.soft_unsplit,
                        job: None,
                        win: NO_WINDOW,
                        left: 0,
                        over: 0,
                        suspended: false,
                    });
                }
            }
        }
        SpresCpu {
            cpu,
            parts,
            rules,
            slots,
            slack: Vec::new(),
            served: None,
            background: 0,
            rr_last: None,
            rr_until: 0,
            since: 0,
            exec: None,
            paused: false,
            overruns: Vec::new(),
        }
    }

    pub fn cpu(&self) -> u32 {
        self.cpu
    }

    fn slot_of(&self, task: u32, part: u32) -> Option<usize> {
        self.slots.iter().position(|s| s.task == task && s.part == part)
    }

    /// Job `seq` of `task` (activation `base`) enters the slot of its part `part` here.
    /// Returns false (and does nothing) if this CPU has no such part or it holds a job already.
    pub fn activate(&mut self, task: u32, part: u32, seq: u32, base: Time) -> bool {
        match self.slot_of(task, part) {
            Some(k) if self.slots[k].job.is_none() => {
                self.slots[k].job = Some(Held { seq, base });
                true
            }
            _ => false,
        }
    }

    /// A departed job arrives here ([`Departure`]): it enters the slot of its part, suspended
    /// if it departed suspended (its new part's budget is refilled when its window opens, as
    /// for any job; it is served once it wakes). Returns false as [`activate`](Self::activate).
    pub fn arrive(&mut self, d: &Departure) -> bool {
        if !self.activate(d.task, d.part, d.seq, d.base) {
            return false;
        }
        if d.suspended {
            if let Some(k) = self.slot_of(d.task, d.part) {
                self.slots[k].suspended = true;
            }
        }
        true
    }

    /// The job of `task` held here self-suspends at `now` (service charged up to `now` by the
    /// caller: [`advance`](Self::advance) or [`pause`](Self::pause)). The job leaves its
    /// reservation: it stays held but is never served until [`wake`](Self::wake), and the CPU
    /// goes to the next reservation by the §III-A rules (EDF over the active, non-depleted
    /// reservations, then soft ones in background). Windows, migrations at window boundaries
    /// and replenishments go on by time, unchanged. What happens to its budget is
    /// [`Rules::suspension`]:
    ///
    /// * [`Suspension::Keep`] (default): the budget is charged only while the job executes
    ///   (LITMUS^RT's P-RES charges a reservation while its client runs), so it is charged
    ///   nothing while suspended and keeps the budget it has: the suspension is not a
    ///   completion, and no CASH slack is made of it. With budgets sized
    ///   suspension-obliviously (C + S, as the placement heuristics size them) a job that
    ///   wakes any later than its suspension bound still has its remaining execution.
    /// * [`Suspension::Donate`] (Brandenburg & Gül, RTSS 2016, §VIII, "Self suspensions"):
    ///   the budget left in its current window becomes CASH slack with the window's deadline,
    ///   lent by this slot — burnt at rate 1 while the job is suspended (by the CPU's other
    ///   reservations or, idle, by CASH's idle rule); a window that opens while it is
    ///   suspended lends its fresh budget the same way ([`decide`](Self::decide)).
    ///
    /// Returns false if no job of `task` is held here or it is suspended already.
    pub fn suspend(&mut self, task: u32, now: Time) -> bool {
        let Some(k) = self.slots.iter().position(|s| s.task == task && s.job.is_some()) else { return false };
        if self.slots[k].suspended {
            return false;
        }
        self.slots[k].suspended = true;
        if self.served.is_some_and(|x| x.slot == k) {
            self.served = None;
        }
        self.left_slot(k);
        self.lend(k, now);
        true
    }

    /// [`Suspension::Donate`]: the suspended job of slot `k` lends the budget left in its
    /// current window (the one whose budget `left` holds, if it is in it at `now`) as CASH
    /// slack with that window's deadline.
    fn lend(&mut self, k: usize, now: Time) {
        if self.rules.suspension != Suspension::Donate || !self.rules.cash {
            return;
        }
        let s = &mut self.slots[k];
        let Some(h) = s.job else { return };
        let loc = locate(&self.parts[s.task as usize], h.base, now);
        if loc.in_window && loc.part == s.part as usize && s.win == loc.start && s.left > 0 && loc.end > now {
            self.slack.push((loc.end, std::mem::take(&mut s.left), Some(k)));
        }
    }

    /// Slack lent by slot `k` becomes anybody's (its job left the slot).
    fn disown(&mut self, k: usize) {
        for e in &mut self.slack {
            if e.2 == Some(k) {
                e.2 = None;
            }
        }
    }

    /// The suspended job of `task` held here wakes at `now` (service charged up to `now`) and
    /// is served again by the §III-A rules at the next [`decide`](Self::decide). With
    /// [`Suspension::Keep`] it re-enters its reservation with the budget the reservation kept
    /// (refilled meanwhile if a new window opened: the replenishment rule is unchanged); with
    /// [`Suspension::Donate`] it regains whatever is left of the slack it lent (RTSS 2016,
    /// §VIII) as its budget — nothing if that slack was used up or expired with its window.
    /// Returns false if no suspended job of `task` is held here.
    pub fn wake(&mut self, task: u32, now: Time) -> bool {
        let Some(k) = self.slots.iter().position(|s| s.task == task && s.job.is_some() && s.suspended) else {
            return false;
        };
        self.slots[k].suspended = false;
        if let Some(i) = self.slack.iter().position(|e| e.2 == Some(k)) {
            let (d, a, _) = self.slack.remove(i);
            if d > now {
                self.slots[k].left += a;
            }
        }
        true
    }

    /// Whether the job of `task` held here is self-suspended.
    pub fn is_suspended(&self, task: u32) -> bool {
        self.slots.iter().any(|s| s.task == task && s.job.is_some() && s.suspended)
    }

    /// The job of `task` held here, if any.
    pub fn holds(&self, task: u32) -> Option<Held> {
        self.slots.iter().find(|s| s.task == task && s.job.is_some()).and_then(|s| s.job)
    }

    /// Every job held here: (task, part, job).
    pub fn held(&self) -> impl Iterator<Item = (u32, u32, Held)> + '_ {
        self.slots.iter().filter_map(|s| s.job.map(|h| (s.task, s.part, h)))
    }

    /// The job of `task` held here completed at `now`: the reservation turns inactive (polling)
    /// and, with CASH, its unused budget becomes slack with the window's deadline if the job
    /// completed inside the window whose budget it holds. Returns the job, if it was here.
    pub fn complete(&mut self, task: u32, now: Time) -> Option<Held> {
        let k = self.slots.iter().position(|s| s.task == task && s.job.is_some())?;
        let s = &mut self.slots[k];
        let h = s.job.take()?;
        s.suspended = false;
        let loc = locate(&self.parts[task as usize], h.base, now);
        if self.rules.cash
            && loc.in_window
            && loc.part == s.part as usize
            && s.win != NO_WINDOW
            && s.left > 0
            && loc.end > now
        {
            self.slack.push((loc.end, s.left, None));
        }
        s.win = NO_WINDOW;
        if self.served.is_some_and(|x| x.slot == k) {
            self.served = None;
        }
        self.disown(k);
        self.left_slot(k);
        Some(h)
    }

    /// Jobs whose window is now on another part leave their slots (appended to `out`).
    pub fn departures(&mut self, now: Time, out: &mut Vec<Departure>) {
        let mut gone = Vec::new();
        for (k, s) in self.slots.iter_mut().enumerate() {
            let Some(h) = s.job else { continue };
            let ps = &self.parts[s.task as usize];
            let loc = locate(ps, h.base, now);
            if loc.part != s.part as usize {
                s.job = None;
                out.push(Departure {
                    task: s.task,
                    seq: h.seq,
                    base: h.base,
                    part: loc.part as u32,
                    cpu: ps[loc.part].cpu,
                    suspended: std::mem::take(&mut s.suspended),
                });
                if self.served.is_some_and(|x| x.slot == k) {
                    self.served = None;
                }
                gone.push(k);
            }
        }
        for k in gone {
            self.disown(k);
            self.left_slot(k);
        }
    }

    /// Slot `k`'s job left it (completed or departed): the worker no longer executes it as
    /// this slot's, and an overrun it had ends.
    fn left_slot(&mut self, k: usize) {
        if self.exec.is_some_and(|x| x.slot == k) {
            self.exec = None;
        }
        self.end_overrun(k);
    }

    fn end_overrun(&mut self, k: usize) {
        let s = &mut self.slots[k];
        if s.over > 0 {
            self.overruns.push((s.task, s.over));
            s.over = 0;
        }
    }

    /// Decides what this CPU serves at `now` (after [`departures`](Self::departures)):
    /// budgets of windows entered are refilled; the non-depleted reservation in its window with
    /// the earliest scheduling deadline, else a soft one in background.
    pub fn decide(&mut self, now: Time) {
        let mut best: Option<((Time, u32, u32), usize, Mode)> = None;
        let mut background = 0;
        let mut refilled = Vec::new();
        let mut lent = Vec::new();
        for (k, s) in self.slots.iter_mut().enumerate() {
            let Some(h) = s.job else { continue };
            let ps = &self.parts[s.task as usize];
            let loc = locate(ps, h.base, now);
            if loc.part != s.part as usize {
                continue; // leaving (departures not taken yet)
            }
            if loc.in_window && s.win != loc.start {
                s.win = loc.start;
                s.left = ps[loc.part].budget;
                if s.over > 0 {
                    refilled.push(k);
                }
            }
            if s.suspended {
                // Its windows and refills go on by time (the replenishment rule is unchanged);
                // it is served again once it wakes. With `Donate` a refill made while it is
                // suspended is lent as slack at once (`lend`).
                if s.left > 0 && s.win == loc.start {
                    lent.push(k);
                }
                continue;
            }
            let mode = if loc.in_window && s.left > 0 {
                Mode::Budget
            } else if s.soft {
                background += 1;
                Mode::Background
            } else {
                continue;
            };
            let key = (loc.end, s.task, s.part);
            let better = match best {
                None => true,
                Some((k2, _, m2)) => (mode == Mode::Budget && m2 == Mode::Background) || (mode == m2 && key < k2),
            };
            if better {
                best = Some((key, k, mode));
            }
        }
        for k in lent {
            self.lend(k, now);
        }
        self.background = background;
        if let (Background::RoundRobin { quantum }, Some((_, _, Mode::Background))) = (self.rules.background, best) {
            best = self.round_robin(now, quantum.max(1)).map(|(k, end)| ((end, 0, 0), k, Mode::Background));
        }
        self.served = best.map(|((end, _, _), slot, mode)| Served { slot, mode, end });
        for k in refilled {
            self.end_overrun(k);
        }
        // The job the worker executes is charged as the rules now serve it (a refilled window,
        // a depleted soft budget) while they still choose it.
        let same = self.exec.is_some() && self.exec.map(|x| x.slot) == self.served.map(|y| y.slot);
        if self.rules.charging == Charging::Decision || same {
            self.exec = self.served;
        }
    }

    /// Whether slot `k` is in background now (held, located here, not budgeted, soft).
    fn in_background(&self, k: usize, now: Time) -> Option<Time> {
        let s = &self.slots[k];
        let h = s.job?;
        let loc = locate(&self.parts[s.task as usize], h.base, now);
        let budgeted = loc.in_window && s.left > 0 && s.win == loc.start;
        (loc.part == s.part as usize && !budgeted && s.soft && !s.suspended).then_some(loc.end)
    }

    /// The round-robin choice among the background candidates: the one served keeps the CPU
    /// until its quantum ends; then the next candidate after it in slot order.
    fn round_robin(&mut self, now: Time, quantum: Time) -> Option<(usize, Time)> {
        if let Some(k) = self.rr_last {
            if now < self.rr_until && self.served.is_some_and(|x| x.slot == k && x.mode == Mode::Background) {
                if let Some(end) = self.in_background(k, now) {
                    return Some((k, end));
                }
            }
        }
        let n = self.slots.len();
        let start = self.rr_last.map_or(0, |k| k + 1);
        for i in 0..n {
            let k = (start + i) % n;
            if let Some(end) = self.in_background(k, now) {
                self.rr_last = Some(k);
                self.rr_until = now.saturating_add(quantum);
                return Some((k, end));
            }
        }
        None
    }

    /// What this CPU serves: (task, job, mode).
    pub fn served(&self) -> Option<(u32, Held, Mode)> {
        let x = self.served?;
        let s = &self.slots[x.slot];
        s.job.map(|h| (s.task, h, x.mode))
    }
}

#[cfg(test)]
mod donate_tests;
#[cfg(test)]
mod suspension_tests;
#[cfg(test)]
mod tests;
