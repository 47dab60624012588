"""Simulation reproductions of the figure registry (docs/reproductions.md).

Two kinds of registered spec are not schedulability sweeps but simulations; their TOML carries
``kind``:

* ``kind = "spres-table1"`` — seed 004 (Brandenburg & Gül, RTSS 2016) §VII-C, Table I: the
  SP-RES migration rate at 0–50% average slack. Task sets of the paper's first experiment
  (RandFixedSum, the seed-004 period set; grid m, n, U/m) are placed by the SP-RES cascade;
  those whose placement splits a task are simulated for ``horizon`` under SP-RES with CASH at
  each slack level (execution times uniform in [(1 − 2s)·C, C]: mean slack s). Sets that the
  cascade cannot place are skipped and counted; sets without a split have no migrations under
  SP-RES and are not simulated (as the paper reran only sets "that contained at least one
  semi-partitioned reservation").
* ``kind = "rtws-tables"`` — seed 003 (RTWS) §VI, Tables I–III and Figs. 3–4: fork-join sets
  of the paper's generator on m cores and three per-core utilization windows, simulated under
  RTWS, G-EDF over threads and (for contrast) SP-RES over the sequentialized tasks; migrations,
  steals, context switches and the scale-up ratios relative to RTWS on two cores.

The machinery is the sweep engine's: a spec expands to points, each point is one call
(:func:`evaluate_point`, module level, so that worker processes can run it), each finished
point is written atomically as a Parquet file under ``OUT/points/`` and kept on resume. The
tables are then printed in the paper's layout, with the paper's numbers beside ours, and
written with a figure and a CSV beside them.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from . import store
from .spec import (
    NExpr,
    SpecError,
    _check_keys,
    _dedupe,
    _int,
    _resolve_n,
    _values,
    canonical_json,
    derive_seed,
    parse_duration_ns,
    point_id,
    tomllib,
)

KINDS = ("spres-table1", "rtws-tables")

# ---------------------------------------------------------------------------------------------
# The paper's numbers.

#: Seed 004 Table I: average slack -> (total migrations, per second and core, reduction).
PAPER_SPRES_TABLE1 = {
    0.0: (412_637, 8.23, None),
    0.10: (346_511, 6.91, 1.2),
    0.25: (224_713, 4.48, 1.8),
    0.33: (165_660, 3.30, 2.5),
    0.50: (82_406, 1.64, 5.0),
}
#: Sets the paper reran: 412,637 / (8.23 · 30 s · 44 cores) ≈ 38.0 (the table's own numbers).
PAPER_SPRES_SETS = 412_637 / (8.23 * 30 * 44)

WINDOWS = ((0.38, 0.40), (0.58, 0.60), (0.73, 0.75))
#: Seed 003 Table I: m -> (total tasks per window, total threads per window), twenty sets each.
PAPER_RTWS_TABLE1 = {
    2: ((50, 82, 98), (128, 218, 216)),
    4: ((102, 158, 193), (457, 703, 866)),
    8: ((217, 320, 401), (1736, 2720, 3491)),
}
#: Seed 003 Tables II (migrations) and III (context switches): m -> (RTWS per window,
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

FJ_SCHEDULERS = ("rtws", "gedf", "spres")
FJ_SEED_DERIVATION = "rtsched-forkjoin-seed-v1"


def slack_exec_fraction(slack: float) -> float:
    """The lower end ``lo`` of the execution-time fraction for an average slack ``slack``:
    execution times are uniform in ``[lo·C, C]`` with ``lo = 1 − 2·slack``, so their mean is
    ``(1 − slack)·C`` (``rtspin -U 2·slack`` in LITMUS^RT). ``slack`` must be in [0, 0.5]."""
    if isinstance(slack, bool) or not isinstance(slack, (int, float)) or not 0 <= slack <= 0.5:
        raise SpecError(f"field 'slack': an average slack must be in [0, 0.5], got {slack!r}")
    return 1.0 - 2.0 * float(slack)


# ---------------------------------------------------------------------------------------------
# Specs.

SPRES_KEYS = (
    "name",
    "kind",
    "description",
    "seed",
    "samples",
    "horizon",
    "slack",
    "cash",
    "soft_unsplit",
    "exec_scale",
    "generator",
    "grid",
    "quick",
)
SPRES_GRID = ("m", "n", "util", "util_frac")
RTWS_KEYS = ("name", "kind", "description", "seed", "samples", "horizon", "schedulers", "grid", "quick")
RTWS_GRID = ("m", "window")
QUICK_KEYS = ("samples", "horizon", "slack", "grid", "note")
GEN_KEYS = ("name", "periods", "umax", "deadlines")


@dataclass
class SimSpec:
    text: str
    path: str | None
    name: str
    kind: str
    quick: bool
    description: str
    params: dict
    points: list = field(default_factory=list)  # (id, params) in grid order
    note: str = ""

    @property
    def hash(self) -> str:
        ids = sorted(pid for pid, _ in self.points)
        return hashlib.sha256(canonical_json(ids).encode()).hexdigest()[:16]


def spec_kind(text: str, where: str = "<spec>") -> str | None:
    """The ``kind`` of a spec's TOML text, or None for a schedulability sweep."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{where}: not valid TOML: {e}") from None
    kind = data.get("kind")
    if kind is not None and kind not in KINDS:
        raise SpecError(f"{where}: unknown kind {kind!r}; known kinds: {', '.join(KINDS)}")
    return kind


