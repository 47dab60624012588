"""Per-set analysis time of each DAG test through the user's paths (issue 27, "Measurements").

Workload: ``--sets`` DAG task sets of n = 10 tasks, each an Erdős–Rényi graph (Cordeiro et al.,
SIMUTools 2010) of 10–50 nodes with edge probability 0.1 and node WCETs uniform in 1–100 µs
(``rtsched.generate_dag``), task utilizations by RandFixedSum up to umax = 2, total utilization
``0.5 m`` on m = 8 cores, implicit deadlines. Two paths per test:

* ``api``: ``rtsched.analyze_many(sets, tests=[t])`` on the sets' DAG JSON texts (report dicts,
  sets read and analysed in parallel in Rust with the GIL released), wall time / sets;
* ``cli``: ``rtsched analyze FILE.jsonl --json --test t`` as a subprocess (read, parse, analyse
  and write in Rust, chunk by chunk), output parsed, wall time / sets; ``cli marginal``
  subtracts the same command on a file of one set (interpreter start and imports).

Each path is timed as wall-clock and CPU time (all threads of the process or of the child), the
best of ``--repeat`` runs, divided by the number of sets. The DAG tests are those of the core's
table (``rtsched.dag_tests_available``; docs/dag.md), so a test added there is timed with no change
here. No assertion: it prints a table.

    python benchmarks/dag_analysis.py [--sets 1000] [--repeat 3] [--tests dag_federated,...] [--paths api,cli]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

import rtsched

M = 8
N = 10


def workload(count: int, seed: int = 27) -> list[str]:
    return rtsched.generate_dag(
        "erdos-renyi", N, 0.5 * M, umax=2.0, nodes=(10, 50), p=0.1, wcet=(1_000, 100_000), seed=seed, count=count, m=M
    )


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_api(sets: list[str], test: str, repeat: int) -> tuple[float, float]:
    best_wall = best_cpu = float("inf")
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        out = rtsched.analyze_many(sets, tests=[test])
        t1, c1 = time.perf_counter(), time.process_time()
        assert len(out) == len(sets)
        best_wall, best_cpu = min(best_wall, t1 - t0), min(best_cpu, c1 - c0)
    return best_wall / len(sets), best_cpu / len(sets)


def time_cli(path: str, count: int, test: str, repeat: int) -> tuple[float, float]:
    best_wall = best_cpu = float("inf")
    cmd = [sys.executable, "-m", "rtsched", "analyze", path, "--json", "--quiet", "--test", test]
    for _ in range(repeat):
        c0, t0 = _children_cpu(), time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        t1, c1 = time.perf_counter(), _children_cpu()
        assert len(out.splitlines()) == count
        best_wall, best_cpu = min(best_wall, t1 - t0), min(best_cpu, c1 - c0)
    return best_wall / count, best_cpu / count


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tests", default=",".join(rtsched.dag_tests_available(several=True)))
    ap.add_argument("--paths", default="api,cli")
    args = ap.parse_args()
    tests = [t for t in args.tests.split(",") if t]
    paths = set(args.paths.split(","))
    print(f"generating {args.sets} DAG sets (m = {M}, n = {N}, 10-50 nodes per task) ...", file=sys.stderr)
    sets = workload(args.sets)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "sets.jsonl")
        one = os.path.join(d, "one.jsonl")
        with open(path, "w") as f:
            f.write("".join(s + "\n" for s in sets))
        with open(one, "w") as f:
            f.write(sets[0] + "\n")
        head = f"{'test':<24}"
        if "api" in paths:
            head += f"  {'API wall µs':>12}  {'API CPU µs':>11}"
        if "cli" in paths:
            head += f"  {'CLI wall µs':>12}  {'CLI CPU µs':>11}  {'CLI marginal wall µs':>21}"
        print(head)
        for t in tests:
            row = f"{t:<24}"
            if "api" in paths:
                w, c = time_api(sets, t, args.repeat)
                row += f"  {w * 1e6:>12.1f}  {c * 1e6:>11.1f}"
            if "cli" in paths:
                w, c = time_cli(path, len(sets), t, args.repeat)
                w1, _ = time_cli(one, 1, t, args.repeat)
                marginal = (w * len(sets) - w1) / max(1, len(sets) - 1)
                row += f"  {w * 1e6:>12.1f}  {c * 1e6:>11.1f}  {marginal * 1e6:>21.1f}"
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
