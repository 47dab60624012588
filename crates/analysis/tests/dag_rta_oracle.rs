//! Oracle for the DAG response-time analyses (`rtsched_analysis::dag::melani`,
//! `rtsched_analysis::dag::fonseca`): the exact node-level simulator of `dag_sim` (G-FP with
//! task-level priorities, G-EDF) runs 100,000 random small-integer DAG sets, synchronous
//! periodic over the hyperperiod, and a further 20,000 three times each under sporadic and
//! asynchronous releases, twice with early completion. For every set a test accepts:
//!
//! * no deadline is missed under the scheduler the test assumes (G-FP tests under G-FP with
//!   the same priorities — deadline monotonic, or random explicit ranks for a third of the
//!   sets — and the G-EDF test under G-EDF);
//! * no task's simulated response time exceeds its computed bound.
//!
//! The G-FP analyses: Melani et al. (`melani::gfp`), Fonseca et al. (`fonseca::gfp`, the
//! paper's carry-in and carry-out workload distributions) and its chain variant
//! (`fonseca_chain::gfp`). Also: Fonseca et al.'s analysis accepts every set Melani et al.'s
//! accepts, with bounds never larger (the dominance the paper claims; not built in, so it is
//! a real check), and the chain variant likewise (built in); broken twins are caught: of the
//! G-FP RTA (no carry-in: the window workload without the shift by `R_i − vol_i/m`; the
//! critical path divided by `m` as well: `R = ⌊(vol + Σ W)/m⌋`), of the G-EDF RTA (no
//! carry-in), and of Fonseca et al.'s (the carry-in distribution cut at the nodes' earliest
//! start times instead of their finish times — caught on a pinned set, as random sets rarely
//! expose a missing carry-in; one fixed carry-in/carry-out split instead of the maximisation
//! — caught on random sets); on DAGs of one node per task, Melani et al.'s G-FP RTA is the
//! sequential Bertogna–Cirinei RTA with slack (`gfp_bc_slack`) exactly when `m = 1` and is
//! dominated by it for `m > 1` (its window workload is never below Bertogna & Cirinei's, which
//! is also capped at `x − C_k + 1`), and Fonseca et al.'s lies between the two (equal to both
//! when `m = 1`).

mod dag_sim;

use dag_sim::{periodic, random_set, random_task, rng, simulate, sporadic, Policy};
use rand::Rng;
use rtsched_analysis::dag::fonseca::{self, Interferer};
use rtsched_analysis::dag::{fonseca_chain, melani};
use rtsched_analysis::global::fp::{self as gfp, Assignment, GfpResult, GfpTest};
use rtsched_analysis::{Limits, Verdict};
use rtsched_model::dag::DagSet;

const SETS: u64 = 100_000;

/// A priority assignment for set `s`: deadline monotonic, or (a third of the time) random
/// explicit ranks; with its order, highest first.
fn priorities(set: &DagSet, r: &mut rand_chacha::ChaCha8Rng) -> (Assignment, Vec<usize>) {
    let a = if r.random_range(0..3) == 0 {
        Assignment::Explicit((0..set.len()).map(|_| r.random_range(0..4u64)).collect())
    } else {
        Assignment::default()
    };
    let order = a.order(&set.sequential().unwrap()).unwrap();
    (a, order)
}

/// Whether an accepted result holds up in `outcome`: no miss, every bound respected.
fn check(name: &str, res: &GfpResult, outcome: &dag_sim::Outcome, what: &str) {
    let worst = match outcome {
        Ok(w) => w,
        Err(e) => panic!("{name} accepts {what} with bounds {:?}, but the simulation: {e}", res.response_times),
    };
    for (i, (&w, r)) in worst.iter().zip(&res.response_times).enumerate() {
        let r = r.unwrap_or_else(|| panic!("{name} accepts {what} without a bound for task {i}"));
        assert!(w <= r, "{name}: task {i} responds in {w} in simulation, above its bound {r}: {what}");
    }
}

/// The broken twins, computed here by the plain iteration.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Twin {
    /// G-FP with the window workload of jobs released at the window's start only.
    NoCarryIn,
    /// G-FP with `R = ⌊(vol + Σ W)/m⌋`: the critical path divided by `m` too.
    PathOverM,
    /// G-EDF with no carry-in in either bound.
    EdfNoCarryIn,
}

