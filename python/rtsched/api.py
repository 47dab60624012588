"""The Python API over the Rust core: generation, analysis and partitioning.

Results are plain dicts shaped exactly like the CLI's ``--json`` output (docs/cli.md), so what
a script gets and what a shell pipeline gets are the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from . import _core
from ._core import RtschedError, TaskSet

DEFAULT_PERIODS = "loguniform:10ms-100ms"


def tests_available() -> list[str]:
    """Names accepted by ``analyze(tests=...)`` and ``rtsched analyze --test``."""
    return list(_core.test_names())


def generate(
    n: int | None,
    util: float,
    *,
    generator: str = "randfixedsum",
    periods: str = DEFAULT_PERIODS,
    umax: float = 1.0,
    deadlines: str = "implicit",
    seed: int = 0,
    count: int | None = None,
    m: int | None = None,
) -> TaskSet | list[TaskSet]:
    """Generates task sets (docs/generators.md).

    ``n`` tasks with total utilization ``util`` (for the Baker distributions ``n=None`` means
    "add tasks until ``util`` is exceeded, drop the last"). Task set ``i`` of a stream depends
    only on ``(seed, i)``. Returns one TaskSet, or a list when ``count`` is given. ``m`` is
    stored in the task sets (as in their files).
    """
    sets = _core.generate(
        n, float(util), generator, periods, float(umax), deadlines, int(seed), 1 if count is None else int(count), m
    )
    return sets[0] if count is None else sets


def _resolve_m(ts: TaskSet, m: int | None) -> int:
    if m is not None:
        return int(m)
    if ts.m is not None:
        return ts.m
    raise RtschedError('no processor count: pass m (--m) or put "m" in the task-set file')


def analyze(
    ts: TaskSet, m: int | None = None, tests: Sequence[str] | None = None, max_steps: int = 1_000_000, **overheads
) -> dict:
    """Runs schedulability tests on one task set; returns the documented JSON object as a dict.

    With ``overheads=MODEL`` (a model file, JSON text or dict) and ``mechanism=NAME`` (and
    optionally ``stat``, ``cpd``, ``quantum``, ``extrapolate``) the result also has an
    ``"overheads"`` object: hard and soft verdicts after task-parameter inflation
    (docs/overheads.md)."""
    return analyze_many([ts], m, tests, max_steps, **overheads)[0]


def analyze_many(
    sets: Iterable[TaskSet],
    m: int | None = None,
    tests: Sequence[str] | None = None,
    max_steps: int = 1_000_000,
    **overheads,
) -> list[dict]:
    """Runs the tests on many task sets in parallel (the GIL is released); ``overheads`` as in
    :func:`analyze`."""
    sets = list(sets)
    ms = [_resolve_m(ts, m) for ts in sets]
    out = [json.loads(s) for s in _core.analyze_sets(sets, ms, list(tests) if tests else None, int(max_steps))]
    if overheads.get("overheads") is not None or overheads.get("mechanism") is not None:
        from .overheads import analyze_overheads

        for r, o in zip(out, analyze_overheads(sets, ms, max_steps=max_steps, **overheads), strict=True):
            r["overheads"] = o
    elif overheads:
        raise RtschedError(f"unexpected arguments {sorted(overheads)} without overheads= and mechanism=")
    return out


def partition(
    ts: TaskSet,
    m: int | None = None,
    heuristic: str = "ffd",
    admission: str = "edf",
    epsilon: int | str = 0,
    meta: bool = True,
    variant: str = "artifact",
    rp: str | None = None,
    rp_floor: int | str | None = None,
    slice_order: str = "flipped",
    merge_same_core: bool = False,
) -> dict:
    """Places a task set on ``m`` processors.

    ``heuristic``: ``ffd``, ``wfd``, ``bfd``, ``nfd`` (plain partitioning with ``admission``
    ``edf``, ``fp-rm`` or ``fp-dm``), ``spres`` (the semi-partitioned reservation cascade of
    Brandenburg & Gül, RTSS 2016, ``epsilon`` = minimum slice, ``meta`` = use PAF/RP), or the
    name of one SP-RES heuristic. SP-RES options (docs/spres.md): ``variant`` ``"artifact"``
    (the heuristics as the paper's published code runs them, the default) or ``"text"`` (as
    its text describes them); ``rp`` ``"divisor"`` or ``"halving"`` (default: the variant's,
    divisor for the artifact, halving for the text); ``rp_floor`` the RP's minimum period
    (default 4 ms); ``slice_order`` ``"flipped"`` or ``"deadline-desc"`` and
    ``merge_same_core`` (the artifact's Table I workloads) lay out split tasks. Returns the
    placement JSON (docs/formats.md) as a dict.
    """
    eps = _core.parse_duration(epsilon) if isinstance(epsilon, str) else int(epsilon)
    floor = None
    if rp_floor is not None:
        floor = _core.parse_duration(rp_floor) if isinstance(rp_floor, str) else int(rp_floor)
    return json.loads(
        _core.partition(
            ts,
            _resolve_m(ts, m),
            heuristic,
            admission,
            eps,
            bool(meta),
            variant,
            rp,
            floor,
            slice_order,
            bool(merge_same_core),
        )
    )
