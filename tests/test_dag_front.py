"""DAG task sets at the front (issue 27): the one loader tells them apart, simulate and run refuse
them in one line (the same line as the Rust requests'), analyze runs the DAG tests on them."""

import json

import pytest

from rtsched import _core
from rtsched.cli.workload import DAG_NOT_SIMULATED, DagFile, read_workload

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


@pytest.mark.parametrize("command", [["simulate", "--scheduler", "gedf"], ["run", "--scheduler", "gsn-edf"]])
def test_simulate_and_run_refuse_a_dag_file_in_one_line(cli, dag_file, command):
    rc, out, err = cli(command[0], dag_file, *command[1:])
    assert rc == 2, (out, err)
    assert err.strip().splitlines() == [f"rtsched {command[0]}: error: {dag_file}: {DAG_NOT_SIMULATED}"]
    assert "Traceback" not in err


def test_the_rust_requests_refuse_with_the_same_line():
    with pytest.raises(_core.RtschedError) as e:
        _core.simulate(json.dumps(DAG), None, "gedf")
    assert str(e.value) == DAG_NOT_SIMULATED
