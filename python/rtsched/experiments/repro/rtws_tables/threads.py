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
from pathlib import Path
from typing import Any

import pyarrow as pa

from ...._core import RtschedError
from ....output import save_figure
from ....runtime import parse_cpus, realtime_lock
from ... import quickmark
from ...engines import EngineChoice
from ...errors import EvaluatorError, SpecError
from ...fields import spec_key
from ...reproduction import Csv
from .._sim import SimKeys, SimSpec, close, figure_axes, fmt, md, mean, median, parse_common
from . import simulator
from .common import PAPER_RTWS_TABLE2, PAPER_RTWS_TABLE3, WINDOWS, Grid, add_points

#: What this engine reproduces (``rtsched reproduce --list`` shows it beside its former name).
DESCRIPTION = (
    "Nogueira et al., EUC 2012 (RTWS), Tables II-III on real threads: migrations, steals and context switches "
    "of rtws vs push-pull beside the simulator and the paper"
)
#: The kind of this engine's points (the former reproduction's name: the points keep their ids).
KIND = "rtws-runtime"

#: (engine, scheduler) rows per set, in this order.
ROWS = (
    ("threads", "rtws"),
    ("threads", "push-pull"),
    ("sim", "rtws"),
    ("sim", "gedf-fj"),
)
LABELS = {
    ("threads", "rtws"): "RTWS, threads",
    ("threads", "push-pull"): "push-pull, threads",
    ("sim", "rtws"): "RTWS, simulator",
    ("sim", "gedf-fj"): "G-EDF fork-join, simulator",
}

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


# ---------------------------------------------------------------------------------------------
# The tables, the figure and the files.


def paper_migrations(r: dict) -> int | None:
    """Migrations as the paper counts them (§VI): RTWS its steals; G-EDF/push-pull the thread
    migrations plus the start migrations."""
    if r["scheduler"] == "rtws":
        return r["steals"]
    if r["migrations"] is None:
        return None
    return r["migrations"] + (r["start_migrations"] or 0)


def summarize(spec: SimSpec, table: pa.Table) -> dict:
    """Tables II-III on threads beside the simulator and the paper, and the averages per set."""
    rows = table.to_pylist()
    p = spec.params
    ms = sorted({r["m"] for r in rows})
    wins = sorted({(r["lo"], r["hi"]) for r in rows})
    wname = [f"{round(lo * 100)}–{round(hi * 100)}%" for lo, hi in wins]
    avg: dict = {}
    for m in ms:
        for w in wins:
            for key in ROWS:
                rs = [
                    r for r in rows if r["m"] == m and (r["lo"], r["hi"]) == w and (r["engine"], r["scheduler"]) == key
                ]
                avg[(m, w) + key] = {
                    "sets": len(rs),
                    "mig": mean([paper_migrations(r) for r in rs]),
                    "trace_mig": mean([r["migrations"] for r in rs]),
                    "start_mig": mean([r["start_migrations"] for r in rs]),
                    "steals": mean([r["steals"] for r in rs]),
                    "attempts": mean([r["steal_attempts"] for r in rs]),
                    # A cost: the median over the runs, which one disturbed run cannot move.
                    "steal_p50": median([r["steal_p50_ns"] for r in rs]),
                    "steal_p99": median([r["steal_p99_ns"] for r in rs]),
                    "preempt": mean([r["preemptions"] for r in rs]),
                    "cs": mean([r["context_switches"] for r in rs]),
                    "threads": sum(r["threads"] or 0 for r in rs),
                    "fj_jobs": sum(r["fj_jobs"] or 0 for r in rs),
                    "fj_misses": sum(r["fj_deadline_misses"] or 0 for r in rs),
                    "thread_misses": sum(r["thread_deadline_misses"] or 0 for r in rs),
                    "untrusted": sum(1 for r in rs if r["trustworthy"] is False),
                    "no_rt": sum(1 for r in rs if r["engine"] == "threads" and r["rt_priority"] is None),
                }
    prios = {r["rt_priority"] for r in rows if r["engine"] == "threads"}
    cpus = sorted({r["cpus"] for r in rows if r["cpus"]})
    lines = [
        f"{spec.name}: Nogueira et al., EUC 2012 §VI Tables II–III on real threads — {p['samples']} fork-join "
        f"set(s) per (m, window) (the sets of rtws-tables, seed {p['seed']}), {p['horizon'] / 1e9:g} s per run; "
        f"CPUs {'; '.join(cpus) or '—'}, SCHED_FIFO priority "
        f"{', '.join('none' if x is None else str(x) for x in sorted(prios, key=lambda x: x or 0))}",
        "threads: rtws = the runtime's RTWS on the fork-join jobs; push-pull = the runtime's SCHED_DEADLINE-style "
        "push/pull G-EDF on the same fork-join jobs (a region's threads forked onto the joining CPU, spread by "
        "the push). simulator: RTWS and fork-join G-EDF (rtws-tables' columns).",
    ]
    if spec.quick or spec.note:
        lines.append(f"NOTE: {spec.note or 'quick form'} — not the full experiment.")
    base_m = min(ms)

    def ratio_table(title: str, key: str, paper: dict) -> list:
        out = ["", title]
        hdr = ["m", "window"] + [LABELS[k] for k in ROWS] + ["paper RTWS", "paper SCHED_DEADLINE"]
        body = []
        for m in ms:
            for j, w in enumerate(wins):
                row = [m, wname[j]]
                for k in ROWS:
                    # Each engine's ratios are relative to its own RTWS on the smallest m.
                    b = avg[(base_m, w, k[0], "rtws")][key]
                    val = avg[(m, w) + k][key]
                    row.append(fmt(val / b if (val is not None and b) else None))
                pr = paper.get(m) if base_m == 2 else None
                if pr and w in WINDOWS:
                    x = WINDOWS.index(w)
                    row += [fmt(pr[0][x]) if pr[0][x] is not None else "?", fmt(pr[1][x]) if pr[1][x] else "?"]
                else:
                    row += ["—", "—"]
                body.append(row)
        return out + md(hdr, body)

    lines += ratio_table(
        f"Table II — scale-up ratios on migrations (as the paper counts them: RTWS steals; G-EDF/push-pull "
        f"thread migrations + start migrations), each engine relative to its RTWS on m = {base_m}; the paper's "
        "columns are Nogueira et al.'s numbers ([?] illegible in our copy)",
        "mig",
        PAPER_RTWS_TABLE2,
    )
    lines += ratio_table(
        f"Table III — scale-up ratios on context switches, each engine relative to its RTWS on m = {base_m}",
        "cs",
        PAPER_RTWS_TABLE3,
    )
    lines.append("")
    lines.append(
        "Averages per set: migrations (Table II's count), thread migrations (resumption on another CPU), "
        "start migrations, steals, steal attempts (Rule E searches, the `steal` term) and their cost (median and "
        "p99 of each run; the median over the runs), preemptions, context switches; misses and jobs summed"
    )
    hdr = [
        "m",
        "window",
        "engine, scheduler",
        "sets",
        "migrations",
        "thread migr.",
        "start migr.",
        "steals",
        "steal attempts",
        "steal p50 / p99",
        "preemptions",
        "context switches",
        "fork-join jobs (missed)",
        "thread jobs (missed)",
    ]
    body = []
    for m in ms:
        for j, w in enumerate(wins):
            for k in ROWS:
                a = avg[(m, w) + k]
                cost = (
                    f"{fmt(a['steal_p50'] / 1e3, 2)} / {fmt(a['steal_p99'] / 1e3, 2)} µs"
                    if a["steal_p50"] is not None
                    else "—"
                )
                body.append(
                    [
                        m,
                        wname[j],
                        LABELS[k],
                        a["sets"],
                        fmt(a["mig"], 1),
                        fmt(a["trace_mig"], 1),
                        fmt(a["start_mig"], 1),
                        fmt(a["steals"], 1) if k[1] == "rtws" else "—",
                        fmt(a["attempts"], 1),
                        cost,
                        fmt(a["preempt"], 1),
                        fmt(a["cs"], 1),
                        f"{a['fj_jobs']:,} ({a['fj_misses']})" if a["fj_jobs"] else "—",
                        f"{a['threads']:,} ({a['thread_misses']})"
                        if k != ("sim", "rtws") and k != ("sim", "gedf-fj")
                        else f"{a['threads']:,}",
                    ]
                )
    lines += md(hdr, body)
    untrusted = sum(a["untrusted"] for a in avg.values())
    no_rt = sum(a["no_rt"] for a in avg.values())
    if untrusted or no_rt:
        lines.append(
            f"({untrusted} real-thread run(s) flagged untrustworthy by the runtime, {no_rt} at normal priority: "
            "their counts are what the runs did, their timing was disturbed)"
        )
    return {"text": "\n".join(lines), "avg": avg, "ms": ms, "windows": wins}


