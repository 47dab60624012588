//! Oracles for partitioning: every result re-verified by `verify`, known bin-packing answers
//! (FFD places a set that WFD cannot), and a naive re-implementation of each fit rule built
//! directly on the public uniprocessor tests.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::partition::{
    partition, partition_many, task_order, verify, verify_partial, Admission, Fit, Order, Partition, PartitionError,
    PartitionOutcome,
};
use rtsched_analysis::uni::edf::qpa;
use rtsched_analysis::uni::fp::{rta, Priority};
use rtsched_analysis::{Limits, Verdict};
use rtsched_model::exact::{ratio, Rational};
use rtsched_model::TaskSet;

const FITS: [Fit; 4] = [Fit::First, Fit::Worst, Fit::Best, Fit::Next];
const ORDERS: [Order; 2] = [Order::DecreasingUtilization, Order::DecreasingDensity];
const ADMISSIONS: [Admission; 3] =
    [Admission::Edf, Admission::Fp(Priority::RateMonotonic), Admission::Fp(Priority::DeadlineMonotonic)];

fn random_set(rng: &mut ChaCha8Rng) -> TaskSet {
    let n = rng.random_range(1..=12usize);
    let kind = rng.random_range(0..3u32);
    let v: Vec<(u64, u64, u64)> = (0..n)
        .map(|_| {
            let t = rng.random_range(5..=60u64);
            let c = rng.random_range(1..=t * 3 / 4);
            let d = match kind {
                0 => t,
                1 => rng.random_range(c..=t),
                _ => rng.random_range(1..=2 * t),
            };
            (c, d, t)
        })
        .collect();
    TaskSet::from_cdt(&v).unwrap()
}

/// Does the processor holding `cpu` (global indices) pass the public exact test?
fn passes(ts: &TaskSet, cpu: &[usize], admission: Admission) -> bool {
    let mut idx = cpu.to_vec();
    idx.sort_unstable();
    let sub = TaskSet::new(idx.iter().map(|&i| ts[i].clone()).collect()).unwrap();
    let l = Limits::default();
    match admission {
        Admission::Edf => qpa(&sub, &l) == Verdict::Schedulable,
        Admission::Fp(p) => rta(&sub, p, &l).0 == Verdict::Schedulable,
    }
}

fn load(ts: &TaskSet, cpu: &[usize], order: Order) -> Rational {
    cpu.iter().fold(ratio(0, 1), |a, &i| {
        a + match order {
            Order::DecreasingUtilization => ts[i].utilization(),
            Order::DecreasingDensity => ts[i].density(),
        }
    })
}

/// The fit rules re-implemented naively: rebuild each candidate processor's task set and run
/// the public test from scratch; loads as exact rationals.
fn naive(ts: &TaskSet, m: usize, fit: Fit, order: Order, admission: Admission) -> PartitionOutcome {
    let mut cpus: Vec<Vec<usize>> = vec![Vec::new(); m];
    let mut cur = 0;
    for i in task_order(ts, order) {
        let ok = |cpus: &Vec<Vec<usize>>, k: usize| {
            let mut c = cpus[k].clone();
            c.push(i);
            passes(ts, &c, admission)
        };
        let chosen = match fit {
            Fit::First => (0..m).find(|&k| ok(&cpus, k)),
            Fit::Next => {
                while cur < m && !ok(&cpus, cur) {
                    cur += 1;
                }
                (cur < m).then_some(cur)
            }
            Fit::Worst | Fit::Best => {
                let mut best: Option<(usize, Rational)> = None;
                for k in 0..m {
                    if !ok(&cpus, k) {
                        continue;
                    }
                    let l = load(ts, &cpus[k], order);
                    let better = match &best {
                        None => true,
                        Some((_, bl)) => {
                            if fit == Fit::Worst {
                                l < *bl
                            } else {
                                l > *bl
                            }
                        }
                    };
                    if better {
                        best = Some((k, l));
                    }
                }
                best.map(|b| b.0)
            }
        };
        match chosen {
            Some(k) => cpus[k].push(i),
            None => return PartitionOutcome::Failed { task: i, partial: Partition { cpus } },
        }
    }
    PartitionOutcome::Placed(Partition { cpus })
}

