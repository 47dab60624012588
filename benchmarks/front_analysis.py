"""The user-facing analysis paths against SchedCAT's C++ core (issue 14): µs per task set and ratio.

Workload (the benches' one, crates/analysis/benches/global.rs): 1,000 task sets, m = 8, n = 40,
implicit deadlines, periods uniform in [10, 100] ms (integer ns), total utilization uniform in
[0.5 m, 0.7 m] split by UUniFast-Discard. Three paths per test:

* ``api``: ``rtsched.analyze_many(sets, tests=[t])`` (report dicts), wall time / sets;
* ``table``: ``rtsched.analyze_table(columns, m=8, tests=[t])`` (the array form);
* ``cli``: ``rtsched analyze FILE.jsonl --json --test t`` as a subprocess, parse and output
  included, wall time / sets; ``cli marginal`` subtracts the time of the same command on an
  empty file (interpreter start and imports, paid once per command).

Each path is timed twice: wall-clock time and CPU time (all threads of the process, or of the
CLI child process), each the best of ``--repeat`` runs, divided by the number of sets. CPU
time per set is the per-core cost, comparable with SchedCAT's single-threaded figures and far
less disturbed by other work on a shared machine; wall time is what a user waits (it shrinks
with more cores: the batch paths run in parallel). Ratios are SchedCAT's µs per set divided by
ours. Targets: the API at least 20x faster per set than SchedCAT on every G-EDF test and at
least 100x on rta, bar and gedf (the combined test); the CLI no slower per set than SchedCAT
running the test alone. No assertion: it prints.

Tests without a stored SchedCAT figure (the global fixed-priority tests ``gfp_*`` and Liu &
Anderson's ``la``, issue 26) print ``n/a`` for the reference and the ratio, unless SchedCAT is
run as a peer on the same sets: ``--peer-schedcat DIR`` (docs/performance.md, "SchedCAT peer":
how to obtain and build it; SchedCAT's code is not part of rtsched) writes the sets in the
peer's format (``m C D T S ...`` per line), runs ``DIR/la_peer`` (SchedCAT's ``LAGedf`` behind
our driver benchmarks/peer/schedcat_la_driver.cpp) for ``la`` and SchedCAT's ``bertogna.py`` /
``guan.py`` under Python 3 (benchmarks/peer/schedcat_fp_runner.py) for ``gfp_bc``,
``gfp_bc_slack``, ``gfp_guan``, takes the peer's CPU time inside the tests per set as the
reference, and prints how many verdicts agree. ``--paths api`` times only ``analyze_many``.

    python benchmarks/front_analysis.py [--sets 1000] [--repeat 3] [--tests gfb,bak,...] [--paths api,table,cli]
                                        [--peer-schedcat DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
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
TARGET = {"rta": 100, "bar": 100, "gedf": 100, "la": 100}
#: Tests the SchedCAT peer runs (``--peer-schedcat``).
PEER_TESTS = ("la", "gfp_bc", "gfp_bc_slack", "gfp_guan")


def peer_lines(sets, m: int = 8) -> str:
    """The sets in the peer format: ``m C D T S ...`` per line (integer ns, S = suspension)."""
    return "".join(
        f"{m} " + " ".join(f"{t.wcet} {t.deadline} {t.period} {t.suspension}" for t in ts) + "\n" for ts in sets
    )


def run_peer(root: str, test: str, path: str) -> tuple[list[bool], float]:
    """(verdicts, CPU µs inside the tests in all) of SchedCAT on the sets in ``path``."""
    if test == "la":
        cmd = [os.path.join(root, "la_peer")]
        with open(path) as f:
            out = subprocess.run(cmd, stdin=f, check=True, capture_output=True, text=True).stdout
    else:
        runner = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peer", "schedcat_fp_runner.py")
        out = subprocess.run(
            [sys.executable, runner, root, test, path], check=True, capture_output=True, text=True
        ).stdout
    lines = out.split()
    total = float(lines[lines.index("cpu_us_total") + 1])
    return [x == "1" for x in lines[: lines.index("cpu_us_total")]], total


def workload(count: int, m: int = 8, n: int = 40, seed: int = 1000):
    rng = np.random.default_rng(seed)
    utils = rng.uniform(0.5 * m, 0.7 * m, size=count)
    return [
        rtsched.generate(n, float(u), generator="uunifast-discard", periods="uniform:10ms-100ms", seed=seed + i, m=m)
        for i, u in enumerate(utils)
    ]


def best(fn, repeat: int) -> tuple[float, float]:
    """(best wall seconds, best CPU seconds) of ``repeat`` calls; CPU time counts every thread
    of this process and of the child processes that ended during the call."""
    walls, cpus = [], []
    for _ in range(repeat):
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p0, t0 = time.process_time(), time.perf_counter()
        fn()
        t1, p1 = time.perf_counter(), time.process_time()
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        child = (c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime)
        walls.append(t1 - t0)
        cpus.append(p1 - p0 + child)
    return min(walls), min(cpus)


def ratio(ref: float, ours: float) -> str:
    if ref != ref or ours != ours:
        return "n/a"  # no stored SchedCAT figure, or the path was not timed
    if ours <= 0:
        return "n/a"  # below the noise of the startup time
    r = ref / ours
    return f"{r:.1f}x" if r < 10 else f"{r:.0f}x"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tests", default=",".join(SCHEDCAT_US))
    ap.add_argument("--paths", default="api,table,cli", help="which paths to time (api, table, cli)")
    ap.add_argument(
        "--peer-schedcat",
        metavar="DIR",
        help="run SchedCAT's la, bertogna and guan on the same sets from DIR (docs/performance.md, SchedCAT peer)",
    )
    args = ap.parse_args()
    tests = args.tests.split(",")
    paths = set(args.paths.split(","))
    nan = float("nan")
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
        peer_us: dict[str, float] = {}
        agree: dict[str, str] = {}
        if args.peer_schedcat:
            peer_path = os.path.join(d, "sets.peer")
            with open(peer_path, "w") as f:
                f.write(peer_lines(sets))
            for t in tests:
                if t not in PEER_TESTS:
                    continue
                verdicts, total = run_peer(args.peer_schedcat, t, peer_path)
                peer_us[t] = total / k
                ours = [r["results"][t]["schedulable"] for r in rtsched.analyze_many(sets, tests=[t])]
                same = sum(a == b for a, b in zip(verdicts, ours, strict=True))
                agree[t] = (
                    f"{same}/{k} verdicts agree (SchedCAT accepts {sum(verdicts)}, rtsched {sum(map(bool, ours))})"
                )
        cmd = [sys.executable, "-m", "rtsched", "analyze"]

        def cli(f, t):
            subprocess.run([*cmd, f, "--json", "--test", t, "--quiet"], check=True, stdout=subprocess.DEVNULL)

        startup_wall, startup_cpu = best(lambda: cli(empty, "gfb"), args.repeat) if "cli" in paths else (nan, nan)
        head = (
            f"{'test':<14} {'SchedCAT':>8} | {'api wall':>8} {'api cpu':>8} {'ratio':>6}"
            f" | {'table cpu':>9} {'ratio':>6}"
            f" | {'cli wall':>8} {'cli cpu':>8} {'ratio':>6} {'marg cpu':>8} {'ratio':>6} | api target (cpu)"
        )
        print("µs per task set (wall = elapsed, cpu = CPU time of all threads); ratio = SchedCAT / ours (cpu)")
        print(head)
        print("-" * len(head))
        for t in tests:
            ref = peer_us.get(t, SCHEDCAT_US.get(t, nan))
            aw, ac = (x / k * 1e6 for x in best(lambda t=t: rtsched.analyze_many(sets, tests=[t]), args.repeat))
            tc = cw = cc = nan
            if "table" in paths:
                table = best(lambda t=t: rtsched.analyze_table(cols, m=8, tests=[t]), args.repeat)
                _, tc = (x / k * 1e6 for x in table)
            if "cli" in paths:
                cw, cc = (x / k * 1e6 for x in best(lambda t=t: cli(path, t), args.repeat))
            marg = max(cc - startup_cpu / k * 1e6, 0.0) if "cli" in paths else nan
            target = TARGET.get(t, 20)
            flag = "no SchedCAT figure" if ref != ref else ("met" if ref / ac >= target else "NOT met")
            print(
                f"{t:<14} {ref:>8,.0f} | {aw:>8.2f} {ac:>8.2f} {ratio(ref, ac):>6} | {tc:>9.2f} {ratio(ref, tc):>6}"
                f" | {cw:>8.1f} {cc:>8.1f} {ratio(ref, cc):>6} {marg:>8.2f} {ratio(ref, marg):>6} | {target}x {flag}"
            )
        for t, line in agree.items():
            print(f"peer {t}: SchedCAT {peer_us[t]:,.1f} µs CPU per set (measured now, same sets); {line}")
        print(
            f"\ncli startup (empty file): {startup_wall * 1e3:.0f} ms wall, {startup_cpu * 1e3:.0f} ms CPU, paid once "
            "per command; 'marg cpu' is the CLI's CPU time per set without it"
        )


if __name__ == "__main__":
    main()
