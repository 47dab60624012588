"""The engine axis of a reproduction: where a paper's artefact is reproduced both in the
simulator and on real threads (the runtime), one module and one spec serve both.

The spec's ``engine`` key names the engine it runs by default (``"simulator"`` or
``"threads"``), ``rtsched reproduce NAME --engine E`` another; a table ``[engines.E]`` holds
what differs for engine E (its own keys, and the values it runs with: samples, horizon, grid,
``[quick]``, a ``name`` for its results), applied as a variant's table is (variants.py:
tables merged key by key, ``grid`` as in ``[quick]``, any other key replaced) before the
variant and ``[quick]``. A spec written before the merge, whose ``kind`` names one engine's
former reproduction (``rtws-runtime``, ``spres-runtime``), runs that engine.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .errors import SpecError
from .fields import check_keys, key_names
from .variants import overlay

ENGINES = ("simulator", "threads")
#: Keys an [engines.E] table may not set: they choose the engine, the kind and the variants.
FIXED = ("kind", "engine", "engines", "variants", "default_variant")


def apply_engine(
    data: dict,
    engine: str | None,
    where: str,
    allowed: Mapping[str, Collection[str]],
    implied: str | None = None,
) -> tuple[dict, str]:
    """``data`` (a spec's TOML) with its engine's ``[engines.E]`` table applied, and the engine.

    ``engine``: ``--engine`` (None: the spec's ``engine`` key, else ``implied``, else the
    first of ``allowed``); ``allowed``: engine -> the keys its table may set; ``implied``: the
    engine a former reproduction's ``kind`` names."""
    data = dict(data)
    tables = data.pop("engines", None)
    key = data.pop("engine", None)
    names = list(allowed)
    for given, what in ((key, "engine"), (engine, "--engine")):
        if given is not None and given not in names:
            raise SpecError(f"{where} {what}: expected one of {', '.join(names)}, got {given!r}")
    for given, what in ((key, "engine"), (engine, "--engine")):
        if implied is not None and given is not None and given != implied:
            raise SpecError(f"{where} {what}: {given!r}, but kind {data.get('kind')!r} runs on {implied!r}")
    chosen = engine or key or implied or names[0]
    if tables is None:
        return data, chosen
    if not isinstance(tables, dict) or not all(isinstance(v, dict) for v in tables.values()):
        raise SpecError(f"{where}: [engines] must hold one table per engine, [engines.ENGINE]")
    for name in tables:  # every engine's table is checked, not only the one that runs
        if name not in names:
            raise SpecError(f"{where}: [engines.{name}]: no such engine; engines: {', '.join(names)}")
        check_keys(tables[name], [k for k in allowed[name] if k not in FIXED], f"table [engines.{name}] of {where}")
    over = tables.get(chosen, {})
    return overlay(data, over, f"engines.{chosen}", where, list(over)), chosen


@dataclass(frozen=True, kw_only=True)
class EngineChoice:
    """The keys that choose the engine, declared with every engine's own keys (``fields``):
    ``engine`` (the spec's default engine) and ``engines`` (a table per engine). Both are
    applied (:func:`apply_engine`) before the engine's keys are read."""

    engine: str | None = None
    engines: dict | None = None


class Engine(Protocol):
    """What an engine module of a reproduction provides: its points' ``kind`` (the name of its
    former reproduction, so that its points keep their ids), the declared top level of its spec,
    its parser (given the TOML with its engine table applied) and the protocol's steps."""

    @property
    def KIND(self) -> str: ...  # noqa: N802  (a module constant)

    @property
    def Keys(self) -> type: ...  # noqa: N802  (a module's class)

    def parse(
        self,
        text: str,
        path: str | None = None,
        quick: bool = False,
        override: dict | None = None,
        variant: str | None = None,
        data: dict | None = None,
    ) -> Any: ...

    def evaluate_point(self, point_json: str) -> dict: ...

    def summarize(self, spec: Any, table: Any) -> dict: ...

    def figure(self, res: dict, spec: Any, path: Path) -> Path: ...

    def csv_files(self, res: dict, spec: Any) -> dict: ...


def parse_engine(
    engines: Mapping[str, Engine],
    kind: str,
    text: str,
    path: str | None,
    *,
    quick: bool = False,
    override: dict | None = None,
    variant: str | None = None,
    engine: str | None = None,
) -> Any:
    """Parses the spec of a reproduction with an engine axis (``kind``: its own kind;
    ``engines``: name -> engine module) by the engine ``engine`` (None: the spec's)."""
    from .repro._sim import load_toml

    where = path or "<spec>"
    data = load_toml(text, where)
    former = {mod.KIND: name for name, mod in engines.items() if mod.KIND != kind}
    allowed = {name: key_names(mod.Keys) for name, mod in engines.items()}
    data, chosen = apply_engine(data, engine, where, allowed, former.get(str(data.get("kind"))))
    spec = engines[chosen].parse(text, path, quick=quick, override=override, variant=variant, data=data)
    spec.engine = chosen
    return spec


def engine_of(engines: Mapping[str, Engine], spec_or_kind: Any) -> Engine:
    """The engine module of a parsed spec (by its ``kind``) or of a point's ``kind``."""
    kind = spec_or_kind if isinstance(spec_or_kind, str) else spec_or_kind.kind
    for mod in engines.values():
        if mod.KIND == kind:
            return mod
    raise SpecError(f"no engine runs kind {kind!r}")
