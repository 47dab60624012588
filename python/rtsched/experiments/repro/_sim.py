"""What the simulation reproductions share: their spec object, the parsing of their common keys,
the result contract of their points, and the helpers of their tables and files.

A simulation reproduction is a spec with a top-level ``kind`` (the registry name of the module
that defines the kind, e.g. ``"spres-table1"``). It expands to points like a sweep, each point
being one call of the kind module's ``evaluate_point`` (module level, so that worker processes
can import it), and runs through the one runner, ``sweep.run_sweep``: one atomically written
Parquet file per point with spec, seed and version, kept on resume.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from ...output import write_text
from .. import quickmark
from ..errors import EvaluatorError, SpecError
from ..fields import (
    at_least,
    axis_values,
    canonical_json,
    check_keys,
    dedupe,
    key_names,
    parse_duration_ns,
    read_keys,
    spec_key,
)
from ..names import path_name
from ..point import Point, point_id
from ..spec import MAX_M, parse_samples, tomllib
from ..variants import apply_variant

QUICK_KEYS = ("samples", "horizon", "slack", "grid", "note")


def _name(value: Any, where: str) -> str:
    return path_name(value, where)


def _horizon(value: Any, where: str) -> int:
    horizon = parse_duration_ns(value, where)
    if horizon < 1:
        raise SpecError(f"{where}: must be at least 1 ns")
    return horizon


def _ms(value: Any, where: str) -> list:
    ms = dedupe(axis_values(value, where, integer=True))
    if any(m < 1 or m > MAX_M for m in ms):
        raise SpecError(f"{where}: processor counts must be in 1..={MAX_M}")
    return ms


@dataclass(frozen=True, kw_only=True)
class SimKeys:
    """The top level of a simulation reproduction's spec, declared (``fields.read_keys``): the
    keys every one has; a reproduction's own class adds its keys. ``quick``, ``variants`` and
    ``default_variant`` are applied before the keys are read (:func:`parse_common`)."""

    name: str | None = spec_key(None, parse=_name)  # default: the file's stem (else the kind)
    kind: str
    description: str = ""
    seed: int = spec_key(0, parse=at_least(0))
    samples: int = spec_key(10, parse=parse_samples)
    horizon: int = spec_key(30 * 10**9, parse=_horizon)  # ns
    grid: dict
    quick: dict | None = None
    variants: dict | None = None
    default_variant: str | None = None


#: Keys every simulation reproduction accepts at the top level.
COMMON_KEYS = key_names(SimKeys)


@dataclass(frozen=True, kw_only=True)
class SimGrid:
    """The ``[grid]`` of a simulation reproduction, declared: processor counts; a reproduction's
    own class adds its axes."""

    m: list = spec_key(parse=_ms)


@dataclass
class SimSpec:
    """A simulation reproduction's spec: the runner's protocol (``name``, ``text``, ``quick``,
    ``hash``, ``points``, ``skipped``, ``kind``, ``schema``, ``expected_rows``, ``result_table``,
    ``default_evaluator``) plus the kind's parameters."""

    text: str
    path: str | None
    name: str
    kind: str
    quick: bool
    description: str
    params: dict
    #: The point table's columns (``point`` first) and the rows each task set gives.
    schema: pa.Schema
    rows_per_set: int
    #: The kind's evaluator (a module-level function of one point's JSON).
    evaluator: Callable[[str], dict]
    points: list = field(default_factory=list)  # spec.Point, in grid order
    skipped: list = field(default_factory=list)  # always empty: infeasible grid points are errors
    note: str = ""
    variant: str | None = None  # the [variants.NAME] applied (variants.py), if any
    engine: str | None = None  # the engine it runs on, where the reproduction has two (engines.py)

    @functools.cached_property
    def hash(self) -> str:
        return hashlib.sha256(canonical_json(sorted(p.id for p in self.points)).encode()).hexdigest()[:16]

    @property
    def total_sets(self) -> int:
        return sum(p.count for p in self.points)

    def expected_rows(self, point) -> int:
        return point.count * self.rows_per_set

    def default_evaluator(self) -> Callable[[str], dict]:
        return self.evaluator

    def result_table(self, point, cols) -> pa.Table:
        """The point's table from the evaluator's columns (all of the schema but ``point``)."""
        names = [f.name for f in self.schema if f.name != "point"]
        if not isinstance(cols, dict) or set(cols) != set(names):
            got = sorted(cols) if isinstance(cols, dict) else type(cols).__name__
            raise EvaluatorError(f"point {point.id}: columns {got} differ from {names}")
        rows = self.expected_rows(point)
        arrays = [pa.array([point.id] * rows, pa.string())]
        for f in self.schema:
            if f.name == "point":
                continue
            if len(cols[f.name]) != rows:
                raise EvaluatorError(
                    f"point {point.id}: column {f.name!r} has {len(cols[f.name])} rows, expected {rows}"
                )
            arrays.append(pa.array(cols[f.name], f.type))
        return pa.Table.from_arrays(arrays, schema=self.schema)


def _merge(data: dict, over: dict, where: str, grid_keys) -> dict:
    data = dict(data)
    for k, v in over.items():
        if k == "grid":
            if not isinstance(v, dict):
                raise SpecError(f"{where}: 'grid' must be a table")
            check_keys(v, grid_keys, f"the grid override of {where}")
            grid = dict(data.get("grid", {}))
            if "util" in v or "util_frac" in v:
                grid.pop("util", None)
                grid.pop("util_frac", None)
            grid.update(v)
            data["grid"] = grid
        elif k != "note":
            data[k] = v
    return data


