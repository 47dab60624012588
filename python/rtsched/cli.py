"""The ``rtsched`` command line (docs/cli.md).

Every command prints help with ``-h``. Errors in input are reported in one line naming the
file, line, task and field, and exit with status 2; a run that completes but finds failures
(e.g. an analysis batch with invalid lines) exits with status 1; an internal error (a failed
check of rtsched's own invariants: a bug, not bad input) is reported in one line asking for a
report and exits with status 70.
"""

from __future__ import annotations

import argparse
import json
import sys

from . import __version__
from . import validate as v
from ._core import InternalError, RtschedError

#: Exit status of an internal error (a bug in rtsched; sysexits' EX_SOFTWARE).
EXIT_INTERNAL = 70


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``rtsched CMD: error: ...``, no usage block), exit 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _add_json_output(p, what: str) -> None:
    """The output options every command that has a result object shares: ``--json`` prints it as
    JSON instead of a table; ``-o/--output FILE`` writes the JSON to FILE as well (atomically)."""
    p.add_argument("--json", action="store_true", help=f"print {what} as JSON instead of a table")
    p.add_argument("-o", "--output", metavar="FILE", help=f"also write {what} as JSON to FILE")


def _emit(args, obj, table, indent: int | None = None) -> None:
    """Prints ``obj`` as JSON (``--json``) or ``table()``, and writes the JSON to ``-o FILE``."""
    text = json.dumps(obj, indent=indent)
    if getattr(args, "output", None):
        from .output import write_text

        write_text(args.output, text + "\n")
    print(text if args.json else table())


def _check_not_forkjoin(path: str, command: str) -> None:
    """A fork-join file (tasks with "regions", docs/rtws.md) has its own simulator path."""
    if _is_forkjoin(path):
        raise RtschedError(
            f"{path} is a fork-join task set (its tasks have regions); {command} takes sequential tasks. "
            f"Simulate it with: rtsched simulate {path} --scheduler rtws (or gedf, spres)"
        )


def _load_one(path: str, command: str):
    """The one task set of a file, for the commands that take one."""
    from .io import load_many

    _check_not_forkjoin(path, command)
    sets = load_many(path)
    if len(sets) != 1:
        raise RtschedError(f"{path}: {command} takes one task set, the file holds {len(sets)}")
    return sets[0]


def _add_generate(sub):
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
    from . import _core
    from .api import generate
    from .io import _format, save
    from .output import write_with

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
    prog, close = _progress("generate", "task sets", args.quiet)

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
            result["r"] = stream(_stdout_sink())
    finally:
        close()
    written, interrupted = result["r"]
    if interrupted:
        where = args.output or "stdout"
        print(f"rtsched generate: interrupted; {where} holds the first {written} task set(s)", file=sys.stderr)
        return 130
    return 0


