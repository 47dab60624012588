"""`rtsched run` / `rtsched.run` / `rtsched measure-overheads`: real runs, each <= 0.3 s on one
CPU. No timing is asserted: only structure, accounting and messages."""

import json
import os

import pytest
import rtsched

CPU = sorted(os.sched_getaffinity(0))[0]
ALL = sorted(os.sched_getaffinity(0))
SUMMARY_KEYS = {
    "scheduler",
    "m",
    "cpus",
    "duration_ns",
    "jobs",
    "deadline_misses",
    "max_tardiness_ns",
    "response_time_ns",
    "release_latency_ns",
    "priority_inversion_ns",
    "dropped_records",
    "overheads",
    "params",
    "metrics_horizon_ns",
    "preemptions",
    "migrations",
}


def light():
    return rtsched.TaskSet(
        [
            rtsched.Task(wcet="1ms", period="10ms"),
            rtsched.Task(wcet="2ms", period="20ms"),
            rtsched.Task(wcet="1ms", period="7ms"),
        ]
    )


def heavy():
    # U = 1.5 on one CPU: must miss, must still terminate.
    return rtsched.TaskSet([rtsched.Task(wcet="6ms", period="10ms"), rtsched.Task(wcet="9ms", period="10ms")])


def write_set(tmp_path, ts, name="ts.json"):
    p = tmp_path / name
    rtsched.save(str(p), ts)
    return p


def _stats_ok(st: dict, what: str) -> None:
    """A statistics dict (count, avg_ns, p50_ns, p99_ns, max_ns; the filter's max_raw_ns,
    discarded, outliers: docs/overheads.md, "Measurement protocol") holds consistent values."""
    ints = ("p50_ns", "p99_ns", "max_ns", "max_raw_ns", "discarded", "outliers")
    assert set(st) == {"count", "avg_ns", *ints}, what
    assert st["count"] >= 0 and all(isinstance(st[k], int) and st[k] >= 0 for k in ints)
    assert st["outliers"] <= st["count"] // 100, what  # the rule removes at most 1 %
    if st["count"] == 0:
        assert {k: st[k] for k in ("count", "avg_ns", "p50_ns", "p99_ns", "max_ns", "outliers")} == {
            "count": 0, "avg_ns": 0.0, "p50_ns": 0, "p99_ns": 0, "max_ns": 0, "outliers": 0,
        }, what  # fmt: skip
        assert (st["max_raw_ns"] == 0) == (st["discarded"] == 0), what
    else:
        assert st["p50_ns"] <= st["p99_ns"] <= st["max_ns"] <= st["max_raw_ns"], what
        assert 0 <= st["avg_ns"] <= st["max_raw_ns"], what


@pytest.mark.parametrize("sched", ["gsn-edf", "pedf", "pfp"])
def test_summary_keys_and_accounting(sched):
    s = rtsched.run(light(), scheduler=sched, cpus=[CPU], duration="200ms")
    assert SUMMARY_KEYS <= set(s)
    assert s["scheduler"] == sched and s["m"] == 1 and s["cpus"] == [CPU] and s["duration_ns"] == 200_000_000
    assert s["dedicated_cpu"] is None and s["interrupted"] is False and s["idle"] == "sleep"
    assert s["params"] == ({"priorities": "dm"} if sched == "pfp" else {})
    assert s["metrics_horizon_ns"] == s["duration_ns"]
    assert set(s["response_time_ns"]) == {"avg", "p99", "max"}
    assert set(s["release_latency_ns"]) == {"avg", "p50", "p99", "max"}
    # Values, not only keys. Every completed job ran its WCET (>= 1 ms) after its release and
    # finished by the end; percentiles are ordered.
    rt, rl = s["response_time_ns"], s["release_latency_ns"]
    assert s["completed"] > 0
    assert 1_000_000 <= rt["avg"] <= rt["max"] and rt["p99"] <= rt["max"] <= s["duration_ns"]
    assert rl["p50"] <= rl["p99"] <= rl["max"] and 0 <= rl["avg"] <= rl["max"] <= s["duration_ns"]
    for term in ("release", "schedule", "context_switch"):
        assert set(s["overheads"][term]) == {
            "count", "avg_ns", "p50_ns", "p99_ns", "max_ns", "max_raw_ns", "discarded", "outliers",
        }  # fmt: skip
    for term, st in s["overheads"].items():
        _stats_ok(st, term)
    ov = s["overheads"]
    # Each completion is followed by a scheduler call and each dispatch by a context switch;
    # coinciding releases share one handler call. (Samples: kept + discarded by the filter.)
    taken = {t: ov[t]["count"] + ov[t]["discarded"] for t in ov}
    assert taken["schedule"] >= s["completed"] and taken["context_switch"] >= s["completed"]
    assert 1 <= taken["release"] <= s["jobs"] and taken["release_event"] == taken["release"]
    assert ov["ipi"]["count"] == 0, "one CPU: no remote reschedule request"
    assert s["released"] == s["completed"] + s["pending"] == s["jobs"]
    assert s["accounting_error"] is None and s["dropped_records"] == 0
    # ceil(200 / T) releases per task: 20 + 10 + 29.
    assert s["jobs"] == 20 + 10 + 29
    assert 0 <= s["deadline_misses"] <= s["jobs"]
    assert (s["max_tardiness_ns"] == 0) == (s["deadline_misses"] == 0)
    assert s["migrations"] == 0 and 0 <= s["preemptions"]
    assert isinstance(s["priority_inversion_ns"], int) and 0 <= s["priority_inversion_ns"] <= s["duration_ns"]
    pi = s["priority_inversion"]
    assert pi["total_ns"] == s["priority_inversion_ns"]
    assert pi["max_interval_ns"] <= pi["total_ns"] and (pi["intervals"] == 0) == (pi["total_ns"] == 0)
    # The bound is the sum of the run's largest tracking overheads, so at least its largest Δsch.
    assert pi["tracking_bound_ns"] >= s["overheads"]["schedule"]["max_ns"]
    assert pi["beyond_tracking_ns"] <= pi["total_ns"]


