"""``rtsched export`` and ``rtsched import``: task sets to and from other tools' formats.

The main CLI (:mod:`rtsched.cli`) hooks them in with :func:`add_commands`. ``export`` writes a task set as rt-app
configuration (to run it under the Linux kernel's scheduler with rt-app, docs/formats.md
"rt-app") or in another of rtsched's own formats; ``import`` reads an rt-app configuration's
periodic threads back as a task set.
"""

from __future__ import annotations

import argparse
import sys

from .. import validate as v
from .._core import RtschedError
from .workload import DagFile, load_one, read_workload

EXPORT_FORMATS = ["rt-app", "json", "csv", "dot"]
IMPORT_FORMATS = ["rt-app", "json", "jsonl", "csv"]


def _write(out: str | None, text: str) -> None:
    if out:
        from ..output import write_text

        write_text(out, text)
    else:
        sys.stdout.write(text)


def cmd_export(args: argparse.Namespace) -> int:
    from ..io import _format

    workload = read_workload(args.file)
    if args.format == "dot" or isinstance(workload, DagFile):
        return _export_dag(args, workload)
    if args.task is not None:
        raise RtschedError("--task applies to --format dot only")
    ts = load_one(args.file, "export")
    if args.format != "rt-app":
        for name in ("duration", "cpus", "policy", "logdir", "calibration"):
            if getattr(args, name) is not None:
                raise RtschedError(f"--{name} applies to --format rt-app only")
        if args.format == "csv":
            text = ts.to_csv()
        else:
            text = ts.to_json() + "\n"
        if args.output and _format(args.output) != args.format:
            raise RtschedError(f"-o {args.output!r}: a {args.format} file must end in .{args.format}")
        _write(args.output, text)
        return 0
    from ..rtapp import dumps, to_rtapp
    from ..runtime import parse_cpus

    config, notes = to_rtapp(
        ts,
        duration=args.duration or "10s",
        cpus=parse_cpus(args.cpus) if args.cpus else None,
        policy=args.policy or "SCHED_DEADLINE",
        logdir=args.logdir or "./",
        calibration=_calibration(args.calibration),
    )
    for note in notes:
        print(f"rtsched export: {note}", file=sys.stderr)
    _write(args.output, dumps(config))
    return 0


def _export_dag(args: argparse.Namespace, workload: object) -> int:
    """``export --format dot``: a DAG file's tasks as Graphviz DOT (docs/dag.md)."""
    from ..dag import dag_to_dot

    if not isinstance(workload, DagFile):
        raise RtschedError(f'{args.file}: --format dot draws DAG task sets (tasks with "nodes"); this file has none')
    if args.format != "dot":
        raise RtschedError(f"{args.file} is a DAG task set; it exports as --format dot only")
    for name in ("duration", "cpus", "policy", "logdir", "calibration"):
        if getattr(args, name) is not None:
            raise RtschedError(f"--{name} applies to --format rt-app only")
    if args.output and not args.output.lower().endswith((".dot", ".gv")):
        raise RtschedError(f"-o {args.output!r}: a DOT file must end in .dot or .gv")
    try:
        text = dag_to_dot(workload.text, args.task)
    except RtschedError as e:
        raise RtschedError(f"{args.file}: {e}") from None
    _write(args.output, text)
    return 0


def _calibration(value: str | None) -> str | int:
    if value is None:
        return "CPU0"
    if value.upper().startswith("CPU") and value[3:].isdigit():
        return "CPU" + value[3:]
    if value.isdigit() and int(value) > 0:
        return int(value)
    raise RtschedError(f"--calibration: expected CPUn (calibrate on CPU n) or a number of ns per loop, got {value!r}")


def cmd_import(args: argparse.Namespace) -> int:
    from ..io import _format, load

    ts = load(args.file, format=args.format)
    if args.m is not None:
        if args.m < 1:
            raise RtschedError(f"--m must be at least 1, got {args.m}")
        ts.m = args.m
    fmt = _format(args.output) if args.output else "json"
    if fmt == "csv":
        text = ts.to_csv()
    elif fmt in ("json", "jsonl"):
        text = ts.to_json() + "\n"
    else:
        raise RtschedError(f"-o {args.output!r}: write the task set as .json, .jsonl or .csv")
    _write(args.output, text)
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Adds ``export`` and ``import`` to the main CLI's subparsers."""
    p = sub.add_parser(
        "export",
        help="write a task set for another tool (rt-app) or in another format",
        description="Write the task set in FILE as an rt-app configuration (one SCHED_DEADLINE thread per task: "
        "runtime C, deadline D, period T; each job runs C and waits for an absolute periodic timer), to run it under "
        "the Linux kernel's scheduler with rt-app (docs/formats.md, rt-app), or as rtsched JSON or CSV. rt-app "
        "counts in microseconds: run times and budgets are rounded up, deadlines and periods down, and the command "
        "says how many values it rounded. A DAG task set (docs/dag.md) exports as --format dot (Graphviz).",
    )
    p.add_argument("file", help="task-set file (.json, .csv, or a one-set .jsonl)")
    p.add_argument("--format", required=True, choices=EXPORT_FORMATS, help="the output format")
    p.add_argument("-o", "--output", metavar="FILE", help="output file (default stdout)")
    p.add_argument("--duration", help="rt-app: how long to run, in whole seconds (default 10s)")
    p.add_argument(
        "--cpus",
        help="rt-app: the CPU affinity of every thread, e.g. 0-3 (default all CPUs; SCHED_DEADLINE threads need "
        "an exclusive cpuset for a subset)",
    )
    p.add_argument(
        "--policy",
        choices=["SCHED_DEADLINE", "SCHED_FIFO", "deadline", "fifo"],
        help="rt-app: SCHED_DEADLINE (default) or SCHED_FIFO with deadline-monotonic priorities",
    )
    p.add_argument("--logdir", help="rt-app: the folder rt-app writes its per-thread logs to (default ./)")
    p.add_argument(
        "--task", type=v.cli_int(0, None), help="dot: draw only this task of the DAG file (default every task)"
    )
    p.add_argument(
        "--calibration",
        metavar="CPUn|NS",
        help="rt-app: calibrate its run loop on CPU n at start (default CPU0) or use this many ns per loop",
    )
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "import",
        help="read a task set from another tool's format (rt-app)",
        description="Read the periodic threads of an rt-app configuration (a run event and a periodic timer, or "
        "SCHED_DEADLINE parameters) as a task set and write it as rtsched JSON (or CSV by the -o extension). "
        "Threads that are not periodic are refused with the thread and key (docs/formats.md, rt-app).",
    )
    p.add_argument("file", help="the file to read")
    p.add_argument("--format", required=True, choices=IMPORT_FORMATS, help="the input format")
    p.add_argument("--m", type=v.CLI_M, help="processor count to record (default: the CPUs the threads name, if any)")
    p.add_argument("-o", "--output", metavar="FILE", help="output file, .json or .csv (default stdout, JSON)")
    p.set_defaults(func=cmd_import)
