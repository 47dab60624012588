//! Python bindings: the `rtsched._core` extension module.
//!
//! Everything here is glue: conversion of Python values to the model, and of results to
//! Python dicts. Invalid input raises `rtsched.RtschedError` (a `ValueError` subclass) with the
//! Rust message; a failed internal check (a simulator invariant, a caught panic: a bug in
//! rtsched, not in the input) raises `rtsched.InternalError` (a `RuntimeError` subclass) whose
//! message says so and asks for a report. Nothing panics across the boundary (calls are wrapped
//! in `catch_unwind`). Long calls release the GIL.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use rtsched_sim::SimError;

mod api;
mod batch;
mod convert;
mod dag;
mod interrupt;
mod model;
mod overheads;
mod partition;
mod push_pull;
mod run;
mod taskset;

mod sim;

mod repro;

create_exception!(_core, RtschedError, PyValueError, "Invalid input to rtsched (a ValueError).");
create_exception!(
    _core,
    InternalError,
    PyRuntimeError,
    "A bug in rtsched, not in the input: an internal check failed (please report it; a RuntimeError)."
);

/// Converts a model error into the Python exception.
pub(crate) fn err(e: rtsched_model::ModelError) -> PyErr {
    RtschedError::new_err(e.to_string())
}

/// Converts a runtime error: every kind raises `RtschedError` with the error's message (a
/// failed check of the runtime, `RunError::Internal`, included: as before the errors were typed).
pub(crate) fn run_err(e: rtsched_runtime::RunError) -> PyErr {
    RtschedError::new_err(e.to_string())
}

/// Converts a simulator error: invalid input raises `RtschedError`, a failed invariant
/// `InternalError`.
pub(crate) fn sim_err(e: SimError) -> PyErr {
    match e {
        SimError::Input(e) => err(e),
        internal @ SimError::Internal(_) => InternalError::new_err(internal.to_string()),
    }
}

/// `InternalError` for a bug found at the boundary (a panic, a result that cannot be encoded).
pub(crate) fn internal_err(what: impl std::fmt::Display) -> PyErr {
    InternalError::new_err(format!("internal error: {what} (a bug in rtsched, not in the input; please report it)"))
}

/// The message of a caught panic.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// Runs `f` with the GIL released and turns a panic into an exception.
pub(crate) fn guarded<T: Send>(py: Python<'_>, f: impl FnOnce() -> PyResult<T> + Send) -> PyResult<T> {
    py.allow_threads(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)))
        .unwrap_or_else(|p| Err(internal_err(panic_message(p.as_ref()))))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The classes live in `rtsched._core` (not `_core`), so that their instances pickle: an
    // error raised in a sweep's worker process reaches the parent as itself.
    for t in [m.py().get_type::<RtschedError>(), m.py().get_type::<InternalError>()] {
        t.setattr("__module__", "rtsched._core")?;
    }
    m.add("RtschedError", m.py().get_type::<RtschedError>())?;
    m.add("InternalError", m.py().get_type::<InternalError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_M", rtsched_model::MAX_M)?;
    m.add("MAX_TIME", rtsched_model::MAX_TIME)?;
    model::register(m)?;
    taskset::register(m)?;
    api::register(m)?;
    batch::register(m)?;
    run::register(m)?;
    partition::register(m)?;

    sim::register(m)?;
    repro::register(m)?;
    overheads::register(m)?;
    push_pull::register(m)?;
    dag::register(m)?;
    Ok(())
}
