"""Overhead-aware analysis from Python, the CLI and sweep specs (docs/overheads.md): the report
object against hand-computed inflations, the papers' statistic choice, bad input in one line,
and the spec keys (overheads, mechanism, stat) through a real sweep."""

import json

import pytest
import rtsched
from rtsched.experiments.spec import SpecError, parse_spec
from rtsched.experiments.sweep import run_sweep
from rtsched.overheads import load_models, mechanisms, terms

MODEL = {
    "format": "rtsched-overhead-model",
    "version": 1,
    "scheduler": "gsn-edf",
    "m": 2,
    "machine": {"hostname": "h", "platform": "p", "processor": "x", "cpu_count": 2},
    "seconds_per_run": 1.0,
    "terms": {
        # At n = 2: release max 10000 / avg 1000, ipi max 3000 / avg 1000, release latency
        # max 1000 / avg 0, schedule 2000 / 1000, context switch 1000 / 0.
        "release": {"n": [2], "avg_ns": [1000], "max_ns": [10000]},
        "ipi": {"n": [2], "avg_ns": [1000], "max_ns": [3000]},
        "release_event": {"n": [2], "avg_ns": [0], "max_ns": [1000]},
        "schedule": {"n": [2], "avg_ns": [1000], "max_ns": [2000]},
        "context_switch": {"n": [2], "avg_ns": [0], "max_ns": [1000]},
        "lock_wait": {"n": [2], "avg_ns": [1], "max_ns": [5]},
    },
}
TASKS = [(1_000_000, 10_000_000), (2_000_000, 20_000_000)]


def write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(json.dumps(obj))
    return p


def taskset(tmp_path, tasks=TASKS, m=2):
    return write(tmp_path, "ts.json", {"m": m, "tasks": [{"wcet": c, "period": t} for c, t in tasks]})


def test_python_report_matches_the_hand_computed_inflation():
    ts = rtsched.TaskSet([rtsched.Task(wcet=c, period=t) for c, t in TASKS])
    r = rtsched.analyze(ts, m=2, tests=["gedf"], overheads=MODEL, mechanism="gsn-edf")
    o = r["overheads"]
    assert o["mechanism"] == "gsn-edf" and o["capacity"] == 2 and o["model"]["scheduler"] == "gsn-edf"
    # Hard uses the maxima, soft the averages (Brandenburg & Anderson, RTSS 2009, §4.2).
    assert o["hard"]["stat"] == "max" and o["soft"]["stat"] == "avg"
    assert o["hard"]["values"]["release_ns"] == 10000 and o["soft"]["values"]["release_ns"] == 1000
    # The values of crates/analysis/src/overheads/tests.rs (cem_global_interrupts): C' = 1050576
    # and 2052078 over T' = 9999000 and 19999000.
    u = 1_050_576 / 9_999_000 + 2_052_078 / 19_999_000
    assert o["hard"]["utilization"] == pytest.approx(u, rel=1e-12)
    assert o["hard"]["schedulable"] is True and o["soft"]["schedulable"] is True
    assert any("tick" in n for n in o["notes"])  # not in the model, charged as 0
    # --stat forces one statistic for both.
    o = rtsched.analyze(ts, m=2, tests=["gedf"], overheads=MODEL, mechanism="gsn-edf", stat="avg")["overheads"]
    assert o["hard"]["stat"] == o["soft"]["stat"] == "avg"
    # Zero overheads: the inflated utilization is the set's own, and DI schedules on m - 1.
    z = rtsched.analyze(ts, m=3, tests=["gedf"], overheads={}, mechanism="gsn-edf-di")["overheads"]
    assert z["capacity"] == 2 and z["hard"]["utilization"] == pytest.approx(0.2)


