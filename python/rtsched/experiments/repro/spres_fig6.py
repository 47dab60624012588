"""Brandenburg & Gül, RTSS 2016, Fig. 6: the mean per-core context-switch-rate bound of the
placed task sets versus U, m = 8, one panel per n, with the paper's five curves: partitioning,
semi-partitioning, semi-partitioning with meta-heuristics, and the optimal RUN and QPS (their
bounds computed as §VI says: RUN's from Regnier et al.'s preemption bound, QPS's by two switches
per activation; ``rtsched_policy``'s ``switch_rate_bound``). The spec (``specs/spres-fig6.toml``)
holds the grid and the plot.

Beside the bounds, with ``--quick``, RUN and QPS are simulated on sets drawn from each point's
generator, parameters and seed (:func:`simulated_rates`): the context switches the simulator
counts per second per core, next to the point's bound (``OUT/simulated.csv``, and printed)."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import quickmark
from ._sweep import KEYS, KIND, parse  # noqa: F401
from ._sweep import report as _sweep_report

if TYPE_CHECKING:  # pragma: no cover
    from ..spec import Spec
    from ..sweep import SweepResult

DESCRIPTION = "Brandenburg & Gül, RTSS 2016, Fig. 6: context-switch-rate bound per core vs. U, m = 8"
SPEC = "spres-fig6.toml"

#: Rates are rounded up to multiples of 1/GRID before simulating, so that RUN's and QPS's exact
#: tick grids (1/L ns, L the rates' common denominator) stay far below their 2^64 bound; a set
#: the rounding lifts above U = m is skipped and counted.
GRID = 1000
#: Simulated sets per point and the simulated horizon (ns).
SIM_SETS = 4
HORIZON_NS = 200_000_000
SCHEDULERS = ("run", "qps")


def _rounded(ts: Any) -> Any:
    """``ts`` with each rate rounded up to a multiple of 1/GRID (periods kept)."""
    import rtsched

    tasks = []
    for t in ts:
        c = -(-t.wcet * GRID // t.period) * t.period // GRID if t.period % GRID == 0 else t.wcet
        tasks.append(rtsched.Task(wcet=max(1, min(c, t.period)), period=t.period))
    return rtsched.TaskSet(tasks)


def simulated_rates(spec: Spec, sets: int = SIM_SETS, horizon: int = HORIZON_NS) -> list[dict]:
    """Per point and scheduler: the mean over ``sets`` task sets of the simulated context
    switches per second per core (``simulated``), with how many sets ran (``sets``) and were
    skipped (``skipped``: lifted above U = m by the rounding, or refused)."""
    import rtsched

    rows = []
    for p in spec.points:
        q = p.params
        drawn = rtsched.generate(
            q["n"],
            q["util"],
            generator=q["generator"],
            periods=q["periods"],
            umax=q["umax"],
            deadlines=q["deadlines"],
            seed=q["seed"],
            count=sets,
        )
        for sched in SCHEDULERS:
            sim, skipped = [], 0
            for ts in drawn:
                try:
                    r = rtsched.simulate(_rounded(ts), q["m"], sched, horizon=horizon)
                except ValueError:
                    skipped += 1
                    continue
                sim.append(r["context_switches"] / (r["horizon_ns"] / 1e9) / q["m"])
            rows.append(
                {
                    "n": q["n"],
                    "util": q["util"],
                    "scheduler": sched,
                    "sets": len(sim),
                    "skipped": skipped,
                    "simulated": sum(sim) / len(sim) if sim else math.nan,
                }
            )
    return rows


def _bounds(table: Path) -> dict:
    """The figure table's RUN and QPS values keyed by (n, U, curve)."""
    out: dict = {}
    if not table.exists():
        return out
    with table.open() as f:
        for row in csv.DictReader(f):
            if row.get("curve") in ("RUN", "QPS") and row.get("value"):
                n = int(str(row["panel"]).rsplit("=", 1)[-1])
                out[(n, round(float(row["x"]), 6), row["curve"])] = float(row["value"])
    return out


def report(spec: Spec, out: Path, run: SweepResult, fmt_: str = "png") -> dict:
    """The sweep's figure and tables (``_sweep.report``); with ``--quick``, also RUN and QPS
    simulated beside their bounds (``OUT/simulated.csv``, printed)."""
    drawn = _sweep_report(spec, out, run, fmt_)
    if not spec.quick:
        return drawn
    rows = simulated_rates(spec)
    bounds = _bounds(out / "table.csv")
    for r in rows:
        r["bound"] = bounds.get((r["n"], round(r["util"], 6), r["scheduler"].upper()), math.nan)
    path = out / "simulated.csv"
    keys = ["n", "util", "scheduler", "sets", "skipped", "simulated", "bound"]
    header, body = quickmark.csv_table(keys, [[r[k] for k in keys] for r in rows], spec.quick)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(body)
    lines = [
        quickmark.title(
            f"{spec.name}: RUN and QPS simulated ({HORIZON_NS // 1_000_000} ms, rates rounded up to 1/{GRID}, "
            f"{SIM_SETS} sets a point) beside the point's mean bound",
            spec.quick,
        )
    ]
    lines.append("n   U      sched  sets  switches/s/core simulated  bound")
    for r in rows:
        lines.append(
            f"{r['n']:<3} {r['util']:<6g} {r['scheduler']:<5}  {r['sets']:<4}  "
            f"{r['simulated']:<25.1f}  {r['bound']:.1f}"
        )
    drawn["crossings_text"] = list(drawn.get("crossings_text", [])) + lines
    drawn["simulated"] = path
    return drawn