def float_list(v, where: str, lo: float, hi: float) -> list:
    vals = v if isinstance(v, list) else [v]
    out = []
    for x in vals:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not lo <= x <= hi:
            raise SpecError(f"{where}: expected numbers in [{lo}, {hi}], got {x!r}")
        out.append(float(x))
    if not out:
        raise SpecError(f"{where}: the list is empty")
    return dedupe(out)


@dataclass
class Parsed:
    """The common part of a simulation spec, parsed: the kind's module finishes it."""

    spec: SimSpec
    keys: Any  # the reproduction's declared top level (a SimKeys), read after [quick] and the override
    grid: Any  # its declared [grid] (a SimGrid)
    where: str

    @property
    def ms(self) -> list:
        return self.grid.m

    @property
    def seed(self) -> int:
        return self.keys.seed

    @property
    def samples(self) -> int:
        return self.keys.samples

    @property
    def horizon(self) -> int:
        return self.keys.horizon


def load_toml(text: str, where: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{where}: not valid TOML: {e}") from None


def parse_common(
    text: str,
    path: str | None,
    kind: str,
    keys: type[SimKeys],
    grid: type[SimGrid],
    *,
    schema: pa.Schema,
    evaluator: Callable[[str], dict],
    quick: bool = False,
    override: dict | None = None,
    variant: str | None = None,
    variant_keys=(),
    data: dict | None = None,
) -> Parsed:
    """Reads a simulation spec into its declared classes ``keys`` (top level) and ``grid``
    (``fields.read_keys``: unknown keys, missing keys and wrongly typed values refused, naming
    the file and the key): ``variant`` applies its [variants.NAME] table (keys ``variant_keys``;
    default: its ``default_variant``), ``quick`` its [quick] table, ``override`` (top-level keys
    and an optional ``grid`` table) is applied last (the tests' tiny forms). ``data``: the TOML
    already read from ``text`` (with an engine's table applied, engines.py)."""
    where = path or "<spec>"
    if data is None:
        data = load_toml(text, where)
    grid_keys = key_names(grid)
    check_keys(data, key_names(keys), f"the top level of {where}")
    data, variant = apply_variant(data, variant, where, variant_keys)
    q = data.get("quick")
    if q is not None:
        if not isinstance(q, dict):
            raise SpecError(f"{where}: [quick] must be a table")
        check_keys(q, QUICK_KEYS, f"table [quick] of {where}")
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
    top = read_keys(keys, data, where)
    g = read_keys(grid, top.grid, where, "grid")
    name = top.name if top.name is not None else _name(Path(path).stem if path else kind, f"{where} name")
    spec = SimSpec(
        text=text,
        path=path,
        name=name,
        kind=kind,
        quick=quick,
        description=top.description,
        params={},
        schema=schema,
        rows_per_set=1,
        evaluator=evaluator,
        note=note,
        variant=variant,
    )
    return Parsed(spec, top, g, where)


def add_point(spec: SimSpec, params: dict, coords: dict) -> None:
    spec.points.append(Point(point_id(params), params, coords))


def derive(seed_key: dict) -> int:
    """A 63-bit seed from a canonical-JSON key (SHA-256, top 63 bits)."""
    return int.from_bytes(hashlib.sha256(canonical_json(seed_key).encode()).digest()[:8], "big") >> 1


# ---------------------------------------------------------------------------------------------
# Tables and files.


def fmt(x, digits=2) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:.{digits}f}"


def pct(s: float) -> str:
    return f"{s * 100:g}%"


def md(header: list, rows: list) -> list:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def median(xs):
    """The median of the values that are not None (the mean of the middle two for an even
    count); None when there are none. For costs, where one outlier would move a mean."""
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    k = len(xs) // 2
    return xs[k] if len(xs) % 2 else (xs[k - 1] + xs[k]) / 2


def write_csv(path: Path, header: list, rows: list, quick: bool = False) -> Path:
    """Writes a CSV table; a quick run's (``quick``) carries the quick column (quickmark.py)."""
    header, rows = quickmark.csv_table(header, rows, quick)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    return write_text(path, buf.getvalue())


def figure_axes(*args, **kw):
    """matplotlib's (figure, axes), drawn without a display."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(*args, **kw)


def close(fig) -> None:
    import matplotlib.pyplot as plt

    plt.close(fig)


def write_report(spec: SimSpec, out: Path, res: dict, run, figure: Path, csv_path: Path) -> dict:
    """Writes the tables (``res["text"]`` and what the run did) to ``OUT/NAME.md``; returns the
    paths written, the text, the kind's aggregates (``result``), the runner's ``SweepResult``
    (``sweep``) and its counts (``run``). A quick run's title line carries the quick mark."""
    counts = {"computed": len(run.computed), "kept": len(run.kept), "seconds": run.seconds}
    text = (
        quickmark.first_line(res["text"], spec.quick, spec.name)
        + f"\n\n({counts['computed']} point(s) computed in {counts['seconds']:.1f} s, {counts['kept']} kept)"
    )
    tables = write_text(out / f"{spec.name}.md", text + "\n")
    return {
        "figure": figure,
        "csv": csv_path,
        "tables": tables,
        "text": text,
        "notes": [],
        "result": res,
        "sweep": run,
        "run": counts,
    }
