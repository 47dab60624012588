"""The evaluator: one call to the Rust core per sweep point.

Contract (docs/experiments.md): ``rtsched._core.evaluate_point(point_json: str) -> dict`` takes the
point's parameters as JSON and returns a dict of equal-length columns, one row per (task set,
method): ``set``, ``method``, ``schedulable``, ``gave_up``, ``switch_rate``, ``utilization``.
The core parallelises over the task sets of the point (rayon); the experiment engine
parallelises over points (see executors.py).
"""

from __future__ import annotations

from .spec import SpecError


class EvaluatorMissing(SpecError):
    """This build of rtsched._core has no evaluate_point."""


MISSING_MESSAGE = (
    "this build of rtsched._core has no evaluate_point (the Rust evaluator of sweep points); "
    "rebuild rtsched from a version that provides it (pip install -e .)"
)


def core_evaluator():
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