#[test]
fn every_result_verifies_and_matches_the_naive_heuristics() {
    let limits = Limits::default();
    let mut rng = ChaCha8Rng::seed_from_u64(0xB1B);
    let (mut placed, mut failed) = (0, 0);
    for k in 0..1_500 {
        let ts = random_set(&mut rng);
        let m = rng.random_range(1..=4u32);
        for fit in FITS {
            for order in ORDERS {
                for adm in ADMISSIONS {
                    let got = partition(&ts, m, fit, order, adm, &limits);
                    assert_eq!(
                        got,
                        naive(&ts, m as usize, fit, order, adm),
                        "set {k} {fit:?} {order:?} {adm:?}: {ts:?}"
                    );
                    match &got {
                        PartitionOutcome::Placed(p) => {
                            placed += 1;
                            assert_eq!(p.cpus.len(), m as usize);
                            verify(&ts, p, adm, &limits).unwrap();
                        }
                        PartitionOutcome::Failed { task, partial } => {
                            failed += 1;
                            verify_partial(&ts, partial, adm, &limits).unwrap();
                            assert!(verify(&ts, partial, adm, &limits).is_err());
                            assert!(!partial.cpus.iter().flatten().any(|i| i == task));
                        }
                    }
                }
            }
        }
    }
    assert!(placed > 5_000 && failed > 5_000, "{placed} {failed}");
}

#[test]
fn ffd_places_what_wfd_cannot() {
    // Utilizations 0.6, 0.5, 0.4, 0.3, 0.2 on two processors.
    // FFD: 0.6 -> P0, 0.5 -> P1, 0.4 -> P0 (1.0), 0.3 -> P1 (0.8), 0.2 -> P1 (1.0).
    // WFD: 0.6 -> P0, 0.5 -> P1, 0.4 -> P1 (0.9), 0.3 -> P0 (0.9), 0.2 fits nowhere.
    let ts = TaskSet::from_ct(&[(3, 10), (6, 10), (2, 10), (5, 10), (4, 10)]).unwrap();
    let l = Limits::default();
    let ffd = partition(&ts, 2, Fit::First, Order::DecreasingUtilization, Admission::Edf, &l);
    assert_eq!(ffd, PartitionOutcome::Placed(Partition { cpus: vec![vec![1, 4], vec![3, 0, 2]] }));
    let wfd = partition(&ts, 2, Fit::Worst, Order::DecreasingUtilization, Admission::Edf, &l);
    assert_eq!(wfd, PartitionOutcome::Failed { task: 2, partial: Partition { cpus: vec![vec![1, 0], vec![3, 4]] } });
    // BFD: same as FFD here; NFD: 0.6 -> P0, 0.5 -> P1 (P0 closed), 0.4 -> P1 (0.9), 0.3 fails.
    let bfd = partition(&ts, 2, Fit::Best, Order::DecreasingUtilization, Admission::Edf, &l);
    assert_eq!(bfd, ffd);
    let nfd = partition(&ts, 2, Fit::Next, Order::DecreasingUtilization, Admission::Edf, &l);
    assert_eq!(nfd, PartitionOutcome::Failed { task: 0, partial: Partition { cpus: vec![vec![1], vec![3, 4]] } });
    // Under RM the pair (6,10)+(4,10) still fits (harmonic), so FFD with FP places too.
    let fp = partition(&ts, 2, Fit::First, Order::DecreasingUtilization, Admission::Fp(Priority::RateMonotonic), &l);
    assert!(matches!(fp, PartitionOutcome::Placed(_)));
}

