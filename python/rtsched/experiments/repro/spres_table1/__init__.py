"""Brandenburg & Gül, RTSS 2016, §VII: Table I, the SP-RES migration rate at 0-50% average slack
(``rtsched reproduce spres-table1 [--engine simulator|threads] [--variant artifact|text]
[--quick]``; docs/reproductions.md, docs/spres.md).

One artefact, two engines (engines.py), one spec (``specs/spres-table1.toml``):

* ``simulator`` (the default; :mod:`.simulator`): the task sets of the paper's first experiment
  placed by the SP-RES cascade, those with a split task simulated under SP-RES with CASH at
  each slack level (m = 44, as the paper).
* ``threads`` (:mod:`.threads`, :mod:`.threads_report`; the spec's ``[engines.threads]``;
  formerly the reproduction ``spres-runtime``, a name that still runs it): the same sets run on
  real threads under SP-RES, P-EDF, P-FP and GSN-EDF, measuring Fig. 7's and Fig. 8's
  overheads along the way, and Table I on threads beside the simulator on the same sets.

What both share (the paper's Table I, the sets and their keys, the slack runs): :mod:`.common`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from ...engines import Engine, engine_of, parse_engine
from ...reproduction import Csv
from .._sim import SimSpec
from . import simulator, threads
from .common import (  # noqa: F401  (the paper's numbers and the sets' rules, read by the tests)
    PAPER_SPRES_M,
    PAPER_SPRES_TABLE1,
    placed_sets,
    scale_short_tasks,
    slack_exec_fraction,
)

DESCRIPTION = (
    "Brandenburg & Gül, RTSS 2016, Table I: SP-RES migrations per second and core vs. average slack "
    "(on threads with Figs. 7-8's overheads)"
)
SPEC = "spres-table1.toml"
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
    """Parses the spec for ``engine`` (None: the spec's ``engine``, default simulator) and
    ``variant`` (None: its ``default_variant``)."""
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
