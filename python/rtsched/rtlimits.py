"""What this machine lets a run use: the share of each CPU that SCHED_FIFO threads get and the load
a placement puts on each CPU (docs/runtime.md, "The SCHED_FIFO limit"). What a mechanism
with a dedicated CPU can run here ("Dedicated CPUs") is the runtime's advice
(``rtsched_runtime::request::dedicated_advice``), given when a run is refused.

Linux lets real-time threads use ``kernel.sched_rt_runtime_us`` of every
``kernel.sched_rt_period_us`` (950,000 of 1,000,000 µs by default: 95%) and throttles them for
the rest ("RT throttling activated" in dmesg); ``-1`` lifts the limit. From Linux 6.12 the fair
server (``dl_server``, 50 ms every 1 s per CPU by default, tunable as root in
``/sys/kernel/debug/sched/fair_server/cpuN/``) also runs normal tasks ahead of SCHED_FIFO
whenever one is runnable on the CPU. The kernel's own reader of the first limit is
``rt_bandwidth_limit`` in crates/runtime/src/backend/kernel_sd.rs (for SCHED_DEADLINE admission);
this one serves the Python front, which has no binding to it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._core import TaskSet

PROC = Path("/proc/sys/kernel")
DEBUGFS_FAIR = Path("/sys/kernel/debug/sched/fair_server")
#: The fair server's default reservation (Linux ≥ 6.12): 50 ms every 1 s.
FAIR_DEFAULT_NS = (50_000_000, 1_000_000_000)


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _kernel_version(release: str | None = None) -> tuple[int, int] | None:
    text = release if release is not None else os.uname().release
    parts = []
    for piece in text.replace("-", ".").split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit())
        if not digits:
            return None
        parts.append(int(digits))
    return (parts[0], parts[1]) if len(parts) == 2 else None


def fifo_capacity(proc: Path = PROC, release: str | None = None, fair_dir: Path = DEBUGFS_FAIR) -> dict:
    """The share of each CPU SCHED_FIFO threads get here, as ``{"share": Fraction | None (no
    limit), "rt_runtime_us", "rt_period_us" (None when unreadable), "fair": (runtime_ns,
    period_ns, where) or None (before Linux 6.12), "text": the numbers for a message}``. The
    share is the lower of the RT throttling limit and what the fair server leaves."""
    runtime, period = _read_int(proc / "sched_rt_runtime_us"), _read_int(proc / "sched_rt_period_us")
    share: Fraction | None = None
    parts = []
    if runtime is not None and period:
        if runtime >= 0:
            share = Fraction(runtime, period)
            parts.append(
                f"kernel.sched_rt_runtime_us {runtime} / sched_rt_period_us {period} = {float(share):.1%}, "
                "RT throttling"
            )
        else:
            parts.append("kernel.sched_rt_runtime_us = -1: RT throttling off")
    fair = None
    version = _kernel_version(release)
    if version is not None and version >= (6, 12):
        fr, fp = _read_int(fair_dir / "cpu0" / "runtime"), _read_int(fair_dir / "cpu0" / "period")
        if fr is not None and fp:
            fair = (fr, fp, f"{fair_dir}/cpu0")
        else:
            fair = (*FAIR_DEFAULT_NS, "the default")
        left = 1 - Fraction(fair[0], fair[1])
        share = left if share is None else min(share, left)
        parts.append(
            f"the fair server of Linux ≥ 6.12 runs normal tasks ahead of SCHED_FIFO for {fair[0] / 1e6:g} ms every "
            f"{fair[1] / 1e6:g} ms ({fair[2]}) whenever one is runnable on the CPU"
        )
    return {
        "share": share,
        "rt_runtime_us": runtime,
        "rt_period_us": period,
        "fair": fair,
        "text": "; ".join(parts) if parts else "the limits in /proc/sys/kernel could not be read",
    }


def placement_loads(
    ts: TaskSet, cpus: Sequence[int], partition: list | None = None, reservations: str | dict | None = None
) -> dict[int, Fraction]:
    """CPU -> the utilization a run puts on it: a partition's tasks, an SP-RES placement's
    reservations (budget / period; the placement's JSON object or text), or, for a global
    scheduler, the set's U spread evenly."""
    if reservations is not None:
        p = json.loads(reservations) if isinstance(reservations, str) else reservations
        loads = {c: Fraction(0) for c in cpus}
        for i, cpu in enumerate(p.get("cpus") or []):
            if i < len(cpus):
                loads[cpus[i]] = sum(
                    (Fraction(int(r["budget"]), int(r["period"])) for r in cpu.get("reservations") or []),
                    Fraction(0),
                )
        return loads
    if partition is not None:
        return {
            cpus[i]: sum((Fraction(ts[k].wcet, ts[k].period) for k in tasks), Fraction(0))
            for i, tasks in enumerate(partition)
            if i < len(cpus)
        }
    total = sum((Fraction(t.wcet, t.period) for t in ts), Fraction(0))
    return {c: total / len(cpus) for c in cpus} if cpus else {}


def overloaded(loads: dict[int, Fraction], cap: dict, spread: bool = False) -> str | None:
    """A warning naming the CPUs whose load is above the SCHED_FIFO share (None: none is)."""
    share = cap["share"]
    if share is None:
        return None
    over = [(c, u) for c, u in sorted(loads.items()) if u > share]
    if not over:
        return None
    what = (
        "the set's utilization per CPU is"
        if spread
        else ("the placement loads " + ", ".join(f"CPU {c} to {float(u):.1%}" for c, u in over))
    )
    if spread:
        what += f" {float(over[0][1]):.1%}"
    return (
        f"{what}, above the {float(share):.1%} of each CPU that SCHED_FIFO threads get here ({cap['text']}): "
        "the kernel will stop the run's threads for the rest of each period and jobs will miss for that, not for "
        "the scheduler; lower the load, use more CPUs, or as root lift the limit for the run "
        "(sysctl kernel.sched_rt_runtime_us=-1, and restore it after)"
    )


def spinning(cap: dict, what: str, cpus: Sequence[int], delays: str, instead: str) -> str | None:
    """A warning for SCHED_FIFO threads that never sleep on ``cpus`` while the kernel limits
    SCHED_FIFO (None: it does not): G-EDF-MP's ``dsp=spin`` (the scheduling processor) and the
    workers of ``idle="spin"`` (G-EDF-MP's spinning clients). ``what`` names the threads,
    ``delays`` what waits while the kernel stops them, ``instead`` the sleeping alternative."""
    share = cap["share"]
    if share is None or share >= 1 or not cpus:
        return None
    one = len(cpus) == 1
    where = f"CPU {cpus[0]}" if one else "CPUs " + ", ".join(str(c) for c in cpus)
    return (
        f"{what} on {where} never sleep{'s' if one else ''}, but SCHED_FIFO threads get only {float(share):.1%} "
        f"of a CPU here ({cap['text']}): the kernel will stop {'it' if one else 'them'} for the rest of each period "
        f"(tens of ms at a time), delaying {delays} then; as root, --isolate (isolate=True) lifts RT throttling and "
        f"the fair server for the run and restores them afterwards, or {instead}"
    )
