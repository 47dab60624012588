//! Test support for the DAG analyses' unit tests: one seeded xorshift stream and one small
//! random DAG drawn from it (the draws in the order the tests always made them, so every
//! test sees the sets it saw before).

/// A seeded xorshift64 stream: `next(k)` is uniform-ish in `0..k`.
pub(crate) fn xorshift(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut s = seed;
    move |k: u64| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s % k
    }
}

/// A DAG of `1..=max_nodes` nodes with WCETs in `1..=max_wcet`, each forward edge `i → j`
/// (`i < j`) present with probability 1/3: its WCETs and edges.
pub(crate) fn small_dag(
    next: &mut impl FnMut(u64) -> u64,
    max_nodes: u64,
    max_wcet: u64,
) -> (Vec<u64>, Vec<(u32, u32)>) {
    let n = next(max_nodes) as usize + 1;
    let wcets: Vec<u64> = (0..n).map(|_| next(max_wcet) + 1).collect();
    let mut edges = Vec::new();
    for i in 0..n as u32 {
        for j in i + 1..n as u32 {
            if next(3) == 0 {
                edges.push((i, j));
            }
        }
    }
    (wcets, edges)
}
