"""The evaluator of a schedulability sweep point, and its contract: one call to the Rust core.

Contract (docs/experiments.md): ``rtsched._core.evaluate_point(point_json: str) -> dict`` takes the
point's parameters as JSON and returns a dict of equal-length columns, one row per (task set,
method): ``set``, ``method``, ``schedulable``, ``gave_up``, ``switch_rate``, ``utilization``.
The core parallelises over the task sets of the point (rayon); the experiment engine
parallelises over points (see executors.py). :func:`result_table` checks a result against the
contract and turns it into the point's table (the columns of :data:`SCHEMA`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from .errors import EvaluatorError, EvaluatorMissing

if TYPE_CHECKING:  # pragma: no cover
    from .point import Point

__all__ = [
    "RESULT_COLUMNS",
    "SCHEMA",
    "EvaluatorMissing",
    "core_evaluator",
    "evaluate_point",
    "has_core_evaluator",
    "result_table",
]

RESULT_COLUMNS = ("set", "method", "schedulable", "gave_up", "switch_rate", "utilization")
SCHEMA = pa.schema(
    [
        ("point", pa.string()),
        ("m", pa.int64()),
        ("n", pa.int64()),
        ("util", pa.float64()),
        ("epsilon", pa.int64()),
        ("set", pa.int64()),
        ("method", pa.string()),
        ("schedulable", pa.bool_()),
        ("gave_up", pa.bool_()),
        ("switch_rate", pa.float64()),
        ("utilization", pa.float64()),
    ]
)

MISSING_MESSAGE = (
    "this build of rtsched._core has no evaluate_point (the Rust evaluator of sweep points); "
    "rebuild rtsched from a version that provides it (pip install -e .)"
)


def core_evaluator() -> Callable[[str], dict]:
    """The Rust evaluator, or EvaluatorMissing with a clear message."""
    try:
        from .. import _core
    except ImportError as e:  # pragma: no cover - the package cannot import without it
        raise EvaluatorMissing(f"rtsched._core cannot be imported ({e}); {MISSING_MESSAGE}") from None
    fn = getattr(_core, "evaluate_point", None)
    if fn is None:
        raise EvaluatorMissing(MISSING_MESSAGE)
    return fn


def evaluate_point(point_json: str) -> dict:
    """The default evaluator (a module-level function, so that worker processes can import it)."""
    return core_evaluator()(point_json)


def has_core_evaluator() -> bool:
    try:
        core_evaluator()
    except EvaluatorMissing:
        return False
    return True


def result_table(point: Point, result: Any) -> pa.Table:
    """Check an evaluator result against the contract and turn it into the point's table."""
    where = f"evaluator result for point {point.id} ({point.label})"
    if not isinstance(result, dict):
        raise EvaluatorError(f"{where}: expected a dict of columns, got {type(result).__name__}")
    missing = [c for c in RESULT_COLUMNS if c not in result]
    if missing:
        raise EvaluatorError(f"{where}: missing column(s) {', '.join(missing)}")
    extra = [c for c in result if c not in RESULT_COLUMNS]
    if extra:
        raise EvaluatorError(f"{where}: unknown column(s) {', '.join(map(str, extra))}")
    rows = point.count * len(point.params["methods"])
    arrays = {}
    for col in RESULT_COLUMNS:
        typ = SCHEMA.field(col).type
        try:
            arr = pa.array(result[col], type=typ)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as e:
            raise EvaluatorError(f"{where}: column {col!r} is not of type {typ}: {e}") from None
        if len(arr) != rows:
            raise EvaluatorError(
                f"{where}: column {col!r} has {len(arr)} rows; expected count x methods = "
                f"{point.count} x {len(point.params['methods'])} = {rows}"
            )
        if col in ("set", "method", "gave_up", "utilization") and arr.null_count:
            raise EvaluatorError(f"{where}: column {col!r} has null values")
        arrays[col] = arr
    sets = arrays["set"].to_pylist()
    methods = arrays["method"].to_pylist()
    allowed = set(point.params["methods"])
    bad = {mt for mt in methods if mt not in allowed}
    if bad:
        raise EvaluatorError(f"{where}: method(s) {sorted(bad)} were not asked for")
    if any(s < 0 or s >= point.count for s in sets):
        raise EvaluatorError(f"{where}: 'set' must be in [0, {point.count})")
    if len(set(zip(sets, methods, strict=True))) != rows:
        raise EvaluatorError(f"{where}: some (set, method) pair is missing or repeated")
    c = point.coords
    head = {
        "point": pa.array([point.id] * rows, pa.string()),
        "m": pa.array([c["m"]] * rows, pa.int64()),
        "n": pa.array([c["n"]] * rows, pa.int64()),
        "util": pa.array([c["util"]] * rows, pa.float64()),
        "epsilon": pa.array([c["epsilon"]] * rows, pa.int64()),
    }
    return pa.Table.from_arrays([{**head, **arrays}[f.name] for f in SCHEMA], schema=SCHEMA)
