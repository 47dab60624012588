"""The user-facing analysis paths against SchedCAT's C++ core (issue 14): µs per task set and ratio.

Workload (the benches' one, crates/analysis/benches/global.rs): 1,000 task sets, m = 8, n = 40,
implicit deadlines, periods uniform in [10, 100] ms (integer ns), total utilization uniform in
[0.5 m, 0.7 m] split by UUniFast-Discard. Three paths per test:

* ``api``: ``rtsched.analyze_many(sets, tests=[t])`` (report dicts), wall time / sets;
* ``table``: ``rtsched.analyze_table(columns, m=8, tests=[t])`` (the array form);
* ``cli``: ``rtsched analyze FILE.jsonl --json --test t`` as a subprocess, parse and output
  included, wall time / sets; ``cli marginal`` subtracts the time of the same command on an
  empty file (interpreter start and imports, paid once per command).

Each time is the best of ``--repeat`` runs. Targets: the API at least 20x faster per set than
SchedCAT on every G-EDF test and at least 100x on rta, bar and gedf (the combined test); the
CLI no slower per set than SchedCAT running the test alone. No assertion: it prints.

    python benchmarks/front_analysis.py [--sets 1000] [--repeat 3] [--tests gfb,bak,...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import rtsched

SCHEDCAT_US = {  # µs per task set at m = 8, n = 40 (from the task brief)
    "gfb": 24.0,
    "bak": 82.0,
    "bcl": 37.0,
    "bcl_iterative": 186.0,
    "rta": 8_700.0,
    "bar": 2_150.0,
    "gedf": 5_800.0,
}
TARGET = {"rta": 100, "bar": 100, "gedf": 100}


def workload(count: int, m: int = 8, n: int = 40, seed: int = 1000):
    rng = np.random.default_rng(seed)
    utils = rng.uniform(0.5 * m, 0.7 * m, size=count)
    return [
        rtsched.generate(n, float(u), generator="uunifast-discard", periods="uniform:10ms-100ms", seed=seed + i, m=m)
        for i, u in enumerate(utils)
    ]


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tests", default=",".join(SCHEDCAT_US))
    args = ap.parse_args()
    tests = args.tests.split(",")
    sets = workload(args.sets)
    k = len(sets)
    cols = {
        "set": np.repeat(np.arange(k), [len(ts) for ts in sets]),
        "wcet": np.array([t.wcet for ts in sets for t in ts], dtype=np.uint64),
        "period": np.array([t.period for ts in sets for t in ts], dtype=np.uint64),
    }
    print(f"command: python {' '.join(sys.argv)}")
    print(
        f"machine: {os.cpu_count()} CPUs, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
        f"(rayon uses every CPU; the machine may be shared)"
    )
    print(f"workload: {k} sets, m = 8, n = 40, U uniform in [4, 5.6], UUniFast-Discard, periods U[10, 100] ms\n")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sets.jsonl")
        empty = os.path.join(d, "empty.jsonl")
        rtsched.save(path, sets)
        open(empty, "w").close()
        cmd = [sys.executable, "-m", "rtsched", "analyze"]

        def cli(f, t):
            subprocess.run([*cmd, f, "--json", "--test", t, "--quiet"], check=True, stdout=subprocess.DEVNULL)

        startup = best(lambda: cli(empty, "gfb"), args.repeat)
        head = (
            f"{'test':<14} {'SchedCAT':>9} {'api us':>8} {'ratio':>7} {'table us':>9} {'ratio':>7}"
            f" {'cli us':>8} {'ratio':>7} {'cli marg':>9} {'ratio':>7}  api target"
        )
        print(head)
        print("-" * len(head))
        for t in tests:
            ref = SCHEDCAT_US.get(t, float("nan"))
            api = best(lambda t=t: rtsched.analyze_many(sets, tests=[t]), args.repeat) / k * 1e6
            tab = best(lambda t=t: rtsched.analyze_table(cols, m=8, tests=[t]), args.repeat) / k * 1e6
            total = best(lambda t=t: cli(path, t), args.repeat)
            c = total / k * 1e6
            marg = max(total - startup, 0.0) / k * 1e6
            target = TARGET.get(t, 20)
            flag = "met" if ref / api >= target else "NOT met"
            print(
                f"{t:<14} {ref:>9,.0f} {api:>8.2f} {ref / api:>6.0f}x {tab:>9.2f} {ref / tab:>6.0f}x"
                f" {c:>8.1f} {ref / c:>6.1f}x {marg:>9.2f} {ref / max(marg, 1e-9):>6.0f}x  {target}x {flag}"
            )
        print(f"\ncli startup (empty file): {startup * 1e3:.0f} ms, paid once per command")


if __name__ == "__main__":
    main()