def test_overload_terminates_and_misses():
    s = rtsched.run(heavy(), scheduler="gsn-edf", cpus=str(CPU), duration="200ms", force=True)
    assert any("U = 1.5 > 1" in w and "--force" in w for w in s["warnings"])
    assert s["deadline_misses"] > 0
    assert s["released"] == s["completed"] + s["pending"]
    assert s["accounting_error"] is None
    # U = 1.5 on one CPU: a job pending past its deadline at the end is a miss, so at least
    # the jobs still pending whose deadline passed count, and tardiness is positive.
    assert s["max_tardiness_ns"] > 0 and s["pending"] > 0
    assert s["deadline_misses"] <= s["jobs"]


def test_overloaded_run_exports_mark_every_miss(cli, tmp_path):
    f = write_set(tmp_path, heavy())
    names = [("output", "s.json"), ("trace", "t.jsonl"), ("gantt", "g.svg"), ("job-csv", "j.csv")]
    out = {k: tmp_path / v for k, v in names}
    args = [x for k, p in out.items() for x in (f"--{k}", p)]
    code, _, err = cli("run", f, "--scheduler", "gsn-edf", "--cpus", CPU, "--duration", "200ms", "--force", *args)
    assert code == 0, err
    s = json.loads(out["output"].read_text())
    misses = s["deadline_misses"]
    assert misses > 0
    lines = [json.loads(x) for x in out["trace"].read_text().splitlines()]
    assert sum(1 for x in lines if x["ev"] == "deadline_miss") == misses
    rows = out["job-csv"].read_text().splitlines()
    col = rows[0].split(",").index("missed")
    assert sum(int(r.split(",")[col]) for r in rows[1:]) == misses
    assert out["gantt"].read_text().count("<title>deadline miss") == misses


