//! Global EDF as a link-based policy (Brandenburg & Anderson, RTSS 2009, §2–§3; LITMUS^RT's
//! GSN-EDF `link_task_to_cpu`): a *ready queue* of ready, unlinked jobs ordered by priority,
//! and a *processor mapping* — a heap of CPUs ordered by the priority of their linked job,
//! idle CPUs lowest — whose top is the CPU a newly ready job would preempt.
//!
//! * Event-driven ([`Gedf`]): a job that becomes ready is linked at once to the lowest-priority
//!   CPU if it beats that CPU's job (or the CPU is idle); a completion links the highest-priority
//!   ready job to the freed CPU. Invariant after every operation: the `min(m, r)`
//!   highest-priority of the `r` ready jobs are linked.
//! * Quantum-driven ([`GedfQuantum`], RTSS 2009 §2, S2): readiness and completions only update
//!   the queues; jobs are linked only at quantum boundaries. With *aligned* quanta every CPU
//!   ticks at once and the global rule above is applied at the tick. With *staggered* quanta
//!   each CPU ticks on its own; at its tick a CPU takes the highest-priority ready job if that
//!   beats its own linked job (or it is idle), so the global invariant holds only approximately
//!   (our reading of per-CPU tick handlers; the paper does not spell out the rule). A CPU
//!   whose job completes mid-quantum stays idle until its next tick (Fig. 1(b), [8,9) on P1).
//!
//! Ties: [`Prio`] order (deadline, task index, job sequence). Idle CPUs are taken lowest index
//! first, which reproduces Fig. 1 of the paper.

use crate::queue::{BinaryReady, ReadyQueue};
use crate::{Dirty, Policy, Prio};

/// Processor mapping: an indexed binary max-heap of CPUs keyed by "lowness", whose top is the
/// lowest-priority CPU (an idle CPU with the smallest index if any is idle). Keys are packed
/// into a `(bool, u128)` per CPU so that a comparison is two integer compares.
#[derive(Debug, Clone)]
struct CpuHeap {
    heap: Vec<u32>,
    pos: Vec<u32>,
    key: Vec<(bool, u128)>,
}

/// Larger = lower priority. A linked job: `(false, packed priority)`; idle CPU `c`:
/// `(true, u128::MAX - c)`, above every job, lower indices first.
#[inline]
fn lowness(linked: Option<Prio>, cpu: usize) -> (bool, u128) {
    match linked {
        Some(p) => (false, p.packed()),
        None => (true, u128::MAX - cpu as u128),
    }
}

impl CpuHeap {
    fn new(m: usize) -> CpuHeap {
        CpuHeap {
            heap: (0..m as u32).collect(),
            pos: (0..m as u32).collect(),
            key: (0..m).map(|c| lowness(None, c)).collect(),
        }
    }
    #[inline]
    fn top(&self) -> usize {
        self.heap[0] as usize
    }
    #[inline]
    fn k(&self, i: usize) -> (bool, u128) {
        self.key[self.heap[i] as usize]
    }
    #[inline]
    fn swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        self.pos[self.heap[i] as usize] = i as u32;
        self.pos[self.heap[j] as usize] = j as u32;
    }
    /// Restores the heap after `cpu`'s linked job changed.
    #[inline]
    fn update(&mut self, linked: Option<Prio>, cpu: usize) {
        self.key[cpu] = lowness(linked, cpu);
        let mut i = self.pos[cpu] as usize;
        while i > 0 {
            let p = (i - 1) / 2;
            if self.k(i) > self.k(p) {
                self.swap(i, p);
                i = p;
            } else {
                break;
            }
        }
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut best = i;
            if l < n && self.k(l) > self.k(best) {
                best = l;
            }
            if r < n && self.k(r) > self.k(best) {
                best = r;
            }
            if best == i {
                break;
            }
            self.swap(i, best);
            i = best;
        }
    }
}

/// Event-driven global EDF (or global FP, if given fixed-priority keys: the policy only
/// compares [`Prio`]s). `Q` is the ready queue (default: std's binary heap); the processor
/// mapping is the policy's own CPU heap — the one in the workspace.
#[derive(Debug, Clone)]
pub struct Gedf<Q: ReadyQueue = BinaryReady> {
    ready: Q,
    linked: Vec<Option<Prio>>,
    cpus: CpuHeap,
    dirty: Dirty,
}

