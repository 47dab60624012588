//! The one error type of the model: every message names where the bad value is.

use std::fmt;

/// Invalid input: a task set, a file, a parameter.
///
/// `Display` reads like `line 3: task 2 ("camera"): field 'period': must be at least 1 ns, got 0`;
/// each part is present only when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    /// 1-based line of the input file (JSON Lines, CSV), when the input has lines.
    pub line: Option<usize>,
    /// 0-based index of the task in its task set.
    pub task: Option<usize>,
    /// The task's name, if it has one.
    pub task_name: Option<String>,
    /// The field (or parameter) at fault, e.g. `wcet`, `period`, `m`.
    pub field: Option<String>,
    /// What is wrong with it.
    pub reason: String,
}

impl ModelError {
    /// An error about a parameter or a whole input, not a particular task.
    pub fn new(reason: impl Into<String>) -> Self {
        ModelError { line: None, task: None, task_name: None, field: None, reason: reason.into() }
    }

    /// An error about `field` (of no particular task).
    pub fn field(field: impl Into<String>, reason: impl Into<String>) -> Self {
        ModelError { field: Some(field.into()), ..ModelError::new(reason) }
    }

    /// An error about `field` of task `index`.
    pub fn task_field(index: usize, field: impl Into<String>, reason: impl Into<String>) -> Self {
        ModelError { task: Some(index), ..ModelError::field(field, reason) }
    }

    /// Attaches the task's index (and name) if not already set.
    pub fn in_task(mut self, index: usize, name: Option<&str>) -> Self {
        if self.task.is_none() {
            self.task = Some(index);
        }
        if self.task_name.is_none() {
            self.task_name = name.map(str::to_owned);
        }
        self
    }

    /// Attaches a 1-based input line if not already set.
    pub fn at_line(mut self, line: usize) -> Self {
        if self.line.is_none() {
            self.line = Some(line);
        }
        self
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if let Some(task) = self.task {
            match &self.task_name {
                Some(name) => write!(f, "task {task} ({name:?}): ")?,
                None => write!(f, "task {task}: ")?,
            }
        }
        if let Some(field) = &self.field {
            write!(f, "field '{field}': ")?;
        }
        f.write_str(&self.reason)
    }
}

impl std::error::Error for ModelError {}
