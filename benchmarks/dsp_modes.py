"""G-EDF-MP's scheduling processor (DSP) in its three waiting modes, dsp=spin (never sleeps),
dsp=window (sleeps until spin_window before each release, then spins) and dsp=sleep (a timer and
its request word), dsp=spin also with spinning clients (--idle spin: an idle client spins on its
request word, so nothing in the run sleeps), beside GSN-EDF-DI, on ONE task set in ONE
invocation, with cyclictest's timer wake-up latency measured first on the DSP's CPU
(docs/mechanisms/gedf-mp.md "Waiting"; Cerqueira, Vanga & Brandenburg, RTAS 2014, §IV-A for
Δreq).

    flock /work/wt/measure.lock python benchmarks/dsp_modes.py --cpus 1,0 --duration 10s \\
        --rt-priority 50 --isolate [--util 0.6] [--n 6] [--out DIR]

The last CPU of --cpus is the dedicated CPU (the DSP, or GSN-EDF-DI's release CPU); the others
run the tasks. The set is generated for the remaining CPUs at U = util·m (periods log-uniform in
[10, 100] ms). Reports per mechanism: Δreq (client request latency) median / p99, release
latency median / p99, Δev (the release handler's start after the due time) median, misses; and
cyclictest's wake-up latency median / p99 / max on the dedicated CPU (cyclictest from Debian's
rt-tests; left out with a note when it is not installed), and whether the release latency median
with nothing sleeping is below cyclictest's median (issue 23's target). dsp=spin and spinning
clients as root need RT throttling lifted (--isolate: the runtime's own lift-and-restore);
without it the run warns with the kernel's numbers, and the always-spinning threads are stopped
by the kernel for the throttled part of each second.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

import rtsched
from rtsched.runtime import parse_cpus

#: (label, mechanism, its parameters, idle mode of the workers), in the order printed.
RUNS = (
    ("gedf-mp dsp=spin idle=spin", "gedf-mp", {"dsp": "spin"}, "spin"),
    ("gedf-mp dsp=spin idle=sleep", "gedf-mp", {"dsp": "spin"}, "sleep"),
    ("gedf-mp dsp=window", "gedf-mp", {"dsp": "window"}, "sleep"),
    ("gedf-mp dsp=sleep", "gedf-mp", {"dsp": "sleep"}, "sleep"),
    ("gsn-edf-di", "gsn-edf-di", {}, "sleep"),
)
#: cyclictest histogram buckets (µs); slower wake-ups count as overflows.
HIST_US = 20000


def cyclictest(cpu: int, prio: int | None, loops: int) -> dict | str:
    """Wake-up latency on `cpu` (µs): {"p50", "p99", "max", "count"} (a percentile in the
    histogram's overflow reads ">20000"), or why there is none."""
    exe = shutil.which("cyclictest")
    if exe is None:
        return "cyclictest is not installed (apt-get install rt-tests)"
    cmd = [exe, "-m", "-q", "-t1", "-a", str(cpu), "-i", "1000", "-l", str(loops), "-h", str(HIST_US)]
    if prio is not None:
        cmd += ["-p", str(prio)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=loops / 1000 + 30, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"cyclictest failed: {e}"
    hist: list[tuple[int, int]] = []
    over, top = 0, None
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            hist.append((int(parts[0]), int(parts[1])))
        elif line.startswith("# Histogram Overflows:"):
            over = int(line.split(":")[1].split()[0])
        elif line.startswith("# Max Latencies:"):
            top = int(line.split(":")[1].split()[0])
    total = sum(c for _, c in hist) + over
    if out.returncode != 0 or total == 0:
        return f"cyclictest gave no samples (exit {out.returncode}: {out.stderr.strip()[:200]})"

    def pct(q: float) -> str:
        need, seen = q * total, 0
        for us, c in hist:
            seen += c
            if seen >= need:
                return str(us)
        return f">{HIST_US}"  # in the overflow

    return {"p50": pct(0.5), "p99": pct(0.99), "max": top, "count": total}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpus", default="1,0", help="task CPUs, then the dedicated CPU last (default 1,0)")
    ap.add_argument("--duration", default="10s")
    ap.add_argument("--rt-priority", type=int, default=None, help="SCHED_FIFO priority (default: normal priority)")
    ap.add_argument("--isolate", action="store_true", help="lift RT throttling etc. for each run (root)")
    ap.add_argument("--util", type=float, default=0.6, help="U/m of the set (default 0.6)")
    ap.add_argument("--n", type=int, default=None, help="tasks (default 6 per task CPU)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cyclictest-loops", type=int, default=15000, help="cyclictest wake-ups at 1 ms (0: skip)")
    ap.add_argument("--out", default="dsp-modes")
    a = ap.parse_args()
    cpus = parse_cpus(a.cpus)
    if len(cpus) < 2:
        print("dsp_modes: --cpus needs at least two CPUs (tasks, then the dedicated CPU)", file=sys.stderr)
        return 2
    if a.util <= 0 or a.util > 1:
        print(f"dsp_modes: --util {a.util} must be in (0, 1]", file=sys.stderr)
        return 2
    work, dedicated = cpus[:-1], cpus[-1]
    m = len(work)
    n = a.n or 6 * m
    os.makedirs(a.out, exist_ok=True)
    ct = cyclictest(dedicated, a.rt_priority, a.cyclictest_loops) if a.cyclictest_loops > 0 else "skipped"
    ts = rtsched.generate(n, a.util * m, periods="loguniform:10ms-100ms", seed=a.seed, m=m)
    rtsched.save(os.path.join(a.out, "taskset.json"), ts)
    header = ("mechanism", "Δreq p50/p99 µs", "rel.lat p50/p99 µs", "Δev p50 µs", "misses", "jobs")
    rows: list[tuple] = []
    results = {"cyclictest_us": ct, "cpus": work, "dedicated_cpu": dedicated, "runs": {}}
    for label, name, params, idle in RUNS:
        try:
            s = rtsched.run(
                ts,
                scheduler=name,
                cpus=work,
                dedicated_cpu=dedicated,
                duration=a.duration,
                rt_priority=a.rt_priority,
                params=params,
                idle=idle,
                isolate=a.isolate,
                quiet=True,
            )
        except rtsched.RtschedError as e:
            print(f"{label}: error: {e}", file=sys.stderr)
            continue
        results["runs"][label] = s
        ov = s.get("overheads", {})

        def med_p99(term: str, ov=ov) -> str:
            o = ov.get(term) or {}
            return f"{o['p50_ns'] / 1e3:.2f}/{o['p99_ns'] / 1e3:.2f}" if o.get("count") else "–"

        ev = ov.get("release_event") or {}
        rl = s["release_latency_ns"]
        rows.append(
            (
                label,
                med_p99("request"),
                f"{rl['p50'] / 1e3:.2f}/{rl['p99'] / 1e3:.2f}",
                f"{ev['p50_ns'] / 1e3:.2f}" if ev.get("count") else "–",
                s["deadline_misses"],
                s["jobs"],
            )
        )
        for w in s.get("warnings", []):
            print(f"{label}: warning: {w}", file=sys.stderr)
    with open(os.path.join(a.out, "dsp_modes.json"), "w") as f:
        json.dump(results, f, indent=1)
    widths = [max(len(str(r[k])) for r in [header, *rows]) for k in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(str(x).ljust(w) for x, w in zip(r, widths, strict=True)))
    if isinstance(ct, dict):
        print(
            f"cyclictest on CPU {dedicated} (1 ms, {ct['count']} wake-ups): "
            f"p50 {ct['p50']} µs, p99 {ct['p99']} µs, max {ct['max']} µs"
        )
    else:
        print(f"cyclictest: {ct}")
    spun = results["runs"].get(RUNS[0][0])
    if isinstance(ct, dict) and spun is not None and ct["p50"].isdigit():
        p50 = spun["release_latency_ns"]["p50"] / 1e3
        below = "below" if p50 < int(ct["p50"]) else "NOT below"
        print(f"{RUNS[0][0]}: release latency p50 {p50:.2f} µs, {below} cyclictest's p50 {ct['p50']} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