def test_one_call_gives_what_the_tests_and_the_overhead_analysis_give_apart():
    # analyze_many computes each set's "overheads" object in the same Rust pass as its tests;
    # the oracle is the two computed apart (the tests alone, and analyze_overheads alone).
    from rtsched.overheads import analyze_overheads

    sets = [rtsched.generate(6, u, seed=s, m=2) for s, u in enumerate((0.8, 1.2, 1.6))]
    both = rtsched.analyze_many(sets, m=2, tests=["gfb", "gedf"], overheads=MODEL, mechanism="gsn-edf")
    tests = rtsched.analyze_many(sets, m=2, tests=["gfb", "gedf"])
    alone = analyze_overheads(sets, [2, 2, 2], MODEL, "gsn-edf")
    assert [{k: v for k, v in r.items() if k != "overheads"} for r in both] == tests
    assert [r["overheads"] for r in both] == alone
    # A bad request fails before any set is analysed, in one line naming the field.
    with pytest.raises(rtsched.RtschedError, match="mechanism"):
        rtsched.analyze_many(sets, m=2, overheads=MODEL, mechanism="no-such")


def test_cli_table_json_and_many_sets(tmp_path, cli):
    f = taskset(tmp_path)
    model = write(tmp_path, "m.json", MODEL)
    code, out, err = cli("analyze", f, "--overheads", model, "--mechanism", "gsn-edf")
    assert code == 0, err
    assert "overheads: gsn-edf (event-driven, global interrupts), capacity 2" in out
    assert "hard (hard real-time, combined G-EDF test, max overheads, inflated U = 0.2077): schedulable" in out
    # Partitioned and semi-partitioned rules name their placement test, not the G-EDF one.
    for mech, words in (("pedf", "first-fit decreasing placement"), ("spres", "the SP-RES placement")):
        code, out, err = cli("analyze", f, "--overheads", model, "--mechanism", mech)
        assert code == 0, err
        assert f"hard (hard real-time, {words}" in out and f"soft (soft real-time, {words}" in out
        assert "combined G-EDF" not in out
    code, out, err = cli("analyze", f, "--overheads", model, "--mechanism", "gedf-mp", "--json")
    assert code == 0, err
    o = json.loads(out)["overheads"]
    assert o["capacity"] == 1 and "request" in " ".join(o["notes"])  # G-EDF-MP terms not in the model
    # JSON Lines input takes the same options (the batch path is bypassed, not ignored).
    sets = rtsched.generate(6, 1.0, seed=1, count=25, m=2)
    jl = tmp_path / "many.jsonl"
    jl.write_text("".join(s.to_json() + "\n" for s in sets))
    code, out, err = cli("analyze", jl, "--overheads", model, "--mechanism", "pedf", "--json")
    assert code == 0, err
    rows = [json.loads(x) for x in out.splitlines()]
    assert len(rows) == 25 and all(r["overheads"]["mechanism"] == "pedf" for r in rows)
    code, out, err = cli("analyze", jl, "--overheads", model, "--mechanism", "gsn-edf")
    assert code == 0 and "gsn-edf hard" in out and "gsn-edf soft" in out


@pytest.mark.parametrize(
    "args, words",
    [
        (["--mechanism", "gsn-edf-x"], ["field 'mechanism'", "unknown mechanism", "gedf-mp"]),
        ([], ["field 'mechanism'", "required"]),
        (["--mechanism", "gsn-edf-di", "--m", "1"], ["at least 2 processors"]),
        (["--mechanism", "gsn-edf", "--quantum", "0"], ["quantum"]),
    ],
)
def test_cli_bad_options(tmp_path, cli, args, words):
    code, out, err = cli("analyze", taskset(tmp_path), "--overheads", write(tmp_path, "m.json", MODEL), *args)
    assert code == 2 and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    for w in words:
        assert w in err, err


@pytest.mark.parametrize(
    "model, field",
    [
        ({**MODEL, "terms": {"relase": {"n": [1], "avg_ns": [1], "max_ns": [1]}}}, "overheads.terms.relase"),
        ({**MODEL, "terms": {"ipi": {"n": [2, 2], "avg_ns": [1, 1], "max_ns": [1, 1]}}}, "overheads.terms.ipi.n[1]"),
        ({"schedule_us": 4}, "overheads.schedule_us"),
    ],
)
def test_cli_bad_model(tmp_path, cli, model, field):
    code, _, err = cli(
        "analyze", taskset(tmp_path), "--overheads", write(tmp_path, "m.json", model), "--mechanism", "cem"
    )
    assert code == 2 and f"field '{field}'" in err and len(err.strip().splitlines()) == 1, err


