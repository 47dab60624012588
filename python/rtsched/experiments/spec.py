"""Sweep specs: parsing, validation, grid expansion, point ids and seeds (docs/experiments.md).

A spec is a TOML file. Every table rejects keys it does not know, naming the key and the table
(rt-app's lesson: a misspelled key must not be silently ignored). The grid expands to points in
a fixed order; each point's seed is derived from the base seed and the point's *generator*
parameters only (never from its position in the grid or the order of evaluation), so

- the same spec gives the same task sets on any executor, in any order, and after a resume;
- points that differ only in the methods or in epsilon test the *same* task sets (a paired
  comparison, as in Brandenburg & Gül, RTSS 2016 Fig. 5, where one set of task sets is tested with eight ε values);
- raising ``samples`` keeps the first task sets (set i depends only on the seed and i).
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from . import methods as method_names
from .errors import SpecError
from .fields import (
    AUTO_N,
    NExpr,
    at_least,
    axis_values,
    canonical_json,
    check_keys,
    count_n,
    dedupe,
    finite_number,
    integer_at_least,
    key_names,
    parse_duration_ns,
    read_keys,
    resolve_n,
    spec_key,
)
from .names import path_name
from .point import Point, derive_seed, point_id
from .variants import apply_variant, parse_semi

__all__ = ["NExpr", "Point", "PlotSpec", "Spec", "SpecError", "load_spec", "parse_spec"]

DEFAULT_MAX_STEPS = 1_000_000


def parse_samples(value: Any, where: str) -> int:
    """Task sets per point: an integer in 1..=MAX_SAMPLES (a sweep's and a simulation's ``samples``)."""
    samples = integer_at_least(value, where, 1)
    if samples > MAX_SAMPLES:
        raise SpecError(f"{where}: at most {MAX_SAMPLES:,} task sets per point, got {samples:,}")
    return samples


def _seed(value: Any, where: str) -> int:
    seed = integer_at_least(value, where, 0)
    if seed >= 2**63:
        raise SpecError(f"{where}: must be < 2^63")
    return seed


def _methods(value: Any, where: str) -> list:
    if not isinstance(value, list) or not value:
        raise SpecError(f"{where.rsplit(' ', 1)[0]}: 'methods' must be a non-empty list")
    return value


@dataclass(frozen=True, kw_only=True)
class SweepKeys:
    """The top level of a sweep spec, declared (``fields.read_keys``), read after its variant and
    [quick] are applied. The overhead keys (``overheads``, ``mechanism``, ``stat``, ``cpd``,
    ``quantum``, ``extrapolate``) are read by overheads.py, the tables by :func:`parse_spec`."""

    name: str | None = None  # default: the file's stem
    description: str = ""
    samples: int = spec_key(100, parse=parse_samples)
    seed: int = spec_key(0, parse=_seed)
    max_steps: int = spec_key(DEFAULT_MAX_STEPS, parse=at_least(1))
    methods: list = spec_key(parse=_methods)
    overheads: str | list | None = None  # a path, or paths read in order (overheads.py)
    mechanism: str | None = None
    stat: str | None = None
    cpd: int | str = 0
    quantum: int | str = "1ms"
    extrapolate: bool = False
    generator: dict = spec_key(factory=dict)
    grid: dict
    plot: dict = spec_key(factory=dict)
    quick: dict | None = None
    semi: dict | None = None
    variants: dict | None = None
    default_variant: str | None = None


TOP_KEYS = key_names(SweepKeys)
#: What a [variants.NAME] table of a sweep spec may set (variants.py).
VARIANT_KEYS = ("description", "samples", "generator", "grid", "plot", "semi")
GENERATOR_KEYS = ("name", "periods", "umax", "deadlines", "dag")
GRID_KEYS = ("m", "n", "util", "util_frac", "epsilon")
QUICK_KEYS = ("samples", "grid")
PLOT_KEYS = (
    "title",
    "x",
    "y",
    "panels",
    "curves",
    "groups",
    "panel_xlim",
    "xlim",
    "ylim",
    "yscale",
    "columns",
    "min_samples",
)
PLOT_X = ("util", "util_frac", "n", "m", "epsilon")
PLOT_DIMS = ("group", "m", "n", "epsilon", "none")
PLOT_Y = ("schedulable", "switch_rate")

#: Bounds of a spec (docs/experiments.md), checked before the grid is expanded: points of a
#: grid, task sets per point (a point's sets are held in memory together), task sets in all,
#: processors; and tasks per set (fields.MAX_N, which resolve_n checks).
MAX_POINTS = 1_000_000
MAX_SAMPLES = 1_000_000
MAX_TOTAL_SETS = 1_000_000_000
MAX_M = 16_384


def check_name(name: Any, where: str) -> str:
    """A spec's ``name``: a folder name, never a path (names.py: the one rule of names that
    become path components)."""
    return path_name(name, f"{where} name")


DEFAULT_GENERATOR = {"name": "randfixedsum", "periods": "loguniform:10ms-100ms", "umax": 1.0, "deadlines": "implicit"}


#: Generators that need a fixed n.
FIXED_N_GENERATORS = ("randfixedsum", "emberson", "uunifast-discard")


@dataclass
class PlotSpec:
    title: str = ""
    x: str = "util"
    y: str = "schedulable"
    panels: str = "none"
    curves: str = "group"
    groups: dict = field(default_factory=dict)  # label -> [methods], ordered
    panel_xlim: dict = field(default_factory=dict)  # panel key -> (lo, hi)
    xlim: tuple | None = None
    ylim: tuple | None = None
    yscale: str = "linear"
    columns: int | None = None
    min_samples: int = 1


@dataclass
class Spec:
    """A schedulability sweep. Like every experiment spec the runner (``sweep.run_sweep``) takes,
    it has ``name``, ``text``, ``quick``, ``hash``, ``points``, ``skipped``, ``kind`` and the
    result contract: ``schema``, ``expected_rows(point)``, ``result_table(point, result)`` and
    ``default_evaluator()`` (docs/experiments.md, "Experiment kinds")."""

    kind = "sweep"

    text: str
    path: str | None
    quick: bool
    name: str
    description: str
    generator: dict
    m: list
    n: list  # NExpr
    util: list | None
    util_frac: list | None
    epsilon: list
    methods: list
    samples: int
    seed: int
    max_steps: int
    overheads: dict | None  # the points' "overheads" object (experiments/overheads.py)
    plot: PlotSpec
    semi: dict = field(default_factory=dict)  # SP-RES options for the evaluator ([semi] table)
    variant: str | None = None  # the [variants.NAME] applied, if the spec has variants
    points: list = field(default_factory=list)
    skipped: list = field(default_factory=list)  # (coords, reason) of grid points not run

    @functools.cached_property
    def hash(self) -> str:
        """The identity of a sweep's results: a hash of its points (which fix everything computed)."""
        return hashlib.sha256(canonical_json(sorted(p.id for p in self.points)).encode()).hexdigest()[:16]

    @property
    def total_sets(self) -> int:
        return sum(p.count for p in self.points)

    # The result contract of a sweep point: the evaluator's columns (evaluate.py). evaluate.py
    # imports pyarrow (80-200 ms): only when a sweep runs, so that every command starts fast.
    @property
    def schema(self):
        from . import evaluate

        return evaluate.SCHEMA

    def expected_rows(self, point: Point) -> int:
        return point.count * len(point.params["methods"])

    def result_table(self, point: Point, result: Any) -> Any:
        from . import evaluate

        return evaluate.result_table(point, result)

    def default_evaluator(self) -> Callable[[str], dict]:
        from .. import _core
        from . import evaluate

        fn = evaluate.core_evaluator()  # fail here, with a clear message, not in every worker
        # Unknown generator, period, deadline and method names are errors before any point
        # runs (not in the first worker, minutes later) — when the core evaluates them.
        check = getattr(_core, "check_point_names", None)
        if check is not None and fn is getattr(_core, "evaluate_point", None):
            g = self.generator
            dag = canonical_json(g["dag"]) if "dag" in g else None
            try:
                check(g["name"], g["periods"], g["deadlines"], float(g["umax"]), list(self.methods), dag)
            except ValueError as e:
                raise SpecError(f"{self.path or self.name}: {e}") from None
        return evaluate.evaluate_point


