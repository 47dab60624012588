"""Plots of sweep results, drawn like the figures of Brandenburg & Gül, RTSS 2016, §V.

Curves that coincide stay distinguishable (markers, line styles and marker phases of
``rtsched.plots.curve_style``), legends sit beside the panels, fractions are plotted from 0.

Aggregation: for a *group* of methods (``[plot.groups]``), a task set counts as schedulable when
any method of the group placed it (Brandenburg & Gül, RTSS 2016 Fig. 3: "the fraction of task sets for which either
the WFD or FFD heuristic could find a valid mapping"); its switch rate is that of the first method
of the group, in the group's order, that placed it (the cascade's answer). A method that gave up
counts as not schedulable. ``y = "schedulable"`` plots the fraction of task sets schedulable;
``y = "switch_rate"`` the mean per-core context-switch-rate bound over the placed task sets
(Brandenburg & Gül, RTSS 2016 Fig. 6), drawn only where at least ``min_samples`` sets were placed.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..output import save_figure, write_text
from ..plots import curve_style, fraction_axis, legend_outside
from . import quickmark, store
from .errors import SpecError
from .spec import Spec, parse_spec

X_LABELS = {
    "util": "total utilization U",
    "util_frac": "normalized utilization U/m",
    "n": "number of tasks n",
    "m": "number of processors m",
    "epsilon": "minimum slice size ε (µs)",
}
Y_LABELS = {
    "schedulable": "fraction schedulable",
    "switch_rate": "context switches / s / core (bound)",
}
FORMATS = (".png", ".pdf", ".svg")


def load_results_spec(results_dir: str | os.PathLike) -> Spec:
    d = Path(results_dir)
    try:
        text = (d / "spec.toml").read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"{str(d)!r} is not a results directory (cannot read spec.toml: {e.strerror})") from None
    quick, variant = False, None
    try:
        info = json.loads((d / "sweep.json").read_text(encoding="utf-8"))
        quick, variant = bool(info.get("quick", False)), info.get("variant")
    except (OSError, ValueError, AttributeError, RecursionError):
        pass
    return parse_spec(text, str(d / "spec.toml"), quick, variant)


def _dim_value(dim: str, coords: dict, group: str):
    if dim == "group":
        return group
    if dim == "none":
        return None
    return coords[dim]


def _dim_label(dim: str, v) -> str:
    if dim == "group" or dim == "none":
        return "" if v is None else str(v)
    if dim == "epsilon":
        return f"ε = {v / 1000:g} µs"
    return f"{dim} = {v}"


def _x_value(x: str, coords: dict):
    v = coords[x]
    return v / 1000 if x == "epsilon" else v


def summarize(results_dir: str | os.PathLike) -> tuple[Spec, list[dict[str, Any]], list[str]]:
    """Per-point rows (one per method and one per group) and the notes on missing/invalid points."""
    spec = load_results_spec(results_dir)
    rows, notes = [], []
    missing = invalid = 0
    for p in spec.points:
        path = store.point_path(results_dir, p)
        if not path.exists():
            missing += 1
            continue
        t, why = store.load_point(path, spec, p)
        if why is not None:
            invalid += 1
            notes.append(f"point {p.id} ({p.label}): {why}; left out")
            continue
        sets = t["set"].to_numpy()
        enc = t["method"].combine_chunks().dictionary_encode()
        codes = enc.indices.to_numpy()
        code_of = {v: i for i, v in enumerate(enc.dictionary.to_pylist())}
        sched = t["schedulable"].fill_null(False).to_numpy()
        gave = t["gave_up"].to_numpy()
        rate = t["switch_rate"].fill_null(math.nan).to_numpy()
        base = {
            "point": p.id,
            "m": p.coords["m"],
            "n": p.coords["n"],
            "util": p.coords["util"],
            "util_frac": p.coords["util_frac"],
            "epsilon": p.coords["epsilon"],
        }
        count = p.count
        masks = {mt: codes == code_of.get(mt, -1) for mt in p.params["methods"]}
        for mt, mask in masks.items():
            ok = sched[mask]
            r = rate[mask][ok]
            r = r[~np.isnan(r)]
            rows.append(
                {
                    **base,
                    "kind": "method",
                    "name": mt,
                    "sets": int(mask.sum()),
                    "schedulable": int(ok.sum()),
                    "gave_up": int(gave[mask].sum()),
                    "placed_with_rate": int(r.size),
                    "switch_rate_sum": float(r.sum()),
                }
            )
        for label, members in spec.plot.groups.items():
            acc = np.zeros(count, dtype=bool)
            anygave = np.zeros(count, dtype=bool)
            grate = np.full(count, math.nan)
            for mt in reversed(members):  # the first member that placed a set gives its rate
                mask = masks[mt]
                s, ok = sets[mask], sched[mask]
                acc[s[ok]] = True
                grate[s[ok]] = rate[mask][ok]
                anygave[s[gave[mask]]] = True
            placed_rates = grate[acc]
            placed_rates = placed_rates[~np.isnan(placed_rates)]
            rows.append(
                {
                    **base,
                    "kind": "group",
                    "name": label,
                    "sets": count,
                    "schedulable": int(acc.sum()),
                    "gave_up": int((anygave & ~acc).sum()),
                    "placed_with_rate": int(placed_rates.size),
                    "switch_rate_sum": float(placed_rates.sum()),
                }
            )
    if missing:
        notes.insert(0, f"{missing} of {len(spec.points)} points have no results yet (run the sweep with --resume)")
    if invalid:
        notes.insert(0, f"{invalid} point file(s) are invalid (rerun the sweep with --resume to recompute them)")
    return spec, rows, notes


def write_csv(rows: list[dict[str, Any]], path: Path, quick: bool = False) -> None:
    cols = [
        "point",
        "m",
        "n",
        "util",
        "util_frac",
        "epsilon_ns",
        "kind",
        "name",
        "sets",
        "schedulable",
        "fraction_schedulable",
        "gave_up",
        "mean_switch_rate",
    ]
    body = []
    for r in rows:
        mean = r["switch_rate_sum"] / r["placed_with_rate"] if r["placed_with_rate"] else ""
        body.append(
            [
                r["point"],
                r["m"],
                r["n"],
                r["util"],
                r["util_frac"],
                r["epsilon"],
                r["kind"],
                r["name"],
                r["sets"],
                r["schedulable"],
                r["schedulable"] / r["sets"] if r["sets"] else "",
                r["gave_up"],
                mean,
            ]
        )
    cols, body = quickmark.csv_table(cols, body, quick)  # a quick sweep's CSV says so
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(cols)
    w.writerows(body)
    write_text(path, buf.getvalue())


def curves(spec: Spec, rows: list[dict[str, Any]]) -> dict:
    """{panel: {curve: {x: (numerator, denominator)}}} pooled over points that share (panel, curve, x)."""
    pl = spec.plot
    data: dict = {}
    for r in rows:
        if r["kind"] != "group":
            continue
        coords = r
        panel = _dim_value(pl.panels, coords, r["name"])
        curve = _dim_value(pl.curves, coords, r["name"])
        if pl.panels != "group" and pl.curves != "group" and len(pl.groups) > 1:
            curve = (curve, r["name"]) if curve is not None else r["name"]
        x = _x_value(pl.x, coords)
        if pl.y == "schedulable":
            num, den = r["schedulable"], r["sets"]
        else:
            num, den = r["switch_rate_sum"], r["placed_with_rate"]
        cell = data.setdefault(panel, {}).setdefault(curve, {}).setdefault(x, [0.0, 0])
        cell[0] += num
        cell[1] += den
    return data


def _curve_label(pl, ck) -> str:
    return " ".join(
        _dim_label(pl.curves, c) if k == 0 else str(c) for k, c in enumerate(ck if isinstance(ck, tuple) else (ck,))
    )


def _ms_by_curve(spec: Spec, rows) -> dict:
    """{(panel, curve): set of m} over the group rows (to express x as a fraction of m)."""
    pl = spec.plot
    out: dict = {}
    for r in rows:
        if r["kind"] != "group":
            continue
        panel = _dim_value(pl.panels, r, r["name"])
        curve = _dim_value(pl.curves, r, r["name"])
        if pl.panels != "group" and pl.curves != "group" and len(pl.groups) > 1:
            curve = (curve, r["name"]) if curve is not None else r["name"]
        out.setdefault((panel, curve), set()).add(r["m"])
    return out


#: The thresholds of :func:`crossings`: U99 (the paper's "schedulable utilization" at 99%),
#: and where a curve falls below 95% and 50%.
THRESHOLDS = (0.99, 0.95, 0.5)


def crossings(spec: Spec, data: dict, rows: list[dict[str, Any]]) -> list:
    """Per (panel, curve) of a fraction-schedulable figure: ``x99``, the largest grid x up to
    which every grid point has at least 99% of its sets placed (Brandenburg & Gül's
    "schedulable utilization", measured at 99%); ``x95`` and ``x50``, where the curve first
    falls below 95% and 50%, linearly interpolated between the two grid points around it
    (None: it never does on the grid); each also as a percentage of m when the curve has one m
    and x is the total utilization."""
    pl = spec.plot
    if pl.y != "schedulable":
        return []
    ms = _ms_by_curve(spec, rows)
    out = []
    for panel in _order(pl.panels, list(data), spec):
        cdata = data[panel]
        ckeys = list(cdata)
        if pl.curves == "group":
            ckeys = _order("group", ckeys, spec)
        elif all(not isinstance(k, tuple) for k in ckeys):
            ckeys = _order(pl.curves, ckeys, spec)
        for ck in ckeys:
            pts = [(x, num / den) for x, (num, den) in sorted(cdata[ck].items()) if den]
            if not pts:
                continue
            res: dict[str, Any] = {
                "panel": _dim_label(pl.panels, panel),
                "curve": _curve_label(pl, ck),
                "points": len(pts),
            }
            x99 = None
            for x, f in pts:
                if f < 0.99:
                    break
                x99 = x
            res["x99"] = x99
            for th, key in ((0.95, "x95"), (0.5, "x50")):
                res[key] = None
                for (xa, fa), (xb, fb) in zip(pts, pts[1:], strict=False):
                    if fa >= th > fb:
                        res[key] = xa + (xb - xa) * (fa - th) / (fa - fb)
                        break
                else:
                    if pts[0][1] < th:
                        res[key] = pts[0][0]
            m = ms.get((panel, ck), set())
            res["m"] = next(iter(m)) if len(m) == 1 else None
            for key in ("x99", "x95", "x50"):
                v = res[key]
                res[key + "_pct_of_m"] = 100 * v / res["m"] if (v is not None and res["m"] and pl.x == "util") else None
            out.append(res)
    return out


def crossings_lines(spec: Spec, cross: list) -> list:
    """The crossings as text lines (printed by ``rtsched reproduce``)."""
    if not cross:
        return []

    def f(v, pct):
        if v is None:
            return "—"
        return f"{v:.3f}" + (f" ({pct:.2f}%)" if pct is not None else "")

    lines = [
        f"{quickmark.title(spec.name, spec.quick)}: U99 (all points up to it >= 99% placed), and where each "
        "curve falls below 95% and 50%:"
    ]
    for c in cross:
        where = " / ".join(x for x in (c["panel"], c["curve"]) if x)
        lines.append(
            f"  {where}: U99 {f(c['x99'], c['x99_pct_of_m'])}, 95% {f(c['x95'], c['x95_pct_of_m'])}, "
            f"50% {f(c['x50'], c['x50_pct_of_m'])}"
        )
    return lines


def write_figure_table(spec: Spec, data: dict, path: Path) -> Path:
    """The figure's numbers, one row per (panel, curve, x): the plotted value (fraction
    schedulable, or mean switch-rate bound) and the sets behind it."""
    pl = spec.plot
    body = []
    for panel in _order(pl.panels, list(data), spec):
        cdata = data[panel]
        ckeys = list(cdata)
        if pl.curves == "group":
            ckeys = _order("group", ckeys, spec)
        elif all(not isinstance(k, tuple) for k in ckeys):
            ckeys = _order(pl.curves, ckeys, spec)
        for ck in ckeys:
            for x, (num, den) in sorted(cdata[ck].items()):
                body.append([_dim_label(pl.panels, panel), _curve_label(pl, ck), x, num / den if den else "", den])
    header, body = quickmark.csv_table(["panel", "curve", "x", "value", "sets"], body, spec.quick)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(body)
    return write_text(path, buf.getvalue())


def write_crossings(cross: list, path: Path, quick: bool = False) -> Path:
    cols = ["panel", "curve", "m", "x99", "x95", "x50", "x99_pct_of_m", "x95_pct_of_m", "x50_pct_of_m", "points"]
    header, body = quickmark.csv_table(cols, [["" if c[k] is None else c[k] for k in cols] for c in cross], quick)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(body)
    return write_text(path, buf.getvalue())


def _order(dim: str, keys, spec: Spec):
    if dim == "group":
        return [g for g in spec.plot.groups if g in keys]
    return sorted(keys, key=lambda k: (str(type(k)), k))


def plot_results(results_dir: str | os.PathLike, output: str | os.PathLike) -> dict[str, Any]:
    """Draw the figure of a results dir to ``output`` (.png, .pdf or .svg) plus a CSV beside it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(output)
    if out.suffix.lower() not in FORMATS:
        raise SpecError(f"-o {str(out)!r}: the figure must end in .png, .pdf or .svg")
    spec, rows, notes = summarize(results_dir)
    if not rows:
        raise SpecError(f"{str(results_dir)!r} holds no finished points to plot")
    pl = spec.plot
    data = curves(spec, rows)
    panels = _order(pl.panels, list(data), spec)
    npan = len(panels)
    ncols = pl.columns or (npan if npan <= 3 else 2)
    nrows = math.ceil(npan / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols + 1.4, 3.6 * nrows), squeeze=False)
    for i, panel in enumerate(panels):
        ax = axes[i // ncols][i % ncols]
        cdata = data[panel]
        ckeys = list(cdata)
        if pl.curves == "group":
            ckeys = _order("group", ckeys, spec)
        elif all(not isinstance(k, tuple) for k in ckeys):
            ckeys = _order(pl.curves, ckeys, spec)
        for j, ck in enumerate(ckeys):
            pts = sorted(cdata[ck].items())
            xs = [x for x, (num, den) in pts]
            ys = [
                (num / den) if den >= (pl.min_samples if pl.y == "switch_rate" else 1) else math.nan
                for x, (num, den) in pts
            ]
            label = " ".join(
                _dim_label(pl.curves, c) if k == 0 else str(c)
                for k, c in enumerate(ck if isinstance(ck, tuple) else (ck,))
            )
            ax.plot(xs, ys, label=label or None, **curve_style(j, len(xs)))
        letter = chr(ord("a") + i) if npan > 1 else ""
        ptitle = _dim_label(pl.panels, panel)
        ax.set_title(f"({letter}) {ptitle}".strip() if letter else ptitle, fontsize=10)
        ax.set_xlabel(X_LABELS[pl.x])
        ax.set_ylabel(Y_LABELS[pl.y])
        if pl.yscale == "log":
            ax.set_yscale("log")
        if pl.ylim:
            ax.set_ylim(*pl.ylim)
        elif pl.y == "schedulable":
            fraction_axis(ax, Y_LABELS[pl.y])
        elif pl.yscale != "log":
            ax.set_ylim(bottom=0)
        xl = pl.panel_xlim.get(str(panel)) or pl.xlim
        if xl:
            ax.set_xlim(*xl)
        ax.grid(True, alpha=0.3)
    for k in range(npan, nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    title = quickmark.title(pl.title or spec.name, spec.quick)
    fig.suptitle(title, fontsize=11)
    # One legend beside the figure when every panel has the same curves, else one beside each
    # panel: never on top of the curves.
    used = [axes[i // ncols][i % ncols] for i in range(npan)]
    labels = [tuple(a.get_legend_handles_labels()[1]) for a in used]
    if labels and labels[0] and all(lb == labels[0] for lb in labels):
        handles, names = used[0].get_legend_handles_labels()
        leg = fig.legend(handles, names, fontsize=7, loc="center right")
        # Reserve the legend's own drawn width (long curve names need more than a fixed margin).
        fig.canvas.draw()
        width = leg.get_window_extent().width / fig.bbox.width
        fig.tight_layout(rect=(0, 0, 1 - min(0.45, width + 0.01), 1))
    else:
        for a in used:
            legend_outside(a)
        fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        save_figure(fig, out, dpi=150)
    finally:
        plt.close(fig)
    csv_path = out.with_suffix(".csv")
    write_csv(rows, csv_path, spec.quick)
    return {
        "figure": out,
        "csv": csv_path,
        "notes": notes,
        "points": len({r["point"] for r in rows}),
        "total": len(spec.points),
        "spec": spec,
        "rows": rows,
        "data": data,
    }
