"""``rtsched measure-overheads``: a mechanism's overheads as a function of n (Cerqueira et al.,
RTAS 2014 App. A), or a measurement campaign (``--campaign``, rtsched.campaign)."""

from __future__ import annotations

import argparse

from .. import validate as v
from .._core import RtschedError
from .mechanism import add_mechanism_options, mechanism_params, mechanisms


def add_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "measure-overheads",
        help="measure a mechanism's overheads as a function of n (Cerqueira et al., RTAS 2014 App. A)",
        description="Run RandFixedSum task sets of n = m, 2m, ..., 10m tasks (U uniform in [0.4m, 0.8m], periods "
        "log-uniform in [10, 100] ms, synchronous release; under spres a split-forcing draw), 30 s each, and write an "
        "overhead model JSON and plots (docs/formats.md, Overhead models) with every overhead term the mechanism's "
        "registry entry declares, under the measurement protocol (docs/overheads.md): a preflight of the host "
        "(printed and stored in the model), samples disturbed by the host discarded, an outlier rule for maxima. "
        "Ctrl-C writes the model for the n already measured (exit 130).",
    )
    p.add_argument("--quick", action="store_true", help="1 s per run and n in {m, 5m, 10m}")
    p.add_argument(
        "--background",
        choices=["none", "cache"],
        default="none",
        help="cache: one lowest-priority walker per measured CPU over twice the last-level cache during each run "
        "(RTAS 2014 §IV, RTSS 2016 §VII); default none",
    )
    p.add_argument(
        "--isolate",
        action="store_true",
        help="for the measurement, switch off RT throttling and the fair server, move IRQs off the measured CPUs and "
        "set the performance governor where permitted; everything is restored afterwards (also on Ctrl-C)",
    )
    p.add_argument("--cpus", type=v.cli_cpus, help="CPU list, e.g. 0,1 (default: the first allowed CPU)")
    p.add_argument(
        "--rt-priority", type=v.CLI_RT_PRIORITY, help="SCHED_FIFO priority 1..99 (needs root or CAP_SYS_NICE)"
    )
    p.add_argument("--force", action="store_true", help="accept more threads than cores")
    p.add_argument("--seed", type=v.CLI_SEED, default=1, help="random seed (default 1)")
    p.add_argument("--out", default="overheads", help="output directory (default ./overheads)")
    p.add_argument("--seconds", type=float, help=argparse.SUPPRESS)
    add_mechanism_options(p, mechanisms())
    from ..campaign import add_options as add_campaign

    add_campaign(p)
    p.set_defaults(func=cmd_measure)


def cmd_measure(args: argparse.Namespace) -> int:
    from ..runtime import measure_overheads

    if args.campaign:
        from ..campaign import cmd_campaign

        return cmd_campaign(args)
    if not args.scheduler:
        raise RtschedError("--scheduler is required (rtsched run --list-schedulers lists them)")
    model = measure_overheads(
        args.scheduler,
        cpus=args.cpus,
        out=args.out,
        quick=args.quick,
        seconds=args.seconds,
        seed=args.seed,
        dedicated_cpu=args.dedicated_cpu,
        rt_priority=args.rt_priority,
        force=args.force,
        params=mechanism_params(args),
        background=args.background,
        isolate=args.isolate,
    )
    return 130 if model.get("interrupted") else 0
