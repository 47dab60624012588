"""Brandenburg & Gül, RTSS 2016, Fig. 9 and §VII-B: the 99th-percentile scheduling and release
overheads of SP-RES against the optimal schedulers RUN (one global lock), QPS-G (one global
lock) and QPS-C (per-cluster locks), with P-EDF as the partitioned reference, measured on real
threads (``rtsched reproduce spres-fig9 [--quick]``; docs/reproductions.md).

The paper ran Compagnin et al.'s implementations (Compagnin, Mezzetti & Vardanega, ECRTS 2014),
which take integral-millisecond task parameters only (§VII-B, footnote 4), on 60
"high-utilization task sets using Compagnin et al.'s experimental setup", 30 s each. Ours (said
here because the paper does not give the generator): per point, ``samples`` sets of
``n = n_per_m · m`` implicit-deadline tasks, total utilization drawn uniformly in ``util_frac``
× m, RandFixedSum utilizations, periods from ``periods`` (default: the divisors of 200 ms from
10 ms up, so that RUN's and QPS's exact budgets keep a small common denominator), every WCET
then made a whole number of milliseconds (:func:`rtsched.runtime.integral_ms`: rounded down, at
least 1 ms, and cut by 1 ms at the largest until U ≤ m). Each set runs for ``horizon`` under
every scheduler of ``schedulers`` on the first m CPUs (or ``cpus``), at SCHED_FIFO
``rt_priority``:

* ``spres`` with the SP-RES cascade's placement (every reservation soft, as spres-table1's
  threads engine runs them); a set the cascade cannot place is not run (its rows say so);
* ``pedf`` on that placement with each split task truncated to its first part (§VII-A's rule);
* ``run``, ``qps-g``, ``qps-c`` on the set as it is, their servers' budgets inflated by the
  measured overheads (``inflate``, default ``"pilot"``): a task leaf's budget is exactly its
  WCET per period, RUN and QPS are not work-conserving towards a job that overran it, so with
  WCET budgets nearly every job misses for the mechanism's own overheads
  (docs/mechanisms/run.md). ``"pilot"``: a pilot run of the set under the scheduler
  (``pilot``, default 1 s, at most the horizon) measures the overheads, whose maxima inflate the
  budgets (``rtsched run --inflate``; the job bodies still run their WCETs); ``"pilot-p99"``:
  the same pilot, its p99 of each time term instead of its maximum — a soft inflation for an
  overhead comparison, not a hard one (where the pilot's maxima hold host stalls, at normal
  priority on a shared host, they refuse every set); ``"none"``: WCET budgets; else an overhead
  model (a file, a shipped model or set). A set whose inflated utilization exceeds m is not run
  under that scheduler (its rows say so).

Every run lifts RT throttling and the fair server on its CPUs for its duration (``isolate``,
as ``rtsched run --isolate``; the sets' U in [0.9m, m] is above SCHED_FIFO's 95% share per CPU)
when this process is root; otherwise the report says the limits stayed.

A scheduler this build does not register (``qps-g``/``qps-c`` before the QPS policy is in) is
reported as missing in every table, never dropped. Samples are kept per run as at most
``max_samples`` evenly spaced order statistics (spres-table1's ``thin``), and the p99 of a
scheduler is the weighted quantile of all its runs' kept statistics (each standing for
count / kept samples of its run). The paper's cycle counts (§VII-B) are converted to µs at the
paper's clock (2.2 GHz, Xeon E5-2699 v4, §VII) and at this machine's (``/proc/cpuinfo``), and
ours to cycles at this machine's clock.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import pyarrow as pa

from ...runtime import INFLATABLE_SCHEDULERS, INTEGRAL_MS_PERIODS, realtime_lock
from .. import quickmark
from ..errors import SpecError
from ..fields import parse_duration_ns, spec_key
from ..reproduction import Csv
from ._sim import SimGrid, SimKeys, SimSpec, add_point, close, derive, figure_axes, float_list, md, parse_common
from .spres_table1.threads import _cpus, _max_samples, _rt_priority, thin, truncated

DESCRIPTION = (
    "Brandenburg & Gül, RTSS 2016, Fig. 9: p99 scheduling and release overheads of SP-RES, RUN, QPS-G, QPS-C "
    "(and P-EDF) on real threads, with the paper's cycle counts at this machine's clock"
)
SPEC = "spres-fig9.toml"
KIND = "spres-fig9"

#: The schedulers of Fig. 9 and the reference, in the figure's order.
FIG9_SCHEDULERS = ("spres", "run", "qps-g", "qps-c", "pedf")
#: The terms of Fig. 9 (a) and (b), the runtime's names.
TERMS = ("schedule", "release")
#: §VII-B's 99th percentiles, in cycles (P-EDF: not in Fig. 9).
PAPER_CYCLES = {
    "spres": {"schedule": 2_255, "release": 3_045},
    "run": {"schedule": 101_294, "release": 253_049},
    "qps-g": {"schedule": 135_994, "release": 158_397},
    "qps-c": {"schedule": 4_993, "release": 9_571},
}
#: The paper's clock (§VII, "Platform": two 22-core Xeon E5-2699 v4 at 2.2 GHz).
PAPER_GHZ = 2.2


def _schedulers(v: Any, where: str) -> list[str]:
    if not isinstance(v, list) or not v or any(not isinstance(s, str) for s in v) or len(set(v)) != len(v):
        raise SpecError(f"{where}: a non-empty list of distinct names, got {v!r}")
    bad = [s for s in v if s not in FIG9_SCHEDULERS]
    if bad:
        raise SpecError(f"{where}: {bad[0]!r} is not one of Fig. 9's: {', '.join(FIG9_SCHEDULERS)}")
    return list(v)


def _util_frac(v: Any, where: str) -> list:
    lo_hi = float_list(v, where, 0.01, 1.0)
    if len(lo_hi) != 2 or lo_hi[0] > lo_hi[1]:
        raise SpecError(f"{where}: [low, high] of U / m with low ≤ high, got {v!r}")
    return lo_hi


def _n_per_m(v: Any, where: str) -> list:
    return float_list(v, where, 1.0, 100.0)


#: ``inflate``'s pilot values: the statistic of the pilot run's summary each charges.
PILOT_STATS = {"pilot": "max", "pilot-p99": "p99"}


def _inflate(v: Any, where: str) -> str:
    if (
        not isinstance(v, str)
        or not v.strip()
        or (v.startswith("pilot") and v not in PILOT_STATS)  # a pilot value misspelt is no model name
    ):
        raise SpecError(
            f'{where}: "pilot", "pilot-p99", "none" or an overhead model (file, shipped model or set), got {v!r}'
        )
    return v


def _pilot(v: Any, where: str) -> int:
    ns = parse_duration_ns(v, where)
    if ns < 1:
        raise SpecError(f"{where}: a positive duration, got {v!r}")
    return ns


@dataclass(frozen=True, kw_only=True)
class Keys(SimKeys):
    """The spec's top level: the common keys and ``schedulers``, ``periods``, ``util_frac``,
    ``rt_priority`` (0: normal priority), ``cpus``, ``max_samples``."""

    schedulers: list = spec_key(factory=lambda: list(FIG9_SCHEDULERS), parse=_schedulers)
    periods: str = INTEGRAL_MS_PERIODS
    util_frac: list = spec_key(factory=lambda: [0.9, 1.0], parse=_util_frac)
    rt_priority: int = spec_key(50, parse=_rt_priority)
    cpus: list | None = spec_key(None, parse=_cpus)
    max_samples: int = spec_key(20_000, parse=_max_samples)
    inflate: str = spec_key("pilot", parse=_inflate)
    pilot: int = spec_key(10**9, parse=_pilot)


#: The declared top level of the spec (the protocol's ``KEYS``).
KEYS = Keys


@dataclass(frozen=True, kw_only=True)
class Grid(SimGrid):
    """``[grid]``: processor counts ``m`` and task counts per processor ``n_per_m``."""

    n_per_m: list = spec_key(parse=_n_per_m)


SCHEMA = pa.schema(
    [
        ("point", pa.string()),
        ("m", pa.int64()),
        ("n", pa.int64()),
        ("util", pa.float64()),
        ("set", pa.int64()),
        ("scheduler", pa.string()),
        ("status", pa.string()),
        ("ran", pa.bool_()),
        ("jobs", pa.int64()),
        ("deadline_misses", pa.int64()),
        ("trustworthy", pa.bool_()),
        ("isolated", pa.bool_()),
        ("inflated_util", pa.float64()),
        *[(f"{t}_count", pa.int64()) for t in TERMS],
        *[(f"{t}_ns", pa.list_(pa.int64())) for t in TERMS],
    ]
)


def parse(text: str, path: str | None = None, quick: bool = False, override: dict | None = None) -> SimSpec:
    c = parse_common(
        text, path, KIND, Keys, Grid, schema=SCHEMA, evaluator=evaluate_point, quick=quick, override=override
    )
    spec, k, where = c.spec, c.keys, c.where
    if k.cpus is not None and c.ms != [len(k.cpus)]:
        raise SpecError(f"{where} [grid].m: with cpus = {k.cpus!r} the grid's m must be [{len(k.cpus)}]")
    shared = {
        "horizon": k.horizon,
        "schedulers": k.schedulers,
        "periods": k.periods,
        "util_frac": k.util_frac,
        "rt_priority": k.rt_priority,
        "cpus": k.cpus,
        "max_samples": k.max_samples,
        "inflate": k.inflate,
        "pilot": min(k.pilot, k.horizon),
    }
    spec.params = {"seed": k.seed, "samples": k.samples, **shared}
    for m in c.ms:
        for per in c.grid.n_per_m:
            n = max(1, round(per * m))
            p = {"kind": KIND, "m": m, "n": n, "count": k.samples, **shared}
            p["seed"] = derive({"v": "rtsched-spres-fig9-v1", "seed": k.seed, "m": m, "n": n})
            add_point(spec, p, {"m": m, "n": n})
    spec.rows_per_set = len(k.schedulers)
    return spec


# ---------------------------------------------------------------------------------------------
# Evaluation of one point.


def sets_of(p: dict) -> list[tuple[float, Any]]:
    """The point's task sets: ``(U drawn, set)`` each, integral-millisecond parameters."""
    from ...api import generate
    from ...runtime import integral_ms

    rng = random.Random(p["seed"])
    out = []
    for i in range(p["count"]):
        lo, hi = p["util_frac"]
        u = rng.uniform(lo, hi) * p["m"]
        # RandFixedSum needs U < n; at U = n every task has u = 1.
        u = min(u, p["n"] * 0.999)
        ts = generate(p["n"], u, generator="randfixedsum", periods=p["periods"], seed=p["seed"] + i)
        out.append((u, integral_ms(ts, p["m"])))
    return out


