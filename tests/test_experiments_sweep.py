"""Sweeps: Parquet output and metadata, executors agree, resume after corruption and after kill -9.

The evaluator here is the fake of rtsched.experiments.testing (a deterministic function of the
point), so these tests check the engine, not the schedulability analysis.
"""

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import rtsched
from rtsched.experiments import run_sweep, store
from rtsched.experiments.evaluate import RESULT_COLUMNS, EvaluatorMissing, core_evaluator, has_core_evaluator
from rtsched.experiments.executors import LocalExecutor, parse_options
from rtsched.experiments.spec import SpecError, parse_spec
from rtsched.experiments.testing import child_env, fake_evaluate

SPEC = """
name = "t"
samples = 12
seed = 3
methods = ["ffd", "wfd", "spres", "giveup-x"]
[generator]
periods = "seed004"
[grid]
m = [2, 4]
n = ["m+1", "2m"]
util_frac = [0.5, 0.8, 0.9, 1.0]
epsilon = [0, "500us"]
[plot]
panels = "n"
curves = "group"
[plot.groups]
part = ["ffd", "wfd"]
all = ["ffd", "wfd", "spres"]
"""


def contents(out):
    """point id -> (rows as Python lists, metadata) of every point file."""
    res = {}
    for f in sorted((Path(out) / "points").glob("*.parquet")):
        t = pq.read_table(f)
        res[f.stem] = (t.to_pydict(), store.read_metadata(f))
    return res


def snapshot(out):
    return {f.stem: (f.stat().st_ino, f.stat().st_mtime_ns) for f in (Path(out) / "points").glob("*.parquet")}


@pytest.fixture
def spec():
    return parse_spec(SPEC, "t.toml")


def test_points_are_written_with_contract_columns_and_metadata(spec, tmp_path):
    res = run_sweep(spec, tmp_path / "r", evaluator=fake_evaluate, jobs=1, progress=False)
    assert len(res.computed) == len(spec.points) == 32 and not res.kept
    assert (tmp_path / "r" / "spec.toml").read_text() == SPEC
    for p in spec.points:
        path = store.point_path(tmp_path / "r", p)
        assert store.check_point(path, spec, p) is None
        t = pq.read_table(path)
        assert t.column_names == [
            "point",
            "m",
            "n",
            "util",
            "epsilon",
            "set",
            "method",
            "schedulable",
            "gave_up",
            "switch_rate",
            "utilization",
        ]
        assert t.num_rows == 12 * 4
        meta = store.read_metadata(path)
        assert meta["rtsched.spec"] == SPEC
        assert meta["rtsched.point_id"] == p.id and json.loads(meta["rtsched.point"]) == p.params
        assert int(meta["rtsched.seed"]) == p.seed
        assert meta["rtsched.version"] == str(rtsched.__version__)
        # the rows are the evaluator's, unchanged
        ref = fake_evaluate(p.json)
        got = t.to_pydict()
        for col in RESULT_COLUMNS:
            assert got[col] == ref[col]
        assert set(got["point"]) == {p.id} and set(got["epsilon"]) == {p.coords["epsilon"]}
    assert not list((tmp_path / "r" / "points").glob(".*"))  # no temporary files left


def test_local_worker_count_does_not_change_results(spec, tmp_path):
    run_sweep(spec, tmp_path / "a", evaluator=fake_evaluate, jobs=1, progress=False)
    run_sweep(spec, tmp_path / "b", evaluator=fake_evaluate, jobs=2, progress=False)
    a, b = contents(tmp_path / "a"), contents(tmp_path / "b")
    assert a == b and len(a) == 32


def test_dask_executor_gives_identical_parquet(spec, tmp_path):
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install '.[test]')")
    from rtsched.experiments.executors import DaskExecutor

    run_sweep(spec, tmp_path / "local", evaluator=fake_evaluate, jobs=2, progress=False)
    with distributed.LocalCluster(
        processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None
    ) as cluster:
        ex = DaskExecutor(address=cluster.scheduler_address)
        try:
            run_sweep(spec, tmp_path / "dask", evaluator=fake_evaluate, executor=ex, progress=False)
        finally:
            ex.close()
    a, b = contents(tmp_path / "local"), contents(tmp_path / "dask")
    assert a == b and len(a) == 32


