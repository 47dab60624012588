"""The value parsers of experiment specs, shared by the sweep spec (spec.py) and every
reproduction's spec (repro/): unknown keys rejected with a hint (:func:`check_keys`, rt-app's
lesson), exact durations (:func:`parse_duration_ns`), grid axes of values and ranges
(:func:`axis_values`), task counts affine in m (:class:`NExpr`, :func:`resolve_n`), and the one
canonical JSON that ids and seeds are hashed from. Errors are :class:`SpecError` naming the
table and key.

A spec's tables are declared: a frozen dataclass whose fields are the table's keys, each typed
by its annotation or by a parser (:func:`spec_key`), read by :func:`read_keys`, which
refuses an unknown key, a missing required key and a wrongly typed value in one line naming the
file and the key."""

from __future__ import annotations

import difflib
import json
import math
import re
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import MISSING, dataclass, field, fields
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

from .errors import SpecError

_T = TypeVar("_T")
_D = TypeVar("_D", bound="DataclassInstance")

#: The keys of a range table ``{from, to, step}`` of a grid axis.
RANGE_KEYS = ("from", "to", "step")
#: The most tasks per set a spec may ask for (one of the bounds of a spec, docs/experiments.md).
MAX_N = 1_000_000


def canonical_json(obj: Any) -> str:
    """The one serialisation that ids and seeds are hashed from (sorted keys, no spaces)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def check_keys(table: dict, allowed: Sequence[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            hint = difflib.get_close_matches(key, allowed, n=1)
            msg = f"unknown key {key!r} in {where}"
            if hint:
                msg += f" (did you mean {hint[0]!r}?)"
            msg += "; allowed keys: " + ", ".join(allowed)
            raise SpecError(msg)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ns|us|µs|ms|s)?\s*$")
_UNIT_NS = {None: 1, "ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def parse_duration_ns(value: Any, where: str) -> int:
    """An integer number of ns, or a string such as "500us" (ns, us, ms, s); exact, never rounded."""
    if isinstance(value, bool):
        raise SpecError(f"{where}: expected a duration, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise SpecError(f"{where}: a duration must be >= 0, got {value}")
        return value
    if isinstance(value, str):
        mt = _DURATION.match(value)
        if value.strip().startswith("-"):
            raise SpecError(f"{where}: a duration cannot be negative, got {_short(value)}")
        if mt and mt.group(2) is None and Fraction(mt.group(1)) != 0:
            # The command line's rule (docs/formats.md): a string needs a unit; integers are ns.
            raise SpecError(
                f"{where}: {_short(value)} has no unit: write the integer {mt.group(1)} for nanoseconds, or add a "
                "unit (ns, us, ms, s), e.g. '500us'"
                if len(value) <= 40
                else f"{where}: {_short(value)} has no unit (ns, us, ms, s)"
            )
        if mt:
            ns = Fraction(mt.group(1)) * _UNIT_NS[mt.group(2)]
            if ns.denominator != 1:
                raise SpecError(f"{where}: {value!r} is not a whole number of nanoseconds")
            return int(ns)
    raise SpecError(f"{where}: expected a duration (integer ns or a string like '500us'), got {_short(value)}")


def _short(value: Any) -> str:
    r = repr(value)
    return r if len(r) <= 40 else r[:37] + "..."


def format_duration_ns(ns: int) -> str:
    for unit, k in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns and ns % k == 0:
            return f"{ns // k}{unit}"
    return f"{ns}ns"


_NEXPR = re.compile(r"^\s*(?:(?P<a>\d+(?:\.\d+)?)\s*\*?\s*)?m\s*(?:(?P<s>[+-])\s*(?P<b>\d+))?\s*$")


#: ``n = "auto"``: the Baker/LITMUS^RT distributions add tasks until the utilization cap is
#: exceeded and drop the last (Brandenburg & Anderson, RTSS 2009, §4.2); the point's n is null.
AUTO_N = "auto"


@dataclass(frozen=True)
class NExpr:
    """A task count, constant or affine in m: "12", "m+1", "2m", "2.5m", "3*m-1"."""

    text: str
    a: Fraction
    b: int

    @staticmethod
    def parse(value, where: str) -> NExpr:
        if isinstance(value, bool):
            raise SpecError(f"{where}: expected a task count, got {value!r}")
        if isinstance(value, int):
            if value < 1:
                raise SpecError(f"{where}: a task count must be >= 1, got {value}")
            return NExpr(str(value), Fraction(0), value)
        if isinstance(value, str):
            s = value.strip()
            if s == AUTO_N:
                return NExpr(AUTO_N, Fraction(0), 0)
            if s.isdigit():
                return NExpr.parse(int(s), where)
            mt = _NEXPR.match(s)
            if mt:
                a = Fraction(mt.group("a")) if mt.group("a") else Fraction(1)
                b = int(mt.group("b") or 0) * (-1 if mt.group("s") == "-" else 1)
                return NExpr(s.replace(" ", ""), a, b)
        raise SpecError(
            f"{where}: expected a task count (an integer or an expression of m such as "
            f"'2m', 'm+1', '2.5m', '3*m-1'), got {value!r}"
        )

    def at(self, m: int, where: str) -> int | None:
        if self.text == AUTO_N:
            return None
        v = self.a * m + self.b
        if v.denominator != 1:
            raise SpecError(f"{where}: n = {self.text!r} is not an integer for m = {m} ({float(v)})")
        if v < 1:
            raise SpecError(f"{where}: n = {self.text!r} is {v} for m = {m}; it must be >= 1")
        return int(v)


def finite_number(value: Any, where: str, integer: bool) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(f"{where}: expected a number, got {value!r}")
    if integer and not isinstance(value, int):
        raise SpecError(f"{where}: expected an integer, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise SpecError(f"{where}: expected a finite number, got {value!r}")
    return value


#: The most values one grid axis may hold, all its range tables and values together (checked
#: before any range is listed; the whole grid is bounded by MAX_POINTS in spec.py's _expand).
MAX_AXIS_VALUES = 100_000


def _axis_range(table: dict, where: str, integer: bool, item=None, room: int = MAX_AXIS_VALUES) -> list:
    """An inclusive range {from, to, step}; floats are computed as from + i*step, rounded to 10 digits."""
    check_keys(table, RANGE_KEYS, f"range {where}")
    for k in RANGE_KEYS:
        if k not in table:
            raise SpecError(f"{where}: a range needs 'from', 'to' and 'step' (missing {k!r})")
    step = finite_number(table["step"], f"{where}.step", integer or item is not None)
    if step <= 0:
        raise SpecError(f"{where}.step must be > 0, got {step}")
    if item is not None:  # task counts: from/to may be expressions of m, resolved per m later
        lo, hi = item(table["from"], f"{where}.from"), item(table["to"], f"{where}.to")
        return [("range", lo, hi, step)]
    lo = finite_number(table["from"], f"{where}.from", integer)
    hi = finite_number(table["to"], f"{where}.to", integer)
    if hi < lo:
        raise SpecError(f"{where}: 'to' ({hi}) is below 'from' ({lo})")
    count = int(math.floor((hi - lo) / step + 1e-9)) + 1
    if count > room:
        raise SpecError(
            f"{where}: the range has {count:,} values, and the axis {MAX_AXIS_VALUES - room:,} before it; "
            f"at most {MAX_AXIS_VALUES:,} values per grid axis are allowed"
        )
    if integer:
        return [lo + i * step for i in range(count)]
    return [round(lo + i * step, 10) for i in range(count)]


def axis_values(
    value: Any, where: str, *, integer: bool = False, item: Callable[[Any, str], Any] | None = None
) -> list:
    """A grid axis: a scalar, a list of scalars and range tables, or one range table."""
    if isinstance(value, dict):
        items = [value]
    elif isinstance(value, list):
        items = value
    else:
        items = [value]
    if not items:
        raise SpecError(f"{where}: the list is empty")
    if len(items) > MAX_AXIS_VALUES:
        raise SpecError(f"{where}: {len(items):,} entries; at most {MAX_AXIS_VALUES:,} values per grid axis")
    out: list = []
    for i, v in enumerate(items):
        w = f"{where}[{i}]" if isinstance(value, list) else where
        if isinstance(v, dict):
            out.extend(_axis_range(v, w, integer, item, MAX_AXIS_VALUES - len(out)))
        elif item is not None:
            out.append(item(v, w))
        else:
            out.append(finite_number(v, w, integer))
        if len(out) > MAX_AXIS_VALUES:
            raise SpecError(f"{where}: more than {MAX_AXIS_VALUES:,} values; at most that many per grid axis")
    return out


def dedupe(xs: Iterable[_T]) -> list[_T]:
    """The values in order, each once (linear: an axis may hold 100,000 values)."""
    out, seen = [], set()
    for x in xs:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def integer_at_least(value: Any, where: str, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(f"{where}: expected an integer, got {value!r}")
    if value < lo:
        raise SpecError(f"{where}: must be >= {lo}, got {value}")
    return value


def at_least(lo: int) -> Callable[[Any, str], int]:
    """The parser of a declared integer key that must be at least ``lo`` (:func:`spec_key`)."""

    def parse(value: Any, where: str) -> int:
        return integer_at_least(value, where, lo)

    return parse


def resolve_n(nexprs: list, m: int, where: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for e in nexprs:
        if isinstance(e, tuple):  # ("range", lo, hi, step)
            _, lo, hi, step = e
            a, b = lo.at(m, f"{where}.n"), hi.at(m, f"{where}.n")
            if b is not None and b > MAX_N:
                raise SpecError(f"{where}.n: n = {b} for m = {m}; at most {MAX_N:,} tasks per set")
            if b < a:
                raise SpecError(f"{where}.n: range from {lo.text!r} = {a} to {hi.text!r} = {b} is empty for m = {m}")
            out.extend((x, f"{lo.text}..{hi.text}") for x in range(a, b + 1, step))
        else:
            n = e.at(m, f"{where}.n")
            if n is not None and n > MAX_N:
                raise SpecError(f"{where}.n: n = {n} for m = {m}; at most {MAX_N:,} tasks per set")
            out.append((n, e.text))
    seen, res = set(), []
    for n, text in out:
        if n not in seen:
            seen.add(n)
            res.append((n, text))
    return res


def count_n(nexprs: list, m: int, where: str) -> int:
    """How many task counts `resolve_n` gives for `m` (at most), without listing them."""
    k = 0
    for e in nexprs:
        if isinstance(e, tuple):
            _, lo, hi, step = e
            a, b = lo.at(m, f"{where}.n"), hi.at(m, f"{where}.n")
            k += 1 if a is None or b is None else max(0, (b - a) // step + 1)
        else:
            k += 1
    return k


# ---------------------------------------------------------------------------------------------
# Declared tables: a frozen dataclass per table of a spec, its fields the table's keys.


def spec_key(default: Any = MISSING, *, parse: Callable[[Any, str], Any] | None = None, factory: Any = None) -> Any:
    """A key of a declared table: its default (none given: the key is required; ``factory``: a
    fresh list or table per spec) and its parser ``parse(value, where)`` (none: the value is
    checked against the field's annotation, :func:`typed`). A default is the parsed value."""
    meta = {"parse": parse} if parse is not None else {}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def key_names(cls: type[DataclassInstance]) -> tuple[str, ...]:
    """The keys a declared table allows, in declaration order."""
    return tuple(f.name for f in fields(cls))


_TYPE_WORDS = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    list: "a list",
    dict: "a table",
}


