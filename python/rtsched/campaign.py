"""The scaling campaign: ``rtsched measure-overheads --campaign`` (docs/overheads.md, "The scaling
campaign").

It measures every registered mechanism at each processor count m of a list, on the papers' n grid
(Cerqueira, Vanga & Brandenburg, RTAS 2014, §IV: n in {m, 2m, ..., 10m}; ``--quick``: m, 5m, 10m),
each mechanism that needs one with a dedicated CPU of its own (the m CPUs of a size then hold the
dedicated CPU and m − 1 workers, as the paper's G-EDF-MP and GSN-EDF-DI on m cores), and writes
one model per mechanism and m (``DIR/m<M>/overheads-<mechanism>.json``, as ``measure-overheads``
writes them) and the figures of RTAS 2014 Figs. 1, 2, 6 and 7 and Brandenburg & Anderson, RTSS
2009, Fig. 3: the maximum and average Δsch, Δrel, Δreq and Δdsp against m (the largest value over
n at each m) and against n (at the largest m). The seconds per run are planned to fit a time
budget (default 7 minutes of runs), so that the whole campaign fits a lent many-core machine's
session; the plan is printed first.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from . import validate as v
from ._core import RtschedError

#: The terms the figures draw (RTAS 2014 Figs. 6–7: scheduling, release, request latency, DSP).
FIGURE_TERMS = ("schedule", "release", "request", "dsp")
#: Seconds per run never below this (a run shorter than a few periods measures little) nor above
#: the papers' 30 s.
MIN_SECONDS, MAX_SECONDS = 0.2, 30.0


def grid(m: int, quick: bool) -> list[int]:
    """The papers' n grid at m processors: RTAS 2014 §IV, n in {m, 2m, ..., 10m}."""
    return [m, 5 * m, 10 * m] if quick else [k * m for k in range(1, 11)]


def plan(
    mechanisms: Sequence[dict], sizes: Sequence[int], cpus: Sequence[int], quick: bool, budget_s: float
) -> list[dict]:
    """One entry per (m, mechanism) that fits: its worker CPUs, dedicated CPU, n grid and seconds
    per run (the budget shared equally by every run, clamped to [0.2 s, 30 s])."""
    runs = []
    for m in sizes:
        if m > len(cpus):
            raise RtschedError(f"--m {m}: only {len(cpus)} CPUs are given (--cpus {','.join(map(str, cpus))})")
        for e in mechanisms:
            dedicated = e["dedicated_cpu"] == "required"
            if dedicated and m < 2:
                continue  # the dedicated CPU and at least one worker
            workers = list(cpus[1:m]) if dedicated else list(cpus[:m])
            runs.append(
                {
                    "m": m,
                    "mechanism": e["name"],
                    "cpus": workers,
                    "dedicated_cpu": cpus[0] if dedicated else None,
                    "n": grid(len(workers), quick),
                }
            )
    total_points = sum(len(r["n"]) for r in runs)
    if not total_points:
        raise RtschedError("the campaign has nothing to measure (no mechanism fits the given --m and --cpus)")
    secs = min(MAX_SECONDS, max(MIN_SECONDS, budget_s / total_points))
    for r in runs:
        r["seconds"] = round(secs, 3)
    return runs


def campaign_mechanisms(only: Sequence[str] | None = None) -> list[dict]:
    """The registered mechanisms the campaign measures: every one that runs sequential task sets
    from a task-set file without a user-given placement (all of them today), or those of ``only``."""
    from .runtime import schedulers

    reg = schedulers()
    if only:
        names = {e["name"] for e in reg}
        bad = [s for s in only if s not in names]
        if bad:
            raise RtschedError(f"unknown scheduler(s) {', '.join(bad)}; known: {', '.join(sorted(names))}")
        return [e for e in reg if e["name"] in only]
    return reg