def test_refuses_a_directory_of_another_spec(spec, tmp_path):
    out = tmp_path / "r"
    run_sweep(spec, out, evaluator=fake_evaluate, jobs=1, progress=False)
    other = parse_spec(SPEC.replace("samples = 12", "samples = 13"), "t.toml")
    for resume in (False, True):
        with pytest.raises(SpecError, match="holds 32 point\\(s\\) of a different spec"):
            run_sweep(other, out, resume=resume, evaluator=fake_evaluate, jobs=1, progress=False)
    # a change of plot settings only is the same sweep
    same = parse_spec(SPEC.replace('panels = "n"', 'panels = "m"'), "t.toml")
    res = run_sweep(same, out, resume=True, evaluator=fake_evaluate, jobs=1, progress=False)
    assert len(res.kept) == 32 and not res.computed


class Counter:
    def __init__(self):
        self.ids = []

    def __call__(self, point_json):
        self.ids.append(hashlib.sha256(point_json.encode()).hexdigest()[:16])
        return fake_evaluate(point_json)


def test_resume_recomputes_exactly_the_corrupt_and_missing_points(spec, tmp_path, capsys):
    out = tmp_path / "r"
    run_sweep(spec, out, evaluator=fake_evaluate, jobs=1, progress=False)
    ref = contents(out)
    ids = sorted(ref)
    truncated, wrong_meta, deleted, garbage = ids[0], ids[1], ids[2], ids[3]
    pdir = out / "points"
    data = (pdir / f"{truncated}.parquet").read_bytes()
    (pdir / f"{truncated}.parquet").write_bytes(data[: len(data) // 2])
    # a valid Parquet file under the wrong name: metadata names another point
    (pdir / f"{wrong_meta}.parquet").write_bytes((pdir / f"{ids[5]}.parquet").read_bytes())
    (pdir / f"{deleted}.parquet").unlink()
    (pdir / f"{garbage}.parquet").write_bytes(b"")
    (pdir / f".{ids[6]}.parquet.999.tmp").write_bytes(b"half a file")
    before = snapshot(out)
    counter = Counter()
    res = run_sweep(spec, out, resume=True, evaluator=counter, jobs=1, progress=False)
    err = capsys.readouterr().err
    assert sorted(counter.ids) == sorted([truncated, wrong_meta, deleted, garbage])
    assert sorted(res.computed) == sorted(counter.ids)
    assert sorted(i for i, _ in res.invalid) == sorted([truncated, wrong_meta, garbage])
    for pid in (truncated, wrong_meta, garbage):
        assert f"point {pid}" in err and "recomputing" in err
    assert "left by an interrupted write" in err
    assert contents(out) == ref
    after = snapshot(out)
    for pid in ids:
        if pid not in counter.ids:
            assert after[pid] == before[pid], "a valid point was rewritten"
    assert not list(pdir.glob(".*"))


def test_without_resume_same_spec_recomputes(spec, tmp_path):
    out = tmp_path / "r"
    run_sweep(spec, out, evaluator=fake_evaluate, jobs=1, progress=False)
    counter = Counter()
    run_sweep(spec, out, evaluator=counter, jobs=1, progress=False)
    assert len(counter.ids) == 32


KILL_SPEC = SPEC.replace("samples = 12", "samples = 5").replace(
    "util_frac = [0.5, 0.8, 0.9, 1.0]", "util_frac = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]"
)
CHILD = """
import sys
from rtsched.experiments import run_sweep, load_spec
from rtsched.experiments.testing import fake_evaluate
run_sweep(load_spec(sys.argv[1]), sys.argv[2], resume=True, evaluator=fake_evaluate, jobs=2, progress=False)
"""


def test_sigkill_then_resume_loses_and_redoes_nothing(tmp_path, monkeypatch):
    spec_path = tmp_path / "s.toml"
    spec_path.write_text(KILL_SPEC)
    spec = parse_spec(KILL_SPEC, str(spec_path))
    total = len(spec.points)
    assert total == 48
    seed = int.from_bytes(os.urandom(4), "big")
    k = random.Random(seed).randint(2, total - 10)
    print(f"kill after {k} points (random seed {seed})")
    out = tmp_path / "r"
    log1 = tmp_path / "eval1.log"
    errlog = tmp_path / "child.err"
    with open(errlog, "wb") as errf:
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(spec_path), str(out)],
            env=child_env(RTSCHED_FAKE_EVAL_DELAY="0.15", RTSCHED_FAKE_EVAL_LOG=str(log1)),
            stdout=subprocess.DEVNULL,
            stderr=errf,
            start_new_session=True,
        )
    deadline = time.monotonic() + 120
    pdir = out / "points"
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            if pdir.is_dir() and len(list(pdir.glob("*.parquet"))) >= k:
                break
            time.sleep(0.005)
        alive = proc.poll() is None
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert alive, f"the sweep ended before it was killed: {errlog.read_text()[-2000:]}"
    # every file present after the kill is a complete, valid point (atomic writes)
    done = snapshot(out)
    assert k <= len(done) < total
    for p in spec.points:
        if p.id in done:
            assert store.check_point(store.point_path(out, p), spec, p) is None
    # the killed sweep's workers notice that their parent is gone and exit (executors._watch_parent)
    workers_gone = time.monotonic() + 30
    while time.monotonic() < workers_gone:
        pids = [
            int(x)
            for x in subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True, text=True).stdout.split()
        ]
        if not pids:
            break
        time.sleep(0.1)
    assert not pids, f"workers of the killed sweep still run: {pids}"
    counter = Counter()
    res = run_sweep(spec, out, resume=True, evaluator=counter, jobs=1, progress=False)
    assert set(counter.ids) == {p.id for p in spec.points} - set(done), "finished points were recomputed"
    assert sorted(res.kept) == sorted(done)
    after = snapshot(out)
    assert all(after[i] == done[i] for i in done)
    ref_dir = tmp_path / "ref"
    run_sweep(spec, ref_dir, evaluator=fake_evaluate, jobs=1, progress=False)
    assert contents(out) == contents(ref_dir)


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda r: r.pop("gave_up"), "missing column\\(s\\) gave_up"),
        (lambda r: r.update(extra=[]), "unknown column"),
        (lambda r: r["set"].pop(), "column 'set' has"),
        (lambda r: r.update(schedulable=["yes"] * len(r["set"])), "column 'schedulable' is not of type bool"),
        (lambda r: r["method"].__setitem__(0, "bfd"), "were not asked for"),
        (lambda r: r["set"].__setitem__(4, 0), "missing or repeated"),  # row 4 is (set 1, ffd),
    ],
)
def test_evaluator_contract_violations_are_reported(spec, tmp_path, mutate, match):
    def bad(point_json):
        r = fake_evaluate(point_json)
        mutate(r)
        return r

    with pytest.raises(SpecError, match=match):
        run_sweep(spec, tmp_path / "r", evaluator=bad, jobs=1, progress=False)


