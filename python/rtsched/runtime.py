"""Running task sets on real cores (the runtime, docs/runtime.md) and the overhead experiment.

``run(ts, scheduler=..., cpus=..., duration=...)`` returns the run's summary as a dict (keys in
docs/runtime.md "Command line"). ``measure_overheads`` is the experiment of Cerqueira, Vanga &
Brandenburg, RTAS 2014 (Appendix A) scaled to this machine: RandFixedSum task sets
of n = m, 2m, ..., 10m tasks with U uniform in [0.4m, 0.8m], log-uniform periods in
[10, 100] ms, synchronous release, one run per n; it writes an overhead model JSON file and
plots of average and maximum overhead against n (Cerqueira et al., RTAS 2014 Figs. 6-7).
"""

from __future__ import annotations

import json
import os
import platform
import random
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from . import _core
from ._core import RtschedError, TaskSet
from .output import save_figure, write_text

EXPORTS = {"trace": "jsonl", "perfetto": "perfetto", "job_csv": "job_csv", "gantt": "gantt_svg"}


def schedulers() -> list[dict]:
    """The mechanism registry (docs/runtime.md, "Mechanism registry"), in registration order:
    one dict per mechanism with ``name``, ``summary``, ``line`` (what ``rtsched run
    --list-schedulers`` prints), ``params`` (``name``, ``kind``, ``default``, ``help``, ``flag``),
    ``placement`` (``"none"`` or ``"partition"``), ``dedicated_cpu`` (``"none"``, ``"optional"``,
    ``"required"``), ``dedicated_role``, ``terms`` (the overhead terms it traces: ``name``,
    ``symbol``, ``help``, ``tracking``), ``invariant``, ``user_jobs`` and ``backend``."""
    return json.loads(_core.mechanisms())


def scheduler_names() -> list[str]:
    """The registered mechanism names."""
    return [e["name"] for e in schedulers()]


def find_scheduler(name: str) -> dict:
    """The registry entry of ``name``; an unknown name raises RtschedError listing the known ones."""
    for e in schedulers():
        if e["name"] == name:
            return e
    raise RtschedError(f"unknown scheduler {name!r}; known: {', '.join(scheduler_names())}")


def _param_pairs(params) -> list[tuple[str, str]]:
    """``{"priorities": "rm", "staggered": True}`` or ``["k=v", ...]`` -> ``[(k, text), ...]``."""
    if params is None:
        return []
    if isinstance(params, dict):
        items = list(params.items())
    else:
        items = []
        for kv in params:
            k, sep, v = str(kv).partition("=")
            if not sep or not k.strip():
                raise RtschedError(f"bad parameter {kv!r}: use KEY=VALUE")
            items.append((k.strip(), v))
    out = []
    for k, v in items:
        if isinstance(v, bool):
            v = "true" if v else "false"
        out.append((str(k), str(v)))
    return out


def parse_cpus(spec: str | Sequence[int] | None) -> list[int]:
    """``"0,1"``, ``"0-3"``, ``[0, 1]`` -> a list of CPU numbers; a bad list raises RtschedError."""
    if spec is None:
        return [sorted(os.sched_getaffinity(0))[0]]
    if isinstance(spec, (list, tuple)):
        items = list(spec)
    else:
        items = []
        for part in str(spec).split(","):
            part = part.strip()
            if not part:
                raise RtschedError(f"bad CPU list {spec!r}: empty item (use e.g. 0,1 or 0-3)")
            lo, sep, hi = part.partition("-")
            try:
                if sep:
                    a, b = int(lo), int(hi)
                    if b < a:
                        raise ValueError
                    items.extend(range(a, b + 1))
                else:
                    items.append(int(part))
            except ValueError:
                raise RtschedError(
                    f"bad CPU list {spec!r}: {part!r} is not a CPU number or range (use e.g. 0,1 or 0-3)"
                ) from None
    for c in items:
        if not isinstance(c, int) or c < 0:
            raise RtschedError(f"bad CPU list {spec!r}: {c!r} is not a CPU number")
    return items


def _duration_ns(d) -> int:
    if isinstance(d, (int, float)) and not isinstance(d, bool):
        return int(d)
    return int(_core.parse_duration(str(d)))


