"""The tables, CSVs and figure of ``rtws-tables``' threads engine (threads.py; formerly
``rtsched reproduce rtws-runtime``): Nogueira et al., EUC 2012, Tables II-III on real threads
beside the simulator on the same sets and the paper's numbers, and the averages per set."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from ....output import save_figure
from ... import quickmark
from ...reproduction import Csv
from .._sim import SimSpec, close, figure_axes, fmt, md, mean, median
from .common import PAPER_RTWS_TABLE2, PAPER_RTWS_TABLE3, WINDOWS

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