def test_evaluator_exception_names_the_point(spec, tmp_path):
    def boom(point_json):
        raise ValueError("unknown method 'ffd'")

    with pytest.raises(SpecError, match="point [0-9a-f]{16} \\(m=2 n=3 .*unknown method"):
        run_sweep(spec, tmp_path / "r", evaluator=boom, jobs=1, progress=False)


def test_default_evaluator(spec, tmp_path):
    if not has_core_evaluator():
        print("rtsched._core has no evaluate_point: checking the error message instead of a real sweep")
        with pytest.raises(EvaluatorMissing, match="no evaluate_point"):
            core_evaluator()
        with pytest.raises(EvaluatorMissing, match="no evaluate_point"):
            run_sweep(spec, tmp_path / "r", jobs=1, progress=False)
        pytest.skip("rtsched._core lacks evaluate_point (the Rust evaluator); the real-core sweep is not run")
    real = parse_spec(
        SPEC.replace('["ffd", "wfd", "spres", "giveup-x"]', '["ffd", "wfd"]')
        .replace('epsilon = [0, "500us"]', "epsilon = [0]")
        .replace('[plot.groups]\npart = ["ffd", "wfd"]\nall = ["ffd", "wfd", "spres"]\n', ""),
        "t.toml",
    )
    res = run_sweep(real, tmp_path / "r", jobs=2, progress=False)
    assert len(res.computed) == len(real.points)
    for p in real.points:
        t = pq.read_table(store.point_path(tmp_path / "r", p)).to_pydict()
        assert all(abs(u - p.params["util"]) <= 1e-3 * p.params["util"] for u in t["utilization"])
        assert not any(t["gave_up"])
        # Lopez, Diaz & Garcia (ECRTS 2000; RTS 2004): EDF with first fit places every
        # implicit-deadline set with U <= (beta*m + 1)/(beta + 1), beta = floor(1/umax) >= 1, so at
        # least every set with U <= (m + 1)/2; any reasonable allocation (worst fit included) places
        # every set with U <= m - (m - 1) * umax = 1 here.
        sched = {
            mt: [ok for ok, x in zip(t["schedulable"], t["method"], strict=True) if x == mt] for mt in ("ffd", "wfd")
        }
        if p.params["util"] <= (p.params["m"] + 1) / 2:
            assert all(sched["ffd"]), f"FFD failed below the Lopez bound at {p.label}"
        if p.params["util"] <= 1:
            assert all(sched["wfd"]), f"WFD failed at U <= 1 at {p.label}"
    # the same spec again, one job: identical files (the core is deterministic per point)
    run_sweep(real, tmp_path / "again", jobs=1, progress=False)
    assert contents(tmp_path / "r") == contents(tmp_path / "again")


