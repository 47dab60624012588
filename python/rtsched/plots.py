"""Figures: Gantt charts of traces and schedulability curves, as matplotlib Figures.

Every function here builds a :class:`matplotlib.figure.Figure` without pyplot, so it neither
changes the matplotlib backend nor opens windows: in a notebook the returned figure displays
inline, in a script ``fig.savefig(...)`` (or the ``path`` argument, written atomically) saves it.

Shared conventions, so that every figure rtsched draws reads the same way:

- curves that coincide stay distinguishable: each curve gets its own marker, line style and
  marker phase (:func:`curve_style`), later curves are drawn thinner on top;
- legends sit outside the axes, never on the curves (:func:`legend_outside`);
- axes that plot fractions start at 0 (:func:`fraction_axis`);
- time axes are in the unit that suits the span (ns, µs, ms or s; :func:`time_unit`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import _core
from ._core import RtschedError
from .output import save_figure

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Display names of the methods in legends (authors and venues are in docs/papers.md).
LABELS = {
    "gfb": "GFB",
    "bak": "BAK",
    "bcl": "BCL",
    "bcl-iterative": "BCL-iterative",
    "rta": "RTA",
    "bar": "BAR",
    "ffdbf": "FF-DBF",
    "gedf": "G-EDF (any test)",
    "pedf-ffd": "P-EDF (FFD)",
    "spres": "SP-RES (cascade)",
}


def label(method: str) -> str:
    """The display name of a method (its own name when it has none)."""
    return LABELS.get(method.replace("_", "-").lower(), method)


MARKERS = "os^vD<>ph*Xd"
LINESTYLES = ["-", "--", "-.", ":"]


def curve_style(j: int, points: int = 0) -> dict[str, Any]:
    """Keyword arguments for ``ax.plot`` of curve ``j`` of a figure: a distinct marker, line
    style and marker phase (with more than 4 points only every second marker is drawn, with more
    than 12 every third, each curve starting at a different one, so that the markers of
    coinciding curves do not sit on top of each other), and a line width that decreases with
    ``j`` (a later curve drawn over an earlier one leaves it visible on both sides)."""
    style: dict[str, Any] = {
        "marker": MARKERS[j % len(MARKERS)],
        "linestyle": LINESTYLES[(j // 2) % len(LINESTYLES)] if j % 2 else "-",
        "markersize": 4,
        "linewidth": max(0.8, 2.0 - 0.15 * j),
        "zorder": 2 + j * 0.01,
    }
    if points > 12:
        style["markevery"] = (j % 3, 3)
    elif points > 4:
        style["markevery"] = (j % 2, 2)
    return style


def legend_outside(ax: Axes, fontsize: float = 7, **kw: Any) -> None:
    """The legend of ``ax`` to the right of the axes, where it hides no curve."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, **kw)


def fraction_axis(ax: Axes, label: str) -> None:
    """A y axis of fractions: from 0 to 1 (a little headroom above 1, none below 0)."""
    ax.set_ylim(0.0, 1.02)
    ax.set_ylabel(label)


def time_unit(span_ns: float) -> tuple[str, float]:
    """The unit (name, ns per unit) in which a time axis spanning ``span_ns`` reads best."""
    for name, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if span_ns >= 10 * scale:
            return name, scale
    return "ns", 1.0


