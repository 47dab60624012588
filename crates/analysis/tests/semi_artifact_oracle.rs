//! The artifact's reading of the C=D heuristics (Brandenburg & Gül, RTSS 2016; SchedCAT's
//! `schedcat/mapping/apa.py`) against a reference written here from the artifact's rules with
//! brute-force demand checks at every integer instant: WFD-C=D, WFD-C=D-MS, 2WFD-C=D and
//! FFD-C=D must place exactly the same pieces on the same processors, with and without ε.

use proptest::prelude::*;
use rtsched_analysis::semi::{check, place, Basic, Heuristic, Placement, SemiConfig, Variant};
use rtsched_model::exact::Interval;
use rtsched_model::{Task, TaskSet};

type Piece = (usize, u64, u64, u64); // task, c, d, t

fn lcm(a: u64, b: u64) -> u64 {
    a / num_integer::gcd(a, b) * b
}

/// Exact EDF feasibility of constrained-deadline sporadic reservations, by brute force.
fn feasible(ps: &[Piece]) -> bool {
    if ps.iter().any(|p| p.1 > p.2) {
        return false;
    }
    let h = ps.iter().fold(1, |h, p| lcm(h, p.3));
    if ps.iter().map(|p| p.1 * (h / p.3)).sum::<u64>() > h {
        return false;
    }
    let dmax = ps.iter().map(|p| p.2).max().unwrap_or(0);
    (1..=h + dmax)
        .all(|at| ps.iter().map(|&(_, c, d, t)| if at < d { 0 } else { ((at - d) / t + 1) * c }).sum::<u64>() <= at)
}

/// Largest x in [lo, hi] such that (x, x, t) fits next to `bin`.
fn max_chunk(bin: &[Piece], t: u64, lo: u64, hi: u64) -> Option<u64> {
    (lo.max(1)..=hi).rev().find(|&x| {
        let mut v = bin.to_vec();
        v.push((usize::MAX, x, x, t));
        feasible(&v)
    })
}

struct Ref {
    bins: Vec<Vec<Piece>>,
    dens: Vec<Interval>,
    eps: u64,
}

impl Ref {
    fn new(m: usize, eps: u64) -> Ref {
        Ref { bins: vec![Vec::new(); m], dens: vec![Interval::point(0.0); m], eps }
    }
    fn add(&mut self, b: usize, p: Piece) {
        self.dens[b] = self.dens[b].add(Interval::ratio(p.1 as u128, p.2 as u128));
        self.bins[b].push(p);
    }
    fn fits(&self, b: usize, p: Piece) -> bool {
        let mut v = self.bins[b].clone();
        v.push(p);
        feasible(&v)
    }
    fn by_density(&self) -> Vec<usize> {
        let mut o: Vec<usize> = (0..self.bins.len()).collect();
        o.sort_by(|&a, &b| self.dens[a].lo.total_cmp(&self.dens[b].lo).then(a.cmp(&b)));
        o
    }
    fn slices(&self) -> usize {
        self.bins.iter().map(Vec::len).sum()
    }
}

/// Decreasing density, ties by task index.
fn sort(v: &mut [Piece]) {
    v.sort_by(|a, b| ((b.1 as u128) * (a.2 as u128)).cmp(&((a.1 as u128) * (b.2 as u128))).then(a.0.cmp(&b.0)));
}

fn split(r: &mut Ref, b: usize, p: Piece, x: u64) -> Piece {
    r.add(b, (p.0, x, x, p.3));
    (p.0, p.1 - x, p.2 - x, p.3)
}

/// `edf_worst_fit_decreasing_difficulty(with_splits=True, max_chunk_split=ms)`.
fn ref_wfd(r: &mut Ref, mut todo: Vec<Piece>, ms: bool) -> Vec<Piece> {
    let min = r.eps.max(1);
    'pass: loop {
        sort(&mut todo);
        for i in 0..todo.len() {
            let p = todo[i];
            let order = r.by_density();
            if let Some(b) = order.iter().copied().find(|&b| r.fits(b, p)) {
                r.add(b, p);
                todo[i].1 = 0; // placed
                continue;
            }
            if p.1 < 2 * r.eps {
                continue;
            }
            let target = if ms {
                let best = (0..r.bins.len())
                    .filter_map(|b| {
                        (p.1 >= 2).then(|| max_chunk(&r.bins[b], p.3, 1, p.1 - 1)).flatten().map(|x| (x, b))
                    })
                    .max();
                best.filter(|&(x, _)| x >= min).map(|(x, b)| (b, x.min(p.1 - min)))
            } else {
                order.iter().copied().find_map(|b| {
                    (p.1 >= 2 * min).then(|| max_chunk(&r.bins[b], p.3, min, p.1 - min)).flatten().map(|x| (b, x))
                })
            };
            if let Some((b, x)) = target {
                let rest = split(r, b, p, x);
                let mut next: Vec<Piece> =
                    todo.iter().enumerate().filter(|&(j, q)| j != i && q.1 > 0).map(|(_, q)| *q).collect();
                next.push(rest);
                todo = next;
                continue 'pass;
            }
        }
        return todo.into_iter().filter(|q| q.1 > 0).collect();
    }
}

