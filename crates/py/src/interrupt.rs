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
                            // Ctrl-C can surface inside the callback too.
                            if e.is_instance_of::<PyKeyboardInterrupt>(py) {
                                interrupt.get_or_insert(e);
                            } else {
                                failed = Some(e);
                            }
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

/// [`crate::guarded`] for long work that polls `stop` (a simulation, a partitioning): Ctrl-C
/// requests it, and the work's result — partial, ended early — comes back with `true`.
pub(crate) fn stoppable<T: Send>(
    py: Python<'_>,
    stop: &Stop,
    work: impl FnOnce() -> PyResult<T> + Send,
) -> PyResult<(T, bool)> {
    let fin = run(py, stop, |_: &Outbox<'_, (), PyResult<T>>| work(), |_, ()| Ok(()), |_| Ok(()))?;
    Ok((fin.result?, fin.interrupt.is_some()))
}

/// Where the batch paths write their output: a Python callable taking `bytes` (called once
/// per chunk), or an open file descriptor (an `int`, e.g. `sys.stdout.fileno()`), written
/// from Rust with `write_all`, which retries a write interrupted by a signal: Ctrl-C cannot
/// tear a line in half.
pub(crate) enum Sink {
    Call(PyObject),
    Fd(std::mem::ManuallyDrop<std::fs::File>),
}

impl Sink {
    pub(crate) fn new(obj: Option<PyObject>, py: Python<'_>) -> PyResult<Option<Sink>> {
        let Some(obj) = obj else { return Ok(None) };
        if let Ok(fd) = obj.extract::<i32>(py) {
            if fd < 0 {
                return Err(RtschedError::new_err(format!("argument 'write': not a file descriptor: {fd}")));
            }
            use std::os::fd::FromRawFd;
            // SAFETY: the caller passes a descriptor it keeps open for the whole call (the
            // process's stdout); ManuallyDrop never closes it, and only this call writes to it
            // meanwhile (Python's buffer was flushed before).
            let f = unsafe { std::fs::File::from_raw_fd(fd) };
            return Ok(Some(Sink::Fd(std::mem::ManuallyDrop::new(f))));
        }
        if !obj.bind(py).is_callable() {
            return Err(RtschedError::new_err("argument 'write': expected a function of bytes or a file descriptor"));
        }
        Ok(Some(Sink::Call(obj)))
    }

    pub(crate) fn write(&mut self, py: Python<'_>, bytes: &[u8]) -> PyResult<()> {
        match self {
            Sink::Call(f) => f.call1(py, (pyo3::types::PyBytes::new(py, bytes),)).map(|_| ()),
            Sink::Fd(f) => {
                use std::io::Write;
                py.allow_threads(|| (&**f).write_all(bytes)).map_err(|e| match e.kind() {
                    std::io::ErrorKind::BrokenPipe => pyo3::exceptions::PyBrokenPipeError::new_err(e.to_string()),
                    _ => RtschedError::new_err(format!("cannot write the output: {e}")),
                })
            }
        }
    }
}