def _stdout_sink():
    """Where the Rust batch writers put their output: stdout's file descriptor (written from
    Rust, so that Ctrl-C cannot tear a line), or a function when stdout is not a real file."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return lambda data: sys.stdout.write(data.decode())
    sys.stdout.flush()
    return fd


def _progress(label: str, unit: str, quiet: bool):
    """A progress callback (done, total) for long runs (shown after 2 s), and its closer."""
    if quiet:
        return None, lambda: None
    from .experiments.progress import Progress

    state: dict = {}

    def cb(done, total, sets=None):
        p = state.get("p")
        if p is None:
            p = state["p"] = Progress(total or 0, total or 0, label=label, unit=unit, delay=2.0)
        if sets is not None:  # a file read by bytes: estimate the sets from the bytes done
            p.total_sets = int(sets * total / done) if done else 0
            p.update(0, sets - p.sets)
        else:
            p.total_sets = total or 0
            p.update(0, done - p.sets)

    def close():
        if "p" in state:
            state["p"].close()

    return cb, close


def _add_analyze(sub):
    from .api import tests_available

    p = sub.add_parser(
        "analyze",
        help="run schedulability tests",
        description="Run schedulability tests on the task set(s) in FILE (.json, .jsonl or .csv) and print a "
        "table, or with --json one JSON object per task set (docs/cli.md). Tests: " + ", ".join(tests_available()),
    )
    p.add_argument("file", help="task-set file: .json (one set), .jsonl (one per line) or .csv")
    p.add_argument("--m", type=v.CLI_M, help='processor count (overrides the file\'s "m")')
    p.add_argument(
        "--test",
        action="append",
        dest="tests",
        metavar="NAME",
        help="a test to run (repeatable); default: all that apply",
    )
    _add_json_output(p, "one JSON object per task set (JSON Lines)")
    p.add_argument(
        "--exact-utilization",
        action="store_true",
        help='also report the exact total utilization as a fraction ("utilization_exact": "num/den"); slower, '
        "since exact sums of many co-prime periods have hundreds of digits",
    )
    p.add_argument(
        "--max-steps",
        type=v.CLI_STEPS,
        default=1_000_000,
        help="work bound for pseudo-polynomial and iterative tests (default 1000000); a test that hits "
        "it reports gave_up",
    )
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    from .overheads import add_analyze_options

    add_analyze_options(p)
    p.set_defaults(func=cmd_analyze)


def _verdict_word(r: dict) -> str:
    if r.get("gave_up"):
        return "gave up"
    s = r.get("schedulable")
    return "schedulable" if s else ("not schedulable" if s is not None else "-")


def _print_report_table(results: list[dict]) -> None:
    from . import _core

    for i, r in enumerate(results):
        if len(results) > 1:
            print(f"task set {i}")
        if "error" in r:
            print(f"  invalid: {r['error']}")
            continue
        exact = f" = {r['utilization_exact']}" if "utilization_exact" in r else ""
        print(f"n = {r['n']}, m = {r['m']}, U = {r['utilization']:.4f}{exact}")
        width = max(len(k) for k in r["results"])
        for name, res in r["results"].items():
            extra = ""
            if name == "gedf_srt" and res.get("tardiness_ns") is not None:
                extra = f"  (max tardiness bound {_core.format_time(max(res['tardiness_ns'], default=0))})"
            print(f"  {name:<{width}}  {_verdict_word(res)}{extra}")
        if "overheads" in r:
            from .overheads import table_lines

            print("\n".join(table_lines(r["overheads"])))


#: Task sets per call of the overhead-aware batch analysis (what a Ctrl-C can lose at most).
_ANALYZE_CHUNK = 256


def cmd_analyze(args: argparse.Namespace) -> int:
    from . import _core
    from .io import _format
    from .io import load_many as load

    _check_not_forkjoin(args.file, "analyze")
    fmt = _format(args.file)
    ovh = {}
    if args.overheads is not None or args.mechanism is not None:
        from .shipped import resolve_model_file

        model = None if args.overheads is None else resolve_model_file(args.overheads, args.mechanism)
        ovh = dict(overheads=model, mechanism=args.mechanism, stat=args.stat, cpd=args.cpd)
        ovh.update(quantum=args.quantum, extrapolate=args.extrapolate)
    if fmt == "jsonl" and not ovh:
        # The batch path: read, parse, analyse and serialise in Rust, chunk by chunk, in parallel.
        prog, close = _progress("analyze", "task sets", args.quiet)
        try:

            def batch(sink) -> dict:
                return _core.analyze_file(
                    args.file,
                    args.m,
                    args.tests,
                    args.max_steps,
                    args.exact_utilization,
                    sink,
                    prog,
                    0 if sink is not None else 21,
                )

            if args.output:
                # -o FILE: every line goes to FILE (atomically; what was done before a Ctrl-C
                # is kept), and to stdout too with --json.
                from .output import write_with

                box: dict = {}

                def into(f) -> None:
                    if args.json:
                        out = sys.stdout.buffer

                        def both(data: bytes) -> None:
                            f.write(data)
                            out.write(data)

                        sink = both
                    else:
                        sink = f.write
                    box["res"] = batch(sink)

                write_with(args.output, into)
                res = box["res"]
            else:
                res = batch(_stdout_sink() if args.json else None)
        finally:
            close()
        if not args.json:
            total = res["sets"] + res["invalid"]
            if total <= 20 and not args.output:
                _print_report_table([json.loads(x) for x in res["first"]])
            else:
                names = list(res["counts"])
                width = max([len(k) for k in names] + [4])
                print(f"{res['sets']} task sets" + (f" ({res['invalid']} invalid)" if res["invalid"] else ""))
                print(f"  {'test':<{width}}  {'accepted':>9}  {'rejected':>9}  {'gave up':>8}")
                for name in names:
                    acc, rej, gave = res["counts"][name]
                    print(f"  {name:<{width}}  {acc:>9}  {rej:>9}  {gave:>8}")
            for e in res["errors"]:
                print(f"rtsched analyze: {args.file}: {e}", file=sys.stderr)
        if res["invalid"]:
            print(f"rtsched analyze: {res['invalid']} invalid task set(s) in {args.file}", file=sys.stderr)
        if res["interrupted"]:
            print(
                f"rtsched analyze: interrupted after {res['sets'] + res['invalid']} task set(s); "
                "their results are above" + (f" and in {args.output}" if args.output else ""),
                file=sys.stderr,
            )
            return 130
        return 1 if res["invalid"] else 0

    from .api import analyze_many

    sets = load(args.file)
    # In chunks, so that a Ctrl-C keeps the reports of the chunks finished before it (the
    # overhead-aware part has no partial result of its own).
    step = _ANALYZE_CHUNK if ovh else max(1, len(sets))
    results: list = []
    interrupted = False
    try:
        for i in range(0, len(sets), step):
            results += analyze_many(
                sets[i : i + step], args.m, args.tests, args.max_steps, exact_utilization=args.exact_utilization, **ovh
            )
    except KeyboardInterrupt as e:
        interrupted = True
        if not ovh:
            results += list(getattr(e, "partial", None) or [])
    if args.output:
        from .output import write_text

        write_text(args.output, "".join(json.dumps(r) + "\n" for r in results))
    if interrupted:
        print(
            f"rtsched analyze: interrupted after {len(results)} of {len(sets)} task set(s); their results are "
            + ("below" if results else "kept")
            + (f" and in {args.output}" if args.output else ""),
            file=sys.stderr,
        )
    if args.json:
        for r in results:
            print(json.dumps(r))
        return 130 if interrupted else 0
    if len(results) <= 20 or interrupted and not results:
        _print_report_table(results)
        return 130 if interrupted else 0
    names = list(results[0]["results"])
    width = max([len(k) for k in names] + [len(f"{args.mechanism} hard")] if ovh else [len(k) for k in names])
    print(f"{len(results)} task sets")
    print(f"  {'test':<{width}}  {'accepted':>9}  {'rejected':>9}  {'gave up':>8}")
    for name in names:
        acc = sum(1 for r in results if r["results"][name].get("schedulable") is True)
        gave = sum(1 for r in results if r["results"][name].get("gave_up"))
        print(f"  {name:<{width}}  {acc:>9}  {len(results) - acc - gave:>9}  {gave:>8}")
    if ovh:
        for key in ("hard", "soft"):
            side = [r["overheads"][key] for r in results]
            acc = sum(1 for s in side if s["schedulable"] is True)
            gave = sum(1 for s in side if s["gave_up"])
            label = f"{args.mechanism} {key}"
            print(f"  {label:<{width}}  {acc:>9}  {len(results) - acc - gave:>9}  {gave:>8}")
    return 130 if interrupted else 0


def _add_partition(sub):
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
    _add_json_output(p, "the placement (docs/spres.md#placement-json)")
    p.set_defaults(func=cmd_partition)


def cmd_partition(args: argparse.Namespace) -> int:
    from ._core import format_time as fmt
    from .api import DEFAULT_PARTITION_METHOD, _legacy_heuristic, partition

    ts = _load_one(args.file, "partition")
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

    _emit(args, placement, table, indent=1)
    return 0 if placement["schedulable"] else 1


def _partition_overheads(args: argparse.Namespace) -> dict:
    """``partition``'s overhead options as keyword arguments of ``api.partition``."""
    if args.overheads is None:
        for flag, val in (("--mechanism", args.mechanism), ("--stat", args.stat), ("--extrapolate", args.extrapolate)):
            if val:
                raise RtschedError(f"field 'overheads': {flag} applies only with --overheads MODEL")
        return {}
    return dict(
        overheads=args.overheads,
        mechanism=args.mechanism,
        stat=args.stat,
        cpd=args.cpd,
        quantum=args.quantum,
        extrapolate=args.extrapolate,
    )


