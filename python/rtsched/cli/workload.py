"""The one place the CLI reads the task-set FILE of a command: :func:`read_workload` looks at the
file once and says what it holds, a sequential task-set file (:class:`TaskSetFile`: ``.json``,
``.jsonl`` or ``.csv``, docs/formats.md) or a fork-join task set (:class:`ForkJoinFile`: JSON whose
tasks have "regions", docs/rtws.md) or a DAG task set (:class:`DagFile`: JSON whose tasks have
"nodes", docs/dag.md). A command branches on the type only where the engines
differ (``simulate`` and ``run``); the commands that take sequential tasks call
:meth:`Workload.sequential`, which refuses a fork-join file in one line that says where it runs.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass

from .._core import RtschedError, TaskSet


@dataclass(frozen=True)
class Workload(ABC):
    """A command's task-set file; :func:`read_workload` returns one of the two kinds below (the
    base is abstract: each kind says how it reads as sequential tasks)."""

    path: str

    @abstractmethod
    def sequential(self, command: str) -> TaskSetFile:
        """This file as sequential task sets, for ``command``; a fork-join file is an error."""


@dataclass(frozen=True)
class TaskSetFile(Workload):
    """A file of sequential task sets (one in ``.json`` and ``.csv``, any number in ``.jsonl``).
    It is parsed when asked (:meth:`all`, :meth:`one`), so that the batch paths can hand the path
    to the Rust reader instead."""

    def sequential(self, command: str) -> TaskSetFile:
        return self

    def all(self) -> list[TaskSet]:
        """Every task set in the file (errors name the file, line and field)."""
        from ..io import load_many

        return load_many(self.path)

    def one(self, command: str) -> TaskSet:
        """The one task set of the file, for the commands that take one."""
        sets = self.all()
        if len(sets) != 1:
            raise RtschedError(f"{self.path}: {command} takes one task set, the file holds {len(sets)}")
        return sets[0]


@dataclass(frozen=True)
class ForkJoinFile(Workload):
    """A fork-join task set (docs/rtws.md), with the file's text, which the fork-join engines
    (the simulator's rtws and gedf, the runtime's rtws and push-pull) parse themselves."""

    text: str

    def sequential(self, command: str) -> TaskSetFile:
        raise RtschedError(
            f"{self.path} is a fork-join task set (its tasks have regions); {command} takes sequential tasks. "
            f"Simulate it with: rtsched simulate {self.path} --scheduler rtws (or gedf, spres)"
        )


@dataclass(frozen=True)
class DagFile(Workload):
    """A DAG task set (docs/dag.md), with the file's text, which the Rust DAG reader parses."""

    text: str

    def sequential(self, command: str) -> TaskSetFile:
        raise RtschedError(
            f"{self.path} is a DAG task set (its tasks have nodes); {command} takes sequential tasks. "
            f"Analyse, simulate or run it with: rtsched analyze|simulate|run {self.path}"
        )


def read_workload(path: str) -> TaskSetFile | ForkJoinFile | DagFile:
    """What the file at ``path`` holds. Only a ``.json`` file can be a fork-join task set; one that
    cannot be read or parsed here is a :class:`TaskSetFile`, whose loader then reports the problem
    in one line (nesting too deep included)."""
    if not str(path).lower().endswith(".json"):
        return TaskSetFile(path)
    from ..io import read_text

    try:
        text = read_text(path)
        doc = json.loads(text)
    except (RtschedError, ValueError, RecursionError):
        return TaskSetFile(path)
    tasks = doc.get("tasks") if isinstance(doc, dict) else None
    if isinstance(tasks, list) and any(isinstance(t, dict) and "regions" in t for t in tasks):
        return ForkJoinFile(path, text)
    if isinstance(tasks, list) and any(isinstance(t, dict) and "nodes" in t for t in tasks):
        return DagFile(path, text)
    return TaskSetFile(path)


def load_one(path: str, command: str) -> TaskSet:
    """The one sequential task set of the file at ``path``, for ``command``."""
    return read_workload(path).sequential(command).one(command)
