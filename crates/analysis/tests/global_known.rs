//! Hand-computed answers for every G-EDF test (arithmetic in the comments).

use rtsched_analysis::global::{self, srt, GlobalTest};
use rtsched_analysis::{Limits, Verdict};
use rtsched_model::TaskSet;

use GlobalTest::*;
use Verdict::*;

fn cdt(v: &[(u64, u64, u64)]) -> TaskSet {
    TaskSet::from_cdt(v).unwrap()
}

fn small_limits() -> Limits {
    Limits { max_steps: 20_000, max_interval: 10_000, ..Limits::default() }
}

fn v(t: GlobalTest, ts: &TaskSet, m: u32) -> Verdict {
    global::test(t, ts, m, &small_limits())
}

#[test]
fn names_round_trip() {
    for t in GlobalTest::ALL {
        assert_eq!(GlobalTest::from_name(t.name()), Some(t));
    }
    assert_eq!(GlobalTest::from_name("GFB"), None);
    let names: Vec<_> = GlobalTest::ALL.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["gfb", "bak", "bcl", "bcl_iterative", "rta", "bar", "ffdbf", "la"]);
}

#[test]
fn common_preconditions() {
    let l = small_limits();
    let empty = TaskSet::new(vec![]).unwrap();
    let over = cdt(&[(2, 3, 3), (2, 3, 3), (2, 3, 3), (1, 100, 100)]); // U = 2.01 > 2
    let c_gt_d = cdt(&[(3, 2, 4)]);
    let c_gt_t = cdt(&[(5, 5, 4)]);
    let d_gt_t = cdt(&[(1, 5, 4)]);
    let ok = cdt(&[(1, 4, 4)]);
    for t in GlobalTest::ALL {
        assert_eq!(global::test(t, &empty, 2, &l), Schedulable, "{t:?}");
        assert_eq!(global::test(t, &over, 2, &l), NotSchedulable, "{t:?}");
        assert_eq!(global::test(t, &c_gt_d, 4, &l), NotSchedulable, "{t:?}");
        assert_eq!(global::test(t, &c_gt_t, 4, &l), NotSchedulable, "{t:?}");
        assert_eq!(global::test(t, &d_gt_t, 4, &l), NotSchedulable, "{t:?} (D > T documented)");
        assert_eq!(global::test(t, &ok, 0, &l), NotSchedulable, "{t:?} m = 0 never panics");
        assert_eq!(global::test(t, &ok, 1, &l), Schedulable, "{t:?}");
    }
    assert_eq!(global::combined(&empty, 3, &l), Schedulable);
    assert_eq!(global::combined(&over, 2, &l), NotSchedulable);
    assert_eq!(global::combined(&ok, 0, &l), NotSchedulable);
}

#[test]
fn gfb_known() {
    // m = 2; densities 1/2, 1/4, 1/4: sum 1 <= 2 - 1 * 1/2 = 3/2.
    assert_eq!(v(Gfb, &cdt(&[(1, 2, 2), (1, 4, 4), (1, 4, 4)]), 2), Schedulable);
    // densities 3/4, 1/2, 1/4: sum 3/2 > 2 - 3/4 = 5/4.
    assert_eq!(v(Gfb, &cdt(&[(3, 4, 4), (1, 2, 2), (1, 4, 4)]), 2), NotSchedulable);
    // Ties decided exactly: three densities 1/2 on m = 2: 3/2 <= 2 - 1/2 = 3/2.
    assert_eq!(v(Gfb, &cdt(&[(1, 2, 2), (1, 2, 2), (1, 2, 2)]), 2), Schedulable);
    // Three tasks of utilization 1/3 on one processor: 1 <= 1 - 0.
    assert_eq!(v(Gfb, &cdt(&[(1, 3, 3), (1, 3, 3), (1, 3, 3)]), 1), Schedulable);
    // Same in large ns values whose float sum is not exactly 1.
    let third = 333_333_333u64;
    let ts = TaskSet::from_ct(&[(third, 999_999_999), (third, 999_999_999), (third, 999_999_999)]).unwrap();
    assert_eq!(v(Gfb, &ts, 1), Schedulable);
    // One ns more than the bound: 1/3 + 1/3 + (1/3 + 1e-9) > 1.
    let ts = TaskSet::from_ct(&[(third, 999_999_999), (third, 999_999_999), (third + 1, 999_999_999)]).unwrap();
    assert_eq!(v(Gfb, &ts, 1), NotSchedulable);
    // Constrained: densities 1/2 (C=1,D=2,T=10) and 1/2: sum 1 <= 2 - 1/2.
    assert_eq!(v(Gfb, &cdt(&[(1, 2, 10), (2, 4, 5)]), 2), Schedulable);
}

