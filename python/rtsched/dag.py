"""DAG task sets (docs/dag.md): read, analyse, generate and draw them.

A DAG set is handled as the JSON text of a DAG file (docs/dag.md, "Model"); every function reads
it with the model's one DAG reader, whose errors name the task and node in one line.
"""

from __future__ import annotations

import json
from os import PathLike
from typing import Any

from . import _core
from . import validate as v

#: The DAG generators' shapes (docs/dag.md, "Generators").
DAG_SHAPES = ("nested-fork-join", "erdos-renyi", "layered")


def read_dag(path: str | PathLike[str]) -> str:
    """The DAG set in the file at ``path``, checked and written back as canonical DAG JSON text
    (integer ns). Errors name the file, the task and the node."""
    from .io import read_text

    text = read_text(str(path))
    try:
        return _core.dag_read(text)
    except _core.RtschedError as e:
        raise _core.RtschedError(f"{path}: {e}") from None


def analyze_dag(
    dag: str, m: int | None = None, tests: list[str] | None = None, max_steps: int = 1_000_000
) -> dict[str, Any]:
    """The DAG tests on ``dag`` (the JSON text of a DAG file, e.g. from :func:`read_dag`) on ``m``
    cores (default: the file's ``"m"``): ``{"kind": "DAG", "n", "m", "utilization", "results"}``
    as ``rtsched analyze --json`` writes it (docs/cli.md#analyze). ``tests``: DAG test names
    (default: all that apply); a sequential test's name is an error."""
    dag = v.text(dag, "dag")
    m = v.optional_processors(m)
    tests = v.test_names(tests)
    max_steps = v.max_steps(max_steps)
    return json.loads(_core.dag_analyze(dag, m, tests, max_steps))


def generate_dag(
    shape: str,
    n: int,
    total: float,
    *,
    umax: float = 1.0,
    wcet: tuple[int, int] = (1_000, 100_000),
    beta: float | None = None,
    seed: int = 0,
    count: int = 1,
    m: int | None = None,
    max_tries: int = 100,
    max_depth: int = 3,
    max_branches: int = 4,
    p_par: float = 0.8,
    p_add: float = 0.1,
    nodes: tuple[int, int] = (10, 30),
    p: float = 0.2,
    layers: tuple[int, int] = (3, 6),
    width: tuple[int, int] = (2, 5),
) -> list[str]:
    """``count`` seeded DAG sets (sets ``0..count`` of stream ``seed``; docs/dag.md,
    "Generators"), each as DAG JSON text. ``shape``: ``nested-fork-join`` (Melani et al., ECRTS
    2015: ``max_depth``, ``max_branches``, ``p_par``, ``p_add``), ``erdos-renyi`` (Cordeiro et al.,
    SIMUTools 2010: ``nodes``, ``p``) or ``layered`` (the same paper: ``layers``, ``width``,
    ``p``). ``total``: the target total utilization, ``umax`` the largest task utilization (may
    exceed 1), ``wcet`` the node WCET range in ns, ``beta`` the critical-path ratio (``D =
    min(T, ceil(len/beta))``; default implicit deadlines)."""
    shape = v.text(shape, "shape")
    seed = v.seed(seed)
    count = v.integer(count, "count", 1, 10_000_000)
    m = v.optional_processors(m)
    spec: dict[str, Any] = dict(shape=shape, n=n, total=total, umax=umax, wcet=list(wcet), beta=beta)
    spec["max_tries"] = max_tries
    if shape == "nested-fork-join":
        spec.update(max_depth=max_depth, max_branches=max_branches, p_par=p_par, p_add=p_add)
    elif shape == "erdos-renyi":
        spec.update(nodes=list(nodes), p=p)
    elif shape == "layered":
        spec.update(layers=list(layers), width=list(width), p=p)
    else:
        raise _core.RtschedError(f"unknown DAG shape {shape!r}; shapes: {', '.join(DAG_SHAPES)}")
    return _core.dag_generate(json.dumps(spec), seed, count, m)


def dag_to_dot(dag: str, task: int | None = None) -> str:
    """The DAG set's tasks as Graphviz DOT digraphs (one per task; ``task``: only that one): a
    box per node with its index and WCET, the critical path bold (``dot -Tsvg``)."""
    dag = v.text(dag, "dag")
    task = v.optional_integer(task, "task", 0)
    return _core.dag_dot(dag, task)
