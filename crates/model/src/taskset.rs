//! Task sets and platforms.

use crate::exact::{self, Interval, Rational};
use crate::stop::Stop;
use crate::task::{DeadlineKind, Task};
use crate::time::Time;
use crate::ModelError;

/// The largest processor count rtsched accepts (`m`), everywhere: files, the command line,
/// the Python API. Checked before anything is allocated per processor, so a typo such as
/// `m = 1000000000` is a one-line error instead of an exhausted memory. Twice the largest
/// `NR_CPUS` Linux builds with (8,192), and far above any platform studied in the literature.
pub const MAX_M: u32 = 16_384;

/// Checks a processor count: `1 ..= MAX_M`. The error names the field `m`.
pub fn check_m(m: u64) -> Result<u32, ModelError> {
    if m == 0 || m > MAX_M as u64 {
        return Err(ModelError::field("m", format!("the number of processors must be in 1..={MAX_M}, got {m}")));
    }
    Ok(m as u32)
}

/// A platform of `m` identical processors (`1 <= m <= MAX_M`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Platform {
    pub m: u32,
}

impl Platform {
    pub fn new(m: u32) -> Result<Platform, ModelError> {
        Ok(Platform { m: check_m(m as u64)? })
    }
}

/// An ordered list of valid tasks. A task's index is its identity everywhere (results,
/// placements, traces) and the last tie-breaker of every priority order.
///
/// A set may carry one fixed-priority rank per task (the task-set file's `priority` fields,
/// docs/formats.md): smaller = higher priority, equal ranks allowed (ties by task index, as
/// every fixed-priority order here). They live beside the tasks, not on [`Task`]: they are a
/// property of the assignment, and a set built from tasks ([`TaskSet::new`]) has none.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct TaskSet {
    tasks: Vec<Task>,
    priorities: Option<Vec<u32>>,
}

impl TaskSet {
    /// Validates every task; the error names the offending task's index and field.
    pub fn new(tasks: Vec<Task>) -> Result<TaskSet, ModelError> {
        for (i, t) in tasks.iter().enumerate() {
            t.validate().map_err(|e| e.in_task(i, t.name.as_deref()))?;
        }
        Ok(TaskSet { tasks, priorities: None })
    }

    /// Builds from `(wcet, deadline, period)` triples.
    pub fn from_cdt(params: &[(Time, Time, Time)]) -> Result<TaskSet, ModelError> {
        TaskSet::new(
            params
                .iter()
                .map(|&(c, d, t)| Task { name: None, wcet: c, deadline: d, period: t, segments: None })
                .collect(),
        )
    }

    /// Builds implicit-deadline tasks from `(wcet, period)` pairs.
    pub fn from_ct(params: &[(Time, Time)]) -> Result<TaskSet, ModelError> {
        TaskSet::new(
            params.iter().map(|&(c, t)| Task { name: None, wcet: c, deadline: t, period: t, segments: None }).collect(),
        )
    }

    /// The same set with one fixed-priority rank per task (smaller = higher, ties by task
    /// index); an error naming the field `priority` when the count differs from the tasks'.
    pub fn with_priorities(mut self, ranks: Vec<u32>) -> Result<TaskSet, ModelError> {
        if ranks.len() != self.tasks.len() {
            return Err(ModelError::field(
                "priority",
                format!("{} priorities for {} tasks", ranks.len(), self.tasks.len()),
            ));
        }
        self.priorities = Some(ranks);
        Ok(self)
    }

    /// The same set without priorities.
    pub fn without_priorities(mut self) -> TaskSet {
        self.priorities = None;
        self
    }

    /// The fixed-priority ranks the set carries (one per task), if any.
    pub fn priorities(&self) -> Option<&[u32]> {
        self.priorities.as_deref()
    }

    /// Appends a task (validated; the error names its index and field). A set that carries
    /// priorities takes no task without one: [`TaskSet::with_priorities`] again instead.
    pub fn push(&mut self, task: Task) -> Result<(), ModelError> {
        task.validate().map_err(|e| e.in_task(self.tasks.len(), task.name.as_deref()))?;
        if self.priorities.is_some() {
            return Err(ModelError::field("priority", "the set has per-task priorities; this task has none")
                .in_task(self.tasks.len(), task.name.as_deref()));
        }
        self.tasks.push(task);
        Ok(())
    }

    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Task> {
        self.tasks.iter()
    }

    pub fn into_tasks(self) -> Vec<Task> {
        self.tasks
    }

    /// The most general deadline kind present (`Arbitrary` > `Constrained` > `Implicit`).
    pub fn deadline_kind(&self) -> DeadlineKind {
        let mut kind = DeadlineKind::Implicit;
        for t in &self.tasks {
            match t.deadline_kind() {
                DeadlineKind::Arbitrary => return DeadlineKind::Arbitrary,
                DeadlineKind::Constrained => kind = DeadlineKind::Constrained,
                DeadlineKind::Implicit => {}
            }
        }
        kind
    }