@pytest.mark.skipif(len(ALL) < 2, reason="gedf-mp needs a client CPU and a dedicated CPU")
@pytest.mark.parametrize(
    ("dsp", "idle"), [("spin", "sleep"), ("window", "sleep"), ("sleep", "sleep"), ("spin", "spin")]
)
def test_gedf_mp_runs_with_every_output(cli, tmp_path, dsp, idle):
    # G-EDF-MP (Cerqueira et al., RTAS 2014): one client, the scheduling processor on another CPU,
    # an overloaded set; every export marks every miss and the message-passing terms are traced.
    # Last: nothing sleeps (dsp=spin and a spinning client, --idle spin).
    f = write_set(tmp_path, heavy())
    names = ["output:s.json", "trace:t.jsonl", "gantt:g.svg", "job-csv:j.csv", "perfetto:p.json"]
    out = {k: tmp_path / v for k, v in (x.split(":") for x in names)}
    args = [x for k, p in out.items() for x in (f"--{k}", p)]
    code, _, err = cli(
        "run", f, "--scheduler", "gedf-mp", "--cpus", ALL[1], "--dedicated-cpu", ALL[0], "--dsp", dsp,
        "--idle", idle, "--duration", "200ms", "--force", *args,
    )  # fmt: skip
    assert code == 0, err
    s = json.loads(out["output"].read_text())
    assert s["scheduler"] == "gedf-mp" and s["m"] == 1 and s["accounting_error"] is None
    assert s["params"]["dsp"] == dsp and s["idle"] == idle
    misses = s["deadline_misses"]
    assert misses > 0
    for term in ("request", "dsp"):
        _stats_ok(s["overheads"][term], term)
        st = s["overheads"][term]
        assert st["count"] + st["discarded"] > 0, term  # every completion is a message
    lines = [json.loads(x) for x in out["trace"].read_text().splitlines()]
    assert sum(1 for x in lines if x["ev"] == "deadline_miss") == misses
    rows = out["job-csv"].read_text().splitlines()
    col = rows[0].split(",").index("missed")
    assert sum(int(r.split(",")[col]) for r in rows[1:]) == misses
    assert out["gantt"].read_text().count("<title>deadline miss") == misses
    pf = json.loads(out["perfetto"].read_text())
    assert sum(1 for e in pf["traceEvents"] if str(e.get("name", "")).startswith("deadline miss")) == misses
    lf = write_set(tmp_path, light(), "light.json")
    code, _, err = cli("run", lf, "--scheduler", "gedf-mp", "--cpus", ALL[1], "--duration", "10ms")
    assert code == 2 and "dedicated" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("idle", ["sleep", "spin"])
def test_the_summary_says_which_idle_mode_ran(cli, tmp_path, idle):
    f = write_set(tmp_path, light())
    code, out, err = cli("run", f, "--scheduler", "gsn-edf", "--cpus", CPU, "--duration", "50ms", "--idle", idle)
    assert code == 0, err
    assert out.splitlines()[0].endswith(f", idle workers {idle}"), out
    code, out, err = cli(
        "run", f, "--scheduler", "gsn-edf", "--cpus", CPU, "--duration", "50ms", "--idle", idle, "--json"
    )
    assert code == 0 and json.loads(out)["idle"] == idle, err
    # kernel-sd's idle CPUs are the kernel's: the summary says so rather than name a mode.
    line = rtsched.runtime.format_summary({"scheduler": "kernel-sd", "cpus": [CPU], "duration_ns": 1, "idle": None})
    assert line.splitlines()[0].endswith(", idle CPUs the kernel's")


def test_pedf_without_placement_partitions_by_wfd(cli, tmp_path):
    f = write_set(tmp_path, light())
    code, out, err = cli("run", f, "--scheduler", "pedf", "--cpus", CPU, "--duration", "100ms", "--json")
    assert code == 0, err
    assert "worst-fit decreasing" in err
    s = json.loads(out)
    assert [sorted(c) for c in s["partition"]] == [[0, 1, 2]]


def test_pedf_with_placement_file(cli, tmp_path):
    f = write_set(tmp_path, light())
    pl = tmp_path / "p.json"
    pl.write_text(json.dumps(rtsched.partition(light(), 1, "pedf_ffd")))
    code, out, err = cli(
        "run", f, "--scheduler", "pfp", "--cpus", CPU, "--duration", "100ms", "--placement", pl, "--json"
    )
    assert code == 0, err
    assert "worst-fit" not in err and json.loads(out)["scheduler"] == "pfp"


@pytest.mark.parametrize(
    "cpus, words", [("a,b", "CPU list"), ("0,,1", "CPU list"), ("3-1", "is empty"), ("100000", "largest CPU id")]
)
def test_bad_cpus(cli, tmp_path, cpus, words):
    f = write_set(tmp_path, light())
    code, out, err = cli("run", f, "--scheduler", "gsn-edf", "--cpus", cpus, "--duration", "100ms")
    assert code == 2 and out == ""
    assert err.startswith("rtsched run: error:") and words in err and len(err.splitlines()) == 1