def test_vocabulary_and_table():
    names = [t["name"] for t in terms()]
    for t in ("request", "dsp", "migration_timer", "subtask_activation", "budget_enforcement", "push", "pull", "steal"):
        assert t in names
    mech = {m["name"]: m for m in mechanisms()}
    # in_runtime = registered as a runtime mechanism.
    runtime = {e["name"] for e in rtsched.schedulers()} & set(mech)
    assert {"gsn-edf", "gsn-edf-di", "pedf", "pfp", "kernel-sd", "spres", "push-pull", "gedf-mp"} <= runtime
    assert {"cqm", "cem", "fem", "hem", "cq1", "ce1", "fe1", "s-cqm", "s-cq1"} <= runtime
    assert {n for n, m in mech.items() if m["in_runtime"]} == runtime
    for coming in set(mech) - runtime:
        assert coming in mech and not mech[coming]["in_runtime"]
    assert mech["s-cqm"]["model"] == "cqm" and mech["gsn-edf-di"]["dedicated_cpu"]


def test_load_models_keys_by_scheduler_and_prefers_longer_runs(tmp_path):
    write(tmp_path, "overheads-gsn-edf.json", MODEL)
    write(tmp_path, "overheads-gsn-edf-2cpu-full.json", {**MODEL, "seconds_per_run": 30.0})
    write(tmp_path, "overheads-x.json", {**MODEL, "scheduler": "pedf"})
    models, notes = load_models(tmp_path)
    assert sorted(models) == ["gsn-edf", "pedf"]
    assert models["gsn-edf"]["path"].endswith("overheads-gsn-edf-2cpu-full.json")
    assert len(notes) == 1 and "longest measurement" in notes[0]
    write(tmp_path, "overheads-bad.json", {"format": "rtsched-overhead-model", "version": 7, "terms": {}})
    with pytest.raises(rtsched.RtschedError, match=r"overheads-bad.json: field 'overheads.version'"):
        load_models(tmp_path)


SPEC = """
name = "oh"
samples = 8
seed = 3
methods = ["gedf", "gedf_srt", "gedf@ideal-dedicated", "seed001_nobar@gsn-edf-di"]
mechanism = "gsn-edf"
overheads = "{dir}"
[generator]
name = "randfixedsum"
periods = "loguniform:10ms-100ms"
[grid]
m = [2]
n = [4]
util = [0.6, 1.2]
"""


def test_sweep_spec_keys(tmp_path):
    d = tmp_path / "models"
    d.mkdir()
    write(d, "overheads-gsn-edf.json", MODEL)
    write(d, "overheads-gsn-edf-di.json", {**MODEL, "scheduler": "gsn-edf-di", "m": 1})
    spec = parse_spec(SPEC.format(dir=d))
    assert spec.methods == ["gedf@gsn-edf", "gedf_srt@gsn-edf", "gedf@ideal-dedicated", "seed001_nobar@gsn-edf-di"]
    ov = spec.points[0].params["overheads"]
    assert sorted(ov["models"]) == ["gsn-edf", "gsn-edf-di"] and ov["stat"] is None and ov["quantum"] == 1_000_000
    out = tmp_path / "out"
    run_sweep(spec, out, jobs=1, progress=False)
    import pyarrow.parquet as pq

    t = pq.read_table(out / "points").to_pydict()
    assert set(t["method"]) == set(spec.methods) and len(t["method"]) == 2 * 8 * 4
    assert all(s is not None for s in t["schedulable"])
    # The verdicts are those of the Python API on the same sets.
    sets = rtsched.generate(4, 0.6, seed=spec.points[0].seed, count=8, m=2)
    want = [
        rtsched.analyze(s, m=2, tests=["gedf"], overheads=d / "overheads-gsn-edf.json", mechanism="gsn-edf")[
            "overheads"
        ]["hard"]["schedulable"]
        for s in sets
    ]
    got = [
        x
        for x, mt, u, i in zip(t["schedulable"], t["method"], t["util"], t["set"], strict=True)
        if mt == "gedf@gsn-edf" and u == 0.6
    ]
    assert got == want
    # A changed model changes the points (their ids embed it).
    write(d, "overheads-gsn-edf.json", {**MODEL, "terms": {}})
    assert parse_spec(SPEC.format(dir=d)).hash != spec.hash


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda s: s.replace('overheads = "{dir}"', ""), ["need overhead models"]),
        (lambda s: s.replace("seed001_nobar@gsn-edf-di", "hrt@gsn-edf-di"), ["unknown test 'hrt'"]),
        (lambda s: s.replace("seed001_nobar@gsn-edf-di", "gedf@gsn-edf-dx"), ["unknown mechanism 'gsn-edf-dx'"]),
        (lambda s: s.replace("seed001_nobar@gsn-edf-di", "gedf@fe1"), ["no model for ['fe1']"]),
        (lambda s: s + '\nstat = "p99"\n', ["stat"]),
    ],
)
def test_sweep_spec_errors(tmp_path, edit, words):
    d = tmp_path / "models"
    d.mkdir()
    write(d, "overheads-gsn-edf.json", MODEL)
    write(d, "overheads-gsn-edf-di.json", {**MODEL, "scheduler": "gsn-edf-di", "m": 1})
    text = edit(SPEC).format(dir=d)
    if "stat" in text.split("[generator]")[-1]:  # a top-level key after a table is a table key: move it
        text = 'stat = "p99"\n' + text.replace('\nstat = "p99"\n', "")
    with pytest.raises(SpecError) as e:
        parse_spec(text)
    for w in words:
        assert w in str(e.value), str(e.value)


