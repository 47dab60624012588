"""Nogueira et al., EUC 2012 (RTWS: Real-Time Work-Stealing, global EDF with priority-aware
work stealing for fork-join tasks), §VI: Tables I-III and Figs. 3-4 (``rtsched reproduce
rtws-tables [--engine simulator|threads] [--quick]``; docs/reproductions.md, docs/rtws.md).

One artefact, two engines (engines.py), one spec (``specs/rtws-tables.toml``):

* ``simulator`` (the default; :mod:`.simulator`): fork-join sets of the paper's generator on m
  cores and three per-core utilization windows, simulated under RTWS, G-EDF over threads and,
  for contrast, SP-RES; Tables I-III and the Figs. 3-4 averages.
* ``threads`` (:mod:`.threads`; the spec's ``[engines.threads]``; formerly the reproduction
  ``rtws-runtime``, a name that still runs it): the same sets on m real CPUs under the
  runtime's rtws and push-pull, beside the simulator on the same sets; Tables II-III.

What both share (the paper's numbers, the windows, the grid, the sets): :mod:`.common`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from ...engines import Engine, engine_of, parse_engine
from ...reproduction import Csv
from .._sim import SimSpec
from . import simulator, threads
from .common import (  # noqa: F401  (the paper's numbers, read by the tests and the docs' checks)
    FJ_SEED_DERIVATION,
    PAPER_RTWS_TABLE1,
    PAPER_RTWS_TABLE2,
    PAPER_RTWS_TABLE3,
    WINDOWS,
)

DESCRIPTION = (
    "Nogueira et al., EUC 2012 (RTWS), Tables I-III and Figs. 3-4: migrations, steals, context switches, "
    "scale-up ratios"
)
SPEC = "rtws-tables.toml"
KIND = simulator.KIND
#: The engines, the default first.
ENGINES: dict[str, Engine] = {"simulator": simulator, "threads": threads}
#: The declared top level of the spec on its default engine (each engine's: ``ENGINES[E].Keys``).
KEYS = simulator.Keys


def parse(
    text: str,
    path: str | None = None,
    quick: bool = False,
    override: dict | None = None,
    variant: str | None = None,
    engine: str | None = None,
) -> SimSpec:
    """Parses the spec for ``engine`` (None: the spec's ``engine``, default simulator)."""
    return parse_engine(ENGINES, KIND, text, path, quick=quick, override=override, variant=variant, engine=engine)


def evaluate_point(point_json: str) -> dict:
    """One point, by the engine its ``kind`` names."""
    return engine_of(ENGINES, json.loads(point_json)["kind"]).evaluate_point(point_json)


def summarize(spec: SimSpec, table: pa.Table) -> dict:
    return engine_of(ENGINES, spec).summarize(spec, table)


def figure(res: dict, spec: SimSpec, path: Path) -> Path:
    return engine_of(ENGINES, spec).figure(res, spec, path)


def csv_files(res: dict, spec: SimSpec) -> dict[str, Csv]:
    return engine_of(ENGINES, spec).csv_files(res, spec)
