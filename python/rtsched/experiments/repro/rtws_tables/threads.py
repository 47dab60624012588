"""The threads engine of ``rtws-tables``: Nogueira et al., EUC 2012 (RTWS: Real-Time
Work-Stealing), §VI Tables II-III **on real threads** (``rtsched reproduce rtws-tables --engine
threads [--quick]``, formerly ``rtws-runtime``, a name that still runs it; docs/reproductions.md,
docs/mechanisms/rtws.md).

The fork-join sets are exactly those of the simulator engine (``common.add_points``: the same
generator, seed derivation and set indices: set ``k`` of (m, window) here is set ``k`` there).
Each set runs on ``m`` real CPUs for ``horizon`` under two runtime mechanisms:

* ``rtws`` (``rtsched.runtime.run_forkjoin_raw``): the fork-join jobs as the RTWS paper
  schedules them (§V rules A-F);
* ``push-pull`` (``rtsched.runtime.run_forkjoin_raw`` too), the SCHED_DEADLINE-style push/pull
  global EDF that §VI compares against, on the same fork-join jobs: a region's threads are
  released with their job, held back until the region before has joined, and then forked onto the
  run-queue of the CPU where the last thread of that region completed, from where the push
  spreads them (global EDF over the threads with the job's deadline — the fork-join G-EDF that
  ``rtws-tables`` simulates).

Beside them, the simulator on the same sets and horizon: RTWS and the fork-join G-EDF of
``rtws-tables`` (``simulator.evaluate_point``: threads with precedence, the column
``rtws-tables`` reports), the push-pull run's counterpart.

Migrations "as the paper counts them" (§VI): RTWS its steals; the G-EDF side the threads'
migrations (a thread resuming on another CPU) plus its *start migrations*: the threads of a
forked region that first ran on a CPU other than the one they were forked on (the simulator's
remote starts; on threads :func:`remote_starts` counts them from the run's trace). Real-thread
runs of this reproduction never overlap, whatever executor runs the points: each point holds
``rtsched.runtime.realtime_lock`` (shared with the other real-thread reproductions).

Spec keys besides the common ones (``_sim.SimKeys``; ``horizon`` is each run's length):
``cpus`` (the CPUs to run on, e.g. ``"0-15"``; a point with ``m`` CPUs uses the first ``m``;
default: the first ``m`` this process may use), ``rt_priority`` (SCHED_FIFO priority of the
workers, 1..99, or 0 for none; refused by the OS without CAP_SYS_NICE, then the run falls back
to normal priority and its rows say so), and ``[grid]`` m, ``window`` as the simulator's (``common.Grid``).
"""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from ...._core import RtschedError
from ....runtime import parse_cpus, realtime_lock
from ...engines import EngineChoice
from ...errors import EvaluatorError, SpecError
from ...fields import spec_key
from .._sim import SimKeys, SimSpec, parse_common
from . import simulator
from .common import Grid, add_points
from .threads_report import (  # noqa: F401  (the protocol's steps, and what the tests read)
    LABELS,
    ROWS,
    csv_files,
    figure,
    paper_migrations,
    summarize,
)

#: What this engine reproduces (``rtsched reproduce --list`` shows it beside its former name).
DESCRIPTION = (
    "Nogueira et al., EUC 2012 (RTWS), Tables II-III on real threads: migrations, steals and context switches "
    "of rtws vs push-pull beside the simulator and the paper"
)
#: The kind of this engine's points (the former reproduction's name: the points keep their ids).
KIND = "rtws-runtime"
# ---------------------------------------------------------------------------------------------
# The spec.


def _cpus(value: Any, where: str) -> list[int]:
    if not isinstance(value, (str, list)):
        raise SpecError(f'{where}: a CPU list such as "0-15" or [0, 1], got {value!r}')
    try:
        return parse_cpus(value)
    except RtschedError as e:
        raise SpecError(f"{where.removesuffix(' cpus')} {e}") from None


