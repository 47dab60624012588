//! Verdicts and work bounds shared by all tests.

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most demand points (or fixed-point iterations) one test may evaluate for one task set.
    pub max_steps: u64,
    /// Longest analysis interval (ns) a test may examine (e.g. QPA's bound, BAR's `A_k`).
    pub max_interval: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_steps: 1_000_000, max_interval: 1 << 53 }
    }
}
