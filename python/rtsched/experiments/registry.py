"""The figure registry: named reproductions, one module each under ``rtsched.experiments.repro``.

``rtsched reproduce NAME [--quick]`` runs the reproduction's spec through the one runner
(``sweep.run_sweep``, resuming whatever is already in the results directory) and draws its
figure and tables through the module's protocol (``reproduction.py``: the one ``report``, or a
sweep's own). A registered name's spec is the module's
``SPEC`` file: looked up first in the directories of ``$RTSCHED_EXPERIMENTS``
(os.pathsep-separated; a file there overrides the shipped one), then in the specs shipped in the
package (``rtsched/experiments/specs``, which the repository's ``experiments/`` links to). A TOML
file in those directories or in ``./experiments`` that no module registers runs too, by its
``kind`` (none: a schedulability sweep).

Adding a reproduction: a module in ``repro/`` and one line in :data:`REPRODUCTIONS`
(docs/reproductions.md, "Adding a reproduction").

A reproduction with an engine axis (engines.py: ``ENGINES`` in its module) runs on the engine its
spec's ``engine`` names, or the one ``engine`` (``--engine``) names. The names of the
reproductions merged into one (:data:`ALIASES`) still run: each is its artefact on one engine.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .errors import SpecError
from .names import path_name
from .reproduction import Reproduction, SweepReproduction, draw
from .spec import tomllib
from .sweep import run_sweep

#: The registered reproductions: name -> module of ``rtsched.experiments.repro``, one line each.
REPRODUCTIONS = {
    "spres-fig3": "spres_fig3",
    "spres-fig4": "spres_fig4",
    "spres-fig5": "spres_fig5",
    "spres-fig6": "spres_fig6",
    "spres-table1": "spres_table1",
    "spres-fig9": "spres_fig9",
    "rtws-tables": "rtws_tables",
    "rtss09-hrt": "rtss09_hrt",
    "rtss09-srt": "rtss09_srt",
    "gedfmp-soft-n": "gedfmp_soft_n",
    "gedfmp-hard-u": "gedfmp_hard_u",
    "sd-push-cost": "sd_push_cost",
    "dag-li2014": "dag_li2014",
}

#: The former names of reproductions merged into one artefact with an engine axis: name ->
#: (the reproduction, its engine). A spec file of the former name found in $RTSCHED_EXPERIMENTS
#: (its ``kind`` the former name) still runs, on that engine.
ALIASES = {
    "rtws-runtime": ("rtws-tables", "threads"),
    "spres-runtime": ("spres-table1", "threads"),
}

SHIPPED_SPECS = Path(__file__).resolve().parent / "specs"

if TYPE_CHECKING:  # mypy checks every registered module against its protocol (reproduction.py)
    from .repro import (
        dag_li2014,
        gedfmp_hard_u,
        gedfmp_soft_n,
        rtss09_hrt,
        rtss09_srt,
        rtws_tables,
        sd_push_cost,
        spres_fig3,
        spres_fig4,
        spres_fig5,
        spres_fig6,
        spres_fig9,
        spres_table1,
    )

    _SWEEPS: list[SweepReproduction] = [spres_fig3, spres_fig4, spres_fig5, spres_fig6, dag_li2014]
    _TABULATED: list[Reproduction] = [
        spres_table1,
        spres_fig9,
        rtws_tables,
        sd_push_cost,
        rtss09_hrt,
        rtss09_srt,
        gedfmp_soft_n,
        gedfmp_hard_u,
    ]

Module = Reproduction | SweepReproduction


def module(name: str) -> Module:
    """The module of a registered reproduction."""
    return cast(Module, importlib.import_module(f".repro.{REPRODUCTIONS[name]}", __package__))


def engines(mod: Any) -> dict:
    """The engines of a reproduction's module (engines.py), none if it has one."""
    return dict(getattr(mod, "ENGINES", {}))


def kinds() -> dict:
    """kind -> module, for the reproductions whose spec carries a ``kind`` (simulations); the
    kinds of an artefact's engines (the former reproductions' names) name its module too."""
    out = {}
    for name in REPRODUCTIONS:
        mod = module(name)
        if mod.KIND is not None:
            out[mod.KIND] = mod
            for eng in engines(mod).values():
                out.setdefault(eng.KIND, mod)
    return out


