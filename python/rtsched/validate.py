"""Argument checks for the Python API and the command line: one definition of each rule.

Every public function and every CLI command checks its arguments here, so that a wrong value
is one :class:`rtsched.RtschedError` (a ``ValueError``) whose message names the argument — never
a ``TypeError`` from deep inside, a silent truncation (``m=1.9`` is not 1) or an allocation sized
by a typo. Two layers share the rules:

**API checks** (raise ``RtschedError``, message ``argument 'NAME': ...``):

===========================  ============================================================
``integer(v, name, lo, hi)``  an ``int`` (or numpy integer) in ``[lo, hi]``; floats, bools,
                              strings and None are refused (``m=1.9``, ``count=True``)
``number(v, name, ...)``      a finite ``int`` or ``float`` in a range (open or closed ends)
``duration(v, name)``         integer ns ``>= 0`` or a duration string (``"2ms"``); floats
                              are refused (``duration=1.5``: 1.5 what?)
``processors(v, name)``       ``m``: an integer in ``1 ..= MAX_M``
``seed(v, name)``             an integer in ``0 .. 2**64``
``max_steps(v)``              an integer in ``1 .. 2**63``
``text(v, name)``             a ``str``; ``choice(v, name, choices)`` one of a list
``task_set(v, name)``         a :class:`rtsched.TaskSet`; ``task_sets(v, name)`` an iterable of them
``test_names(v)``             None, a test name or a list of them
``output_path(path, name)``   a file path whose folder exists and is writable (checked before
                              a run or a simulation starts, so an hour of work is never lost
                              to a typo in ``--trace``)
===========================  ============================================================

**CLI types** (``argparse`` ``type=`` callables built on the checks above; argparse turns their
``argparse.ArgumentTypeError`` into ``rtsched CMD: error: argument --m: ...``, one line):

=========================  ==============================================================
``cli_int(lo, hi)``         an integer in a range; ``CLI_M`` (1..MAX_M), ``CLI_N`` (1..MAX_N),
                            ``CLI_COUNT``, ``CLI_SEED`` (0..2**64-1), ``CLI_STEPS``,
                            ``CLI_JOBS``, ``CLI_RT_PRIORITY`` (1..99, SCHED_FIFO)
``cli_float(lo, hi, ...)``  a finite decimal in a range (``--util``, ``--umax``, ``--step``)
``cli_duration``            a duration *with a unit*: a bare number is an error with a hint
                            (``--duration 2``: "did you mean 2s?"); ``0`` needs no unit.
                            In files, integers stay nanoseconds as documented
                            (docs/formats.md).
``cli_periods``             a period distribution (``loguniform:10ms-100ms``) whose every
                            duration has a unit (``loguniform:10-100ms`` is refused with the
                            hint ``loguniform:10ms-100ms``)
``cli_cpus``                a CPU list ``0,2-3``: ids in ``0 ..= MAX_CPU``, checked on the
                            range ends, so ``0-4294967295`` is refused without building a
                            list of four billion CPUs
=========================  ==============================================================

Bounds (documented in docs/cli.md): ``MAX_M`` = 16,384 processors (the model's bound,
``rtsched._core.MAX_M``), ``MAX_N`` = 1,000,000 tasks per generated set, ``MAX_CPU`` = 65,535.
Issue 15's CLI consistency work builds on this module: add new argument kinds here, not in the
commands.
"""

from __future__ import annotations

import argparse
import math
import operator
import os
import re
from collections.abc import Callable, Iterable
from typing import Any

from ._core import MAX_M, RtschedError, TaskSet, parse_duration

MAX_N = 1_000_000
MAX_CPU = 65_535
MAX_SEED = 2**64 - 1
MAX_STEPS = 2**63 - 1
MAX_COUNT = 2**63 - 1


def _show(v: Any) -> str:
    r = repr(v)
    if len(r) > 40:
        r = r[:37] + "..."
    return f"{r} ({type(v).__name__})"


def _show_text(s: str) -> str:
    """``s`` quoted for a message, at most 40 characters (a 300-digit number is not echoed whole)."""
    s = s.strip()
    return repr(s) if len(s) <= 40 else repr(s[:37]) + "..."


def _fail(name: str, why: str) -> RtschedError:
    return RtschedError(f"argument '{name}': {why}")


# ---------------------------------------------------------------------------------------------
# API checks


