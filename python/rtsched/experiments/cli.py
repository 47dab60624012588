"""The experiment commands of the ``rtsched`` CLI: ``sweep``, ``plot`` and ``reproduce``.

The main CLI hooks them in with ``rtsched.experiments.cli.add_commands(subparsers)``; each command
handles its own errors (one line on stderr, exit status 2) and Ctrl-C (status 130; every finished
point is on disk, ``--resume`` continues).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from .. import validate as v
from .._core import RtschedError as _InputError
from .errors import SpecError


def _executor_args(p):
    p.add_argument("--jobs", type=v.CLI_JOBS, help="local worker processes (default: the number of CPUs)")
    p.add_argument(
        "--dask",
        metavar="ADDR",
        help="run on the Dask cluster whose scheduler is at ADDR (e.g. tcp://host:8786) instead of local processes",
    )
    p.add_argument(
        "--slurm", action="store_true", help="start a Dask cluster on Slurm (dask-jobqueue SLURMCluster) and run there"
    )
    p.add_argument(
        "--slurm-opt",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a SLURMCluster option (repeatable), e.g. cores=8, memory=16GB, walltime=01:00:00, queue=NAME",
    )
    p.add_argument("--slurm-jobs", type=v.CLI_JOBS, default=1, metavar="N", help="Slurm jobs to start (default 1)")
    p.add_argument("--quiet", action="store_true", help="no progress output")


def _make_executor(args):
    from .executors import DaskExecutor, LocalExecutor, check_address, parse_options

    if args.dask is not None and args.slurm:
        raise SpecError("give either --dask or --slurm, not both")
    if (args.slurm_opt or args.slurm_jobs != 1) and not args.slurm:
        raise SpecError("--slurm-opt and --slurm-jobs need --slurm")
    if args.dask is not None and args.jobs is not None:
        raise SpecError("--jobs sets local worker processes; with --dask the cluster's workers run the points")
    if args.dask is not None:
        return DaskExecutor(address=check_address(args.dask))
    if args.slurm:
        return DaskExecutor(slurm=parse_options(args.slurm_opt), slurm_jobs=args.slurm_jobs)
    return LocalExecutor(args.jobs)


def _interrupt_once(signum, frame):
    """The first Ctrl-C interrupts (``KeyboardInterrupt``); later ones are ignored while the
    run stops its workers and exits (status 130), so they never print a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


def _guard(name, fn, args) -> int:
    old = None
    if threading.current_thread() is threading.main_thread():
        old = signal.signal(signal.SIGINT, _interrupt_once)
    try:
        return fn(args)
    except (SpecError, _InputError) as e:  # a bad spec, or a file that cannot be written
        print(f"rtsched {name}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if old is not None:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        print(
            f"rtsched {name}: interrupted; every finished point is saved, rerun with --resume to continue",
            file=sys.stderr,
        )
        from .executors import exit_after_stop

        exit_after_stop(130)  # the points are written: do not let the interpreter wait for the pool
        return 130
    finally:
        if old is not None and signal.getsignal(signal.SIGINT) is _interrupt_once:
            signal.signal(signal.SIGINT, old)


