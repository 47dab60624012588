//! The benchmark workload shared by benches/sim.rs and examples/throughput.rs: UUniFast-discard
//! utilizations, periods uniform over whole milliseconds in [10, 100] ms. A tiny local
//! generator keeps the bench's task sets fixed even when crates/gen changes its streams.

use rtsched_model::TaskSet;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` tasks of total utilization `u` (UUniFast-discard), periods whole ms in [10, 100].
pub fn task_set(n: usize, u: f64, seed: u64) -> TaskSet {
    let mut rng = Rng(seed);
    loop {
        let mut us = Vec::with_capacity(n);
        let mut sum = u;
        for i in 1..n {
            let next = sum * rng.unit().powf(1.0 / (n - i) as f64);
            us.push(sum - next);
            sum = next;
        }
        us.push(sum);
        if us.iter().any(|&x| x > 1.0) {
            continue;
        }
        let params: Vec<(u64, u64)> = us
            .iter()
            .map(|&ui| {
                let p = (10 + rng.next() % 91) * 1_000_000;
                (((ui * p as f64).round() as u64).max(1), p)
            })
            .collect();
        return TaskSet::from_ct(&params).unwrap();
    }
}
