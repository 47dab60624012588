"""The simulator engine of ``spres-table1``: Brandenburg & Gül, RTSS 2016, §VII-C, Table I, in
simulation: the SP-RES migration rate at 0-50% average slack (``rtsched reproduce
spres-table1``; docs/reproductions.md).

Task sets of the paper's first experiment (RandFixedSum, the paper's period set; grid m, n,
U/m) are placed by the SP-RES cascade; those whose placement splits a task are simulated for
``horizon`` under SP-RES with CASH at each slack level (execution times uniform in
[(1 − 2s)·C, C]: mean slack s). Sets that the cascade cannot place are skipped and counted; sets
without a split have no migrations under SP-RES and are not simulated (as the paper reran only
sets "that contained at least one semi-partitioned reservation"). Point files hold one row per
(set, slack level): the placement (placed, heuristic, split tasks), simulated or not, and the
simulator's counts.

Spec keys besides the common ones (``_sim.SimKeys``): ``slack`` (average slacks in [0, 0.5]),
``cash``, ``soft_unsplit``, ``exec_scale`` (rtspin's ``-s``: jobs run this fraction of their
drawn time, budgets stay those placed for the WCETs; default 1), the placement keys
(``common.Placement``), ``[generator]`` and ``[grid]`` m, n, ``util`` or ``util_frac``
(``common.Grid``): the task sets are those a sweep with the same generator, seed and grid point
would test.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ....output import save_figure
from ... import quickmark
from ...engines import EngineChoice
from ...errors import SpecError
from ...fields import spec_key
from ...point import derive_seed
from ...reproduction import Csv
from .._sim import SimKeys, SimSpec, add_point, close, figure_axes, fmt, md, parse_common, pct
from .common import (
    DEFAULT_SLACK,
    PAPER_SPRES_M,
    PAPER_SPRES_SETS,
    PAPER_SPRES_TABLE1,
    VARIANT_KEYS,
    Grid,
    Placement,
    _exec_scale,
    _slack,
    placed_sets,
    set_grid,
    slack_runs,
)

#: The kind of this engine's points (and the reproduction's).
KIND = "spres-table1"


@dataclass(frozen=True, kw_only=True)
class Keys(EngineChoice, Placement, SimKeys):
    """The spec's top level: the common keys, the placement keys, ``slack`` (average slacks in
    [0, 0.5]), ``cash``, ``soft_unsplit``, ``exec_scale`` and ``[generator]``."""

    slack: list = spec_key(factory=lambda: list(DEFAULT_SLACK), parse=_slack)
    cash: bool = True
    soft_unsplit: bool = False
    exec_scale: float = spec_key(1.0, parse=_exec_scale)
    generator: dict = spec_key(factory=dict)


def parse(
    text: str,
    path: str | None = None,
    quick: bool = False,
    override: dict | None = None,
    variant: str | None = None,
    data: dict | None = None,
) -> SimSpec:
    """Parses the spec for the simulator (``variant``: one of its [variants.NAME] tables;
    ``quick``: its [quick] table; ``override``: top-level keys and a ``grid`` table, applied
    last; ``data``: the TOML with the engine's table applied, engines.py)."""
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
        variant_keys=VARIANT_KEYS,
        data=data,
    )
    spec, k = c.spec, c.keys
    sets = set_grid(c)
    generator, placement = sets.generator, sets.placement
    spec.params = {
        "seed": k.seed,
        "samples": k.samples,
        "horizon": k.horizon,
        "slack": k.slack,
        "cash": k.cash,
        "soft_unsplit": k.soft_unsplit,
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
            "seed": derive_seed(k.seed, generator, n, m, u),
            "generator": generator,
            "horizon": k.horizon,
            "slack": k.slack,
            "cash": k.cash,
            "soft_unsplit": k.soft_unsplit,
        }
        if k.exec_scale != 1.0:  # only when set, so that the default points keep their ids
            p["exec_scale"] = k.exec_scale
        p.update(placement)
        add_point(spec, p, {key: p[key] for key in ("m", "n", "n_expr", "util", "util_frac")})
    spec.rows_per_set = len(spec.params["slack"])
    if not spec.points:
        raise SpecError(f"{c.where}: the grid has no point")
    return spec


