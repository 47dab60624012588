"""DAG task sets in batches and sweeps (issue 27): ``generate --dag --count`` writes JSON Lines,
``analyze FILE.jsonl`` and ``rtsched.analyze_many`` take DAG sets and give on every line what the
one-set path (``rtsched.analyze_dag``) gives, a mixed batch is one error naming its line, and a
sweep spec with a DAG generator runs every DAG test of the core's table by name."""

import json

import pytest
import rtsched
from rtsched import _core
from rtsched.experiments.errors import SpecError
from rtsched.experiments.spec import parse_spec

GEN = ["--dag", "erdos-renyi", "--n", 3, "--umax", 1.5, "--nodes", "3-9", "--wcet", "1-40", "--m", 3, "--seed", 9]
API = dict(umax=1.5, nodes=(3, 9), wcet=(1, 40), m=3, seed=9)


@pytest.fixture
def batch(cli, tmp_path):
    """40 DAG sets on m = 3: 20 at U = 0.8 and 20 at U = 2.4, so that every test both accepts
    and rejects some."""
    parts = []
    for u in (0.8, 2.4):
        out = tmp_path / f"u{u}.jsonl"
        rc, _, err = cli("generate", *GEN, "--util", u, "--count", 20, "-o", out)
        assert rc == 0, err
        parts.append(out.read_text())
    f = tmp_path / "sets.jsonl"
    f.write_text("".join(parts))
    return f


def test_generate_count_writes_one_dag_set_per_line_the_same_as_the_api(cli, batch):
    lines = batch.read_text().splitlines()
    assert len(lines) == 40
    # Set i of the stream depends only on (seed, i): the API's sets, whole or from an offset.
    assert lines[:20] == rtsched.generate_dag("erdos-renyi", 3, 0.8, count=20, **API)
    assert lines[20:] == rtsched.generate_dag("erdos-renyi", 3, 2.4, count=20, **API)
    assert lines[17:19] == rtsched.generate_dag("erdos-renyi", 3, 0.8, count=2, start=17, **API)
    assert all(len(json.loads(x)["tasks"]) == 3 and json.loads(x)["m"] == 3 for x in lines)
    # To stdout too; a .json output with --count is refused in one line.
    rc, out, _ = cli("generate", *GEN, "--util", 0.8, "--count", 3)
    assert rc == 0 and out.splitlines() == lines[:3]
    rc, _, err = cli("generate", *GEN, "--util", 0.8, "--count", 3, "-o", batch.parent / "x.json")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "JSON Lines" in err


@pytest.mark.parametrize("tests", [[], ["dag_federated"], ["DAG-GEDF-li2014", "dag_gedf_bonifaci2013"]])
def test_analyze_jsonl_gives_the_one_set_verdicts_on_every_line(cli, batch, tests):
    args = [a for t in tests for a in ("--test", t)]
    rc, out, err = cli("analyze", batch, "--json", *args)
    assert rc == 0, err
    got = [json.loads(x) for x in out.splitlines()]
    want = [rtsched.analyze_dag(text, tests=tests or None) for text in batch.read_text().splitlines()]
    assert got == want
    # Both verdicts occur for every test, so the comparison means something.
    for name in got[0]["results"]:
        assert {rep["results"][name]["schedulable"] for rep in got} == {True, False}, name
    # The summary table counts what the lines say.
    rc, table, err = cli("analyze", batch, *args)
    assert rc == 0, err
    assert table.splitlines()[0] == "40 DAG task sets"
    for name in want[0]["results"]:
        acc = sum(rep["results"][name]["schedulable"] is True for rep in want)
        row = next(ln.split() for ln in table.splitlines() if ln.split()[:1] == [name])
        assert row[1:] == [str(acc), str(40 - acc), "0"], (name, table)
    # dag_graham applies to sets of one task only: by default it has no row here.
    assert not any(ln.split()[:1] == ["dag_graham"] for ln in table.splitlines()), table


def test_analyze_many_takes_dag_sets_and_matches_the_one_set_path(batch):
    texts = batch.read_text().splitlines()
    assert rtsched.analyze_many(texts) == [rtsched.analyze_dag(t) for t in texts]
    assert rtsched.analyze_many(texts, m=5, tests=["dag_gedf_li2013"]) == [
        rtsched.analyze_dag(t, m=5, tests=["dag_gedf_li2013"]) for t in texts
    ]


def test_a_mixed_batch_is_one_error_naming_the_line(cli, batch, tmp_path):
    seq = rtsched.generate(3, 1.5, seed=1, m=3).to_json()
    lines = batch.read_text().splitlines()
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("\n".join([*lines[:5], seq, *lines[5:]]) + "\n")
    rc, _, err = cli("analyze", mixed)
    assert rc == 2 and "Traceback" not in err, err
    (line,) = err.strip().splitlines()
    assert "line 6: a sequential task set in a batch of DAG task sets (line 1 is one)" in line, line
    # And the other way round, with a blank line and a comment first.
    other = tmp_path / "other.jsonl"
    other.write_text("\n# sequential first\n" + seq + "\n" + lines[0] + "\n")
    rc, _, err = cli("analyze", other, "--json")
    assert rc == 2
    (line,) = err.strip().splitlines()
    assert "line 4: a DAG task set in a batch of sequential task sets (line 3 is one)" in line, line
    # The API: a batch of DAG texts with a TaskSet in it, and the reverse.
    ts = rtsched.generate(3, 1.5, seed=1, m=3)
    with pytest.raises(_core.RtschedError, match=r"item 2 is a TaskSet \(sequential tasks\) in a batch of DAG"):
        rtsched.analyze_many([lines[0], lines[1], ts])
    with pytest.raises(_core.RtschedError, match="item 1 is .*not a TaskSet"):
        rtsched.analyze_many([ts, lines[0]])


