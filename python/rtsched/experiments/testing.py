"""A pure-Python *fake* evaluator for the experiment engine's own tests. Never used by default.

It honours the evaluator contract of docs/experiments.md (columns, row order, types) and is a
deterministic function of the point, so tests can check resume, executors and plots without the
Rust core. Its numbers mean nothing: a task set of "difficulty" d (uniform in [0, 1), drawn from
the point's seed and the set index only) is "schedulable" by a method when U/m is below a
method-specific threshold shifted by d, epsilon and n. It is no schedulability test.

:func:`slowed_evaluate` is the *real* evaluator of a simulation reproduction's point (by its
``kind``) under the same knobs, for the resume tests of the simulation reproductions.

Environment knobs (for the kill/resume tests, which run sweeps in subprocesses):
- ``RTSCHED_FAKE_EVAL_LOG``: a file to which each evaluation appends the point's seed, epsilon
  and count as one line (an evaluation counter);
- ``RTSCHED_FAKE_EVAL_DELAY``: seconds to sleep per evaluation.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from pathlib import Path


def _threshold(method: str) -> float:
    h = int.from_bytes(hashlib.sha256(method.encode()).digest()[:4], "big")
    return 0.80 + 0.18 * (h / 2**32)


def _knobs(line: str) -> None:
    log = os.environ.get("RTSCHED_FAKE_EVAL_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(line + "\n")
    delay = float(os.environ.get("RTSCHED_FAKE_EVAL_DELAY", "0") or 0)
    if delay:
        time.sleep(delay)


def slowed_evaluate(point_json: str) -> dict:
    """The real evaluator of a simulation reproduction's point (chosen by the point's ``kind``),
    logged and delayed by the environment knobs."""
    from .registry import kinds

    p = json.loads(point_json)
    _knobs(f"{p['kind']} {p['seed']} {p['count']}")
    return kinds()[p["kind"]].evaluate_point(point_json)


def fake_evaluate(point_json: str) -> dict:
    p = json.loads(point_json)
    for key in (
        "generator",
        "periods",
        "umax",
        "deadlines",
        "n",
        "m",
        "util",
        "count",
        "seed",
        "methods",
        "epsilon",
        "max_steps",
    ):
        if key not in p:
            raise ValueError(f"fake evaluator: point lacks {key!r}")
    _knobs(f"{p['seed']} {p['epsilon']} {p['count']}")
    m, n, u, eps = p["m"], p["n"], p["util"], p["epsilon"]
    cols: dict[str, list] = {
        "set": [],
        "method": [],
        "schedulable": [],
        "gave_up": [],
        "switch_rate": [],
        "utilization": [],
    }
    for i in range(p["count"]):
        rng = random.Random(f"{p['seed']}:{i}")
        d = rng.random()
        for method in p["methods"]:
            gave_up = method.startswith("giveup")
            ok = None if gave_up else (u / m) < _threshold(method) + 0.05 * d - eps * 2e-8 + 0.002 * (n - m)
            cols["set"].append(i)
            cols["method"].append(method)
            cols["schedulable"].append(ok)
            cols["gave_up"].append(gave_up)
            cols["switch_rate"].append(2000.0 * n / m * (1 + u / m + d) if ok else None)
            cols["utilization"].append(u)
    return cols


def child_env(**extra: str) -> dict:
    """The environment of a child Python process (the kill and Ctrl-C tests run sweeps in
    subprocesses) that imports this very ``rtsched`` (its folder first on ``PYTHONPATH``), with
    ``extra`` variables (e.g. the knobs above) set."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra)
    return env
