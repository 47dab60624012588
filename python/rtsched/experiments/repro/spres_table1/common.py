"""What both engines of ``spres-table1`` share (Brandenburg & Gül, RTSS 2016, §VII-C): the
paper's Table I, the declared spec keys of the sets (``[generator]``, ``[grid]``, the placement
keys), and the sets of every point, placed by the SP-RES cascade, with their slack runs in the
simulator (the same generator, seed derivation and placement options on either engine, and as a
sweep with the same generator, seed and grid point would test)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ...errors import SpecError
from ...fields import NExpr, axis_values, dedupe, key_names, parse_duration_ns, read_keys, resolve_n, spec_key
from ...variants import parse_semi
from .._sim import Parsed, SimGrid, derive, float_list

if TYPE_CHECKING:
    from ...._core import TaskSet

# ---------------------------------------------------------------------------------------------
# The paper's numbers.

#: Brandenburg & Gül, RTSS 2016 Table I: average slack -> (total migrations, per second and core, reduction).
PAPER_SPRES_TABLE1 = {
    0.0: (412_637, 8.23, None),
    0.10: (346_511, 6.91, 1.2),
    0.25: (224_713, 4.48, 1.8),
    0.33: (165_660, 3.30, 2.5),
    0.50: (82_406, 1.64, 5.0),
}
#: The cores of the paper's Table I runs (LITMUS^RT on 44 cores), named beside every column of
#: its numbers since ours run on other m.
PAPER_SPRES_M = 44
#: Sets the paper reran: 412,637 / (8.23 · 30 s · 44 cores) ≈ 38.0 (the table's own numbers).
PAPER_SPRES_SETS = 412_637 / (8.23 * 30 * PAPER_SPRES_M)


def slack_exec_fraction(slack: float) -> float:
    """The lower end ``lo`` of the execution-time fraction for an average slack ``slack``:
    execution times are uniform in ``[lo·C, C]`` with ``lo = 1 − 2·slack``, so their mean is
    ``(1 − slack)·C`` (``rtspin -U 2·slack`` in LITMUS^RT). ``slack`` must be in [0, 0.5]."""
    if isinstance(slack, bool) or not isinstance(slack, (int, float)) or not 0 <= slack <= 0.5:
        raise SpecError(f"field 'slack': an average slack must be in [0, 0.5], got {slack!r}")
    return 1.0 - 2.0 * float(slack)


# ---------------------------------------------------------------------------------------------
# The spec.

SLICE_ORDERS = ("flipped", "deadline-desc")
#: The period list the published workload writer scales short tasks within (ms).
SCALE_PERIODS_MS = (1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100, 125, 200, 250, 500, 1000)
#: Most draws for one set when ``regenerate`` is on (the original and 49 more).
MAX_ATTEMPTS = 50
DEFAULT_SLACK = (0.0, 0.1, 0.25, 0.33, 0.5)


def _slice_order(value: Any, where: str) -> str:
    if value not in SLICE_ORDERS:
        raise SpecError(f"{where}: expected one of {', '.join(SLICE_ORDERS)}, got {value!r}")
    return value


def _slack(value: Any, where: str) -> list:
    return float_list(value, where, 0.0, 0.5)


def _exec_scale(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise SpecError(f"{where}: must be in (0, 1], got {value!r}")
    return float(value)


@dataclass(frozen=True, kw_only=True)
class Placement:
    """The placement and workload keys (docs/reproductions.md), None where the spec leaves them
    out (a point holds only the keys given, so that specs without them keep their point ids):
    ``epsilon`` (the placement's minimum slice, default 0), ``scale_short`` (tasks of WCET at most
    this are moved to a longer period that is a multiple of theirs, as the published workload
    writer does; default 0: off), ``regenerate`` (a set no heuristic places is replaced by the
    next one of its stream, as the published writer does; default false), ``slice_order``
    (flipped or deadline-desc), ``merge_same_core`` and the ``[semi]`` options (variant, rp,
    rp_floor)."""

    epsilon: int | None = spec_key(None, parse=parse_duration_ns)
    scale_short: int | None = spec_key(None, parse=parse_duration_ns)
    regenerate: bool | None = None
    slice_order: str | None = spec_key(None, parse=_slice_order)
    merge_same_core: bool | None = None
    semi: dict | None = None


PLACEMENT_KEYS = key_names(Placement)


@dataclass(frozen=True, kw_only=True)
class Generator:
    """``[generator]``: how the task sets are drawn (the sweep's generator keys)."""

    name: str = "randfixedsum"
    periods: str = "seed004"
    umax: float = 1.0
    deadlines: str = "implicit"


def _ns(value: Any, where: str) -> list:
    return dedupe(axis_values(value, where, item=NExpr.parse))


def _utils(value: Any, where: str) -> list:
    return dedupe([float(v) for v in axis_values(value, where)])


@dataclass(frozen=True, kw_only=True)
class Grid(SimGrid):
    """``[grid]``: m, n (task counts, expressions of m allowed) and one of ``util`` (total U) and
    ``util_frac`` (U / m)."""

    n: list = spec_key(parse=_ns)
    util: list | None = spec_key(None, parse=_utils)
    util_frac: list | None = spec_key(None, parse=_utils)


VARIANT_KEYS = (
    "description",
    "samples",
    "horizon",
    "slack",
    "cash",
    "soft_unsplit",
    "exec_scale",
    "generator",
    "grid",
    *PLACEMENT_KEYS,
)


def _placement(keys: Placement, where: str) -> dict:
    """The placement and workload options of a spec, as they go into its points (only the keys
    the spec gives, so that specs without them keep their point ids)."""
    out: dict = {}
    for k in ("epsilon", "scale_short", "regenerate", "slice_order", "merge_same_core"):
        if getattr(keys, k) is not None:
            out[k] = getattr(keys, k)
    semi = parse_semi(keys.semi, where)
    for k in ("switch_rate", "cascade_rate"):
        if k in semi:
            raise SpecError(f"{where} [semi].{k}: applies to sweeps, not to this simulation")
    if semi:
        out["semi"] = semi
    return out


@dataclass
class SetGrid:
    """What the task sets of a point are drawn from (spres-table1 and spres-runtime alike)."""

    generator: dict
    placement: dict
    #: (m, n, n_expr, u) of every point, in grid order.
    cells: list


def set_grid(c: Parsed) -> SetGrid:
    """The generator, the placement options and the grid cells of a spres spec; an infeasible
    cell (U above n · umax or above m) is an error."""
    where, grid = c.where, c.grid
    gw = f"{where} [grid]"
    generator = asdict(read_keys(Generator, c.keys.generator, where, "generator"))
    generator["umax"] = float(generator["umax"])
    if (grid.util is None) == (grid.util_frac is None):
        raise SpecError(f"{gw}: give exactly one of 'util' (total U) and 'util_frac' (U as a fraction of m)")
    placement = _placement(c.keys, where)
    cells = []
    for m in c.ms:
        for n, n_expr in resolve_n(grid.n, m, gw):
            for u in grid.util if grid.util is not None else [round(f * m, 10) for f in grid.util_frac]:
                if u > n * generator["umax"] + 1e-9 or u > m:
                    raise SpecError(f"{gw}: U = {u} is infeasible for n = {n}, m = {m}")
                cells.append((m, n, n_expr, u))
    return SetGrid(generator, placement, cells)


def _exec_seed(point_seed: int, index: int) -> int:
    return derive({"v": "rtsched-exec-seed-v1", "seed": point_seed, "set": index})


def scale_short_tasks(ts: TaskSet, threshold: int) -> tuple[TaskSet, int]:
    """The published workload writer's rule for "unrealistically small budgets": a task of WCET
    at most ``threshold`` ns gets the smallest period of :data:`SCALE_PERIODS_MS` that is a
    multiple of its own and makes its WCET (scaled with it) at least ``threshold``, else the
    largest such multiple; utilization and density stay the same. Returns (task set, count)."""
    from ...._core import Task, TaskSet

    ms = 1_000_000
    tasks, scaled = [], 0
    for t in ts:
        c, d, period = t.wcet, t.deadline, t.period
        if threshold and c <= threshold:
            larger = [p * ms for p in SCALE_PERIODS_MS if p * ms > period and (p * ms) % period == 0]
            for p in larger:
                k = p // period
                if c * k >= threshold or p == larger[-1]:
                    c, d, period = c * k, d * k, period * k
                    scaled += 1
                    break
        tasks.append(Task(wcet=c, deadline=d, period=period, name=t.name))
    return TaskSet(tasks), scaled


def _regen_seed(point_seed: int, index: int, attempt: int) -> int:
    return derive({"v": "rtsched-regen-seed-v1", "seed": point_seed, "set": index, "attempt": attempt})


def placed_sets(p: dict) -> Iterator[tuple[int, TaskSet, dict, int, int]]:
    """The task sets of point ``p`` placed by the SP-RES cascade with the point's placement
    options (with ``regenerate``, a set no heuristic places is replaced by another draw, up to
    :data:`MAX_ATTEMPTS`): ``(index, task set, placement, attempts, short tasks scaled)`` per
    set. Also the task sets of ``rtsched reproduce spres-runtime`` (the same points)."""
    from ....api import generate, partition

    g = p["generator"]

    def draw(seed: int, count: int):
        return generate(
            p["n"],
            p["util"],
            generator=g["name"],
            periods=g["periods"],
            umax=g["umax"],
            deadlines=g["deadlines"],
            seed=seed,
            count=count,
            m=p["m"],
        )

    semi = p.get("semi", {})
    opts = {
        "epsilon": p.get("epsilon", 0),
        "variant": semi.get("variant", "artifact"),
        "rp": semi.get("rp"),
        "rp_floor": semi.get("rp_floor"),
        "slice_order": p.get("slice_order", "flipped"),
        "merge_same_core": p.get("merge_same_core", False),
    }
    sets = draw(p["seed"], p["count"])
    for i, first in enumerate(sets):
        attempts, ts = 0, first
        while True:
            attempts += 1
            ts, scaled = scale_short_tasks(ts, p.get("scale_short", 0))
            pl = partition(ts, p["m"], heuristic="spres", **opts)
            if pl["schedulable"] or not p.get("regenerate", False) or attempts >= MAX_ATTEMPTS:
                break
            ts = draw(_regen_seed(p["seed"], i, attempts), 1)[0]
        yield i, ts, pl, attempts, scaled


def slack_runs(p: dict, index: int, ts: TaskSet, pl: dict, horizon: int | None = None) -> list[dict]:
    """Set ``index`` of point ``p`` (placement ``pl``) simulated under SP-RES at every slack
    level of ``p["slack"]`` for ``horizon`` (default the point's): one dict per level (slack,
    exec_lo, jobs, deadline_misses, preemptions, migrations, context_switches, observed_slack,
    horizon_ns)."""
    from .... import _core
    from ...._core import Task, TaskSet

    sim_ts = ts
    scale = p.get("exec_scale", 1.0)
    if scale != 1.0:
        # rtspin's -s: every job runs scale × its drawn time; the reservations keep the
        # budgets placed for the unscaled WCETs.
        sim_ts = TaskSet([Task(wcet=max(1, round(t.wcet * scale)), deadline=t.deadline, period=t.period) for t in ts])
    return [
        json.loads(x)
        for x in _core.spres_slack_runs(
            sim_ts,
            p["m"],
            json.dumps(pl),
            p["horizon"] if horizon is None else horizon,
            p["slack"],
            _exec_seed(p["seed"], index),
            p["cash"],
            p["soft_unsplit"],
        )
    ]
