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
from typing import Any, TextIO

from . import _core, rtlimits
from . import validate as v
from ._core import RtschedError, TaskSet
from .output import save_figure, write_text

EXPORTS = {"trace": "jsonl", "perfetto": "perfetto", "job_csv": "job_csv", "gantt": "gantt_svg"}


def schedulers() -> list[dict]:
    """The mechanism registry (docs/mechanisms/platform.md, "Mechanism registry"), in registration order:
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
    seen: set = set()
    for k, val in items:
        if isinstance(val, bool):
            val = "true" if val else "false"
        key = str(k).replace("-", "_")
        if key in seen:  # --param k=1 --param k=2, or --param k=1 with --k 2: which one was meant?
            raise RtschedError(f"parameter {str(k)!r} given twice; give each mechanism parameter once")
        seen.add(key)
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
            fewer = (
                "fewer CPUs"
                if dedicated_cpu is None
                else f"m ≤ {len(allowed)} (with --dedicated-cpu {dedicated_cpu} the tasks get the other CPUs)"
            )
            raise RtschedError(
                f"the task set is made for m = {want} CPUs, but this process may use {len(allowed)} "
                f"({_cpu_text(allowed)}{besides}); give a task set for {fewer}, or --force to run it on "
                "these anyway"
            )
        cpu_list = allowed[:want]
    else:
        cpu_list = parse_cpus(cpus)
        if dedicated_cpu is not None and dedicated_cpu in cpu_list:
            raise RtschedError(
                f"field 'dedicated_cpu': CPU {dedicated_cpu} is also in cpus {_cpu_text(cpu_list)}; the dedicated "
                "CPU runs the mechanism's service thread and no task: list only the task CPUs in cpus (--cpus)"
            )
    k = len(cpu_list)
    over = []
    if ts.m is not None and ts.m > k:
        over.append(f"is made for m = {ts.m} CPUs")
    # Exact (Rust's sum of the C/T; a Fraction sum took 9 s at n = 10,000).
    if not ts.utilization_at_most(k):
        over.append(f"has utilization U = {ts.utilization:.4g} > {k}")
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
    a quantum-driven mechanism (a worker that never ran records neither a poll gap nor a Δipi).
    Every maximum here is the raw one (``max_raw_ns``: samples the interference filter
    discards and outliers included), since this judges the host's disturbance itself. Never
    trustworthy when the run dropped trace records: its metrics then cover only the time up to
    the first lost record (``metrics_horizon_ns``), and the reason says so first."""
    ov = summary.get("overheads") or {}
    host = {"release_event", "ipi"}

    def raw_max(term: str) -> int:
        o = ov.get(term, {})
        return int(o.get("max_raw_ns", o.get("max_ns", 0)))

    own = sum(raw_max(t["name"]) for t in entry["terms"] if t["tracking"] and t["name"] not in host)
    limit = TRUST_FACTOR * max(own, TRUST_FLOOR_NS)
    fmt = _core.format_time
    found = []
    gap = summary.get("max_poll_gap_ns")
    if gap is not None and gap > limit:
        found.append(f"a job body waited {fmt(gap)} between two polls (the host took its CPU)")
    timer = raw_max("release_event")
    if timer > limit:
        found.append(f"a release timer fired {fmt(timer)} late")
    wake = raw_max("ipi")
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
    # A run whose trace buffers filled is judged on a prefix only (its metrics stop at the first
    # lost record), so nothing after it can be vouched for, whatever the maxima say.
    dropped = int(summary.get("dropped_records") or 0)
    lost = ""
    if dropped:
        horizon, duration = summary.get("metrics_horizon_ns"), summary.get("duration_ns")
        cover = (
            f"its jobs, misses and overheads cover only its first {fmt(int(horizon))} of {fmt(int(duration))}"
            if isinstance(horizon, int) and isinstance(duration, int)
            else "its jobs, misses and overheads cover only a prefix of it"
        )
        lost = (
            f"the run dropped {dropped} trace records (its trace buffers filled): {cover}; run fewer tasks or a "
            "shorter duration"
        )
    if not found:
        if lost:
            return False, lost
        return True, f"poll gaps, timer and wake-up latency within {ref}"
    where = (
        "at normal priority: other processes preempted the run; rerun with --rt-priority 50 (SCHED_FIFO)"
        if rt_priority is None
        else f"at SCHED_FIFO priority {rt_priority}: higher-priority threads or interrupts took the CPUs"
    )
    disturbed = f"{' and '.join(found)}, above {ref}, {where}"
    return False, f"{lost}; and {disturbed}" if lost else disturbed


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
    preflight: bool = True,
    isolate: bool = False,
) -> dict:
    """Like :func:`run` but returns ``{"summary": dict, export name: text, "interrupted": bool}``.
    ``exports`` names the trace's exports (``jsonl``, ``perfetto``, ``job_csv``, ``gantt_svg``,
    ``sched_trace``) and ``overhead_samples``: the run's overhead samples, ``{term: [ns, ...]}``
    (decoded), what the summary's ``overheads`` statistics are computed from.
    ``exec_min_fraction`` ``f``: every job runs a fraction of its WCET drawn uniformly from
    ``[f, 1]`` (deterministic per seed, task and job; rtspin's under-run); None: its WCET.
    ``preflight``: the summary gets ``preflight``, the host's state on the run's CPUs taken
    before it (:func:`rtsched.protocol.preflight`; a few ms). ``isolate``: for the run, RT
    throttling and the fair server are lifted on its CPUs, IRQs moved off them and the
    performance governor set where this process may (root), everything restored afterwards,
    Ctrl-C included (:func:`rtsched.protocol.isolated`, as ``measure-overheads --isolate``);
    the summary's ``isolate`` says what changed and what was refused.

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
    if entry["dedicated_cpu"] == "required" and dedicated_cpu is None:
        chosen = parse_cpus(cpus) if cpus is not None else None
        raise RtschedError(rtlimits.dedicated_advice(scheduler, entry["dedicated_role"], ts.m, None, cpus=chosen))
    cpu_list, warns = run_cpus(ts, cpus, dedicated_cpu, force)
    if not quiet:
        for w in warns:
            print(f"rtsched run: warning: {w}", file=sys.stderr)
    pairs = _param_pairs(params)
    pre = None
    if v.boolean(preflight, "preflight"):
        from .protocol import preflight as take_preflight

        used = cpu_list + ([dedicated_cpu] if dedicated_cpu is not None else [])
        pre = take_preflight(used, rt_priority=rt_priority)
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
    isolate = v.boolean(isolate, "isolate")
    # Everything from lifting the limits to the end of the run is undone on the way out.
    with contextlib.ExitStack() as stack:
        lifted = None
        if isolate:
            from .protocol import isolated

            lifted = stack.enter_context(
                isolated(cpu_list + ([dedicated_cpu] if dedicated_cpu is not None else []), report=pre)
            )
        # SCHED_FIFO threads get only part of each CPU here (RT throttling, the fair server): a
        # placement above it misses for the kernel's sake, which the warning says with the numbers.
        throttled = None
        if rt_priority is not None:
            loads = rtlimits.placement_loads(ts, cpu_list, partition, reservations)
            throttled = rtlimits.overloaded(
                loads, rtlimits.fifo_capacity(), spread=partition is None and reservations is None
            )
            if throttled is not None:
                if not isolate:
                    throttled += (
                        "; as root, --isolate (isolate=True) lifts RT throttling and the fair server for the run and "
                        "restores them afterwards"
                    )
                warns.append(throttled)
                if not quiet:
                    print(f"rtsched run: warning: {throttled}", file=sys.stderr)
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
    if pre is not None:
        summary["preflight"] = pre
    if lifted is not None:
        summary["isolate"] = lifted
        if lifted["refused"] and not quiet:
            print(f"rtsched run: warning: --isolate could not change: {'; '.join(lifted['refused'])}", file=sys.stderr)
    summary["trustworthy"], summary["trustworthy_reason"] = assess_timing(summary, entry, rt_priority)
    if not summary["trustworthy"] and throttled is not None:
        summary["trustworthy_reason"] += (
            "; the likelier cause: the load is above what SCHED_FIFO gets here, so the kernel throttled the "
            "run's threads (see the warning before the run)"
        )
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
    mechanism that executes fork-join jobs (``rtws``, ``push-pull``; docs/mechanisms/rtws.md). The summary has a
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
    ``rt_priority``, ``idle`` ("sleep"/"spin"), ``force``, ``seed``, ``isolate`` (lift RT throttling
    and the fair server for the run, as root; :func:`run_raw`)."""
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