def integer(v: Any, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """An integer in ``[lo, hi]`` (``int`` or a numpy integer; never a float, bool or str)."""
    if isinstance(v, bool) or isinstance(v, (float, str, bytes)) or v is None:
        raise _fail(name, f"expected an integer, got {_show(v)}")
    try:
        x = operator.index(v)
    except TypeError:
        raise _fail(name, f"expected an integer, got {_show(v)}") from None
    if lo is not None and x < lo or hi is not None and x > hi:
        rng = f"{lo if lo is not None else '-inf'}..={hi if hi is not None else 'inf'}"
        shown = str(x) if len(str(x)) <= 40 else str(x)[:37] + "..."
        raise _fail(name, f"must be in {rng}, got {shown}")
    return x


def optional_integer(v: Any, name: str, lo: int | None = None, hi: int | None = None) -> int | None:
    return None if v is None else integer(v, name, lo, hi)


def number(
    v: Any, name: str, lo: float | None = None, hi: float | None = None, lo_open: bool = False, hi_open: bool = False
) -> float:
    """A finite real number in a range (``lo_open``/``hi_open``: the end is excluded)."""
    if isinstance(v, bool) or v is None or isinstance(v, (str, bytes)):
        raise _fail(name, f"expected a number, got {_show(v)}")
    try:
        x = float(v)
    except (TypeError, ValueError, OverflowError):
        raise _fail(name, f"expected a number, got {_show(v)}") from None
    if not math.isfinite(x):
        raise _fail(name, f"expected a finite number, got {x}")
    bad_lo = lo is not None and (x <= lo if lo_open else x < lo)
    bad_hi = hi is not None and (x >= hi if hi_open else x > hi)
    if bad_lo or bad_hi:
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        raise _fail(
            name,
            f"must be in {left}{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}{right}, got {x}",
        )
    return x


def duration(v: Any, name: str, lo: int = 0) -> int:
    """Integer ns (``>= lo``) or a duration string such as ``"2ms"``; returns ns."""
    if isinstance(v, str):
        try:
            ns = parse_duration(v)
        except RtschedError as e:
            raise _fail(name, str(e)) from None
    elif isinstance(v, float):
        raise _fail(name, f"expected integer ns or a duration string like '2ms', got {_show(v)}")
    else:
        try:
            ns = integer(v, name)
        except RtschedError:
            raise _fail(name, f"expected integer ns or a duration string like '2ms', got {_show(v)}") from None
    if ns < lo or ns > 2**64 - 1:
        raise _fail(name, f"must be at least {lo} ns and fit in 64 bits, got {ns}")
    return ns


def optional_duration(v: Any, name: str, lo: int = 0) -> int | None:
    return None if v is None else duration(v, name, lo)


def processors(v: Any, name: str = "m") -> int:
    """A processor count: an integer in ``1 ..= MAX_M``."""
    return integer(v, name, 1, MAX_M)


def optional_processors(v: Any, name: str = "m") -> int | None:
    return None if v is None else processors(v, name)


def seed(v: Any, name: str = "seed") -> int:
    return integer(v, name, 0, MAX_SEED)


def max_steps(v: Any, name: str = "max_steps") -> int:
    return integer(v, name, 1, MAX_STEPS)


def boolean(v: Any, name: str) -> bool:
    if not isinstance(v, bool):
        raise _fail(name, f"expected True or False, got {_show(v)}")
    return v


def text(v: Any, name: str) -> str:
    if not isinstance(v, str):
        raise _fail(name, f"expected a string, got {_show(v)}")
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        raise _fail(name, "the string is not valid Unicode (it holds a lone surrogate)") from None
    return v


def optional_text(v: Any, name: str) -> str | None:
    return None if v is None else text(v, name)


def priorities(v: Any, name: str = "priorities") -> str | None:
    """Fixed priorities for the G-FP tests: ``None``, ``"dm"``, ``"rm"``, ``"3,1,2"`` or a list of
    integer ranks (smaller = higher), returned as the text the Rust side parses."""
    if v is None:
        return None
    if isinstance(v, str):
        return text(v, name)
    if isinstance(v, (list, tuple)):
        for i, r in enumerate(v):
            if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r < 2**32:
                raise _fail(name, f"task {i}: expected an integer rank >= 0 (0 = highest), got {_show(r)}")
        return ",".join(str(r) for r in v)
    raise _fail(name, f"expected dm, rm, a comma-separated rank per task or a list of ranks, got {_show(v)}")


def choice(v: Any, name: str, choices: Iterable[str]) -> str:
    choices = list(choices)
    if not isinstance(v, str) or v not in choices:
        raise _fail(name, f"expected one of {', '.join(choices)}, got {_show(v)}")
    return v


def task_set(v: Any, name: str = "ts") -> TaskSet:
    if not isinstance(v, TaskSet):
        hint = " (rtsched.load returns a list: take one element)" if isinstance(v, list) else ""
        raise _fail(name, f"expected a TaskSet, got {_show(v)}{hint}")
    return v


def task_sets(v: Any, name: str = "sets") -> list:
    """An iterable of TaskSets (a single TaskSet is refused: wrap it in a list)."""
    if isinstance(v, TaskSet):
        raise _fail(name, "expected a list of TaskSets, got one TaskSet (use analyze(ts) or [ts])")
    if v is None or isinstance(v, (str, bytes, dict)) or not isinstance(v, Iterable):
        raise _fail(name, f"expected an iterable of TaskSets, got {_show(v)}")
    out = list(v)
    for i, ts in enumerate(out):
        if not isinstance(ts, TaskSet):
            raise _fail(name, f"item {i} is {_show(ts)}, not a TaskSet")
    return out


def test_names(v: Any, name: str = "tests") -> list[str] | None:
    """None (every test that applies), one test name, or a list of names."""
    if v is None:
        return None
    if isinstance(v, str):
        return [text(v, name)]
    if isinstance(v, (bytes, dict)) or not isinstance(v, Iterable):
        raise _fail(name, f"expected a test name or a list of test names, got {_show(v)}")
    out = list(v)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise _fail(name, f"item {i} is {_show(t)}, not a test name")
        text(t, name)
    if not out:
        raise _fail(name, "the list of tests is empty (None runs every test that applies)")
    return out


def path(v: Any, name: str) -> str:
    if isinstance(v, os.PathLike):
        v = os.fspath(v)
    if not isinstance(v, str) or not v:
        raise _fail(name, f"expected a file path, got {_show(v)}")
    if "\0" in v:
        raise _fail(name, "a file path cannot contain a NUL character")
    try:
        os.fsencode(v)
    except UnicodeEncodeError:
        raise _fail(name, f"{v!r} cannot be a file name here (it holds a lone surrogate)") from None
    return v


def output_path(v: Any, name: str) -> str:
    """A path we will write: its folder must exist and be writable, and it must not be a folder.

    Checked before long work starts; the write itself is still checked when it happens.
    """
    p = path(v, name)
    where = f"cannot write {p!r} ({name})"
    if os.path.isdir(p):
        raise RtschedError(f"{where}: it is a directory; give a file name")
    folder = os.path.dirname(os.path.abspath(p))
    if not os.path.isdir(folder):
        raise RtschedError(f"{where}: the folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise RtschedError(f"{where}: the folder {folder!r} is not writable")
    if os.path.exists(p) and not os.access(p, os.W_OK):
        raise RtschedError(f"{where}: the file is not writable")
    return p


# ---------------------------------------------------------------------------------------------
# CLI types


def _cli(check: Callable[[str], Any], label: str) -> Callable[[str], Any]:
    """Wraps an API check as an argparse type (its name shows in argparse's messages)."""

    def conv(s: str) -> Any:
        try:
            return check(s)
        except RtschedError as e:
            msg = str(e)
            prefix = "argument 'value': "
            raise argparse.ArgumentTypeError(msg[len(prefix) :] if msg.startswith(prefix) else msg) from None

    conv.__name__ = label
    return conv


def _parse_int(s: str) -> int:
    t = s.strip().replace("_", "")
    if not re.fullmatch(r"[+-]?\d+", t):
        if re.fullmatch(r"[+-]?\d+(\.\d*)?([eE][+-]?\d+)?|[+-]?\.\d+([eE][+-]?\d+)?", t):
            raise _fail("value", f"expected an integer, got {_show_text(s)}")
        raise _fail("value", f"expected an integer, got {_show_text(s)}")
    return int(t)


def cli_int(lo: int | None = None, hi: int | None = None, label: str = "integer") -> Callable[[str], Any]:
    return _cli(lambda s: integer(_parse_int(s), "value", lo, hi), label)


def cli_float(
    lo: float | None = None, hi: float | None = None, lo_open: bool = False, hi_open: bool = False
) -> Callable[[str], Any]:
    def check(s: str) -> float:
        try:
            x = float(s)
        except ValueError:
            raise _fail("value", f"expected a number, got {s!r}") from None
        return number(x, "value", lo, hi, lo_open, hi_open)

    return _cli(check, "number")


CLI_M = cli_int(1, MAX_M, "processor count")
CLI_N = cli_int(1, MAX_N, "task count")
CLI_COUNT = cli_int(1, MAX_COUNT, "count")
CLI_SEED = cli_int(0, MAX_SEED, "seed")
CLI_STEPS = cli_int(1, MAX_STEPS, "step bound")
CLI_JOBS = cli_int(1, 4096, "job count")
CLI_RT_PRIORITY = cli_int(1, 99, "SCHED_FIFO priority")
CLI_CPU = cli_int(0, MAX_CPU, "CPU id")

_BARE = re.compile(r"^\s*\d+(\.\d+)?\s*$")


def _unit_hint(s: str, unit: str) -> str:
    return f"{s.strip()}{unit}"


def check_cli_duration(s: str, default_unit: str = "s", allow_zero: bool = True) -> int:
    """A duration typed on the command line: a unit is required (``0`` excepted); a negative
    one is refused as negative (not as an unknown unit)."""
    if s.strip().startswith("-"):
        raise _fail("value", f"a duration cannot be negative, got {_show_text(s)}")
    if _BARE.match(s):
        if allow_zero and float(s) == 0:
            return 0
        raise _fail(
            "value",
            f"{_show_text(s)} has no unit"
            + (f": did you mean {_unit_hint(s, default_unit)}? " if len(s.strip()) <= 40 else " ")
            + "(units: ns, us, ms, s; e.g. 500us, 2ms, 1.5s)",
        )
    try:
        return parse_duration(s)
    except RtschedError as e:
        raise _fail("value", str(e)) from None


def cli_duration(default_unit: str = "s") -> Callable[[str], Any]:
    """An argparse type for a duration; ``default_unit`` only shapes the hint."""
    return _cli(lambda s: check_cli_duration(s, default_unit), "duration")


def check_cli_periods(s: str) -> str:
    """A period distribution whose every duration has a unit; returned unchanged."""
    kind, sep, rest = s.partition(":")
    if not sep:
        return s  # a preset name (seed004, ...); the generator checks it
    parts = re.split(r"([-,/])", rest)
    # The unit of the range's other end, for the hint: loguniform:10-100ms -> 10ms-100ms.
    units = [m.group(1) for p in parts if (m := re.search(r"(ns|us|µs|ms|s)\s*$", p))]
    fixed, bad = [], False
    for i, p in enumerate(parts):
        if p in ("-", ",", "/"):
            fixed.append(p)
            continue
        grain = i > 0 and parts[i - 1] == "/"
        if _BARE.match(p) and not grain:
            bad = True
            fixed.append(p.strip() + (units[0] if units else "ms"))
        else:
            fixed.append(p)
    if bad:
        raise _fail(
            "value",
            f"{s!r}: a period without a unit; did you mean {kind}:{''.join(fixed)}? "
            "(on the command line every time needs a unit: ns, us, ms, s)",
        )
    return s


cli_periods = _cli(check_cli_periods, "period distribution")


def parse_cpus(s: str, name: str = "cpus") -> list[int]:
    """A CPU list such as ``0,2-3``: ids in ``0 ..= MAX_CPU``, ranges checked before expansion."""
    if not isinstance(s, str) or not s.strip():
        raise _fail(name, f"expected a CPU list like 0,1 or 0-3, got {s!r}")
    out: list[int] = []
    for part in s.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not m:
            raise _fail(name, f"cannot read {part!r} in CPU list {s!r} (expected N or A-B, e.g. 0,2-3)")
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else a
        for x in (a, b):
            if x > MAX_CPU:
                raise _fail(name, f"CPU {x} in {s!r} is above the largest CPU id {MAX_CPU}")
        if b < a:
            raise _fail(name, f"the range {part!r} in {s!r} is empty (A-B needs A <= B)")
        out.extend(range(a, b + 1))
    if len(set(out)) != len(out):
        raise _fail(name, f"the CPU list {s!r} names a CPU twice")
    return out


def check_cli_cpus(s: str) -> str:
    """A CPU list checked by :func:`parse_cpus`; returned unchanged."""
    parse_cpus(s, "value")
    return s


cli_cpus = _cli(check_cli_cpus, "CPU list")


def given_twice(key: str, scheduler: str | None) -> str:
    """The one line of a scheduler parameter given twice, the engines' words
    (``rtsched_model::params::resolve``)."""
    return (f"{scheduler}: " if scheduler else "") + f"parameter {key}: given twice; give it once"


def param_pairs(params: dict | Iterable[str] | None, scheduler: str | None = None) -> list[tuple[str, str]]:
    """A scheduler's parameters, the one reader of ``rtsched run`` and ``rtsched simulate``
    (``--param KEY=VALUE``, ``params=``): ``{"priorities": "rm", "staggered": True}`` or
    ``["k=v", ...]`` -> ``[(k, text), ...]``. One given twice is refused as the engines refuse
    it (``rtsched_model::params::resolve``), naming ``scheduler``."""
    if params is None:
        return []
    if isinstance(params, dict):
        items = list(params.items())
    else:
        items = []
        for kv in params:
            k, sep, val = str(kv).partition("=")
            if not sep or not k.strip():
                raise RtschedError(f"bad parameter {kv!r}: use KEY=VALUE")
            items.append((k.strip(), val))
    out = []
    seen: set = set()
    for k, val in items:
        if isinstance(val, bool):
            val = "true" if val else "false"
        key = str(k).strip().replace("-", "_")
        if key in seen:  # --param k=1 --param k=2, or --param k=1 with --k 2: which one was meant?
            raise RtschedError(given_twice(key, scheduler))
        seen.add(key)
        out.append((str(k), str(val)))
    return out
