"""The runtime's acceptance run (docs/performance.md): one task set at U ≈ 0.6m and one at U ≈ 0.9m,
each under every registered mechanism (or those given with --schedulers) on the same machine,
side by side; the list comes from the mechanism registry (rtsched.schedulers()).

    python benchmarks/runtime_acceptance.py --cpus 0-15 --duration 5s --rt-priority 50 [--out DIR]

Prints release latency, response times and the overhead terms per mechanism and writes every
summary as JSON. A mechanism that needs a dedicated CPU (gsn-edf-di) uses the last CPU of --cpus
for it (so it schedules on one fewer). kernel-sd needs every online CPU (SCHED_DEADLINE's global
admission).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import rtsched
from rtsched.runtime import parse_cpus


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpus", default="0-1")
    ap.add_argument("--duration", default="5s")
    ap.add_argument("--rt-priority", type=int, default=None)
    ap.add_argument("--n-per-cpu", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="runtime-acceptance")
    ap.add_argument(
        "--schedulers",
        default=",".join(e["name"] for e in rtsched.schedulers()),
        help="comma-separated registered mechanisms (default: every one in the registry); NAME@KEY=VALUE[@...] "
        "runs NAME with those parameters (e.g. gedf-mp@dsp=sleep)",
    )
    ap.add_argument(
        "--high",
        type=float,
        default=0.9,
        help="U/m of the heavier set (default 0.9; on Linux ≥ 6.12 kernel-sd admits at most "
        "about 0.85m, since the fair server keeps 0.05 per CPU: docs/mechanisms/kernel-sd.md)",
    )
    ap.add_argument(
        "--set-m",
        type=int,
        default=None,
        help="generate the sets for this many processors (default: the number of --cpus); e.g. 1 on 2 CPUs, so "
        "that mechanisms with a dedicated CPU (one scheduling CPU left) get a feasible set too",
    )
    a = ap.parse_args()
    cpus = parse_cpus(a.cpus)
    m = a.set_m or len(cpus)
    os.makedirs(a.out, exist_ok=True)
    rows = []
    terms = []
    for frac in (0.6, a.high):
        ts = rtsched.generate(a.n_per_cpu * m, frac * m, periods="loguniform:10ms-100ms", seed=a.seed, m=m)
        rtsched.save(os.path.join(a.out, f"taskset-{frac}.json"), ts)
        verdict = rtsched.analyze(ts, m=m, tests=["gfb", "gedf"])["results"]
        umax = max(t.utilization for t in ts)
        # GFB's margin: m − (m − 1)·u_max − U (positive = passes with that much to spare).
        print(
            f"U={frac}m: n={len(ts)} U={ts.utilization:.3f}; G-EDF HRT test (combined): "
            f"{verdict['gedf']['schedulable']}; GFB margin {m - (m - 1) * umax - ts.utilization:.3f}",
            file=sys.stderr,
            flush=True,
        )
        registry = {e["name"]: e for e in rtsched.schedulers()}
        for label in a.schedulers.split(","):
            sched, *given = label.split("@")
            params = dict(g.split("=", 1) for g in given if "=" in g)
            if sched not in registry:
                print(f"unknown scheduler {sched!r}; known: {', '.join(registry)}", file=sys.stderr)
                return 2
            kw = {}
            use = cpus
            if registry[sched]["dedicated_cpu"] == "required":
                use, kw["dedicated_cpu"] = cpus[:-1], cpus[-1]
                kw["force"] = True  # the same set on m - 1 clients, by design: rtsched run would refuse it
            try:
                s = rtsched.run(
                    ts, scheduler=sched, cpus=use, duration=a.duration, rt_priority=a.rt_priority, params=params, **kw
                )
            except rtsched.RtschedError as e:
                print(f"U={frac}m {label}: error: {e}", file=sys.stderr)
                continue
            terms.append((frac, label, s.get("overheads", {})))
            with open(os.path.join(a.out, f"{label.replace('@', '_')}-{frac}.json"), "w") as f:
                json.dump(s, f, indent=1)
            rl, rt, ov = s["release_latency_ns"], s["response_time_ns"], s.get("overheads", {})
            sch = ov.get("schedule", {})
            rows.append(
                (
                    frac,
                    label,
                    s["m"],
                    s["jobs"],
                    s["deadline_misses"],
                    rl.get("p50"),
                    rl.get("p99"),
                    rl.get("max"),
                    rt.get("p99"),
                    sch.get("p50_ns"),
                    sch.get("p99_ns"),
                    ov.get("release", {}).get("p99_ns"),
                    ov.get("ipi", {}).get("p99_ns"),
                    s.get("priority_inversion_ns"),
                    (s.get("priority_inversion") or {}).get("tracking_bound_ns"),
                    (s.get("priority_inversion") or {}).get("beyond_tracking_ns"),
                )
            )
            print(f"U={frac}m {label}: done", file=sys.stderr, flush=True)
    hdr = (
        "U/m",
        "scheduler",
        "m",
        "jobs",
        "misses",
        "rel.lat p50",
        "p99",
        "max",
        "resp p99",
        "Δsch p50",
        "Δsch p99",
        "Δrel p99",
        "Δipi p99",
        "PI ns",
        "tracking bound",
        "PI beyond bound",
    )
    print(" | ".join(hdr))
    for r in rows:
        print(" | ".join("-" if x is None else str(x) for x in r))
    # Every traced term, median and p99 (ns), per run.
    names = sorted({t for _, _, ov in terms for t, v in ov.items() if v.get("count")})
    print()
    print(" | ".join(["U/m", "scheduler"] + [f"{t} p50 / p99" for t in names]))
    for frac, label, ov in terms:
        cells = [f"{ov[t]['p50_ns']} / {ov[t]['p99_ns']}" if ov.get(t, {}).get("count") else "-" for t in names]
        print(" | ".join([str(frac), label] + cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