#: The model's columns per term, each a list as long as ``n`` (docs/formats.md, "Overhead
#: models"): the required ones, then the measurement protocol's.
MODEL_COLUMNS = ("n", "avg_ns", "max_ns", "count", "p50_ns", "p99_ns", "max_raw_ns", "discarded", "outliers")
#: A point with fewer kept samples of a term than this is reported: its p99 is not quotable.
MIN_SAMPLES_FOR_P99 = 100
#: The measurement protocol in one line each (the model's ``protocol``; docs/overheads.md).
PROTOCOL_FILTER = (
    "samples overlapping host interference on their CPU are discarded: a clock jump above 10 us in a job body's "
    "poll loop or an idle spin, or run-queue wait (schedstat) above 50 us between two checks"
)
PROTOCOL_OUTLIER_RULE = (
    "max_ns: largest kept sample not above both Tukey's fence Q3 + 1.5 IQR and the p99 (nearest rank; at most 1% "
    "removed); max_raw_ns: largest of all samples; avg/p50/p99 of the kept samples, outliers included"
)
#: Draws of a split-forcing SP-RES set per point before the measurement gives up on a split.
SPRES_SPLIT_TRIES = 20


def _spres_splits(ts: TaskSet, m: int) -> int:
    """The number of tasks the SP-RES cascade splits into parts (C=D) on ``m`` CPUs (0 when it
    splits none or cannot place the set)."""
    from .api import partition as place

    p = place(ts, m, "spres")
    if not p.get("schedulable"):
        return 0
    return sum(1 for t in p.get("tasks", []) if t.get("parts", 1) > 1)


