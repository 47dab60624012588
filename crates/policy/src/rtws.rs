//! RTWS, Real-Time Work-Stealing: global EDF for jobs plus priority-aware work stealing for
//! the threads that fork-join jobs generate (seed 003, *RTWS: Real-Time Work-Stealing*, §IV
//! Definitions 1–2 and §V rules A–F). A pure state machine: the driver (crates/sim `rtws`)
//! owns time, thread costs and the fork-join structure and tells this policy when a CPU
//! forks a region, when a job arrives, and when a CPU's thread stops; the policy answers
//! what each CPU runs next.
//!
//! Entities: [`Work::Start`] is a job that has not forked its first region yet (what a
//! released job is in the global queue); [`Work::Thread`] is a thread with an [`Origin`].
//! Priorities are the one order [`Prio`] (absolute deadline, task index, job number); a
//! thread inherits its job's priority ("threads inherit the parent's deadline", §III).
//!
//! Interpretations (each is a reading of the text, see `docs/rtws.md`):
//! * a region of one thread is the job itself ("job"); a region of two or more threads
//!   forks "locally generated" threads;
//! * a deque's *bottom* is its back: a fork pushes threads `0, 1, ..` at the bottom, the
//!   owner pops the bottom (thread `k-1` first), a thief takes the top (thread 0 first) —
//!   consistent with Fig. 2, where the thief takes `w_2^1`;
//! * Definition 1's "n_{p_i} ≥ 1" counts threads *waiting* in `p_i`'s local queue;
//! * preemption happens only when a job arrives (release, or becomes ready after its
//!   predecessor), as §V describes; the preempted CPU is the one running the lowest-priority
//!   entity, ties to the highest CPU index;
//! * the global queue breaks `Prio` ties FIFO (§V: "ties broken by FIFO").

use crate::prio::Prio;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A thread as the driver numbers it (opaque to the policy).
pub type ThreadId = u32;

/// Where a running or queued thread came from; decides where it goes when preempted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// The job itself (a one-thread region): preempted, it goes back to the global queue.
    Job,
    /// A thread generated on this CPU: preempted, it goes back to its deque on this CPU.
    Local,
    /// A thread taken from another CPU's deque: preempted, it goes to the global queue.
    Stolen,
}

impl Origin {
    /// The origin of the threads of a forked region: a region of one thread is the job
    /// itself, a region of two or more threads generates local threads (Rule B).
    #[inline]
    pub fn of_region(threads: usize) -> Origin {
        if threads == 1 {
            Origin::Job
        } else {
            Origin::Local
        }
    }

    /// Where an entity of this origin goes when an arriving job preempts it — §V: "(i) the job
    /// is enqueued back in the global queue; (ii) the locally generated thread is enqueued back
    /// in the respective deque in the core's local priority queue; and (iii) a previously
    /// stolen thread is enqueued in the global queue"; Rule F: "opposed to a locally generated
    /// thread, a stolen thread preempted by a new arriving job with a shorter deadline is
    /// enqueued in the global queue and not back in the respective deque".
    #[inline]
    pub fn requeue(self) -> Requeue {
        match self {
            Origin::Job | Origin::Stolen => Requeue::Global,
            Origin::Local => Requeue::LocalBottom,
        }
    }
}

/// Where a preempted entity goes ([`Origin::requeue`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requeue {
    /// The global EDF queue.
    Global,
    /// The bottom of its deque on the preempted CPU (resumed first by Rule C).
    LocalBottom,
}

/// Rule E's deterministic victim choice. Definition 1: the processors eligible for stealing
/// are the busy ones with at least one thread waiting in their local priority queue;
/// Definition 2: the thief takes the earliest-deadline thread among the tops of their
/// highest-priority non-empty deques, "the first thread on the list" on ties (here: the
/// `Prio` order, then the lowest CPU index).
///
/// `views` gives, per CPU, `(cpu, busy, top)`: whether it runs something and the priority of
/// its highest-priority non-empty deque (`None`: nothing waits). The thief itself is skipped.
/// Returns the victim and the priority it offers.
pub fn choose_victim(
    thief: usize,
    views: impl IntoIterator<Item = (usize, bool, Option<Prio>)>,
) -> Option<(usize, Prio)> {
    let mut best: Option<(Prio, usize)> = None;
    for (q, busy, top) in views {
        if q == thief || !busy {
            continue;
        }
        if let Some(p) = top {
            if best.is_none_or(|(bp, bq)| p < bp || (p == bp && q < bq)) {
                best = Some((p, q));
            }
        }
    }
    best.map(|(p, q)| (q, p))
}

