"""Simulation from Python and the ``rtsched simulate`` command (docs/simulator.md, "Command line").

The simulator itself is Rust (``rtsched-sim``, exact integer-ns virtual time); this module
resolves arguments, writes the requested files and draws the PNG Gantt chart with matplotlib
(the SVG one comes from the trace crate).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from . import _core
from . import validate as v
from ._core import RtschedError, TaskSet
from .output import save_figure, write_data
from .overheads import overheads_text as _overheads_text  # one reader for simulate and analyze

GANTT_FORMATS = (".svg", ".png")
FORKJOIN = ("rtws", "gedf", "spres")


class NotPlacedError(RtschedError):
    """The task set cannot be placed for a partitioned or SP-RES simulation (CLI exit 1)."""


def schedulers() -> list[str]:
    """Scheduler names ``simulate`` accepts."""
    return list(_core.simulate_schedulers())


def _placement_text(placement) -> str | None:
    if placement is None:
        return None
    if isinstance(placement, dict):
        return json.dumps(placement)
    if isinstance(placement, str):
        return placement
    raise RtschedError(f"field 'placement': expected a placement dict or JSON text, got {type(placement).__name__}")


def _check_outputs(**paths) -> None:
    """Every output path is checked before the simulation starts (folder exists, writable)."""
    for name, p in paths.items():
        if p is not None:
            v.output_path(p, name)


def simulate(
    ts: TaskSet,
    m: int | None = None,
    scheduler: str = "gedf",
    placement=None,
    horizon=None,
    *,
    quantum=None,
    staggered: bool = False,
    sporadic=None,
    exec_fraction: float | None = None,
    seed: int = 0,
    trace=None,
    perfetto=None,
    sched_trace=None,
    job_csv=None,
    gantt=None,
    overheads=None,
    overhead_stat: str | None = None,
    cash: bool = False,
    soft: bool = False,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Simulates ``ts`` on ``m`` processors and returns the summary dict.

    ``scheduler``: ``gedf`` (event-driven global EDF), ``gedf-quantum`` (``quantum``, default
    1 ms; ``staggered`` quanta), ``pedf``, ``pfp`` (deadline monotonic) or ``spres``.
    ``placement`` (a placement dict or its JSON text, docs/formats.md) fixes the partition of
    pedf/pfp and the reservations of spres; without it, pedf/pfp are partitioned by worst-fit
    decreasing with exact admission and spres is placed by the SP-RES cascade (a set that
    cannot be placed raises :class:`NotPlacedError`). ``horizon`` defaults to one hyperperiod
    (capped at 1000 s; the summary says when). ``sporadic``: maximum extra inter-arrival delay;
    ``exec_fraction``: execution times uniform in ``[lo·C, C]``; ``seed`` drives both.
    ``trace`` (JSON Lines), ``perfetto``, ``sched_trace`` (LITMUS^RT binary), ``job_csv`` and
    ``gantt`` (``.svg`` or ``.png``) are output paths. ``log`` receives notes (the partition
    used, the horizon cap). Times are integer ns or duration strings.
    ``overheads``: an overhead model (``rtsched measure-overheads``) or constants
    (``{"release_ns": 2000, "schedule_ns": "1us", ...}``) as a dict, JSON text or file path;
    ``overhead_stat``: ``"max"`` (default) or ``"avg"`` of the model, evaluated at the task
    count (docs/simulator.md, "Overhead injection"). The summary's ``overheads`` says what was
    charged. ``cash`` (spres only): CASH slack reclamation, as seed 004 runs SP-RES; ``soft``
    (spres only): unsplit reservations soft too (served in background once depleted; split
    parts always are).
    """
    ts = v.task_set(ts, "ts")
    m = v.optional_processors(m)
    scheduler = v.text(scheduler, "scheduler")
    quantum = v.optional_duration(quantum, "quantum", 1)
    horizon = v.optional_duration(horizon, "horizon", 1)
    sporadic = v.optional_duration(sporadic, "sporadic")
    if exec_fraction is not None:
        exec_fraction = v.number(exec_fraction, "exec_fraction", 0.0, 1.0, lo_open=True)
    if overhead_stat is not None:
        overhead_stat = v.choice(overhead_stat, "overhead_stat", ["max", "avg"])
    if log is not None and not callable(log):
        raise RtschedError(f"argument 'log': expected a function of one string, got {type(log).__name__}")
    _check_outputs(trace=trace, perfetto=perfetto, sched_trace=sched_trace, job_csv=job_csv, gantt=gantt)
    outputs, gantt_ext = _outputs(trace, perfetto, sched_trace, job_csv, gantt)
    res = _core.simulate(
        ts,
        m,
        scheduler,
        _placement_text(placement),
        quantum,
        v.boolean(staggered, "staggered"),
        horizon,
        sporadic,
        exec_fraction,
        v.seed(seed),
        outputs,
        _overheads_text(overheads),
        overhead_stat,
        v.boolean(cash, "cash"),
        v.boolean(soft, "soft"),
    )
    if res["not_placed"] is not None:
        raise NotPlacedError(res["not_placed"])
    summary = json.loads(res["summary"])
    if log is not None:
        for note in res["notes"]:
            log(note)
        if summary["horizon_capped"]:
            log(f"horizon capped: {summary['horizon_message']}")
    _write_outputs(res, trace, perfetto, sched_trace, job_csv, gantt, gantt_ext, res["scheduler"])
    return _finish(summary, res)