def figure(res: dict, spec: SimSpec, path: Path) -> Path:
    """Migrations (as the paper counts them) and context switches per set, at the largest m."""
    m = max(res["ms"])
    wins = res["windows"]
    fig, axes = figure_axes(1, 2, figsize=(11, 3.8))
    width = 0.8 / len(ROWS)
    for ax, key, title in (
        (axes[0], "mig", f"(a) migrations (RTWS: steals), m = {m}"),
        (axes[1], "cs", f"(b) context switches, m = {m}"),
    ):
        for k, row in enumerate(ROWS):
            ax.bar(
                [i + (k - (len(ROWS) - 1) / 2) * width for i in range(len(wins))],
                [res["avg"][(m, w) + row][key] or 0 for w in wins],
                width=width,
                label=LABELS[row],
                hatch="" if row[0] == "threads" else "//",
            )
        ax.set_xticks(range(len(wins)))
        ax.set_xticklabels([f"{lo:g}–{hi:g}" for lo, hi in wins])
        ax.set_xlabel("per-core utilization window")
        ax.set_ylabel("average per task set")
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(
        quickmark.title(
            "Nogueira et al., EUC 2012 Tables II–III: real threads (plain) beside the simulator (hatched)", spec.quick
        ),
        fontsize=9,
    )
    fig.tight_layout()
    try:
        return save_figure(fig, path, dpi=120)
    finally:
        close(fig)


def csv_files(res: dict, spec: SimSpec) -> dict[str, Csv]:
    """``NAME.csv``: the averages per (m, window, engine, scheduler)."""
    keys = ("sets", "mig", "trace_mig", "start_mig", "steals", "attempts", "steal_p50", "steal_p99", "preempt", "cs")
    header = [
        "m",
        "lo",
        "hi",
        "engine",
        "scheduler",
        "sets",
        "mean_migrations_table2",
        "mean_thread_migrations",
        "mean_start_migrations",
        "mean_steals",
        "mean_steal_attempts",
        "median_steal_p50_ns",
        "median_steal_p99_ns",
        "mean_preemptions",
        "mean_context_switches",
        "fj_jobs",
        "fj_deadline_misses",
        "threads",
        "thread_deadline_misses",
    ]
    rows = [
        [m, w[0], w[1], e, s, *[a[k] for k in keys], a["fj_jobs"], a["fj_misses"], a["threads"], a["thread_misses"]]
        for (m, w, e, s), a in res["avg"].items()
    ]
    return {"csv": Csv(f"{spec.name}.csv", header, rows)}
