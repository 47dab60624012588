//! Stopping long work early (Ctrl-C), shared by the analysis, the simulator and the batch
//! drivers of the Python bindings.
//!
//! A [`Stop`] is a cheap, cloneable handle on one flag. Long loops poll
//! [`Stop::requested`] (a relaxed atomic load) once per step of their work bound and end
//! early when it is set; the caller, which set the flag, then discards what the interrupted
//! call returns (a test stopped early answers "gave up", never a verdict) and keeps what was
//! finished before. [`Stop::never`] (the default) is never requested and costs one branch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A handle on a stop flag (see the module doc). Two handles are equal when they share a flag.
#[derive(Debug, Clone, Default)]
pub struct Stop(Option<Arc<AtomicBool>>);

impl Stop {
    /// A new flag, not yet requested.
    pub fn new() -> Stop {
        Stop(Some(Arc::new(AtomicBool::new(false))))
    }

    /// A handle that is never requested.
    pub fn never() -> Stop {
        Stop(None)
    }

    /// Asks every holder of this flag to stop.
    pub fn request(&self) {
        if let Some(f) = &self.0 {
            f.store(true, Ordering::Relaxed);
        }
    }

    /// Whether a stop was requested.
    #[inline(always)]
    pub fn requested(&self) -> bool {
        match &self.0 {
            Some(f) => f.load(Ordering::Relaxed),
            None => false,
        }
    }
}

impl PartialEq for Stop {
    fn eq(&self, other: &Stop) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for Stop {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag() {
        let a = Stop::new();
        let b = a.clone();
        assert!(!b.requested());
        a.request();
        assert!(b.requested());
        assert_eq!(a, b);
        assert_ne!(a, Stop::new());
        let never = Stop::never();
        never.request();
        assert!(!never.requested());
        assert_eq!(never, Stop::default());
    }
}
