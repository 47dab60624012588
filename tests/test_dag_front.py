"""DAG task sets at the front (issue 27): the one loader tells them apart, run refuses them in one
line (the same line as the Rust requests'), analyze runs the DAG tests on them (simulate runs them:
tests/test_dag_simulate.py)."""

import json

import pytest
import rtsched
from rtsched import _core
from rtsched.cli.workload import DagFile, read_workload

DAG = {"m": 2, "tasks": [{"name": "a", "period": 100, "nodes": [10, 20, 30], "edges": [[0, 1], [0, 2]]}]}


@pytest.fixture
def dag_file(tmp_path):
    p = tmp_path / "d.json"
    p.write_text(json.dumps(DAG))
    return p


def test_the_loader_reads_a_dag_file_as_one(dag_file):
    w = read_workload(str(dag_file))
    assert isinstance(w, DagFile)
    with pytest.raises(_core.RtschedError, match="is a DAG task set .* partition takes sequential tasks"):
        w.sequential("partition")


@pytest.mark.parametrize("shape", ["nested-fork-join", "erdos-renyi", "layered"])
def test_generate_then_analyze_round_trip(cli, tmp_path, shape):
    out = tmp_path / "g.json"
    rc, _, err = cli(
        "generate", "--dag", shape, "--n", 3, "--util", 1.5, "--umax", 1.2, "--m", 4, "--seed", 5, "-o", out
    )
    assert rc == 0, err
    doc = json.loads(out.read_text())
    assert doc["m"] == 4 and len(doc["tasks"]) == 3 and all("nodes" in t for t in doc["tasks"])
    # Seeded: the same command writes the same set; the API gives the same text.
    rc, again, _ = cli("generate", "--dag", shape, "--n", 3, "--util", 1.5, "--umax", 1.2, "--m", 4, "--seed", 5)
    assert again == out.read_text()
    assert rtsched.generate_dag(shape, 3, 1.5, umax=1.2, m=4, seed=5) == [again.strip()]
    rc, line, err = cli("analyze", out, "--json")
    assert rc == 0, err
    r = json.loads(line)
    assert r["kind"] == "DAG" and r["n"] == 3 and r["m"] == 4
    assert list(r["results"]) == [
        "dag_federated",
        "dag_gedf_li2013",
        "dag_gedf_li2014",
        "dag_gedf_bonifaci2013",
        "dag_melani_gfp",
        "dag_melani_gedf",
        "dag_fonseca_gfp",
        "dag_fonseca_gfp_chain",
    ]
    for name in ["dag_melani_gfp", "dag_melani_gedf", "dag_fonseca_gfp", "dag_fonseca_gfp_chain"]:
        rts = r["results"][name]["response_times_ns"]
        assert len(rts) == 3 and all(x is None or isinstance(x, int) for x in rts)
    assert r == rtsched.analyze_dag(rtsched.read_dag(out))
    # The table names every test with a verdict.
    rc, table, _ = cli("analyze", out, "--m", 16)
    assert rc == 0 and "m = 16" in table
    for name in r["results"]:
        assert any(ln.split()[:1] == [name] for ln in table.splitlines()), table


def test_the_federated_plan_is_in_the_json(cli, tmp_path):
    # Task 0: volume 30, longest path 10, D = 20: ceil(20/10) = 2 dedicated cores. Task 1 is light.
    p = tmp_path / "f.json"
    p.write_text(json.dumps({"m": 3, "tasks": [{"period": 20, "nodes": [10, 10, 10]}, {"period": 100, "nodes": [50]}]}))
    rc, line, err = cli("analyze", p, "--json", "--test", "dag-federated")
    assert rc == 0, err
    fed = json.loads(line)["results"]["dag_federated"]
    assert fed == {"schedulable": True, "plan": {"high": [{"task": 0, "cores": [0, 2]}], "low": [[1]]}}
    rc, line, _ = cli("analyze", p, "--json", "--m", 2)
    fed = json.loads(line)["results"]["dag_federated"]
    assert fed["schedulable"] is False and "task 1" in fed["reason"]


def test_one_node_dags_get_pedf_ffds_verdict_under_federated(tmp_path):
    # One node per task, implicit deadlines: federated has no heavy task and partitions the
    # tasks first-fit by decreasing density = utilization with EDF admission, i.e. pedf_ffd
    # (crates/analysis/tests/dag_oracle.rs). Sets near the partitioning boundary, so both verdicts occur.
    verdicts = set()
    for seed in range(60):
        ts = rtsched.generate(4, 1.6 + (seed % 5) * 0.1, seed=seed, m=2, periods="integral:10ms-60ms")
        dag = {"m": 2, "tasks": [{"period": t.period, "deadline": t.deadline, "nodes": [t.wcet]} for t in ts]}
        fed = rtsched.analyze_dag(json.dumps(dag), tests=["dag_federated"])["results"]["dag_federated"]
        seq = rtsched.analyze(ts, 2, tests=["pedf_ffd"])["results"]["pedf_ffd"]
        assert fed["schedulable"] == seq["schedulable"], (seed, dag)
        verdicts.add(fed["schedulable"])
    assert verdicts == {True, False}


