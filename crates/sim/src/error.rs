//! The simulator's error: invalid input, or a failed invariant of the simulator itself.

use rtsched_model::ModelError;
use std::fmt;

/// Why a simulation did not produce a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimError {
    /// Invalid input (a parameter, a partition, a placement, a bound hit); the error names the
    /// task and the field.
    Input(ModelError),
    /// A check of the simulator's own invariants failed (an inconsistent record, a policy that
    /// linked a job that is not ready, an accounting mismatch): a bug in rtsched, not in the
    /// input. `Display` says so and asks for a report.
    Internal(String),
}

impl SimError {
    /// A failed invariant, described by `what`.
    pub fn internal(what: impl Into<String>) -> SimError {
        SimError::Internal(what.into())
    }

    /// Whether this is a failed invariant (a bug) rather than invalid input.
    pub fn is_internal(&self) -> bool {
        matches!(self, SimError::Internal(_))
    }

    /// The input error, when the input was at fault.
    pub fn input(&self) -> Option<&ModelError> {
        match self {
            SimError::Input(e) => Some(e),
            SimError::Internal(_) => None,
        }
    }
}

impl From<ModelError> for SimError {
    fn from(e: ModelError) -> SimError {
        SimError::Input(e)
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Input(e) => e.fmt(f),
            SimError::Internal(what) => {
                write!(f, "internal error: {what} (a bug in the rtsched simulator, not in the input; please report it)")
            }
        }
    }
}

impl std::error::Error for SimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SimError::Input(e) => Some(e),
            SimError::Internal(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_and_internal_errors_read_differently() {
        let input = SimError::from(ModelError::field("m", "must be in 1..=65536, got 0"));
        assert!(!input.is_internal());
        assert_eq!(input.to_string(), "field 'm': must be in 1..=65536, got 0");
        assert_eq!(input.input().and_then(|e| e.field.as_deref()), Some("m"));
        let bug = SimError::internal("invariant violated at 5 ns: a job runs on two CPUs");
        assert!(bug.is_internal() && bug.input().is_none());
        let text = bug.to_string();
        assert!(text.starts_with("internal error: invariant violated at 5 ns"), "{text}");
        assert!(text.ends_with("please report it)"), "{text}");
    }
}
