"""rtsched: a workbench for multiprocessor real-time scheduling.

The model (``Task``, ``TaskSet``), the generators, every schedulability test and the placement
heuristics are implemented in Rust (``rtsched._core``) and re-exported here. Times are integer
nanoseconds; wherever a time is accepted, a duration string such as ``"2ms"`` works too.

>>> import rtsched
>>> ts = rtsched.TaskSet([rtsched.Task(wcet="2ms", period="10ms")] * 3)
>>> rtsched.analyze(ts, m=2)["results"]["gfb"]["schedulable"]
True
"""

from ._core import (  # noqa: F401
    InternalError,
    RtschedError,
    Task,
    TaskSet,
    __version__,
    format_duration,
    parse_duration,
)
from .api import analyze, analyze_many, analyze_table, generate, partition, tests_available  # noqa: F401
from .io import load, loads, save  # noqa: F401
from .run import run, schedulers  # noqa: F401,E402
from .simulate import simulate, simulate_forkjoin  # noqa: F401

__all__ = [
    "InternalError",
    "RtschedError",
    "Task",
    "TaskSet",
    "analyze",
    "analyze_many",
    "analyze_table",
    "format_duration",
    "generate",
    "load",
    "loads",
    "parse_duration",
    "partition",
    "run",
    "save",
    "schedulers",
    "simulate",
    "simulate_forkjoin",
    "tests_available",
]