def description(name: str) -> str:
    """The one-line description of a registered reproduction or alias ("" for an unregistered spec)."""
    if name in ALIASES:
        target, engine = ALIASES[name]
        mod = module(target)
        what = getattr(engines(mod)[engine], "DESCRIPTION", mod.DESCRIPTION)
        return f"{what} (the former name of {target} --engine {engine})"
    return module(name).DESCRIPTION if name in REPRODUCTIONS else ""


def resolve(name: str | None, engine: str | None) -> tuple[str | None, str | None]:
    """A reproduction name and engine with an alias resolved (an alias and another ``engine``
    conflict)."""
    if name not in ALIASES:
        return name, engine
    target, implied = ALIASES[name]
    if engine is not None and engine != implied:
        raise SpecError(f"{name} is {target} --engine {implied}; for --engine {engine} run {target}")
    return target, implied


def _unique(dirs) -> list:
    out: list = []
    for d in dirs:
        if d.is_dir() and d.resolve() not in [o.resolve() for o in out]:
            out.append(d)
    return out


def _env_dirs() -> list:
    return _unique(Path(p) for p in os.environ.get("RTSCHED_EXPERIMENTS", "").split(os.pathsep) if p)


def search_dirs() -> list[Path]:
    """Where specs are looked up, in order: $RTSCHED_EXPERIMENTS, the shipped specs, ./experiments."""
    return _unique([*_env_dirs(), SHIPPED_SPECS, Path.cwd() / "experiments"])


def available() -> dict:
    """name -> spec path of every reproduction: the registered ones, then any other spec found
    in the search directories (the first directory that has a name wins)."""
    names: dict = {}
    for name in REPRODUCTIONS:
        spec = module(name).SPEC
        for d in [*_env_dirs(), SHIPPED_SPECS]:
            if (d / spec).is_file():
                names[name] = d / spec
                break
    for alias, (target, _engine) in ALIASES.items():
        own = [d / f"{alias}.toml" for d in _env_dirs() if (d / f"{alias}.toml").is_file()]
        if own or target in names:
            names[alias] = own[0] if own else names[target]
    for d in search_dirs():
        for f in sorted(d.glob("*.toml")):
            names.setdefault(f.stem, f)
    return dict(sorted(names.items()))


def lookup(name: str) -> Path:
    """The spec path of a reproduction; an unknown name lists the known ones."""
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


def _kind(text: str, where: str) -> str | None:
    try:
        kind = tomllib.loads(text).get("kind")
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{where}: not valid TOML: {e}") from None
    known = kinds()
    if kind is not None and kind not in known:
        raise SpecError(f"{where}: unknown kind {kind!r}; known kinds: {', '.join(known)}")
    return kind


def glue(text: str, where: str = "<spec>", name: str | None = None) -> Module:
    """The module that parses, evaluates and reports a spec: the registered module of ``name``,
    else the one of the spec's ``kind``, else the schedulability sweep's."""
    kind = _kind(text, where)
    name = resolve(name, None)[0]
    if name in REPRODUCTIONS:
        mod = module(name)
        if mod.KIND != kind and kind not in [e.KIND for e in engines(mod).values()]:
            raise SpecError(
                f"{where}: the reproduction {name!r} takes a spec of kind {mod.KIND or 'sweep'}, "
                f"this one is of kind {kind or 'sweep'}"
            )
        return mod
    if kind is not None:
        return kinds()[kind]
    # the sweeps' glue: a SweepReproduction but for DESCRIPTION and SPEC (an unregistered spec has none)
    return cast(Module, importlib.import_module(".repro._sweep", __package__))


def parse_experiment(
    text: str,
    path: str | None = None,
    quick: bool = False,
    override: dict | None = None,
    name: str | None = None,
    variant: str | None = None,
    engine: str | None = None,
) -> Any:
    """Parses any experiment spec (a sweep or a simulation reproduction) into the object the
    runner takes; ``variant`` picks one of its [variants.NAME] (variants.py), ``engine`` its
    engine (engines.py; an alias ``name`` names one)."""
    engine = resolve(name, engine)[1]
    return _parse(glue(text, path or "<spec>", name), text, path, quick, override, variant, engine)


def load_experiment(
    path: str | os.PathLike,
    quick: bool = False,
    override: dict | None = None,
    name: str | None = None,
    variant: str | None = None,
    engine: str | None = None,
) -> Any:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise SpecError(f"cannot read spec {str(p)!r}: {e.strerror}") from None
    return parse_experiment(text, str(p), quick=quick, override=override, name=name, variant=variant, engine=engine)


