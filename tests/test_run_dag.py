"""`rtsched run DAG.json --scheduler rtws|push-pull` / `rtsched.run_forkjoin(dag_text)`: DAG files on
real threads (docs/dag.md, "Runtime"), each run <= 0.2 s on one CPU. No timing is asserted:
structure, accounting, the exports' job and node counts, precedence in the trace, and messages."""

import csv
import io
import json
import os

import pytest
import rtsched

CPU = sorted(os.sched_getaffinity(0))[0]
# Task a: the diamond 0 -> {1, 2} -> 3; task b: one node.
DAG = {
    "tasks": [
        {
            "name": "a",
            "period": "20ms",
            "nodes": ["1ms", "500us", "500us", "1ms"],
            "edges": [[0, 1], [0, 2], [1, 3], [2, 3]],
        },
        {"name": "b", "period": "50ms", "deadline": "40ms", "nodes": ["2ms"]},
    ]
}


def test_api_runs_a_dag_set_and_reports_jobs_per_task():
    s = rtsched.run_forkjoin(json.dumps(DAG), cpus=[CPU], duration="200ms")
    d = s["dag"]
    # 200 ms: task a releases 10 jobs, task b 4; nodes per job: 4 and 1.
    assert d["tasks"] == 2 and d["jobs"] == 14
    assert d["completed"] + d["pending"] == d["jobs"]
    assert d["nodes"] == 10 * 4 + 4 * 1 == s["jobs"]
    assert [t["jobs"] for t in d["per_task"]] == [10, 4]
    assert [t["name"] for t in d["per_task"]] == ["a", "b"]
    assert sum(t["deadline_misses"] for t in d["per_task"]) == d["deadline_misses"]
    assert s["scheduler"] == "rtws" and s["accounting_error"] is None
    assert "forkjoin" not in s


@pytest.mark.parametrize("scheduler", ["rtws", "push-pull"])
def test_cli_runs_a_dag_file_and_keeps_precedence(cli, tmp_path, scheduler):
    f = tmp_path / "dag.json"
    f.write_text(json.dumps(DAG))
    out, trace, jobs = tmp_path / "s.json", tmp_path / "t.jsonl", tmp_path / "j.csv"
    args = [f, "--scheduler", scheduler, "--cpus", CPU, "--duration", "200ms", "-o", out, "--trace", trace]
    code, stdout, err = cli("run", *args, "--job-csv", jobs)
    assert code == 0, err
    assert "DAG jobs 14" in stdout and "task a: jobs 10" in stdout, stdout
    s = json.loads(out.read_text())
    assert s["scheduler"] == scheduler and s["accounting_error"] is None
    assert s["dag"]["jobs"] == 14
    assert len(list(csv.DictReader(io.StringIO(jobs.read_text())))) == 14  # one row per DAG job
    assert "a/n3" in trace.read_text()  # node slots are the trace's tasks
    # Node 3 of task a (slot 3) starts only after nodes 1 and 2 (slots 1, 2) completed, per job.
    recs = [json.loads(x) for x in trace.read_text().splitlines()[1:]]
    done = {(x["task"], x["job"]): x["t"] for x in recs if x["ev"] == "complete"}
    starts = [(x["job"], x["t"]) for x in recs if x["ev"] == "run" and x["task"] == 3]
    assert starts
    assert all((1, j) in done and (2, j) in done and t >= max(done[(1, j)], done[(2, j)]) for j, t in starts)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--scheduler", "gsn-edf"], "gsn-edf runs sequential tasks only; DAG task files need"),
        (["--scheduler", "pedf"], "pedf runs sequential tasks only; DAG task files need"),
        (["--scheduler", "rtws", "--placement", "x.json"], "DAG files run without --placement"),
    ],
)
def test_cli_refuses_what_dag_files_cannot_do_in_one_line(cli, tmp_path, extra, message):
    f = tmp_path / "dag.json"
    f.write_text(json.dumps(DAG))
    code, _, err = cli("run", f, "--cpus", CPU, "--duration", "50ms", *extra)
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_bad_dag_file_names_the_task_and_node(cli, tmp_path):
    bad = {"tasks": [{"name": "c", "period": "10ms", "nodes": ["1ms", "1ms"], "edges": [[0, 1], [1, 0]]}]}
    with pytest.raises(rtsched.RtschedError, match=r"task 0 \(\"c\"\): field 'edges': .*cycle"):
        rtsched.run_forkjoin(json.dumps(bad), cpus=[CPU], duration="50ms")
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad))
    code, _, err = cli("run", f, "--scheduler", "rtws", "--cpus", CPU, "--duration", "50ms")
    assert code == 2 and "cycle" in err and "Traceback" not in err, err


def test_the_dag_job_example_in_the_docs_is_the_compiled_one():
    """docs/runtime.md "DAG user jobs" shows crates/runtime/examples/dag_job.rs, which `cargo test`
    builds (and tests/dag_jobs.rs runs): the two must be the same code."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    doc = (root / "docs" / "runtime.md").read_text(encoding="utf-8")
    marker = "<!-- example: crates/runtime/examples/dag_job.rs -->\n```rust\n"
    assert marker in doc
    shown = doc.split(marker, 1)[1].split("```", 1)[0]
    assert shown == (root / "crates" / "runtime" / "examples" / "dag_job.rs").read_text(encoding="utf-8")
