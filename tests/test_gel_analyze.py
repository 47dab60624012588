"""The GEL-PL bounds (docs/analysis-global.md, "GEL-PL response-time bounds") through the command
line and the Python API: every spelling of the names, the bounds worked out by hand in
crates/analysis/tests/global_gel.rs, not-bounded sets, and sweeps' method names."""

from __future__ import annotations

import json

import pytest
import rtsched

GEL = ["gel_pl_gedf", "gel_pl_gfl"]

#: m = 2, three tasks (C, D, T) = (2, 3, 3): U = 2, s* = 4, every bound 0 + 4 - 1 + 2 = 5 ns
#: under G-EDF and G-FL alike (equal WCETs).
HAND = {"m": 2, "tasks": [{"wcet": 2, "period": 3}] * 3}

#: m = 2, (1,4,4), (3,4,4), (4,4,4): G-FL's s* = 21/4 and every bound ceil(29/4) = 8 ns.
GFL = {"m": 2, "tasks": [{"wcet": 1, "period": 4}, {"wcet": 3, "period": 4}, {"wcet": 4, "period": 4}]}


def test_every_gel_name_is_available_and_runs_when_named(cli, tmp_path):
    """The GEL-PL bounds run when named (their verdict is gedf_srt's, which runs by default)."""
    assert set(GEL) <= set(rtsched.tests_available())
    f = tmp_path / "ts.json"
    f.write_text(json.dumps(HAND))
    code, out, err = cli("analyze", f, "--json")
    assert code == 0, err
    results = json.loads(out)["results"]
    assert "gedf_srt" in results and not set(GEL) & set(results)
    code, out, err = cli("analyze", f, "--json", *[x for name in GEL for x in ("--test", name)])
    assert code == 0, err
    results = json.loads(out)["results"]
    for name in GEL:
        assert results[name] == {"schedulable": True, "gave_up": False, "response_times_ns": [5, 5, 5]}


@pytest.mark.parametrize("spelling", ["gel_pl_gedf", "GEL-PL-GFL", "gel-pl-gedf"])
def test_analyze_test_name_works_in_the_cli(cli, tmp_path, spelling):
    f = tmp_path / "ts.json"
    f.write_text(json.dumps(GFL))
    code, out, err = cli("analyze", f, "--test", spelling, "--json")
    assert code == 0, err
    results = json.loads(out)["results"]
    canonical = spelling.lower().replace("-", "_")
    assert list(results) == [canonical]
    r = results[canonical]
    assert r["schedulable"] is True and r["gave_up"] is False
    if canonical == "gel_pl_gfl":
        assert r["response_times_ns"] == [8, 8, 8]
    code, out, err = cli("analyze", f, "--test", spelling)
    assert code == 0, err
    assert canonical in out


def test_not_bounded_sets_have_no_bounds():
    over = rtsched.TaskSet([rtsched.Task(wcet=3, period=4) for _ in range(3)])  # U = 9/4 > 2
    res = rtsched.analyze(over, m=2, tests=GEL)["results"]
    for name in GEL:
        assert res[name] == {"schedulable": False, "gave_up": False, "response_times_ns": [None] * 3}


def test_analyze_many_bounds_and_fair_lateness():
    sets = rtsched.generate(8, 3.5, seed=12, count=100, m=4)
    rows = rtsched.analyze_many(sets, tests=GEL)
    assert len(rows) == 100
    for ts, r in zip(sets, rows, strict=True):
        res = r["results"]
        deadlines = [t.deadline for t in ts]
        for name in GEL:
            assert res[name]["schedulable"] is True
            assert all(b >= t.wcet for b, t in zip(res[name]["response_times_ns"], ts, strict=True))
        # G-FL: the same lateness bound for every task.
        lateness = {b - d for b, d in zip(res["gel_pl_gfl"]["response_times_ns"], deadlines, strict=True)}
        assert len(lateness) == 1


def test_a_sweep_gives_the_verdicts_analyze_gives():
    from test_methods import sweep_verdicts

    sets = rtsched.generate(8, 2.85, seed=5, count=30, m=3)
    sweep = sweep_verdicts(sets[0], ["gel_pl_gfl"])
    assert len(sweep["gel_pl_gfl"]) == 30
    for i, ts in enumerate(sets):
        res = rtsched.analyze(ts, tests=["gel-pl-gfl"])["results"]
        assert sweep["gel_pl_gfl"][i] == res["gel_pl_gfl"]["schedulable"]
