"""RUN and QPS with budgets inflated by overheads (docs/overheads.md, "RUN and QPS"): the two
callers of the one rule — ``analyze --overheads --mechanism run|qps-g|qps-c`` and ``rtsched run
--inflate`` (``rtsched.runtime.inflated_budgets``) — agree, refusals are one line, and
``reproduce spres-fig9``'s helpers (pilot constants, the misses column)."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest
import rtsched
from rtsched import RtschedError, Task, TaskSet
from rtsched.runtime import inflated_budgets

MS = 1_000_000
#: Δsch, Δcxs, Δipi, Δbt, Δev, Δrel in ns: constants as analyze takes them.
VALUES = {
    "schedule_ns": 20_000,
    "context_switch_ns": 5_000,
    "ipi_ns": 10_000,
    "budget_timer_ns": 30_000,
    "release_event_ns": 40_000,
    "release_ns": 15_000,
}


def random_set(rng: random.Random, m: int) -> TaskSet:
    """U drawn in [0.95m, m], whole-millisecond parameters (as spres-fig9 draws them)."""
    from rtsched.runtime import INTEGRAL_MS_PERIODS, integral_ms

    n = rng.randint(m + 1, 3 * m)
    u = min(rng.uniform(0.95, 1.0) * m, 0.999 * n)
    return integral_ms(rtsched.generate(n, u, periods=INTEGRAL_MS_PERIODS, seed=rng.randint(0, 10**6)), m)


@pytest.mark.parametrize("scheduler", ["run", "qps-g", "qps-c"])
def test_analyze_and_run_inflate_agree_on_random_sets(scheduler):
    rng = random.Random(25)
    agreed = {True: 0, False: 0}
    for _ in range(40):
        m = rng.randint(2, 4)
        ts = random_set(rng, m)
        if ts.utilization > m:
            continue
        rep = rtsched.analyze(ts, m, tests=["gfb"], overheads=VALUES, mechanism=scheduler)["overheads"]
        try:
            out = inflated_budgets(ts, scheduler, m, VALUES)
        except RtschedError as e:
            assert not rep["hard"]["schedulable"], str(e)
            assert "\n" not in str(e) and rep["hard"]["reason"] in str(e)
            agreed[False] += 1
            continue
        assert rep["hard"]["schedulable"] and rep["soft"]["schedulable"]
        assert len(out["budgets"]) == len(ts)
        assert all(b > t.wcet for b, t in zip(out["budgets"], ts, strict=True))
        assert out["utilization"] == pytest.approx(rep["hard"]["utilization"])
        assert out["utilization"] <= m
        agreed[True] += 1
    # Both verdicts occur, so the agreement is not vacuous.
    assert agreed[True] > 3 and agreed[False] > 3, agreed


def test_refusals_are_one_line():
    full = TaskSet([Task(wcet=2 * MS, period=3 * MS)] * 3)
    with pytest.raises(RtschedError) as e:
        inflated_budgets(full, "run", 2, VALUES)
    msg = str(e.value)
    assert "inflated utilization" in msg and "exceeds m = 2" in msg and "\n" not in msg
    with pytest.raises(RtschedError, match="not gsn-edf"):
        inflated_budgets(full, "gsn-edf", 2, VALUES)
    # A model folder without a model for the scheduler says which models it has.
    with pytest.raises(RtschedError, match="no model for 'run'"):
        inflated_budgets(full, "run", 2, "vm-2cpu-protocol")


def test_cli_run_inflate_refusal_and_budgets_parameter(tmp_path):
    set_file = tmp_path / "full.json"
    rtsched.save(str(set_file), TaskSet([Task(wcet=2 * MS, period=3 * MS)] * 3))
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "rtsched",
            "run",
            str(set_file),
            "--scheduler",
            "qps-c",
            "--cpus",
            "0,1",
            "--inflate",
            json.dumps(VALUES),
            "--duration",
            "50ms",
            "--force",
        ],
        capture_output=True,
        text=True,
    )
    assert p.returncode != 0
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and "inflate: qps-c on 2 CPUs" in err[0] and "exceeds m = 2" in err[0], p.stderr
    # The registry lists the parameter the inflation sets.
    entry = next(s for s in rtsched.runtime.schedulers() if s["name"] == "run")
    assert [q["name"] for q in entry["params"]] == ["budgets"]


def test_a_light_inflated_run_reports_its_inflation():
    ts = TaskSet([Task(wcet=2 * MS, period=10 * MS), Task(wcet=4 * MS, period=20 * MS)])
    res = rtsched.runtime.run_raw(
        ts,
        scheduler="run",
        cpus=[0],
        duration="100ms",
        inflate=VALUES,
        quiet=True,
        preflight=False,
        calibration="skip",
    )
    s = res["summary"]
    inf = s["inflation"]
    assert inf["mechanism"] == "run" and inf["stat"] == "max"
    assert inf["values"]["budget_timer_ns"] == VALUES["budget_timer_ns"]
    assert inf["nominal_utilization"] < inf["utilization"] <= 1
    assert s["jobs"] > 0
    assert "budgets inflated" in rtsched.runtime.format_summary(s)


def test_fig9_pilot_constants_and_misses_column():
    from rtsched.experiments.repro.spres_fig9 import pilot_constants

    summary = {
        "overheads": {
            "schedule": {"max_ns": 1200.0},
            "budget_timer": {"max_ns": 900},
            "tree_events": {"max_ns": 7},
            "not_a_term": {"max_ns": 5},
        }
    }
    assert pilot_constants(summary) == {"schedule_ns": 1200, "budget_timer_ns": 900}
