//! The suspension-aware G-EDF test of Liu & Anderson (ECRTS 2013, `la`) against exact
//! simulation (docs/analysis-global.md, "LA"):
//!
//! * on 5,000 small integer sets with self-suspending tasks, no set that `la` accepts (nor
//!   `gedf`, which tries it last) misses a deadline in the simulator's G-EDF with
//!   suspensions: synchronous with every suspension at its upper bound, synchronous and
//!   sporadic with suspensions drawn between their bounds;
//! * a broken twin, LA with the suspensions ignored, is caught: some set it accepts misses,
//!   though every task has `C + S <= D`;
//! * `gedf` on a suspending set is its oblivious members (LA too) or LA aware;
//! * the aware test accepts sets that LA on the suspension-oblivious view (`C' = C + S`)
//!   rejects, and sets that every oblivious G-EDF test rejects (LA included): counted and
//!   printed (`cargo test -p rtsched-sim --test suspension_aware -- --nocapture`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::global::{self, la, GlobalTest};
use rtsched_analysis::report::{self, TestId};
use rtsched_analysis::{suspension, Limits};
use rtsched_model::task::{Segments, SuspensionBound};
use rtsched_model::{Task, TaskSet, Time};
use rtsched_sim::{simulate, Arrivals, Scheduler, SimConfig, SuspensionTimes};

/// A small integer set, at least one task self-suspending, every `C + S <= D <= T`.
fn random_set(rng: &mut ChaCha8Rng) -> TaskSet {
    let n = rng.random_range(2..=6);
    let mut tasks = Vec::with_capacity(n);
    for k in 0..n {
        let suspends = k == 0 || rng.random_bool(0.5);
        let task = if suspends {
            let segs = rng.random_range(2..=3usize);
            let exec: Vec<Time> = (0..segs).map(|_| rng.random_range(1..=3)).collect();
            let c: Time = exec.iter().sum();
            let t = rng.random_range(c + 2..=40u64);
            // Each suspension at most half the room: C + S <= T.
            let room = t - c;
            let susp: Vec<SuspensionBound> = (1..segs)
                .map(|_| {
                    let max = rng.random_range(1..=room / 2);
                    SuspensionBound { min: rng.random_range(0..=max), max }
                })
                .collect();
            let s: Time = susp.iter().map(|b| b.max).sum();
            let d = rng.random_range(c + s..=t);
            Task::new(c, d, t).unwrap().with_segments(Segments::new(exec, susp).unwrap()).unwrap()
        } else {
            let t = rng.random_range(6..=40u64);
            let c = rng.random_range(1..=t / 3);
            Task::new(c, rng.random_range(c..=t), t).unwrap()
        };
        tasks.push(task);
    }
    TaskSet::new(tasks).unwrap()
}

/// Deadline misses of G-EDF on `ts` under three scenarios: synchronous periodic with every
/// suspension at its bound, synchronous with drawn suspensions, sporadic with drawn ones.
fn misses(ts: &TaskSet, m: u32, seed: u64) -> u64 {
    let hyper = ts.hyperperiod(1 << 40).unwrap_or(1 << 40);
    let mut total = 0;
    for (arrivals, drawn) in [
        (Arrivals::Periodic { offsets: vec![] }, false),
        (Arrivals::Periodic { offsets: vec![] }, true),
        (Arrivals::Sporadic { max_extra_delay: 3, seed }, true),
    ] {
        let mut cfg = SimConfig::new(m);
        cfg.horizon = Some((2 * hyper).min(6_000));
        cfg.arrivals = arrivals;
        cfg.keep_jobs = false;
        if drawn {
            cfg.suspensions = SuspensionTimes::Uniform { seed };
        }
        total += simulate(ts, &Scheduler::Gedf, &cfg).unwrap().deadline_misses;
    }
    total
}

#[test]
fn suspension_aware_la_acceptance_holds_in_simulation() {
    let mut rng = ChaCha8Rng::seed_from_u64(2013);
    let lim = Limits::default();
    let (mut sets, mut la_yes, mut gedf_yes) = (0u64, 0u64, 0u64);
    let (mut beats_oblivious_la, mut beats_every_oblivious, mut oblivious_la_only) = (0u64, 0u64, 0u64);
    let (mut twin_yes, mut twin_caught) = (0u64, 0u64);
    for seed in 0..5_000u64 {
        let m = rng.random_range(2..=4u32);
        let ts = random_set(&mut rng);
        assert!(suspension::applies(&ts));
        sets += 1;
        let aware = global::test(GlobalTest::La, &ts, m, &lim);
        let gedf = report::verdict(TestId::Gedf, &ts, m, &lim, 0);
        // gedf = (every oblivious member, LA included) or (LA aware).
        let no_la = report::verdict(TestId::GedfNoLa, &ts, m, &lim, 0);
        let view = suspension::oblivious(&ts).unwrap();
        let oblivious_la = global::test(GlobalTest::La, &view, m, &lim).is_schedulable();
        assert_eq!(
            gedf.is_schedulable(),
            no_la.is_schedulable() || oblivious_la || aware.is_schedulable(),
            "m = {m}, {ts:?}"
        );
        // The broken twin: LA on the execution costs, suspensions ignored.
        let twin = la::test_with_suspensions(&ts, m, &[], &lim);
        assert!(twin.is_schedulable() || !aware.is_schedulable(), "ignoring suspensions cannot be stricter");
        oblivious_la_only += (oblivious_la && !aware.is_schedulable()) as u64;
        let accepted = aware.is_schedulable() || gedf.is_schedulable();
        if !(accepted || twin.is_schedulable()) {
            continue;
        }
        let missed = misses(&ts, m, seed);
        if aware.is_schedulable() {
            la_yes += 1;
            assert_eq!(missed, 0, "la (aware) accepted but G-EDF missed: m = {m}, {ts:?}");
            beats_oblivious_la += !oblivious_la as u64;
            beats_every_oblivious += (!no_la.is_schedulable() && !oblivious_la) as u64;
        }
        if gedf.is_schedulable() {
            gedf_yes += 1;
            assert_eq!(missed, 0, "gedf accepted but G-EDF missed: m = {m}, {ts:?}");
        }
        if twin.is_schedulable() {
            twin_yes += 1;
            twin_caught += (missed > 0) as u64;
        }
    }
    eprintln!(
        "{sets} suspending sets: la (aware) accepted {la_yes}, gedf {gedf_yes}, none missed; \
         la aware accepted {beats_oblivious_la} that la on C' = C + S rejects and \
         {beats_every_oblivious} that every oblivious G-EDF test rejects (la on C' accepted \
         {oblivious_la_only} that la aware rejects); the twin without \
         suspensions accepted {twin_yes}, {twin_caught} of them missed"
    );
    assert!(la_yes >= 500, "too few accepted sets to mean anything: {la_yes}");
    assert!(twin_caught > 0, "the broken twin (suspensions ignored) was not caught");
    assert!(beats_oblivious_la > 0, "the aware test never beat the oblivious one");
}
