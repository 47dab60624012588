"""The ``rtsched`` command line (docs/cli.md).

Every command prints help with ``-h``. Errors in input are reported in one line naming the
file, line, task and field, and exit with status 2; a run that completes but finds failures
(e.g. an analysis batch with invalid lines) exits with status 1; an internal error (a failed
check of rtsched's own invariants: a bug, not bad input) is reported in one line asking for a
report and exits with status 70.

One module per command or family of commands, over the shared helpers of :mod:`.common` (parser,
output options, progress) and :mod:`.workload` (the one reader of a command's task-set file):
:mod:`.generate`, :mod:`.analyze`, :mod:`.partition`, :mod:`.simulate`, :mod:`.quickstart`,
:mod:`.run` and :mod:`.measure` (over the mechanism options of :mod:`.mechanism`), :mod:`.calibrate`,
:mod:`.exchange` (``export``, ``import``), :mod:`.overheads` (``overheads show``), and the
experiment commands of :mod:`rtsched.experiments.cli` (``sweep``, ``plot``, ``reproduce``).
"""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from .. import validate as v
from .._core import InternalError, RtschedError
from ..experiments import cli as experiments
from . import analyze, calibrate, exchange, generate, measure, overheads, partition, quickstart, run, simulate
from .common import Parser

__all__ = ["EXIT_INTERNAL", "build_parser", "main"]

#: Exit status of an internal error (a bug in rtsched; sysexits' EX_SOFTWARE).
EXIT_INTERNAL = 70


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="rtsched",
        description="rtsched: multiprocessor real-time scheduling workbench — generate task sets, analyse "
        "them, place them on processors, simulate them, and run experiments. Times are integer ns or "
        "duration strings like 2ms.",
    )
    parser.add_argument("--version", action="version", version=f"rtsched {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for command in (generate, analyze, partition, simulate, quickstart, run, measure, calibrate):
        command.add_command(sub)
    exchange.add_commands(sub)
    overheads.add_commands(sub)
    experiments.add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # usage errors (status 2, one line already printed) and --help (0)
        return e.code if isinstance(e.code, int) else 2
    try:
        if getattr(args, "output", None):
            # -o/--output FILE, in every command: checked before any work starts (folder
            # exists and is writable), so that a typo never throws a long run away.
            v.output_path(args.output, "--output")
        if args.command in ("analyze", "partition", "simulate", "run", "export"):
            from ..shipped import resolve_example  # a shipped example by name, from any folder

            args.file = resolve_example(args.file)
        return args.func(args)
    except RtschedError as e:
        print(f"rtsched {args.command}: error: {e}", file=sys.stderr)
        return 2
    except InternalError as e:
        print(f"rtsched {args.command}: {e}", file=sys.stderr)
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        print(f"rtsched {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
