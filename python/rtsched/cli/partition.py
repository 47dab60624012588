"""``rtsched partition``: place a task set on processors (partitioning or SP-RES semi-partitioning),
optionally with budgets inflated by an overhead model."""

from __future__ import annotations

import argparse
import os
import sys

from .. import validate as v
from .._core import RtschedError
from .common import add_json_output, emit
from .workload import load_one


def add_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "partition",
        help="place a task set on processors",
        description="Partition (pedf_ffd, pfp_wfd, ...) or semi-partition (spres, or one SP-RES heuristic) the task "
        "set in FILE onto --m processors and print the placement (docs/spres.md#placement-json). Method names are "
        "the same as in analyze and sweeps (docs/cli.md, Method names).",
    )
    p.add_argument("file", help="task-set file (.json or .csv; a .jsonl must hold one set)")
    p.add_argument("--m", type=v.CLI_M, help='processor count (overrides the file\'s "m")')
    p.add_argument(
        "--heuristic",
        metavar="METHOD",
        default=None,
        help="plain partitioning pedf_wfd (default: the placement run and simulate use for pedf), pedf_ffd, pedf_bfd, "
        "pedf_nfd (EDF), pfp_wfd, ... (FP, deadline "
        "monotonic), pfp_rm_ffd, ... (FP, rate monotonic): whole tasks, decreasing utilization, exact admission; or "
        "SP-RES (Brandenburg & Gül, RTSS 2016): spres (the cascade), spres-nometa, spres-paf, or one heuristic by the "
        "paper's name (ffd, wfd, wfd-c=d, PAF(WWFD), ...; docs/spres.md)",
    )
    p.add_argument(
        "--admission",
        choices=["edf", "fp-rm", "fp-dm"],
        help="deprecated: --heuristic ffd --admission fp-dm is --heuristic pfp_ffd (and so on)",
    )
    p.add_argument(
        "--epsilon",
        type=v.cli_duration("us"),
        default=0,
        help="SP-RES minimum slice size with a unit, e.g. 500us (default 0)",
    )
    p.add_argument("--no-meta", action="store_true", help="SP-RES: skip the PAF and RP meta-heuristics")
    p.add_argument(
        "--variant",
        default="artifact",
        choices=["artifact", "text"],
        help="SP-RES: the heuristics as the published code of Brandenburg & Gül (RTSS 2016) runs them "
        "(artifact, default) or as the paper's text describes them (text); docs/spres.md lists the differences",
    )
    p.add_argument(
        "--rp",
        choices=["divisor", "halving"],
        help="SP-RES: how the RP meta-heuristic transforms periods: divisor (the published code: periods from "
        "the paper's set that divide T, only failed tasks) or halving (the text's threshold, halved each round); "
        "default: divisor for --variant artifact, halving for text",
    )
    p.add_argument(
        "--rp-floor",
        default=None,
        metavar="DURATION",
        help="SP-RES: RP's minimum period (default 4ms, the text's; the published scripts use 2ms)",
    )
    g = p.add_argument_group("placement with overheads (docs/spres.md, Placements with overheads)")
    g.add_argument(
        "--overheads",
        metavar="MODEL",
        help="an overhead model (rtsched measure-overheads; a file, or its output directory) or constants: "
        "place the set inflated by them with the SP-RES cascade, so the budgets include the overheads",
    )
    g.add_argument(
        "--mechanism", metavar="NAME", help="the mechanism whose inflation rule applies (spres, the default)"
    )
    g.add_argument(
        "--stat", choices=["max", "avg"], help="overhead statistic (default max: a hard real-time placement)"
    )
    g.add_argument(
        "--cpd", type=v.cli_duration("us"), default=0, help="cache-related preemption delay per job (default 0)"
    )
    g.add_argument("--quantum", type=v.cli_duration("ms"), default="1ms", help="tick period (default 1ms)")
    g.add_argument("--extrapolate", action="store_true", help="extrapolate the model beyond its measured n and m")
    add_json_output(p, "the placement (docs/spres.md#placement-json)")
    p.set_defaults(func=cmd_partition)


def cmd_partition(args: argparse.Namespace) -> int:
    from .._core import format_time as fmt
    from ..api import DEFAULT_PARTITION_METHOD, _legacy_heuristic, partition

    ts = load_one(args.file, "partition")
    defaulted = args.heuristic is None
    if defaulted:
        args.heuristic = DEFAULT_PARTITION_METHOD
    method, note = _legacy_heuristic(args.heuristic, args.admission)
    if note is not None:
        print(f"rtsched partition: deprecated: {note}", file=sys.stderr)
    elif method.strip().lower() in ("ffd", "wfd") and any(t.deadline != t.period for t in ts):
        print(
            f"rtsched partition: note: {method!r} is SP-RES's {method.upper()} (decreasing density); plain "
            f"partitioned EDF in decreasing-utilization order is 'pedf_{method.strip().lower()}'",
            file=sys.stderr,
        )
    placement = partition(
        ts,
        args.m,
        method,
        None,
        args.epsilon,
        not args.no_meta,
        variant=args.variant,
        rp=args.rp,
        rp_floor=args.rp_floor,
        **_partition_overheads(args),
    )

    def table() -> str:
        if not placement["schedulable"]:
            return f"not placed ({placement.get('heuristic', args.heuristic)}): {placement.get('reason', '')}"
        out = [f"placed by {placement['heuristic']} on {placement['m']} processors"]
        if defaulted:
            out[0] += " (the default, as run and simulate place pedf; --heuristic picks another)"
        if "overheads" in placement:
            o = placement["overheads"]
            out[0] += f", budgets inflated by the {o['stat']} overheads of {o['model']} ({o['mechanism']})"
            out += [f"  note: {n}" for n in o.get("notes", [])]
        for cpu in placement["cpus"]:
            out.append(f"  cpu {cpu['cpu']}:" + ("" if cpu["reservations"] else " idle"))
            for r in cpu["reservations"]:
                name = ts[r["task"]].name
                label = f"task {r['task']}" + (f" ({name})" if name else "")
                if r.get("parts", 1) > 1:
                    label += f" part {r['part']}/{r['parts']}"
                out.append(
                    f"    {label}: budget {fmt(r['budget'])}, period {fmt(r['period'])}, "
                    f"deadline {fmt(r['deadline'])}" + (f", offset {fmt(r['offset'])}" if r.get("offset") else "")
                )
        return "\n".join(out)

    emit(args, placement, table, indent=1)
    return 0 if placement["schedulable"] else 1


def _partition_overheads(args: argparse.Namespace) -> dict:
    """``partition``'s overhead options as keyword arguments of ``api.partition``."""
    if args.overheads is None:
        for flag, val in (("--mechanism", args.mechanism), ("--stat", args.stat), ("--extrapolate", args.extrapolate)):
            if val:
                raise RtschedError(f"field 'overheads': {flag} applies only with --overheads MODEL")
        return {}
    from ..shipped import resolve_model_file

    given = args.overheads
    # A path or constants go as given (the placement reads them); a bare name is a shipped model
    # or set (its model for --mechanism).
    if not (given.lstrip().startswith("{") or os.path.exists(given) or os.path.dirname(given)):
        given = resolve_model_file(given, args.mechanism)
    return dict(
        overheads=given,
        mechanism=args.mechanism,
        stat=args.stat,
        cpd=args.cpd,
        quantum=args.quantum,
        extrapolate=args.extrapolate,
    )