def test_slurm_options_parse():
    assert parse_options(
        [
            "cores=8",
            "memory=16GB",
            "walltime=01:00:00",
            "processes=1.5",
            "x=true",
            'job-extra-directives=["--exclusive"]',
        ]
    ) == {
        "cores": 8,
        "memory": "16GB",
        "walltime": "01:00:00",
        "processes": 1.5,
        "x": True,
        "job_extra_directives": ["--exclusive"],
    }
    with pytest.raises(SpecError, match="KEY=VALUE"):
        parse_options(["cores"])
    with pytest.raises(SpecError, match="--jobs must be at least 1"):
        LocalExecutor(0)


def test_experiments_import_without_dask():
    code = (
        "import sys; sys.modules['distributed'] = None; sys.modules['dask'] = None\n"
        "import rtsched.experiments, rtsched.experiments.cli, rtsched.experiments.plot\n"
        "from rtsched.experiments.executors import DaskExecutor\n"
        "try:\n    DaskExecutor(address='tcp://x:1')\nexcept Exception as e:\n    print(type(e).__name__, e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "SpecError" in r.stdout and "pip install 'rtsched[cluster]'" in r.stdout


def test_progress_lines_when_not_a_tty():
    import io

    from rtsched.experiments.progress import Progress

    buf = io.StringIO()
    p = Progress(10, 1000, done_points=2, done_sets=200, stream=buf, interval=0.0, label="x")
    p.update(1, 100)
    p.close()
    lines = buf.getvalue().splitlines()
    assert len(lines) == 2 and "\r" not in buf.getvalue()
    assert lines[-1].startswith("x: 3/10 points (30%)") and "task sets/s" in lines[-1] and "ETA" in lines[-1]
    quiet = io.StringIO()
    q = Progress(10, 1000, stream=quiet, interval=1e9)
    q.update(1, 100)
    assert quiet.getvalue() == ""  # non-TTY: nothing between the periodic lines
    q.close()
    assert quiet.getvalue().count("\n") == 1


CTRL_C_CHILD = """
import sys
from rtsched.experiments import cli, evaluate
from rtsched.experiments.testing import fake_evaluate
evaluate.core_evaluator = lambda: fake_evaluate
evaluate.evaluate_point = fake_evaluate
sys.exit(cli.main(["sweep", sys.argv[1], "--out", sys.argv[2], "--jobs", "2", "--quiet"]))
"""


def test_ctrl_c_exits_130_and_keeps_finished_points(tmp_path):
    spec_path = tmp_path / "s.toml"
    spec_path.write_text(KILL_SPEC)
    spec = parse_spec(KILL_SPEC, str(spec_path))
    out = tmp_path / "r"
    proc = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_CHILD, str(spec_path), str(out)],
        env=child_env(RTSCHED_FAKE_EVAL_DELAY="0.15"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if (out / "points").is_dir() and len(list((out / "points").glob("*.parquet"))) >= 3:
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the sweep ended before Ctrl-C"
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert "interrupted; every finished point is saved" in err.decode()
    done = snapshot(out)
    assert 3 <= len(done) < len(spec.points)
    counter = Counter()
    res = run_sweep(spec, out, resume=True, evaluator=counter, jobs=1, progress=False)
    assert sorted(res.kept) == sorted(done) and set(counter.ids).isdisjoint(done)
    assert len(res.kept) + len(res.computed) == len(spec.points)
