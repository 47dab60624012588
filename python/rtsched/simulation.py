"""Simulation from Python and the ``rtsched simulate`` command (docs/simulator.md, "Command line").

The simulator itself is Rust (``rtsched-sim``, exact integer-ns virtual time); this module
resolves arguments, writes the requested files and draws the PNG Gantt chart with matplotlib
(the SVG one comes from the trace crate).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from . import _core
from . import validate as v
from ._core import RtschedError, TaskSet
from .output import write_data
from .overheads import overheads_text as _overheads_text  # one reader for simulate and analyze

GANTT_FORMATS = (".svg", ".png")

#: A time: integer ns or a duration string ("2ms").
Time = int | str
#: An output path.
PathArg = str | os.PathLike[str]
#: A Gantt window: "START:END" or a (start, end) pair of times.
Window = str | tuple[Any, Any] | None


class NotPlacedError(RtschedError):
    """The task set cannot be placed for a partitioned or SP-RES simulation (CLI exit 1)."""


def schedulers() -> list[str]:
    """Scheduler names ``simulate`` accepts."""
    return list(_core.simulate_schedulers())


#: Scheduler parameters by name: ``{"priorities": "rm"}`` (values int, str or bool).
Params = dict[str, Any] | None


def _merge_params(named: dict[str, Any], params: Params, scheduler: str) -> dict[str, Any]:
    """The named parameter arguments plus ``params``; a parameter given both ways is refused,
    naming it (the registry checks names and values)."""
    if params is None:
        return named
    if not isinstance(params, dict):
        raise RtschedError(f"argument 'params': expected a dict of parameters, got {type(params).__name__}")
    out = dict(named)
    for k, val in params.items():
        key = str(k).strip().replace("-", "_")
        if key in out:
            raise RtschedError(v.given_twice(key, scheduler))
        if not isinstance(val, (bool, int, str)):
            raise RtschedError(f"field '{key}': expected an int, str or bool, got {type(val).__name__}")
        out[key] = val
    return out


def _placement_text(placement) -> str | None:
    if placement is None:
        return None
    if isinstance(placement, dict):
        return json.dumps(placement)
    if isinstance(placement, str):
        return placement
    raise RtschedError(f"field 'placement': expected a placement dict or JSON text, got {type(placement).__name__}")


def _simulate(
    ts: TaskSet,
    m: int | None,
    scheduler: str,
    placement: dict | str | None,
    horizon: Time | None,
    outputs: list[str],
    quantum: Time | None,
    staggered: bool,
    sporadic: Time | None,
    exec_fraction: float | None,
    seed: int,
    overheads: dict | str | os.PathLike | None,
    overhead_stat: str | None,
    cash: bool,
    soft: bool,
    log: Callable[[str], None] | None,
    background: str | None = None,
    rr_quantum: Time | None = None,
    params: Params = None,
    draw_suspensions: bool = False,
) -> tuple[dict, dict]:
    """Runs the simulator; returns (the raw result with the requested exports, the summary).
    Every argument is checked first (rtsched.validate: no float truncated, numbers in range)."""
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
    # Checked in the order of the arguments.
    placement_text = _placement_text(placement)
    staggered = v.boolean(staggered, "staggered")
    seed = v.seed(seed)
    overheads_text = _overheads_text(overheads)
    cash = v.boolean(cash, "cash")
    soft = v.boolean(soft, "soft")
    background = None if background is None else v.text(background, "background")  # names checked by the core
    rr_quantum = v.optional_duration(rr_quantum, "rr_quantum", 1)
    # The scheduler's parameters, only those given: the simulator's registry refuses one that
    # the scheduler does not take, naming it (rtsched_sim::registry).
    given = {
        "quantum": quantum,
        "staggered": staggered or None,
        "cash": cash or None,
        "soft": soft or None,
        "background": background,
        "rr_quantum": rr_quantum,
    }
    named = {k: x for k, x in given.items() if x is not None}
    params_all = _merge_params(named, params, scheduler)
    return _request(
        ts, m, scheduler, params_all, placement_text, horizon, sporadic, exec_fraction, seed, outputs, log,
        overheads_text, overhead_stat, v.boolean(draw_suspensions, "draw_suspensions"),
    )  # fmt: skip


def _request(
    workload: TaskSet | str,
    m: int | None,
    scheduler: str,
    params: dict[str, Any] | None,
    placement_text: str | None,
    horizon: int | None,
    sporadic: int | None,
    exec_fraction: float | None,
    seed: int,
    outputs: list[str],
    log: Callable[[str], None] | None,
    overheads_text: str | None = None,
    overhead_stat: str | None = None,
    draw_suspensions: bool = False,
) -> tuple[dict, dict]:
    """The one simulate request of the Python side (sequential, fork-join and DAG workloads alike),
    its arguments already checked: the simulator's answer and its summary. A set the scheduler
    cannot place raises :class:`NotPlacedError`; ``log`` receives the notes and the horizon cap."""
    res = _core.simulate(
        workload, m, scheduler, params, placement_text, horizon, sporadic, exec_fraction, seed, outputs,
        overheads_text, overhead_stat, draw_suspensions,
    )  # fmt: skip
    if res["not_placed"] is not None:
        raise NotPlacedError(res["not_placed"])
    summary = dict(json.loads(res["summary"]))
    if log is not None:
        for note in res["notes"]:
            log(note)
        if summary["horizon_capped"]:
            log(f"horizon capped: {summary['horizon_message']}")
    return res, summary


def simulate(
    ts: TaskSet,
    m: int | None = None,
    scheduler: str = "gedf",
    placement: dict | str | None = None,
    horizon: Time | None = None,
    *,
    quantum: Time | None = None,
    staggered: bool = False,
    sporadic: Time | None = None,
    exec_fraction: float | None = None,
    seed: int = 0,
    trace: PathArg | None = None,
    perfetto: PathArg | None = None,
    sched_trace: PathArg | None = None,
    job_csv: PathArg | None = None,
    gantt: PathArg | None = None,
    gantt_window: Window = None,
    overheads: dict | str | os.PathLike | None = None,
    overhead_stat: str | None = None,
    cash: bool = False,
    soft: bool = False,
    background: str | None = None,
    rr_quantum: Time | None = None,
    params: Params = None,
    log: Callable[[str], None] | None = None,
    draw_suspensions: bool = False,
) -> dict:
    """Simulates ``ts`` on ``m`` processors and returns the summary dict.

    ``scheduler``: ``gedf`` (event-driven global EDF), ``gedf-quantum`` (``quantum``, default
    1 ms; ``staggered`` quanta), ``gfp`` (global fixed priority; ``params={"priorities": "rm"}``,
    ``"dm"`` by default, or one rank per task such as ``"2,0,1"``), ``gfl`` (G-FL, Erickson &
    Anderson, ECRTS 2012), ``edzl`` (EDZL, Cirinei & Baker, ECRTS 2007), ``llf`` (least laxity first at
    ``quantum``), ``pd2`` (Pfair PD², Anderson & Srinivasan, ECRTS 2000), ``pedf``, ``pfp``
    (deadline monotonic), ``spres``, ``rtws``, ``run`` (RUN, Regnier et al., RTSS 2011) or
    ``qps`` (QPS, Massa et al., RTS 2016; run and qps: implicit deadlines, periodic releases,
    ``U ≤ m``) (:func:`schedulers`). ``params``: the scheduler's registry parameters as a dict (each
    scheduler's are listed in docs/simulator.md); the named arguments below are the same
    parameters, and one given both ways is refused.
    ``placement`` (a placement dict or its JSON text, docs/formats.md) fixes the partition of
    pedf/pfp and the reservations of spres; without it, pedf/pfp are partitioned by worst-fit
    decreasing with exact admission and spres is placed by the SP-RES cascade (a set that
    cannot be placed raises :class:`NotPlacedError`). ``horizon`` defaults to one hyperperiod
    (capped at 1000 s; the summary says when). ``sporadic``: maximum extra inter-arrival delay;
    ``exec_fraction``: execution times uniform in ``[lo·C, C]``; ``seed`` drives both.
    ``trace`` (JSON Lines), ``perfetto``, ``sched_trace`` (LITMUS^RT binary), ``job_csv`` and
    ``gantt`` (``.svg`` or ``.png``) are output paths; ``gantt_window`` (``"START:END"`` or a
    pair of times) draws only that part of the schedule. ``log`` receives notes (the partition
    used, the horizon cap). Times are integer ns or duration strings.
    ``overheads``: an overhead model (``rtsched measure-overheads``) or constants
    (``{"release_ns": 2000, "schedule_ns": "1us", ...}``) as a dict, JSON text or file path;
    ``overhead_stat``: ``"max"`` (default) or ``"avg"`` of the model, evaluated at the task
    count (docs/simulator.md, "Overhead injection"). The summary's ``overheads`` says what was
    charged. ``cash`` (spres only): CASH slack reclamation, as Brandenburg & Gül (RTSS 2016)
    run SP-RES; ``soft`` (spres only): unsplit reservations soft too (served in background once
    depleted; split parts always are); ``background`` (spres only): how depleted soft
    reservations share the background, ``"round-robin"`` every ``rr_quantum`` (default 1 ms;
    Brandenburg & Gül, RTSS 2016, §III-A, as ``rtsched run --scheduler spres`` does by default)
    or ``"earliest-end"`` (earliest window end first). For a chart in a notebook, see
    :func:`simulate_trace` and :func:`rtsched.gantt`.
    Self-suspending tasks (``segments``, docs/formats.md) suspend for each suspension's upper
    bound, or with ``draw_suspensions`` for a time drawn uniformly between its bounds (``seed``);
    the summary's ``suspensions`` and ``suspension_ns`` count them (docs/simulator.md).
    """
    _check_outputs(trace=trace, perfetto=perfetto, sched_trace=sched_trace, job_csv=job_csv, gantt=gantt)
    outputs, gantt_ext = _outputs(trace, perfetto, sched_trace, job_csv, gantt, gantt_window)
    res, summary = _simulate(
        ts, m, scheduler, placement, horizon, outputs, quantum, staggered, sporadic, exec_fraction, seed,
        overheads, overhead_stat, cash, soft, log, background, rr_quantum, params, draw_suspensions,
    )  # fmt: skip
    title = f"{res['scheduler']} on {m if m is not None else ts.m} processors (simulation)"
    _write_outputs(res, trace, perfetto, sched_trace, job_csv, gantt, gantt_ext, title, gantt_window)
    return _finish(summary, res)


def _check_outputs(**paths: Any) -> None:
    """Every output path is checked before the simulation starts (folder exists, writable)."""
    for name, p in paths.items():
        if p is not None:
            v.output_path(p, name)


def _finish(summary: dict, res: dict) -> dict:
    """The summary; after Ctrl-C (the outputs hold the part simulated) a KeyboardInterrupt
    whose ``.partial`` is that summary, so that a script stops as it should."""
    summary["interrupted"] = bool(res.get("interrupted"))
    if summary["interrupted"]:
        e = KeyboardInterrupt(summary.get("horizon_message") or "interrupted")
        e.partial = summary  # type: ignore[attr-defined]
        raise e
    return summary


def simulate_trace(
    ts: TaskSet,
    m: int | None = None,
    scheduler: str = "gedf",
    placement: dict | str | None = None,
    horizon: Time | None = None,
    *,
    quantum: Time | None = None,
    staggered: bool = False,
    sporadic: Time | None = None,
    exec_fraction: float | None = None,
    seed: int = 0,
    overheads: dict | str | os.PathLike | None = None,
    overhead_stat: str | None = None,
    cash: bool = False,
    soft: bool = False,
    background: str | None = None,
    rr_quantum: Time | None = None,
    params: Params = None,
    draw_suspensions: bool = False,
) -> str:
    """Like :func:`simulate` (same arguments, no output files) but returns the trace as JSON
    Lines text (docs/trace.md), for :func:`rtsched.gantt` or your own analysis:

    >>> fig = rtsched.gantt(rtsched.simulate_trace(ts, m=2, horizon="100ms"), window="0:50ms")
    """
    res, summary = _simulate(
        ts, m, scheduler, placement, horizon, ["jsonl"], quantum, staggered, sporadic, exec_fraction, seed,
        overheads, overhead_stat, cash, soft, None, background, rr_quantum, params, draw_suspensions,
    )  # fmt: skip
    _finish(summary, res)
    return str(res["jsonl"])


def _outputs(
    trace: PathArg | None,
    perfetto: PathArg | None,
    sched_trace: PathArg | None,
    job_csv: PathArg | None,
    gantt: PathArg | None,
    window: Window = None,
) -> tuple[list[str], str | None]:
    outputs = []
    gantt_ext = None
    if gantt is not None:
        gantt_ext = os.path.splitext(os.fspath(gantt))[1].lower()
        if gantt_ext not in GANTT_FORMATS:
            raise RtschedError(f"field 'gantt': {os.fspath(gantt)!r} must end in .svg or .png")
        from .plots import parse_window

        parse_window(window)  # a bad window is an error before the simulation runs
        outputs.append("gantt_svg" if gantt_ext == ".svg" and window is None else "jsonl")
    elif window is not None:
        raise RtschedError("field 'gantt_window': applies only with a Gantt chart (gantt=PATH, --gantt)")
    for path, key in ((trace, "jsonl"), (perfetto, "perfetto"), (sched_trace, "sched_trace"), (job_csv, "job_csv")):
        if path is not None and key not in outputs:
            outputs.append(key)
    return outputs, gantt_ext


def _write_outputs(
    res: dict,
    trace: PathArg | None,
    perfetto: PathArg | None,
    sched_trace: PathArg | None,
    job_csv: PathArg | None,
    gantt: PathArg | None,
    gantt_ext: str | None,
    title: str,
    window: Window = None,
) -> None:
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
            write_data(gantt, res["gantt_svg"] if window is None else gantt_svg(res["jsonl"], window))
        else:
            gantt_png(res["jsonl"], gantt, title=title, window=window)


def simulate_forkjoin(
    text: str,
    m: int | None = None,
    horizon: Time | None = None,
    *,
    scheduler: str = "rtws",
    sporadic: Time | None = None,
    seed: int = 0,
    trace: PathArg | None = None,
    perfetto: PathArg | None = None,
    sched_trace: PathArg | None = None,
    job_csv: PathArg | None = None,
    gantt: PathArg | None = None,
    gantt_window: Window = None,
) -> dict:
    """RTWS (Nogueira, Fonseca, Maia & Pinho, 2012) on a fork-join task-set file's JSON
    ``text`` (docs/rtws.md); returns the summary dict (``ForkJoinResult``: job-level jobs, misses
    and response times; thread-level preemptions, migrations, context switches and steals).
    ``trace`` (JSON Lines), ``perfetto``, ``sched_trace`` and ``gantt`` (``.svg``/``.png``,
    ``gantt_window`` as in :func:`simulate`) write the **thread-level** trace (trace job k of
    task i is the k-th thread of task i in fork order); ``job_csv`` writes one row per job
    (``executed``, ``preemptions`` and ``migrations`` summed over its threads). Times are
    integer ns or duration strings.

    ``scheduler="gedf"`` runs event-driven G-EDF over the threads instead (the paper's
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
            for name, val in [
                ("trace", trace),
                ("perfetto", perfetto),
                ("sched_trace", sched_trace),
                ("job_csv", job_csv),
                ("gantt", gantt),
            ]
            if val
        ]
        if asked:
            raise RtschedError(f"field '{asked[0]}': fork-join sets write trace files only under rtws, not {scheduler}")
        if scheduler == "gedf":  # the one simulate request: G-EDF over the threads
            _, summary = _request(text, m, "gedf", None, None, horizon, sporadic, None, seed, [], None)
            return {**summary, "scheduler": "gedf"}
        # SP-RES over the sequentialized tasks: a contrast of the RTWS reproduction, not a scheduler
        # of fork-join sets (crates/py/src/repro.rs).
        return dict(json.loads(_core.forkjoin_simulate(text, m, scheduler, horizon, sporadic, seed)))
    outputs, gantt_ext = _outputs(trace, perfetto, sched_trace, job_csv, gantt, gantt_window)
    res, summary = _request(text, m, "rtws", None, None, horizon, sporadic, None, seed, outputs, None)
    title = f"RTWS on {summary.get('m', m)} processors (simulation, thread level)"
    _write_outputs(res, trace, perfetto, sched_trace, job_csv, gantt, gantt_ext, title, gantt_window)
    return _finish(summary, res)