def run_campaign(
    *,
    cpus: str | Sequence[int] | None = None,
    sizes: Sequence[int] | None = None,
    out: str = "overheads-campaign",
    quick: bool = False,
    budget_s: float = 420.0,
    seconds: float | None = None,
    schedulers: Sequence[str] | None = None,
    rt_priority: int | None = None,
    seed: int = 1,
    log: TextIO = sys.stderr,
    **measure_kw: Any,
) -> dict:
    """Runs the campaign (module doc) and returns its summary (also written to
    ``DIR/campaign.json``): the plan, per model its path and the maximum and average of each
    figure term, the mechanisms that failed with their one-line error (``failed``; the others
    go on), and the figure paths. Ctrl-C keeps the models already written and draws the figures
    from them (``"interrupted": true``)."""
    from .runtime import measure_overheads, parse_cpus

    cpu_list = parse_cpus(cpus) if cpus is not None else sorted(os.sched_getaffinity(0))
    sizes = sorted(set(sizes)) if sizes else _default_sizes(len(cpu_list))
    for m in sizes:
        v.integer(m, "m", 1, v.MAX_CPU)
    budget_s = float(budget_s)
    if not budget_s > 0:
        raise RtschedError(f"--budget must be positive, got {budget_s}")
    mechs = campaign_mechanisms(schedulers)
    runs = plan(mechs, sizes, cpu_list, quick, budget_s)
    if seconds is not None:
        if not seconds > 0:
            raise RtschedError(f"seconds must be positive, got {seconds}")
        for r in runs:
            r["seconds"] = seconds
    points = sum(len(r["n"]) for r in runs)
    planned = sum(len(r["n"]) * r["seconds"] for r in runs)
    print(
        f"rtsched measure-overheads --campaign: {len(runs)} models ({len(mechs)} mechanisms × m in {sizes}), "
        f"{points} runs of {runs[0]['seconds']:g} s: about {planned / 60:.1f} min of runs plus start-up",
        file=log,
        flush=True,
    )
    os.makedirs(out, exist_ok=True)
    summary: dict = {"format": "rtsched-overhead-campaign", "version": 1, "cpus": cpu_list, "sizes": sizes}
    summary["quick"] = quick
    summary["plan"] = runs
    models: list[dict] = []
    failed: list[dict] = []
    interrupted = False
    t0 = time.monotonic()
    for i, r in enumerate(runs):
        d = os.path.join(out, f"m{r['m']}")
        ded = "" if r["dedicated_cpu"] is None else f", dedicated CPU {r['dedicated_cpu']}"
        print(
            f"rtsched measure-overheads --campaign: [{i + 1}/{len(runs)}] {r['mechanism']} at m = {r['m']} "
            f"(CPUs {r['cpus']}{ded})",
            file=log,
            flush=True,
        )
        try:
            model = measure_overheads(
                r["mechanism"],
                cpus=r["cpus"],
                out=d,
                quick=quick,
                seconds=r["seconds"],
                seed=seed,
                dedicated_cpu=r["dedicated_cpu"],
                rt_priority=rt_priority,
                log=log,
                **measure_kw,
            )
        except KeyboardInterrupt:
            interrupted = True
            break
        except RtschedError as e:
            # One mechanism that cannot run here (e.g. SCHED_DEADLINE admission refused because
            # other deadline tasks hold the bandwidth) does not lose the others' models.
            failed.append({"m": r["m"], "mechanism": r["mechanism"], "error": str(e)})
            print(f"rtsched measure-overheads --campaign: {r['mechanism']} at m = {r['m']} failed: {e}", file=log)
            continue
        models.append(_model_summary(r, model, os.path.join(d, f"overheads-{r['mechanism']}.json")))
        if model.get("interrupted"):
            interrupted = True
            break
    summary["models"] = models
    summary["failed"] = failed
    summary["interrupted"] = interrupted
    summary["elapsed_s"] = round(time.monotonic() - t0, 1)
    summary["figures"] = draw(models, out)
    summary["ratios"] = ratios(models)
    from .output import write_text

    write_text(os.path.join(out, "campaign.json"), json.dumps(summary, indent=1) + "\n")
    for p in [*summary["figures"], os.path.join(out, "campaign.json")]:
        print(f"rtsched measure-overheads --campaign: wrote {p}", file=log)
    return summary


def _default_sizes(ncpu: int) -> list[int]:
    """The papers' sizes that fit: 2, 4, 8 and all but one CPU (15 on a 16-core machine)."""
    return sorted({m for m in (2, 4, 8, ncpu - 1) if 1 <= m <= ncpu} or {ncpu})


