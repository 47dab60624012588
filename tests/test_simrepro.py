"""The simulation reproductions of the figure registry (spres-table1, rtws-tables): tiny runs of
the registered entries, the slack distribution, migration avoidance under slack, spec errors."""

import csv
import json

import pytest
import rtsched
from rtsched import _core
from rtsched.experiments import cli as exp_cli
from rtsched.experiments.registry import (
    available,
    is_simulation,
    load_experiment,
    lookup,
    parse_experiment,
    reproduce,
)
from rtsched.experiments.repro import rtws_tables, spres_table1
from rtsched.experiments.spec import SpecError, load_spec

TINY_SPRES = {"samples": 1, "horizon": "300ms", "grid": {"n": ["m+1"], "util_frac": [0.95]}}
TINY_RTWS = {"samples": 2, "horizon": "3s", "grid": {"m": [2, 4], "window": [[0.38, 0.40]]}}


def test_both_are_registered_and_not_sweeps():
    names = available()
    assert {"spres-table1", "rtws-tables"} <= set(names)
    for name in ("spres-table1", "rtws-tables"):
        assert is_simulation(lookup(name))
        with pytest.raises(SpecError, match="rtsched reproduce"):
            load_spec(lookup(name))


@pytest.mark.parametrize("quick", [False, True])
def test_registered_specs_match_the_papers_setups(quick):
    s = load_experiment(lookup("spres-table1"), quick=quick)
    pts = [p.params for p in s.points]
    if not quick:
        assert {p["m"] for p in pts} == {44}
        assert sorted({p["n"] for p in pts}) == [45, 66, 88, 176, 264, 352, 440]
        assert sorted({p["util_frac"] for p in pts}) == [0.75, 0.8, 0.85, 0.9, 0.95]
        assert s.params["samples"] == 10 and s.params["horizon"] == 30 * 10**9
    assert s.params["slack"] == [0.0, 0.1, 0.25, 0.33, 0.5] and s.params["cash"] is True
    r = load_experiment(lookup("rtws-tables"), quick=quick)
    assert sorted({(p.params["m"], p.params["lo"], p.params["hi"]) for p in r.points}) == [
        (m, lo, hi) for m in (2, 4, 8) for lo, hi in rtws_tables.WINDOWS
    ]
    if not quick:
        assert r.params["samples"] == 20
    assert s.hash != load_experiment(lookup("spres-table1"), quick=not quick).hash