#: The generator name of a sweep of DAG task sets (its points carry the ``dag`` object).
DAG_GENERATOR = "dag"


def _dag_generator(gen: dict, where: str) -> dict:
    """The [generator] of a sweep of DAG task sets (docs/experiments.md, "DAG task sets"):
    ``dag`` is a table with ``shape`` and the DAG generator's parameters (docs/dag.md,
    "Generators"; defaults as :func:`rtsched.generate_dag`'s), checked here; ``umax`` may exceed
    1; ``name``, ``periods`` and ``deadlines`` are the sequential generator's and are errors
    here (a DAG task's period follows from its volume and utilization, its deadline from
    ``beta``). The points' seeds do not depend on the ``dag`` table, so two shapes at the same
    point draw the same utilizations."""
    from .. import _core
    from ..dag import dag_generator

    for k in ("name", "periods", "deadlines"):
        if k in gen:
            raise SpecError(
                f"{where}.{k}: applies to sequential task sets; with [generator].dag, periods follow from the "
                "volumes and utilizations and deadlines from dag.beta"
            )
    table = gen["dag"]
    if not isinstance(table, dict):
        raise SpecError(f"{where}.dag: expected a table with shape and the DAG generator's parameters")
    if "shape" not in table:
        raise SpecError(f"{where}.dag: key 'shape' is required (nested-fork-join, erdos-renyi or layered)")
    params = {k: x for k, x in table.items() if k != "shape"}
    for k in ("n", "total", "umax"):
        if k in params:
            raise SpecError(f"{where}.dag.{k}: comes from the grid (n, util) and [generator].umax")
    try:
        dag = dag_generator(table["shape"], **params)
    except (_core.RtschedError, ValueError) as e:
        raise SpecError(f"{where}.dag: {e}") from None
    return {"name": DAG_GENERATOR, "periods": "", "umax": 1.0, "deadlines": "", "dag": dag}


