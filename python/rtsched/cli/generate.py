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
        "--umax",
        type=v.cli_float(0.0, None, lo_open=True),
        default=1.0,
        help="largest per-task utilization (default 1; above 1 only with --dag)",
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
    p.add_argument(
        "--suspension-ratio",
        metavar="R",
        help="make the tasks self-suspending: each suspends for round(R*(T-C)) ns in total, R in [0, 1] "
        "or drawn uniformly from LO-HI per task (e.g. 0.1-0.3), split into --suspension-segments execution "
        "segments (docs/generators.md, Self-suspension); writes JSON (CSV has no column for segments)",
    )
    p.add_argument(
        "--suspension-segments",
        type=v.cli_int(2, 4096),
        default=2,
        metavar="K",
        help="execution segments per self-suspending task (K-1 suspensions between them; default 2)",
    )
    p.add_argument("-o", "--output", help="output file (.json, .jsonl or .csv); default stdout")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    g = p.add_argument_group(
        "DAG tasks (--dag SHAPE; docs/dag.md)",
        "with --dag, one DAG task set is written as DAG JSON (--n tasks, total utilization --util, --seed), or "
        "with --count N, N of them as JSON Lines (one DAG set per line, -o FILE.jsonl); the options below apply "
        "to DAG sets only",
    )
    g.add_argument(
        "--dag",
        choices=["nested-fork-join", "erdos-renyi", "layered"],
        help="generate DAG tasks of this shape: nested-fork-join (Melani et al., ECRTS 2015), erdos-renyi or "
        "layered (Cordeiro et al., SIMUTools 2010)",
    )
    g.add_argument(
        "--wcet", type=_int_range, default=(1_000, 100_000), help="node WCET range in ns, MIN-MAX (default 1000-100000)"
    )
    g.add_argument(
        "--beta",
        type=v.cli_float(0.0, 1.0, lo_open=True),
        help="critical-path ratio: D = min(T, ceil(len/beta)) (default implicit deadlines D = T)",
    )
    g.add_argument(
        "--max-depth", type=v.cli_int(1, None), default=3, help="nested-fork-join: nesting depth (default 3)"
    )
    g.add_argument(
        "--max-branches", type=v.cli_int(2, None), default=4, help="nested-fork-join: most branches (default 4)"
    )
    g.add_argument(
        "--p-par", type=v.cli_float(0.0, 1.0), default=0.8, help="nested-fork-join: P(branch forks) (default 0.8)"
    )
    g.add_argument(
        "--p-add", type=v.cli_float(0.0, 1.0), default=0.1, help="nested-fork-join: P(extra edge) (default 0.1)"
    )
    g.add_argument(
        "--nodes", type=_int_range, default=(10, 30), help="erdos-renyi: node count range MIN-MAX (default 10-30)"
    )
    g.add_argument("--p", type=v.cli_float(0.0, 1.0), default=0.2, help="erdos-renyi, layered: P(edge) (default 0.2)")
    g.add_argument("--layers", type=_int_range, default=(3, 6), help="layered: layer count range MIN-MAX (default 3-6)")
    g.add_argument("--width", type=_int_range, default=(2, 5), help="layered: layer width range MIN-MAX (default 2-5)")
    p.set_defaults(func=cmd_generate)


def _int_range(s: str) -> tuple[int, int]:
    """``MIN-MAX`` (or one integer) as a pair of non-negative integers."""
    lo, sep, hi = s.partition("-")
    try:
        a = int(lo)
        b = int(hi) if sep else a
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MIN-MAX of integers, got {s!r}") from None
    if a < 0 or b < a:
        raise argparse.ArgumentTypeError(f"expected 0 <= MIN <= MAX, got {s!r}")
    return a, b


#: DAG sets per call of the generator with --dag --count (what a Ctrl-C can lose at most).
_DAG_CHUNK = 256


def _generate_dag(args: argparse.Namespace) -> int:
    """``generate --dag``: one DAG set as JSON, or ``--count`` of them as JSON Lines (one DAG set
    per line, sets ``0 .. count`` of the stream ``--seed``, generated in chunks in parallel)."""
    from ..dag import dag_generator, generate_dag
    from ..io import _format
    from ..output import write_text, write_with

    if args.n is None:
        raise RtschedError("--dag needs --n (the number of DAG tasks)")
    for opt, default in [
        ("generator", "randfixedsum"),
        ("periods", "loguniform:10ms-100ms"),
        ("deadlines", "implicit"),
    ]:
        if getattr(args, opt) != default:
            raise RtschedError(
                f"--{opt} applies to sequential tasks; with --dag, periods follow from --util and --umax"
            )
    params = {k: getattr(args, k) for k in ("wcet", "beta", "max_depth", "max_branches", "p_par", "p_add")}
    params.update({k: getattr(args, k) for k in ("nodes", "p", "layers", "width")})
    from ..dag import SHAPE_KEYS

    params = {k: x for k, x in params.items() if k in ("wcet", "beta") or k in SHAPE_KEYS[args.dag]}
    dag_generator(args.dag, **params)  # the parameters' errors before anything is written

    def sets(start: int, count: int) -> list[str]:
        return generate_dag(
            args.dag, args.n, args.util, umax=args.umax, seed=args.seed, m=args.m, start=start, count=count, **params
        )

    if args.count is None:
        if args.output and not args.output.lower().endswith(".json"):
            raise RtschedError(f"-o {args.output!r}: one DAG task set is written as .json (--count N writes .jsonl)")
        (text,) = sets(0, 1)
        if args.output:
            write_text(args.output, text + "\n")
        else:
            sys.stdout.write(text + "\n")
        return 0
    if args.output:
        if _format(args.output) != "jsonl":
            raise RtschedError(f"--count writes JSON Lines: name the output .jsonl, not {args.output!r}")
        v.output_path(args.output, "output")
    prog, close = progress("generate", "task sets", args.quiet)
    state = {"written": 0, "interrupted": False}

    def stream(write) -> None:
        try:
            for start in range(0, args.count, _DAG_CHUNK):
                chunk = sets(start, min(_DAG_CHUNK, args.count - start))
                write("".join(t + "\n" for t in chunk).encode())
                state["written"] += len(chunk)
                if prog is not None:
                    prog(state["written"], args.count)
        except KeyboardInterrupt:
            state["interrupted"] = True

    try:
        if args.output:
            write_with(args.output, lambda f: stream(f.write))
        else:
            stream(lambda data: sys.stdout.write(data.decode()))
    finally:
        close()
    if state["interrupted"]:
        where = args.output or "stdout"
        print(f"rtsched generate: interrupted; {where} holds the first {state['written']} DAG set(s)", file=sys.stderr)
        return 130
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from .. import _core
    from ..api import generate
    from ..io import _format, save
    from ..output import write_with

    if args.dag is not None:
        if args.suspension_ratio is not None:
            raise RtschedError("argument --suspension-ratio: not with --dag (DAG tasks do not self-suspend)")
        return _generate_dag(args)
    if args.umax > 1.0:
        raise RtschedError(f"argument --umax: must be in (0.0, 1.0], got {args.umax} (above 1 only with --dag)")
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
            suspension_ratio=args.suspension_ratio,
            suspension_segments=args.suspension_segments,
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
            args.suspension_ratio,
            args.suspension_segments,
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
