//! The strict JSON reader behind every JSON input of rtsched (task sets, fork-join sets,
//! placements, overhead models, sweep points).
//!
//! `serde_json` keeps the last of two equal keys in an object and drops the first without a
//! word; a file that says `"wcet"` twice is as suspect as one that says `"dedline"`, so here
//! a duplicate key is an error naming the key and where it is (`tasks[2]`). A byte-order mark
//! at the start of the text is skipped (editors on Windows write one).

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

use crate::ModelError;

/// Where a value sits in the document: `tasks[2].regions`.
#[derive(Clone, Copy)]
enum Seg<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

#[derive(Clone, Copy)]
struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    seg: Seg<'a>,
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = self.parent {
            p.fmt(f)?;
        }
        match self.seg {
            Seg::Root => Ok(()),
            Seg::Key(k) if self.parent.is_some_and(|p| !matches!(p.seg, Seg::Root)) => write!(f, ".{k}"),
            Seg::Key(k) => f.write_str(k),
            Seg::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// Strips a leading byte-order mark (U+FEFF).
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// A duplicate key: the message `serde_json` carries back; [`parse`] turns it into a
/// [`ModelError`] whose field is the key.
const DUP_MARK: &str = "\u{1}duplicate key\u{1}";

struct Strict<'a>(Path<'a>);

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        loop {
            let path = Path { parent: Some(&self.0), seg: Seg::Index(out.len()) };
            match seq.next_element_seed(Strict(path))? {
                Some(v) => out.push(v),
                None => return Ok(Value::Array(out)),
            }
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!("{DUP_MARK}{key}{DUP_MARK}{}", self.0)));
            }
            let v = map.next_value_seed(Strict(Path { parent: Some(&self.0), seg: Seg::Key(&key) }))?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// Parses JSON text (after an optional byte-order mark), rejecting duplicate keys and
/// trailing characters. Errors read `invalid JSON at line 3, column 7: ...` or
/// `field 'wcet': duplicate key (in tasks[2], line 1, column 40)`.
pub fn parse(text: &str) -> Result<Value, ModelError> {
    let mut de = serde_json::Deserializer::from_str(strip_bom(text));
    let root = Path { parent: None, seg: Seg::Root };
    let v = Strict(root).deserialize(&mut de).and_then(|v| de.end().map(|()| v)).map_err(syntax)?;
    Ok(v)
}

/// The top level of a set file, `{"m": .., "tasks": [..]}` (fork-join and DAG sets): its
/// optional processor count (checked) and its task values. `what` names the set in messages
/// ("fork-join", "DAG"); any other key is refused naming it.
pub(crate) fn set_object<'a>(v: &'a Value, what: &str) -> Result<(Option<u32>, &'a [Value]), ModelError> {
    let obj: &Map<String, Value> =
        v.as_object().ok_or_else(|| ModelError::new(format!("expected a {what} set object {{\"tasks\": [..]}}")))?;
    for key in obj.keys() {
        if !matches!(key.as_str(), "m" | "tasks") {
            return Err(ModelError::field(key, format!("unknown key (a {what} set has m, tasks)")));
        }
    }
    let m = match obj.get("m") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let m =
                v.as_u64().ok_or_else(|| ModelError::field("m", format!("expected a positive integer, got {v}")))?;
            Some(crate::taskset::check_m(m)?)
        }
    };
    let tasks = obj
        .get("tasks")
        .ok_or_else(|| ModelError::field("tasks", "missing"))?
        .as_array()
        .ok_or_else(|| ModelError::field("tasks", format!("expected a list of {what} task objects")))?;
    Ok((m, tasks))
}

/// A `serde_json` error as a [`ModelError`] (duplicate keys name the key as the field).
pub fn syntax(e: serde_json::Error) -> ModelError {
    let msg = e.to_string();
    if let Some(rest) = msg.split_once(DUP_MARK).map(|(_, r)| r) {
        if let Some((key, rest)) = rest.split_once(DUP_MARK) {
            let (path, _) = rest.rsplit_once(" at line ").unwrap_or((rest, ""));
            let place = if path.is_empty() { String::new() } else { format!("in {path}, ") };
            return ModelError::field(key, format!("duplicate key ({place}line {}, column {})", e.line(), e.column()));
        }
    }
    let what = match e.classify() {
        serde_json::error::Category::Eof => "invalid JSON (the text ends too early)".to_string(),
        _ => "invalid JSON".to_string(),
    };
    // serde_json's message ends with " at line L column C"; say it once, in our words.
    let reason = msg.rsplit_once(" at line ").map_or(msg.as_str(), |(r, _)| r).to_string();
    ModelError::new(format!("{what} at line {}, column {}: {reason}", e.line(), e.column()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_errors_naming_the_place() {
        let e =
            parse(r#"{"m": 2, "tasks": [{"wcet": 1, "period": 2}, {"wcet": 1, "wcet": 3, "period": 2}]}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("wcet"));
        assert!(e.to_string().contains("duplicate key (in tasks[1], line 1"), "{e}");
        let e = parse(r#"{"m": 2, "m": 3}"#).unwrap_err();
        assert!(e.to_string().starts_with("field 'm': duplicate key (line 1"), "{e}");
        let e = parse(r#"{"a": {"b": [{"c": 1, "c": 1}]}}"#).unwrap_err();
        assert!(e.to_string().contains("in a.b[0]"), "{e}");
    }

    #[test]
    fn values_bom_and_trailing_text() {
        let v = parse("\u{feff}{\"a\": [1, -2, 2.5, \"x\", null, true]}").unwrap();
        assert_eq!(v, serde_json::json!({"a": [1, -2, 2.5, "x", null, true]}));
        let e = parse("{\"a\": 1} x").unwrap_err();
        assert!(e.to_string().starts_with("invalid JSON at line 1, column"), "{e}");
        let e = parse("{\"a\": ").unwrap_err();
        assert!(e.to_string().contains("ends too early"), "{e}");
        // Key order is kept.
        let v = parse(r#"{"b": 1, "a": 2}"#).unwrap();
        assert_eq!(v.as_object().unwrap().keys().collect::<Vec<_>>(), ["b", "a"]);
    }
}
