"""``rtsched analyze``: schedulability tests on the task sets of a file (with ``--overheads``, the
mechanism's overhead-aware verdicts too).

A ``.jsonl`` batch without overheads takes the Rust batch path (read, parse, analyse and write in
Rust, chunk by chunk), for sequential task sets and for DAG sets alike (the file's first set says
which; docs/dag.md); everything else is analysed through :func:`rtsched.api.analyze_many`.
"""

from __future__ import annotations

import argparse
import json
import sys

from .. import validate as v
from .common import add_json_output, progress, stdout_sink
from .workload import DagFile, read_workload


def add_command(sub: argparse._SubParsersAction) -> None:
    from ..api import tests_available
    from ..dag import dag_tests_available

    p = sub.add_parser(
        "analyze",
        help="run schedulability tests",
        description="Run schedulability tests on the task set(s) in FILE (.json, .jsonl or .csv) and print a "
        "table, or with --json one JSON object per task set (docs/cli.md). Tests: "
        + ", ".join(tests_available())
        + ". On DAG task sets (docs/dag.md): "
        + ", ".join(dag_tests_available()),
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
    add_json_output(p, "one JSON object per task set (JSON Lines)")
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
    p.add_argument(
        "--priorities",
        metavar="dm|rm|RANKS",
        help="priorities of the global fixed-priority tests gfp_bc, gfp_bc_slack and gfp_guan (on a DAG file: "
        "dag_melani_gfp, dag_fonseca_gfp and dag_fonseca_gfp_chain): dm (default), rm, "
        "or one integer rank per task, comma-separated (0 = highest; ties to the lower task index)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    from ..overheads import add_analyze_options

    add_analyze_options(p)
    p.set_defaults(func=cmd_analyze)


def _verdict_word(r: dict) -> str:
    if r.get("gave_up"):
        return "gave up"
    s = r.get("schedulable")
    return "schedulable" if s else ("not schedulable" if s is not None else "-")


def _print_report_table(results: list[dict]) -> None:
    from .. import _core

    for i, r in enumerate(results):
        if len(results) > 1:
            print(f"task set {i}")
        if "error" in r:
            print(f"  invalid: {r['error']}")
            continue
        if r.get("kind") == "DAG":
            _print_dag_report(r)
            continue
        exact = f" = {r['utilization_exact']}" if "utilization_exact" in r else ""
        print(f"n = {r['n']}, m = {r['m']}, U = {r['utilization']:.4f}{exact}")
        if any("suspension" in res for res in r["results"].values()):
            print(
                "  self-suspending tasks: suspension-oblivious verdicts, suspension counted as execution "
                "(C' = C + S; Chen et al., Real-Time Systems 2019); la suspension-aware "
                "(Liu & Anderson, ECRTS 2013), gedf both"
            )
        if any(res.get("priorities") == "given-over-file" for res in r["results"].values()):
            print("  --priorities overrides the priorities of the task-set file (gfp_bc, gfp_bc_slack, gfp_guan)")
        elif any(res.get("priorities") == "file" for res in r["results"].values()):
            print("  gfp_bc, gfp_bc_slack, gfp_guan: priorities of the task-set file")
        width = max(len(k) for k in r["results"])
        for name, res in r["results"].items():
            extra = ""
            if name == "gedf_srt" and res.get("tardiness_ns") is not None:
                extra = f"  (max tardiness bound {_core.format_time(max(res['tardiness_ns'], default=0))})"
            print(f"  {name:<{width}}  {_verdict_word(res)}{extra}")
        if "overheads" in r:
            from ..overheads import table_lines

            print("\n".join(table_lines(r["overheads"])))


def _analyze_dag(args: argparse.Namespace, workload: DagFile) -> int:
    """``analyze`` on a DAG file: the DAG tests (docs/dag.md), one report as the sequential one."""
    from .._core import RtschedError
    from ..dag import analyze_dag

    for opt, given in [
        ("--overheads", args.overheads is not None),
        ("--mechanism", args.mechanism is not None),
        ("--exact-utilization", args.exact_utilization),
    ]:
        if given:
            raise RtschedError(f"{args.file}: {opt} applies to sequential task sets; this is a DAG task set")
    try:
        r = analyze_dag(workload.text, args.m, args.tests, args.max_steps, args.priorities)
    except RtschedError as e:
        raise RtschedError(f"{args.file}: {e}") from None
    line = json.dumps(r)
    if args.output:
        from ..output import write_text

        write_text(args.output, line + "\n")
    if args.json:
        print(line)
        return 0
    _print_dag_report(r)
    return 0


def _print_dag_report(r: dict) -> None:
    """One DAG set's report as a table (with the federated plan in words)."""
    print(f"n = {r['n']}, m = {r['m']}, U = {r['utilization']:.4f} (DAG tasks)")
    width = max([len(k) for k in r["results"]] + [4])
    for name, res in r["results"].items():
        extra = ""
        if name == "dag_federated" and "plan" in res:
            cores = ", ".join(
                f"task {h['task']}: cores {h['cores'][0]}-{h['cores'][1] - 1}" for h in res["plan"]["high"]
            )
            extra = f"  ({cores or 'no heavy task'}; {len(res['plan']['low'])} light core(s))"
        elif name == "dag_federated" and "reason" in res:
            extra = f"  ({res['reason']})"
        elif res.get("response_times_ns") and res.get("schedulable"):
            extra = "  (R = " + ", ".join(str(x) for x in res["response_times_ns"]) + " ns)"
        elif "reason" in res:
            extra = f"  ({res['reason']})"
        print(f"  {name:<{width}}  {_verdict_word(res)}{extra}")


def _first_line_is_dag(path: str) -> bool:
    """Whether the first set of a JSON Lines file is a DAG set (its tasks have "nodes", the
    loader's rule); an unreadable file is not (its reader then says why)."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            for line in f:
                if line.strip() and not line.lstrip().startswith("#"):
                    tasks = json.loads(line).get("tasks")
                    return isinstance(tasks, list) and any(isinstance(t, dict) and "nodes" in t for t in tasks)
    except (OSError, ValueError, AttributeError, RecursionError):
        return False
    return False


#: Task sets per call of the overhead-aware batch analysis (what a Ctrl-C can lose at most).
_ANALYZE_CHUNK = 256


def cmd_analyze(args: argparse.Namespace) -> int:
    from .. import _core
    from ..io import _format

    workload = read_workload(args.file)
    if isinstance(workload, DagFile):
        return _analyze_dag(args, workload)
    file = workload.sequential("analyze")
    fmt = _format(file.path)
    ovh = {}
    if args.overheads is not None or args.mechanism is not None:
        from ..shipped import resolve_model_file

        model = None if args.overheads is None else resolve_model_file(args.overheads, args.mechanism)
        ovh = dict(overheads=model, mechanism=args.mechanism, stat=args.stat, cpd=args.cpd)
        ovh.update(quantum=args.quantum, extrapolate=args.extrapolate)
    if fmt == "jsonl" and ovh and _first_line_is_dag(args.file):
        from .._core import RtschedError

        raise RtschedError(
            f"{args.file}: --overheads applies to sequential task sets; this is a batch of DAG task sets"
        )
    if fmt == "jsonl" and not ovh:
        # The batch path: read, parse, analyse and serialise in Rust, chunk by chunk, in parallel.
        prog, close = progress("analyze", "task sets", args.quiet)
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
                    args.priorities,
                )

            if args.output:
                # -o FILE: every line goes to FILE (atomically; what was done before a Ctrl-C
                # is kept), and to stdout too with --json.
                from ..output import write_with

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
                res = batch(stdout_sink() if args.json else None)
        finally:
            close()
        if not args.json:
            total = res["sets"] + res["invalid"]
            if total <= 20 and not args.output:
                _print_report_table([json.loads(x) for x in res["first"]])
            else:
                names = list(res["counts"])
                width = max([len(k) for k in names] + [4])
                kind = " DAG" if res.get("kind") == "DAG" else ""
                print(f"{res['sets']}{kind} task sets" + (f" ({res['invalid']} invalid)" if res["invalid"] else ""))
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

    from ..api import analyze_many

    sets = file.all()
    # In chunks, so that a Ctrl-C keeps the reports of the chunks finished before it (the
    # overhead-aware part has no partial result of its own).
    step = _ANALYZE_CHUNK if ovh else max(1, len(sets))
    results: list = []
    interrupted = False
    try:
        for i in range(0, len(sets), step):
            results += analyze_many(
                sets[i : i + step],
                args.m,
                args.tests,
                args.max_steps,
                exact_utilization=args.exact_utilization,
                priorities=args.priorities,
                **ovh,
            )
    except KeyboardInterrupt as e:
        interrupted = True
        if not ovh:
            results += list(getattr(e, "partial", None) or [])
    if args.output:
        from ..output import write_text

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
