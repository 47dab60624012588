//! CQm / CQ1 / S-CQm / S-CQ1 driven without threads: random interleavings of releases (on the
//! dedicated service thread for the `…1` plugins), reschedules, completions and ticks on
//! m = 3 workers, with self-suspensions (blocks of running jobs, wake-ups on any thread). After every callback the links equal those of `rtsched_policy::GedfQuantum`
//! fed the same job events and ticks (an independent job model), no job runs twice, a linked
//! job runs only on its CPU, and the plugin's own accounting holds (every pending job linked,
//! queued or in the temporary queue, exactly once).

use super::*;
use crate::mechanism::design_space::testkit::{Driver, Op, Reference};
use proptest::prelude::*;

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = (0u8..6, 0usize..4, 1u64..15).prop_map(|(k, cpu, dt)| match k {
        0 => Op::Release { cpu, dt },
        1 => Op::Notice { cpu },
        2 => Op::Complete { cpu },
        3 => Op::Block { cpu },
        4 => Op::Wake { cpu, pick: dt as usize },
        _ => Op::Tick { cpu },
    });
    proptest::collection::vec(op, 1..200)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn links_equal_the_quantum_policys(
        periods in proptest::collection::vec(5u64..40, 2..7),
        ops in ops(),
        staggered in any::<bool>(),
        dedicated in any::<bool>(),
    ) {
        let m = 3;
        let params: Vec<TaskParams> = periods.iter().map(|&p| TaskParams { deadline: p, period: p }).collect();
        let q = Quantum::new("cqm", &params, m, dedicated, Ticks { quantum_ns: 10, staggered }, 0, 1_000_000);
        let reference = Reference::new(GedfQuantum::new(m), &params);
        let mut d = Driver::new(&q, reference, m, m + dedicated as usize, staggered);
        for op in ops {
            d.step(op).map_err(TestCaseError::fail)?;
            let linked = q.linked();
            d.check_links(&linked).map_err(TestCaseError::fail)?;
            d.align(&linked, |p, a, b| p.swap_links(a, b));
            prop_assert_eq!(q.accounting().consistent, Ok(()));
        }
    }
}

/// Releases wait for the next tick: a job released between ticks is linked by none of the
/// callbacks but a tick (RTSS 2009, §2, S2: "jobs are only scheduled at integer multiples of
/// a scheduling quantum").
#[test]
fn a_released_job_waits_for_the_tick() {
    let params = [TaskParams { deadline: 100, period: 100 }];
    let q = Quantum::new("cqm", &params, 2, false, Ticks { quantum_ns: 10, staggered: false }, 0, 1_000_000);
    let reference = Reference::new(GedfQuantum::new(2), &params);
    let mut d = Driver::new(&q, reference, 2, 2, false);
    d.step(Op::Release { cpu: 0, dt: 1 }).unwrap();
    d.step(Op::Notice { cpu: 1 }).unwrap();
    assert_eq!(q.linked(), vec![None, None], "linked before the tick");
    d.step(Op::Tick { cpu: 1 }).unwrap();
    assert_eq!(q.linked().iter().flatten().count(), 1, "linked at the tick");
}