def _parse(
    mod: Module,
    text: str,
    path: str | None,
    quick: bool,
    override: dict | None,
    variant: str | None,
    engine: str | None = None,
) -> Any:
    """``mod.parse`` with ``variant`` and ``engine`` passed only to the modules that take them
    (the others have no variants, one engine: naming one is an error)."""
    extra: dict = {}
    for arg, value, refusal in (
        ("variant", variant, "this reproduction has no variants"),
        ("engine", engine, "this reproduction has one engine"),
    ):
        if value is None:
            continue
        if arg not in inspect.signature(mod.parse).parameters:
            raise SpecError(f"{path or '<spec>'}: --{arg} {value!r}: {refusal}")
        extra[arg] = value
    parse: Any = mod.parse  # this one takes them (the protocol's parse need not)
    return parse(text, path, quick=quick, override=override, **extra)


def variants_of(path: str | os.PathLike) -> tuple[list[str], str | None]:
    """The variant names of a spec file and its default (``[]``, None when it has none)."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return [], None
    v = data.get("variants")
    return (list(v) if isinstance(v, dict) else []), data.get("default_variant")


def results_dir(name: str, variant: str | None, quick: bool) -> Path:
    """The default results directory of a reproduction: ``results/NAME[-VARIANT][-quick]``."""
    path_name(name, "experiment name")
    if variant is not None:
        path_name(variant, f"{name}: variant")
    return Path("results") / (name + (f"-{variant}" if variant else "") + ("-quick" if quick else ""))


def default_out(name: str, mod: Module, spec: Any, quick: bool) -> Path:
    """The default results directory of a reproduction run by ``name``: ``results_dir(name,
    ...)``; on an engine other than its module's first (engines.py), the spec's ``name`` there
    (``rtws-runtime``: the folder its former name wrote) or ``NAME-ENGINE``, so that each engine's
    results have a folder of their own; a module's ``results_folder(spec, folder)`` may name its
    own axis in it (sd-push-cost: ``NAME-form-F`` for a form other than its default)."""
    folder = name
    engine = getattr(spec, "engine", None)
    if engine not in (None, next(iter(engines(mod)), None)):
        target = resolve(name, None)[0] or name
        folder = spec.name if spec.name != target else f"{target}-{engine}"
    hook = getattr(mod, "results_folder", None)
    if hook is not None:
        folder = hook(spec, folder)
    return results_dir(folder, getattr(spec, "variant", None), quick)


def is_simulation(path: str | os.PathLike) -> bool:
    """Whether the spec file at ``path`` is a simulation reproduction (it has a ``kind``; an
    unknown kind is an error naming the known ones)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError:
        return False
    return _kind(text, str(path)) is not None


def reproduce(
    name: str,
    *,
    quick: bool = False,
    resume: bool = False,
    out: str | os.PathLike | None = None,
    executor: Any = None,
    jobs: int | None = None,
    evaluator: Callable[[str], dict] | None = None,
    progress: bool = True,
    log: Any = None,
    fmt: str = "png",
    override: dict | None = None,
    variant: str | None = None,
    engine: str | None = None,
) -> dict:
    """Runs the named reproduction and draws its figure; returns the paths written and the
    runner's result (``sweep``). ``variant`` picks one of the spec's [variants.NAME] (default:
    its ``default_variant``), ``engine`` its engine (default: the spec's ``engine``; an alias
    names one). The default results directory is ``results/NAME[-VARIANT][-quick]``, NAME the
    spec's ``name`` on an engine other than the spec's default (``rtws-runtime``), so that each
    engine's results have a folder of their own. ``resume`` keeps the valid points already in ``out`` and computes
    only the others, exactly as ``run_sweep(resume=True)`` and ``rtsched sweep --resume`` do;
    without it every point is computed again (a directory holding another spec's points is
    refused either way). Simulation reproductions also return their tables as
    ``text`` and accept ``override`` (top-level keys and a ``grid`` table applied after
    ``--quick``, for tiny test runs)."""
    path = lookup(name)
    text = Path(path).read_text(encoding="utf-8")
    mod = glue(text, str(path), name)
    engine = resolve(name, engine)[1]
    spec = _parse(mod, text, str(path), quick, override, variant, engine)
    out = Path(out) if out else default_out(name, mod, spec, quick)
    run = run_sweep(
        spec, out, resume=resume, evaluator=evaluator, executor=executor, jobs=jobs, progress=progress, log=log
    )
    return draw(mod, spec, out, run, fmt)
