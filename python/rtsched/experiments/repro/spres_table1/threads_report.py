"""The tables, CSVs and figure of ``spres-table1``'s threads engine (threads.py; formerly
``rtsched reproduce spres-runtime``):
Brandenburg & Gül, RTSS 2016, Fig. 7 and Fig. 8 as distributions pooled over every run of a
scheduler, Table I on threads beside the simulator's on the same sets and the paper's."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from ....output import save_figure
from ... import quickmark
from ...reproduction import Csv
from .._sim import SimSpec, close, figure_axes, fmt, md, pct
from . import common as t1

LABELS = {"spres": "SP-RES", "pedf": "P-EDF", "pfp": "P-FP (RM)", "gsn-edf": "GSN-EDF"}
FIG7 = (("schedule", "(a) scheduling"), ("context_switch", "(b) context switch"), ("release", "(c) release"))
FIG8 = (
    ("schedule", "scheduling"),
    ("migration_timer", "migration timer"),
    ("subtask_activation", "subtask activation"),
)
#: Brandenburg & Gül, RTSS 2016, §VII-A: 99th percentiles the text gives, in cycles (2.2 GHz:
#: 2,200 cycles per µs). Fig. 7(c)'s and most of Fig. 8's are only drawn, not given.
PAPER_P99_CYCLES = {
    ("schedule", "spres"): 2_092,
    ("schedule", "pfp"): 2_059,
    ("schedule", "pedf"): 2_150,
    ("schedule", "gsn-edf"): 181_934,
    ("context_switch", "spres"): 990,
    ("context_switch", "pfp"): 990,
    ("context_switch", "pedf"): 990,
    ("context_switch", "gsn-edf"): 2_584,
}
#: "at the 99th percentile, less than 3,750 cycles ≈ 1.7 µs" (Fig. 8, both extra terms).
PAPER_FIG8_P99_BOUND_CYCLES = 3_750
PAPER_CYCLES_PER_US = 2_200


def label(s: str) -> str:
    return LABELS.get(s, s)


def pooled(rows: list, term: str) -> tuple[list, int, int]:
    """The weighted samples of ``term`` over ``rows`` (each stored sample weighs the run's true
    count over its stored count), the true count and the number of runs with samples."""
    out, count, runs = [], 0, 0
    for r in rows:
        xs, n = r[f"{term}_ns"] or [], r[f"{term}_count"] or 0
        if not xs:
            continue
        w = n / len(xs)
        out += [(x, w) for x in xs]
        count += n
        runs += 1
    out.sort()
    return out, count, runs


def quantile(ws: list, q: float) -> float | None:
    """Nearest-rank quantile of weighted samples (sorted (value, weight) pairs)."""
    if not ws:
        return None
    total = sum(w for _, w in ws)
    acc = 0.0
    for x, w in ws:
        acc += w
        if acc >= q * total - 1e-9:
            return x
    return ws[-1][0]


def dist(rows: list, term: str) -> dict:
    ws, count, runs = pooled(rows, term)
    return {
        "samples": count,
        "stored": len(ws),
        "runs": runs,
        "median_ns": quantile(ws, 0.5),
        "p99_ns": quantile(ws, 0.99),
        "max_ns": ws[-1][0] if ws else None,
        "ws": ws,
    }


def us(ns: float | None) -> str:
    return "—" if ns is None else f"{ns / 1000:.2f}"


def summarize(spec: SimSpec, table: pa.Table) -> dict:
    rows = table.to_pylist()
    p = spec.params
    scheds = p["schedulers"]
    base = [r for r in rows if r["scheduler"] == scheds[0] and r["slack"] == 0.0]
    m_values = sorted({r["m"] for r in rows})
    sets, placed = len(base), sum(r["placed"] for r in base)
    split = sum(1 for r in base if r["placed"] and r["split_tasks"])
    fig7 = {s: [r for r in rows if r["scheduler"] == s and r["slack"] == 0.0 and r["ran"]] for s in scheds}
    dists = {(t, s): dist(fig7[s], t) for s in scheds for t in {t for t, _ in FIG7 + FIG8}}
    runs = []
    for s in scheds:
        rs = fig7[s]
        runs.append(
            {
                "scheduler": s,
                "runs": len(rs),
                "jobs": sum(r["jobs"] for r in rs),
                "deadline_misses": sum(r["deadline_misses"] for r in rs),
                "runs_with_misses": sum(1 for r in rs if r["deadline_misses"]),
                "migrations": sum(r["migrations"] for r in rs),
                "untrustworthy": sum(1 for r in rs if not r["trustworthy"]),
                "repeated": sum(1 for r in rs if (r["attempts"] or 1) > 1),
                "truncated_tasks": sum(r["truncated_tasks"] or 0 for r in rs),
            }
        )
    table1 = []
    for s in p["slack"]:
        rs = [r for r in rows if r["scheduler"] == "spres" and r["slack"] == s and r["ran"] and r["split_tasks"]]
        secs = sum(r["duration_ns"] * r["m"] for r in rs) / 1e9
        sim_secs = sum(p["horizon"] * r["m"] for r in rs if r["sim_migrations"] is not None) / 1e9
        mig = sum(r["migrations"] for r in rs)
        sim = sum(r["sim_migrations"] or 0 for r in rs)
        paper = t1.PAPER_SPRES_TABLE1.get(round(s, 2), (None, None, None))
        table1.append(
            {
                "slack": s,
                "sets": len(rs),
                "migrations": mig,
                "rate": mig / secs if secs else None,
                "deadline_misses": sum(r["deadline_misses"] for r in rs),
                "jobs": sum(r["jobs"] for r in rs),
                "sim_migrations": sim,
                "sim_rate": sim / sim_secs if sim_secs else None,
                "sim_deadline_misses": sum(r["sim_deadline_misses"] or 0 for r in rs),
                "paper_rate": paper[1],
                "paper_reduction": paper[2],
            }
        )
    b = table1[0] if table1 and table1[0]["slack"] == 0.0 else None
    for a in table1:
        a["reduction"] = b["rate"] / a["rate"] if b and b["rate"] and a["rate"] else None
        a["sim_reduction"] = b["sim_rate"] / a["sim_rate"] if b and b["sim_rate"] and a["sim_rate"] else None
    res = {
        "sets": sets,
        "placed": placed,
        "split": split,
        "m": m_values,
        "dists": dists,
        "runs": runs,
        "table1": table1,
        "schedulers": scheds,
        "exec_scale": p.get("exec_scale", 1.0),
    }
    res["text"] = "\n".join(_text(spec, res))
    return res


def _text(spec: SimSpec, res: dict) -> list:
    p = spec.params
    scheds, dists = res["schedulers"], res["dists"]
    prio = f"SCHED_FIFO {p['rt_priority']}" if p["rt_priority"] else "normal priority"
    lines = [
        f"{spec.name}: Brandenburg & Gül, RTSS 2016, §VII (Figs. 7–8, Table I) on real threads — m = "
        f"{', '.join(map(str, res['m']))}, {p['horizon'] / 1e9:g} s per run, {prio}, SP-RES with "
        f"{'CASH' if p['cash'] else 'no slack reclamation'} and "
        f"{'every reservation soft (the published code)' if p['soft_unsplit'] else 'hard unsplit reservations'}"
    ]
    if spec.quick or spec.note:
        lines.append(f"NOTE: {spec.note or 'quick form'} — not the paper's full experiment.")
    lines.append(
        f"task sets: {res['sets']} generated ({p['samples']} per point, spres-table1's sets), {res['placed']} "
        f"placed by the SP-RES cascade ({res['sets'] - res['placed']} skipped), {res['split']} with a split task; "
        "P-EDF and P-FP run each split task truncated to its first part (§VII-A)."
    )
    scale = p.get("exec_scale", 1.0)
    lines += [
        "",
        f"Runs (every job body runs {scale:g} × its WCET, rtspin's -s; the placement's budgets are for the WCETs):",
    ]
    lines += md(
        [
            "scheduler",
            "runs",
            "jobs",
            "deadline misses",
            "runs with misses",
            "migrations",
            "truncated tasks",
            "untrustworthy runs",
            "runs repeated (watchdog)",
        ],
        [
            [
                label(r["scheduler"]),
                r["runs"],
                fmt(r["jobs"]),
                fmt(r["deadline_misses"]),
                r["runs_with_misses"],
                fmt(r["migrations"]),
                r["truncated_tasks"],
                r["untrustworthy"],
                r["repeated"],
            ]
            for r in res["runs"]
        ],
    )
    for title, terms in (("Fig. 7", FIG7), ("Fig. 8 (SP-RES)", FIG8)):
        lines += [
            "",
            f"{title}: overhead in µs, pooled over the runs on m = {', '.join(map(str, res['m']))} (paper: its "
            f"text's 99th percentile on m = {t1.PAPER_SPRES_M}, cycles / {PAPER_CYCLES_PER_US} per µs)",
        ]
        body = []
        for term, name in terms:
            for s in scheds if title == "Fig. 7" else ["spres"]:
                if s not in scheds:
                    continue
                d = dists[(term, s)]
                paper = PAPER_P99_CYCLES.get((term, s))
                if title != "Fig. 7" and term != "schedule":
                    paper_txt = f"< {PAPER_FIG8_P99_BOUND_CYCLES / PAPER_CYCLES_PER_US:.2f}"
                else:
                    paper_txt = f"{paper / PAPER_CYCLES_PER_US:.2f}" if paper else "—"
                body.append(
                    [
                        name,
                        label(s),
                        fmt(d["samples"]),
                        d["runs"],
                        us(d["median_ns"]),
                        us(d["p99_ns"]),
                        us(d["max_ns"]),
                        paper_txt,
                    ]
                )
        lines += md(
            ["overhead", "scheduler", "samples", "runs", "median", "p99", "max", f"paper p99 (m = {t1.PAPER_SPRES_M})"],
            body,
        )
    lines += _comparisons(res)
    ours = f"m = {', '.join(map(str, res['m']))}"
    theirs = f"m = {t1.PAPER_SPRES_M}"
    lines += [
        "",
        f"Table I: SP-RES migrations per second and core on the sets with a split task (ours on {ours}, "
        f"the paper's on {theirs}: per-core rates, not the same machine)",
    ]
    lines += md(
        [
            "average slack",
            "sets",
            f"threads ({ours}): migrations",
            f"threads ({ours}): per sec. and core",
            f"threads ({ours}): reduction",
            f"threads ({ours}): misses / jobs",
            f"simulator ({ours}): per sec. and core",
            f"simulator ({ours}): reduction",
            f"simulator ({ours}): misses",
            f"paper ({theirs}): per sec. and core",
            f"paper ({theirs}): reduction",
        ],
        [
            [
                pct(a["slack"]),
                a["sets"],
                fmt(a["migrations"]),
                fmt(a["rate"]),
                "" if a["slack"] == 0 else (fmt(a["reduction"], 1) + "x" if a["reduction"] else "—"),
                f"{fmt(a['deadline_misses'])} / {fmt(a['jobs'])}",
                fmt(a["sim_rate"]),
                "" if a["slack"] == 0 else (fmt(a["sim_reduction"], 1) + "x" if a["sim_reduction"] else "—"),
                fmt(a["sim_deadline_misses"]),
                fmt(a["paper_rate"]),
                "" if a["slack"] == 0 else (fmt(a["paper_reduction"], 1) + "x" if a["paper_reduction"] else "—"),
            ]
            for a in res["table1"]
        ],
    )
    lines.append(
        "(paper: Table I of Brandenburg & Gül, RTSS 2016 — 38 sets, 44 cores, 30 s each, LITMUS^RT; "
        "the simulator column runs the same sets for the same horizon with its own execution-time draws)"
    )
    return lines


def _comparisons(res: dict) -> list:
    """The paper's observations checked on ours: p99 ratios to P-EDF."""
    dists, scheds = res["dists"], res["schedulers"]
    out = ["", "The paper's observations beside ours (99th percentiles):"]
    if "pedf" not in scheds:
        return out + ["- (no P-EDF runs to compare with)"]
    claims = {
        "schedule": "SP-RES, P-FP and P-EDF similar, GSN-EDF far larger (paper: 2,092 / 2,059 / 2,150 vs "
        "181,934 cycles)",
        "context_switch": "SP-RES and the partitioned ones virtually identical, GSN-EDF larger (paper: ~990 vs 2,584 "
        "cycles)",
        "release": "SP-RES somewhat higher than P-EDF and P-FP (paper: its wake-up path), P-EDF lowest",
    }
    for term, claim in claims.items():
        ref = dists[(term, "pedf")]["p99_ns"]
        parts = []
        for s in scheds:
            v = dists[(term, s)]["p99_ns"]
            parts.append(f"{label(s)} {us(v)} µs" + (f" (×{v / ref:.2f})" if v is not None and ref else ""))
        out.append(f"- {term}: {claim}. Ours, × P-EDF: " + ", ".join(parts))
    if "spres" in scheds:
        sch = dists[("release", "spres")]["p99_ns"]
        act = dists[("subtask_activation", "spres")]["p99_ns"]
        if sch and act:
            out.append(
                f"- subtask activation ≈ 2× a local release (paper): ours {us(act)} vs release {us(sch)} µs "
                f"(×{act / sch:.2f})"
            )
    return out