# ---------------------------------------------------------------------------------------------
# Evaluation of one point (runs in worker processes).

SCHEMA = pa.schema(
    [
        ("point", pa.string()),
        ("m", pa.int64()),
        ("n", pa.int64()),
        ("util", pa.float64()),
        ("set", pa.int64()),
        ("attempts", pa.int64()),
        ("scaled_tasks", pa.int64()),
        ("placed", pa.bool_()),
        ("heuristic", pa.string()),
        ("split_tasks", pa.int64()),
        ("simulated", pa.bool_()),
        ("slack", pa.float64()),
        ("exec_lo", pa.float64()),
        ("jobs", pa.int64()),
        ("deadline_misses", pa.int64()),
        ("preemptions", pa.int64()),
        ("migrations", pa.int64()),
        ("context_switches", pa.int64()),
        ("observed_slack", pa.float64()),
        ("horizon_ns", pa.int64()),
    ]
)


def evaluate_point(point_json: str) -> dict:
    """One point: its task sets placed by the SP-RES cascade (:func:`placed_sets`) and, those
    with a split task, simulated at every slack level; the columns (all of :data:`SCHEMA` but
    ``point``)."""
    p = json.loads(point_json)
    cols: dict[str, list] = {f.name: [] for f in SCHEMA if f.name != "point"}
    for i, ts, pl, attempts, scaled in placed_sets(p):
        placed = bool(pl["schedulable"])
        splits = sum(1 for t in pl["tasks"] if t["parts"] > 1) if placed else 0
        runs: list = [None] * len(p["slack"])
        if placed and splits:
            runs = slack_runs(p, i, ts, pl)
        for s, r in zip(p["slack"], runs, strict=True):
            row = {
                "m": p["m"],
                "n": p["n"],
                "util": p["util"],
                "set": i,
                "attempts": attempts,
                "scaled_tasks": scaled,
                "placed": placed,
                "heuristic": pl.get("heuristic") if placed else None,
                "split_tasks": splits,
                "simulated": r is not None,
                "slack": s,
            }
            for k in (
                "exec_lo",
                "jobs",
                "deadline_misses",
                "preemptions",
                "migrations",
                "context_switches",
                "observed_slack",
            ):
                row[k] = None if r is None else r[k]
            row["horizon_ns"] = None if r is None else r["horizon_ns"]
            for k, v in row.items():
                cols[k].append(v)
    return cols


# ---------------------------------------------------------------------------------------------
# The tables, the figure and the files.


def fmt_ns(ns: int) -> str:
    """A duration for the text: 750 µs, 2 ms, 0."""
    if ns == 0:
        return "0"
    for unit, k in (("s", 10**9), ("ms", 10**6), ("µs", 10**3)):
        if ns % k == 0:
            return f"{ns // k} {unit}"
    return f"{ns} ns"


