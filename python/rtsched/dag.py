"""DAG task sets (docs/dag.md): read, analyse, generate and draw them.

A DAG set is handled as the JSON text of a DAG file (docs/dag.md, "Model"); every function reads
it with the model's one DAG reader, whose errors name the task and node in one line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
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

    path = v.path(path, "path")
    text = read_text(path)
    try:
        return _core.dag_read(text)
    except _core.RtschedError as e:
        raise _core.RtschedError(f"{path}: {e}") from None


def analyze_dag(
    dag: str,
    m: int | None = None,
    tests: list[str] | None = None,
    max_steps: int = 1_000_000,
    priorities: str | Sequence[int] | None = None,
) -> dict[str, Any]:
    """The DAG tests on ``dag`` (the JSON text of a DAG file, e.g. from :func:`read_dag`) on ``m``
    cores (default: the file's ``"m"``): ``{"kind": "DAG", "n", "m", "utilization", "results"}``
    as ``rtsched analyze --json`` writes it (docs/cli.md#analyze). ``tests``: DAG test names
    (default: all that apply); a sequential test's name is an error. ``priorities`` (``"dm"``,
    ``"rm"``, ``"2,0,1"`` or ``[2, 0, 1]``: one rank per task, smaller = higher, ties to the lower
    index) replaces deadline-monotonic priorities in ``dag_melani_gfp`` and ``dag_fonseca_gfp``."""
    dag = v.text(dag, "dag")
    m = v.optional_processors(m)
    tests = v.test_names(tests)
    max_steps = v.max_steps(max_steps)
    prio = v.priorities(priorities)
    return json.loads(_core.dag_analyze(dag, m, tests, max_steps, prio))


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
    spec: dict[str, Any] = dict(
        shape=shape,
        n=v.integer(n, "n", 1, v.MAX_N),
        total=v.number(total, "total", 0.0, None, lo_open=True),
        umax=v.number(umax, "umax", 0.0, None, lo_open=True),
        wcet=_pair(wcet, "wcet", 1),
        beta=None if beta is None else v.number(beta, "beta", 0.0, 1.0, lo_open=True),
        max_tries=v.integer(max_tries, "max_tries", 1, 2**32 - 1),
    )
    prob = [
        ("p_par", p_par),
        ("p_add", p_add),
        ("p", p),
    ]
    checked = {name: v.number(x, name, 0.0, 1.0) for name, x in prob}
    depth = v.integer(max_depth, "max_depth", 1, 2**32 - 1)
    branches = v.integer(max_branches, "max_branches", 2, 2**32 - 1)
    sizes = {name: _pair(x, name, 1) for name, x in [("nodes", nodes), ("layers", layers), ("width", width)]}
    if shape == "nested-fork-join":
        spec.update(max_depth=depth, max_branches=branches, p_par=checked["p_par"], p_add=checked["p_add"])
    elif shape == "erdos-renyi":
        spec.update(nodes=sizes["nodes"], p=checked["p"])
    elif shape == "layered":
        spec.update(layers=sizes["layers"], width=sizes["width"], p=checked["p"])
    else:
        raise _core.RtschedError(f"unknown DAG shape {shape!r}; shapes: {', '.join(DAG_SHAPES)}")
    return _core.dag_generate(json.dumps(spec), seed, count, m)


def _pair(x: Any, name: str, lo: int) -> list[int]:
    """A ``(min, max)`` pair of integers, each at least ``lo`` and below 2^63."""
    if isinstance(x, (str, bytes, dict)) or not isinstance(x, (tuple, list)) or len(x) != 2:
        raise _core.RtschedError(f"argument '{name}': expected a pair (min, max) of integers, got {x!r}")
    return [v.integer(x[0], f"{name}[0]", lo, 2**63 - 1), v.integer(x[1], f"{name}[1]", lo, 2**63 - 1)]


def dag_to_dot(dag: str, task: int | None = None) -> str:
    """The DAG set's tasks as Graphviz DOT digraphs (one per task; ``task``: only that one): a
    box per node with its index and WCET, the critical path bold (``dot -Tsvg``)."""
    dag = v.text(dag, "dag")
    task = v.optional_integer(task, "task", 0, 2**32 - 1)
    return _core.dag_dot(dag, task)