@pytest.mark.parametrize(
    "tasks, words",
    [
        ([{"name": "x", "period": 100, "nodes": [1, 2], "edges": [[0, 1], [1, 0]]}], ["task 0", "cycle"]),
        ([{"period": 100, "nodes": [1, 2], "edges": [[0, 7]]}], ["task 0", "7"]),
        ([{"period": 100, "nodes": [1, 2]}, {"period": 100, "nodes": [1, -3]}], ["task 1", "node 1"]),
        ([{"period": 10, "deadline": 10, "nodes": [6, 6], "edges": [[0, 1]]}], ["task 0", "deadline"]),
    ],
)
def test_bad_dag_files_give_one_line_errors(cli, tmp_path, tasks, words):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"m": 2, "tasks": tasks}))
    for cmd in (["analyze", p], ["export", p, "--format", "dot"]):
        rc, out, err = cli(*cmd)
        assert rc == 2 and "Traceback" not in err, err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"rtsched {cmd[0]}: error: {p}: "), err
        for w in words:
            assert w in lines[0], (w, lines[0])


def test_test_names_stay_with_their_kind(cli, tmp_path, dag_file):
    rc, _, err = cli("analyze", dag_file, "--test", "gedf")
    assert rc == 2 and '"gedf" takes sequential tasks; this is a DAG task set' in err
    seq = tmp_path / "s.json"
    seq.write_text(json.dumps({"m": 2, "tasks": [{"wcet": 1, "period": 4}]}))
    rc, _, err = cli("analyze", seq, "--test", "dag_federated")
    assert rc == 2 and '"dag_federated" takes DAG tasks; this is a sequential task set' in err
    # dag_graham is for a set of one task.
    two = tmp_path / "two.json"
    two.write_text(json.dumps({"m": 2, "tasks": [{"period": 9, "nodes": [1]}, {"period": 9, "nodes": [2]}]}))
    rc, _, err = cli("analyze", two, "--test", "dag_graham")
    assert rc == 2 and "2 tasks" in err
    rc, line, _ = cli("analyze", dag_file, "--json", "--test", "dag_graham")
    assert json.loads(line)["results"] == {"dag_graham": {"schedulable": True}}


def test_export_dot(cli, tmp_path, dag_file):
    rc, out, err = cli("export", dag_file, "--format", "dot")
    assert rc == 0, err
    assert out.startswith('digraph "a" {') and "n0 -> n2 [penwidth=2];" in out
    assert out == rtsched.dag_to_dot(dag_file.read_text())
    target = tmp_path / "a.dot"
    rc, _, _ = cli("export", dag_file, "--format", "dot", "--task", 0, "-o", target)
    assert rc == 0 and target.read_text() == out
    rc, _, err = cli("export", dag_file, "--format", "dot", "--task", 1)
    assert rc == 2 and "no task 1" in err
    rc, _, err = cli("export", dag_file, "--format", "json")
    assert rc == 2 and "exports as --format dot only" in err


def test_the_api_rejects_bad_arguments_in_one_line(dag_file):
    text = dag_file.read_text()
    for call, word in [
        (lambda: rtsched.analyze_dag(text, m=0), "m"),
        (lambda: rtsched.analyze_dag(text, tests=[]), "tests"),
        (lambda: rtsched.analyze_dag(text, tests=["pedf_ffd"]), "takes sequential tasks"),
        (lambda: rtsched.analyze_dag(json.dumps({"tasks": DAG["tasks"]})), "no processor count"),
        (lambda: rtsched.generate_dag("star", 2, 1.0), "unknown DAG shape"),
        (lambda: rtsched.generate_dag("layered", 2, 1.0, seed=-1), "seed"),
        (lambda: rtsched.generate_dag("layered", 2, 9.0), "total"),
        (lambda: rtsched.generate_dag("erdos-renyi", 2, 1.0, p=1.5), "argument 'p'"),
        (lambda: rtsched.dag_to_dot(text, task=-1), "task"),
        (lambda: rtsched.read_dag(dag_file.parent / "missing.json"), "missing.json"),
    ]:
        with pytest.raises(_core.RtschedError) as e:
            call()
        assert word in str(e.value) and "\n" not in str(e.value), (word, str(e.value))


def test_the_response_time_analyses_take_priorities(cli, tmp_path):
    # τ0: chain 2 → 2, T = D = 10; τ1: three independent nodes of 3, T = D = 12; m = 2.
    # Deadline monotonic: R = [4, 8]; τ1 first: R = [8, 6] (worked out in dag::melani's tests).
    p = tmp_path / "rta.json"
    p.write_text(
        json.dumps(
            {
                "m": 2,
                "tasks": [{"period": 10, "nodes": [2, 2], "edges": [[0, 1]]}, {"period": 12, "nodes": [3, 3, 3]}],
            }
        )
    )
    rc, line, err = cli("analyze", p, "--json", "--test", "dag_melani_gfp")
    assert rc == 0, err
    assert json.loads(line)["results"] == {"dag_melani_gfp": {"schedulable": True, "response_times_ns": [4, 8]}}
    rc, line, err = cli("analyze", p, "--json", "--test", "dag_melani_gfp", "--priorities", "1,0")
    assert rc == 0, err
    assert json.loads(line)["results"]["dag_melani_gfp"]["response_times_ns"] == [8, 6]
    r = rtsched.analyze_dag(p.read_text(), tests=["dag_fonseca_gfp"], priorities=[1, 0])
    assert r["results"]["dag_fonseca_gfp"]["response_times_ns"] == [8, 6]
    rc, table, err = cli("analyze", p, "--test", "dag_melani_gfp")
    assert rc == 0 and "R = 4, 8 ns" in table, (table, err)
    rc, _, err = cli("analyze", p, "--priorities", "0,1,2")
    assert rc == 2 and "3 priorities for 2 tasks" in err and len(err.strip().splitlines()) == 1, err
    rc, _, err = cli("analyze", p, "--priorities", "0,x")
    assert rc == 2 and "task 1" in err and "priorities" in err, err
