"""SP-RES placements that hold when run (issue 23): `partition --overheads` inflates budgets by
an overhead model with the rule `analyze --overheads --mechanism spres` judges with, the
placement says so, the simulator and the runtime accept its shorter periods, `run` warns about
hard placements made without overheads, and the simulator's background rule is an option named
as the runtime's. Runs are <= 0.2 s at normal priority; no timing is asserted."""

import json
import os

import pytest
import rtsched
from rtsched._core import RtschedError
from rtsched.runtime import run_raw

#: Plausible constants (ns): what a measured model gives, without measuring.
CONSTANTS = {
    "release_ns": 20_000,
    "release_event_ns": 50_000,
    "schedule_ns": 5_000,
    "context_switch_ns": 1_000,
    "budget_enforcement_ns": 5_000,
    "migration_timer_ns": 10_000,
    "subtask_activation_ns": 10_000,
}


def split_set():
    # Brandenburg & Gül, RTSS 2016, Fig. 1 scaled to ms, lighter so that overheads fit.
    return rtsched.TaskSet([rtsched.Task(wcet="9ms", period="15ms") for _ in range(3)])


def budgets(p):
    out = {}
    for c in p["cpus"]:
        for r in c["reservations"]:
            out[r["task"]] = out.get(r["task"], 0) + r["budget"]
    return out


def test_a_placement_with_overheads_inflates_budgets_and_says_with_which_model():
    ts = split_set()
    plain = rtsched.partition(ts, 2, "spres")
    p = rtsched.partition(ts, 2, "spres", overheads=CONSTANTS, mechanism="spres")
    assert plain["schedulable"] and p["schedulable"]
    assert "overheads" not in plain
    o = p["overheads"]
    assert (o["model"], o["mechanism"], o["stat"]) == ("given", "spres", "max")
    assert o["values"]["release_event_ns"] == 50_000
    # Every task's budgets grow by at least its per-job scheduling costs.
    for t, b in budgets(p).items():
        assert b >= ts[t].wcet + 2 * (CONSTANTS["schedule_ns"] + CONSTANTS["context_switch_ns"]), (t, b)
    # The periods are the inflated ones (T − Δev), never longer than T.
    for c in p["cpus"]:
        for r in c["reservations"]:
            assert r["period"] <= ts[r["task"]].period - CONSTANTS["release_event_ns"]
    # One rule: analyze --overheads --mechanism spres says schedulable exactly when it places.
    a = rtsched.analyze(ts, 2, overheads=CONSTANTS, mechanism="spres")
    assert a["overheads"]["hard"]["schedulable"] is True
    heavy = dict(CONSTANTS, release_event_ns=5_000_000)
    q = rtsched.partition(ts, 2, "spres", overheads=heavy, mechanism="spres")
    a = rtsched.analyze(ts, 2, overheads=heavy, mechanism="spres")
    assert q["schedulable"] is False and a["overheads"]["hard"]["schedulable"] is False
    assert q["reason"] and q["overheads"]["values"]["release_event_ns"] == 5_000_000


def test_the_inflated_placement_simulates_without_misses():
    ts = split_set()
    p = rtsched.partition(ts, 2, "spres", overheads=CONSTANTS, mechanism="spres")
    s = rtsched.simulate(ts, 2, "spres", placement=p, horizon="300ms")
    assert s["deadline_misses"] == 0 and s["jobs"] > 0
    # A placement whose periods are shorter but that does not say it was inflated is refused.
    bad = json.loads(json.dumps(p))
    del bad["overheads"]
    with pytest.raises(RtschedError, match="period"):
        rtsched.simulate(ts, 2, "spres", placement=bad, horizon="10ms")


