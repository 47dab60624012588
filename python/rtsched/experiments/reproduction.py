"""The one protocol of a reproduction.

A reproduction is a module of ``rtsched.experiments.repro`` (one line in
``registry.REPRODUCTIONS``). Every one names itself and its spec and parses the spec into the
object the one runner (``sweep.run_sweep``) runs; a :class:`Reproduction` turns the finished
points into its tables and figure in two steps:

- ``summarize(spec, table)``: the aggregates and the tables' text (``res["text"]``) from every
  point's rows (one table);
- ``figure(res, spec, path)``: the figure, written to ``path``;

and ``report(spec, out, run, fmt)`` writes them with the CSVs. A simulation's points are
evaluated by its module-level ``evaluate_point(point_json)`` (named by the spec,
``SimSpec.evaluator``, so worker processes can import it); a sweep's by the Rust core
(``evaluate.py``).

The plain schedulability sweeps (``KIND`` None: ``repro/_sweep.py`` and the spres-fig modules)
are the one exception: their figure is the ``[plot]`` table's, drawn by ``plot.plot_results``
from the results directory (as ``rtsched plot`` draws it, without a spec object), with its
crossings and no ``NAME.md``; they are a :class:`SweepReproduction`, whose ``report`` is that.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from .sweep import SweepResult


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

    def parse(self, text: str, path: str | None = None, quick: bool = False, override: dict | None = None) -> Any:
        """The spec object ``run_sweep`` runs (``quick``: its [quick] table; ``override``: the
        tests' tiny forms); a module with variants also takes ``variant``."""


class Reproduction(_Named, Protocol):
    """A reproduction whose tables and figure :func:`report` draws."""

    def summarize(self, spec: Any, table: pa.Table) -> dict:
        """The aggregates and ``text`` (the tables, as printed and written to ``NAME.md``)."""

    def figure(self, res: dict, spec: Any, path: Path) -> Path:
        """Draws the figure to ``path``; returns the path written."""

    def report(self, spec: Any, out: Path, run: SweepResult, fmt_: str = "png") -> dict:
        """The figure, CSVs and tables from the finished points (``sweep.load_tables``)."""


class SweepReproduction(_Named, Protocol):
    """A schedulability sweep drawn by its ``[plot]`` table (``repro/_sweep.py``)."""

    def report(self, spec: Any, out: Path, run: SweepResult, fmt_: str = "png") -> dict:
        """The figure, its CSVs and crossings, drawn from the results directory."""
