//! The overrun and enforcement-latency samples in virtual time: a hard reservation whose
//! budget timer is handled 7 ns late overruns by exactly 7 ns; without enforcement its
//! timer is not even armed at the exhaustion.

use super::*;
use crate::sync::CpuSignal;
use crate::tracer::{RecKind, TraceBuffer};
use rtsched_model::TaskSet;

fn mech(enforce: bool) -> SpresMech {
    let ts = TaskSet::from_ct(&[(4000, 10000), (1000, 15000)]).unwrap();
    let mut pl = Placement::whole(&ts, &[vec![0, 1]]).unwrap();
    for r in &mut pl.cpus[0].reservations {
        r.budget = 2000;
    }
    pl.check_runnable(&ts).unwrap();
    let rules = Rules { charging: Charging::Execution, ..Rules::new(false, false) };
    let params: Vec<TaskParams> = ts.iter().map(|t| TaskParams { deadline: t.period, period: t.period }).collect();
    let mut g = SpresMech::new(&params, &pl, rules, PriorityRule::Edf, 0, 100_000);
    g.real_clock = false;
    g.enforce = enforce;
    g
}

#[test]
fn an_overrun_is_the_lateness_of_its_enforcement_and_callbacks_are_not_charged() {
    let g = mech(true);
    let signals = vec![CpuSignal::new()];
    let mut tb = TraceBuffer::new(0, 1_000_000);
    let mut ctx = Ctx::new(0, &mut tb, &signals);
    g.release(&mut ctx, 0, 0);
    // Dispatched at 10 (the release and schedule callbacks are nobody's budget).
    let j = g.schedule(&mut ctx, Prev::Idle, 10).unwrap();
    assert_eq!(j.task(), 0);
    assert_eq!(g.next_timer(0), 2010);
    // The budget timer handled 7 ns late.
    g.timer(&mut ctx, 2017);
    let next = g.schedule(&mut ctx, Prev::Preempted(j), 2017).unwrap();
    assert_eq!(next.task(), 1, "task 0 is cut off at its budget");
    drop(ctx);
    let samples: Vec<(u32, u64)> =
        tb.records().iter().filter(|r| r.kind == RecKind::TermValue).map(|r| (r.task, r.arg)).collect();
    assert_eq!(samples, vec![(ENFORCEMENT_LATENCY, 7), (BUDGET_OVERRUN, 7)]);

    // The broken twin arms no timer at the exhaustion: the next is the window's end.
    let g = mech(false);
    let mut tb = TraceBuffer::new(0, 1_000_000);
    let mut ctx = Ctx::new(0, &mut tb, &signals);
    g.release(&mut ctx, 0, 0);
    g.schedule(&mut ctx, Prev::Idle, 10).unwrap();
    assert_eq!(g.next_timer(0), 10_000);
}
