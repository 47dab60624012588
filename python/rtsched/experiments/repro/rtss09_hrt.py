"""Brandenburg & Anderson, RTSS 2009, Fig. 4 (hard real-time) — and, through :func:`build`,
Fig. 5 (soft real-time, ``rtss09_srt``): the fraction of task sets schedulable under each G-EDF
plugin after accounting for its measured overheads, versus the utilization cap, for the six
Baker distributions with moderate periods (uniform integral in [10, 100] ms).

Setup, as §4.2 states it: tasks are generated "until a specified cap on total utilization was
reached" and the last one discarded (``n = "auto"``); HRT = any of the five G-EDF tests
(GFB, BAK, BCL, BCL-iterative, BAR) after inflation with worst-case overheads and aligned
quanta (S-CQm, S-CQ1: staggered quanta), Baruah's test disabled for the light uniform
distribution "since it failed to terminate in reasonable time" (we print that reason); SRT =
inflated U ≤ capacity with average-case overheads (and staggered quanta for the quantum-driven
plugins, whose periods are not modified). One curve per plugin of Table 1 (numbered as in the
paper: [1] ideal G-EDF, [2] CQm … [8] FE1, [9] S-CQm, [10] S-CQ1); the utilization cap runs
from 1 to m, m being the processors the models were measured on. GSN-EDF is the CEm design and
GSN-EDF-DI the CE1 design, so their models draw CEm and CE1 until models of our own CEm and CE1
plugins exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import SpecError
from ..fields import spec_key
from ._overheads import (
    Curve,
    Figure,
    OverheadKeys,
    Panel,
    available,
    common,
    compose,
    csv_files,  # noqa: F401  (the protocol's steps, reproduction.py)
    figure,  # noqa: F401
    platform_m,
    read,
    sub_spec_toml,
    summarize,  # noqa: F401
)

DESCRIPTION = (
    "Brandenburg & Anderson, RTSS 2009, Fig. 4: HRT schedulability vs. utilization cap per G-EDF plugin, "
    "six distributions, with measured overheads"
)
SPEC = "rtss09-hrt.toml"
KIND = "rtss09-hrt"
#: `rtsched reproduce NAME --overheads DIR` applies.
OVERHEADS = True


@dataclass(frozen=True, kw_only=True)
class Keys(OverheadKeys):
    """The spec's top level: the common keys, ``periods`` and ``nobar`` (the distributions
    without Baruah's test)."""

    periods: str = "integral:10ms-100ms"
    nobar: list = spec_key(factory=lambda: ["uniform-light"])


#: The panels in the paper's layout: (a) uniform light, (b) bimodal light, (c) uniform medium,
#: (d) bimodal medium, (e) uniform heavy, (f) bimodal heavy.
DISTRIBUTIONS = [
    ("uniform-light", "uniform light [0.001, 0.1]"),
    ("bimodal-light", "bimodal light"),
    ("uniform-medium", "uniform medium [0.1, 0.4]"),
    ("bimodal-medium", "bimodal medium"),
    ("uniform-heavy", "uniform heavy [0.5, 0.9]"),
    ("bimodal-heavy", "bimodal heavy"),
]

#: Curves 2–10: (number, label, mechanisms whose model may draw it, first found wins).
PLUGINS = [
    (2, "CQm", ["cqm"]),
    (3, "CEm", ["cem", "gsn-edf"]),
    (4, "FEm", ["fem"]),
    (5, "HEm", ["hem"]),
    (6, "CQ1", ["cq1"]),
    (7, "CE1", ["ce1", "gsn-edf-di"]),
    (8, "FE1", ["fe1"]),
    (9, "S-CQm", ["s-cqm"]),
    (10, "S-CQ1", ["s-cq1"]),
]
#: SRT: the quantum-driven plugins with staggered-quanta overheads (the soft rule leaves
#: periods alone, so staggering changes only which model is used), no S-CQ curves.
PLUGINS_SRT = [
    (2, "CQm", ["s-cqm"]),
    (3, "CEm", ["cem", "gsn-edf"]),
    (4, "FEm", ["fem"]),
    (5, "HEm", ["hem"]),
    (6, "CQ1", ["s-cq1"]),
    (7, "CE1", ["ce1", "gsn-edf-di"]),
    (8, "FE1", ["fe1"]),
]

