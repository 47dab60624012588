"""The simulation reproductions go through the one runner: their point files carry spec, seed and
version, and a run killed with SIGKILL at a random moment, then resumed, loses and redoes
nothing and ends equal to an uninterrupted run (as the sweeps' test does, with the real
simulation evaluators, slowed down so that the kill lands between points)."""

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
from rtsched.experiments import store
from rtsched.experiments.registry import load_experiment, lookup, reproduce
from rtsched.experiments.testing import child_env, slowed_evaluate

# Six points each, small enough to simulate in well under a second per point.
TINY = {
    "spres-table1": {
        "samples": 1,
        "horizon": "200ms",
        "grid": {"m": [4], "n": ["m+1", "m+2"], "util_frac": [0.85, 0.9, 0.95]},
    },
    "rtws-tables": {
        "samples": 1,
        "horizon": "1s",
        "grid": {"m": [2, 4], "window": [[0.38, 0.40], [0.58, 0.60], [0.73, 0.75]]},
    },
}

CHILD = """
import json, sys
from rtsched.experiments.registry import reproduce
from rtsched.experiments.testing import slowed_evaluate
reproduce(sys.argv[1], quick=True, resume=True, out=sys.argv[2], override=json.loads(sys.argv[3]),
          evaluator=slowed_evaluate, jobs=2, progress=False)
"""


def contents(out):
    """point id -> (rows, metadata) of every point file."""
    return {
        f.stem: (pq.read_table(f).to_pydict(), store.read_metadata(f))
        for f in sorted((Path(out) / "points").glob("*.parquet"))
    }


def snapshot(out):
    return {f.stem: (f.stat().st_ino, f.stat().st_mtime_ns) for f in (Path(out) / "points").glob("*.parquet")}


class Counter:
    def __init__(self):
        self.ids = []

    def __call__(self, point_json):
        self.ids.append(hashlib.sha256(point_json.encode()).hexdigest()[:16])
        return slowed_evaluate(point_json)


@pytest.mark.parametrize("name", sorted(TINY))
def test_points_carry_spec_seed_and_version(name, tmp_path):
    res = reproduce(name, quick=True, out=tmp_path / "r", jobs=1, progress=False, override=TINY[name])
    spec = load_experiment(lookup(name), quick=True, override=TINY[name])
    assert len(spec.points) == 6 and len(res["sweep"].computed) == 6
    assert json.loads((tmp_path / "r" / "sweep.json").read_text())["kind"] == name
    for p in spec.points:
        meta = store.read_metadata(store.point_path(tmp_path / "r", p))
        assert meta["rtsched.spec"] == lookup(name).read_text()
        assert meta["rtsched.spec_hash"] == spec.hash and meta["rtsched.kind"] == name
        assert meta["rtsched.point_id"] == p.id and json.loads(meta["rtsched.point"]) == p.params
        assert int(meta["rtsched.seed"]) == p.params["seed"]
        assert meta["rtsched.version"] == str(rtsched.__version__)


@pytest.mark.parametrize("name", sorted(TINY))
def test_sigkill_then_resume_equals_an_uninterrupted_run(name, tmp_path):
    override = TINY[name]
    spec = load_experiment(lookup(name), quick=True, override=override)
    total = len(spec.points)
    seed = int.from_bytes(os.urandom(4), "big")
    k = random.Random(seed).randint(1, total - 2)
    print(f"kill after {k} points (random seed {seed})")
    out = tmp_path / "r"
    errlog = tmp_path / "child.err"
    with open(errlog, "wb") as errf:
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, name, str(out), json.dumps(override)],
            env=child_env(RTSCHED_FAKE_EVAL_DELAY="0.6", RTSCHED_FAKE_EVAL_LOG=str(tmp_path / "eval.log")),
            stdout=subprocess.DEVNULL,
            stderr=errf,
            start_new_session=True,
        )
    deadline = time.monotonic() + 300
    pdir = out / "points"
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if pdir.is_dir() and len(list(pdir.glob("*.parquet"))) >= k:
                break
            time.sleep(0.005)
        alive = proc.poll() is None
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    assert alive, f"the run ended before it was killed: {errlog.read_text()[-2000:]}"
    done = snapshot(out)
    assert k <= len(done) < total
    for p in spec.points:  # every file present after the kill is a complete, valid point
        if p.id in done:
            assert store.check_point(store.point_path(out, p), spec, p) is None
    counter = Counter()
    res = reproduce(
        name, quick=True, resume=True, out=out, evaluator=counter, jobs=1, progress=False, override=override
    )
    assert set(counter.ids) == {p.id for p in spec.points} - set(done), "finished points were recomputed"
    assert sorted(res["sweep"].kept) == sorted(done)
    after = snapshot(out)
    assert all(after[i] == done[i] for i in done)
    ref = reproduce(name, quick=True, out=tmp_path / "ref", jobs=1, progress=False, override=override)
    assert contents(out) == contents(tmp_path / "ref")
    assert res["csv"].read_text() == ref["csv"].read_text()
    assert res["result"]["text"] == ref["result"]["text"]