def _placement_partition(placement, ts: TaskSet, m: int) -> list[list[int]]:
    """Task indices per CPU from a placement dict (``rtsched partition --json``) or a plain list."""
    if isinstance(placement, (str, os.PathLike)):
        try:
            with open(placement, encoding="utf-8") as f:
                placement = json.load(f)
        except OSError as e:
            raise RtschedError(f"cannot read placement {str(placement)!r}: {e.strerror}") from None
        except ValueError as e:
            raise RtschedError(f"placement is not JSON: {e}") from None
    if isinstance(placement, dict):
        if not placement.get("schedulable", True):
            raise RtschedError("the placement failed (schedulable: false); nothing to run")
        cpus = placement.get("cpus")
        if not isinstance(cpus, list):
            raise RtschedError('placement: missing "cpus" list')
        part = []
        for c in cpus:
            res = c.get("reservations", []) if isinstance(c, dict) else c
            tasks = []
            for r in res:
                t = r["task"] if isinstance(r, dict) else r
                if isinstance(r, dict) and r.get("parts", 1) > 1:
                    raise RtschedError(f"placement splits task {t}; the runtime runs partitioned placements only")
                tasks.append(int(t))
            part.append(tasks)
        return part
    if isinstance(placement, list):
        return [[int(t) for t in c] for c in placement]
    raise RtschedError("placement must be a placement JSON object or a list of task lists")


def run_raw(
    ts: TaskSet,
    *,
    scheduler: str = "gsn-edf",
    cpus: str | Sequence[int] | None = None,
    duration: int | str = "1s",
    placement: dict | list | str | os.PathLike | None = None,
    dedicated_cpu: int | None = None,
    rt_priority: int | None = None,
    idle: str = "sleep",
    force: bool = False,
    seed: int = 0,
    exports: Sequence[str] = (),
    params: dict | Sequence[str] | None = None,
    quiet: bool = False,
) -> dict:
    """Like :func:`run` but returns ``{"summary": dict, export name: text, "interrupted": bool}``.

    Ctrl-C during the run (in the main thread) stops it early: the Rust side notices within
    50 ms, the run winds down in a few ms, and this returns what it measured with
    ``interrupted`` true (also in the summary) and the summary's ``duration_ns`` the time
    actually run."""
    entry = find_scheduler(scheduler)
    cpu_list = parse_cpus(cpus)
    dur = _duration_ns(duration)
    pairs = _param_pairs(params)
    partition = None
    if entry["placement"] == "partition":
        if placement is not None:
            partition = _placement_partition(placement, ts, len(cpu_list))
        else:
            # The default partition, decided in one place for run and simulate (pfp: FP admission).
            default = _core.default_partition(ts, scheduler, len(cpu_list))
            partition = default["partition"]
            if partition is None:
                raise RtschedError(f"{default['reason']}; pass --placement or more CPUs")
            if not quiet:
                print(f"rtsched run: {scheduler} without --placement: {default['note']}: {partition}", file=sys.stderr)
    elif placement is not None:
        raise RtschedError(f"{scheduler} is global and takes no placement")
    res = dict(
        _core.run(
            ts,
            scheduler,
            cpu_list,
            dur,
            partition,
            dedicated_cpu,
            rt_priority,
            idle,
            force,
            seed,
            list(exports),
            pairs,
        )
    )
    res["summary"] = json.loads(res["summary"])
    res["interrupted"] = bool(res["summary"].get("interrupted"))
    if res["interrupted"] and not quiet:
        print(
            f"rtsched run: interrupted after {res['summary']['duration_ns'] / 1e9:.3f} s of {dur / 1e9:g} s; "
            "the results cover the time run",
            file=sys.stderr,
        )
    if partition is not None:
        res["summary"]["partition"] = partition
    return res


def run(
    ts: TaskSet,
    scheduler: str = "gsn-edf",
    cpus: str | Sequence[int] | None = None,
    duration: int | str = "1s",
    **kw: Any,
) -> dict:
    """Runs ``ts`` on real cores under ``scheduler`` (a registered mechanism:
    :func:`scheduler_names`) for ``duration`` and returns the summary dict (docs/runtime.md).
    ``cpus``: a list or ``"0,1"`` (default: the first CPU this process may use). Keywords:
    ``placement`` (mechanisms that need one; default worst-fit decreasing with the scheduler's
    exact admission test, as in ``simulate``), ``dedicated_cpu`` (mechanisms with a dedicated
    CPU), ``params`` (the mechanism's parameters, e.g. ``{"priorities": "rm"}`` for pfp),
    ``rt_priority``, ``idle`` ("sleep"/"spin"), ``force``, ``seed``."""
    return run_raw(ts, scheduler=scheduler, cpus=cpus, duration=duration, **kw)["summary"]


