//! The plugin interface beyond releases and scheduling — quantum ticks (aligned and
//! staggered), plugin timers, a service thread on a dedicated CPU fed by notifications,
//! notifications to workers, and a mechanism's own overhead terms — exercised by a tiny
//! quantum-driven test plugin written against the public API (as a user would write one; it
//! is not registered), and checked on its trace. No timing assertions: every check is about
//! which records exist, on which thread, in which order, and their due times on the grid.

use rtsched_model::TaskSet;
use rtsched_policy::{GedfQuantum, Policy};
use rtsched_runtime::mechanism::registry::{
    self, Backend, DedicatedCpu, Entry, InvariantKind, ParamDecl, ParamKind, ParamSet, PlacementKind, Setup, TermSpec,
};
use rtsched_runtime::mechanism::{Accounting, Ctx, Effects, Job, Plugin, Prev, Ticks};
use rtsched_runtime::platform::allowed_cpus;
use rtsched_runtime::queue::release::TaskBook;
use rtsched_runtime::sync::SpinLock;
use rtsched_runtime::tracer::{RecKind, RELEASE_CPU};
use rtsched_runtime::{run, Mechanism, RunConfig, RunError, RunResult};
use std::sync::atomic::{AtomicU64, Ordering};

const MS: u64 = 1_000_000;
/// Term ids: indices into `TICKTOCK.terms`.
const REQUEST: u32 = 2;
const ACK: u32 = 3;

rtsched_runtime::mechanism_params! {
    /// The test plugin's parameters: `TICKTOCK.params` is derived from them.
    struct TickTockParams {
        quantum: u64 = ParamDecl { kind: ParamKind::Duration, default: "2ms", help: "the quantum Q" },
        staggered: bool = ParamDecl { kind: ParamKind::Bool, default: "false", help: "ticks staggered by c·Q/m" },
    }
}

static TICKTOCK: Entry = Entry {
    name: "ticktock",
    summary: "test only: quantum-driven G-EDF, releases and a completion mailbox on the service thread",
    params: TickTockParams::SPECS,
    placement: PlacementKind::None,
    parallel: false,
    dedicated: DedicatedCpu::Required,
    dedicated_role: "releases and the completion mailbox",
    terms: &[
        TermSpec { name: "tick", symbol: "Δtck", help: "quantum tick", tracking: false, count: false },
        TermSpec { name: "timer", symbol: "", help: "mid-quantum timer", tracking: false, count: false },
        TermSpec {
            name: "request",
            symbol: "Δreq",
            help: "completion message: written to served",
            tracking: false,
            count: false,
        },
        TermSpec {
            name: "ack",
            symbol: "",
            help: "acknowledgements received by workers",
            tracking: false,
            count: false,
        },
    ],
    invariant: InvariantKind::Unobservable("quantum-driven: links change only at ticks"),
    priority: registry::edf,
    user_jobs: true,
    suspends: false,
    backend: Backend::Engine(build),
};

struct State {
    book: TaskBook,
    policy: GedfQuantum,
    scheduled: Vec<Option<Job>>,
    mailbox: Vec<(u64, usize)>,
}

struct TickTock {
    m: usize,
    ticks: Ticks,
    state: SpinLock<State>,
    next_rel: AtomicU64,
    /// Per thread: its armed timer.
    timer: Vec<AtomicU64>,
}

fn build(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    let p = TickTockParams::from_params(s.params)?;
    let all: Vec<usize> = (0..s.tasks.len()).collect();
    let book = TaskBook::new(s.tasks, &all, s.rule.clone(), s.t0, s.end);
    let next = book.next_due();
    Ok(Box::new(TickTock {
        m: s.m,
        ticks: Ticks { quantum_ns: p.quantum, staggered: p.staggered },
        state: SpinLock::new(
            0,
            State { book, policy: GedfQuantum::new(s.m), scheduled: vec![None; s.m], mailbox: Vec::new() },
        ),
        next_rel: AtomicU64::new(next),
        timer: (0..=s.m).map(|_| AtomicU64::new(u64::MAX)).collect(),
    }))
}