def cmd_sweep(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .registry import results_dir
    from .spec import load_spec
    from .sweep import run_sweep

    spec = load_spec(args.spec, quick=args.quick, variant=args.variant)
    out = Path(args.out) if args.out else results_dir(spec.name, spec.variant, args.quick)
    executor = _make_executor(args)
    try:
        res = run_sweep(spec, out, resume=args.resume, executor=executor, progress=not args.quiet)
    finally:
        executor.close()
    print(
        f"{out}: {len(res.computed)} point(s) computed, {len(res.kept)} kept, {len(res.invalid)} invalid "
        f"recomputed; plot with: rtsched plot {out} -o {out / (spec.name + '.png')}"
    )
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from .plot import plot_results

    res = plot_results(args.results, args.output)
    for note in res["notes"]:
        print(f"rtsched plot: {note}", file=sys.stderr)
    print(f"wrote {res['figure']} and {res['csv']} ({res['points']} of {res['total']} points)")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from .registry import ALIASES, available, description, engines, module, reproduce, variants_of

    if args.list or not args.name:
        names = available()
        width = max((len(n) for n in names), default=0)
        for name, path in names.items():
            vs, default = variants_of(path)
            var = " [variants: " + ", ".join(f"{v} (default)" if v == default else v for v in vs) + "]"
            mod = module(name) if name in names and name not in ALIASES and description(name) else None
            eng = list(engines(mod)) if mod is not None else []
            axis = " [engines: " + ", ".join([f"{eng[0]} (default)", *eng[1:]]) + "]" if eng else ""
            print(
                f"{name:<{width}}  {description(name) or f'(a spec without a module: {path})'}{var if vs else ''}{axis}"
            )
        if not args.list:
            print("rtsched reproduce: give a NAME (listed above)", file=sys.stderr)
            return 2
        return 0
    override = None
    if args.overheads is not None:
        from .registry import REPRODUCTIONS, module

        if args.name not in REPRODUCTIONS or not getattr(module(args.name), "OVERHEADS", False):
            takes = [n for n in REPRODUCTIONS if getattr(module(n), "OVERHEADS", False)]
            print(f"rtsched reproduce: --overheads applies to {', '.join(takes)}", file=sys.stderr)
            return 2
        from ..shipped import resolve_overheads

        override = {"overheads": resolve_overheads(args.overheads)}
    if args.form is not None:
        from .registry import REPRODUCTIONS, module

        if args.name not in REPRODUCTIONS or not hasattr(module(args.name), "FORMS"):
            takes = [n for n in REPRODUCTIONS if hasattr(module(n), "FORMS")]
            print(f"rtsched reproduce: --form applies to {', '.join(takes)}", file=sys.stderr)
            return 2
        override = {**(override or {}), "form": args.form}
    executor = _make_executor(args)
    try:
        res = reproduce(
            args.name,
            quick=args.quick,
            resume=args.resume,
            out=args.out,
            executor=executor,
            progress=not args.quiet,
            fmt=args.format,
            variant=args.variant,
            override=override,
            engine=args.engine,
        )
    finally:
        executor.close()
    for note in res["notes"]:
        print(f"rtsched reproduce: {note}", file=sys.stderr)
    if "text" in res:  # a simulation reproduction: its tables
        print(res["text"])
        print(f"wrote {res['tables']}, {res['figure']} and {res['csv']}")
        return 0
    for line in res.get("crossings_text", []):
        print(line)
    extra = f" and {res['table']}" if res.get("table") else ""
    print(f"wrote {res['figure']}, {res['csv']}{extra}")
    return 0


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    """Add ``sweep``, ``plot`` and ``reproduce`` to the main CLI's subparsers."""
    p = subparsers.add_parser(
        "sweep",
        help="run a parameter sweep from a TOML spec",
        description="Expand the grid of SPEC (docs/experiments.md) into points, evaluate each point with the Rust "
        "core on local processes or a Dask cluster, and write one Parquet file per point under OUT/points/.",
    )
    p.add_argument("spec", help="the sweep spec (TOML)")
    p.add_argument("--out", help="results directory (default results/NAME, NAME from the spec)")
    p.add_argument(
        "--resume", action="store_true", help="keep valid finished points; recompute missing, partial or corrupt ones"
    )
    p.add_argument("--quick", action="store_true", help="apply the spec's [quick] table (fewer samples, coarser grid)")
    p.add_argument(
        "--variant", help="apply the spec's [variants.NAME] table (default: its default_variant, if it has variants)"
    )
    _executor_args(p)
    p.set_defaults(func=lambda a: _guard("sweep", cmd_sweep, a))

    p = subparsers.add_parser(
        "plot",
        help="plot the results of a sweep",
        description="Aggregate the points of RESULTS (fraction schedulable, or mean switch-rate bound, per panel, "
        "curve and x, as the spec's [plot] table says) and draw the figure; also writes a per-point CSV summary "
        "beside it (same name, .csv).",
    )
    p.add_argument("results", help="a results directory written by rtsched sweep")
    p.add_argument("-o", "--output", required=True, help="the figure: .png, .pdf or .svg")
    p.set_defaults(func=lambda a: _guard("plot", cmd_plot, a))

    p = subparsers.add_parser(
        "reproduce",
        help="reproduce a paper's figure by name",
        description="Run the named reproduction (its spec, experiments/NAME.toml) into OUT and draw its figure to "
        "OUT/NAME.png (with a CSV beside it). --list shows the names with a line on each. --resume keeps the "
        "points OUT already holds, as in rtsched sweep.",
    )
    p.add_argument("name", nargs="?", help="a reproduction, e.g. spres-fig3 (see --list)")
    p.add_argument("--list", action="store_true", help="list the reproductions, one line each")
    p.add_argument("--quick", action="store_true", help="the quick form (the spec's [quick] table)")
    p.add_argument(
        "--variant",
        help="which reading to reproduce where the paper's text and its published code differ: the spres "
        "reproductions offer artifact (the published code, default: the figures were made with it) and text "
        "(docs/reproductions.md)",
    )
    p.add_argument(
        "--engine",
        choices=["simulator", "threads"],
        help="where a reproduction runs both in the simulator and on real threads (rtws-tables, spres-table1): "
        "which (default: the spec's engine, simulator); rtws-runtime and spres-runtime, their former names on "
        'threads, still run (docs/reproductions.md, "Engines")',
    )
    p.add_argument(
        "--resume", action="store_true", help="keep valid finished points; recompute missing, partial or corrupt ones"
    )
    p.add_argument(
        "--out",
        help="results directory (default results/NAME[-VARIANT][-quick], e.g. results/spres-fig3-artifact; on "
        "an engine other than the spec's default, NAME is that engine's, e.g. results/rtws-runtime)",
    )
    p.add_argument("--format", default="png", choices=["png", "pdf", "svg"], help="figure format (default png)")
    p.add_argument(
        "--overheads",
        metavar="DIR|NAME",
        help="overhead models (a folder of overheads-*.json, or the name of a shipped set) for rtss09-hrt, "
        "rtss09-srt, gedfmp-soft-n, gedfmp-hard-u (default: the shipped set vm-2cpu-protocol, measured under the "
        "measurement protocol, with the earlier shipped models as the fallback for a mechanism it lacks; the "
        "output names the set that ran)",
    )
    p.add_argument(
        "--form",
        choices=["a", "b", "both"],
        help="sd-push-cost: a (the structures alone, replayed single-threaded for every m), b (real threads "
        "contending on this machine's CPUs, for the m that fit them) or both (default: the spec's form, both; "
        "docs/reproductions.md)",
    )
    _executor_args(p)
    p.set_defaults(func=lambda a: _guard("reproduce", cmd_reproduce, a))


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (``python -m rtsched.experiments.cli``) until the main CLI hooks these in."""
    parser = argparse.ArgumentParser(prog="rtsched")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    add_commands(sub)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