def _cpu_list(p: dict) -> list[int]:
    if p["cpus"] is not None:
        return list(p["cpus"])
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < p["m"]:
        raise SpecError(f"m = {p['m']} needs {p['m']} CPUs, this process may use {len(allowed)}; set the grid's m")
    return allowed[: p["m"]]


def _one(p: dict, cpus: list, sched: str, ts, pl: dict | None, seed: int) -> dict:
    """One scheduler's run of one set: the row's run columns (``status`` says why one did not run)."""
    from ..._core import RtschedError
    from ...runtime import run_raw, scheduler_names

    row: dict = {
        "status": "ran",
        "ran": False,
        "jobs": None,
        "deadline_misses": None,
        "trustworthy": None,
        "isolated": None,
        "inflated_util": None,
    }
    for t in TERMS:
        row[f"{t}_count"], row[f"{t}_ns"] = 0, []
    if sched not in scheduler_names():
        row["status"] = "missing: not registered in this build"
        return row
    placement: Any = None
    params: dict = {}
    if sched in ("spres", "pedf"):
        if pl is None or not pl["schedulable"]:
            row["status"] = "not run: the SP-RES cascade did not place the set"
            return row
        if sched == "spres":
            placement, params = pl, {"soft": True}
        else:
            ts, placement, _cut = truncated(ts, pl)
    iso = may_isolate()
    common: dict[str, Any] = {
        "scheduler": sched,
        "cpus": cpus,
        "rt_priority": p["rt_priority"] or None,
        "seed": seed,
        "quiet": True,
        "preflight": False,
        "isolate": iso,
    }
    inflate: Any = None
    try:
        if sched in INFLATABLE_SCHEDULERS and p["inflate"] != "none":
            inflate = p["inflate"]
            if inflate in PILOT_STATS:
                pilot = run_raw(ts, duration=p["pilot"], **common)
                if pilot["interrupted"]:
                    raise KeyboardInterrupt
                inflate = pilot_constants(pilot["summary"], PILOT_STATS[inflate])
        res = run_raw(
            ts,
            duration=p["horizon"],
            placement=placement,
            exports=["overhead_samples"],
            params=params,
            inflate=inflate,
            **common,
        )
    except RtschedError as e:
        if "CAP_SYS_NICE" in str(e):
            raise SpecError(f"{sched}: {e}; set rt_priority = 0 in the spec to run at normal priority") from None
        row["status"] = f"refused: {e}"
        return row
    if res["interrupted"]:
        raise KeyboardInterrupt
    s, samples = res["summary"], res["overhead_samples"]
    row.update(
        {
            "ran": True,
            "jobs": s["jobs"],
            "deadline_misses": s["deadline_misses"],
            "trustworthy": s["trustworthy"],
            "isolated": iso,
            "inflated_util": (s.get("inflation") or {}).get("utilization"),
        }
    )
    for t in TERMS:
        xs = samples.get(t, [])
        row[f"{t}_count"], row[f"{t}_ns"] = len(xs), thin(xs, p["max_samples"])
    return row


