//! The fork-join task-set generator of seed 003 (*RTWS: Real-Time Work-Stealing*, §VI).
//!
//! What the paper states, and how it is read here (`docs/rtws.md`):
//! * `T_i = T_min + x (T_max - T_min)`, `x` uniform in `[0, 1]`, with `T_min = 700 ms`,
//!   `T_max = 800 ms` (rounded to the nearest ns); implicit deadlines (§III).
//! * `u_i = U_min + x (U_max - U_min)` with `U_min = 0.1`, `U_max = 0.5`; tasks are added
//!   until `Σ u_k ≥ U_tmin`, and the set must satisfy `Σ u_k ≤ U_tmax`. Table I (50 tasks
//!   over the twenty sets of m = 2 at 38–40%, i.e. 2.5 tasks of mean utilization 0.3) shows
//!   the window is per core: here `Σ u_k ∈ [m·U_tmin, m·U_tmax]`. A set that overshoots is
//!   discarded and drawn again (at most `max_restarts` times, then an error).
//! * `C_i = T_i u_i` (`wcet_from_utilization`: nearest ns, at least 1 ns).
//! * `n_i = x · (2m)` threads in the parallel region; read as `n_i = ⌈x · 2m⌉` (so
//!   `1..=2m`, uniform, mean `m + 1/2`; Table I's threads per task are 2.56, 4.48 and 8.0
//!   for m = 2, 4, 8), since a parallel region needs at least one thread.
//! * Each job executes sequentially, splits into `n_i` parallel threads, and joins back into
//!   the master thread: regions `[[s_1], [p_1 .. p_{n_i}], [s_2]]`. "Sequential, parallel,
//!   and total execution times were derived randomly, with the actual total execution time
//!   upper bounded by C_i": here the total is exactly `C_i` (the WCET), split into the
//!   `n_i + 2` parts by a uniform point of the simplex (normalised exponentials), each
//!   part at least 1 ns, so every part is random and the total is the bound.
//!
//! Deterministic: set `index` of stream `seed` is a pure function of `(spec, seed, index)`
//! (ChaCha8 keyed by `seed`, stream `index`).

use crate::rng::{open01, unit};
use crate::wcet_from_utilization;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rtsched_model::forkjoin::{ForkJoinSet, ForkJoinTask};
use rtsched_model::{ModelError, Time};

/// Parameters of the seed-003 generator.
#[derive(Debug, Clone, PartialEq)]
pub struct ForkJoinGenSpec {
    /// Number of cores (threads per task: `1..=2m`; utilization window scaled by `m`).
    pub m: u32,
    /// Per-core total-utilization window `[U_tmin, U_tmax]` (e.g. 0.38, 0.40).
    pub window: (f64, f64),
    /// Per-task utilization range `[U_min, U_max]` (0.1, 0.5).
    pub task_util: (f64, f64),
    /// Period range in ns (700 ms, 800 ms).
    pub period: (Time, Time),
    /// Sets discarded for overshooting the window before giving up.
    pub max_restarts: u32,
}

impl ForkJoinGenSpec {
    /// The paper's parameters for `m` cores and the window `[lo, hi]` (its three windows:
    /// `[0.38, 0.40]`, `[0.58, 0.60]`, `[0.73, 0.75]`).
    pub fn seed003(m: u32, lo: f64, hi: f64) -> ForkJoinGenSpec {
        ForkJoinGenSpec {
            m,
            window: (lo, hi),
            task_util: (0.1, 0.5),
            period: (700_000_000, 800_000_000),
            max_restarts: 1_000_000,
        }
    }