# ---------------------------------------------------------------------------------------------
# The overhead experiment (Cerqueira et al., RTAS 2014, Appendix A).


def terms(scheduler: str) -> list[str]:
    """The overhead terms ``scheduler`` traces, from its registry entry (the engine's terms and
    the mechanism's own): the term list of its overhead model."""
    return [t["name"] for t in find_scheduler(scheduler)["terms"]]


def measure_overheads(
    scheduler: str,
    *,
    cpus: str | Sequence[int] | None = None,
    out: str = "overheads",
    quick: bool = False,
    seconds: float | None = None,
    seed: int = 1,
    dedicated_cpu: int | None = None,
    rt_priority: int | None = None,
    force: bool = False,
    params: dict | Sequence[str] | None = None,
    log: TextIO = sys.stderr,
) -> dict:
    """Runs the experiment and writes ``DIR/overheads-<scheduler>.json`` plus
    ``DIR/overheads-<scheduler>-avg.png`` and ``-max.png``; returns the model dict.

    Ctrl-C stops the experiment: the model and plots are written for the n fully measured
    (the interrupted run is left out) and the model has ``"interrupted": true``."""
    term_names = terms(scheduler)
    cpu_list = parse_cpus(cpus)
    m = len(cpu_list)
    ns = [m, 5 * m, 10 * m] if quick else [k * m for k in range(1, 11)]
    secs = seconds if seconds is not None else (1.0 if quick else 30.0)
    if secs <= 0:
        raise RtschedError(f"seconds must be positive, got {secs}")
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    table: dict = {t: {"n": [], "avg_ns": [], "max_ns": [], "count": []} for t in term_names}
    runs: list[dict] = []
    from .api import generate

    interrupted = False
    for i, n in enumerate(ns):
        try:
            u = rng.uniform(0.4 * m, 0.8 * m)
            ts = generate(n, u, generator="randfixedsum", periods="loguniform:10ms-100ms", seed=seed * 1000 + i)
            print(
                f"rtsched measure-overheads: {scheduler} n={n} U={u:.3f} ({i + 1}/{len(ns)}, {secs:g} s)",
                file=log,
                flush=True,
            )
            s = run_raw(
                ts,
                scheduler=scheduler,
                cpus=cpu_list,
                duration=int(secs * 1e9),
                dedicated_cpu=dedicated_cpu,
                rt_priority=rt_priority,
                force=force,
                seed=seed,
                params=params,
                quiet=True,
            )["summary"]
        except KeyboardInterrupt:  # Ctrl-C outside the run itself (e.g. while generating)
            s = {"interrupted": True}
        if s.get("interrupted"):
            interrupted = True
            done = [r["n"] for r in runs]
            print(
                f"rtsched measure-overheads: interrupted at n={n}; writing the model for the n measured: {done}",
                file=log,
                flush=True,
            )
            break
        runs.append(
            {
                "n": n,
                "utilization": u,
                "jobs": s["jobs"],
                "deadline_misses": s["deadline_misses"],
                "dropped_records": s["dropped_records"],
            }
        )
        for t in term_names:
            o = s["overheads"].get(t)
            if not o or not o["count"]:
                continue
            table[t]["n"].append(n)
            table[t]["avg_ns"].append(o["avg_ns"])
            table[t]["max_ns"].append(o["max_ns"])
            table[t]["count"].append(o["count"])
    model = {
        "format": "rtsched-overhead-model",
        "version": 1,
        "scheduler": scheduler,
        "params": dict(_param_pairs(params)),
        "m": m,
        "cpus": cpu_list,
        "machine": {
            "hostname": platform.node(),
            "platform": platform.platform(),
            "processor": platform.processor(),
            "cpu_count": os.cpu_count(),
        },
        "seconds_per_run": secs,
        "seed": seed,
        "interrupted": interrupted,
        "terms": {t: v for t, v in table.items() if v["n"]},
        "runs": runs,
    }
    path = os.path.join(out, f"overheads-{scheduler}.json")
    write_text(path, json.dumps(model, indent=1))
    print(f"rtsched measure-overheads: wrote {path}", file=log)
    for stat in ("avg", "max"):
        p = os.path.join(out, f"overheads-{scheduler}-{stat}.png")
        _plot(model, stat, p)
        print(f"rtsched measure-overheads: wrote {p}", file=log)
    return model