def summarize(spec: SimSpec, table: pa.Table) -> dict:
    """Brandenburg & Gül, RTSS 2016 Table I from the rows: per slack level, total migrations, migrations per second
    and core over the simulated sets, the reduction relative to 0% slack; counts of sets."""
    rows = table.to_pylist()
    p = spec.params
    slacks = p["slack"]
    first = [r for r in rows if r["slack"] == slacks[0]]
    m_values = sorted({r["m"] for r in rows})
    total = len(first)
    placed = sum(r["placed"] for r in first)
    sim = [r for r in first if r["simulated"]]
    n_sim = len(sim)
    horizon_s = p["horizon"] / 1e9
    agg = []
    for s in slacks:
        rs = [r for r in rows if r["slack"] == s and r["simulated"]]
        mig = sum(r["migrations"] for r in rs)
        core_seconds = sum(r["m"] * r["horizon_ns"] / 1e9 for r in rs)
        rate = mig / core_seconds if core_seconds else None
        obs = [r["observed_slack"] for r in rs if r["observed_slack"] is not None]
        agg.append(
            {
                "slack": s,
                "sets": len(rs),
                "migrations": mig,
                "rate": rate,
                "observed_slack": sum(obs) / len(obs) if obs else None,
                "deadline_misses": sum(r["deadline_misses"] for r in rs),
                "jobs": sum(r["jobs"] for r in rs),
            }
        )
    base = agg[0]["rate"] if agg and agg[0]["slack"] == 0.0 else None
    for a in agg:
        a["reduction"] = (base / a["rate"]) if base and a["rate"] else None
        paper = PAPER_SPRES_TABLE1.get(round(a["slack"], 2))
        a["paper_total"], a["paper_rate"], a["paper_reduction"] = paper if paper else (None, None, None)
    # Per n: sets placed, not placed, with a split; migration rate per slack level.
    by_n: dict = {}
    for r in first:
        d = by_n.setdefault(r["n"], {"sets": 0, "not_placed": 0, "split": 0, "mig": {}, "cs": 0.0})
        d["sets"] += 1
        d["not_placed"] += not r["placed"]
        d["split"] += r["simulated"]
        if r["simulated"]:
            d["cs"] += r["m"] * r["horizon_ns"] / 1e9
    for r in rows:
        if r["simulated"]:
            d = by_n[r["n"]]["mig"]
            d[r["slack"]] = d.get(r["slack"], 0) + r["migrations"]
    lines = [
        f"{spec.name}: Brandenburg & Gül, RTSS 2016, Table I in simulation — SP-RES "
        f"({'CASH' if p['cash'] else 'no slack reclamation'}, "
        f"{'all reservations soft' if p['soft_unsplit'] else 'split tasks in soft reservations'}), "
        f"m = {', '.join(map(str, m_values))}, {fmt(horizon_s, 3).rstrip('0').rstrip('.')} s of virtual time per set"
    ]
    if spec.quick or spec.note:
        lines.append(f"NOTE: {spec.note or 'quick form'} — not the paper's full experiment.")
    semi = p.get("semi", {})
    lines.append(
        f"placement: {spec.variant + ' variant; ' if spec.variant else ''}heuristics as the paper's "
        f"{'text' if semi.get('variant') == 'text' else 'published code'}, RP {semi.get('rp', 'default')}"
        f"{', floor ' + fmt_ns(semi['rp_floor']) if 'rp_floor' in semi else ''}, "
        f"ε = {fmt_ns(p.get('epsilon', 0))}, slices {p.get('slice_order', 'flipped')}"
        f"{', same-core slices merged' if p.get('merge_same_core') else ''}"
        f"{', WCETs <= ' + fmt_ns(p['scale_short']) + ' moved to a multiple period' if p.get('scale_short') else ''}"
        f"{', unplaceable sets regenerated' if p.get('regenerate') else ''}; periods {p['generator']['periods']}."
    )
    regenerated = sum(1 for r in first if r["attempts"] > 1)
    scaled = sum(r["scaled_tasks"] for r in first)
    lines.append(
        f"task sets: {total} generated ({len(spec.points)} (n, U) points × {p['samples']}); "
        f"{placed} placed by the SP-RES cascade, {total - placed} not placed (skipped); "
        f"{n_sim} contain a split task and were simulated at each slack level "
        f"(the paper reran ≈ {PAPER_SPRES_SETS:.0f}); the other {placed - n_sim} are partitioned: no migrations."
        + (f" {regenerated} set(s) were regenerated." if p.get("regenerate") else "")
        + (f" {scaled} short task(s) moved to a longer period." if p.get("scale_short") else "")
    )
    if p.get("exec_scale", 1.0) != 1.0:
        lines.append(
            f"execution times: {p['exec_scale']:g} × uniform in [(1 − 2s)·C, C] (rtspin -s {p['exec_scale']:g}; "
            "observed slack is relative to the scaled WCET), the same random numbers at every level."
        )
    else:
        lines.append(
            "execution times: uniform in [(1 − 2s)·C, C] (mean slack s), the same random numbers at every level."
        )
    lines.append("")
    header = [
        "average slack",
        "total migrations",
        "per sec. and core",
        "reduction",
        f"paper (m = {PAPER_SPRES_M}): total",
        f"paper (m = {PAPER_SPRES_M}): per sec. and core",
        f"paper (m = {PAPER_SPRES_M}): reduction",
        "observed slack",
        "deadline misses",
    ]
    body = []
    for a in agg:
        body.append(
            [
                pct(a["slack"]),
                fmt(a["migrations"]),
                fmt(a["rate"]),
                "" if a["slack"] == 0 else (fmt(a["reduction"], 1) + "x" if a["reduction"] else "—"),
                fmt(a["paper_total"]),
                fmt(a["paper_rate"]),
                "" if a["slack"] == 0 else (fmt(a["paper_reduction"], 1) + "x" if a["paper_reduction"] else "—"),
                pct(round(a["observed_slack"], 4)) if a["observed_slack"] is not None else "—",
                fmt(a["deadline_misses"]),
            ]
        )
    lines += md(header, body)
    lines.append("")

    def nrate(d, sl):
        return d["mig"].get(sl, 0) / d["cs"] if d["cs"] else None

    lines += md(
        ["n", "sets", "not placed", "with a split (simulated)"]
        + [f"per sec. and core at {pct(sl)}" for sl in slacks]
        + ([f"reduction at {pct(slacks[-1])}"] if len(slacks) > 1 and slacks[0] == 0 else []),
        [
            [n, d["sets"], d["not_placed"], d["split"]]
            + [fmt(nrate(d, sl)) for sl in slacks]
            + (
                [fmt(nrate(d, 0.0) / nrate(d, slacks[-1]), 1) + "x" if nrate(d, slacks[-1]) else "—"]
                if len(slacks) > 1 and slacks[0] == 0
                else []
            )
            for n, d in sorted(by_n.items())
        ],
    )
    return {
        "text": "\n".join(lines),
        "regenerated": regenerated,
        "scaled_tasks": scaled,
        "rows": agg,
        "by_n": by_n,
        "simulated_sets": n_sim,
        "sets": total,
        "not_placed": total - placed,
        "m_values": m_values,
    }