def _draw_set(
    scheduler: str, n: int, m: int, seed: int, rng: random.Random, log: TextIO
) -> tuple[TaskSet, float, dict]:
    """The task set of one point: RandFixedSum, U uniform in [0.4m, 0.8m], periods log-uniform
    in [10, 100] ms (Cerqueira et al., RTAS 2014, §IV). Under ``spres`` a split-forcing draw,
    so that migrations are measured: m + 1 heavy tasks of total U uniform in [0.88m, 0.95m]
    (when no two of them fit one CPU, one must be split) and n − m − 1 light tasks of total
    0.04m, redrawn up to :data:`SPRES_SPLIT_TRIES` times until the SP-RES cascade splits a
    task; at n = m no set splits (m tasks always fit whole), said in a warning."""
    from .api import generate

    periods = "loguniform:10ms-100ms"
    if scheduler != "spres" or n <= m:
        u = rng.uniform(0.4 * m, 0.8 * m)
        ts = generate(n, u, generator="randfixedsum", periods=periods, seed=seed)
        if scheduler == "spres":
            print(
                f"rtsched measure-overheads: warning: no split at n={n}: {n} tasks on {m} CPUs always fit whole; "
                "this point measures no migration",
                file=log,
                flush=True,
            )
        return ts, u, ({"split_tasks": 0, "draws": 0} if scheduler == "spres" else {})
    for k in range(SPRES_SPLIT_TRIES):
        s = seed + 7919 * k
        heavy = generate(m + 1, rng.uniform(0.88 * m, 0.95 * m), generator="randfixedsum", periods=periods, seed=s)
        tasks = list(heavy)
        if n > m + 1:
            tasks += list(generate(n - m - 1, 0.04 * m, generator="randfixedsum", periods=periods, seed=s + 1))
        ts = TaskSet(tasks)
        u = ts.utilization  # a report, not a verdict
        splits = _spres_splits(ts, m)
        if splits:
            return ts, u, {"split_tasks": splits, "draws": k + 1}
    print(
        f"rtsched measure-overheads: warning: no split at n={n}: no split-forcing set in {SPRES_SPLIT_TRIES} "
        "draws; this point measures no migration",
        file=log,
        flush=True,
    )
    return ts, u, {"split_tasks": 0, "draws": SPRES_SPLIT_TRIES}


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
    background: str = "none",
    isolate: bool = False,
    log: TextIO = sys.stderr,
) -> dict:
    """Runs the experiment and writes ``DIR/overheads-<scheduler>.json`` plus
    ``DIR/overheads-<scheduler>-avg.png`` and ``-max.png``; returns the model dict.

    The measurement protocol (docs/overheads.md, "Measurement protocol"): a preflight of the
    host (printed, and stored as ``protocol.preflight``); with ``isolate`` what it may change
    is changed for the measurement and restored after it (errors and Ctrl-C included); with
    ``background="cache"`` a cache-polluting walker per measured CPU runs during each run;
    the grid n = m, 2m, ..., 10m (``quick``: m, 5m, 10m, 1 s each); every term's samples
    filtered (host interference discarded, the outlier rule on the maximum), a warning for a
    point with fewer than :data:`MIN_SAMPLES_FOR_P99` kept samples.

    Ctrl-C stops the experiment: the model and plots are written for the n fully measured
    (the interrupted run is left out) and the model has ``"interrupted": true``."""
    from .protocol import background_plan, format_preflight, isolated, preflight

    term_names = terms(v.text(scheduler, "scheduler"))
    cpu_list = parse_cpus(cpus)
    seed = v.seed(seed)
    rt_priority = v.optional_integer(rt_priority, "rt_priority", 1, 99)
    dedicated_cpu = v.optional_integer(dedicated_cpu, "dedicated_cpu", 0, v.MAX_CPU)
    background = v.choice(background, "background", ["none", "cache"])
    isolate = v.boolean(isolate, "isolate")
    m = len(cpu_list)
    ns = [m, 5 * m, 10 * m] if quick else [k * m for k in range(1, 11)]
    secs = seconds if seconds is not None else (1.0 if quick else 30.0)
    if secs <= 0:
        raise RtschedError(f"seconds must be positive, got {secs}")
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    table: dict = {t: {c: [] for c in MODEL_COLUMNS} for t in term_names}
    runs: list[dict] = []
    measured = cpu_list + ([dedicated_cpu] if dedicated_cpu is not None else [])
    pre = preflight(measured, rt_priority=rt_priority)
    plan = background_plan(measured) if background == "cache" else None
    interrupted = False
    with contextlib.ExitStack() as stack:
        if isolate:
            stack.enter_context(isolated(measured, report=pre))
        for line in format_preflight(pre):
            print(f"rtsched measure-overheads: preflight: {line}", file=log, flush=True)
        if plan is not None:
            print(
                f"rtsched measure-overheads: background: a cache walker of {plan['working_set_bytes'] >> 20} MiB per "
                f"CPU on {_cpu_text(measured)} ({plan['priority']})",
                file=log,
                flush=True,
            )
        interrupted = _measure_points(
            scheduler,
            ns,
            m,
            cpu_list,
            secs,
            seed,
            rng,
            dedicated_cpu,
            rt_priority,
            force,
            params,
            plan,
            runs,
            table,
            log,
        )
    model = _model(scheduler, params, m, cpu_list, secs, seed, interrupted, table, runs)
    model["protocol"] = {
        "filter": PROTOCOL_FILTER,
        "outlier_rule": PROTOCOL_OUTLIER_RULE,
        "background": background,
        "grid": ns,
        "preflight": pre,
        **({"background_load": plan} if plan is not None else {}),
    }
    path = os.path.join(out, f"overheads-{scheduler}.json")
    write_text(path, json.dumps(model, indent=1))
    print(f"rtsched measure-overheads: wrote {path}", file=log)
    for stat in ("avg", "max"):
        p = os.path.join(out, f"overheads-{scheduler}-{stat}.png")
        _plot(model, stat, p)
        print(f"rtsched measure-overheads: wrote {p}", file=log)
    return model


