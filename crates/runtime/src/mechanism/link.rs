//! Linked versus scheduled (Brandenburg & Anderson, RTSS 2009, §3, "processor mapping"): what
//! every link-based global mechanism does after its policy changed links — the one place the
//! rule is written (GSN-EDF and the RTSS'09 family use it).
//!
//! The policy links jobs to CPUs; a worker runs (schedules) what was linked to it when it last
//! called `schedule`. A job the policy links to CPU `c` may still be running on another CPU
//! `s` (it was preempted there, and `s` has not noticed yet): it is then linked to `s` instead,
//! swapping the links of `c` and `s` (LITMUS^RT's `link_task_to_cpu`; the link swaps of
//! Cerqueira et al., RTAS 2014, §III-C). Every changed CPU whose scheduled job differs from its
//! linked one is asked to reschedule. Precondition: the caller holds the lock under which the
//! links, `scheduled` and `sched_on` change and under which requests to the CPUs are sent.
//!
//! A *placeholder* (see [`placeholder`]) linked to a CPU reserves it: the RTSS'09 fine-grained
//! and hierarchical plugins remove the CPU they update from the processor mapping while they
//! dequeue without the mapping lock (RTSS 2009, §3, "significant changes were required"); a
//! placeholder outranks every job, so no one picks the CPU as the lowest, and it is never a
//! reason to reschedule.

use crate::mechanism::Job;
use rtsched_policy::{Gedf, GedfQuantum, Policy, Prio, ReadyQueue};

/// A policy whose link changes a mechanism enacts.
pub(crate) trait Links {
    fn link_of(&self, cpu: usize) -> Option<Prio>;
    fn swap(&mut self, a: usize, b: usize);
    fn drain_changed(&mut self, f: impl FnMut(u32));
}

impl<Q: ReadyQueue> Links for Gedf<Q> {
    #[inline]
    fn link_of(&self, cpu: usize) -> Option<Prio> {
        self.linked(cpu)
    }
    #[inline]
    fn swap(&mut self, a: usize, b: usize) {
        self.swap_links(a, b)
    }
    #[inline]
    fn drain_changed(&mut self, f: impl FnMut(u32)) {
        self.drain_dirty_with(f)
    }
}

impl<Q: ReadyQueue> Links for GedfQuantum<Q> {
    #[inline]
    fn link_of(&self, cpu: usize) -> Option<Prio> {
        self.linked(cpu)
    }
    #[inline]
    fn swap(&mut self, a: usize, b: usize) {
        self.swap_links(a, b)
    }
    #[inline]
    fn drain_changed(&mut self, f: impl FnMut(u32)) {
        self.drain_dirty_with(f)
    }
}

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

/// Acts on the policy's link changes (module docs): swaps a job linked to `c` that still runs
/// on `s` back to `s`, then asks every changed CPU whose scheduled job differs from its linked
/// job (a placeholder excepted) to reschedule, through `preempt`.
pub(crate) fn enact<P: Links>(
    policy: &mut P,
    scheduled: &[Option<Job>],
    sched_on: &[Option<usize>],
    mut preempt: impl FnMut(usize),
) {
    // The changed CPUs, on the stack: under a global lock every cache line written is one the
    // next CPU to take the lock must fetch.
    let mut changed = CpuList::new();
    policy.drain_changed(|c| changed.push(c));
    let mut swapped = false;
    for i in 0..changed.len() {
        let c = changed.get(i);
        if let Some(j) = policy.link_of(c) {
            if let Some(&Some(s)) = sched_on.get(j.task as usize) {
                if s != c && scheduled[s].is_some_and(|x| x.prio == j) {
                    policy.swap(c, s);
                    swapped = true;
                }
            }
        }
    }
    if swapped {
        // The swaps marked their CPUs again.
        policy.drain_changed(|c| changed.push(c));
    }
    for i in 0..changed.len() {
        let c = changed.get(i);
        let linked = policy.link_of(c);
        if linked.is_some_and(|p| is_placeholder(&p)) {
            continue;
        }
        if scheduled[c].map(|j| j.prio) != linked {
            preempt(c);
        }
    }
}

/// A short list of CPU indices, inline up to 32 entries.
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
    fn len(&self) -> usize {
        self.n
    }
    #[inline]
    fn get(&self, i: usize) -> usize {
        (if i < 32 { self.inline[i] } else { self.spill[i - 32] }) as usize
    }
}
