"""The engine axis (rtsched.experiments.engines): rtws-tables and spres-table1 run in the simulator
or on real threads from one spec and one module; their former names on threads (rtws-runtime,
spres-runtime) still run, with the same points, and so does a spec file written before the
merge. Nothing here starts a real-thread run (tests/test_rtws_runtime.py and
tests/test_spres_runtime_repro.py run tiny ones through the aliases)."""

import pytest
from rtsched.experiments import cli as exp_cli
from rtsched.experiments.errors import SpecError
from rtsched.experiments.registry import (
    ALIASES,
    available,
    default_out,
    description,
    glue,
    kinds,
    load_experiment,
    lookup,
    module,
)
from rtsched.experiments.repro import rtws_tables, spres_table1
from rtsched.experiments.repro.rtws_tables import threads_report  # noqa: F401  (loaded for the check below)

#: The spec hashes (identities of the points, hence of every result file) of the reproductions as
#: they were before the merge (rtws-runtime and spres-runtime were reproductions of their own).
BEFORE = {
    ("rtws-tables", None, False): "a52f26cabaa1a8e5",
    ("rtws-tables", None, True): "28f36ca80ecb9bde",
    ("rtws-runtime", None, False): "701be5a4af35c157",
    ("rtws-runtime", None, True): "ba9467127f961613",
    ("spres-table1", "artifact", False): "da2b5ad949e6bea1",
    ("spres-table1", "text", True): "f21dd2a65e5fc151",
    ("spres-runtime", "artifact", False): "cc264cc7848deb31",
    ("spres-runtime", "artifact", True): "5b99384cdd70ffff",
    ("spres-runtime", "text", False): "c9c17e3ad81c132b",
    ("spres-runtime", "text", True): "b865983715ae1b1e",
}

#: rtws-runtime's spec as it was shipped before the merge (a user's copy of it still runs).
FORMER_RTWS_RUNTIME = """
name = "rtws-runtime"
kind = "rtws-runtime"
description = "Nogueira et al., EUC 2012 Tables II-III on real threads: rtws vs push-pull beside the simulator"
seed = 2011
samples = 10
horizon = "5s"
rt_priority = 50

[grid]
m = [2]
window = [[0.38, 0.40], [0.58, 0.60], [0.73, 0.75]]

[quick]
note = "quick form: 2 sets per window, 2 s per run"
samples = 2
horizon = "2s"
"""


@pytest.mark.parametrize("key", sorted(BEFORE))
def test_every_name_keeps_its_points(key):
    name, variant, quick = key
    spec = load_experiment(lookup(name), quick=quick, name=name, variant=variant)
    assert spec.hash == BEFORE[key]
    assert spec.engine == ("threads" if name in ALIASES else "simulator")
    assert spec.kind == name and spec.name == name  # the former kinds and names: same files, same folders


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_an_alias_is_its_artefact_on_one_engine(alias):
    target, engine = ALIASES[alias]
    assert lookup(alias) == lookup(target) and alias in available()
    by_alias = load_experiment(lookup(alias), name=alias)
    by_engine = load_experiment(lookup(target), name=target, engine=engine)
    assert by_alias.hash == by_engine.hash and by_alias.params == by_engine.params
    assert glue(lookup(target).read_text(), name=alias) is module(target)
    assert kinds()[alias] is module(target)  # the points' kind still finds their evaluator
    assert f"the former name of {target} --engine {engine}" in description(alias)
    with pytest.raises(SpecError, match=f"{alias} is {target} --engine {engine}"):
        load_experiment(lookup(alias), name=alias, engine="simulator")


def test_the_spec_key_chooses_the_engine_and_the_argument_overrides_it(tmp_path):
    text = lookup("rtws-tables").read_text()
    f = tmp_path / "r.toml"
    f.write_text(text.replace('engine = "simulator"', 'engine = "threads"'))
    assert load_experiment(f).engine == "threads"
    assert load_experiment(f, engine="simulator").hash == BEFORE[("rtws-tables", None, False)]
    assert load_experiment(lookup("rtws-tables")).engine == "simulator"


