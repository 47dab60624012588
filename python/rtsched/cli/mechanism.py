"""The options of the commands that drive a runtime mechanism (``run``, ``measure-overheads``):
``--scheduler`` and the mechanism parameters, derived from the mechanism registry."""

from __future__ import annotations

import argparse
from typing import Any

from .. import validate as v


def mechanisms() -> list[dict]:
    """The registered runtime mechanisms (the registry's entries, as rtsched run --list-schedulers prints)."""
    from ..runtime import schedulers

    return schedulers()


def add_mechanism_options(p: argparse.ArgumentParser, registry: list[dict]) -> None:
    """--scheduler (choices from the registry), --dedicated-cpu, --param KEY=VALUE, and one
    named option per parameter declared in the registry (e.g. --priorities for pfp)."""
    names = [e["name"] for e in registry]
    p.add_argument("--scheduler", choices=names, help="the mechanism (rtsched run --list-schedulers)")
    roles = [f"{e['name']}: {e['dedicated_role']}" for e in registry if e["dedicated_cpu"] != "none"]
    p.add_argument(
        "--dedicated-cpu",
        type=v.CLI_CPU,
        help="the dedicated CPU of mechanisms that have one (" + "; ".join(roles) + "); it runs no task, so a set "
        "made for m CPUs needs m + 1 (on 2 CPUs: an m = 1 set with --dedicated-cpu 0)",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a mechanism parameter (repeatable); the registry lists each mechanism's (--list-schedulers)",
    )
    declared: dict[str, list[tuple[str, dict]]] = {}
    for e in registry:
        for prm in e["params"]:
            declared.setdefault(prm["name"], []).append((e["name"], prm))
    group = p.add_argument_group("mechanism parameters (from the registry; the same as --param NAME=VALUE)")
    for name, users in declared.items():
        opt = "--" + name.replace("_", "-")
        if opt in p._option_string_actions:  # never shadow a run option; --param still works
            continue
        flag = any(prm["flag"] for _, prm in users)
        helps = "; ".join(f"{m}: {prm['help']} (default {prm['default']})" for m, prm in users)
        kw: dict[str, Any] = {"nargs": "?", "const": "true"} if flag else {"metavar": "VALUE"}
        group.add_argument(opt, dest=f"param__{name}", default=None, help=helps, **kw)


def mechanism_params(args: argparse.Namespace) -> list[str]:
    """The --param pairs plus the named parameter options that were given; the run and the
    measurement check them before anything runs (:func:`rtsched.runtime.checked_params`)."""
    pairs = list(args.param)
    for k, val in vars(args).items():
        if k.startswith("param__") and val is not None:
            pairs.append(f"{k[len('param__') :]}={val}")
    return pairs
