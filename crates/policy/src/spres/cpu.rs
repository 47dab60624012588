//! One CPU's SP-RES rules (module docs of [`super`]): its reservations (*slots*, one per part
//! placed on it), the jobs they hold, their budgets, the CPU's CASH slack, and its choice.
//! Only the CPU's own driver touches it (the runtime: under the CPU's lock); jobs move between
//! CPUs only as [`Departure`]s.

use super::{locate, next_boundary, next_departure, Background, Departure, Mode, Reservation, Rules};
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
    /// CASH slack: (deadline, amount), in creation order.
    slack: Vec<(Time, Time)>,
    served: Option<Served>,
    /// Background candidates at the last decision.
    background: usize,
    /// Round-robin: the slot served last in background and the end of its quantum.
    rr_last: Option<usize>,
    rr_until: Time,
    /// The instant service was charged up to.
    since: Time,
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
        let loc = locate(&self.parts[task as usize], h.base, now);
        if self.rules.cash
            && loc.in_window
            && loc.part == s.part as usize
            && s.win != NO_WINDOW
            && s.left > 0
            && loc.end > now
        {
            self.slack.push((loc.end, s.left));
        }
        s.win = NO_WINDOW;
        if self.served.is_some_and(|x| x.slot == k) {
            self.served = None;
        }
        Some(h)
    }

    /// Drops expired and used-up slack.
    pub fn expire(&mut self, now: Time) {
        self.slack.retain(|&(d, a)| d > now && a > 0);
    }

    /// Jobs whose window is now on another part leave their slots (appended to `out`).
    pub fn departures(&mut self, now: Time, out: &mut Vec<Departure>) {
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
                });
                if self.served.is_some_and(|x| x.slot == k) {
                    self.served = None;
                }
            }
        }
    }

    /// Decides what this CPU serves at `now` (after [`departures`](Self::departures)):
    /// budgets of windows entered are refilled; the non-depleted reservation in its window with
    /// the earliest scheduling deadline, else a soft one in background.
    pub fn decide(&mut self, now: Time) {
        let mut best: Option<((Time, u32, u32), usize, Mode)> = None;
        let mut background = 0;
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
        self.background = background;
        if let (Background::RoundRobin { quantum }, Some((_, _, Mode::Background))) = (self.rules.background, best) {
            best = self.round_robin(now, quantum.max(1)).map(|(k, end)| ((end, 0, 0), k, Mode::Background));
        }
        self.served = best.map(|((end, _, _), slot, mode)| Served { slot, mode, end });
    }

    /// Whether slot `k` is in background now (held, located here, not budgeted, soft).
    fn in_background(&self, k: usize, now: Time) -> Option<Time> {
        let s = &self.slots[k];
        let h = s.job?;
        let loc = locate(&self.parts[s.task as usize], h.base, now);
        let budgeted = loc.in_window && s.left > 0 && s.win == loc.start;
        (loc.part == s.part as usize && !budgeted && s.soft).then_some(loc.end)
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
                .filter(|(_, &(d, a))| d > t && a > 0 && (any || d <= own))
                .min_by_key(|(_, &(d, _))| d)
                .map(|(k, _)| k)
        };
        match self.served {
            Some(x) => match pick(x.mode == Mode::Background, x.end) {
                Some(k) => Source::Slack(k),
                None if x.mode == Mode::Budget => Source::Budget(x.slot),
                None => Source::Nothing,
            },
            None => pick(true, 0).map_or(Source::Nothing, Source::Slack),
        }
    }

    /// Charges the service of `[since, now)` (the CPU served its last decision throughout):
    /// slack before budget, as [`source`](Self::source) says at each moment; service beyond a
    /// depleted budget (a late enforcement) is charged nowhere.
    pub fn advance(&mut self, now: Time) {
        let mut t = self.since;
        while t < now {
            let dt = now - t;
            let used = match self.source(t) {
                Source::Slack(k) => {
                    let (d, a) = self.slack[k];
                    let u = dt.min(a).min(d - t);
                    self.slack[k].1 -= u;
                    u
                }
                Source::Budget(k) => {
                    let s = &mut self.slots[k];
                    let u = dt.min(s.left);
                    s.left -= u;
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
        let mut t = Time::MAX;
        for s in &self.slots {
            if let Some(h) = s.job {
                t = t.min(next_boundary(&self.parts[s.task as usize], h.base, now));
            }
        }
        match self.source(now) {
            Source::Slack(k) => {
                let (d, a) = self.slack[k];
                t = t.min(d).min(now + a);
            }
            Source::Budget(k) => t = t.min(now + self.slots[k].left),
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
        self.slack.iter().map(|&(_, a)| a).sum()
    }
}
