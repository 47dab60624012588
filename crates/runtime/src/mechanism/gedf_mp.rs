//! G-EDF-MP: global EDF by message passing with a dedicated scheduling processor (DSP) —
//! Cerqueira, Vanga & Brandenburg, "Scaling Global Scheduling with Message Passing", RTAS 2014,
//! §III (design §III-A, data structures §III-B, operations §III-C), overhead terms §IV-A,
//! accounting App. B.
//!
//! **Roles.** The service thread on the dedicated CPU (thread index `m`) is the DSP: it owns
//! all scheduler state — the release queue and job book (`TaskBook`), the ready queue (a
//! binomial heap, §III-B footnote 3) inside the policy `rtsched_policy::Gedf`, whose links
//! are the DSP's copy of every client's state — taken only by the DSP (a lock that is never
//! contended: nothing else touches it while the threads run; the end-of-run drain and the
//! accounting take it after they stopped). It runs no job. The `m` workers are the clients.
//!
//! **Client state** (`mechanism::dispatch::pairs`): per client a linked/scheduled pair under a spin lock
//! shared only by that client and the DSP, never nested; only the client writes `scheduled`,
//! checking `linked` and updating `scheduled` in one critical section.
//!
//! **Messages** (`queue::mailbox`): client → DSP through wait-free multi-producer FIFOs, by
//! default one per cluster of client CPUs sharing a last-level cache (`mailboxes=llc`,
//! `platform::topology`; the paper has one per socket), or `mailboxes=N` (client `c` of `m`
//! writes mailbox `⌊c·N/m⌋`), each message {operation, sender, job, stamp}, followed by a
//! notification of the DSP; the DSP serves the mailboxes round-robin, one message per mailbox
//! per round. The clients hold the mailboxes' shared sides; the mailboxes' readers are part of
//! the DSP's state (under its lock), so nothing but the DSP can take a message. DSP → client:
//! the link under the client's lock, plus a reschedule request.
//!
//! **Operations** (§III-C), all six: the DSP's side is the state machine [`protocol::DspCore`]
//! (its module docs work through the races), the clients' side the pairs.
//! 1. *release or resumption* — the DSP's release domain (its "timer interrupt"): jobs join
//!    the policy, which links them to an idle client or preempts the lowest-priority one; the
//!    changed links are published with link swaps (`mechanism::dispatch::pairs::Publisher`).
//!    A resumption ([`GedfMp::resume`]) is a message {resume, job} from a client (the job's
//!    `asleep` flag cleared first), or, on the DSP itself (an external event), handled at once.
//! 2. *rescheduling signal* — the client's `schedule`: takes `linked` as `scheduled` (never a
//!    job already completed or asleep) and acknowledges the request under its lock.
//! 3. *suspension* ([`GedfMp::suspend`]) — the client marks the job asleep, invalidates
//!    `linked` (if still that job), takes what is linked now, and sends {suspend, itself, job}.
//! 4. *DSP handling of a suspension* — the job is discarded where it is (linked to the sender,
//!    queued after a preemption that raced with the suspension, or linked elsewhere) and the
//!    freed client refilled.
//! 5. *completion* — the client invalidates `linked` (if still that job), records the
//!    completion in the task's counter, and sends {complete, itself, job}.
//! 6. *DSP handling of a completion* — if the job is still linked to the sender it is
//!    unlinked, otherwise it is removed where it is (re-queued after a preemption the client
//!    had not noticed, or even linked elsewhere: the races of §III-C); its task's next job
//!    joins the ready queue at once if already released (a tardy job), or waits for its
//!    release; then the highest-priority ready jobs are linked.
//!
//! Link swaps whenever the DSP links a still-scheduled job: `mechanism::dispatch::pairs` (module docs).
//!
//! The DSP waits for its next event as `dsp` says: `spin` — it never sleeps, spinning on the
//! clock and its request word (no timer or futex wake-up on a release or a message; bounded by
//! the run's end and the watchdog; under SCHED_FIFO it needs RT throttling lifted, `--isolate`,
//! or the kernel stops it for the throttled part of each second — stalls of ~30–45 ms once a
//! second were measured here); `window` (the default) — it sleeps on its request word until
//! `spin_window` (500 µs) before each release and spins from there; `sleep` — on a timer and
//! its request word. An idle client waits as the run's idle mode says (`RunConfig::idle`,
//! `--idle`): asleep on its futex, woken by the DSP's request, or spinning on its request word,
//! taking a published link without any wake-up (with `dsp=spin`, nothing in the run sleeps).
//!
//! Overhead terms beyond the engine's (§IV-A): `request` (Δreq: a message's latency from its
//! write to its dequeue by the DSP) and `dsp` (Δdsp: the DSP's handling of one message,
//! publication of the links included). The engine's `release` (Δrel) and `release_event`
//! (Δev) are the DSP's release handler; `schedule` (Δsch) is the client's O(1) pick; `ipi`
//! (Δipi) is the DSP's request to a client.
//!
//! Assumptions: sporadic tasks, any deadlines, EDF with ties by task index then job number;
//! needs a dedicated CPU (`--dedicated-cpu`); clients are the CPUs of `--cpus`.

