"""What the schedulability-sweep reproductions share: their spec is a sweep spec (``spec.py``),
evaluated by the Rust core (``evaluate.py``), drawn by ``plot.plot_results`` from its
``[plot]`` table. A module for such a reproduction only names its spec and describes itself:

    from ._sweep import parse, report  # noqa: F401

    DESCRIPTION = "Authors, VENUE YEAR, Fig. N: what it shows"
    SPEC = "name.toml"
"""

from __future__ import annotations

from pathlib import Path

from ..errors import SpecError
from ..plot import crossings, crossings_lines, plot_results, write_crossings, write_figure_table
from ..spec import Spec, SweepKeys, parse_spec
from ..sweep import SweepResult

KIND = None  # a plain sweep: its spec has no ``kind``
KEYS = SweepKeys  # the declared top level of its spec


def parse(
    text: str, path: str | None = None, quick: bool = False, override: dict | None = None, variant: str | None = None
) -> Spec:
    if override:
        raise SpecError(f"{path or '<spec>'}: override applies only to simulation reproductions")
    return parse_spec(text, path, quick, variant)


def report(spec: Spec, out: Path, run: SweepResult, fmt_: str = "png") -> dict:
    """The figure ``OUT/NAME.FMT`` and its per-point CSV, drawn from the results directory; the
    figure's numbers as ``OUT/table.csv`` (panel, curve, x, value, sets); for fraction-schedulable
    figures the U99 / 95% / 50% crossings of every curve as ``OUT/crossings.csv`` (and as text,
    ``crossings_text``)."""
    drawn = plot_results(out, out / f"{spec.name}.{fmt_}")
    drawn["table"] = write_figure_table(drawn["spec"], drawn["data"], out / "table.csv")
    cross = crossings(drawn["spec"], drawn["data"], drawn["rows"])
    drawn["crossings"] = cross
    if cross:
        drawn["crossings_csv"] = write_crossings(cross, out / "crossings.csv", drawn["spec"].quick)
    drawn["crossings_text"] = crossings_lines(drawn["spec"], cross)
    drawn["sweep"] = run
    return drawn