def _add_simulate(sub):
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
            "gedf (default), gedf-quantum, pedf, pfp, spres, or rtws (a fork-join file with "
            '"regions" per task, docs/rtws.md, or a plain task set: one thread per job); '
            "a fork-join file also runs under gedf (G-EDF over its threads)"
        ),
    )
    p.add_argument(
        "--placement", metavar="P.json", help="placement JSON (rtsched partition --json) for pedf, pfp, spres"
    )
    p.add_argument("--quantum", type=v.cli_duration("ms"), help="gedf-quantum: the quantum with a unit (default 1ms)")
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
    p.add_argument("--seed", type=v.CLI_SEED, default=0, help="seed of --sporadic and --exec-fraction (default 0)")
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
        "(gedf, gedf-quantum, pedf, pfp; docs/simulator.md)",
    )
    p.add_argument("--overhead-stat", choices=["max", "avg"], help="which statistic of the model (default max)")
    _add_json_output(p, "the summary")
    p.set_defaults(func=cmd_simulate)


def cmd_simulate(args: argparse.Namespace) -> int:
    from .simulation import NotPlacedError, format_table, simulate

    if args.window and not args.gantt:
        raise RtschedError("--window applies to the Gantt chart: give --gantt OUT.png|OUT.svg too")
    if args.scheduler.lower() in ("rtws", "gedf") and _is_forkjoin(args.file):
        return _simulate_forkjoin(args)
    ts = _load_one(args.file, "simulate")
    placement = None
    if args.placement:
        from .io import read_text

        try:
            placement = read_text(args.placement, "placement")
        except RtschedError as e:
            raise RtschedError(f"field 'placement': {e}") from None

    def log(msg):
        print(f"rtsched simulate: {msg}", file=sys.stderr)

    try:
        s = simulate(
            ts,
            args.m,
            args.scheduler,
            placement,
            args.horizon,
            quantum=args.quantum,
            staggered=args.staggered,
            sporadic=args.sporadic,
            exec_fraction=args.exec_fraction,
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
            log=log,
        )
    except NotPlacedError as e:
        print(f"rtsched simulate: not placed: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        partial = getattr(e, "partial", None)
        if partial is None:
            raise
        s = partial
    _emit(args, s, lambda: f"{args.scheduler.lower()} on {args.m or ts.m} processors, " + format_table(s))
    return _interrupted(s)


def _interrupted(s: dict) -> int:
    """Exit status 130 after Ctrl-C, with a note: the summary and outputs cover the part simulated."""
    if s.get("interrupted"):
        from ._core import format_time

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
    from .io import read_text
    from .shipped import resolve_model_file

    path = resolve_model_file(args.overheads)  # a path, JSON text, or a shipped model's name
    if path.lstrip().startswith("{"):
        return path
    try:
        return read_text(path, "overheads")
    except RtschedError as e:
        raise RtschedError(f"field 'overheads': {e}") from None


def _is_forkjoin(path: str) -> bool:
    """A fork-join task-set file (docs/rtws.md): JSON whose tasks have "regions"."""
    if not str(path).lower().endswith(".json"):
        return False
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError, RecursionError):
        return False  # the normal loader reports the error (nesting too deep included), in one line
    tasks = doc.get("tasks") if isinstance(doc, dict) else None
    return isinstance(tasks, list) and any(isinstance(t, dict) and "regions" in t for t in tasks)


