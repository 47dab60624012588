"""What the overhead-aware schedulability reproductions share (``rtss09-hrt``, ``rtss09-srt``,
``gedfmp-soft-n``, ``gedfmp-hard-u``; docs/reproductions.md).

Each is a schedulability sweep over several panels (a Baker distribution per panel for RTSS
2009, a processor count per panel for RTAS 2014), one curve per mechanism. The curves use the
overhead models found in a directory (``rtsched reproduce NAME --overheads DIR``; default: the
shipped set :data:`DEFAULT_SET`, measured under the measurement protocol, and for a mechanism it
has no model of, the earlier models shipped beside it, named in the output as a fallback): a
mechanism whose model is absent — or measures none of the terms its rule charges — is left out of
the legend, with a note; when one appears in the directory (``rtsched measure-overheads --out
DIR``), the next run picks it up. Every report and figure names the model set that ran. The
panels are sub-specs (ordinary sweep specs, generated here) whose points are run as one spec by
the one runner; a module provides the panels and curves, this one the rest.

Spec keys (TOML): ``name``, ``kind`` (the registry name), ``description``, ``samples``, ``seed``,
``max_steps``, ``m`` (processors of the measured panels; default: from the models), ``points``
(grid points per panel), ``cpd``, ``quantum``, and a ``[quick]`` table with ``samples``,
``points``. The modules add their own keys (``check_keys``).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pyarrow as pa

from ..._core import RtschedError
from ...overheads import load_models, mechanisms
from .. import quickmark
from ..errors import SpecError
from ..fields import at_least, check_keys, key_names, read_keys, spec_key
from ..reproduction import Csv
from ..spec import Spec, parse_spec, tomllib
from ._sim import close, figure_axes, md

QUICK_KEYS = ("samples", "points", "note")


@dataclass(frozen=True, kw_only=True)
class OverheadKeys:
    """The top level of an overhead-aware reproduction's spec, declared (``fields.read_keys``):
    the keys every one has; a module's own class adds its keys."""

    name: str | None = None
    kind: str
    description: str = ""
    samples: int = spec_key(100, parse=at_least(1))
    seed: int = spec_key(0, parse=at_least(0))
    max_steps: int = spec_key(1_000_000, parse=at_least(1))
    m: int | None = None  # processors of the measured panels (default: from the models)
    points: int = spec_key(11, parse=at_least(2))
    cpd: int | str = 0
    quantum: int | str = "1ms"
    quick: dict | None = None


COMMON_KEYS = key_names(OverheadKeys)

K = TypeVar("K", bound=OverheadKeys)

#: Where the default models are looked for: $RTSCHED_OVERHEADS (one directory), else the models
#: shipped with the package (rtsched/data, which the repository's docs/examples links to), from
#: any folder: the set :data:`DEFAULT_SET`, then the earlier models of rtsched/data itself for
#: the mechanisms the set has no model of.
OVERHEADS_ENV = "RTSCHED_OVERHEADS"
#: The shipped model set the reproductions use by default: every mechanism re-measured on the
#: 2-core VM under the measurement protocol (docs/overheads.md, docs/reproductions.md).
DEFAULT_SET = "vm-2cpu-protocol"


def default_overheads_dirs() -> list[Path]:
    """The directories the default models come from, in order: the first with a model of a
    mechanism serves it (``[$RTSCHED_OVERHEADS]``, else ``[DATA/DEFAULT_SET, DATA]``)."""
    env = os.environ.get(OVERHEADS_ENV)
    if env:
        return [Path(env)]
    from ...shipped import DATA

    dirs = [d for d in (DATA / DEFAULT_SET, DATA) if d.is_dir() and any(d.glob("overheads-*.json"))]
    if dirs:
        return dirs
    raise SpecError(
        f"no overhead models found in {DATA} (the package is incomplete): pass --overheads DIR (a directory "
        f"of overheads-*.json written by `rtsched measure-overheads --out DIR`) or set ${OVERHEADS_ENV}"
    )


def set_label(d: Path) -> str:
    """How a directory of models is named in the output: a shipped set by its name, the shipped
    folder itself as the earlier models, any other directory by its path."""
    from ...shipped import DATA

    d = d.resolve()
    if d == DATA.resolve():
        return "the earlier shipped models (rtsched/data, 24 Nov 2026)"
    if d.parent == DATA.resolve():
        return f"the shipped set {d.name}"
    return str(d)


@dataclass
class Curve:
    """One curve: a label, and the method that draws it in each panel (None: not in that panel)."""

    key: str
    label: str
    methods: dict  # panel key -> method name


