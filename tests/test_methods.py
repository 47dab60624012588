"""One name per method (docs/cli.md, "Method names"): every spelling of a name means the same
thing in analyze, partition and sweeps; `ffd` is SP-RES's FFD everywhere and plain partitioned
EDF first-fit decreasing is `pedf_ffd` everywhere; the old spellings still work, with a
deprecation message."""

from __future__ import annotations

import json
import warnings

import pytest
import rtsched
from rtsched import _core
from rtsched.cli import main


def constrained() -> rtsched.TaskSet:
    # Decreasing utilization and decreasing density order these tasks differently.
    return rtsched.TaskSet(
        [
            rtsched.Task(wcet="4ms", period="10ms", deadline="5ms"),
            rtsched.Task(wcet="5ms", period="10ms"),
            rtsched.Task(wcet="3ms", period="10ms", deadline="4ms"),
            rtsched.Task(wcet="2ms", period="20ms"),
        ],
        m=2,
    )


def sweep_verdicts(ts: rtsched.TaskSet, methods: list[str]) -> dict[str, list]:
    point = {
        "generator": "randfixedsum",
        "periods": "loguniform:10ms-100ms",
        "umax": 1.0,
        "deadlines": "implicit",
        "n": 8,
        "m": 3,
        "util": 2.85,
        "count": 30,
        "seed": 5,
        "methods": methods,
        "epsilon": 0,
        "max_steps": 1_000_000,
    }
    cols = _core.evaluate_point(json.dumps(point))
    out: dict[str, list] = {m: [] for m in methods}
    for meth, ok in zip(cols["method"], cols["schedulable"], strict=True):
        out[meth].append(ok)
    return out


@pytest.mark.parametrize("spellings", [["pedf_ffd", "PEDF-FFD", " pedf-ffd "], ["pfp_rm_wfd", "PFP-RM-WFD"]])
def test_spellings_place_alike(spellings):
    ts = constrained()
    placements = [rtsched.partition(ts, heuristic=s) for s in spellings]
    assert all(p == placements[0] for p in placements)
    assert placements[0]["heuristic"] == spellings[0]


def test_paper_spellings_of_spres_heuristics():
    ts = rtsched.generate(10, 3.4, seed=4, m=4)
    a = rtsched.partition(ts, heuristic="PAF(WWFD)")
    assert rtsched.partition(ts, heuristic="paf-wwfd") == a == rtsched.partition(ts, heuristic="PAF_WWFD")
    assert rtsched.partition(ts, heuristic="SPRES_NOMETA") == rtsched.partition(ts, heuristic="spres-nometa")


def test_one_name_one_meaning_across_commands():
    """analyze's pedf_ffd verdict, partition's pedf_ffd placement and a sweep's pedf_ffd verdict
    agree, for every spelling; so do ffd (SP-RES) in partition and sweeps."""
    sets = rtsched.generate(8, 2.85, seed=5, count=30, m=3)
    sweep = sweep_verdicts(sets[0], ["pedf_ffd", "PEDF-FFD", "pedf_wfd", "ffd", "FFD"])
    assert sweep["pedf_ffd"] == sweep["PEDF-FFD"]
    assert sweep["ffd"] == sweep["FFD"]
    for i, ts in enumerate(sets):
        a = rtsched.analyze(ts, tests=["pedf-ffd"])["results"]["pedf_ffd"]["schedulable"]
        assert a == rtsched.partition(ts, heuristic="pedf_ffd")["schedulable"] == sweep["pedf_ffd"][i]
        assert rtsched.partition(ts, heuristic="pedf_wfd")["schedulable"] == sweep["pedf_wfd"][i]
        assert rtsched.partition(ts, heuristic="ffd")["schedulable"] == sweep["ffd"][i]
    assert any(sweep["pedf_ffd"]) and not all(sweep["pedf_ffd"]), "the sample must separate the verdicts"


def test_ffd_is_spres_everywhere_and_pedf_ffd_is_plain():
    ts = constrained()
    plain, spres = rtsched.partition(ts, heuristic="pedf_ffd"), rtsched.partition(ts, heuristic="ffd")
    assert plain["heuristic"] == "pedf_ffd" and spres["heuristic"] == "FFD"
    first = {r["task"] for r in plain["cpus"][0]["reservations"]}
    assert 1 in first  # decreasing utilization: the 0.5 task goes first
    first = {r["task"] for r in spres["cpus"][0]["reservations"]}
    assert 0 in first  # decreasing density: the 0.8 task goes first


def test_old_spellings_work_with_a_deprecation_message(capsys, tmp_path):
    ts = constrained()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = rtsched.partition(ts, heuristic="ffd", admission="fp-dm")
    assert old == rtsched.partition(ts, heuristic="pfp_ffd")
    assert any("now the method 'pfp_ffd'" in str(w.message) for w in caught)
    f = tmp_path / "ts.json"
    rtsched.save(f, ts)
    assert main(["partition", str(f), "--heuristic", "wfd", "--admission", "fp-rm", "--json"]) in (0, 1)
    out, err = capsys.readouterr()
    assert json.loads(out)["heuristic"] == "pfp_rm_wfd"
    assert "deprecated: heuristic 'wfd' with admission 'fp-rm' is now the method 'pfp_rm_wfd'" in err
    assert main(["partition", str(f), "--heuristic", "bfd", "--json"]) in (0, 1)
    out, err = capsys.readouterr()
    assert json.loads(out)["heuristic"] == "pedf_bfd" and "now the method 'pedf_bfd'" in err
    assert main(["partition", str(f), "--heuristic", "ffd"]) in (0, 1)
    assert "'ffd' is SP-RES's FFD (decreasing density)" in capsys.readouterr().err
    assert main(["partition", str(f)]) in (0, 1)
    assert capsys.readouterr().out.startswith(("placed by pedf_wfd", "not placed (pedf_wfd"))


def test_unknown_names_list_the_known_ones(capsys, tmp_path):
    with pytest.raises(rtsched.RtschedError, match=r"unknown placement method .gfb.*pedf_ffd.*wfd-c=d-ms"):
        rtsched.partition(constrained(), heuristic="gfb")
    with pytest.raises(rtsched.RtschedError, match="unknown test"):
        rtsched.analyze(constrained(), tests=["pedf_ff"])
    with pytest.raises(rtsched.RtschedError, match=r"unknown method .nope.*partitioning: pedf_ffd"):
        sweep_verdicts(constrained(), ["nope"])