def _str(value, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SpecError(f"{where}: expected a non-empty string, got {value!r}")
    return value


def _pair(value, where: str) -> tuple:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in value)
        or value[0] >= value[1]
    ):
        raise SpecError(f"{where}: expected [low, high] with low < high, got {value!r}")
    return (float(value[0]), float(value[1]))


def _parse_plot(table, methods: list, where: str, mechanism: str | None = None) -> PlotSpec:
    from .overheads import with_mechanism

    if not isinstance(table, dict):
        raise SpecError(f"{where}: expected a table")
    check_keys(table, PLOT_KEYS, f"table [plot] of {where}")
    w = f"{where} [plot]"
    p = PlotSpec()
    if "title" in table:
        if not isinstance(table["title"], str):
            raise SpecError(f"{w}.title: expected a string")
        p.title = table["title"]
    for key, allowed in (
        ("x", PLOT_X),
        ("y", PLOT_Y),
        ("panels", PLOT_DIMS),
        ("curves", PLOT_DIMS),
        ("yscale", ("linear", "log")),
    ):
        if key in table:
            if table[key] not in allowed:
                raise SpecError(f"{w}.{key}: expected one of {', '.join(allowed)}, got {table[key]!r}")
            setattr(p, key, table[key])
    if p.panels != "none" and p.panels == p.curves:
        raise SpecError(f"{w}: panels and curves are both {p.panels!r}")
    if p.x in (p.panels, p.curves):
        raise SpecError(f"{w}: x = {p.x!r} is also used for panels or curves")
    groups = table.get("groups")
    if groups is None:
        p.groups = {mt: [mt] for mt in methods}
    else:
        if not isinstance(groups, dict) or not groups:
            raise SpecError(f'{w}.groups: expected a non-empty table of label = [methods] or "@group"')
        for label, members in groups.items():
            gw = f"{w}.groups.{label}"
            members = [members] if isinstance(members, str) else members
            if not isinstance(members, list):
                raise SpecError(f'{gw}: expected a list of methods or a "@group" string')
            expanded = [with_mechanism(x, mechanism) for x in method_names.expand(members, gw)]
            missing = [mt for mt in expanded if mt not in methods]
            if missing:
                raise SpecError(f"{gw}: method(s) {', '.join(map(repr, missing))} are not in the spec's methods")
            p.groups[label] = expanded
    if "panel_xlim" in table:
        if not isinstance(table["panel_xlim"], dict):
            raise SpecError(f"{w}.panel_xlim: expected a table of panel = [low, high]")
        if p.panels == "none":
            raise SpecError(f'{w}.panel_xlim: there are no panels (panels = "none")')
        for key, v in table["panel_xlim"].items():
            if p.panels == "group" and key not in p.groups:
                raise SpecError(f"{w}.panel_xlim: {key!r} is not a group (groups: {', '.join(p.groups)})")
            p.panel_xlim[str(key)] = _pair(v, f"{w}.panel_xlim.{key}")
    if "xlim" in table:
        p.xlim = _pair(table["xlim"], f"{w}.xlim")
    if "ylim" in table:
        p.ylim = _pair(table["ylim"], f"{w}.ylim")
    if "columns" in table:
        p.columns = integer_at_least(table["columns"], f"{w}.columns", 1)
    if "min_samples" in table:
        p.min_samples = integer_at_least(table["min_samples"], f"{w}.min_samples", 1)
    return p


