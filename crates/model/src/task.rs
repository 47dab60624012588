//! The sporadic task `(C, D, T)`, optionally self-suspending (the segmented model).

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
    /// The segmented self-suspension model: `None` for an ordinary task (one execution segment
    /// of `wcet`); otherwise execution and suspension segments alternating, whose execution
    /// segments sum to `wcet` ([`Segments`]).
    pub segments: Option<Box<Segments>>,
}

/// The most execution segments a self-suspending task may have (a bound on what a file can
/// make the simulator and the analyses allocate per task).
pub const MAX_SEGMENTS: usize = 4096;

/// The bounds of one suspension interval: a job suspends for at least `min` and at most `max`
/// ns. `min` is 0 unless a file says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SuspensionBound {
    pub min: Time,
    pub max: Time,
}

/// The segmented self-suspension model (e.g. Chen et al., "Many suspensions, many problems",
/// Real-Time Systems 2019, §2): every job runs `exec[0]`, suspends for at most `susp[0].max`,
/// runs `exec[1]`, ..., and finishes with `exec[k-1]`. `exec.len() == susp.len() + 1`.
/// Execution segments are upper bounds (their sum is the task's WCET `C`); suspension segments
/// have an upper bound and an optional lower bound.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Segments {
    pub exec: Vec<Time>,
    pub susp: Vec<SuspensionBound>,
}

impl Segments {
    /// Segments from the alternating list `[C_1, S_1, C_2, ..., C_k]`, each suspension given
    /// as its bounds; checked as [`Segments::validate`] does, except the sum against a WCET.
    pub fn new(exec: Vec<Time>, susp: Vec<SuspensionBound>) -> Result<Segments, ModelError> {
        let s = Segments { exec, susp };
        s.check_shape()?;
        Ok(s)
    }

    /// Total execution `sum C_j` (what the task's `wcet` must equal), exact.
    pub fn total_exec(&self) -> u128 {
        self.exec.iter().map(|&c| c as u128).sum()
    }

    /// S, the total suspension upper bound `sum S_j.max`, exact.
    pub fn total_suspension(&self) -> u128 {
        self.susp.iter().map(|s| s.max as u128).sum()
    }

    /// The total suspension lower bound `sum S_j.min`, exact.
    pub fn total_suspension_min(&self) -> u128 {
        self.susp.iter().map(|s| s.min as u128).sum()
    }

    /// Shape and per-segment bounds: `k >= 1` execution segments and `k - 1` suspensions,
    /// at most [`MAX_SEGMENTS`], every execution and suspension upper bound in
    /// `1 ..= MAX_TIME`, every lower bound at most its upper bound.
    fn check_shape(&self) -> Result<(), ModelError> {
        let bad = |reason: String| ModelError::field("segments", reason);
        if self.exec.is_empty() {
            return Err(bad("must hold at least one execution segment".into()));
        }
        if self.exec.len() != self.susp.len() + 1 {
            return Err(bad(format!(
                "must alternate execution and suspension and end with execution (an odd length), got {} entries",
                self.exec.len() + self.susp.len()
            )));
        }
        if self.exec.len() > MAX_SEGMENTS {
            return Err(bad(format!("{} execution segments exceed the bound of {MAX_SEGMENTS}", self.exec.len())));
        }
        for (j, &c) in self.exec.iter().enumerate() {
            let at = 2 * j;
            if c == 0 {
                return Err(bad(format!("entry {at} (execution): must be at least 1 ns, got 0")));
            }
            if c > MAX_TIME {
                return Err(bad(format!("entry {at} (execution): {c} ns exceeds the largest supported time 2^53 ns")));
            }
        }
        for (j, s) in self.susp.iter().enumerate() {
            let at = 2 * j + 1;
            if s.max == 0 {
                return Err(bad(format!("entry {at} (suspension): the upper bound must be at least 1 ns, got 0")));
            }
            if s.max > MAX_TIME {
                return Err(bad(format!(
                    "entry {at} (suspension): {} ns exceeds the largest supported time 2^53 ns",
                    s.max
                )));
            }
            if s.min > s.max {
                return Err(bad(format!(
                    "entry {at} (suspension): the lower bound {} ns exceeds the upper bound {} ns",
                    s.min, s.max
                )));
            }
        }
        if self.total_suspension() > MAX_TIME as u128 {
            return Err(bad("the total suspension exceeds the largest supported time 2^53 ns".into()));
        }
        Ok(())
    }

    /// Everything [`Segments::new`] checks, and that the execution segments sum to `wcet`.
    pub fn validate(&self, wcet: Time) -> Result<(), ModelError> {
        self.check_shape()?;
        let sum = self.total_exec();
        if sum != wcet as u128 {
            return Err(ModelError::field(
                "segments",
                format!("the execution segments sum to {sum} ns, but wcet is {wcet} ns (they must be equal)"),
            ));
        }
        Ok(())
    }
}