def _merge(data: dict, over: dict, where: str, grid_keys) -> dict:
    data = dict(data)
    for k, v in over.items():
        if k == "grid":
            if not isinstance(v, dict):
                raise SpecError(f"{where}: 'grid' must be a table")
            _check_keys(v, grid_keys, f"the grid override of {where}")
            grid = dict(data.get("grid", {}))
            if "util" in v or "util_frac" in v:
                grid.pop("util", None)
                grid.pop("util_frac", None)
            grid.update(v)
            data["grid"] = grid
        elif k != "note":
            data[k] = v
    return data


def _float_list(v, where: str, lo: float, hi: float) -> list:
    vals = v if isinstance(v, list) else [v]
    out = []
    for x in vals:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not lo <= x <= hi:
            raise SpecError(f"{where}: expected numbers in [{lo}, {hi}], got {x!r}")
        out.append(float(x))
    if not out:
        raise SpecError(f"{where}: the list is empty")
    return _dedupe(out)


def parse_sim_spec(text: str, path: str | None = None, quick: bool = False, override: dict | None = None) -> SimSpec:
    """Parse a simulation reproduction spec; ``quick`` applies its [quick] table, ``override``
    (a dict of top-level keys and an optional ``grid`` table) is applied last (the tests' tiny
    forms)."""
    where = path or "<spec>"
    kind = spec_kind(text, where)
    if kind is None:
        raise SpecError(f"{where}: not a simulation reproduction (no 'kind' key)")
    data = tomllib.loads(text)
    keys, grid_keys = (SPRES_KEYS, SPRES_GRID) if kind == "spres-table1" else (RTWS_KEYS, RTWS_GRID)
    _check_keys(data, keys, f"the top level of {where}")
    q = data.get("quick")
    if q is not None:
        if not isinstance(q, dict):
            raise SpecError(f"{where}: [quick] must be a table")
        _check_keys(q, QUICK_KEYS, f"table [quick] of {where}")
    note = ""
    if quick:
        if q is None:
            raise SpecError(f"{where}: --quick needs a [quick] table in the spec")
        data = _merge(data, q, f"[quick] of {where}", grid_keys)
        note = str(q.get("note", "quick form"))
    if override:
        data = _merge(data, override, f"the override of {where}", grid_keys)
        note = (note + "; " if note else "") + "override " + canonical_json(override)
    data.pop("quick", None)
    name = data.get("name", Path(path).stem if path else kind)
    desc = data.get("description", "")
    seed = _int(data.get("seed", 0), f"{where} seed", 0)
    samples = _int(data.get("samples", 10), f"{where} samples", 1)
    horizon = parse_duration_ns(data.get("horizon", "30s"), f"{where} horizon")
    if horizon < 1:
        raise SpecError(f"{where} horizon: must be at least 1 ns")
    grid = data.get("grid")
    if not isinstance(grid, dict):
        raise SpecError(f"{where}: a [grid] table is required")
    _check_keys(grid, grid_keys, f"table [grid] of {where}")
    spec = SimSpec(text=text, path=path, name=name, kind=kind, quick=quick, description=desc, params={}, note=note)
    gw = f"{where} [grid]"
    if "m" not in grid:
        raise SpecError(f"{gw}: key 'm' is required")
    ms = _dedupe(_values(grid["m"], f"{gw}.m", integer=True))
    if any(m < 1 for m in ms):
        raise SpecError(f"{gw}.m: processor counts must be >= 1")
    if kind == "spres-table1":
        gen = data.get("generator", {})
        if not isinstance(gen, dict):
            raise SpecError(f"{where}: [generator] must be a table")
        _check_keys(gen, GEN_KEYS, f"table [generator] of {where}")
        generator = {"name": "randfixedsum", "periods": "seed004", "umax": 1.0, "deadlines": "implicit"}
        generator.update({k: v for k, v in gen.items()})
        generator["umax"] = float(generator["umax"])
        slack = _float_list(data.get("slack", [0.0, 0.1, 0.25, 0.33, 0.5]), f"{where} slack", 0.0, 0.5)
        for k in ("cash", "soft_unsplit"):
            if k in data and not isinstance(data[k], bool):
                raise SpecError(f"{where} {k}: expected true or false")
        cash, soft = data.get("cash", True), data.get("soft_unsplit", False)
        scale = data.get("exec_scale", 1.0)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale <= 1:
            raise SpecError(f"{where} exec_scale: must be in (0, 1], got {scale!r}")
        scale = float(scale)
        if "n" not in grid:
            raise SpecError(f"{gw}: key 'n' is required")
        if ("util" in grid) == ("util_frac" in grid):
            raise SpecError(f"{gw}: give exactly one of 'util' (total U) and 'util_frac' (U as a fraction of m)")
        ns = _dedupe(_values(grid["n"], f"{gw}.n", item=NExpr.parse))
        ukey = "util" if "util" in grid else "util_frac"
        uvals = _dedupe([float(v) for v in _values(grid[ukey], f"{gw}.{ukey}")])
        spec.params = {
            "seed": seed,
            "samples": samples,
            "horizon": horizon,
            "slack": slack,
            "cash": cash,
            "soft_unsplit": soft,
            "exec_scale": scale,
            "generator": generator,
        }
        for m in ms:
            for n, n_expr in _resolve_n(ns, m, gw):
                utils = uvals if ukey == "util" else [round(f * m, 10) for f in uvals]
                for u in utils:
                    if u > n * generator["umax"] + 1e-9 or u > m:
                        raise SpecError(f"{gw}: U = {u} is infeasible for n = {n}, m = {m}")
                    p = {
                        "kind": kind,
                        "m": m,
                        "n": n,
                        "n_expr": n_expr,
                        "util": u,
                        "util_frac": round(u / m, 10),
                        "count": samples,
                        "seed": derive_seed(seed, generator, n, m, u),
                        "generator": generator,
                        "horizon": horizon,
                        "slack": slack,
                        "cash": cash,
                        "soft_unsplit": soft,
                    }
                    if scale != 1.0:  # only when set, so that the default points keep their ids
                        p["exec_scale"] = scale
                    spec.points.append((point_id(p), p))
    else:
        scheds = data.get("schedulers", list(FJ_SCHEDULERS))
        if not isinstance(scheds, list) or not scheds or any(s not in FJ_SCHEDULERS for s in scheds):
            raise SpecError(f"{where} schedulers: a non-empty list of {', '.join(FJ_SCHEDULERS)}, got {scheds!r}")
        if "rtws" not in scheds:
            raise SpecError(f"{where} schedulers: the scale-up ratios are relative to rtws, which must be listed")
        wins = grid.get("window", [list(w) for w in WINDOWS])
        if not isinstance(wins, list) or not wins:
            raise SpecError(f"{gw}.window: a list of [lo, hi] per-core utilization windows")
        windows = []
        for w in wins:
            if (
                not isinstance(w, list)
                or len(w) != 2
                or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in w)
                or not 0 < w[0] <= w[1] <= 1
            ):
                raise SpecError(f"{gw}.window: each window is [lo, hi] with 0 < lo <= hi <= 1, got {w!r}")
            windows.append((float(w[0]), float(w[1])))
        windows = _dedupe(windows)
        spec.params = {"seed": seed, "samples": samples, "horizon": horizon, "schedulers": scheds}
        for m in ms:
            for lo, hi in windows:
                key = canonical_json({"v": FJ_SEED_DERIVATION, "seed": seed, "m": m, "window": [lo, hi]})
                s = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") >> 1
                p = {
                    "kind": kind,
                    "m": m,
                    "lo": lo,
                    "hi": hi,
                    "count": samples,
                    "seed": s,
                    "horizon": horizon,
                    "schedulers": list(scheds),
                }
                spec.points.append((point_id(p), p))
    if not spec.points:
        raise SpecError(f"{where}: the grid has no point")
    return spec


