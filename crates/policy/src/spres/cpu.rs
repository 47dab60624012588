//! One CPU's SP-RES rules (module docs of [`super`]): its reservations (*slots*, one per part
//! placed on it), the jobs they hold, their budgets, the CPU's CASH slack, and its choice.
//! Only the CPU's own driver touches it (the runtime: under the CPU's lock); jobs move between
//! CPUs only as [`Departure`]s.

use super::{locate, next_boundary, next_departure, Background, Charging, Departure, Mode, Rules, Suspension};
use rtsched_model::placement::Reservation;
use rtsched_model::Time;
use std::sync::Arc;

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

    /// Drops expired and used-up slack.
    pub fn expire(&mut self, now: Time) {
        self.slack.retain(|&(d, a, _)| d > now && a > 0);
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

    /// [`Charging::Execution`]: the CPU's worker dispatches what the rules serve now (after
    /// [`decide`](Self::decide); nothing when they serve nothing). An overrun of the job it
    /// ran before ends.
    pub fn dispatch(&mut self) {
        if let Some(x) = self.exec {
            if self.served.map(|y| y.slot) != Some(x.slot) {
                self.end_overrun(x.slot);
            }
        }
        self.exec = self.served;
    }

    /// [`Charging::Execution`]: the CPU's worker stopped executing at `now` to run a scheduler
    /// callback: service is charged up to `now`, then nothing until [`resume`](Self::resume).
    pub fn pause(&mut self, now: Time) {
        self.advance(now);
        if self.rules.charging == Charging::Execution {
            self.paused = true;
        }
    }

    /// [`Charging::Execution`]: the worker leaves its callback at `now` and executes (or
    /// idles) again; charging restarts at `now`.
    pub fn resume(&mut self, now: Time) {
        if self.paused {
            self.since = self.since.max(now);
            self.paused = false;
        }
    }

    /// Overruns that ended since the last call: (task, ns of execution a hard reservation
    /// received after its budget ran out). With [`Charging::Execution`] this is the budget
    /// enforcement latency as the job felt it; with [`Charging::Decision`] always empty.
    pub fn take_overruns(&mut self) -> Vec<(u32, Time)> {
        std::mem::take(&mut self.overruns)
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

    /// The source the CPU consumes at `t`: CASH slack (the earliest-deadline unexpired slack
    /// whose deadline is no later than the served reservation's scheduling deadline; any, in
    /// background or when idle), else the served reservation's budget.
    fn source(&self, t: Time) -> Source {
        let pick = |any: bool, own: Time| {
            self.slack
                .iter()
                .enumerate()
                .filter(|(_, &(d, a, _))| d > t && a > 0 && (any || d <= own))
                .min_by_key(|(_, &(d, _, _))| d)
                .map(|(k, _)| k)
        };
        match self.exec {
            Some(x) => match pick(x.mode == Mode::Background, x.end) {
                Some(k) => Source::Slack(k),
                None if x.mode == Mode::Budget => Source::Budget(x.slot),
                None => Source::Nothing,
            },
            None => pick(true, 0).map_or(Source::Nothing, Source::Slack),
        }
    }

    /// Charges the service of `[since, now)` (the CPU served its last decision throughout, or
    /// with [`Charging::Execution`]: the worker executed its last dispatch, outside callbacks):
    /// slack before budget, as [`source`](Self::source) says at each moment; service beyond a
    /// depleted budget (a late enforcement) is charged nowhere, and for a hard reservation it
    /// is counted as its overrun.
    pub fn advance(&mut self, now: Time) {
        if self.paused {
            self.since = self.since.max(now);
            return;
        }
        let mut t = self.since;
        while t < now {
            let dt = now - t;
            let used = match self.source(t) {
                Source::Slack(k) => {
                    let (d, a, _) = self.slack[k];
                    let u = dt.min(a).min(d - t);
                    self.slack[k].1 -= u;
                    u
                }
                Source::Budget(k) => {
                    let s = &mut self.slots[k];
                    let u = dt.min(s.left);
                    s.left -= u;
                    if u == 0 && !s.soft {
                        s.over += dt;
                    }
                    u
                }
                Source::Nothing => 0,
            };
            if used == 0 {
                break;
            }
            t += used;
        }
        self.since = self.since.max(now);
    }

    /// The next instant this CPU's rules must be consulted (after [`decide`](Self::decide)):
    /// the next window boundary of a job held here, the exhaustion of what the CPU consumes
    /// (budget, or slack and its deadline), the end of a round-robin quantum; `Time::MAX` if
    /// none.
    pub fn next_event(&self, now: Time) -> Time {
        self.next_event_with(now, true)
    }

    /// [`next_event`](Self::next_event), without the exhaustion of budgets when `enforce` is
    /// false (the broken twin of the runtime's overrun oracle: no budget enforcement).
    pub fn next_event_with(&self, now: Time, enforce: bool) -> Time {
        let mut t = Time::MAX;
        for s in &self.slots {
            if let Some(h) = s.job {
                t = t.min(next_boundary(&self.parts[s.task as usize], h.base, now));
            }
        }
        match self.source(now) {
            Source::Slack(k) => {
                let (d, a, _) = self.slack[k];
                t = t.min(d).min(now + a);
            }
            Source::Budget(k) if enforce && self.slots[k].left > 0 => t = t.min(now + self.slots[k].left),
            Source::Budget(_) => {}
            Source::Nothing => {}
        }
        if let (Background::RoundRobin { .. }, Some(x)) = (self.rules.background, self.served) {
            if x.mode == Mode::Background && self.background > 1 {
                t = t.min(self.rr_until);
            }
        }
        t
    }

    /// The next instant a job held here leaves this CPU (its window moves to a part on
    /// another CPU); `Time::MAX` if none.
    pub fn next_migration(&self, now: Time) -> Time {
        let mut t = Time::MAX;
        for s in &self.slots {
            if let Some(h) = s.job {
                let ps = &self.parts[s.task as usize];
                let mut loc = locate(ps, h.base, now);
                // A job moving between parts on this CPU is not a migration: look further.
                for _ in 0..=2 * ps.len() {
                    let d = next_departure(ps, &loc);
                    if d == Time::MAX {
                        break;
                    }
                    let next = locate(ps, h.base, d);
                    if ps[next.part].cpu != self.cpu {
                        t = t.min(d);
                        break;
                    }
                    loc = next;
                }
            }
        }
        t
    }

    /// The remaining budget of each held job's current window and the slack: for tests and
    /// end-of-run checks.
    pub fn slack_total(&self) -> Time {
        self.slack.iter().map(|&(_, a, _)| a).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Charging, Mode, Rules};
    use super::*;
    use rtsched_model::Placement;
    use rtsched_model::TaskSet;

    /// One hard reservation (budget 10, period and window 20) on one CPU.
    fn one(charging: Charging) -> SpresCpu {
        let ts = TaskSet::from_ct(&[(10, 20)]).unwrap();
        let pl = Placement::whole(&ts, &[vec![0]]).unwrap();
        SpresCpu::new(0, Arc::new(pl.parts_by_task(1)), Rules { charging, ..Rules::new(false, false) })
    }

    #[test]
    fn execution_charging_skips_callbacks_and_measures_the_overrun() {
        let mut c = one(Charging::Execution);
        assert!(c.activate(0, 0, 0, 0));
        // Release callback at 0 (paused), decision, dispatch, back to the job at 3.
        c.pause(0);
        c.decide(0);
        c.dispatch();
        c.resume(3);
        assert_eq!(c.next_event(3), 13, "the budget runs out 10 ns after the job starts");
        // Another callback from 5 to 7: not charged.
        c.pause(5);
        c.resume(7);
        assert_eq!(c.next_event(7), 15);
        // The enforcing callback comes 2 ns late: a 2 ns overrun, reported when it ends.
        c.pause(17);
        c.decide(17);
        assert_eq!(c.served(), None, "a depleted hard reservation is cut off");
        assert!(c.take_overruns().is_empty(), "the job still runs until the worker stops it");
        c.dispatch();
        assert_eq!(c.take_overruns(), vec![(0, 2)]);
        c.resume(18);
        c.advance(30);
        assert!(c.take_overruns().is_empty(), "idle: nothing charged");
    }

    #[test]
    fn decision_charging_drains_from_the_decision_and_never_overruns() {
        let mut c = one(Charging::Decision);
        assert!(c.activate(0, 0, 0, 0));
        c.decide(0);
        // pause/resume are no-ops for the synchronous driver: charged from the decision.
        c.pause(0);
        c.resume(3);
        c.advance(3);
        assert_eq!(c.next_event(3), 10);
        c.advance(10);
        c.decide(10);
        assert_eq!(c.served(), None);
        assert!(c.take_overruns().is_empty());
        // Without enforcement the exhaustion is not an event.
        let mut d = one(Charging::Decision);
        d.activate(0, 0, 0, 0);
        d.decide(0);
        assert_eq!(d.next_event_with(0, false), 20, "only the window end");
        assert_eq!(d.served().map(|x| x.2), Some(Mode::Budget));
    }
}

#[cfg(test)]
mod suspension_tests {
    //! Self-suspension: a suspended job is held but never served nor charged, and its
    //! reservation keeps its budget (with or without CASH).
    use super::super::{Mode, Rules};
    use super::*;
    use rtsched_model::{Placement, TaskSet};

    /// Two hard reservations on one CPU: task 0 (budget 4, window 10), task 1 (budget 4,
    /// window 20).
    fn two(cash: bool) -> SpresCpu {
        let ts = TaskSet::from_ct(&[(4, 10), (4, 20)]).unwrap();
        let pl = Placement::whole(&ts, &[vec![0, 1]]).unwrap();
        let mut c = SpresCpu::new(0, Arc::new(pl.parts_by_task(2)), Rules::new(false, cash));
        assert!(c.activate(0, 0, 0, 0));
        assert!(c.activate(1, 0, 0, 0));
        c.decide(0);
        c
    }

    #[test]
    fn a_suspended_job_keeps_its_budget_and_makes_no_slack() {
        let mut c = two(true);
        assert_eq!(c.served().map(|x| x.0), Some(0), "earliest scheduling deadline first");
        c.advance(1); // task 0 used 1 of 4
        assert!(c.suspend(0, 1));
        assert!(!c.suspend(0, 1), "suspended twice");
        assert!(c.is_suspended(0));
        assert_eq!(c.slack_total(), 0, "a suspension is not a completion: no CASH slack");
        c.decide(1);
        assert_eq!(c.served().map(|x| (x.0, x.2)), Some((1, Mode::Budget)), "the CPU goes to the next reservation");
        c.advance(3);
        assert!(c.wake(0, 3));
        assert!(!c.wake(0, 3), "one wake per suspension");
        c.decide(3);
        assert_eq!(c.served().map(|x| x.0), Some(0));
        assert_eq!(c.next_event(3), 6, "3 ns of budget left: nothing charged while suspended");
    }

    #[test]
    fn without_cash_the_reservation_keeps_its_budget_and_is_not_charged_while_suspended() {
        let mut c = two(false);
        c.advance(1);
        assert!(c.suspend(0, 1));
        c.decide(1);
        assert_eq!(c.served().map(|x| x.0), Some(1));
        c.advance(5); // task 1 runs out of its budget of 4 at 5
        assert!(c.wake(0, 5));
        c.decide(5);
        assert_eq!(c.served().map(|x| x.0), Some(0));
        assert_eq!(c.next_event(5), 8, "3 ns of its budget left");
        // A suspension that outlasts the window: the next window refills the budget.
        c.advance(6);
        assert!(c.suspend(0, 6));
        c.decide(6);
        assert_eq!(c.served(), None, "task 1 depleted, task 0 suspended: idle");
        c.advance(12);
        c.decide(12); // window [10, 20) of task 0 opens while it is suspended
        assert_eq!(c.served(), None);
        assert!(c.wake(0, 12));
        c.decide(12);
        assert_eq!(c.next_event(12), 16, "a full budget of 4 in its new window");
    }
}

#[cfg(test)]
mod donate_tests {
    //! [`Suspension::Donate`] (Brandenburg & Gül, RTSS 2016, §VIII): a suspending job's
    //! budget is CASH slack until it wakes, and it takes back what is left; hand-worked
    //! against [`Suspension::Keep`] on the same events.
    use super::super::{Mode, Rules, Suspension};
    use super::*;
    use rtsched_model::{Placement, TaskSet};

    /// Hard reservations on one CPU, CASH on: task 0 (budget 4, window 10) and, if `both`,
    /// task 1 (budget 4, window 20); both jobs activated at 0.
    fn cpu(rule: Suspension, both: bool) -> SpresCpu {
        let ts = TaskSet::from_ct(&[(4, 10), (4, 20)]).unwrap();
        let pl = Placement::whole(&ts, &[vec![0, 1]]).unwrap();
        let rules = Rules { suspension: rule, ..Rules::new(false, true) };
        let mut c = SpresCpu::new(0, Arc::new(pl.parts_by_task(2)), rules);
        assert!(c.activate(0, 0, 0, 0));
        if both {
            assert!(c.activate(1, 0, 0, 0));
        }
        c.decide(0);
        c
    }

    #[test]
    fn the_lent_budget_is_used_by_the_other_reservation_first_and_the_rest_is_regained() {
        // Task 0 runs [0, 1), suspends at 1 with 3 of its 4 left, wakes at 3.
        let run = |rule| {
            let mut c = cpu(rule, true);
            c.advance(1);
            assert!(c.suspend(0, 1));
            let lent = c.slack_total();
            c.decide(1);
            assert_eq!(c.served().map(|x| (x.0, x.2)), Some((1, Mode::Budget)));
            c.advance(3);
            let left_at_wake = c.slack_total();
            assert!(c.wake(0, 3));
            c.decide(3);
            assert_eq!(c.served().map(|x| x.0), Some(0));
            // Task 0's budget now.
            let t0_budget = c.next_event(3) - 3;
            (lent, left_at_wake, t0_budget)
        };
        // Keep: no slack; task 1 ran [1, 3) on its own budget; task 0 has its 3 ns.
        assert_eq!(run(Suspension::Keep), (0, 0, 3));
        // Donate: 3 ns of slack (deadline 10 ≤ task 1's 20, so CASH serves task 1 from it
        // first); 1 ns is left at the wake-up, and that is task 0's whole budget.
        assert_eq!(run(Suspension::Donate), (3, 1, 1));
        // And task 1 kept its own budget under Donate: 4 ns after task 0 finishes at 4.
        let mut c = cpu(Suspension::Donate, true);
        c.advance(1);
        c.suspend(0, 1);
        c.decide(1);
        c.advance(3);
        c.wake(0, 3);
        c.decide(3);
        c.advance(4);
        c.decide(4);
        assert_eq!(c.served().map(|x| x.0), Some(1), "task 0 cut off at 4: its regained 1 ns is spent");
        assert!(!c.is_suspended(0));
        assert_eq!(c.next_event(4), 8, "task 1's own budget of 4 untouched");
    }

    #[test]
    fn a_late_waker_on_an_idle_cpu_finds_its_budget_burnt_and_a_hard_reservation_cuts_it_off() {
        // Task 0 alone: runs [0, 1), suspends with 3 left; wakes at 5, one past the 3 ns of
        // suspension its budget would have covered.
        let mut keep = cpu(Suspension::Keep, false);
        let mut donate = cpu(Suspension::Donate, false);
        for c in [&mut keep, &mut donate] {
            c.advance(1);
            assert!(c.suspend(0, 1));
            c.decide(1);
            assert_eq!(c.served(), None);
            c.advance(5);
            c.expire(5);
            assert!(c.wake(0, 5));
            c.decide(5);
        }
        assert_eq!(keep.served().map(|x| x.0), Some(0));
        assert_eq!(keep.next_event(5), 8, "keep: the 3 ns kept");
        assert_eq!(donate.slack_total(), 0, "the idle CPU burnt the lent 3 ns by 4");
        assert_eq!(donate.served(), None, "donate: depleted, hard: cut off until its next window");
        assert_eq!(donate.next_event(5), 10);
    }

    #[test]
    fn a_window_that_opens_while_the_job_is_suspended_lends_its_refill() {
        let mut c = cpu(Suspension::Donate, false);
        c.advance(1);
        assert!(c.suspend(0, 1));
        c.decide(1);
        c.advance(12);
        c.expire(12);
        c.decide(12); // window [10, 20) opens at 10 (decided at 12): its 4 ns are lent
        assert_eq!(c.slack_total(), 4);
        c.advance(13); // idle: 1 ns burnt
        assert!(c.wake(0, 13));
        assert_eq!(c.slack_total(), 0, "the job took its slack back");
        c.decide(13);
        assert_eq!(c.served().map(|x| x.0), Some(0));
        assert_eq!(c.next_event(13), 16, "3 ns regained");
    }

    #[test]
    fn completion_slack_is_not_taken_by_a_waking_job() {
        // Task 1 completes at 2 with 2 left (slack, nobody's); task 0 suspended at 1 regains
        // only its own lent slack, not task 1's.
        let mut c = cpu(Suspension::Donate, true);
        c.advance(1);
        c.suspend(0, 1); // lends 3, deadline 10
        c.decide(1);
        c.advance(2); // task 1 served from task 0's slack: 2 left of it
        assert!(c.complete(1, 2).is_some()); // task 1's 4 ns of budget: slack, deadline 20
        c.decide(2);
        assert_eq!(c.slack_total(), 6);
        assert!(c.wake(0, 2));
        assert_eq!(c.slack_total(), 4, "only the 2 ns it lent and were left");
    }

    #[test]
    fn the_rule_is_named_alike_in_both_engines_and_donate_needs_cash() {
        assert_eq!(Suspension::parse("keep", false).unwrap(), Suspension::Keep);
        assert_eq!(Suspension::parse("donate", true).unwrap(), Suspension::Donate);
        let e = Suspension::parse("donate", false).unwrap_err().to_string();
        assert_eq!(e, "field 'suspension': donate makes a suspending job's budget CASH slack and needs cash=true");
        let e = Suspension::parse("give", true).unwrap_err().to_string();
        assert_eq!(e, "field 'suspension': unknown rule \"give\"; use keep or donate");
    }
}