impl Plugin for TickTock {
    fn name(&self) -> &'static str {
        "ticktock"
    }
    fn release_domains(&self) -> usize {
        1
    }
    fn release_domain(&self, thread: usize) -> Option<usize> {
        (thread == self.m).then_some(0)
    }
    fn next_release(&self, _: usize) -> u64 {
        self.next_rel.load(Ordering::Acquire)
    }
    fn release(&self, ctx: &mut Ctx<'_>, _: usize, now: u64) {
        let mut g = self.state.lock(ctx.trace());
        let st = &mut *g;
        let (book, policy) = (&mut st.book, &mut st.policy);
        // Quantum-driven: released jobs wait in the queue for the next tick.
        book.release_due(now, |j, ready| {
            ctx.record_release(&j);
            if ready {
                policy.job_ready(j.prio);
            }
        });
        self.next_rel.store(st.book.next_due(), Ordering::Release);
    }
    fn ticks(&self) -> Option<Ticks> {
        Some(self.ticks)
    }
    fn tick(&self, ctx: &mut Ctx<'_>, due: u64, _now: u64) {
        let c = ctx.cpu();
        let mut g = self.state.lock(ctx.trace());
        let st = &mut *g;
        st.policy.tick(if self.ticks.staggered { Some(c) } else { None });
        let mut dirty = Vec::new();
        st.policy.drain_dirty(&mut dirty);
        for d in dirty {
            let d = d as usize;
            if st.scheduled[d].map(|j| j.prio) != st.policy.linked(d) {
                ctx.preempt(d);
            }
        }
        // A timer in the middle of the quantum.
        self.timer[c].store(due + self.ticks.quantum_ns / 2, Ordering::Release);
    }
    fn uses_timers(&self) -> bool {
        true
    }
    fn next_timer(&self, thread: usize) -> u64 {
        self.timer[thread].load(Ordering::Acquire)
    }
    fn timer(&self, ctx: &mut Ctx<'_>, _now: u64) {
        self.timer[ctx.cpu()].store(u64::MAX, Ordering::Release);
    }
    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev, _now: u64) -> Option<Job> {
        let c = ctx.cpu();
        let mut g = self.state.lock(ctx.trace());
        let st = &mut *g;
        if let Prev::Completed(j) = prev {
            // Unlinked without a refill: the CPU idles until its next tick.
            st.policy.job_done(j.prio);
            if let Some(next) = st.book.complete(&j) {
                st.policy.job_ready(next.prio);
            }
            let stamp = ctx.stamp();
            st.mailbox.push((stamp, c));
            ctx.notify(self.m);
        }
        let next = st.policy.linked(c).map(|p| st.book.job_of(p));
        st.scheduled[c] = next;
        ctx.ack_resched();
        next
    }
    fn notified(&self, ctx: &mut Ctx<'_>, _now: u64) {
        if ctx.cpu() == self.m {
            let msgs = std::mem::take(&mut self.state.lock(ctx.trace()).mailbox);
            for (stamp, from) in msgs {
                ctx.term_since(REQUEST, stamp);
                ctx.notify(from);
            }
        } else {
            ctx.term_value(ACK, 1);
        }
    }
    fn accounting(&self) -> Accounting {
        let st = self.state.lock_untraced();
        Accounting {
            released: st.book.released().to_vec(),
            completed: st.book.completed().to_vec(),
            consistent: Ok(()),
        }
    }
}

/// The two tests take turns (they share the cores).
static RUNS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run_ticktock(staggered: bool) -> (RunResult, u64, usize) {
    let _serial = RUNS.lock().unwrap_or_else(|p| p.into_inner());
    let cpus = allowed_cpus();
    let (a, b) = (cpus[0], *cpus.last().unwrap());
    let ts = TaskSet::from_ct(&[(MS, 5 * MS), (2 * MS, 10 * MS), (MS, 4 * MS), (MS / 2, 3 * MS)]).unwrap();
    // Two workers and the service thread: with fewer than three cores the threads share one
    // (force); the structure checked here does not depend on it.
    let mut cfg = RunConfig::new(vec![a, b], 200 * MS);
    cfg.dedicated_cpu = Some(a);
    cfg.force = true;
    cfg.start_delay_ns = 30 * MS;
    let q = 2 * MS;
    let mech = Mechanism::from_entry(&TICKTOCK)
        .with_param("quantum", "2ms")
        .unwrap()
        .with_param("staggered", if staggered { "true" } else { "false" })
        .unwrap();
    let r = run(&ts, &mech, &cfg).unwrap();
    assert_eq!(r.accounting.error, None, "{:?}", r.accounting);
    r.check_trace().unwrap();
    (r, q, 2)
}

