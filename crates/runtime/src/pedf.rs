//! P-EDF: partitioned EDF — one EDF ready queue, one release queue and one spin lock per
//! CPU; tasks never migrate (Calandrino et al., "LITMUS^RT: A Testbed for Empirically
//! Comparing Real-Time Multiprocessor Schedulers", RTSS 2006; the partitioned baseline of
//! seed 001). Each CPU handles its own partition's releases, so no IPIs are ever sent.
//! Deadlines may be implicit, constrained or arbitrary; priorities are EDF with ties by
//! task index.

use crate::heap::BinomialHeap;
use crate::plugin::{Accounting, Ctx, Job, Plugin, Prev, TaskBook, TaskParams};
use crate::sync::SpinLock;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

struct CpuState {
    book: TaskBook,
    ready: BinomialHeap<Job>,
    scheduled: Option<Job>,
    tasks: Vec<usize>,
}

pub struct Pedf {
    cpus: Vec<CachePadded<SpinLock<CpuState>>>,
    next_rel: Vec<CachePadded<AtomicU64>>,
    n: usize,
}

impl Pedf {
    /// `partition[c]` lists the task indices of CPU index `c` (validated by the engine).
    pub fn new(params: &[TaskParams], partition: &[Vec<usize>], t0: u64, end: u64) -> Pedf {
        let cpus: Vec<_> = partition
            .iter()
            .enumerate()
            .map(|(c, ts)| {
                CachePadded::new(SpinLock::new(
                    c as u32,
                    CpuState {
                        book: TaskBook::new(params, ts, t0, end),
                        ready: BinomialHeap::with_capacity(ts.len() + 4),
                        scheduled: None,
                        tasks: ts.clone(),
                    },
                ))
            })
            .collect();
        let next_rel = cpus.iter().map(|s| CachePadded::new(AtomicU64::new(s.lock_untraced().book.next_due()))).collect();
        Pedf { cpus, next_rel, n: params.len() }
    }
}

impl Plugin for Pedf {
    fn name(&self) -> &'static str {
        "pedf"
    }
    fn release_domains(&self) -> usize {
        self.cpus.len()
    }
    fn release_domain(&self, cpu: usize) -> Option<usize> {
        Some(cpu)
    }
    fn next_release(&self, domain: usize) -> u64 {
        self.next_rel[domain].load(Ordering::Acquire)
    }

    fn release(&self, ctx: &mut Ctx<'_>, domain: usize, now: u64) {
        let mut g = self.cpus[domain].lock(ctx.trace);
        let st = &mut *g;
        let (book, ready) = (&mut st.book, &mut st.ready);
        book.release_due(now, |j, is_ready| {
            ctx.record_release(&j);
            if is_ready {
                ready.push(j);
            }
        });
        self.next_rel[domain].store(st.book.next_due(), Ordering::Release);
        if let Some(top) = st.ready.peek() {
            if !matches!(st.scheduled, Some(s) if !top.higher_than(&s)) {
                ctx.preempt(domain);
            }
        }
    }

    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev) -> Option<Job> {
        let mut g = self.cpus[ctx.cpu].lock(ctx.trace);
        let st = &mut *g;
        match prev {
            Prev::Idle => {}
            Prev::Preempted(j) => st.ready.push(j),
            Prev::Completed(j) => {
                if let Some(next) = st.book.complete(&j) {
                    st.ready.push(next);
                }
            }
        }
        st.scheduled = st.ready.pop();
        st.scheduled
    }

    fn accounting(&self) -> Accounting {
        let mut released = vec![0; self.n];
        let mut completed = vec![0; self.n];
        let mut consistent = Ok(());
        for (c, s) in self.cpus.iter().enumerate() {
            let st = s.lock_untraced();
            let keys = st.ready.keys();
            for &t in &st.tasks {
                released[t] = st.book.released()[t];
                completed[t] = st.book.completed()[t];
                if let Some(h) = st.book.head(t) {
                    if st.scheduled != Some(h) && !keys.contains(&h) && consistent.is_ok() {
                        consistent = Err(format!("pedf: job {}:{} of CPU {c} is lost", h.task, h.seq));
                    }
                }
            }
        }
        Accounting { released, completed, consistent }
    }
}