def test_kernel_sd_admission_error(cli, tmp_path):
    # Total reservation bandwidth far above any kernel limit (m x 0.95).
    m = len(ALL)
    ts = rtsched.TaskSet([rtsched.Task(wcet="9ms", period="10ms")] * (2 * m + 2))
    f = write_set(tmp_path, ts)
    cpus = ",".join(map(str, ALL))
    code, out, err = cli("run", f, "--scheduler", "kernel-sd", "--cpus", cpus, "--duration", "100ms")
    assert code == 2 and "--force" in err and len(err.splitlines()) == 1, (out, err)  # ours, before the kernel's
    code, out, err = cli("run", f, "--scheduler", "kernel-sd", "--cpus", cpus, "--duration", "100ms", "--force")
    assert code == 2, (out, err)
    err = err.splitlines()[-1]
    # Either the kernel refused the bandwidth (EBUSY, with the numbers) or this environment
    # refuses SCHED_DEADLINE altogether; both must say so in one line.
    assert "SCHED_DEADLINE" in err and len(err.splitlines()) == 1
    if "EBUSY" in err:
        assert "total bandwidth" in err and "kernel limit" in err


def test_exports_of_the_converted_trace_parse(cli, tmp_path):
    f = write_set(tmp_path, light())
    paths = {
        k: tmp_path / v
        for k, v in [
            ("output", "s.json"),
            ("trace", "t.jsonl"),
            ("perfetto", "p.json"),
            ("job-csv", "j.csv"),
            ("gantt", "g.svg"),
        ]
    }
    args = [x for k, p in paths.items() for x in (f"--{k}", p)]
    code, out, err = cli("run", f, "--scheduler", "gsn-edf", "--cpus", CPU, "--duration", "200ms", "--json", *args)
    assert code == 0, err
    s = json.loads(paths["output"].read_text())
    assert s == json.loads(out)
    lines = [json.loads(x) for x in paths["trace"].read_text().splitlines()]
    assert lines[0]["ev"] == "meta" and lines[0]["m"] == 1 and lines[0]["horizon"] == 200_000_000
    assert sum(1 for x in lines if x["ev"] == "release") == s["jobs"]
    # The summary is computed from this very trace: its numbers are the trace's.
    assert sum(1 for x in lines if x["ev"] == "complete" and x["t"] <= s["duration_ns"]) == s["completed"]
    assert sum(1 for x in lines if x["ev"] == "deadline_miss") == s["deadline_misses"]
    overheads = [x for x in lines if x["ev"] == "overhead"]
    for term, st in s["overheads"].items():
        samples = [x["duration"] for x in overheads if x["kind"] == term]
        assert len(samples) == st["count"] + st["discarded"], term
        assert max(samples, default=0) == st["max_raw_ns"], term
    ts_ = [x["t"] for x in lines[1:]]
    assert ts_ == sorted(ts_)
    pf = json.loads(paths["perfetto"].read_text())
    assert len([e for e in pf["traceEvents"] if e.get("cat") == "job"]) >= s["completed"]
    rows = paths["job-csv"].read_text().splitlines()
    assert len(rows) == s["jobs"] + 1
    header = rows[0].split(",")
    resp = [int(r.split(",")[header.index("response_time")]) for r in rows[1:] if r.split(",")[header.index("finish")]]
    assert len(resp) == s["completed"] and max(resp) == s["response_time_ns"]["max"]
    assert "<svg" in paths["gantt"].read_text()
    # The same trace as a PNG Gantt chart.
    png = tmp_path / "g.png"
    code, _, err = cli("run", f, "--scheduler", "gsn-edf", "--cpus", CPU, "--duration", "100ms", "--gantt", png)
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_api_errors_are_rtsched_errors():
    with pytest.raises(rtsched.RtschedError, match="unknown scheduler"):
        rtsched.run(light(), scheduler="fifo", cpus=[CPU], duration="10ms")
    with pytest.raises(rtsched.RtschedError, match="global and takes no placement"):
        rtsched.run(light(), scheduler="gsn-edf", cpus=[CPU], duration="10ms", placement=[[0, 1, 2]])
    with pytest.raises(
        rtsched.RtschedError,
        match="gsn-edf: parameter priorities: applies only to --scheduler pfp, push-pull-fp, not gsn-edf",
    ):
        rtsched.run(light(), scheduler="gsn-edf", cpus=[CPU], duration="10ms", params={"priorities": "rm"})
    with pytest.raises(rtsched.RtschedError, match="parameter priorities"):
        rtsched.run(light(), scheduler="pfp", cpus=[CPU], duration="10ms", params={"priorities": "1,2"})
    own = r"needs a CPU of its own for release handling \(--dedicated-cpu N; Python: dedicated_cpu=N\)"
    with pytest.raises(rtsched.RtschedError, match=own):
        rtsched.run(light(), scheduler="gsn-edf-di", cpus=[CPU], duration="10ms")