/// §V's preemption rule: "whenever a new job is released and enqueued in the global EDF queue
/// and all the cores are busy, the scheduler verifies if the core executing the lowest
/// priority job/thread among all the executing jobs/threads has a higher deadline than the
/// newly arrived job. If this condition is true, the job/thread is preempted."
///
/// `running[c]` is the priority of what CPU `c` runs (`None`: idle). Returns the CPU to
/// preempt: none if a CPU is idle (it takes the job by Rule D) or if the lowest-priority
/// running entity is not strictly lower than `prio`; ties among the lowest go to the highest
/// CPU index.
pub fn preemption_target(prio: Prio, running: impl IntoIterator<Item = Option<Prio>>) -> Option<usize> {
    let mut low: Option<(Prio, usize)> = None;
    for (c, r) in running.into_iter().enumerate() {
        let r = r?;
        if low.is_none_or(|(lp, _)| r >= lp) {
            low = Some((r, c));
        }
    }
    match low {
        Some((lp, c)) if prio < lp => Some(c),
        _ => None,
    }
}

/// A unit of work in the global queue or handed to a CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Work {
    /// The job has not forked its first region yet: the CPU that takes it forks it.
    Start,
    Thread(ThreadId, Origin),
}

/// How a CPU found its work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Rule C: the bottom of its own highest-priority non-empty deque.
    Local,
    /// Rule D: the global EDF queue.
    Global,
    /// Rule E: the top of `victim`'s highest-priority non-empty deque.
    Steal { victim: u32 },
}

/// What [`Rtws::select`] hands a CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick {
    pub prio: Prio,
    pub work: Work,
    pub source: Source,
}

/// The thread a CPU runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Running {
    pub prio: Prio,
    pub thread: ThreadId,
    pub origin: Origin,
}

/// What an arriving job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// The job goes to `cpu` now (whose thread `preempted` was moved to the global queue or
    /// back to its deque); the driver forks its first region there.
    Run { cpu: u32, preempted: Option<Running> },
    /// The job waits in the global queue.
    Queued,
}

/// The RTWS state: one global queue, one priority queue of deques per CPU, what runs where.
#[derive(Debug, Clone)]
pub struct Rtws {
    global: BTreeSet<(Prio, u64, Work)>,
    fifo: u64,
    local: Vec<BTreeMap<Prio, VecDeque<(ThreadId, Origin)>>>,
    waiting: Vec<usize>,
    running: Vec<Option<Running>>,
}

impl Rtws {
    pub fn new(m: usize) -> Rtws {
        Rtws {
            global: BTreeSet::new(),
            fifo: 0,
            local: vec![BTreeMap::new(); m],
            waiting: vec![0; m],
            running: vec![None; m],
        }
    }

    pub fn m(&self) -> usize {
        self.running.len()
    }

    /// The thread `cpu` runs.
    pub fn running(&self, cpu: usize) -> Option<Running> {
        self.running.get(cpu).copied().flatten()
    }

    /// Threads waiting in `cpu`'s local priority queue.
    pub fn waiting_local(&self, cpu: usize) -> usize {
        self.waiting.get(cpu).copied().unwrap_or(0)
    }

    /// Entries waiting in the global queue.
    pub fn waiting_global(&self) -> usize {
        self.global.len()
    }

    /// Threads waiting anywhere (global queue entries plus every local deque).
    pub fn waiting_total(&self) -> usize {
        self.global.len() + self.waiting.iter().sum::<usize>()
    }

    fn push_global(&mut self, prio: Prio, work: Work) {
        self.global.insert((prio, self.fifo, work));
        self.fifo += 1;
    }

    /// A job running on `cpu` forks a region of `threads` (in thread order).
    ///
    /// Rule B: "whenever a job of a task τ_i being executed at a processor p enters a parallel
    /// region and dynamically generates a set of parallel threads, those threads are not pushed
    /// to the global EDF queue but instead maintained in the processor's local priority queue".
    /// Rule C: "each entry in the processor's local priority queue is a deque, holding one or
    /// more threads of the same priority" — here, the threads of one job.
    pub fn fork(&mut self, cpu: usize, prio: Prio, threads: &[ThreadId]) {
        if cpu >= self.m() || threads.is_empty() {
            return;
        }
        let origin = Origin::of_region(threads.len());
        let dq = self.local[cpu].entry(prio).or_default();
        dq.extend(threads.iter().map(|&t| (t, origin)));
        self.waiting[cpu] += threads.len();
    }