#[test]
fn exact_admission_is_tighter_than_utilization() {
    // Both tasks have U = 0.5 but D = 2, C = 2: together h(2) = 4 > 2, so they never share.
    let ts = TaskSet::from_cdt(&[(2, 2, 4), (2, 2, 4)]).unwrap();
    let l = Limits::default();
    let one = partition(&ts, 1, Fit::First, Order::DecreasingDensity, Admission::Edf, &l);
    assert_eq!(one, PartitionOutcome::Failed { task: 1, partial: Partition { cpus: vec![vec![0]] } });
    let two = partition(&ts, 2, Fit::First, Order::DecreasingDensity, Admission::Edf, &l);
    assert_eq!(two, PartitionOutcome::Placed(Partition { cpus: vec![vec![0], vec![1]] }));
}

#[test]
fn verify_rejects_bad_partitions_and_names_and_batches_work() {
    let ts = TaskSet::from_ct(&[(3, 10), (6, 10), (2, 10)]).unwrap();
    let l = Limits::default();
    let e = verify(&ts, &Partition { cpus: vec![vec![0, 1], vec![1, 2]] }, Admission::Edf, &l).unwrap_err().to_string();
    assert!(e.contains("twice"), "{e}");
    let e = verify(&ts, &Partition { cpus: vec![vec![0, 1]] }, Admission::Edf, &l).unwrap_err().to_string();
    assert!(e.contains("task 2"), "{e}");
    let e = verify(&ts, &Partition { cpus: vec![vec![0, 1, 2]] }, Admission::Edf, &l).unwrap_err().to_string();
    assert!(e.contains("fails"), "{e}");
    let e = verify(&ts, &Partition { cpus: vec![vec![0, 1, 7]] }, Admission::Edf, &l).unwrap_err().to_string();
    assert!(e.contains("7"), "{e}");
    assert!(verify(&ts, &Partition { cpus: vec![vec![0, 1], vec![2]] }, Admission::Edf, &l).is_ok());
    for (name, fit) in [("ffd", Fit::First), ("WFD", Fit::Worst), ("bf", Fit::Best), ("nfd", Fit::Next)] {
        assert_eq!(Fit::from_name(name), Some(fit));
    }
    assert_eq!(Fit::from_name("xfd"), None);
    // m = 0: nothing fits.
    assert!(matches!(
        partition(&ts, 0, Fit::First, Order::DecreasingUtilization, Admission::Edf, &l),
        PartitionOutcome::Failed { .. }
    ));
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let sets: Vec<TaskSet> = (0..200).map(|_| random_set(&mut rng)).collect();
    let many = partition_many(&sets, 3, Fit::Worst, Order::DecreasingDensity, Admission::Edf, &l);
    for (ts, got) in sets.iter().zip(many) {
        assert_eq!(got, partition(ts, 3, Fit::Worst, Order::DecreasingDensity, Admission::Edf, &l));
    }
}

#[test]
fn verify_errors_are_typed() {
    let ts = TaskSet::from_ct(&[(3, 10), (6, 10), (2, 10)]).unwrap();
    let l = Limits::default();
    let v = |cpus: Vec<Vec<usize>>| verify(&ts, &Partition { cpus }, Admission::Edf, &l);
    assert_eq!(v(vec![vec![0, 1], vec![1, 2]]), Err(PartitionError::PlacedTwice { task: 1, first: 0, second: 1 }));
    assert_eq!(v(vec![vec![0, 1]]), Err(PartitionError::Unplaced { task: 2 }));
    assert_eq!(v(vec![vec![0, 1, 7]]), Err(PartitionError::NoSuchTask { cpu: 0, task: 7, n: 3 }));
    assert_eq!(
        v(vec![vec![2, 1, 0]]),
        Err(PartitionError::FailsTest { cpu: 0, tasks: vec![0, 1, 2], verdict: Verdict::NotSchedulable })
    );
    // A partial partition may leave tasks out, but not place one twice.
    let partial = Partition { cpus: vec![vec![0]] };
    assert_eq!(verify_partial(&ts, &partial, Admission::Edf, &l), Ok(()));
    assert!(matches!(
        verify_partial(&ts, &Partition { cpus: vec![vec![0], vec![0]] }, Admission::Edf, &l),
        Err(PartitionError::PlacedTwice { task: 0, .. })
    ));
}
