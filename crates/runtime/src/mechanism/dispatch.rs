//! Linked versus scheduled (Brandenburg & Anderson, RTSS 2009, §3, "processor mapping";
//! Cerqueira, Vanga & Brandenburg, RTAS 2014, §III-B/C): how a link-based global mechanism acts
//! on its policy's link changes — the one algorithm, with link swaps, that GSN-EDF, the RTSS'09
//! family and G-EDF-MP share.
//!
//! The policy links jobs to CPUs; a worker runs (schedules) what was published to it when it
//! last called `schedule`. A job `J` the policy links to CPU `c` may still be running on another
//! CPU `s` (it was preempted there, and `s` has not noticed yet): it is then kept linked to `s`
//! instead, swapping the policy's links of `c` and `s` ([`Policy::swap_links`]; LITMUS^RT's
//! `link_task_to_cpu`; the link swaps of RTAS 2014, §III-C): `c` gets the job the policy had
//! meant for `s`, which `s` never picked up and which therefore runs nowhere. Otherwise `J` is
//! published to `c`, and `c` is asked to reschedule if it runs something else. A job is thus
//! only ever scheduled on the CPU it was last published to, and each swap pins one CPU, so a
//! pass ends after at most `m` swaps.
//!
//! How a mechanism keeps "scheduled" and reaches a CPU is its [`Dispatcher`]: under one lock
//! (GSN-EDF, RTSS'09) the check reads `scheduled[]` and publication is a reschedule request;
//! with per-client locks (G-EDF-MP, [`pairs`]) the check and the keep are one critical section
//! of the client that may still run `J`, and publication writes the client's `linked`.
//! Precondition of [`Enactor::enact`]: the caller holds what serialises the policy (its lock,
//! or being the one scheduling processor).
//!
//! A *placeholder* (see [`placeholder`]) linked to a CPU reserves it: the RTSS'09 fine-grained
//! and hierarchical plugins remove the CPU they update from the processor mapping while they
//! dequeue without the mapping lock (RTSS 2009, §3, "significant changes were required"); a
//! placeholder outranks every job, so no one picks the CPU as the lowest, and it is never a
//! reason to reschedule.

pub mod pairs;

use crate::mechanism::{Job, Prev};
use crate::queue::release::TaskBook;
use rtsched_policy::{invariant, Policy, Prio};

/// The task index of placeholders (no task has it).
const RESERVED_TASK: u32 = u32::MAX;

/// The placeholder of reservation `id` (one per thread: its index). Key 0 outranks every job
/// whose key is an absolute deadline (the runtime's time zero is a monotonic instant after
/// boot, so deadlines are positive): mechanisms that reserve CPUs use EDF priorities.
#[inline]
pub(crate) fn placeholder(id: usize) -> Prio {
    Prio { key: 0, task: RESERVED_TASK, job: id as u32 }
}

#[inline]
pub(crate) fn is_placeholder(p: &Prio) -> bool {
    p.task == RESERVED_TASK
}

/// A mechanism's side of linked versus scheduled, as [`Enactor::enact`] uses it.
pub(crate) trait Dispatcher {
    /// `j`, which the policy links to `c`, may still be scheduled on another CPU `s`: if it is,
    /// keep `j` linked to `s` — in the same critical section as the check — and return `s`.
    fn keep_where_scheduled(&mut self, j: Prio, c: usize) -> Option<usize>;
    /// Makes `link` CPU `c`'s link and asks `c` to reschedule if it runs something else.
    fn publish(&mut self, c: usize, link: Option<Prio>);
}

/// What was published to each CPU, and the link swaps made (the module docs' algorithm).
#[derive(Debug, Clone)]
pub(crate) struct Enactor {
    published: Vec<Option<Prio>>,
    swaps: u64,
}

impl Enactor {
    /// `m` CPUs, nothing published.
    pub(crate) fn new(m: usize) -> Enactor {
        Enactor { published: vec![None; m], swaps: 0 }
    }