def simulate_dag(
    text: str,
    m: int | None = None,
    scheduler: str = "gedf",
    horizon: Time | None = None,
    *,
    priorities: str | None = None,
    sporadic: Time | None = None,
    exec_fraction: float | None = None,
    seed: int = 0,
    trace: PathArg | None = None,
    perfetto: PathArg | None = None,
    sched_trace: PathArg | None = None,
    job_csv: PathArg | None = None,
    gantt: PathArg | None = None,
    gantt_window: Window = None,
    log: Callable[[str], None] | None = None,
) -> dict:
    """Node-level simulation of a DAG task-set file's JSON ``text`` (docs/dag.md, "Simulator"):
    ``scheduler`` ``"gedf"`` (global EDF over ready nodes), ``"gfp"`` (global fixed priority,
    ``priorities`` ``"dm"`` by default, ``"rm"`` or one rank per task) or ``"federated"`` (Li,
    Chen, Agrawal, Lu & Gill, ECRTS 2014: the plan of the federated test, which the summary's
    ``federated`` key shows; a set it cannot place raises :class:`NotPlacedError`). ``m``
    defaults to the file's ``"m"``; ``horizon`` to one hyperperiod. ``sporadic`` (a maximum
    extra delay per gap) and ``exec_fraction`` (each node instance runs a time uniform in
    ``[LO*C, C]``, seeded by ``seed``) are the simulator's release and early-completion options.

    Returns the summary dict (``DagResult``: DAG-job ``jobs``, ``deadline_misses``,
    ``max_response_time_ns``, ``mean_response_time_ns``, ``per_task``; node-level ``nodes``,
    ``node_events``, ``preemptions``, ``migrations``). ``trace``, ``perfetto``, ``sched_trace``
    and ``gantt`` write the **node-level** trace: trace task ``NAME[k]`` is node ``k`` of task
    ``NAME`` (``T{i}[k]`` without a name) and its job ``j`` is node ``k`` of job ``j``, so a Gantt
    box reads ``NAME[k].j``; ``job_csv`` writes one row per DAG job. Sequential-only schedulers
    are refused in one line naming the scheduler."""
    text = v.text(text, "text")
    if not _is_dag_text(text):
        raise RtschedError(
            "argument 'text': not a DAG task set (no task has \"nodes\", docs/dag.md); "
            "sequential sets run through rtsched.simulate, fork-join sets through rtsched.simulate_forkjoin"
        )
    m = v.optional_processors(m)
    scheduler = v.text(scheduler, "scheduler")
    horizon = v.optional_duration(horizon, "horizon", 1)
    sporadic = v.optional_duration(sporadic, "sporadic")
    if exec_fraction is not None:
        exec_fraction = v.number(exec_fraction, "exec_fraction", 0.0, 1.0, lo_open=True)
    seed = v.seed(seed)
    params = {} if priorities is None else {"priorities": v.text(priorities, "priorities")}
    if log is not None and not callable(log):
        raise RtschedError(f"argument 'log': expected a function of one string, got {type(log).__name__}")
    _check_outputs(trace=trace, perfetto=perfetto, sched_trace=sched_trace, job_csv=job_csv, gantt=gantt)
    outputs, gantt_ext = _outputs(trace, perfetto, sched_trace, job_csv, gantt, gantt_window)
    res, summary = _request(text, m, scheduler, params, None, horizon, sporadic, exec_fraction, seed, outputs, log)
    title = f"{res['scheduler']} on {summary['m']} processors (simulation, node level)"
    _write_outputs(res, trace, perfetto, sched_trace, job_csv, gantt, gantt_ext, title, gantt_window)
    return _finish(summary, res)