def _csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_spres_table1_tiny_run(tmp_path):
    out = tmp_path / "t1"
    res = reproduce("spres-table1", quick=True, out=out, jobs=1, progress=False, override=TINY_SPRES)
    text = res["text"]
    for col in (
        "average slack",
        "total migrations",
        "per sec. and core",
        "reduction",
        "paper (m = 44): per sec. and core",
        "observed slack",
        "deadline misses",
    ):
        assert col in text
    assert "8.23" in text and "5.0x" in text  # the paper's numbers beside ours
    assert "not placed (skipped)" in text and "NOTE:" in text
    rows = _csv(res["csv"])
    assert [float(r["slack"]) for r in rows] == [0.0, 0.1, 0.25, 0.33, 0.5]
    assert set(rows[0]) >= {
        "slack",
        "simulated_sets",
        "total_migrations",
        "migrations_per_s_per_core",
        "reduction",
        "paper_per_s_per_core",
        "paper_reduction",
        "observed_slack",
        "deadline_misses",
    }
    agg = res["result"]
    assert agg["sets"] == 1 and agg["not_placed"] + agg["simulated_sets"] <= 1
    if agg["simulated_sets"]:
        # The rate is the total over simulated sets per core-second.
        r0 = agg["rows"][0]
        assert r0["rate"] == pytest.approx(r0["migrations"] / (44 * 0.3))
        assert all(r["deadline_misses"] == 0 for r in agg["rows"])
    assert res["figure"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert res["tables"].read_text().startswith("spres-table1")
    # Table I's own columns, one row per slack level, beside the figure.
    table = _csv(res["table"])
    assert res["table"] == out / "table.csv" and list(table[0]) == ["slack", "migrations_per_s_per_core", "quick"]
    assert [float(r["slack"]) for r in table] == [0.0, 0.1, 0.25, 0.33, 0.5]
    if agg["simulated_sets"]:
        assert float(table[0]["migrations_per_s_per_core"]) == pytest.approx(agg["rows"][0]["rate"])
    # Resume: nothing recomputed, same table.
    again = reproduce("spres-table1", quick=True, resume=True, out=out, jobs=1, progress=False, override=TINY_SPRES)
    assert again["run"]["computed"] == 0 and again["run"]["kept"] == 1
    assert again["result"]["rows"] == agg["rows"]


def test_rtws_tables_tiny_run(tmp_path):
    res = reproduce("rtws-tables", quick=True, out=tmp_path / "t2", jobs=1, progress=False, override=TINY_RTWS)
    text = res["text"]
    for title in ("Table I", "Table II", "Table III", "Figs. 3–4"):
        assert title in text
    assert "[1736]" not in text  # m = 8 not in this tiny grid
    assert "[50]" in text and "[2.75]" in text  # paper values beside ours (m = 2, 38-40%)
    rows = _csv(res["csv"])
    assert {r["scheduler"] for r in rows} == {"rtws", "gedf", "spres"}
    assert set(rows[0]) >= {
        "m",
        "lo",
        "hi",
        "scheduler",
        "sets",
        "mean_migrations_table2",
        "mean_thread_migrations",
        "mean_steals",
        "mean_remote_starts",
        "mean_context_switches",
        "deadline_misses",
    }
    avg = res["result"]["avg"]
    w = (0.38, 0.40)
    # RTWS migrations as the paper counts them are its steals; the base of the ratios is RTWS on m = 2.
    assert avg[(2, w, "rtws")]["mig"] == avg[(2, w, "rtws")]["steals"]
    assert "| 2 | 1.00 [1.00] |" in text
    for m in (2, 4):
        assert avg[(m, w, "gedf")]["mig"] == pytest.approx(
            avg[(m, w, "gedf")]["trace_mig"] + avg[(m, w, "gedf")]["remote"]
        )
        # Per-core utilization <= 0.4: nobody misses.
        assert all(avg[(m, w, s)]["misses"] == 0 for s in ("rtws", "gedf", "spres"))


def test_slack_mapping():
    assert spres_table1.slack_exec_fraction(0) == 1.0
    assert spres_table1.slack_exec_fraction(0.25) == 0.5
    assert spres_table1.slack_exec_fraction(0.5) == 0.0
    for bad in (-0.1, 0.51, True, "0.1"):
        with pytest.raises(SpecError):
            spres_table1.slack_exec_fraction(bad)


@pytest.mark.parametrize("slack", [0.10, 0.25, 0.33, 0.50])
def test_slack_distribution_matches_its_definition(slack, tmp_path):
    """Execution times uniform in [(1 - 2s) C, C]: mean slack s, bounds and quartiles, on 20,000
    jobs drawn by the simulator (P-EDF, light load, so every job completes)."""
    ts = rtsched.TaskSet([rtsched.Task(wcet="1ms", period="2ms"), rtsched.Task(wcet="3ms", period="4ms")])
    lo = spres_table1.slack_exec_fraction(slack)
    path = tmp_path / "jobs.csv"
    rtsched.simulate(ts, 2, "pedf", horizon="16s", exec_fraction=lo if lo > 0 else 1e-12, seed=7, job_csv=path)
    wcet = {0: 1_000_000, 1: 3_000_000}
    fr = sorted(int(r["executed"]) / wcet[int(r["task"])] for r in _csv(path) if r["finish"])
    assert len(fr) > 10_000
    mean_slack = 1 - sum(fr) / len(fr)
    assert mean_slack == pytest.approx(slack, abs=0.01)
    assert fr[0] >= lo - 1e-6 and fr[-1] <= 1.0
    q = lambda p: fr[int(p * (len(fr) - 1))]  # noqa: E731
    for p in (0.25, 0.5, 0.75):
        assert q(p) == pytest.approx(lo + p * (1 - lo), abs=0.02)


def _fig1():
    # Seed 004 Fig. 1: three tasks (10, 15) on two processors; the text's cascade (WFD-C=D, as in
    # the paper's figure) splits τ3.
    ts = rtsched.TaskSet([rtsched.Task(wcet="10ms", period="15ms")] * 3)
    pl = rtsched.partition(ts, m=2, heuristic="spres", variant="text")
    assert pl["schedulable"] and [t["parts"] for t in pl["tasks"]] == [1, 1, 2]
    return ts, pl


def test_observed_slack_of_the_reproduction_path():
    ts, pl = _fig1()
    runs = [
        json.loads(x) for x in _core.spres_slack_runs(ts, 2, json.dumps(pl), 15 * 10**9, [0.0, 0.1, 0.33, 0.5], seed=3)
    ]
    assert [r["slack"] for r in runs] == [0.0, 0.1, 0.33, 0.5]
    assert runs[0]["observed_slack"] == 0.0 and runs[0]["exec_lo"] is None
    for r in runs[1:]:
        assert r["jobs"] == 3000
        assert r["observed_slack"] == pytest.approx(r["slack"], abs=0.015)
        assert r["exec_lo"] == pytest.approx(1 - 2 * r["slack"])


def test_migrations_fall_with_slack_on_a_fixed_placement():
    """Seed 004 Fig. 1/2's placement: CPU 1 holds τ3's first window [0, 10) (budget 5, deadline 10)
    and τ2 (budget 10, deadline 15); τ3's second window is [10, 15) on CPU 0. τ3 runs first (its
    deadline is earlier), depletes at 5 unless it needs less, then τ2 runs, then τ3 gets the rest
    of [0, 10) in background. With execution fractions f2, f3, τ3 avoids the migration iff
    10·f2 + 10·f3 <= 10 or f3 <= 1/2. For f uniform in [lo, 1] that gives the expected number of
    migrations per job: 1 for lo >= 1/2 (slack <= 25%), 0.7282 for lo = 0.34 (33%) and 0.375 for
    lo = 0 (50%). 1,000 jobs; the tolerance is over four standard deviations."""
    ts, pl = _fig1()
    levels = [0.0, 0.10, 0.25, 0.33, 0.50]
    runs = {
        r["slack"]: r
        for r in map(json.loads, _core.spres_slack_runs(ts, 2, json.dumps(pl), 1000 * 15_000_000, levels, seed=11))
    }
    mig = {s: runs[s]["migrations"] for s in levels}
    assert mig[0.0] == mig[0.10] == mig[0.25] == 1000
    assert mig[0.33] == pytest.approx(728, abs=60)
    assert mig[0.50] == pytest.approx(375, abs=60)
    assert mig[0.50] <= mig[0.0]
    assert all(runs[s]["deadline_misses"] == 0 for s in levels)


def test_bad_inputs_have_clear_errors(tmp_path):
    ts, pl = _fig1()
    with pytest.raises(rtsched.RtschedError, match="slack"):
        _core.spres_slack_runs(ts, 2, json.dumps(pl), 10**9, [0.7])
    with pytest.raises(rtsched.RtschedError, match="m = 2"):
        _core.spres_slack_runs(ts, 3, json.dumps(pl), 10**9, [0.1])
    text = _core.forkjoin_generate(2, 0.38, 0.40, 1, 1)[0]
    with pytest.raises(rtsched.RtschedError, match="scheduler"):
        _core.forkjoin_simulate(text, 2, "pedf")
    spec = (lookup("spres-table1")).read_text()
    with pytest.raises(SpecError, match="slack"):
        parse_experiment(spec.replace("slack = [0.0,", "slack = [0.7,"), "x.toml")
    with pytest.raises(SpecError, match="unknown key 'horizn'"):
        parse_experiment(spec.replace('horizon = "30s"', 'horizn = "30s"'), "x.toml")
    with pytest.raises(SpecError, match="exec_scale"):
        parse_experiment(spec.replace("cash = true", "cash = true\nexec_scale = 1.5"), "x.toml")
    with pytest.raises(SpecError, match="unknown kind"):
        parse_experiment(spec.replace('kind = "spres-table1"', 'kind = "table9"'), "x.toml")
    rt = lookup("rtws-tables").read_text()
    with pytest.raises(SpecError, match="rtws"):
        parse_experiment(rt.replace('schedulers = ["rtws", "gedf", "spres"]', 'schedulers = ["gedf"]'), "y.toml")


def test_forkjoin_schedulers_agree_on_job_accounting():
    text = _core.forkjoin_generate(4, 0.58, 0.60, 5, 1)[0]
    out = {s: json.loads(_core.forkjoin_simulate(text, 4, s, 5 * 10**9, check=True)) for s in ("rtws", "gedf", "spres")}
    assert out["rtws"]["jobs"] == out["gedf"]["jobs"] == out["spres"]["jobs"]
    assert out["rtws"]["threads"] == out["gedf"]["threads"]
    assert out["gedf"]["steals"] == 0 and out["gedf"]["remote_starts"] >= 0
    assert out["spres"]["placed"] and out["spres"]["threads"] == out["spres"]["jobs"]


def test_cli_reproduce_lists_and_prints_tables(tmp_path, capsys, monkeypatch):
    assert exp_cli.main(["reproduce", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "spres-table1" in listed and "rtws-tables" in listed
    assert exp_cli.main(["sweep", str(lookup("rtws-tables"))]) == 2
    assert "rtsched reproduce" in capsys.readouterr().err


def test_table1_variants_set_the_published_workload_options():
    art = load_experiment(lookup("spres-table1"))  # default: the published code's setup
    text = load_experiment(lookup("spres-table1"), variant="text")
    assert art.variant == "artifact" and text.variant == "text"
    a, t = art.points[0].params, text.points[0].params
    assert a["epsilon"] == 750_000 and a["scale_short"] == 400_000 and a["regenerate"] is True
    assert a["slice_order"] == "deadline-desc" and a["merge_same_core"] is True and a["soft_unsplit"] is True
    assert a["semi"] == {"variant": "artifact", "rp": "divisor", "rp_floor": 2_000_000}
    assert a["generator"]["periods"] == "seed004"  # the workload writer draws from (1, 1000) ms: no clamp
    assert t["epsilon"] == 0 and "regenerate" not in t and t["soft_unsplit"] is False
    assert t["semi"] == {"variant": "text", "rp": "halving", "rp_floor": 4_000_000}
    with pytest.raises(SpecError, match="switch_rate"):
        load_experiment(lookup("spres-table1"), override={"semi": {"switch_rate": "mean-core"}})


def test_scale_short_tasks_follows_the_published_rule():
    ms = 1_000_000
    ts = rtsched.TaskSet(
        [
            rtsched.Task(wcet=300_000, period=2 * ms),  # x2 (4 ms) gives 600 us >= 400 us
            rtsched.Task(wcet=50_000, period=5 * ms),  # 10, 20, 25 ms: 100, 200, 250 us; 40 ms: 400 us
            rtsched.Task(wcet=10_000, period=250 * ms),  # 500 ms: 20 us, 1000 ms: 40 us: the largest
            rtsched.Task(wcet=400_001, period=ms),  # above the threshold: unchanged
            rtsched.Task(wcet=100_000, period=1000 * ms),  # no larger multiple: unchanged
        ]
    )
    out, scaled = spres_table1.scale_short_tasks(ts, 400_000)
    got = [(t.wcet, t.period, t.deadline) for t in out]
    assert got == [
        (600_000, 4 * ms, 4 * ms),
        (400_000, 40 * ms, 40 * ms),
        (40_000, 1000 * ms, 1000 * ms),
        (400_001, ms, ms),
        (100_000, 1000 * ms, 1000 * ms),
    ]
    assert scaled == 3
    assert out.utilization == pytest.approx(ts.utilization)
    assert spres_table1.scale_short_tasks(ts, 0)[1] == 0
