"""Cerqueira, Vanga & Brandenburg, RTAS 2014, Fig. 8(b): hard real-time schedulability (the
combined G-EDF test after inflation with maximum overheads) versus the total utilization, for
Emberson et al.'s generator with n = 5m and periods log-uniform in [1, 1000] ms; curves as
``gedfmp_soft_n``, in two panels: the processor count the models were measured on, and m = 64
with the models extrapolated in n and m (labelled)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..fields import spec_key
from ._overheads import (
    Figure,
    OverheadKeys,
    Panel,
    common,
    compose,
    csv_files,  # noqa: F401  (the protocol's steps, reproduction.py)
    figure,  # noqa: F401
    read,
    sub_spec_toml,
    summarize,  # noqa: F401
)
from .gedfmp_soft_n import EXTRAPOLATION_NOTE, measured_word, panels_and_curves

DESCRIPTION = (
    "Cerqueira, Vanga & Brandenburg, RTAS 2014, Fig. 8(b): HRT schedulability vs. U (n = 5m), GSN-EDF, "
    "GSN-EDF-DI, SD, G-EDF-MP, measured and extrapolated to m = 64"
)
SPEC = "gedfmp-hard-u.toml"
KIND = "gedfmp-hard-u"
OVERHEADS = True


@dataclass(frozen=True, kw_only=True)
class Keys(OverheadKeys):
    """The spec's top level: the common keys, ``m_large`` (the extrapolated panel's m),
    ``n_per_m`` (n = n_per_m · m), ``util_frac`` ([low, high] of U / m) and ``periods``."""

    m_large: int = 64
    n_per_m: int = 5
    util_frac: list = spec_key(factory=lambda: [0.05, 1.0])
    periods: str = "loguniform:1ms-1000ms"


#: The declared top level of the spec (the protocol's ``KEYS``).
KEYS = Keys


def parse(text: str, path: str | None = None, quick: bool = False, override: dict | None = None) -> Any:
    where = path or "<spec>"
    top, odir, models, notes = read(text, path, quick, Keys, override)
    c = common(top)
    fig_notes = list(notes)
    m_meas, m_large, curves, methods, keys = panels_and_curves(top, where, models, fig_notes, soft=False)
    per_m = top.n_per_m
    lo, hi = top.util_frac
    periods = top.periods
    panels = []
    # One panel when the models were measured at the paper's m (the `paper` model set).
    for m, extrapolate in ((m_meas, False), (m_large, True)) if m_large != m_meas else ((m_meas, False),):
        k = c["points"]
        utils = sorted({round(m * (lo + (hi - lo) * i / (k - 1)), 4) for i in range(k)})
        key = f"m{m}"
        title = f"m = {m}, n = {per_m * m}" + (
            " (models extrapolated in n and m)" if extrapolate else measured_word(models, keys)
        )
        for cv, mt in zip(curves, methods, strict=True):
            cv.methods[key] = mt
        toml = sub_spec_toml(
            f"gedfmp-hard-u-{key}",
            c["samples"],
            c["seed"],
            c["max_steps"],
            methods,
            odir,
            "randfixedsum",
            periods,
            m,
            [per_m * m],
            utils,
            extrapolate,
            c["cpd"],
            c["quantum"],
        )
        panels.append(Panel(key, title, toml))
    if m_large != m_meas:
        fig_notes.append(EXTRAPOLATION_NOTE.format(m=m_large))
    fig_notes.append(
        "hard real-time: maximum overheads, the combined G-EDF test (GFB, BAK, BCL-iterative, BAR, RTA, FF-DBF)"
    )
    fig = Figure(
        title="Cerqueira, Vanga & Brandenburg, RTAS 2014, Fig. 8(b): hard schedulability vs. U\n"
        f"(Emberson, n = {per_m}m, "
        f"periods log-uniform [1, 1000] ms), m = {m_meas}" + (f" and {m_large}" if m_large != m_meas else ""),
        x="util",
        xlabel="total utilization U",
        ylabel="fraction HRT schedulable",
        panels=panels,
        curves=curves,
        notes=fig_notes,
        models={key: models[key] for key in keys.values()},
    )
    return compose(text, path, quick, "gedfmp-hard-u", fig)