    /// The thread on `cpu` completed (or the driver otherwise takes it off the CPU).
    pub fn stop(&mut self, cpu: usize) -> Option<Running> {
        self.running.get_mut(cpu).and_then(Option::take)
    }

    /// An idle `cpu` looks for work (precondition: it runs nothing; otherwise `None`). A
    /// [`Work::Start`] pick is not running yet: the driver forks the job's first region on
    /// `cpu` and calls `select` again. A thread pick is running on `cpu` on return.
    pub fn select(&mut self, cpu: usize) -> Option<Pick> {
        if cpu >= self.m() || self.running[cpu].is_some() {
            return None;
        }
        // Rule C: "at any time, a processor first looks into its local queue, picking the
        // bottom thread from the highest-priority non-empty deque."
        if let Some(mut entry) = self.local[cpu].first_entry() {
            let prio = *entry.key();
            let (t, origin) = entry.get_mut().pop_back().expect("empty deques are removed");
            if entry.get().is_empty() {
                entry.remove();
            }
            self.waiting[cpu] -= 1;
            self.running[cpu] = Some(Running { prio, thread: t, origin });
            return Some(Pick { prio, work: Work::Thread(t, origin), source: Source::Local });
        }
        // Rule D: "if the local queue is empty and there is no thread to pick, then a
        // processor searches for jobs in the global EDF queue."
        if let Some((prio, _, work)) = self.global.pop_first() {
            if let Work::Thread(t, origin) = work {
                self.running[cpu] = Some(Running { prio, thread: t, origin });
            }
            return Some(Pick { prio, work, source: Source::Global });
        }
        // Rule E: "still, if there is no eligible job in the global EDF queue, the processor
        // will steal the earliest deadline eligible thread from the top of the
        // deterministically selected busy processor's deque." Definition 1: eligible
        // processors have n_p >= 1 waiting threads; Definition 2: the earliest-deadline thread
        // among the tops of their highest-priority deques, the first processor on ties.
        let views = (0..self.m()).map(|q| {
            let top = if self.waiting[q] > 0 { self.local[q].first_key_value().map(|(&p, _)| p) } else { None };
            (q, self.running[q].is_some(), top)
        });
        let best = choose_victim(cpu, views).map(|(q, p)| (p, q));
        let (prio, q) = best?;
        let mut entry = self.local[q].first_entry().expect("eligible victim has a deque");
        let (t, _) = entry.get_mut().pop_front().expect("empty deques are removed");
        if entry.get().is_empty() {
            entry.remove();
        }
        self.waiting[q] -= 1;
        self.running[cpu] = Some(Running { prio, thread: t, origin: Origin::Stolen });
        Some(Pick { prio, work: Work::Thread(t, Origin::Stolen), source: Source::Steal { victim: q as u32 } })
    }

    /// A job of priority `prio` arrives (is released, or becomes ready when its predecessor
    /// completes). Rule A: "a single global ready queue exists in the system, ordered by
    /// non-decreasing absolute deadlines." The driver lets idle CPUs select (Rule D may give
    /// them this job), then calls [`Rtws::preempt_check`].
    pub fn release(&mut self, prio: Prio) {
        self.push_global(prio, Work::Start);
    }

