"""The threads engine of ``spres-table1``: Brandenburg & Gül, RTSS 2016, §VII on real threads:
Fig. 7 (scheduling, context-switch and release overhead of SP-RES vs P-EDF, P-FP and GSN-EDF on
the same task sets), Fig. 8 (SP-RES's migration-timer and subtask-activation overhead) and Table I
(SP-RES migrations per second and core at 0-50% average slack) measured with the runtime
(``rtsched reproduce spres-table1 --engine threads [--quick]``, formerly ``spres-runtime``, a name
that still runs it; docs/reproductions.md, docs/mechanisms/spres.md).

The task sets are those of ``spres-table1`` (the same generator, seed derivation, grid keys and
placement options, through :func:`common.placed_sets`): each set placed by the SP-RES
cascade runs for ``horizon`` under every scheduler of ``schedulers`` on the CPUs ``cpus`` (one
real thread per CPU, ``rt_priority`` SCHED_FIFO):

* ``spres`` with the placement (CASH ``cash``; ``soft_unsplit``: every reservation soft, as the
  paper's published code runs them, else only the split tasks' — hard reservations of budget =
  WCET miss on threads, where a job runs its WCET plus the overheads);
* ``pedf`` and ``pfp`` (rate-monotonic, as §VII-A) with each task on its first part's CPU and a
  split task truncated to its first part (WCET = the first part's budget per period), as §VII-A
  ran the sets that P-EDF/P-FP cannot partition;
* ``gsn-edf`` (global: the set as it is).

Job bodies run ``exec_scale`` × their execution time (rtspin's ``-s``; the budgets stay those
placed for the WCETs, so a job's overheads fit in its budget). Sets whose placement splits a
task run again under ``spres`` at each nonzero ``slack`` s (execution times uniform in
[(1 − 2s)·C, C], rtspin's under-run) and are simulated under SP-RES at every level for the same horizon
(:func:`common.slack_runs`, the simulator's Table I on the same sets). Sets the cascade
cannot place are skipped and counted. Overhead samples are kept per run and term as at most
``max_samples`` evenly spaced order statistics (minimum and maximum included) with the true
count, so the pooled quantiles are exact up to one stored rank per run.

Real-thread points never overlap: each takes an exclusive lock
(``$TMPDIR/rtsched-realtime-UID.lock``) for its runs, whatever the executor's worker count.
Spec keys besides the common ones and spres-table1's placement keys: ``schedulers``, ``slack``,
``cash``, ``soft_unsplit``, ``exec_scale``, ``rt_priority`` (0: normal priority), ``cpus`` (a CPU list such as
``"0-15"``; default the first m CPUs this process may use), ``max_samples``, ``check_trace``
(count migrations and samples again from each run's exported trace, and fail on a mismatch).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ....runtime import realtime_lock
from ...engines import EngineChoice
from ...errors import EvaluatorError, SpecError
from ...fields import integer_at_least, spec_key
from ...point import derive_seed
from .._sim import SimKeys, SimSpec, add_point, parse_common
from . import common as t1
from .threads_report import csv_files, figure, summarize  # noqa: F401  (the protocol's steps)

if TYPE_CHECKING:
    from ...._core import TaskSet

#: What this engine reproduces (``rtsched reproduce --list`` shows it beside its former name).
DESCRIPTION = (
    "Brandenburg & Gül, RTSS 2016, Figs. 7-8 and Table I on real threads: SP-RES overheads vs "
    "P-EDF, P-FP, GSN-EDF; migration overheads; migrations vs slack"
)
#: The kind of this engine's points (the former reproduction's name: the points keep their ids).
KIND = "spres-runtime"

#: The overhead terms kept per run (the runtime's names; docs/runtime.md): Fig. 7's three,
#: Fig. 8's two and SP-RES's budget timer.
TERMS = ("schedule", "context_switch", "release", "migration_timer", "subtask_activation", "budget_enforcement")
DEFAULT_SCHEDULERS = ("spres", "pedf", "pfp", "gsn-edf")
#: A run the watchdog ends (its threads starved by the host) is tried at most this often.
RUN_ATTEMPTS = 3
#: At most this many stored samples per run and term (``max_samples``).
MAX_STORED = 1_000_000


def _schedulers(v: Any, where: str) -> list[str]:
    from ....runtime import schedulers

    entries = {e["name"]: e for e in schedulers()}
    if not isinstance(v, list) or not v or any(not isinstance(s, str) for s in v) or len(set(v)) != len(v):
        raise SpecError(f"{where}: a non-empty list of distinct mechanism names, got {v!r}")
    for s in v:
        e = entries.get(s)
        if e is None:
            raise SpecError(f"{where}: unknown mechanism {s!r}; known: {', '.join(entries)}")
        if e["dedicated_cpu"] == "required" or e["backend"] != "Engine":
            raise SpecError(f"{where}: {s!r} runs on a dedicated CPU or in the kernel; not these sets")
    return list(v)


def _cpus(v: Any, where: str) -> list[int] | None:
    from ...._core import RtschedError
    from ....runtime import parse_cpus

    try:
        return parse_cpus(v if isinstance(v, (str, list)) else str(v))
    except RtschedError as e:
        raise SpecError(f"{where}: {e}") from None


def _rt_priority(v: Any, where: str) -> int:
    prio = integer_at_least(v, where, 0)
    if prio > 98:
        raise SpecError(f"{where}: 1..98 (SCHED_FIFO) or 0 (normal priority), got {prio}")
    return prio


def _max_samples(v: Any, where: str) -> int:
    keep = integer_at_least(v, where, 2)
    if keep > MAX_STORED:
        raise SpecError(f"{where}: at most {MAX_STORED:,}, got {keep:,}")
    return keep


@dataclass(frozen=True, kw_only=True)
class Keys(EngineChoice, t1.Placement, SimKeys):
    """The spec's top level: the common keys, spres-table1's placement keys and generator, and
    ``schedulers``, ``slack``, ``cash``, ``soft_unsplit``, ``rt_priority``, ``cpus``,
    ``max_samples``, ``check_trace``, ``exec_scale``."""

    schedulers: list = spec_key(factory=lambda: list(DEFAULT_SCHEDULERS), parse=_schedulers)
    slack: list = spec_key(factory=lambda: list(t1.DEFAULT_SLACK), parse=t1._slack)
    cash: bool = True
    soft_unsplit: bool = True
    rt_priority: int = spec_key(50, parse=_rt_priority)
    cpus: list | None = spec_key(None, parse=_cpus)
    max_samples: int = spec_key(20_000, parse=_max_samples)
    check_trace: bool = False
    exec_scale: float = spec_key(1.0, parse=t1._exec_scale)
    generator: dict = spec_key(factory=dict)


VARIANT_KEYS = t1.VARIANT_KEYS


def parse(
    text: str,
    path: str | None = None,
    quick: bool = False,
    override: dict | None = None,
    variant: str | None = None,
    data: dict | None = None,
) -> SimSpec:
    """Parses the spec for real threads (``variant``: one of its [variants.NAME]; ``quick``: its
    [quick] table; ``override``: top-level keys and a ``grid`` table, applied last; ``data``:
    the TOML with the engine's table applied, engines.py)."""
    c = parse_common(
        text,
        path,
        KIND,
        Keys,
        t1.Grid,
        schema=SCHEMA,
        evaluator=evaluate_point,
        quick=quick,
        override=override,
        variant=variant,
        variant_keys=VARIANT_KEYS,
        data=data,
    )
    spec, k, ms, where = c.spec, c.keys, c.ms, c.where
    if any(s > 0 for s in k.slack) and "spres" not in k.schedulers:
        raise SpecError(f"{where} slack: the slack runs are SP-RES runs; add 'spres' to schedulers")
    if k.cpus is not None and ms != [len(k.cpus)]:
        raise SpecError(
            f"{where} [grid].m: with cpus = {c.keys.cpus!r} ({len(k.cpus)} CPUs) the grid's m must be [{len(k.cpus)}]"
        )
    sets = t1.set_grid(c)
    generator, placement = sets.generator, sets.placement
    # What the spec's parameters and every point share (in the points' key order).
    shared = {
        "horizon": k.horizon,
        "schedulers": k.schedulers,
        "slack": k.slack,
        "cash": k.cash,
        "soft_unsplit": k.soft_unsplit,
        "rt_priority": k.rt_priority,
        "cpus": k.cpus,
        "max_samples": k.max_samples,
    }
    spec.params = {
        "seed": k.seed,
        "samples": k.samples,
        **shared,
        "exec_scale": k.exec_scale,
        "generator": generator,
        **placement,
    }
    for m, n, n_expr, u in sets.cells:
        p = {
            "kind": KIND,
            "m": m,
            "n": n,
            "n_expr": n_expr,
            "util": u,
            "util_frac": round(u / m, 10),
            "count": k.samples,
            # The seed of spres-table1's (and a sweep's) point: the same task sets.
            "seed": derive_seed(k.seed, generator, n, m, u),
            "generator": generator,
            **shared,
            "check_trace": k.check_trace,
            "exec_scale": k.exec_scale,
        }
        p.update(placement)
        add_point(spec, p, {key: p[key] for key in ("m", "n", "n_expr", "util", "util_frac")})
    spec.rows_per_set = len(runs_of(k.schedulers, k.slack))
    if not spec.points:
        raise SpecError(f"{where}: the grid has no point")
    return spec


def runs_of(schedulers: list, slack: list) -> list[tuple[str, float]]:
    """The runs of one set, in row order: every scheduler at WCET execution (Fig. 7; SP-RES's is
    also Table I's 0% row), then SP-RES at each nonzero slack level (split sets only)."""
    return [(s, 0.0) for s in schedulers] + [("spres", s) for s in slack if s > 0]


# ---------------------------------------------------------------------------------------------
# Evaluation of one point (runs in a worker process or in this one).

SCHEMA = pa.schema(
    [
        ("point", pa.string()),
        ("m", pa.int64()),
        ("n", pa.int64()),
        ("util", pa.float64()),
        ("set", pa.int64()),
        ("placed", pa.bool_()),
        ("heuristic", pa.string()),
        ("split_tasks", pa.int64()),
        ("scheduler", pa.string()),
        ("slack", pa.float64()),
        ("ran", pa.bool_()),
        ("truncated_tasks", pa.int64()),
        ("duration_ns", pa.int64()),
        ("jobs", pa.int64()),
        ("completed", pa.int64()),
        ("deadline_misses", pa.int64()),
        ("migrations", pa.int64()),
        ("preemptions", pa.int64()),
        ("trustworthy", pa.bool_()),
        ("attempts", pa.int64()),
        ("max_poll_gap_ns", pa.int64()),
        ("trace_migrations", pa.int64()),
        ("sim_jobs", pa.int64()),
        ("sim_deadline_misses", pa.int64()),
        ("sim_migrations", pa.int64()),
        *[(f"{t}_count", pa.int64()) for t in TERMS],
        *[(f"{t}_ns", pa.list_(pa.int64())) for t in TERMS],
    ]
)


def thin(xs: list, k: int) -> list:
    """At most ``k`` (≥ 2) evenly spaced order statistics of ``xs``, sorted, the minimum and the
    maximum included (all of them when there are at most ``k``)."""
    ys = sorted(xs)
    if len(ys) <= k:
        return ys
    last = len(ys) - 1
    return [ys[(j * last) // (k - 1)] for j in range(k)]


def truncated(ts: TaskSet, pl: dict) -> tuple[TaskSet, list[list[int]], int]:
    """The set P-EDF and P-FP run (§VII-A: "we simply truncated migrating tasks to the first
    subtask"): each task on the CPU of its first part, a split task's WCET cut to what its first
    part serves per period (budget × period ratio); its partition (task indices per CPU) and the
    number of tasks truncated."""
    from ...._core import Task, TaskSet

    first = {}
    for c in pl["cpus"]:
        for r in c["reservations"]:
            if r["part"] == 1:
                first[r["task"]] = (c["cpu"], r["budget"])
    info = {t["task"]: t for t in pl["tasks"]}
    part: list[list[int]] = [[] for _ in range(pl["m"])]
    tasks, cut = [], 0
    for i, t in enumerate(ts):
        cpu, budget = first[i]
        wcet = t.wcet
        if info[i]["parts"] > 1:
            wcet = min(t.wcet, budget * info[i]["period_ratio"])
            cut += 1
        tasks.append(Task(wcet=wcet, deadline=t.deadline, period=t.period, name=t.name))
        part[cpu].append(i)
    return TaskSet(tasks), part, cut


def scaled(ts: TaskSet, f: float) -> TaskSet:
    """``ts`` with every WCET scaled by ``f`` (rtspin's ``-s``: what the job bodies run; the
    placement's budgets stay those of the unscaled WCETs)."""
    from ...._core import Task, TaskSet

    if f == 1.0:
        return ts
    return TaskSet(
        [Task(wcet=max(1, round(t.wcet * f)), deadline=t.deadline, period=t.period, name=t.name) for t in ts]
    )


def _trace_counts(jsonl: str) -> tuple[int, dict]:
    """Migrations and overhead samples per term counted from a run's exported trace."""
    mig, counts = 0, {t: 0 for t in TERMS}
    for line in jsonl.splitlines():
        r = json.loads(line)
        if r.get("ev") == "migration":
            mig += 1
        elif r.get("ev") == "overhead" and r.get("kind") in counts:
            counts[r["kind"]] += 1
    return mig, counts


def _run(p: dict, cpus: list, sched: str, ts, placement, params: dict, exec_lo: float | None, seed: int) -> dict:
    """One real-thread run; the row's run columns."""
    from ...._core import RtschedError
    from ....runtime import run_raw

    ts = scaled(ts, p["exec_scale"])
    exports = ["overhead_samples"] + (["jsonl"] if p["check_trace"] else [])
    for attempt in range(1, RUN_ATTEMPTS + 1):
        try:
            res = run_raw(
                ts,
                scheduler=sched,
                cpus=cpus,
                duration=p["horizon"],
                placement=placement,
                rt_priority=p["rt_priority"] or None,
                seed=seed,
                exports=exports,
                params=params,
                quiet=True,
                exec_min_fraction=exec_lo,
            )
            break
        except RtschedError as e:
            # The watchdog ends a run whose threads the host starved (e.g. another process's
            # SCHED_FIFO threads on the same CPUs): such a run is repeated, and counted.
            if "watchdog" in str(e) and attempt < RUN_ATTEMPTS:
                continue
            hint = "; set rt_priority = 0 in the spec to run at normal priority" if "CAP_SYS_NICE" in str(e) else ""
            raise SpecError(f"{sched} on CPUs {cpus}: {e}{hint}") from None
    if res["interrupted"]:
        # Ctrl-C stopped the run early: the point is not written (--resume computes it again).
        raise KeyboardInterrupt
    s, samples = res["summary"], res["overhead_samples"]
    row = {
        "ran": True,
        "duration_ns": s["duration_ns"],
        "jobs": s["jobs"],
        "completed": s["completed"],
        "deadline_misses": s["deadline_misses"],
        "migrations": s["migrations"],
        "preemptions": s["preemptions"],
        "trustworthy": bool(s["trustworthy"]),
        "max_poll_gap_ns": s.get("max_poll_gap_ns"),
        "trace_migrations": None,
        "attempts": attempt,
    }
    for t in TERMS:
        xs = samples.get(t, [])
        row[f"{t}_count"] = len(xs)
        row[f"{t}_ns"] = thin(xs, p["max_samples"])
        # The summary counts the samples its interference filter kept and those it discarded.
        taken = s["overheads"][t]["count"] + s["overheads"][t].get("discarded", 0) if t in s["overheads"] else None
        if taken is not None and taken != len(xs):
            raise EvaluatorError(f"{sched}: {t}: {len(xs)} samples but the summary counts {taken}")
    if p["check_trace"]:
        mig, counts = _trace_counts(res["jsonl"])
        row["trace_migrations"] = mig
        if mig != s["migrations"] or any(counts[t] != row[f"{t}_count"] for t in TERMS):
            raise EvaluatorError(
                f"{sched}: the exported trace has {mig} migrations and samples {counts}, the run "
                f"{s['migrations']} and { ({t: row[f'{t}_count'] for t in TERMS}) }"
            )
    return row


def _empty_run() -> dict:
    row: dict = {k: None for k in SCHEMA.names if k != "point"}
    row["ran"] = False
    for t in TERMS:
        row[f"{t}_count"] = 0
        row[f"{t}_ns"] = []
    return row


def _cpu_list(p: dict) -> list[int]:
    if p["cpus"] is not None:
        return list(p["cpus"])
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < p["m"]:
        raise SpecError(
            f"m = {p['m']} needs {p['m']} CPUs, this process may use {len(allowed)}; set the grid's m (and cpus)"
        )
    return allowed[: p["m"]]


def evaluate_point(point_json: str) -> dict:
    """One point: its sets placed (spres-table1's sets), each run on real threads under every
    scheduler and, split sets, under SP-RES at every slack level and in simulation; one row per
    (set, run) of :func:`runs_of`."""
    p = json.loads(point_json)
    cpus = _cpu_list(p)
    runs = runs_of(p["schedulers"], p["slack"])
    cols: dict[str, list] = {f.name: [] for f in SCHEMA if f.name != "point"}
    with realtime_lock():
        for i, ts, pl, _attempts, _scaled in t1.placed_sets(p):
            placed = bool(pl["schedulable"])
            splits = sum(1 for t in pl["tasks"] if t["parts"] > 1) if placed else 0
            seed = t1._exec_seed(p["seed"], i) % (1 << 63)
            sim = {}
            if placed and splits:
                for r in t1.slack_runs(p, i, ts, pl):
                    sim[r["slack"]] = r
            for sched, s in runs:
                row = _empty_run()
                if placed and (s == 0 or splits):
                    if sched == "spres":
                        params = {"cash": p["cash"], "soft": p["soft_unsplit"]}
                        lo = t1.slack_exec_fraction(s) if s > 0 else None
                        row.update(_run(p, cpus, sched, ts, pl, params, lo, seed))
                        if s in sim:
                            r = sim[s]
                            row["sim_jobs"], row["sim_deadline_misses"] = r["jobs"], r["deadline_misses"]
                            row["sim_migrations"] = r["migrations"]
                    else:
                        row.update(_other(p, cpus, sched, ts, pl, seed))
                row.update(
                    {
                        "m": p["m"],
                        "n": p["n"],
                        "util": p["util"],
                        "set": i,
                        "placed": placed,
                        "heuristic": pl.get("heuristic") if placed else None,
                        "split_tasks": splits,
                        "scheduler": sched,
                        "slack": s,
                    }
                )
                if row["truncated_tasks"] is None and row["ran"]:
                    row["truncated_tasks"] = 0
                for k in cols:
                    cols[k].append(row[k])
    return cols


def _other(p: dict, cpus: list, sched: str, ts, pl: dict, seed: int) -> dict:
    """A baseline's run: partitioned ones on the truncated set, global ones on the set."""
    from ....runtime import find_scheduler

    if find_scheduler(sched)["placement"] == "partition":
        tts, part, cut = truncated(ts, pl)
        params = {"priorities": "rm"} if sched == "pfp" else None
        row = _run(p, cpus, sched, tts, part, params or {}, None, seed)
        row["truncated_tasks"] = cut
        return row
    return _run(p, cpus, sched, ts, None, {}, None, seed)
