//! The cost of a mechanism's callbacks without the engine (docs/performance.md, "Hot path before
//! and after the restructure"): GSN-EDF and P-EDF driven by a fixed pseudo-random sequence of
//! releases and scheduler calls, single-threaded and with two threads on two CPUs contending
//! for GSN-EDF's global lock. Prints the mean ns per `schedule` and `release` call (the best
//! of five repetitions single-threaded, the median of five with two threads). Run:
//! `cargo run --release -p rtsched-runtime --example plugin_bench` (under `chrt -f 50` to keep
//! other load off the cores).
use rtsched_runtime::mechanism::gsn_edf::GsnEdf;
use rtsched_runtime::mechanism::partitioned::Pedf;
use rtsched_runtime::mechanism::{Ctx, Job, Plugin, Prev, TaskParams};
use rtsched_runtime::sync::CpuSignal;
use rtsched_runtime::tracer::TraceBuffer;
use std::sync::atomic::{AtomicU64, Ordering};

type Maker = fn(&[TaskParams], usize) -> Box<dyn Plugin>;

const MAKERS: [(&str, Maker); 2] = [
    ("gsn-edf", |p, m| Box::new(GsnEdf::new("gsn-edf", p, m, false, 0, u64::MAX / 2))),
    ("pedf", |p, _| Box::new(Pedf::new(p, &[(0..p.len()).collect(), vec![]], 0, u64::MAX / 2))),
];

/// One thread's share: `steps` steps of 50 ns of virtual time on CPU `c`; returns (schedule ns
/// per call, release ns per call).
fn drive(g: &dyn Plugin, c: usize, signals: &[CpuSignal], clock: &AtomicU64, steps: usize) -> (f64, f64) {
    let mut tb = TraceBuffer::new(c as u16, 1 << 16);
    let mut running: Option<Job> = None;
    let mut s: u64 = 12345 + c as u64;
    let (mut sch, mut sch_n, mut rel, mut rel_n) = (0u128, 0u64, 0u128, 0u64);
    for _ in 0..steps {
        if tb.is_full() {
            tb.clear();
        }
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let now = clock.fetch_add(50, Ordering::Relaxed);
        let due = g.next_release(0);
        if due <= now && g.try_claim_release(0, due) {
            let mut ctx = Ctx::new(c, &mut tb, signals);
            let t = std::time::Instant::now();
            g.release(&mut ctx, 0, now);
            rel += t.elapsed().as_nanos();
            rel_n += 1;
        }
        let prev = match running {
            Some(j) if (s >> 40).is_multiple_of(4) => Some(Prev::Completed(j)),
            Some(j) if signals[c].is_set() => Some(Prev::Preempted(j)),
            None => Some(Prev::Idle),
            _ => None,
        };
        if let Some(prev) = prev {
            let mut ctx = Ctx::new(c, &mut tb, signals);
            let t = std::time::Instant::now();
            running = g.schedule(&mut ctx, prev, now);
            sch += t.elapsed().as_nanos();
            sch_n += 1;
        }
    }
    (sch as f64 / sch_n.max(1) as f64, rel as f64 / rel_n.max(1) as f64)
}

fn main() {
    let params: Vec<TaskParams> = [10u64, 20, 15, 25, 8, 50, 12, 30]
        .iter()
        .map(|&t| TaskParams { deadline: t * 1000, period: t * 1000 })
        .collect();
    let m = 2;
    let cpus = rtsched_runtime::platform::allowed_cpus();
    for (name, mk) in MAKERS {
        let mut one = Vec::new();
        let mut two = Vec::new();
        for _ in 0..5 {
            let signals: Vec<CpuSignal> = (0..m).map(|_| CpuSignal::new()).collect();
            let g = mk(&params, m);
            one.push(drive(g.as_ref(), 0, &signals, &AtomicU64::new(0), 200_000));
            if name == "gsn-edf" && cpus.len() >= 2 {
                let g = mk(&params, m);
                let clock = AtomicU64::new(0);
                let per: Vec<(f64, f64)> = std::thread::scope(|s| {
                    let hs: Vec<_> = (0..2)
                        .map(|c| {
                            let (g, signals, clock, cpu) = (g.as_ref(), &signals, &clock, cpus[c]);
                            s.spawn(move || {
                                let _ = rtsched_runtime::platform::pin_to(cpu);
                                drive(g, c, signals, clock, 100_000)
                            })
                        })
                        .collect();
                    hs.into_iter().map(|h| h.join().unwrap_or((f64::NAN, f64::NAN))).collect()
                });
                two.push((per[0].0 + per[1].0) / 2.0);
            }
        }
        let best = one.iter().map(|x| x.0).fold(f64::MAX, f64::min);
        let best_rel = one.iter().map(|x| x.1).fold(f64::MAX, f64::min);
        print!("{name}: one thread: schedule {best:.1} ns/call, release {best_rel:.1} ns/call");
        if !two.is_empty() {
            two.sort_by(f64::total_cmp);
            print!("; two threads contending: schedule {:.1} ns/call", two[two.len() / 2]);
        }
        println!();
    }
}
