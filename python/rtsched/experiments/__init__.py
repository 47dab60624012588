"""The experiment engine: sweep specs, executors, resumable Parquet results, plots, and the figure
registry (docs/experiments.md).

The evaluator of a point is one call to the Rust core, ``rtsched._core.evaluate_point``; the
engine reproduces the schedulability experiments of Brandenburg & Gül, RTSS 2016, §V (Figs. 3-6).
Dask is imported only when a Dask executor is asked for.
"""

from .errors import SpecError  # noqa: F401
from .spec import Point, Spec, load_spec, parse_spec  # noqa: F401
from .sweep import SweepResult, run_sweep  # noqa: F401

__all__ = ["Point", "Spec", "SpecError", "SweepResult", "load_spec", "parse_spec", "run_sweep"]