/// `edf_first_fit_decreasing_difficulty(with_splits=True)`.
fn ref_ffd_cd(r: &mut Ref, mut todo: Vec<Piece>) -> Vec<Piece> {
    let min = r.eps.max(1);
    for b in 0..r.bins.len() {
        sort(&mut todo);
        let mut next = Vec::new();
        let mut closed = false;
        for p in todo {
            if closed {
                next.push(p);
            } else if r.fits(b, p) {
                r.add(b, p);
            } else if p.1 >= 2 * r.eps {
                closed = true;
                match (p.1 >= 2 * min).then(|| max_chunk(&r.bins[b], p.3, min, p.1 - min)).flatten() {
                    Some(x) => next.push(split(r, b, p, x)),
                    None => next.push(p),
                }
            } else {
                next.push(p);
            }
        }
        todo = next;
    }
    todo
}

/// `double_wfd_split`: both, fewer failures, then fewer pieces, then -MS.
fn ref_2wfd(m: usize, eps: u64, todo: Vec<Piece>) -> (Vec<Piece>, Ref) {
    let mut a = Ref::new(m, eps);
    let fa = ref_wfd(&mut a, todo.clone(), false);
    let mut b = Ref::new(m, eps);
    let fb = ref_wfd(&mut b, todo, true);
    if fa.len() < fb.len() || (fa.len() == fb.len() && a.slices() < b.slices()) {
        (fa, a)
    } else {
        (fb, b)
    }
}

/// Pieces per processor, sorted, from a placement.
fn pieces_of(p: &Placement) -> Vec<Vec<(usize, u64, u64)>> {
    p.cpus
        .iter()
        .map(|c| {
            let mut v: Vec<_> = c.reservations.iter().map(|r| (r.task, r.budget, r.deadline)).collect();
            v.sort();
            v
        })
        .collect()
}

fn pieces_of_ref(r: &Ref) -> Vec<Vec<(usize, u64, u64)>> {
    r.bins
        .iter()
        .map(|b| {
            let mut v: Vec<_> = b.iter().map(|p| (p.0, p.1, p.2)).collect();
            v.sort();
            v
        })
        .collect()
}

const PERIODS: [u64; 6] = [4, 5, 6, 8, 10, 12];

fn small_set() -> impl Strategy<Value = (TaskSet, usize)> {
    (2usize..4, 3usize..8)
        .prop_flat_map(|(m, n)| {
            let task = (0usize..PERIODS.len(), 30u64..=100, 0u64..=100, 0u8..4).prop_map(|(pi, cu, du, kind)| {
                let t = PERIODS[pi];
                let c = (t * cu).div_ceil(100).clamp(1, t);
                // Mostly implicit deadlines, sometimes constrained.
                let d = if kind > 0 { t } else { c + (t - c) * du / 100 };
                Task { name: None, wcet: c, deadline: d, period: t, segments: None }
            });
            (proptest::collection::vec(task, n), Just(m))
        })
        .prop_map(|(tasks, m)| (TaskSet::new(tasks).unwrap(), m))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn artifact_cd_heuristics_match_the_reference((ts, m) in small_set(), eps in prop_oneof![Just(0u64), 1u64..3]) {
        let cfg = SemiConfig { epsilon: eps, ..SemiConfig::for_variant(Variant::Artifact) };
        let all: Vec<Piece> = ts.iter().enumerate().map(|(i, t)| (i, t.wcet, t.deadline.min(t.period), t.period)).collect();
        for (h, want) in [
            (Basic::WfdCd, { let mut r = Ref::new(m, eps); let f = ref_wfd(&mut r, all.clone(), false); (f, r) }),
            (Basic::WfdCdMs, { let mut r = Ref::new(m, eps); let f = ref_wfd(&mut r, all.clone(), true); (f, r) }),
            (Basic::TwoWfdCd, ref_2wfd(m, eps, all.clone())),
            (Basic::FfdCd, { let mut r = Ref::new(m, eps); let f = ref_ffd_cd(&mut r, all.clone()); (f, r) }),
        ] {
            let p = place(&ts, m as u32, &Heuristic::Basic(h), &cfg);
            prop_assert_eq!(p.schedulable, want.0.is_empty(), "{}: reference left {:?}; {:?}", h.name(), want.0, p.reason);
            if p.schedulable {
                prop_assert!(check(&ts, &p).is_ok(), "{}: {:?}", h.name(), check(&ts, &p));
                prop_assert_eq!(pieces_of(&p), pieces_of_ref(&want.1), "{}", h.name());
            }
        }
    }
}
