//! The loop of the *selection* schedulers, LLF and PD²: at each decision instant the policy
//! selects, from every ready job, the ones that run ([`rtsched_policy::llf`],
//! [`rtsched_policy::pfair`]); between decisions the running set is fixed. Their priorities
//! change with time (a waiting job's laxity falls; a job's PD² priority is that of its current
//! quantum), so they do not fit the link-based engine, whose priorities are fixed per job.
//!
//! * **LLF** decides at every release, every completion and every quantum boundary `k·Q`.
//! * **PD²** decides only at slot boundaries `k·Q`: a job runs for one whole slot (or until it
//!   completes, the CPU then idling to the slot's end), and a task whose current subtask's
//!   window has not opened waits (Pfair). It takes tasks with WCET and period whole multiples
//!   of `Q`, `D = T`, periodic arrivals and offsets in whole quanta (refused otherwise, naming
//!   the task and field).
//!
//! Placement on CPUs (both): a job that keeps running keeps its CPU; a job that starts takes
//! the CPU it last ran on if free, else the lowest-indexed free CPU (jobs placed in priority
//! order). Jobs of a task run in release order, as in every loop of the simulator.
//!
//! With `check_invariants`, every decision is checked against the policy's invariant
//! ([`rtsched_policy::llf::check`], [`rtsched_policy::pfair::check`]); under PD² with
//! WCET execution and `Σ C/T ≤ m`, every task's lag is also checked to lie in `(−1, 1)` at
//! every slot boundary (Anderson & Srinivasan's Pfair condition). A failed check is an
//! internal error (a bug).

use crate::config::{Arrivals, ExecTimes, Scheduler, SimConfig};
use crate::error::SimError;
use crate::recorder::{Recorder, NONE};
use crate::result::SimResult;
use crate::setup::{setup, Draw, EarlyEnd, Setup};
use rtsched_model::time::format_duration;
use rtsched_model::{ModelError, TaskSet, Time, MAX_TIME};
use rtsched_policy::llf::{self, LlfJob};
use rtsched_policy::pfair::{self, Pd2Key, Weight};
use rtsched_trace::{Event, JobId};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

struct Job {
    seq: u32,
    deadline: Time,
    /// Execution time drawn at release.
    exec: Time,
    /// Executed so far.
    done: Time,
}