    /// What was last published to CPU `c`.
    #[cfg(test)]
    pub(crate) fn published(&self, c: usize) -> Option<Prio> {
        self.published[c]
    }

    /// Link swaps made so far. (for tests: each swap pins one CPU).
    #[cfg(test)]
    pub(crate) fn swaps(&self) -> u64 {
        self.swaps
    }

    /// Publishes the policy's changed links (its dirty CPUs) through `d`, with link swaps.
    pub(crate) fn enact<P: Policy>(&mut self, policy: &mut P, d: &mut impl Dispatcher) {
        // The changed CPUs, on the stack: under a global lock every cache line written is one
        // the next CPU to take the lock must fetch.
        let mut work = CpuList::new();
        policy.drain_dirty_with(|c| work.push(c));
        while let Some(c) = work.pop() {
            let want = policy.linked(c);
            if want == self.published[c] {
                continue;
            }
            if let Some(j) = want {
                if let Some(s) = d.keep_where_scheduled(j, c) {
                    // j stays on s (published there now); c gets the policy's job for s.
                    policy.swap_links(c, s);
                    self.published[s] = Some(j);
                    self.swaps += 1;
                    policy.drain_dirty_with(|x| work.push(x));
                    continue;
                }
            }
            self.published[c] = want;
            d.publish(c, want);
        }
    }
}

/// Linked versus scheduled under one lock (GSN-EDF, the RTSS'09 plugins): what each worker
/// runs, per task the CPU its current job runs on, and what was published to each CPU.
/// `scheduled[c]` changes only in worker `c`'s `schedule`, which [`leave`](Self::leave)s what
/// it stopped, lets the policy decide, [`enact`](Self::enact)s the changes and
/// [`take`](Self::take)s its link. Precondition of every method: the caller holds the lock
/// that serialises the policy, under which reschedule requests to the CPUs are sent.
#[derive(Debug, Clone)]
pub(crate) struct Dispatch {
    scheduled: Vec<Option<Job>>,
    /// Per task: the CPU its current job is scheduled on.
    sched_on: Vec<Option<usize>>,
    enactor: Enactor,
}

impl Dispatch {
    /// `m` idle workers, `n` tasks.
    pub(crate) fn new(m: usize, n: usize) -> Dispatch {
        Dispatch { scheduled: vec![None; m], sched_on: vec![None; n], enactor: Enactor::new(m) }
    }

    /// What each worker runs, in the mechanism's books.
    pub(crate) fn scheduled(&self) -> &[Option<Job>] {
        &self.scheduled
    }

    /// Worker `cpu` stopped running the job `prev` names (preempted, completed or
    /// self-suspended): it runs nothing, and the job is scheduled nowhere, until
    /// [`take`](Self::take).
    #[inline]
    pub(crate) fn leave(&mut self, cpu: usize, prev: Prev) {
        if let Some(j) = prev.job() {
            self.scheduled[cpu] = None;
            if let Some(s) = self.sched_on.get_mut(j.task() as usize) {
                *s = None;
            }
        }
    }

    /// Acts on the policy's link changes (module docs): link swaps, and a reschedule request
    /// (`preempt`) to each CPU whose scheduled job is not its new link (a placeholder excepted).
    #[inline]
    pub(crate) fn enact<P: Policy>(&mut self, policy: &mut P, preempt: impl FnMut(usize)) {
        let Dispatch { scheduled, sched_on, enactor } = self;
        enactor.enact(policy, &mut OneLock { scheduled, sched_on, preempt });
    }

    /// Worker `cpu` runs its link `link` (nothing for a placeholder), turned into the job by
    /// `job_of`; returns that job. Call it after [`enact`](Self::enact).
    #[inline]
    pub(crate) fn take(&mut self, cpu: usize, link: Option<Prio>, job_of: impl FnOnce(Prio) -> Job) -> Option<Job> {
        let next = link.filter(|p| !is_placeholder(p)).map(job_of);
        self.scheduled[cpu] = next;
        if let Some(n) = next {
            self.sched_on[n.task() as usize] = Some(cpu);
        }
        next
    }
}

