//! The synchronous driver of every CPU's SP-RES rules: departures are delivered at the instant
//! they happen. The simulator runs it; the runtime mechanism (which hands jobs over by timer
//! and signal) is tested against it.

use super::{Departure, Held, Mode, Rules, SpresCpu};
use rtsched_model::placement::{Placement, Reservation};
use rtsched_model::Time;
use std::sync::Arc;

/// SP-RES on all CPUs of a placement.
#[derive(Debug, Clone)]
pub struct Spres {
    cpus: Vec<SpresCpu>,
    parts: Arc<Vec<Vec<Reservation>>>,
    moving: Vec<Departure>,
}

impl Spres {
    /// The rules `rules` over `placement` (every CPU idle, no job), which must have passed
    /// [`Placement::check_runnable`] for its task set.
    pub fn new(placement: &Placement, rules: Rules) -> Spres {
        let parts = Arc::new(placement.parts_by_task(placement.tasks.len()));
        let cpus = (0..placement.m).map(|c| SpresCpu::new(c, parts.clone(), rules)).collect();
        Spres { cpus, parts, moving: Vec::new() }
    }

    pub fn m(&self) -> usize {
        self.cpus.len()
    }

    /// CPU `c`'s rules.
    pub fn cpu(&self, c: usize) -> &SpresCpu {
        &self.cpus[c]
    }

    /// The CPU of `task`'s first part (where its jobs are activated).
    pub fn home(&self, task: u32) -> u32 {
        self.parts[task as usize][0].cpu
    }

    /// Charges every CPU's service up to `now`.
    pub fn advance(&mut self, now: Time) {
        for c in &mut self.cpus {
            c.advance(now);
        }
    }

    /// Job `seq` of `task` becomes current with activation `base`: it enters its first part.
    pub fn activate(&mut self, task: u32, seq: u32, base: Time) {
        let home = self.home(task) as usize;
        self.cpus[home].activate(task, 0, seq, base);
    }

    /// The current job of `task` completed at `now` (wherever it is); returns it.
    pub fn complete(&mut self, task: u32, now: Time) -> Option<Held> {
        self.cpus.iter_mut().find_map(|c| c.complete(task, now))
    }

    /// The current job of `task` self-suspends at `now` (wherever it is held; service charged
    /// up to `now`): [`SpresCpu::suspend`]. Returns false if it is not held or suspended already.
    pub fn suspend(&mut self, task: u32, now: Time) -> bool {
        self.cpus.iter_mut().any(|c| c.suspend(task, now))
    }

    /// The suspended current job of `task` wakes at `now`: [`SpresCpu::wake`].
    pub fn wake(&mut self, task: u32, now: Time) -> bool {
        self.cpus.iter_mut().any(|c| c.wake(task, now))
    }

    /// Expires slack, moves jobs whose window changed CPU, and decides on every CPU.
    pub fn step(&mut self, now: Time) {
        for c in &mut self.cpus {
            c.expire(now);
        }
        // An arrival is located at its part at `now`, so the second round finds nothing; the
        // bound only guards against a rule that contradicts itself.
        for _ in 0..4 {
            self.moving.clear();
            for c in &mut self.cpus {
                c.departures(now, &mut self.moving);
            }
            if self.moving.is_empty() {
                break;
            }
            for d in &self.moving {
                self.cpus[d.cpu as usize].arrive(d);
            }
        }
        for c in &mut self.cpus {
            c.decide(now);
        }
    }

    /// What CPU `c` serves: (task, job sequence number, mode).
    pub fn served(&self, c: usize) -> Option<(u32, u32, Mode)> {
        self.cpus[c].served().map(|(t, h, m)| (t, h.seq, m))
    }