/// The twin's bounds per task, or `None` when it rejects the set.
fn twin(set: &DagSet, m: u32, order: &[usize], tw: Twin) -> Option<Vec<u64>> {
    let m = m as u128;
    let p: Vec<(u128, u128, u128, u128)> = set
        .iter()
        .map(|t| (t.volume() as u128, t.longest_path() as u128, t.deadline() as u128, t.period() as u128))
        .collect();
    // Melani et al.'s W_i(L) with bound r, or with no carry-in (X = m L).
    let w = |i: usize, r: u128, l: u128, carry: bool| -> u128 {
        let (vol, _, _, t) = p[i];
        let x = if carry { (m * (l + r)).saturating_sub(vol) } else { m * l };
        (x / (m * t)) * vol + vol.min(x % (m * t))
    };
    let fixed = |k: usize, omega: &dyn Fn(u128) -> u128| -> Option<u128> {
        let (vol, len, d, _) = p[k];
        let f = |x: u128| if tw == Twin::PathOverM { (vol + omega(x)) / m } else { len + (vol - len + omega(x)) / m };
        let mut x = if tw == Twin::PathOverM { vol / m } else { len + (vol - len) / m };
        loop {
            let nx = f(x);
            if nx > d {
                return None;
            }
            if nx <= x {
                return Some(x);
            }
            x = nx;
        }
    };
    match tw {
        Twin::NoCarryIn | Twin::PathOverM => {
            let mut hp: Vec<(usize, u128)> = Vec::new();
            let mut bounds = vec![0u64; set.len()];
            for &k in order {
                let carry = tw == Twin::PathOverM;
                let r = fixed(k, &|x| hp.iter().map(|&(i, r)| w(i, r, x, carry)).sum())?;
                hp.push((k, r));
                bounds[k] = r as u64;
            }
            Some(bounds)
        }
        Twin::EdfNoCarryIn => {
            // Every other task: min(W_i(R_k) without carry-in, ⌊D_k/T_i⌋ vol_i +
            // min(vol_i, m (D_k mod T_i))), each task once (no bounds needed).
            (0..set.len())
                .map(|k| {
                    let dk = p[k].2;
                    fixed(k, &|x| {
                        (0..set.len())
                            .filter(|&i| i != k)
                            .map(|i| {
                                let (vol, _, _, t) = p[i];
                                w(i, 0, x, false).min((dk / t) * vol + vol.min(m * (dk % t)))
                            })
                            .sum()
                    })
                    .map(|r| r as u64)
                })
                .collect()
        }
    }
}

/// Broken twins of Fonseca et al.'s analysis (`dag::fonseca`), through its own workload
/// pieces with one step changed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum FonsecaTwin {
    /// The carry-in distribution from the earliest *start* times: the as-soon-as-possible
    /// profile cut at the distinct start times instead of the finish times, so it ends at the
    /// last start and loses the work after it.
    EstCarryIn,
    /// No maximisation over the split: the carry-out takes `min(Δ, len)` of `Δ^C`, the
    /// carry-in the rest (one of the tool's candidate splits, alone).
    OneSplit,
    /// Eq. 10–11 as the DAG-scheduling tool reads them (`Interferer::workload_eq11`: a fixed
    /// number of body jobs), which `dag::fonseca` replaces; run to report whether the
    /// simulator refutes it, not as a twin that must be caught.
    Eq11,
}

/// The twin's bounds per task, or `None` when it rejects the set.
fn fonseca_twin(set: &DagSet, m: u32, prio: &Assignment, tw: FonsecaTwin) -> Option<Vec<u64>> {
    let its: Vec<Interferer> = set
        .iter()
        .map(|t| {
            let mut it = Interferer::of(t);
            if tw == FonsecaTwin::EstCarryIn {
                let (est, eft) = fonseca::earliest_times(t);
                let mut points: Vec<u128> = std::iter::once(0).chain(est.iter().copied()).collect();
                points.sort_unstable();
                points.dedup();
                it.uci = fonseca::profile_over(&points, &est, &eft);
            }
            it
        })
        .collect();
    let res = fonseca::gfp_with_workload(set, m, prio, &Limits::default(), |i, r, x, m| {
        let it = &its[i];
        match tw {
            FonsecaTwin::EstCarryIn => it.workload(r, x, m),
            FonsecaTwin::Eq11 => it.workload_eq11(r, x, m),
            FonsecaTwin::OneSplit => {
                let body = x.saturating_sub(it.len) / it.period;
                let delta = x - body * it.period;
                let x2 = delta.min(it.len);
                it.carry_in(r, delta - x2, m) + it.carry_out(x2, m) + body * it.vol
            }
        }
    })
    .unwrap();
    (res.verdict == Verdict::Schedulable).then(|| res.response_times.iter().map(|r| r.unwrap()).collect())
}