def _finish(summary: dict, res: dict) -> dict:
    """The summary; after Ctrl-C (the outputs hold the part simulated) a KeyboardInterrupt
    whose ``.partial`` is that summary, so that a script stops as it should."""
    summary["interrupted"] = bool(res.get("interrupted"))
    if summary["interrupted"]:
        e = KeyboardInterrupt(summary.get("horizon_message") or "interrupted")
        e.partial = summary
        raise e
    return summary


def _outputs(trace, perfetto, sched_trace, job_csv, gantt) -> tuple[list[str], str | None]:
    outputs = []
    gantt_ext = None
    if gantt is not None:
        gantt_ext = os.path.splitext(os.fspath(gantt))[1].lower()
        if gantt_ext not in GANTT_FORMATS:
            raise RtschedError(f"field 'gantt': {os.fspath(gantt)!r} must end in .svg or .png")
        outputs.append("gantt_svg" if gantt_ext == ".svg" else "jsonl")
    for path, key in ((trace, "jsonl"), (perfetto, "perfetto"), (sched_trace, "sched_trace"), (job_csv, "job_csv")):
        if path is not None and key not in outputs:
            outputs.append(key)
    return outputs, gantt_ext


def _write_outputs(res: dict, trace, perfetto, sched_trace, job_csv, gantt, gantt_ext, title: str) -> None:
    if trace is not None:
        write_data(trace, res["jsonl"])
    if perfetto is not None:
        write_data(perfetto, res["perfetto"])
    if sched_trace is not None:
        write_data(sched_trace, res["sched_trace"])
    if job_csv is not None:
        write_data(job_csv, res["job_csv"])
    if gantt is not None:
        if gantt_ext == ".svg":
            write_data(gantt, res["gantt_svg"])
        else:
            gantt_png(res["jsonl"], gantt, title=title)


def simulate_forkjoin(
    text: str,
    m: int | None = None,
    horizon=None,
    *,
    scheduler: str = "rtws",
    sporadic=None,
    seed: int = 0,
    trace=None,
    perfetto=None,
    sched_trace=None,
    job_csv=None,
    gantt=None,
) -> dict:
    """RTWS (seed 003) on a fork-join task-set file's JSON ``text`` (docs/rtws.md); returns the
    summary dict (``RtwsResult``: job-level jobs, misses and response times; thread-level
    preemptions, migrations, context switches and steals). ``trace`` (JSON Lines),
    ``perfetto``, ``sched_trace`` and ``gantt`` (``.svg``/``.png``) write the **thread-level**
    trace (trace job k of task i is the k-th thread of task i in fork order); ``job_csv``
    writes one row per job (``executed``, ``preemptions`` and ``migrations`` summed over its
    threads). Times are integer ns or duration strings.

    ``scheduler="gedf"`` runs event-driven G-EDF over the threads instead (the seed-003
    baseline) and ``"spres"`` SP-RES over the sequentialized tasks (CASH on; contrast only);
    those two return the same summary keys plus ``remote_starts`` and write no trace files."""
    text = v.text(text, "text")
    m = v.optional_processors(m)
    horizon = v.optional_duration(horizon, "horizon", 1)
    sporadic = v.optional_duration(sporadic, "sporadic")
    seed = v.seed(seed)
    scheduler = v.choice(
        str(scheduler).lower() if isinstance(scheduler, str) else scheduler, "scheduler", ["rtws", "gedf", "spres"]
    )
    _check_outputs(trace=trace, perfetto=perfetto, sched_trace=sched_trace, job_csv=job_csv, gantt=gantt)
    if scheduler != "rtws":
        asked = [
            name
            for name, v in [
                ("trace", trace),
                ("perfetto", perfetto),
                ("sched_trace", sched_trace),
                ("job_csv", job_csv),
                ("gantt", gantt),
            ]
            if v
        ]
        if asked:
            raise RtschedError(f"field '{asked[0]}': fork-join sets write trace files only under rtws, not {scheduler}")
        return json.loads(_core.forkjoin_simulate(text, m, scheduler, horizon, sporadic, seed))
    outputs, gantt_ext = _outputs(trace, perfetto, sched_trace, job_csv, gantt)
    res = _core.simulate_forkjoin(text, m, horizon, sporadic, seed, outputs)
    summary = json.loads(res["summary"])
    _write_outputs(res, trace, perfetto, sched_trace, job_csv, gantt, gantt_ext, "RTWS (thread-level)")
    return _finish(summary, res)


