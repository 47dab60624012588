"""``rtsched overheads show``: look at an overhead model before trusting it (docs/overheads.md,
"Within and beyond the measured range").

It prints, per measured term, the sample points with every column the file has (kept samples,
discarded and outlier counts, average, median, p99, maximum before and after the outlier rule),
the least-squares trend of each statistic, and the rule the analysis uses beyond the largest
measured n and for more processors; ``--plot FILE`` draws the points and the evaluated curves,
the extrapolated part dashed. The numbers come from the Rust model (``_core.describe_overhead_model``),
so what is shown is what the analysis charges.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from .. import _core
from .. import validate as v
from .._core import RtschedError
from ..overheads import format_value
from .common import emit


def describe(
    model: str | os.PathLike | dict, mechanism: str | None = None, m: int | None = None, n: int | None = None
) -> dict[str, Any]:
    """The description of an overhead model (a path, a dict or JSON text): metadata, protocol,
    provenance, per-term points, trends and rules, and the curves evaluated up to ``n`` (default
    twice the largest measured n) for ``mechanism`` (default the model's own) on ``m`` processors
    (default the model's; maxima of contended terms are scaled beyond it)."""
    from ..overheads import overheads_text, read_model

    if isinstance(model, (str, os.PathLike)) and not str(model).lstrip().startswith("{"):
        path = _resolve(os.fspath(model))
        if os.path.isdir(path):
            raise RtschedError(f"{os.fspath(model)}: a folder of models; show one model file of it")
        text = read_model(path)["text"]  # read and validated, errors name the file
    else:
        text = overheads_text(model) or ""
    if mechanism is not None:
        mechanism = v.text(mechanism, "mechanism")
    m = v.optional_integer(m, "m", 1, v.MAX_CPU + 1)
    n = v.optional_integer(n, "n", 1, 1_000_000)
    try:
        return dict(_core.describe_overhead_model(text, mechanism, m, n))
    except RtschedError as e:
        where = model if isinstance(model, str) and not model.lstrip().startswith("{") else "overheads"
        raise RtschedError(f"{where}: {e}") from None


def _resolve(arg: str) -> str:
    """A model path, a shipped model's name, or ``SET/FILE`` naming a model of a shipped set
    (``paper/overheads-gedf-mp.json``), matched against the listing of the shipped data."""
    from ..shipped import models, resolve_overheads

    head, _, tail = arg.partition("/")
    shipped = models()
    if not os.path.exists(arg) and tail and "/" not in tail and head in shipped and shipped[head].is_dir():
        files = {p.name: p for p in shipped[head].iterdir() if p.is_file()}
        hit = files.get(tail) or files.get(f"{tail}.json")
        if hit:
            return str(hit)
    return resolve_overheads(arg)


def _col(term: dict, key: str, i: int) -> Any:
    c = term.get(key)
    return None if c is None else c[i]


def table_lines(d: dict) -> list[str]:
    """``rtsched overheads show`` as text."""
    head = f"overhead model of {d.get('scheduler') or '(no scheduler named)'}"
    if d.get("m") is not None:
        head += f", m = {d['m']}"
    if d.get("machine"):
        head += f", measured on {d['machine']}"
    if d.get("interrupted"):
        head += " (measurement interrupted)"
    out = [head]
    proto = d.get("protocol")
    if proto:
        out.append("protocol: " + "; ".join(f"{k}: {_short(x)}" for k, x in proto.items()))
    else:
        out.append("protocol: not stated (a model written before the measurement protocol: no interference filter)")
    prov = d.get("provenance")
    if prov:
        out.append("provenance: " + "; ".join(f"{k}: {_short(x)}" for k, x in prov.items()))
    mech = d.get("mechanism")
    out.append(
        f"rules beyond n = {d['max_n']} for mechanism {mech}"
        + (f" on m = {d['analysed_m']}" if d.get("analysed_m") else "")
        if mech
        else f"no known mechanism: every term is held beyond n = {d['max_n']} (give --mechanism)"
    )
    cols = ["n", "kept", "discarded", "outliers", "avg", "p50", "p99", "max", "max raw"]
    for t in d["terms"]:
        out.append("")
        kind = {"latency": "latency", "count": "a count, not a time"}.get(t["kind"], "CPU time")
        out.append(f"{t['term']} ({t['symbol']}, {kind}){'  — contended' if t['contended'] else ''}")
        # A count term's columns are numbers of events: printed as numbers, never as times.
        count = t["kind"] == "count"
        rows = []
        for i, n in enumerate(t["n"]):
            rows.append(
                [
                    str(n),
                    _int(_col(t, "count", i)),
                    _int(_col(t, "discarded", i)),
                    _int(_col(t, "outliers", i)),
                    *(
                        format_value(x, count)
                        for x in (
                            t["avg_ns"][i],
                            _col(t, "p50_ns", i),
                            _col(t, "p99_ns", i),
                            t["max_ns"][i],
                            _col(t, "max_raw_ns", i),
                        )
                    ),
                ]
            )
        widths = [max(len(c), *(len(r[j]) for r in rows)) for j, c in enumerate(cols)]
        out.append("  " + "  ".join(c.rjust(w) for c, w in zip(cols, widths, strict=True)))
        out.extend("  " + "  ".join(x.rjust(w) for x, w in zip(r, widths, strict=True)) for r in rows)
        per_task = "per task" if count else "ns/task"
        for stat in ("avg", "max"):
            rule = (t.get("rule") or {}).get(stat) or {}
            slope = t["slope_ns_per_task"][stat]
            how = (
                f"trend +{slope:.1f} {per_task} (least squares over all points)"
                if rule.get("beyond") == "trend"
                else "held at the last value"
            )
            scale = rule.get("m_scale")
            if scale:
                how += f", × {scale[0]}/{scale[1]} for m"
            out.append(f"  {stat}: fitted slope {slope:.1f} {per_task}; beyond n = {t['n'][-1]}: {how}")
    return out


def _int(x: Any) -> str:
    return "-" if x is None else str(x)


def _short(x: Any) -> str:
    s = x if isinstance(x, str) else json.dumps(x)
    return s if len(s) <= 160 else s[:157] + "..."


def plot(d: dict, path: str) -> None:
    """Draws each term's points (avg, p99 where measured, max) and the evaluated curves; the part
    beyond the largest measured n is dashed and shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..output import save_figure

    terms = d["terms"]
    if not terms:
        raise RtschedError("the model has no measured term to draw")
    cols = min(3, len(terms))
    rows = (len(terms) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False)
    grid = d["grid_n"]
    for ax, t in zip(axes.flat, terms, strict=False):
        # A count term (kind "count") is drawn as counts; every other term in µs.
        scale = 1 if t["kind"] == "count" else 1000
        last = t["n"][-1]
        inside = [i for i, n in enumerate(grid) if n <= last]
        beyond = [i for i, n in enumerate(grid) if n >= last]
        for stat, color, marker in (("avg", "tab:blue", "o"), ("max", "tab:red", "x")):
            ys = [y / scale for y in t["curve"][f"{stat}_ns"]]
            ax.plot([grid[i] for i in inside], [ys[i] for i in inside], color=color, lw=1.2, label=f"{stat} (model)")
            if len(beyond) > 1:
                ax.plot([grid[i] for i in beyond], [ys[i] for i in beyond], color=color, lw=1.2, ls="--")
            ax.plot(t["n"], [y / scale for y in t[f"{stat}_ns"]], marker, color=color, ms=4, ls="none")
        if t.get("p99_ns"):
            ax.plot(t["n"], [y / scale for y in t["p99_ns"]], "^", color="tab:green", ms=4, ls="none", label="p99")
        if t.get("max_raw_ns"):
            ax.plot(t["n"], [y / scale for y in t["max_raw_ns"]], "+", color="grey", ms=5, ls="none", label="max raw")
        if grid and grid[-1] > last:
            ax.axvspan(last, grid[-1], color="grey", alpha=0.08)
        ax.set_title(f"{t['term']} ({t['symbol']})" + (" contended" if t["contended"] else ""), fontsize=9)
        ax.set_xlabel("n", fontsize=8)
        ax.set_ylabel("count" if scale == 1 else "µs", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(terms) :]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=6)
    title = f"{d.get('scheduler') or 'model'}, m = {d.get('m')}"
    if d.get("mechanism"):
        title += f"; rules of {d['mechanism']}" + (f" on m = {d['analysed_m']}" if d.get("analysed_m") else "")
    fig.suptitle(title + " (dashed: beyond the measured n)", fontsize=10)
    fig.tight_layout()
    try:
        save_figure(fig, path, dpi=110)
    finally:
        plt.close(fig)


def cmd_show(args: argparse.Namespace) -> int:
    if args.plot:
        v.output_path(args.plot, "--plot")
        if not args.plot.lower().endswith((".png", ".svg", ".pdf")):
            raise RtschedError(f"--plot {args.plot}: the file must end in .png, .svg or .pdf")
    d = describe(args.model, mechanism=args.mechanism, m=args.m, n=args.n)
    emit(args, d, lambda: "\n".join(table_lines(d)))
    if args.plot:
        plot(d, args.plot)
        import sys

        print(f"rtsched overheads show: wrote {args.plot}", file=sys.stderr)
    return 0


def add_commands(sub: Any) -> None:
    p = sub.add_parser(
        "overheads",
        help="look at an overhead model: points, filtered counts, trends and extrapolation rules",
        description="Commands on overhead models (docs/overheads.md).",
    )
    osub = p.add_subparsers(dest="overheads_command", metavar="SUBCOMMAND", parser_class=type(p))
    osub.required = True
    s = osub.add_parser(
        "show",
        help="print (and --plot) a model's points, filtered counts, fitted trends and the rules beyond its range",
        description="Print each measured term's points (samples kept, discarded and outliers; avg, p50, p99, max "
        "before and after the outlier rule), the least-squares trend of each statistic, and how the analysis "
        "evaluates the term beyond the largest measured n and on more processors (docs/overheads.md).",
    )
    s.add_argument(
        "model", help="an overhead model file (rtsched measure-overheads writes them) or a shipped model's name"
    )
    s.add_argument("--mechanism", help="the mechanism whose rules to show (default: the model's scheduler)")
    s.add_argument("--m", type=int, help="processors to evaluate for (default: the model's; contended maxima scale)")
    s.add_argument("--n", type=int, help="evaluate the curves up to this n (default: twice the largest measured n)")
    s.add_argument("--plot", metavar="FILE", help="also draw the points and curves to FILE (.png, .svg, .pdf)")
    s.add_argument("--json", action="store_true", help="print the description as JSON instead of a table")
    s.add_argument("-o", "--output", metavar="FILE", help="also write the description as JSON to FILE")
    s.set_defaults(func=cmd_show)
    from ..campaign import add_compare_command

    add_compare_command(osub)