def test_the_registry_lists_every_mechanism_with_its_declarations():
    reg = rtsched.schedulers()
    names = [e["name"] for e in reg]
    assert names[:5] == ["pedf", "pfp", "gsn-edf", "gsn-edf-di", "kernel-sd"] and len(set(names)) == len(names)
    by = {e["name"]: e for e in reg}
    assert by["pedf"]["placement"] == by["pfp"]["placement"] == "partition"
    assert by["gsn-edf"]["placement"] == "none" and by["gsn-edf"]["dedicated_cpu"] == "none"
    assert by["gsn-edf-di"]["dedicated_cpu"] == "required" and by["gsn-edf-di"]["dedicated_role"] == "release handling"
    assert [p["name"] for p in by["pfp"]["params"]] == ["priorities"] and by["pfp"]["params"][0]["default"] == "dm"
    assert by["gsn-edf"]["invariant"] == "global" and by["pedf"]["invariant"] == "partitioned"
    assert by["kernel-sd"]["invariant"].startswith("none:") and by["kernel-sd"]["user_jobs"] is False
    terms = [t["name"] for t in by["gsn-edf"]["terms"]]
    assert terms == ["release", "release_event", "schedule", "lock_wait", "context_switch", "ipi"]
    assert by["kernel-sd"]["terms"] == [], "the kernel's overheads are not observable from user space"
    from rtsched.runtime import terms as model_terms

    assert model_terms("gsn-edf") == terms


def test_list_schedulers_prints_one_line_per_registered_mechanism(cli):
    code, out, err = cli("run", "--list-schedulers")
    assert code == 0, err
    lines = out.splitlines()
    reg = rtsched.schedulers()
    assert len(lines) == len(reg)
    for line, e in zip(lines, reg, strict=True):
        assert line.split()[0] == e["name"] and line == e["line"]
    assert "params priorities=dm" in lines[1] and "needs a dedicated CPU" in lines[3]
    code, out, err = cli("run", "--scheduler", "gsn-edf")
    assert code == 2 and "FILE is required" in err and len(err.splitlines()) == 1


def test_mechanism_parameters_reach_the_builder_from_the_cli(cli, tmp_path):
    # Task 0 (T = 10 ms) and task 2 (T = 7 ms): deadline- and rate-monotonic agree here, so
    # give the ranks explicitly to make task 0 the top priority, by name and by --param.
    f = write_set(tmp_path, light())
    for args in (["--priorities", "0,2,1"], ["--param", "priorities=0,2,1"]):
        code, out, err = cli("run", f, "--scheduler", "pfp", "--cpus", CPU, "--duration", "100ms", "--json", *args)
        assert code == 0, err
        s = json.loads(out)
        assert s["params"] == {"priorities": "0,2,1"} and s["accounting_error"] is None
    code, out, err = cli("run", f, "--scheduler", "gsn-edf", "--cpus", CPU, "--duration", "100ms", "--priorities", "rm")
    assert code == 2 and "gsn-edf: parameter priorities: applies only to" in err and len(err.splitlines()) == 1
    code, out, err = cli("run", f, "--scheduler", "pfp", "--cpus", CPU, "--duration", "100ms", "--param", "priorities")
    assert code == 2 and "KEY=VALUE" in err


def test_python_int_durations_in_params_are_nanoseconds():
    # The Python API takes every duration as int nanoseconds, mechanism parameters included;
    # the command line's text needs a unit (docs/cli.md).
    ts = rtsched.TaskSet([rtsched.Task(wcet="1ms", period="10ms")], m=1)
    s = rtsched.run(ts, scheduler="cqm", cpus=[int(CPU)], duration="50ms", params={"quantum": 2_000_000})
    assert s["params"]["quantum"] == 2_000_000 and s["accounting_error"] is None
    with pytest.raises(rtsched.RtschedError, match="quantum"):
        rtsched.run(ts, scheduler="cqm", cpus=[int(CPU)], duration="50ms", params={"quantum": "2000000"})