    /// Checks every parameter; errors name it (`m`, `window`, `task_util`, `period`).
    pub fn validate(&self) -> Result<(), ModelError> {
        if self.m == 0 || self.m > 1 << 12 {
            return Err(ModelError::field("m", format!("must be in 1..=4096, got {}", self.m)));
        }
        let (lo, hi) = self.window;
        if !(lo.is_finite() && hi.is_finite() && 0.0 < lo && lo <= hi && hi <= 1.0) {
            return Err(ModelError::field("window", format!("need 0 < lo <= hi <= 1, got [{lo}, {hi}]")));
        }
        let (a, b) = self.task_util;
        if !(a.is_finite() && b.is_finite() && 0.0 < a && a <= b && b <= 1.0) {
            return Err(ModelError::field("task_util", format!("need 0 < min <= max <= 1, got [{a}, {b}]")));
        }
        if a > hi * self.m as f64 {
            return Err(ModelError::field("task_util", "the smallest task utilization exceeds the window"));
        }
        let (t0, t1) = self.period;
        if t0 == 0 || t0 > t1 || t1 > rtsched_model::MAX_TIME {
            return Err(ModelError::field("period", format!("need 1 <= min <= max <= 2^53 ns, got [{t0}, {t1}]")));
        }
        Ok(())
    }
}

fn rng_for(seed: u64, index: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    key[8..16].copy_from_slice(&0x5eed_0003_u64.to_le_bytes());
    let mut r = ChaCha8Rng::from_seed(key);
    r.set_stream(index);
    r
}

/// Splits `total >= parts` ns into `parts` positive integers summing to `total`, in
/// proportion to a uniform point of the simplex.
fn split(total: Time, parts: usize, rng: &mut ChaCha8Rng) -> Vec<Time> {
    let w: Vec<f64> = (0..parts).map(|_| -open01(rng).ln()).collect();
    let sum: f64 = w.iter().sum();
    let spare = total - parts as Time; // each part gets 1 ns, the rest in proportion
    let mut out: Vec<Time> =
        w.iter().map(|x| 1 + ((x / sum) * spare as f64).floor().min(spare as f64) as Time).collect();
    let assigned: Time = out.iter().sum();
    if assigned > total {
        // Float rounding: take the excess from the largest parts (never below 1).
        let mut excess = assigned - total;
        while excess > 0 {
            let k = (0..parts).max_by_key(|&k| out[k]).unwrap_or(0);
            let d = excess.min(out[k] - 1);
            out[k] -= d;
            excess -= d;
            if d == 0 {
                break;
            }
        }
    } else {
        out[parts - 1] += total - assigned;
    }
    out
}

