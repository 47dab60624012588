//! The sporadic task `(C, D, T)`.

use crate::exact::{ratio, Interval, Rational};
use crate::time::{Time, MAX_TIME};
use crate::ModelError;

/// How a task's relative deadline relates to its period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeadlineKind {
    /// `D = T`
    Implicit,
    /// `D < T`
    Constrained,
    /// `D > T`
    Arbitrary,
}

/// A sporadic task: every job needs at most `wcet` ns of processor time, must finish within
/// `deadline` ns of its release, and jobs are released at least `period` ns apart (exactly
/// `period` apart when the task is run periodically).
///
/// A valid task has all three parameters in `1..=MAX_TIME`. `wcet > deadline` and
/// `wcet > period` are *valid* tasks (every test simply rejects them), so that analyses can be
/// asked about them and answer honestly.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Task {
    pub name: Option<String>,
    /// C, worst-case execution time (ns).
    pub wcet: Time,
    /// D, relative deadline (ns).
    pub deadline: Time,
    /// T, period or minimum inter-arrival time (ns).
    pub period: Time,
}

impl Task {
    /// A validated task; the error names the field.
    pub fn new(wcet: Time, deadline: Time, period: Time) -> Result<Task, ModelError> {
        let t = Task { name: None, wcet, deadline, period };
        t.validate()?;
        Ok(t)
    }

    /// An implicit-deadline task (`D = T`).
    pub fn implicit(wcet: Time, period: Time) -> Result<Task, ModelError> {
        Task::new(wcet, period, period)
    }

    /// Same task with a name.
    pub fn named(mut self, name: impl Into<String>) -> Task {
        self.name = Some(name.into());
        self
    }

    /// Checks every parameter; errors name the field (and the task's name, not its index: a
    /// [`crate::TaskSet`] adds the index).
    pub fn validate(&self) -> Result<(), ModelError> {
        if self.name.as_deref().is_some_and(|n| n.contains('\0')) {
            // A label for reports: a NUL would make text files look binary and break C tools.
            return Err(self.err("name", "must not contain a NUL character"));
        }
        for (field, v) in [("wcet", self.wcet), ("period", self.period), ("deadline", self.deadline)] {
            if v == 0 {
                return Err(self.err(field, "must be at least 1 ns, got 0"));
            }
            if v > MAX_TIME {
                return Err(
                    self.err(field, format!("{v} ns exceeds the largest supported time 2^53 ns (about 104 days)"))
                );
            }
        }
        Ok(())
    }

    fn err(&self, field: &str, reason: impl Into<String>) -> ModelError {
        let mut e = ModelError::field(field, reason);
        e.task_name = self.name.clone();
        e
    }

    pub fn deadline_kind(&self) -> DeadlineKind {
        use std::cmp::Ordering::*;
        match self.deadline.cmp(&self.period) {
            Equal => DeadlineKind::Implicit,
            Less => DeadlineKind::Constrained,
            Greater => DeadlineKind::Arbitrary,
        }
    }

    /// `min(D, T)`, the denominator of the density.
    pub fn min_dt(&self) -> Time {
        self.deadline.min(self.period)
    }

    /// Utilization `C/T` as a float, for reports and sampling only (never for verdicts).
    pub fn utilization_f64(&self) -> f64 {
        self.wcet as f64 / self.period as f64
    }

    /// Density `C/min(D,T)` as a float, for reports and ordering only.
    pub fn density_f64(&self) -> f64 {
        self.wcet as f64 / self.min_dt() as f64
    }

    /// Exact utilization `C/T`.
    pub fn utilization(&self) -> Rational {
        ratio(self.wcet as u128, self.period as u128)
    }

    /// Exact density `C/min(D,T)`.
    pub fn density(&self) -> Rational {
        ratio(self.wcet as u128, self.min_dt() as u128)
    }

    /// A rigorous enclosure of `C/T`.
    pub fn utilization_interval(&self) -> Interval {
        Interval::ratio(self.wcet as u128, self.period as u128)
    }

    /// A rigorous enclosure of `C/min(D,T)`.
    pub fn density_interval(&self) -> Interval {
        Interval::ratio(self.wcet as u128, self.min_dt() as u128)
    }

    /// Exact comparison of utilizations `C_a/T_a` vs `C_b/T_b` by cross-multiplication.
    pub fn cmp_utilization(&self, other: &Task) -> std::cmp::Ordering {
        (self.wcet as u128 * other.period as u128).cmp(&(other.wcet as u128 * self.period as u128))
    }

    /// Exact comparison of densities by cross-multiplication.
    pub fn cmp_density(&self, other: &Task) -> std::cmp::Ordering {
        (self.wcet as u128 * other.min_dt() as u128).cmp(&(other.wcet as u128 * self.min_dt() as u128))
    }

    /// Demand bound function: the most execution that jobs of this task with both release and
    /// deadline inside a window of length `t` can require,
    /// `dbf(t) = max(0, floor((t - D)/T) + 1) * C`. Exact in `u128`.
    pub fn dbf(&self, t: Time) -> u128 {
        if t < self.deadline {
            0
        } else {
            ((t - self.deadline) / self.period + 1) as u128 * self.wcet as u128
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_fields() {
        let e = Task::new(0, 10, 10).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("wcet"));
        let e = Task::new(1, 10, 0).unwrap_err();
        assert!(e.to_string().contains("'period'"), "{e}");
        let e = Task::new(1, MAX_TIME + 1, 10).unwrap_err();
        assert!(e.to_string().contains("'deadline'"), "{e}");
        assert!(Task::new(20, 10, 10).is_ok(), "C > D is a valid (unschedulable) task");
    }

    #[test]
    fn kinds_and_dbf() {
        let t = Task::new(2, 5, 10).unwrap();
        assert_eq!(t.deadline_kind(), DeadlineKind::Constrained);
        assert_eq!(t.dbf(4), 0);
        assert_eq!(t.dbf(5), 2);
        assert_eq!(t.dbf(14), 2);
        assert_eq!(t.dbf(15), 4);
        assert_eq!(Task::implicit(1, 3).unwrap().deadline_kind(), DeadlineKind::Implicit);
        assert_eq!(Task::new(1, 4, 3).unwrap().deadline_kind(), DeadlineKind::Arbitrary);
    }

    #[test]
    fn exact_orders() {
        let a = Task::implicit(1, 3).unwrap();
        let b = Task::implicit(333_333, 1_000_000).unwrap();
        assert_eq!(a.cmp_utilization(&b), std::cmp::Ordering::Greater);
        assert!(a.utilization() > b.utilization());
    }
}
