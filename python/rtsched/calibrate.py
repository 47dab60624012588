"""This machine's calibration for the trust verdict (docs/runtime.md, "Trustworthy timing").

``rtsched calibrate`` (and, once, the first run that needs it) measures how late this
machine's timers wake a thread and how long it takes a busy thread's CPU away when nothing
disturbs it (``rtsched_runtime::measure_calibration``: the median over five windows of each
window's maximum, at SCHED_FIFO where this process may). The result is kept per user in
``$XDG_CACHE_HOME/rtsched/machine.json`` (default ``~/.cache/rtsched/machine.json``), keyed by
the host name, the kernel release and the CPU model: a calibration of another machine or kernel
is measured again. A run's verdict is then judged against it and against the mechanism's
reaction time from its shipped overhead model (:func:`reaction_model`), never against the
run's own maxima.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
from pathlib import Path

from . import _core
from . import validate as v
from ._core import RtschedError

#: The calibration file's ``format``.
FORMAT = "rtsched-machine-calibration"
#: How long a calibration measures when a run needs one and none is kept (0.5 s).
AUTO_BUDGET_NS = 500_000_000
#: The SCHED_FIFO priority the calibration thread asks for (refused: it measures at normal
#: priority and says so).
RT_PRIORITY = 50
#: A calibrated floor above this is capped by the verdict and not kept (a busy machine).
CAP_NS: int = _core.CALIBRATION_CAP_NS
#: The overhead-model set whose model of a mechanism gives its reaction time (then a
#: top-level ``overheads-<mechanism>-*.json``).
REACTION_MODELS = "vm-2cpu-protocol"


def cache_path() -> Path:
    """Where the calibration is kept: ``$XDG_CACHE_HOME/rtsched/machine.json`` (the XDG base
    directory rule; ``~/.cache`` when unset or not absolute)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "rtsched" / "machine.json"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_key() -> dict:
    """What a calibration is kept for: ``hostname``, ``kernel`` (release) and ``cpu_model``."""
    return {"hostname": platform.node(), "kernel": os.uname().release, "cpu_model": _cpu_model()}


def measure(budget: int | str = AUTO_BUDGET_NS, rt_priority: int | None = RT_PRIORITY) -> dict:
    """Measures this machine's calibration within ``budget`` (a duration, 10 ms to 60 s): the
    calibration dict (``format``, ``key``, ``measured_at``, ``budget_ns``, ``timer_floor_ns``,
    ``noise_ns``, the windows' maxima, ``class``)."""
    budget_ns = v.duration(budget, "budget", 1)
    rt_priority = v.optional_integer(rt_priority, "rt_priority", 1, 99)
    cal = json.loads(_core.calibrate(budget_ns, rt_priority))
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"format": FORMAT, "version": 1, "key": machine_key(), "measured_at": now, "budget_ns": budget_ns, **cal}


def disturbed(cal: dict) -> bool:
    """Whether a calibration's floors are above :data:`CAP_NS` (measured on a busy machine)."""
    return max(int(cal.get("timer_floor_ns", 0)), int(cal.get("noise_ns", 0))) > CAP_NS


def save(cal: dict, path: str | os.PathLike | None = None) -> Path:
    """Writes ``cal`` to ``path`` (default :func:`cache_path`) atomically (a temporary file in
    the same folder, renamed); the folder is made if missing."""
    p = Path(path) if path is not None else cache_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(cal, indent=1) + "\n")
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)
    return p


def load(path: str | os.PathLike | None = None) -> tuple[dict | None, str]:
    """The kept calibration of this machine and a note: (the dict, where it came from), or (None,
    why there is none: missing, unreadable, not a calibration, or another machine's)."""
    p = Path(path) if path is not None else cache_path()
    try:
        cal = json.loads(p.read_text())
    except FileNotFoundError:
        return None, f"none kept in {p}"
    except (OSError, ValueError) as e:
        return None, f"{p} is unreadable ({e.__class__.__name__}); it is measured again"
    if not isinstance(cal, dict) or cal.get("format") != FORMAT:
        return None, f"{p} is not an rtsched calibration; it is measured again"
    if cal.get("key") != machine_key():
        return None, f"{p} was measured on another machine or kernel ({cal.get('key')}); it is measured again"
    for k in ("timer_floor_ns", "noise_ns"):
        if not isinstance(cal.get(k), int) or isinstance(cal.get(k), bool) or cal[k] < 0:
            return None, f"{p}: field '{k}' is not an integer of ns >= 0; it is measured again"
    return cal, f"{p} (measured {cal.get('measured_at', '?')})"


