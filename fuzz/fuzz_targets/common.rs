//! Shared by the fuzz targets: turning fuzz bytes into task parameters.

use rtsched_model::{Task, TaskSet, MAX_TIME};

/// Reads one time value: the selector byte picks small (1..=64), medium (1..=2^20) or any
/// value in 1..=MAX_TIME, so that both exhaustive-looking and overflow-prone sets occur.
pub fn time(bytes: &mut impl Iterator<Item = u8>) -> u64 {
    let sel = bytes.next().unwrap_or(0);
    let mut raw = 0u64;
    for _ in 0..8 {
        raw = raw << 8 | bytes.next().unwrap_or(0) as u64;
    }
    match sel % 4 {
        0 | 1 => raw % 64 + 1,
        2 => raw % (1 << 20) + 1,
        _ => raw % MAX_TIME + 1,
    }
}

/// `n` tasks whose (C, D, T) come from the bytes.
pub fn task_set(n: usize, bytes: &mut impl Iterator<Item = u8>) -> TaskSet {
    let tasks: Vec<Task> = (0..n)
        .map(|_| Task { name: None, wcet: time(bytes), deadline: time(bytes), period: time(bytes), segments: None })
        .collect();
    TaskSet::new(tasks).expect("parameters are in 1..=MAX_TIME")
}