def _is_dag_text(text: str) -> bool:
    """Whether ``text`` is JSON whose tasks have ``"nodes"`` (the one loader's rule, cli/workload.py);
    text that does not parse is left to the Rust reader, which names the problem."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return True
    tasks = doc.get("tasks") if isinstance(doc, dict) else None
    return not isinstance(tasks, list) or any(isinstance(t, dict) and "nodes" in t for t in tasks)


def format_dag_table(s: dict) -> str:
    """A DAG summary (:func:`simulate_dag`) as a readable table, times in the unit that suits
    them; the JSON keeps integer ns."""

    def t(x: int | float | None) -> str:
        return "-" if x is None else _core.format_time(round(x))

    out = [
        f"horizon {t(s['horizon'])}" + (" (capped)" if s["horizon_capped"] else ""),
        f"DAG jobs {s['jobs']} (completed {s['completed']}, pending {s['pending']}), deadline misses "
        f"{s['deadline_misses']}, max tardiness {t(s['max_tardiness_ns'])}",
        f"response time max {t(s['max_response_time_ns'])}, mean {t(s['mean_response_time_ns'])}",
        f"nodes {s['nodes']} (completed {s['nodes_completed']}), node events {s['node_events']}, preemptions "
        f"{s['preemptions']}, migrations {s['migrations']}, context switches {s['context_switches']}",
    ]
    fed = s.get("federated")
    if fed:
        high = ", ".join(f"task {h['task']} on CPUs {h['cpus'][0]}..{h['cpus'][1]}" for h in fed["high"]) or "none"
        out.append(f"federated: dedicated {high}; light cores from CPU {fed['light_first_cpu']}: {fed['light']}")
    out += ["", f"{'task':>6} {'nodes':>6} {'jobs':>10} {'misses':>8} {'max response':>14} {'mean response':>14}"]
    for row in s["per_task"]:
        name = row["name"] if row["name"] is not None else str(row["task"])
        out.append(
            f"{name:>6} {row['nodes']:>6} {row['jobs']:>10} {row['deadline_misses']:>8} "
            f"{t(row['max_response_time_ns']):>14} {t(row['mean_response_time_ns']):>14}"
        )
    return "\n".join(out)


def gantt_png(jsonl: str, path: str | os.PathLike, title: str = "", window: Window = None) -> None:
    """Draws a JSON Lines trace (docs/trace.md) as a PNG Gantt chart (:func:`rtsched.gantt`)."""
    from .plots import gantt

    gantt(jsonl, window=window, title=title, path=path)


def gantt_svg(jsonl: str, window: Window = None) -> str:
    """The SVG Gantt chart of a JSON Lines trace, of ``window`` (default: the whole horizon)."""
    from .plots import parse_window

    start, end = parse_window(window)
    return _core.trace_gantt_svg(jsonl, start, end)


def format_table(s: dict) -> str:
    """The summary as a readable table (what ``rtsched simulate`` prints without --json): times
    in the unit that suits them (``83.6 ms``); the JSON keeps integer ns."""

    def t(x: int | None) -> str:
        return "-" if x is None else _core.format_time(x)

    out = [
        f"horizon {t(s['horizon_ns'])}" + (" (capped)" if s["horizon_capped"] else ""),
        f"jobs {s['jobs']}, deadline misses {s['deadline_misses']}, max tardiness {t(s['max_tardiness_ns'])}, "
        f"max response time {t(s['max_response_time_ns'])}",
        f"preemptions {s['preemptions']}, migrations {s['migrations']}, context switches {s['context_switches']}"
        + ("" if s["steals"] is None else f", steals {s['steals']}"),
    ]
    if s.get("suspensions"):
        out.append(f"self-suspensions {s['suspensions']}, time suspended {t(s['suspension_ns'])}")
    o = s.get("overheads")
    if o:
        v = o["values"]
        src = o["source"] + (f" {o['stat']} at n = {o['n']}" if o["stat"] else "")
        out.append(
            f"overheads ({src}): release {t(v['release_ns'])}, release latency {t(v['release_event_ns'])}, "
            f"schedule {t(v['schedule_ns'])}, context switch {t(v['context_switch_ns'])}, ipi {t(v['ipi_ns'])}, "
            f"tick {t(v['tick_ns'])}; CPU time charged {t(o['cpu_time_ns'])}"
        )
    out += [
        "",
        f"{'task':>6} {'jobs':>10} {'misses':>8} {'max response':>14} {'preemptions':>12} {'migrations':>11}",
    ]
    for row in s["per_task"]:
        out.append(
            f"{row['task']:>6} {row['jobs']:>10} {row['deadline_misses']:>8} {t(row['max_response_time_ns']):>14} "
            f"{row['preemptions']:>12} {row['migrations']:>11}"
        )
    return "\n".join(out)
