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
