//! A mechanism's parameters, typed: each mechanism declares one struct with
//! [`mechanism_params!`](crate::mechanism_params), one field per parameter with its kind,
//! default and help ([`ParamDecl`]). From that one declaration come both the registry's
//! parameter list ([`ParamSet::SPECS`]: what `rtsched run --list-schedulers`, `--param`, the
//! CLI's named options and Python see) and the typed value its builder reads
//! ([`ParamSet::from_params`]), so a parameter's name and default are written once and no
//! mechanism reads a parameter by a string key. The kinds, the declarations, the values and
//! their one parser are the model's ([`rtsched_model::params`], shared with the simulator's
//! registry): a flag takes `true`/`false`, `yes`/`no`, `on`/`off` or `1`/`0`; a duration needs
//! a unit.
//!
//! ```
//! use rtsched_runtime::mechanism::params::{ParamDecl, ParamKind, ParamSet};
//!
//! rtsched_runtime::mechanism_params! {
//!     /// The parameters of a quantum-driven example.
//!     pub struct TickParams {
//!         quantum: u64 = ParamDecl { kind: ParamKind::Duration, default: "2ms", help: "the quantum Q" },
//!         staggered: bool = ParamDecl { kind: ParamKind::Bool, default: "false", help: "ticks staggered by c·Q/m" },
//!     }
//! }
//!
//! // The registry's list (an `Entry`'s `params: TickParams::SPECS`) is derived from the fields.
//! let names: Vec<&str> = TickParams::SPECS.iter().map(|p| p.name).collect();
//! assert_eq!(names, ["quantum", "staggered"]);
//! // Defaults filled in, a user's value parsed by its kind, a bad value named.
//! assert_eq!(TickParams::parse([("staggered", "yes")]).unwrap(), TickParams { quantum: 2_000_000, staggered: true });
//! assert_eq!(TickParams::parse([("quantum", "soon")]).unwrap_err().param, "quantum");
//! ```

use crate::ParamError;
pub use rtsched_model::params::{ParamKind, ParamSpec, ParamValue};
use std::collections::BTreeMap;

/// A parameter's declaration without its name: the name is the field's in
/// [`mechanism_params!`](crate::mechanism_params). A declaration that several mechanisms share
/// is one `const`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamDecl {
    pub kind: ParamKind,
    /// The default, written as a user would (parsed like a user's value).
    pub default: &'static str,
    pub help: &'static str,
}

impl ParamDecl {
    /// The registry's spec of this declaration under `name`.
    pub const fn named(self, name: &'static str) -> ParamSpec {
        ParamSpec { name, kind: self.kind, default: self.default, help: self.help }
    }
}

/// The validated parameters of one mechanism: every declared one, defaults filled in (the
/// untyped form the run's summary writes; a builder reads its [`ParamSet`] from it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params(pub(crate) BTreeMap<&'static str, ParamValue>);

impl Params {
    /// Every parameter of `specs` at its default, overridden by `given` (name, text) pairs: the
    /// one reading of a scheduler's parameters ([`rtsched_model::params::resolve`], the
    /// simulator's too), for the mechanism `name`; `owners(k)`: the mechanisms that take `k`.
    pub fn resolve<'a>(
        name: &str,
        specs: &'static [ParamSpec],
        given: impl IntoIterator<Item = (&'a str, &'a str)>,
        owners: impl Fn(&str) -> Vec<&'static str>,
    ) -> Result<Params, ParamError> {
        Ok(Params(rtsched_model::params::resolve(name, specs, given, owners)?.values))
    }

    /// The value of the parameter `name` of `specs` as a `T` (what a [`ParamSet`]'s
    /// `from_params` reads for each field). Errors name the parameter: one these parameters
    /// were not resolved with, or a field type that does not fit its kind.
    pub fn field<T: ParamField>(&self, specs: &'static [ParamSpec], name: &'static str) -> Result<T, ParamError> {
        let spec = specs.iter().find(|p| p.name == name).ok_or_else(|| ParamError::new(name, "not declared"))?;
        let v = self.0.get(name).ok_or_else(|| ParamError::new(name, "not given to this mechanism"))?;
        T::from_value(v, spec).ok_or_else(|| {
            ParamError::new(name, format!("the field's type does not hold a {} value", spec.kind_name()))
        })
    }

    /// `name=value` pairs as JSON (for summaries).
    pub fn to_json(&self) -> serde_json::Value {
        let mut o = serde_json::Map::new();
        for (k, v) in &self.0 {
            let v = match v {
                ParamValue::Int(x) | ParamValue::Duration(x) => serde_json::json!(x),
                ParamValue::Bool(b) => serde_json::json!(b),
                ParamValue::Text(t) => serde_json::json!(t),
            };
            o.insert((*k).to_string(), v);
        }
        serde_json::Value::Object(o)
    }
}

/// A Rust type a parameter's value converts to (a field of a [`ParamSet`]).
pub trait ParamField: Sized {
    /// `v` as this type (`spec` is its declaration); `None` if the kinds do not fit.
    fn from_value(v: &ParamValue, spec: &ParamSpec) -> Option<Self>;
}

impl ParamField for u64 {
    fn from_value(v: &ParamValue, _: &ParamSpec) -> Option<u64> {
        match v {
            ParamValue::Int(x) | ParamValue::Duration(x) => Some(*x),
            _ => None,
        }
    }
}

impl ParamField for u32 {
    fn from_value(v: &ParamValue, _: &ParamSpec) -> Option<u32> {
        match v {
            ParamValue::Int(x) => u32::try_from(*x).ok(),
            _ => None,
        }
    }
}

