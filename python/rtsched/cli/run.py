"""``rtsched run``: a task set on real pinned threads under a runtime mechanism. A sequential
task set runs through :func:`rtsched.runtime.run_raw`; a fork-join file (docs/rtws.md) or a DAG
file (docs/dag.md) through :func:`rtsched.runtime.run_forkjoin_raw`."""

from __future__ import annotations

import argparse
import json
import sys

from .. import validate as v
from .._core import RtschedError
from .mechanism import add_mechanism_options, mechanism_params, mechanisms
from .workload import DagFile, ForkJoinFile, read_workload


def add_command(sub: argparse._SubParsersAction) -> None:
    registry = mechanisms()
    parallel = [e["name"] for e in registry if e["parallel"]]  # the registry's flag, never a list here
    p = sub.add_parser(
        "run",
        help="run a task set on real cores under a scheduler mechanism",
        description="Run the task set in FILE on real pinned threads under a scheduler mechanism (docs/runtime.md) "
        "and print a summary (--json: the summary JSON). Without --cpus it runs on the first m CPUs this process may "
        "use, m from the file; a set made for more CPUs than the run has, or whose utilization exceeds them, is "
        "refused unless --force. The summary says whether the timing is trustworthy (poll gaps and timer latency "
        "within 10x this machine's calibrated floor plus the mechanism's reaction time from its overhead model, no "
        "dropped trace record, no miss explained by host interruptions) and names the cause the machine reports "
        "(RT throttling, the fair server, a load above the SCHED_FIFO share, other runnable tasks); "
        "at normal priority other processes preempt the run, so "
        "measure with --rt-priority 50. Mechanisms that need a placement are partitioned by worst-fit decreasing "
        "with the scheduler's exact admission test, as in simulate, when --placement is not given; spres runs any "
        "SP-RES placement (split tasks migrate) or, without one, the SP-RES cascade's. "
        "--list-schedulers prints the registered mechanisms, one line each. A fork-join task-set file "
        "(docs/rtws.md) runs under rtws (RTWS: global EDF with work stealing, docs/runtime.md) or push-pull (global "
        "EDF over its threads, each region forked when the one before has joined); its summary adds "
        f'the job-level results under "forkjoin". A DAG task-set file (docs/dag.md) runs under {", ".join(parallel)}'
        ": a node runs once every predecessor of its job has completed, made ready on the CPU that "
        'completed the last of them; its summary adds the DAG-job results, per task too, under "dag". '
        "Ctrl-C stops the run early; the results of the time run are still printed and written, marked "
        '"interrupted": true, and the exit status is 130.',
    )
    p.add_argument("file", nargs="?", help="task-set file (.json or .csv; a .jsonl must hold one set)")
    p.add_argument("--list-schedulers", action="store_true", help="print the registered mechanisms and exit")
    p.add_argument("--placement", help="placement JSON (rtsched partition --json) for mechanisms that need one")
    p.add_argument(
        "--cpus",
        type=v.cli_cpus,
        help="CPU list, e.g. 0,1 or 0-3 (default: the first m allowed CPUs, m from the file; one CPU if it has none)",
    )
    p.add_argument("--duration", type=v.cli_duration("s"), default="10s", help="run length with a unit (default 10s)")
    p.add_argument(
        "--rt-priority",
        type=v.CLI_RT_PRIORITY,
        help="run at SCHED_FIFO priority P in 1..99 (needs root or CAP_SYS_NICE)",
    )
    p.add_argument("--idle", default="sleep", choices=["sleep", "spin"], help="what idle workers do (default sleep)")
    p.add_argument(
        "--force",
        action="store_true",
        help="run a set made for more CPUs than given (its m or utilization), or more threads than cores, "
        "with a warning (misses and timings then say little about the scheduler)",
    )
    p.add_argument(
        "--isolate",
        action="store_true",
        help="for the run: lift RT throttling and the fair server on its CPUs, move IRQs off them, set the "
        "performance governor, where permitted (root); everything is restored afterwards, Ctrl-C included",
    )
    p.add_argument(
        "--no-calibrate",
        action="store_true",
        help="judge the timing against the default floor (20 us) instead of this machine's calibration, which is "
        "otherwise measured once in 0.5 s (rtsched calibrate)",
    )
    p.add_argument(
        "--overheads",
        metavar="MODEL",
        help="the overhead model (file, set or shipped name) whose maxima give the mechanism's reaction time for the "
        "trust verdict (default: the shipped model of the mechanism)",
    )
    p.add_argument(
        "--inflate",
        metavar="MODEL",
        help="run, qps-g, qps-c: inflate the servers' budgets by the overheads of MODEL (file, JSON constants, set or "
        'shipped name), the rule of analyze --overheads MODEL --mechanism (docs/overheads.md, "RUN and QPS"); the '
        "job bodies still run their WCETs; refused when the inflated utilization exceeds the CPUs",
    )
    p.add_argument("--seed", type=v.CLI_SEED, default=0, help="seed of execution-time draws (default 0)")
    p.add_argument(
        "--json",
        nargs="?",
        const=True,
        metavar="OUT",
        help="print the summary as JSON instead of a table (--json OUT, which also wrote OUT, is deprecated: -o OUT)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="also write the summary as JSON to FILE")
    p.add_argument("--trace", metavar="OUT", help="write the converted trace as JSON Lines (docs/trace.md)")
    p.add_argument("--perfetto", metavar="OUT", help="write a Perfetto / Chrome trace-event JSON")
    p.add_argument("--gantt", metavar="OUT", help="write a Gantt chart (.svg or .png)")
    p.add_argument(
        "--window", metavar="START:END", help="draw only [START, END) in the Gantt chart, e.g. 0:50ms or 1s:1.2s"
    )
    p.add_argument("--job-csv", metavar="OUT", help="write the per-job CSV")
    add_mechanism_options(p, registry)
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from ..output import write_data
    from ..runtime import format_summary, gantt_png, run_raw, schedulers

    if args.list_schedulers:
        for e in schedulers():
            print(e["line"])
        return 0
    if isinstance(args.json, str) and not args.file:  # `run --json FILE ...`: --json took the file
        args.file, args.json = args.json, True
    legacy_json = args.json if isinstance(args.json, str) else None
    if legacy_json is not None:
        print(f"rtsched run: deprecated: --json OUT; use -o {legacy_json} (and --json to print JSON)", file=sys.stderr)
    if args.window and not args.gantt:
        raise RtschedError("--window applies to the Gantt chart: give --gantt OUT.png|OUT.svg too")
    if args.gantt and not args.gantt.lower().endswith((".svg", ".png")):
        raise RtschedError(f"--gantt {args.gantt!r}: a Gantt chart is written as .svg or .png; name the file so")
    if args.window:
        from ..plots import parse_window

        parse_window(args.window)  # a bad window is an error before the run
    if not args.file:
        raise RtschedError("the task-set FILE is required (or --list-schedulers)")
    if not args.scheduler:
        raise RtschedError("--scheduler is required (rtsched run --list-schedulers lists them)")
    workload = read_workload(args.file)
    if not isinstance(workload, (ForkJoinFile, DagFile)):
        ts = workload.sequential("run").one("run")
    # Every output is checked before the run starts: a typo must not throw the run away.
    for opt in ("trace", "perfetto", "gantt", "job_csv"):
        if getattr(args, opt) is not None:
            v.output_path(getattr(args, opt), "--" + opt.replace("_", "-"))
    if isinstance(args.json, str):
        v.output_path(args.json, "--json")
    exports = []
    if args.trace or (args.gantt and (args.gantt.lower().endswith(".png") or args.window)):
        exports.append("jsonl")
    for opt, name in [(args.perfetto, "perfetto"), (args.job_csv, "job_csv")]:
        if opt:
            exports.append(name)
    if args.gantt and not args.gantt.lower().endswith(".png") and not args.window:
        exports.append("gantt_svg")
    if isinstance(workload, (ForkJoinFile, DagFile)):
        res = _run_forkjoin(args, workload, exports)
    else:
        res = run_raw(
            ts,
            scheduler=args.scheduler,
            cpus=args.cpus,
            duration=args.duration,
            placement=args.placement,
            dedicated_cpu=args.dedicated_cpu,
            rt_priority=args.rt_priority,
            idle=args.idle,
            force=args.force,
            seed=args.seed,
            exports=exports,
            params=mechanism_params(args),
            isolate=args.isolate,
            calibration="skip" if args.no_calibrate else "auto",
            overheads=args.overheads,
            inflate=args.inflate,
        )
    text = json.dumps(res["summary"], indent=1)
    print(text if args.json else format_summary(res["summary"]))
    for out in (args.output, legacy_json):
        if out:
            write_data(out, text + "\n")
    if args.trace:
        write_data(args.trace, res["jsonl"])
    if args.perfetto:
        write_data(args.perfetto, res["perfetto"])
    if args.job_csv:
        write_data(args.job_csv, res["job_csv"])
    if args.gantt:
        if args.gantt.lower().endswith(".png"):
            title = f"{args.scheduler}: run on CPUs {res['summary']['cpus']}"
            gantt_png(res["jsonl"], args.gantt, title=title, window=args.window)
        elif args.window:
            from ..simulation import gantt_svg

            write_data(args.gantt, gantt_svg(res["jsonl"], args.window))
        else:
            write_data(args.gantt, res["gantt_svg"])
    return 130 if res.get("interrupted") else 0


def _run_forkjoin(args: argparse.Namespace, workload: ForkJoinFile | DagFile, exports: list[str]) -> dict:
    """``rtsched run FJ.json|DAG.json --scheduler rtws|push-pull``: a fork-join file (docs/rtws.md)
    or a DAG file (docs/dag.md) on real cores."""
    from ..runtime import run_forkjoin_raw

    kind = "DAG" if isinstance(workload, DagFile) else "fork-join"
    for name, given in [
        ("--placement", args.placement),
        ("--dedicated-cpu", args.dedicated_cpu),
        ("--inflate", args.inflate),
    ]:
        if given is not None:
            raise RtschedError(
                f"{kind} files run without {name} (rtws and push-pull are global and use no dedicated CPU)"
            )
    return run_forkjoin_raw(
        workload.text,
        scheduler=args.scheduler,
        cpus=args.cpus,
        duration=args.duration,
        rt_priority=args.rt_priority,
        idle=args.idle,
        force=args.force,
        seed=args.seed,
        exports=exports,
        params=mechanism_params(args),
        isolate=args.isolate,
        calibration="skip" if args.no_calibrate else "auto",
        overheads=args.overheads,
    )
