"""`rtsched run FJ.json --scheduler rtws` / `rtsched.run_forkjoin`: fork-join files on real threads
(docs/mechanisms/rtws.md), each run <= 0.2 s on one CPU. No timing is asserted: structure,
accounting, the exports' job and thread counts, and messages."""

import csv
import io
import json
import os

import pytest
import rtsched

CPU = sorted(os.sched_getaffinity(0))[0]
FJ = {
    "tasks": [
        {"name": "a", "period": "20ms", "regions": [["1ms"], ["500us", "500us", "500us"]]},
        {"name": "b", "period": "50ms", "deadline": "40ms", "regions": [["2ms"]]},
    ]
}


def test_api_runs_a_fork_join_set_and_reports_jobs():
    s = rtsched.run_forkjoin(json.dumps(FJ), cpus=[CPU], duration="200ms")
    fj = s["forkjoin"]
    # 200 ms: task a releases 10 jobs, task b 4; threads per job: 4 and 1.
    assert fj["tasks"] == 2 and fj["jobs"] == 14
    assert fj["completed"] + fj["pending"] == fj["jobs"]
    assert fj["threads"] == 10 * 4 + 4 * 1 == s["jobs"]
    assert s["scheduler"] == "rtws"
    assert "steal" in s["overheads"]
    assert s["priority_inversion_error"]  # the G-EDF invariant does not apply to fork-join sets


def test_push_pull_runs_a_fork_join_file(cli, tmp_path):
    """`rtsched run FJ.json --scheduler push-pull`: the same jobs and threads as under rtws, no
    steals, every fork-join job completed or pending, regions in order in the trace."""
    f = tmp_path / "fj.json"
    f.write_text(json.dumps(FJ))
    out, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    args = [f, "--scheduler", "push-pull", "--cpus", CPU, "--duration", "200ms", "--output", out, "--trace", trace]
    code, _, err = cli("run", *args)
    assert code == 0, err
    s = json.loads(out.read_text())
    fj = s["forkjoin"]
    assert s["scheduler"] == "push-pull" and s["accounting_error"] is None
    assert fj["jobs"] == 14 and fj["completed"] + fj["pending"] == 14
    assert fj["threads"] == 10 * 4 + 4 * 1 == s["jobs"]
    assert s["steals"] == 0 == fj["steals"]
    # Task a's region 1 (slots 1-3) starts only after its region 0 (slot 0) completed, per job.
    recs = [json.loads(x) for x in trace.read_text().splitlines()[1:]]
    done0 = {x["job"]: x["t"] for x in recs if x["ev"] == "complete" and x["task"] == 0}
    starts = [(x["job"], x["t"]) for x in recs if x["ev"] == "run" and x["task"] in (1, 2, 3)]
    assert starts and all(j in done0 and t >= done0[j] for j, t in starts)


def test_cli_writes_every_output(cli, tmp_path):
    f = tmp_path / "fj.json"
    f.write_text(json.dumps(FJ))
    out = {
        k: tmp_path / n
        for k, n in [
            ("output", "s.json"),
            ("trace", "t.jsonl"),
            ("perfetto", "p.json"),
            ("gantt", "g.svg"),
            ("job-csv", "j.csv"),
        ]
    }
    args = [f, "--scheduler", "rtws", "--cpus", CPU, "--duration", "100ms", "--json"]
    for k, p in out.items():
        args += [f"--{k}", p]
    code, stdout, err = cli("run", *args)
    assert code == 0, err
    s = json.loads(out["output"].read_text())
    assert json.loads(stdout) == s
    assert s["forkjoin"]["jobs"] == 5 + 2
    rows = list(csv.DictReader(io.StringIO(out["job-csv"].read_text())))
    assert len(rows) == s["forkjoin"]["jobs"]  # one row per fork-join job, not per thread
    assert "a/r1.2" in out["trace"].read_text()  # thread slots are the trace's tasks
    assert out["gantt"].read_text().startswith("<")
    assert "traceEvents" in json.loads(out["perfetto"].read_text())


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--scheduler", "gsn-edf"], "runs sequential tasks only"),
        (["--scheduler", "rtws", "--placement", "x.json"], "without --placement"),
    ],
)
def test_cli_refuses_what_fork_join_files_cannot_do(cli, tmp_path, extra, message):
    f = tmp_path / "fj.json"
    f.write_text(json.dumps(FJ))
    code, _, err = cli("run", f, "--cpus", CPU, "--duration", "50ms", *extra)
    assert code == 2 and message in err, err


def test_bad_fork_join_file_names_the_field(tmp_path):
    bad = {"tasks": [{"period": "10ms", "regions": [["1ms"], []]}]}
    with pytest.raises(rtsched.RtschedError, match=r"regions\[1\]"):
        rtsched.run_forkjoin(json.dumps(bad), cpus=[CPU], duration="50ms")


def test_isolate_wraps_a_fork_join_run_as_it_does_a_task_sets(isolate_recorder, tmp_path, capsys):
    # The host's limits are not touched: protocol.isolated is replaced by a recorder (as in
    # test_run.py's task-set test). Python and the command line (run in this process, so that
    # the recorder is seen) enter it on the run's CPUs before the run and leave it after.
    from rtsched.cli import main
    from rtsched.runtime import run_forkjoin_raw

    calls, state = isolate_recorder
    state["refused"] = ["/proc/sys/kernel/sched_rt_runtime_us: not writable"]
    s = run_forkjoin_raw(json.dumps(FJ), cpus=[CPU], duration="50ms", isolate=True, quiet=True)["summary"]
    assert calls == [("enter", [CPU]), ("exit",)]
    assert s["isolate"]["refused"] and s["forkjoin"]["jobs"] == 3 + 1
    assert "isolate" not in run_forkjoin_raw(json.dumps(FJ), cpus=[CPU], duration="50ms", quiet=True)["summary"]
    f = tmp_path / "fj.json"
    f.write_text(json.dumps(FJ))
    calls.clear()
    code = main(["run", str(f), "--scheduler", "rtws", "--cpus", str(CPU), "--duration", "50ms", "--isolate", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert calls == [("enter", [CPU]), ("exit",)]
    assert json.loads(out)["isolate"]["refused"] and "--isolate could not change" in err
