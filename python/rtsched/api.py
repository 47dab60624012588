"""The Python API over the Rust core: generation, analysis and partitioning.

Results are plain dicts shaped exactly like the CLI's ``--json`` output (docs/cli.md), so what
a script gets and what a shell pipeline gets are the same thing. Every argument is checked by
:mod:`rtsched.validate`: a wrong value raises :class:`rtsched.RtschedError` naming it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any, overload

from . import _core
from . import validate as v
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
    suspension_ratio: float | str | tuple[float, float] | None = ...,
    suspension_segments: int = ...,
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
    suspension_ratio: float | str | tuple[float, float] | None = ...,
    suspension_segments: int = ...,
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
    suspension_ratio: float | str | tuple[float, float] | None = None,
    suspension_segments: int = 2,
) -> TaskSet | list[TaskSet]:
    """Generates task sets (docs/generators.md).

    ``n`` tasks with total utilization ``util`` (for the Baker distributions ``n=None`` means
    "add tasks until ``util`` is exceeded, drop the last"). Task set ``i`` of a stream depends
    only on ``(seed, i)``. Returns one TaskSet, or a list when ``count`` is given. ``m`` is
    stored in the task sets (as in their files).

    ``suspension_ratio`` makes the tasks self-suspending (docs/generators.md, "Self-suspension"):
    each task suspends for ``S = round(R * (T - C))`` ns in total, ``R`` the ratio (a number in
    [0, 1]) or drawn uniformly from a range (``(lo, hi)`` or ``"lo-hi"``), split with ``C`` into
    ``suspension_segments`` execution segments. The tasks, utilizations and periods are those of
    the same seed without it.
    """
    n = v.optional_integer(n, "n", 1, v.MAX_N)
    util = v.number(util, "util", 0.0, None, lo_open=True)
    generator = v.text(generator, "generator")
    periods = v.text(periods, "periods")
    umax = v.number(umax, "umax", 0.0, 1.0, lo_open=True)
    deadlines = v.text(deadlines, "deadlines")
    seed = v.seed(seed)
    k = 1 if count is None else v.integer(count, "count", 1, 10_000_000)
    m = v.optional_processors(m)
    ratio = _suspension_ratio(suspension_ratio)
    segments = v.integer(suspension_segments, "suspension_segments", 2, 4096)
    sets = _core.generate(n, util, generator, periods, umax, deadlines, seed, k, m, ratio, segments)
    return sets[0] if count is None else sets


def _suspension_ratio(ratio: float | str | tuple[float, float] | None) -> str | None:
    """The suspension ratio as the text the generator reads: ``"R"`` or ``"LO-HI"``."""
    if ratio is None:
        return None
    if isinstance(ratio, str):
        return v.text(ratio, "suspension_ratio")
    if isinstance(ratio, tuple):
        if len(ratio) != 2:
            raise RtschedError(f"field 'suspension_ratio': a range is a pair (lo, hi), got {ratio!r}")
        lo = v.number(ratio[0], "suspension_ratio", 0.0, 1.0)
        hi = v.number(ratio[1], "suspension_ratio", 0.0, 1.0)
        return f"{lo!r}-{hi!r}"
    return repr(v.number(ratio, "suspension_ratio", 0.0, 1.0))


def _progress_bar(label: str):
    """A progress callback (done, total) drawing on stderr, for long batches."""
    from .experiments.progress import Progress

    state: dict = {}

    def cb(done, total):
        p = state.get("p")
        if p is None:
            p = state["p"] = Progress(
                total or 0, total or 0, stream=sys.stderr, label=label, unit="task sets", delay=0.5
            )
        p.update(done - p.points, done - p.sets)

    def close():
        if "p" in state:
            state["p"].close()

    return cb, close


def analyze(
    ts: TaskSet,
    m: int | None = None,
    tests: Sequence[str] | str | None = None,
    max_steps: int = 1_000_000,
    *,
    exact_utilization: bool = False,
    priorities: str | Sequence[int] | None = None,
    **overheads: Any,
) -> dict[str, Any]:
    """Runs schedulability tests on one task set; returns the documented JSON object as a dict.

    ``priorities`` (``"dm"``, ``"rm"``, ``"2,0,1"`` or ``[2, 0, 1]``: one rank per task,
    smaller = higher, ties to the lower index) replaces deadline-monotonic priorities in the
    global fixed-priority tests ``gfp_bc``, ``gfp_bc_slack`` and ``gfp_guan``
    (docs/analysis-global.md); the ``gfp_rm_*`` tests keep rate-monotonic priorities.

    ``utilization`` is a float for reading; with ``exact_utilization=True`` the report also
    holds ``utilization_exact``, the exact total as a ``"num/den"`` string (verdicts never
    depend on it: every test decides exactly on its own).

    With ``overheads=MODEL`` (a model file, JSON text or dict) and ``mechanism=NAME`` (and
    optionally ``stat``, ``cpd``, ``quantum``, ``extrapolate``) the result also has an
    ``"overheads"`` object: hard and soft verdicts after task-parameter inflation
    (docs/overheads.md).
    """
    ts = v.task_set(ts, "ts")
    return analyze_many(
        [ts], m, tests, max_steps, exact_utilization=exact_utilization, priorities=priorities, **overheads
    )[0]


def analyze_many(
    sets: Iterable[TaskSet],
    m: int | None = None,
    tests: Sequence[str] | str | None = None,
    max_steps: int = 1_000_000,
    *,
    exact_utilization: bool = False,
    progress: bool = False,
    priorities: str | Sequence[int] | None = None,
    **overheads: Any,
) -> list[dict[str, Any]]:
    """Runs the tests on many task sets in parallel in Rust (the GIL is released).

    ``priorities`` as in :func:`analyze`, the same for every set (a rank list must fit each).

    ``m`` overrides each set's own processor count. ``progress=True`` draws sets/s and an ETA
    on stderr. Ctrl-C stops within a fraction of a second: the ``KeyboardInterrupt`` raised
    carries the reports of the sets finished before it as ``.partial`` (a list, in order).
    ``overheads`` as in :func:`analyze`.

    DAG task sets (docs/dag.md) are given as their DAG JSON texts (from
    :func:`rtsched.generate_dag` or :func:`rtsched.read_dag`); each report is then what
    :func:`rtsched.analyze_dag` returns, and ``tests`` are DAG test names. A batch is all
    ``TaskSet`` objects or all DAG texts; a mixed one is an error naming the first item of the
    other kind. ``priorities``, ``exact_utilization`` and overheads apply to sequential sets only.
    """
    with_overheads = overheads.get("overheads") is not None or overheads.get("mechanism") is not None
    if overheads and not with_overheads:
        raise RtschedError(f"unexpected arguments {sorted(overheads)} without overheads= and mechanism=")
    if not isinstance(sets, (str, bytes, dict, TaskSet)) and isinstance(sets, Iterable):
        sets = list(sets)
        if sets and isinstance(sets[0], str):
            return _analyze_dag_many(sets, m, tests, max_steps, exact_utilization, progress, priorities, with_overheads)
    sets = v.task_sets(sets, "sets")
    m = v.optional_processors(m)
    tests = v.test_names(tests)
    max_steps = v.max_steps(max_steps)
    exact_utilization = v.boolean(exact_utilization, "exact_utilization")
    prio = v.priorities(priorities)
    ovh = None
    if with_overheads:
        from .overheads import overhead_args

        ovh = overhead_args(**overheads)
    cb, close = _progress_bar("analyze") if v.boolean(progress, "progress") else (None, lambda: None)
    try:
        # One call: the tests and, with overheads, the overhead-aware verdicts of each set.
        out, interrupted = _core.analyze_sets(sets, m, tests, max_steps, exact_utilization, cb, ovh, prio)
    finally:
        close()
    if interrupted:
        e = KeyboardInterrupt(f"interrupted after {len(out)} of {len(sets)} task sets")
        e.partial = out  # type: ignore[attr-defined]
        raise e
    return out


def _analyze_dag_many(
    sets: list[Any],
    m: int | None,
    tests: Sequence[str] | str | None,
    max_steps: int,
    exact_utilization: bool,
    progress: bool,
    priorities: Any,
    with_overheads: bool,
) -> list[dict[str, Any]]:
    """:func:`analyze_many` on DAG sets (their JSON texts), in parallel in Rust."""
    for i, x in enumerate(sets):
        if not isinstance(x, str):
            what = "a TaskSet (sequential tasks)" if isinstance(x, TaskSet) else v._show(x)
            raise RtschedError(
                f"argument 'sets': item {i} is {what} in a batch of DAG task sets (item 0 is DAG JSON text); "
                "a batch is all DAG sets or all TaskSets"
            )
    for given, opt in [
        (priorities is not None, "priorities"),
        (v.boolean(exact_utilization, "exact_utilization"), "exact_utilization"),
        (with_overheads, "overheads"),
    ]:
        if given:
            raise RtschedError(f"argument {opt!r}: applies to sequential task sets; these are DAG task sets")
    m = v.optional_processors(m)
    tests = v.test_names(tests)
    max_steps = v.max_steps(max_steps)
    cb, close = _progress_bar("analyze") if v.boolean(progress, "progress") else (None, lambda: None)
    try:
        out, interrupted = _core.analyze_dag_sets(sets, m, tests, max_steps, cb)
    finally:
        close()
    if interrupted:
        e = KeyboardInterrupt(f"interrupted after {len(out)} of {len(sets)} DAG task sets")
        e.partial = out  # type: ignore[attr-defined]
        raise e
    return out


def analyze_table(
    table: Any,
    m: int | None = None,
    tests: Sequence[str] | str | None = None,
    max_steps: int = 1_000_000,
    *,
    progress: bool = False,
) -> Any:
    """The array form of :func:`analyze_many`: task sets as columns in, a verdict table out.

    ``table`` holds one row per task: a pyarrow ``Table``, a pandas ``DataFrame`` or a dict of
    equal-length 1-D arrays (numpy arrays or sequences) with columns ``set`` (the task set each
    task belongs to; a set's rows must be contiguous), ``wcet``, ``period``, optional
    ``deadline`` (implicit when absent) — integer ns — and, when ``m`` is not given, ``m``
    (constant within a set). No Python object is made per task or per set, so a million sets
    cost a few arrays.

    Returns the same kind of table as given (a dict of numpy arrays for a dict) with one row per
    task set, in order: ``set`` (its label), ``n``, ``m``, ``utilization`` (float64) and, per
    test ``NAME``, ``NAME`` (bool: proved schedulable) and ``NAME_gave_up`` (bool: the test hit
    ``max_steps``). Verdicts are exact, as everywhere.
    """
    import numpy as np

    cols, kind = _columns(table)
    for need in ("set", "wcet", "period"):
        if need not in cols:
            raise RtschedError(f"argument 'table': no column {need!r} (columns: {', '.join(cols) or 'none'})")
    unknown = [c for c in cols if c not in ("set", "wcet", "period", "deadline", "m")]
    if unknown:
        raise RtschedError(
            f"argument 'table': unknown column(s) {', '.join(map(repr, unknown))} (set, wcet, period, deadline, m)"
        )
    rows = len(np.asarray(cols["set"]))
    arrs = {}
    for name, col in cols.items():
        a = np.asarray(col)
        if a.ndim != 1 or len(a) != rows:
            raise RtschedError(f"argument 'table': column {name!r} is not a 1-D column of {rows} rows")
        if name != "set" and a.dtype.kind not in "iu":
            raise RtschedError(
                f"argument 'table': column {name!r} must hold integers (ns), got dtype {a.dtype}"
                + (" (floats are not times: convert to integer ns)" if a.dtype.kind == "f" else "")
            )
        if name != "set" and a.dtype.kind == "i" and rows and a.min() < 0:
            bad = int(np.argmax(a < 0))
            raise RtschedError(f"argument 'table': row {bad}: field {name!r}: must be at least 0, got {int(a[bad])}")
        arrs[name] = a
    labels = arrs["set"]
    if rows == 0:
        starts = np.zeros(1, dtype=np.uint64)
        group_labels = labels[:0]
    else:
        change = np.flatnonzero(labels[1:] != labels[:-1]) + 1
        first = np.concatenate(([0], change))
        group_labels = labels[first]
        if len(np.unique(group_labels)) != len(group_labels):
            raise RtschedError("argument 'table': the rows of each set must be contiguous (sort the table by 'set')")
        starts = np.concatenate((first, [rows])).astype(np.uint64)
    sets = len(starts) - 1
    if m is not None:
        ms = np.full(sets, v.processors(m), dtype=np.uint64)
    elif "m" in arrs:
        per_row = arrs["m"]
        ms = per_row[starts[:-1].astype(np.int64)] if sets else per_row[:0]
        counts = np.diff(starts.astype(np.int64)).astype(np.int64)
        if sets and np.any(np.repeat(ms, counts) != per_row):
            raise RtschedError("argument 'table': column 'm' differs within a set")
        ms = ms.astype(np.uint64)
    else:
        raise RtschedError("argument 'm': no processor count: pass m or give an 'm' column")
    tests = v.test_names(tests)
    cb, close = _progress_bar("analyze") if v.boolean(progress, "progress") else (None, lambda: None)

    def buf(a):
        return np.ascontiguousarray(a, dtype=np.uint64).tobytes()

    try:
        res = _core.analyze_columns(
            buf(arrs["wcet"]),
            buf(arrs["period"]),
            buf(arrs["deadline"]) if "deadline" in arrs else None,
            starts.tobytes(),
            ms.tobytes(),
            tests,
            v.max_steps(max_steps),
            cb,
        )
    finally:
        close()
    out = {"set": group_labels, "n": np.diff(starts.astype(np.int64)), "m": ms.astype(np.int64)}
    out["utilization"] = np.frombuffer(res.pop("utilization"), dtype=np.float64)
    for name, b in res.items():
        out[name] = np.frombuffer(b, dtype=np.uint8).astype(bool)
    return _as_kind(out, kind)


def _columns(table) -> tuple[dict, str]:
    """The columns of a pyarrow Table, a pandas DataFrame or a dict, and which it was."""
    mod = type(table).__module__
    if mod.startswith("pyarrow"):
        return {name: table.column(name).to_numpy() for name in table.column_names}, "arrow"
    if mod.startswith("pandas"):
        return {str(c): table[c].to_numpy() for c in table.columns}, "pandas"
    if isinstance(table, dict):
        return dict(table), "dict"
    raise RtschedError(
        f"argument 'table': expected a pyarrow Table, a pandas DataFrame or a dict of columns, got "
        f"{type(table).__name__}"
    )


def _as_kind(out: dict, kind: str):
    if kind == "arrow":
        import pyarrow as pa

        return pa.table(out)
    if kind == "pandas":
        import pandas as pd

        return pd.DataFrame(out)
    return out


def _resolve_m(ts: TaskSet, m: int | None) -> int:
    if m is not None:
        return v.processors(m)
    if ts.m is not None:
        return ts.m
    raise RtschedError("argument 'm': no processor count: pass m (--m) or put \"m\" in the task-set file")


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


#: The placement method ``partition`` uses when none is named: worst-fit decreasing utilization
#: with exact EDF admission, the placement ``run`` and ``simulate`` give ``pedf`` without one
#: (``_core.default_partition``), so that one set gets one placement everywhere. Worst fit
#: spreads the load: every CPU keeps the most headroom below what Linux lets SCHED_FIFO
#: threads use (95% by default) and for overheads (docs/cli.md, "partition").
DEFAULT_PARTITION_METHOD = "pedf_wfd"


def partition(
    ts: TaskSet,
    m: int | None = None,
    heuristic: str = DEFAULT_PARTITION_METHOD,
    admission: str | None = None,
    epsilon: int | str = 0,
    meta: bool = True,
    variant: str = "artifact",
    rp: str | None = None,
    rp_floor: int | str | None = None,
    slice_order: str = "flipped",
    merge_same_core: bool = False,
    overheads: Any = None,
    mechanism: str | None = None,
    stat: str | None = None,
    cpd: int | str = 0,
    quantum: int | str = "1ms",
    extrapolate: bool = False,
) -> dict[str, Any]:
    """Places a task set on ``m`` processors; returns the placement JSON (docs/spres.md,
    "Placement JSON") as a dict.

    With ``overheads=MODEL`` (a model file, a directory of models as ``measure-overheads``
    writes them, JSON text or a dict) and ``mechanism="spres"``: the SP-RES cascade places the
    set inflated by the model's overheads (the rule ``analyze --overheads --mechanism spres``
    judges with; ``stat`` default ``max``, ``cpd``, ``quantum``, ``extrapolate`` as in
    :func:`analyze`), so the budgets include them; the placement's ``"overheads"`` object names
    the model, statistic and values (docs/spres.md, "Placements with overheads").

    ``heuristic`` is a placement method (docs/cli.md, "Method names"): plain partitioning
    ``pedf_wfd`` (default: :data:`DEFAULT_PARTITION_METHOD`, the placement ``run`` and ``simulate``
    give ``pedf``), ``pedf_ffd``, ``pedf_bfd``, ``pedf_nfd`` (EDF), ``pfp_ffd``, ...
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
    workloads) lay out split tasks. Ctrl-C stops a long partitioning (``KeyboardInterrupt``; a
    placement cut short is none).
    """
    import warnings

    ts = v.task_set(ts, "ts")
    m = _resolve_m(ts, m)
    name, note = _legacy_heuristic(v.text(heuristic, "heuristic"), v.optional_text(admission, "admission"))
    if note is not None:
        warnings.warn(f"rtsched.partition: {note}", DeprecationWarning, stacklevel=2)
    eps = v.duration(epsilon, "epsilon")
    floor = v.optional_duration(rp_floor, "rp_floor", 1)
    ovh: dict[str, Any] = {}
    if overheads is not None or mechanism is not None:
        ovh = _placement_overheads(overheads, mechanism, stat, cpd, quantum, extrapolate)
    return dict(
        json.loads(
            _core.partition(
                ts,
                m,
                name,
                "edf",
                eps,
                v.boolean(meta, "meta"),
                v.text(variant, "variant"),  # the names are checked by the core (one list)
                v.optional_text(rp, "rp"),
                floor,
                v.text(slice_order, "slice_order"),
                v.boolean(merge_same_core, "merge_same_core"),
                **ovh,
            )
        )
    )


def _placement_overheads(
    overheads: Any, mechanism: str | None, stat: str | None, cpd: Any, quantum: Any, extrapolate: Any
) -> dict[str, Any]:
    """The keyword arguments of ``_core.partition`` for a placement with overheads: the model
    read as ``analyze --overheads`` reads it (one file, JSON text or a dict; a directory: the
    model measured under the mechanism, as ``load_models`` picks it)."""
    import os

    from .overheads import load_models, mechanisms, overheads_text

    if overheads is None:
        raise RtschedError("field 'overheads': required with mechanism= (an overhead model)")
    mech = v.text(mechanism if mechanism is not None else "spres", "mechanism")
    label = os.fspath(overheads) if isinstance(overheads, (str, os.PathLike)) else "given"
    if isinstance(overheads, (str, os.PathLike)) and os.path.isdir(os.fspath(overheads)):
        models, _ = load_models(overheads)
        want = next((m["model"] for m in mechanisms() if m["name"] == mech), mech)
        if want not in models:
            raise RtschedError(
                f"field 'overheads': {label} has no model measured under {want} (found: {', '.join(models) or 'none'})"
            )
        text, label = models[want]["text"], models[want]["path"]
    else:
        text = overheads_text(overheads)
        if isinstance(overheads, str) and overheads.lstrip().startswith("{"):
            label = "given"
    return dict(
        overheads=text,
        mechanism=mech,
        overheads_label=label,
        stat=None if stat is None else v.choice(stat, "stat", ["max", "avg"]),
        cpd=v.duration(cpd, "cpd"),
        quantum=v.duration(quantum, "quantum", 1),
        extrapolate=v.boolean(extrapolate, "extrapolate"),
    )