impl Gedf {
    pub fn new(m: usize) -> Gedf {
        Gedf::with_queue(m, BinaryReady::new())
    }
}

impl<Q: ReadyQueue> Gedf<Q> {
    /// `m` idle CPUs over the (empty) ready queue `ready`.
    pub fn with_queue(m: usize, ready: Q) -> Gedf<Q> {
        Gedf { ready, linked: vec![None; m], cpus: CpuHeap::new(m), dirty: Dirty::new(m) }
    }

    /// Links `job` to `cpu`; a job displaced from `cpu` goes back to the ready queue.
    #[inline]
    fn link(&mut self, cpu: usize, job: Prio) {
        if let Some(old) = self.linked[cpu].replace(job) {
            self.ready.push(old);
        }
        self.cpus.update(self.linked[cpu], cpu);
        self.dirty.mark(cpu);
    }

    /// The CPU the policy would preempt next: the lowest-priority CPU (an idle one first).
    pub fn lowest_cpu(&self) -> usize {
        self.cpus.top()
    }

    /// The ready queue (read-only: every change goes through the policy).
    pub fn ready_queue(&self) -> &Q {
        &self.ready
    }

    /// The CPU `job` should be linked to now, if any: the lowest-priority CPU, when it is idle
    /// or its job has lower priority than `job` (the preemption check; a mechanism whose ready
    /// queue lives outside the policy asks it about that queue's top).
    #[inline]
    pub fn target(&self, job: &Prio) -> Option<usize> {
        let c = self.cpus.top();
        match self.linked.get(c)? {
            None => Some(c),
            Some(cur) if job.higher_than(cur) => Some(c),
            _ => None,
        }
    }

    /// Adds a ready job to the ready queue without linking (quantum-driven use).
    pub fn enqueue(&mut self, job: Prio) {
        self.ready.push(job);
    }

    /// Unlinks the job of `cpu` (it completed) without refilling the CPU.
    #[inline]
    pub fn unlink(&mut self, cpu: usize) -> Option<Prio> {
        let old = self.linked.get_mut(cpu)?.take();
        if old.is_some() {
            self.cpus.update(self.linked[cpu], cpu);
            self.dirty.mark(cpu);
        }
        old
    }

    /// Links ready jobs while the highest-priority one beats the lowest-priority CPU: after
    /// it, the `min(m, r)` highest-priority ready jobs are linked.
    #[inline]
    pub fn link_all(&mut self) {
        while let Some(top) = self.ready.peek() {
            match self.target(&top) {
                Some(c) => {
                    self.ready.pop();
                    self.link(c, top);
                }
                None => break,
            }
        }
    }

    /// One CPU's own decision (staggered tick): take the highest-priority ready job if the
    /// CPU is idle or that job beats the CPU's linked job.
    pub fn link_one(&mut self, cpu: usize) {
        if let (Some(top), Some(cur)) = (self.ready.peek(), self.linked.get(cpu)) {
            if cur.is_none_or(|c| top.higher_than(&c)) {
                self.ready.pop();
                self.link(cpu, top);
            }
        }
    }

    /// Removes and returns the highest-priority ready, unlinked job: for a mechanism that keeps
    /// most ready jobs in a concurrent queue outside the policy and gives the policy only the
    /// jobs it holds (Brandenburg & Anderson, RTSS 2009, §3: R2/R3 dequeue without the
    /// processor-mapping lock), the jobs the policy did not link go back to that queue.
    pub fn take_ready(&mut self) -> Option<Prio> {
        self.ready.pop()
    }

    /// Number of ready jobs not linked.
    pub fn queued(&self) -> usize {
        self.ready.len()
    }

    /// Removes `job` from the ready queue (O(r); only for the rare [`Policy::job_done`]).
    fn dequeue(&mut self, job: Prio) -> bool {
        self.ready.remove(job)
    }
}