/// Fork-join set number `index` of stream `seed` (see the module doc).
pub fn generate_forkjoin(spec: &ForkJoinGenSpec, seed: u64, index: u64) -> Result<ForkJoinSet, ModelError> {
    spec.validate()?;
    let mut rng = rng_for(seed, index);
    let m = spec.m as f64;
    let (lo, hi) = (spec.window.0 * m, spec.window.1 * m);
    let (umin, umax) = spec.task_util;
    for _ in 0..=spec.max_restarts {
        let mut us: Vec<f64> = Vec::new();
        let mut sum = 0.0;
        while sum < lo {
            let u = umin + unit(&mut rng) * (umax - umin);
            us.push(u);
            sum += u;
        }
        if sum > hi {
            continue;
        }
        let mut tasks = Vec::with_capacity(us.len());
        for &u in &us {
            let (t0, t1) = spec.period;
            let t = ((t0 as f64) + unit(&mut rng) * ((t1 - t0) as f64)).round().clamp(t0 as f64, t1 as f64) as Time;
            let c = wcet_from_utilization(u, t);
            let n = ((unit(&mut rng) * 2.0 * m).ceil() as usize).clamp(1, 2 * spec.m as usize);
            let parts = if c >= n as Time + 2 { split(c, n + 2, &mut rng) } else { vec![1; n + 2] };
            let regions = vec![vec![parts[0]], parts[1..=n].to_vec(), vec![parts[n + 1]]];
            tasks.push(ForkJoinTask { name: None, period: t, deadline: t, regions });
        }
        return ForkJoinSet::new(tasks);
    }
    Err(ModelError::field("window", format!("no set landed in the window after {} restarts", spec.max_restarts)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_window_and_statistics() {
        for (m, lo, hi) in [(2u32, 0.38, 0.40), (4, 0.58, 0.60), (8, 0.73, 0.75)] {
            let spec = ForkJoinGenSpec::seed003(m, lo, hi);
            let (mut n_tasks, mut sum_t, mut sum_n, mut sum_u) = (0usize, 0f64, 0f64, 0f64);
            for i in 0..300 {
                let set = generate_forkjoin(&spec, 7, i).unwrap();
                assert_eq!(set, generate_forkjoin(&spec, 7, i).unwrap(), "deterministic");
                let mut total = 0f64;
                for t in set.iter() {
                    assert!((700_000_000..=800_000_000).contains(&t.period) && t.deadline == t.period);
                    assert_eq!(t.regions.len(), 3);
                    assert!(t.regions[0].len() == 1 && t.regions[2].len() == 1);
                    let n = t.regions[1].len();
                    assert!((1..=2 * m as usize).contains(&n));
                    let u = t.wcet() as f64 / t.period as f64;
                    assert!((0.1 - 1e-8..=0.5 + 1e-8).contains(&u), "u = {u}");
                    total += u;
                    n_tasks += 1;
                    sum_t += t.period as f64;
                    sum_n += n as f64;
                    sum_u += u;
                }
                let (a, b) = (lo * m as f64, hi * m as f64);
                assert!(total >= a - 1e-6 && total <= b + 1e-6, "m={m}: U = {total} outside [{a}, {b}]");
            }
            // Statistics of the per-task draws: T uniform on [700, 800] ms (mean 750 ms, sd
            // 100/√12 ms); n uniform on 1..=2m (mean m + 1/2, sd √((4m²-1)/12)); 5 standard errors.
            let k = n_tasks as f64;
            let mean_t = sum_t / k;
            assert!((mean_t - 750e6).abs() < 5.0 * (100e6 / 12f64.sqrt()) / k.sqrt(), "mean T {mean_t}");
            let mean_n = sum_n / k;
            let sd_n = ((4.0 * (m * m) as f64 - 1.0) / 12.0).sqrt();
            assert!((mean_n - (m as f64 + 0.5)).abs() < 5.0 * sd_n / k.sqrt(), "m={m}: mean n {mean_n}");
            // Tasks per set about (window mid · m) / 0.3 (utilization mean 0.3).
            let per_set = k / 300.0;
            let expect = (lo + hi) / 2.0 * m as f64 / 0.3;
            assert!(
                (per_set - expect).abs() < 0.25 * expect + 0.5,
                "m={m}: {per_set} tasks per set, about {expect} expected"
            );
            let _ = sum_u;
        }
    }

    #[test]
    fn split_is_exact_and_positive() {
        let mut r = rng_for(1, 2);
        for (total, parts) in [(5u64, 5usize), (6, 5), (1_000_000_007, 17), (10, 3)] {
            let v = split(total, parts, &mut r);
            assert_eq!(v.len(), parts);
            assert_eq!(v.iter().sum::<u64>(), total);
            assert!(v.iter().all(|&x| x >= 1));
        }
    }

    #[test]
    fn rejects_bad_specs() {
        let ok = ForkJoinGenSpec::seed003(2, 0.38, 0.40);
        for (f, spec) in [
            ("m", ForkJoinGenSpec { m: 0, ..ok.clone() }),
            ("window", ForkJoinGenSpec { window: (0.5, 0.4), ..ok.clone() }),
            ("window", ForkJoinGenSpec { window: (f64::NAN, 0.4), ..ok.clone() }),
            ("task_util", ForkJoinGenSpec { task_util: (0.0, 0.4), ..ok.clone() }),
            ("period", ForkJoinGenSpec { period: (0, 10), ..ok.clone() }),
        ] {
            assert_eq!(generate_forkjoin(&spec, 1, 0).unwrap_err().field.as_deref(), Some(f));
        }
        // An impossible window: one task of utilization 0.1 fixed, window [0.33, 0.34] on one core.
        let imp = ForkJoinGenSpec { m: 1, window: (0.33, 0.34), task_util: (0.1, 0.1), max_restarts: 10, ..ok };
        assert_eq!(generate_forkjoin(&imp, 1, 0).unwrap_err().field.as_deref(), Some("window"));
    }
}