def test_measure_overheads_quick_writes_a_model(cli, tmp_path):
    out = tmp_path / "ov"
    code, _, err = cli(
        "measure-overheads", "--scheduler", "gsn-edf", "--quick", "--cpus", CPU, "--out", out, "--seconds", "0.1"
    )
    assert code == 0, err
    assert sum(" U=" in line for line in err.splitlines()) == 3, err  # progress lines
    model = json.loads((out / "overheads-gsn-edf.json").read_text())
    # Each run says whether its timing can be trusted; a run that cannot is named on stderr.
    for r in model["runs"]:
        assert isinstance(r["trustworthy"], bool)
        assert (f"warning: n={r['n']}:" in err) == (not r["trustworthy"]), (r, err)
    assert model["scheduler"] == "gsn-edf" and model["m"] == 1 and "machine" in model
    assert model["params"] == {} and model["seconds_per_run"] == 0.1 and model["interrupted"] is False
    # The model's terms are the mechanism's, from the registry, and each has a value per n run.
    from rtsched.runtime import terms

    assert set(model["terms"]) <= set(terms("gsn-edf")) and {"release", "schedule"} <= set(model["terms"])
    assert [r["n"] for r in model["runs"]] == [1, 5, 10]
    for t, v in model["terms"].items():
        assert len(v["n"]) == len(v["avg_ns"]) == len(v["max_ns"]) == len(v["count"]), t
        assert all(c > 0 for c in v["count"]), t
    rel = model["terms"]["release"]
    # A point whose every release sample the host disturbed has none (the run says so).
    assert rel["n"] == [r["n"] for r in model["runs"] if "release" not in r.get("all_discarded", [])]
    assert len(rel["avg_ns"]) == len(rel["max_ns"]) == len(rel["n"])
    assert all(a <= b for a, b in zip(rel["avg_ns"], rel["max_raw_ns"], strict=True))
    for stat in ("avg", "max"):
        assert (out / f"overheads-gsn-edf-{stat}.png").read_bytes()[:4] == b"\x89PNG"


