"""The bridge to rt-app, the field's standard Linux load generator (docs/formats.md, "rt-app").

:func:`to_rtapp` turns a task set into an rt-app configuration that runs the same periodic
tasks as real threads under the kernel's own scheduler: one thread per task with the
SCHED_DEADLINE parameters runtime = C, deadline = D, period = T (or SCHED_FIFO with
deadline-monotonic priorities), whose single phase repeats ``run C`` then waits for an absolute
timer of period T. :func:`from_rtapp` reads the periodic part of such a configuration back.

rt-app takes integer microseconds; rtsched keeps integer nanoseconds. A time that is not a
whole number of microseconds is rounded so that the exported load is never lighter than the
task set: the run time and the runtime budget up, the deadline and the period down. The export
says how many values it rounded (``notes``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from . import _core
from . import validate as _v
from ._core import RtschedError, Task, TaskSet

POLICIES = ("SCHED_DEADLINE", "SCHED_FIFO")
#: The events of a periodic thread that :func:`from_rtapp` understands (by key prefix, as rt-app
#: itself matches them: "run0", "timer1", ...).
_EVENT_PREFIXES = ("runtime", "run", "timer", "sleep")
_THREAD_KEYS = {
    "instance",
    "loop",
    "policy",
    "priority",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "cpus",
    "delay",
    "phases",
    "util_min",
    "util_max",
}
_FIFO_MAX = 99
#: The most tasks an import expands to (thread instances summed), the bound of a generated set.
MAX_TASKS = 1_000_000


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _us_up(ns: int) -> int:
    return -(-ns // 1000)


def _us_down(ns: int) -> int:
    return ns // 1000


def _thread_names(ts: TaskSet) -> list[str]:
    """A unique rt-app thread name per task: its own name (characters rt-app and file names
    cannot take replaced by ``_``) or ``task<i>``."""
    names: list[str] = []
    for i, t in enumerate(ts):
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", t.name) if t.name else f"task{i}"
        name, k = base, 1
        while name in names:
            k += 1
            name = f"{base}_{k}"
        names.append(name)
    return names


def to_rtapp(
    ts: TaskSet,
    *,
    duration: int | str = "10s",
    cpus: Sequence[int] | None = None,
    policy: str = "SCHED_DEADLINE",
    logdir: str = "./",
    log_basename: str = "rtsched",
    calibration: str | int = "CPU0",
) -> tuple[dict, list[str]]:
    """The rt-app configuration of ``ts`` as a dict, and notes (rounding) for the user.

    ``duration``: how long rt-app runs (whole seconds; rt-app's unit). ``cpus``: the affinity of
    every thread (default: all CPUs; SCHED_DEADLINE threads need an affinity that spans their
    root domain, so a subset needs an exclusive cpuset). ``policy``: ``SCHED_DEADLINE`` or
    ``SCHED_FIFO`` (priorities deadline monotonic, 99 for the shortest deadline; ties by task
    index). ``logdir``/``log_basename``: where rt-app writes its per-thread logs
    (``<logdir>/<log_basename>-<thread>-<k>.log``, one row per job: :func:`read_log`).
    ``calibration``: rt-app's ``"CPUn"`` (measure the ns per loop of its run events on CPU n
    at start, a few seconds) or that number of ns, measured before."""
    policy = str(policy).upper()
    if policy in ("DEADLINE", "FIFO"):
        policy = "SCHED_" + policy
    if policy not in POLICIES:
        raise RtschedError(f"field 'policy': expected one of {', '.join(POLICIES)}, got {policy!r}")
    if len(ts) == 0:
        raise RtschedError("field 'tasks': the task set is empty; rt-app needs at least one thread")
    dur_ns = _core.parse_duration(duration) if isinstance(duration, str) else duration
    if isinstance(dur_ns, bool) or not isinstance(dur_ns, int) or dur_ns < 1:
        raise RtschedError(f"field 'duration': expected a positive duration like 10s, got {duration!r}")
    notes: list[str] = []
    seconds = -(-dur_ns // 1_000_000_000)
    if seconds * 1_000_000_000 != dur_ns:
        notes.append(f"rt-app runs whole seconds: duration {_core.format_duration(dur_ns)} rounded up to {seconds}s")
    if cpus is not None:
        if isinstance(cpus, (str, bytes)) or not isinstance(cpus, Sequence) or not cpus:
            raise RtschedError(f"field 'cpus': expected a non-empty list of CPU numbers, got {_short(cpus)}")
        cpus = [_v.integer(c, "cpus", 0, _v.MAX_CPU) for c in cpus]
    if isinstance(calibration, bool) or not (
        isinstance(calibration, int)
        and calibration > 0
        or isinstance(calibration, str)
        and re.fullmatch(r"CPU\d{1,5}", calibration)
    ):
        raise RtschedError(
            f"field 'calibration': expected \"CPUn\" or a positive number of ns per loop, got {_short(calibration)}"
        )
    rounded = 0
    order = sorted(range(len(ts)), key=lambda i: (ts[i].deadline, i))
    fifo_prio = {i: max(1, _FIFO_MAX - rank) for rank, i in enumerate(order)}
    tasks: dict[str, Any] = {}
    for i, (name, t) in enumerate(zip(_thread_names(ts), ts, strict=True)):
        run, deadline, period = _us_up(t.wcet), _us_down(t.deadline), _us_down(t.period)
        rounded += sum(v % 1000 != 0 for v in (t.wcet, t.deadline, t.period))
        if period < 1 or deadline < 1:
            raise RtschedError(
                f"task {i}: rt-app counts in microseconds; a period or deadline below 1 µs cannot be exported"
            )
        if run > min(deadline, period):
            # Rounding to whole µs (run up, deadline and period down) would give a budget above
            # the deadline or period, which the kernel refuses (and which is not this task).
            raise RtschedError(
                f"task {i} ({name}): rt-app counts in microseconds and the export rounds run time up, deadline "
                f"and period down: wcet {t.wcet} ns -> {run} µs exceeds deadline {t.deadline} ns -> {deadline} µs "
                f"or period {t.period} ns -> {period} µs; give this task times in whole microseconds"
            )
        thread: dict[str, Any] = {"instance": 1, "loop": -1, "policy": policy}
        if policy == "SCHED_DEADLINE":
            thread.update({"dl-runtime": run, "dl-deadline": deadline, "dl-period": period})
        else:
            thread["priority"] = fifo_prio[i]
        if cpus is not None:
            thread["cpus"] = cpus
        thread["phases"] = {
            "job": {"loop": 1, "run": run, "timer": {"ref": "unique", "period": period, "mode": "absolute"}}
        }
        tasks[name] = thread
    if rounded:
        notes.append(
            f"rt-app counts in microseconds: {rounded} time(s) not a whole µs were rounded "
            "(run time and budget up, deadline and period down)"
        )
    config = {
        "tasks": tasks,
        "global": {
            "duration": seconds,
            "calibration": calibration,
            "default_policy": policy,
            "pi_enabled": False,
            "lock_pages": False,
            "logdir": logdir,
            "log_basename": log_basename,
            "gnuplot": False,
        },
    }
    return config, notes


def dumps(config: dict) -> str:
    """The configuration as the JSON text rt-app reads."""
    return json.dumps(config, indent=1) + "\n"


# ---------------------------------------------------------------------------------------------
# Import


def _strip_comments(text: str) -> str:
    """rt-app's own examples carry C comments and trailing commas (its parser, json-c, accepts
    them); remove both outside strings (a thread named ``"a, }"`` keeps its name)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise RtschedError("an unterminated /* comment")
            i = end + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c in "}]":
            # A trailing comma: the last non-blank piece before this bracket, if it is a comma
            # outside a string (pieces are single characters or whole strings).
            k = len(out) - 1
            while k >= 0 and out[k].isspace():
                k -= 1
            if k >= 0 and out[k] == ",":
                del out[k]
            out.append(c)
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    d: dict = {}
    for k, v in pairs:
        if k in d:
            raise RtschedError(f"key {k!r} appears twice in one object (rt-app events need distinct keys: run0, run1)")
        d[k] = v
    return d


