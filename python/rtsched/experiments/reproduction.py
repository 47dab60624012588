"""The one protocol of a reproduction and the one report drawn through it.

A reproduction is a module of ``rtsched.experiments.repro`` (one line in
``registry.REPRODUCTIONS``). Every one is a :class:`Reproduction`: it names itself and its spec,
parses the spec into the object the one runner (``sweep.run_sweep``) runs, and turns the
finished points into its tables and figure in three steps:

- ``summarize(spec, table)``: the aggregates and the tables' text (``res["text"]``) from every
  point's rows (one table);
- ``figure(res, spec, path)``: the figure, written to ``path``;
- ``csv_files(res, spec)``: the CSV files, each a :class:`Csv` (file name, columns, rows) under
  the key that names its path in the report's result; ``"csv"`` (``NAME.csv``) is required.

:func:`report` is written once for all of them: load the points, summarize, draw, write the
CSVs, write ``NAME.md`` (``_sim.write_report``). A simulation's points are evaluated by its
module-level ``evaluate_point(point_json)`` (named by the spec, ``SimSpec.evaluator``, so worker
processes can import it); a sweep's by the Rust core (``evaluate.py``).

The plain schedulability sweeps (``KIND`` None: ``repro/_sweep.py`` and the spres-fig modules)
are the one exception: their figure is the ``[plot]`` table's, drawn by ``plot.plot_results``
from the results directory (as ``rtsched plot`` draws it, without a spec object), with its
crossings and no ``NAME.md``; they are a :class:`SweepReproduction`, whose ``report`` is that.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

import pyarrow as pa

from .repro._sim import write_csv, write_report
from .sweep import SweepResult, load_tables


@dataclass(frozen=True)
class Csv:
    """One CSV file of a report: its name in the results directory, its columns and its rows
    (a quick run's gets the quick column, ``quickmark.csv_table``)."""

    file: str
    header: list
    rows: list


class _Named(Protocol):
    """What the registry reads of every reproduction module."""

    @property
    def DESCRIPTION(self) -> str:  # noqa: N802  (a module constant)
        """One line, naming the paper by authors and venue."""

    @property
    def SPEC(self) -> str:  # noqa: N802
        """The file name of its TOML spec in ``specs/``."""

    @property
    def KIND(self) -> str | None:  # noqa: N802
        """None for a schedulability sweep, else the ``kind`` its spec carries."""

    @property
    def KEYS(self) -> type:  # noqa: N802
        """The declared top level of its spec: a frozen dataclass whose fields are the keys,
        read by ``fields.read_keys`` (an unknown, missing or wrongly typed key is refused)."""

    def parse(self, text: str, path: str | None = None, quick: bool = False, override: dict | None = None) -> Any:
        """The spec object ``run_sweep`` runs (``quick``: its [quick] table; ``override``: the
        tests' tiny forms); a module with variants also takes ``variant``."""


@runtime_checkable
class Reproduction(_Named, Protocol):
    """A reproduction whose tables and figure :func:`report` draws."""

    def summarize(self, spec: Any, table: pa.Table) -> dict:
        """The aggregates and ``text`` (the tables, as printed and written to ``NAME.md``)."""

    def figure(self, res: dict, spec: Any, path: Path) -> Path:
        """Draws the figure to ``path``; returns the path written."""

    def csv_files(self, res: dict, spec: Any) -> dict[str, Csv]:
        """The CSVs, by the key of their path in the report's result (``"csv"`` required)."""


@runtime_checkable
class SweepReproduction(_Named, Protocol):
    """A schedulability sweep drawn by its ``[plot]`` table (``repro/_sweep.py``)."""

    def report(self, spec: Any, out: Path, run: SweepResult, fmt_: str = "png") -> dict:
        """The figure, its CSVs and crossings, drawn from the results directory."""


def draw(mod: Reproduction | SweepReproduction, spec: Any, out: Path, run: SweepResult, fmt_: str = "png") -> dict:
    """The report of any reproduction: a sweep's (``KIND`` None) its own, any other's :func:`report`."""
    if mod.KIND is None:
        return cast(SweepReproduction, mod).report(spec, out, run, fmt_)
    return report(cast(Reproduction, mod), spec, out, run, fmt_)


def report(mod: Reproduction, spec: Any, out: Path, run: SweepResult, fmt_: str = "png") -> dict:
    """The one report: ``mod.summarize`` over every point's rows, ``mod.figure`` to
    ``OUT/NAME.FMT``, ``mod.csv_files`` written under ``OUT``, the tables to ``OUT/NAME.md``.
    Returns the paths written (``figure``, ``csv``, ``tables`` and the other CSVs by their key),
    the text, the aggregates (``result``), the runner's result (``sweep``) and its counts (``run``)."""
    res = mod.summarize(spec, pa.concat_tables(load_tables(spec, out)))
    figure = mod.figure(res, spec, out / f"{spec.name}.{fmt_}")
    paths = {key: write_csv(out / c.file, c.header, c.rows, spec.quick) for key, c in mod.csv_files(res, spec).items()}
    rep = write_report(spec, out, res, run, figure, paths.pop("csv"))
    rep.update(paths)
    return rep