def _start_and_interrupt(args, after_line=None, settle=1.0):
    """Starts the CLI, waits until `after_line` (if given) has appeared on its stderr and then
    until a run is under way (a thread named "rtsched-run" — the extension's run thread, whose
    name the run's worker threads inherit — exists), lets it run `settle` s, sends SIGINT and
    returns (exit code, stdout, stderr). Waiting for the run (not a fixed delay) keeps the
    signal out of Python's start-up, where it would be an ordinary KeyboardInterrupt."""
    import signal
    import subprocess
    import sys
    import threading
    import time

    p = subprocess.Popen(
        [sys.executable, "-m", "rtsched", *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    out, err = [], []
    readers = [
        threading.Thread(target=lambda f=f, acc=acc: acc.extend(f), daemon=True)
        for f, acc in ((p.stdout, out), (p.stderr, err))
    ]
    for r in readers:
        r.start()

    def running():
        for tid in os.listdir(f"/proc/{p.pid}/task"):
            try:
                with open(f"/proc/{p.pid}/task/{tid}/comm") as f:
                    if f.read().strip() == "rtsched-run":
                        return True
            except OSError:
                pass
        return False

    deadline = time.monotonic() + 120
    try:
        while (after_line is not None and not any(after_line in x for x in err)) or not running():
            assert p.poll() is None, ("".join(out), "".join(err))
            if time.monotonic() > deadline:  # a hang guard (120 s), not a timing check
                pytest.fail(f"the run thread did not appear within 120 s: {''.join(err)}")
            time.sleep(0.01)
        time.sleep(settle)
        p.send_signal(signal.SIGINT)
        p.wait(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    for r in readers:
        r.join(timeout=10)
    return p.returncode, "".join(out), "".join(err)


def test_ctrl_c_stops_a_run_early_and_writes_the_partial_results(tmp_path):
    ts = light()
    f = write_set(tmp_path, ts)
    js, tr = tmp_path / "out.json", tmp_path / "t.jsonl"
    code, out, err = _start_and_interrupt(
        ["run", f, "--scheduler", "gsn-edf", "--cpus", CPU, "--duration", "30s", "--json", "-o", js, "--trace", tr]
    )
    assert code == 130, (out, err)
    assert "interrupted after" in err
    s = json.loads(js.read_text())
    assert s == json.loads(out)
    assert s["interrupted"] is True
    assert 0 < s["duration_ns"] < 30_000_000_000
    assert s["accounting_error"] is None and s["dropped_records"] == 0
    assert s["released"] == s["completed"] + s["pending"] == s["jobs"]
    # Nothing lost: every job due in [0, duration) was released.
    assert s["released"] == sum(-(-s["duration_ns"] // t.period) for t in ts)
    assert s["completed"] > 0
    lines = [json.loads(x) for x in tr.read_text().splitlines()]
    assert lines[0]["horizon"] == s["duration_ns"]
    assert sum(1 for x in lines if x["ev"] == "release") == s["jobs"]


def test_ctrl_c_in_measure_overheads_writes_the_model_measured_so_far(tmp_path):
    out = tmp_path / "ov"
    code, _, err = _start_and_interrupt(
        ["measure-overheads", "--scheduler", "pedf", "--quick", "--cpus", CPU, "--out", out, "--seconds", "30"],
        settle=0.5,
    )
    # Interrupted during the first n: nothing measured, but the (empty) model is written.
    assert code == 130, err
    model = json.loads((out / "overheads-pedf.json").read_text())
    assert model["interrupted"] is True and model["runs"] == [] and model["terms"] == {}
    code, _, err = _start_and_interrupt(
        ["measure-overheads", "--scheduler", "pedf", "--quick", "--cpus", CPU, "--out", out, "--seconds", "1"],
        after_line="(2/3",
        settle=0.4,
    )
    assert code == 130, err
    assert "interrupted at n=5" in err
    model = json.loads((out / "overheads-pedf.json").read_text())
    assert model["interrupted"] is True
    assert [r["n"] for r in model["runs"]] == [1]
    # Every term measured so far comes from that one run (which terms have samples left after
    # the interference filter depends on the host's load, so no particular term is named).
    assert model["terms"] and all(t["n"] == [1] for t in model["terms"].values()), model["terms"]
    assert (out / "overheads-pedf-avg.png").read_bytes()[:4] == b"\x89PNG"


def test_run_output_options_as_everywhere(cli, tmp_path):
    """A table by default, --json prints the summary, -o writes it; the old --json OUT still
    writes OUT, with a deprecation message; --window draws part of the Gantt chart."""
    f = write_set(tmp_path, light())
    o, svg = tmp_path / "s.json", tmp_path / "g.svg"
    code, out, err = cli(
        "run", f, "--scheduler", "gsn-edf", "--cpus", CPU, "--duration", "100ms", "-o", o, "--gantt", svg,
        "--window", "20ms:40ms",
    )  # fmt: skip
    assert code == 0, err
    assert out.startswith("gsn-edf on CPUs") and "jobs" in out and "overheads:" in out
    s = json.loads(o.read_text())
    assert s["scheduler"] == "gsn-edf" and ">20ms<" in svg.read_text() and ">40ms<" in svg.read_text()
    old = tmp_path / "old.json"
    code, out, err = cli("run", f, "--scheduler", "gsn-edf", "--cpus", CPU, "--duration", "50ms", "--json", old)
    assert code == 0 and "deprecated: --json OUT; use -o" in err
    assert json.loads(out) == json.loads(old.read_text())
    code, _, err = cli("run", f, "--scheduler", "gsn-edf", "--cpus", CPU, "--duration", "50ms", "--window", "0:1ms")
    assert code == 2 and "--window applies to the Gantt chart" in err


def test_isolate_wraps_the_run_and_reports_what_it_changed(isolate_recorder):
    # The host's limits are not touched here: protocol.isolated is replaced by a recorder, and
    # the test checks the wiring — entered before the run on the run's CPUs, left after it,
    # its report in the summary, a refusal warned about.
    from rtsched.runtime import run_raw

    calls, state = isolate_recorder
    state["changed"] = [{"what": "/proc/sys/kernel/sched_rt_runtime_us", "from": "950000", "to": "-1"}]
    state["refused"] = ["/sys/kernel/debug/sched/fair_server/cpu0/runtime: not readable"]
    cpu = sorted(os.sched_getaffinity(0))[0]
    ts = rtsched.TaskSet([rtsched.Task(wcet="1ms", period="10ms")])
    s = run_raw(ts, scheduler="gsn-edf", cpus=[cpu], duration="50ms", isolate=True, quiet=True)["summary"]
    assert calls == [("enter", [cpu]), ("exit",)]
    assert s["isolate"]["changed"][0]["to"] == "-1" and s["isolate"]["refused"]
    assert "isolate" not in run_raw(ts, scheduler="gsn-edf", cpus=[cpu], duration="50ms", quiet=True)["summary"]
