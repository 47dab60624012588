"""The options of the commands that drive a runtime mechanism (``run``, ``measure-overheads``):
``--scheduler`` and the mechanism parameters, derived from the mechanism registry."""

from __future__ import annotations

import argparse
from typing import Any

from .. import validate as v
from .._core import RtschedError


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
    """The --param pairs plus the named parameter options that were given, each checked against
    the scheduler's declared parameters before the run (:func:`_check_param`)."""
    pairs = list(args.param)
    for k, val in vars(args).items():
        if k.startswith("param__") and val is not None:
            pairs.append(f"{k[len('param__') :]}={val}")
    declared = {}
    for e in mechanisms():
        if e["name"] == getattr(args, "scheduler", None):
            declared = {prm["name"]: prm for prm in e["params"]}
    for kv in pairs:
        key, sep, val = kv.partition("=")
        prm = declared.get(key.strip().replace("-", "_"))
        if sep and prm is not None:
            _check_param(prm, val, f"parameter {key.strip()}={val}")
    return pairs


def _check_param(prm: dict, val: str, where: str) -> None:
    """A mechanism parameter's value by its declared kind, as the command line takes values: a
    duration needs a unit (``quantum=10`` is refused, not 10 ns), an integer is in its range,
    a choice is one of its words, ranks are integers >= 0."""
    import re

    kind = prm["kind"]
    try:
        if kind == "duration":
            v.check_cli_duration(val, "ms")
        elif kind.startswith("integer "):
            lo, hi = (int(x) for x in kind.split()[1].split("..="))
            v.integer(v._parse_int(val), "value", lo, hi)
        elif kind == "flag":
            # The words of the one flag parser (rtsched_model::params::parse_bool).
            v.choice(val.strip().lower(), "value", ["true", "false", "yes", "no", "on", "off", "1", "0"])
        elif "|" in kind:
            v.choice(val.strip(), "value", kind.split("|"))
        elif prm["name"] == "priorities" and val.strip().lower() not in ("dm", "rm"):
            for rank in val.split(","):
                if not re.fullmatch(r"\s*\d{1,9}\s*", rank):
                    why = "negative" if rank.strip().startswith("-") else "not an integer"
                    raise RtschedError(
                        f"rank {rank.strip()[:20]!r} is {why}; give dm, rm or one rank per task, integers >= 0 "
                        "(0 = highest), e.g. 0,1,2"
                    )
    except RtschedError as e:
        msg = str(e)
        prefix = "argument 'value': "
        raise RtschedError(f"{where}: {msg[len(prefix) :] if msg.startswith(prefix) else msg}") from None
