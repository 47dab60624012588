"""Brandenburg & Anderson, RTSS 2009, Fig. 5: soft real-time schedulability (bounded tardiness:
inflated U ≤ capacity with average-case overheads) versus the utilization cap, per G-EDF plugin,
for the six Baker distributions with moderate periods. Setup and curves: ``rtss09_hrt``."""

from __future__ import annotations

from typing import Any

from ._overheads import csv_files, figure, summarize  # noqa: F401  (the protocol's steps, reproduction.py)
from .rtss09_hrt import Keys, build

DESCRIPTION = (
    "Brandenburg & Anderson, RTSS 2009, Fig. 5: SRT schedulability vs. utilization cap per G-EDF plugin, "
    "six distributions, with measured overheads"
)
SPEC = "rtss09-srt.toml"
KIND = "rtss09-srt"
KEYS = Keys  # the declared top level of its spec (rtss09-hrt's)
OVERHEADS = True


def parse(text: str, path: str | None = None, quick: bool = False, override: dict | None = None) -> Any:
    return build(text, path, quick, override, soft=True, name="rtss09-srt")