impl ParamField for usize {
    fn from_value(v: &ParamValue, _: &ParamSpec) -> Option<usize> {
        match v {
            ParamValue::Int(x) => usize::try_from(*x).ok(),
            _ => None,
        }
    }
}

impl ParamField for bool {
    fn from_value(v: &ParamValue, _: &ParamSpec) -> Option<bool> {
        match v {
            ParamValue::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl ParamField for String {
    fn from_value(v: &ParamValue, _: &ParamSpec) -> Option<String> {
        match v {
            ParamValue::Text(t) => Some(t.clone()),
            _ => None,
        }
    }
}

/// A choice's word, as the declaration's own `&'static str` (to `match` on).
impl ParamField for &'static str {
    fn from_value(v: &ParamValue, spec: &ParamSpec) -> Option<&'static str> {
        match (v, spec.kind) {
            (ParamValue::Text(t), ParamKind::Choice(words)) => words.iter().copied().find(|w| w == t),
            _ => None,
        }
    }
}

/// A mechanism's typed parameters (declared with [`mechanism_params!`](crate::mechanism_params)).
pub trait ParamSet: Sized {
    /// The declared parameters, in the fields' order: the registry entry's `params`.
    const SPECS: &'static [ParamSpec];

    /// The typed value of parameters resolved against (a list that declares) these fields.
    fn from_params(p: &Params) -> Result<Self, ParamError>;

    /// Defaults overridden by `given` (name, text) pairs; an unknown name or a bad value is an
    /// error naming the parameter.
    fn parse<'a>(given: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self, ParamError> {
        let p = Params::resolve("this mechanism", Self::SPECS, given, |_| Vec::new())
            .map_err(|e| ParamError { scheduler: None, ..e })?;
        Self::from_params(&p)
    }
}

/// Declares a mechanism's parameter struct: one field per parameter, `name: Type = decl`,
/// where `decl` is a [`ParamDecl`] (kind, default, help; a shared one is a `const`) and
/// `Type` one of the [`ParamField`] types (`u64` for an integer or a duration in ns, `u32`,
/// `usize`, `bool`, `String` for text, `&'static str` for a choice's word). The struct gets
/// [`ParamSet`]: its `SPECS` (the registry's list, in field order, each named by its field)
/// and `from_params`. See the [module docs](crate::mechanism::params) for an example.
#[macro_export]
macro_rules! mechanism_params {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $($(#[$fmeta:meta])* $field:ident : $ty:ty = $decl:expr),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        $vis struct $name {
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        impl $crate::mechanism::params::ParamSet for $name {
            const SPECS: &'static [$crate::mechanism::params::ParamSpec] =
                &[$($crate::mechanism::params::ParamDecl::named($decl, stringify!($field))),*];

            fn from_params(p: &$crate::mechanism::params::Params) -> Result<Self, $crate::ParamError> {
                Ok($name { $($field: p.field(Self::SPECS, stringify!($field))?,)* })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::mechanism_params! {
        /// Every field type once.
        struct Every {
            n: usize = ParamDecl { kind: ParamKind::Int { min: 1, max: 9 }, default: "2", help: "n" },
            d: u64 = ParamDecl { kind: ParamKind::Duration, default: "1us", help: "d" },
            b: bool = ParamDecl { kind: ParamKind::Bool, default: "false", help: "b" },
            w: &'static str = ParamDecl { kind: ParamKind::Choice(&["x", "y"]), default: "y", help: "w" },
            t: String = ParamDecl { kind: ParamKind::Text, default: "free", help: "t" },
        }
    }

    crate::mechanism_params! {
        /// A field whose type does not hold its kind's values.
        struct Mismatched {
            flag: u64 = ParamDecl { kind: ParamKind::Bool, default: "true", help: "" },
        }
    }

    #[test]
    fn a_struct_lists_its_fields_and_parses_them_typed() {
        let names: Vec<&str> = Every::SPECS.iter().map(|p| p.name).collect();
        assert_eq!(names, ["n", "d", "b", "w", "t"]);
        assert_eq!(Every::SPECS[1], ParamSpec { name: "d", kind: ParamKind::Duration, default: "1us", help: "d" });
        assert_eq!(
            Every::parse([]).unwrap(),
            Every { n: 2, d: 1_000, b: false, w: "y", t: "free".into() },
            "the defaults"
        );
        let e = Every::parse([("w", "x"), ("n", "7"), ("b", "on"), ("t", "1,2")]).unwrap();
        assert_eq!(e, Every { n: 7, d: 1_000, b: true, w: "x", t: "1,2".into() });
    }

    #[test]
    fn a_bad_value_or_name_is_named() {
        for (k, v) in [("n", "0"), ("n", "ten"), ("d", "0"), ("b", "maybe"), ("w", "z")] {
            let e = Every::parse([(k, v)]).unwrap_err();
            assert_eq!(e.param, k, "{k}={v}: {e}");
            assert!(e.to_string().contains(v), "{e}");
        }
        let e = Every::parse([("m", "1")]).unwrap_err();
        assert_eq!(
            (e.param.as_str(), e.to_string()),
            ("m", "parameter m: unknown to this mechanism (known: n, d, b, w, t)".into())
        );
        // A type that does not fit the kind is refused by name, not read as something else.
        let e = Mismatched::parse([]).unwrap_err();
        assert_eq!(e.param, "flag");
        assert!(e.to_string().contains("does not hold a flag value"), "{e}");
        // Parameters resolved for another list lack the field.
        let other = Params::resolve("every", Every::SPECS, [], |_| Vec::new()).unwrap();
        assert_eq!(Mismatched::from_params(&other).unwrap_err().param, "flag");
    }
}
