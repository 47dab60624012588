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
