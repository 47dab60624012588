"""The figure registry: named specs (experiments/NAME.toml) that reproduce the seeds' figures.

``rtsched reproduce NAME [--quick]`` runs the spec (resuming whatever is already in the results
directory) and draws its figure. Specs are looked up in, in order: the directories listed in
``$RTSCHED_EXPERIMENTS`` (os.pathsep-separated), the specs shipped in the package
(``rtsched/experiments/specs``, which the repository's ``experiments/`` links to), and
``./experiments``.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from .spec import SpecError, load_spec


def search_dirs() -> list[Path]:
    dirs = [Path(p) for p in os.environ.get("RTSCHED_EXPERIMENTS", "").split(os.pathsep) if p]
    # The shipped specs live in the package (experiments/ at the repository root links here).
    dirs.append(Path(__file__).resolve().parent / "specs")
    dirs.append(Path.cwd() / "experiments")
    out = []
    for d in dirs:
        if d.is_dir() and d.resolve() not in [o.resolve() for o in out]:
            out.append(d)
    return out


def available() -> dict:
    """name -> path of every registered spec (the first directory that has a name wins)."""
    names: dict = {}
    for d in search_dirs():
        for f in sorted(d.glob("*.toml")):
            names.setdefault(f.stem, f)
    return dict(sorted(names.items()))


def lookup(name: str) -> Path:
    names = available()
    if name in names:
        return names[name]
    if not names:
        raise SpecError(
            f"unknown experiment {name!r}: no experiments directory found (looked in "
            "$RTSCHED_EXPERIMENTS, the package's specs/ and ./experiments)"
        )
    hint = difflib.get_close_matches(name, list(names), n=1)
    msg = f"unknown experiment {name!r}"
    if hint:
        msg += f" (did you mean {hint[0]!r}?)"
    raise SpecError(msg + "; available: " + ", ".join(names))


def reproduce(
    name: str,
    *,
    quick: bool = False,
    out=None,
    executor=None,
    jobs=None,
    evaluator=None,
    progress: bool = True,
    log=None,
    fmt: str = "png",
    override: dict | None = None,
) -> dict:
    """Run (resuming) the named spec and draw its figure; returns the paths written.

    Specs with a ``kind`` are simulation reproductions (``simrepro``: ``spres-table1``,
    ``rtws-tables``); they also return the tables as ``text`` and accept ``override`` (top-level
    keys and a ``grid`` table applied after ``--quick``, for tiny test runs)."""
    from . import simrepro
    from .plot import plot_results
    from .sweep import run_sweep

    path = lookup(name)
    if simrepro.is_sim_spec_path(path):
        return simrepro.reproduce(
            path,
            quick=quick,
            out=out,
            executor=executor,
            jobs=jobs,
            progress=progress,
            log=log,
            fmt=fmt,
            override=override,
            evaluator=evaluator,
        )
    if override:
        raise SpecError(f"{name}: override applies only to simulation reproductions")
    spec = load_spec(path, quick=quick)
    out = Path(out) if out else Path("results") / (name + ("-quick" if quick else ""))
    res = run_sweep(
        spec, out, resume=True, evaluator=evaluator, executor=executor, jobs=jobs, progress=progress, log=log
    )
    drawn = plot_results(out, out / f"{name}.{fmt}")
    drawn["sweep"] = res
    return drawn
