"""Running task sets on real cores (the runtime, docs/runtime.md) and the overhead experiment.

``run(ts, scheduler=..., cpus=..., duration=...)`` returns the run's summary as a dict (keys in
docs/runtime.md "Command line"). ``measure_overheads`` is the experiment of Cerqueira, Vanga &
Brandenburg, RTAS 2014 (Appendix A) scaled to this machine: RandFixedSum task sets
of n = m, 2m, ..., 10m tasks with U uniform in [0.4m, 0.8m], log-uniform periods in
[10, 100] ms, synchronous release, one run per n; it writes an overhead model JSON file and
plots of average and maximum overhead against n (Cerqueira et al., RTAS 2014 Figs. 6-7).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import random
import sys
import tempfile
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any, TextIO

from . import _core
from . import validate as v
from ._core import RtschedError, TaskSet
from .output import save_figure, write_text

EXPORTS = {"trace": "jsonl", "perfetto": "perfetto", "job_csv": "job_csv", "gantt": "gantt_svg"}


def schedulers() -> list[dict]:
    """The mechanism registry (docs/runtime.md, "Mechanism registry"), in registration order:
    one dict per mechanism with ``name``, ``summary``, ``line`` (what ``rtsched run
    --list-schedulers`` prints), ``params`` (``name``, ``kind``, ``default``, ``help``, ``flag``),
    ``placement`` (``"none"``, ``"partition"`` or ``"reservations"``), ``dedicated_cpu`` (``"none"``, ``"optional"``,
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
            k, sep, val = str(kv).partition("=")
            if not sep or not k.strip():
                raise RtschedError(f"bad parameter {kv!r}: use KEY=VALUE")
            items.append((k.strip(), val))
    out = []
    for k, val in items:
        if isinstance(val, bool):
            val = "true" if val else "false"
        out.append((str(k), str(val)))
    return out


def _hard_without_overheads(text: str, pairs: list[tuple[str, str]]) -> str | None:
    """The one-line warning for an SP-RES placement with hard reservations whose budgets
    were not inflated by overheads (no ``"overheads"`` object: not made by ``rtsched partition
    --overheads``): its jobs get exactly their WCET, and the overheads a job meets in its window
    make it miss. Unsplit tasks are hard unless ``soft=true``; split parts are always soft
    (``rtsched_policy::spres``, Brandenburg & Gül, RTSS 2016, §IV-A)."""
    try:
        p = json.loads(text)
    except ValueError:
        return None  # the Rust parser reports it with its field
    if not isinstance(p, dict) or p.get("overheads") is not None:
        return None
    soft = next((val.strip().lower() in ("true", "1", "yes", "on") for k, val in reversed(pairs) if k == "soft"), False)
    tasks = p.get("tasks")
    if soft or not isinstance(tasks, list):
        return None
    hard = sum(1 for t in tasks if isinstance(t, dict) and t.get("parts") == 1)
    if not hard:
        return None
    return (
        f"the placement has {hard} hard reservation(s) made without overheads (budget = WCET): overheads "
        "will make jobs miss; place with `rtsched partition --overheads MODEL --mechanism spres` or run with soft=true"
    )


def parse_cpus(spec: str | Sequence[int] | None) -> list[int]:
    """``"0,1"``, ``"0-3"``, ``[0, 1]`` -> a list of CPU numbers (default: the first CPU this
    process may use); a bad list raises RtschedError. Text goes through the one CPU-list rule
    (:func:`rtsched.validate.parse_cpus`: ranges checked before they are expanded)."""
    if spec is None:
        return [sorted(os.sched_getaffinity(0))[0]]
    if isinstance(spec, (list, tuple)):
        items = [v.integer(c, "cpus", 0, v.MAX_CPU) for c in spec]
        if not items or len(set(items)) != len(items):
            raise RtschedError(f"argument 'cpus': expected distinct CPU numbers, got {list(spec)!r}")
        return items
    return v.parse_cpus(v.text(spec, "cpus"), "cpus")


def _placement_partition(placement, ts: TaskSet, m: int) -> list[list[int]]:
    """Task indices per CPU from a placement (``rtsched partition --json``: a dict, its JSON text
    or a file path), read by the placement parser of ``simulate`` (strict JSON, validated
    against the task set); or, from Python, a plain list of task-index lists."""
    if isinstance(placement, list):
        part = []
        for c in placement:
            if not isinstance(c, (list, tuple)):
                raise RtschedError(f"argument 'placement': expected a list of task-index lists, got {placement!r}")
            part.append([v.integer(t, "placement", 0, len(ts) - 1) for t in c])
        placed = sorted(t for c in part for t in c)
        if placed != list(range(len(ts))) or len(part) != m:
            raise RtschedError(
                f"argument 'placement': {len(part)} CPU lists must place each of the {len(ts)} tasks once "
                f"on the run's {m} CPUs"
            )
        return part
    text = _placement_text(placement)
    return _core.placement_partition(ts, text, m)


def _placement_text(placement) -> str:
    """A placement (``rtsched partition --json``: a dict, its JSON text or a file path) as JSON text."""
    if isinstance(placement, dict):
        return json.dumps(placement)
    if isinstance(placement, str) and placement.lstrip().startswith("{"):
        return placement
    if isinstance(placement, (str, os.PathLike)):
        from .io import read_text

        return read_text(v.path(placement, "placement"), "placement")
    raise RtschedError("placement must be a placement JSON object, its text or file, or a list of task lists")


def _cpu_text(cpus: Sequence[int]) -> str:
    return ",".join(str(c) for c in cpus)


def run_cpus(
    ts: TaskSet, cpus: str | Sequence[int] | None, dedicated_cpu: int | None = None, force: bool = False
) -> tuple[list[int], list[str]]:
    """The CPUs a run uses and the warnings to print: ``cpus`` if given, else the first ``m`` CPUs
    this process may use (the task set's ``m``; one CPU when it has none; the dedicated CPU
    excluded). A task set made for more CPUs than the run has (its ``m``), or whose
    utilization exceeds their number, is refused with the numbers, or with ``force`` run
    anyway with a warning: its deadline misses would be the CPU count's, not the scheduler's."""
    if cpus is None:
        allowed = [c for c in sorted(os.sched_getaffinity(0)) if c != dedicated_cpu]
        want = ts.m or 1
        if want > len(allowed) and not force:
            besides = "" if dedicated_cpu is None else f", besides the dedicated CPU {dedicated_cpu}"
            raise RtschedError(
                f"the task set is made for m = {want} CPUs, but this process may use {len(allowed)} "
                f"({_cpu_text(allowed)}{besides}); give a task set for fewer CPUs, or --force to run it on "
                "these anyway"
            )
        cpu_list = allowed[:want]
    else:
        cpu_list = parse_cpus(cpus)
    k = len(cpu_list)
    util = sum((Fraction(t.wcet, t.period) for t in ts), Fraction(0))
    over = []
    if ts.m is not None and ts.m > k:
        over.append(f"is made for m = {ts.m} CPUs")
    if util > k:
        over.append(f"has utilization U = {float(util):.4g} > {k}")
    if not over:
        return cpu_list, []
    msg = f"the task set {' and '.join(over)}, but the run has {k} CPU{'s' if k != 1 else ''} ({_cpu_text(cpu_list)})"
    if not force:
        raise RtschedError(
            f"{msg}; give --cpus with enough CPUs (or a task set for these), or --force to run it anyway"
        )
    return cpu_list, [
        f"{msg}; running anyway (--force): its deadline misses come from the CPU count, not the scheduler"
    ]


#: A run's timing is trustworthy when its longest poll gap and its largest timer latency are
#: at most this many times the mechanism's own reaction time (see :func:`assess_timing`).
TRUST_FACTOR = 10
#: The smallest reaction time the factor is applied to: about this machine's average timer
#: wake-up latency (cyclictest, Debian's rt-tests: 19 us here), so that a mechanism reacting in
#: a few microseconds does not make every microsecond of host noise suspicious.
TRUST_FLOOR_NS = 20_000


@contextlib.contextmanager
def realtime_lock() -> Iterator[None]:
    """Exclusive use of the machine's CPUs for a batch of real-thread runs: every holder on this
    machine (worker processes of ``rtsched reproduce``, other reproductions) takes turns on one
    file lock, ``$TMPDIR/rtsched-realtime-UID.lock``. Two SCHED_FIFO runs on the same CPUs
    would otherwise starve each other's workers and measure each other."""
    path = os.path.join(tempfile.gettempdir(), f"rtsched-realtime-{os.getuid()}.lock")
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def assess_timing(summary: dict, entry: dict, rt_priority: int | None) -> tuple[bool, str]:
    """Whether a run's measured timing is trustworthy, and why (docs/runtime.md, "Trustworthy
    timing"). The run's tracking delay (the monitor's bound) sums the largest samples of the
    terms on the path from an event to its dispatch; host interference inflates its host
    terms — timer latency (``release_event``) and the reschedule notice (``ipi``), both waits
    for the kernel to wake a thread — together with the rest, so the comparison is against the
    mechanism's own share: the largest samples of its other tracking terms (release handler,
    lock waits, scheduler, dispatch, its own), at least :data:`TRUST_FLOOR_NS`. A job body
    polls every ~0.1 us, so its longest poll gap (``max_poll_gap_ns``) is the longest time the
    host took a worker's CPU away. Untrustworthy: the poll gap or the largest timer latency
    above :data:`TRUST_FACTOR` times that reaction time, or the largest Δipi (a wake-up, the
    timer latency's twin) likewise, or the priority-inversion monitor's longest interval above
    that limit and above :data:`TRUST_FACTOR` times the run's tracking bound, plus the quantum of
    a quantum-driven mechanism (a worker that never ran records neither a poll gap nor a Δipi)."""
    ov = summary.get("overheads") or {}
    host = {"release_event", "ipi"}
    own = sum(
        int(ov.get(t["name"], {}).get("max_ns", 0)) for t in entry["terms"] if t["tracking"] and t["name"] not in host
    )
    limit = TRUST_FACTOR * max(own, TRUST_FLOOR_NS)
    fmt = _core.format_time
    found = []
    gap = summary.get("max_poll_gap_ns")
    if gap is not None and gap > limit:
        found.append(f"a job body waited {fmt(gap)} between two polls (the host took its CPU)")
    timer = int(ov.get("release_event", {}).get("max_ns", 0))
    if timer > limit:
        found.append(f"a release timer fired {fmt(timer)} late")
    wake = int(ov.get("ipi", {}).get("max_ns", 0))
    if wake > limit:
        found.append(f"a reschedule request took {fmt(wake)} to be noticed (Δipi: waking a thread)")
    # A worker the host never let run leaves no poll gap and no Δipi sample (nothing ran to
    # record them): its trace shows it as a CPU that stayed idle, or kept a lower-priority job,
    # while a ready job waited — one long priority-inversion interval.
    pi = summary.get("priority_inversion")
    if isinstance(pi, dict):
        longest = int(pi.get("max_interval_ns") or 0)
        # A quantum-driven mechanism holds a release back until the next tick, by design.
        quantum = (summary.get("params") or {}).get("quantum")
        allowed = max(limit, TRUST_FACTOR * int(pi.get("tracking_bound_ns") or 0))
        if longest > allowed + (quantum if isinstance(quantum, int) else 0):
            found.append(
                f"a ready job waited {fmt(longest)} beside an idle or lower-priority CPU (the host kept a worker "
                "from running, or the mechanism missed a preemption)"
            )
    ref = f"{TRUST_FACTOR}× the mechanism's reaction time ({fmt(max(own, TRUST_FLOOR_NS))})"
    if not found:
        return True, f"poll gaps, timer and wake-up latency within {ref}"
    where = (
        "at normal priority: other processes preempted the run; rerun with --rt-priority 50 (SCHED_FIFO)"
        if rt_priority is None
        else f"at SCHED_FIFO priority {rt_priority}: higher-priority threads or interrupts took the CPUs"
    )
    return False, f"{' and '.join(found)}, above {ref}, {where}"


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
    exec_min_fraction: float | None = None,
) -> dict:
    """Like :func:`run` but returns ``{"summary": dict, export name: text, "interrupted": bool}``.
    ``exports`` names the trace's exports (``jsonl``, ``perfetto``, ``job_csv``, ``gantt_svg``,
    ``sched_trace``) and ``overhead_samples``: the run's overhead samples, ``{term: [ns, ...]}``
    (decoded), what the summary's ``overheads`` statistics are computed from.
    ``exec_min_fraction`` ``f``: every job runs a fraction of its WCET drawn uniformly from
    ``[f, 1]`` (deterministic per seed, task and job; rtspin's under-run); None: its WCET.

    Ctrl-C during the run (in the main thread) stops it early: the Rust side notices within
    50 ms, the run winds down in a few ms, and this returns what it measured with
    ``interrupted`` true (also in the summary) and the summary's ``duration_ns`` the time
    actually run."""
    ts = v.task_set(ts, "ts")
    entry = find_scheduler(v.text(scheduler, "scheduler"))
    dedicated_cpu = v.optional_integer(dedicated_cpu, "dedicated_cpu", 0, v.MAX_CPU)
    rt_priority = v.optional_integer(rt_priority, "rt_priority", 1, 99)
    idle = v.choice(idle, "idle", ["sleep", "spin"])
    force = v.boolean(force, "force")
    seed = v.seed(seed)
    dur = v.duration(duration, "duration", 1)
    if exec_min_fraction is not None:
        exec_min_fraction = v.number(exec_min_fraction, "exec_min_fraction", 0.0, 1.0)
    cpu_list, warns = run_cpus(ts, cpus, dedicated_cpu, force)
    if not quiet:
        for w in warns:
            print(f"rtsched run: warning: {w}", file=sys.stderr)
    pairs = _param_pairs(params)
    partition = None
    reservations = None
    if entry["placement"] == "reservations":
        if isinstance(placement, list):
            partition = _placement_partition(placement, ts, len(cpu_list))
        elif placement is not None:
            reservations = _placement_text(placement)
            hard = _hard_without_overheads(reservations, pairs)
            if hard and not quiet:
                print(f"rtsched run: warning: {hard}", file=sys.stderr)
        else:
            # As in simulate: the SP-RES cascade (Brandenburg & Gül, RTSS 2016).
            from .api import partition as place

            p = place(ts, len(cpu_list), "spres")
            if not p.get("schedulable"):
                raise RtschedError(
                    f"the SP-RES cascade cannot place the task set on {len(cpu_list)} CPUs: "
                    f"{p.get('reason', 'no reason given')}; pass --placement or more CPUs"
                )
            reservations = json.dumps(p)
            if not quiet:
                print(f"rtsched run: {scheduler} without --placement: placed by the SP-RES cascade", file=sys.stderr)
    elif entry["placement"] == "partition":
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
            reservations,
            exec_min_fraction,
        )
    )
    res["summary"] = json.loads(res["summary"])
    if "overhead_samples" in res:
        res["overhead_samples"] = json.loads(res["overhead_samples"])
    res["interrupted"] = bool(res["summary"].get("interrupted"))
    summary = res["summary"]
    summary["rt_priority"] = rt_priority
    summary["trustworthy"], summary["trustworthy_reason"] = assess_timing(summary, entry, rt_priority)
    if not summary["trustworthy"]:
        warns.append(f"the measured timing is not trustworthy: {summary['trustworthy_reason']}")
        if not quiet:
            print(f"rtsched run: warning: {warns[-1]}", file=sys.stderr)
    summary["warnings"] = warns
    if res["interrupted"] and not quiet:
        print(
            f"rtsched run: interrupted after {res['summary']['duration_ns'] / 1e9:.3f} s of {dur / 1e9:g} s; "
            "the results cover the time run",
            file=sys.stderr,
        )
    if partition is not None:
        res["summary"]["partition"] = partition
    if reservations is not None:
        res["summary"]["placement"] = json.loads(reservations)
    return res