    /// The earliest instant any CPU's rules must be consulted again.
    pub fn next_event(&self, now: Time) -> Time {
        self.cpus.iter().map(|c| c.next_event(now)).min().unwrap_or(Time::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{locate, next_boundary, Background};
    use super::*;
    use rtsched_model::TaskSet;

    /// Seed 004 Fig. 2's placement (flipped order): τ3'' = (5, 10, 15) on CPU 1 at offset 0,
    /// τ3' = (5, 5, 15) on CPU 0 at offset 10.
    fn fig2() -> (TaskSet, Placement) {
        let ts = TaskSet::from_ct(&[(10, 15), (10, 15), (10, 15)]).unwrap();
        let text = r#"{"m": 2, "schedulable": true, "heuristic": "hand",
          "cpus": [{"cpu": 0, "reservations": [
              {"task": 0, "budget": 10, "period": 15, "deadline": 15, "offset": 0, "part": 1, "parts": 1},
              {"task": 2, "budget": 5, "period": 15, "deadline": 5, "offset": 10, "part": 2, "parts": 2}]},
            {"cpu": 1, "reservations": [
              {"task": 1, "budget": 10, "period": 15, "deadline": 15, "offset": 0, "part": 1, "parts": 1},
              {"task": 2, "budget": 5, "period": 15, "deadline": 10, "offset": 0, "part": 1, "parts": 2}]}],
          "tasks": [{"task": 0, "period_ratio": 1, "parts": 1}, {"task": 1, "period_ratio": 1, "parts": 1},
                    {"task": 2, "period_ratio": 1, "parts": 2}]}"#;
        let p = Placement::from_json(text, &ts).unwrap();
        p.check_runnable(&ts).unwrap();
        (ts, p)
    }

    #[test]
    fn windows_are_located_back_to_back() {
        let (ts, p) = fig2();
        let parts = p.parts_by_task(ts.len());
        let ps = &parts[2];
        let l = locate(ps, 0, 3);
        assert_eq!((l.part, l.start, l.end, l.in_window), (0, 0, 10, true));
        let l = locate(ps, 0, 10);
        assert_eq!((l.part, l.start, l.end, l.in_window), (1, 10, 15, true));
        // The next period starts the first part again.
        let l = locate(ps, 0, 16);
        assert_eq!((l.part, l.start, l.end), (0, 15, 25));
        assert_eq!(next_boundary(ps, 0, 0), 10);
        assert_eq!(next_boundary(ps, 0, 10), 15);
        assert_eq!(super::super::next_departure(ps, &locate(ps, 0, 3)), 10);
        assert_eq!(super::super::next_departure(ps, &locate(ps, 0, 12)), 15);
    }

    #[test]
    fn a_split_job_moves_at_its_window_end_and_budgets_are_enforced() {
        let (_, p) = fig2();
        let mut s = Spres::new(&p, Rules::new(false, false));
        for t in 0..3 {
            s.activate(t, 0, 0);
        }
        s.step(0);
        // CPU 1: τ3'' (deadline 10) beats τ2 (15); CPU 0: τ1.
        assert_eq!(s.served(0), Some((0, 0, Mode::Budget)));
        assert_eq!(s.served(1), Some((2, 0, Mode::Budget)));
        assert_eq!(s.next_event(0), 5); // τ3'''s budget of 5 runs out
        assert_eq!(s.cpu(1).next_migration(0), 10);
        s.advance(5);
        s.step(5);
        // Depleted, soft (split): background only; τ2 has budget.
        assert_eq!(s.served(1), Some((1, 0, Mode::Budget)));
        s.advance(10);
        s.step(10);
        // τ3 moved to CPU 0 with a fresh budget of 5 and deadline 15; τ1 (hard) used its
        // budget of 10 in [0, 10) and is cut off, so τ3 runs.
        assert_eq!(s.cpu(1).holds(2), None);
        assert_eq!(s.cpu(0).holds(2), Some(Held { seq: 0, base: 0 }));
        assert_eq!(s.served(0), Some((2, 0, Mode::Budget)));
        assert_eq!(s.next_event(10), 15);
    }

    #[test]
    fn cash_slack_is_consumed_before_the_budget_and_round_robin_rotates() {
        let (_, p) = fig2();
        let mut s = Spres::new(&p, Rules::new(false, true));
        s.activate(1, 0, 0);
        s.activate(2, 0, 0);
        s.step(0);
        s.advance(5); // τ3'' depleted at 5
        s.step(5);
        assert_eq!(s.served(1), Some((1, 0, Mode::Budget)));
        s.advance(6);
        // τ2 completes at 6 with 9 left: slack (15, 9).
        assert!(s.complete(1, 6).is_some());
        s.step(6);
        assert_eq!(s.served(1), Some((2, 0, Mode::Background)));
        assert_eq!(s.cpu(1).slack_total(), 9);
        // In background the CPU burns the slack.
        assert_eq!(s.next_event(6), 10);
        s.advance(7);
        assert_eq!(s.cpu(1).slack_total(), 8);

        // Round-robin: two soft reservations in background on one CPU alternate every quantum.
        let ts = TaskSet::from_ct(&[(8, 10), (8, 10)]).unwrap();
        let mut p = Placement::whole(&ts, &[vec![0, 1]]).unwrap();
        for r in &mut p.cpus[0].reservations {
            r.budget = 1;
        }
        let rules = Rules { background: Background::RoundRobin { quantum: 2 }, ..Rules::new(true, false) };
        let mut s = Spres::new(&p, rules);
        s.activate(0, 0, 0);
        s.activate(1, 0, 0);
        let mut order = Vec::new();
        let mut now = 0;
        s.step(now);
        while now < 10 {
            order.push((now, s.served(0).map(|x| (x.0, x.2))));
            let next = s.next_event(now).min(10);
            s.advance(next);
            now = next;
            s.step(now);
        }
        let (b, g) = (Mode::Budget, Mode::Background);
        assert_eq!(
            order,
            vec![
                (0, Some((0, b))),
                (1, Some((1, b))),
                (2, Some((0, g))),
                (4, Some((1, g))),
                (6, Some((0, g))),
                (8, Some((1, g)))
            ]
        );
    }
}