def figure(res: dict, spec: SimSpec, path: Path) -> Path:
    """A bar chart of the migration rate per slack level, ours beside the paper's (each with its m)."""
    rows = res["rows"]
    x = list(range(len(rows)))
    fig, ax = figure_axes(figsize=(6, 3.6))
    ours = f"rtsched simulation (m = {', '.join(map(str, res['m_values']))})"
    ax.bar([i - 0.2 for i in x], [r["rate"] or 0 for r in rows], width=0.4, label=ours)
    ax.bar(
        [i + 0.2 for i in x],
        [r["paper_rate"] or 0 for r in rows],
        width=0.4,
        label=f"paper (LITMUS^RT, m = {PAPER_SPRES_M})",
    )
    ax.set_xticks(x)
    ax.set_xticklabels([pct(r["slack"]) for r in rows])
    ax.set_xlabel("average slack")
    ax.set_ylabel("migrations per second and core")
    ax.set_title(
        quickmark.title("SP-RES migration rate vs. slack (Brandenburg & Gül, RTSS 2016, Table I)", spec.quick),
        fontsize=9,
    )
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    try:
        return save_figure(fig, path, dpi=120)
    finally:
        close(fig)


def csv_files(res: dict, spec: SimSpec) -> dict[str, Csv]:
    """``NAME.csv``: the aggregated rows, the paper's beside; ``table.csv``: Table I's numbers as
    the paper has them (migrations per second and core per slack level)."""
    header = [
        "slack",
        "simulated_sets",
        "total_migrations",
        "migrations_per_s_per_core",
        "reduction",
        "paper_total",
        "paper_per_s_per_core",
        "paper_reduction",
        "observed_slack",
        "deadline_misses",
        "jobs",
        "m",
        "paper_m",
    ]
    keys = ["slack", "sets", "migrations", "rate", "reduction", "paper_total", "paper_rate", "paper_reduction"]
    keys += ["observed_slack", "deadline_misses", "jobs"]
    ms = " ".join(map(str, res["m_values"]))
    rows = [[*[r[k] for k in keys], ms, PAPER_SPRES_M] for r in res["rows"]]
    table = [[r["slack"], r["rate"]] for r in res["rows"]]
    return {
        "csv": Csv(f"{spec.name}.csv", header, rows),
        "table": Csv("table.csv", ["slack", "migrations_per_s_per_core"], table),
    }