impl<Q: ReadyQueue> Policy for Gedf<Q> {
    fn m(&self) -> usize {
        self.linked.len()
    }
    #[inline]
    fn job_ready(&mut self, job: Prio) {
        match self.target(&job) {
            Some(c) => self.link(c, job),
            None => self.ready.push(job),
        }
    }
    #[inline]
    fn job_complete(&mut self, cpu: usize) {
        if self.unlink(cpu).is_some() {
            // The freed CPU is now the (an) idle lowest-priority CPU; refill whichever is top.
            self.link_all();
        }
    }
    fn job_done(&mut self, job: Prio) -> bool {
        match self.linked.iter().position(|&l| l == Some(job)) {
            Some(c) => {
                self.job_complete(c);
                true
            }
            None => self.dequeue(job),
        }
    }
    #[inline]
    fn linked(&self, cpu: usize) -> Option<Prio> {
        self.linked.get(cpu).copied().flatten()
    }
    #[inline]
    fn drain_dirty_with(&mut self, f: impl FnMut(u32)) {
        self.dirty.drain_with(f)
    }
    fn swap_links(&mut self, a: usize, b: usize) {
        if a == b || a >= self.linked.len() || b >= self.linked.len() {
            return;
        }
        self.linked.swap(a, b);
        self.cpus.update(self.linked[a], a);
        self.cpus.update(self.linked[b], b);
        self.dirty.mark(a);
        self.dirty.mark(b);
    }
}

/// Quantum-driven global EDF: links change only at ticks. `Q` as for [`Gedf`].
#[derive(Debug, Clone)]
pub struct GedfQuantum<Q: ReadyQueue = BinaryReady> {
    inner: Gedf<Q>,
}

impl GedfQuantum {
    pub fn new(m: usize) -> GedfQuantum {
        GedfQuantum { inner: Gedf::new(m) }
    }
}

impl<Q: ReadyQueue> GedfQuantum<Q> {
    /// `m` idle CPUs over the (empty) ready queue `ready`.
    pub fn with_queue(m: usize, ready: Q) -> GedfQuantum<Q> {
        GedfQuantum { inner: Gedf::with_queue(m, ready) }
    }

    /// The ready queue (read-only).
    pub fn ready_queue(&self) -> &Q {
        self.inner.ready_queue()
    }
}

impl<Q: ReadyQueue> Policy for GedfQuantum<Q> {
    fn m(&self) -> usize {
        self.inner.m()
    }
    fn job_ready(&mut self, job: Prio) {
        self.inner.enqueue(job);
    }
    fn job_complete(&mut self, cpu: usize) {
        self.inner.unlink(cpu);
    }
    fn job_done(&mut self, job: Prio) -> bool {
        match self.inner.linked.iter().position(|&l| l == Some(job)) {
            Some(c) => self.inner.unlink(c).is_some(),
            None => self.inner.dequeue(job),
        }
    }
    fn tick(&mut self, cpu: Option<usize>) {
        match cpu {
            None => self.inner.link_all(),
            Some(c) => self.inner.link_one(c),
        }
    }
    fn linked(&self, cpu: usize) -> Option<Prio> {
        self.inner.linked(cpu)
    }
    #[inline]
    fn drain_dirty_with(&mut self, f: impl FnMut(u32)) {
        self.inner.drain_dirty_with(f)
    }
    fn swap_links(&mut self, a: usize, b: usize) {
        self.inner.swap_links(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(key: u64, task: u32) -> Prio {
        Prio { key, task, job: 0 }
    }

    /// Brute force: the linked set equals the min(m, r) highest-priority ready jobs.
    fn invariant(g: &Gedf, all: &[Prio]) {
        let mut sorted = all.to_vec();
        sorted.sort();
        let k = sorted.len().min(g.m());
        let mut linked: Vec<Prio> = (0..g.m()).filter_map(|c| g.linked(c)).collect();
        linked.sort();
        assert_eq!(linked, sorted[..k].to_vec());
    }

    #[test]
    fn links_highest_and_preempts_lowest() {
        let mut g = Gedf::new(2);
        let mut ready = vec![];
        for (k, t) in [(50, 0), (40, 1), (30, 2), (60, 3), (10, 4)] {
            g.job_ready(p(k, t));
            ready.push(p(k, t));
            invariant(&g, &ready);
        }
        // 50 -> cpu 0, 40 -> cpu 1; 30 preempts the lowest (50, cpu 0); 10 preempts the
        // lowest (40, cpu 1).
        let cpu_of = |g: &Gedf, k| (0..2).find(|&c| g.linked(c).map(|x| x.key) == Some(k));
        assert_eq!(cpu_of(&g, 10), Some(1));
        assert_eq!(cpu_of(&g, 30), Some(0));
        let mut dirty = vec![];
        g.drain_dirty(&mut dirty);
        assert_eq!(dirty, vec![0, 1]);
        g.job_complete(1);
        ready.retain(|x| x.key != 10);
        invariant(&g, &ready);
        assert_eq!(g.linked(1).map(|x| x.key), Some(40));
    }

    #[test]
    fn random_operations_keep_invariant() {
        // A tiny LCG keeps the policy crate free of dev-dependencies.
        let mut s = 0x1234_5678_9abc_def0u64;
        let mut rnd = |n: u64| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 33) % n
        };
        for m in 1..6 {
            let mut g = Gedf::new(m);
            let mut ready: Vec<Prio> = vec![];
            let mut next = 0u32;
            for _ in 0..2000 {
                if rnd(3) > 0 || ready.is_empty() {
                    let j = Prio { key: rnd(50), task: next, job: 0 };
                    next += 1;
                    g.job_ready(j);
                    ready.push(j);
                } else {
                    let c = rnd(m as u64) as usize;
                    if let Some(j) = g.linked(c) {
                        g.job_complete(c);
                        ready.retain(|x| *x != j);
                    }
                }
                invariant(&g, &ready);
            }
        }
    }

