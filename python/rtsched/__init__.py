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

from . import runtime as _runtime
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
from .api import analyze, analyze_many, analyze_table, generate, partition, tests_available
from .dag import analyze_dag, dag_tests_available, dag_to_dot, generate_dag, read_dag
from .experiments.errors import EvaluatorError, EvaluatorMissing, SpecError
from .io import load, load_many, loads, loads_many, save
from .plots import gantt
from .runtime import run, run_forkjoin, schedulers
from .simulation import NotPlacedError, simulate, simulate_dag, simulate_forkjoin, simulate_trace

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
    "analyze_dag",
    "dag_tests_available",
    "analyze_many",
    "analyze_table",
    "dag_to_dot",
    "format_duration",
    "format_time",
    "gantt",
    "generate",
    "generate_dag",
    "load",
    "load_many",
    "loads",
    "loads_many",
    "parse_duration",
    "partition",
    "read_dag",
    "run",
    "run_forkjoin",
    "save",
    "schedulers",
    "simulate",
    "simulate_dag",
    "simulate_forkjoin",
    "simulate_trace",
    "tests_available",
]


class _MovedModule(_types.ModuleType):
    """``rtsched.simulate`` and ``rtsched.run`` were modules and functions at once (the functions
    won); the modules are ``rtsched.simulation`` and ``rtsched.runtime`` now. ``from
    rtsched.simulate import X`` and ``from rtsched.run import X`` keep working, with a warning."""

    def __init__(self, name: str, target: _types.ModuleType) -> None:
        super().__init__(name)
        self._target = target

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):  # probes by inspect, pickle, IDEs: no warning, no attribute
            raise AttributeError(name)
        _warnings.warn(
            f"the module {self.__name__} is now {self._target.__name__} ({self.__name__} is the function)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(self._target, name)


for _old, _new in (("simulate", _simulation), ("run", _runtime)):
    _sys.modules.setdefault(f"{__name__}.{_old}", _MovedModule(f"{__name__}.{_old}", _new))
