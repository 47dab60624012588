"""Issue 24, the bad-input probe's cases closed: each case as the probe found it, now answered
with one clear line, a bound, or a kept result, and nothing written outside the chosen folder.

Sweeps run the fake evaluator of rtsched.experiments.testing (the engine is under test here,
not the analysis)."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import rtsched
from rtsched.experiments import cli as exp_cli
from rtsched.experiments import run_sweep, store
from rtsched.experiments.spec import SpecError, parse_spec
from rtsched.experiments.sweep import LOCK, MARKER, lock
from rtsched.experiments.testing import child_env, fake_evaluate

BASE = """
name = "ok"
samples = 3
methods = ["ffd", "wfd"]
[grid]
m = [2]
n = [4]
util = [1.0, 1.5]
"""


def one_line_error(code, err):
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err


# ---------------------------------------------------------------------------------------------
# 1. Path traversal through a variant's name


def test_a_variant_name_is_not_a_path(cli, tmp_path):
    text = BASE.replace('name = "ok"\n', "") + '\n[variants."x/../../ESCAPED"]\nsamples = 2\n'
    text = 'name = "ok"\ndefault_variant = "x/../../ESCAPED"\n' + text
    spec = tmp_path / "a" / "b" / "s.toml"
    spec.parent.mkdir(parents=True)
    spec.write_text(text)
    with pytest.raises(SpecError, match="variant: 'x/../../ESCAPED' is not a valid name"):
        parse_spec(text, str(spec))
    # the CLI, run from a folder two levels down: results/ok-x/../../ESCAPED would be tmp_path/a/ESCAPED
    p = subprocess.run(
        [sys.executable, "-m", "rtsched", "sweep", str(spec), "--quiet"],
        capture_output=True,
        text=True,
        cwd=spec.parent,
        timeout=600,
    )
    one_line_error(p.returncode, p.stderr)
    assert "not a valid name" in p.stderr
    assert not any(tmp_path.rglob("ESCAPED*")), "something was written through the variant's name"
    assert not any(tmp_path.rglob("sweep.json"))


@pytest.mark.parametrize("name", ["../up", "a/b", ".hidden", ""])
def test_a_variant_given_on_the_command_line_is_checked_too(name):
    text = 'name = "ok"\n' + BASE.replace('name = "ok"\n', "") + f'\n[variants."{name}"]\nsamples = 2\n'
    with pytest.raises(SpecError, match="not a valid name"):
        parse_spec(text, "s.toml", variant=name)


def test_default_results_dir_refuses_a_path_component():
    from rtsched.experiments.registry import results_dir

    assert results_dir("spres-fig3", "text", True) == Path("results/spres-fig3-text-quick")
    for name, variant in [("../x", None), ("ok", "../../x"), ("ok", "a/b")]:
        with pytest.raises(SpecError, match="not a valid name"):
            results_dir(name, variant, False)


# ---------------------------------------------------------------------------------------------
# 2. The results folder is the sweep's own


def test_a_folder_of_the_users_own_files_is_refused(cli, tmp_path):
    user = tmp_path / "mine"
    user.mkdir()
    (user / "spec.toml").write_text("my own notes\n")
    spec = tmp_path / "s.toml"
    spec.write_text(BASE)
    code, out, err = cli("sweep", spec, "--out", user, "--quiet", "--jobs", "1")
    one_line_error(code, err)
    assert "not an rtsched results folder" in err and "'spec.toml'" in err
    assert (user / "spec.toml").read_text() == "my own notes\n" and sorted(os.listdir(user)) == ["spec.toml"]


def test_a_results_folder_is_reused_and_marked(tmp_path):
    spec = parse_spec(BASE, "s.toml")
    out = tmp_path / "r"
    run_sweep(spec, out, evaluator=fake_evaluate, jobs=1, progress=False)
    assert (out / MARKER).is_file()
    res = run_sweep(spec, out, resume=True, evaluator=fake_evaluate, jobs=1, progress=False)
    assert len(res.kept) == len(spec.points)
    # a folder written before the marker existed (sweep.json with a spec hash) is still ours
    (out / MARKER).unlink()
    res = run_sweep(spec, out, resume=True, evaluator=fake_evaluate, jobs=1, progress=False)
    assert len(res.kept) == len(spec.points)


def test_root_and_home_are_refused(tmp_path, monkeypatch):
    spec = parse_spec(BASE, "s.toml")
    with pytest.raises(SpecError, match="root folder"):
        run_sweep(spec, "/", evaluator=fake_evaluate, jobs=1, progress=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(SpecError, match="home folder"):
        run_sweep(spec, home, evaluator=fake_evaluate, jobs=1, progress=False)
    assert not os.listdir(home)


def test_a_folder_that_cannot_be_written_is_one_line(tmp_path, monkeypatch):
    spec = parse_spec(BASE, "s.toml")
    real_mkdir = Path.mkdir

    def denied(self, *a, **k):
        if self.name == "points":
            raise PermissionError(13, "Permission denied", str(self))
        return real_mkdir(self, *a, **k)

    monkeypatch.setattr(Path, "mkdir", denied)
    with pytest.raises(SpecError, match="Permission denied"):
        run_sweep(spec, tmp_path / "r", evaluator=fake_evaluate, jobs=1, progress=False)


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write a read-only folder")
def test_a_read_only_folder_is_one_line(cli, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    spec = tmp_path / "s.toml"
    spec.write_text(BASE)
    code, out, err = cli("sweep", spec, "--out", ro / "r", "--quiet", "--jobs", "1")
    one_line_error(code, err)


# ---------------------------------------------------------------------------------------------
# 3. Ctrl-C: the workers stop now, finished points are kept, a second Ctrl-C is quiet

KILL_SPEC = """
name = "k"
samples = 4
seed = 11
methods = ["ffd", "wfd"]
[grid]
m = [2, 4, 8]
n = ["m+1", "2m"]
util_frac = [0.4, 0.6, 0.8, 0.95]
epsilon = [0, "1ms"]
"""

CTRL_C_CHILD = """
import sys
from rtsched.experiments import cli, evaluate
from rtsched.experiments.testing import fake_evaluate
evaluate.core_evaluator = lambda: fake_evaluate
evaluate.evaluate_point = fake_evaluate
sys.exit(cli.main(["sweep", sys.argv[1], "--out", sys.argv[2], "--jobs", "2", "--quiet"]))
"""


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_stops_the_workers_and_keeps_finished_points(tmp_path, presses):
    spec_path = tmp_path / "s.toml"
    spec_path.write_text(KILL_SPEC)
    spec = parse_spec(KILL_SPEC, str(spec_path))
    out = tmp_path / "r"
    evals = tmp_path / "evals.log"
    proc = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_CHILD, str(spec_path), str(out)],
        env=child_env(RTSCHED_FAKE_EVAL_DELAY="0.3", RTSCHED_FAKE_EVAL_LOG=str(evals)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if (out / "points").is_dir() and len(list((out / "points").glob("*.parquet"))) >= 2:
                break
            time.sleep(0.005)
        assert proc.poll() is None, "the sweep ended before Ctrl-C"
        for _ in range(presses):  # what a terminal's Ctrl-C does: SIGINT to the whole group
            os.killpg(proc.pid, signal.SIGINT)
            time.sleep(0.05)
        _, err = proc.communicate(timeout=120)  # a hang guard, not a timing assertion
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    err = err.decode()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted; every finished point is saved" in err, err
    # The queued points were cancelled, not run to the end and thrown away.
    started = len(evals.read_text().splitlines())
    assert started < len(spec.points) - 4, f"{started} of {len(spec.points)} points were evaluated after Ctrl-C"
    # No worker of the sweep is left (the workers are terminated, not left to finish).
    gone = time.monotonic() + 30  # a hang guard
    while time.monotonic() < gone:
        left = subprocess.run(["ps", "-s", str(proc.pid), "-o", "pid=,args="], capture_output=True, text=True)
        if not left.stdout.strip():
            break
        time.sleep(0.1)
    assert not left.stdout.strip(), f"processes of the sweep still run: {left.stdout}"
    done = {f.stem for f in (out / "points").glob("*.parquet")}
    assert len(done) >= 2
    res = run_sweep(spec, out, resume=True, evaluator=fake_evaluate, jobs=1, progress=False)
    assert set(res.kept) == done and not res.invalid


def test_ctrl_c_in_an_overhead_batch_keeps_the_finished_sets(tmp_path, monkeypatch, capsys):
    from rtsched import api, cli

    sets = [rtsched.TaskSet([rtsched.Task(wcet=1_000_000, period=10_000_000)], m=2) for _ in range(600)]
    batch = tmp_path / "b.jsonl"
    rtsched.save(str(batch), sets)
    real = api.analyze_many
    calls = []

    def interrupted_later(chunk, *a, **k):
        calls.append(len(chunk))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(chunk, *a, **k)

    monkeypatch.setattr(api, "analyze_many", interrupted_later)
    out = tmp_path / "o.jsonl"
    model = Path(__file__).resolve().parents[1] / "docs/examples/overheads-gsn-edf-2cpu.json"
    code = cli.main(["analyze", str(batch), "--overheads", str(model), "--mechanism", "gsn-edf", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 130 and "interrupted after" in err, err
    lines = out.read_text().splitlines()
    assert len(lines) == calls[0] > 0 and all("overheads" in json.loads(x) for x in lines)


# ---------------------------------------------------------------------------------------------
# 4. Bounds on the whole sweep


def test_the_value_cap_is_per_axis_not_per_range_table():
    ranges = ", ".join("{from = 10.0, to = 49.99, step = 0.001}" for _ in range(4))
    text = BASE.replace("util = [1.0, 1.5]", f"util = [{ranges}]")
    with pytest.raises(SpecError, match="per grid axis"):
        parse_spec(text, "s.toml")
    many = ", ".join("{from = 1, to = 100, step = 1}" for _ in range(2500))  # 250,000 values of m
    with pytest.raises(SpecError, match="per grid axis"):
        parse_spec(BASE.replace("m = [2]", f"m = [{many}]"), "s.toml")


def test_embedded_overhead_models_are_bounded(tmp_path):
    model = json.loads((Path(__file__).resolve().parents[1] / "docs/examples/overheads-gsn-edf-2cpu.json").read_text())
    model["runs"] = (
        model.get("runs", []) * 1
        + [{"n": 2, "utilization": 0.5, "jobs": 1, "deadline_misses": 0, "dropped_records": 0}] * 20_000
    )
    big = tmp_path / "overheads-gsn-edf-big.json"
    big.write_text(json.dumps(model))
    assert big.stat().st_size > 1 << 20
    text = BASE.replace('methods = ["ffd", "wfd"]', f'methods = ["gedf@gsn-edf"]\noverheads = "{big}"')
    with pytest.raises(SpecError, match="every point file embeds them"):
        parse_spec(text, str(tmp_path / "s.toml"))


# ---------------------------------------------------------------------------------------------
# 6. Resume verifies point files and reports strays; the lock cannot be taken twice


def test_resume_recomputes_a_changed_point_file_and_reports_strays(tmp_path, capsys):
    spec = parse_spec(BASE, "s.toml")
    out = tmp_path / "r"
    run_sweep(spec, out, evaluator=fake_evaluate, jobs=1, progress=False)
    victim = spec.points[0]
    path = store.point_path(out, victim)
    # A damaged file that still reads: one value changed, the metadata kept as it was.
    table = pq.read_table(path)
    col = table.column("schedulable").to_pylist()
    col[0] = not col[0] if col[0] is not None else True
    idx = table.column_names.index("schedulable")
    table = table.set_column(idx, table.schema.field(idx), __import__("pyarrow").array(col, type="bool"))
    pq.write_table(table, path)
    (out / "points" / "notes.txt").write_text("mine\n")
    capsys.readouterr()
    res = run_sweep(spec, out, resume=True, evaluator=fake_evaluate, jobs=1, progress=False)
    err = capsys.readouterr().err
    assert [i for i, _ in res.invalid] == [victim.id] and "checksum" in res.invalid[0][1]
    assert victim.id in res.computed and len(res.kept) == len(spec.points) - 1
    assert res.stray == ["notes.txt"] and "stray" in err and "notes.txt" in err
    assert store.check_point(path, spec, victim) is None


def test_a_lock_whose_file_names_a_dead_process_is_still_held(tmp_path):
    """The takeover race: a run holds the folder while its lock file names a process that is
    gone (as a second run racing for a stale lock would see it); a third run must not take it."""
    out = tmp_path / "r"
    out.mkdir()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    with lock(out):
        (out / LOCK).write_text(f"{gone.stdout.strip()} {socket.gethostname()}\n")
        with pytest.raises(SpecError, match="in use by another run"):
            with lock(out):
                pass
    assert not (out / LOCK).exists()
    with lock(out):  # released: free again
        pass


# ---------------------------------------------------------------------------------------------
# 7. Deeply nested JSON


@pytest.mark.parametrize("command", ["analyze", "partition", "simulate", "run", "export", "import"])
def test_deeply_nested_json_is_one_line(cli, tmp_path, command):
    f = tmp_path / "deep.json"
    f.write_text('{"tasks": ' + "[" * 100_000 + "]" * 100_000 + "}")
    args = {
        "analyze": ["analyze", f],
        "partition": ["partition", f],
        "simulate": ["simulate", f, "--scheduler", "gedf", "--horizon", "1ms"],
        "run": ["run", f, "--scheduler", "gedf", "--duration", "1s"],
        "export": ["export", f, "--format", "rt-app"],
        "import": ["import", f, "--format", "rt-app"],
    }[command]
    code, out, err = cli(*args)
    one_line_error(code, err)


# ---------------------------------------------------------------------------------------------
# the executor's own Ctrl-C handler: a second interrupt in the CLI is ignored


def test_the_cli_ignores_a_second_interrupt_after_the_first():
    assert exp_cli._interrupt_once is not None
    old = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, exp_cli._interrupt_once)
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, old)


# ---------------------------------------------------------------------------------------------
# 5. rt-app import and export


def rtapp_thread(**extra):
    return {"run": 10, "timer": {"ref": "unique", "period": 100}, **extra}


def test_rtapp_import_bounds_the_expanded_size(cli, tmp_path):
    f = tmp_path / "huge.json"
    f.write_text(json.dumps({"tasks": {"t": rtapp_thread(instance=1_000_000_000)}}))
    assert f.stat().st_size < 300
    code, out, err = cli("import", f, "--format", "rt-app")
    one_line_error(code, err)
    assert "1,000,000 tasks" in err and "'instance'" in err


def test_rtapp_import_refuses_zero_instances(cli, tmp_path):
    f = tmp_path / "zero.json"
    f.write_text(json.dumps({"tasks": {"t": rtapp_thread(instance=0)}}))
    code, out, err = cli("import", f, "--format", "rt-app")
    one_line_error(code, err)
    assert "field 'instance': expected a positive integer, got 0" in err


def test_rtapp_import_keeps_a_name_with_a_comma_and_brace(tmp_path):
    from rtsched.rtapp import from_rtapp

    text = '{"tasks": {"a, }": {"run": 10, "timer": {"ref": "u", "period": 100},}, "b,]": ' + json.dumps(rtapp_thread())
    ts = from_rtapp(text + ",}}")
    assert [t.name for t in ts] == ["a, }", "b,]"]


def test_rtapp_export_never_writes_a_budget_above_the_deadline(cli, tmp_path):
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"tasks": [{"wcet": 1500, "period": "10us", "deadline": 1800}]}))
    out = tmp_path / "o.json"
    code, _, err = cli("export", f, "--format", "rt-app", "-o", out)
    one_line_error(code, err)
    assert "wcet 1500 ns -> 2 µs exceeds deadline 1800 ns -> 1 µs" in err and not out.exists()


def test_rtapp_export_checks_cpus_and_calibration():
    from rtsched.rtapp import to_rtapp

    ts = rtsched.TaskSet([rtsched.Task(wcet="1ms", period="10ms")])
    for kw, word in [
        ({"cpus": [True]}, "cpus"),
        ({"cpus": [1.5]}, "cpus"),
        ({"cpus": "0"}, "cpus"),
        ({"calibration": True}, "calibration"),
    ]:
        with pytest.raises(rtsched.RtschedError, match=word):
            to_rtapp(ts, **kw)
    assert to_rtapp(ts, cpus=[0, 1], calibration=300)[0]["tasks"]["task0"]["cpus"] == [0, 1]


# ---------------------------------------------------------------------------------------------
# 8. The poor list: one clear line, early


def test_a_huge_number_is_not_echoed_whole(cli, tmp_path):
    f = tmp_path / "s.json"
    f.write_text('{"m": 2, "tasks": [{"wcet": "1ms", "period": "10ms"}]}')
    huge = "9" * 300
    for args in (["generate", "--m", huge, "--n", "3"], ["simulate", f, "--scheduler", "gedf", f"--horizon={huge}"]):
        code, out, err = cli(*args)
        one_line_error(code, err)
        assert huge not in err and len(err) < 400, err


def test_a_negative_duration_is_called_negative(cli, tmp_path):
    f = tmp_path / "s.json"
    f.write_text('{"m": 2, "tasks": [{"wcet": "1ms", "period": "10ms"}]}')
    code, out, err = cli("simulate", f, "--scheduler", "gedf", "--horizon=-1ms")
    one_line_error(code, err)
    assert "cannot be negative" in err and "unknown unit" not in err


def test_an_empty_task_set_has_utilization_zero_not_minus_zero(cli, tmp_path):
    f = tmp_path / "s.json"
    f.write_text('{"m": 2, "tasks": []}')
    code, out, err = cli("analyze", f)
    assert "U = 0.0000" in out and "-0.0000" not in out, out
    code, out, err = cli("analyze", f, "--json")
    assert json.loads(out)["utilization"] == 0 and "-0.0" not in out, out
    batch = tmp_path / "b.jsonl"
    batch.write_text('{"m": 2, "tasks": []}\n')
    code, out, err = cli("analyze", batch, "--json")
    assert json.loads(out)["utilization"] == 0 and "-0.0" not in out, out


@pytest.mark.parametrize(
    "args, words",
    [
        (["--jobs", "4096"], ["--jobs 4096", "local worker processes"]),
        (["--dask", ""], ["--dask ''", "scheduler address"]),
        (["--dask", "not a url"], ["scheduler address"]),
    ],
)
def test_executor_options_are_checked_early(cli, tmp_path, args, words):
    spec = tmp_path / "s.toml"
    spec.write_text(BASE)
    code, out, err = cli("sweep", spec, "--out", tmp_path / "r", "--quiet", *args)
    one_line_error(code, err)
    for w in words:
        assert w in err, err
    assert not (tmp_path / "r").exists()


RUN_SET = '{"m": 1, "tasks": [{"wcet": "1ms", "period": "10ms"}, {"wcet": "1ms", "period": "20ms"}]}'


@pytest.mark.parametrize(
    "args, words",
    [
        (["--scheduler", "cqm", "--param", "quantum=1ms", "--quantum", "2ms"], ["cqm: parameter quantum: given twice"]),
        (
            ["--scheduler", "cqm", "--param", "quantum=1ms", "--param", "quantum=2ms"],
            ["parameter quantum: given twice"],
        ),
        (["--scheduler", "cqm", "--quantum", "10"], ["cqm: parameter quantum:", 'duration "10" has no unit', "10ms"]),
        (["--scheduler", "spres", "--param", "rr_quantum=500"], ["spres: parameter rr_quantum:", "has no unit"]),
        (
            ["--scheduler", "pfp", "--param", "priorities=-1,0"],
            ['pfp: parameter priorities: task 0: "-1" is not a rank'],
        ),
        (["--scheduler", "push-pull", "--param", "retries=0"], ["push-pull: parameter retries:", "1..=1000"]),
        (["--scheduler", "gedf-mp", "--dsp", "nap"], ["gedf-mp: parameter dsp:", "spin, window, sleep"]),
        (["--scheduler", "gsn-edf", "--gantt", "OUT/out.bmp"], ["out.bmp", ".svg or .png"]),
        (["--scheduler", "gedf-mp", "--dedicated-cpu", "1", "--cpus", "0,1"], ["CPU 1 is also in cpus 0,1"]),
    ],
)
def test_run_options_are_checked_before_the_run(cli, tmp_path, args, words):
    f = tmp_path / "s.json"
    f.write_text(RUN_SET)
    code, out, err = cli("run", f, "--duration", "100ms", *[a.replace("OUT", str(tmp_path)) for a in args])
    one_line_error(code, err)
    for w in words:
        assert w in err, err
    assert not (tmp_path / "out.bmp").exists() and "partitioned" not in err


# ---------------------------------------------------------------------------------------------
# Unitless strings follow the command line's rule: a string needs a unit, integers are ns


def test_a_unitless_string_in_a_file_is_refused_with_the_fix(cli, tmp_path):
    f = tmp_path / "s.json"
    f.write_text('{"m": 2, "tasks": [{"wcet": "10", "period": "1ms"}]}')
    code, out, err = cli("analyze", f)
    one_line_error(code, err)
    assert "field 'wcet'" in err and "has no unit" in err and "integer 10 for nanoseconds" in err
    f.write_text('{"m": 2, "tasks": [{"wcet": 10, "period": "1ms", "deadline": "1ms"}]}')
    code, out, err = cli("analyze", f)
    assert code == 0, err


def test_a_negative_duration_in_a_file_is_called_negative(cli, tmp_path):
    f = tmp_path / "s.json"
    f.write_text('{"m": 2, "tasks": [{"wcet": "-1ms", "period": "10ms"}]}')
    code, out, err = cli("analyze", f)
    one_line_error(code, err)
    assert "cannot be negative" in err and "unknown unit" not in err


def test_a_unitless_string_in_python_is_refused():
    with pytest.raises(rtsched.RtschedError, match="has no unit"):
        rtsched.Task(wcet="10", period="1ms")
    with pytest.raises(rtsched.RtschedError, match="has no unit"):
        rtsched.parse_duration("1000")
    assert rtsched.parse_duration("0") == 0 and rtsched.Task(wcet=10, period="1ms").wcet == 10
    with pytest.raises(rtsched.RtschedError) as e:
        rtsched.Task(wcet=10**300, period="1ms")
    assert "9" * 60 not in str(e.value) and "0" * 60 not in str(e.value)
    with pytest.raises(rtsched.RtschedError) as e:
        rtsched.TaskSet([], m=10**300)
    assert "0" * 60 not in str(e.value)


def test_a_unitless_string_in_a_spec_is_refused():
    with pytest.raises(SpecError, match="has no unit"):
        parse_spec(BASE + 'epsilon = [0, "500"]\n', "s.toml")
    with pytest.raises(SpecError, match="cannot be negative"):
        parse_spec(BASE + 'epsilon = ["-1ms"]\n', "s.toml")
    assert parse_spec(BASE + 'epsilon = [0, 500, "500us"]\n', "s.toml").epsilon == [0, 500, 500_000]