pub mod protocol;

use crate::config::IdleMode;
use crate::mechanism::registry::{
    self, Backend, DedicatedCpu, Entry, InvariantKind, ParamDecl, ParamKind, ParamSet, PlacementKind, Setup, TermSpec,
};
use crate::mechanism::dispatch::pairs::Pairs;
use crate::mechanism::release_domain::{one_release_domain, ReleaseDomain};
use crate::mechanism::{Accounting, Ctx, Effects, Job, Plugin, Prev, TaskParams};
use crate::platform::topology;
use crate::ParamError;
use crate::queue::mailbox::{self, Mailbox, Msg, Reader};
use crate::sync::SpinLock;
use crate::RunError;
use protocol::{DspCore, OP_COMPLETE, OP_RESUME, OP_SUSPEND};
#[cfg(test)]
use rtsched_policy::Prio;
use std::path::Path;
use std::sync::Arc;

crate::mechanism_params! {
    /// G-EDF-MP's parameters (the registry's list is [`GEDF_MP`]`.params`, derived from these).
    pub struct GedfMpParams {
        dsp: &'static str = ParamDecl {
            kind: ParamKind::Choice(&["spin", "window", "sleep"]),
            default: "window",
            help: "how the scheduling processor waits for its next event: spin always (never sleeps: no wake-up \
                   latency; as root lift RT throttling with --isolate), window (sleep until spin_window before each \
                   release, then spin) or sleep (on a timer and its request word)",
        },
        /// ns.
        spin_window: u64 = ParamDecl {
            kind: ParamKind::Duration,
            default: "500us",
            help: "with dsp=window: the scheduling processor sleeps until this long before its next release and \
                   spins from there",
        },
        mailboxes: String = ParamDecl {
            kind: ParamKind::Text,
            default: "llc",
            help: "client mailboxes: llc (one per cluster of CPUs sharing a last-level cache, as \
                   /sys/devices/system/cpu reports it; one mailbox if it cannot be read) or a number N (1-64: client \
                   c of m writes mailbox floor(c*N/m))",
        },
        mailbox_size: usize = ParamDecl {
            kind: ParamKind::Int { min: 2, max: 65536 },
            default: "256",
            help: "slots per mailbox (writes are wait-free while a mailbox has room)",
        },
    }
}