@dataclass
class Panel:
    key: str
    title: str
    toml: str  # the sub-spec


@dataclass
class Figure:
    """What the report needs beyond the points: panels, curves, notes, how to read x."""

    title: str
    x: str  # "util" or "n"
    xlabel: str
    ylabel: str
    panels: list
    curves: list
    notes: list = field(default_factory=list)
    columns: int = 2
    point_panel: dict = field(default_factory=dict)  # point id -> panel key
    models: dict = field(default_factory=dict)  # model key -> info (scheduler, m, machine, path, set)


def read(
    text: str, path: str | None, quick: bool, keys: type[K], override: dict | None
) -> tuple[K, list[Path], dict, list]:
    """The spec's declared top level ``keys`` (an :class:`OverheadKeys`) read with ``[quick]``
    applied, the overheads directories (``--overheads``: one; default:
    :func:`default_overheads_dirs`) and the models serving each mechanism, each info with its
    ``set`` (:func:`set_label`) and ``fallback`` (whether a later directory served it; the
    curve's note says so, :func:`available`), and the notes."""
    where = path or "<spec>"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{where}: not valid TOML: {e}") from None
    check_keys(data, key_names(keys), f"the top level of {where}")
    over = dict(override or {})
    src = over.pop("overheads", None)
    if over:
        raise SpecError(f"{where}: override takes only 'overheads' for this reproduction, got {sorted(over)}")
    if quick and "quick" in data:
        q = data["quick"]
        if not isinstance(q, dict):
            raise SpecError(f"{where}: [quick] must be a table")
        check_keys(q, QUICK_KEYS, f"table [quick] of {where}")
        data = {**data, **{k: v for k, v in q.items() if k != "note"}}
    top = read_keys(keys, {k: v for k, v in data.items() if k != "quick"}, where)
    dirs = [Path(src)] if src else default_overheads_dirs()
    loaded = []
    notes: list = []
    for d in dirs:
        try:
            found, why = load_models(d)
        except (RtschedError, OSError) as e:
            raise SpecError(f"overheads {str(d)!r}: {e}") from None
        loaded.append((d.resolve(), found, why))
    models: dict = {}
    for mech in mechanism_table().values():
        for i, (d, found, why) in enumerate(loaded):
            key = pick_model(mech, found)
            if key is None:
                continue
            if key not in models:
                models[key] = {**found[key], "set": set_label(d), "fallback": i > 0}
                # load_models' notes on the file chosen for this model (several of one mechanism).
                notes += [n for n in why if n.startswith(f"{key}: ")]
            break
    return top, [d for d, _, _ in loaded], models, notes


def mechanism_table() -> dict:
    return {m["name"]: m for m in mechanisms()}


def pick_model(mech: dict, models: dict) -> str | None:
    """The model of ``models`` that serves ``mech`` (its own name first, then its model's)."""
    for key in (mech["name"], mech["model"]):
        if key in models:
            return key
    return None


def available(candidates: list, models: dict, notes: list, what: str) -> tuple[str, str] | None:
    """The first mechanism of ``candidates`` whose model is in ``models`` and measures a term
    its rule charges: (mechanism name, model key). Otherwise None, with a note."""
    table = mechanism_table()
    empty = []
    for name in candidates:
        key = pick_model(table[name], models)
        if key is None:
            continue
        info = models[key]
        back = f" of {info['set']}, the fallback" if info.get("fallback") else ""
        if not set(info["terms"]) & set(table[name]["terms"]):
            comma = "," if back else ""
            empty.append(f"{name} (model {os.path.basename(info['path'])}{back}{comma} measures none of its terms)")
            continue
        if back:
            notes.append(f"{what}: no model in the default set; drawn from {os.path.basename(info['path'])}{back}")
        return name, key
    why = "; ".join(empty) if empty else "no model in the overheads directory (its mechanism is not measured yet)"
    notes.append(f"{what}: left out — {why}")
    return None


def platform_m(mech_names: list, models: dict, keys: dict) -> int:
    """The processors of the measured platform: each model's m (scheduling CPUs) plus its
    mechanism's dedicated processor; the largest."""
    table = mechanism_table()
    ms = [
        int(models[keys[n]]["m"]) + (1 if table[n]["dedicated_cpu"] else 0)
        for n in mech_names
        if keys.get(n) and models[keys[n]]["m"]
    ]
    return max(ms) if ms else 2


