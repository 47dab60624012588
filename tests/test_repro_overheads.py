"""The overhead-aware reproductions (rtss09-hrt, rtss09-srt, gedfmp-soft-n, gedfmp-hard-u): their
curves follow the models of the overheads directory (a new model is picked up, an absent or empty
one is left out with a note), the Baruah exclusion is printed, the m = 64 panels say they are
extrapolated, and the figure's numbers are those of the Python API on the same task sets."""

import csv
import json
import pathlib
import shutil

import pytest
import rtsched
from rtsched.experiments.errors import SpecError
from rtsched.experiments.registry import REPRODUCTIONS, lookup, parse_experiment, reproduce

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "docs" / "examples"
NAMES = ["rtss09-hrt", "rtss09-srt", "gedfmp-soft-n", "gedfmp-hard-u"]


def models_dir(tmp_path, extra=()):
    d = tmp_path / "models"
    d.mkdir(exist_ok=True)
    for f in EXAMPLES.glob("overheads-*.json"):
        shutil.copy(f, d / f.name)
    for name, src in extra:
        m = json.loads((EXAMPLES / src).read_text())
        m["scheduler"] = name
        (d / f"overheads-{name}.json").write_text(json.dumps(m))
    return d


def parse(name, d, quick=True):
    path = lookup(name)
    return parse_experiment(path.read_text(), str(path), quick=quick, override={"overheads": str(d)}, name=name)


@pytest.mark.parametrize("name", NAMES)
def test_registered_and_parsed_with_the_shipped_models(tmp_path, name):
    assert name in REPRODUCTIONS
    spec = parse(name, models_dir(tmp_path))
    fig = spec.figure
    labels = [c.label for c in fig.curves]
    assert spec.points and len(fig.panels) == (6 if name.startswith("rtss09") else 2)
    if name.startswith("rtss09"):
        # Every plugin has a shipped model (docs/examples/overheads-<plugin>-2cpu-quick.json);
        # the SRT figure draws CQm and CQ1 from the staggered-quanta models (s-cqm, s-cq1).
        if name == "rtss09-hrt":
            plugins = ["[2] CQm", "[3] CEm", "[4] FEm", "[5] HEm", "[6] CQ1", "[7] CE1", "[8] FE1"]
            plugins += ["[9] S-CQm", "[10] S-CQ1"]
        else:
            plugins = ["[2] CQm", "[3] CEm", "[4] FEm", "[5] HEm", "[6] CQ1", "[7] CE1", "[8] FE1"]
        assert labels == ["[1] G-EDF (no overheads)", *plugins]
        assert not any(n.startswith("[") and ": left out" in n for n in fig.notes), fig.notes
        assert all(p.params["n"] is None for p in spec.points)  # tasks added up to the cap
        if name == "rtss09-hrt":
            assert any("Baruah" in n for n in fig.notes)
            light = [p for p in spec.points if p.params["generator"] == "uniform-light"]
            assert all(all(mt.startswith("seed001_nobar@") for mt in p.params["methods"]) for p in light)
    else:
        assert labels[:4] == [
            "G-EDF, m processors, no overheads",
            "G-EDF, m − 1 processors, no overheads",
            "GSN-EDF",
            "GSN-EDF-DI",
        ]
        # The push-pull and G-EDF-MP models are shipped (docs/examples/overheads-{push-pull,gedf-mp}-2cpu.json).
        assert "SD (push/pull)" in labels and not any("SD (push/pull): left out" in n for n in fig.notes)
        assert "G-EDF-MP" in labels and not any("G-EDF-MP: left out" in n for n in fig.notes)
        # The kernel-sd model measures no term: left out, and said why.
        assert any("Linux SCHED_DEADLINE: left out" in n and "measures none" in n for n in fig.notes)
        titles = [p.title for p in fig.panels]
        assert titles[0].startswith("m = 2") and "extrapolated" in titles[1] and "m = 64" in titles[1]
        ext = {p.params["m"]: p.params["overheads"]["extrapolate"] for p in spec.points}
        assert ext == {2: False, 64: True}