def may_isolate() -> bool:
    """Whether the runs lift RT throttling and the fair server (``isolate``): only as root."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def pilot_constants(summary: dict, stat: str = "max") -> dict:
    """The overhead constants a pilot run measured: each term of the overhead vocabulary
    (``rtsched_model::overheads``) that is a time, at the summary's statistic ``stat`` —
    ``"max"`` (after the outlier rule: the hard statistic ``analyze --overheads`` charges) or
    ``"p99"`` (nearest rank, a soft inflation: ``inflate = "pilot-p99"``), both computed by the
    run's one statistics code (``rtsched_trace::OverheadStats``) — as ``{"<term>_ns": ns}``."""
    from ..._core import RtschedError
    from ...overheads import count_terms, terms

    if stat not in PILOT_STATS.values():
        raise RtschedError(f"pilot_constants: stat must be 'max' or 'p99', got {stat!r}")
    key = f"{stat}_ns"
    times = {t["name"] for t in terms()} - count_terms()
    out = {}
    for name, o in (summary.get("overheads") or {}).items():
        if name in times and isinstance(o, dict) and o.get(key) is not None:
            out[f"{name}_ns"] = int(o[key])
    return out


def evaluate_point(point_json: str) -> dict:
    """One point: its sets, each run under every scheduler; one row per (set, scheduler)."""
    from ...api import partition

    p = json.loads(point_json)
    cpus = _cpu_list(p)
    cols: dict[str, list] = {f.name: [] for f in SCHEMA if f.name != "point"}
    with realtime_lock():
        for i, (u, ts) in enumerate(sets_of(p)):
            needs_pl = any(s in ("spres", "pedf") for s in p["schedulers"])
            pl = partition(ts, p["m"], heuristic="spres") if needs_pl else None
            for sched in p["schedulers"]:
                row = _one(p, cpus, sched, ts, pl, p["seed"] + i)
                row.update({"m": p["m"], "n": p["n"], "util": u, "set": i, "scheduler": sched})
                for k in cols:
                    cols[k].append(row[k])
    return cols