def gantt_png(jsonl: str, path, title: str = "") -> None:
    """Draws a Gantt chart from a JSON Lines trace (docs/trace.md) into a PNG: one row per CPU
    with execution intervals coloured by task, then one row per task with releases (^),
    deadlines (v) and deadline misses (red x)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = [json.loads(x) for x in jsonl.splitlines() if x.strip()]
    if not lines or lines[0].get("ev") != "meta":
        raise RtschedError("gantt: the trace has no meta line")
    meta, recs = lines[0], lines[1:]
    m, horizon, n = meta["m"], meta["horizon"], len(meta["tasks"])
    running: dict[int, tuple] = {}
    bars: list[list[tuple]] = [[] for _ in range(m)]
    releases, deadlines, misses = [[] for _ in range(n)], [[] for _ in range(n)], [[] for _ in range(n)]
    for r in recs:
        ev, t = r["ev"], r["t"]
        if ev == "run":
            running[r["cpu"]] = (t, r["task"], r["job"])
        elif ev in ("preempt", "complete"):
            start = running.pop(r["cpu"], None)
            if start is not None:
                bars[r["cpu"]].append((start[0], t - start[0], start[1], start[2]))
        elif ev == "release":
            releases[r["task"]].append(t)
            deadlines[r["task"]].append(r["deadline"])
        elif ev == "deadline_miss":
            misses[r["task"]].append(t)
    for cpu, (s, task, job) in running.items():
        if horizon > s:
            bars[cpu].append((s, horizon - s, task, job))
    cmap = plt.get_cmap("tab20")
    color = [cmap(i % 20) for i in range(n)]
    rows = m + n
    fig, ax = plt.subplots(figsize=(10, 0.45 * rows + 1.4))
    for cpu in range(m):
        y = rows - 1 - cpu
        by_task: dict[int, list] = {}
        for s, w, task, job in bars[cpu]:
            by_task.setdefault(task, []).append((s, w))
            if w > horizon / 60:
                ax.text(s + w / 2, y, f"{task}.{job}", ha="center", va="center", fontsize=6)
        for task, spans in by_task.items():  # one call per task and CPU: fast for long traces
            ax.broken_barh(spans, (y - 0.4, 0.8), facecolors=color[task], edgecolors="black", linewidth=0.3)
    for task in range(n):
        y = rows - 1 - m - task
        rel = [x for x in releases[task] if x <= horizon]
        dl = [x for x in deadlines[task] if x <= horizon]
        ax.plot(rel, [y] * len(rel), linestyle="", marker="^", color=color[task], markersize=6)
        ax.plot(dl, [y] * len(dl), linestyle="", marker="v", color="black", markersize=5, fillstyle="none")
        if misses[task]:
            ax.plot(
                misses[task],
                [y] * len(misses[task]),
                linestyle="",
                marker="x",
                color="red",
                markersize=9,
                markeredgewidth=2,
            )
    names = [f"CPU {c}" for c in range(m)] + [
        f"τ{i}" + (f" {meta['tasks'][i]['name']}" if meta["tasks"][i].get("name") else "") for i in range(n)
    ]
    ax.set_yticks([rows - 1 - k for k in range(rows)])
    ax.set_yticklabels(names, fontsize=7)
    ax.axhline(rows - m - 0.5, color="grey", linewidth=0.6)
    ax.set_xlim(0, horizon)
    ax.set_ylim(-0.7, rows - 0.3)
    ax.set_xlabel("time (ns)")
    if title:
        ax.set_title(title, fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    try:
        save_figure(fig, path, dpi=120)
    finally:
        plt.close(fig)


def format_table(s: dict) -> str:
    """The summary as a readable table (what ``rtsched simulate`` prints without --json)."""

    def ns(x):
        return "-" if x is None else f"{x} ns"

    out = [
        f"horizon {s['horizon_ns']} ns" + (" (capped)" if s["horizon_capped"] else ""),
        f"jobs {s['jobs']}, deadline misses {s['deadline_misses']}, max tardiness {ns(s['max_tardiness_ns'])}, "
        f"max response time {ns(s['max_response_time_ns'])}",
        f"preemptions {s['preemptions']}, migrations {s['migrations']}, context switches {s['context_switches']}"
        + ("" if s["steals"] is None else f", steals {s['steals']}"),
    ]
    o = s.get("overheads")
    if o:
        v = o["values"]
        src = o["source"] + (f" {o['stat']} at n = {o['n']}" if o["stat"] else "")
        out.append(
            f"overheads ({src}): release {v['release_ns']} ns, release latency {v['release_event_ns']} ns, "
            f"schedule {v['schedule_ns']} ns, context switch {v['context_switch_ns']} ns, ipi {v['ipi_ns']} ns, "
            f"tick {v['tick_ns']} ns; CPU time charged {o['cpu_time_ns']} ns"
        )
    out += [
        "",
        f"{'task':>6} {'jobs':>10} {'misses':>8} {'max response (ns)':>18} {'preemptions':>12} {'migrations':>11}",
    ]
    for t in s["per_task"]:
        rt = "-" if t["max_response_time_ns"] is None else str(t["max_response_time_ns"])
        out.append(
            f"{t['task']:>6} {t['jobs']:>10} {t['deadline_misses']:>8} {rt:>18} {t['preemptions']:>12} "
            f"{t['migrations']:>11}"
        )
    return "\n".join(out)
