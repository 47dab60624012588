"""Cerqueira, Vanga & Brandenburg, RTAS 2014, Fig. 8(a): soft real-time schedulability
(bounded tardiness after inflation with average overheads) versus the number of tasks n, for
task utilizations exponential with mean 0.1 and periods log-uniform in [1, 1000] ms; curves
GSN-EDF, GSN-EDF-DI, SD (push/pull), G-EDF-MP and the overhead-free G-EDF on m and on m − 1
processors. Two panels: the processor count the models were measured on, and m = 64 with the
models *extrapolated* in n and m (the paper's m; labelled as such). The inflation rules are
``rtsched_analysis::overheads`` (G-EDF-MP: RTAS 2014 Appendix B; the others: the standard
accounting it cites)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
    "Cerqueira, Vanga & Brandenburg, RTAS 2014, Fig. 8(a): SRT schedulability vs. n, GSN-EDF, GSN-EDF-DI, "
    "SD, G-EDF-MP, measured and extrapolated to m = 64"
)
SPEC = "gedfmp-soft-n.toml"
KIND = "gedfmp-soft-n"
OVERHEADS = True


@dataclass(frozen=True, kw_only=True)
class Keys(OverheadKeys):
    """The spec's top level: the common keys, ``m_large`` (the extrapolated panel's m),
    ``n_frac`` ([low, high] of n / m), ``generator`` and ``periods``."""

    m_large: int = 64
    n_frac: list = spec_key(factory=lambda: [1.0, 10.0])
    generator: str = "exp-light"
    periods: str = "loguniform:1ms-1000ms"


#: (curve key, label, mechanisms whose model may draw it).
MECHANISMS = [
    ("gsn-edf", "GSN-EDF", ["gsn-edf"]),
    ("gsn-edf-di", "GSN-EDF-DI", ["gsn-edf-di"]),
    ("sd", "SD (push/pull)", ["push-pull"]),
    ("gedf-mp", "G-EDF-MP", ["gedf-mp"]),
    ("kernel-sd", "Linux SCHED_DEADLINE", ["kernel-sd"]),
]


#: The declared top level of the spec (the protocol's ``KEYS``).
KEYS = Keys


#: How the m = m_large panel evaluates models measured on fewer processors (docs/overheads.md,
#: "Beyond the measured range"); shared with gedfmp_hard_u.
EXTRAPOLATION_NOTE = (
    "m = {m}: models extrapolated — averages held at their last measured value, scaled linearly to m only for "
    "the global-lock terms of GSN-EDF and GSN-EDF-DI; maxima of each mechanism's contended terms continued along "
    "their least-squares trend in n and scaled linearly to m; other maxima held (docs/overheads.md)"
)


def measured_word(models: dict, keys: dict) -> str:
    """How the unextrapolated panel's models came about: measured here, or the published values
    of a paper (the `paper` model set)."""
    used = [models[k] for k in keys.values()]
    if used and all(m.get("published") for m in used):
        return " (the paper's published overheads)"
    return " (measured)"


def panels_and_curves(top: Any, where: str, models: dict, notes: list[str], *, soft: bool) -> Any:
    """The two panels' processor counts and the curves available; shared with gedfmp_hard_u."""
    curves_src, keys = [], {}
    for ck, label, cands in MECHANISMS:
        got = available(cands, models, notes, label)
        if got is None:
            continue
        mech, key = got
        keys[mech] = key
        curves_src.append((ck, label, mech))
    m_meas = top.m or platform_m(list(keys), models, keys)
    m_large = top.m_large
    test = "gedf_srt" if soft else "gedf"
    curves = [
        Curve("ideal", "G-EDF, m processors, no overheads", {}),
        Curve("ideal-dedicated", "G-EDF, m − 1 processors, no overheads", {}),
    ] + [Curve(ck, label, {}) for ck, label, _ in curves_src]
    methods = [f"{test}@ideal", f"{test}@ideal-dedicated"] + [f"{test}@{mech}" for _, _, mech in curves_src]
    return m_meas, m_large, curves, methods, keys


def parse(text: str, path: str | None = None, quick: bool = False, override: dict | None = None) -> Any:
    where = path or "<spec>"
    top, odir, models, notes = read(text, path, quick, Keys, override)
    c = common(top)
    fig_notes = list(notes)
    m_meas, m_large, curves, methods, keys = panels_and_curves(top, where, models, fig_notes, soft=True)
    lo, hi = top.n_frac
    gen, periods = top.generator, top.periods
    panels = []
    # One panel when the models were measured at the paper's m (the `paper` model set).
    for m, extrapolate in ((m_meas, False), (m_large, True)) if m_large != m_meas else ((m_meas, False),):
        k = c["points"]
        ns = sorted({max(1, round(m * (lo + (hi - lo) * i / (k - 1)))) for i in range(k)})
        key = f"m{m}"
        title = f"m = {m}" + (" (models extrapolated in n and m)" if extrapolate else measured_word(models, keys))
        for cv, mt in zip(curves, methods, strict=True):
            cv.methods[key] = mt
        toml = sub_spec_toml(
            f"gedfmp-soft-n-{key}",
            c["samples"],
            c["seed"],
            c["max_steps"],
            methods,
            odir,
            gen,
            periods,
            m,
            ns,
            [1.0],  # a fixed n: the distribution draws n utilizations, the total is not imposed
            extrapolate,
            c["cpd"],
            c["quantum"],
        )
        panels.append(Panel(key, title, toml))
    if m_large != m_meas:
        fig_notes.append(EXTRAPOLATION_NOTE.format(m=m_large))
    fig_notes.append("soft real-time: average overheads, inflated U <= capacity (m, or m - 1 with a dedicated CPU)")
    fig = Figure(
        title="Cerqueira, Vanga & Brandenburg, RTAS 2014, Fig. 8(a): soft schedulability vs. n\n"
        f"(exponential mean 0.1, periods log-uniform [1, 1000] ms), m = {m_meas}"
        + (f" and {m_large}" if m_large != m_meas else ""),
        x="n",
        xlabel="number of tasks n",
        ylabel="fraction SRT schedulable",
        panels=panels,
        curves=curves,
        notes=fig_notes,
        models={key: models[key] for key in keys.values()},
    )
    return compose(text, path, quick, "gedfmp-soft-n", fig)