def sub_spec_toml(
    name: str,
    samples: int,
    seed: int,
    max_steps: int,
    methods: list,
    overheads: Path | list[Path],
    generator: str,
    periods: str,
    m: int,
    ns: list,
    utils: list,
    extrapolate: bool,
    cpd,
    quantum,
) -> str:
    def lst(xs):
        return "[" + ", ".join(json.dumps(x) for x in xs) + "]"

    return "\n".join(
        [
            f"name = {json.dumps(name)}",
            f"samples = {samples}",
            f"seed = {seed}",
            f"max_steps = {max_steps}",
            f"methods = {lst(methods)}",
            # One directory as a path (as a spec author writes it), several as the list sweeps read
            # in order (experiments/overheads.py).
            "overheads = "
            + (
                lst([str(d) for d in overheads])
                if isinstance(overheads, list) and len(overheads) > 1
                else json.dumps(str(overheads[0] if isinstance(overheads, list) else overheads))
            ),
            f"extrapolate = {'true' if extrapolate else 'false'}",
            f"cpd = {json.dumps(cpd)}",
            f"quantum = {json.dumps(quantum)}",
            "[generator]",
            f"name = {json.dumps(generator)}",
            f"periods = {json.dumps(periods)}",
            "[grid]",
            f"m = [{m}]",
            f"n = {lst(ns)}",
            f"util = {lst(utils)}",
        ]
    )


def compose(text: str, path: str | None, quick: bool, name: str, fig: Figure) -> Spec:
    """One sweep spec holding the points of every panel's sub-spec (the runner's object)."""
    spec = None
    for panel in fig.panels:
        sub = parse_spec(panel.toml, None, False)
        for p in sub.points:
            fig.point_panel[p.id] = panel.key
        if spec is None:
            spec = sub
        else:
            spec.points.extend(sub.points)
            spec.skipped.extend(sub.skipped)
    assert spec is not None
    spec.text = text
    spec.path = path
    spec.name = name
    spec.quick = quick
    spec.figure = fig  # type: ignore[attr-defined]
    return spec


def common(keys: OverheadKeys) -> dict:
    return {k: getattr(keys, k) for k in ("samples", "seed", "max_steps", "points", "cpd", "quantum")}


def model_sets(fig: Figure) -> str:
    """Which model set ran: the set of the models drawn, and each fallback with the mechanisms
    it served."""
    main = [i["set"] for i in fig.models.values() if not i.get("fallback")]
    back: dict = {}
    for i in fig.models.values():
        if i.get("fallback"):
            back.setdefault(i["set"], []).append(i["scheduler"] or os.path.basename(i["path"]))
    out = "; ".join(dict.fromkeys(main)) or "none"
    for label, mechs in back.items():
        out += f"; fallback for {', '.join(sorted(mechs))}: {label}"
    return out


def machines(fig: Figure) -> str:
    """Where the models come from: the machines they were measured on, or the publication a
    model built from a paper's numbers names (its ``provenance``)."""
    seen = []
    for info in fig.models.values():
        mch = info.get("machine") or "unknown machine"
        if info.get("published"):
            mch = f"published numbers of {info['published']}"
        if mch not in seen:
            seen.append(mch)
    return "; ".join(seen)


# ---------------------------------------------------------------------------------------------
# The report.


def aggregate(spec: Spec, table: pa.Table) -> dict:
    """(panel, method, x) -> [schedulable, sets]."""
    fig: Figure = spec.figure  # type: ignore[attr-defined]
    cells: dict = defaultdict(lambda: [0, 0])
    by_id = {p.id: p for p in spec.points}
    d = table.to_pydict()
    for pid, mt, s in zip(d["point"], d["method"], d["schedulable"], strict=True):
        panel = fig.point_panel[pid]
        coords = by_id[pid].coords
        x = coords["util"] if fig.x == "util" else coords["n"]
        c = cells[(panel, mt, x)]
        c[0] += s is True
        c[1] += 1
    return cells