def load_sim_spec(path, quick: bool = False, override: dict | None = None) -> SimSpec:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"cannot read {str(p)!r}: {e.strerror}") from None
    return parse_sim_spec(text, str(p), quick=quick, override=override)


# ---------------------------------------------------------------------------------------------
# Evaluation of one point (runs in worker processes).

SPRES_SCHEMA = pa.schema(
    [
        ("point", pa.string()),
        ("m", pa.int64()),
        ("n", pa.int64()),
        ("util", pa.float64()),
        ("set", pa.int64()),
        ("placed", pa.bool_()),
        ("heuristic", pa.string()),
        ("split_tasks", pa.int64()),
        ("simulated", pa.bool_()),
        ("slack", pa.float64()),
        ("exec_lo", pa.float64()),
        ("jobs", pa.int64()),
        ("deadline_misses", pa.int64()),
        ("preemptions", pa.int64()),
        ("migrations", pa.int64()),
        ("context_switches", pa.int64()),
        ("observed_slack", pa.float64()),
        ("horizon_ns", pa.int64()),
    ]
)
RTWS_SCHEMA = pa.schema(
    [
        ("point", pa.string()),
        ("m", pa.int64()),
        ("lo", pa.float64()),
        ("hi", pa.float64()),
        ("set", pa.int64()),
        ("tasks", pa.int64()),
        ("par_threads", pa.int64()),
        ("utilization", pa.float64()),
        ("scheduler", pa.string()),
        ("placed", pa.bool_()),
        ("split_tasks", pa.int64()),
        ("jobs", pa.int64()),
        ("completed", pa.int64()),
        ("deadline_misses", pa.int64()),
        ("threads", pa.int64()),
        ("steals", pa.int64()),
        ("migrations", pa.int64()),
        ("remote_starts", pa.int64()),
        ("preemptions", pa.int64()),
        ("context_switches", pa.int64()),
        ("horizon_ns", pa.int64()),
    ]
)


def _schema(kind: str) -> pa.Schema:
    return SPRES_SCHEMA if kind == "spres-table1" else RTWS_SCHEMA


