"""Brandenburg & Gül, RTSS 2016, §VII on real threads: Fig. 7 (scheduling, context-switch and
release overhead of SP-RES vs P-EDF, P-FP and GSN-EDF on the same task sets), Fig. 8 (SP-RES's
migration-timer and subtask-activation overhead) and Table I (SP-RES migrations per second and
core at 0-50% average slack) measured with the runtime (``rtsched reproduce spres-runtime
[--quick]``; docs/reproductions.md, docs/mechanisms/spres.md).

The task sets are those of ``spres-table1`` (the same generator, seed derivation, grid keys and
placement options, through :func:`spres_table1.placed_sets`): each set placed by the SP-RES
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
(:func:`spres_table1.slack_runs`, the simulator's Table I on the same sets). Sets the cascade
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
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from ...runtime import realtime_lock
from ..errors import EvaluatorError, SpecError
from ..fields import NExpr, axis_values, check_keys, dedupe, integer_at_least, resolve_n
from ..point import derive_seed
from ..sweep import SweepResult, load_tables
from . import spres_table1 as t1
from ._sim import COMMON_KEYS, SimSpec, add_point, float_list, parse_common

if TYPE_CHECKING:
    from ..._core import TaskSet

DESCRIPTION = (
    "Brandenburg & Gül, RTSS 2016, Figs. 7-8 and Table I on real threads: SP-RES overheads vs "
    "P-EDF, P-FP, GSN-EDF; migration overheads; migrations vs slack"
)
SPEC = "spres-runtime.toml"
KIND = "spres-runtime"

#: The overhead terms kept per run (the runtime's names; docs/runtime.md): Fig. 7's three,
#: Fig. 8's two and SP-RES's budget timer.
TERMS = ("schedule", "context_switch", "release", "migration_timer", "subtask_activation", "budget_enforcement")
DEFAULT_SCHEDULERS = ("spres", "pedf", "pfp", "gsn-edf")
KEYS = (
    *COMMON_KEYS,
    "schedulers",
    "slack",
    "cash",
    "soft_unsplit",
    "rt_priority",
    "cpus",
    "max_samples",
    "check_trace",
    "exec_scale",
    "generator",
    *t1.PLACEMENT_KEYS,
)
VARIANT_KEYS = (
    "description",
    "samples",
    "horizon",
    "slack",
    "cash",
    "soft_unsplit",
    "exec_scale",
    "generator",
    "grid",
    *t1.PLACEMENT_KEYS,
)
GRID_KEYS = ("m", "n", "util", "util_frac")
#: A run the watchdog ends (its threads starved by the host) is tried at most this often.
RUN_ATTEMPTS = 3
#: At most this many stored samples per run and term (``max_samples``).
MAX_STORED = 1_000_000


def _bool(data: dict, key: str, default: bool, where: str) -> bool:
    v = data.get(key, default)
    if not isinstance(v, bool):
        raise SpecError(f"{where} {key}: expected true or false, got {v!r}")
    return v


def _schedulers(v, where: str) -> list[str]:
    from ...runtime import schedulers

    entries = {e["name"]: e for e in schedulers()}
    if not isinstance(v, list) or not v or any(not isinstance(s, str) for s in v) or len(set(v)) != len(v):
        raise SpecError(f"{where} schedulers: a non-empty list of distinct mechanism names, got {v!r}")
    for s in v:
        e = entries.get(s)
        if e is None:
            raise SpecError(f"{where} schedulers: unknown mechanism {s!r}; known: {', '.join(entries)}")
        if e["dedicated_cpu"] == "required" or e["backend"] != "Engine":
            raise SpecError(f"{where} schedulers: {s!r} runs on a dedicated CPU or in the kernel; not these sets")
    return list(v)


def _cpus(v, where: str) -> list[int] | None:
    from ..._core import RtschedError
    from ...runtime import parse_cpus

    if v is None:
        return None
    try:
        return parse_cpus(v if isinstance(v, (str, list)) else str(v))
    except RtschedError as e:
        raise SpecError(f"{where} cpus: {e}") from None


def parse(
    text: str, path: str | None = None, quick: bool = False, override: dict | None = None, variant: str | None = None
) -> SimSpec:
    """Parses an spres-runtime spec (``variant``: one of its [variants.NAME]; ``quick``: its
    [quick] table; ``override``: top-level keys and a ``grid`` table, applied last)."""
    c = parse_common(
        text,
        path,
        KIND,
        KEYS,
        GRID_KEYS,
        schema=SCHEMA,
        evaluator=evaluate_point,
        quick=quick,
        override=override,
        variant=variant,
        variant_keys=VARIANT_KEYS,
    )
    spec, data, grid, ms, where = c.spec, c.data, c.grid, c.ms, c.where
    gw = f"{where} [grid]"
    gen = data.get("generator", {})
    if not isinstance(gen, dict):
        raise SpecError(f"{where}: [generator] must be a table")
    check_keys(gen, t1.GEN_KEYS, f"table [generator] of {where}")
    generator: dict = {"name": "randfixedsum", "periods": "seed004", "umax": 1.0, "deadlines": "implicit"}
    generator.update(gen)
    generator["umax"] = float(generator["umax"])
    scheds = _schedulers(data.get("schedulers", list(DEFAULT_SCHEDULERS)), where)
    slack = float_list(data.get("slack", [0.0, 0.1, 0.25, 0.33, 0.5]), f"{where} slack", 0.0, 0.5)
    if any(s > 0 for s in slack) and "spres" not in scheds:
        raise SpecError(f"{where} slack: the slack runs are SP-RES runs; add 'spres' to schedulers")
    cash = _bool(data, "cash", True, where)
    soft = _bool(data, "soft_unsplit", True, where)
    check = _bool(data, "check_trace", False, where)
    prio = integer_at_least(data.get("rt_priority", 50), f"{where} rt_priority", 0)
    if prio > 98:
        raise SpecError(f"{where} rt_priority: 1..98 (SCHED_FIFO) or 0 (normal priority), got {prio}")
    keep = integer_at_least(data.get("max_samples", 20_000), f"{where} max_samples", 2)
    if keep > MAX_STORED:
        raise SpecError(f"{where} max_samples: at most {MAX_STORED:,}, got {keep:,}")
    scale = data.get("exec_scale", 1.0)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale <= 1:
        raise SpecError(f"{where} exec_scale: must be in (0, 1], got {scale!r}")
    scale = float(scale)
    cpus = _cpus(data.get("cpus"), where)
    if cpus is not None and ms != [len(cpus)]:
        raise SpecError(f"{gw}.m: with cpus = {data['cpus']!r} ({len(cpus)} CPUs) the grid's m must be [{len(cpus)}]")
    if "n" not in grid:
        raise SpecError(f"{gw}: key 'n' is required")
    if ("util" in grid) == ("util_frac" in grid):
        raise SpecError(f"{gw}: give exactly one of 'util' (total U) and 'util_frac' (U as a fraction of m)")
    ns = dedupe(axis_values(grid["n"], f"{gw}.n", item=NExpr.parse))
    ukey = "util" if "util" in grid else "util_frac"
    uvals = dedupe([float(v) for v in axis_values(grid[ukey], f"{gw}.{ukey}")])
    placement = t1._placement(data, where)
    # What the spec's parameters and every point share (in the points' key order).
    shared = {
        "horizon": c.horizon,
        "schedulers": scheds,
        "slack": slack,
        "cash": cash,
        "soft_unsplit": soft,
        "rt_priority": prio,
        "cpus": cpus,
        "max_samples": keep,
    }
    spec.params = {
        "seed": c.seed,
        "samples": c.samples,
        **shared,
        "exec_scale": scale,
        "generator": generator,
        **placement,
    }
    for m in ms:
        for n, n_expr in resolve_n(ns, m, gw):
            for u in uvals if ukey == "util" else [round(f * m, 10) for f in uvals]:
                if u > n * generator["umax"] + 1e-9 or u > m:
                    raise SpecError(f"{gw}: U = {u} is infeasible for n = {n}, m = {m}")
                p = {
                    "kind": KIND,
                    "m": m,
                    "n": n,
                    "n_expr": n_expr,
                    "util": u,
                    "util_frac": round(u / m, 10),
                    "count": c.samples,
                    # The seed of spres-table1's (and a sweep's) point: the same task sets.
                    "seed": derive_seed(c.seed, generator, n, m, u),
                    "generator": generator,
                    **shared,
                    "check_trace": check,
                    "exec_scale": scale,
                }
                p.update(placement)
                add_point(spec, p, {k: p[k] for k in ("m", "n", "n_expr", "util", "util_frac")})
    spec.rows_per_set = len(runs_of(scheds, slack))
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
    from ..._core import Task, TaskSet

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
    from ..._core import Task, TaskSet

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
    from ..._core import RtschedError
    from ...runtime import run_raw

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
    from ...runtime import find_scheduler

    if find_scheduler(sched)["placement"] == "partition":
        tts, part, cut = truncated(ts, pl)
        params = {"priorities": "rm"} if sched == "pfp" else None
        row = _run(p, cpus, sched, tts, part, params or {}, None, seed)
        row["truncated_tasks"] = cut
        return row
    return _run(p, cpus, sched, ts, None, {}, None, seed)


def report(spec: SimSpec, out: Path, run: SweepResult, fmt_: str = "png") -> dict:
    """The tables (printed and written to ``NAME.md``), the CSVs and the figure."""
    from ._spres_runtime_report import write_all

    return write_all(spec, pa.concat_tables(load_tables(spec, out)), out, run, fmt_)
