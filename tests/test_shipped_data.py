"""The data the docs use ships with the package and is found by name from any folder
(rtsched.shipped; docs/cli.md, "Shipped data, from any folder")."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import rtsched
from rtsched import shipped

ROOT = Path(__file__).resolve().parent.parent
MODEL = "overheads-gsn-edf-2cpu"


def rtsched_in(cwd: Path, *args) -> tuple[int, str, str]:
    """`python -m rtsched ARGS` run in ``cwd`` (a scratch folder, not the clone)."""
    p = subprocess.run(
        [sys.executable, "-m", "rtsched", *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600
    )
    return p.returncode, p.stdout, p.stderr


def test_docs_examples_is_the_package_data_not_a_copy():
    """One copy: the documented folder docs/examples is the package's data folder, so the two
    cannot drift (a copy in its place fails here)."""
    docs = ROOT / "docs" / "examples"
    source = ROOT / "python" / "rtsched" / "data"
    assert docs.is_symlink(), "docs/examples must link to python/rtsched/data, not hold a copy"
    assert docs.resolve() == source.resolve()
    assert shipped.DATA == Path(rtsched.__file__).resolve().parent / "data"
    assert (shipped.DATA / "README.md").is_file()

    # The installed package (editable or not) ships exactly the repository's data files.
    def listing(d: Path) -> dict:
        return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}

    assert listing(shipped.DATA) == listing(source)


def test_the_shipped_names():
    models = shipped.models()
    assert MODEL in models and models[MODEL].is_file()
    assert all(n.startswith("overheads-") for n, p in models.items() if p.is_file())
    examples = shipped.examples()
    assert {"spres-fig1.json", "control.json", "control.csv", "forkjoin.json"} <= set(examples)
    assert not any(n.startswith("overheads-") for n in examples)


def test_overheads_by_name_from_a_scratch_folder(tmp_path):
    ts = tmp_path / "ts.json"
    rtsched.save(ts, rtsched.TaskSet([rtsched.Task(wcet="2ms", period="10ms"), rtsched.Task(wcet="3ms", period="7ms")]))
    args = ["analyze", "ts.json", "--m", 2, "--mechanism", "gsn-edf", "--json", "--overheads"]
    code, by_name, err = rtsched_in(tmp_path, *args, MODEL)
    assert code == 0, err
    code, by_path, err = rtsched_in(tmp_path, *args, shipped.DATA / f"{MODEL}.json")
    assert code == 0, err
    assert json.loads(by_name)["overheads"] == json.loads(by_path)["overheads"]
    code, with_ext, err = rtsched_in(tmp_path, *args, f"{MODEL}.json")
    assert code == 0 and json.loads(with_ext) == json.loads(by_name), err
    # simulate takes the same names
    code, out, err = rtsched_in(tmp_path, "simulate", "ts.json", "--m", 2, "--horizon", "70ms", "--overheads", MODEL)
    assert code == 0, err


def test_an_existing_path_comes_first(tmp_path):
    """A file of the same name in the current folder is read, not the shipped model."""
    ts = tmp_path / "ts.json"
    rtsched.save(ts, rtsched.TaskSet([rtsched.Task(wcet="2ms", period="10ms")]))
    (tmp_path / f"{MODEL}.json").write_text('{"not": "a model"}')
    code, _, err = rtsched_in(
        tmp_path, "analyze", "ts.json", "--m", 2, "--overheads", f"{MODEL}.json", "--mechanism", "gsn-edf"
    )
    assert code == 2 and "'overheads.not': unknown key" in err, err


def test_an_unknown_name_lists_the_shipped_ones_in_one_line(tmp_path):
    ts = tmp_path / "ts.json"
    rtsched.save(ts, rtsched.TaskSet([rtsched.Task(wcet="2ms", period="10ms")]))
    args = ["analyze", "ts.json", "--overheads", "overheads-nope", "--mechanism", "gsn-edf"]
    code, out, err = rtsched_in(tmp_path, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "'overheads-nope'" in err and MODEL in err and "Traceback" not in err
    with pytest.raises(rtsched.RtschedError, match="shipped: .*overheads-gsn-edf-2cpu"):
        shipped.resolve_overheads("..overheads-gsn-edf-2cpu")
    # a path with a folder is a path: its reader says it is missing; names are never joined to paths
    assert shipped.resolve_overheads("../data/overheads-gsn-edf-2cpu") == "../data/overheads-gsn-edf-2cpu"
    missing = [
        "analyze",
        "ts.json",
        "--m",
        2,
        "--overheads",
        "sub/overheads-gsn-edf-2cpu.json",
        "--mechanism",
        "gsn-edf",
    ]
    code, _, err = rtsched_in(tmp_path, *missing)
    assert code == 2 and "cannot read" in err and "shipped" not in err, err


def test_a_set_of_models_by_its_folder_name(tmp_path, monkeypatch):
    """A subfolder of the data holding overheads-*.json is a set, named by the folder: reproduce
    reads all of it, a one-model command takes the model of its mechanism."""
    data = tmp_path / "data"
    (data / "myset").mkdir(parents=True)
    shutil.copy(shipped.DATA / f"{MODEL}.json", data / "myset" / "overheads-gsn-edf.json")
    (data / "empty").mkdir()
    monkeypatch.setattr(shipped, "DATA", data)
    monkeypatch.chdir(tmp_path)
    assert set(shipped.models()) == {"myset"}  # a folder without models is no set
    assert shipped.resolve_overheads("myset") == str(data / "myset")
    assert shipped.resolve_model_file("myset", "gsn-edf") == str(data / "myset" / "overheads-gsn-edf.json")
    with pytest.raises(rtsched.RtschedError, match="has no model for 'pedf'; it has: gsn-edf"):
        shipped.resolve_model_file("myset", "pedf")
    with pytest.raises(rtsched.RtschedError, match="give --mechanism"):
        shipped.resolve_model_file("myset")


def test_examples_by_name_from_a_scratch_folder(tmp_path):
    code, out, err = rtsched_in(tmp_path, "partition", "spres-fig1.json", "--heuristic", "spres", "--json")
    assert code == 0, err
    assert "shipped example" in err and json.loads(out)["schedulable"] is True
    # a file of that name in the folder wins
    rtsched.save(tmp_path / "spres-fig1.json", rtsched.TaskSet([rtsched.Task(wcet="1ms", period="10ms")], m=1))
    code, out, err = rtsched_in(tmp_path, "partition", "spres-fig1.json", "--heuristic", "spres", "--json")
    assert code == 0 and "shipped" not in err and json.loads(out)["schedulable"] is True
    # an unknown file is reported as before
    code, _, err = rtsched_in(tmp_path, "analyze", "no-such-file.json")
    assert code == 2 and "no-such-file.json" in err and "shipped" not in err


def test_the_reproductions_find_the_shipped_models_from_any_folder(tmp_path, monkeypatch):
    from rtsched.experiments.repro._overheads import DEFAULT_SET, OVERHEADS_ENV, default_overheads_dirs

    monkeypatch.delenv(OVERHEADS_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    # The protocol-measured set first, the earlier models beside it as the fallback.
    assert DEFAULT_SET == "vm-2cpu-protocol"
    assert default_overheads_dirs() == [shipped.DATA / DEFAULT_SET, shipped.DATA]


def test_partition_takes_a_shipped_set_by_name(tmp_path):
    """`partition --overheads SET --mechanism spres` (issue 23's placement with overheads) finds the
    set's SP-RES model by name from a scratch folder, and places the same budgets as its path."""
    gen = ["generate", "--m", 2, "--n", 6, "--util", 1.85, "--periods", "loguniform:10ms-100ms", "--seed", 3]
    code, _, err = rtsched_in(tmp_path, *gen, "-o", "sp.json")
    assert code == 0, err
    args = ["partition", "sp.json", "--heuristic", "spres", "--mechanism", "spres", "--json", "--overheads"]
    code, by_name, err = rtsched_in(tmp_path, *args, "vm-2cpu-protocol")
    assert code == 0, err
    code, by_path, err = rtsched_in(tmp_path, *args, shipped.DATA / "vm-2cpu-protocol" / "overheads-spres.json")
    assert code == 0, err
    assert json.loads(by_name)["overheads"]["model"] == json.loads(by_path)["overheads"]["model"]
    assert json.loads(by_name)["schedulable"] and json.loads(by_name)["cpus"] == json.loads(by_path)["cpus"]
    code, _, err = rtsched_in(
        tmp_path, "partition", "sp.json", "--heuristic", "spres", "--overheads", "vm-2cpu-protocol"
    )
    assert code != 0 and "give --mechanism" in err and "Traceback" not in err
