//! Python bindings: the `rtsched._core` extension module.
//!
//! Everything here is glue: conversion of Python values to the model, and of results to
//! Python dicts. Invalid input raises `rtsched.RtschedError` (a `ValueError` subclass) with the
//! Rust message; nothing panics across the boundary (calls are wrapped in `catch_unwind`, and a
//! caught panic becomes an `RtschedError` that says it is a bug). Long calls release the GIL.

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

mod api;
mod batch;
mod convert;
mod interrupt;
mod model;
mod report;
mod run;

mod sim;

mod repro;

create_exception!(_core, RtschedError, PyValueError, "Invalid input to rtsched (a ValueError).");

/// Converts a model error into the Python exception.
pub(crate) fn err(e: rtsched_model::ModelError) -> PyErr {
    RtschedError::new_err(e.to_string())
}

/// Runs `f` with the GIL released and turns a panic into an exception.
pub(crate) fn guarded<T: Send>(py: Python<'_>, f: impl FnOnce() -> PyResult<T> + Send) -> PyResult<T> {
    py.allow_threads(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(RtschedError::new_err(format!("internal error (a bug in rtsched, please report it): {msg}")))
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("RtschedError", m.py().get_type::<RtschedError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_M", rtsched_model::MAX_M)?;
    m.add("MAX_TIME", rtsched_model::MAX_TIME)?;
    model::register(m)?;
    api::register(m)?;
    batch::register(m)?;
    run::register(m)?;

    sim::register(m)?;
    repro::register(m)?;
    Ok(())
}