def _model_summary(r: dict, model: dict, path: str) -> dict:
    """Per figure term: the largest maximum and average over n, and the per-n columns."""
    terms = {}
    for t in FIGURE_TERMS:
        row = model.get("terms", {}).get(t)
        if row and row["n"]:
            terms[t] = {
                "n": row["n"],
                "avg_ns": row["avg_ns"],
                "max_ns": row["max_ns"],
                "max_over_n_ns": max(row["max_ns"]),
                "avg_over_n_ns": max(row["avg_ns"]),
            }
    return {"m": r["m"], "mechanism": r["mechanism"], "path": path, "terms": terms}


def ratios(models: list[dict]) -> dict:
    """RTAS 2014 §IV-B's headline: at the largest m, the maximum Δsch of GSN-EDF and of SD
    (push/pull) over G-EDF-MP's (the paper: 23× and 36× at 64 cores)."""
    if not models:
        return {}
    top = max(x["m"] for x in models)
    sch = {
        x["mechanism"]: x["terms"]["schedule"]["max_over_n_ns"]
        for x in models
        if x["m"] == top and "schedule" in x["terms"]
    }
    out: dict = {"m": top, "max_schedule_ns": sch}
    mp = sch.get("gedf-mp")
    if mp:
        for other in ("gsn-edf", "push-pull"):
            if other in sch:
                out[f"{other}_over_gedf-mp"] = round(sch[other] / mp, 2)
    return out