def _simulate_forkjoin(args) -> int:
    from .simulation import simulate_forkjoin

    unsupported = [
        name
        for name, v in [
            ("--placement", args.placement),
            ("--quantum", args.quantum),
            ("--staggered", args.staggered),
            ("--exec-fraction", args.exec_fraction),
            ("--cash", args.cash),
            ("--soft", args.soft),
            ("--background", args.background),
            ("--rr-quantum", args.rr_quantum),
            ("--overheads", args.overheads),
            ("--overhead-stat", args.overhead_stat),
        ]
        if v
    ]
    if unsupported:
        raise RtschedError(
            "fork-join files are simulated without "
            + ", ".join(unsupported)
            + " (RTWS executes the thread costs as given and has no overhead injection)"
        )
    from .io import read_text

    text = read_text(args.file)
    sched = args.scheduler.lower()
    # gedf: event-driven G-EDF over the threads (docs/rtws.md); trace files only under rtws.
    try:
        r = simulate_forkjoin(
            text,
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
    except KeyboardInterrupt as e:
        partial = getattr(e, "partial", None)
        if partial is None:
            raise
        r = partial
    if r.get("horizon_message"):
        print(f"rtsched simulate: {r['horizon_message']}", file=sys.stderr)
    from ._core import format_time

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

    _emit(args, r, table)
    return _interrupted(r)


def _add_quickstart(sub):
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
    from .quickstart import run

    run(m=args.m, n=args.n, sets=args.sets, step=args.step, seed=args.seed, out=args.out)
    return 0


def _registry() -> list[dict]:
    from .runtime import schedulers

    return schedulers()


def _add_mechanism_options(p, registry: list[dict]) -> None:
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
        kw = {"nargs": "?", "const": "true"} if flag else {"metavar": "VALUE"}
        group.add_argument(opt, dest=f"param__{name}", default=None, help=helps, **kw)


def _mechanism_params(args) -> list[str]:
    """The --param pairs plus the named parameter options that were given, each checked against
    the scheduler's declared parameters before the run (:func:`_check_param`)."""
    pairs = list(args.param)
    for k, val in vars(args).items():
        if k.startswith("param__") and val is not None:
            pairs.append(f"{k[len('param__') :]}={val}")
    declared = {}
    for e in _registry():
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
            v.choice(val.strip().lower(), "value", ["true", "false"])
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


def _add_run(sub):
    registry = _registry()
    p = sub.add_parser(
        "run",
        help="run a task set on real cores under a scheduler mechanism",
        description="Run the task set in FILE on real pinned threads under a scheduler mechanism (docs/runtime.md) "
        "and print a summary (--json: the summary JSON). Without --cpus it runs on the first m CPUs this process may "
        "use, m from the file; a set made for more CPUs than the run has, or whose utilization exceeds them, is "
        "refused unless --force. The summary says whether the timing is trustworthy (poll gaps and timer latency "
        "within 10x the mechanism's reaction time); at normal priority other processes preempt the run, so "
        "measure with --rt-priority 50. Mechanisms that need a placement are partitioned by worst-fit decreasing "
        "with the scheduler's exact admission test, as in simulate, when --placement is not given; spres runs any "
        "SP-RES placement (split tasks migrate) or, without one, the SP-RES cascade's. "
        "--list-schedulers prints the registered mechanisms, one line each. A fork-join task-set file "
        "(docs/rtws.md) runs under rtws (RTWS: global EDF with work stealing, docs/runtime.md) or push-pull (global "
        "EDF over its threads, each region forked when the one before has joined); its summary adds "
        'the job-level results under "forkjoin". '
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
    _add_mechanism_options(p, registry)
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from .output import write_data
    from .runtime import format_summary, gantt_png, run_raw, schedulers

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
        from .plots import parse_window

        parse_window(args.window)  # a bad window is an error before the run
    if not args.file:
        raise RtschedError("the task-set FILE is required (or --list-schedulers)")
    if not args.scheduler:
        raise RtschedError("--scheduler is required (rtsched run --list-schedulers lists them)")
    forkjoin = _is_forkjoin(args.file)
    if not forkjoin:
        sets = [_load_one(args.file, "run")]
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
    if forkjoin:
        res = _run_forkjoin(args, exports)
    else:
        res = run_raw(
            sets[0],
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
            params=_mechanism_params(args),
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
            from .simulation import gantt_svg

            write_data(args.gantt, gantt_svg(res["jsonl"], args.window))
        else:
            write_data(args.gantt, res["gantt_svg"])
    return 130 if res.get("interrupted") else 0


def _run_forkjoin(args: argparse.Namespace, exports: list[str]) -> dict:
    """``rtsched run FJ.json --scheduler rtws|push-pull``: a fork-join file (docs/rtws.md) on real cores."""
    from .runtime import run_forkjoin_raw

    for name, given in [("--placement", args.placement), ("--dedicated-cpu", args.dedicated_cpu)]:
        if given is not None:
            raise RtschedError(
                f"fork-join files run without {name} (rtws and push-pull are global and use no dedicated CPU)"
            )
    try:
        with open(args.file, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise RtschedError(f"cannot read {args.file!r}: {e.strerror}") from None
    return run_forkjoin_raw(
        text,
        scheduler=args.scheduler,
        cpus=args.cpus,
        duration=args.duration,
        rt_priority=args.rt_priority,
        idle=args.idle,
        force=args.force,
        seed=args.seed,
        exports=exports,
        params=_mechanism_params(args),
    )


def _add_measure(sub):
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
    _add_mechanism_options(p, _registry())
    from .campaign import add_options as add_campaign

    add_campaign(p)
    p.set_defaults(func=cmd_measure)


def cmd_measure(args: argparse.Namespace) -> int:
    from .runtime import measure_overheads

    if args.campaign:
        from .campaign import cmd_campaign

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
        params=_mechanism_params(args),
        background=args.background,
        isolate=args.isolate,
    )
    return 130 if model.get("interrupted") else 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rtsched",
        description="rtsched: multiprocessor real-time scheduling workbench — generate task sets, analyse "
        "them, place them on processors, simulate them, and run experiments. Times are integer ns or "
        "duration strings like 2ms.",
    )
    parser.add_argument("--version", action="version", version=f"rtsched {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    _add_generate(sub)
    _add_analyze(sub)
    _add_partition(sub)
    _add_simulate(sub)
    _add_quickstart(sub)
    _add_run(sub)
    _add_measure(sub)
    from .cli_exchange import add_commands as add_exchange
    from .cli_overheads import add_commands as add_overheads
    from .experiments.cli import add_commands

    add_exchange(sub)
    add_overheads(sub)
    add_commands(sub)
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
            from .shipped import resolve_example  # a shipped example by name, from any folder

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


if __name__ == "__main__":
    sys.exit(main())