def describe(cal: dict) -> str:
    """One line: the floors, the class, when."""
    t = _core.format_time
    return (
        f"timer floor {t(cal['timer_floor_ns'])}, scheduling noise {t(cal['noise_ns'])} "
        f"({cal.get('class', '?')}; medians of {len(cal.get('timer_windows_ns') or [])} windows' maxima, "
        f"measured {cal.get('measured_at', '?')})"
    )


def for_run(
    calibration: str | dict | os.PathLike | None = "auto", quiet: bool = False
) -> tuple[str | None, str | None]:
    """The calibration a run is judged against, as (its JSON text, None) or (None, why there is
    none). ``"auto"``: the kept one of this machine, else measured now (0.5 s, said on stderr)
    and kept; ``"skip"`` or None: none (the verdict uses its default floor and says so); a dict
    or a file path: that calibration."""
    if calibration is None or calibration == "skip":
        return None, "skipped (--no-calibrate)"
    if isinstance(calibration, dict):
        return json.dumps(calibration), None
    if calibration != "auto":
        path = Path(v.path(calibration, "calibration"))
        try:
            text = path.read_text()
            json.loads(text)
        except (OSError, ValueError) as e:
            raise RtschedError(f"field 'calibration': {path}: not a readable JSON file ({e})") from None
        return text, None
    cal, note = load()
    if cal is not None:
        return json.dumps(cal), None
    if not quiet:
        print(
            f"rtsched: calibrating this machine's timer floor and scheduling noise for the trust verdict "
            f"({AUTO_BUDGET_NS / 1e9:g} s, once; {note}; `rtsched calibrate` redoes it, --no-calibrate skips it)",
            file=sys.stderr,
        )
    try:
        cal = measure(AUTO_BUDGET_NS)
    except RtschedError as e:
        return None, f"the calibration failed: {e}"
    if disturbed(cal):
        if not quiet:
            print(
                f"rtsched: warning: the calibration was disturbed ({describe(cal)}): not kept; the verdict caps it at "
                f"{CAP_NS / 1e6:g} ms; rerun `rtsched calibrate` on a quiet machine",
                file=sys.stderr,
            )
        return json.dumps(cal), None
    try:
        save(cal)
    except OSError as e:
        if not quiet:
            print(f"rtsched: warning: cannot keep the calibration in {cache_path()}: {e.strerror}", file=sys.stderr)
    return json.dumps(cal), None


def reaction_model(scheduler: str, overheads: str | os.PathLike | None = None) -> tuple[str, str] | None:
    """The overhead model a run's reaction time is taken from, as (its name, its JSON text):
    ``overheads`` if given (a file, a set or a shipped name, as ``--overheads`` resolves it),
    else the shipped set :data:`REACTION_MODELS`' model of ``scheduler``, else a shipped
    ``overheads-<scheduler>-*.json``; None when none exists (the verdict then counts no reaction
    time and says so)."""
    from . import shipped

    if overheads is not None:
        path = shipped.resolve_model_file(overheads, scheduler)
        if path.lstrip().startswith("{"):
            return "the given model", path
        return os.path.basename(path), Path(path).read_text()
    try:
        path = shipped.resolve_model_file(REACTION_MODELS, scheduler)
    except RtschedError:
        prefix = f"overheads-{scheduler}-"
        named = sorted(n for n in shipped.models() if n.startswith(prefix) and n[len(prefix) :][:1].isdigit())
        if not named:
            return None
        path = str(shipped.models()[named[0]])
    return f"{Path(path).parent.name}/{Path(path).name}", Path(path).read_text()