/// Whether a simulation refutes bounds `b`: a miss, or a task responding later than its bound.
fn wrong(b: &[u64], out: &dag_sim::Outcome) -> bool {
    match out {
        Err(_) => true,
        Ok(w) => w.iter().zip(b).any(|(w, b)| w > b),
    }
}

/// The three G-FP analyses on one set: Melani et al., Fonseca et al., the chain variant.
fn gfp_all(set: &DagSet, m: u32, prio: &Assignment, limits: &Limits) -> [(&'static str, GfpResult); 3] {
    [
        ("dag_melani_gfp", melani::gfp(set, m, prio, limits).unwrap()),
        ("dag_fonseca_gfp", fonseca::gfp(set, m, prio, limits).unwrap()),
        ("dag_fonseca_gfp_chain", fonseca_chain::gfp(set, m, prio, limits).unwrap()),
    ]
}

/// Whether `a` dominates `b`: accepts whatever `b` accepts, with bounds never larger.
fn dominates(a: &GfpResult, b: &GfpResult) -> bool {
    b.verdict != Verdict::Schedulable
        || (a.verdict == Verdict::Schedulable && a.response_times.iter().zip(&b.response_times).all(|(x, y)| x <= y))
}

#[test]
fn no_accepted_set_misses_and_no_bound_is_exceeded_under_synchronous_release() {
    let limits = Limits::default();
    let mut accepted = [0u32; 4]; // melani gfp, fonseca gfp, fonseca chain, melani gedf
    let mut beyond_melani = [0u32; 2]; // sets fonseca (paper, chain) accepts and melani does not
    let mut not_dominating = Vec::new(); // sets where the paper's analysis does not dominate melani's
    let mut caught = [0u32; 6]; // twins: NoCarryIn, PathOverM, EdfNoCarryIn, EstCarryIn, OneSplit, Eq11
    for s in 0..SETS {
        let mut r = rng(1, s);
        let (set, m) = random_set(&mut r, 6);
        let (prio, order) = priorities(&set, &mut r);
        let (h, plan) = periodic(&set);
        let fp_policy = Policy::from_order(&order);
        let mut fp_run = None;
        let what = format!("seed {s}: {set:?} on m = {m} under {prio:?}");
        let all = gfp_all(&set, m, &prio, &limits);
        for (k, (name, res)) in all.iter().enumerate() {
            assert_ne!(res.verdict, Verdict::GaveUp, "{name}: {what}");
            if res.verdict == Verdict::Schedulable {
                accepted[k] += 1;
                let out = fp_run.get_or_insert_with(|| simulate(&set, m, &fp_policy, h, &plan));
                check(name, res, out, &what);
            }
        }
        let (mel, fon, chain) = (&all[0].1, &all[1].1, &all[2].1);
        // The chain variant dominates Melani et al. by construction (it takes the minimum).
        assert!(dominates(chain, mel), "the chain variant does not dominate: {chain:?} vs {mel:?}: {what}");
        // The paper claims dominance; it is counted and the cases kept, and asserted below.
        if !dominates(fon, mel) {
            not_dominating.push(what.clone());
        }
        for (k, res) in [fon, chain].into_iter().enumerate() {
            beyond_melani[k] += (res.verdict == Verdict::Schedulable && mel.verdict != Verdict::Schedulable) as u32;
        }
        let edf = melani::gedf(&set, m, &limits);
        assert_ne!(edf.verdict, Verdict::GaveUp, "{what}");
        let edf_run = simulate(&set, m, &Policy::Edf, h, &plan);
        if edf.verdict == Verdict::Schedulable {
            accepted[3] += 1;
            check("dag_melani_gedf", &edf, &edf_run, &what);
        }
        // The twins must be caught: a miss, or a response time above a twin's bound.
        for (k, tw) in [Twin::NoCarryIn, Twin::PathOverM].into_iter().enumerate() {
            if let Some(b) = twin(&set, m, &order, tw) {
                let out = fp_run.get_or_insert_with(|| simulate(&set, m, &fp_policy, h, &plan));
                caught[k] += wrong(&b, out) as u32;
            }
        }
        if let Some(b) = twin(&set, m, &order, Twin::EdfNoCarryIn) {
            caught[2] += wrong(&b, &edf_run) as u32;
        }
        for (k, tw) in [FonsecaTwin::EstCarryIn, FonsecaTwin::OneSplit, FonsecaTwin::Eq11].into_iter().enumerate() {
            if let Some(b) = fonseca_twin(&set, m, &prio, tw) {
                let out = fp_run.get_or_insert_with(|| simulate(&set, m, &fp_policy, h, &plan));
                caught[3 + k] += wrong(&b, out) as u32;
            }
        }
    }
    eprintln!(
        "accepted of {SETS}: melani gfp, fonseca gfp, fonseca chain, melani gedf = {accepted:?}; \
         beyond melani (paper, chain) {beyond_melani:?}; paper not dominating melani on {}",
        not_dominating.len()
    );
    eprintln!(
        "broken twins caught (no carry-in, path over m, G-EDF no carry-in, EST carry-in, one split; \
         and the Eq. 10-11 reading, not required): {caught:?}"
    );
    for (k, &a) in accepted.iter().enumerate() {
        assert!(a >= 3_000, "test {k} accepted only {a} sets: the oracle would check too little");
    }
    assert!(caught[1] > 0, "the simulator never caught the RTA with the critical path divided by m");
    // caught[3] (the carry-in from start times) stays 0 on random sets: a pinned test catches it.
    assert!(caught[4] > 0, "the simulator never caught Fonseca et al.'s RTA without the maximisation over the split");
    assert!(
        not_dominating.is_empty(),
        "the paper's analysis does not dominate Melani et al.'s on {} sets, e.g. {}",
        not_dominating.len(),
        not_dominating[0]
    );
}

#[test]
fn no_accepted_set_misses_under_sporadic_releases_and_early_completion() {
    let limits = Limits::default();
    let horizon = 120;
    let mut checked = 0u32;
    let mut caught = [0u32; 5];
    for s in 0..SETS / 5 {
        let mut r = rng(2, s);
        let (set, m) = random_set(&mut r, 6);
        let (prio, order) = priorities(&set, &mut r);
        let fp_policy = Policy::from_order(&order);
        let all = gfp_all(&set, m, &prio, &limits);
        let edf = melani::gedf(&set, m, &limits);
        let ftwins: Vec<Option<Vec<u64>>> = [FonsecaTwin::EstCarryIn, FonsecaTwin::OneSplit]
            .into_iter()
            .map(|tw| fonseca_twin(&set, m, &prio, tw))
            .collect();
        for round in 0..3 {
            let plan = sporadic(&set, horizon, round > 0, &mut r);
            let what = format!("seed {s} round {round}: {set:?} on m = {m} under {prio:?}");
            let out = simulate(&set, m, &fp_policy, horizon, &plan);
            for (k, tw) in [Twin::NoCarryIn, Twin::PathOverM].into_iter().enumerate() {
                if let Some(b) = twin(&set, m, &order, tw) {
                    caught[k] += wrong(&b, &out) as u32;
                }
            }
            for (k, b) in ftwins.iter().enumerate() {
                if let Some(b) = b {
                    caught[3 + k] += wrong(b, &out) as u32;
                }
            }
            let edf_out = simulate(&set, m, &Policy::Edf, horizon, &plan);
            if let Some(b) = twin(&set, m, &order, Twin::EdfNoCarryIn) {
                caught[2] += wrong(&b, &edf_out) as u32;
            }
            for (name, res) in &all {
                if res.verdict == Verdict::Schedulable {
                    checked += 1;
                    check(name, res, &out, &what);
                }
            }
            if edf.verdict == Verdict::Schedulable {
                checked += 1;
                check("dag_melani_gedf", &edf, &edf_out, &what);
            }
        }
    }
    eprintln!("sporadic: {checked} schedules checked; twins caught {caught:?}");
    assert!(checked > 20_000, "only {checked} schedules checked");
    // Random releases rarely expose a missing carry-in (the pinned tests below do).
    assert!(caught[1] > 0, "the twin with the critical path divided by m was never caught: {caught:?}");
    assert!(caught[4] > 0, "Fonseca et al.'s RTA with one fixed split was never caught: {caught:?}");
}

#[test]
fn one_node_dags_get_the_sequential_bertogna_cirinei_bounds() {
    // Melani et al.: exactly gfp_bc_slack on one core, dominated by it on more. Fonseca et
    // al.: exactly gfp_bc_slack on one core, between it and Melani et al. on more.
    let limits = Limits::default();
    let (mut equal_m1, mut dominated, mut fon_between) = (0u32, 0u32, 0u32);
    for s in 0..SETS / 3 {
        let mut r = rng(3, s);
        let n = r.random_range(1..=5);
        let m = r.random_range(1..=4);
        let set = DagSet::new((0..n).map(|_| random_task(&mut r, 1)).collect());
        let (prio, _) = priorities(&set, &mut r);
        let ts = set.sequential().unwrap();
        let bc = gfp::analyze(GfpTest::BcSlack, &ts, m, &prio, &limits).unwrap();
        let mel = melani::gfp(&set, m, &prio, &limits).unwrap();
        let fon = fonseca::gfp(&set, m, &prio, &limits).unwrap();
        let what = format!("seed {s}: {set:?} on m = {m} under {prio:?}");
        // Fonseca et al. on one-node DAGs: both distributions are one step (C, 1), so the
        // carry-in job is sequential (not spread over m cores as in Melani et al.'s W) and
        // W is Bertogna & Cirinei's window workload without their cap x − C_k + 1: between
        // gfp_bc_slack and Melani et al., and equal to both on one core.
        assert!(dominates(&bc, &fon), "gfp_bc_slack does not dominate Fonseca et al.: {bc:?} vs {fon:?}: {what}");
        assert!(dominates(&fon, &mel), "Fonseca et al. do not dominate Melani et al.: {fon:?} vs {mel:?}: {what}");
        if m == 1 {
            assert_eq!(fon.verdict, bc.verdict, "{what}");
            if fon.verdict == Verdict::Schedulable {
                assert_eq!(fon.response_times, bc.response_times, "{what}");
            }
        } else {
            fon_between += (fon.verdict == Verdict::Schedulable) as u32;
        }
        if m == 1 {
            // W is Bertogna & Cirinei's, and at a fixed point their cap never binds.
            assert_eq!(mel.verdict, bc.verdict, "{what}");
            if mel.verdict == Verdict::Schedulable {
                assert_eq!(mel.response_times, bc.response_times, "{what}");
            }
            equal_m1 += 1;
        } else if mel.verdict == Verdict::Schedulable {
            assert_eq!(bc.verdict, Verdict::Schedulable, "{what}");
            for (a, b) in bc.response_times.iter().zip(&mel.response_times) {
                assert!(a <= b, "gfp_bc_slack's bound above Melani et al.'s: {bc:?} vs {mel:?}: {what}");
            }
            dominated += 1;
        }
    }
    assert!(
        equal_m1 > 5_000 && dominated > 2_000 && fon_between > 2_000,
        "compared too few: {equal_m1}, {dominated}, {fon_between}"
    );
}

/// Periodic releases with per-task offsets, every node at its WCET, up to `horizon`.
fn offset_plan(set: &DagSet, offsets: &[u64], horizon: u64) -> dag_sim::Plan {
    set.iter()
        .zip(offsets)
        .map(|(t, &o)| (o..horizon).step_by(t.period() as usize).map(|x| (x, t.wcets().to_vec())).collect())
        .collect()
}

#[test]
fn the_no_carry_in_twin_is_caught_with_release_offsets() {
    // Found by an exhaustive search over two tasks' offsets (`explore_offsets_*` below): with
    // τ0 released at 1 + 8j and τ1 at 6 + 12j, τ2's job released at 48 responds in 13 ns
    // under G-FP on 2 cores, where the twin without carry-in bounds it by 12.
    let t = |p, d, w: Vec<u64>, e: Vec<(u32, u32)>| rtsched_model::dag::DagTask::new(p, d, w, e).unwrap();
    let set = DagSet::new(vec![
        t(8, 8, vec![1, 2], vec![(0, 1)]),
        t(12, 11, vec![2, 3, 3], vec![(1, 2)]),
        t(24, 18, vec![3, 1, 1, 3], vec![]),
    ]);
    let m = 2;
    let order = Assignment::default().order(&set.sequential().unwrap()).unwrap();
    let plan = offset_plan(&set, &[1, 6, 0], 120);
    let out = simulate(&set, m, &Policy::from_order(&order), 120, &plan);
    let bounds = twin(&set, m, &order, Twin::NoCarryIn).expect("the twin accepts");
    assert_eq!(bounds, [3, 8, 12]);
    assert_eq!(out, Ok(vec![3, 8, 13]));
    assert!(wrong(&bounds, &out));
    // The real analyses hold on the same schedule.
    let limits = Limits::default();
    for (_, res) in gfp_all(&set, m, &Assignment::default(), &limits) {
        if res.verdict == Verdict::Schedulable {
            check("a G-FP RTA", &res, &out, "the pinned set");
        }
        assert!(res.response_times[2].is_none_or(|r| r >= 13), "{res:?}");
    }
}

#[test]
fn fonseca_s_carry_in_from_start_times_is_caught_with_release_offsets() {
    // Found by `explore_offsets_for_the_est_carry_in_twin` (random sets never caught it): with
    // τ0 released at 8j, τ1 at 12j and τ2 at 2 + 6j, under G-FP (DM: τ0, τ2, τ1) on 2 cores τ1
    // responds in 7 ns, where Fonseca et al.'s analysis with the carry-in distribution cut at
    // the start times (all 0 here: no carry-in at all) bounds it by 6.
    let t = |p, d, w: Vec<u64>| rtsched_model::dag::DagTask::new(p, d, w, vec![]).unwrap();
    let set = DagSet::new(vec![t(8, 2, vec![2]), t(12, 8, vec![1, 2]), t(6, 6, vec![3, 3])]);
    let m = 2;
    let prio = Assignment::default();
    let order = prio.order(&set.sequential().unwrap()).unwrap();
    assert_eq!(order, [0, 2, 1]);
    let plan = offset_plan(&set, &[0, 0, 2], 120);
    let out = simulate(&set, m, &Policy::from_order(&order), 120, &plan);
    let bounds = fonseca_twin(&set, m, &prio, FonsecaTwin::EstCarryIn).expect("the twin accepts");
    assert_eq!(bounds, [2, 6, 5]);
    assert_eq!(out, Ok(vec![2, 7, 5]));
    assert!(wrong(&bounds, &out));
    // The analyses themselves hold on the same schedule.
    for (name, res) in gfp_all(&set, m, &prio, &Limits::default()) {
        if res.verdict == Verdict::Schedulable {
            check(name, &res, &out, "the pinned set");
        }
        assert!(res.response_times[1].is_none_or(|r| r >= 7), "{name}: {res:?}");
    }
}

#[test]
fn the_edf_no_carry_in_twin_is_caught_with_release_offsets() {
    // Found the same way: τ0 released at 4 + 8j, τ1 at 12 + 16j, τ2 at 16j; under G-EDF on 2
    // cores a job of τ2 responds in 9 ns, where the twin without carry-in bounds it by 8.
    let t = |p, d, w: Vec<u64>, e: Vec<(u32, u32)>| rtsched_model::dag::DagTask::new(p, d, w, e).unwrap();
    let set = DagSet::new(vec![
        t(8, 8, vec![3, 3, 1, 1], vec![(0, 3), (1, 2), (1, 3)]),
        t(16, 7, vec![1], vec![]),
        t(16, 14, vec![1, 2, 1], vec![(0, 1), (1, 2)]),
    ]);
    let m = 2;
    let plan = offset_plan(&set, &[4, 12, 0], 120);
    let out = simulate(&set, m, &Policy::Edf, 120, &plan);
    let bounds = twin(&set, m, &[0, 1, 2], Twin::EdfNoCarryIn).expect("the twin accepts");
    assert_eq!(bounds, [8, 7, 8]);
    assert_eq!(out, Ok(vec![5, 1, 9]));
    assert!(wrong(&bounds, &out));
    let res = melani::gedf(&set, m, &Limits::default());
    if res.verdict == Verdict::Schedulable {
        check("dag_melani_gedf", &res, &out, "the pinned set");
    }
    assert!(res.response_times[2].is_none_or(|r| r >= 9), "{res:?}");
}

/// The search that found the pinned sets of the G-FP twins: random 3-task sets on 2–3 cores,
/// every offset of the two highest-priority tasks, against the twin's bounds `bounds(set, m,
/// order)`. Minutes; run with `--ignored`.
fn explore(stream: u64, bounds: impl Fn(&DagSet, u32, &[usize]) -> Option<Vec<u64>>) -> u32 {
    let mut found = 0;
    for s in 0..200_000u64 {
        let mut r = rng(stream, s);
        let n = 3;
        let m = r.random_range(2..=3);
        let set = DagSet::new((0..n).map(|_| random_task(&mut r, 4)).collect());
        let order = Assignment::default().order(&set.sequential().unwrap()).unwrap();
        let Some(b) = bounds(&set, m, &order) else { continue };
        let policy = Policy::from_order(&order);
        let h = set.iter().fold(1u64, |h, t| dag_sim::lcm(h, t.period()));
        let (a, c) = (order[0], order[1]);
        for oa in 0..set[a].period() {
            for oc in 0..set[c].period() {
                let mut off = vec![0u64; n];
                off[a] = oa;
                off[c] = oc;
                let horizon = 3 * h + 48;
                let out = simulate(&set, m, &policy, horizon, &offset_plan(&set, &off, horizon));
                if wrong(&b, &out) {
                    found += 1;
                    if found < 4 {
                        eprintln!("seed {s}: {set:?} m {m} offsets {off:?} bounds {b:?}: {out:?}");
                    }
                }
            }
        }
        if found > 10 {
            break;
        }
    }
    eprintln!("found {found}");
    found
}

#[test]
#[ignore]
fn explore_offsets_for_the_no_carry_in_twin() {
    assert!(
        explore(9, |set, m, order| twin(set, m, order, Twin::NoCarryIn)) > 0,
        "the search found no refuting schedule"
    );
}

#[test]
#[ignore]
fn explore_offsets_for_the_est_carry_in_twin() {
    let found = explore(7, |set, m, _| fonseca_twin(set, m, &Assignment::default(), FonsecaTwin::EstCarryIn));
    assert!(found > 0, "the search found no refuting schedule");
}

/// The same search for the G-EDF twin. Minutes; run with `--ignored`.
#[test]
#[ignore]
fn explore_offsets_for_the_edf_twin() {
    let mut found = 0;
    for s in 0..200_000u64 {
        let mut r = rng(8, s);
        let n = 3;
        let m = r.random_range(2..=3);
        let set = DagSet::new((0..n).map(|_| random_task(&mut r, 4)).collect());
        let order = Assignment::default().order(&set.sequential().unwrap()).unwrap();
        let Some(b) = twin(&set, m, &order, Twin::EdfNoCarryIn) else { continue };
        let policy = Policy::Edf;
        let h = set.iter().fold(1u64, |h, t| dag_sim::lcm(h, t.period()));
        // offsets for the two highest-priority tasks
        let (a, c) = (order[0], order[1]);
        for oa in 0..set[a].period() {
            for oc in 0..set[c].period() {
                let mut off = vec![0u64; n];
                off[a] = oa;
                off[c] = oc;
                let horizon = 3 * h + 48;
                let plan: dag_sim::Plan = set
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        (off[i]..horizon).step_by(t.period() as usize).map(|x| (x, t.wcets().to_vec())).collect()
                    })
                    .collect();
                let out = simulate(&set, m, &policy, horizon, &plan);
                if wrong(&b, &out) {
                    found += 1;
                    if found < 4 {
                        eprintln!("seed {s}: {set:?} m {m} offsets {off:?} bounds {b:?}: {out:?}");
                    }
                }
            }
        }
        if found > 10 {
            break;
        }
    }
    eprintln!("found {found}");
    assert!(found > 0, "the search found no refuting schedule");
}
