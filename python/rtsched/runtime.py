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
from collections.abc import Callable, Iterator, Sequence
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
    ``symbol``, ``help``, ``tracking``, ``count``: its samples are counts, not times),
    ``invariant``, ``user_jobs``, ``suspends`` (it executes self-suspending jobs), ``parallel``
    (it executes fork-join and DAG jobs) and ``backend``."""
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


def _placement_arg(placement, ts: TaskSet) -> list[list[int]] | str:
    """A placement as the run request takes it: task-index lists per CPU (from Python; each
    index checked here, the whole partition against the run's CPUs by the runtime) or a
    placement's JSON text (``rtsched partition --json``: a dict, its text or a file path)."""
    if isinstance(placement, list):
        part = []
        for c in placement:
            if not isinstance(c, (list, tuple)):
                raise RtschedError(f"argument 'placement': expected a list of task-index lists, got {placement!r}")
            part.append([v.integer(t, "placement", 0, len(ts) - 1) for t in c])
        return part
    return _placement_text(placement)


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


def _prepare(
    workload: TaskSet | str,
    scheduler: str,
    cpus: str | Sequence[int] | None,
    duration: int | str,
    rt_priority: int | None,
    idle: str,
    force: bool,
    seed: int,
    exports: Sequence[str],
    params: dict | Sequence[str] | None,
    placement: Any = None,
    **more: Any,
) -> tuple[Any, dict]:
    """The run request of :func:`run_raw` / :func:`run_forkjoin_raw` (values checked here with
    the names users know) decided by the runtime (``rtsched_runtime::request``, no thread
    started): its plan (CPUs, placement, warnings) and the request."""
    pairs = checked_params(scheduler, params)
    request = {
        "workload": workload,
        "scheduler": scheduler,
        "duration_ns": v.duration(duration, "duration", 1),
        "rt_priority": v.optional_integer(rt_priority, "rt_priority", 1, 99),
        "idle": v.choice(idle, "idle", ["sleep", "spin"]),
        "force": v.boolean(force, "force"),
        "seed": v.seed(seed),
        "cpus": None if cpus is None else parse_cpus(cpus),
        "exports": list(exports),
        "params": pairs,
        **more,
    }
    if placement is not None:
        if not isinstance(workload, TaskSet):
            raise RtschedError("a fork-join workload runs without a placement")
        request["placement"] = _placement_arg(placement, workload)
    return _core.prepare_run(request), request


def checked_params(scheduler: str, params: dict | Sequence[str] | None) -> list[tuple[str, str]]:
    """The parameters of a run of ``scheduler`` as (KEY, VALUE) text pairs
    (:func:`rtsched.validate.param_pairs`), checked by the runtime's registry before anything
    runs: an unknown, repeated or bad one raises the same one line as the simulator's
    (``rtsched_model::params::resolve``, the one reading of every engine's parameters)."""
    entry = find_scheduler(v.text(scheduler, "scheduler"))
    if isinstance(params, dict):
        # A Python int for a duration parameter is nanoseconds, as every duration of the Python
        # API (the command line's text needs a unit: ``--param quantum=1ms``).
        kinds = {p["name"]: p["kind"] for p in entry["params"]}
        params = {
            k: f"{val}ns"
            if kinds.get(str(k).replace("-", "_")) == "duration" and isinstance(val, int) and not isinstance(val, bool)
            else val
            for k, val in params.items()
        }
    pairs = v.param_pairs(params, entry["name"])
    _core.check_mechanism_params(entry["name"], pairs)
    return pairs


def run_cpus(
    ts: TaskSet, cpus: str | Sequence[int] | None, dedicated_cpu: int | None = None, force: bool = False
) -> tuple[list[int], list[str]]:
    """The CPUs a run of ``ts`` uses and the warnings to print, as the runtime decides them
    (``rtsched_runtime::request::decide_cpus``): ``cpus`` if given, else the first ``m`` CPUs
    this process may use (the task set's ``m``; one CPU when it has none; the dedicated CPU
    excluded). A task set made for more CPUs than the run has (its ``m``), or whose
    utilization exceeds their number (exactly), is refused with the numbers, or with ``force``
    run anyway with a warning: its deadline misses would be the CPU count's, not the scheduler's."""
    plan, _ = _prepare(
        v.task_set(ts, "ts"),
        "gsn-edf",  # a global mechanism: the CPUs alone are decided
        cpus,
        1,
        None,
        "sleep",
        force,
        0,
        (),
        None,
        dedicated_cpu=v.optional_integer(dedicated_cpu, "dedicated_cpu", 0, v.MAX_CPU),
    )
    return plan.cpus, plan.warnings


#: A run's timing is trustworthy when its longest poll gap and its largest timer latency are
#: at most this many times the reference: this machine's calibrated floor plus the
#: mechanism's reaction time from its overhead model (see :func:`assess_timing`).
TRUST_FACTOR: int = _core.TRUST_FACTOR
#: The floor taken for the timer and the noise when the machine has no calibration (skipped):
#: about the 2-core development VM's average timer wake-up latency (cyclictest: 19 us).
TRUST_FLOOR_NS: int = _core.TRUST_FLOOR_NS


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


def assess_timing(
    summary: dict,
    entry: dict,
    rt_priority: int | None,
    calibration: dict | None = None,
    reaction_model: tuple[str, str] | None = None,
) -> tuple[bool, str]:
    """Whether a run's measured timing is trustworthy, and why (docs/runtime.md, "Trustworthy
    timing"): the runtime's verdict (``rtsched_runtime::request::assess_timing``, which every
    run's summary carries as ``trustworthy`` / ``trustworthy_reason``) for a summary under the
    mechanism ``entry`` (its registry entry) at ``rt_priority``, against ``calibration`` (this
    machine's, :mod:`rtsched.calibrate`; None: the default floor :data:`TRUST_FLOOR_NS`) and the
    mechanism's reaction time from ``reaction_model`` ((name, JSON text),
    :func:`rtsched.calibrate.reaction_model`; None: no reaction time). Not trustworthy: the
    poll gap above :data:`TRUST_FACTOR` × (noise + reaction), the largest timer latency or Δipi
    above :data:`TRUST_FACTOR` × (timer floor + reaction), the longest priority-inversion
    interval above that (plus a quantum-driven mechanism's quantum), a deadline miss with host
    interruptions at least its tardiness, or dropped trace records (said first). kernel-sd
    says what it cannot judge and is never called trustworthy."""
    cal = None if calibration is None else json.dumps(calibration)
    ok, why, _unchecked = _core.assess_timing(
        json.dumps(summary), entry["name"], rt_priority, cal, None, reaction_model
    )
    return ok, why


def _say(plan: Any, quiet: bool) -> None:
    """Prints what the runtime decided before the run: its warnings, then its notes."""
    if quiet:
        return
    for w in [*plan.warnings, *plan.placement_warnings]:
        print(f"rtsched run: warning: {w}", file=sys.stderr)
    for note in plan.notes:
        print(f"rtsched run: {note}", file=sys.stderr)


def _outcome(res: dict) -> tuple[dict, bool, str]:
    """``_core.run``'s answer with the summary decoded: (the result, trustworthy, why); the
    checks the verdict could not make go into the summary's ``trust_unchecked``."""
    res = dict(res)
    trusted, why = res.pop("trustworthy"), res.pop("trustworthy_reason")
    unchecked = res.pop("trust_unchecked", [])
    res["summary"] = json.loads(res["summary"])
    res["summary"]["trust_unchecked"] = unchecked
    if "overhead_samples" in res:
        res["overhead_samples"] = json.loads(res["overhead_samples"])
    res["interrupted"] = bool(res["summary"].get("interrupted"))
    return res, trusted, why


def _prepare_trusted(scheduler: str, calibration: Any, overheads: Any, quiet: bool, *args: Any, **kw: Any) -> tuple:
    """:func:`_prepare` with the request's fields the trust verdict is judged against: this
    machine's calibration (:func:`rtsched.calibrate.for_run`) and the mechanism's overhead model
    (:func:`rtsched.calibrate.reaction_model`). A calibration still to be measured (0.5 s) is
    measured only once the request is known to be valid, so that an invalid one is refused in
    one line and at once."""
    from . import calibrate

    model = calibrate.reaction_model(scheduler, overheads)  # a bad model is refused before any measurement
    if calibration == "auto" and calibrate.load()[0] is None:
        _prepare(*args, calibration=None, no_calibration="not measured yet", reaction_model=model, **kw)
    text, why = calibrate.for_run(calibration, quiet=quiet)
    return _prepare(*args, calibration=text, no_calibration=why, reaction_model=model, **kw)


def _judge_causes(summary: dict, cpus: list[int], rt_priority: int | None, before: dict | None, **kw: Any) -> None:
    """A run not trustworthy gets ``trust_causes``: what the machine says disturbed it
    (:func:`rtsched.protocol.disturbance_causes`, one line each with its numbers), from the
    preflight ``before`` and a look at the CPUs' runnable tasks right after the run."""
    if summary["trustworthy"] or summary["trustworthy_reason"].startswith("partly judged"):
        summary["trust_causes"] = []
        return
    from .protocol import disturbance_causes, runnable_tasks

    after = runnable_tasks(cpus, exclude_pids=[os.getpid()])
    summary["trust_causes"] = disturbance_causes(
        cpus, rt_priority, before=(before or {}).get("runnable"), after=after, **kw
    )


def _untrusted(summary: dict, warns: list[str], quiet: bool) -> None:
    if not summary["trustworthy"]:
        what = "cannot be judged whole" if summary.get("trust_unchecked") else "is not trustworthy"
        warns.append(f"the measured timing {what}: {summary['trustworthy_reason']}")
        warns.extend(f"the machine names a cause: {c}" for c in summary.get("trust_causes") or [])
        if not quiet:
            start = len(warns) - 1 - len(summary.get("trust_causes") or [])
            for w in warns[start:]:
                print(f"rtsched run: warning: {w}", file=sys.stderr)


def _spinning_warnings(request: dict, cpus: Sequence[int], dedicated_cpu: int | None, quiet: bool) -> list[str]:
    """For a SCHED_FIFO run: the warnings about its threads that never sleep, which meet the
    kernel's SCHED_FIFO limit whatever the load (printed unless ``quiet``): G-EDF-MP's
    ``dsp=spin`` (the scheduling processor) and spinning idle workers (``idle="spin"``, e.g.
    G-EDF-MP's spinning clients; docs/mechanisms/gedf-mp.md, "Waiting")."""
    spinners = []
    if dedicated_cpu is not None and ("dsp", "spin") in request["params"]:
        spinners.append(
            ("the scheduling processor (dsp=spin)", [dedicated_cpu], "every release and message", "use dsp=window")
        )
    if request["idle"] == "spin":
        who = "the worker (idle=spin)" if len(cpus) == 1 else "the workers (idle=spin)"
        spinners.append((who, list(cpus), "every job and reschedule there", "use --idle sleep"))
    out = []
    for what, on, delays, instead in spinners:
        w = rtlimits.spinning(rtlimits.fifo_capacity(), what, on, delays, instead)
        if w is not None:
            out.append(w)
            if not quiet:
                print(f"rtsched run: warning: {w}", file=sys.stderr)
    return out


def _run_on_host(
    plan: Any,
    request: dict,
    *,
    ts: TaskSet | None,
    dedicated_cpu: int | None,
    preflight: bool,
    isolate: bool,
    quiet: bool,
) -> dict:
    """Runs a prepared run (:func:`_prepare_trusted`) inside the host protocol that every
    workload gets (:func:`run_raw`, :func:`run_forkjoin_raw`): the runtime's warnings and notes
    said; the preflight (``preflight``); with ``isolate`` the host's limits lifted on the run's
    CPUs and the dedicated CPU for the run and restored after it, errors and Ctrl-C included;
    with a SCHED_FIFO priority the warnings about the kernel's SCHED_FIFO limit (a sequential
    set ``ts``'s load per CPU; None: not computed) and about threads that never sleep; then the
    summary completed with ``rt_priority``, ``preflight``, ``isolate``, the trust verdict, its
    causes and every warning. Returns ``_core.run``'s result (:func:`_outcome`)."""
    rt_priority = request["rt_priority"]
    _say(plan, quiet)
    cpu_list, warns = plan.cpus, [*plan.warnings, *plan.placement_warnings]  # every warning printed
    partition, reservations = plan.partition, plan.placement
    used = cpu_list + ([dedicated_cpu] if dedicated_cpu is not None else [])
    pre = None
    if v.boolean(preflight, "preflight"):
        from .protocol import preflight as take_preflight

        pre = take_preflight(used, rt_priority=rt_priority)
    isolate = v.boolean(isolate, "isolate")
    # Everything from lifting the limits to the end of the run is undone on the way out.
    with contextlib.ExitStack() as stack:
        lifted = None
        if isolate:
            from .protocol import isolated

            lifted = stack.enter_context(isolated(used, report=pre))
        # SCHED_FIFO threads get only part of each CPU here (RT throttling, the fair server): a
        # placement above it misses for the kernel's sake, which the warning says with the numbers.
        throttled = None
        loads, cap = None, None
        if rt_priority is not None:
            if ts is not None:
                loads = rtlimits.placement_loads(ts, cpu_list, partition, reservations)
                cap = rtlimits.fifo_capacity()
                throttled = rtlimits.overloaded(loads, cap, spread=partition is None and reservations is None)
            if throttled is not None:
                if not isolate:
                    throttled += (
                        "; as root, --isolate (isolate=True) lifts RT throttling and the fair server for the run and "
                        "restores them afterwards"
                    )
                warns.append(throttled)
                if not quiet:
                    print(f"rtsched run: warning: {throttled}", file=sys.stderr)
            warns += _spinning_warnings(request, cpu_list, dedicated_cpu, quiet)
        from .protocol import uptime

        since = uptime()
        res, trusted, why = _outcome(_core.run(plan))
        window = (since, uptime())
    summary = res["summary"]
    summary["rt_priority"] = rt_priority
    if pre is not None:
        summary["preflight"] = pre
    if lifted is not None:
        summary["isolate"] = lifted
        if lifted["refused"] and not quiet:
            print(f"rtsched run: warning: --isolate could not change: {'; '.join(lifted['refused'])}", file=sys.stderr)
    summary["trustworthy"], summary["trustworthy_reason"] = trusted, why
    _judge_causes(summary, used, rt_priority, pre, window=window, loads=loads, cap=cap)
    _untrusted(summary, warns, quiet)
    summary["warnings"] = warns
    if res["interrupted"] and not quiet:
        print(
            f"rtsched run: interrupted after {summary['duration_ns'] / 1e9:.3f} s of "
            f"{request['duration_ns'] / 1e9:g} s; the results cover the time run",
            file=sys.stderr,
        )
    return res


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
    calibration: str | dict | os.PathLike | None = "auto",
    overheads: str | os.PathLike | None = None,
    inflate: str | dict | os.PathLike | None = None,
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
    the summary's ``isolate`` says what changed and what was refused. ``calibration``: what the
    trust verdict's floor comes from (:func:`rtsched.calibrate.for_run`: ``"auto"``, this
    machine's kept calibration, measured once in 0.5 s when there is none; ``"skip"``; a dict
    or a file); ``overheads``: the overhead model of the mechanism's reaction time (a file, set
    or shipped name; default the shipped one, :func:`rtsched.calibrate.reaction_model`). A run
    that is not trustworthy gets ``trust_causes``: what the machine says disturbed it.
    ``inflate`` (``run``, ``qps-g``, ``qps-c``): an overhead model (a file, JSON text or dict,
    a shipped model or set by name) whose overheads inflate the servers' budgets
    (:func:`inflated_budgets`; the job bodies still run their WCETs); the run is refused in one
    line when the inflated utilization exceeds the CPUs, and the summary's ``inflation`` says
    what was charged.

    The run's decisions (its CPUs, the refusals, the default placement, the trust verdict) are
    the runtime's (``rtsched_runtime::request``); this adds the host protocol around the run.

    Ctrl-C during the run (in the main thread) stops it early: the Rust side notices within
    50 ms, the run winds down in a few ms, and this returns what it measured with
    ``interrupted`` true (also in the summary) and the summary's ``duration_ns`` the time
    actually run."""
    ts = v.task_set(ts, "ts")
    dedicated_cpu = v.optional_integer(dedicated_cpu, "dedicated_cpu", 0, v.MAX_CPU)
    if exec_min_fraction is not None:
        exec_min_fraction = v.number(exec_min_fraction, "exec_min_fraction", 0.0, 1.0)
    head = (ts, scheduler, cpus, duration, rt_priority, idle, force, seed, exports)
    inflation = None
    if inflate is not None:
        # The budgets need the run's CPU count, which the plan decides: planned once without
        # the calibration (an inflation refused is refused at once), then with the budgets.
        first, _ = _prepare(
            *head,
            params,
            placement,
            dedicated_cpu=dedicated_cpu,
            exec_min_fraction=exec_min_fraction,
            calibration=None,
            no_calibration="not needed to plan",
            reaction_model=None,
        )
        inflation = inflated_budgets(ts, scheduler, len(first.cpus), inflate)
        pairs = list(v.param_pairs(params))
        if any(k == "budgets" for k, _ in pairs):
            raise RtschedError("give either inflate (--inflate) or the budgets parameter, not both")
        params = [f"{k}={x}" for k, x in pairs] + ["budgets=" + ",".join(str(b) for b in inflation["budgets"])]
    plan, request = _prepare_trusted(
        scheduler,
        calibration,
        overheads,
        quiet,
        *head,
        params,
        placement,
        dedicated_cpu=dedicated_cpu,
        exec_min_fraction=exec_min_fraction,
    )
    res = _run_on_host(
        plan, request, ts=ts, dedicated_cpu=dedicated_cpu, preflight=preflight, isolate=isolate, quiet=quiet
    )
    summary = res["summary"]
    partition, reservations = plan.partition, plan.placement
    if partition is not None:
        summary["partition"] = partition
    if reservations is not None:
        summary["placement"] = reservations
    if inflation is not None:
        summary["inflation"] = inflation
    return res


#: The mechanisms whose servers' budgets ``inflate`` sets (their ``budgets`` parameter).
INFLATABLE_SCHEDULERS = ("run", "qps-g", "qps-c")


def inflated_budgets(ts: TaskSet, scheduler: str, m: int, model: str | dict | os.PathLike) -> dict:
    """The server budgets of ``scheduler`` (``run``, ``qps-g``, ``qps-c``) for ``ts`` on ``m``
    CPUs inflated by the overheads of ``model`` (a file, JSON text or dict, a shipped model or a
    folder of models by name: its model for the scheduler): the rule ``analyze --overheads MODEL
    --mechanism SCHEDULER`` judges with (``rtsched_analysis::placing::budgets_with_overheads``,
    docs/overheads.md, "RUN and QPS"). Returns its object (``budgets`` in ns per task, the
    values charged, ``utilization``, ``notes``); refused in one line when the inflated
    utilization exceeds ``m`` (or the rule finds the set infeasible)."""
    from .overheads import overheads_text
    from .shipped import resolve_model_file

    scheduler = v.text(scheduler, "scheduler")
    if scheduler not in INFLATABLE_SCHEDULERS:
        raise RtschedError(
            f"inflate: budgets are inflated for {', '.join(INFLATABLE_SCHEDULERS)}, not {scheduler} "
            "(SP-RES: rtsched partition --overheads; the others have no server budgets)"
        )
    label = None
    if isinstance(model, (str, os.PathLike)) and not os.fspath(model).lstrip().startswith("{"):
        label = os.fspath(model)
        model = resolve_model_file(model, scheduler)
    text = overheads_text(model) or ""
    out = dict(_core.inflate_budgets(ts, m, scheduler, text, label))
    if not out["schedulable"]:
        raise RtschedError(f"inflate: {scheduler} on {m} CPUs: {out['reason']}")
    return out


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
    preflight: bool = True,
    isolate: bool = False,
    calibration: str | dict | os.PathLike | None = "auto",
    overheads: str | os.PathLike | None = None,
) -> dict:
    """Like :func:`run_raw` for a fork-join task-set file's JSON ``text`` (docs/rtws.md) or a DAG
    task-set file's (docs/dag.md) under a mechanism that executes parallel jobs (the registry's
    ``parallel`` mechanisms, :func:`schedulers`; docs/mechanisms/rtws.md). The summary has a ``forkjoin`` (or
    ``dag``) object with the job-level results, over all and ``per_task``; trace exports are per
    thread (per node), the job CSV per fork-join (DAG) job. Without ``cpus`` the file's ``m``
    decides (the first ``m`` CPUs this process may use; one if the file has no ``m``). The same
    run request as :func:`run_raw`, and the same host protocol around it (``preflight``,
    ``isolate``: :func:`run_raw`)."""
    text = v.text(text, "text")
    plan, request = _prepare_trusted(
        scheduler,
        calibration,
        overheads,
        quiet,
        text,
        scheduler,
        cpus,
        duration,
        rt_priority,
        idle,
        force,
        seed,
        exports,
        params,
    )
    return _run_on_host(plan, request, ts=None, dedicated_cpu=None, preflight=preflight, isolate=isolate, quiet=quiet)


def run_forkjoin(
    text: str,
    scheduler: str = "rtws",
    cpus: str | Sequence[int] | None = None,
    duration: int | str = "1s",
    **kw: Any,
) -> dict:
    """Runs the fork-join or DAG task set in the JSON ``text`` (docs/rtws.md, docs/dag.md) on real
    cores under ``scheduler`` (``rtws``, ``push-pull`` or ``push-pull-fp``) and returns the summary
    dict; keywords as :func:`run` (no placement, no dedicated CPU)."""
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


#: The mechanisms whose offline phase needs integral-millisecond parameters here (RUN's and
#: QPS's exact budgets: the rates' common denominator must stay below 2^64), as Compagnin et
#: al.'s implementations take them (Brandenburg & Gül, RTSS 2016, §VII-B, footnote 4).
INTEGRAL_MS_SCHEDULERS = ("run", "qps-g", "qps-c")
#: Their periods: the divisors of 200 ms from 10 ms up (a least common multiple of 200 ms).
INTEGRAL_MS_PERIODS = "set:10ms,20ms,25ms,40ms,50ms,100ms,200ms"


def integral_ms(ts: TaskSet, m: int) -> TaskSet:
    """``ts`` with every WCET a whole number of milliseconds (periods must be whole already):
    rounded down, at least 1 ms, then the largest WCET cut by 1 ms at a time while the total
    utilization exceeds ``m`` (exact), so that a set with U ≤ m keeps U ≤ m. Deadlines stay
    the periods (implicit). Refused when a period is not a whole number of milliseconds or a
    task cannot keep 1 ms."""
    from fractions import Fraction

    from ._core import Task

    ms = 1_000_000
    for i, t in enumerate(ts):
        if t.period % ms:
            raise RtschedError(f"task {i}: period {t.period} ns is not a whole number of milliseconds")
    wcets = [max(1, t.wcet // ms) for t in ts]
    periods = [t.period // ms for t in ts]
    while sum(Fraction(c, p) for c, p in zip(wcets, periods, strict=True)) > m:
        k = max(range(len(wcets)), key=lambda j: Fraction(wcets[j], periods[j]))
        if wcets[k] <= 1:
            raise RtschedError(f"the set cannot reach U ≤ {m} with whole-millisecond WCETs of at least 1 ms")
        wcets[k] -= 1
    return TaskSet([Task(wcet=c * ms, period=t.period, name=t.name) for c, t in zip(wcets, ts, strict=True)])


def _draw_set(
    scheduler: str, n: int, m: int, seed: int, rng: random.Random, log: TextIO
) -> tuple[TaskSet, float, dict]:
    """The task set of one point: RandFixedSum, U uniform in [0.4m, 0.8m], periods log-uniform
    in [10, 100] ms (Cerqueira et al., RTAS 2014, §IV). Under RUN and QPS
    (:data:`INTEGRAL_MS_SCHEDULERS`) the same draw with periods from
    :data:`INTEGRAL_MS_PERIODS` and whole-millisecond WCETs (:func:`integral_ms`). Under ``spres`` a split-forcing draw,
    so that migrations are measured: m + 1 heavy tasks of total U uniform in [0.88m, 0.95m]
    (when no two of them fit one CPU, one must be split) and n − m − 1 light tasks of total
    0.04m, redrawn up to :data:`SPRES_SPLIT_TRIES` times until the SP-RES cascade splits a
    task; at n = m no set splits (m tasks always fit whole), said in a warning."""
    from .api import generate

    periods = "loguniform:10ms-100ms"
    if scheduler in INTEGRAL_MS_SCHEDULERS:
        u = rng.uniform(0.4 * m, 0.8 * m)
        ts = integral_ms(generate(n, u, generator="randfixedsum", periods=INTEGRAL_MS_PERIODS, seed=seed), m)
        return ts, ts.utilization, {}
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
    checked_params(scheduler, params)  # a bad parameter is refused before the preflight
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
        "params": dict(v.param_pairs(params)),
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

    from .overheads import count_terms
    from .plots import curve_style, legend_outside

    # The time terms only: a count term's values (RUN's tree_events) are not µs (the model and
    # `rtsched overheads show` hold them).
    times = {t: row for t, row in model["terms"].items() if t not in count_terms()}
    fig, ax = plt.subplots(figsize=(7.2, 4))
    for j, (t, row) in enumerate(times.items()):
        ax.plot(row["n"], [x / 1000 for x in row[f"{stat}_ns"]], label=t, **curve_style(j, len(row["n"])))
    if any(x > 0 for row in times.values() for x in row[f"{stat}_ns"]):
        ax.set_yscale("log")  # the terms span three orders of magnitude
    ax.set_xlabel("number of tasks n")
    ax.set_ylabel(f"{'average' if stat == 'avg' else 'maximum'} overhead (µs)")
    ax.set_title(f"{model['scheduler']}, m = {model['m']}: {stat} overhead vs n")
    ax.grid(True, alpha=0.3)
    if times:
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

    def stats(d: dict, suffix: str = "", fmt: Callable[[Any], str] = ns) -> str:
        keys = [k for k in ("avg", "p50", "p99", "max") if f"{k}{suffix}" in d]
        return ", ".join(f"{k} {fmt(d[f'{k}{suffix}'])}" for k in keys)

    cpus = ",".join(str(c) for c in s.get("cpus", []))
    head = f"{s.get('scheduler')} on CPUs {cpus}, {ns(s.get('duration_ns'))}"
    if "idle" in s:
        head += f", idle workers {s['idle']}" if s["idle"] is not None else ", idle CPUs the kernel's"
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
    inf = s.get("inflation")
    if isinstance(inf, dict):
        out.append(
            f"budgets inflated by {inf.get('model')} ({inf.get('stat')}): U {inf.get('nominal_utilization'):.4f} -> "
            f"{inf.get('utilization'):.4f} on {len(s.get('cpus', []))} CPUs"
        )
    if isinstance(s.get("response_time_ns"), dict):
        out.append(f"response time: {stats(s['response_time_ns'])}")
    if isinstance(s.get("release_latency_ns"), dict):
        out.append(f"release latency: {stats(s['release_latency_ns'])}")
    out.append(f"preemptions {s.get('preemptions')}, migrations {s.get('migrations')}")
    if s.get("suspensions"):
        out.append(f"self-suspensions {s['suspensions']}, time suspended {ns(s.get('suspension_ns'))}")
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
        if s.get("trust_unchecked") and s.get("trustworthy_reason", "").startswith("partly judged"):
            verdict = "not judged whole"
        else:
            verdict = "trustworthy" if s["trustworthy"] else "NOT trustworthy"
        out.append(f"timing {verdict}: {s.get('trustworthy_reason')}")
        out.extend(f"  cause: {c}" for c in s.get("trust_causes") or [])
    ovh = s.get("overheads") or {}
    over, lat = ovh.get("budget_overrun"), ovh.get("enforcement_latency")
    if isinstance(over, dict):
        # SP-RES: execution past a hard budget, per overrun, against the timer's lateness.
        worst = ns(over.get("max_ns")) if over.get("count") else "0 ns"
        late = ns(lat.get("max_ns")) if isinstance(lat, dict) and lat.get("count") else "-"
        out.append(f"budget overruns {over.get('count', 0)}, max {worst} (max enforcement latency {late})")
    for key, what in (("forkjoin", "fork-join"), ("dag", "DAG")):
        par = s.get(key)
        if not isinstance(par, dict):
            continue
        out.append(
            f"{what} jobs {par.get('jobs')} (completed {par.get('completed')}, pending {par.get('pending')}), "
            f"deadline misses {par.get('deadline_misses')}, max response time {ns(par.get('max_response_time_ns'))}, "
            f"steals {par.get('steals')}"
        )
        for tk in par.get("per_task") or []:
            name = tk.get("name") if tk.get("name") is not None else tk.get("task")
            out.append(
                f"  task {name}: jobs {tk.get('jobs')}, completed {tk.get('completed')}, "
                f"misses {tk.get('deadline_misses')}, max response time {ns(tk.get('max_response_time_ns'))}"
            )
    if ovh:
        from .overheads import count_terms, format_value

        counts = count_terms()
        width = max(len(k) for k in ovh)
        out.append("overheads:")
        for term, d in ovh.items():
            if isinstance(d, dict) and d.get("count"):
                # A count term's statistics are numbers of events, printed as such (a count).
                fmt = (lambda x: format_value(x, True)) if term in counts else ns
                line = f"  {term:<{width}}  {d['count']:>7} samples  {stats(d, '_ns', fmt)}"
                if term in counts:
                    line += " (a count, not a time)"
                if d.get("discarded") or d.get("outliers"):
                    line += (
                        f" ({d.get('discarded', 0)} disturbed discarded, {d.get('outliers', 0)} outliers; raw max "
                        f"{fmt(d.get('max_raw_ns'))})"
                    )
                out.append(line)
            elif isinstance(d, dict):
                out.append(f"  {term:<{width}}  {0:>7} samples")
    return "\n".join(out)
