//! Verdicts and work bounds shared by all tests.

pub use rtsched_model::Stop;

/// The answer of a schedulability test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The test proves the task set schedulable.
    Schedulable,
    /// The test cannot prove it (for exact tests: the task set is unschedulable).
    NotSchedulable,
    /// The test hit its work bound ([`Limits`]) before deciding.
    GaveUp,
}

impl Verdict {
    pub fn is_schedulable(self) -> bool {
        self == Verdict::Schedulable
    }

    /// `Some(bool)` when decided, `None` when the test gave up.
    pub fn decided(self) -> Option<bool> {
        match self {
            Verdict::Schedulable => Some(true),
            Verdict::NotSchedulable => Some(false),
            Verdict::GaveUp => None,
        }
    }

    pub fn from_bool(b: bool) -> Verdict {
        if b {
            Verdict::Schedulable
        } else {
            Verdict::NotSchedulable
        }
    }
}

/// Bounds on work for tests that are pseudo-polynomial or iterative.
///
/// A *step* costs at most `O(n)` (one demand point, one fixed-point iteration, one task's
/// interference sum), so `max_steps` bounds a test's time by `O(max_steps · n)`. Every step
/// also polls `stop`: once it is requested the test answers [`Verdict::GaveUp`] at once
/// (the caller that requested it discards that answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Most demand points (or fixed-point iterations) one test may evaluate for one task set.
    pub max_steps: u64,
    /// Longest analysis interval (ns) a test may examine (e.g. QPA's bound, BAR's `A_k`).
    pub max_interval: u64,
    /// Ends the work early when requested (Ctrl-C); never by default.
    pub stop: Stop,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_steps: 1_000_000, max_interval: 1 << 53, stop: Stop::never() }
    }
}

impl Limits {
    /// Default limits with `max_steps` steps.
    pub fn steps(max_steps: u64) -> Limits {
        Limits { max_steps, ..Limits::default() }
    }

    /// Whether the work must end now: `steps` is past `max_steps` or a stop was requested.
    #[inline(always)]
    pub fn exhausted(&self, steps: u64) -> bool {
        steps > self.max_steps || self.stop.requested()
    }
}
