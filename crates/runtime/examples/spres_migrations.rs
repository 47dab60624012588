//! SP-RES migration rates on real threads versus average slack — Brandenburg & Gül, RTSS 2016,
//! §VII-C, Table I, scaled to this machine — beside the simulator's rates on the same sets.
//!
//! Task sets of n ∈ {m+1, …, 2m+1} tasks with U/m ∈ [0.75, 0.95] and periods in [10, 100] ms
//! are placed by the SP-RES cascade; only placements that split a task and pass the checker are
//! kept (the paper reran only sets "that contained at least one semi-partitioned
//! reservation"). Each runs under `spres` (CASH on, as the paper) with execution times uniform
//! in [(1 − 2s)·C, C] (mean slack s), and is simulated for the same duration with the same
//! execution-time model (other draws: the runtime and the simulator have their own streams).
//!
//! Run: `cargo run --release -p rtsched-runtime --example spres_migrations [seconds] [fifo_prio]
//! [sets]` (default 3 s, normal priority, 4 sets) on the first two allowed CPUs (or all, when
//! fewer). Measurements: take the lock (`flock /work/wt/measure.lock …`).
use rtsched_analysis::semi;
use rtsched_model::Placement;
use rtsched_model::TaskSet;
use rtsched_runtime::{run, ExecTime, Mechanism, RunConfig};
use rtsched_sim::{simulate, ExecTimes, Scheduler, SimConfig, SpresConfig};

const MS: u64 = 1_000_000;
const SLACKS: [f64; 5] = [0.0, 0.10, 0.25, 0.33, 0.50];

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

/// A set with a split placement that passes the checker.
fn split_set(rng: &mut Rng, m: u32) -> (TaskSet, Placement) {
    loop {
        let n = m as usize + 1 + (rng.next() % (m as u64 + 1)) as usize;
        let u = m as f64 * (0.75 + 0.2 * rng.unit());
        let w: Vec<f64> = (0..n).map(|_| 0.2 + rng.unit()).collect();
        let sum: f64 = w.iter().sum();
        let periods: Vec<u64> =
            (0..n).map(|_| ((10.0f64.ln() + rng.unit() * 10.0f64.ln()).exp() as u64).max(10) * MS).collect();
        let ct: Vec<(u64, u64)> = periods
            .iter()
            .zip(&w)
            .map(|(&t, wi)| ((((u * wi / sum) * t as f64) as u64).clamp(MS / 10, t), t))
            .collect();
        let Ok(ts) = TaskSet::from_ct(&ct) else { continue };
        let p = semi::cascade(&ts, m, &semi::SemiConfig::default());
        if !p.schedulable || semi::check(&ts, &p).is_err() {
            continue;
        }
        if p.check_runnable(&ts).is_ok() && p.tasks.iter().any(|t| t.parts > 1) {
            return (ts, p);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let prio: Option<i32> = args.get(2).and_then(|s| s.parse().ok());
    let sets: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(4);
    let all = rtsched_runtime::platform::allowed_cpus();
    let cpus = all[..all.len().min(2)].to_vec();
    let m = cpus.len() as u32;
    let mut rng = Rng(0x7ab1e1);
    let sets: Vec<_> = (0..sets).map(|_| split_set(&mut rng, m)).collect();
    println!("# SP-RES migrations vs average slack: m = {m}, {} split sets, {secs} s each, FIFO {prio:?}", sets.len());
    println!("slack\tthreads_migr\tthreads_per_s_core\tthreads_misses\tsim_migr\tsim_per_s_core");
    let (mut base_rt, mut base_sim) = (0.0, 0.0);
    for (k, &s) in SLACKS.iter().enumerate() {
        let lo = 1.0 - 2.0 * s;
        let (mut mig, mut misses, mut sim_mig, mut dur) = (0u64, 0u64, 0u64, 0u64);
        for (i, (ts, pl)) in sets.iter().enumerate() {
            let mech = Mechanism::named("spres").unwrap().with_reservations(pl.clone());
            let mut cfg = RunConfig::new(cpus.clone(), secs * 1000 * MS);
            cfg.rt_priority = prio;
            cfg.seed = (i * 10 + k) as u64;
            cfg.exec = ExecTime::Uniform { min_fraction: lo };
            let r = run(ts, &mech, &cfg).unwrap_or_else(|e| panic!("set {i}: {e}"));
            mig += r.metrics.migrations;
            misses += r.metrics.deadline_misses;
            dur += r.duration_ns;
            let sc = SpresConfig {
                placement: pl.clone(),
                soft_unsplit: false,
                cash: true,
                background: rtsched_sim::Background::EarliestEnd,
                suspension: rtsched_sim::Suspension::Keep,
            };
            let mut sim = SimConfig::new(m);
            sim.horizon = Some(r.duration_ns);
            sim.exec = ExecTimes::UniformFraction { lo, seed: cfg.seed };
            let out = simulate(ts, &Scheduler::Spres(sc), &sim).unwrap_or_else(|e| panic!("set {i}: {e}"));
            sim_mig += out.migrations;
        }
        let per = |x: u64| x as f64 / (dur as f64 / 1e9) / m as f64;
        if k == 0 {
            (base_rt, base_sim) = (per(mig), per(sim_mig));
        }
        println!(
            "{:.0}%\t{mig}\t{:.2} ({:.1}x)\t{misses}\t{sim_mig}\t{:.2} ({:.1}x)",
            s * 100.0,
            per(mig),
            base_rt / per(mig).max(1e-9),
            per(sim_mig),
            base_sim / per(sim_mig).max(1e-9)
        );
    }
}