/// The mailbox of each client for `mailboxes` (the parameter's text) over the clients' OS
/// CPUs `cpus`, reading the topology under `root`; with a note when `llc` fell back to one
/// mailbox. Errors name the parameter.
pub fn mailbox_map(spec: &str, cpus: &[usize], root: &Path) -> Result<(Vec<usize>, Option<String>), ParamError> {
    let m = cpus.len();
    let spec = spec.trim();
    if spec == "llc" {
        return Ok(match topology::llc_clusters(root, cpus) {
            Ok(map) => (map, None),
            Err(why) => (
                vec![0; m],
                Some(format!("gedf-mp: mailboxes=llc: the last-level caches could not be read ({why}); one mailbox")),
            ),
        });
    }
    let k: usize = spec
        .parse()
        .ok()
        .filter(|k| (1..=64).contains(k))
        .ok_or_else(|| ParamError::new("mailboxes", format!("'{spec}' is neither llc nor a number from 1 to 64")))?;
    let k = k.min(m.max(1));
    Ok(((0..m).map(|c| c * k / m.max(1)).collect(), None))
}

/// G-EDF-MP's registry entry.
pub static GEDF_MP: Entry = Entry {
    name: "gedf-mp",
    summary: "G-EDF-MP: global EDF by message passing; a dedicated scheduling processor owns the ready and \
              release queues, clients follow per-client linked/scheduled pairs and report through wait-free \
              mailboxes (Cerqueira, Vanga & Brandenburg, RTAS 2014, §III)",
    params: GedfMpParams::SPECS,
    placement: PlacementKind::None,
    parallel: false,
    dedicated: DedicatedCpu::Required,
    dedicated_role: "the scheduling processor",
    terms: &[
        TermSpec {
            name: "request",
            symbol: "Δreq",
            help: "client request latency: message written to dequeued by the scheduling processor",
            tracking: true, count: false,
        },
        TermSpec {
            name: "dsp",
            symbol: "Δdsp",
            help: "scheduling-processor handler of one message (link publication included)",
            tracking: true, count: false,
        },
    ],
    invariant: InvariantKind::Global,
    priority: registry::edf,
    user_jobs: true,
    suspends: true,
    backend: Backend::Engine(build),
};

/// Term ids (indices into `GEDF_MP.terms`).
const T_REQUEST: u32 = 0;
const T_DSP: u32 = 1;


fn build(s: &Setup<'_>) -> Result<Box<dyn Plugin>, RunError> {
    if !s.dedicated {
        return Err(RunError::Config("gedf-mp needs a dedicated CPU for its scheduling processor".into()));
    }
    let p = GedfMpParams::from_params(s.params)?;
    let (idle, window) = match p.dsp {
        "sleep" => (IdleMode::Sleep, u64::MAX),
        "spin" => (IdleMode::Spin, u64::MAX),
        _ => (IdleMode::Spin, p.spin_window),
    };
    // (A driver that names no CPUs gets CPUs 0..m.)
    let cpus: Vec<usize> = if s.cpus.len() == s.m { s.cpus.to_vec() } else { (0..s.m).collect() };
    let (box_of, note) = mailbox_map(&p.mailboxes, &cpus, Path::new("/"))?;
    if let Some(note) = note {
        eprintln!("rtsched run: note: {note}");
    }
    let mut g = GedfMp::new(s.tasks, s.m, s.t0, s.end, idle, box_of, p.mailbox_size);
    g.spin_window = window;
    Ok(Box::new(g))
}

/// The DSP's state (§III-B "DSP state"): the protocol's state machine and the mailboxes'
/// reading sides.
struct Dsp {
    core: DspCore,
    /// The mailboxes' reading sides (the DSP is their one consumer).
    readers: Vec<Reader>,
    /// The mailbox the next round starts with.
    rr: usize,
}

/// G-EDF-MP over `m` clients (see the module docs).
pub struct GedfMp {
    m: usize,
    idle: IdleMode,
    /// With `IdleMode::Spin`: spin from this long before the next release (ns).
    spin_window: u64,
    dsp: SpinLock<Dsp>,
    links: Pairs,
    /// The mailboxes' writing sides (the clients').
    boxes: Vec<Arc<Mailbox>>,
    box_of: Vec<usize>,
    /// The DSP's release domain (polled by the service thread only).
    releases: ReleaseDomain,
}