def _exec_seed(point_seed: int, index: int) -> int:
    key = canonical_json({"v": "rtsched-exec-seed-v1", "seed": point_seed, "set": index})
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") >> 1


def _eval_spres(p: dict) -> dict:
    from .. import _core
    from .._core import Task, TaskSet
    from ..api import generate, partition

    g = p["generator"]
    sets = generate(
        p["n"],
        p["util"],
        generator=g["name"],
        periods=g["periods"],
        umax=g["umax"],
        deadlines=g["deadlines"],
        seed=p["seed"],
        count=p["count"],
        m=p["m"],
    )
    cols = {f.name: [] for f in SPRES_SCHEMA if f.name != "point"}
    for i, ts in enumerate(sets):
        pl = partition(ts, p["m"], heuristic="spres")
        placed = bool(pl["schedulable"])
        splits = sum(1 for t in pl["tasks"] if t["parts"] > 1) if placed else 0
        runs = [None] * len(p["slack"])
        if placed and splits:
            sim_ts = ts
            scale = p.get("exec_scale", 1.0)
            if scale != 1.0:
                # rtspin's -s: every job runs scale × its drawn time; the reservations keep the
                # budgets placed for the unscaled WCETs.
                sim_ts = TaskSet(
                    [Task(wcet=max(1, round(t.wcet * scale)), deadline=t.deadline, period=t.period) for t in ts]
                )
            runs = [
                json.loads(x)
                for x in _core.spres_slack_runs(
                    sim_ts,
                    p["m"],
                    json.dumps(pl),
                    p["horizon"],
                    p["slack"],
                    _exec_seed(p["seed"], i),
                    p["cash"],
                    p["soft_unsplit"],
                )
            ]
        for s, r in zip(p["slack"], runs, strict=True):
            row = {
                "m": p["m"],
                "n": p["n"],
                "util": p["util"],
                "set": i,
                "placed": placed,
                "heuristic": pl.get("heuristic") if placed else None,
                "split_tasks": splits,
                "simulated": r is not None,
                "slack": s,
            }
            for k in (
                "exec_lo",
                "jobs",
                "deadline_misses",
                "preemptions",
                "migrations",
                "context_switches",
                "observed_slack",
            ):
                row[k] = None if r is None else r[k]
            row["horizon_ns"] = None if r is None else r["horizon_ns"]
            for k, v in row.items():
                cols[k].append(v)
    return cols


def _eval_rtws(p: dict) -> dict:
    from .. import _core

    texts = _core.forkjoin_generate(p["m"], p["lo"], p["hi"], p["seed"], p["count"])
    cols = {f.name: [] for f in RTWS_SCHEMA if f.name != "point"}
    for i, text in enumerate(texts):
        doc = json.loads(text)
        tasks = doc["tasks"]
        par = sum(len(t["regions"][1]) if len(t["regions"]) > 1 else 0 for t in tasks)
        util = sum(sum(sum(r) for r in t["regions"]) / t["period"] for t in tasks)
        for sch in p["schedulers"]:
            r = json.loads(_core.forkjoin_simulate(text, p["m"], sch, p["horizon"]))
            placed = r.get("placed", True)
            row = {
                "m": p["m"],
                "lo": p["lo"],
                "hi": p["hi"],
                "set": i,
                "tasks": len(tasks),
                "par_threads": par,
                "utilization": util,
                "scheduler": sch,
                "placed": placed,
                "split_tasks": r.get("split_tasks"),
            }
            for k in (
                "jobs",
                "completed",
                "deadline_misses",
                "threads",
                "steals",
                "migrations",
                "remote_starts",
                "preemptions",
                "context_switches",
            ):
                row[k] = r.get(k) if placed else None
            row["horizon_ns"] = r.get("horizon") if placed else None
            for k, v in row.items():
                cols[k].append(v)
    return cols


def evaluate_point(point_json: str) -> dict:
    """One point: columns (without ``point``) of the kind's schema."""
    p = json.loads(point_json)
    return _eval_spres(p) if p["kind"] == "spres-table1" else _eval_rtws(p)


# ---------------------------------------------------------------------------------------------
# Running: points on an executor, one Parquet file per point, resume.


