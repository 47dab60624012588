//! Unit tests of Fonseca et al.'s G-FP RTA: both workload distributions on hand-made graphs,
//! the carry-out distribution against a brute-force search over every schedule of small graphs,
//! the exact split and placement maxima against trying every integer, and the counterexample
//! that shows Eq. 10–11 (as the DAG-scheduling tool reads them) is not monotone.

use super::*;

fn task(wcets: Vec<u64>, edges: Vec<(u32, u32)>) -> DagTask {
    DagTask::new(1 << 30, 1 << 30, wcets, edges).unwrap()
}

#[test]
fn carry_in_distribution_is_the_asap_profile() {
    // 0 (2) → {1 (3), 2 (1)} → 3 (2): EST 0, 2, 2, 5; EFT 2, 5, 3, 7.
    let t = task(vec![2, 3, 1, 2], vec![(0, 1), (0, 2), (1, 3), (2, 3)]);
    let d = carry_in_distribution(&t);
    assert_eq!(d.steps(), &[(2, 1), (1, 2), (4, 1)]);
    assert_eq!((d.length(), d.work()), (7, 8));
    assert_eq!(d.last(1), 1);
    assert_eq!(d.last(5), 6, "[2, 7): 2 + 1 + 1 + 1 + 1");
    assert_eq!(d.first(3), 4);
}

#[test]
fn carry_out_distribution_of_series_parallel_graphs() {
    // P(S(a 1, b 10), S(c 10, d 1)): max antichain 2 throughout → 2x up to 11, total 22.
    let t = task(vec![1, 10, 10, 1], vec![(0, 1), (2, 3)]);
    let d = carry_out_distribution(&t);
    assert_eq!(d.steps(), &[(11, 2)]);
    // Fork-join: s (1) → {1, 1, 5} → j (1): S(s, P(1, 1, 5), j) → heights 3, 1 ... merged:
    // P part: (1, 3), (4, 1); S merge with s (1, 1) and j (1, 1): (1, 3), (6, 1).
    let fj = task(vec![1, 1, 1, 5, 1], vec![(0, 1), (0, 2), (0, 3), (1, 4), (2, 4), (3, 4)]);
    assert_eq!(carry_out_distribution(&fj).steps(), &[(1, 3), (6, 1)]);
    // An N (0→2, 1→2, 1→3) is not series-parallel: chains 1→2 (and 0, 3 alone).
    let n = task(vec![1, 2, 3, 4], vec![(0, 2), (1, 2), (1, 3)]);
    let d = carry_out_distribution(&n);
    assert_eq!(d.work(), 10);
    // Chains: 1→3 (6) or 1→2 (5) — the longest is 1→3 (6), then 0→2 (4): 2x up to 4.
    assert_eq!(d.steps(), &[(4, 2), (2, 1)]);
}

/// The most work a job can do in its first `x` ns, by brute force over unit-step
/// schedules on unboundedly many cores with every node at its WCET or any shorter cost —
/// enumerated as: at each step, any antichain of ready nodes runs.
fn brute_first(t: &DagTask, x: u128) -> u128 {
    use std::collections::HashMap;
    type Memo = HashMap<(Vec<u64>, Vec<bool>, u128), u128>;
    fn go(t: &DagTask, rem: &mut Vec<u64>, done: &mut Vec<bool>, steps: u128, memo: &mut Memo) -> u128 {
        if steps == 0 {
            return 0;
        }
        let key = (rem.clone(), done.clone(), steps);
        if let Some(&v) = memo.get(&key) {
            return v;
        }
        let n = t.nodes();
        let ready: Vec<usize> = (0..n)
            .filter(|&v| !done[v] && (0..n).all(|u| !t.successors(u as u32).contains(&(v as u32)) || done[u]))
            .collect();
        let mut best = 0;
        // Any subset of the ready nodes runs one unit; a node that runs may complete early.
        for mask in 0u32..1 << ready.len() {
            for early in 0u32..1 << ready.len() {
                if early & !mask != 0 {
                    continue;
                }
                let mut gain = 0;
                let mut saved = Vec::new();
                for (k, &v) in ready.iter().enumerate() {
                    if mask >> k & 1 == 1 {
                        saved.push((v, rem[v], done[v]));
                        rem[v] -= 1;
                        gain += 1;
                        if rem[v] == 0 || early >> k & 1 == 1 {
                            done[v] = true;
                        }
                    }
                }
                best = best.max(gain + go(t, rem, done, steps - 1, memo));
                for (v, r, d) in saved {
                    rem[v] = r;
                    done[v] = d;
                }
            }
        }
        memo.insert(key, best);
        best
    }
    let mut rem = t.wcets().to_vec();
    let mut done = vec![false; t.nodes()];
    go(t, &mut rem, &mut done, x, &mut HashMap::new())
}