BARUAH_REASON = (
    "Baruah's test (BAR) is left out for the light uniform distribution, as Brandenburg & Anderson did: "
    "\"it failed to terminate in reasonable time due to the large number of tasks involved and the test's "
    'pseudo-polynomial nature" (RTSS 2009, §4.2); the other four tests decide'
)


#: The declared top level of the spec (the protocol's ``KEYS``).
KEYS = Keys


def build(text: str, path: str | None, quick: bool, override: dict | None, *, soft: bool, name: str) -> Any:
    where = path or "<spec>"
    top, odir, models, notes = read(text, path, quick, Keys, override)
    c = common(top)
    periods, nobar = top.periods, top.nobar
    fig_notes = list(notes)
    curves_src = []
    keys: dict = {}
    for num, label, cands in PLUGINS_SRT if soft else PLUGINS:
        got = available(cands, models, fig_notes, f"[{num}] {label}")
        if got is None:
            continue
        mech, key = got
        keys[mech] = key
        shown = label if mech == cands[0] else f"{label} ({mech.upper()} model)"
        curves_src.append((f"c{num}", f"[{num}] {shown}", mech))
    m = top.m or platform_m(list(keys), models, keys)
    if not isinstance(m, int) or m < 2:
        raise SpecError(f"{where} m: expected an integer >= 2, got {m!r}")
    k = c["points"]
    utils = sorted({round(1 + (m - 1) * i / (k - 1), 4) for i in range(k)})
    panels, curves = (
        [],
        [Curve("ideal", "[1] G-EDF (no overheads)", {})] + [Curve(ck, lab, {}) for ck, lab, _ in curves_src],
    )
    for gen, title in DISTRIBUTIONS:
        if soft:
            test = "gedf_srt"
        else:
            test = "seed001_nobar" if gen in nobar else "seed001"
        methods = [f"{test}@ideal"] + [f"{test}@{mech}" for _, _, mech in curves_src]
        curves[0].methods[gen] = methods[0]
        for cv, mt in zip(curves[1:], methods[1:], strict=True):
            cv.methods[gen] = mt
        toml = sub_spec_toml(
            f"{name}-{gen}",
            c["samples"],
            c["seed"],
            c["max_steps"],
            methods,
            odir,
            gen,
            periods,
            m,
            ["auto"],
            utils,
            False,
            c["cpd"],
            c["quantum"],
        )
        panels.append(Panel(gen, title, toml))
    if not soft and any(g in nobar for g, _ in DISTRIBUTIONS):
        fig_notes.append(BARUAH_REASON)
    if soft:
        fig_notes.append(
            "SRT: average overheads; a set is schedulable iff its inflated utilization is at most the capacity "
            "(m, or m - 1 with a dedicated interrupt processor)"
        )
    else:
        fig_notes.append(
            "HRT: maximum overheads (made monotone in n), aligned quanta for CQm/CQ1, staggered for S-CQm/S-CQ1; "
            "any of GFB, BAK, BCL, BCL-iterative, BAR on the inflated set"
        )
    fig_notes.append(f"m = {m} processors (from the models); utilization caps {utils[0]:g} .. {utils[-1]:g}")
    what = "SRT" if soft else "HRT"
    fig = Figure(
        title=f"Brandenburg & Anderson, RTSS 2009, Fig. {5 if soft else 4} ({what}, moderate periods), m = {m},\n"
        "with our measured overheads",
        x="util",
        xlabel="utilization cap",
        ylabel=f"fraction {what} schedulable",
        panels=panels,
        curves=curves,
        notes=fig_notes,
        models={key: models[key] for key in keys.values()},
    )
    return compose(text, path, quick, name, fig)


def parse(text: str, path: str | None = None, quick: bool = False, override: dict | None = None) -> Any:
    return build(text, path, quick, override, soft=False, name="rtss09-hrt")
