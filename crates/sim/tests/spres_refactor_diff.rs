//! TEMPORARY: the SP-RES loop over rtsched_policy::spres against the old loop, trace by trace.
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::semi;
use rtsched_model::{Task, TaskSet, Time};
use rtsched_sim::{simulate, Arrivals, ExecTimes, Scheduler, SimConfig, SpresConfig, SpresPlacement};

const PERIODS: [Time; 15] = [20, 30, 40, 50, 60, 80, 100, 120, 150, 200, 240, 300, 400, 600, 1200];

fn gen(rng: &mut ChaCha8Rng, n: usize, u: f64, constrained: bool) -> TaskSet {
    let mut us = Vec::with_capacity(n);
    let mut sum = u;
    for i in 1..n {
        let next = sum * rng.random::<f64>().powf(1.0 / (n - i) as f64);
        us.push(sum - next);
        sum = next;
    }
    us.push(sum);
    let tasks = us
        .iter()
        .map(|&ui| {
            let t = PERIODS[rng.random_range(0..PERIODS.len())];
            let c = ((ui * t as f64).round() as Time).clamp(1, t);
            let d = if constrained && rng.random_bool(0.6) { rng.random_range(c..=t) } else { t };
            Task::new(c, d, t).unwrap()
        })
        .collect();
    TaskSet::new(tasks).unwrap()
}

#[test]
fn new_loop_equals_old_loop() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let heuristics = semi::Heuristic::all();
    let cfgp = semi::SemiConfig { rp_floor: 2, ..semi::SemiConfig::default() };
    let mut compared = 0;
    let mut with_split = 0;
    for k in 0..4000u64 {
        let m = rng.random_range(if k % 4 == 0 { 1 } else { 2 }..=4u32);
        let n = rng.random_range(1..=3 * m as usize + 2);
        // Mostly near-full loads, where placements split tasks.
        let u = if k % 4 == 0 { rng.random_range(0.3..1.15) } else { rng.random_range(0.9..1.0) } * m as f64;
        let constrained = rng.random_bool(0.3);
        let ts = gen(&mut rng, n, u, constrained);
        let h = &heuristics[(k as usize) % heuristics.len()];
        let p = if k % 3 != 2 { semi::cascade(&ts, m, &cfgp) } else { semi::place(&ts, m, h, &cfgp) };
        if !p.schedulable {
            continue;
        }
        let pl = SpresPlacement::from_json(&p.to_json().to_string(), &ts).unwrap();
        if pl.parts.iter().any(|x| x.len() > 1) {
            with_split += 1;
        }
        for (soft, cash) in [(false, false), (false, true), (true, true), (true, false)] {
            let sc = SpresConfig { placement: pl.clone(), soft_unsplit: soft, cash };
            let sched = Scheduler::Spres(sc.clone());
            let mut cfg = SimConfig::new(m);
            cfg.record_trace = true;
            cfg.horizon = Some(2400);
            if k % 2 == 0 {
                cfg.exec = ExecTimes::UniformFraction { lo: rng.random_range(0.0..1.0), seed: k };
            }
            if k % 5 == 0 {
                cfg.arrivals = Arrivals::Sporadic { max_extra_delay: 4, seed: k };
            }
            let a = simulate(&ts, &sched, &cfg).unwrap();
            let b = rtsched_sim::spres_old::simulate_spres_old(&ts, &sched, &sc, &cfg).unwrap();
            assert_eq!(a.trace, b.trace, "case {k} soft {soft} cash {cash}");
            assert_eq!(a.to_json(), b.to_json());
            compared += 1;
        }
    }
    eprintln!("compared {compared}, placements with a split {with_split}");
    assert!(with_split > 250);
}