def test_new_models_are_picked_up(tmp_path):
    # A model for FE1 (a stand-in: a copy of a measured model) appears as a curve; G-EDF-MP's is
    # the measured one shipped in docs/examples.
    d = models_dir(tmp_path, [("fe1", "overheads-gsn-edf-di-2cpu-quick.json")])
    hrt = parse("rtss09-hrt", d)
    assert "[8] FE1" in [c.label for c in hrt.figure.curves]
    assert any(mt == "seed001@fe1" for p in hrt.points for mt in p.params["methods"])
    soft = parse("gedfmp-soft-n", d)
    assert "G-EDF-MP" in [c.label for c in soft.figure.curves]
    assert sorted(soft.points[0].params["overheads"]["models"]) == ["gedf-mp", "gsn-edf", "gsn-edf-di", "push-pull"]


def test_missing_or_bad_directory(tmp_path):
    with pytest.raises(SpecError, match="neither a model file nor a directory"):
        parse("rtss09-hrt", tmp_path / "nope")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "overheads-x.json").write_text('{"format": "rtsched-overhead-model", "version": 1, "terms": {"x": {}}}')
    with pytest.raises(SpecError, match=r"overheads-x.json: field 'overheads.terms.x'"):
        parse("rtss09-hrt", bad)


def test_rtss09_srt_quick_run_matches_the_api(tmp_path):
    d = models_dir(tmp_path)
    out = tmp_path / "out"
    res = reproduce("rtss09-srt", quick=True, out=out, jobs=1, progress=False, override={"overheads": str(d)})
    assert res["figure"].exists() and res["csv"].exists() and "SRT" in res["text"]
    rows = list(csv.DictReader(open(res["csv"])))
    curves = {r["curve"] for r in rows}
    assert {"[1] G-EDF (no overheads)", "[3] CEm", "[7] CE1", "[8] FE1"} <= curves and len(curves) == 8
    # Cells recomputed through the Python API on the same task sets (the soft verdict is the
    # same rule and test in both paths; n is the set's own).
    spec = parse("rtss09-srt", d)
    for gen, title, util in (
        ("bimodal-medium", "bimodal medium", 1.2),
        ("uniform-light", "uniform light [0.001, 0.1]", 1.8),
    ):
        p = next(p for p in spec.points if p.params["generator"] == gen and p.params["util"] == util)
        sets = rtsched.generate(
            None, util, generator=gen, periods="integral:10ms-100ms", seed=p.seed, count=p.count, m=2
        )
        for curve, model, mech in (
            ("[3]", "overheads-cem-2cpu-quick.json", "cem"),
            ("[7]", "overheads-ce1-2cpu-quick.json", "ce1"),
            ("[8]", "overheads-fe1-2cpu-quick.json", "fe1"),
        ):
            got = sum(
                1
                for s in sets
                if rtsched.analyze(s, m=2, tests=["gedf_srt"], overheads=d / model, mechanism=mech)["overheads"][
                    "soft"
                ]["schedulable"]
            )
            row = next(
                r for r in rows if r["panel"] == title and r["curve"].startswith(curve) and float(r["util"]) == util
            )
            assert int(row["sets"]) == p.count and int(row["schedulable"]) == got, (gen, curve)


def test_cli_overheads_option(tmp_path, cli):
    code, _, err = cli("reproduce", "spres-fig4", "--overheads", str(tmp_path))
    assert code == 2 and "--overheads applies to" in err and "rtss09-hrt" in err
    code, _, err = cli("reproduce", "rtss09-srt", "--quick", "--overheads", str(tmp_path / "nope"), "--jobs", "1")
    assert code == 2 and "neither a model file nor a directory" in err and "Traceback" not in err


def _parse_default(name, quick=True):
    path = lookup(name)
    return parse_experiment(path.read_text(), str(path), quick=quick, name=name)