def test_the_cli_places_with_a_model_file_and_a_model_directory(cli, tmp_path):
    f = tmp_path / "ts.json"
    f.write_text(split_set().to_json())
    d = tmp_path / "models"
    d.mkdir()
    model = d / "constants.json"
    model.write_text(json.dumps(CONSTANTS))
    code, out, err = cli("partition", f, "--m", "2", "--heuristic", "spres", "--overheads", model)
    assert code == 0, err
    assert "budgets inflated by the max overheads of" in out and "(spres)" in out
    code, out, err = cli(
        "partition", f, "--m", "2", "--heuristic", "spres", "--overheads", model, "--stat", "avg", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["overheads"]["model"] == str(model)
    # A directory without a model measured under spres: one line naming it.
    code, out, err = cli("partition", f, "--m", "2", "--heuristic", "spres", "--overheads", d)
    assert code != 0 and "no model measured under spres" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--heuristic", "pedf_ffd", "--overheads", "M"], "SP-RES cascade"),
        (["--heuristic", "spres", "--overheads", "M", "--mechanism", "gsn-edf"], "spres"),
        (["--heuristic", "spres", "--stat", "avg"], "only with --overheads"),
        (["--heuristic", "spres", "--mechanism", "spres"], "only with --overheads"),
    ],
)
def test_bad_overhead_options_are_one_line(cli, tmp_path, extra, words):
    f = tmp_path / "ts.json"
    f.write_text(split_set().to_json())
    m = tmp_path / "m.json"
    m.write_text(json.dumps(CONSTANTS))
    code, out, err = cli("partition", f, "--m", "2", *[str(m) if x == "M" else x for x in extra])
    assert code != 0 and words in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def _hard_without_overheads(text, pairs):
    """The placement warning the runtime decides for a spres run of ``split_set()`` on 2 CPUs."""
    request = {"workload": split_set(), "scheduler": "spres", "duration_ns": 1, "cpus": [0, 1], "force": True}
    plan = rtsched._core.prepare_run({**request, "placement": text, "params": pairs})
    return plan.placement_warnings[0] if plan.placement_warnings else None


def test_run_warns_about_hard_placements_made_without_overheads():
    ts = split_set()
    plain = json.dumps(rtsched.partition(ts, 2, "spres"))
    inflated = json.dumps(rtsched.partition(ts, 2, "spres", overheads=CONSTANTS, mechanism="spres"))
    w = _hard_without_overheads(plain, [])
    assert w is not None and "made without overheads" in w and "partition --overheads" in w
    assert _hard_without_overheads(inflated, []) is None
    assert _hard_without_overheads(plain, [("soft", "true")]) is None
    # Only split tasks (always soft): nothing hard to warn about — checked on the typed placement
    # in crates/runtime/src/request.rs (`hard_reservations_without_overheads_are_warned_about`);
    # here the hand-edited placement (parts that no reservations serve) is refused when read,
    # before any warning.
    only_split = json.loads(plain)
    only_split["tasks"] = [dict(t, parts=2) for t in only_split["tasks"]]
    with pytest.raises(RtschedError, match="'parts'"):
        _hard_without_overheads(json.dumps(only_split), [])


def test_run_prints_the_warning_once(cli, tmp_path):
    ts = rtsched.TaskSet([rtsched.Task(wcet="1ms", period="10ms")])
    f = tmp_path / "ts.json"
    f.write_text(ts.to_json())
    pl = tmp_path / "pl.json"
    pl.write_text(json.dumps(rtsched.partition(ts, 1, "spres")))
    cpu = sorted(os.sched_getaffinity(0))[0]
    code, out, err = cli("run", f, "--scheduler", "spres", "--placement", pl, "--cpus", cpu, "--duration", "100ms")
    assert code == 0, err
    assert err.count("made without overheads") == 1
    assert "budget overruns" in out
    # The summary's warnings are what was printed, this one included.
    s = run_raw(ts, scheduler="spres", placement=str(pl), cpus=[cpu], duration="50ms", quiet=True)["summary"]
    assert sum("made without overheads" in w for w in s["warnings"]) == 1, s["warnings"]


def test_the_simulators_background_rule_is_named_as_the_runtimes():
    ts = rtsched.TaskSet([rtsched.Task(wcet="6ms", period="20ms"), rtsched.Task(wcet="6ms", period="20ms")])
    p = {
        "m": 1,
        "schedulable": True,
        "heuristic": "hand",
        "cpus": [
            {
                "cpu": 0,
                "reservations": [
                    {"task": t, "budget": 2_000_000, "period": 20_000_000, "deadline": 20_000_000, "offset": 0}
                    | {"part": 1, "parts": 1}
                    for t in (0, 1)
                ],
            }
        ],
        "tasks": [{"task": t, "period_ratio": 1, "parts": 1} for t in (0, 1)],
    }
    kw = dict(placement=p, horizon="20ms", soft=True)
    ee = rtsched.simulate(ts, 1, "spres", background="earliest-end", **kw)
    rr = rtsched.simulate(ts, 1, "spres", background="round-robin", rr_quantum="1ms", **kw)
    default = rtsched.simulate(ts, 1, "spres", **kw)
    assert rr["preemptions"] > ee["preemptions"]
    assert default["preemptions"] == rr["preemptions"], "the default is the runtime's: round-robin, 1 ms"
    names = [p["name"] for p in next(e for e in rtsched.schedulers() if e["name"] == "spres")["params"]]
    assert "background" in names
    with pytest.raises(RtschedError, match="background"):
        rtsched.simulate(ts, 1, "spres", background="fifo", **kw)
    with pytest.raises(RtschedError, match="background"):
        rtsched.simulate(ts, 1, "gedf", background="round-robin", horizon="20ms")
