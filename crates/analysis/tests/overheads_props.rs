//! Properties of the inflation rules (`rtsched_analysis::overheads`): every rule is monotone
//! in every overhead term (more overhead never gives a smaller cost or a longer period or
//! deadline, and never turns an infeasible set feasible); a term a rule does not charge changes
//! nothing, and every term it lists changes something; for the event-driven global rules the
//! hard verdict implies the soft one with the same values.

use proptest::prelude::*;
use rtsched_analysis::global::GlobalTest;
use rtsched_analysis::overheads::{self as oh, Inflation, Mode, Params, Rule, MECHANISMS};
use rtsched_analysis::Limits;
use rtsched_model::overheads::{Overheads, Term};
use rtsched_model::{Task, TaskSet};

fn arb_set() -> impl Strategy<Value = TaskSet> {
    prop::collection::vec((1u64..=400, 0u64..=100, 100u64..=2_000), 1..=8).prop_map(|v| {
        let tasks = v
            .into_iter()
            .map(|(c, dslack, t)| {
                let c = 1 + (c - 1) % t;
                let d = (c + dslack * (t - c) / 100).max(c);
                Task::new(c, d, t).unwrap()
            })
            .collect();
        TaskSet::new(tasks).unwrap()
    })
}

fn arb_values() -> impl Strategy<Value = Overheads> {
    prop::collection::vec(0u64..=6, Term::ALL.len()).prop_map(|xs| {
        let mut v = Overheads::ZERO;
        for (&t, x) in Term::ALL.iter().zip(xs) {
            v.set(t, x);
        }
        v
    })
}

/// Indices of the event-driven global mechanisms.
fn event_driven() -> Vec<usize> {
    (0..MECHANISMS.len())
        .filter(|&i| !matches!(MECHANISMS[i].rule, Rule::Partitioned(_) | Rule::SemiPartitioned | Rule::Quantum { .. }))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn inflation_is_monotone_in_every_term(
        ts in arb_set(),
        v in arb_values(),
        which in 0..Term::ALL.len(),
        bump in 1u64..=20,
        mi in 0..MECHANISMS.len(),
        m in 2u32..=4,
        soft in any::<bool>(),
        quantum in 20u64..=100,
    ) {
        let mech = &MECHANISMS[mi];
        let mode = if soft { Mode::Soft } else { Mode::Hard };
        let p = Params { cpd: 0, quantum };
        let mut w = v;
        let t = Term::ALL[which];
        w.set(t, v.get(t) + bump);
        let a = oh::inflate(&ts, m, mech, &v, &p, mode).unwrap();
        let b = oh::inflate(&ts, m, mech, &w, &p, mode).unwrap();
        match (&a, &b) {
            (Inflation::Done(x), Inflation::Done(y)) => {
                prop_assert_eq!(x.capacity, y.capacity);
                for (s, u) in x.tasks.iter().zip(y.tasks.iter()) {
                    prop_assert!(u.wcet >= s.wcet && u.period <= s.period && u.deadline <= s.deadline,
                        "{} {:?}: {:?} -> {:?}", mech.name, t, s, u);
                }
            }
            (Inflation::Infeasible { .. }, Inflation::Done(_)) => {
                prop_assert!(false, "{} {:?}: more overhead made an infeasible set feasible", mech.name, t);
            }
            _ => {}
        }
        // Terms a rule does not charge change nothing (Δcpd aside, a parameter).
        if !mech.rule.terms().contains(&t) {
            prop_assert_eq!(&a, &b, "{} changed with the uncharged term {:?}", mech.name, t);
        }
    }

    #[test]
    fn hard_implies_soft_for_the_global_rules(ts in arb_set(), v in arb_values(), mi in prop::sample::select(event_driven()), m in 2u32..=4) {
        let mech = &MECHANISMS[mi];
        let lim = Limits::default();
        let p = Params { cpd: 3, quantum: 1_000 };
        let h = oh::hard(&ts, m, mech, &v, &p, &GlobalTest::COMBINED_ORDER, &lim).unwrap();
        let s = oh::soft(&ts, m, mech, &v, &p, &lim).unwrap();
        if h.verdict.is_schedulable() {
            prop_assert!(s.verdict.is_schedulable(), "{}: hard but not soft", mech.name);
        }
    }
}

#[test]
fn every_rule_charges_its_terms() {
    // Each term a rule lists changes some inflation (so the list is not decoration).
    let ts = TaskSet::from_ct(&[(100, 1_000), (200, 3_000), (50, 700)]).unwrap();
    let p = Params { cpd: 0, quantum: 100 };
    for mech in MECHANISMS {
        for &t in mech.rule.terms() {
            let mut v = Overheads::ZERO;
            v.set(t, 3);
            let a = oh::inflate(&ts, 3, mech, &Overheads::ZERO, &p, Mode::Hard).unwrap();
            let b = oh::inflate(&ts, 3, mech, &v, &p, Mode::Hard).unwrap();
            let changed = a != b;
            // The per-part SP-RES terms only matter once a task is split; the inflation of the
            // first round (unsplit) still charges budget enforcement.
            let split_only = matches!(t, Term::MigrationTimer | Term::SubtaskActivation);
            // QPS charges the budget timer to a major set's tasks only (this set partitions).
            let major_only = mech.rule == Rule::Qps && t == Term::BudgetTimer;
            assert!(changed || split_only || major_only, "{} does not charge {:?}", mech.name, t);
            if major_only {
                // Three tasks of rate 0.6 on two CPUs need a major set: there it is charged.
                let full = TaskSet::from_ct(&[(600, 1_000); 3]).unwrap();
                let a = oh::inflate(&full, 2, mech, &Overheads::ZERO, &p, Mode::Hard).unwrap();
                let b = oh::inflate(&full, 2, mech, &v, &p, Mode::Hard).unwrap();
                assert_ne!(a, b, "{} does not charge {:?} on a major set", mech.name, t);
            }
        }
    }
}