#[test]
fn bak_known() {
    // m = 2: (1,2,2), (1,4,4), (1,4,4).
    // k = 0, λ = 1/2: every u_i <= λ, β = u_i = 1/2, 1/4, 1/4: sum 1 <= 2(1/2) + 1/2 = 3/2.
    // k = 1, λ = 1/4: β_0 = 1/2 + (1 - 2/4)/4 = 5/8; β_1 = β_2 = 1/4: 9/8 <= 2(3/4) + 1/4 = 7/4.
    assert_eq!(v(Bak, &cdt(&[(1, 2, 2), (1, 4, 4), (1, 4, 4)]), 2), Schedulable);
    // Four (1,2,2) on m = 2: λ = 1/2, β_i = 1/2, sum 2 > 3/2.
    assert_eq!(v(Bak, &cdt(&[(1, 2, 2); 4]), 2), NotSchedulable);
    // Equality: two (1,2,2) on m = 1 is U = 1: k: λ = 1/2, sum 1 <= 1(1/2) + 1/2 = 1.
    assert_eq!(v(Bak, &cdt(&[(1, 2, 2); 2]), 1), Schedulable);
}

#[test]
fn bcl_known() {
    // Three (1,2,2) on m = 2: D_k = 2, X = D_k - C_k = 1; N = floor(0/2)+1 = 1,
    // W = 1 + min(1, max(0, 2 - 2)) = 1 for both others: sum min(1,1) = 2 = m X, and a witness
    // 0 < W = 1 <= X: accepted through the equality clause.
    assert_eq!(v(Bcl, &cdt(&[(1, 2, 2); 3]), 2), Schedulable);
    // Four of them: sum 3 > m X = 2.
    assert_eq!(v(Bcl, &cdt(&[(1, 2, 2); 4]), 2), NotSchedulable);
    // C = D leaves X = 0: the sum 0 = m X has no witness 0 < W <= 0.
    assert_eq!(v(Bcl, &cdt(&[(2, 2, 4), (1, 4, 4)]), 2), NotSchedulable);
}

#[test]
fn bcl_iterative_known() {
    // Four (1,2,2) on m = 2: X + 1 = 2, W = 1 each: sum 3 < m (X+1) = 4, slack
    // 1 - floor(3/2) = 0 >= 0 for every task in round 1: accepted (BCL rejects it).
    assert_eq!(v(BclIterative, &cdt(&[(1, 2, 2); 4]), 2), Schedulable);
    // C = D with fewer than m other tasks: sum min(W, 1) = 1 < 2: accepted.
    assert_eq!(v(BclIterative, &cdt(&[(2, 2, 4), (1, 4, 4)]), 2), Schedulable);
    // Three (2,3,3) on m = 2 (U = m): X + 1 = 2, N = 1, W = 2 + min(2, 0) = 2: sum 4 = m (X+1),
    // not < : no slack for anyone, nothing changes: rejected. (Truly unschedulable: the
    // synchronous release leaves the third job 1 unit before its deadline 3.)
    assert_eq!(v(BclIterative, &cdt(&[(2, 3, 3); 3]), 2), NotSchedulable);
}

