"""The global fixed-priority tests (docs/analysis-global.md, "Global fixed priority") through the
command line and the Python API: every spelling of a name, the verdicts and bounds worked out
by hand in crates/analysis/tests/global_fp.rs, and sweeps' method names."""

from __future__ import annotations

import json

import pytest
import rtsched

GFP = ["gfp_bc", "gfp_bc_slack", "gfp_guan", "gfp_rm_bc", "gfp_rm_bc_slack", "gfp_rm_guan"]

#: m = 2, (C, D, T) = (2,2,2), (1,3,3), (2,3,3): the slack-aware bounds are 2, 1, 3 (accepted);
#: without the slack the third task's bound exceeds 3 (rejected).
HAND = {"m": 2, "tasks": [{"wcet": 2, "period": 2}, {"wcet": 1, "period": 3}, {"wcet": 2, "period": 3}]}


def test_every_gfp_name_is_available():
    assert set(GFP) <= set(rtsched.tests_available())


def test_the_default_list_has_each_gfp_test_once_under_dm(cli, tmp_path):
    """Without --test, each G-FP test runs under deadline-monotonic priorities; the
    rate-monotonic variants run only when named."""
    f = tmp_path / "ts.json"
    f.write_text(json.dumps(HAND))
    code, out, err = cli("analyze", f, "--json")
    assert code == 0, err
    names = set(json.loads(out)["results"])
    assert {"gfp_bc", "gfp_bc_slack", "gfp_guan", "gedf"} <= names
    assert not names & {"gfp_rm_bc", "gfp_rm_bc_slack", "gfp_rm_guan"}


@pytest.mark.parametrize("spelling", ["gfp-bc", "GFP_BC_SLACK", "gfp-guan", "gfp-rm-bc"])
def test_analyze_test_name_works_in_the_cli(cli, tmp_path, spelling):
    f = tmp_path / "ts.json"
    f.write_text(json.dumps(HAND))
    code, out, err = cli("analyze", f, "--test", spelling, "--json")
    assert code == 0, err
    results = json.loads(out)["results"]
    canonical = spelling.lower().replace("-", "_")
    assert list(results) == [canonical]
    r = results[canonical]
    if canonical in ("gfp_bc", "gfp_rm_bc"):
        assert r == {"schedulable": False, "gave_up": False, "response_times_ns": [2, 1, None]}
    else:
        assert r == {"schedulable": True, "gave_up": False, "response_times_ns": [2, 1, 3]}
    code, out, err = cli("analyze", f, "--test", spelling)
    assert code == 0, err
    assert canonical in out and ("not schedulable" in out) == (canonical in ("gfp_bc", "gfp_rm_bc"))


def test_analyze_many_runs_the_gfp_tests_and_they_dominate_in_order():
    sets = rtsched.generate(8, 3.0, seed=26, count=200, m=4)
    rows = rtsched.analyze_many(sets, tests=["gfp_bc", "gfp_bc_slack", "gfp_guan"])
    assert len(rows) == 200
    accepted = {name: sum(r["results"][name]["schedulable"] is True for r in rows) for name in GFP[:3]}
    for r in rows:
        res = r["results"]
        # Bertogna & Cirinei without slack => with slack => Guan et al. (the papers' dominance)
        if res["gfp_bc"]["schedulable"]:
            assert res["gfp_bc_slack"]["schedulable"]
        if res["gfp_bc_slack"]["schedulable"]:
            assert res["gfp_guan"]["schedulable"]
            bounds = zip(res["gfp_bc_slack"]["response_times_ns"], res["gfp_guan"]["response_times_ns"], strict=True)
            assert all(b <= a for a, b in bounds)
    assert 0 < accepted["gfp_bc"] <= accepted["gfp_bc_slack"] <= accepted["gfp_guan"] < 200, accepted


def test_a_sweep_gives_the_verdicts_analyze_gives():
    """Sweeps take the same names (tests/test_methods.py's point and sets)."""
    from test_methods import sweep_verdicts

    sets = rtsched.generate(8, 2.85, seed=5, count=30, m=3)
    sweep = sweep_verdicts(sets[0], ["gfp_guan", "GFP-RM-BC-SLACK"])
    assert len(sweep["gfp_guan"]) == 30
    for i, ts in enumerate(sets):
        res = rtsched.analyze(ts, tests=["gfp-guan", "gfp_rm_bc_slack"])["results"]
        assert sweep["gfp_guan"][i] == res["gfp_guan"]["schedulable"]
        assert sweep["GFP-RM-BC-SLACK"][i] == res["gfp_rm_bc_slack"]["schedulable"]