impl GedfMp {
    /// `m` clients; tasks `params` released from `t0` until `end`; the DSP waits in `idle`;
    /// client `c` writes mailbox `box_of[c]` (indices `0..k`, `k` mailboxes) of `size` slots.
    pub fn new(
        params: &[TaskParams],
        m: usize,
        t0: u64,
        end: u64,
        idle: IdleMode,
        box_of: Vec<usize>,
        size: usize,
    ) -> GedfMp {
        let core = DspCore::new(params, m, t0, end);
        let releases = ReleaseDomain::new(true, m, core.next_due());
        debug_assert_eq!(box_of.len(), m);
        let k = box_of.iter().max().map_or(1, |&b| b + 1);
        let (boxes, readers): (Vec<_>, Vec<_>) = (0..k).map(|_| mailbox::channel(size)).unzip();
        GedfMp {
            m,
            idle,
            spin_window: u64::MAX,
            dsp: SpinLock::new(u32::MAX, Dsp { core, readers, rr: 0 }),
            links: Pairs::new(m, params.len()),
            boxes,
            box_of,
            releases,
        }
    }

    /// `m` clients over `k` mailboxes of consecutive clients (client `c` writes `⌊c·k/m⌋`).
    pub fn even(params: &[TaskParams], m: usize, t0: u64, end: u64, idle: IdleMode, k: usize, size: usize) -> GedfMp {
        let k = k.clamp(1, m.max(1));
        GedfMp::new(params, m, t0, end, idle, (0..m).map(|c| c * k / m.max(1)).collect(), size)
    }

    /// The number of mailboxes.
    pub fn mailboxes(&self) -> usize {
        self.boxes.len()
    }

    /// The jobs the DSP's policy links to each client now (for tests against the policy).
    #[cfg(test)]
    pub(crate) fn linked(&self) -> Vec<Option<Prio>> {
        let d = self.dsp.lock_untraced();
        (0..self.m).map(|c| d.core.linked(c)).collect()
    }

    /// Link swaps made so far.
    #[cfg(test)]
    pub(crate) fn swaps(&self) -> u64 {
        self.dsp.lock_untraced().core.publisher.swaps()
    }

    /// Publishes the policy's changed links to the clients (with link swaps).
    fn enact(&self, d: &mut Dsp, ctx: &mut Ctx<'_>) {
        d.core.enact(&self.links, |c| ctx.preempt(c));
    }

    /// Serves the mailboxes round-robin until all are empty (the DSP's `notified`).
    fn serve(&self, d: &mut Dsp, ctx: &mut Ctx<'_>) {
        let k = self.boxes.len();
        loop {
            let mut any = false;
            for i in 0..k {
                let b = (d.rr + i) % k;
                if let Some(msg) = d.readers[b].pop() {
                    any = true;
                    ctx.term_since(T_REQUEST, msg.stamp);
                    ctx.term_start(T_DSP);
                    d.core.handle(&msg);
                    self.enact(d, ctx);
                    ctx.term_end(T_DSP);
                    // The requests to sleeping clients go out now, not after the whole round.
                    ctx.flush_wakes();
                }
            }
            d.rr = (d.rr + 1) % k;
            if !any {
                break;
            }
        }
    }

    /// Client `ctx.cpu()` sends `op` about `job` to the DSP (its cluster's mailbox, then a
    /// notification).
    fn send(&self, ctx: &mut Ctx<'_>, op: u32, job: &Job) {
        let cpu = ctx.cpu();
        let msg = Msg { op, sender: cpu as u32, task: job.task(), seq: job.seq(), stamp: ctx.stamp() };
        self.boxes[self.box_of[cpu]].push(msg);
        ctx.notify(self.m);
    }

    /// Operation (3) on client `ctx.cpu()`: `job`, which it runs, suspends. The client leaves
    /// it (invalidating its link if still that job), takes whatever is linked to it now
    /// (another job if a preemption was published meanwhile: the race of §III-C), and tells
    /// the DSP. Returns the job to run next. Precondition: as [`Plugin::schedule`]'s, with
    /// `job` the job the worker stopped running.
    pub fn suspend(&self, ctx: &mut Ctx<'_>, job: Job) -> Option<Job> {
        let next = self.links.suspend(ctx.cpu(), job, Some(&mut *ctx));
        self.send(ctx, OP_SUSPEND, &job);
        next
    }