#[test]
fn rta_known() {
    // Four (1,2,2), m = 2. R = 1: cap 1, W(1): span 1 + 2 - 0 - 1 = 2 = 1*2 + 0 -> W = 1,
    // J = 1, term 1, sum 3: f = 1 + floor(3/2) = 2. R = 2: cap 2, span 3 = 1*2 + 1 -> W = 2,
    // term min(2, 1, 2) = 1, sum 3: f = 2 = R <= D: accepted.
    assert_eq!(v(Rta, &cdt(&[(1, 2, 2); 4]), 2), Schedulable);
    // Three (2,3,3), m = 2. R = 2: cap 1, terms 1, sum 2: f = 3. R = 3: cap 2,
    // W(3): span 4 = 3 + 1 -> W = 2 + 1 = 3, J = 2, terms 2, sum 4: f = 4 > D = 3: rejected.
    assert_eq!(v(Rta, &cdt(&[(2, 3, 3); 3]), 2), NotSchedulable);
}

#[test]
fn bar_known() {
    // m = 2: (1,2,2), (1,2,2), (1,4,4); U = 5/4, C_Σ = 1 (the m-1 = 1 largest C).
    // k = 0: K = 0 + 1 + (m-1) 1 - 2 = 0 -> (m-U) t <= 0 impossible for t >= D_k: no point.
    // Same for k = 1, 2: accepted without evaluating a point.
    assert_eq!(v(Bar, &cdt(&[(1, 2, 2), (1, 2, 2), (1, 4, 4)]), 2), Schedulable);
    // Three (2,3,3), m = 2, U = m. At t = D_k = 3 (A = 0): cap x+1 = 3 - 2 + 1 = 2;
    // others: dbf(3) = 2, dbf'(3) = 2 -> I1 = I2 = 2; own: 0. sum 4 >= m (x+1) = 4: rejected.
    assert_eq!(v(Bar, &cdt(&[(2, 3, 3); 3]), 2), NotSchedulable);
    // Four (1,2,2), m = 2, U = m, K = 0 >= 0: no finite horizon. At t = 2j the left side is
    // 4j - 1 < 4j, at t = 2j + 1 it is 4j < 4j + 2: never fails, so the search runs into
    // its limits and gives up rather than hanging.
    assert_eq!(v(Bar, &cdt(&[(1, 2, 2); 4]), 2), GaveUp);
    // m = 2: (2,3,3), (2,3,3), (1,3,3), U = 5/3. k = 2: C_Σ = 2, K = 2 + 1 - 2 = 1, t <= 3:
    // at t = 3: others dbf = 2 each, sum 4 < m (3 - 1 + 1) = 6. k = 0: K = 2 + 2 - 2 = 2,
    // t <= 6 ... every point passes (checked by the implementation); accepted.
    assert_eq!(v(Bar, &cdt(&[(2, 3, 3), (2, 3, 3), (1, 3, 3)]), 2), Schedulable);
}

#[test]
fn ffdbf_known() {
    // Three (2,3,3), m = 2: λ_max = 2/3 > (m - U)/(m - 1) = 0: no speed σ exists.
    assert_eq!(v(FfDbf, &cdt(&[(2, 3, 3); 3]), 2), NotSchedulable);
    // (1,4,4) twice, m = 2: σ = 1/4, RHS slope 2 - 1/4 = 7/4, horizon 2 / (7/4 - 1/2) = 1.6
    // below the first ramp end 4: accepted.
    assert_eq!(v(FfDbf, &cdt(&[(1, 4, 4); 2]), 2), Schedulable);
    // m = 1, (1,2,2) and (1,4,4) (U = 3/4): σ in [1/2, 1]; with σ = 1 (p = Q) at t = 2:
    // ff = 1 + 0 (r = 2 < D = 4, 1 - 2*1 < 0) = 1 <= 2; t = 4: 2 + 1 = 3 <= 4;
    // horizon 2 / (1 - 3/4) = 8: t = 6: 3 + (1 - 2) -> 0 -> 3 <= 6; t = 8: 4 + 2 = 6 <= 8.
    assert_eq!(v(FfDbf, &cdt(&[(1, 2, 2), (1, 4, 4)]), 1), Schedulable);
}