def _fmt_x(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def summary_rows(fig: Figure, cells: dict, level: float) -> list:
    """Per panel and curve: the largest x up to which at least ``level`` of the sets are
    schedulable at every grid point (None: not even at the first)."""
    rows = []
    for panel in fig.panels:
        for c in fig.curves:
            mt = c.methods.get(panel.key)
            if mt is None:
                continue
            xs = sorted(x for (pk, m, x) in cells if pk == panel.key and m == mt)
            best = None
            for x in xs:
                s, n = cells[(panel.key, mt, x)]
                if n and s / n >= level:
                    best = x
                else:
                    break
            rows.append((panel.title, c.label, "—" if best is None else _fmt_x(best)))
    return rows


def summarize(spec: Spec, table: pa.Table) -> dict:
    """The cells (panel, method, x) -> [schedulable, sets], the CSV's rows (one per panel,
    curve and x) and the tables: the models, the notes, and where each curve stops being mostly
    schedulable."""
    fig: Figure = spec.figure  # type: ignore[attr-defined]
    cells = aggregate(spec, table)
    rows = []
    for panel in fig.panels:
        for c in fig.curves:
            mt = c.methods.get(panel.key)
            if mt is None:
                continue
            for x in sorted(x for (pk, m, x) in cells if pk == panel.key and m == mt):
                s, n = cells[(panel.key, mt, x)]
                rows.append([panel.title, c.label, mt, x, n, s, f"{s / n:.4f}" if n else ""])
    lines = [quickmark.title(f"# {fig.title.replace(chr(10), ' ')}", spec.quick), ""]
    lines += [f"Model set: {model_sets(fig)}", "", f"Overheads: {machines(fig)}", ""]
    lines += ["Models:", ""] + [
        f"- {k}: {os.path.basename(v['path'])} of {v.get('set', '?')}{' (fallback)' if v.get('fallback') else ''} "
        f"(m = {v['m']}, {v.get('machine') or 'machine unknown'})"
        for k, v in sorted(fig.models.items())
    ]
    lines += ["", "Notes:", ""] + [f"- {n}" for n in fig.notes]
    for level in (0.5, 0.9):
        lines += [
            "",
            f"Largest {fig.x} with at least {level:.0%} of the sets schedulable at every grid point up to it:",
            "",
        ]
        lines += md(["panel", "curve", fig.x], summary_rows(fig, cells, level))
    return {"text": "\n".join(lines), "cells": cells, "rows": rows}


def figure(res: dict, spec: Spec, path: Path) -> Path:
    """One panel per sub-spec, one curve per mechanism; the models' machines and the curves
    left out in the footer."""
    from ...output import save_figure
    from ...plots import curve_style, fraction_axis, legend_outside

    fig: Figure = spec.figure  # type: ignore[attr-defined]
    cells = res["cells"]
    k = len(fig.panels)
    cols = min(fig.columns, k)
    nrows = (k + cols - 1) // cols
    f, axes = figure_axes(nrows, cols, figsize=(6.4 * cols, 3.6 * nrows + 0.9), squeeze=False)
    for i, panel in enumerate(fig.panels):
        ax = axes[i // cols][i % cols]
        for j, c in enumerate(fig.curves):
            mt = c.methods.get(panel.key)
            if mt is None:
                continue
            xs = sorted(x for (pk, m, x) in cells if pk == panel.key and m == mt)
            ys = [cells[(panel.key, mt, x)][0] / max(1, cells[(panel.key, mt, x)][1]) for x in xs]
            style = curve_style(j, len(xs))  # coinciding curves stay apart (rtsched.plots)
            if c.key.startswith("ideal"):
                style["linestyle"] = "--"
            ax.plot(xs, ys, label=c.label, **style)
        ax.set_title(f"({chr(ord('a') + i)}) {panel.title}", fontsize=10)
        ax.set_xlabel(fig.xlabel)
        fraction_axis(ax, fig.ylabel)
        ax.grid(True, alpha=0.3)
        legend_outside(ax)
    for i in range(k, nrows * cols):
        axes[i // cols][i % cols].axis("off")
    f.suptitle(quickmark.title(fig.title, spec.quick), fontsize=11)
    foot = f"models: {model_sets(fig)}; overheads: {machines(fig)}"
    left_out = [n for n in fig.notes if "left out" in n]
    if left_out:
        foot += "\n" + "\n".join(left_out)
    f.text(0.01, 0.005, foot, fontsize=6.5, va="bottom", ha="left", wrap=True)
    f.tight_layout(rect=(0, 0.02 + 0.018 * (1 + len(left_out)), 1, 0.95))
    try:
        return save_figure(f, path, dpi=130)
    finally:
        close(f)


def csv_files(res: dict, spec: Spec) -> dict[str, Csv]:
    """``NAME.csv``: one row per (panel, curve, x)."""
    fig: Figure = spec.figure  # type: ignore[attr-defined]
    header = ["panel", "curve", "method", fig.x, "sets", "schedulable", "fraction_schedulable"]
    return {"csv": Csv(f"{spec.name}.csv", header, res["rows"])}