    /// Operation (1): `job`, suspended, resumes. On a client, the resumption is a message
    /// (its flag cleared first); on the DSP (an external event: its own "interrupt") it is
    /// handled at once. Precondition: `job` suspended (its client called
    /// [`suspend`](Self::suspend)) and was not resumed since.
    pub fn resume(&self, ctx: &mut Ctx<'_>, job: Job) {
        self.links.wake(&job);
        if ctx.cpu() == self.m {
            let mut g = self.dsp.lock_untraced();
            g.core.resumed(job.task(), job.seq());
            self.enact(&mut g, ctx);
        } else {
            self.send(ctx, OP_RESUME, &job);
        }
    }

    /// The consistency check of the DSP's structures (no message handled): every pending,
    /// non-suspended job linked or queued once, the G-EDF invariant, no job scheduled on two
    /// clients.
    fn check(&self, d: &Dsp) -> Result<(), String> {
        let scheduled = (0..self.m).filter_map(|c| self.links.pair(c).scheduled);
        d.core.check(scheduled).map_err(|e| format!("{}: {e}", self.name()))
    }
}

impl Plugin for GedfMp {
    fn name(&self) -> &'static str {
        GEDF_MP.name
    }
    one_release_domain!(releases);

    /// Operation 1 on the DSP.
    fn release(&self, ctx: &mut Ctx<'_>, _domain: usize, now: u64) {
        let mut g = self.dsp.lock_untraced();
        let d = &mut *g;
        d.core.release_due(now, |j| ctx.record_release(j));
        self.enact(d, ctx);
        self.releases.set(d.core.next_due());
    }

    /// Operations 2, 3 and 5 on client `ctx.cpu()`.
    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev, _now: u64) -> Option<Job> {
        let cpu = ctx.cpu();
        // The request acknowledgement happens under the pair's lock: the DSP sends requests
        // under it.
        match prev {
            // Operation 3 (the block of the plugin contract's rule 6).
            Prev::Blocked(j) => self.suspend(ctx, j),
            Prev::Completed(j) => {
                let next = self.links.pick(cpu, Some(j), Some(&mut *ctx));
                self.send(ctx, OP_COMPLETE, &j);
                next
            }
            Prev::Idle | Prev::Preempted(_) => self.links.pick(cpu, None, Some(&mut *ctx)),
        }
    }

    /// Operation 1 for a job that blocked (rule 6): a message from a client, or handled at once
    /// on the DSP ([`GedfMp::resume`]).
    fn wake(&self, ctx: &mut Ctx<'_>, job: Job, _now: u64) {
        self.resume(ctx, job);
    }

    fn notified(&self, ctx: &mut Ctx<'_>, _now: u64) {
        if ctx.cpu() == self.m {
            let mut g = self.dsp.lock_untraced();
            self.serve(&mut g, ctx);
        }
    }

    fn service_idle(&self) -> Option<IdleMode> {
        Some(self.idle)
    }
    fn service_spin_window_ns(&self) -> u64 {
        self.spin_window
    }

    /// After the threads stopped: the messages still in the mailboxes (completions the DSP
    /// had not served) are applied, then the structures are checked.
    fn accounting(&self) -> Accounting {
        let mut g = self.dsp.lock_untraced();
        let d = &mut *g;
        for b in 0..d.readers.len() {
            while let Some(msg) = d.readers[b].pop() {
                d.core.handle(&msg);
            }
        }
        Accounting {
            released: d.core.book.released().to_vec(),
            completed: d.core.book.completed().to_vec(),
            consistent: self.check(d).map_err(crate::Inconsistency),
        }
    }
}

#[cfg(test)]
#[path = "gedf_mp_tests.rs"]
mod tests;

#[cfg(test)]
mod loom_model;
