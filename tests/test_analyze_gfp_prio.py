"""Explicit priorities for the global fixed-priority tests (docs/cli.md, analyze; docs/analysis-global.md,
"Global fixed priority"): ``rtsched analyze --priorities dm|rm|RANKS`` and ``rtsched.analyze(...,
priorities=...)``, on the hand-worked set of crates/analysis/tests/global_fp.rs, and the errors, which
name the field and the task."""

from __future__ import annotations

import json

import pytest
import rtsched

#: m = 2, (C, D, T) = (2,2,2), (1,3,3), (2,3,3): under DM gfp_bc_slack proves bounds 2, 1, 3; with
#: task 0 last (ranks 2,0,1) it misses (both CPUs are busy at 0) and every G-FP test rejects it.
HAND = {"m": 2, "tasks": [{"wcet": 2, "period": 2}, {"wcet": 1, "period": 3}, {"wcet": 2, "period": 3}]}
TESTS = ["gfp_bc_slack", "gfp_guan", "gfp_rm_bc_slack"]


def _set() -> rtsched.TaskSet:
    return rtsched.loads(json.dumps(HAND), "json")


@pytest.mark.parametrize("prio", ["2,0,1", " 2, 0, 1 ", [2, 0, 1], (2, 0, 1)])
def test_explicit_priorities_change_the_dm_named_tests_only(prio):
    ts = _set()
    dm = rtsched.analyze(ts, tests=TESTS)["results"]
    r = rtsched.analyze(ts, tests=TESTS, priorities=prio)["results"]
    assert dm["gfp_bc_slack"] == {"schedulable": True, "gave_up": False, "response_times_ns": [2, 1, 3]}
    for name in ("gfp_bc_slack", "gfp_guan"):
        assert r[name]["schedulable"] is False, name
        assert r[name]["response_times_ns"][0] is None
    assert r["gfp_rm_bc_slack"] == dm["gfp_rm_bc_slack"], "the rm-named test keeps rate-monotonic priorities"


def test_dm_and_rm_by_name():
    ts = _set()
    assert rtsched.analyze(ts, tests=TESTS, priorities="DM") == rtsched.analyze(ts, tests=TESTS)
    rm = rtsched.analyze(ts, tests=["gfp_guan"], priorities="rm")["results"]["gfp_guan"]
    assert rm == rtsched.analyze(ts, tests=["gfp_rm_guan"])["results"]["gfp_rm_guan"]


def test_analyze_many_takes_one_assignment_for_every_set():
    rows = rtsched.analyze_many([_set(), _set()], tests=["gfp_guan"], priorities=[2, 0, 1])
    assert [r["results"]["gfp_guan"]["schedulable"] for r in rows] == [False, False]


@pytest.mark.parametrize(
    ("prio", "words"),
    [
        ("0,x,2", ["task 1", "priorities", '"x"']),
        ("0,1", ["priorities", "2 priorities for 3 tasks"]),
        ("edf", ["priorities", "dm, rm"]),
        ([0, -1, 2], ["task 1", "priorities"]),
        ([0, True, 2], ["task 1", "priorities"]),
        (3, ["priorities"]),
    ],
)
def test_bad_priorities_name_the_field_and_task(prio, words):
    with pytest.raises(rtsched.RtschedError) as e:
        rtsched.analyze(_set(), tests=["gfp_guan"], priorities=prio)
    for w in words:
        assert w in str(e.value), str(e.value)


def test_cli_priorities(cli, tmp_path):
    f = tmp_path / "ts.json"
    f.write_text(json.dumps(HAND))
    code, out, err = cli("analyze", f, "--test", "gfp-bc-slack", "--priorities", "2,0,1", "--json")
    assert code == 0, err
    assert json.loads(out)["results"]["gfp_bc_slack"]["schedulable"] is False
    code, out, err = cli("analyze", f, "--test", "gfp-bc-slack", "--priorities", "dm", "--json")
    assert code == 0, err
    assert json.loads(out)["results"]["gfp_bc_slack"]["schedulable"] is True
    code, out, err = cli("analyze", f, "--test", "gfp-bc-slack", "--priorities", "0,1")
    assert code != 0
    assert "priorities" in err and "2 priorities for 3 tasks" in err and "Traceback" not in err


def test_cli_priorities_on_a_jsonl_batch(cli, tmp_path):
    """The Rust batch path: each line gets the assignment; a line it does not fit is an invalid line."""
    f = tmp_path / "sets.jsonl"
    four = {"m": 2, "tasks": HAND["tasks"] + [{"wcet": 1, "period": 9}]}
    f.write_text(json.dumps(HAND) + "\n" + json.dumps(four) + "\n")
    code, out, err = cli("analyze", f, "--test", "gfp_guan", "--priorities", "2,0,1", "--json")
    lines = [json.loads(x) for x in out.splitlines()]
    assert lines[0]["results"]["gfp_guan"]["schedulable"] is False
    assert "priorities" in lines[1]["error"] and "3 priorities for 4 tasks" in lines[1]["error"]
    assert code == 1