def _model(
    scheduler: str,
    params: dict | Sequence[str] | None,
    m: int,
    cpu_list: list[int],
    secs: float,
    seed: int,
    interrupted: bool,
    table: dict,
    runs: list[dict],
) -> dict:
    return {
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


def model_row(o: dict) -> dict:
    """A run summary's term statistics as the model's columns (without ``n``)."""
    return {
        "avg_ns": o["avg_ns"],
        "max_ns": o["max_ns"],
        "count": o["count"],
        "p50_ns": o["p50_ns"],
        "p99_ns": o["p99_ns"],
        "max_raw_ns": o["max_raw_ns"],
        "discarded": o["discarded"],
        "outliers": o["outliers"],
    }


def _measure_points(
    scheduler: str,
    ns: list[int],
    m: int,
    cpu_list: list[int],
    secs: float,
    seed: int,
    rng: random.Random,
    dedicated_cpu: int | None,
    rt_priority: int | None,
    force: bool,
    params: dict | Sequence[str] | None,
    plan: dict | None,
    runs: list[dict],
    table: dict,
    log: TextIO,
) -> bool:
    """Measures each n of the grid into ``runs`` and ``table``; whether Ctrl-C stopped it."""
    from .protocol import BackgroundLoad

    term_names = list(table)
    for i, n in enumerate(ns):
        extra: dict = {}
        try:
            ts, u, extra = _draw_set(scheduler, n, m, seed * 1000 + i, rng, log)
            print(
                f"rtsched measure-overheads: {scheduler} n={n} U={u:.3f} ({i + 1}/{len(ns)}, {secs:g} s)",
                file=log,
                flush=True,
            )
            with BackgroundLoad(plan) if plan is not None else contextlib.nullcontext():
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
                    preflight=False,
                )["summary"]
        except KeyboardInterrupt:  # Ctrl-C outside the run itself (e.g. while generating)
            s = {"interrupted": True}
        if s.get("interrupted"):
            done = [r["n"] for r in runs]
            print(
                f"rtsched measure-overheads: interrupted at n={n}; writing the model for the n measured: {done}",
                file=log,
                flush=True,
            )
            return True
        interference = s.get("interference") or {}
        runs.append(
            {
                "n": n,
                "utilization": u,
                "jobs": s["jobs"],
                "deadline_misses": s["deadline_misses"],
                "dropped_records": s["dropped_records"],
                "trustworthy": s["trustworthy"],
                "interference_intervals": interference.get("intervals"),
                "interference_ns": interference.get("total_ns"),
                **extra,
            }
        )
        if not s["trustworthy"]:
            print(f"rtsched measure-overheads: warning: n={n}: {s['trustworthy_reason']}", file=log, flush=True)
        few = []
        for t in term_names:
            o = s["overheads"].get(t)
            if o and not o["count"] and o.get("discarded"):
                # Every sample disturbed: no point for this term at this n (said in the run).
                runs[-1].setdefault("all_discarded", []).append(t)
            if not o or not o["count"]:
                continue
            table[t]["n"].append(n)
            for k, val in model_row(o).items():
                table[t][k].append(val)
            if o["count"] < MIN_SAMPLES_FOR_P99:
                few.append(f"{t} {o['count']}")
        if few:
            print(
                f"rtsched measure-overheads: warning: p99 not quotable at n={n}: fewer than {MIN_SAMPLES_FOR_P99} "
                f"kept samples of {', '.join(few)}",
                file=log,
                flush=True,
            )
    return False


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
        f"max tardiness {ns(s.get('max_tardiness_ns'))}"
        + (
            f" — counted over the first {ns(s.get('metrics_horizon_ns'))} only: "
            f"{s['dropped_records']} trace records dropped"
            if s.get("dropped_records")
            else ""
        ),
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
    itf = s.get("interference")
    if isinstance(itf, dict) and itf.get("intervals"):
        out.append(
            f"host interference: {itf['intervals']} interval(s), {ns(itf.get('total_ns'))} in all, longest "
            f"{ns(itf.get('max_ns'))} (overhead samples overlapping them are discarded)"
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
                line = f"  {term:<{width}}  {d['count']:>7} samples  {stats(d, '_ns')}"
                if d.get("discarded") or d.get("outliers"):
                    line += (
                        f" ({d.get('discarded', 0)} disturbed discarded, {d.get('outliers', 0)} outliers; raw max "
                        f"{ns(d.get('max_raw_ns'))})"
                    )
                out.append(line)
            elif isinstance(d, dict):
                out.append(f"  {term:<{width}}  {0:>7} samples")
    return "\n".join(out)
