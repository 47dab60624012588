//! Long Rust calls that Ctrl-C stops within a fraction of a second, keeping what is done.
//!
//! Python runs signal handlers only in the main thread and only between bytecodes, so a Rust
//! call that holds the thread (even with the GIL released) would see Ctrl-C only when it
//! returns — 57 s later in the 100,000-set batch of issue 14. [`run`] runs the work on the
//! rayon pool while the calling thread waits on a channel with the GIL released, waking every
//! 50 ms to run Python's signal handlers, forward progress and write the work's messages (in
//! order, e.g. chunks of output lines). On `KeyboardInterrupt` it requests the [`Stop`] the
//! work polls (every analysis step, every set of a batch, every simulated instant), waits for
//! the work to wind down (milliseconds) and hands back its partial result together with the
//! interrupt, so that the caller can keep what is done before re-raising.

use crate::RtschedError;
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use rtsched_model::Stop;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

/// How often the waiting thread runs Python's signal handlers and the progress callback.
const POLL: Duration = Duration::from_millis(50);

enum Msg<M, R> {
    Item(M),
    Done(std::thread::Result<R>),
}

/// A work's way to send messages to the waiting (GIL-holding) thread.
pub(crate) struct Outbox<'a, M, R>(&'a Sender<Msg<M, R>>);

impl<M, R> Outbox<'_, M, R> {
    /// Sends `m` to [`run`]'s `on_message`; `false` if the receiver has gone (stop then).
    pub fn send(&self, m: M) -> bool {
        self.0.send(Msg::Item(m)).is_ok()
    }
}

/// The outcome of [`run`]: the work's result, and the `KeyboardInterrupt` if Ctrl-C stopped it.
pub(crate) struct Finished<R> {
    pub result: R,
    pub interrupt: Option<PyErr>,
}

/// Runs `work` (see the module doc). `on_message` gets the work's messages in order and
/// `on_tick` runs every [`POLL`] (progress); an error from either requests `stop` and is
/// returned once the work has ended. A panic in the work becomes an `RtschedError` that says
/// it is a bug. Signal handlers that raise something other than `KeyboardInterrupt` (a
/// `SystemExit`, say) stop the work too, and their exception is returned.
pub(crate) fn run<M: Send, R: Send>(
    py: Python<'_>,
    stop: &Stop,
    work: impl FnOnce(&Outbox<'_, M, R>) -> R + Send,
    mut on_message: impl FnMut(Python<'_>, M) -> PyResult<()>,
    mut on_tick: impl FnMut(Python<'_>) -> PyResult<()>,
) -> PyResult<Finished<R>> {
    let (tx, rx) = channel::<Msg<M, R>>();
    let mut failed: Option<PyErr> = None;
    let mut interrupt: Option<PyErr> = None;
    let outcome = rayon::in_place_scope(|scope| {
        scope.spawn(move |_| {
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&Outbox(&tx))));
            let _ = tx.send(Msg::Done(out));
        });
        let mut rx: Receiver<Msg<M, R>> = rx;
        loop {
            // The receiver is moved through (it is Send, not Sync).
            let (got, back) = py.allow_threads(move || (rx.recv_timeout(POLL), rx));
            rx = back;
            match got {
                Ok(Msg::Item(m)) => {
                    if failed.is_none() {
                        if let Err(e) = on_message(py, m) {
                            stop.request();
                            failed = Some(e);
                        }
                    }
                }
                Ok(Msg::Done(out)) => break out,
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        stop.request();
                        if e.is_instance_of::<PyKeyboardInterrupt>(py) {
                            interrupt.get_or_insert(e);
                        } else {
                            failed.get_or_insert(e);
                        }
                    }
                    if failed.is_none() && interrupt.is_none() {
                        if let Err(e) = on_tick(py) {
                            stop.request();
                            failed = Some(e);
                        }
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    break Err(Box::new("the work ended without a result") as Box<dyn std::any::Any + Send>)
                }
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    match outcome {
        Ok(result) => Ok(Finished { result, interrupt }),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(RtschedError::new_err(format!("internal error (a bug in rtsched, please report it): {msg}")))
        }
    }
}
