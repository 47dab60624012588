"""The overhead measurement protocol's host side (docs/overheads.md, "Measurement protocol"):
the preflight that reports what on this host can disturb real-time measurements (and with
``isolate`` changes what it may, restoring it afterwards), and the optional cache-polluting
background load of Cerqueira, Vanga & Brandenburg, RTAS 2014 §IV ("a cache-thrashing
background workload") and Brandenburg & Gül, RTSS 2016 §VII ("a cache-polluting background
process was run on each core").

Every reader takes ``root`` (default ``/``) so that a fake ``/proc`` and ``/sys`` tree can be
checked in tests; nothing here raises on a missing or refused file: what could not be read is
reported as such.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import Any

#: Linux ≥ 6.12 serves fair (SCHED_OTHER) tasks from a deadline server of this runtime per
#: period by default (kernel/sched/fair.c, ``fair_server_init``: 50 ms per 1 s).
FAIR_SERVER_DEFAULT_NS = (50_000_000, 1_000_000_000)
#: The most threads preflight lists by name (the count is always complete).
MAX_LISTED = 20
#: CAP_SYS_NICE's bit in the capability masks of /proc/PID/status.
CAP_SYS_NICE = 23


def _path(root: str, p: str) -> str:
    return os.path.join(root, p.lstrip("/"))


def _read(root: str, p: str) -> tuple[str | None, str | None]:
    """(text, None) or (None, why): "missing" or "refused" (with the error)."""
    try:
        with open(_path(root, p)) as f:
            return f.read(), None
    except FileNotFoundError:
        return None, "missing"
    except PermissionError as e:
        return None, f"refused ({e.strerror})"
    except OSError as e:
        return None, f"unreadable ({e.strerror})"


def parse_cpu_list(text: str) -> list[int]:
    """``"0-2,5"`` -> ``[0, 1, 2, 5]`` (the kernel's CPU list format); a bad list raises
    ValueError naming it."""
    out: list[int] = []
    text = text.strip()
    if not text:
        return out
    for part in text.split(","):
        a, sep, b = part.partition("-")
        if not a.strip().isdigit() or (sep and not b.strip().isdigit()):
            raise ValueError(f"bad CPU list {text!r}")
        lo, hi = int(a), int(b) if sep else int(a)
        if hi < lo or hi - lo > 65_536:
            raise ValueError(f"bad CPU list {text!r}")
        out.extend(range(lo, hi + 1))
    return out


def kernel_version(root: str = "/") -> tuple[int, int] | None:
    text, _ = _read(root, "/proc/sys/kernel/osrelease")
    m = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def scheduling_class(root: str = "/", rt_priority: int | None = None) -> dict:
    """Which class the run uses and whether SCHED_FIFO is available to this process: root, or
    CAP_SYS_NICE in its effective capabilities, or an RLIMIT_RTPRIO above 0."""
    status, why = _read(root, "/proc/self/status")
    cap = None
    if status:
        m = re.search(r"^CapEff:\s*([0-9a-fA-F]+)", status, re.M)
        if m:
            cap = bool(int(m.group(1), 16) >> CAP_SYS_NICE & 1)
    try:
        import resource

        rtprio = resource.getrlimit(resource.RLIMIT_RTPRIO)[0]
    except (ImportError, AttributeError, OSError):
        rtprio = 0
    allowed = bool(cap) or rtprio == -1 or rtprio > 0
    return {
        "requested": "SCHED_OTHER" if rt_priority is None else f"SCHED_FIFO {rt_priority}",
        "fifo_allowed": allowed,
        "cap_sys_nice": cap,
        "rlimit_rtprio": rtprio,
        **({"error": f"/proc/self/status {why}"} if why else {}),
    }


def rt_throttling(root: str = "/") -> dict:
    """``sched_rt_runtime_us`` / ``sched_rt_period_us``: RT tasks may run ``runtime`` of each
    ``period`` µs per CPU; the rest is left to other tasks (-1: no throttling)."""
    rt, why_rt = _read(root, "/proc/sys/kernel/sched_rt_runtime_us")
    per, why_per = _read(root, "/proc/sys/kernel/sched_rt_period_us")
    out: dict[str, Any] = {"runtime_us": None, "period_us": None}
    try:
        out["runtime_us"] = int(rt) if rt is not None else None
        out["period_us"] = int(per) if per is not None else None
    except ValueError:
        out["error"] = "unparsable sched_rt_runtime_us / sched_rt_period_us"
        return out
    if why_rt or why_per:
        out["error"] = f"sched_rt_runtime_us {why_rt or 'read'}, sched_rt_period_us {why_per or 'read'}"
        return out
    r, p = out["runtime_us"], out["period_us"]
    if r is not None and p:
        if r < 0:
            out["cost"] = "none: RT throttling is off"
        else:
            out["cost"] = (
                f"SCHED_FIFO threads may run {r} of every {p} µs per CPU; up to {p - r} µs per period are left "
                "to other tasks"
            )
    return out


def fair_server(cpus: Sequence[int], root: str = "/") -> dict:
    """The deadline server of fair tasks (Linux ≥ 6.12; debugfs
    ``/sys/kernel/debug/sched/fair_server/cpuN/{runtime,period}``, ns). Where debugfs is not
    mounted or refuses even root, the kernel's default is assumed and said so."""
    ver = kernel_version(root)
    out: dict[str, Any] = {"kernel": ".".join(map(str, ver)) if ver else None}
    if ver is not None and ver < (6, 12):
        out["present"] = False
        out["cost"] = "none: no fair server before Linux 6.12"
        return out
    out["present"] = True if ver else None
    per_cpu: dict[str, Any] = {}
    errors: list[str] = []
    for c in cpus:
        vals = {}
        for k in ("runtime", "period"):
            text, why = _read(root, f"/sys/kernel/debug/sched/fair_server/cpu{c}/{k}")
            if why:
                errors.append(f"cpu{c}/{k} {why}")
                break
            try:
                vals[f"{k}_ns"] = int((text or "").strip())
            except ValueError:
                errors.append(f"cpu{c}/{k} unparsable")
                break
        else:
            per_cpu[str(c)] = vals
    out["cpus"] = per_cpu
    if errors:
        mounted = os.path.isdir(_path(root, "/sys/kernel/debug/sched"))
        out["readable"] = False
        out["error"] = ("debugfs " + ("refused: " if mounted else "not mounted or not readable: ")) + "; ".join(
            errors[:4]
        )
    else:
        out["readable"] = True
    worst = max(
        (v["runtime_ns"] / v["period_ns"] for v in per_cpu.values() if v.get("period_ns")),
        default=None,
    )
    if not per_cpu or len(per_cpu) < len(cpus):
        r, p = FAIR_SERVER_DEFAULT_NS
        out["assumed"] = {"runtime_ns": r, "period_ns": p}
        worst = max(worst or 0.0, r / p)
    if worst is not None and worst > 0:
        out["cost"] = (
            f"up to {worst:.1%} of each period taken from SCHED_FIFO threads on a CPU where other (fair) tasks are "
            "runnable"
        )
    elif worst == 0:
        out["cost"] = "none: the fair server has no runtime on the measured CPUs"
    return out


def _stat_fields(text: str) -> tuple[str, list[str]] | None:
    """(comm, fields from field 3 on) of a /proc/PID/stat line; comm may hold spaces and ')'."""
    lp, rp = text.find("("), text.rfind(")")
    if lp < 0 or rp < lp:
        return None
    return text[lp + 1 : rp], text[rp + 1 :].split()


#: The scheduling policies of /proc/PID/stat field 41 by number.
POLICIES = {0: "SCHED_OTHER", 1: "SCHED_FIFO", 2: "SCHED_RR", 3: "SCHED_BATCH", 5: "SCHED_IDLE", 6: "SCHED_DEADLINE"}


def runnable_tasks(cpus: Sequence[int], root: str = "/", exclude_pids: Sequence[int] = ()) -> dict:
    """Threads in state R (``/proc/*/task/*/stat`` field 3) last on a measured CPU (field 39),
    besides ``exclude_pids`` (this process), each with its ``policy`` and ``rt_priority``
    (fields 41 and 40) where the line has them."""
    want = set(cpus)
    found: list[dict] = []
    proc = _path(root, "/proc")
    try:
        pids = [p for p in os.listdir(proc) if p.isdigit()]
    except OSError as e:
        return {"count": None, "error": f"/proc unreadable ({e.strerror})"}
    for pid in pids:
        if int(pid) in exclude_pids:
            continue
        try:
            paths = [
                (t, f"/proc/{pid}/task/{t}/stat") for t in os.listdir(os.path.join(proc, pid, "task")) if t.isdigit()
            ]
        except OSError:  # no task directory (or the process ended): the process itself
            paths = [(pid, f"/proc/{pid}/stat")]
        for tid, rel in paths:
            text, _ = _read(root, rel)
            parsed = _stat_fields(text or "")
            if parsed is None:
                continue
            comm, f = parsed
            # f[0] is field 3 (state); field 39 (processor) is f[36].
            if len(f) > 36 and f[0] == "R" and f[36].isdigit() and int(f[36]) in want:
                task = {"pid": int(pid), "tid": int(tid), "comm": comm, "cpu": int(f[36])}
                # Fields 40 (rt_priority) and 41 (policy: 1 SCHED_FIFO, 2 SCHED_RR, 6 SCHED_DEADLINE).
                if len(f) > 38 and f[37].isdigit() and f[38].isdigit():
                    task["policy"], task["rt_priority"] = POLICIES.get(int(f[38]), f"policy {f[38]}"), int(f[37])
                found.append(task)
    found.sort(key=lambda d: (d["cpu"], d["pid"], d["tid"]))
    return {"count": len(found), "tasks": found[:MAX_LISTED]}


def irq_affinity(cpus: Sequence[int], root: str = "/") -> dict:
    """IRQs whose ``/proc/irq/N/smp_affinity_list`` includes a measured CPU."""
    want = set(cpus)
    base = _path(root, "/proc/irq")
    try:
        irqs = sorted((d for d in os.listdir(base) if d.isdigit()), key=int)
    except OSError as e:
        return {"count": None, "error": f"/proc/irq unreadable ({e.strerror})"}
    hit: list[dict] = []
    errors = 0
    for irq in irqs:
        text, why = _read(root, f"/proc/irq/{irq}/smp_affinity_list")
        if why:
            errors += 1
            continue
        try:
            aff = parse_cpu_list(text or "")
        except ValueError:
            errors += 1
            continue
        if want & set(aff):
            hit.append({"irq": int(irq), "cpus": aff})
    out: dict[str, Any] = {"count": len(hit), "irqs": hit[:MAX_LISTED]}
    if errors:
        out["unreadable"] = errors
    return out


def cpufreq(cpus: Sequence[int], root: str = "/") -> dict:
    """The frequency governor of each measured CPU (None: no cpufreq, the firmware or the
    hypervisor decides)."""
    out: dict[str, Any] = {}
    for c in cpus:
        text, _ = _read(root, f"/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor")
        out[str(c)] = text.strip() if text else None
    return out


def preflight(
    cpus: Sequence[int], *, root: str = "/", rt_priority: int | None = None, exclude_pids: Sequence[int] | None = None
) -> dict:
    """What on this host can disturb a measurement on ``cpus``: the keys ``scheduling_class``,
    ``rt_throttling``, ``fair_server``, ``runnable``, ``irq_affinity``, ``cpufreq`` (docs/
    overheads.md, "Measurement protocol")."""
    cpus = list(cpus)
    if exclude_pids is None:
        exclude_pids = [os.getpid()] if root == "/" else []
    return {
        "cpus": cpus,
        "scheduling_class": scheduling_class(root, rt_priority),
        "rt_throttling": rt_throttling(root),
        "fair_server": fair_server(cpus, root),
        "runnable": runnable_tasks(cpus, root, exclude_pids),
        "irq_affinity": irq_affinity(cpus, root),
        "cpufreq": cpufreq(cpus, root),
    }


def uptime(root: str = "/") -> float | None:
    """Seconds since boot (``/proc/uptime``), the clock of the kernel log's timestamps."""
    text, _ = _read(root, "/proc/uptime")
    try:
        return float((text or "").split()[0])
    except (IndexError, ValueError):
        return None


def kernel_log(root: str = "/") -> tuple[str | None, str | None]:
    """The kernel log (``dmesg``; a fake tree's ``dmesg.txt`` when ``root`` is not ``/``) as
    (text, None) or (None, why it could not be read: not permitted, no dmesg)."""
    if root != "/":
        return _read(root, "/dmesg.txt")
    try:
        out = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"dmesg unavailable ({e.__class__.__name__})"
    if out.returncode != 0:
        return None, f"dmesg refused ({out.stderr.strip()[:80] or out.returncode})"
    return out.stdout, None


#: The kernel's message when it first throttles real-time threads (once per boot).
RT_THROTTLED_MESSAGE = "sched: RT throttling activated"


def rt_throttled_at(log: str) -> list[float]:
    """The kernel-log times (seconds since boot) of :data:`RT_THROTTLED_MESSAGE`."""
    out = []
    for m in re.finditer(r"^\[\s*(\d+\.\d+)\]\s*" + re.escape(RT_THROTTLED_MESSAGE), log, re.M):
        out.append(float(m.group(1)))
    return out


def _names(tasks: list[dict], limit: int = 4) -> str:
    return ", ".join(f"{t['comm']}[{t['tid']}]@{t['cpu']}" for t in tasks[:limit]) + (
        ", ..." if len(tasks) > limit else ""
    )


def disturbance_causes(
    cpus: Sequence[int],
    rt_priority: int | None,
    *,
    before: dict | None = None,
    after: dict | None = None,
    window: tuple[float | None, float | None] = (None, None),
    loads: dict | None = None,
    cap: dict | None = None,
    root: str = "/",
    log: str | None = None,
) -> list[str]:
    """What this machine says disturbed a run on ``cpus``, one line each with its numbers
    (docs/runtime.md, "Trustworthy timing"): RT throttling (the kernel log's
    :data:`RT_THROTTLED_MESSAGE` during the run's ``window``, seconds since boot), a per-CPU
    load (``loads``: CPU -> utilization) above the share SCHED_FIFO threads get (``cap``:
    :func:`rtsched.rtlimits.fifo_capacity`), the fair server of Linux ≥ 6.12 with normal tasks
    runnable on the CPUs, and other runnable tasks on the CPUs (``before``/``after``:
    :func:`runnable_tasks` taken before and after the run; at SCHED_FIFO only real-time threads
    at the run's priority or above count). ``log``: the kernel log text (default
    :func:`kernel_log`). An empty list: the machine names no cause."""
    out: list[str] = []
    fifo = rt_priority is not None
    rt = rt_throttling(root)
    throttling_on = isinstance(rt.get("runtime_us"), int) and rt["runtime_us"] >= 0
    share_text = f"kernel.sched_rt_runtime_us {rt.get('runtime_us')} of sched_rt_period_us {rt.get('period_us')}"
    if fifo and throttling_on:
        if log is None:
            log, _ = kernel_log(root)
        start, end = window
        during = [t for t in rt_throttled_at(log or "") if start is not None and end is not None and start <= t <= end]
        if during:
            out.append(
                "RT throttling: the kernel throttled SCHED_FIFO threads during the run (kernel log at "
                f"{during[0]:.1f} s since boot, the run {start:.1f}-{end:.1f} s: '{RT_THROTTLED_MESSAGE}'); they may "
                f"run {share_text} µs per CPU"
            )
    if fifo and loads and cap is not None and cap.get("share") is not None:
        over = [(c, u) for c, u in sorted(loads.items()) if u > cap["share"]]
        if over:
            out.append(
                "a per-CPU load above the SCHED_FIFO share: "
                + ", ".join(f"CPU {c} at {float(u):.1%}" for c, u in over)
                + f" > {float(cap['share']):.1%} ({cap['text']}); the kernel stops the run's threads for the rest of "
                "each period"
            )
    tasks: dict[int, dict] = {}
    for snap in (before, after):
        for t in (snap or {}).get("tasks") or []:
            tasks.setdefault(t["tid"], t)
    found = sorted(tasks.values(), key=lambda t: (t["cpu"], t["tid"]))
    fair = [t for t in found if t.get("policy", "SCHED_OTHER") in ("SCHED_OTHER", "SCHED_BATCH", "SCHED_IDLE")]
    if fifo and fair:
        fs = fair_server(cpus, root)
        if fs.get("present"):
            out.append(
                f"the fair server (Linux {fs.get('kernel')} ≥ 6.12): {fs.get('cost')}; {len(fair)} normal tasks were "
                f"runnable on the run's CPUs ({_names(fair)})"
            )
    if fifo:
        rivals = [
            t
            for t in found
            if t.get("policy") in ("SCHED_FIFO", "SCHED_RR", "SCHED_DEADLINE")
            and (t.get("policy") == "SCHED_DEADLINE" or t.get("rt_priority", 0) >= rt_priority)
        ]
        if rivals:
            out.append(
                f"{len(rivals)} real-time threads at priority {rt_priority} or above were runnable on the run's CPUs "
                f"({_names(rivals)})"
            )
    elif found:
        load, _ = _read(root, "/proc/loadavg")
        la = (load or "").split()[:1]
        out.append(
            f"{len(found)} other runnable tasks on the run's CPUs {','.join(map(str, cpus))} ({_names(found)})"
            + (f"; load average {la[0]}" if la else "")
            + " — at normal priority they share the CPUs with the run"
        )
    return out


def format_preflight(p: dict) -> list[str]:
    """The preflight as lines to print."""
    sc, rt, fs = p["scheduling_class"], p["rt_throttling"], p["fair_server"]
    run, irq = p["runnable"], p["irq_affinity"]
    lines = [
        f"scheduling class: {sc['requested']} (SCHED_FIFO {'allowed' if sc['fifo_allowed'] else 'NOT allowed'})",
        f"RT throttling: {rt.get('cost') or rt.get('error') or 'unknown'}",
        "fair server: "
        + (fs.get("cost") or "unknown")
        + (f" [{fs['error']}; assumed the default 50 ms per 1 s]" if fs.get("error") and fs.get("assumed") else ""),
    ]
    if run.get("count") is None:
        lines.append(f"runnable tasks on the measured CPUs: unknown ({run.get('error')})")
    else:
        names = ", ".join(f"{t['comm']}[{t['tid']}]@{t['cpu']}" for t in run["tasks"][:5])
        lines.append(f"runnable tasks on the measured CPUs: {run['count']}" + (f" ({names})" if names else ""))
    if irq.get("count") is None:
        lines.append(f"IRQs that may hit the measured CPUs: unknown ({irq.get('error')})")
    else:
        lines.append(f"IRQs that may hit the measured CPUs: {irq['count']}")
    govs = sorted({str(g) for g in p["cpufreq"].values()})
    lines.append(f"cpufreq governor: {', '.join(govs)}" + (" (no cpufreq)" if govs == ["None"] else ""))
    for c in (p.get("isolate") or {}).get("changed", []):
        lines.append(f"isolate: changed {c['what']} ({c['from']} -> {c['to']}); restored after the run")
    for r in (p.get("isolate") or {}).get("refused", []):
        lines.append(f"isolate: could not change {r}")
    return lines


def _write(root: str, p: str, value: str) -> str | None:
    """Writes ``value``; None or why not."""
    try:
        with open(_path(root, p), "w") as f:
            f.write(value)
        return None
    except OSError as e:
        return f"{p}: {e.strerror or e}"


@contextlib.contextmanager
def isolated(cpus: Sequence[int], *, root: str = "/", report: dict | None = None) -> Iterator[dict]:
    """Changes what the preflight found and this process may change, for the duration of the
    ``with`` block, and restores it on exit — errors and Ctrl-C included: RT throttling off
    (``sched_rt_runtime_us`` = -1), the fair server's runtime on the measured CPUs 0, IRQs
    moved to the other CPUs (when there are any), the ``performance`` cpufreq governor. Yields
    ``{"changed": [...], "refused": [...]}`` (also stored as ``report["isolate"]``)."""
    cpus = list(cpus)
    undo: list[tuple[str, str]] = []
    changed: list[dict] = []
    refused: list[str] = []
    state = {"changed": changed, "refused": refused}
    if report is not None:
        report["isolate"] = state

    def change(p: str, new: str) -> None:
        old, why = _read(root, p)
        if old is None:
            refused.append(f"{p}: {why}")
            return
        old = old.strip()
        if old == new:
            return
        err = _write(root, p, new)
        if err:
            refused.append(err)
            return
        undo.append((p, old))
        changed.append({"what": p, "from": old, "to": new})

    try:
        change("/proc/sys/kernel/sched_rt_runtime_us", "-1")
        for c in cpus:
            change(f"/sys/kernel/debug/sched/fair_server/cpu{c}/runtime", "0")
        online, _ = _read(root, "/sys/devices/system/cpu/online")
        try:
            others = sorted(set(parse_cpu_list(online or "")) - set(cpus))
        except ValueError:
            others = []
        irqs = irq_affinity(cpus, root)
        if others:
            target = ",".join(map(str, others))
            for i in irqs.get("irqs", []):
                change(f"/proc/irq/{i['irq']}/smp_affinity_list", target)
        elif irqs.get("count"):
            refused.append("IRQ affinity: no CPU outside the measured ones to move the IRQs to")
        for c in cpus:
            if cpufreq([c], root)[str(c)] is not None:
                change(f"/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor", "performance")
        yield state
    finally:
        for p, old in reversed(undo):
            err = _write(root, p, old)
            if err:
                refused.append(f"restore {err}")


# ---------------------------------------------------------------------------------------------
# Cache-polluting background load.

#: The working set walked per CPU when the last-level cache size cannot be read.
DEFAULT_WSS_BYTES = 64 << 20
#: At most this fraction of MemAvailable goes to the background working sets together.
MAX_MEMORY_FRACTION = 0.25

_WALKER = """
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the parent
if os.getppid() != int(sys.argv[3]):
    sys.exit(0)
cpu, size = int(sys.argv[1]), int(sys.argv[2])
os.sched_setaffinity(0, {cpu})
try:
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
except (AttributeError, OSError):
    os.nice(19)
import numpy as np
a = np.zeros(size, dtype=np.uint8)
sys.stdout.write("ready\\n"); sys.stdout.flush()
while True:
    a[::64] += 1  # one write per 64-byte line, the whole set each pass
"""


def llc_bytes(root: str = "/", cpu: int = 0) -> int | None:
    """The largest cache of ``cpu`` (``/sys/devices/system/cpu/cpuN/cache/index*/size``)."""
    base = _path(root, f"/sys/devices/system/cpu/cpu{cpu}/cache")
    best = None
    try:
        entries = os.listdir(base)
    except OSError:
        return None
    for d in entries:
        if not d.startswith("index"):
            continue
        text, _ = _read(root, f"/sys/devices/system/cpu/cpu{cpu}/cache/{d}/size")
        m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)\s*", text or "")
        if not m:
            continue
        size = int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]
        best = size if best is None else max(best, size)
    return best