def draw(models: list[dict], out: str) -> list[str]:
    """``campaign-vs-m.png`` (max and average of each figure term against m, one curve per
    mechanism; RTAS 2014 Figs. 1, 2, 6) and ``campaign-vs-n.png`` (the same against n at the
    largest m; RTAS 2014 Fig. 7, RTSS 2009 Fig. 3)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .output import save_figure
    from .plots import curve_style

    paths: list[str] = []
    if not models:
        return paths
    mechs = sorted({x["mechanism"] for x in models})
    top = max(x["m"] for x in models)
    for kind in ("m", "n"):
        fig, axes = plt.subplots(2, len(FIGURE_TERMS), figsize=(4.0 * len(FIGURE_TERMS), 6.2), squeeze=False)
        for col, term in enumerate(FIGURE_TERMS):
            for row, stat in enumerate(("max", "avg")):
                ax = axes[row][col]
                for j, mech in enumerate(mechs):
                    if kind == "m":
                        pts = sorted(
                            (x["m"], x["terms"][term][f"{stat}_over_n_ns"])
                            for x in models
                            if x["mechanism"] == mech and term in x["terms"]
                        )
                    else:
                        pts = [
                            (n, y)
                            for x in models
                            if x["mechanism"] == mech and x["m"] == top and term in x["terms"]
                            for n, y in zip(x["terms"][term]["n"], x["terms"][term][f"{stat}_ns"], strict=True)
                        ]
                    if pts:
                        xs, ys = zip(*pts, strict=True)
                        ax.plot(xs, [y / 1000 for y in ys], label=mech, **curve_style(j, len(xs)))
                ax.set_title(f"{'maximum' if stat == 'max' else 'average'} {term}", fontsize=9)
                ax.set_xlabel("processors m" if kind == "m" else f"tasks n (m = {top})", fontsize=8)
                ax.set_ylabel("µs", fontsize=8)
                ax.tick_params(labelsize=7)
                ax.grid(True, alpha=0.3)
        handles, labels = [], []
        for ax in axes.flat:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        if handles:
            fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize=7)
        what = "against m (largest value over n)" if kind == "m" else f"against n at m = {top}"
        fig.suptitle(f"overheads {what} (RTAS 2014 Figs. {'1, 2, 6' if kind == 'm' else '7'} style)", fontsize=10)
        fig.tight_layout(rect=(0, 0.07, 1, 1))
        p = os.path.join(out, f"campaign-vs-{kind}.png")
        try:
            save_figure(fig, p, dpi=100)
        finally:
            plt.close(fig)
        paths.append(p)
    return paths


#: The statistics of a model's terms that ``compare`` sets side by side.
COMPARED_STATS = ("avg_ns", "p99_ns", "max_ns")


def _model_files(root: str) -> dict[str, str]:
    """Every overhead model under ``root`` (a campaign folder with ``m<M>/`` sub-folders, or one
    folder of models), keyed by its path relative to ``root``."""
    if not os.path.isdir(root):
        raise RtschedError(f"{root}: not a folder of overhead models")
    found = {}
    for base, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            if f.startswith("overheads-") and f.endswith(".json"):
                path = os.path.join(base, f)
                found[os.path.relpath(path, root)] = path
    return found


def _terms(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as e:
        raise RtschedError(f"{path}: not a readable overhead model ({e})") from None
    terms = doc.get("terms") if isinstance(doc, dict) else None
    if not isinstance(terms, dict):
        raise RtschedError(f"{path}: field 'terms': missing (a measured model has one row per term)")
    for name, row in terms.items():
        if not isinstance(row, dict) or not isinstance(row.get("n"), list):
            raise RtschedError(f"{path}: term '{name}': field 'n': missing or not a list")
        for stat in COMPARED_STATS:
            col = row.get(stat)
            if col is not None and (not isinstance(col, list) or len(col) != len(row["n"])):
                raise RtschedError(f"{path}: term '{name}': field '{stat}': not a list as long as 'n'")
    return terms


def compare(a: str, b: str) -> dict:
    """Two measurements of the same models side by side (docs/overheads.md, "How reproducible is
    a model"): for every model in both folders, every term in both and every n in both, the ratio
    larger / smaller of each statistic (1 = the same value). The spread of those ratios (median,
    90th percentile, largest, and the point where it is largest) says how far one run's numbers
    can be trusted to stand for another's. Points where one side is 0 and the other is not are
    counted apart (``zero_in_one``); both 0 is agreement and is not counted."""
    fa, fb = _model_files(a), _model_files(b)
    common = sorted(set(fa) & set(fb))
    if not common:
        raise RtschedError(f"{a} and {b}: no overhead model in both (files overheads-*.json at the same relative path)")
    ratios: dict[str, list[tuple[float, dict]]] = {s: [] for s in COMPARED_STATS}
    zero_in_one = {s: 0 for s in COMPARED_STATS}
    for rel in common:
        ta, tb = _terms(fa[rel]), _terms(fb[rel])
        for term in sorted(set(ta) & set(tb)):
            ra, rb = ta[term], tb[term]
            index_b = {n: i for i, n in enumerate(rb["n"])}
            for i, n in enumerate(ra["n"]):
                j = index_b.get(n)
                if j is None:
                    continue
                for stat in COMPARED_STATS:
                    if ra.get(stat) is None or rb.get(stat) is None:
                        continue
                    x, y = float(ra[stat][i]), float(rb[stat][j])
                    if x <= 0 or y <= 0:
                        zero_in_one[stat] += (x > 0) != (y > 0)
                        continue
                    where = {"model": rel, "term": term, "n": n, "a_ns": x, "b_ns": y}
                    ratios[stat].append((max(x, y) / min(x, y), where))
    stats = {}
    for stat, rs in ratios.items():
        rs.sort(key=lambda r: r[0])
        if not rs:
            continue
        k = len(rs)
        stats[stat] = {
            "points": k,
            "median": round(rs[(k - 1) // 2][0], 3),
            "p90": round(rs[min(k - 1, (9 * k) // 10)][0], 3),
            "max": round(rs[-1][0], 3),
            "worst": rs[-1][1],
            "zero_in_one": zero_in_one[stat],
        }
    return {
        "a": a,
        "b": b,
        "models": len(common),
        "only_in_a": sorted(set(fa) - set(fb)),
        "only_in_b": sorted(set(fb) - set(fa)),
        "stats": stats,
    }


def compare_lines(c: dict) -> list[str]:
    """``compare``'s answer as the lines ``rtsched overheads compare`` prints."""
    from .overheads import count_terms

    counts = count_terms()
    out = [f"{c['models']} models in both {c['a']} and {c['b']}; ratio larger/smaller per point (1 = equal)"]
    out.append(f"{'statistic':10s} {'points':>7s} {'median':>7s} {'p90':>7s} {'max':>8s}  largest at")
    for stat, s in c["stats"].items():
        w = s["worst"]
        unit = " (a count)" if w["term"] in counts else " ns"  # a count term's values are no times
        out.append(
            f"{stat:10s} {s['points']:7d} {s['median']:7.2f} {s['p90']:7.2f} {s['max']:8.2f}  "
            f"{w['model']} {w['term']} n={w['n']}: {w['a_ns']:.0f} vs {w['b_ns']:.0f}{unit}"
        )
        if s["zero_in_one"]:
            out.append(f"{'':10s} {s['zero_in_one']} points are 0 in one run only")
    for side in ("a", "b"):
        only = c[f"only_in_{side}"]
        if only:
            out.append(f"only in {c[side]}: {', '.join(only[:6])}{' …' if len(only) > 6 else ''}")
    return out


def cmd_compare(args: Any) -> int:
    """``rtsched overheads compare A B``."""
    from .shipped import resolve_model_folder

    c = compare(resolve_model_folder(args.a), resolve_model_folder(args.b))
    if args.json:
        print(json.dumps(c, indent=2))
    else:
        print("\n".join(compare_lines(c)))
    return 0


def add_compare_command(osub: Any) -> None:
    """``rtsched overheads compare``, under the ``overheads`` command's subparsers."""
    s = osub.add_parser(
        "compare",
        help="set two measurements of the same models side by side: how far one run stands for another",
        description="For every overhead model in both folders (matched by relative path, so two campaigns or two "
        "measure-overheads --out folders), every term in both and every n in both: the ratio larger/smaller of "
        "the average, p99 and maximum; prints the median, 90th percentile and largest ratio of each statistic and "
        "where the largest is (docs/overheads.md, 'The scaling campaign').",
    )
    s.add_argument("a", help="a folder of models, or a shipped folder's name (campaign-16cpu)")
    s.add_argument("b", help="the other folder")
    s.add_argument("--json", action="store_true", help="print the comparison as JSON")
    s.set_defaults(func=cmd_compare)


def add_options(p: Any) -> None:
    """The campaign's options of ``rtsched measure-overheads``."""
    g = p.add_argument_group("scaling campaign (docs/overheads.md, 'The scaling campaign')")
    g.add_argument(
        "--campaign",
        action="store_true",
        help="measure every registered mechanism at each m of --m on the papers' n grid and draw the scaling "
        "figures (models in OUT/m<M>/)",
    )
    g.add_argument(
        "--m",
        dest="campaign_m",
        type=v.cli_cpus,
        metavar="LIST",
        help="campaign processor counts, e.g. 2,4,8,15 (default: 2, 4, 8 and all CPUs but one that fit)",
    )
    g.add_argument(
        "--budget",
        type=v.cli_duration("s"),
        default=None,
        help="campaign: time for all runs together, e.g. 7min (default 7min); sets the seconds per run",
    )
    g.add_argument("--schedulers", metavar="LIST", help="campaign: only these mechanisms (comma-separated)")


def cmd_campaign(args: Any) -> int:
    """``rtsched measure-overheads --campaign``."""
    if args.scheduler:
        raise RtschedError("--campaign measures every registered mechanism; use --schedulers A,B to choose some")
    sizes = v.parse_cpus(args.campaign_m, "--m") if args.campaign_m else None
    if sizes and 0 in sizes:
        raise RtschedError("--m: processor counts must be at least 1")
    out = args.out if args.out != "overheads" else "overheads-campaign"
    s = run_campaign(
        cpus=args.cpus,
        sizes=sizes,
        out=out,
        quick=args.quick,
        budget_s=(args.budget / 1e9) if args.budget else 420.0,
        seconds=args.seconds,
        schedulers=[x.strip() for x in args.schedulers.split(",") if x.strip()] if args.schedulers else None,
        rt_priority=args.rt_priority,
        seed=args.seed,
        background=args.background,
        isolate=args.isolate,
    )
    r = s.get("ratios") or {}
    if r.get("max_schedule_ns"):
        parts = ", ".join(f"{k} {v_ / 1000:.1f} µs" for k, v_ in sorted(r["max_schedule_ns"].items()))
        print(f"maximum Δsch at m = {r['m']}: {parts}")
        for k in ("gsn-edf_over_gedf-mp", "push-pull_over_gedf-mp"):
            if k in r:
                print(f"  {k.replace('_over_', ' / ')}: {r[k]}× (Cerqueira et al., RTAS 2014: 23× and 36× at m = 64)")
    for f in s.get("failed", []):
        print(f"not measured: {f['mechanism']} at m = {f['m']}: {f['error']}")
    if s.get("interrupted"):
        return 130
    return 1 if s.get("failed") else 0
