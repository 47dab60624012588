"""`rtsched simulate --scheduler gfp|gfl` with `--param`, and `rtsched.simulate(params=...)`:
every output works as for gedf, parameters reach the simulator, bad ones exit 2 naming them."""

import csv
import json

import pytest
import rtsched

# The hand-worked G-FP schedule of crates/sim/tests/gfp_gfl.rs: τ0 = (C 2, T 5), τ1 = (6, 8),
# τ2 = (6, 20) on two CPUs over 15 ns. DM (= RM here): 6 jobs, no miss, one preemption (τ2.0
# at 5), one migration (τ2.0 at 6), largest response time 9. With the ranks reversed
# (priorities=2,1,0) τ0.0 waits until 6 and misses its deadline at 5.
TASKS = [(2, 5), (6, 8), (6, 20)]


def write(tmp_path, name="ts.json"):
    p = tmp_path / name
    p.write_text(json.dumps({"m": 2, "tasks": [{"wcet": c, "period": t} for c, t in TASKS]}))
    return p


def taskset():
    return rtsched.TaskSet([rtsched.Task(wcet=c, period=t) for c, t in TASKS], m=2)


def test_gfp_schedule_through_the_api_with_params():
    for params in (None, {"priorities": "dm"}, {"priorities": "rm"}):
        s = rtsched.simulate(taskset(), 2, "gfp", horizon=15, params=params)
        got = (s["jobs"], s["deadline_misses"], s["preemptions"], s["migrations"], s["max_response_time_ns"])
        assert got == (6, 0, 1, 1, 9), params
    s = rtsched.simulate(taskset(), 2, "gfp", horizon=15, params={"priorities": "2,1,0"})
    assert s["deadline_misses"] >= 1 and s["per_task"][0]["deadline_misses"] >= 1


def test_cli_param_reaches_the_simulator_and_every_output_is_written(cli, tmp_path):
    f = write(tmp_path)
    for sched, extra in (("gfp", ["--param", "priorities=2,1,0"]), ("gfl", []), ("edzl", []), ("gedf", [])):
        out = tmp_path / sched
        out.mkdir()
        files = {
            "--trace": out / "t.jsonl",
            "--job-csv": out / "j.csv",
            "--gantt": out / "g.svg",
            "--perfetto": out / "p.json",
            "--sched-trace": out / "s.bin",
        }
        args = [x for k, p in files.items() for x in (k, p)]
        code, stdout, err = cli("simulate", f, "--scheduler", sched, "--horizon", "15ns", *extra, *args, "--json")
        assert code == 0, err
        s = json.loads(stdout)
        assert s["jobs"] == 6
        for p in files.values():
            assert p.stat().st_size > 0, p
        rows = list(csv.DictReader(open(files["--job-csv"])))
        assert len(rows) == 6
        recs = [json.loads(line) for line in open(files["--trace"])]
        assert recs[0]["ev"] == "meta" and sum(r["ev"] == "release" for r in recs) == 6
        if sched == "gfp":  # the reversed ranks reached the simulator: τ0.0 misses
            assert s["deadline_misses"] >= 1
        else:
            assert s["deadline_misses"] == 0
    code, stdout, err = cli("simulate", f, "--scheduler", "gfp", "--horizon", "15ns")
    assert code == 0 and "gfp on 2 processors" in stdout, err


@pytest.mark.parametrize(
    "args, words",
    [
        (["--scheduler", "gfp", "--param", "priorities=1,2"], "gfp: parameter priorities: 2 priorities for 3 tasks"),
        (["--scheduler", "gfp", "--param", "priorities=x"], "gfp: parameter priorities: dm, rm or one integer rank"),
        (["--scheduler", "gfl", "--param", "priorities=rm"], "applies only to --scheduler gfp, not gfl"),
        (["--scheduler", "gedf-quantum", "--param", "quantum=2ms", "--quantum", "1ms"], "given twice"),
        (["--scheduler", "gfp", "--param", "priorities"], "use KEY=VALUE"),
    ],
)
def test_bad_params_exit_2_naming_them(cli, tmp_path, args, words):
    code, out, err = cli("simulate", write(tmp_path), *args, "--horizon", "15ns")
    assert code == 2, (out, err)
    assert words in err and "Traceback" not in err, err


def test_edzl_meets_what_gedf_misses():
    # Three tasks (C 2, T 3) on two CPUs: G-EDF misses one job, EDZL none (crates/sim/tests/edzl.rs).
    ts = rtsched.TaskSet([rtsched.Task(wcet=2, period=3) for _ in range(3)], m=2)
    assert rtsched.simulate(ts, 2, "gedf", horizon=3)["deadline_misses"] == 1
    s = rtsched.simulate(ts, 2, "edzl", horizon=3)
    assert (s["deadline_misses"], s["preemptions"], s["migrations"]) == (0, 1, 1)
    with pytest.raises(rtsched.RtschedError, match="not supported for edzl"):
        rtsched.simulate(ts, 2, "edzl", horizon=3, overheads={"schedule_ns": 1})


def test_gedf_quantum_parameters_by_param_equal_the_named_options():
    a = rtsched.simulate(taskset(), 2, "gedf-quantum", horizon=40, quantum=2, staggered=True)
    b = rtsched.simulate(taskset(), 2, "gedf-quantum", horizon=40, params={"quantum": "2ns", "staggered": True})
    assert a == b
    with pytest.raises(rtsched.RtschedError, match="argument 'params'"):
        rtsched.simulate(taskset(), 2, "gfp", horizon=15, params=["priorities=rm"])  # type: ignore[arg-type]
    with pytest.raises(rtsched.RtschedError, match="field 'priorities': expected an int, str or bool"):
        rtsched.simulate(taskset(), 2, "gfp", horizon=15, params={"priorities": 1.5})
