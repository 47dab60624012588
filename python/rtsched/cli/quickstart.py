"""``rtsched quickstart``: the quick schedulability study with a table and a figure."""

from __future__ import annotations

import argparse

from .. import validate as v


def add_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "quickstart",
        help="the quick reproduction: a schedulability study with a table and a figure",
        description="Generate task sets per utilization step for one (m, n), run every test and "
        "partitioning, print the fraction each accepts, and plot the curves (PNG).",
    )
    p.add_argument("--m", type=v.CLI_M, default=4, help="processors (default 4)")
    p.add_argument("--n", type=v.CLI_N, default=12, help="tasks per set (default 12)")
    p.add_argument(
        "--sets", type=v.cli_int(1, 1_000_000), default=300, help="task sets per utilization step (default 300)"
    )
    p.add_argument(
        "--step", type=v.cli_float(0.001, None), default=0.2, help="utilization step (default 0.2, at least 0.001)"
    )
    p.add_argument("--seed", type=v.CLI_SEED, default=1, help="random seed (default 1)")
    p.add_argument("--out", default="quickstart", help="output directory (default ./quickstart)")
    p.set_defaults(func=cmd_quickstart)


def cmd_quickstart(args: argparse.Namespace) -> int:
    from ..quickstart import run

    run(m=args.m, n=args.n, sets=args.sets, step=args.step, seed=args.seed, out=args.out)
    return 0