fn check(staggered: bool) {
    let (r, q, m) = run_ticktock(staggered);
    // Time zero as a monotonic instant: every first job is due then.
    let t0 =
        r.traces.iter().flatten().filter(|x| x.kind == RecKind::JobRelease && x.job == 0).map(|x| x.arg).min().unwrap();
    let mut total = std::collections::BTreeMap::<&str, usize>::new();
    // Every tick: (worker, time its handler ended).
    let ticks: Vec<(usize, u64)> = r
        .traces
        .iter()
        .enumerate()
        .flat_map(|(b, recs)| recs.iter().filter(|x| x.kind == RecKind::TickEnd).map(move |x| (b, x.ts)))
        .collect();
    for (b, recs) in r.traces.iter().enumerate() {
        let service = recs.first().is_some_and(|x| x.cpu == RELEASE_CPU);
        let drain = recs.first().is_some_and(|x| x.cpu == RELEASE_CPU - 1);
        if drain {
            continue;
        }
        let mut tick_dues = Vec::new();
        let mut last_dispatch = 0u64;
        for x in recs {
            match x.kind {
                RecKind::JobRelease => assert!(service, "buffer {b}: a release outside the service thread"),
                RecKind::TickStart => {
                    assert!(!service, "the service thread ticks");
                    let due = x.arg - t0;
                    let offset = if staggered { q * b as u64 / m as u64 } else { 0 };
                    assert_eq!(due % q, offset, "worker {b}: tick due at {due} is off its grid");
                    assert!(tick_dues.last().is_none_or(|&l| l < due), "worker {b}: tick dues not increasing");
                    tick_dues.push(due);
                }
                RecKind::JobStart | RecKind::JobResume => {
                    // Quantum-driven: jobs are linked only at ticks — with staggered quanta
                    // only by this worker's own tick, with aligned quanta by any worker's
                    // (each tick applies the global rule to every CPU).
                    let caused =
                        ticks.iter().any(|&(w, t)| (!staggered || w == b) && (last_dispatch..=x.ts).contains(&t));
                    assert!(caused, "worker {b}: a dispatch at {} with no tick since the last one", x.ts);
                    last_dispatch = x.ts;
                }
                RecKind::TimerStart => {
                    let due = x.arg - t0;
                    assert!(tick_dues.contains(&(due - q / 2)), "worker {b}: a timer not armed by a tick: {due}");
                    *total.entry("timer").or_default() += 1;
                }
                RecKind::TermSince => {
                    assert!(service && x.task == REQUEST, "buffer {b}: a request served off the service thread");
                    *total.entry("request").or_default() += 1;
                }
                RecKind::TermValue => {
                    assert!(!service && x.task == ACK, "buffer {b}: an ack off the workers");
                    *total.entry("ack").or_default() += 1;
                }
                RecKind::JobComplete => *total.entry("complete").or_default() += 1,
                RecKind::TickEnd => *total.entry("tick").or_default() += 1,
                _ => {}
            }
        }
        if !service {
            assert!(!tick_dues.is_empty(), "worker {b} never ticked");
        }
    }
    let n = |k| total.get(k).copied().unwrap_or(0);
    assert!(n("tick") > 0 && n("timer") > 0 && n("complete") > 0, "{total:?}");
    assert!(n("request") >= 1 && n("request") <= n("complete"), "{total:?}");
    assert!(n("ack") <= n("request"), "{total:?}");
    // The mechanism's own terms reach the summary under their registry names (every sample:
    // the ones the interference filter kept and those it discarded).
    let s = r.summary_json();
    for (term, k) in [("tick", "tick"), ("timer", "timer"), ("request", "request"), ("ack", "ack")] {
        let taken = s["overheads"][term]["count"].as_u64().zip(s["overheads"][term]["discarded"].as_u64());
        assert_eq!(taken.map(|(c, d)| c + d), Some(n(k) as u64), "{term}");
    }
}

#[test]
fn aligned_ticks_timers_service_thread_and_notifications() {
    check(false);
}

#[test]
fn staggered_ticks_timers_service_thread_and_notifications() {
    check(true);
}
