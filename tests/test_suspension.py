"""Self-suspending tasks through the Python front and the command line: the generator's
--suspension-ratio (docs/generators.md, "Self-suspension")."""

import json

import pytest
import rtsched


def test_generate_suspension_ratio_matches_the_api_and_its_definition(cli, tmp_path):
    out = tmp_path / "s.jsonl"
    code, _, err = cli(
        "generate", "--n", 5, "--util", 2.0, "--seed", 7, "--count", 20, "--suspension-ratio", 0.25,
        "--suspension-segments", 3, "-o", out, "--quiet",
    )  # fmt: skip
    assert code == 0 and err == ""
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    api = rtsched.generate(5, 2.0, seed=7, count=20, suspension_ratio=0.25, suspension_segments=3)
    assert lines == [json.loads(ts.to_json()) for ts in api]
    plain = rtsched.generate(5, 2.0, seed=7, count=20)
    for ts, base in zip(api, plain, strict=True):
        for t, b in zip(ts, base, strict=True):
            # the base task is unchanged; S = round(R (T - C)); the execution segments sum to C
            assert (t.wcet, t.period, t.deadline) == (b.wcet, b.period, b.deadline)
            s = int(0.25 * (t.period - t.wcet) + 0.5)
            assert t.suspension == s
            segs = t.segments
            assert segs is not None and len(segs) == 5
            assert sum(segs[0::2]) == t.wcet and sum(segs[1::2]) == s
    one = rtsched.generate(5, 2.0, seed=7, suspension_ratio=(0.1, 0.3))
    assert all(0.1 <= t.suspension / (t.period - t.wcet) <= 0.3 + 1e-9 for t in one)
    assert rtsched.generate(5, 2.0, seed=7, suspension_ratio="0.1-0.3") == one


