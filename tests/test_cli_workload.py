"""rtsched.cli.workload: the one reader of a command's task-set FILE, and the commands' answers to
a fork-join file (docs/rtws.md) where they take sequential tasks (issue 21)."""

import json

import pytest
from rtsched import RtschedError
from rtsched.cli import main
from rtsched.cli.workload import ForkJoinFile, TaskSetFile, load_one, read_workload

FJ = {"m": 1, "tasks": [{"name": "a", "period": "20ms", "regions": [["1ms"], ["500us", "500us"]]}]}
SEQ = {"m": 2, "tasks": [{"wcet": "1ms", "period": "10ms"}, {"wcet": "2ms", "period": "20ms"}]}


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in [
        ("fj.json", json.dumps(FJ)),
        ("FJ_BOM.JSON", "\ufeff" + json.dumps(FJ)),
        ("seq.json", json.dumps(SEQ)),
        ("two.jsonl", json.dumps(SEQ) + "\n" + json.dumps(SEQ) + "\n"),
        ("broken.json", '{"tasks": [{"regions": '),
        ("list.json", "[1, 2]"),
        ("deep.json", "[" * 100_000 + "]" * 100_000),
    ]:
        (tmp_path / name).write_text(text, encoding="utf-8")
        out[name] = str(tmp_path / name)
    out["missing.json"] = str(tmp_path / "missing.json")
    return out


def test_read_workload_tells_fork_join_from_sequential(files):
    for name in ("fj.json", "FJ_BOM.JSON"):
        w = read_workload(files[name])
        assert isinstance(w, ForkJoinFile) and w.path == files[name]
        assert json.loads(w.text) == FJ  # the text the fork-join engines parse (no byte-order mark)
    for name in ("seq.json", "two.jsonl", "broken.json", "list.json", "deep.json", "missing.json"):
        w = read_workload(files[name])
        assert type(w) is TaskSetFile and w.path == files[name], name


def test_task_set_file_loads_one_or_all(files):
    seq = read_workload(files["seq.json"]).sequential("partition")
    assert [len(ts) for ts in seq.all()] == [2]
    assert len(load_one(files["seq.json"], "partition")) == 2
    with pytest.raises(RtschedError, match=r"two\.jsonl: partition takes one task set, the file holds 2$"):
        load_one(files["two.jsonl"], "partition")
    # What cannot be read is the loader's one-line error, naming the file.
    for name in ("broken.json", "missing.json"):
        with pytest.raises(RtschedError, match=name.replace(".", r"\.")):
            load_one(files[name], "export")


def test_a_fork_join_file_is_refused_where_sequential_tasks_are_taken(files):
    with pytest.raises(RtschedError, match=r"is a fork-join task set \(its tasks have regions\); export takes"):
        load_one(files["fj.json"], "export")


@pytest.mark.parametrize(
    "command",
    [
        ["analyze"],
        ["partition", "--m", "1"],
        ["export", "--format", "json"],
        ["simulate", "--scheduler", "pedf"],
    ],
)
def test_commands_for_sequential_tasks_refuse_a_fork_join_file(files, capsys, command):
    assert main([command[0], files["fj.json"], *command[1:]]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"rtsched {command[0]}: error: {files['fj.json']} is a fork-join task set")
    assert f"{command[0]} takes sequential tasks. Simulate it with: rtsched simulate" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("scheduler", ["rtws", "gedf"])
def test_simulate_runs_a_fork_join_file_under_its_schedulers(files, capsys, scheduler):
    assert main(["simulate", files["fj.json"], "--scheduler", scheduler, "--horizon", "100ms", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["jobs"] == 5 and s["threads"] == 15 and s["deadline_misses"] == 0


def test_simulate_refuses_sequential_only_options_for_a_fork_join_file(files, capsys):
    assert main(["simulate", files["fj.json"], "--scheduler", "rtws", "--cash"]) == 2
    assert "fork-join files are simulated without --cash" in capsys.readouterr().err


def test_run_refuses_a_placement_for_a_fork_join_file(files, capsys, tmp_path):
    placement = tmp_path / "p.json"
    placement.write_text("{}")
    code = main(["run", files["fj.json"], "--scheduler", "rtws", "--placement", str(placement)])
    assert code == 2
    assert "fork-join files run without --placement" in capsys.readouterr().err