#[test]
fn carry_out_distribution_bounds_every_schedule_of_small_graphs() {
    let mut next = crate::dag::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
    let mut tight = 0;
    for _ in 0..150 {
        let (wcets, edges) = crate::dag::test_rng::small_dag(&mut next, 4, 3);
        let t = task(wcets, edges);
        let d = carry_out_distribution(&t);
        assert_eq!(d.work(), t.volume() as u128);
        for x in 0..=t.volume() as u128 {
            let b = brute_first(&t, x);
            assert!(b <= d.first(x), "{t:?}: {b} in the first {x} ns, the distribution allows {}", d.first(x));
            tight += (b == d.first(x)) as u32;
        }
    }
    assert!(tight > 300, "never tight: {tight}");
}

#[test]
fn the_exact_split_is_the_best_integer_split() {
    let mut next = crate::dag::test_rng::xorshift(0x2545_f491_4f6c_dd1d);
    for _ in 0..2_000 {
        let (wcets, edges) = crate::dag::test_rng::small_dag(&mut next, 6, 5);
        let probe = task(wcets, edges);
        let m = next(4) as u128 + 1;
        let mut it = Interferer::of(&probe);
        it.period = it.len + next(20) as u128;
        let r = it.len + next((it.period - it.len) as u64 + 1) as u128;
        for delta in 0..2 * it.period + 3 {
            let brute = (0..=delta).map(|x1| it.carry_in(r, x1, m) + it.carry_out(delta - x1, m)).max().unwrap();
            assert_eq!(it.carry_workload(r, delta, m), brute, "{probe:?} m {m} T {} R {r} Δ {delta}", it.period);
        }
        // W over every placement, by brute force; non-decreasing in the window (the
        // fixed-point iteration relies on it); never below Eq. 10–11's reading.
        let mut prev = 0;
        for x in 0..4 * it.period {
            let brute = (0..it.period)
                .map(|u| {
                    let y = x.saturating_sub(u);
                    it.carry_in(r, u.min(x), m) + (y / it.period) * it.vol + it.carry_out(y % it.period, m)
                })
                .max()
                .unwrap();
            let w = it.workload(r, x, m);
            assert_eq!(w, brute, "{probe:?} m {m} T {} R {r} x {x}", it.period);
            assert!(w >= prev, "{probe:?} m {m} T {} R {r}: W({x}) = {w} < {prev}", it.period);
            assert!(w >= it.workload_eq11(r, x, m), "{probe:?} m {m} T {} R {r} x {x}", it.period);
            prev = w;
        }
    }
}

#[test]
fn eq11_is_not_monotone() {
    // nodes 0 (1), 1 (2), 2 (2), 3 (1), 4 (4); 0 → 3, 1 → 2, 1 → 3, 3 → 4: vol 10, len 7;
    // T = 16, R = 12, m = 1. A window of 22 ns holds 18 units: the carry-in job released
    // 4 ns before the window (done by 8: its last 8 units) and the next job, released at
    // 12, for 10 ns. A window of 23 ns holds at least as much, but Eq. 11 puts one body job
    // in it (⌊(23 − 7)/16⌋ = 1) and leaves Δ^C = 7 for the rest: 10 + 7 = 17.
    let t = task(vec![1, 2, 2, 1, 4], vec![(0, 3), (1, 2), (1, 3), (3, 4)]);
    let mut it = Interferer::of(&t);
    it.period = 16;
    assert_eq!(it.workload_eq11(12, 22, 1), 18);
    assert_eq!(it.workload_eq11(12, 23, 1), 17);
    assert_eq!(it.workload(12, 22, 1), 18);
    assert_eq!(it.workload(12, 23, 1), 19);
}
