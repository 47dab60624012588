"""``rtsched generate``: seeded random task sets, one as JSON or a stream of them as JSON Lines."""

from __future__ import annotations

import argparse
import sys

from .. import validate as v
from .._core import RtschedError
from .common import progress, stdout_sink


def add_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "generate",
        help="generate random task sets",
        description="Generate task sets with a seeded generator (docs/generators.md). Writes one task "
        "set as JSON, or --count of them as JSON Lines, to stdout or -o FILE (.json/.jsonl/.csv).",
    )
    p.add_argument("--m", type=v.CLI_M, help="processor count to record in the output (optional)")
    p.add_argument(
        "--n",
        type=v.CLI_N,
        help="number of tasks (required for randfixedsum and uunifast-discard; "
        "for the Baker distributions, omit it to add tasks until --util is exceeded and drop the last)",
    )
    p.add_argument(
        "--util", type=v.cli_float(0.0, None, lo_open=True), required=True, help="total utilization U (e.g. 2.5)"
    )
    p.add_argument(
        "--generator",
        default="randfixedsum",
        help="randfixedsum (default; alias emberson), uunifast-discard, uniform-light, uniform-medium, "
        "uniform-heavy, bimodal-light, bimodal-medium, bimodal-heavy, exp-light, exp-medium, exp-heavy",
    )
    p.add_argument(
        "--periods",
        type=v.cli_periods,
        default="loguniform:10ms-100ms",
        help="period distribution: uniform:MIN-MAX, loguniform:MIN-MAX (default loguniform:10ms-100ms), "
        "integral:MIN-MAX[/GRAIN], set:T1,T2,..., or a preset: bg2016 (the period set of Brandenburg & Gül, "
        "RTSS 2016), uni-short, uni-moderate, uni-long (Brandenburg & Anderson, RTSS 2009)",
    )
    p.add_argument(
        "--umax", type=v.cli_float(0.0, 1.0, lo_open=True), default=1.0, help="largest per-task utilization (default 1)"
    )
    p.add_argument(
        "--deadlines", default="implicit", help="implicit (default) or a constrained-deadline spec (docs/generators.md)"
    )
    p.add_argument(
        "--seed",
        type=v.CLI_SEED,
        default=0,
        help="random seed, 0..2^64-1 (default 0); set i of a stream depends only on (seed, i)",
    )
    p.add_argument(
        "--count", type=v.CLI_COUNT, help="number of task sets (writes JSON Lines, streamed: any count fits in memory)"
    )
    p.add_argument("-o", "--output", help="output file (.json, .jsonl or .csv); default stdout")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    p.set_defaults(func=cmd_generate)


def cmd_generate(args: argparse.Namespace) -> int:
    from .. import _core
    from ..api import generate
    from ..io import _format, save
    from ..output import write_with

    if args.count is None:
        ts = generate(
            args.n,
            args.util,
            generator=args.generator,
            periods=args.periods,
            umax=args.umax,
            deadlines=args.deadlines,
            seed=args.seed,
            m=args.m,
        )
        if args.output:
            save(args.output, ts)
        else:
            sys.stdout.write(ts.to_json() + "\n")
        return 0
    # --count: streamed to the output, chunk by chunk (bounded memory; Ctrl-C keeps what is written).
    fmt = _format(args.output) if args.output else "jsonl"
    if fmt != "jsonl":
        raise RtschedError(f"--count writes JSON Lines: name the output .jsonl, not {args.output!r}")
    if args.output:
        v.output_path(args.output, "output")
    prog, close = progress("generate", "task sets", args.quiet)

    def stream(write):
        return _core.generate_stream(
            args.n,
            args.util,
            args.generator,
            args.periods,
            args.umax,
            args.deadlines,
            args.seed,
            args.count,
            args.m,
            write,
            prog,
        )

    result: dict = {}
    try:
        if args.output:
            write_with(args.output, lambda f: result.update(r=stream(f.write)))
        else:
            result["r"] = stream(stdout_sink())
    finally:
        close()
    written, interrupted = result["r"]
    if interrupted:
        where = args.output or "stdout"
        print(f"rtsched generate: interrupted; {where} holds the first {written} task set(s)", file=sys.stderr)
        return 130
    return 0