def run_forkjoin_raw(
    text: str,
    *,
    scheduler: str = "rtws",
    cpus: str | Sequence[int] | None = None,
    duration: int | str = "1s",
    rt_priority: int | None = None,
    idle: str = "sleep",
    force: bool = False,
    seed: int = 0,
    exports: Sequence[str] = (),
    params: dict | Sequence[str] | None = None,
    quiet: bool = False,
) -> dict:
    """Like :func:`run_raw` for a fork-join task-set file's JSON ``text`` (docs/rtws.md) under a
    mechanism that executes fork-join jobs (``rtws``, ``push-pull``; docs/runtime.md, "RTWS"). The summary has a
    ``forkjoin`` object with the job-level results; trace exports are per thread, the job CSV
    per fork-join job. Without ``cpus`` the file's ``m`` decides (the first ``m`` CPUs this
    process may use; one if the file has no ``m``)."""
    text = v.text(text, "text")
    entry = find_scheduler(v.text(scheduler, "scheduler"))
    dur = v.duration(duration, "duration", 1)
    rt_priority = v.optional_integer(rt_priority, "rt_priority", 1, 99)
    idle = v.choice(idle, "idle", ["sleep", "spin"])
    force = v.boolean(force, "force")
    seed = v.seed(seed)
    if cpus is None:
        try:
            m = json.loads(text).get("m")
        except (ValueError, AttributeError):
            m = None  # the Rust reader reports the error
        allowed = sorted(os.sched_getaffinity(0))
        if isinstance(m, int) and m > len(allowed) and not force:
            raise RtschedError(
                f"the file is made for m = {m} CPUs but this process may use {len(allowed)}; pass --cpus"
            )
        cpus = allowed[: m if isinstance(m, int) and m >= 1 else 1]
    res = dict(
        _core.run_forkjoin(
            text,
            scheduler,
            parse_cpus(cpus),
            dur,
            rt_priority,
            idle,
            force,
            seed,
            list(exports),
            _param_pairs(params),
        )
    )
    res["summary"] = json.loads(res["summary"])
    res["interrupted"] = bool(res["summary"].get("interrupted"))
    summary = res["summary"]
    summary["rt_priority"] = rt_priority
    summary["trustworthy"], summary["trustworthy_reason"] = assess_timing(summary, entry, rt_priority)
    summary["warnings"] = []
    if not summary["trustworthy"]:
        summary["warnings"].append(f"the measured timing is not trustworthy: {summary['trustworthy_reason']}")
        if not quiet:
            print(f"rtsched run: warning: {summary['warnings'][-1]}", file=sys.stderr)
    if res["interrupted"] and not quiet:
        print(
            f"rtsched run: interrupted after {res['summary']['duration_ns'] / 1e9:.3f} s; "
            "the results cover the time run",
            file=sys.stderr,
        )
    return res