def _table(spec: SimSpec, pid: str, cols: dict) -> pa.Table:
    schema = _schema(spec.kind)
    names = [f.name for f in schema if f.name != "point"]
    if set(cols) != set(names):
        raise store.EvaluatorError(f"point {pid}: columns {sorted(cols)} differ from {names}")
    rows = len(cols["set"])
    arrays = [pa.array([pid] * rows, pa.string())]
    for f in schema:
        if f.name == "point":
            continue
        if len(cols[f.name]) != rows:
            raise store.EvaluatorError(f"point {pid}: column {f.name!r} has {len(cols[f.name])} rows, expected {rows}")
        arrays.append(pa.array(cols[f.name], f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _meta(spec: SimSpec, pid: str, params: dict) -> dict:
    return {
        "rtsched.spec": spec.text,
        "rtsched.spec_hash": spec.hash,
        "rtsched.kind": spec.kind,
        "rtsched.quick": "true" if spec.quick else "false",
        "rtsched.point_id": pid,
        "rtsched.point": canonical_json(params),
    }


def _load(path: Path, spec: SimSpec, pid: str, params: dict):
    try:
        pf = pq.ParquetFile(path)
        table = pf.read()
        meta = {k.decode(): v.decode() for k, v in (pf.schema_arrow.metadata or {}).items()}
    except Exception as e:
        return None, f"unreadable ({type(e).__name__})"
    if meta.get("rtsched.point_id") != pid or meta.get("rtsched.point") != canonical_json(params):
        return None, "metadata names another point"
    if meta.get("rtsched.spec_hash") != spec.hash:
        return None, "metadata names a different spec"
    if table.schema.remove_metadata() != _schema(spec.kind):
        return None, "unexpected columns"
    return table, None


def run_sim(
    spec: SimSpec, out, *, executor=None, jobs: int | None = None, progress: bool = True, log=None, evaluator=None
) -> dict:
    """Run (resuming) every point of ``spec`` into ``out``; returns {"tables", "computed", "kept",
    "seconds"}."""
    from .executors import LocalExecutor, PointFailed

    log = log if log is not None else sys.stderr
    out = Path(out)
    pdir = store.points_dir(out)
    others = {h: c for h, c in store.stored_spec_hashes(out).items() if h != spec.hash}
    if others:
        raise SpecError(
            f"{str(out)!r} holds {sum(others.values())} point(s) of a different spec (spec hash "
            f"{', '.join(sorted(others))}; this spec is {spec.hash}); choose another --out directory "
            "or delete that one"
        )
    pdir.mkdir(parents=True, exist_ok=True)
    for tmp in pdir.glob(f".*{store.TMP_SUFFIX}"):
        tmp.unlink(missing_ok=True)
    store.write_text_atomic(out / "spec.toml", spec.text)
    tables, todo, kept = {}, [], []
    for pid, params in spec.points:
        path = pdir / f"{pid}.parquet"
        if path.exists():
            t, why = _load(path, spec, pid, params)
            if t is not None:
                tables[pid] = t
                kept.append(pid)
                continue
            print(f"point {pid}: invalid file ({why}); recomputing", file=log)
        todo.append((pid, params))
    executor = executor or LocalExecutor(jobs)
    fn = evaluator or evaluate_point
    t0 = time.monotonic()
    if progress:
        print(
            f"{spec.name}: {len(spec.points)} points ({len(kept)} kept, {len(todo)} to compute on "
            f"{executor.describe()}); results in {out}",
            file=log,
        )
    by_id = dict(todo)
    done = 0
    try:
        for pid, cols in executor.run(fn, [(pid, canonical_json(p)) for pid, p in todo]):
            t = _table(spec, pid, cols)
            store.write_table_atomic(pdir / f"{pid}.parquet", t, _meta(spec, pid, by_id[pid]))
            tables[pid] = t
            done += 1
            if progress:
                print(f"  [{done}/{len(todo)}] {_label(by_id[pid])} ({time.monotonic() - t0:.0f} s)", file=log)
    except PointFailed as e:
        raise SpecError(
            f"point {e.key} ({_label(by_id.get(e.key, {}))}): {type(e.error).__name__}: {e.error}"
        ) from e.error
    return {
        "tables": [tables[pid] for pid, _ in spec.points],
        "computed": done,
        "kept": len(kept),
        "seconds": time.monotonic() - t0,
    }


def _label(p: dict) -> str:
    if p.get("kind") == "spres-table1":
        return f"m={p['m']} n={p['n']} U={p['util']}"
    if p.get("kind") == "rtws-tables":
        return f"m={p['m']} window=[{p['lo']}, {p['hi']}]"
    return "?"


# ---------------------------------------------------------------------------------------------
# Tables.


def _fmt(x, digits=2) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:.{digits}f}"


def _pct(s: float) -> str:
    return f"{s * 100:g}%"


def _md(header: list, rows: list) -> list:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def spres_table1(spec: SimSpec, table: pa.Table) -> dict:
    """Seed 004 Table I from the rows: per slack level, total migrations, migrations per second
    and core over the simulated sets, the reduction relative to 0% slack; counts of sets."""
    rows = table.to_pylist()
    p = spec.params
    slacks = p["slack"]
    first = [r for r in rows if r["slack"] == slacks[0]]
    m_values = sorted({r["m"] for r in rows})
    total = len(first)
    placed = sum(r["placed"] for r in first)
    sim = [r for r in first if r["simulated"]]
    n_sim = len(sim)
    horizon_s = p["horizon"] / 1e9
    agg = []
    for s in slacks:
        rs = [r for r in rows if r["slack"] == s and r["simulated"]]
        mig = sum(r["migrations"] for r in rs)
        core_seconds = sum(r["m"] * r["horizon_ns"] / 1e9 for r in rs)
        rate = mig / core_seconds if core_seconds else None
        obs = [r["observed_slack"] for r in rs if r["observed_slack"] is not None]
        agg.append(
            {
                "slack": s,
                "sets": len(rs),
                "migrations": mig,
                "rate": rate,
                "observed_slack": sum(obs) / len(obs) if obs else None,
                "deadline_misses": sum(r["deadline_misses"] for r in rs),
                "jobs": sum(r["jobs"] for r in rs),
            }
        )
    base = agg[0]["rate"] if agg and agg[0]["slack"] == 0.0 else None
    for a in agg:
        a["reduction"] = (base / a["rate"]) if base and a["rate"] else None
        paper = PAPER_SPRES_TABLE1.get(round(a["slack"], 2))
        a["paper_total"], a["paper_rate"], a["paper_reduction"] = paper if paper else (None, None, None)
    # Per n: sets placed, not placed, with a split; migration rate per slack level.
    by_n = {}
    for r in first:
        d = by_n.setdefault(r["n"], {"sets": 0, "not_placed": 0, "split": 0, "mig": {}, "cs": 0.0})
        d["sets"] += 1
        d["not_placed"] += not r["placed"]
        d["split"] += r["simulated"]
        if r["simulated"]:
            d["cs"] += r["m"] * r["horizon_ns"] / 1e9
    for r in rows:
        if r["simulated"]:
            d = by_n[r["n"]]["mig"]
            d[r["slack"]] = d.get(r["slack"], 0) + r["migrations"]
    lines = [
        f"{spec.name}: seed 004 (Brandenburg & Gül, RTSS 2016) Table I in simulation — SP-RES "
        f"({'CASH' if p['cash'] else 'no slack reclamation'}, "
        f"{'all reservations soft' if p['soft_unsplit'] else 'split tasks in soft reservations'}), "
        f"m = {', '.join(map(str, m_values))}, {_fmt(horizon_s, 3).rstrip('0').rstrip('.')} s of virtual time per set"
    ]
    if spec.quick or spec.note:
        lines.append(f"NOTE: {spec.note or 'quick form'} — not the paper's full experiment.")
    lines.append(
        f"task sets: {total} generated ({len(spec.points)} (n, U) points × {p['samples']}); "
        f"{placed} placed by the SP-RES cascade, {total - placed} not placed (skipped); "
        f"{n_sim} contain a split task and were simulated at each slack level "
        f"(the paper reran ≈ {PAPER_SPRES_SETS:.0f}); the other {placed - n_sim} are partitioned: no migrations."
    )
    if p.get("exec_scale", 1.0) != 1.0:
        lines.append(
            f"execution times: {p['exec_scale']:g} × uniform in [(1 − 2s)·C, C] (rtspin -s {p['exec_scale']:g}; "
            "observed slack is relative to the scaled WCET), the same random numbers at every level."
        )
    else:
        lines.append(
            "execution times: uniform in [(1 − 2s)·C, C] (mean slack s), the same random numbers at every level."
        )
    lines.append("")
    header = [
        "average slack",
        "total migrations",
        "per sec. and core",
        "reduction",
        "paper: total",
        "paper: per sec. and core",
        "paper: reduction",
        "observed slack",
        "deadline misses",
    ]
    body = []
    for a in agg:
        body.append(
            [
                _pct(a["slack"]),
                _fmt(a["migrations"]),
                _fmt(a["rate"]),
                "" if a["slack"] == 0 else (_fmt(a["reduction"], 1) + "x" if a["reduction"] else "—"),
                _fmt(a["paper_total"]),
                _fmt(a["paper_rate"]),
                "" if a["slack"] == 0 else (_fmt(a["paper_reduction"], 1) + "x" if a["paper_reduction"] else "—"),
                _pct(round(a["observed_slack"], 4)) if a["observed_slack"] is not None else "—",
                _fmt(a["deadline_misses"]),
            ]
        )
    lines += _md(header, body)
    lines.append("")

    def nrate(d, sl):
        return d["mig"].get(sl, 0) / d["cs"] if d["cs"] else None

    lines += _md(
        ["n", "sets", "not placed", "with a split (simulated)"]
        + [f"per sec. and core at {_pct(sl)}" for sl in slacks]
        + ([f"reduction at {_pct(slacks[-1])}"] if len(slacks) > 1 and slacks[0] == 0 else []),
        [
            [n, d["sets"], d["not_placed"], d["split"]]
            + [_fmt(nrate(d, sl)) for sl in slacks]
            + (
                [_fmt(nrate(d, 0.0) / nrate(d, slacks[-1]), 1) + "x" if nrate(d, slacks[-1]) else "—"]
                if len(slacks) > 1 and slacks[0] == 0
                else []
            )
            for n, d in sorted(by_n.items())
        ],
    )
    return {
        "text": "\n".join(lines),
        "rows": agg,
        "by_n": by_n,
        "simulated_sets": n_sim,
        "sets": total,
        "not_placed": total - placed,
    }


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def rtws_tables(spec: SimSpec, table: pa.Table) -> dict:
    """Seed 003 Tables I–III (and the Fig. 3–4 averages) from the rows."""
    rows = table.to_pylist()
    p = spec.params
    scheds = p["schedulers"]
    ms = sorted({r["m"] for r in rows})
    wins = sorted({(r["lo"], r["hi"]) for r in rows})
    wname = [f"{round(lo * 100)}–{round(hi * 100)}%" for lo, hi in wins]

    def cell(m, w, sch):
        return [r for r in rows if r["m"] == m and (r["lo"], r["hi"]) == w and r["scheduler"] == sch]

    # "Migrations" as the paper counts them: RTWS steals; G-EDF (SCHED_DEADLINE in the paper)
    # moves of threads between cores: resumptions elsewhere plus threads started away from the
    # CPU they were forked on; SP-RES: job migrations.
    def paper_mig(r):
        if r["scheduler"] == "rtws":
            return r["steals"]
        if r["scheduler"] == "gedf":
            return r["migrations"] + (r["remote_starts"] or 0)
        return r["migrations"]

    avg = {}
    for m in ms:
        for w in wins:
            for sch in scheds:
                rs = [r for r in cell(m, w, sch) if r["placed"]]
                avg[(m, w, sch)] = {
                    "sets": len(rs),
                    "unplaced": len(cell(m, w, sch)) - len(rs),
                    "mig": _mean([paper_mig(r) for r in rs]),
                    "trace_mig": _mean([r["migrations"] for r in rs]),
                    "steals": _mean([r["steals"] for r in rs]),
                    "remote": _mean([r["remote_starts"] for r in rs]),
                    "cs": _mean([r["context_switches"] for r in rs]),
                    "misses": sum(r["deadline_misses"] for r in rs),
                    "jobs": sum(r["jobs"] for r in rs),
                }
    lines = [
        f"{spec.name}: seed 003 (RTWS) §VI Tables I–III and Figs. 3–4 in simulation — "
        f"{p['samples']} fork-join sets per (m, window), {p['horizon'] / 1e9:g} s of virtual time each; "
        f"schedulers: {', '.join(scheds)} (gedf = event-driven G-EDF over threads; spres = SP-RES with CASH over "
        "the sequentialized tasks, contrast only)"
    ]
    if spec.quick or spec.note:
        lines.append(f"NOTE: {spec.note or 'quick form'} — not the full experiment.")
    lines.append("")
    lines.append(
        "Table I — composition (totals over the sets; threads = Σ n_i, the parallel threads per task): ours [paper]"
    )
    hdr = ["m"] + [f"tasks {w}" for w in wname] + [f"threads {w}" for w in wname]
    body = []
    for m in ms:
        tasks, threads = [], []
        for w in wins:
            rs = cell(m, w, "rtws")
            pt = PAPER_RTWS_TABLE1.get(m)
            j = WINDOWS.index(w) if w in WINDOWS else None
            tasks.append(f"{sum(r['tasks'] for r in rs):,}" + (f" [{pt[0][j]}]" if pt and j is not None else ""))
            threads.append(
                f"{sum(r['par_threads'] for r in rs):,}" + (f" [{pt[1][j]}]" if pt and j is not None else "")
            )
        body.append([m] + tasks + threads)
    lines += _md(hdr, body)
    if p["samples"] != 20:
        lines.append(f"(the paper's totals are over 20 sets per cell, ours over {p['samples']})")

    def ratio_table(title, key, paper):
        out = ["", title]
        hdr = ["m"] + [f"{s} {w}" for s in scheds for w in wname]
        body = []
        for m in ms:
            row = [m]
            for sch in scheds:
                for w in wins:
                    base = avg.get((min(ms), w, "rtws"), {}).get(key)
                    v = avg[(m, w, sch)][key]
                    r = v / base if (v is not None and base) else None
                    pr = paper.get(m)
                    cellv = _fmt(r)
                    if pr and sch in ("rtws", "gedf") and w in WINDOWS and min(ms) == 2:
                        ref = pr[0 if sch == "rtws" else 1][WINDOWS.index(w)]
                        cellv += f" [{_fmt(ref) if ref is not None else '?'}]"
                    row.append(cellv)
            body.append(row)
        return out + _md(hdr, body)

    base_m = min(ms)
    lines += ratio_table(
        f"Table II — scale-up ratios on the number of migrations, relative to RTWS on m = {base_m} "
        "(RTWS: steals, as the paper counts them; G-EDF: thread migrations + remote starts, the "
        "paper's SCHED_DEADLINE column in brackets; SP-RES: job migrations): ours [paper]",
        "mig",
        PAPER_RTWS_TABLE2,
    )
    lines += ratio_table(
        f"Table III — scale-up ratios on the number of context switches, relative to RTWS on "
        f"m = {base_m}: ours [paper; G-EDF's bracket is SCHED_DEADLINE]",
        "cs",
        PAPER_RTWS_TABLE3,
    )
    lines.append("[?] = illegible in our copy of the paper.")
    lines.append("")
    lines.append(
        "Figs. 3–4 — averages per task set (all m; the paper plots m = 8): migrations as in Table II, "
        "thread-level migrations (resumption on another CPU), steals, remote starts, context switches"
    )
    hdr = [
        "m",
        "window",
        "scheduler",
        "sets",
        "migrations (Table II)",
        "thread migrations",
        "steals",
        "remote starts",
        "context switches",
        "deadline misses",
        "not placed",
    ]
    body = []
    for m in ms:
        for k, w in enumerate(wins):
            for sch in scheds:
                a = avg[(m, w, sch)]
                body.append(
                    [
                        m,
                        wname[k],
                        sch,
                        a["sets"],
                        _fmt(a["mig"], 1),
                        _fmt(a["trace_mig"], 1),
                        _fmt(a["steals"], 1) if sch == "rtws" else "—",
                        _fmt(a["remote"], 1) if sch == "gedf" else "—",
                        _fmt(a["cs"], 1),
                        a["misses"],
                        a["unplaced"],
                    ]
                )
    lines += _md(hdr, body)
    return {"text": "\n".join(lines), "avg": avg, "ms": ms, "windows": wins}


# ---------------------------------------------------------------------------------------------
# Figures and files.


def _figure_spres(res: dict, path: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = res["rows"]
    x = list(range(len(rows)))
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.bar([i - 0.2 for i in x], [r["rate"] or 0 for r in rows], width=0.4, label="rtsched simulation")
    ax.bar([i + 0.2 for i in x], [r["paper_rate"] or 0 for r in rows], width=0.4, label="paper (LITMUS^RT)")
    ax.set_xticks(x)
    ax.set_xticklabels([_pct(r["slack"]) for r in rows])
    ax.set_xlabel("average slack")
    ax.set_ylabel("migrations per second and core")
    ax.set_title("SP-RES migration rate vs. slack (seed 004 Table I)", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _figure_rtws(res: dict, spec: SimSpec, path: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = max(res["ms"])
    wins = res["windows"]
    scheds = spec.params["schedulers"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    width = 0.8 / len(scheds)
    for ax, key, title in (
        (axes[0], "mig", f"(a) migrations (RTWS: steals), m = {m}"),
        (axes[1], "cs", f"(b) context switches, m = {m}"),
    ):
        for k, sch in enumerate(scheds):
            ax.bar(
                [i + (k - (len(scheds) - 1) / 2) * width for i in range(len(wins))],
                [res["avg"][(m, w, sch)][key] or 0 for w in wins],
                width=width,
                label=sch,
            )
        ax.set_xticks(range(len(wins)))
        ax.set_xticklabels([f"{lo:g}–{hi:g}" for lo, hi in wins])
        ax.set_xlabel("per-core utilization window")
        ax.set_ylabel("average per task set")
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("seed 003 Figs. 3–4 in simulation", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _write_csv(path: Path, header: list, rows: list):
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    store.write_text_atomic(path, buf.getvalue())


def reproduce(
    path,
    *,
    quick: bool = False,
    out=None,
    executor=None,
    jobs=None,
    progress: bool = True,
    log=None,
    fmt: str = "png",
    override: dict | None = None,
    evaluator=None,
) -> dict:
    """Run (resuming) a simulation reproduction and write its tables (``NAME.md``), CSV and figure."""
    spec = load_sim_spec(path, quick=quick, override=override)
    out = Path(out) if out else Path("results") / (spec.name + ("-quick" if quick else ""))
    run = run_sim(spec, out, executor=executor, jobs=jobs, progress=progress, log=log, evaluator=evaluator)
    table = pa.concat_tables(run["tables"]) if run["tables"] else _schema(spec.kind).empty_table()
    fig = out / f"{spec.name}.{fmt}"
    csv_path = out / f"{spec.name}.csv"
    if spec.kind == "spres-table1":
        res = spres_table1(spec, table)
        _figure_spres(res, fig)
        _write_csv(
            csv_path,
            [
                "slack",
                "simulated_sets",
                "total_migrations",
                "migrations_per_s_per_core",
                "reduction",
                "paper_total",
                "paper_per_s_per_core",
                "paper_reduction",
                "observed_slack",
                "deadline_misses",
                "jobs",
            ],
            [
                [
                    r["slack"],
                    r["sets"],
                    r["migrations"],
                    r["rate"],
                    r["reduction"],
                    r["paper_total"],
                    r["paper_rate"],
                    r["paper_reduction"],
                    r["observed_slack"],
                    r["deadline_misses"],
                    r["jobs"],
                ]
                for r in res["rows"]
            ],
        )
    else:
        res = rtws_tables(spec, table)
        _figure_rtws(res, spec, fig)
        _write_csv(
            csv_path,
            [
                "m",
                "lo",
                "hi",
                "scheduler",
                "sets",
                "not_placed",
                "mean_migrations_table2",
                "mean_thread_migrations",
                "mean_steals",
                "mean_remote_starts",
                "mean_context_switches",
                "deadline_misses",
                "jobs",
            ],
            [
                [
                    m,
                    w[0],
                    w[1],
                    sch,
                    a["sets"],
                    a["unplaced"],
                    a["mig"],
                    a["trace_mig"],
                    a["steals"],
                    a["remote"],
                    a["cs"],
                    a["misses"],
                    a["jobs"],
                ]
                for (m, w, sch), a in res["avg"].items()
            ],
        )
    text = res["text"] + f"\n\n({run['computed']} point(s) computed in {run['seconds']:.1f} s, {run['kept']} kept)"
    md = out / f"{spec.name}.md"
    store.write_text_atomic(md, text + "\n")
    return {"figure": fig, "csv": csv_path, "tables": md, "text": text, "notes": [], "result": res, "run": run}


def is_sim_spec_path(path) -> bool:
    """Whether the spec file at ``path`` is a simulation reproduction (an unknown ``kind`` is
    an error naming the known ones)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError:
        return False
    return spec_kind(text, str(path)) is not None
