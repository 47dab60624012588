"""`rtsched simulate --scheduler llf|pd2` and `rtsched.simulate(..., "llf"|"pd2")`: every output works
as for gedf, the quantum reaches the simulator, PD²'s refusals exit 2 naming the task and field
(docs/simulator.md, "LLF" and "PD²")."""

import csv
import json

import pytest
import rtsched
from rtsched import simulation

# The Dhall-style set of crates/sim/tests/llf.rs in ms: two light tasks (2 ms, 10 ms) and a heavy
# one (10 ms, 11 ms) on two CPUs over 11 ms. G-EDF runs the light jobs first and the heavy job
# misses 11 ms; LLF runs the heavy job first (laxity 1 ms) and misses nothing, with two
# preemptions (the light jobs' laxity tie at 1 and 2 ms); PD² (U = 1.31 ≤ 2) misses nothing.
# Five jobs: three at 0, the light tasks' second jobs at 10 ms.
TASKS = [("2ms", "10ms"), ("2ms", "10ms"), ("10ms", "11ms")]


def write(tmp_path, tasks=TASKS, name="ts.json"):
    p = tmp_path / name
    p.write_text(json.dumps({"m": 2, "tasks": [{"wcet": c, "period": t} for c, t in tasks]}))
    return p


def taskset():
    return rtsched.TaskSet([rtsched.Task(wcet=c, period=t) for c, t in TASKS], m=2)


def test_both_are_registered():
    names = simulation.schedulers()
    assert "llf" in names and "pd2" in names, names


def test_llf_meets_what_gedf_misses_and_the_quantum_reaches_it():
    assert rtsched.simulate(taskset(), 2, "gedf", horizon="11ms")["deadline_misses"] == 1
    s = rtsched.simulate(taskset(), 2, "llf", horizon="11ms")
    assert (s["jobs"], s["deadline_misses"], s["preemptions"], s["migrations"]) == (5, 0, 2, 0)
    # A 5 ms quantum: no decision at 1 or 2 ms, so no laxity-tie switching.
    s5 = rtsched.simulate(taskset(), 2, "llf", horizon="11ms", quantum="5ms")
    assert (s5["deadline_misses"], s5["preemptions"]) == (0, 0)
    assert s5 == rtsched.simulate(taskset(), 2, "llf", horizon="11ms", params={"quantum": "5ms"})
    p = rtsched.simulate(taskset(), 2, "pd2", horizon="11ms")
    assert (p["jobs"], p["deadline_misses"]) == (5, 0)
    with pytest.raises(rtsched.RtschedError, match="not supported for pd2"):
        rtsched.simulate(taskset(), 2, "pd2", horizon="11ms", overheads={"schedule_ns": 1})


def test_cli_every_output_is_written(cli, tmp_path):
    f = write(tmp_path)
    for sched in ("llf", "pd2"):
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
        code, stdout, err = cli("simulate", f, "--scheduler", sched, "--horizon", "11ms", *args, "--json")
        assert code == 0, err
        s = json.loads(stdout)
        assert (s["jobs"], s["deadline_misses"]) == (5, 0)
        for p in files.values():
            assert p.stat().st_size > 0, p
        rows = list(csv.DictReader(open(files["--job-csv"])))
        assert len(rows) == 5
        recs = [json.loads(line) for line in open(files["--trace"])]
        assert recs[0]["ev"] == "meta" and sum(r["ev"] == "release" for r in recs) == 5
        code, stdout, err = cli("simulate", f, "--scheduler", sched, "--horizon", "11ms")
        assert code == 0 and f"{sched} on 2 processors" in stdout, (stdout, err)
    # --quantum reaches llf and pd2 as their parameter.
    code, stdout, err = cli("simulate", f, "--scheduler", "llf", "--horizon", "11ms", "--quantum", "5ms", "--json")
    assert code == 0 and json.loads(stdout)["preemptions"] == 0, err


@pytest.mark.parametrize(
    "tasks, args, words",
    [
        (TASKS, ["--quantum", "3ms"], "task 0: field 'wcet': pd2 needs whole quanta: 2ms is not a multiple"),
        ([("2ms", "10ms"), ("1500us", "11ms")], [], "task 1: field 'wcet': pd2 needs whole quanta"),
        ([("2ms", "10500us")], [], "task 0: field 'period': pd2 needs whole quanta"),
        (TASKS, ["--sporadic", "1ms"], "field 'arrivals': pd2 needs periodic arrivals"),
        (TASKS, ["--param", "quantum=0"], "pd2: parameter quantum: must be at least 1 ns"),
    ],
)
def test_pd2_refusals_exit_2_naming_task_and_field(cli, tmp_path, tasks, args, words):
    code, out, err = cli("simulate", write(tmp_path, tasks), "--scheduler", "pd2", "--horizon", "22ms", *args)
    assert code == 2, (out, err)
    assert words in err and "Traceback" not in err, err


def test_pd2_refuses_a_constrained_deadline(cli, tmp_path):
    p = tmp_path / "d.json"
    p.write_text(json.dumps({"m": 1, "tasks": [{"wcet": "2ms", "period": "10ms", "deadline": "5ms"}]}))
    code, out, err = cli("simulate", p, "--scheduler", "pd2", "--horizon", "20ms")
    assert code == 2 and "task 0: field 'deadline': pd2 schedules implicit deadlines" in err, (out, err)
