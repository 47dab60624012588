"""The simulator engine of ``rtws-tables`` (Nogueira et al., EUC 2012, §VI, Tables I-III and
Figs. 3-4; docs/reproductions.md, docs/rtws.md).

Fork-join sets of the paper's generator on m cores and three per-core utilization windows,
simulated under RTWS, G-EDF over threads and (for contrast) SP-RES over the sequentialized
tasks; migrations, steals, context switches and the scale-up ratios relative to RTWS on two
cores. Point files hold one row per (set, scheduler): the set's composition and the counts.

Spec keys besides the common ones (``_sim.SimKeys``): ``schedulers`` (a subset of rtws, gedf,
spres, with rtws) and ``[grid]`` m, ``window`` (per-core utilization windows [lo, hi]).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from ....output import save_figure
from ... import quickmark
from ...engines import EngineChoice
from ...errors import SpecError
from ...fields import spec_key
from ...reproduction import Csv
from .._sim import SimKeys, SimSpec, close, figure_axes, fmt, md, mean, parse_common
from .common import PAPER_RTWS_TABLE1, PAPER_RTWS_TABLE2, PAPER_RTWS_TABLE3, WINDOWS, Grid, add_points

#: The kind of this engine's points (and the reproduction's).
KIND = "rtws-tables"

FJ_SCHEDULERS = ("rtws", "gedf", "spres")

# ---------------------------------------------------------------------------------------------
# The spec.


def _schedulers(value: Any, where: str) -> list:
    if not isinstance(value, list) or not value or any(s not in FJ_SCHEDULERS for s in value):
        raise SpecError(f"{where}: a non-empty list of {', '.join(FJ_SCHEDULERS)}, got {value!r}")
    if "rtws" not in value:
        raise SpecError(f"{where}: the scale-up ratios are relative to rtws, which must be listed")
    return value


@dataclass(frozen=True, kw_only=True)
class Keys(EngineChoice, SimKeys):
    """The spec's top level on this engine: the common keys and ``schedulers`` (a subset of
    rtws, gedf, spres that holds rtws)."""

    schedulers: list = spec_key(factory=lambda: list(FJ_SCHEDULERS), parse=_schedulers)


def parse(
    text: str,
    path: str | None = None,
    quick: bool = False,
    override: dict | None = None,
    variant: str | None = None,
    data: dict | None = None,
) -> SimSpec:
    """Parses the spec for the simulator (``quick``: its [quick] table; ``override``: top-level
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
    scheds = c.keys.schedulers
    c.spec.params = {"seed": c.seed, "samples": c.samples, "horizon": c.horizon, "schedulers": scheds}
    add_points(c, KIND, lambda m: {"schedulers": list(scheds)})
    c.spec.rows_per_set = len(scheds)
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
        ("scheduler", pa.string()),
        ("placed", pa.bool_()),
        ("split_tasks", pa.int64()),
        ("jobs", pa.int64()),
        ("completed", pa.int64()),
        ("deadline_misses", pa.int64()),
        ("threads", pa.int64()),
        ("steals", pa.int64()),
        ("migrations", pa.int64()),
        ("remote_starts", pa.int64()),
        ("preemptions", pa.int64()),
        ("context_switches", pa.int64()),
        ("horizon_ns", pa.int64()),
    ]
)


def evaluate_point(point_json: str) -> dict:
    """One point: its fork-join sets simulated under each scheduler; the columns (all of
    :data:`SCHEMA` but ``point``)."""
    from .... import _core

    p = json.loads(point_json)
    texts = _core.forkjoin_generate(p["m"], p["lo"], p["hi"], p["seed"], p["count"])
    cols: dict[str, list] = {f.name: [] for f in SCHEMA if f.name != "point"}
    for i, text in enumerate(texts):
        doc = json.loads(text)
        tasks = doc["tasks"]
        par = sum(len(t["regions"][1]) if len(t["regions"]) > 1 else 0 for t in tasks)
        util = sum(sum(sum(r) for r in t["regions"]) / t["period"] for t in tasks)
        for sch in p["schedulers"]:
            r = json.loads(_core.forkjoin_simulate(text, p["m"], sch, p["horizon"]))
            placed = r.get("placed", True)
            row = {
                "m": p["m"],
                "lo": p["lo"],
                "hi": p["hi"],
                "set": i,
                "tasks": len(tasks),
                "par_threads": par,
                "utilization": util,
                "scheduler": sch,
                "placed": placed,
                "split_tasks": r.get("split_tasks"),
            }
            for k in (
                "jobs",
                "completed",
                "deadline_misses",
                "threads",
                "steals",
                "migrations",
                "remote_starts",
                "preemptions",
                "context_switches",
            ):
                row[k] = r.get(k) if placed else None
            row["horizon_ns"] = r.get("horizon") if placed else None
            for k, v in row.items():
                cols[k].append(v)
    return cols