def _matches(tp: Any, value: Any) -> bool:
    if tp is Any:
        return True
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(a, value) for a in typing.get_args(tp))
    if origin is not None:  # list[str], dict[str, Any]: the container, then list items
        if not _matches(origin, value):
            return False
        args = typing.get_args(tp)
        return origin is not list or not args or all(_matches(args[0], v) for v in value)
    if tp is type(None):
        return value is None
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, tp)


def _words(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_words(a) for a in typing.get_args(tp) if a is not type(None))
    if origin is list and typing.get_args(tp):
        return f"a list of {_words(typing.get_args(tp)[0]).split(' ', 1)[1]}s"
    return _TYPE_WORDS.get(origin or tp, getattr(tp, "__name__", str(tp)))


def typed(tp: Any, value: Any, where: str) -> Any:
    """``value`` if it is of the annotation ``tp`` (str, int, float, bool, list, dict, their
    unions and ``list[T]``; an int is a float), else a :class:`SpecError` naming ``where``."""
    if not _matches(tp, value):
        raise SpecError(f"{where}: expected {_words(tp)}, got {_short(value)}")
    return value


def read_keys(cls: type[_D], table: dict, where: str, table_name: str | None = None) -> _D:
    """The declared table ``cls`` read from ``table`` (of the spec file ``where``; ``table_name``:
    a sub-table such as ``grid``, None for the top level). Refuses, in one line naming the file
    and the key: an unknown key (with a hint), a missing key that has no default, a value that
    is not of the key's type or that its parser refuses."""
    if not isinstance(table, dict):
        raise SpecError(f"{where}: [{table_name}] must be a table")
    check_keys(table, key_names(cls), f"table [{table_name}] of {where}" if table_name else f"the top level of {where}")
    prefix = f"{where} [{table_name}]" if table_name else where
    hints = typing.get_type_hints(cls)
    values = {}
    for f in fields(cls):
        if f.name not in table:
            if f.default is MISSING and f.default_factory is MISSING:
                raise SpecError(f"{prefix}: key {f.name!r} is required")
            continue
        w = f"{prefix}.{f.name}" if table_name else f"{where} {f.name}"
        parse = f.metadata.get("parse")
        values[f.name] = parse(table[f.name], w) if parse is not None else typed(hints[f.name], table[f.name], w)
    return cls(**values)
