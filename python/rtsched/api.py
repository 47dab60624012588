"""The Python API over the Rust core: generation, analysis and partitioning.

Results are plain dicts shaped exactly like the CLI's ``--json`` output (docs/cli.md), so what
a script gets and what a shell pipeline gets are the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, overload

from . import _core
from ._core import RtschedError, TaskSet

DEFAULT_PERIODS = "loguniform:10ms-100ms"


def tests_available() -> list[str]:
    """Names accepted by ``analyze(tests=...)`` and ``rtsched analyze --test``."""
    return list(_core.test_names())


@overload
def generate(
    n: int | None,
    util: float,
    *,
    generator: str = ...,
    periods: str = ...,
    umax: float = ...,
    deadlines: str = ...,
    seed: int = ...,
    count: None = ...,
    m: int | None = ...,
) -> TaskSet: ...


@overload
def generate(
    n: int | None,
    util: float,
    *,
    generator: str = ...,
    periods: str = ...,
    umax: float = ...,
    deadlines: str = ...,
    seed: int = ...,
    count: int,
    m: int | None = ...,
) -> list[TaskSet]: ...


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
    ts: TaskSet,
    m: int | None = None,
    tests: Sequence[str] | None = None,
    max_steps: int = 1_000_000,
    **overheads: Any,
) -> dict[str, Any]:
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
    **overheads: Any,
) -> list[dict[str, Any]]:
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


#: Old spellings of ``partition``'s heuristics (plain partitioning named by its fit alone, the
#: admission test given apart) and what they are called now (docs/cli.md, "Method names").
_LEGACY_ADMISSION = {"edf": "pedf", "fp-dm": "pfp", "fp-rm": "pfp_rm"}


def _legacy_heuristic(heuristic: str, admission: str | None) -> tuple[str, str | None]:
    """(method name, deprecation message or None) for ``partition``'s old arguments."""
    h = heuristic.strip().lower()
    if admission is not None:
        if admission not in _LEGACY_ADMISSION:
            raise RtschedError(f"field 'admission': unknown admission {admission!r} (use edf, fp-rm or fp-dm)")
        if h in ("ffd", "wfd", "bfd", "nfd"):
            new = f"{_LEGACY_ADMISSION[admission]}_{h}"
            return new, f"heuristic {heuristic!r} with admission {admission!r} is now the method {new!r}"
        if admission != "edf":
            raise RtschedError(
                "field 'admission': SP-RES reservations are scheduled by EDF; name a plain partitioning "
                "method instead (pfp_ffd, pfp_rm_wfd, ...)"
            )
    if h in ("bfd", "nfd"):
        return f"pedf_{h}", f"heuristic {heuristic!r} is now the method 'pedf_{h}'"
    return heuristic, None


def partition(
    ts: TaskSet,
    m: int | None = None,
    heuristic: str = "pedf_ffd",
    admission: str | None = None,
    epsilon: int | str = 0,
    meta: bool = True,
    variant: str = "artifact",
    rp: str | None = None,
    rp_floor: int | str | None = None,
    slice_order: str = "flipped",
    merge_same_core: bool = False,
) -> dict[str, Any]:
    """Places a task set on ``m`` processors; returns the placement JSON (docs/spres.md,
    "Placement JSON") as a dict.

    ``heuristic`` is a placement method (docs/cli.md, "Method names"): plain partitioning
    ``pedf_ffd`` (default), ``pedf_wfd``, ``pedf_bfd``, ``pedf_nfd`` (EDF), ``pfp_ffd``, ...
    (fixed priority, deadline monotonic), ``pfp_rm_ffd``, ... (rate monotonic) — whole tasks
    in decreasing-utilization order, each processor admitted by its exact test; or SP-RES
    (Brandenburg & Gül, RTSS 2016): the cascade ``spres`` (``epsilon`` = minimum slice,
    ``meta`` = use PAF and RP), ``spres-nometa``, ``spres-paf``, ``spres-partition``, or one
    heuristic by the paper's name (``ffd``, ``wfd``, ``wfd-c=d``, ``PAF(WWFD)``, ...). Case and
    ``_``/``-`` do not matter. ``admission`` is deprecated: ``heuristic="ffd", admission="fp-dm"``
    still works (with a DeprecationWarning) and means ``pfp_ffd``.

    SP-RES options (docs/spres.md): ``variant`` ``"artifact"`` (the heuristics as the paper's
    published code runs them, the default) or ``"text"`` (as its text describes them); ``rp``
    ``"divisor"`` or ``"halving"`` (default: the variant's, divisor for the artifact, halving
    for the text); ``rp_floor`` the RP's minimum period (default 4 ms); ``slice_order``
    ``"flipped"`` or ``"deadline-desc"`` and ``merge_same_core`` (the artifact's Table I
    workloads) lay out split tasks.
    """
    import warnings

    name, note = _legacy_heuristic(str(heuristic), admission)
    if note is not None:
        warnings.warn(f"rtsched.partition: {note}", DeprecationWarning, stacklevel=2)
    eps = _core.parse_duration(epsilon) if isinstance(epsilon, str) else int(epsilon)
    floor = None
    if rp_floor is not None:
        floor = _core.parse_duration(rp_floor) if isinstance(rp_floor, str) else int(rp_floor)
    return dict(
        json.loads(
            _core.partition(
                ts,
                _resolve_m(ts, m),
                name,
                "edf",
                eps,
                bool(meta),
                variant,
                rp,
                floor,
                slice_order,
                bool(merge_same_core),
            )
        )
    )