    #[test]
    fn job_done_forgets_linked_and_queued_jobs() {
        let mut g = Gedf::new(1);
        let mut ready = vec![p(5, 0), p(7, 1), p(9, 2)];
        for &j in &ready {
            g.job_ready(j);
        }
        assert!(g.job_done(p(7, 1))); // queued: removed, links unchanged
        ready.retain(|&x| x != p(7, 1));
        invariant(&g, &ready);
        assert!(g.job_done(p(5, 0))); // linked: the CPU is refilled
        ready.retain(|&x| x != p(5, 0));
        invariant(&g, &ready);
        assert_eq!(g.linked(0), Some(p(9, 2)));
        assert!(!g.job_done(p(7, 1)));
        let mut q = GedfQuantum::new(1);
        q.job_ready(p(1, 0));
        q.job_ready(p(2, 1));
        q.tick(None);
        assert!(q.job_done(p(2, 1)) && q.job_done(p(1, 0)));
        assert_eq!(q.linked(0), None); // quantum-driven: no refill before the next tick
        q.tick(None);
        assert_eq!(q.linked(0), None);
    }

    #[test]
    fn swapped_links_keep_the_set_and_the_cpu_order() {
        let mut g = Gedf::new(3);
        for (k, t) in [(10, 0), (20, 1)] {
            g.job_ready(p(k, t));
        }
        let (a, b) = ((0..3).find(|&c| g.linked(c) == Some(p(10, 0))).unwrap(), 2);
        g.swap_links(a, b);
        assert_eq!(g.linked(b), Some(p(10, 0)));
        assert_eq!(g.lowest_cpu(), a, "the idle CPU is still the one to preempt");
        g.job_ready(p(5, 2)); // goes to the idle CPU
        assert_eq!(g.linked(a), Some(p(5, 2)));
        g.job_ready(p(1, 3)); // preempts the lowest, 20
        invariant(&g, &[p(10, 0), p(5, 2), p(1, 3), p(20, 1)]);
        assert_eq!(ReadyQueue::peek(g.ready_queue()), Some(p(20, 1)));
    }

    #[test]
    fn quantum_links_only_at_ticks() {
        let mut q = GedfQuantum::new(2);
        q.job_ready(p(5, 0));
        assert_eq!(q.linked(0), None);
        q.tick(None);
        assert_eq!(q.linked(0), Some(p(5, 0)));
        q.job_ready(p(7, 1));
        q.job_ready(p(1, 2));
        q.tick(Some(0)); // cpu 0 holds 5; 1 beats it.
        assert_eq!(q.linked(0), Some(p(1, 2)));
        assert_eq!(q.linked(1), None);
        q.tick(Some(1));
        assert_eq!(q.linked(1), Some(p(5, 0)));
        q.job_complete(0);
        assert_eq!(q.linked(0), None); // idle until its next tick
    }
}
