"""The experiment engine's error types, in a module of their own so that every other module of
the engine can import them without importing each other (no import circle).

All are subclasses of ``rtsched.RtschedError`` (a ``ValueError``), so the main CLI reports them
in one line like every other input error.
"""

from __future__ import annotations

from .._core import RtschedError as _Base  # the package's error: the CLI reports it like every other


class SpecError(_Base):
    """An invalid experiment spec or run request; the message names the file, table and key."""


class EvaluatorError(SpecError):
    """An evaluator returned something that breaks its contract (docs/experiments.md)."""


class EvaluatorMissing(SpecError):
    """This build of rtsched._core has no evaluate_point."""
