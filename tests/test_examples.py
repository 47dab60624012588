"""The examples in docs/examples work with `rtsched analyze` and `rtsched partition`."""

import json
import pathlib

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "docs" / "examples"


@pytest.mark.parametrize("name", ["spres-fig1.json", "control.json", "control.csv"])
def test_analyze_examples(cli, name):
    code, out, err = cli("analyze", EXAMPLES / name, "--m", 2, "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["m"] == 2 and r["n"] >= 3 and "gedf" in r["results"]


def test_csv_and_json_examples_agree(cli):
    a = json.loads(cli("analyze", EXAMPLES / "control.json", "--m", 4, "--json")[1])
    b = json.loads(cli("analyze", EXAMPLES / "control.csv", "--m", 4, "--json")[1])
    assert a == b


def test_seed004_fig1_split(cli):
    # Brandenburg & Gül, RTSS 2016, §III-D, Fig. 1: three tasks (C=10, T=15) on two processors. No partitioning
    # exists (two tasks of utilization 2/3 cannot share a processor); C=D splitting places the
    # third task as (5, 5, 15) plus (5, 10, 15), the part with laxity first.
    code, out, _ = cli("partition", EXAMPLES / "spres-fig1.json", "--heuristic", "pedf_ffd", "--json")
    assert code == 1 and json.loads(out)["schedulable"] is False
    code, out, err = cli("partition", EXAMPLES / "spres-fig1.json", "--heuristic", "spres", "--json")
    assert code == 0, err
    p = json.loads(out)
    parts = sorted(
        (r["part"], r["budget"], r["deadline"], r["offset"])
        for c in p["cpus"]
        for r in c["reservations"]
        if r["parts"] == 2
    )
    ms = 1_000_000
    assert parts == [(1, 5 * ms, 10 * ms, 0), (2, 5 * ms, 5 * ms, 10 * ms)]
    code, out, _ = cli("partition", EXAMPLES / "spres-fig1.json", "--heuristic", "spres")
    assert code == 0 and "part 1/2" in out and "part 2/2" in out


def test_forkjoin_example_under_rtws(cli):
    code, out, err = cli("simulate", EXAMPLES / "forkjoin.json", "--scheduler", "rtws", "--horizon", "400ms", "--json")
    assert code == 0, err
    r = json.loads(out)
    # Releases in [0, 400 ms): 40 + 20 + 10 jobs; U = 0.7 + 0.6 + 0.1 = 1.4 on 2 processors.
    assert r["jobs"] == 70 and r["completed"] + r["pending"] == r["jobs"]
    # Threads per job: vision 6, planner 4, logger 1.
    assert r["threads"] == 40 * 6 + 20 * 4 + 10 * 1
    assert r["deadline_misses"] == 0
    code, _, err = cli("simulate", EXAMPLES / "forkjoin.json", "--scheduler", "rtws", "--exec-fraction", "0.5")
    assert code == 2 and "--exec-fraction" in err