def _cdf(ax, ws: list, name: str) -> None:
    if not ws:
        return
    total = sum(w for _, w in ws)
    acc, xs, ys = 0.0, [], []
    for x, w in ws:
        acc += w
        xs.append(max(x, 1) / 1000)
        ys.append(acc / total)
    ax.step(xs, ys, where="post", label=name)


def figure(res: dict, spec: SimSpec, path: Path) -> Path:
    """Figs. 7 and 8 as CDFs of the pooled samples, Table I's rates and the misses; then drops
    the samples from ``res`` (the report's result keeps their statistics, not up to a million
    values per run)."""
    fig, axes = figure_axes(2, 3, figsize=(14, 8))
    for ax, (term, title) in zip(axes[0], FIG7, strict=True):
        for s in res["schedulers"]:
            _cdf(ax, res["dists"][(term, s)]["ws"], label(s))
        ax.set_title(f"Fig. 7{title[:3]} {title[4:]} overhead", fontsize=9)
    ax = axes[1][0]
    if "spres" in res["schedulers"]:
        for term, name in FIG8:
            _cdf(ax, res["dists"][(term, "spres")]["ws"], name)
    ax.set_title("Fig. 8: SP-RES scheduling and subtask overheads", fontsize=9)
    for ax in [*axes[0], axes[1][0]]:
        ax.set_xscale("log")
        ax.set_xlabel("overhead (µs)")
        ax.set_ylabel("fraction of samples ≤ x")
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    ax = axes[1][1]
    rows = res["table1"]
    x = list(range(len(rows)))
    ours = f"m = {', '.join(map(str, res['m']))}"
    names = (
        ("rate", f"threads, {ours}"),
        ("sim_rate", f"simulator, {ours}"),
        ("paper_rate", f"paper, m = {t1.PAPER_SPRES_M}"),
    )
    for k, (key, name) in enumerate(names):
        ax.bar([i + (k - 1) * 0.27 for i in x], [r[key] or 0 for r in rows], width=0.27, label=name)
    ax.set_xticks(x)
    ax.set_xticklabels([pct(r["slack"]) for r in rows])
    ax.set_xlabel("average slack")
    ax.set_ylabel("migrations per second and core")
    ax.set_title("Table I: SP-RES migration rate vs. slack", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, axis="y", alpha=0.3)
    ax = axes[1][2]
    rr = res["runs"]
    ax.bar(range(len(rr)), [100 * r["deadline_misses"] / r["jobs"] if r["jobs"] else 0 for r in rr])
    ax.set_xticks(range(len(rr)))
    ax.set_xticklabels([label(r["scheduler"]) for r in rr], fontsize=8)
    ax.set_ylabel("deadline misses (% of jobs)")
    ax.set_title(f"Misses in the Fig. 7 runs (jobs run {res['exec_scale']:g} × WCET)", fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(
        quickmark.title(
            "Brandenburg & Gül, RTSS 2016, Figs. 7–8 and Table I on real threads (rtsched runtime)", spec.quick
        ),
        fontsize=10,
    )
    fig.tight_layout()
    try:
        return save_figure(fig, path, dpi=110)
    finally:
        close(fig)
        # Drawn: the report keeps the distributions' statistics, not their samples.
        for d in res["dists"].values():
            d.pop("ws")


def csv_files(res: dict, spec: SimSpec) -> dict[str, Csv]:
    """``NAME.csv`` (overhead statistics per figure, scheduler and term), ``table1.csv`` (Table
    I: ours, the simulator's and the paper's) and ``runs.csv`` (the runs per scheduler)."""
    stats = []
    for title, terms in (("fig7", FIG7), ("fig8", FIG8)):
        for term, _ in terms:
            for s in res["schedulers"] if title == "fig7" else [x for x in res["schedulers"] if x == "spres"]:
                d = res["dists"][(term, s)]
                cols = ("runs", "samples", "stored", "median_ns", "p99_ns", "max_ns")
                stats.append([title, s, term, *[d[k] for k in cols], PAPER_P99_CYCLES.get((term, s))])
    header = ["figure", "scheduler", "term", "runs", "samples", "stored", "median_ns", "p99_ns", "max_ns"]
    header.append("paper_p99_cycles")
    keys = [
        "slack",
        "sets",
        "migrations",
        "rate",
        "reduction",
        "deadline_misses",
        "jobs",
        "sim_migrations",
        "sim_rate",
        "sim_reduction",
        "sim_deadline_misses",
        "paper_rate",
        "paper_reduction",
    ]
    # Both machines' m beside the rates: ours and the paper's 44 cores.
    ms = " ".join(map(str, res["m"]))
    table1 = [[a[k] for k in keys] + [ms, t1.PAPER_SPRES_M] for a in res["table1"]]
    rkeys = [
        "scheduler",
        "runs",
        "jobs",
        "deadline_misses",
        "runs_with_misses",
        "migrations",
        "truncated_tasks",
        "untrustworthy",
        "repeated",
    ]
    return {
        "csv": Csv(f"{spec.name}.csv", header, stats),
        "table": Csv("table1.csv", [*keys, "m", "paper_m"], table1),
        "runs_csv": Csv("runs.csv", rkeys, [[r[k] for k in rkeys] for r in res["runs"]]),
    }