def _us(v: Any, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise RtschedError(f"{where}: expected a non-negative integer number of microseconds, got {_short(v)}")
    return v * 1000


def _event(key: str) -> str | None:
    for p in _EVENT_PREFIXES:
        if key.startswith(p) and (key == p or key[len(p) :].isalnum()):
            return p
    return None


def _thread_task(name: str, th: Any) -> Task:
    where = f"task {name!r}"
    if not isinstance(th, dict):
        raise RtschedError(f"{where}: expected a thread object")
    phases = th.get("phases")
    if phases is None:
        body = {k: v for k, v in th.items() if _event(k)}
    else:
        if not isinstance(phases, dict) or len(phases) != 1:
            raise RtschedError(
                f"{where}: field 'phases': only threads with one periodic phase can be imported, got "
                f"{len(phases) if isinstance(phases, dict) else phases!r}"
            )
        ((pname, body),) = phases.items()
        where = f"{where} phase {pname!r}"
        if not isinstance(body, dict):
            raise RtschedError(f"{where}: expected a phase object")
    for k in th:
        if k not in _THREAD_KEYS and not _event(k):
            raise RtschedError(f"task {name!r}: field '{k}': not a periodic-thread key rtsched can import")
    wcet, period = 0, None
    for k, v in body.items():
        ev = _event(k)
        if k in ("loop", "cpus", "policy", "priority", "util_min", "util_max") or k.startswith("dl-"):
            continue
        if ev in ("run", "runtime"):
            wcet += _us(v, f"{where}: field '{k}'")
        elif ev == "timer":
            if not isinstance(v, dict) or "period" not in v:
                raise RtschedError(f"{where}: field '{k}': expected a timer object with a period")
            if period is not None:
                raise RtschedError(f"{where}: field '{k}': a second timer; only one periodic timer can be imported")
            period = _us(v["period"], f"{where}: field '{k}.period'")
        elif ev == "sleep":
            if v not in (0,):
                raise RtschedError(f"{where}: field '{k}': a sleep makes the thread's period unknown (use a timer)")
        else:
            raise RtschedError(f"{where}: field '{k}': event not importable (only run, runtime and timer)")
    if period is None or period == 0:
        if "dl-period" in th:
            period = _us(th["dl-period"], f"task {name!r}: field 'dl-period'")
        else:
            raise RtschedError(f"{where}: no timer period and no dl-period; the thread is not periodic")
    if wcet == 0:
        if "dl-runtime" in th:
            wcet = _us(th["dl-runtime"], f"task {name!r}: field 'dl-runtime'")
        else:
            raise RtschedError(f"{where}: no run event and no dl-runtime; the thread has no execution time")
    deadline = _us(th["dl-deadline"], f"task {name!r}: field 'dl-deadline'") if "dl-deadline" in th else period
    try:
        return Task(wcet=wcet, period=period, deadline=deadline, name=name)
    except RtschedError as e:
        raise RtschedError(f"task {name!r}: {e}") from None


def from_rtapp(text: str) -> TaskSet:
    """The periodic task set of an rt-app configuration: one task per thread instance, named
    after the thread (``name``, or ``name-k`` for instance k of several). A thread's WCET is the
    sum of its run (or runtime) events, its period the timer's (else ``dl-period``), its deadline
    ``dl-deadline`` (else the period). ``m`` is the number of CPUs named in ``cpus`` lists, if
    any. Threads that are not periodic (several phases, locks, sleeps, forks ...) are refused with
    the task and field."""
    try:
        doc = json.loads(_strip_comments(text), object_pairs_hook=_no_duplicates)
    except ValueError as e:
        raise RtschedError(f"not an rt-app configuration (invalid JSON: {e})") from None
    except RecursionError:
        raise RtschedError("not an rt-app configuration (JSON nested too deeply)") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("tasks"), dict):
        raise RtschedError("field 'tasks': an rt-app configuration needs a \"tasks\" object")
    if not doc["tasks"]:
        raise RtschedError("field 'tasks': the configuration has no threads")
    tasks: list[Task] = []
    cpus: set[int] = set()
    total = 0
    for name, th in doc["tasks"].items():
        task = _thread_task(name, th)
        instances = th.get("instance", 1)
        if isinstance(instances, bool) or not isinstance(instances, int) or instances < 1:
            raise RtschedError(f"task {name!r}: field 'instance': expected a positive integer, got {_short(instances)}")
        total += instances
        if total > MAX_TASKS:
            raise RtschedError(
                f"task {name!r}: field 'instance': the configuration expands to more than {MAX_TASKS:,} tasks "
                f"(at {total:,} here); rtsched imports at most {MAX_TASKS:,}"
            )
        for k in range(instances):
            label = name if instances == 1 else f"{name}-{k}"
            tasks.append(Task(wcet=task.wcet, period=task.period, deadline=task.deadline, name=label))
        for c in th.get("cpus", []) if isinstance(th.get("cpus"), list) else []:
            if isinstance(c, int) and not isinstance(c, bool):
                cpus.add(c)
    return TaskSet(tasks, m=len(cpus) or None)


# ---------------------------------------------------------------------------------------------
# Logs

#: The columns of an rt-app log row (rt-app's tutorial, "Log and gnuplot"); times in µs except
#: ``start``/``end`` (absolute, µs) and ``perf`` (loops).
LOG_COLUMNS = ("idx", "perf", "run", "period", "start", "end", "rel_st", "slack", "c_duration", "c_period", "wu_lat")


def read_log(text: str, where: str = "log") -> list[dict[str, int]]:
    """The rows of an rt-app per-thread log (``#`` lines are its header), one dict per job with
    the :data:`LOG_COLUMNS`; a malformed row is an error naming its line."""
    rows = []
    for k, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = line.split()
        if len(cells) < len(LOG_COLUMNS):
            raise RtschedError(f"{where}: line {k}: expected {len(LOG_COLUMNS)} columns, got {len(cells)}")
        try:
            rows.append({c: int(v) for c, v in zip(LOG_COLUMNS, cells, strict=False)})
        except ValueError:
            raise RtschedError(f"{where}: line {k}: not integers: {line.strip()!r}") from None
    return rows