def _rt_priority(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 99:
        raise SpecError(f"{where}: an integer in 0..=99 (0: normal priority), got {value!r}")
    return value


@dataclass(frozen=True, kw_only=True)
class Keys(EngineChoice, SimKeys):
    """The spec's top level on this engine: the common keys, ``cpus`` and ``rt_priority``."""

    cpus: list | None = spec_key(None, parse=_cpus)
    rt_priority: int = spec_key(0, parse=_rt_priority)


def parse(
    text: str,
    path: str | None = None,
    quick: bool = False,
    override: dict | None = None,
    variant: str | None = None,
    data: dict | None = None,
) -> SimSpec:
    """Parses the spec for real threads (``quick``: its [quick] table; ``override``: top-level
    keys and a ``grid`` table, applied last; it has no variants; ``data``: the TOML with the
    engine's table applied, engines.py)."""
    c = parse_common(
        text,
        path,
        KIND,
        Keys,
        Grid,
        schema=SCHEMA,
        evaluator=evaluate_point,
        quick=quick,
        override=override,
        variant=variant,
        data=data,
    )
    cpus, rt = c.keys.cpus, c.keys.rt_priority
    if cpus is not None and max(c.ms) > len(cpus):
        raise SpecError(f"{c.where} cpus: m = {max(c.ms)} needs {max(c.ms)} CPUs, the list has {len(cpus)}")
    c.spec.params = {"seed": c.seed, "samples": c.samples, "horizon": c.horizon, "cpus": cpus, "rt_priority": rt}
    # The simulator engine's sets: the same as `rtsched reproduce rtws-tables` with this seed.
    add_points(c, KIND, lambda m: {"cpus": cpus[:m] if cpus else None, "rt_priority": rt})
    c.spec.rows_per_set = len(ROWS)
    return c.spec


# ---------------------------------------------------------------------------------------------
# Evaluation of one point (runs in worker processes).

SCHEMA = pa.schema(
    [
        ("point", pa.string()),
        ("m", pa.int64()),
        ("lo", pa.float64()),
        ("hi", pa.float64()),
        ("set", pa.int64()),
        ("tasks", pa.int64()),
        ("par_threads", pa.int64()),
        ("utilization", pa.float64()),
        ("engine", pa.string()),
        ("scheduler", pa.string()),
        # Fork-join jobs released, completed and missed.
        ("fj_jobs", pa.int64()),
        ("fj_completed", pa.int64()),
        ("fj_deadline_misses", pa.int64()),
        # Thread-level: the entities the trace counts (thread jobs) and their outcome.
        ("threads", pa.int64()),
        ("threads_completed", pa.int64()),
        ("threads_pending", pa.int64()),
        ("thread_deadline_misses", pa.int64()),
        ("steals", pa.int64()),
        ("steal_attempts", pa.int64()),
        ("steal_p50_ns", pa.int64()),
        ("steal_p99_ns", pa.int64()),
        ("migrations", pa.int64()),
        ("start_migrations", pa.int64()),
        ("preemptions", pa.int64()),
        ("context_switches", pa.int64()),
        ("duration_ns", pa.int64()),
        ("cpus", pa.string()),
        ("rt_priority", pa.int64()),
        ("trustworthy", pa.bool_()),
    ]
)


def remote_starts(text: str, jsonl: str) -> int:
    """Threads of a forked region (not a job's first) that first ran on a CPU other than the one
    their region was forked on — the CPU where the last thread of the region before completed —
    from a fork-join run's JSON-lines trace (per thread slot, as ``slot_task_set`` numbers them):
    the simulator's ``remote_starts`` (``rtws-tables``), counted on threads."""
    slot: list[tuple[int, int]] = []
    for i, t in enumerate(json.loads(text)["tasks"]):
        for r, region in enumerate(t["regions"]):
            slot += [(i, r)] * len(region)
    first: dict[tuple[int, int], int] = {}
    joined: dict[tuple[int, int, int], tuple[int, int]] = {}
    for line in jsonl.splitlines()[1:]:
        x = json.loads(line)
        if x["ev"] == "run":
            first.setdefault((x["task"], x["job"]), x["cpu"])
        elif x["ev"] == "complete":
            i, r = slot[x["task"]]
            key = (i, x["job"], r)
            joined[key] = max(joined.get(key, (-1, -1)), (x["t"], x["cpu"]))
    n = 0
    for (s, j), cpu in first.items():
        i, r = slot[s]
        fork = joined.get((i, j, r - 1)) if r > 0 else None
        if fork is not None and fork[1] != cpu:
            n += 1
    return n


def _check(cond: bool, what: str) -> None:
    if not cond:
        raise EvaluatorError(f"rtws-runtime: inconsistent run: {what}")


def _run_threads(text: str, cpus: list, p: dict) -> tuple[dict, dict]:
    """Both mechanisms on the fork-join set (RT priority where permitted): their summaries,
    checked against their own job CSVs."""
    from ....runtime import run_forkjoin_raw

    def go(fn, arg, **kw):
        if p["rt_priority"]:
            try:
                return fn(arg, rt_priority=p["rt_priority"], **kw)
            except RtschedError as e:  # only the permission refusal falls back
                if "CAP_SYS_NICE" not in str(e):
                    raise
        return fn(arg, **kw)

    common = {"cpus": cpus, "duration": p["horizon"], "quiet": True, "exports": ["job_csv"]}
    rtws = go(run_forkjoin_raw, text, scheduler="rtws", **common)
    pp = go(run_forkjoin_raw, text, scheduler="push-pull", **{**common, "exports": ["job_csv", "jsonl"]})
    for name, res in (("rtws", rtws), ("push-pull", pp)):
        s = res["summary"]
        _check(s["accounting_error"] is None, f"{name}: {s['accounting_error']}")
        _check(s["jobs"] == s["completed"] + s["pending"], f"{name}: jobs != completed + pending")
        rows = list(csv.DictReader(io.StringIO(res["job_csv"])))
        _check(sum(int(r["migrations"]) for r in rows) == s["migrations"], f"{name}: job CSV migrations")
        fj = s["forkjoin"]
        _check(len(rows) == fj["jobs"] == fj["completed"] + fj["pending"], f"{name}: fork-join jobs")
        _check(fj["threads"] == s["jobs"] and fj["steals"] == s["steals"], f"{name}: threads / steals")
        if name == "rtws":
            _check(s["overheads"]["steal"]["count"] >= s["steals"], "rtws: fewer steal attempts than steals")
        else:
            _check(s["steals"] == 0, "push-pull: steals")
    return rtws, pp


def evaluate_point(point_json: str) -> dict:
    """One point: its fork-join sets on real threads under rtws and push-pull, and in the
    simulator (rtws-tables' columns); the columns (all of
    :data:`SCHEMA` but ``point``). Points never run at the same time on one machine (the
    simulations included, so that nothing of this reproduction competes with its threads)."""
    with realtime_lock():
        return _evaluate(point_json)


def _evaluate(point_json: str) -> dict:
    from .... import _core

    p = json.loads(point_json)
    m = p["m"]
    allowed = sorted(os.sched_getaffinity(0))
    cpus = p["cpus"] if p["cpus"] else allowed[:m]
    if len(cpus) < m:
        raise SpecError(f"m = {m} needs {m} CPUs but this process may use {len(allowed)}: set the spec's cpus")
    cpus = parse_cpus(cpus)
    texts = _core.forkjoin_generate(m, p["lo"], p["hi"], p["seed"], p["count"])
    # The simulator's columns exactly as rtws-tables computes them, on the same sets.
    sim = simulator.evaluate_point(json.dumps({**p, "schedulers": ["rtws", "gedf"]}))
    sim_rows = [{k: sim[k][i] for k in sim} for i in range(len(sim["set"]))]
    cols: dict[str, list] = {f.name: [] for f in SCHEMA if f.name != "point"}
    for i, text in enumerate(texts):
        rtws, pp = _run_threads(text, cpus, p)
        by = {r["scheduler"]: r for r in sim_rows if r["set"] == i}
        base = {k: by["rtws"][k] for k in ("m", "lo", "hi", "set", "tasks", "par_threads", "utilization")}
        out = []
        for res, sched in ((rtws, "rtws"), (pp, "push-pull")):
            s = res["summary"]
            fj = s["forkjoin"]
            st = s["overheads"].get("steal") if sched == "rtws" else None
            out.append(
                {
                    "engine": "threads",
                    "scheduler": sched,
                    "fj_jobs": fj["jobs"],
                    "fj_completed": fj["completed"],
                    "fj_deadline_misses": fj["deadline_misses"],
                    "threads": s["jobs"],
                    "threads_completed": s["completed"],
                    "threads_pending": s["pending"],
                    "thread_deadline_misses": s["deadline_misses"],
                    "steals": s["steals"],
                    "steal_attempts": st["count"] if st else None,
                    "steal_p50_ns": st["p50_ns"] if st else None,
                    "steal_p99_ns": st["p99_ns"] if st else None,
                    "migrations": s["migrations"],
                    "start_migrations": None if sched == "rtws" else remote_starts(text, res["jsonl"]),
                    "preemptions": s["preemptions"],
                    "context_switches": s["context_switches"],
                    "duration_ns": s["duration_ns"],
                    "cpus": ",".join(map(str, s["cpus"])),
                    "rt_priority": s["rt_priority"],
                    "trustworthy": s["trustworthy"],
                }
            )
        for sched, r in (("rtws", by["rtws"]), ("gedf-fj", by["gedf"])):
            out.append(
                {
                    "engine": "sim",
                    "scheduler": sched,
                    "fj_jobs": r["jobs"],
                    "fj_completed": r["completed"],
                    "fj_deadline_misses": r["deadline_misses"],
                    "threads": r["threads"],
                    "threads_completed": None,
                    "threads_pending": None,
                    "thread_deadline_misses": None,
                    "steals": r["steals"],
                    "steal_attempts": None,
                    "steal_p50_ns": None,
                    "steal_p99_ns": None,
                    "migrations": r["migrations"],
                    "start_migrations": r["remote_starts"] if sched == "gedf-fj" else None,
                    "preemptions": r["preemptions"],
                    "context_switches": r["context_switches"],
                    "duration_ns": r["horizon_ns"],
                    "cpus": None,
                    "rt_priority": None,
                    "trustworthy": None,
                }
            )
        _check([(r["engine"], r["scheduler"]) for r in out] == list(ROWS), "row order")
        for r in out:
            for k, val in {**base, **r}.items():
                cols[k].append(val)
    return cols