def parse_spec(text: str, path: str | None = None, quick: bool = False, variant: str | None = None) -> Spec:
    """Parse and validate a spec; ``variant`` applies its [variants.NAME] table (default: its
    ``default_variant``, variants.py), then ``quick`` its [quick] table (samples, grid keys)."""
    where = path or "<spec>"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{where}: not valid TOML: {e}") from None
    if "kind" in data:
        raise SpecError(
            f"{where}: a simulation reproduction (kind = {data['kind']!r}), not a sweep; run it with "
            "rtsched reproduce NAME (docs/reproductions.md)"
        )
    check_keys(data, TOP_KEYS, f"the top level of {where}")
    data, variant = apply_variant(data, variant, where, VARIANT_KEYS)
    q = data.get("quick")
    if q is not None:
        if not isinstance(q, dict):
            raise SpecError(f"{where}: [quick] must be a table")
        check_keys(q, QUICK_KEYS, f"table [quick] of {where}")
        if "grid" in q:
            if not isinstance(q["grid"], dict):
                raise SpecError(f"{where}: [quick.grid] must be a table")
            check_keys(q["grid"], GRID_KEYS, f"table [quick.grid] of {where}")
    if quick:
        if q is None:
            raise SpecError(f"{where}: --quick needs a [quick] table in the spec")
        data = dict(data)
        if "samples" in q:
            data["samples"] = q["samples"]
        if "grid" in q:
            qgrid = dict(data.get("grid", {}))
            if "util" in q["grid"] or "util_frac" in q["grid"]:
                qgrid.pop("util", None)
                qgrid.pop("util_frac", None)
            qgrid.update(q["grid"])
            data["grid"] = qgrid

    if "grid" not in data:
        raise SpecError(f"{where}: a [grid] table with m, n and util (or util_frac) is required")
    if "methods" not in data:
        raise SpecError(f"{where}: 'methods' (a list of test or heuristic names) is required")
    top = read_keys(SweepKeys, {k: v for k, v in data.items() if k != "quick"}, where)
    gen = top.generator
    check_keys(gen, GENERATOR_KEYS, f"table [generator] of {where}")
    generator = dict(DEFAULT_GENERATOR)
    if "dag" in gen:
        generator = _dag_generator(gen, f"{where} [generator]")
    for k in ("name", "periods", "deadlines"):
        if k in gen:
            generator[k] = _str(gen[k], f"{where} [generator].{k}")
    if "umax" in gen:
        umax = finite_number(gen["umax"], f"{where} [generator].umax", False)
        hi = MAX_M if "dag" in gen else 1
        if not 0 < umax <= hi:
            extra = "" if "dag" in gen else " (above 1 only for DAG tasks, [generator].dag)"
            raise SpecError(f"{where} [generator].umax: must be in (0, {hi}], got {umax}{extra}")
        generator["umax"] = float(umax)

    grid = top.grid
    check_keys(grid, GRID_KEYS, f"table [grid] of {where}")
    gw = f"{where} [grid]"
    for k in ("m", "n"):
        if k not in grid:
            raise SpecError(f"{gw}: key {k!r} is required")
    if ("util" in grid) == ("util_frac" in grid):
        raise SpecError(f"{gw}: give exactly one of 'util' (total U) and 'util_frac' (U as a fraction of m)")
    ms = dedupe(axis_values(grid["m"], f"{gw}.m", integer=True))
    for m in ms:
        if m < 1 or m > MAX_M:
            raise SpecError(f"{gw}.m: processor counts must be in 1..={MAX_M}, got {m}")
    ns = dedupe(axis_values(grid["n"], f"{gw}.n", item=NExpr.parse))
    if any(isinstance(e, NExpr) and e.text == AUTO_N for e in ns) and "dag" in generator:
        raise SpecError(f'{gw}.n: "auto" needs a Baker distribution; the DAG generator needs a fixed n')
    if any(isinstance(e, NExpr) and e.text == AUTO_N for e in ns) and generator["name"] in FIXED_N_GENERATORS:
        raise SpecError(f'{gw}.n: "auto" needs a Baker distribution; {generator["name"]!r} needs a fixed n')
    util = util_frac = None
    key = "util" if "util" in grid else "util_frac"
    vals = dedupe([float(v) for v in axis_values(grid[key], f"{gw}.{key}")])
    if any(v <= 0 for v in vals):
        raise SpecError(f"{gw}.{key}: utilizations must be > 0")
    if key == "util":
        util = vals
    else:
        util_frac = vals
    eps = grid.get("epsilon", [0])
    eps_list = eps if isinstance(eps, list) else [eps]
    if not eps_list:
        raise SpecError(f"{gw}.epsilon: the list is empty")
    epsilon = dedupe([parse_duration_ns(v, f"{gw}.epsilon") for v in eps_list])

    from . import overheads as ovh

    mechanism = top.mechanism
    methods = [ovh.with_mechanism(x, mechanism) for x in method_names.expand(top.methods, f"{where} methods")]
    samples, seed, max_steps = top.samples, top.seed, top.max_steps
    overheads = ovh.parse(data, path, where, methods)
    name = check_name(top.name if top.name is not None else (Path(path).stem if path else "sweep"), where)
    description = top.description
    plot = _parse_plot(top.plot, methods, where, mechanism)
    semi = parse_semi(top.semi, where)

    spec = Spec(
        text=text,
        path=path,
        quick=quick,
        name=name,
        description=description,
        generator=generator,
        m=ms,
        n=ns,
        util=util,
        util_frac=util_frac,
        epsilon=epsilon,
        methods=methods,
        samples=samples,
        seed=seed,
        max_steps=max_steps,
        overheads=overheads,
        plot=plot,
        semi=semi,
        variant=variant,
    )
    _expand(spec, gw)
    if not spec.points:
        raise SpecError(f"{where}: the grid has no feasible point ({len(spec.skipped)} skipped)")
    return spec