EXAMPLES = __import__("pathlib").Path(__file__).resolve().parent.parent / "docs" / "examples"


@pytest.mark.parametrize(
    "name, mechanism",
    [
        ("overheads-gsn-edf-2cpu.json", "gsn-edf"),
        ("overheads-gsn-edf-di-2cpu-quick.json", "gsn-edf-di"),
        ("overheads-gedf-mp-2cpu.json", "gedf-mp"),
        ("overheads-pedf-2cpu-quick.json", "pedf"),
        ("overheads-kernel-sd-2cpu-quick.json", "kernel-sd"),
        ("overheads-gsn-edf-2cpu-quick.json", "gsn-edf"),
        ("overheads-push-pull-2cpu.json", "push-pull"),
    ],
)
def test_shipped_models(cli, name, mechanism):
    models, _ = load_models(EXAMPLES / name)
    (info,) = models.values()
    assert info["scheduler"] == mechanism and info["machine"] and info["m"] in (1, 2)
    code, out, err = cli("analyze", EXAMPLES / "control.json", "--m", 2, "--overheads", EXAMPLES / name)
    assert code == 2 and "mechanism" in err  # --mechanism is required
    code, out, err = cli(
        "analyze",
        EXAMPLES / "control.json",
        "--m",
        2,
        "--overheads",
        EXAMPLES / name,
        "--mechanism",
        mechanism,
        "--json",
    )
    assert code == 0, err
    o = json.loads(out)["overheads"]
    assert o["model"]["scheduler"] == mechanism
    if mechanism == "kernel-sd":
        assert info["terms"] == [] and any("charged as 0" in n for n in o["notes"])
    else:
        assert o["soft"]["values"]["release_ns"] > 0
    if mechanism == "gedf-mp":
        # The message-passing terms are measured and charged (RTAS 2014, App. B).
        assert {"request", "dsp"} <= set(info["terms"])
        assert o["soft"]["values"]["request_ns"] > 0 and o["soft"]["values"]["dsp_ns"] > 0


def test_shipped_models_directory():
    models, notes = load_models(EXAMPLES)
    assert {"gsn-edf", "gsn-edf-di", "gedf-mp", "pedf", "kernel-sd", "push-pull"} <= set(models)
    # Two gsn-edf models: the 30 s run wins over the --quick one, and a note says so.
    assert models["gsn-edf"]["path"].endswith("overheads-gsn-edf-2cpu.json")
    assert notes == [
        "gsn-edf: using overheads-gsn-edf-2cpu.json (longest measurement), not overheads-gsn-edf-2cpu-quick.json"
    ]