# ---------------------------------------------------------------------------------------------
# The tables, the figure and the files.


def summarize(spec: SimSpec, table: pa.Table) -> dict:
    """Nogueira et al., EUC 2012 Tables I–III (and the Fig. 3–4 averages) from the rows."""
    rows = table.to_pylist()
    p = spec.params
    scheds = p["schedulers"]
    ms = sorted({r["m"] for r in rows})
    wins = sorted({(r["lo"], r["hi"]) for r in rows})
    wname = [f"{round(lo * 100)}–{round(hi * 100)}%" for lo, hi in wins]

    def cell(m, w, sch):
        return [r for r in rows if r["m"] == m and (r["lo"], r["hi"]) == w and r["scheduler"] == sch]

    # "Migrations" as the paper counts them: RTWS steals; G-EDF (SCHED_DEADLINE in the paper)
    # moves of threads between cores: resumptions elsewhere plus threads started away from the
    # CPU they were forked on; SP-RES: job migrations.
    def paper_mig(r):
        if r["scheduler"] == "rtws":
            return r["steals"]
        if r["scheduler"] == "gedf":
            return r["migrations"] + (r["remote_starts"] or 0)
        return r["migrations"]

    avg = {}
    for m in ms:
        for w in wins:
            for sch in scheds:
                rs = [r for r in cell(m, w, sch) if r["placed"]]
                avg[(m, w, sch)] = {
                    "sets": len(rs),
                    "unplaced": len(cell(m, w, sch)) - len(rs),
                    "mig": mean([paper_mig(r) for r in rs]),
                    "trace_mig": mean([r["migrations"] for r in rs]),
                    "steals": mean([r["steals"] for r in rs]),
                    "remote": mean([r["remote_starts"] for r in rs]),
                    "cs": mean([r["context_switches"] for r in rs]),
                    "misses": sum(r["deadline_misses"] for r in rs),
                    "jobs": sum(r["jobs"] for r in rs),
                }
    lines = [
        f"{spec.name}: Nogueira et al., EUC 2012 §VI Tables I–III and Figs. 3–4 in simulation — "
        f"{p['samples']} fork-join sets per (m, window), {p['horizon'] / 1e9:g} s of virtual time each; "
        f"schedulers: {', '.join(scheds)} (gedf = event-driven G-EDF over threads; spres = SP-RES with CASH over "
        "the sequentialized tasks, contrast only)"
    ]
    if spec.quick or spec.note:
        lines.append(f"NOTE: {spec.note or 'quick form'} — not the full experiment.")
    lines.append("")
    lines.append(
        "Table I — composition (totals over the sets; threads = Σ n_i, the parallel threads per task): ours [paper]"
    )
    hdr = ["m"] + [f"tasks {w}" for w in wname] + [f"threads {w}" for w in wname]
    body = []
    for m in ms:
        tasks, threads = [], []
        for w in wins:
            rs = cell(m, w, "rtws")
            pt = PAPER_RTWS_TABLE1.get(m)
            j = WINDOWS.index(w) if w in WINDOWS else None
            tasks.append(f"{sum(r['tasks'] for r in rs):,}" + (f" [{pt[0][j]}]" if pt and j is not None else ""))
            threads.append(
                f"{sum(r['par_threads'] for r in rs):,}" + (f" [{pt[1][j]}]" if pt and j is not None else "")
            )
        body.append([m] + tasks + threads)
    lines += md(hdr, body)
    if p["samples"] != 20:
        lines.append(f"(the paper's totals are over 20 sets per cell, ours over {p['samples']})")

    def ratio_table(title, key, paper):
        out = ["", title]
        hdr = ["m"] + [f"{s} {w}" for s in scheds for w in wname]
        body = []
        for m in ms:
            row = [m]
            for sch in scheds:
                for w in wins:
                    base = avg.get((min(ms), w, "rtws"), {}).get(key)
                    v = avg[(m, w, sch)][key]
                    r = v / base if (v is not None and base) else None
                    pr = paper.get(m)
                    cellv = fmt(r)
                    if pr and sch in ("rtws", "gedf") and w in WINDOWS and min(ms) == 2:
                        ref = pr[0 if sch == "rtws" else 1][WINDOWS.index(w)]
                        cellv += f" [{fmt(ref) if ref is not None else '?'}]"
                    row.append(cellv)
            body.append(row)
        return out + md(hdr, body)

    base_m = min(ms)
    lines += ratio_table(
        f"Table II — scale-up ratios on the number of migrations, relative to RTWS on m = {base_m} "
        "(RTWS: steals, as the paper counts them; G-EDF: thread migrations + remote starts, the "
        "paper's SCHED_DEADLINE column in brackets; SP-RES: job migrations): ours [paper]",
        "mig",
        PAPER_RTWS_TABLE2,
    )
    lines += ratio_table(
        f"Table III — scale-up ratios on the number of context switches, relative to RTWS on "
        f"m = {base_m}: ours [paper; G-EDF's bracket is SCHED_DEADLINE]",
        "cs",
        PAPER_RTWS_TABLE3,
    )
    lines.append("[?] = illegible in our copy of the paper.")
    lines.append("")
    lines.append(
        "Figs. 3–4 — averages per task set (all m; the paper plots m = 8): migrations as in Table II, "
        "thread-level migrations (resumption on another CPU), steals, remote starts, context switches"
    )
    hdr = [
        "m",
        "window",
        "scheduler",
        "sets",
        "migrations (Table II)",
        "thread migrations",
        "steals",
        "remote starts",
        "context switches",
        "deadline misses",
        "not placed",
    ]
    body = []
    for m in ms:
        for k, w in enumerate(wins):
            for sch in scheds:
                a = avg[(m, w, sch)]
                body.append(
                    [
                        m,
                        wname[k],
                        sch,
                        a["sets"],
                        fmt(a["mig"], 1),
                        fmt(a["trace_mig"], 1),
                        fmt(a["steals"], 1) if sch == "rtws" else "—",
                        fmt(a["remote"], 1) if sch == "gedf" else "—",
                        fmt(a["cs"], 1),
                        a["misses"],
                        a["unplaced"],
                    ]
                )
    lines += md(hdr, body)
    return {"text": "\n".join(lines), "avg": avg, "ms": ms, "windows": wins}