@pytest.mark.parametrize(
    "args, words",
    [
        (["--suspension-ratio", "1.5"], "suspension_ratio"),
        (["--suspension-ratio", "0.3-0.1"], "suspension_ratio"),
        (["--suspension-ratio", "abc"], "suspension_ratio"),
        (["--suspension-ratio", "0.2", "--suspension-segments", "1"], "--suspension-segments"),
        (["--suspension-ratio", "0.2", "-o", "x.csv"], "CSV"),
    ],
)
def test_generate_suspension_bad_input_is_one_line(cli, tmp_path, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("generate", "--n", 3, "--util", 1.0, *args)
    lines = err.strip().splitlines()
    assert code != 0 and out == "" and len(lines) == 1 and words in lines[0], err


def test_generate_api_rejects_bad_ratio():
    with pytest.raises(rtsched.RtschedError, match="suspension_ratio"):
        rtsched.generate(3, 1.0, suspension_ratio=2.0)
    with pytest.raises(rtsched.RtschedError, match="suspension_segments"):
        rtsched.generate(3, 1.0, suspension_ratio=0.2, suspension_segments=1)


#: τ0 suspends 3 ns between two 2-ns segments (C = 4, D = 11, T = 12); τ1: C = 3, T = 6.
HAND = {
    "m": 1,
    "tasks": [
        {"name": "s", "wcet": 4, "period": 12, "deadline": 11, "segments": [2, 3, 2]},
        {"wcet": 3, "period": 6},
    ],
}


def test_analyze_says_suspension_oblivious(cli, tmp_path):
    f = tmp_path / "s.json"
    f.write_text(json.dumps(HAND))
    code, out, err = cli("analyze", f, "--json")
    assert code == 0, err
    r = json.loads(out)
    # Oblivious, but la (Liu & Anderson, ECRTS 2013: suspension-aware) and gedf (both).
    aware = {"la": "aware", "gedf": "oblivious+aware"}
    assert r["results"] and all(res["suspension"] == aware.get(k, "oblivious") for k, res in r["results"].items())
    # Every verdict is the verdict on the converted set, C' = C + S = 7 (here U' = 13/12 > 1).
    conv = tmp_path / "c.json"
    conv.write_text(
        json.dumps({"m": 1, "tasks": [{"wcet": 7, "period": 12, "deadline": 11}, {"wcet": 3, "period": 6}]})
    )
    code, out2, _ = cli("analyze", conv, "--json")
    want = json.loads(out2)["results"]
    got = {k: {a: b for a, b in res.items() if a != "suspension"} for k, res in r["results"].items()}
    assert {k: v for k, v in got.items() if k not in aware} == {k: v for k, v in want.items() if k not in aware}
    assert want["edf_uni"]["schedulable"] is False
    code, out, _ = cli("analyze", f)
    assert code == 0 and "suspension-oblivious" in out
    plain = tmp_path / "p.json"
    plain.write_text(json.dumps({"m": 1, "tasks": [{"wcet": 4, "period": 12}]}))
    code, out, _ = cli("analyze", plain, "--json")
    assert all("suspension" not in res for res in json.loads(out)["results"].values())
    # S counted as execution: C + S = 13 > T = 12 is refused by every test (soft real-time too).
    bad = tmp_path / "b.json"
    bad.write_text(json.dumps({"m": 1, "tasks": [{"wcet": 4, "period": 12, "deadline": 11, "segments": [2, 9, 2]}]}))
    code, out, _ = cli("analyze", bad, "--json")
    assert all(res["schedulable"] is False for res in json.loads(out)["results"].values())


def test_simulate_executes_the_hand_worked_suspension(cli, tmp_path):
    f = tmp_path / "s.json"
    f.write_text(json.dumps(HAND))
    trace = tmp_path / "t.jsonl"
    code, out, err = cli("simulate", f, "--scheduler", "gedf", "--horizon", "12ns", "--json", "--trace", trace)
    assert code == 0, err
    s = json.loads(out)
    assert (s["suspensions"], s["suspension_ns"], s["deadline_misses"]) == (1, 3, 0)
    recs = [json.loads(x) for x in trace.read_text().splitlines()[1:]]
    assert {"t": 5, "ev": "suspend", "cpu": 0, "task": 0, "job": 0} in recs
    assert {"t": 8, "ev": "resume", "task": 0, "job": 0} in recs
    api = rtsched.simulate(rtsched.load(f), horizon=12, draw_suspensions=True, seed=4)
    assert api["suspensions"] == 1 and 0 <= api["suspension_ns"] <= 3
    code, out, _ = cli("simulate", f, "--scheduler", "gedf", "--horizon", "12ns")
    assert "self-suspensions 1" in out


def test_simulate_spres_runs_suspensions_and_the_text_summary_prints_them(cli, tmp_path):
    f = tmp_path / "s.json"
    f.write_text(json.dumps(HAND))
    code, out, err = cli("simulate", f, "--scheduler", "spres", "--m", 2, "--horizon", "12ns", "--json")
    assert code == 0, err
    s = json.loads(out)
    assert (s["suspensions"], s["suspension_ns"]) == (1, 3)
    code, out, err = cli("simulate", f, "--scheduler", "spres", "--m", 2, "--horizon", "12ns")
    assert code == 0, err
    assert "self-suspensions 1, time suspended 3 ns" in out, out


RUN_SET = {
    "m": 1,
    "tasks": [
        {"name": "s", "wcet": "400us", "period": "20ms", "segments": ["200us", "2ms", "200us"]},
        {"wcet": "300us", "period": "10ms"},
    ],
}


def test_run_text_summary_prints_the_suspensions(cli, tmp_path):
    import os

    cpu = sorted(os.sched_getaffinity(0))[0]
    f = tmp_path / "r.json"
    f.write_text(json.dumps(RUN_SET))
    code, out, err = cli("run", f, "--scheduler", "gsn-edf", "--cpus", cpu, "--duration", "100ms", "--json")
    assert code == 0, err
    s = json.loads(out)
    assert s["suspensions"] > 0 and s["suspension_ns"] > 0
    code, out, err = cli("run", f, "--scheduler", "gsn-edf", "--cpus", cpu, "--duration", "100ms")
    assert code == 0, err
    assert "self-suspensions " in out and "time suspended " in out, out
    # A set without segments prints no such line.
    f2 = tmp_path / "plain.json"
    f2.write_text(json.dumps({"m": 1, "tasks": [{"wcet": "300us", "period": "10ms"}]}))
    code, out, err = cli("run", f2, "--scheduler", "gsn-edf", "--cpus", cpu, "--duration", "50ms")
    assert code == 0, err
    assert "self-suspensions" not in out, out


def test_simulate_refuses_what_it_does_not_model_in_one_line(cli, tmp_path):
    f = tmp_path / "s.json"
    f.write_text(json.dumps(HAND))
    for sched in ("llf", "run"):
        code, out, err = cli("simulate", f, "--scheduler", sched, "--m", 2)
        lines = err.strip().splitlines()
        assert code == 2 and out == "" and len(lines) == 1 and "field 'segments'" in lines[0], err


def test_simulate_rtws_runs_segments_as_gedf(cli, tmp_path):
    # On sequential tasks RTWS is G-EDF, suspensions included (docs/mechanisms/rtws.md).
    f = tmp_path / "s.json"
    f.write_text(json.dumps(HAND))
    got = {}
    for sched in ("rtws", "gedf"):
        code, out, err = cli("simulate", f, "--scheduler", sched, "--m", 1, "--json")
        assert code == 0, err
        s = json.loads(out)
        got[sched] = (s["suspensions"], s["suspension_ns"], s["deadline_misses"], s["jobs"], s["per_task"])
    assert got["rtws"] == got["gedf"] and got["rtws"][0] > 0, got


def _hand_placement(budget0: int) -> dict:
    res = [
        {"task": 0, "budget": budget0, "period": 20, "deadline": 20, "offset": 0, "part": 1, "parts": 1},
        {"task": 1, "budget": 10, "period": 20, "deadline": 20, "offset": 0, "part": 1, "parts": 1},
    ]
    tasks = [{"task": t, "period_ratio": 1, "parts": 1} for t in (0, 1)]
    return {"m": 1, "schedulable": True, "heuristic": "hand", "cpus": [{"cpu": 0, "reservations": res}], "tasks": tasks}


def test_spres_suspension_rule_keep_and_donate_through_both_front_ends(cli, tmp_path):
    """SP-RES's `suspension` parameter (docs/spres.md, "Self-suspending jobs"): the hand-worked
    set of crates/sim/tests/spres_suspension_rule.rs (τ0 = [2, suspend 3, 2], τ1 C = 10, both
    D = T = 20, budgets C, CASH on): `keep` finishes τ0, `donate` lends its budget to τ1 and
    τ0's hard reservation misses; `--soft` serves it in background. The runtime takes the same
    name, and both refuse `donate` without CASH in one line."""
    f = tmp_path / "s.json"
    f.write_text(
        json.dumps({"m": 1, "tasks": [{"wcet": 4, "period": 20, "segments": [2, 3, 2]}, {"wcet": 10, "period": 20}]})
    )
    pl = tmp_path / "p.json"
    pl.write_text(json.dumps(_hand_placement(4)))
    base = ["simulate", f, "--scheduler", "spres", "--placement", pl, "--horizon", "20ns", "--json", "--cash"]
    misses = {}
    for rule in ("keep", "donate"):
        code, out, err = cli(*base, "--param", f"suspension={rule}")
        assert code == 0, err
        s = json.loads(out)
        assert s["suspensions"] == 1
        misses[rule] = s["deadline_misses"]
    assert misses == {"keep": 0, "donate": 1}
    code, out, err = cli(*base, "--soft", "--param", "suspension=donate")
    assert code == 0 and json.loads(out)["deadline_misses"] == 0, err
    # The same set with τ0's budget C + S = 7: donate serves the wake-up at the bound.
    pl.write_text(json.dumps(_hand_placement(7)))
    code, out, err = cli(*base, "--param", "suspension=donate")
    assert code == 0 and json.loads(out)["deadline_misses"] == 0, err
    # Without CASH: refused in one line, by both engines.
    code, out, err = cli("simulate", f, "--scheduler", "spres", "--placement", pl, "--param", "suspension=donate")
    assert code != 0 and "needs cash=true" in err and len(err.strip().splitlines()) == 1, err
    r = tmp_path / "r.json"
    r.write_text(json.dumps(RUN_SET))
    code, out, err = cli(
        "run", r, "--scheduler", "spres", "--suspension", "donate", "--cash", "false", "--no-calibrate"
    )
    errors = [x for x in err.splitlines() if "error" in x]
    assert code != 0 and len(errors) == 1 and errors[0].endswith("needs cash=true"), err
    code, out, err = cli("simulate", f, "--scheduler", "spres", "--placement", pl, "--param", "suspension=lend")
    assert code != 0 and "suspension" in err, err


def test_run_spres_donate_executes_suspensions(cli, tmp_path):
    import os

    cpu = sorted(os.sched_getaffinity(0))[0]
    f = tmp_path / "r.json"
    f.write_text(json.dumps(RUN_SET))
    run = ["run", f, "--scheduler", "spres", "--cpus", cpu, "--duration", "100ms", "--json", "--soft", "true"]
    code, out, err = cli(*run, "--param", "suspension=donate")
    assert code == 0, err
    s = json.loads(out)
    assert s["params"]["suspension"] == "donate" and s["suspensions"] > 0 and s["accounting_error"] is None
