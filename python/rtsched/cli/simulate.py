"""``rtsched simulate``: a task set in exact virtual time. A sequential task set runs through
:func:`rtsched.simulation.simulate`; a fork-join file (docs/rtws.md) under rtws or gedf through
:func:`rtsched.simulation.simulate_forkjoin`; a DAG file (docs/dag.md) under gedf, gfp or
federated through :func:`rtsched.simulation.simulate_dag`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from .. import validate as v
from .._core import RtschedError
from .common import add_json_output, emit
from .workload import DagFile, ForkJoinFile, read_workload


def add_command(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "simulate",
        help="simulate a task set under a scheduler",
        description="Simulate the task set in FILE (.json, .csv, or a one-set .jsonl) on --m processors in exact "
        "integer-ns virtual time and print a summary table, or with --json the summary object "
        "(docs/simulator.md). pedf/pfp without --placement are partitioned by worst-fit decreasing with exact "
        "admission; spres without --placement is placed by the SP-RES cascade.",
    )
    p.add_argument("file", help="task-set file")
    p.add_argument("--m", type=v.CLI_M, help='processor count (overrides the file\'s "m")')
    p.add_argument(
        "--scheduler",
        default="gedf",
        help=(
            "gedf (default), gedf-quantum, gfp (global fixed priority, --param priorities=dm|rm|RANKS), gfl "
            "(G-FL), edzl (EDZL), llf (least laxity, --quantum), pd2 (Pfair PD², --quantum), pedf, pfp, spres, or rtws "
            "(a fork-join file with "
            '"regions" per task, docs/rtws.md, or a plain task set: one thread per job); '
            'a fork-join file also runs under gedf (G-EDF over its threads); a DAG file (tasks with "nodes", '
            "docs/dag.md) runs at node level under gedf, gfp or federated (Li et al., ECRTS 2014)"
        ),
    )
    p.add_argument(
        "--placement", metavar="P.json", help="placement JSON (rtsched partition --json) for pedf, pfp, spres"
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a scheduler parameter from the simulator's registry (repeatable), e.g. priorities=rm for gfp; "
        "the options below are the same parameters under their own names (docs/simulator.md)",
    )
    p.add_argument(
        "--quantum", type=v.cli_duration("ms"), help="gedf-quantum, llf, pd2: the quantum with a unit (default 1ms)"
    )
    p.add_argument("--staggered", action="store_true", help="gedf-quantum: staggered instead of aligned quanta")
    p.add_argument(
        "--cash",
        action="store_true",
        help="spres: CASH slack reclamation (Brandenburg & Gül, RTSS 2016 runs SP-RES with it)",
    )
    p.add_argument(
        "--soft",
        action="store_true",
        help="spres: unsplit reservations soft too (background service once depleted; split parts always are)",
    )
    p.add_argument(
        "--background",
        choices=["round-robin", "earliest-end"],
        help="spres: depleted soft reservations in background round-robin (default, the paper's and the runtime's) "
        "or by earliest window end",
    )
    p.add_argument(
        "--rr-quantum", type=v.cli_duration("ms"), help="spres: round-robin quantum with a unit (default 1ms)"
    )
    p.add_argument(
        "--horizon",
        type=v.cli_duration("s"),
        help="simulated time with a unit (default one hyperperiod, capped at 1000s)",
    )
    p.add_argument(
        "--sporadic",
        type=v.cli_duration("ms"),
        metavar="MAXDELAY",
        help="sporadic arrivals: each gap is the period plus a "
        "uniform delay in [0, MAXDELAY] (default periodic, synchronous)",
    )
    p.add_argument(
        "--exec-fraction",
        type=v.cli_float(0.0, 1.0, lo_open=True),
        metavar="LO",
        help="execution times uniform in [LO*C, C] (default: every job runs for its WCET)",
    )
    p.add_argument(
        "--draw-suspensions",
        action="store_true",
        help="self-suspending tasks: each suspension lasts a time drawn uniformly between its bounds "
        "(--seed) instead of its upper bound (docs/simulator.md, Self-suspension)",
    )
    p.add_argument(
        "--seed",
        type=v.CLI_SEED,
        default=0,
        help="seed of --sporadic, --exec-fraction and --draw-suspensions (default 0)",
    )
    p.add_argument("--trace", metavar="OUT.jsonl", help="write the trace as JSON Lines (docs/trace.md)")
    p.add_argument("--perfetto", metavar="OUT.json", help="write a Perfetto / Chrome trace (ui.perfetto.dev)")
    p.add_argument("--sched-trace", metavar="OUT.bin", help="write LITMUS^RT sched_trace records")
    p.add_argument("--job-csv", metavar="OUT.csv", help="write one CSV row per job")
    p.add_argument("--gantt", metavar="OUT.png|OUT.svg", help="draw a Gantt chart")
    p.add_argument(
        "--window",
        metavar="START:END",
        help="draw only [START, END) in the Gantt chart, e.g. 0:50ms or 1s:1.2s (either side may be empty)",
    )
    p.add_argument(
        "--overheads",
        metavar="MODEL.json|NAME",
        help="inject overheads: a model written by rtsched measure-overheads or a shipped model's name "
        '(docs/examples), or constants {"release_ns": ..., "schedule_ns": ...} '
        "(gedf, gedf-quantum, gfp, gfl, pedf, pfp; docs/simulator.md)",
    )
    p.add_argument("--overhead-stat", choices=["max", "avg"], help="which statistic of the model (default max)")
    add_json_output(p, "the summary")
    p.set_defaults(func=cmd_simulate)


def cmd_simulate(args: argparse.Namespace) -> int:
    from ..simulation import format_table, simulate
    from ..validate import param_pairs  # the one KEY=VALUE reader, as rtsched run --param

    if args.window and not args.gantt:
        raise RtschedError("--window applies to the Gantt chart: give --gantt OUT.png|OUT.svg too")
    workload = read_workload(args.file)
    if isinstance(workload, DagFile):
        return _simulate_dag(args, workload)
    if isinstance(workload, ForkJoinFile) and args.scheduler.lower() in ("rtws", "gedf"):
        return _simulate_forkjoin(args, workload)
    ts = workload.sequential("simulate").one("simulate")
    placement = None
    if args.placement:
        from ..io import read_text

        try:
            placement = read_text(args.placement, "placement")
        except RtschedError as e:
            raise RtschedError(f"field 'placement': {e}") from None

    s = _summary(
        lambda: simulate(
            ts,
            args.m,
            args.scheduler,
            placement,
            args.horizon,
            quantum=args.quantum,
            staggered=args.staggered,
            sporadic=args.sporadic,
            exec_fraction=args.exec_fraction,
            draw_suspensions=args.draw_suspensions,
            seed=args.seed,
            trace=args.trace,
            perfetto=args.perfetto,
            sched_trace=args.sched_trace,
            job_csv=args.job_csv,
            gantt=args.gantt,
            gantt_window=args.window,
            overheads=_read_overheads(args),
            overhead_stat=args.overhead_stat,
            cash=args.cash,
            soft=args.soft,
            background=args.background,
            rr_quantum=args.rr_quantum,
            params=dict(param_pairs(args.param, args.scheduler.lower())),
            log=_log,
        )
    )
    if s is None:
        return 1
    emit(args, s, lambda: f"{args.scheduler.lower()} on {args.m or ts.m} processors, " + format_table(s))
    return _interrupted(s)


def _log(msg: str) -> None:
    print(f"rtsched simulate: {msg}", file=sys.stderr)


def _summary(call: Callable[[], dict]) -> dict | None:
    """The summary of one simulation ``call``: ``None`` when the set cannot be placed (said on
    stderr; exit status 1), and after Ctrl-C the summary of the part simulated."""
    from ..simulation import NotPlacedError

    try:
        return call()
    except NotPlacedError as e:
        _log(f"not placed: {e}")
        return None
    except KeyboardInterrupt as e:
        partial = getattr(e, "partial", None)
        if partial is None:
            raise
        return partial


def _refuse_options(args: argparse.Namespace, options: list[str], what: str, why: str) -> None:
    """Refuses, in one line, the ``options`` given that ``what`` is simulated without."""
    given = [o for o in options if getattr(args, o.removeprefix("--").replace("-", "_"))]
    if given:
        raise RtschedError(f"{what} are simulated without " + ", ".join(given) + f" ({why})")


def _interrupted(s: dict) -> int:
    """Exit status 130 after Ctrl-C, with a note: the summary and outputs cover the part simulated."""
    if s.get("interrupted"):
        from .._core import format_time

        at = s.get("horizon_ns", s.get("horizon"))
        shown = format_time(at) if isinstance(at, int) else f"{at} ns"  # for people; the JSON keeps ns
        print(
            f"rtsched simulate: interrupted at {shown}; the summary and the outputs cover the time simulated",
            file=sys.stderr,
        )
        return 130
    return 0


def _read_overheads(args) -> str | None:
    if args.overhead_stat and not args.overheads:
        raise RtschedError("field 'overhead_stat': --overhead-stat applies only with --overheads")
    if not args.overheads:
        return None
    from ..io import read_text
    from ..shipped import resolve_model_file

    path = resolve_model_file(args.overheads)  # a path, JSON text, or a shipped model's name
    if path.lstrip().startswith("{"):
        return path
    try:
        return read_text(path, "overheads")
    except RtschedError as e:
        raise RtschedError(f"field 'overheads': {e}") from None


def _simulate_forkjoin(args: argparse.Namespace, workload: ForkJoinFile) -> int:
    from ..simulation import simulate_forkjoin

    _refuse_options(
        args,
        [
            "--placement", "--quantum", "--staggered", "--exec-fraction", "--draw-suspensions", "--cash", "--soft",
            "--background", "--rr-quantum", "--param", "--overheads", "--overhead-stat",
        ],
        "fork-join files",
        "RTWS executes the thread costs as given and has no overhead injection",
    )  # fmt: skip
    sched = args.scheduler.lower()
    # gedf: event-driven G-EDF over the threads (docs/rtws.md); trace files only under rtws.
    r = _summary(
        lambda: simulate_forkjoin(
            workload.text,
            args.m,
            args.horizon,
            scheduler=sched,
            sporadic=args.sporadic,
            seed=args.seed,
            trace=args.trace,
            perfetto=args.perfetto,
            sched_trace=args.sched_trace,
            job_csv=args.job_csv,
            gantt=args.gantt,
            gantt_window=args.window,
        )
    )
    if r is None:
        return 1
    if r.get("horizon_message"):
        print(f"rtsched simulate: {r['horizon_message']}", file=sys.stderr)
    from .._core import format_time

    keys = [
        "jobs",
        "completed",
        "pending",
        "deadline_misses",
        "max_tardiness_ns",
        "max_response_time_ns",
        "threads",
        "steals",
        "preemptions",
        "migrations",
        "context_switches",
    ]
    if sched == "gedf":
        keys[keys.index("steals")] = "remote_starts"

    def value(k: str) -> str:
        v = r[k]
        if k.endswith("_ns"):
            return "-" if v is None else format_time(v)
        return str(v)

    def table() -> str:
        out = [f"{sched} on {r['m']} processors, horizon {format_time(r['horizon'])}"]
        out += [f"  {k.removesuffix('_ns'):<22} {value(k)}" for k in keys]
        return "\n".join(out)

    emit(args, r, table)
    return _interrupted(r)


def _simulate_dag(args: argparse.Namespace, workload: DagFile) -> int:
    from ..simulation import format_dag_table, simulate_dag
    from ..validate import param_pairs

    _refuse_options(
        args,
        [
            "--placement", "--quantum", "--staggered", "--draw-suspensions", "--cash", "--soft", "--background",
            "--rr-quantum", "--overheads", "--overhead-stat",
        ],
        f"{args.file}: DAG task sets",
        "docs/dag.md: gedf, gfp --param priorities=..., federated; no overhead injection",
    )  # fmt: skip
    params = dict(param_pairs(args.param, args.scheduler.lower()))
    priorities = params.pop("priorities", None)
    if params:
        raise RtschedError(f"field '{next(iter(params))}': DAG task sets take only --param priorities (gfp)")

    s = _summary(
        lambda: simulate_dag(
            workload.text,
            args.m,
            args.scheduler,
            args.horizon,
            priorities=None if priorities is None else str(priorities),
            sporadic=args.sporadic,
            exec_fraction=args.exec_fraction,
            seed=args.seed,
            trace=args.trace,
            perfetto=args.perfetto,
            sched_trace=args.sched_trace,
            job_csv=args.job_csv,
            gantt=args.gantt,
            gantt_window=args.window,
            log=_log,
        )
    )
    if s is None:
        return 1
    emit(args, s, lambda: f"{args.scheduler.lower()} on {s['m']} processors (DAG, node level), " + format_dag_table(s))
    return _interrupted(s)