def figure(res: dict, spec: SimSpec, path: Path) -> Path:
    """Figs. 3-4: migrations and context switches per task set at the largest m, per window."""
    m = max(res["ms"])
    wins = res["windows"]
    scheds = spec.params["schedulers"]
    fig, axes = figure_axes(1, 2, figsize=(10, 3.6))
    width = 0.8 / len(scheds)
    for ax, key, title in (
        (axes[0], "mig", f"(a) migrations (RTWS: steals), m = {m}"),
        (axes[1], "cs", f"(b) context switches, m = {m}"),
    ):
        for k, sch in enumerate(scheds):
            ax.bar(
                [i + (k - (len(scheds) - 1) / 2) * width for i in range(len(wins))],
                [res["avg"][(m, w, sch)][key] or 0 for w in wins],
                width=width,
                label=sch,
            )
        ax.set_xticks(range(len(wins)))
        ax.set_xticklabels([f"{lo:g}–{hi:g}" for lo, hi in wins])
        ax.set_xlabel("per-core utilization window")
        ax.set_ylabel("average per task set")
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(quickmark.title("Nogueira et al., EUC 2012 Figs. 3–4 in simulation", spec.quick), fontsize=9)
    fig.tight_layout()
    try:
        return save_figure(fig, path, dpi=120)
    finally:
        close(fig)


def csv_files(res: dict, spec: SimSpec) -> dict[str, Csv]:
    """``NAME.csv``: the averages per (m, window, scheduler)."""
    header = [
        "m",
        "lo",
        "hi",
        "scheduler",
        "sets",
        "not_placed",
        "mean_migrations_table2",
        "mean_thread_migrations",
        "mean_steals",
        "mean_remote_starts",
        "mean_context_switches",
        "deadline_misses",
        "jobs",
    ]
    keys = ("sets", "unplaced", "mig", "trace_mig", "steals", "remote", "cs", "misses", "jobs")
    rows = [[m, w[0], w[1], sch, *[a[k] for k in keys]] for (m, w, sch), a in res["avg"].items()]
    return {"csv": Csv(f"{spec.name}.csv", header, rows)}
