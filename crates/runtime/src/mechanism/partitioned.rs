//! P-EDF and P-FP: partitioned EDF / fixed-priority — one ready queue, one release queue
//! and one spin lock per CPU; tasks never migrate (Calandrino et al., "LITMUS^RT: A Testbed
//! for Empirically Comparing Real-Time Multiprocessor Schedulers", RTSS 2006; the
//! partitioned baselines of seed 001). Each CPU handles its own partition's releases, so no
//! IPIs are ever sent. Deadlines may be implicit, constrained or arbitrary. P-EDF orders
//! jobs by absolute deadline, P-FP by the task's fixed priority (a rank, smaller = higher;
//! deadline-monotonic by default); ties by task index, then job number.

use crate::mechanism::{Accounting, Ctx, Job, Plugin, Prev, TaskBook, TaskParams};
use crate::queue::binomial::BinomialHeap;
use crate::sync::SpinLock;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

/// Ready-queue entry: (primary key, task, job number, job); the primary key is the absolute
/// deadline (EDF) or the task's rank (FP).
type Entry = (u64, u32, u32, Job);

struct CpuState {
    book: TaskBook,
    ready: BinomialHeap<Entry>,
    scheduled: Option<Job>,
    tasks: Vec<usize>,
}

pub struct Pedf {
    /// `Some(rank)` = P-FP with these per-task ranks; `None` = P-EDF.
    ranks: Option<Vec<u64>>,
    cpus: Vec<CachePadded<SpinLock<CpuState>>>,
    next_rel: Vec<CachePadded<AtomicU64>>,
    n: usize,
}

impl Pedf {
    /// `partition[c]` lists the task indices of CPU index `c` (validated by the engine).
    pub fn new(params: &[TaskParams], partition: &[Vec<usize>], t0: u64, end: u64) -> Pedf {
        Pedf::with_ranks(params, partition, None, t0, end)
    }

    /// P-FP when `ranks` is given (one per task, smaller = higher priority).
    pub fn with_ranks(
        params: &[TaskParams],
        partition: &[Vec<usize>],
        ranks: Option<Vec<u64>>,
        t0: u64,
        end: u64,
    ) -> Pedf {
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
        let next_rel =
            cpus.iter().map(|s| CachePadded::new(AtomicU64::new(s.lock_untraced().book.next_due()))).collect();
        Pedf { ranks, cpus, next_rel, n: params.len() }
    }

    fn entry(&self, j: Job) -> Entry {
        let primary = match &self.ranks {
            Some(r) => r[j.task as usize],
            None => j.deadline,
        };
        (primary, j.task, j.seq, j)
    }
}

impl Plugin for Pedf {
    fn name(&self) -> &'static str {
        if self.ranks.is_some() {
            "pfp"
        } else {
            "pedf"
        }
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
                ready.push(self.entry(j));
            }
        });
        self.next_rel[domain].store(st.book.next_due(), Ordering::Release);
        if let Some(top) = st.ready.peek() {
            if !matches!(st.scheduled, Some(s) if top >= &self.entry(s)) {
                ctx.preempt(domain);
            }
        }
    }

    fn schedule(&self, ctx: &mut Ctx<'_>, prev: Prev) -> Option<Job> {
        let mut g = self.cpus[ctx.cpu].lock(ctx.trace);
        let st = &mut *g;
        match prev {
            Prev::Idle => {}
            Prev::Preempted(j) => st.ready.push(self.entry(j)),
            Prev::Completed(j) => {
                if let Some(next) = st.book.complete(&j) {
                    st.ready.push(self.entry(next));
                }
            }
        }
        st.scheduled = st.ready.pop().map(|e| e.3);
        ctx.ack_resched();
        st.scheduled
    }

    fn accounting(&self) -> Accounting {
        let mut released = vec![0; self.n];
        let mut completed = vec![0; self.n];
        let mut consistent = Ok(());
        for (c, s) in self.cpus.iter().enumerate() {
            let st = s.lock_untraced();
            let keys: Vec<Job> = st.ready.keys().into_iter().map(|e| e.3).collect();
            for &t in &st.tasks {
                released[t] = st.book.released()[t];
                completed[t] = st.book.completed()[t];
                if let Some(h) = st.book.head(t) {
                    if st.scheduled != Some(h) && !keys.contains(&h) && consistent.is_ok() {
                        consistent = Err(format!("{}: job {}:{} of CPU {c} is lost", self.name(), h.task, h.seq));
                    }
                }
            }
        }
        Accounting { released, completed, consistent }
    }
}