def _mem_available(root: str = "/") -> int | None:
    text, _ = _read(root, "/proc/meminfo")
    m = re.search(r"^MemAvailable:\s*(\d+)\s*kB", text or "", re.M)
    return int(m.group(1)) * 1024 if m else None


def background_plan(cpus: Sequence[int], root: str = "/", factor: int = 2) -> dict:
    """What ``--background cache`` runs: per measured CPU one walker of ``factor`` × the
    last-level cache, capped so that all together take at most :data:`MAX_MEMORY_FRACTION` of
    MemAvailable (the cap is reported)."""
    llc = llc_bytes(root)
    want = factor * llc if llc else DEFAULT_WSS_BYTES
    avail = _mem_available(root)
    size = want
    capped = False
    if avail and cpus and size * len(cpus) > MAX_MEMORY_FRACTION * avail:
        size = int(MAX_MEMORY_FRACTION * avail / len(cpus)) // 4096 * 4096
        capped = True
    return {
        "kind": "cache",
        "cpus": list(cpus),
        "llc_bytes": llc,
        "working_set_bytes": size,
        "wanted_bytes": want,
        "capped_by_memory": capped,
        "priority": "SCHED_IDLE (nice 19 where refused)",
    }


class BackgroundLoad:
    """Per-CPU cache-polluting walkers (one process each, pinned, SCHED_IDLE): ``start()``
    waits until each has its working set, ``stop()`` kills and reaps them; as a context
    manager it stops them on exit, errors and Ctrl-C included. A walker also dies with its
    parent (PR_SET_PDEATHSIG)."""

    def __init__(self, plan: dict):
        self.plan = plan
        self.procs: list[subprocess.Popen] = []

    def start(self) -> None:
        try:
            for c in self.plan["cpus"]:
                p = subprocess.Popen(
                    [sys.executable, "-c", _WALKER, str(c), str(self.plan["working_set_bytes"]), str(os.getpid())],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                self.procs.append(p)
            for p in self.procs:
                line = p.stdout.readline() if p.stdout else ""
                if line.strip() != "ready":
                    err = p.stderr.read() if p.stderr and p.poll() is not None else ""
                    raise RuntimeError(f"a background walker did not start: {err.strip()[-300:] or 'no output'}")
        except BaseException:
            self.stop()
            raise

    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
        for p in self.procs:
            p.wait()
            for s in (p.stdout, p.stderr):
                if s:
                    s.close()
        self.procs = []

    def __enter__(self) -> BackgroundLoad:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
