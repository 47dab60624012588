//! The fast path of the JSON task-set reader: straight from the text to tasks, without an
//! intermediate `serde_json::Value` (no map or string allocated per key), for the batch
//! paths that read millions of task sets.
//!
//! It accepts exactly the documents the reference reader ([`super::from_value`] over
//! [`crate::json::parse`]) accepts with the same result, and gives up (`None`) on anything
//! else — an unknown or repeated key, a value of another type, an invalid task — so that the
//! reference reader, run then, produces the one error message. A unit test and the `parsers`
//! fuzz target compare the two on arbitrary text.

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

use super::parse_duration_text;
use super::TaskSetFile;
use crate::task::Task;
use crate::taskset::{check_m, TaskSet};
use crate::time::Time;

/// Reads one task-set object, or `None` when the reference reader must decide.
pub(super) fn read(text: &str) -> Option<TaskSetFile> {
    let mut de = serde_json::Deserializer::from_str(text);
    let f = de::Deserializer::deserialize_map(&mut de, Top).ok()?;
    de.end().ok()?;
    Some(f)
}

fn no<E: de::Error>() -> E {
    E::custom("")
}

struct Top;

impl<'de> Visitor<'de> for Top {
    type Value = TaskSetFile;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a task set")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TaskSetFile, A::Error> {
        let (mut m, mut seen_m, mut tasks) = (None, false, None);
        while let Some(key) = map.next_key::<Key>()? {
            match key.0.as_ref() {
                "m" if !seen_m => {
                    seen_m = true;
                    m = match map.next_value::<Option<u64>>()? {
                        None => None,
                        Some(v) => Some(check_m(v).map_err(|_| no::<A::Error>())?),
                    };
                }
                "tasks" if tasks.is_none() => tasks = Some(map.next_value_seed(Tasks)?),
                _ => return Err(no()),
            }
        }
        let taskset = TaskSet::new(tasks.ok_or_else(no::<A::Error>)?).map_err(|_| no::<A::Error>())?;
        Ok(TaskSetFile { m, taskset })
    }
}

/// A key, borrowed from the text when it has no escapes.
struct Key<'a>(std::borrow::Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(v.into()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(v.to_owned().into()))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(v.into()))
            }
        }
        d.deserialize_str(V)
    }
}

struct Tasks;

impl<'de> DeserializeSeed<'de> for Tasks {
    type Value = Vec<Task>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Vec<Task>, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Tasks {
    type Value = Vec<Task>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of tasks")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Task>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(16));
        while let Some(t) = seq.next_element_seed(OneTask)? {
            out.push(t);
        }
        Ok(out)
    }
}

struct OneTask;

impl<'de> DeserializeSeed<'de> for OneTask {
    type Value = Task;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Task, D::Error> {
        d.deserialize_map(self)
    }
}

/// A time value: integer ns or a duration string.
struct TimeVal(Time);

impl<'de> de::Deserialize<'de> for TimeVal {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TimeVal;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a time")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<TimeVal, E> {
                Ok(TimeVal(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TimeVal, E> {
                parse_duration_text(v).map(TimeVal).map_err(|_| no())
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Visitor<'de> for OneTask {
    type Value = Task;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a task")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Task, A::Error> {
        let (mut name, mut wcet, mut period, mut deadline) = (None, None, None, None);
        let (mut seen_name, mut seen_deadline) = (false, false);
        while let Some(key) = map.next_key::<Key>()? {
            match key.0.as_ref() {
                "name" if !seen_name => {
                    seen_name = true;
                    name = map.next_value::<Option<String>>()?;
                }
                "wcet" if wcet.is_none() => wcet = Some(map.next_value::<TimeVal>()?.0),
                "period" if period.is_none() => period = Some(map.next_value::<TimeVal>()?.0),
                "deadline" if !seen_deadline => {
                    seen_deadline = true;
                    deadline = map.next_value::<Option<TimeVal>>()?.map(|t| t.0);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    return Err(no());
                }
            }
        }
        let (wcet, period) = (wcet.ok_or_else(no::<A::Error>)?, period.ok_or_else(no::<A::Error>)?);
        let t = Task { name, wcet, deadline: deadline.unwrap_or(period), period, segments: None };
        t.validate().map_err(|_| no::<A::Error>())?;
        Ok(t)
    }
}