def run_forkjoin(
    text: str,
    scheduler: str = "rtws",
    cpus: str | Sequence[int] | None = None,
    duration: int | str = "1s",
    **kw: Any,
) -> dict:
    """Runs the fork-join task set in the JSON ``text`` (docs/rtws.md) on real cores under
    ``scheduler`` (``rtws`` or ``push-pull``) and returns the summary dict; keywords as :func:`run` (no
    placement, no dedicated CPU)."""
    return run_forkjoin_raw(text, scheduler=scheduler, cpus=cpus, duration=duration, **kw)["summary"]


def run(
    ts: TaskSet,
    scheduler: str = "gsn-edf",
    cpus: str | Sequence[int] | None = None,
    duration: int | str = "1s",
    **kw: Any,
) -> dict:
    """Runs ``ts`` on real cores under ``scheduler`` (a registered mechanism:
    :func:`scheduler_names`) for ``duration`` and returns the summary dict (docs/runtime.md).
    ``cpus``: a list or ``"0,1"`` (default: the first ``ts.m`` CPUs this process may use, one
    if the set has no ``m``); a set made for more CPUs, or of utilization above their number,
    is refused unless ``force=True`` (then run with a warning). The summary's ``trustworthy``
    and ``trustworthy_reason`` say whether the host disturbed the timing (:func:`assess_timing`);
    ``warnings`` lists what was printed to stderr. Keywords:
    ``placement`` (mechanisms that need one; default worst-fit decreasing with the scheduler's
    exact admission test, as in ``simulate``; for ``spres`` a reservation placement dict, its
    JSON text or a file, default the SP-RES cascade), ``dedicated_cpu`` (mechanisms with a dedicated
    CPU), ``params`` (the mechanism's parameters, e.g. ``{"priorities": "rm"}`` for pfp),
    ``rt_priority``, ``idle`` ("sleep"/"spin"), ``force``, ``seed``."""
    return run_raw(ts, scheduler=scheduler, cpus=cpus, duration=duration, **kw)["summary"]


