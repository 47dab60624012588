"""Push/pull (each find-CPU variant, and push-pull-fp over cpupri) against the other global
mechanisms on the same task sets, in one run, side by side (docs/performance.md "push/pull side by side"):
release latency, Δrel, Δsch, push and pull counts and costs, push failures, migrations and the
priority-inversion time the monitor measures, for n = m, 5m, 10m tasks (or --ns) released
synchronously (every task's first job at time zero, as in Cerqueira et al., RTAS 2014, App. A).

    flock /work/wt/measure.lock python benchmarks/push_pull_compare.py --cpus 0,1 \\
        --duration 3s --rt-priority 50 [--ns 2,10,20] [--util 0.7] [--out DIR]

Which mechanisms: every registered one of gsn-edf, gedf-mp (when registered), push-pull with
find_cpu = linear, fmask, cpudl, and push-pull-fp (override with --schedulers, NAME or
NAME:find_cpu=VALUE). Works for any m (it was run on 2 cores only here).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import rtsched
from rtsched.run import parse_cpus

DEFAULT = "gsn-edf,gedf-mp,push-pull:find_cpu=linear,push-pull:find_cpu=fmask,push-pull:find_cpu=cpudl,push-pull-fp"


def spec(s: str) -> tuple[str, dict]:
    name, _, rest = s.partition(":")
    params = dict(kv.split("=", 1) for kv in rest.split(";") if kv) if rest else {}
    return name, params


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpus", default="0-1")
    ap.add_argument("--duration", default="3s")
    ap.add_argument("--rt-priority", type=int, default=None)
    ap.add_argument("--ns", default=None, help="task counts (default: m, 5m, 10m)")
    ap.add_argument("--util", type=float, default=0.7, help="U/m of every set (default 0.7)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="push-pull-compare")
    ap.add_argument("--schedulers", default=DEFAULT)
    a = ap.parse_args()
    cpus = parse_cpus(a.cpus)
    m = len(cpus)
    ns = [int(x) for x in a.ns.split(",")] if a.ns else [m, 5 * m, 10 * m]
    registry = {e["name"]: e for e in rtsched.schedulers()}
    mechs = [spec(s) for s in a.schedulers.split(",") if s]
    for name, _ in mechs:
        if name not in registry:
            print(f"note: {name} is not registered here; left out", file=sys.stderr)
    mechs = [(n, p) for n, p in mechs if n in registry]
    os.makedirs(a.out, exist_ok=True)
    header = (
        "n",
        "mechanism",
        "rel.lat avg/p99 µs",
        "Δrel avg/p99 µs",
        "Δsch avg/p99 µs",
        "push n/avg µs",
        "pull n/avg µs",
        "push fail",
        "migr",
        "PI µs (intervals)",
        "misses",
    )
    rows = []
    for i, n in enumerate(ns):
        ts = rtsched.generate(n, a.util * m, periods="loguniform:10ms-100ms", seed=a.seed * 1000 + i, m=m)
        rtsched.save(os.path.join(a.out, f"taskset-n{n}.json"), ts)
        for name, params in mechs:
            kw = {}
            use = cpus
            if registry[name]["dedicated_cpu"] == "required":
                use, kw["dedicated_cpu"] = cpus[:-1], cpus[-1]
            label = name + "".join(f" {k}={v}" for k, v in params.items())
            try:
                s = rtsched.run(
                    ts, scheduler=name, cpus=use, duration=a.duration, rt_priority=a.rt_priority, params=params, **kw
                )
            except rtsched.RtschedError as e:
                print(f"n={n} {label}: error: {e}", file=sys.stderr)
                continue
            tag = label.replace(" ", "_").replace("=", "-")
            with open(os.path.join(a.out, f"{tag}-n{n}.json"), "w") as f:
                json.dump(s, f, indent=1)
            ov = s.get("overheads", {})

            def pair(term: str, ov=ov) -> str:
                o = ov.get(term) or {}
                return f"{o.get('avg_ns', 0) / 1e3:.1f}/{o.get('p99_ns', 0) / 1e3:.1f}"

            def cnt(term: str, ov=ov) -> str:
                o = ov.get(term) or {}
                return f"{o.get('count', 0)}/{o.get('avg_ns', 0) / 1e3:.2f}" if o.get("count") else "–"

            rl = s["release_latency_ns"]
            pi = s.get("priority_inversion") or {}
            pi_s = f"{pi.get('total_ns', 0) / 1e3:.0f} ({pi.get('intervals', 0)})" if pi else "n/a"
            fails = (ov.get("push_failure") or {}).get("count", 0) if "push_failure" in ov else "–"
            rows.append(
                (
                    n,
                    label,
                    f"{rl['avg'] / 1e3:.1f}/{rl['p99'] / 1e3:.1f}",
                    pair("release"),
                    pair("schedule"),
                    cnt("push"),
                    cnt("pull"),
                    fails,
                    s["migrations"],
                    pi_s,
                    s["deadline_misses"],
                )
            )
    widths = [max(len(str(r[k])) for r in [header, *rows]) for k in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(str(x).ljust(w) for x, w in zip(r, widths, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
