//! G-EDF schedulability tests: time per task set, m = 8, n in {10, 20, 40, 80}, implicit
//! deadlines, periods uniform in [10, 100] ms (integer ns), total utilization uniform in
//! [0.5 m, 0.7 m] split by UUniFast-Discard. Prints a table against SchedCAT's figures
//! (µs per task set, C++/GMP) before the criterion groups run.
//!
//!     cargo bench -p rtsched-analysis --bench global
//!     cargo bench -p rtsched-analysis --bench global -- --table-only   # just the table

use std::time::Instant;

use criterion::{black_box, BenchmarkId, Criterion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rtsched_analysis::global::{self, GlobalTest};
use rtsched_analysis::{Limits, Verdict};
use rtsched_model::TaskSet;

const M: u32 = 8;
const NS: [usize; 4] = [10, 20, 40, 80];
const SETS: usize = 400;

/// UUniFast-Discard (Bini and Buttazzo 2005; Davis and Burns 2009): n utilizations summing
/// to `u`, each at most 1.
fn uunifast_discard(rng: &mut ChaCha8Rng, n: usize, u: f64) -> Vec<f64> {
    loop {
        let mut out = Vec::with_capacity(n);
        let mut sum = u;
        for i in 1..n {
            let next = sum * rng.random::<f64>().powf(1.0 / (n - i) as f64);
            out.push(sum - next);
            sum = next;
        }
        out.push(sum);
        if out.iter().all(|&x| x <= 1.0) {
            return out;
        }
    }
}

fn gen_sets(n: usize, count: usize, seed: u64) -> Vec<TaskSet> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let u = rng.random_range(0.5 * M as f64..=0.7 * M as f64);
            let us = uunifast_discard(&mut rng, n, u);
            let ct: Vec<(u64, u64)> = us
                .iter()
                .map(|&ui| {
                    let t = rng.random_range(10_000_000u64..=100_000_000);
                    // WCET rounded down to ns (at least 1): utilizations never exceed the sample.
                    let c = ((ui * t as f64).floor() as u64).clamp(1, t);
                    (c, t)
                })
                .collect();
            TaskSet::from_ct(&ct).unwrap()
        })
        .collect()
}

/// SchedCAT reference, µs per task set at n = 10 / 40 / 80 (from the task brief).
fn reference(name: &str) -> [f64; 3] {
    match name {
        "gfb" => [5.9, 24.0, 52.0],
        "bak" => [11.0, 82.0, 166.0],
        "bcl" => [13.0, 37.0, 82.0],
        "bcl_iterative" => [14.0, 186.0, 719.0],
        "rta" => [14_000.0, 8_700.0, 21_900.0],
        "bar" => [87.0, 2_150.0, 11_000.0],
        "gedf" => [14_000.0, 5_800.0, 4_500.0],
        _ => [f64::NAN; 3],
    }
}

/// CPU time of this thread in seconds (utime + stime from /proc, 10 ms ticks): the machine
/// this was written on is shared, so wall time overstates the cost; over >= 0.5 s of CPU the
/// tick granularity adds at most 2 %. Falls back to `None` where /proc is unavailable.
fn thread_cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ut: f64 = f.get(11)?.parse().ok()?;
    let st: f64 = f.get(12)?.parse().ok()?;
    Some((ut + st) / 100.0)
}

fn time_per_set(sets: &[TaskSet], f: &dyn Fn(&TaskSet) -> Verdict) -> (f64, [usize; 3]) {
    let mut counts = [0usize; 3];
    for ts in sets {
        counts[match f(ts) {
            Verdict::Schedulable => 0,
            Verdict::NotSchedulable => 1,
            Verdict::GaveUp => 2,
        }] += 1;
    }
    // Repeat until at least 0.5 s of thread CPU time (or wall time without /proc).
    let mut reps = 0u32;
    let start = Instant::now();
    let cpu0 = thread_cpu_s();
    let spent = || match (cpu0, thread_cpu_s()) {
        (Some(a), Some(b)) => b - a,
        _ => start.elapsed().as_secs_f64(),
    };
    while spent() < 0.5 || reps < 2 {
        for ts in sets {
            black_box(f(black_box(ts)));
        }
        reps += 1;
    }
    (spent() * 1e6 / (reps as f64 * sets.len() as f64), counts)
}

fn print_table(limits: &Limits) {
    println!("\nG-EDF tests, m = {M}, {SETS} sets per n, µs of thread CPU time per task set (single thread)");
    println!("{:<14} {:>4} {:>10} {:>10} {:>9}   sched/not/gaveup", "test", "n", "ours_us", "schedcat", "speedup");
    let mut names: Vec<(&str, Option<GlobalTest>)> = GlobalTest::ALL.iter().map(|&t| (t.name(), Some(t))).collect();
    names.push(("gedf", None));
    // Optional filters for profiling: GEDF_BENCH_N=80 GEDF_BENCH_TESTS=rta,bar
    let only_n: Option<usize> = std::env::var("GEDF_BENCH_N").ok().and_then(|s| s.parse().ok());
    let only_t: Option<String> = std::env::var("GEDF_BENCH_TESTS").ok();
    for n in NS {
        if only_n.is_some_and(|x| x != n) {
            continue;
        }
        let sets = gen_sets(n, SETS, 1000 + n as u64);
        for &(name, t) in &names {
            if only_t.as_ref().is_some_and(|o| !o.split(',').any(|x| x == name)) {
                continue;
            }
            let f: Box<dyn Fn(&TaskSet) -> Verdict> = match t {
                Some(t) => Box::new(move |ts| global::test(t, ts, M, limits)),
                None => Box::new(move |ts| global::combined(ts, M, limits)),
            };
            let (us, c) = time_per_set(&sets, &*f);
            let r = match n {
                10 => Some(reference(name)[0]),
                40 => Some(reference(name)[1]),
                80 => Some(reference(name)[2]),
                _ => None,
            };
            let (rs, sp) = match r {
                Some(r) if r.is_finite() => (format!("{r:.1}"), format!("{:.0}x", r / us)),
                _ => ("-".into(), "-".into()),
            };
            println!("{name:<14} {n:>4} {us:>10.3} {rs:>10} {sp:>9}   {}/{}/{}", c[0], c[1], c[2]);
        }
    }
}

fn main() {
    let limits = Limits::default();
    let args: Vec<String> = std::env::args().collect();
    print_table(&limits);
    if args.iter().any(|a| a == "--table-only") {
        return;
    }
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1))
        .configure_from_args();
    for n in NS {
        let sets = gen_sets(n, 100, 1000 + n as u64);
        let mut g = c.benchmark_group(format!("gedf_m8_n{n}_100sets"));
        for t in GlobalTest::ALL {
            g.bench_with_input(BenchmarkId::new(t.name(), n), &sets, |b, sets| {
                b.iter(|| sets.iter().map(|ts| global::test(t, ts, M, &limits) as u8 as u32).sum::<u32>())
            });
        }
        g.bench_with_input(BenchmarkId::new("gedf", n), &sets, |b, sets| {
            b.iter(|| sets.iter().map(|ts| global::combined(ts, M, &limits) as u8 as u32).sum::<u32>())
        });
        g.finish();
    }
    c.final_summary();
}