    /// Exact total utilization `sum C_i/T_i`, in lowest terms (for printing the fraction;
    /// reducing costs more than the sum: compare or round [`TaskSet::utilization_sum`]).
    pub fn utilization(&self) -> Rational {
        self.utilization_sum(&Stop::never()).expect("never stopped").reduced()
    }

    /// Exact total utilization, not in lowest terms ([`exact::sum_ratios`]), or `None` when
    /// `stop` was requested first.
    pub fn utilization_sum(&self, stop: &Stop) -> Option<Rational> {
        exact::sum_ratios(self.tasks.iter().map(|t| (t.wcet as u128, t.period as u128)), stop)
    }

    /// Exact total density `sum C_i/min(D_i,T_i)`, not in lowest terms ([`exact::sum_ratios`]).
    pub fn density(&self) -> Rational {
        exact::sum_ratios(self.tasks.iter().map(|t| (t.wcet as u128, t.min_dt() as u128)), &Stop::never())
            .expect("never stopped")
    }

    /// Rigorous enclosure of the total utilization.
    pub fn utilization_interval(&self) -> Interval {
        self.tasks.iter().fold(Interval::point(0.0), |acc, t| acc.add(t.utilization_interval()))
    }

    /// Rigorous enclosure of the total density.
    pub fn density_interval(&self) -> Interval {
        self.tasks.iter().fold(Interval::point(0.0), |acc, t| acc.add(t.density_interval()))
    }

    /// Total utilization as a float, for reports only.
    pub fn utilization_f64(&self) -> f64 {
        self.tasks.iter().map(Task::utilization_f64).sum()
    }

    /// Exactly whether `sum C_i/T_i <= m`.
    pub fn utilization_at_most(&self, m: u64) -> bool {
        exact::decide(
            || self.utilization_interval().le(Interval::int(m as u128)),
            || self.utilization_sum(&Stop::never()).expect("never stopped") <= exact::int(m as i128),
        )
    }

    /// Index of a task with the largest utilization (lowest index on ties), exact.
    pub fn max_utilization_task(&self) -> Option<usize> {
        (0..self.tasks.len()).reduce(
            |best, i| {
                if self.tasks[i].cmp_utilization(&self.tasks[best]).is_gt() {
                    i
                } else {
                    best
                }
            },
        )
    }

    /// Index of a task with the largest density (lowest index on ties), exact.
    pub fn max_density_task(&self) -> Option<usize> {
        (0..self.tasks.len()).reduce(
            |best, i| {
                if self.tasks[i].cmp_density(&self.tasks[best]).is_gt() {
                    i
                } else {
                    best
                }
            },
        )
    }

    /// Least common multiple of the periods, or an error saying the bound was hit when it
    /// exceeds `bound` (hyperperiods of random periods explode quickly).
    pub fn hyperperiod(&self, bound: Time) -> Result<Time, ModelError> {
        let mut h: u128 = 1;
        for (i, t) in self.tasks.iter().enumerate() {
            let p = t.period as u128;
            h = h / num_integer::gcd(h, p) * p;
            if h > bound as u128 {
                let reached = u64::try_from(h).map_or_else(|_| format!("{h} ns"), crate::time::format_time_exact);
                return Err(ModelError::new(format!(
                    "the hyperperiod exceeds the bound of {} (reached {reached} after task {i}); \
                     choose harmonic or integral periods, or simulate to an explicit horizon",
                    crate::time::format_time_exact(bound)
                )));
            }
        }
        Ok(h as Time)
    }
}

impl<'a> IntoIterator for &'a TaskSet {
    type Item = &'a Task;
    type IntoIter = std::slice::Iter<'a, Task>;
    fn into_iter(self) -> Self::IntoIter {
        self.tasks.iter()
    }
}

impl std::ops::Index<usize> for TaskSet {
    type Output = Task;
    fn index(&self, i: usize) -> &Task {
        &self.tasks[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_task() {
        let e = TaskSet::from_cdt(&[(1, 10, 10), (1, 10, 0)]).unwrap_err();
        assert_eq!(e.task, Some(1));
        assert_eq!(e.to_string(), "task 1: field 'period': must be at least 1 ns, got 0");
        assert!(Platform::new(0).unwrap_err().to_string().contains("'m'"));
    }

    #[test]
    fn exact_utilization() {
        let ts = TaskSet::from_ct(&[(1, 3), (1, 3), (1, 3)]).unwrap();
        assert!(ts.utilization_at_most(1));
        let ts = TaskSet::from_ct(&[(1, 3), (1, 3), (333_333_334, 1_000_000_000)]).unwrap();
        assert!(!ts.utilization_at_most(1));
        assert_eq!(ts.max_utilization_task(), Some(2));
    }

    #[test]
    fn hyperperiod_bound() {
        let ts = TaskSet::from_ct(&[(1, 4), (1, 6), (1, 10)]).unwrap();
        assert_eq!(ts.hyperperiod(1000).unwrap(), 60);
        let e = ts.hyperperiod(50).unwrap_err();
        assert!(e.to_string().contains("bound of 50"), "{e}");
    }
}