def acceptance_plot(
    utils: Sequence[float],
    fractions: Mapping[str, Sequence[float]],
    path: str | os.PathLike | None = None,
    title: str = "",
    m: int | None = None,
) -> Figure:
    """One curve per method: the fraction of schedulable task sets versus total utilization.
    Returns the figure; with ``path`` it is also saved there (format by suffix)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.2, 4.2))
    ax = fig.add_subplot()
    for j, (name, ys) in enumerate(fractions.items()):
        ax.plot(utils, ys, label=label(name), **curve_style(j, len(utils)))
    ax.set_xlabel("total utilization U" + (f" (m = {m})" if m else ""))
    fraction_axis(ax, "fraction of schedulable task sets")
    if m:
        ax.set_xlim(0, m)
    ax.grid(True, alpha=0.3)
    legend_outside(ax)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path, dpi=130)
    return fig


# ---------------------------------------------------------------------------------------------
# Gantt charts


def _trace_lines(trace: str | os.PathLike) -> list[dict]:
    """The records of a JSON Lines trace given as text or as a path to a file."""
    text = os.fspath(trace)
    if "\n" not in text and not text.lstrip().startswith("{"):
        try:
            with open(text, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise RtschedError(f"gantt: cannot read the trace {text!r}: {e.strerror}") from None
    try:
        lines = [json.loads(x) for x in text.splitlines() if x.strip()]
    except ValueError as e:
        raise RtschedError(f"gantt: the trace is not JSON Lines: {e}") from None
    except RecursionError:
        raise RtschedError("gantt: the trace is not JSON Lines (a line nested too deeply)") from None
    if not lines or lines[0].get("ev") != "meta":
        raise RtschedError("gantt: the trace has no meta line (expected a trace written by simulate or run)")
    return lines


def parse_window(window: Any, horizon: int | None = None) -> tuple[int, int | None]:
    """``(start, end)`` in ns from ``"START:END"`` (either side may be empty: ``":50ms"``,
    ``"1s:"``) or a pair of ints / duration strings; ``end`` None means the horizon."""
    if window is None:
        return 0, None
    if isinstance(window, str):
        if ":" not in window:
            raise RtschedError(f"field 'window': expected START:END like 0:50ms or 1s:1.2s, got {window!r}")
        a, b = window.split(":", 1)
        parts: list[Any] = [a.strip() or None, b.strip() or None]
    else:
        try:
            parts = list(window)
        except TypeError:
            raise RtschedError(f"field 'window': expected START:END or a (start, end) pair, got {window!r}") from None
        if len(parts) != 2:
            raise RtschedError(f"field 'window': expected two times (start, end), got {len(parts)}")

    def ns(v: Any) -> int | None:
        if v is None:
            return None
        if isinstance(v, str):
            return _core.parse_duration(v)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise RtschedError(f"field 'window': expected integer ns or a duration string, got {v!r}")
        return v

    start, end = ns(parts[0]) or 0, ns(parts[1])
    if end is None and horizon is not None:
        end = horizon
    if end is not None and end <= start:
        raise RtschedError(f"field 'window': the end must be after the start, got {window!r}")
    return start, end


def gantt(
    trace: str | os.PathLike,
    *,
    window: Any = None,
    title: str = "",
    path: str | os.PathLike | None = None,
) -> Figure:
    """A Gantt chart of a trace (JSON Lines text, or the path of a ``.jsonl`` trace written by
    ``simulate``/``run``; :func:`rtsched.simulate_trace` returns one) as a matplotlib Figure.

    One row per CPU with the execution intervals, coloured by task (legend on the right) and
    labelled ``task.job`` (the task's name, else its index) where wide enough; below, one row
    per task with releases (▲, upper half of the row), deadlines (▽, lower half, so that a
    deadline that coincides with the next release stays visible) and deadline misses (red ✕).
    ``window``: ``"START:END"`` or a pair (ns or duration strings) to draw part of a long
    trace. The time axis is in the unit that suits the window. With ``path`` the figure is also
    saved (PNG, SVG or PDF by suffix)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    lines = _trace_lines(trace)
    meta, recs = lines[0], lines[1:]
    m, horizon, tasks = int(meta["m"]), int(meta["horizon"]), meta["tasks"]
    n = len(tasks)
    start, end = parse_window(window, horizon)
    end = horizon if end is None else end
    end = max(end, start + 1)
    unit, scale = time_unit(end - start)
    running: dict[int, tuple[int, int, int]] = {}
    bars: list[list[tuple[int, int, int, int]]] = [[] for _ in range(m)]
    releases: list[list[int]] = [[] for _ in range(n)]
    deadlines: list[list[int]] = [[] for _ in range(n)]
    misses: list[list[int]] = [[] for _ in range(n)]
    for r in recs:
        ev, t = r["ev"], r["t"]
        if ev == "run":
            running[r["cpu"]] = (t, r["task"], r["job"])
        elif ev in ("preempt", "complete"):
            began = running.pop(r["cpu"], None)
            if began is not None:
                bars[r["cpu"]].append((began[0], t, began[1], began[2]))
        elif ev == "release":
            releases[r["task"]].append(t)
            deadlines[r["task"]].append(r["deadline"])
        elif ev == "deadline_miss":
            misses[r["task"]].append(t)
    for cpu, (s, task, job) in running.items():
        if horizon > s:
            bars[cpu].append((s, horizon, task, job))

    def x(t: float) -> float:
        return (t - start) / scale

    from matplotlib import colormaps

    # 60 distinct colours (tab20, tab20b, tab20c) before any repeats.
    palette = [colormaps[name](k) for name in ("tab20", "tab20b", "tab20c") for k in range(20)]
    color = [palette[i % len(palette)] for i in range(n)]
    rows = m + n
    row_in = 0.42 if rows <= 30 else 0.22
    fig = Figure(figsize=(11, row_in * rows + 1.5))
    ax = fig.add_subplot()
    span = end - start
    for cpu in range(m):
        y = rows - 1 - cpu
        by_task: dict[int, list[tuple[float, float]]] = {}
        for a, b, task, job in bars[cpu]:
            if b <= start or a >= end:
                continue
            a, b = max(a, start), min(b, end)
            by_task.setdefault(task, []).append((x(a), (b - a) / scale))
            if b - a > span / 40:
                # The task's name where it has one, as the SVG chart does (a DAG trace names nodes
                # NAME[k], so a box reads NAME[k].job), else its index.
                who = tasks[task].get("name") or task
                ax.text(x((a + b) / 2), y, f"{who}.{job}", ha="center", va="center", fontsize=6, clip_on=True)
        for task, spans in by_task.items():  # one call per task and CPU: fast for long traces
            ax.broken_barh(spans, (y - 0.4, 0.8), facecolors=color[task], edgecolors="black", linewidth=0.3)

    def inside(ts: list[int]) -> list[float]:
        return [x(t) for t in ts if start <= t <= end]

    for task in range(n):
        y = rows - 1 - m - task
        rel, dl, miss = inside(releases[task]), inside(deadlines[task]), inside(misses[task])
        ax.plot(rel, [y + 0.2] * len(rel), linestyle="", marker="^", color=color[task], markersize=5, clip_on=False)
        ax.plot(dl, [y - 0.2] * len(dl), linestyle="", marker="v", color="black", markersize=5, fillstyle="none")
        if miss:
            ax.plot(miss, [y] * len(miss), linestyle="", marker="x", color="red", markersize=8, markeredgewidth=2)

    def task_name(i: int) -> str:
        name = tasks[i].get("name")
        return f"τ{i}" + (f" {name}" if name else "")

    ax.set_yticks([rows - 1 - k for k in range(rows)])
    ax.set_yticklabels([f"CPU {c}" for c in range(m)] + [task_name(i) for i in range(n)], fontsize=7)
    ax.axhline(rows - m - 0.5, color="grey", linewidth=0.6)
    ax.set_xlim(0, span / scale)
    ax.set_ylim(-0.7, rows - 0.3)
    if start:
        ax.set_xlabel(f"time ({unit}) since {_core.format_time(start)}")
    else:
        ax.set_xlabel(f"time ({unit})")
    ax.grid(True, axis="x", alpha=0.3)
    from matplotlib.artist import Artist
    from matplotlib.lines import Line2D

    handles: list[Artist] = [
        Patch(facecolor=color[i], edgecolor="black", linewidth=0.3, label=task_name(i)) for i in range(n)
    ]
    handles += [
        Line2D([], [], linestyle="", marker="^", color="grey", label="release"),
        Line2D([], [], linestyle="", marker="v", color="black", fillstyle="none", label="deadline"),
        Line2D([], [], linestyle="", marker="x", color="red", markeredgewidth=2, label="deadline miss"),
    ]
    ax.legend(
        handles=handles,
        fontsize=7,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        borderaxespad=0.0,
        ncol=1 + len(handles) // 40,
    )
    if title:
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path, dpi=120)
    return fig
