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


def dag_tests_available(several: bool = False) -> list[str]:
    """The DAG tests by name (docs/dag.md), as ``analyze_dag(tests=...)``, ``rtsched analyze
    --test`` and sweeps take them, in the core's order; with ``several``, only those that apply
    to a set of several tasks (``dag_graham`` bounds one task alone)."""
    return list(_core.dag_test_names(v.boolean(several, "several")))


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
    index) replaces deadline-monotonic priorities in ``dag_melani_gfp``, ``dag_fonseca_gfp`` and
    ``dag_fonseca_gfp_chain``."""
    dag = v.text(dag, "dag")
    m = v.optional_processors(m)
    tests = v.test_names(tests)
    max_steps = v.max_steps(max_steps)
    prio = v.priorities(priorities)
    return json.loads(_core.dag_analyze(dag, m, tests, max_steps, prio))


#: The defaults of the shapes' parameters (docs/dag.md, "Generators"), shared by
#: :func:`generate_dag`, ``rtsched generate --dag`` and the sweep specs' DAG generator.
DAG_DEFAULTS: dict[str, Any] = dict(
    wcet=(1_000, 100_000),
    beta=None,
    max_tries=100,
    max_depth=3,
    max_branches=4,
    p_par=0.8,
    p_add=0.1,
    nodes=(10, 30),
    p=0.2,
    layers=(3, 6),
    width=(2, 5),
)

#: Each shape's own parameters.
SHAPE_KEYS: dict[str, tuple[str, ...]] = {
    "nested-fork-join": ("max_depth", "max_branches", "p_par", "p_add"),
    "erdos-renyi": ("nodes", "p"),
    "layered": ("layers", "width", "p"),
}


def dag_generator(shape: str, **params: Any) -> dict[str, Any]:
    """The DAG generator's object without ``n``, ``total`` and ``umax`` (what a sweep point's
    ``dag`` holds, docs/experiments.md): ``shape``, ``wcet``, ``beta``, ``max_tries`` and the
    shape's own parameters, each checked, the missing ones from :data:`DAG_DEFAULTS`. A
    parameter of another shape, or an unknown one, is an error naming it."""
    shape = v.text(shape, "shape")
    if shape not in SHAPE_KEYS:
        raise _core.RtschedError(f"unknown DAG shape {shape!r}; shapes: {', '.join(DAG_SHAPES)}")
    for k in params:
        if k not in DAG_DEFAULTS:
            raise _core.RtschedError(f"argument {k!r}: not a DAG generator parameter")
        if k not in ("wcet", "beta", "max_tries") and k not in SHAPE_KEYS[shape]:
            raise _core.RtschedError(f"argument {k!r}: not a parameter of the {shape} shape")
    p = {**DAG_DEFAULTS, **params}
    beta = p["beta"]
    spec: dict[str, Any] = dict(
        shape=shape,
        wcet=_pair(p["wcet"], "wcet", 1),
        beta=None if beta is None else v.number(beta, "beta", 0.0, 1.0, lo_open=True),
        max_tries=v.integer(p["max_tries"], "max_tries", 1, 2**32 - 1),
    )
    for k in SHAPE_KEYS[shape]:
        x = p[k]
        if k in ("p_par", "p_add", "p"):
            spec[k] = v.number(x, k, 0.0, 1.0)
        elif k == "max_depth":
            spec[k] = v.integer(x, k, 1, 2**32 - 1)
        elif k == "max_branches":
            spec[k] = v.integer(x, k, 2, 2**32 - 1)
        else:
            spec[k] = _pair(x, k, 1)
    return spec


def generate_dag(
    shape: str,
    n: int,
    total: float,
    *,
    umax: float = 1.0,
    seed: int = 0,
    count: int = 1,
    m: int | None = None,
    start: int = 0,
    **params: Any,
) -> list[str]:
    """``count`` seeded DAG sets (sets ``start .. start + count`` of stream ``seed``; set ``i``
    depends only on the parameters, ``seed`` and ``i``; docs/dag.md, "Generators"), each as DAG
    JSON text on one line. ``shape``: ``nested-fork-join`` (Melani et al., ECRTS 2015:
    ``max_depth`` 3, ``max_branches`` 4, ``p_par`` 0.8, ``p_add`` 0.1), ``erdos-renyi`` (Cordeiro
    et al., SIMUTools 2010: ``nodes`` (10, 30), ``p`` 0.2) or ``layered`` (the same paper:
    ``layers`` (3, 6), ``width`` (2, 5), ``p`` 0.2). ``total``: the target total utilization,
    ``umax`` the largest task utilization (may exceed 1), ``wcet`` the node WCET range in ns
    (default (1000, 100000)), ``beta`` the critical-path ratio (``D = min(T, ceil(len/beta))``;
    default implicit deadlines), ``max_tries`` the graph draws per task (default 100)."""
    spec = dag_generator(shape, **params)
    seed = v.seed(seed)
    count = v.integer(count, "count", 1, 10_000_000)
    start = v.integer(start, "start", 0, 2**63 - 1)
    m = v.optional_processors(m)
    spec.update(
        n=v.integer(n, "n", 1, v.MAX_N),
        total=v.number(total, "total", 0.0, None, lo_open=True),
        umax=v.number(umax, "umax", 0.0, None, lo_open=True),
    )
    return _core.dag_generate(json.dumps(spec), seed, count, m, start)


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