# ---------------------------------------------------------------------------------------------
# Tables and figure.


def clock_ghz() -> float | None:
    """This machine's clock in GHz from ``/proc/cpuinfo`` (the first ``cpu MHz``, else the
    ``@ X GHz`` of the model name); None when it says neither."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("cpu MHz") and ":" in line:
            try:
                return float(line.split(":", 1)[1]) / 1000.0
            except ValueError:
                break
    for line in lines:
        if line.startswith("model name") and "GHz" in line and "@" in line:
            try:
                return float(line.rsplit("@", 1)[1].replace("GHz", "").strip())
            except ValueError:
                return None
    return None


def weighted_quantile(runs: list[tuple[int, list]], q: float) -> float | None:
    """The ``q``-quantile (nearest rank) of the samples of several runs, each given as (its true
    count, its kept order statistics): every kept value stands for count / kept samples."""
    pts: list[tuple[int, Fraction]] = []
    for count, kept in runs:
        if kept:
            w = Fraction(count, len(kept))
            pts += [(x, w) for x in kept]
    if not pts:
        return None
    pts.sort()
    total = sum(w for _, w in pts)
    target = Fraction(q).limit_denominator(10**6) * total
    acc = Fraction(0)
    for x, w in pts:
        acc += w
        if acc >= target:
            return float(x)
    return float(pts[-1][0])


def summarize(spec: SimSpec, table: pa.Table) -> dict:
    rows = table.to_pylist()
    ghz = clock_ghz()
    per: dict[str, dict] = {}
    for s in spec.params["schedulers"]:
        mine = [r for r in rows if r["scheduler"] == s]
        ran = [r for r in mine if r["ran"]]
        statuses = sorted({r["status"] for r in mine if not r["ran"]})
        entry: dict = {"sets": len(mine), "ran": len(ran), "not_ran": statuses}
        entry["misses"] = sum(r["deadline_misses"] or 0 for r in ran)
        entry["jobs"] = sum(r["jobs"] or 0 for r in ran)
        entry["untrustworthy"] = sum(1 for r in ran if not r["trustworthy"])
        entry["isolated"] = sum(1 for r in ran if r.get("isolated"))
        entry["inflated"] = sum(1 for r in ran if r.get("inflated_util") is not None)
        for t in TERMS:
            runs = [(r[f"{t}_count"], r[f"{t}_ns"]) for r in ran]
            entry[f"{t}_samples"] = sum(c for c, _ in runs)
            entry[f"{t}_p99_ns"] = weighted_quantile(runs, 0.99)
        per[s] = entry

    def us(ns):
        return "—" if ns is None else f"{ns / 1000:.2f}"

    def cyc(ns):
        return "—" if ns is None or ghz is None else f"{ns * ghz:,.0f}"

    clock = f"{ghz:.3f} GHz" if ghz is not None else "unknown (no cpu MHz in /proc/cpuinfo)"
    lines = [
        f"# {spec.name}: Brandenburg & Gül, RTSS 2016, Fig. 9 (p99 overheads on real threads)",
        "",
        f"This machine's clock: {clock}; the paper's: {PAPER_GHZ} GHz (§VII). "
        "Paper = §VII-B's 99th percentiles; ours = the weighted p99 of every run's kept samples.",
    ]
    for t, label in (("schedule", "scheduling"), ("release", "release")):
        lines += ["", f"## p99 {label} overhead"]
        header = [
            "scheduler",
            "paper (cycles)",
            f"paper (µs at {PAPER_GHZ} GHz)",
            "paper (µs at this clock)",
            "ours (µs)",
            "ours (cycles at this clock)",
            "samples",
            "sets run",
            "misses / jobs",
        ]
        body = []
        for s, e in per.items():
            pc = PAPER_CYCLES.get(s, {}).get(t)
            pap = "—" if pc is None else f"{pc:,}"
            at_paper = "—" if pc is None else f"{pc / (PAPER_GHZ * 1000):.2f}"
            at_ours = "—" if pc is None or ghz is None else f"{pc / (ghz * 1000):.2f}"
            ours = e[f"{t}_p99_ns"]
            note = "" if e["ran"] else " (" + "; ".join(e["not_ran"]) + ")"
            body.append(
                [
                    s,
                    pap,
                    at_paper,
                    at_ours,
                    us(ours),
                    cyc(ours),
                    f"{e[f'{t}_samples']:,}",
                    f"{e['ran']}/{e['sets']}{note}",
                    f"{e['misses']:,} / {e['jobs']:,}" if e["ran"] else "—",
                ]
            )
        lines += md(header, body)
    missing = [s for s, e in per.items() if not e["ran"]]
    lines += [""]
    runs_total = sum(e["ran"] for e in per.values())
    isolated = sum(e["isolated"] for e in per.values())
    if runs_total and isolated == runs_total:
        lines += ["Every run lifted RT throttling and the fair server on its CPUs (isolate, as root)."]
    elif runs_total:
        lines += [
            f"RT throttling and the fair server stayed in place in {runs_total - isolated} of {runs_total} runs "
            "(isolate needs root): SCHED_FIFO threads got at most their share of each CPU (95% by default), "
            "below the sets' U / m in [0.9, 1], so misses there are the kernel's as much as the schedulers'."
        ]
    inflate = spec.params.get("inflate", "none")
    infl = [s for s in per if s in INFLATABLE_SCHEDULERS]
    if infl and inflate != "none":
        how = {
            "pilot": "the maxima a pilot run of the set measured",
            "pilot-p99": "the p99s a pilot run of the set measured (a soft inflation for an overhead comparison, "
            "not a hard bound: a job may still overrun its budget)",
        }.get(inflate, f"the overhead model {inflate}")
        lines += [
            f"{', '.join(infl)}: server budgets inflated by {how} (rtsched run --inflate; the job bodies run their "
            "WCETs), so that their misses are not those of WCET budgets overrun by the scheduler's own overheads; "
            'a set whose inflated U exceeds m is not run ("refused" in its rows).'
        ]
    if missing:
        lines += [
            "Not measured: "
            + "; ".join(f"{s} ({', '.join(per[s]['not_ran'])})" for s in missing)
            + ". The paper's numbers stand alone on those rows."
        ]
    lines += [
        "Runs: "
        + ", ".join(
            f"{s} {e['jobs']:,} jobs, {e['misses']:,} misses, {e['untrustworthy']} untrustworthy"
            for s, e in per.items()
            if e["ran"]
        )
    ]
    return {"per": per, "ghz": ghz, "text": "\n".join(lines)}


def figure(res: dict, spec: SimSpec, path: Path) -> Path:
    fig, axes = figure_axes(1, 2, figsize=(10, 4))
    names = list(res["per"])
    for ax, (t, label) in zip(axes, (("schedule", "(a) scheduling"), ("release", "(b) release")), strict=True):
        ours = [res["per"][s][f"{t}_p99_ns"] for s in names]
        paper = [PAPER_CYCLES.get(s, {}).get(t) for s in names]
        xs = range(len(names))
        ax.bar([x - 0.2 for x in xs], [0 if v is None else v / 1000 for v in ours], 0.4, label="ours (µs)")
        ghz = res["ghz"] or PAPER_GHZ
        ax.bar(
            [x + 0.2 for x in xs],
            [0 if v is None else v / (ghz * 1000) for v in paper],
            0.4,
            label=f"paper's cycles at {ghz:.2f} GHz (µs)",
        )
        for x, v in zip(xs, ours, strict=True):
            if v is None:
                ax.text(x - 0.2, 0, "not run", rotation=90, ha="center", va="bottom", fontsize=8)
        ax.set_xticks(list(xs), names)
        ax.set_yscale("symlog", linthresh=1.0)
        ax.set_ylabel("p99 overhead (µs)")
        ax.set_title(f"{label} overhead")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        quickmark.title("Brandenburg & Gül, RTSS 2016, Fig. 9: p99 overheads (ours beside the paper's)", spec.quick)
    )
    fig.tight_layout()
    try:
        from ...output import save_figure

        save_figure(fig, path, dpi=120)
    finally:
        close(fig)
    return path


def csv_files(res: dict, spec: SimSpec) -> dict[str, Csv]:
    header = [
        "scheduler",
        "term",
        "paper_cycles",
        "paper_us_at_2.2ghz",
        "ours_p99_ns",
        "ours_cycles",
        "samples",
        "sets_run",
    ]
    rows = []
    ghz = res["ghz"]
    for s, e in res["per"].items():
        for t in TERMS:
            pc = PAPER_CYCLES.get(s, {}).get(t)
            ours = e[f"{t}_p99_ns"]
            rows.append(
                [
                    s,
                    t,
                    pc,
                    None if pc is None else round(pc / (PAPER_GHZ * 1000), 3),
                    ours,
                    None if ours is None or ghz is None else round(ours * ghz),
                    e[f"{t}_samples"],
                    e["ran"],
                ]
            )
    return {"csv": Csv(f"{spec.name}.csv", header, rows)}