/// The at-rest check of a link-based mechanism (no handler running): no CPU is reserved by a
/// placeholder; every pending job (`pending`, in priority order: [`heads`]) is linked or
/// `queued` exactly once, and nothing else is; with `global`, the linked jobs are the `min(m, r)`
/// highest-priority pending jobs (`rtsched_policy::invariant::check_global`); no job is
/// `scheduled` on two CPUs.
pub(crate) fn check_at_rest(
    pending: &[Prio],
    linked: &[Option<Prio>],
    queued: impl IntoIterator<Item = Prio>,
    scheduled: impl IntoIterator<Item = Job>,
    global: bool,
) -> Result<(), String> {
    if linked.iter().flatten().any(is_placeholder) {
        return Err("a CPU is still reserved at rest".into());
    }
    let mut held: Vec<Prio> = linked.iter().flatten().copied().chain(queued).collect();
    held.sort_unstable();
    if held != pending {
        return Err(format!("the pending jobs {pending:?} are not exactly the linked and queued ones {held:?}"));
    }
    if global {
        invariant::check_global(linked.len(), pending, linked).map_err(|e| e.to_string())?;
    }
    let mut sched: Vec<Prio> = scheduled.into_iter().map(|j| j.prio).collect();
    sched.sort_unstable();
    if sched.windows(2).any(|w| w[0] == w[1]) {
        return Err(format!("a job is scheduled on two CPUs: {sched:?}"));
    }
    Ok(())
}

/// The pending jobs of `book` (each task's head unless it is self-suspended), in priority order.
pub(crate) fn heads(book: &TaskBook) -> Vec<Prio> {
    let mut pending: Vec<Prio> =
        (0..book.released().len()).filter_map(|t| book.ready_head(t)).map(|j| j.prio).collect();
    pending.sort_unstable();
    pending
}

/// The [`Dispatcher`] of [`Dispatch`]: a job is still scheduled where `scheduled` says, and
/// publication is a reschedule request to a CPU whose scheduled job is not its link.
struct OneLock<'a, F: FnMut(usize)> {
    scheduled: &'a [Option<Job>],
    sched_on: &'a [Option<usize>],
    preempt: F,
}

impl<F: FnMut(usize)> Dispatcher for OneLock<'_, F> {
    #[inline]
    fn keep_where_scheduled(&mut self, j: Prio, c: usize) -> Option<usize> {
        match self.sched_on.get(j.task as usize) {
            Some(&Some(s)) if s != c && self.scheduled[s].is_some_and(|x| x.prio == j) => Some(s),
            _ => None,
        }
    }
    #[inline]
    fn publish(&mut self, c: usize, link: Option<Prio>) {
        if link.is_some_and(|p| is_placeholder(&p)) {
            return;
        }
        if self.scheduled[c].map(|j| j.prio) != link {
            (self.preempt)(c);
        }
    }
}

/// A short stack of CPU indices, inline up to 32 entries.
struct CpuList {
    n: usize,
    inline: [u32; 32],
    spill: Vec<u32>,
}

impl CpuList {
    #[inline]
    fn new() -> CpuList {
        CpuList { n: 0, inline: [0; 32], spill: Vec::new() }
    }
    #[inline]
    fn push(&mut self, c: u32) {
        if self.n < 32 {
            self.inline[self.n] = c;
        } else {
            self.spill.push(c);
        }
        self.n += 1;
    }
    #[inline]
    fn pop(&mut self) -> Option<usize> {
        if self.n == 0 {
            return None;
        }
        self.n -= 1;
        Some((if self.n >= 32 { self.spill.pop().unwrap_or(0) } else { self.inline[self.n] }) as usize)
    }
}
