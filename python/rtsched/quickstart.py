"""The main job: a short schedulability study (README "Quick start").

For one (m, n) it generates ``sets`` task sets per utilization step (Emberson et al.'s
RandFixedSum, log-uniform periods in [10, 100] ms, implicit deadlines), runs every global EDF
test, partitioned EDF (first-fit decreasing with the exact uniprocessor test) and the SP-RES
cascade, and prints and plots the fraction each accepts — the kind of curve Cerqueira et al.
(RTAS 2014), Brandenburg & Anderson (RTSS 2009) and Brandenburg & Gül (RTSS 2016) plot.
"""

from __future__ import annotations

import os
import time

from . import _core
from .output import write_text

QUICK_TESTS = ["gfb", "bak", "bcl", "bcl_iterative", "rta", "bar", "ffdbf", "gedf", "pedf_ffd", "spres"]


def utilization_steps(m: int, step: float) -> list[float]:
    # U = m itself is left out: nothing but exact-fit sets is schedulable there, and proving
    # that for the SP-RES meta-heuristics costs about a second per set.
    steps, u = [], step
    while u < m - 1e-9:
        steps.append(round(u, 6))
        u += step
    return steps


def run(m: int = 4, n: int = 12, sets: int = 300, step: float = 0.2, seed: int = 1, out: str = "quickstart") -> dict:
    if m < 1 or n < 1 or sets < 1 or step <= 0:
        raise _core.RtschedError("quickstart: m, n and sets must be at least 1 and step positive")
    available = set(_core.test_names())
    tests = [t for t in QUICK_TESTS if t in available]
    utils = [u for u in utilization_steps(m, step) if u <= n]  # u_i <= 1 needs U <= n
    t0 = time.perf_counter()
    res = _core.acceptance("randfixedsum", "loguniform:10ms-100ms", n, utils, m, sets, seed, tests, 1_000_000)
    elapsed = time.perf_counter() - t0
    frac = {t: [a / sets for a in res["accepted"][t]] for t in tests}

    header = f"{'U':>6} {'U/m':>5} " + " ".join(f"{t:>13}" for t in tests)
    print(
        f"rtsched quickstart: m = {m}, n = {n}, {sets} task sets per step (RandFixedSum, log-uniform "
        f"periods 10-100 ms, implicit deadlines), seed {seed}"
    )
    print("fraction of task sets each test accepts:")
    print(header)
    for i, u in enumerate(utils):
        print(f"{u:>6.2f} {u / m:>5.2f} " + " ".join(f"{frac[t][i]:>13.3f}" for t in tests))
    gave = {t: sum(res["gave_up"][t]) for t in tests if sum(res["gave_up"][t])}
    if gave:
        print("gave up (work bound hit): " + ", ".join(f"{t}: {g}" for t, g in gave.items()))
    total = sets * len(utils)
    print(f"{total} task sets × {len(tests)} tests in {elapsed:.2f} s")

    os.makedirs(out, exist_ok=True)
    from .plots import acceptance_plot

    path = os.path.join(out, "schedulability.png")
    acceptance_plot(utils, frac, path, title=f"Schedulability, m = {m}, n = {n} ({sets} sets per point)", m=m)
    csv_path = os.path.join(out, "schedulability.csv")
    lines = ["utilization," + ",".join(tests)]
    lines += [f"{u}," + ",".join(f"{frac[t][i]:.6f}" for t in tests) for i, u in enumerate(utils)]
    write_text(csv_path, "\n".join(lines) + "\n")
    print(f"wrote {path} and {csv_path}")
    return {"utils": utils, "fraction": frac, "seconds": elapsed}