def _expand(spec: Spec, where: str):
    """Expand the grid in the order m, n, utilization, epsilon; compute ids and seeds.

    The grid's size is checked first (points, and points times samples), so that a typo such
    as ``step = 0.0000001`` is an error, not an exhausted memory."""
    per_m = len(spec.util if spec.util is not None else spec.util_frac or []) * len(spec.epsilon)
    points = sum(count_n(spec.n, m, where) for m in spec.m) * per_m
    if points > MAX_POINTS:
        raise SpecError(f"{where}: the grid has {points:,} points; at most {MAX_POINTS:,} are allowed")
    if points * spec.samples > MAX_TOTAL_SETS:
        raise SpecError(
            f"{where}: {points:,} points of {spec.samples:,} samples are {points * spec.samples:,} task sets; "
            f"at most {MAX_TOTAL_SETS:,} are allowed"
        )
    seen = set()
    for m in spec.m:
        for n, n_expr in resolve_n(spec.n, m, where):
            utils = spec.util if spec.util is not None else [round(f * m, 10) for f in spec.util_frac or []]
            for u in utils:
                coords_base = {"m": m, "n": n, "n_expr": n_expr, "util": u, "util_frac": round(u / m, 10)}
                if n is not None and u > n * spec.generator["umax"] + 1e-9:
                    spec.skipped.append((coords_base, f"U = {u} exceeds n * umax = {n * spec.generator['umax']}"))
                    continue
                seed = derive_seed(spec.seed, spec.generator, n, m, u)
                for eps in spec.epsilon:
                    params = {
                        "generator": spec.generator["name"],
                        "periods": spec.generator["periods"],
                        "umax": spec.generator["umax"],
                        "deadlines": spec.generator["deadlines"],
                        "n": n,
                        "m": m,
                        "util": u,
                        "count": spec.samples,
                        "seed": seed,
                        "methods": list(spec.methods),
                        "epsilon": eps,
                        "max_steps": spec.max_steps,
                    }
                    if "dag" in spec.generator:  # only then: the other points keep their ids
                        params["dag"] = spec.generator["dag"]
                    if spec.overheads is not None:
                        params["overheads"] = spec.overheads
                    params.update(spec.semi)  # only the keys given: other specs keep their ids
                    pid = point_id(params)
                    if pid in seen:
                        continue
                    seen.add(pid)
                    spec.points.append(Point(pid, params, dict(coords_base, epsilon=eps)))


def load_spec(path: str | os.PathLike, quick: bool = False, variant: str | None = None) -> Spec:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"cannot read spec {str(p)!r}: {e.strerror}") from None
    return parse_spec(text, str(p), quick, variant)