    /// §V: "whenever a new job is released and enqueued in the global EDF queue and all the
    /// cores are busy, the scheduler verifies if the core executing the lowest priority
    /// job/thread among all the executing jobs/threads has a higher deadline than the newly
    /// arrived job. If this condition is true, the job/thread is preempted." If the job
    /// `prio` still waits unstarted in the global queue, all CPUs are busy and the lowest
    /// running entity has lower priority, that entity is preempted (and queued per (i)–(iii)
    /// and Rule F) and the job is removed from the global queue: [`Arrival::Run`] tells the
    /// driver to fork it on that CPU. Otherwise [`Arrival::Queued`].
    pub fn preempt_check(&mut self, prio: Prio) -> Arrival {
        let waiting = self.global.range((prio, 0, Work::Start)..).next().copied();
        let Some(entry @ (p, _, Work::Start)) = waiting else {
            return Arrival::Queued;
        };
        if p != prio {
            return Arrival::Queued;
        }
        let Some(c) = preemption_target(prio, self.running.iter().map(|r| r.map(|r| r.prio))) else {
            return Arrival::Queued;
        };
        self.global.remove(&entry);
        let r = self.running[c].take().expect("busy cpu");
        match r.origin.requeue() {
            // (i), (iii) and Rule F: a job or a stolen thread goes to the global queue.
            Requeue::Global => self.push_global(r.prio, Work::Thread(r.thread, r.origin)),
            // (ii): a locally generated thread goes back to the bottom of its deque (resumed
            // first by Rule C).
            Requeue::LocalBottom => {
                self.local[c].entry(r.prio).or_default().push_back((r.thread, Origin::Local));
                self.waiting[c] += 1;
            }
        }
        Arrival::Run { cpu: c as u32, preempted: Some(r) }
    }

