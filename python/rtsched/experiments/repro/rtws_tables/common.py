"""What both engines of ``rtws-tables`` share (Nogueira et al., EUC 2012, §VI): the paper's
numbers, the per-core utilization windows, the declared ``[grid]`` and the fork-join sets of
every point (the same generator, seed derivation and set indices on either engine: set ``k`` of
(m, window) is the same set in the simulator and on threads)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...errors import SpecError
from ...fields import dedupe, spec_key
from .._sim import Parsed, SimGrid, add_point, derive

# ---------------------------------------------------------------------------------------------
# The paper's numbers.

WINDOWS = ((0.38, 0.40), (0.58, 0.60), (0.73, 0.75))
#: Nogueira et al., EUC 2012 Table I: m -> (total tasks per window, total threads per window), twenty sets each.
PAPER_RTWS_TABLE1 = {
    2: ((50, 82, 98), (128, 218, 216)),
    4: ((102, 158, 193), (457, 703, 866)),
    8: ((217, 320, 401), (1736, 2720, 3491)),
}
#: Nogueira et al., EUC 2012 Tables II (migrations) and III (context switches): m -> (RTWS per window,
#: SCHED_DEADLINE per window), scale-up relative to RTWS on two cores. None: illegible in our
#: copy of the paper (the scan's table cells are garbled there).
PAPER_RTWS_TABLE2 = {
    2: ((1.0, 1.0, 1.0), (2.75, 3.27, 3.08)),
    4: ((5.88, 5.55, 5.92), (11.38, None, None)),
    8: ((36.38, None, 31.08), (45.38, 48.36, 55.08)),
}
PAPER_RTWS_TABLE3 = {
    2: ((1.0, 1.0, 1.0), (1.35, 1.40, 1.33)),
    4: ((2.91, 2.30, None), (None, 3.45, 4.74)),
    8: ((10.60, 9.97, 10.75), (15.93, 16.36, 18.31)),
}

FJ_SEED_DERIVATION = "rtsched-forkjoin-seed-v1"


def windows(value: Any, where: str) -> list:
    """``[grid].window``: per-core utilization windows ``[lo, hi]``, each once."""
    if not isinstance(value, list) or not value:
        raise SpecError(f"{where}: a list of [lo, hi] per-core utilization windows")
    out = []
    for w in value:
        if (
            not isinstance(w, list)
            or len(w) != 2
            or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in w)
            or not 0 < w[0] <= w[1] <= 1
        ):
            raise SpecError(f"{where}: each window is [lo, hi] with 0 < lo <= hi <= 1, got {w!r}")
        out.append((float(w[0]), float(w[1])))
    return dedupe(out)


@dataclass(frozen=True, kw_only=True)
class Grid(SimGrid):
    """``[grid]``: m and ``window`` (per-core utilization windows; default the paper's three)."""

    window: list = spec_key(factory=lambda: list(WINDOWS), parse=windows)


def add_points(c: Parsed, kind: str, extra: Callable[[int], dict]) -> None:
    """One point per (m, window) of the grid: its fork-join sets (``count`` of them, the seed
    derived from the spec's seed, m and the window), ``extra(m)`` the engine's own parameters."""
    for m in c.ms:
        for lo, hi in c.grid.window:
            s = derive({"v": FJ_SEED_DERIVATION, "seed": c.seed, "m": m, "window": [lo, hi]})
            p = {"kind": kind, "m": m, "lo": lo, "hi": hi, "count": c.samples, "seed": s, "horizon": c.horizon}
            add_point(c.spec, {**p, **extra(m)}, {"m": m, "window": [lo, hi]})