def _plot(model: dict, stat: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plots import curve_style, legend_outside

    fig, ax = plt.subplots(figsize=(7.2, 4))
    for j, (t, v) in enumerate(model["terms"].items()):
        ax.plot(v["n"], [x / 1000 for x in v[f"{stat}_ns"]], label=t, **curve_style(j, len(v["n"])))
    if any(x > 0 for v in model["terms"].values() for x in v[f"{stat}_ns"]):
        ax.set_yscale("log")  # the terms span three orders of magnitude
    ax.set_xlabel("number of tasks n")
    ax.set_ylabel(f"{'average' if stat == 'avg' else 'maximum'} overhead (µs)")
    ax.set_title(f"{model['scheduler']}, m = {model['m']}: {stat} overhead vs n")
    ax.grid(True, alpha=0.3)
    if model["terms"]:
        legend_outside(ax, fontsize=8)
    fig.tight_layout()
    try:
        save_figure(fig, path, dpi=120)
    finally:
        plt.close(fig)


def gantt_png(jsonl: str, path: str, title: str = "", window: Any = None) -> None:
    """Draws a runtime trace (converted to the trace vocabulary) as a PNG: the simulator's
    Gantt chart, so runs and simulations look alike."""
    from .simulation import gantt_png as draw

    draw(jsonl, path, title=title, window=window)


def format_summary(s: dict) -> str:
    """The summary of a run as a readable table (what ``rtsched run`` prints without
    ``--json``): times in the unit that suits them, statistics as avg / p99 / max, the overhead
    terms one per line. The JSON (``--json``, ``-o``) keeps every key, in integer ns."""
    t = _core.format_time

    def ns(v: Any) -> str:
        return "-" if v is None else t(round(v))

    def stats(d: dict, suffix: str = "") -> str:
        keys = [k for k in ("avg", "p50", "p99", "max") if f"{k}{suffix}" in d]
        return ", ".join(f"{k} {ns(d[f'{k}{suffix}'])}" for k in keys)

    cpus = ",".join(str(c) for c in s.get("cpus", []))
    head = f"{s.get('scheduler')} on CPUs {cpus}, {ns(s.get('duration_ns'))}"
    if s.get("interrupted"):
        head += " (interrupted)"
    out = [
        head,
        f"jobs {s.get('jobs')} (released {s.get('released')}, completed {s.get('completed')}, "
        f"pending {s.get('pending')}), deadline misses {s.get('deadline_misses')}, "
        f"max tardiness {ns(s.get('max_tardiness_ns'))}",
    ]
    if isinstance(s.get("response_time_ns"), dict):
        out.append(f"response time: {stats(s['response_time_ns'])}")
    if isinstance(s.get("release_latency_ns"), dict):
        out.append(f"release latency: {stats(s['release_latency_ns'])}")
    out.append(f"preemptions {s.get('preemptions')}, migrations {s.get('migrations')}")
    pi = s.get("priority_inversion")
    if isinstance(pi, dict):
        out.append(
            f"priority inversion {ns(pi.get('total_ns'))} in {pi.get('intervals')} interval(s), longest "
            f"{ns(pi.get('max_interval_ns'))}, beyond the tracking bound {ns(pi.get('beyond_tracking_ns'))}"
        )
    if s.get("max_poll_gap_ns") is not None:
        out.append(f"longest poll gap {ns(s['max_poll_gap_ns'])}; dropped trace records {s.get('dropped_records')}")
    ovh = s.get("overheads") or {}
    if ovh:
        width = max(len(k) for k in ovh)
        out.append("overheads:")
        for term, d in ovh.items():
            if isinstance(d, dict) and d.get("count"):
                out.append(f"  {term:<{width}}  {d['count']:>7} samples  {stats(d, '_ns')}")
            elif isinstance(d, dict):
                out.append(f"  {term:<{width}}  {0:>7} samples")
    return "\n".join(out)