/// PD²'s per-task view, in quanta.
struct Pfair {
    w: Vec<Weight>,
    /// First release, slots.
    off: Vec<u64>,
    /// Check lags (WCET execution and `Σ e/p ≤ m`).
    lag: bool,
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Whether `Σ e_i/p_i ≤ m`, exactly; `None` if the sum's denominator outgrows `u128`.
fn total_weight_at_most(w: &[Weight], m: u32) -> Option<bool> {
    let (mut num, mut den) = (0u128, 1u128);
    for x in w {
        let (e, p) = (x.e() as u128, x.p() as u128);
        let n = num.checked_mul(p)?.checked_add(e.checked_mul(den)?)?;
        let d = den.checked_mul(p)?;
        let g = gcd(n, d).max(1);
        (num, den) = (n / g, d / g);
    }
    Some(num <= u128::from(m).checked_mul(den)?)
}

/// PD²'s conditions on the task set, each refusal naming the task and field.
fn pfair_view(ts: &TaskSet, q: Time, offsets: &[Time], cfg: &SimConfig) -> Result<Pfair, ModelError> {
    if !matches!(cfg.arrivals, Arrivals::Periodic { .. }) {
        return Err(ModelError::field(
            "arrivals",
            "pd2 needs periodic arrivals: Pfair windows are fixed slots after each task's first release",
        ));
    }
    let qs = format_duration(q);
    let mut w = Vec::with_capacity(ts.len());
    let mut off = Vec::with_capacity(ts.len());
    for (i, t) in ts.iter().enumerate() {
        let whole = |field: &str, v: Time| {
            pfair::quanta(v, q).ok_or_else(|| {
                ModelError::task_field(
                    i,
                    field,
                    format!("pd2 needs whole quanta: {} is not a multiple of the quantum {qs}", format_duration(v)),
                )
            })
        };
        let e = whole("wcet", t.wcet)?;
        let p = whole("period", t.period)?;
        if t.deadline != t.period {
            return Err(ModelError::task_field(
                i,
                "deadline",
                format!(
                    "pd2 schedules implicit deadlines (Pfair windows end at the period): D = {} but T = {}",
                    format_duration(t.deadline),
                    format_duration(t.period)
                ),
            ));
        }
        w.push(Weight::new(e, p).ok_or_else(|| {
            ModelError::task_field(i, "wcet", format!("pd2 needs C ≤ T (weight at most 1), got {e}/{p} quanta"))
        })?);
        off.push(whole("offset", offsets[i])?);
    }
    let lag = matches!(cfg.exec, ExecTimes::Wcet) && total_weight_at_most(&w, cfg.m) == Some(true);
    Ok(Pfair { w, off, lag })
}

/// Simulates LLF or PD² (same configuration, records and metrics as [`crate::simulate`]).
#[allow(clippy::needless_range_loop)] // per-task and per-CPU state arrays
pub(crate) fn simulate_selection(ts: &TaskSet, sched: &Scheduler, cfg: &SimConfig) -> Result<SimResult, SimError> {
    let (q, pd2) = match sched {
        Scheduler::Llf { quantum } => (*quantum, false),
        Scheduler::Pd2 { quantum } => (*quantum, true),
        other => return Err(SimError::internal(format!("the selection loop was asked to run {}", other.name()))),
    };
    if q == 0 || q > MAX_TIME {
        return Err(ModelError::field("quantum", format!("must be in 1..={MAX_TIME} ns, got {q}")).into());
    }
    let Setup { offsets, horizon: mut h, capped, expected } = setup(ts, cfg)?;
    // Quantum ticks are work without jobs: bounded before the run (as the engine's quanta).
    let ticks = (h / q) as u128 + 1;
    if ticks > cfg.max_events as u128 {
        return Err(ModelError::field(
            "quantum",
            format!(
                "a quantum of {} over a horizon of {} is {ticks} scheduling instants, above the bound of max_events = {}; use a larger quantum or a shorter horizon",
                format_duration(q),
                format_duration(h),
                cfg.max_events
            ),
        )
        .into());
    }
    let pf = if pd2 { Some(pfair_view(ts, q, &offsets, cfg)?) } else { None };
    let (m, n) = (cfg.m as usize, ts.len());
    let who = if pd2 { "the PD2 loop" } else { "the LLF loop" };
    let mut rec = Recorder::new(n, cfg.m, h, cfg.record_trace, expected as usize, who).keep_jobs(cfg.keep_jobs);
    let mut draw = Draw::new(cfg);
    let mut early = EarlyEnd::new();
    let mut backlog: Vec<VecDeque<Job>> = (0..n).map(|_| VecDeque::new()).collect();
    let mut releases: BinaryHeap<Reverse<u128>> =
        (0..n).map(|i| Reverse((offsets[i] as u128) << 32 | i as u128)).collect();
    let mut deadlines: BinaryHeap<Reverse<(Time, u32, u32)>> = BinaryHeap::new();
    let mut next_seq = vec![0u32; n];
    let mut completed = vec![0u32; n];
    let mut last_cpu = vec![NONE; n];
    let mut on_cpu = vec![NONE; n];
    // Execution received per task since its first release (PD²'s lag).
    let mut received = vec![0 as Time; n];
    let mut sched_on: Vec<Option<u32>> = vec![None; m];
    let mut next_tick: Time = 0;
    let mut events = 0u64;
    let mut now: Time = 0;
    let mut llf_ready: Vec<LlfJob> = Vec::with_capacity(n);
    let mut pd2_ready: Vec<Pd2Key> = Vec::with_capacity(n);
    let mut chosen: Vec<u32> = Vec::with_capacity(m);
    let mut starts: Vec<(u32, u32)> = Vec::with_capacity(m);
    loop {
        // The next instant: a release before the horizon, a completion, a quantum boundary,
        // or a deadline to record (trace only).
        let mut t = Time::MAX;
        if let Some(&Reverse(packed)) = releases.peek() {
            let r = (packed >> 32) as Time;
            if r < h {
                t = r;
            }
        }
        for c in 0..m {
            if let Some(i) = sched_on[c] {
                let f = backlog[i as usize].front().ok_or_else(|| SimError::internal("a running job vanished"))?;
                t = t.min(now + (f.exec - f.done));
            }
        }
        if next_tick < h {
            t = t.min(next_tick);
        }
        if let Some(&Reverse((d, _, _))) = deadlines.peek() {
            t = t.min(d);
        }
        if t > h {
            break;
        }
        if early.check(cfg, t, h, events, &mut rec)? {
            h = t; // end at t (Ctrl-C or a work bound): only completions are processed there
        }
        // Advance to t: the running jobs progress.
        for c in 0..m {
            if let Some(i) = sched_on[c] {
                if let Some(f) = backlog[i as usize].front_mut() {
                    f.done += t - now;
                }
                received[i as usize] += t - now;
            }
        }
        now = t;
        let mut event = false;
        // 1. Completions.
        for c in 0..m {
            let Some(i) = sched_on[c] else { continue };
            let iu = i as usize;
            if backlog[iu].front().is_some_and(|f| f.done == f.exec) {
                let f = backlog[iu].pop_front().ok_or_else(|| SimError::internal("a running job vanished"))?;
                rec.emit(t, Event::Complete { cpu: c as u32, job: JobId { task: i, job: f.seq } })?;
                events += 1;
                event = true;
                completed[iu] += 1;
                sched_on[c] = None;
                on_cpu[iu] = NONE;
                last_cpu[iu] = NONE;
            }
        }
        // 2. Deadlines passed without completion (trace only).
        while let Some(&Reverse((d, i, seq))) = deadlines.peek() {
            if d > t {
                break;
            }
            deadlines.pop();
            if seq >= completed[i as usize] {
                rec.emit(t, Event::DeadlineMiss { job: JobId { task: i, job: seq } })?;
            }
        }
        // 3. Releases (only before the horizon).
        while let Some(&Reverse(packed)) = releases.peek().filter(|_| t < h) {
            let (r, i) = ((packed >> 32) as Time, packed as u32 as usize);
            if r != t {
                break;
            }
            releases.pop();
            events += 1;
            event = true;
            let task = &ts[i];
            let seq = next_seq[i];
            next_seq[i] = seq
                .checked_add(1)
                .ok_or_else(|| ModelError::task_field(i, "period", "more than 2^32 jobs of one task"))?;
            let deadline = t + task.deadline;
            let exec = draw.exec(&cfg.exec, i, task.wcet);
            let gap = draw.gap(&cfg.arrivals, task.period);
            releases.push(Reverse(((t + gap) as u128) << 32 | i as u128));
            if rec.tracing() && deadline <= h {
                deadlines.push(Reverse((deadline, i as u32, seq)));
            }
            rec.emit(t, Event::Release { job: JobId { task: i as u32, job: seq }, deadline })?;
            backlog[i].push_back(Job { seq, deadline, exec, done: 0 });
        }
        // 4. Quantum boundary.
        let ticked = t == next_tick && t < h;
        if ticked {
            events += 1;
            next_tick = next_tick.saturating_add(q);
        }
        // 5. The decision: LLF at every event and boundary, PD² at slot boundaries.
        let decide = if pd2 { ticked } else { ticked || event };
        if decide {
            chosen.clear();
            if let Some(pf) = &pf {
                let slot = t / q;
                pd2_ready.clear();
                for i in 0..n {
                    let Some(f) = backlog[i].front() else { continue };
                    let w = pf.w[i];
                    // Job `seq`'s current quantum is subtask seq·e + done/Q + 1.
                    let sub = u64::from(f.seq) * w.e() + f.done / q + 1;
                    if pf.off[i].saturating_add(w.release(sub)) <= slot {
                        pd2_ready.push(w.key(i as u32, sub, pf.off[i]));
                    }
                }
                let k = pfair::select(m, &mut pd2_ready);
                chosen.extend(pd2_ready[..k].iter().map(|x| x.task));
            } else {
                llf_ready.clear();
                for i in 0..n {
                    if let Some(f) = backlog[i].front() {
                        let left = ts[i].wcet.saturating_sub(f.done);
                        llf_ready.push(LlfJob { task: i as u32, job: f.seq, deadline: f.deadline, left });
                    }
                }
                let k = llf::select(m, t, &mut llf_ready);
                chosen.extend(llf_ready[..k].iter().map(|x| x.task));
            }
            // Dispatch: stop what is not chosen, then place what starts.
            for c in 0..m {
                let Some(i) = sched_on[c] else { continue };
                if !chosen.contains(&i) {
                    let seq = backlog[i as usize].front().map_or(0, |f| f.seq);
                    rec.preempt(t, c as u32, JobId { task: i, job: seq })?;
                    sched_on[c] = None;
                    on_cpu[i as usize] = NONE;
                    last_cpu[i as usize] = c as u32;
                }
            }
            starts.clear();
            // First the jobs whose last CPU is free, then the rest on the lowest free CPUs.
            for &i in &chosen {
                let (iu, lc) = (i as usize, last_cpu[i as usize]);
                if on_cpu[iu] == NONE && lc != NONE && sched_on[lc as usize].is_none() {
                    sched_on[lc as usize] = Some(i);
                    on_cpu[iu] = lc;
                    starts.push((lc, i));
                }
            }
            let mut free = 0usize;
            for &i in &chosen {
                let iu = i as usize;
                if on_cpu[iu] != NONE {
                    continue;
                }
                while sched_on[free].is_some() {
                    free += 1;
                }
                sched_on[free] = Some(i);
                on_cpu[iu] = free as u32;
                starts.push((free as u32, i));
            }
            starts.sort_unstable();
            for &(c, i) in &starts {
                let seq = backlog[i as usize].front().map_or(0, |f| f.seq);
                rec.run(t, c, JobId { task: i, job: seq }, last_cpu[i as usize])?;
                last_cpu[i as usize] = c;
            }
        }
        for c in 0..m {
            if sched_on[c].is_none() {
                rec.idle(t, c as u32)?;
            }
        }
        // 6. The policy's invariant, from this loop's own view of the ready jobs.
        if cfg.check_invariants && decide {
            check(t, q, ts, &backlog, &sched_on, &received, pf.as_ref())
                .map_err(|what| SimError::internal(format!("invariant violated at {t} ns: {what}")))?;
        }
    }
    let pending: u64 = backlog.iter().map(|b| b.len() as u64).sum();
    let (metrics, trace) = rec.finish(ts, cfg.m, h);
    if metrics.pending != pending {
        return Err(SimError::internal(format!("{who}: pending {pending}, metrics {}", metrics.pending)));
    }
    Ok(SimResult::from_metrics(sched, metrics, early.message(capped), events, trace))
}

/// The invariant at a decision instant `t`, rebuilt from the backlog (not from the selection).
fn check(
    t: Time,
    q: Time,
    ts: &TaskSet,
    backlog: &[VecDeque<Job>],
    sched_on: &[Option<u32>],
    received: &[Time],
    pf: Option<&Pfair>,
) -> Result<(), String> {
    let Some(pf) = pf else {
        let ready: Vec<LlfJob> = (0..backlog.len())
            .filter_map(|i| {
                let f = backlog[i].front()?;
                Some(LlfJob {
                    task: i as u32,
                    job: f.seq,
                    deadline: f.deadline,
                    left: ts[i].wcet.saturating_sub(f.done),
                })
            })
            .collect();
        let running: Vec<Option<(u32, u32)>> =
            sched_on.iter().map(|s| s.and_then(|i| Some((i, backlog[i as usize].front()?.seq)))).collect();
        return llf::check(t, &ready, &running).map_err(|v| v.to_string());
    };
    let slot = t / q;
    let mut eligible = Vec::new();
    for (i, b) in backlog.iter().enumerate() {
        let Some(f) = b.front() else { continue };
        if !f.done.is_multiple_of(q) {
            return Err(format!("job {i}.{} has run {} ns, not whole quanta, at a slot boundary", f.seq, f.done));
        }
        let sub = u64::from(f.seq) * pf.w[i].e() + f.done / q + 1;
        if pf.off[i] + pf.w[i].release(sub) <= slot {
            eligible.push(pf.w[i].key(i as u32, sub, pf.off[i]));
        }
    }
    pfair::check(slot, &eligible, sched_on).map_err(|v| v.to_string())?;
    if pf.lag {
        for (i, w) in pf.w.iter().enumerate() {
            if pf.off[i] > slot {
                continue;
            }
            let got = received[i] / q;
            if !received[i].is_multiple_of(q) || !w.lag_within_one(slot - pf.off[i], got) {
                return Err(format!(
                    "task {i}'s lag at slot {slot} is {}/{} quanta, outside (−1, 1) ({} ns received)",
                    w.lag_scaled(slot - pf.off[i], got),
                    w.p(),
                    received[i]
                ));
            }
        }
    }
    Ok(())
}
