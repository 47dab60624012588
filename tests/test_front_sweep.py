"""Issue 14, sweeps that cannot be turned against the user: a spec's name is a name (never a
path), a results folder has one owner at a time (a lock with the owner's pid), grids are
bounded before they are expanded, unknown names fail before the first point runs, and errors
raised in worker processes reach the user as themselves."""

import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest
import rtsched
from rtsched.experiments import run_sweep
from rtsched.experiments.executors import LocalExecutor, PointFailed
from rtsched.experiments.spec import SpecError, parse_spec
from rtsched.experiments.sweep import LOCK
from rtsched.experiments.testing import fake_evaluate

BASE = """
name = "ok"
samples = 3
methods = ["gfb", "ffd"]
[grid]
m = [2]
n = [4]
util = [1.0, 1.5]
"""


@pytest.mark.parametrize("name", ["../escape", "/abs/path", "a/b", "a\\\\b", "..", ".hidden", "", "x" * 101, "a b"])
def test_a_name_is_not_a_path(name):
    text = BASE.replace('name = "ok"', f'name = "{name}"')
    with pytest.raises(SpecError, match="not a valid name"):
        parse_spec(text, "s.toml")


def test_the_default_name_is_checked_too(tmp_path):
    with pytest.raises(SpecError, match="not a valid name"):
        parse_spec(BASE.replace('name = "ok"\n', ""), str(tmp_path / "bad name.toml"))
    assert parse_spec(BASE.replace('name = "ok"\n', ""), str(tmp_path / "good-name.toml")).name == "good-name"


def test_the_cli_refuses_a_path_name(cli, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(BASE.replace('name = "ok"', 'name = "../../etc"'))
    code, out, err = cli("sweep", spec, "--quiet")
    assert code == 2 and err.count("\n") == 1 and "not a valid name" in err
    assert not (tmp_path / "etc").exists() and not Path("results").joinpath("../../etc").exists()


@pytest.mark.parametrize(
    "change, words",
    [
        (("samples = 3", "samples = 2000000"), ["samples", "1,000,000"]),
        (
            (
                "util = [1.0, 1.5]",
                "util = {from = 0.1, to = 9000, step = 0.1}\nepsilon = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]",
            ),
            ["points"],
        ),
        (("samples = 3", "samples = 900000"), ["task sets", "1,000,000,000"]),
        (("n = [4]", 'n = [{from = 1, to = "5000000"' + ", step = 1}]"), ["10,000,000 points"]),
        (("n = [4]", "n = [5000000]"), ["1,000,000 tasks per set"]),
        (("m = [2]", "m = [20000]"), ["1..=16384"]),
    ],
)
def test_grids_are_bounded_before_expansion(change, words):
    text = BASE.replace(*change)
    if "900000" in change[1]:
        text = text.replace("util = [1.0, 1.5]", "util = {from = 0.1, to = 200, step = 0.1}")
    with pytest.raises(SpecError) as e:
        parse_spec(text, "s.toml")
    for w in words:
        assert w in str(e.value), str(e.value)


def test_unknown_names_fail_before_the_first_point(tmp_path):
    for change, word in [
        (('methods = ["gfb", "ffd"]', 'methods = ["gfb", "ffdd"]'), "ffdd"),
        (("[grid]", '[generator]\nname = "randfixedsumm"\n[grid]'), "randfixedsumm"),
        (("[grid]", '[generator]\nperiods = "loguniform:10ms"\n[grid]'), "period"),
    ]:
        spec = parse_spec(BASE.replace(*change), "s.toml")
        out = tmp_path / word
        with pytest.raises(SpecError, match=word):
            run_sweep(spec, out, progress=False)
        assert not list(out.glob("points/*.parquet")), "nothing was evaluated"


def test_a_results_folder_has_one_owner(tmp_path):
    spec = parse_spec(BASE.replace('methods = ["gfb", "ffd"]', 'methods = ["a", "b"]'), "s.toml")
    out = tmp_path / "r"
    out.mkdir()
    # A live owner (this test's parent process, on this host): refused, naming it.
    import socket

    (out / LOCK).write_text(f"{os.getppid()} {socket.gethostname()}\n")
    with pytest.raises(SpecError) as e:
        run_sweep(spec, out, evaluator=fake_evaluate, jobs=1, progress=False)
    assert "in use by another run" in str(e.value) and str(os.getppid()) in str(e.value)
    # An owner that is gone (kill -9): taken over, and the lock is released at the end.
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (out / LOCK).write_text(f"{gone.stdout.strip()} {socket.gethostname()}\n")
    res = run_sweep(spec, out, evaluator=fake_evaluate, jobs=1, progress=False)
    assert len(res.computed) == len(spec.points) and not (out / LOCK).exists()


def test_worker_errors_reach_the_user_as_themselves():
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        e = pool.submit(rtsched.parse_duration, "3 fortnights").exception(timeout=120)
    assert type(e) is rtsched.RtschedError and "unknown unit" in str(e)
    with pytest.raises(PointFailed) as pf:
        list(LocalExecutor(2).run(rtsched.parse_duration, [("a", "1ms"), ("b", "3 fortnights"), ("c", "2ms")]))
    assert pf.value.key == "b" and type(pf.value.error) is rtsched.RtschedError
