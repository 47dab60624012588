"""``rtsched simulate`` and ``rtsched.simulate_dag`` on DAG task sets (issue 27, docs/dag.md
"Simulator"): node-level gedf, gfp and federated with every output, one-line refusals."""

import csv
import io
import json

import pytest
import rtsched

DAG = {
    "m": 2,
    "tasks": [
        {
            "name": "cam",
            "period": "10ms",
            "deadline": "8ms",
            "nodes": ["1ms", "3ms", "2ms", "1ms"],
            "edges": [[0, 1], [0, 2], [1, 3], [2, 3]],
        },
        {"name": "ctl", "period": "5ms", "nodes": ["1ms", "1ms"], "edges": [[0, 1]]},
    ],
}


@pytest.fixture
def dag_file(tmp_path):
    p = tmp_path / "d.json"
    p.write_text(json.dumps(DAG))
    return p


def test_gedf_by_hand_with_every_output(cli, dag_file, tmp_path):
    out = {k: tmp_path / f"o.{k}" for k in ("jsonl", "csv", "svg", "png", "json")}
    rc, line, err = cli(
        "simulate", dag_file, "--json", "--trace", out["jsonl"], "--job-csv", out["csv"], "--gantt", out["svg"],
        "--perfetto", out["json"],
    )  # fmt: skip
    assert rc == 0, err
    s = json.loads(line)
    # On 2 CPUs: ctl's two nodes 0..2 beside cam's source (0..1) and long branch (1..4); cam's
    # short branch 2..4 and sink 4..5; ctl's second job 5..7.
    assert (s["jobs"], s["deadline_misses"], s["nodes"], s["node_events"]) == (3, 0, 8, 16)
    assert [t["max_response_time_ns"] for t in s["per_task"]] == [5_000_000, 2_000_000]
    assert s == rtsched.simulate_dag(json.dumps(DAG))
    rows = list(csv.DictReader(io.StringIO(out["csv"].read_text())))
    assert [(r["task"], r["job"], r["response_time"]) for r in rows] == [
        ("0", "0", "5000000"),
        ("1", "0", "2000000"),
        ("1", "1", "2000000"),
    ]
    meta = json.loads(out["jsonl"].read_text().splitlines()[0])
    assert [t["name"] for t in meta["tasks"]] == ["cam[0]", "cam[1]", "cam[2]", "cam[3]", "ctl[0]", "ctl[1]"]
    assert "cam[1].0 [1000000, 4000000)" in out["svg"].read_text()
    assert json.loads(out["json"].read_text())
    rc, _, err = cli("simulate", dag_file, "--gantt", out["png"], "--window", "0:8ms")
    assert rc == 0 and out["png"].stat().st_size > 1000, err


def test_gfp_and_federated(cli, dag_file):
    rc, line, err = cli("simulate", dag_file, "--scheduler", "gfp", "--param", "priorities=1,0", "--json")
    assert rc == 0, err
    s = json.loads(line)
    assert s["scheduler"] == "G-FP (given priorities)"
    rc, table, err = cli("simulate", dag_file, "--scheduler", "federated")
    assert rc == 0, err
    assert "federated plan: light tasks CPU 0: [0], CPU 1: [1]" in err
    # cam alone on its light core runs its nodes one after the other: 7 ms.
    assert "cam      4          1        0           7 ms" in table
    rc, _, err = cli("simulate", dag_file, "--scheduler", "federated", "--m", "1")
    assert rc == 1 and err.startswith("rtsched simulate: not placed: federated scheduling"), err


def test_sporadic_and_early_completion_are_seeded(cli, dag_file):
    args = ("simulate", dag_file, "--sporadic", "2ms", "--exec-fraction", "0.3", "--horizon", "1s", "--json")
    a = json.loads(cli(*args, "--seed", "3")[1])
    assert a == json.loads(cli(*args, "--seed", "3")[1])
    assert a != json.loads(cli(*args, "--seed", "4")[1])
    assert a["jobs"] < 300, "sporadic gaps are at least the period"


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--scheduler", "pedf"], "field 'scheduler': pedf schedules sequential tasks; a DAG task set runs under "),
        (
            ["--scheduler", "rtws"],
            "field 'scheduler': rtws schedules sequential and fork-join task sets; a DAG task set ",
        ),
        (["--quantum", "1ms"], "DAG task sets are simulated without --quantum"),
        (["--overheads", '{"release_ns": 5}'], "DAG task sets are simulated without --overheads"),
        (["--param", "cash=true"], "field 'cash': DAG task sets take only --param priorities"),
        (["--scheduler", "gfp", "--param", "priorities=1"], "gfp: parameter priorities: 1 priorities for 2 tasks"),
    ],
)
def test_one_line_refusals(cli, dag_file, extra, words):
    rc, _, err = cli("simulate", dag_file, *extra)
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1 and words in err, err
    assert "Traceback" not in err


def test_the_api_refuses_wrong_values():
    text = json.dumps(DAG)
    for kwargs in ({"m": 0}, {"horizon": 1.5}, {"exec_fraction": 0.0}, {"seed": -1}, {"scheduler": "llf"}):
        with pytest.raises(rtsched.RtschedError):
            rtsched.simulate_dag(text, **kwargs)
    with pytest.raises(rtsched.NotPlacedError):
        rtsched.simulate_dag(text, 1, "federated")
    with pytest.raises(rtsched.RtschedError, match="not a DAG task set"):
        rtsched.simulate_dag(json.dumps({"m": 1, "tasks": [{"wcet": 1, "period": 2}]}))
    with pytest.raises(rtsched.RtschedError, match="line 1"):
        rtsched.simulate_dag("{not json")
