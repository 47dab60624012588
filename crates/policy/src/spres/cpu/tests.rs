//! Budget charging of one CPU: by execution (the runtime's worker, callbacks not charged, the
//! overrun measured) and by decision (the synchronous driver, never an overrun).

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