# ---------------------------------------------------------------------------------------------
# The overhead experiment (Cerqueira et al., RTAS 2014, Appendix A).


def terms(scheduler: str) -> list[str]:
    """The overhead terms ``scheduler`` traces that an overhead model holds, from its registry
    entry (the engine's terms and the mechanism's own): the term list of its overhead model.
    Traced terms outside the model vocabulary (docs/formats.md) stay in the run summaries only,
    e.g. push-pull's ``push_failure`` count and its ``enqueue`` / ``dequeue`` spans."""
    known = {t["name"] for t in _core.overhead_terms()}
    return [t["name"] for t in find_scheduler(scheduler)["terms"] if t["name"] in known]


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
    term_names = terms(v.text(scheduler, "scheduler"))
    cpu_list = parse_cpus(cpus)
    seed = v.seed(seed)
    rt_priority = v.optional_integer(rt_priority, "rt_priority", 1, 99)
    dedicated_cpu = v.optional_integer(dedicated_cpu, "dedicated_cpu", 0, v.MAX_CPU)
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
                "trustworthy": s["trustworthy"],
            }
        )
        if not s["trustworthy"]:
            print(f"rtsched measure-overheads: warning: n={n}: {s['trustworthy_reason']}", file=log, flush=True)
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
        "terms": {t: row for t, row in table.items() if row["n"]},
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
    for j, (t, row) in enumerate(model["terms"].items()):
        ax.plot(row["n"], [x / 1000 for x in row[f"{stat}_ns"]], label=t, **curve_style(j, len(row["n"])))
    if any(x > 0 for row in model["terms"].values() for x in row[f"{stat}_ns"]):
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
    if "trustworthy" in s:
        verdict = "trustworthy" if s["trustworthy"] else "NOT trustworthy"
        out.append(f"timing {verdict}: {s.get('trustworthy_reason')}")
    ovh = s.get("overheads") or {}
    over, lat = ovh.get("budget_overrun"), ovh.get("enforcement_latency")
    if isinstance(over, dict):
        # SP-RES: execution past a hard budget, per overrun, against the timer's lateness.
        worst = ns(over.get("max_ns")) if over.get("count") else "0 ns"
        late = ns(lat.get("max_ns")) if isinstance(lat, dict) and lat.get("count") else "-"
        out.append(f"budget overruns {over.get('count', 0)}, max {worst} (max enforcement latency {late})")
    if ovh:
        width = max(len(k) for k in ovh)
        out.append("overheads:")
        for term, d in ovh.items():
            if isinstance(d, dict) and d.get("count"):
                out.append(f"  {term:<{width}}  {d['count']:>7} samples  {stats(d, '_ns')}")
            elif isinstance(d, dict):
                out.append(f"  {term:<{width}}  {0:>7} samples")
    return "\n".join(out)