impl Task {
    /// A validated task; the error names the field.
    pub fn new(wcet: Time, deadline: Time, period: Time) -> Result<Task, ModelError> {
        let t = Task { name: None, wcet, deadline, period, segments: None };
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

    /// The same task with self-suspension segments (validated: they must sum to `wcet`).
    /// Segments of one execution segment and no suspension are the plain task (`None`).
    pub fn with_segments(mut self, segments: Segments) -> Result<Task, ModelError> {
        segments.validate(self.wcet).map_err(|mut e| {
            e.task_name = self.name.clone();
            e
        })?;
        self.segments = if segments.susp.is_empty() { None } else { Some(Box::new(segments)) };
        Ok(self)
    }

    /// Whether jobs of this task self-suspend (a suspension upper bound above 0).
    pub fn is_self_suspending(&self) -> bool {
        self.segments.as_ref().is_some_and(|s| !s.susp.is_empty())
    }

    /// S_i, the total suspension upper bound of a job (0 for an ordinary task).
    pub fn suspension(&self) -> Time {
        // validate() bounds the total by MAX_TIME.
        self.segments.as_ref().map_or(0, |s| s.total_suspension() as Time)
    }

    /// The execution segments (`[wcet]` for an ordinary task).
    pub fn exec_segments(&self) -> Vec<Time> {
        self.segments.as_ref().map_or_else(|| vec![self.wcet], |s| s.exec.clone())
    }

    /// The suspension-oblivious view (suspension counted as execution): `C' = C + S`, no
    /// segments. An ordinary task is returned unchanged. Errors when `C + S` exceeds
    /// [`MAX_TIME`] (naming the field `segments`).
    pub fn suspension_oblivious(&self) -> Result<Task, ModelError> {
        let c = self.wcet as u128 + self.suspension() as u128;
        if c > MAX_TIME as u128 {
            return Err(
                self.err("segments", "wcet plus the total suspension exceeds the largest supported time 2^53 ns")
            );
        }
        Ok(Task {
            name: self.name.clone(),
            wcet: c as Time,
            deadline: self.deadline,
            period: self.period,
            segments: None,
        })
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
        if let Some(s) = &self.segments {
            s.validate(self.wcet).map_err(|mut e| {
                e.task_name = self.name.clone();
                e
            })?;
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

    fn sb(min: Time, max: Time) -> SuspensionBound {
        SuspensionBound { min, max }
    }

    #[test]
    fn segments_validate_and_derive_the_suspension() {
        let t = Task::new(5, 20, 20).unwrap().named("a");
        let s = t.clone().with_segments(Segments::new(vec![2, 3], vec![sb(1, 4)]).unwrap()).unwrap();
        assert!(s.is_self_suspending());
        assert_eq!(s.suspension(), 4);
        assert_eq!(s.exec_segments(), vec![2, 3]);
        let o = s.suspension_oblivious().unwrap();
        assert_eq!((o.wcet, o.deadline, o.period, o.segments.is_none()), (9, 20, 20, true));
        assert_eq!(t.suspension(), 0);
        assert_eq!(t.exec_segments(), vec![5]);
        assert_eq!(t.suspension_oblivious().unwrap(), t);
        // One execution segment is the plain task.
        assert_eq!(t.clone().with_segments(Segments::new(vec![5], vec![]).unwrap()).unwrap(), t);
        let e = t.clone().with_segments(Segments::new(vec![2, 2], vec![sb(0, 4)]).unwrap()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "field 'segments': the execution segments sum to 4 ns, but wcet is 5 ns (they must be equal)"
        );
        assert_eq!(e.task_name.as_deref(), Some("a"));
        let e = Segments::new(vec![2, 3], vec![]).unwrap_err();
        assert!(e.to_string().contains("odd length"), "{e}");
        let e = Segments::new(vec![2, 0], vec![sb(0, 1)]).unwrap_err();
        assert!(e.to_string().contains("entry 2 (execution): must be at least 1 ns"), "{e}");
        let e = Segments::new(vec![2, 3], vec![sb(0, 0)]).unwrap_err();
        assert!(e.to_string().contains("entry 1 (suspension): the upper bound must be at least 1 ns"), "{e}");
        let e = Segments::new(vec![2, 3], vec![sb(5, 4)]).unwrap_err();
        assert!(e.to_string().contains("lower bound 5 ns exceeds the upper bound 4 ns"), "{e}");
        let e = Segments::new(vec![], vec![]).unwrap_err();
        assert!(e.to_string().contains("at least one execution segment"), "{e}");
        let e = Segments::new(vec![1; MAX_SEGMENTS + 1], vec![sb(0, 1); MAX_SEGMENTS]).unwrap_err();
        assert!(e.to_string().contains("exceed the bound"), "{e}");
        // A struct built by hand is checked by validate().
        let mut bad = t.clone();
        bad.segments = Some(Box::new(Segments { exec: vec![1, 1], susp: vec![sb(0, 1)] }));
        assert!(bad.validate().unwrap_err().to_string().contains("sum to 2 ns"));
        let big = Task::new(MAX_TIME - 1, MAX_TIME, MAX_TIME).unwrap();
        let big = big.with_segments(Segments::new(vec![1, MAX_TIME - 2], vec![sb(0, 5)]).unwrap()).unwrap();
        assert!(big.suspension_oblivious().unwrap_err().to_string().contains("'segments'"));
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