@pytest.mark.parametrize("name", NAMES)
def test_the_default_models_are_the_protocol_set(name, monkeypatch):
    """Without --overheads every reproduction draws its curves from the shipped set measured under
    the protocol (vm-2cpu-protocol) — the models embedded in its points are that set's files — and
    its report and figure footer name the set."""
    from rtsched.experiments.repro import _overheads as ov

    monkeypatch.delenv(ov.OVERHEADS_ENV, raising=False)
    spec = _parse_default(name)
    fig = spec.figure
    proto = EXAMPLES / "vm-2cpu-protocol"
    assert fig.models and all(i["set"] == "the shipped set vm-2cpu-protocol" for i in fig.models.values())
    assert not any(i["fallback"] for i in fig.models.values())
    for key, model in spec.points[0].params["overheads"]["models"].items():
        assert model == json.loads((proto / f"overheads-{key}.json").read_text()), key
    assert ov.model_sets(fig) == "the shipped set vm-2cpu-protocol"
    if name.startswith("gedfmp"):
        # kernel-sd is not in the set (SCHED_DEADLINE admission refused it): the earlier model is the
        # fallback, said so, and left out since it measures no term.
        (note,) = [n for n in fig.notes if n.startswith("Linux SCHED_DEADLINE: left out")]
        assert "the fallback" in note and "earlier shipped models" in note


def test_a_mechanism_missing_from_the_default_set_falls_back_by_name(tmp_path, monkeypatch):
    """A default set without push-pull's model: SD's curve is drawn from the next directory's model,
    the note and the report name the fallback, and the sweep's points embed that model."""
    from rtsched.experiments.repro import _overheads as ov
    from rtsched.shipped import DATA

    monkeypatch.delenv(ov.OVERHEADS_ENV, raising=False)
    first = tmp_path / "first"
    first.mkdir()
    for mech in ("gsn-edf", "gsn-edf-di", "gedf-mp"):
        shutil.copy(DATA / "vm-2cpu-protocol" / f"overheads-{mech}.json", first)
    monkeypatch.setattr(ov, "default_overheads_dirs", lambda: [first, DATA])
    spec = _parse_default("gedfmp-soft-n")
    fig = spec.figure
    assert "SD (push/pull)" in [c.label for c in fig.curves]
    assert fig.models["push-pull"]["fallback"] and not fig.models["gsn-edf"]["fallback"]
    assert any(
        n.startswith("SD (push/pull): no model in the default set; drawn from overheads-push-pull-2cpu.json")
        for n in fig.notes
    )
    assert ov.model_sets(fig) == f"{first.resolve()}; fallback for push-pull: {ov.set_label(DATA)}"
    models = spec.points[0].params["overheads"]["models"]
    assert models["push-pull"] == json.loads((DATA / "overheads-push-pull-2cpu.json").read_text())
    assert models["gsn-edf"] == json.loads((first / "overheads-gsn-edf.json").read_text())


def test_a_sweep_reads_a_list_of_model_directories_in_order(tmp_path):
    from rtsched.experiments.spec import parse_spec
    from rtsched.shipped import DATA

    base = (
        'name = "x"\nsamples = 1\nmethods = ["gedf_srt@push-pull", "gedf_srt@gsn-edf"]\n'
        '[generator]\nname = "exp-light"\n[grid]\nm = [2]\nn = [4]\nutil = [1.0]\n'
    )
    spec = parse_spec(f"overheads = {json.dumps([str(DATA / 'paper'), str(DATA)])}\n" + base, None)
    models = spec.points[0].params["overheads"]["models"]
    # Both from the first directory that has them (the paper set), none from the second.
    assert models["push-pull"] == json.loads((DATA / "paper" / "overheads-push-pull.json").read_text())
    assert models["gsn-edf"] == json.loads((DATA / "paper" / "overheads-gsn-edf.json").read_text())
    # cqm is not in the paper set: it comes from the second directory.
    spec = parse_spec(
        f"overheads = {json.dumps([str(DATA / 'paper'), str(DATA)])}\n" + base.replace("push-pull", "cqm"), None
    )
    cqm = spec.points[0].params["overheads"]["models"]["cqm"]
    assert cqm == json.loads((DATA / "overheads-cqm-2cpu-quick.json").read_text())
    for bad, match in (("[]", "non-empty list of paths"), ("[1]", "non-empty list of paths")):
        with pytest.raises(SpecError, match=match):
            parse_spec(f"overheads = {bad}\n" + base, None)
    with pytest.raises(SpecError, match=r"no model for \['cqm'\] in .* or "):
        parse_spec(
            f"overheads = {json.dumps([str(tmp_path), str(DATA / 'paper')])}\n" + base.replace("push-pull", "cqm"), None
        )
