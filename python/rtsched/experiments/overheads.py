"""The overhead keys of a sweep spec (docs/experiments.md, "Overheads").

``overheads`` (a model file or a directory of ``overheads-*.json``, or a list of them: the first
that has a model of a mechanism serves it), ``mechanism`` (the default
mechanism for overhead-capable methods written without ``@``), ``stat`` (``max``/``avg``; default:
max for hard, avg for soft real-time), ``cpd`` and ``quantum`` (durations), ``extrapolate`` (bool).
Overhead-aware methods are written ``TEST@MECHANISM`` (docs/overheads.md): TEST is ``gedf``,
``seed001``, ``seed001_nobar`` (hard) or ``gedf_srt`` (soft); MECHANISM a mechanism name,
``ideal`` or ``ideal-dedicated``. The models a spec's methods need are embedded in every point, so
a point's id (and its results) change when a model changes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

KEYS = ("overheads", "mechanism", "stat", "cpd", "quantum", "extrapolate")
HARD_TESTS = ("gedf", "seed001", "seed001_nobar")
SOFT_TEST = "gedf_srt"
IDEAL = ("ideal", "ideal-dedicated")
#: The most bytes of overhead models (canonical JSON) a spec may embed: they are copied into
#: every point, and into every point file's metadata. The measured models are a few kB.
MAX_EMBEDDED_BYTES = 1 << 20


def with_mechanism(method: str, mechanism: str | None) -> str:
    """``gedf`` → ``gedf@MECHANISM`` for the overhead-capable tests, when a default is given."""
    if mechanism and "@" not in method and method in HARD_TESTS + (SOFT_TEST,):
        return f"{method}@{mechanism}"
    return method


def _mechanisms() -> dict[str, dict]:
    from ..overheads import mechanisms

    return {m["name"]: m for m in mechanisms()}


def needed_mechanisms(methods: Iterable[str], where: str) -> list[dict]:
    """The mechanisms (table rows) the methods need models for; unknown tests or mechanisms after
    ``@`` are errors naming the method."""
    from .errors import SpecError

    table = _mechanisms()
    need: list[dict] = []
    for mt in methods:
        if "@" not in mt:
            continue
        test, mech = mt.split("@", 1)
        if test not in HARD_TESTS + (SOFT_TEST,):
            raise SpecError(
                f"{where}: method {mt!r}: unknown test {test!r} before '@' (use {', '.join(HARD_TESTS + (SOFT_TEST,))})"
            )
        if mech in IDEAL:
            continue
        if mech not in table:
            known = ", ".join(list(table) + list(IDEAL))
            raise SpecError(f"{where}: method {mt!r}: unknown mechanism {mech!r} (known: {known})")
        if table[mech] not in need:
            need.append(table[mech])
    return need


def model_key(mech: dict, models: dict) -> str | None:
    """Which of ``models`` (keyed by the mechanism they were measured under) serves ``mech``: one
    measured under its own name (e.g. ``s-cqm``), else its model's (``cqm``); None if neither."""
    for key in (mech["name"], mech["model"]):
        if key in models:
            return key
    return None


def parse(data: dict, path: str | None, where: str, methods: list) -> dict | None:
    """The point's ``overheads`` object, or None when no method needs models."""
    from .._core import RtschedError
    from ..overheads import load_models
    from .errors import SpecError
    from .fields import parse_duration_ns

    need = needed_mechanisms(methods, f"{where} methods")
    src = data.get("overheads")
    if not need:
        if src is not None:
            raise SpecError(f"{where} overheads: given, but no method uses it (write methods as TEST@MECHANISM)")
        return None
    if src is None:
        raise SpecError(f"{where}: methods {need} need overhead models: set overheads = a model file or directory")
    srcs = [src] if isinstance(src, str) else src
    if not isinstance(srcs, list) or not srcs or not all(isinstance(s, str) for s in srcs):
        raise SpecError(f"{where} overheads: expected a path (string) or a non-empty list of paths")
    loaded = []
    for p in srcs:
        if not os.path.isabs(p) and path is not None and os.path.exists(os.path.join(os.path.dirname(path), p)):
            p = os.path.join(os.path.dirname(path), p)
        try:
            loaded.append((p, load_models(p)[0]))
        except (RtschedError, OSError) as e:
            raise SpecError(f"{where} overheads: {e}") from None
    p, models = loaded[0]
    if len(loaded) == 1 and len(models) == 1 and os.path.isfile(p):
        # One model file: it serves every mechanism of the methods.
        only = next(iter(models.values()))
        chosen = {"*": json.loads(only["text"])}
    else:
        # Per mechanism, the first source with a model of it (its own name, then its model's).
        chosen, missing = {}, []
        for m in need:
            for _, found in loaded:
                if (k := model_key(m, found)) is not None:
                    chosen.setdefault(k, json.loads(found[k]["text"]))
                    break
            else:
                missing.append(m["name"])
        if missing:
            where_from = " or ".join(repr(q) for q, _ in loaded)
            found_keys = sorted({k for _, f in loaded for k in f})
            raise SpecError(f"{where} overheads: no model for {missing} in {where_from} (found: {found_keys})")
        chosen = dict(sorted(chosen.items()))
    size = len(json.dumps(chosen, sort_keys=True, separators=(",", ":")))
    if size > MAX_EMBEDDED_BYTES:
        raise SpecError(
            f"{where} overheads: the models of {p!r} are {size:,} bytes as JSON; every point file embeds them, "
            f'so at most {MAX_EMBEDDED_BYTES:,} bytes are allowed (docs/experiments.md, "Overheads")'
        )
    stat = data.get("stat")
    if stat is not None and stat not in ("max", "avg"):
        raise SpecError(f'{where} stat: expected "max" or "avg", got {stat!r}')
    extrapolate = data.get("extrapolate", False)
    if not isinstance(extrapolate, bool):
        raise SpecError(f"{where} extrapolate: expected true or false")
    return {
        "models": chosen,
        "stat": stat,
        "cpd": parse_duration_ns(data.get("cpd", 0), f"{where} cpd"),
        "quantum": parse_duration_ns(data.get("quantum", "1ms"), f"{where} quantum"),
        "extrapolate": extrapolate,
    }
