//! One CPU's accounting (the rules of [`super`]'s module docs): service charged to CASH slack
//! before budget ([`SpresCpu::advance`]), the runtime worker's execution charging
//! ([`SpresCpu::dispatch`], [`SpresCpu::pause`], [`SpresCpu::resume`]) and the overruns it
//! measures, slack expiry, and the instants the driver must call back at
//! ([`SpresCpu::next_event`], [`SpresCpu::next_migration`]).

use super::super::{locate, next_boundary, next_departure, Background, Charging, Mode};
use super::{Source, SpresCpu};
use rtsched_model::Time;

impl SpresCpu {
    /// Drops expired and used-up slack.
    pub fn expire(&mut self, now: Time) {
        self.slack.retain(|&(d, a, _)| d > now && a > 0);
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
