"""Named variants of an experiment spec: ``[variants.NAME]`` tables and ``--variant NAME``.

A spec may carry tables ``[variants.NAME]`` whose keys override the spec's own, and
``default_variant = "NAME"``. Where a paper's text and its published code differ, the spec
offers both readings as variants (for Brandenburg & Gül, RTSS 2016: ``text`` and
``artifact``; docs/spres.md, "Paper text versus paper code"). ``rtsched reproduce NAME
--variant V`` (and ``rtsched sweep --variant V``) applies one; without ``--variant`` the
spec's ``default_variant`` applies. Tables (``generator``, ``semi``, ``plot``) are merged key by
key; ``grid`` as in ``[quick]`` (a ``util`` or ``util_frac`` replaces either); any other key
replaces the spec's. A variant is applied before ``[quick]``, so ``--quick`` is the quick form
of the variant. Results of a variant go to their own directory (``results/NAME-V``).

Also the ``[semi]`` table of SP-RES options shared by sweeps and simulations.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection
from typing import Any

from .errors import SpecError
from .fields import check_keys, parse_duration_ns
from .names import path_name

SEMI_KEYS = ("variant", "rp", "rp_floor", "switch_rate", "cascade_rate")
SEMI_CHOICES = {
    "variant": ("text", "artifact"),
    "rp": ("divisor", "halving"),
    "switch_rate": ("max-core", "mean-core"),
    "cascade_rate": ("first", "min"),
}


def _merge_grid(grid: dict, over: dict) -> dict:
    grid = dict(grid)
    if "util" in over or "util_frac" in over:
        grid.pop("util", None)
        grid.pop("util_frac", None)
    grid.update(over)
    return grid


def apply_variant(data: dict, variant: str | None, where: str, allowed: Collection[str]) -> tuple[dict, str | None]:
    """``data`` (a spec's TOML, as parsed) with the chosen variant applied, and the variant's
    name (None when the spec has no variants). ``allowed`` are the keys a variant may set."""
    data = dict(data)
    variants = data.pop("variants", None)
    default = data.pop("default_variant", None)
    if variants is None:
        if default is not None:
            raise SpecError(f"{where}: default_variant = {default!r} but there is no [variants] table")
        if variant is not None:
            raise SpecError(f"{where}: --variant {variant!r}: this spec has no [variants.NAME] tables")
        return data, None
    if not isinstance(variants, dict) or not variants or not all(isinstance(v, dict) for v in variants.values()):
        raise SpecError(f"{where}: [variants] must hold one table per variant, [variants.NAME]")
    names = list(variants)
    for v in names:  # a variant's name names its results folder (results/NAME-VARIANT)
        path_name(v, f"{where} variant")
    if default is not None and default not in variants:
        raise SpecError(f"{where}: default_variant = {default!r} is not one of the variants ({', '.join(names)})")
    name = variant if variant is not None else default
    if variant is not None and not isinstance(variant, str):
        raise SpecError(f"{where}: --variant: expected a name, got {variant!r}")
    if name is None:
        raise SpecError(f"{where}: this spec has variants ({', '.join(names)}); choose one with --variant")
    if name not in variants:
        hint = difflib.get_close_matches(name, names, n=1)
        msg = f"{where}: unknown variant {name!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
        raise SpecError(msg + f"; variants: {', '.join(names)}")
    return overlay(data, variants[name], f"variants.{name}", where, allowed), name


def overlay(data: dict, over: dict, table: str, where: str, allowed: Collection[str]) -> dict:
    """``data`` with the table ``over`` (``[TABLE]`` of the spec ``where``, keys ``allowed``)
    applied: tables merged key by key, ``grid`` as in ``[quick]`` (a ``util`` or ``util_frac``
    replaces either), any other key replaced. A variant's table and an engine's (engines.py)."""
    data = dict(data)
    for key in over:
        if key not in allowed:
            hint = difflib.get_close_matches(key, allowed, n=1)
            raise SpecError(
                f"unknown key {key!r} in table [{table}] of {where}"
                + (f" (did you mean {hint[0]!r}?)" if hint else "")
                + "; allowed keys: "
                + ", ".join(allowed)
            )
    for key, value in over.items():
        if key == "grid":
            if not isinstance(value, dict):
                raise SpecError(f"{where} [{table}].grid: expected a table")
            data["grid"] = _merge_grid(data.get("grid", {}), value)
        elif isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return data


def parse_semi(table: Any, where: str) -> dict:
    """The ``[semi]`` table: SP-RES options passed to the evaluator (docs/experiments.md);
    ``rp_floor`` becomes integer ns. Only the keys given appear, so that specs without them
    keep their point ids."""
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise SpecError(f"{where} [semi]: expected a table")
    check_keys(table, SEMI_KEYS, f"table [semi] of {where}")
    out: dict = {}
    for key, value in table.items():
        if key == "rp_floor":
            ns = parse_duration_ns(value, f"{where} [semi].rp_floor")
            if ns < 1:
                raise SpecError(f"{where} [semi].rp_floor: must be at least 1 ns")
            out[key] = ns
            continue
        if value not in SEMI_CHOICES[key]:
            raise SpecError(f"{where} [semi].{key}: expected one of {', '.join(SEMI_CHOICES[key])}, got {value!r}")
        out[key] = value
    return out