    /// Rule C alone: if `cpu` is idle and its local queue is not empty, it picks the bottom
    /// thread of its highest-priority deque (what a CPU does the moment its thread ends).
    pub fn select_local(&mut self, cpu: usize) -> Option<Pick> {
        if self.waiting.get(cpu).copied().unwrap_or(0) == 0 {
            return None;
        }
        self.select(cpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(key: u64, task: u32) -> Prio {
        Prio { key, task, job: 0 }
    }

    /// Release `prio`, let `cpu` take it from the global queue and fork `threads` there.
    fn start(r: &mut Rtws, cpu: usize, prio: Prio, threads: &[ThreadId]) {
        r.release(prio);
        assert_eq!(r.select(cpu).unwrap(), Pick { prio, work: Work::Start, source: Source::Global });
        r.fork(cpu, prio, threads);
    }

    #[test]
    fn rules_c_d_e_in_order() {
        let mut r = Rtws::new(2);
        start(&mut r, 0, p(10, 0), &[1, 2, 3]);
        // Rule C: the bottom thread (3) on the owner.
        assert_eq!(r.select(0).unwrap().work, Work::Thread(3, Origin::Local));
        start(&mut r, 1, p(20, 1), &[7]);
        assert_eq!(r.select(1).unwrap().work, Work::Thread(7, Origin::Job));
        // Both busy; a job of deadline 15 preempts the lowest (the job of deadline 20).
        r.release(p(15, 2));
        let a = r.preempt_check(p(15, 2));
        assert_eq!(
            a,
            Arrival::Run { cpu: 1, preempted: Some(Running { prio: p(20, 1), thread: 7, origin: Origin::Job }) }
        );
        r.fork(1, p(15, 2), &[8, 9]);
        assert_eq!(
            r.select(1).unwrap(),
            Pick { prio: p(15, 2), work: Work::Thread(9, Origin::Local), source: Source::Local }
        );
        // Job (20,1) waits globally; thread 8 on CPU 1 and 1, 2 on CPU 0 wait locally.
        assert_eq!((r.waiting_global(), r.waiting_local(0), r.waiting_local(1)), (1, 2, 1));
        r.stop(0);
        assert_eq!(r.select_local(0).unwrap().work, Work::Thread(2, Origin::Local));
        r.stop(0);
        assert_eq!(r.select(0).unwrap().work, Work::Thread(1, Origin::Local));
        r.stop(0);
        // Local empty: Rule D before Rule E (thread 8 waits on CPU 1, but the global job first).
        assert_eq!(r.select_local(0), None);
        assert_eq!(
            r.select(0).unwrap(),
            Pick { prio: p(20, 1), work: Work::Thread(7, Origin::Job), source: Source::Global }
        );
        r.stop(0);
        // Global empty: Rule E steals thread 8 from the top of CPU 1's deque.
        assert_eq!(
            r.select(0).unwrap(),
            Pick { prio: p(15, 2), work: Work::Thread(8, Origin::Stolen), source: Source::Steal { victim: 1 } }
        );
        assert_eq!(r.waiting_total(), 0);
        r.stop(0);
        assert_eq!(r.select(0), None);
    }

    #[test]
    fn victim_is_earliest_deadline_top_first_cpu_on_ties() {
        let mut r = Rtws::new(4);
        for c in 0..3u32 {
            let pr = p(30 - 10 * (c as u64 % 2), c);
            start(&mut r, c as usize, pr, &[10 * c, 10 * c + 1, 10 * c + 2]);
            r.select(c as usize).unwrap();
        }
        // CPUs 0 and 2 hold deadline-30 deques, CPU 1 a deadline-20 deque: steal from CPU 1's top.
        assert_eq!(
            r.select(3).unwrap(),
            Pick { prio: p(20, 1), work: Work::Thread(10, Origin::Stolen), source: Source::Steal { victim: 1 } }
        );
        r.stop(3);
        assert_eq!(r.select(3).unwrap().work, Work::Thread(11, Origin::Stolen));
        r.stop(3);
        // Now CPU 0 (30, task 0) beats CPU 2 (30, task 2) by the Prio tie-break.
        assert_eq!(r.select(3).unwrap().source, Source::Steal { victim: 0 });
    }

    #[test]
    fn preempted_threads_go_where_rule_f_says() {
        let mut r = Rtws::new(2);
        start(&mut r, 0, p(50, 0), &[1, 2]);
        r.select(0).unwrap(); // 2 local on CPU 0
        let s = r.select(1).unwrap(); // steals 1
        assert_eq!(s.work, Work::Thread(1, Origin::Stolen));
        // Arrival of deadline 10: lowest running are both (50,0): tie to the highest CPU (1).
        r.release(p(10, 1));
        assert_eq!(
            r.preempt_check(p(10, 1)),
            Arrival::Run { cpu: 1, preempted: Some(Running { prio: p(50, 0), thread: 1, origin: Origin::Stolen }) }
        );
        assert_eq!((r.waiting_global(), r.waiting_local(0)), (1, 0));
        r.fork(1, p(10, 1), &[5]);
        r.select(1).unwrap();
        // Arrival of deadline 5 preempts the local thread 2 on CPU 0: back to CPU 0's deque.
        r.release(p(5, 2));
        assert_eq!(
            r.preempt_check(p(5, 2)),
            Arrival::Run { cpu: 0, preempted: Some(Running { prio: p(50, 0), thread: 2, origin: Origin::Local }) }
        );
        assert_eq!((r.waiting_global(), r.waiting_local(0)), (1, 1));
        r.fork(0, p(5, 2), &[6]);
        r.select(0).unwrap();
        // A job of lower priority than everything running stays queued; so does a job already
        // taken or never released.
        r.release(p(60, 3));
        assert_eq!(r.preempt_check(p(60, 3)), Arrival::Queued);
        assert_eq!(r.preempt_check(p(1, 9)), Arrival::Queued);
        assert_eq!(r.preempt_check(p(5, 2)), Arrival::Queued);
        // Invalid calls are ignored.
        assert_eq!(r.select(9), None);
        assert_eq!(r.select(0), None);
        r.fork(9, p(1, 1), &[1]);
        assert_eq!(r.stop(9), None);
    }

    #[test]
    fn shared_rules_as_pure_functions() {
        // Definition 2: earliest top first; ties to the lowest CPU; the thief and idle CPUs skipped.
        let views =
            [(0, true, Some(p(5, 1))), (1, true, Some(p(3, 0))), (2, true, Some(p(3, 0))), (3, false, Some(p(1, 0)))];
        assert_eq!(choose_victim(0, views), Some((1, p(3, 0))));
        assert_eq!(choose_victim(1, views), Some((2, p(3, 0))));
        assert_eq!(choose_victim(0, [(0, true, Some(p(1, 0))), (1, true, None)]), None);
        // §V: no target while a CPU idles; the lowest running, ties to the highest index; strictly lower only.
        assert_eq!(preemption_target(p(1, 0), [Some(p(9, 0)), None]), None);
        assert_eq!(preemption_target(p(1, 0), [Some(p(9, 0)), Some(p(9, 0)), Some(p(4, 0))]), Some(1));
        assert_eq!(preemption_target(p(9, 0), [Some(p(9, 0)), Some(p(4, 0))]), None);
        // Where preempted entities go (§V (i)-(iii), Rule F).
        assert_eq!(Origin::Job.requeue(), Requeue::Global);
        assert_eq!(Origin::Stolen.requeue(), Requeue::Global);
        assert_eq!(Origin::Local.requeue(), Requeue::LocalBottom);
        assert_eq!((Origin::of_region(1), Origin::of_region(2)), (Origin::Job, Origin::Local));
    }
}