def test_a_former_spec_file_still_runs_on_its_engine(tmp_path, monkeypatch):
    (tmp_path / "rtws-runtime.toml").write_text(FORMER_RTWS_RUNTIME)
    monkeypatch.setenv("RTSCHED_EXPERIMENTS", str(tmp_path))
    assert lookup("rtws-runtime") == tmp_path / "rtws-runtime.toml"
    for quick in (False, True):
        spec = load_experiment(lookup("rtws-runtime"), quick=quick, name="rtws-runtime")
        assert spec.engine == "threads" and spec.hash == BEFORE[("rtws-runtime", None, quick)]
        assert load_experiment(lookup("rtws-runtime"), quick=quick).hash == spec.hash  # by its kind alone
    with pytest.raises(SpecError, match="runs on 'threads'"):
        load_experiment(lookup("rtws-runtime"), engine="simulator")


@pytest.mark.parametrize(
    "edit, match",
    [
        (('engine = "simulator"', 'engine = "gpu"'), "engine: expected one of simulator, threads, got 'gpu'"),
        (("[engines.threads]", "[engines.gpu]"), r"\[engines.gpu\]: no such engine"),
        (("rt_priority = 50", "rt_priorty = 50"), r"unknown key 'rt_priorty' in table \[engines.threads\]"),
        (("rt_priority = 50", 'kind = "x"'), r"unknown key 'kind' in table \[engines.threads\]"),
        # a simulator key at the top level: the threads engine does not take it
        (("seed = 2011\n", 'seed = 2011\nschedulers = ["rtws"]\n'), "unknown key 'schedulers' in the top level"),
    ],
)
def test_bad_engine_tables_are_refused_in_one_line(tmp_path, edit, match):
    text = lookup("rtws-tables").read_text()
    assert edit[0] in text
    f = tmp_path / "r.toml"
    f.write_text(text.replace(edit[0], edit[1]))
    for engine in ("simulator", "threads"):
        if "schedulers" in match and engine == "simulator":
            continue  # on the simulator a top-level schedulers is its own key
        with pytest.raises(SpecError, match=match) as e:
            load_experiment(f, engine=engine)
        assert "\n" not in str(e.value) and str(f) in str(e.value)


def test_one_engine_reproductions_refuse_an_engine(capsys):
    with pytest.raises(SpecError, match="this reproduction has one engine"):
        load_experiment(lookup("sd-push-cost"), name="sd-push-cost", engine="threads")
    assert exp_cli.main(["reproduce", "sd-push-cost", "--engine", "threads", "--out", "/nonexistent/x"]) == 2
    err = capsys.readouterr().err
    assert "--engine 'threads': this reproduction has one engine" in err and len(err.strip().splitlines()) == 1


def test_each_engine_has_its_own_results_folder():
    for name, engine, variant, folder in (
        ("rtws-tables", None, None, "results/rtws-tables-quick"),
        ("rtws-tables", "threads", None, "results/rtws-runtime-quick"),
        ("rtws-runtime", None, None, "results/rtws-runtime-quick"),
        ("spres-table1", "threads", "text", "results/spres-runtime-text-quick"),
        ("spres-runtime", None, None, "results/spres-runtime-artifact-quick"),
    ):
        mod = glue(lookup(name).read_text(), name=name)
        spec = load_experiment(lookup(name), quick=True, name=name, engine=engine, variant=variant)
        assert str(default_out(name, mod, spec, True)) == folder


def test_the_list_shows_engines_and_aliases(capsys):
    assert exp_cli.main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    assert "[engines: simulator (default), threads]" in out
    assert "(the former name of rtws-tables --engine threads)" in out
    assert "(the former name of spres-table1 --engine threads)" in out
    # The paper's numbers are the artefact's, whichever engine reads them.
    assert rtws_tables.threads_report.PAPER_RTWS_TABLE2 is rtws_tables.PAPER_RTWS_TABLE2
    assert spres_table1.threads.t1.PAPER_SPRES_TABLE1 is spres_table1.PAPER_SPRES_TABLE1
