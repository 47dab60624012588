"""Engine overhead benchmark: ``python -m rtsched.experiments.bench [NAME] [--jobs N] [--out DIR]``.

Runs the named spec (default spres-fig3, full size) with the *fake* evaluator of testing.py, so the
numbers measure the engine (expansion, executors, Parquet writes, resume checks, aggregation and
drawing), not the schedulability analysis. Prints seconds for each phase; asserts nothing.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from .plot import plot_results
from .registry import lookup
from .spec import load_spec
from .sweep import run_sweep
from .testing import fake_evaluate


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m rtsched.experiments.bench")
    ap.add_argument("name", nargs="?", default="spres-fig3")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", help="results dir (default: a temporary dir, removed afterwards)")
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="rtsched-bench-"))
    try:
        t = time.perf_counter()
        spec = load_spec(lookup(args.name), quick=args.quick)
        t_spec = time.perf_counter() - t
        t = time.perf_counter()
        run_sweep(spec, out, evaluator=fake_evaluate, jobs=args.jobs, progress=False)
        t_sweep = time.perf_counter() - t
        t = time.perf_counter()
        res = run_sweep(spec, out, resume=True, evaluator=fake_evaluate, jobs=args.jobs, progress=False)
        t_resume = time.perf_counter() - t
        t = time.perf_counter()
        plot_results(out, out / f"{spec.name}.png")
        t_plot = time.perf_counter() - t
        rows = sum(p.count * len(p.params["methods"]) for p in spec.points)
        print(f"{spec.name}: {len(spec.points)} points, {spec.total_sets:,} task sets, {rows:,} rows")
        print(f"  parse + expand  {t_spec:7.2f} s")
        print(f"  sweep (fake)    {t_sweep:7.2f} s   ({spec.total_sets / t_sweep:,.0f} task sets/s, fake evaluator)")
        print(f"  resume check    {t_resume:7.2f} s   ({len(res.kept)} points kept)")
        print(f"  plot + CSV      {t_plot:7.2f} s   ({rows / t_plot:,.0f} rows/s)")
    finally:
        if not args.out:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