#[test]
fn combined_known() {
    let l = small_limits();
    // BCL-iterative accepts, GFB/BCL/BAK do not.
    assert_eq!(global::combined(&cdt(&[(1, 2, 2); 4]), 2, &l), Schedulable);
    assert_eq!(global::combined(&cdt(&[(2, 3, 3); 3]), 2, &l), NotSchedulable);
    assert_eq!(global::combined_of(&GlobalTest::SEED001, &cdt(&[(1, 2, 2); 4]), 2, &l), Schedulable);
    // Only BAR (which gives up) would remain: GaveUp surfaces when no test succeeds.
    assert_eq!(global::combined_of(&[Gfb, Bar], &cdt(&[(1, 2, 2); 4]), 2, &l), GaveUp);
}

#[test]
fn srt_known() {
    // Bounded iff U <= m and u_i <= 1.
    assert!(srt::bounded_tardiness(&cdt(&[(2, 3, 3); 3]), 2));
    assert!(!srt::bounded_tardiness(&cdt(&[(2, 3, 3); 4]), 2));
    assert!(!srt::bounded_tardiness(&cdt(&[(5, 5, 4)]), 8));
    assert!(!srt::bounded_tardiness(&cdt(&[(1, 5, 5)]), 0));
    assert!(srt::bounded_tardiness(&TaskSet::new(vec![]).unwrap(), 1));
    // Three (2,3,3) on m = 2: U = 2 is integral, Λ = U - 1 = 1; E_Λ = 2 (one largest C),
    // U_{Λ-1} = 0, C_min = 2: x = (2 - 2)/(2 - 0) = 0; bounds x + C_k = 2.
    assert_eq!(srt::tardiness_bounds(&cdt(&[(2, 3, 3); 3]), 2), Some(vec![2, 2, 2]));
    // m = 4: (3,4,4) x4 (U = 3), (1,10,10): U = 3.1, Λ = floor(3.1) = 3; E_Λ = 9,
    // U_{Λ-1} = 3/4 + 3/4 = 3/2, C_min = 1: x = 8 / (4 - 3/2) = 16/5 = 3.2;
    // bounds: ceil(3.2 + 3) = 7 for the heavy tasks, ceil(3.2 + 1) = 5 for the light one.
    let ts = cdt(&[(3, 4, 4), (3, 4, 4), (3, 4, 4), (3, 4, 4), (1, 10, 10)]);
    assert_eq!(srt::tardiness_bounds(&ts, 4), Some(vec![7, 7, 7, 7, 5]));
    // Not implicit: no bound reported.
    assert_eq!(srt::tardiness_bounds(&cdt(&[(1, 2, 3)]), 1), None);
    // Unbounded: None.
    assert_eq!(srt::tardiness_bounds(&cdt(&[(2, 3, 3); 4]), 2), None);
}

#[test]
fn bar_unbounded_horizon_stays_bounded() {
    // U = m with a non-negative numerator: no finite horizon. With a large step budget and
    // interval the search must still end (GaveUp) in bounded memory (points are generated in
    // windows).
    let l = Limits { max_steps: 3_000_000, max_interval: 1 << 50, ..Limits::default() };
    assert_eq!(global::test(Bar, &cdt(&[(1, 2, 2); 4]), 2, &l), GaveUp);
    let l = Limits { max_steps: 10, max_interval: 1 << 50, ..Limits::default() };
    assert_eq!(global::test(Bar, &cdt(&[(1, 2, 2); 4]), 2, &l), GaveUp);
}

#[test]
fn many_matches_one_by_one() {
    let sets = vec![cdt(&[(1, 2, 2); 4]), cdt(&[(2, 3, 3); 3]), cdt(&[(1, 4, 4)]), TaskSet::new(vec![]).unwrap()];
    let l = small_limits();
    for t in GlobalTest::ALL {
        let one: Vec<Verdict> = sets.iter().map(|ts| global::test(t, ts, 2, &l)).collect();
        assert_eq!(global::test_many(t, &sets, 2, &l), one);
    }
    let one: Vec<Verdict> = sets.iter().map(|ts| global::combined(ts, 2, &l)).collect();
    assert_eq!(global::combined_many(&sets, 2, &l), one);
}
