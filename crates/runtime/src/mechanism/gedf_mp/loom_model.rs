//! The preemption/suspension race of RTAS 2014, §III-C operation (4), under the model checker
//! (loom 0.7; runs under plain `cargo test`, as the other loom models of this crate): two
//! clients, one DSP, the real pairs (`Pairs<Loom>`), the real mailbox (`Mailbox<Loom>`) and
//! the DSP's state machine ([`DspCore`]).
//!
//! Tasks X (deadline 5), J (40), A (30). Set-up (sequential): client `cx` runs J, client `ca`
//! runs A, X is suspended. Then concurrently:
//! * client `cx`: J suspends (`Pairs::suspend`, message `{suspend, cx, J}`), then it answers
//!   a request (`Pairs::pick`);
//! * the DSP: serves its mailbox once (it may or may not find the message yet), then X resumes
//!   by an external event and preempts the lowest-priority client — `cx`, as far as the DSP
//!   knows, since J's suspension may not have reached it — and then serves the mailbox until
//!   J's suspension has been handled.
//!
//! In the interleavings where X's preemption comes first, the suspension message names J but
//! the sender's link is X: the correct DSP discards J from its ready queue; the broken twin
//! (`naive_suspend`: "the sender became idle", so it unlinks the sender) unlinks X, which runs
//! there, and re-links the suspended J — the final check fails, and loom must find it.
//! Checked at the end (every message served, every client following its link): the DSP's
//! structures hold exactly the non-suspended pending jobs as G-EDF links them, client `cx`
//! runs X and `ca` runs A; and no client ever picks the suspended J.

use super::protocol::{DspCore, OP_SUSPEND};
use crate::mechanism::dispatch::pairs::Pairs;
use crate::mechanism::{Job, TaskParams};
use crate::queue::mailbox::{channel, Msg};
use crate::sync::loom_model::Loom;
use loom::thread;

fn leak<T>(t: T) -> &'static T {
    Box::leak(Box::new(t))
}

fn msg(op: u32, sender: usize, j: &Job) -> Msg {
    Msg { op, sender: sender as u32, task: j.task(), seq: j.seq(), stamp: 0 }
}

fn model(naive: bool) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(move || {
        let p = |d| TaskParams { deadline: d, period: 1000 };
        let mut core = DspCore::new(&[p(5), p(40), p(30)], 2, 0, 1_000_000);
        core.naive_suspend = naive;
        let pairs: &Pairs<Loom> = leak(Pairs::new(2, 3));
        let (mb, mut rx) = channel::<Loom>(4);
        // Set-up: X and A linked, J queued; X suspends, J takes its client.
        core.release_due(0, |_| ());
        core.enact(pairs, |_| ());
        let on = |core: &DspCore, t: u32| (0..2).find(|&c| core.linked(c).is_some_and(|l| l.task == t)).unwrap();
        let (cx, ca) = (on(&core, 0), on(&core, 2));
        let x = pairs.pick(cx, None, None).unwrap();
        let a = pairs.pick(ca, None, None).unwrap();
        pairs.suspend(cx, x, None);
        core.handle(&msg(OP_SUSPEND, cx, &x));
        core.enact(pairs, |_| ());
        let j = pairs.pick(cx, None, None).unwrap();
        assert_eq!((j.task(), a.task()), (1, 2));

        let client = {
            let mb = mb.clone();
            thread::spawn(move || {
                let n = pairs.suspend(cx, j, None);
                assert_ne!(n, Some(j), "a suspended job was picked");
                mb.push(msg(OP_SUSPEND, cx, &j));
                let n = pairs.pick(cx, None, None);
                assert_ne!(n, Some(j), "a suspended job was picked");
            })
        };
        // The DSP.
        let mut handled = 0;
        if let Some(m) = rx.pop() {
            core.handle(&m);
            core.enact(pairs, |_| ());
            handled += 1;
        }
        pairs.wake(&x);
        core.resumed(0, 0);
        core.enact(pairs, |_| ());
        while handled == 0 {
            match rx.pop() {
                Some(m) => {
                    core.handle(&m);
                    core.enact(pairs, |_| ());
                    handled += 1;
                }
                None => thread::yield_now(),
            }
        }
        client.join().unwrap();
        assert!(rx.pop().is_none());
        // Every client follows its link.
        let run = [pairs.pick(0, None, None), pairs.pick(1, None, None)];
        let sched = run.iter().flatten().copied();
        assert_eq!(core.check(sched), Ok(()), "the DSP's structures after the race");
        assert_eq!((run[cx], run[ca]), (Some(x), Some(a)), "X runs where it preempted J, A where it ran");
    });
}

#[test]
fn loom_a_suspension_racing_its_preemption_keeps_the_preempting_job() {
    model(false);
}

/// The broken twin: handling a suspension by unlinking the sender loses X in the race.
#[test]
#[should_panic(expected = "the DSP's structures after the race")]
fn loom_catches_a_suspension_that_unlinks_the_sender() {
    model(true);
}