def test_test_names_stay_with_their_kind_in_batches(cli, batch, tmp_path):
    rc, _, err = cli("analyze", batch, "--test", "gfb")
    assert rc == 2 and '"gfb" takes sequential tasks; this is a batch of DAG task sets' in err
    seq = tmp_path / "seq.jsonl"
    seq.write_text(rtsched.generate(3, 1.5, seed=1, m=3).to_json() + "\n")
    rc, _, err = cli("analyze", seq, "--test", "dag_federated")
    assert rc == 2 and '"dag_federated" takes DAG tasks; this is a sequential task set' in err
    for opt in (["--priorities", "rm"], ["--exact-utilization"], ["--overheads", "paper", "--mechanism", "gsn-edf"]):
        rc, _, err = cli("analyze", batch, *opt)
        assert rc == 2 and f"{opt[0]} applies to sequential task sets" in err, (opt, err)
        assert len(err.strip().splitlines()) == 1
    texts = batch.read_text().splitlines()
    for call, word in [
        (lambda: rtsched.analyze_many(texts, tests=["gfb"]), "takes sequential tasks"),
        (lambda: rtsched.analyze_many(texts, priorities="rm"), "priorities"),
        (lambda: rtsched.analyze_many(texts, tests=["dag_graham"]), "DAG set 0: field 'test'"),
        (lambda: rtsched.analyze_many([texts[0], "{}"]), "DAG set 1"),
    ]:
        with pytest.raises(_core.RtschedError) as e:
            call()
        assert word in str(e.value) and "\n" not in str(e.value), (word, str(e.value))


def test_an_invalid_dag_line_is_reported_on_its_line(cli, batch, tmp_path):
    lines = batch.read_text().splitlines()
    bad = json.loads(lines[1])
    bad["tasks"][0]["edges"] = [[0, 99]]
    f = tmp_path / "bad.jsonl"
    f.write_text("\n".join([lines[0], json.dumps(bad), lines[2]]) + "\n")
    rc, out, err = cli("analyze", f, "--json")
    assert rc == 1, err
    rows = [json.loads(x) for x in out.splitlines()]
    assert rows[0] == rtsched.analyze_dag(lines[0]) and rows[2] == rtsched.analyze_dag(lines[2])
    assert rows[1]["line"] == 2 and "task 0" in rows[1]["error"] and "99" in rows[1]["error"]


SPEC = """
name = "dag-sweep"
samples = 30
seed = 4
methods = ["@dag"]
[generator]
umax = 1.5
dag = {{ shape = "layered", layers = [2, 4], width = [1, 3], p = 0.5, wcet = [1, 30]{extra} }}
[grid]
m = [3]
n = [3]
util = [1.5, 2.4]
"""


def test_a_dag_sweep_gives_the_one_set_verdicts(tmp_path):
    from rtsched.experiments.sweep import run_sweep

    spec = parse_spec(SPEC.format(extra=""))
    assert spec.methods == rtsched.dag_tests_available(several=True)
    assert "dag_graham" not in spec.methods and "dag_federated" in spec.methods
    import pyarrow.parquet as pq

    res = run_sweep(spec, tmp_path / "out", jobs=1, progress=False)
    table = [r for f in sorted(res.out_dir.rglob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    assert len(table) == 2 * 30 * len(spec.methods)
    seen = set()
    for p in spec.points:
        sets = rtsched.generate_dag(
            "layered",
            3,
            p.params["util"],
            umax=1.5,
            layers=(2, 4),
            width=(1, 3),
            p=0.5,
            wcet=(1, 30),
            seed=p.params["seed"],
            count=30,
        )
        for row in (r for r in table if r["point"] == p.id):
            want = rtsched.analyze_dag(sets[row["set"]], m=3, tests=[row["method"]])["results"][row["method"]]
            assert row["schedulable"] == want["schedulable"], row
            seen.add(row["schedulable"])
    assert seen == {True, False}


@pytest.mark.parametrize(
    "text, words",
    [
        (SPEC.format(extra=", nodes = [1, 3]"), ["dag", "nodes", "layered"]),
        (SPEC.format(extra="").replace('shape = "layered"', 'shape = "star"'), ["unknown DAG shape"]),
        (SPEC.format(extra="").replace("[generator]", '[generator]\nperiods = "seed004"'), ["periods"]),
        (SPEC.format(extra="").replace("umax = 1.5", "umax = 0"), ["umax"]),
        (SPEC.format(extra="").replace("n = [3]", 'n = ["auto"]'), ["auto", "fixed n"]),
    ],
)
def test_a_broken_dag_spec_is_one_line(text, words):
    with pytest.raises(SpecError) as e:
        parse_spec(text, "s.toml")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("s.toml"), msg
    for w in words:
        assert w in msg, (w, msg)


def test_dag_methods_are_checked_before_any_point_runs():
    spec = parse_spec(SPEC.format(extra="").replace('["@dag"]', '["dag_federated", "gfb"]'), "s.toml")
    with pytest.raises(SpecError, match='"gfb" takes sequential tasks; this point generates DAG task sets'):
        spec.default_evaluator()
    seq = parse_spec('methods = ["dag_federated"]\n[grid]\nm = [2]\nn = [3]\nutil = [1.0]\n', "q.toml")
    with pytest.raises(SpecError, match="dag_federated takes DAG tasks"):
        seq.default_evaluator()
