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
from ..plot import plot_results
from ..spec import Spec, parse_spec
from ..sweep import SweepResult

KIND = None  # a plain sweep: its spec has no ``kind``


def parse(text: str, path: str | None = None, quick: bool = False, override: dict | None = None) -> Spec:
    if override:
        raise SpecError(f"{path or '<spec>'}: override applies only to simulation reproductions")
    return parse_spec(text, path, quick)


def report(spec: Spec, out: Path, run: SweepResult, fmt_: str = "png") -> dict:
    """The figure ``OUT/NAME.FMT`` and its CSV, drawn from the results directory."""
    drawn = plot_results(out, out / f"{spec.name}.{fmt_}")
    drawn["sweep"] = run
    return drawn
