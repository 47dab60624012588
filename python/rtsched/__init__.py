"""rtsched: a workbench for multiprocessor real-time scheduling.

The model (``Task``, ``TaskSet``), the generators, every schedulability test and the placement
heuristics are implemented in Rust (``rtsched._core``) and re-exported here. Times are integer
nanoseconds; wherever a time is accepted, a duration string such as ``"2ms"`` works too.

>>> import rtsched
>>> ts = rtsched.TaskSet([rtsched.Task(wcet="2ms", period="10ms")] * 3)
>>> rtsched.analyze(ts, m=2)["results"]["gfb"]["schedulable"]
True

Every error rtsched raises is one of the classes exported here: :class:`RtschedError` (invalid
input, a ``ValueError``) and its subclasses :class:`NotPlacedError` (a task set that cannot be
placed), :class:`SpecError` (an experiment spec), :class:`EvaluatorError` and
:class:`EvaluatorMissing`; and :class:`InternalError` (a bug in rtsched, a ``RuntimeError``).
The API reference is docs/api.md.
"""

import sys as _sys
import types as _types
import warnings as _warnings

from . import simulation as _simulation
from ._core import (
    InternalError,
    RtschedError,
    Task,
    TaskSet,
    __version__,
    format_duration,
    format_time,
    parse_duration,
)
from .api import analyze, analyze_many, generate, partition, tests_available
from .experiments.errors import EvaluatorError, EvaluatorMissing, SpecError
from .io import load, load_many, loads, loads_many, save
from .plots import gantt
from .run import run
from .simulation import NotPlacedError, simulate, simulate_forkjoin, simulate_trace

__all__ = [
    "EvaluatorError",
    "EvaluatorMissing",
    "InternalError",
    "NotPlacedError",
    "RtschedError",
    "SpecError",
    "Task",
    "TaskSet",
    "__version__",
    "analyze",
    "analyze_many",
    "format_duration",
    "format_time",
    "gantt",
    "generate",
    "load",
    "load_many",
    "loads",
    "loads_many",
    "parse_duration",
    "partition",
    "run",
    "save",
    "simulate",
    "simulate_forkjoin",
    "simulate_trace",
    "tests_available",
]


class _MovedModule(_types.ModuleType):
    """``rtsched.simulate`` was a module and a function at once (the function won); the module is
    ``rtsched.simulation`` now. ``from rtsched.simulate import X`` keeps working, with a warning."""

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):  # probes by inspect, pickle, IDEs: no warning, no attribute
            raise AttributeError(name)
        _warnings.warn(
            "the module rtsched.simulate is now rtsched.simulation (rtsched.simulate is the function)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(_simulation, name)


_sys.modules.setdefault(__name__ + ".simulate", _MovedModule(__name__ + ".simulate"))
